// gpu/va_merge.hpp — the contiguous value area's path (every row exists, 'tie_up' steps) as a merge, found in parallel.
// Contract: the same steps, stop and running sum as core/levels.hpp expand_groups (bit-equal); used by gpu/levels.cu.
#pragma once

#include <math.h>

#include <cfloat>
#include <cstdint>

#include "core/levels.hpp"

namespace vpoc::va_merge {

// Why a merge: expand_groups takes the group below (volume d_j) rather than the one above (u_i)
// when takes_down(d_j, u_i), which ('tie_up', both sides left) is monotone in u: true for u below
// a threshold T_j of d_j, false from it on (u >= d_j: d_j > u is false; u < d_j: fl(d_j - u) falls
// as u grows, against the fixed tol * d_j). So the walk compares the keys u_i and T_j, a total order,
// and a walk that compares heads of two sequences by a total order takes each run that starts at a
// new prefix minimum whole: its path is the merge of the sequences' prefix minima PU, PD (down j
// before up i exactly when PD(j) > PU(i)). Each step's place is then a binary search, and only the
// float64 running sum (path order, for the bits) and its stop test remain sequential.

// A volume the merge takes: finite and >= 0 (else the caller walks as before).
VPOC_HD bool plain(double x) { return x >= 0.0 && x <= DBL_MAX; }

// T of down group volume d: for every volume u >= 0, takes_down(d, u, true, true, r) exactly when
// u < T (r.compare 'tie_up'). Checked against takes_down itself: ok false (the caller then walks as
// before) when d is not plain or T is not found within a few ulps of d - tol * d.
VPOC_HD double threshold(double d, const levels::Rules& r, bool& ok) {
  double c = d - r.tol * d;
  if (!(c >= 0.0)) c = 0.0;
  if (!(c <= d)) c = d;
  for (int k = 0; k < 4 && levels::takes_down(d, c, true, true, r); ++k) c = nextafter(c, DBL_MAX);
  for (int k = 0; k < 4 && c > 0.0 && !levels::takes_down(d, nextafter(c, 0.0), true, true, r); ++k)
    c = nextafter(c, 0.0);
  ok = plain(d) && !levels::takes_down(d, c, true, true, r) &&
       (c == 0.0 || levels::takes_down(d, nextafter(c, 0.0), true, true, r));
  return c;
}

// #{k < n : a[k] > key} (Strict) or #{k < n : a[k] >= key} for a non-increasing a (a prefix of a).
template <bool Strict, class A>
VPOC_HD int64_t count_above(const A& a, int64_t n, double key) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (Strict ? a[mid] > key : a[mid] >= key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Place in the path of up group i (pu: the up keys' prefix minima, [nu]; pd: the downs', [nd]):
// after the downs whose prefix minimum is above its own. Down group j: after the ups whose prefix
// minimum is at or above its own (ties go up, as takes_down).
template <class A>
VPOC_HD int64_t up_place(const A& pu, const A& pd, int64_t nd, int64_t i) { return i + count_above<true>(pd, nd, pu[i]); }
template <class A>
VPOC_HD int64_t down_place(const A& pu, int64_t nu, const A& pd, int64_t j) { return j + count_above<false>(pu, nu, pd[j]); }

// The stop of the walk along the path: value(t) the volume of step t (t < total), running holds the
// POC row's volume on entry and the running volume at the stop on return; returns the steps taken.
// The same float64 adds in the same order as expand_groups, and the same reached() test before
// each step; four steps' sums are formed ahead (they do not wait for the tests), and the next four
// steps' volumes are loaded while they are (value's loads are off the chain).
template <class Value>
VPOC_HD int64_t walk(const Value& value, int64_t total, const levels::Target& target, double& running,
                     const levels::Rules& r) {
  int64_t t = 0;
  double run = running;
  double x0 = total > 0 ? value(0) : 0.0, x1 = total > 1 ? value(1) : 0.0;
  double x2 = total > 2 ? value(2) : 0.0, x3 = total > 3 ? value(3) : 0.0;
  for (;;) {
    const int64_t m = total - t;  // steps left; x0..x3: the volumes of steps t..t+3 (0 past the last)
    const double y0 = m > 4 ? value(t + 4) : 0.0, y1 = m > 5 ? value(t + 5) : 0.0;
    const double y2 = m > 6 ? value(t + 6) : 0.0, y3 = m > 7 ? value(t + 7) : 0.0;
    const double r1 = run + x0, r2 = r1 + x1, r3 = r2 + x2, r4 = r3 + x3;
    // h_k: the walk stops after k steps of these four (at r_k), if not before
    const bool h0 = (m <= 0) | levels::reached(run, target, r);
    const bool h1 = (m <= 1) | levels::reached(r1, target, r);
    const bool h2 = (m <= 2) | levels::reached(r2, target, r);
    const bool h3 = (m <= 3) | levels::reached(r3, target, r);
    const int k = h0 ? 0 : h1 ? 1 : h2 ? 2 : h3 ? 3 : 4;
    run = h0 ? run : h1 ? r1 : h2 ? r2 : h3 ? r3 : r4;
    t += k;
    if (k < 4) break;
    x0 = y0;
    x1 = y1;
    x2 = y2;
    x3 = y3;
  }
  running = run;
  return t;
}

// The walk's stop in parallel where its sums are exact in any order. R_t, the running volume before
// step t, is running + value(0) + ... + value(t - 1) added in path order; when the POC row's volume and
// every step's volume are whole numbers (whole()) and the session's total is at most 2**52, every such
// sum is an integer below 2**53, so each add is exact and R_t is the same double whatever order adds it.
// The stop (walk's: the first t with t == total or reached(R_t)) is then found by runs: the block cuts
// the steps into runs [a, b), scans the runs' sums for each run's R_a (exclusive prefix, exact), and
// run_stop gives the first t in [a, b) whose R_t is reached (running: that R_t), b when the run is the
// last (b == total: the walk ends there; running: R_total), else -1 (a later run holds the stop). The
// smallest of the runs' answers is walk's t, with the same running bits (cpp/tests/test_levels.cpp).
VPOC_HD bool whole(double x) { return x == trunc(x); }  // for plain x (finite, >= 0)

template <class Value>
VPOC_HD int64_t run_stop(const Value& value, int64_t a, int64_t b, int64_t total, const levels::Target& target,
                         double& running, const levels::Rules& r) {
  if (a >= b) return -1;  // an empty run (the steps ended before it): no answer
  for (int64_t t = a; t < b; ++t) {
    if (levels::reached(running, target, r)) return t;
    running += value(t);
  }
  return b == total ? b : -1;
}

}  // namespace vpoc::va_merge
