// cpu/histogram.cpp — per-session binning of trades and bars into a RowWindow (CPU backend).
// Contract: docs/contract.md; float32/int inputs are widened to float64 before any arithmetic.
#include "cpu/histogram.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <type_traits>

#include "core/distribute.hpp"
#include "core/ladder.hpp"
#include "vpoc/errors.hpp"

namespace vpoc::cpu {
namespace {

template <class V>
bool valid_volume(V v) {
  if constexpr (std::is_floating_point_v<V>)
    return v >= V(0) && v <= std::numeric_limits<V>::max();  // rejects NaN, inf, negatives
  else
    return v >= V(0);
}

std::string bad_price(const char* name, int64_t i, double p, double tick) {
  if (!std::isfinite(p)) return detail::concat(name, "[", i, "] is not finite (", p, ")");
  return detail::concat(name, "[", i, "]=", p, " is out of range for tick_size=", tick,
                        " (|price / tick_size| must be < 2**52)");
}

std::string bad_volume(const char* name, int64_t i, double v) {
  return detail::concat(name, "[", i, "] must be finite and >= 0, got ", v);
}

// Calls fn(const P*) with the typed pointer of a float32/float64 price array.
template <class F>
void with_price(const Array& a, F&& fn) {
  switch (a.dtype) {
    case DType::f32: return fn(static_cast<const float*>(a.data));
    case DType::f64: return fn(static_cast<const double*>(a.data));
    default: VPOC_THROW(TypeError, a.name, " must be float32 or float64 here (converted by the caller)");
  }
}

// Calls fn(const V*) with the typed pointer of a volume array.
template <class F>
void with_volume(const Array& a, F&& fn) {
  switch (a.dtype) {
    case DType::f32: return fn(static_cast<const float*>(a.data));
    case DType::f64: return fn(static_cast<const double*>(a.data));
    case DType::i32: return fn(static_cast<const int32_t*>(a.data));
    case DType::i64: return fn(static_cast<const int64_t*>(a.data));
  }
}

// Rows [begin, end) of the trades: one pass, validation fused with binning.
template <class P, class V>
bool trades_kernel(const P* price, const V* vol, int64_t begin, int64_t end, const Options& opt,
                   const Array& pa, const Array& va, RowWindow& w, FirstFailure& f) {
  const double tick = opt.tick_size;
  const int64_t tpr = opt.ticks_per_row;
  for (int64_t i = begin; i < end; ++i) {
    const double p = static_cast<double>(price[i]);
    int64_t t;
    if (!ladder::to_tick(p, tick, t)) return f.record(i, bad_price(pa.name, i, p, tick)), false;
    if (!valid_volume(vol[i]))
      return f.record(i, bad_volume(va.name, i, static_cast<double>(vol[i]))), false;
    if (!w.add(ladder::tick_to_row(t, tpr), static_cast<double>(vol[i]))) {
      f.record(i, detail::concat("the session holding row ", i, " spans more than max_rows=",
                                 opt.max_rows, " rows; use a larger tick_size or ticks_per_row",
                                 " (or raise max_rows)"));
      return false;
    }
  }
  return true;
}

template <class P>
struct BarPtrs {
  const P* high;
  const P* low;
  const P* close;
  const P* open;  // nullptr when absent
};

template <class P, class V>
bool bars_kernel(const BarPtrs<P>& b, const V* vol, int64_t begin, int64_t end, Distribute dist,
                 const Options& opt, const BarsInput& in, RowWindow& w, FirstFailure& f) {
  const double tick = opt.tick_size;
  const int64_t tpr = opt.ticks_per_row;
  // Pass 1: validate every bar (and find the session's legacy price range).
  double lo = INFINITY, hi = -INFINITY;
  for (int64_t i = begin; i < end; ++i) {
    int64_t t;
    const std::pair<const P*, const Array*> prices[4] = {
        {b.high, &in.high}, {b.low, &in.low}, {b.close, &in.close}, {b.open, &in.open}};
    for (const auto& [ptr, arr] : prices) {
      if (ptr == nullptr) continue;
      const double p = static_cast<double>(ptr[i]);
      if (!ladder::to_tick(p, tick, t)) return f.record(i, bad_price(arr->name, i, p, tick)), false;
    }
    const double h = b.high[i], l = b.low[i], c = b.close[i];
    if (h < l)
      return f.record(i, detail::concat(in.high.name, "[", i, "] < ", in.low.name, "[", i, "] (",
                                        h, " < ", l, ")")),
             false;
    if (!valid_volume(vol[i]))
      return f.record(i, bad_volume(in.volume.name, i, static_cast<double>(vol[i]))), false;
    if (dist == Distribute::legacy) {
      const double o = b.open ? static_cast<double>(b.open[i]) : c;
      lo = std::min(lo, std::min({o, c, l}));
      hi = std::max(hi, std::max({o, c, h}));
    }
  }
  distribute::LegacyLadder L;
  if (dist == Distribute::legacy && end > begin) L = distribute::LegacyLadder::make(lo, hi, tick);
  const auto add = [&w](int64_t r, double x) { return w.add(r, x); };
  // Pass 2: distribute.
  for (int64_t i = begin; i < end; ++i) {
    const double h = b.high[i], l = b.low[i], c = b.close[i];
    const double v = static_cast<double>(vol[i]);
    bool ok = true;
    int64_t t = 0, tl = 0, th = 0;
    switch (dist) {
      case Distribute::close:
        ladder::to_tick(c, tick, t);
        ok = w.add(ladder::tick_to_row(t, tpr), v);
        break;
      case Distribute::hlc3:
        ladder::to_tick((h + l + c) / 3.0, tick, t);
        ok = w.add(ladder::tick_to_row(t, tpr), v);
        break;
      case Distribute::uniform:
        ladder::to_tick(l, tick, tl);
        ladder::to_tick(h, tick, th);
        ok = distribute::uniform(tl, th, v, tpr, add);
        break;
      case Distribute::legacy: {
        const double o = b.open ? static_cast<double>(b.open[i]) : c;
        ok = distribute::legacy(L, std::min({o, c, l}), std::max({o, c, h}), c, v, tpr, add);
        break;
      }
    }
    if (!ok) {
      f.record(i, detail::concat("the session holding bar ", i, " spans more than max_rows=",
                                 opt.max_rows, " rows; use a larger tick_size or ticks_per_row",
                                 " (or raise max_rows)"));
      return false;
    }
  }
  return true;
}

}  // namespace

bool bin_trades(const Array& price, const Array& volume, int64_t begin, int64_t end,
                const Options& opt, RowWindow& w, FirstFailure& f) {
  bool ok = true;
  with_price(price, [&](auto p) {
    with_volume(volume, [&](auto v) { ok = trades_kernel(p, v, begin, end, opt, price, volume, w, f); });
  });
  return ok;
}

bool bin_bars(const BarsInput& bars, int64_t begin, int64_t end, Distribute distribute,
              const Options& opt, RowWindow& w, FirstFailure& f) {
  bool ok = true;
  with_price(bars.high, [&](auto high) {
    using P = std::remove_const_t<std::remove_pointer_t<decltype(high)>>;
    const BarPtrs<P> b{high, static_cast<const P*>(bars.low.data),
                       static_cast<const P*>(bars.close.data),
                       bars.has_open ? static_cast<const P*>(bars.open.data) : nullptr};
    with_volume(bars.volume,
                [&](auto v) { ok = bars_kernel(b, v, begin, end, distribute, opt, bars, w, f); });
  });
  return ok;
}

}  // namespace vpoc::cpu
