// core/grid.hpp — the price-grid rule: is a price on the tick_size grid? Shared by every backend.
// Contract: off when |t - rint(t)| > kGridTolerance + |t| * eps, t = p / tick_size in float64, eps the price dtype's rounding.
#pragma once

#include <math.h>

#include <cstdint>

#include "core/ladder.hpp"  // VPOC_HD

namespace vpoc::grid {

// A price is on the grid within this many ticks (plus its dtype's own rounding): 1e-6 ticks of
// ES (0.25) is 2.5e-7 points, far below any real print and far above float64 noise.
constexpr double kGridTolerance = 1e-6;
// More than this share of a call's prices off the grid is refused (unless snap): a wrong
// tick_size, back-adjusted or averaged prices; fewer are a few bad prints, rounded and reported.
constexpr double kGridMaxShare = 0.001;
// The rounding of a price of each dtype, relative: float32 holds about 7 significant digits (its
// 6000.1 is 6000.10009765625), float64 about 16.
constexpr double kEpsF32 = 1.0 / 8388608.0;            // 2**-23
constexpr double kEpsF64 = 1.0 / 4503599627370496.0;   // 2**-52

// The exact test of one price (NaN / inf: not off; the engine reports them).
VPOC_HD bool off_grid(double p, double tick_size, double eps) {
  const double t = p / tick_size;
  const double d = fabs(t - rint(t));
  return d > kGridTolerance + fabs(t) * eps;
}

// The prefilter's bounds (see candidate): |t| below 2**51 (where the CPU pass's round-to-integer
// trick is exact), the tolerance less 2**-40 of itself and eps less 2**-48 (p * inv differs from
// p / tick_size by at most a few ulps, 2**-51 |t|): every price the exact test calls off passes.
constexpr double kPrefilterMax = 2251799813685248.0;                           // 2**51
constexpr double kPrefilterTol = kGridTolerance * (1.0 - 1.0 / 1099511627776.0);  // less 2**-40
constexpr double kPrefilterSlack = 1.0 / 281474976710656.0;                     // 2**-48

// False proves p on the grid with one multiply (inv = 1 / tick_size); true: take the exact test.
// `rounded` is rint(p * inv) (the caller may round its own way: any exact rounding to nearest).
// Branch-free (& on the comparisons, no short circuit), so that the CPU's loop over it vectorises.
VPOC_HD bool candidate(double t, double rounded, double eps) {
  const double a = fabs(t);
  return !((a < kPrefilterMax) & (fabs(t - rounded) <= kPrefilterTol + a * (eps - kPrefilterSlack)));
}

// off_grid(p, tick_size, eps), the prefilter first (one division only for the few candidates).
VPOC_HD bool off_grid_fast(double p, double tick_size, double inv, double eps) {
  const double t = p * inv;
  return candidate(t, rint(t), eps) && off_grid(p, tick_size, eps);
}

}  // namespace vpoc::grid
