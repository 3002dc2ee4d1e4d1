// cpu/side.cpp — aggressor-side fields of trades in one pass over them, and the per-session side epilogue (CPU backend).
// Contract: vpoc/side.hpp; the bits of three masked engine passes plus the rows pass (design side-single-pass.md §1).
#include "vpoc/side.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/fixed.hpp"
#include "core/ladder.hpp"
#include "core/levels.hpp"
#include "core/side.hpp"
#include "cpu/parallel.hpp"
#include "cpu/row_window.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/profiles.hpp"

namespace vpoc {
namespace {

using cpu::kLanes;
using cpu::parallel_for;
using cpu::resolve_threads;
using cpu::to_acc;
using cpu::acc_to_double;
using cpu::acc_to_fixed;

using ladder::TickScale;

// Accumulator (row k, plane p (0 buy, 1 sell), lane l) at (k * 2 + p) * kSideLanes + l: two lanes break the
// store-to-load chain of consecutive trades on one row and side.
constexpr int kSideLanes = 2;
constexpr int kSlots = 2 * kSideLanes;  // accumulators per row

// Why a session's pass stopped.
enum class Stop { done, needs_fixed, outside };

// Whether volume v adds exactly to int64 rows without overflow (the engine's int64 rule: a whole
// number below 2**31, cpu/histogram.cpp require_int64_safe).
template <class V>
VPOC_ALWAYS_INLINE bool int64_safe(V v) {
  if constexpr (std::is_same_v<V, int32_t>) return v >= 0;
  else if constexpr (std::is_same_v<V, int64_t>) return (v >> 31) == 0;
  else {
    const double d = static_cast<double>(v);
    return d >= 0.0 && d < 2147483648.0 && d == static_cast<double>(static_cast<int64_t>(d));
  }
}

// v as Acc, or zero when `keep` is false (no branch: sides are random).
template <class Acc, class V>
VPOC_ALWAYS_INLINE Acc masked(V v, bool keep) {
  if constexpr (std::is_same_v<Acc, int64_t>) {
    return static_cast<int64_t>(v) & -static_cast<int64_t>(keep);
  } else {
    const Fixed f = to_acc<Fixed>(v);
    const uint64_t m = uint64_t{0} - static_cast<uint64_t>(keep);
    Fixed out;
    out.lo = f.lo & m;
    out.hi = f.hi & m;
    return out;
  }
}

// Trades [b, e) of one session into acc ([n * kSlots], zero), its rows lo .. lo + n - 1; dev (or null):
// each trade's running float64 buy - sell of the session, in input order (np.cumsum of
// v * (side == 1) - v * (side == -1), as the masked columns gave it).
template <bool Exact, bool OneTick, class Acc, class P, class V>
Stop bin_session(const P* price, const V* vol, const int8_t* side, int64_t b, int64_t e, const TickScale& s,
                 int64_t tpr, int64_t lo, int64_t n, Acc* acc, double* dev) {
  double run = 0.0;
  for (int64_t i = b; i < e; ++i) {
    const double q = s.ticks<Exact>(static_cast<double>(price[i]));
    const auto t = static_cast<int64_t>(ladder::round_half_even(q));
    const int64_t k = (OneTick ? t : ladder::floor_div(t, tpr)) - lo;
    if (static_cast<uint64_t>(k) >= static_cast<uint64_t>(n)) return Stop::outside;
    const V v = vol[i];
    if constexpr (std::is_same_v<Acc, int64_t>) {
      if (!int64_safe(v)) return Stop::needs_fixed;
    }
    const int8_t c = side[i];
    const int plane = c < 0 ? 1 : 0;
    acc[(k * 2 + plane) * kSideLanes + (i & (kSideLanes - 1))] += masked<Acc>(v, c != 0);
    if (dev != nullptr) {
      const double dv = static_cast<double>(v);
      const double d = dv * static_cast<double>(c == 1) - dv * static_cast<double>(c == -1);
      run = i == b ? d : run + d;
      dev[i] = run;
    }
  }
  return Stop::done;
}

// Session rows out of acc: buy / sell rows (rounded once) and the two exact totals.
template <class Acc>
void drain(const Acc* acc, int64_t n, double* buy, double* sell, Fixed& buy_total, Fixed& sell_total) {
  for (int64_t k = 0; k < n; ++k) {
    Acc sb = acc[k * kSlots], ss = acc[k * kSlots + kSideLanes];
    for (int l = 1; l < kSideLanes; ++l) {
      sb += acc[k * kSlots + l];
      ss += acc[k * kSlots + kSideLanes + l];
    }
    buy[k] = acc_to_double(sb);
    sell[k] = acc_to_double(ss);
    buy_total += acc_to_fixed(sb);
    sell_total += acc_to_fixed(ss);
  }
}

template <class F>
void with_price(const Array& a, F&& fn) {
  if (a.dtype == DType::f32) return fn(static_cast<const float*>(a.data));
  if (a.dtype == DType::f64) return fn(static_cast<const double*>(a.data));
  VPOC_THROW(TypeError, a.name, " must be float32 or float64 here (converted by the caller)");
}

template <class F>
void with_volume(const Array& a, F&& fn) {
  switch (a.dtype) {
    case DType::f32: return fn(static_cast<const float*>(a.data));
    case DType::f64: return fn(static_cast<const double*>(a.data));
    case DType::i32: return fn(static_cast<const int32_t*>(a.data));
    case DType::i64: return fn(static_cast<const int64_t*>(a.data));
  }
}

// Per worker: the accumulators of the session it bins, and the delta POC's rows.
struct SideScratch {
  std::vector<int64_t> acc_int;
  std::vector<Fixed> acc_fixed, rows_fixed;
  std::vector<double> d;
};

// The rules of the delta POC: the engine on one trade per row at tick row_size (vpoc._side_profiles'
// rows pass: the call's poc_tie, every other rule at its default).
Options delta_poc_options(const Options& opt, double row_size) {
  Options o;
  o.tick_size = row_size;
  o.ticks_per_row = 1;
  o.value_area = 1.0;
  o.va_method = VaMethod::single;
  o.poc_tie = opt.poc_tie;
  o.max_rows = opt.max_rows;
  o.distribute = Distribute::close;
  o.snap = true;
  return o;
}

// Runs of >= k consecutive flags in f[0, n).
int64_t runs_of(const uint8_t* f, int64_t n, int64_t k) {
  int64_t count = 0, len = 0;
  for (int64_t j = 0; j < n; ++j) {
    len = f[j] ? len + 1 : 0;
    count += len == k;
  }
  return count;
}

// The delta POC of one session's rows (n >= 1): (index into the rows engine's rows, its lowest row).
void delta_poc_of(const double* buy, const double* sell, int64_t n, int64_t low_row, const TickScale& ts,
                  const levels::Rules& rules, SideScratch& sc, int64_t& poc_row) {
  // each row's price row * row_size, binned at tick row_size: the rows engine's row of it
  const auto row_of = [&](int64_t r) {
    const double p = ladder::row_price(r, ts.tick);
    const double q = ts.exact ? ts.ticks<true>(p) : ts.ticks<false>(p);
    return static_cast<int64_t>(ladder::round_half_even(q));
  };
  const int64_t first = row_of(low_row), last = row_of(low_row + n - 1);
  bool straight = last - first == n - 1;
  for (int64_t j = 1; straight && j < n - 1; ++j) straight = row_of(low_row + j) == first + j;
  const int64_t lo = straight ? first : std::min(first, last);
  const int64_t span = straight ? n : std::max(first, last) - lo + 1;
  sc.rows_fixed.assign(static_cast<size_t>(span), Fixed{});
  for (int64_t j = 0; j < n; ++j) {
    double d = std::fabs(buy[j] - sell[j]);
    d = d >= 0x1p-32 ? d : 0.0;  // rounding noise below the engine's smallest volume counts 0
    const int64_t at = straight ? j : row_of(low_row + j) - lo;
    sc.rows_fixed[static_cast<size_t>(at)] += fixed::from_double(d);
  }
  sc.d.resize(static_cast<size_t>(span));
  for (int64_t j = 0; j < span; ++j) sc.d[static_cast<size_t>(j)] = acc_to_double(sc.rows_fixed[static_cast<size_t>(j)]);
  poc_row = lo + levels::poc_index(sc.d.data(), span, rules);
}

}  // namespace

SideColumns side_trades(const Array& price, const Array& volume, const int8_t* side, const SessionSpan& sessions,
                        const Options& opt, const RowLayout& rows, const SideRules& rules) {
  const int64_t S = sessions.n_sessions;
  const int64_t* off = sessions.offsets;
  const int64_t R = rows.row_off[S];
  SideColumns c;
  c.buy.assign(static_cast<size_t>(R), 0.0);
  c.sell.assign(static_cast<size_t>(R), 0.0);
  c.delta.assign(static_cast<size_t>(S), 0.0);
  if (opt.developing) c.dev_delta.assign(static_cast<size_t>(off[S]), 0.0);
  const auto s = TickScale::make(opt.tick_size, opt.ticks_per_row);
  const int64_t tpr = opt.ticks_per_row;
  const int workers = resolve_threads(opt.threads, S);
  std::vector<SideScratch> scratch(static_cast<size_t>(workers));
  parallel_for(S, workers, opt.interrupt, [&](int64_t k, int worker) {
    const int64_t n = rows.row_off[k + 1] - rows.row_off[k];
    if (n == 0) return;  // no trades (a session with trades has rows)
    const int64_t lo = rows.low_row[k];
    double* buy = c.buy.data() + rows.row_off[k];
    double* sell = c.sell.data() + rows.row_off[k];
    double* dev = opt.developing ? c.dev_delta.data() : nullptr;
    SideScratch& sc = scratch[static_cast<size_t>(worker)];
    Fixed bt, st;
    Stop stop = Stop::done;
    with_price(price, [&](auto p) {
      with_volume(volume, [&](auto v) {
        const auto go = [&](auto acc_tag, auto& acc) {
          using Acc = decltype(acc_tag);
          acc.assign(static_cast<size_t>(n * kSlots), Acc{});
          const bool one = tpr == 1;
          if (s.exact && one) stop = bin_session<true, true, Acc>(p, v, side, off[k], off[k + 1], s, tpr, lo, n, acc.data(), dev);
          else if (s.exact) stop = bin_session<true, false, Acc>(p, v, side, off[k], off[k + 1], s, tpr, lo, n, acc.data(), dev);
          else if (one) stop = bin_session<false, true, Acc>(p, v, side, off[k], off[k + 1], s, tpr, lo, n, acc.data(), dev);
          else stop = bin_session<false, false, Acc>(p, v, side, off[k], off[k + 1], s, tpr, lo, n, acc.data(), dev);
          if (stop == Stop::done) drain(acc.data(), n, buy, sell, bt, st);
        };
        go(int64_t{}, sc.acc_int);
        if (stop == Stop::needs_fixed) go(Fixed{}, sc.acc_fixed);
      });
    });
    if (stop == Stop::outside)
      VPOC_THROW(ValueError, "a trade of session ", k, " lies outside the rows its profile was given: price or volume "
                 "changed while the call ran");
    c.delta[static_cast<size_t>(k)] = fixed::to_double(bt) - fixed::to_double(st);
  });
  side_levels(c, rows, opt, rules);
  return c;
}

void side_levels(SideColumns& c, const RowLayout& rows, const Options& opt, const SideRules& rules) {
  const int64_t S = rows.n_sessions;
  const int64_t R = rows.row_off[S];
  c.imbalance_buy.assign(static_cast<size_t>(R), 0);
  c.imbalance_sell.assign(static_cast<size_t>(R), 0);
  c.delta_poc.assign(static_cast<size_t>(S), std::numeric_limits<double>::quiet_NaN());
  c.delta_poc_row.assign(static_cast<size_t>(S), kNoRow);
  c.stacked_buy.assign(static_cast<size_t>(S), 0);
  c.stacked_sell.assign(static_cast<size_t>(S), 0);
  const Options po = delta_poc_options(opt, rows.row_size);
  const levels::Rules prules = levels::rules_of(po);
  const TickScale ts = TickScale::make(rows.row_size, 1);
  const ladder::RowPrice price_of = ladder::RowPrice::make(rows.row_size, 1, false);
  const double ratio = rules.imbalance_ratio;
  const int workers = resolve_threads(opt.threads, S);
  std::vector<SideScratch> scratch(static_cast<size_t>(workers));
  parallel_for(S, workers, opt.interrupt, [&](int64_t k, int worker) {
    const int64_t a = rows.row_off[k], n = rows.row_off[k + 1] - a;
    if (n == 0) return;
    const double* b = c.buy.data() + a;
    const double* s = c.sell.data() + a;
    uint8_t* ib = c.imbalance_buy.data() + a;
    uint8_t* is = c.imbalance_sell.data() + a;
    // ask volume at p against bid volume one row down (buy), and the mirror; a session's lowest row
    // has no row below it, its highest none above
    for (int64_t j = 1; j < n; ++j) ib[j] = b[j] > 0.0 && b[j] >= s[j - 1] * ratio;
    for (int64_t j = 0; j + 1 < n; ++j) is[j] = s[j] > 0.0 && s[j] >= b[j + 1] * ratio;
    c.stacked_buy[static_cast<size_t>(k)] = runs_of(ib, n, rules.stacked_min);
    c.stacked_sell[static_cast<size_t>(k)] = runs_of(is, n, rules.stacked_min);
    int64_t poc_row = 0;
    delta_poc_of(b, s, n, rows.low_row[k], ts, prules, scratch[static_cast<size_t>(worker)], poc_row);
    c.delta_poc_row[static_cast<size_t>(k)] = poc_row;
    c.delta_poc[static_cast<size_t>(k)] = price_of(poc_row);
  });
}

int64_t first_bad_side(const int8_t* s, int64_t n) { return side::first_bad_i8(s, n); }
int64_t side_letters(const uint8_t* in, int8_t* out, int64_t n) { return side::letters_to_codes(in, out, n); }

}  // namespace vpoc
