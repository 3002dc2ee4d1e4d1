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

// Whether the value area's running volume has reached its target: at or above it, or within the
// same 1e-9 relative band as a tie (so a value area that ends exactly on its target in exact
// arithmetic stops there whatever the float rounding of the running sum).
VPOC_HD bool reached(double running, double target) { return running >= target || target - running <= kRelTie * target; }

// Greedy value-area order: a before b when it has more volume, or as much and a lower row.
VPOC_HD bool greedy_before(const double* v, int64_t a, int64_t b) { return v[a] > v[b] || (v[a] == v[b] && a < b); }

// Whether tied row i beats tied row best (best >= 0) as the POC of rows [first, last]: "low" /
// "high" the lowest / highest; "center" the closest to the range centre, the lower one on equal
// distance (|2i - (first + last)| is twice that distance).
VPOC_HD bool poc_prefers(int64_t i, int64_t best, int64_t first, int64_t last, PocTie tie) {
  if (tie == PocTie::low) return i < best;
  if (tie == PocTie::high) return i > best;
  const int64_t di = 2 * i - (first + last), db = 2 * best - (first + last);
  const int64_t ai = di < 0 ? -di : di, ab = db < 0 ? -db : db;
  return ai < ab || (ai == ab && i < best);
}

// Whether v counts as equal to the maximum mx (1e-9 relative).
VPOC_HD bool at_max(double v, double mx) { return fabs(v - mx) <= kRelTie * mx; }

// Index (first..last) of the POC row among rows [first, last] of v whose maximum is mx.
VPOC_HD int64_t poc_among(const double* v, int64_t first, int64_t last, double mx, PocTie tie) {
  int64_t best = -1;
  for (int64_t i = first; i <= last; ++i) {
    if (!at_max(v[i], mx)) continue;
    if (tie == PocTie::low) return i;
    if (best < 0 || poc_prefers(i, best, first, last, tie)) best = i;
  }
  // No row at the maximum happens only when it is inf (volumes summed past float64: the caller
  // raises); first keeps every index the caller derives from the POC inside the rows.
  return best < 0 ? first : best;
}

// Index (0..n-1) of the POC row of v[0..n-1], n >= 1.
VPOC_HD int64_t poc_index(const double* v, int64_t n, PocTie tie) {
  double mx = v[0];
  for (int64_t i = 1; i < n; ++i) mx = v[i] > mx ? v[i] : mx;
  return poc_among(v, 0, n - 1, mx, tie);
}

// One step of the contiguous expansion ('cbot': step 2, 'single': step 1) inside rows
// [first, last] of v: adds the next `step` rows above hi or below lo (ties up) to [lo, hi] and
// running. False (nothing changed) when no row is left on either side.
VPOC_HD bool expand_step(const double* v, int64_t first, int64_t last, int step, int64_t& lo, int64_t& hi,
                         double& running) {
  const int64_t n_up = (last - hi) < step ? (last - hi) : step;
  const int64_t n_dn = (lo - first) < step ? (lo - first) : step;
  if (n_up == 0 && n_dn == 0) return false;
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
  return true;
}

// Contiguous expansion from the POC until running reaches target (reached()).
// In: v[0..n-1], poc. Out: [lo, hi] inclusive indices and the running volume at stop.
VPOC_HD void expand(const double* v, int64_t n, int64_t poc, double target, int step, int64_t& lo,
                    int64_t& hi, double& running) {
  lo = hi = poc;
  running = v[poc];
  while (!reached(running, target) && expand_step(v, 0, n - 1, step, lo, hi, running)) {
  }
}

}  // namespace vpoc::levels
