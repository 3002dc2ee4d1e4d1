// core/levels.hpp — POC and contiguous value-area expansion over one session's row volumes.
// Contract: docs/contract.md (1e-9 relative ties, 'center' tie rule, cbot/single expansion, ties up).
#pragma once

#include <math.h>

#include <cstdint>

#include "core/ladder.hpp"
#include "vpoc/types.hpp"

namespace vpoc::levels {

// Relative tolerance under which two volumes count as equal (so float summation order can never
// flip a POC or an expansion step between backends or thread counts).
constexpr double kRelTie = 1e-9;

VPOC_HD bool tied(double a, double b) {
  const double m = a > b ? a : b;
  return fabs(a - b) <= kRelTie * m;
}

// Index (0..n-1) of the POC row of v[0..n-1], n >= 1.
VPOC_HD int64_t poc_index(const double* v, int64_t n, PocTie tie) {
  double mx = v[0];
  for (int64_t i = 1; i < n; ++i) mx = v[i] > mx ? v[i] : mx;
  const double tol = kRelTie * mx;
  int64_t best = -1;
  int64_t best_dist = 0;  // |2i - (n-1)|: twice the distance to the range centre
  for (int64_t i = 0; i < n; ++i) {
    if (!(fabs(v[i] - mx) <= tol)) continue;
    if (tie == PocTie::low) return i;
    if (tie == PocTie::high) {
      best = i;
      continue;
    }
    const int64_t d = 2 * i - (n - 1);
    const int64_t dist = d < 0 ? -d : d;
    if (best < 0 || dist < best_dist) {
      best = i;
      best_dist = dist;
    }
  }
  return best;
}

// Contiguous expansion from the POC ('cbot': step 2, 'single': step 1) until running >= target.
// In: v[0..n-1], poc. Out: [lo, hi] inclusive indices and the running volume at stop.
VPOC_HD void expand(const double* v, int64_t n, int64_t poc, double target, int step, int64_t& lo,
                    int64_t& hi, double& running) {
  lo = hi = poc;
  running = v[poc];
  while (running < target) {
    const int64_t n_up = (n - 1 - hi) < step ? (n - 1 - hi) : step;
    const int64_t n_dn = lo < step ? lo : step;
    if (n_up == 0 && n_dn == 0) break;
    double up = 0.0, dn = 0.0;
    for (int64_t k = 1; k <= n_up; ++k) up += v[hi + k];
    for (int64_t k = 1; k <= n_dn; ++k) dn += v[lo - k];
    const bool take_down = n_up == 0 || (n_dn > 0 && dn > up && !tied(dn, up));
    if (take_down) {
      running += dn;
      lo -= n_dn;
    } else {
      running += up;
      hi += n_up;
    }
  }
}

}  // namespace vpoc::levels
