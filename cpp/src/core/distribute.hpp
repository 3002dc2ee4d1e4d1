// core/distribute.hpp — how one bar's volume is put on the ladder ("uniform", "legacy"), shared by
// the CPU and GPU backends. Contract: docs/contract.md; add(row, Fixed share) returns false to stop.
#pragma once

#include <math.h>

#include <cstdint>

#include "core/fixed.hpp"
#include "core/ladder.hpp"

namespace vpoc::distribute {

// Uniform: volume v split evenly over the n ticks tl..th so that the shares sum to v exactly
// (fixed::Split), each row getting the sum of its ticks' shares. False (nothing added) when the
// bar spans 2**32 ticks or more (options keep a session's ticks below that).
template <class Add>
VPOC_HD bool uniform(int64_t tl, int64_t th, const Fixed& v, int64_t tpr, Add&& add) {
  const auto n = static_cast<uint64_t>(th - tl + 1);
  if (n >= (uint64_t(1) << 32)) return false;
  const fixed::Split split = fixed::Split::make(v, n);
  if (tpr == 1) {
    for (int64_t t = tl; t <= th; ++t)
      if (!add(t, split.one(static_cast<uint64_t>(t - tl)))) return false;
    return true;
  }
  const int64_t rl = ladder::floor_div(tl, tpr), rh = ladder::floor_div(th, tpr);
  for (int64_t r = rl; r <= rh; ++r) {
    const int64_t lo = tl > r * tpr ? tl : r * tpr;
    const int64_t hi = th < r * tpr + tpr - 1 ? th : r * tpr + tpr - 1;
    if (!add(r, split.sum(static_cast<uint64_t>(lo - tl), static_cast<uint64_t>(hi - lo + 1)))) return false;
  }
  return true;
}

// Uniform with one tick per row, as a difference array: the shares of `split` over ticks tl..th
// (fixed::Split) as add(t, d) entries whose running sum over ticks gives each tick's share: +q
// (+1 unit) at tl, -1 unit at tl + rem, -q at th + 1 (entries wrap mod 2**128; the running sums
// are the shares exactly). Three adds per bar instead of one per tick.
template <class Add>
VPOC_HD void uniform_diff(int64_t tl, int64_t th, const fixed::Split& split, Add&& add) {
  const Fixed unit = fixed::Split::from_units(1);
  if (split.rem != 0) {
    add(tl, split.q + unit);
    add(tl + static_cast<int64_t>(split.rem), Fixed{} - unit);
  } else {
    add(tl, split.q);
  }
  add(th + 1, Fixed{} - split.q);
}

// The same entries with the single units apart: add(t, q, negate) takes the 128-bit ones (+q at
// tl, -q at th + 1: subtracting q beats adding 0 - q), add_units(t, k) one-word counts of units (+1
// at tl, -1 at tl + rem; both 0 when rem is 0, so there is no branch on it). The CPU keeps the
// units in an int64 difference array of their own: no carry, and no read-modify-write of a 16-byte
// entry waiting on the one just stored.
template <class Add, class AddUnits>
VPOC_HD void uniform_diff(int64_t tl, int64_t th, const fixed::Split& split, Add&& add, AddUnits&& add_units) {
  const int64_t one = split.rem != 0 ? 1 : 0;
  add(tl, split.q, false);
  add(th + 1, split.q, true);
  add_units(tl, one);
  add_units(tl + static_cast<int64_t>(split.rem), -one);
}

// A session's legacy level ladder: L_k = base * tick + k * tick for k = 0..K (this exact float64
// expression), level k on tick base + k. lo/hi: the session's min(open, close, low) and
// max(open, close, high).
struct LegacyLadder {
  double base_price = 0.0;  // floor(lo / tick)
  int64_t base = 0;
  int64_t K = -1;
  double tick = 1.0;

  VPOC_HD static LegacyLadder make(double lo, double hi, double tick) {
    LegacyLadder L;
    L.tick = tick;
    L.base_price = floor(lo / tick);
    L.base = static_cast<int64_t>(L.base_price);
    L.K = static_cast<int64_t>(ceil(hi / tick)) - L.base;
    return L;
  }
  VPOC_HD double level(int64_t k) const { return base_price * tick + static_cast<double>(k) * tick; }

  // Levels ka..kb inside [mn, mx] (ka > kb when none is).
  VPOC_HD void range(double mn, double mx, int64_t& ka, int64_t& kb) const {
    ka = static_cast<int64_t>(ceil(mn / tick)) - base;
    ka = ka < 0 ? 0 : (ka > K + 1 ? K + 1 : ka);
    while (ka > 0 && level(ka - 1) >= mn) --ka;
    while (ka <= K && level(ka) < mn) ++ka;
    kb = static_cast<int64_t>(floor(mx / tick)) - base;
    kb = kb < -1 ? -1 : (kb > K ? K : kb);
    while (kb < K && level(kb + 1) <= mx) ++kb;
    while (kb >= 0 && level(kb) > mx) --kb;
  }
};

VPOC_HD double legacy_weight(double level, double close) { return 1.0 + 1.0 / (1.0 + fabs(level - close)); }

// Legacy: weights 1 + 1/(1 + |L_k - close|) over the levels in [mn, mx], normalised; a bar holding
// no level puts everything on the close's tick. Each level's share v * w_k / sum(w) is taken in
// float64 and then as 64.64 fixed point, except the heaviest level's (the first one nearest the
// close), which is the rest of v: the shares sum to v exactly.
template <class Add>
VPOC_HD bool legacy(const LegacyLadder& L, double mn, double mx, double close, double v, int64_t tpr,
                    Add&& add) {
  int64_t ka, kb;
  L.range(mn, mx, ka, kb);
  if (ka > kb) {
    int64_t t = 0;
    ladder::to_tick(close, L.tick, t);
    return add(ladder::tick_to_row(t, tpr), fixed::from_double(v));
  }
  double wsum = 0.0, wmax = -1.0;
  int64_t kmax = ka;
  for (int64_t k = ka; k <= kb; ++k) {
    const double w = legacy_weight(L.level(k), close);
    wsum += w;
    if (w > wmax) {
      wmax = w;
      kmax = k;
    }
  }
  Fixed rest = fixed::from_double(v);
  for (int64_t k = ka; k <= kb; ++k) {
    if (k == kmax) continue;
    const Fixed share = fixed::from_double(v * legacy_weight(L.level(k), close) / wsum);
    rest -= share;
    if (!add(ladder::tick_to_row(L.base + k, tpr), share)) return false;
  }
  return add(ladder::tick_to_row(L.base + kmax, tpr), rest);
}

}  // namespace vpoc::distribute
