// cpu/histogram.cpp — per-session binning of trades and bars into a worker's window (CPU backend).
// Contract: docs/contract.md; inputs widen to float64; hot loops only detect bad rows, a precise
// rescan then names the first one.
#include "cpu/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/distribute.hpp"
#include "core/ladder.hpp"
#include "core/messages.hpp"
#include "cpu/slots.hpp"
#include "vpoc/errors.hpp"

namespace vpoc::cpu {
namespace {

using ladder::kMaxTicks;
using ladder::TickScale;

template <class V>
bool valid_volume(V v) {
  if constexpr (std::is_floating_point_v<V>)
    return v >= V(0) && v <= std::numeric_limits<V>::max();  // rejects NaN, inf, negatives
  else
    return v >= V(0);
}

// int64 row sums stay exact and cannot overflow while every volume is < 2**31 (a session would
// need 2**32 rows to overflow). Larger int64 volumes make the call bin in float64 instead.
template <class V, class Acc>
void require_int64_safe(V v) {
  if constexpr (std::is_same_v<Acc, int64_t> && std::is_same_v<V, int64_t>)
    if (v >> 31) throw NeedsFloat64{};
}

template <class V, class Acc>
void require_int64_safe_block(const V* v, int n) {
  if constexpr (std::is_same_v<Acc, int64_t> && std::is_same_v<V, int64_t>) {
    V any = 0;
    for (int j = 0; j < n; ++j) any |= v[j];
    if (any >> 31) throw NeedsFloat64{};
  }
}

bool valid_ticks(double q, const TickScale& s) { return s.valid(q); }  // also rejects NaN and inf

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

// Calls fn(bool_constant<Exact>, bool_constant<OneTickPerRow>): the hot loops' fast paths.
template <class F>
void with_ladder(const TickScale& s, int64_t ticks_per_row, F&& fn) {
  using T = std::true_type;
  using N = std::false_type;
  if (s.exact && ticks_per_row == 1) return fn(T{}, T{});
  if (s.exact) return fn(T{}, N{});
  if (ticks_per_row == 1) return fn(N{}, T{});
  return fn(N{}, N{});
}

// ---- trades ------------------------------------------------------------------------------------

// Hot loop over rows [b, e). Returns e when all went well, else the row where it stopped (a bad
// price, or the session outgrowing max_rows); a bad volume anywhere returns e - 1.
template <bool Exact, bool OneTick, class P, class V, class Acc>
int64_t trades_loop(const P* price, const V* vol, int64_t b, int64_t e, const TickScale& s,
                    int64_t tpr, Bins<Acc>& out) {
  Bins<Acc> bins = out;
  bool volume_ok = true;
  int64_t i = b;
  for (; i < e; ++i) {
    const double q = s.ticks<Exact>(static_cast<double>(price[i]));
    if (!valid_ticks(q, s)) break;
    const auto t = static_cast<int64_t>(ladder::round_half_even(q));
    const int64_t r = OneTick ? t : ladder::floor_div(t, tpr);
    const V v = vol[i];  // read once: checked and added, the same value
    volume_ok &= valid_volume(v);
    require_int64_safe<V, Acc>(v);
    if (!bins.add(r, static_cast<Acc>(v), static_cast<unsigned>(i - b))) break;
  }
  out = bins;
  return i < e ? i : (volume_ok ? e : e - 1);
}

// Trades in blocks: phase A turns a block of prices into window slots (a loop the compiler
// vectorises), phase B adds the volumes into the slots (a scatter). Exact tick sizes and one tick
// per row only (the common case); everything else takes trades_loop.
constexpr int kBlock = 1024;  // 4 KiB of slots: stays in L1 beside the window

// Phase B: h[slot[j]] += v[j] in lane j % kLanes. Meanwhile it prefetches the next block's prices
// and volumes (next_p / next_v, may be null), so phase A of that block finds them in cache: phase B
// is compute-bound and phase A memory-bound, this overlaps the two.
template <class P, class V, class Acc>
void block_scatter(const int32_t* slot, const V* v, int n, const Bins<Acc>& bins, const P* next_p,
                   const V* next_v) {
  constexpr int kLine = 64;
  Acc* lane[kLanes];
  for (int l = 0; l < kLanes; ++l) lane[l] = bins.lane(static_cast<unsigned>(l));
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    if (next_p != nullptr && (j * int(sizeof(P))) % kLine == 0) {
      __builtin_prefetch(reinterpret_cast<const char*>(next_p) + j * sizeof(P));
      __builtin_prefetch(reinterpret_cast<const char*>(next_v) + j * sizeof(V));
      if (sizeof(V) > sizeof(P))
        __builtin_prefetch(reinterpret_cast<const char*>(next_v) + j * sizeof(V) + kLine);
    }
    for (int l = 0; l < kLanes; ++l) lane[l][slot[j + l]] += static_cast<Acc>(v[j + l]);
  }
  for (; j < n; ++j) lane[j % kLanes][slot[j]] += static_cast<Acc>(v[j]);
}

template <class P, class V, class Acc>
int64_t trades_blocked(const P* price, const V* vol, int64_t b, int64_t e, const TickScale& s,
                       Bins<Acc>& bins) {
  alignas(64) int32_t slot[kBlock];
  // float32 prices with a power-of-two tick <= 1: phase A can stay in float32 (8 per instruction).
  const bool f32 = std::is_same_v<P, float> && s.exact && s.inv >= 1.0;
  for (int64_t i0 = b; i0 < e; i0 += kBlock) {
    const int n = static_cast<int>(std::min<int64_t>(kBlock, e - i0));
    const int64_t last = i0 + n - 1;
    double mn, mx;
    for (;;) {
      bool done = false;
      if constexpr (std::is_same_v<P, float>)
        done = f32 && block_slots_f32(price + i0, n, static_cast<float>(s.inv), bins.origin(), slot, mn, mx);
      if (!done && !block_slots(price + i0, n, s.inv, static_cast<double>(bins.origin()), slot, mn, mx))
        return last;
      if (mn >= 0.0 && mx < static_cast<double>(bins.rows() - kPad)) break;
      int64_t lo = bins.origin() + static_cast<int64_t>(mn), hi = bins.origin() + static_cast<int64_t>(mx);
      if (mn <= -2e9 || mx >= 2e9) {  // slots were clamped: find the block's true rows (rare)
        lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
        for (int j = 0; j < n; ++j) {
          int64_t t = 0;
          ladder::to_tick<true>(static_cast<double>(price[i0 + j]), s, t);
          lo = std::min(lo, t), hi = std::max(hi, t);
        }
      }
      if (!bins.reserve(lo, hi)) return last;
    }
    if (s.limit < kMaxTicks) {  // rows so large that some row prices leave float64 (tick_limit)
      const double lo_t = static_cast<double>(bins.origin()) + mn, hi_t = static_cast<double>(bins.origin()) + mx;
      if (!(s.valid(lo_t) && s.valid(hi_t))) return last;
    }
    if (!volumes_ok(vol + i0, n)) return last;
    require_int64_safe_block<V, Acc>(vol + i0, n);
    const bool more = i0 + n < e;
    block_scatter(slot, vol + i0, n, bins, more ? price + i0 + n : static_cast<const P*>(nullptr),
                  more ? vol + i0 + n : static_cast<const V*>(nullptr));
    bins.touch(bins.origin() + static_cast<int64_t>(mn), bins.origin() + static_cast<int64_t>(mx));
  }
  return e;
}

// The first bad trade in [b, stop], or stop itself when none is bad (then it was max_rows).
template <class P, class V>
void report_trades(const P* price, const V* vol, int64_t b, int64_t stop, const Options& opt,
                   const Array& pa, const Array& va, FirstFailure& f) {
  for (int64_t i = b; i <= stop; ++i) {
    std::string m = messages::trade_problem(i, pa, static_cast<double>(price[i]), va,
                                            static_cast<double>(vol[i]), opt.tick_size, opt.ticks_per_row);
    if (!m.empty()) return f.record(i, std::move(m));
  }
  f.record(stop, messages::too_wide("row", stop, opt.max_rows));
}

// ---- bars --------------------------------------------------------------------------------------

template <class P>
struct BarPtrs {
  const P* high;
  const P* low;
  const P* close;
  const P* open;  // nullptr when absent
};

// One bar's values, read once: what bar_ok checks is what is used (another thread may change the
// inputs while the GIL is released). o = c when the bars carry no open.
template <class V>
struct Bar {
  double h, l, c, o;
  V v;
};

template <class P, class V>
VPOC_ALWAYS_INLINE Bar<V> load_bar(const BarPtrs<P>& b, const V* vol, int64_t i) {
  const double c = b.close[i];
  return {static_cast<double>(b.high[i]), static_cast<double>(b.low[i]), c,
          b.open ? static_cast<double>(b.open[i]) : c, vol[i]};
}

// True when the bar is valid: finite, in-range prices, low <= close, open <= high, volume finite
// and >= 0.
template <bool Exact, class V>
VPOC_ALWAYS_INLINE bool bar_ok(const Bar<V>& x, bool has_open, const TickScale& s) {
  bool ok = valid_ticks(s.ticks<Exact>(x.h), s) & valid_ticks(s.ticks<Exact>(x.l), s) &
            valid_ticks(s.ticks<Exact>(x.c), s) & (x.h >= x.l) & (x.c >= x.l) & (x.c <= x.h) & valid_volume(x.v);
  if (has_open) ok &= valid_ticks(s.ticks<Exact>(x.o), s) & (x.o >= x.l) & (x.o <= x.h);
  return ok;
}

// Ticks added per branch-free group: 8 covers nearly every one-minute ES bar in one group (4
// measured 5% slower: more loop branches).
constexpr int kGroup = 8;
static_assert(kGroup <= kPad, "a group may not reach past the window's padding");

// ones[m][k] = 1.0 for k < m else 0.0 (m = 0..kGroup): multiplying by it masks without a branch.
struct GroupMasks {
  double ones[kGroup + 1][kGroup];
  GroupMasks() {
    for (int m = 0; m <= kGroup; ++m)
      for (int k = 0; k < kGroup; ++k) ones[m][k] = k < m ? 1.0 : 0.0;
  }
};
const GroupMasks group_masks;

// row[k] += share for k < min(n, kGroup), + 0.0 for the rest of the group. Scalar loads and stores
// on purpose: vector ones straddle the previous bars' stores to overlapping rows and then miss
// store-to-load forwarding; and the mask is a multiply, since the compiler turns a `k < n ? :`
// into branches that mispredict (measured: either costs 3x on the bars workload).
template <class Acc>
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
VPOC_ALWAYS_INLINE void add_group(Acc* row, double share, int64_t n) {
  const double* m = group_masks.ones[n < kGroup ? n : kGroup];
#if defined(__clang__)
#pragma clang loop vectorize(disable)
#endif
  for (int k = 0; k < kGroup; ++k) row[k] += static_cast<Acc>(share * m[k]);
}

// Hot loop over bars [b, e) for close/hlc3/uniform. Returns e, or the bar where it stopped.
template <bool Exact, bool OneTick, Distribute D, class P, class V, class Acc>
int64_t bars_loop(const BarPtrs<P>& bp, const V* vol, int64_t b, int64_t e, const TickScale& s,
                  int64_t tpr, Bins<Acc>& out) {
  Bins<Acc> bins = out;
  int64_t i = b;
  for (; i < e; ++i) {
    const Bar<V> x = load_bar(bp, vol, i);
    if (!bar_ok<Exact>(x, bp.open != nullptr, s)) break;
    require_int64_safe<V, Acc>(x.v);
    const auto lane = static_cast<unsigned>(i - b);
    const auto row = [tpr](double q) {
      const auto t = static_cast<int64_t>(ladder::round_half_even(q));
      return OneTick ? t : ladder::floor_div(t, tpr);
    };
    const double h = x.h, l = x.l, c = x.c;
    bool ok;
    if constexpr (D == Distribute::close) {
      ok = bins.add(row(s.ticks<Exact>(c)), static_cast<Acc>(x.v), lane);
    } else if constexpr (D == Distribute::hlc3) {
      ok = bins.add(row(s.ticks<Exact>((h + l + c) / 3.0)), static_cast<Acc>(x.v), lane);
    } else if constexpr (OneTick) {
      // v / n on ticks tl..th, added in branch-free groups of kGroup rows (zeros past th).
      const auto tl = static_cast<int64_t>(ladder::round_half_even(s.ticks<Exact>(l)));
      const auto th = static_cast<int64_t>(ladder::round_half_even(s.ticks<Exact>(h)));
      ok = bins.reserve(tl, th);
      if (ok) {
        bins.touch(tl, th);
        const int64_t n = th - tl + 1;
        if (std::is_integral_v<V> && std::is_same_v<Acc, double> && n <= RowWindow<Acc>::kSpreadMax &&
            static_cast<int64_t>(x.v) < (int64_t(1) << 31)) {  // sums of these cannot overflow
          // whole volumes: +v at tl and -v past th in plane n (exact; folded into rows on drain)
          auto& w = bins.window();
          int64_t* d = w.spread_row(tl) + n;
          d[0] += static_cast<int64_t>(x.v);
          d[n * RowWindow<Acc>::kSpreadStride] -= static_cast<int64_t>(x.v);
          w.mark_spread(static_cast<int>(n));
        } else {
          const double share = static_cast<double>(x.v) / static_cast<double>(n);
          Acc* acc = bins.lane(lane) + (tl - bins.origin());
          for (int64_t k0 = 0; k0 < n; k0 += kGroup, acc += kGroup) add_group(acc, share, n - k0);
        }
      }
    } else {
      const auto tl = static_cast<int64_t>(ladder::round_half_even(s.ticks<Exact>(l)));
      const auto th = static_cast<int64_t>(ladder::round_half_even(s.ticks<Exact>(h)));
      ok = distribute::uniform(tl, th, static_cast<double>(x.v), OneTick ? 1 : tpr,
                               [&](int64_t r, double w) { return bins.add(r, static_cast<Acc>(w), lane); });
    }
    if (!ok) break;
  }
  out = bins;
  return i;
}

// True when a legacy session whose prices span [lo, hi] surely touches more than max_rows rows:
// the bars at its ends put volume within one tick of ceil(lo / tick) and floor(hi / tick).
inline bool legacy_too_wide(double lo, double hi, const TickScale& s, int64_t tpr, int64_t max_rows) {
  const auto t_lo = static_cast<int64_t>(ceil(lo / s.tick)) + 1, t_hi = static_cast<int64_t>(floor(hi / s.tick)) - 1;
  return t_hi >= t_lo && ladder::floor_div(t_hi, tpr) - ladder::floor_div(t_lo, tpr) + 1 > max_rows;
}

// Legacy needs the session's price range first, so it validates in a pass of its own, which also
// stops at the first bar that makes the session wider than max_rows: a fat-finger bar (high=1e12)
// is never weighed level by level. The second pass checks each bar again, as read then.
template <bool Exact, class P, class V, class Acc>
int64_t legacy_loop(const BarPtrs<P>& bp, const V* vol, int64_t b, int64_t e, const TickScale& s,
                    int64_t tpr, Bins<Acc>& bins) {
  double lo = INFINITY, hi = -INFINITY;
  const int64_t max_rows = bins.window().max_rows();
  for (int64_t i = b; i < e; ++i) {
    const Bar<V> x = load_bar(bp, vol, i);
    if (!bar_ok<Exact>(x, bp.open != nullptr, s)) return i;
    lo = std::min({lo, x.o, x.c, x.l});
    hi = std::max({hi, x.o, x.c, x.h});
    if (legacy_too_wide(lo, hi, s, tpr, max_rows)) return i;
  }
  if (e == b) return e;
  const auto L = distribute::LegacyLadder::make(lo, hi, s.tick);
  for (int64_t i = b; i < e; ++i) {
    const Bar<V> x = load_bar(bp, vol, i);
    const double mn = std::min({x.o, x.c, x.l}), mx = std::max({x.o, x.c, x.h});
    if (!bar_ok<Exact>(x, bp.open != nullptr, s) || mn < lo || mx > hi) return i;  // changed since
    const auto lane = static_cast<unsigned>(i - b);
    if (!distribute::legacy(L, mn, mx, x.c, static_cast<double>(x.v), tpr,
                            [&](int64_t r, double w) { return bins.add(r, static_cast<Acc>(w), lane); }))
      return i;
  }
  return e;
}

// The first bad bar in [b, stop], or stop itself when none is bad (then it was max_rows).
template <class P, class V>
void report_bars(const BarPtrs<P>& bp, const V* vol, int64_t b, int64_t stop, const Options& opt,
                 const BarsInput& in, FirstFailure& f) {
  for (int64_t i = b; i <= stop; ++i) {
    const double o = bp.open ? static_cast<double>(bp.open[i]) : 0.0;
    std::string m = messages::bar_problem(i, in, bp.high[i], bp.low[i], bp.close[i], o,
                                          static_cast<double>(vol[i]), opt.tick_size, opt.ticks_per_row);
    if (!m.empty()) return f.record(i, std::move(m));
  }
  f.record(stop, messages::too_wide("bar", stop, opt.max_rows));
}

}  // namespace

bool integer_accumulation(const Array& volume, bool splits_volume) {
  return !splits_volume && (volume.dtype == DType::i32 || volume.dtype == DType::i64);
}

template <class Acc>
bool bin_trades(const Array& price, const Array& volume, int64_t begin, int64_t end,
                const Options& opt, Bins<Acc>& bins, FirstFailure& f) {
  const auto s = TickScale::make(opt.tick_size, opt.ticks_per_row);
  bool ok = true;
  with_price(price, [&](auto p) {
    with_volume(volume, [&](auto v) {
      with_ladder(s, opt.ticks_per_row, [&](auto exact, auto one_tick) {
        constexpr bool E = decltype(exact)::value, O = decltype(one_tick)::value;
        const int64_t stop = E && O ? trades_blocked(p, v, begin, end, s, bins)
                                    : trades_loop<E, O>(p, v, begin, end, s, opt.ticks_per_row, bins);
        ok = stop == end;
        if (!ok) report_trades(p, v, begin, stop, opt, price, volume, f);
      });
    });
  });
  return ok;
}

template <class Acc>
bool bin_bars(const BarsInput& bars, int64_t begin, int64_t end, Distribute distribute,
              const Options& opt, Bins<Acc>& bins, FirstFailure& f) {
  const auto s = TickScale::make(opt.tick_size, opt.ticks_per_row);
  bool ok = true;
  with_price(bars.high, [&](auto high) {
    using P = std::remove_const_t<std::remove_pointer_t<decltype(high)>>;
    const BarPtrs<P> bp{high, static_cast<const P*>(bars.low.data), static_cast<const P*>(bars.close.data),
                        bars.has_open ? static_cast<const P*>(bars.open.data) : nullptr};
    with_volume(bars.volume, [&](auto v) {
      with_ladder(s, opt.ticks_per_row, [&](auto exact, auto one_tick) {
        constexpr bool E = decltype(exact)::value, O = decltype(one_tick)::value;
        const int64_t tpr = opt.ticks_per_row;
        int64_t stop = end;
        switch (distribute) {
          case Distribute::close: stop = bars_loop<E, O, Distribute::close>(bp, v, begin, end, s, tpr, bins); break;
          case Distribute::hlc3: stop = bars_loop<E, O, Distribute::hlc3>(bp, v, begin, end, s, tpr, bins); break;
          case Distribute::uniform: stop = bars_loop<E, O, Distribute::uniform>(bp, v, begin, end, s, tpr, bins); break;
          case Distribute::legacy: stop = legacy_loop<E>(bp, v, begin, end, s, tpr, bins); break;
        }
        ok = stop == end;
        if (!ok) report_bars(bp, v, begin, stop, opt, bars, f);
      });
    });
  });
  return ok;
}

template bool bin_trades<int64_t>(const Array&, const Array&, int64_t, int64_t, const Options&,
                                  Bins<int64_t>&, FirstFailure&);
template bool bin_trades<double>(const Array&, const Array&, int64_t, int64_t, const Options&,
                                 Bins<double>&, FirstFailure&);
template bool bin_bars<int64_t>(const BarsInput&, int64_t, int64_t, Distribute, const Options&,
                                Bins<int64_t>&, FirstFailure&);
template bool bin_bars<double>(const BarsInput&, int64_t, int64_t, Distribute, const Options&,
                               Bins<double>&, FirstFailure&);

}  // namespace vpoc::cpu
