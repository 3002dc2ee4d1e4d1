// core/levels.hpp — POC and contiguous value-area expansion over one session's row volumes.
// Contract: docs/contract.md (ties, POC tie rules, cbot/single expansion) + docs/presets.md (peer rules), all backends.
#pragma once

#include <math.h>

#include <cstdint>

#include "core/fixed.hpp"
#include "core/ladder.hpp"
#include "vpoc/types.hpp"

namespace vpoc::levels {

// Relative tolerance under which two volumes count as equal (so float summation order can never
// flip a POC or an expansion step between backends or thread counts). Options::tie_tol, default.
constexpr double kRelTie = 1e-9;

// The level rules of one call (Options): tie band, POC tie rule, step comparison, stop rule, and
// which rows exist for the POC / value area (va_rows='touched': `touched`, [n] flags of the rows, 1
// where an input row put a share, even 0, on the row, or `cover`, [n] counts of the input rows
// covering each row (rolling windows keep these), > 0 where touched; both null: every row from the
// lowest to the highest).
struct Rules {
  double tol = kRelTie;
  PocTie tie = PocTie::center;
  VaCompare compare = VaCompare::tie_up;
  VaStop stop = VaStop::reaches;
  const uint8_t* touched = nullptr;
  const int32_t* cover = nullptr;
  int64_t va_p = 0, va_q = 0;  // va_target='decimal': value_area = va_p / va_q; va_q 0: float64 target

  VPOC_HD bool sparse() const { return touched != nullptr || cover != nullptr; }
  VPOC_HD bool exists(int64_t i) const { return touched != nullptr ? touched[i] != 0 : cover[i] > 0; }
};

// Whether r holds the default step, stop and target rules (tie_up, reaches, float64 target): kernels
// instantiated with Generic=false take only these and compile the others out (poc_tie and tie_tol
// stay run-time values).
VPOC_HD bool plain_rules(const Rules& r) {
  return r.compare == VaCompare::tie_up && r.stop == VaStop::reaches && r.va_q == 0;
}

VPOC_HD Rules rules_of(const Options& opt, const uint8_t* touched = nullptr) {
  Rules r;
  r.tol = opt.tie_tol;
  r.tie = opt.poc_tie;
  r.compare = opt.va_compare;
  r.stop = opt.va_stop;
  r.touched = touched;
  if (opt.va_target == VaTarget::decimal && !ladder::decimal_fraction(opt.value_area, 6, r.va_p, r.va_q))
    r.va_q = 0;  // unreachable: validate() refuses such a value_area
  return r;
}

// The value area's target: value_area * total in float64 ('float'), or the exact decimal fraction
// va_p / va_q of the total ('decimal', compared exactly by reached()).
struct Target {
  double t = 0.0;      // value_area * total (float64), the 'float' rule's target
  double total = 0.0;  // the session's (prefix's, window's) total
  int64_t p = 0, q = 0;
};
VPOC_HD Target target_of(double value_area, double total, const Rules& r) {
  Target g;
  g.t = value_area * total;
  g.total = total;
  g.p = r.va_p;
  g.q = r.va_q;
  return g;
}

VPOC_HD bool tied(double a, double b, double tol = kRelTie) {
  const double m = a > b ? a : b;
  return fabs(a - b) <= tol * m;
}

// Whether the value area's running volume has reached its target. 'reaches': at or above it, or
// within the tie band of it (so a value area that ends exactly on its target in exact arithmetic
// stops there whatever the float rounding of the running sum); 'exceeds': above it by more than the
// band (tol 0: running > target).
VPOC_HD bool reached(double running, double target, double tol = kRelTie, VaStop stop = VaStop::reaches) {
  if (stop == VaStop::exceeds) return running > target && !(running - target <= tol * target);
  return running >= target || target - running <= tol * target;
}
VPOC_HD bool reached(double running, double target, const Rules& r) { return reached(running, target, r.tol, r.stop); }
// The same against a Target: 'decimal' (q > 0) compares running * q with p * total exactly (LEAN's
// C# decimal: exact for running sums of whole row volumes, which the Python entry points check;
// no tie band); 'float' as above.
VPOC_HD bool reached(double running, const Target& g, const Rules& r) {
  if (g.q == 0) return reached(running, g.t, r.tol, r.stop);
  const int c = fixed::mul_cmp(running, static_cast<double>(g.q), g.total, static_cast<double>(g.p));
  return r.stop == VaStop::exceeds ? c > 0 : c >= 0;
}

// Greedy value-area order: a before b when it has more volume, or as much and a lower row.
VPOC_HD bool greedy_before(const double* v, int64_t a, int64_t b) { return v[a] > v[b] || (v[a] == v[b] && a < b); }

// Whether tied row i beats tied row best (best >= 0) as the POC of rows [first, last]: "low" /
// "high" the lowest / highest; "center" the closest to (first + last) / 2, "mid_n2" the closest
// to first + n / 2 (n = last - first + 1, py-market-profile's midpoint), "mid_floor" the closest
// to first + floor((n - 1) / 2) (LEAN's integer mid / 2), the lower one on equal distance
// (|2i - T2| is twice the distance to the target T2 / 2).
VPOC_HD bool poc_prefers(int64_t i, int64_t best, int64_t first, int64_t last, PocTie tie) {
  if (tie == PocTie::low) return i < best;
  if (tie == PocTie::high) return i > best;
  const int64_t t2 = tie == PocTie::mid_n2      ? first + last + 1
                     : tie == PocTie::mid_floor ? 2 * first + 2 * ((last - first) / 2)
                                                : first + last;
  const int64_t di = 2 * i - t2, db = 2 * best - t2;
  const int64_t ai = di < 0 ? -di : di, ab = db < 0 ? -db : db;
  return ai < ab || (ai == ab && i < best);
}

// The better of two POC candidates (-1: none) of rows [0, n-1]: poc_prefers is a strict total
// order, so a tree of these (a GPU block's reduction) picks what the sequential scan picks.
VPOC_HD int64_t better_poc(int64_t a, int64_t b, int64_t n, PocTie tie) {
  if (a < 0) return b;
  if (b < 0) return a;
  return poc_prefers(b, a, 0, n - 1, tie) ? b : a;
}

// Whether v counts as equal to the maximum mx (tol relative).
VPOC_HD bool at_max(double v, double mx, double tol = kRelTie) { return fabs(v - mx) <= tol * mx; }

// Index (first..last) of the POC row among rows [first, last] of v whose maximum is mx. With
// r.touched only touched rows compete, and the tie rule reads their ranks among the touched rows.
VPOC_HD int64_t poc_among(const double* v, int64_t first, int64_t last, double mx, const Rules& r) {
  int64_t best = -1;
  if (r.sparse()) {
    int64_t n = 0;
    for (int64_t i = first; i <= last; ++i) n += r.exists(i) ? 1 : 0;
    int64_t rank = -1, best_rank = -1;
    for (int64_t i = first; i <= last; ++i) {
      if (!r.exists(i)) continue;
      ++rank;
      if (!at_max(v[i], mx, r.tol)) continue;
      if (r.tie == PocTie::low) return i;
      if (best < 0 || poc_prefers(rank, best_rank, 0, n - 1, r.tie)) {
        best = i;
        best_rank = rank;
      }
    }
    return best < 0 ? first : best;
  }
  for (int64_t i = first; i <= last; ++i) {
    if (!at_max(v[i], mx, r.tol)) continue;
    if (r.tie == PocTie::low) return i;
    if (best < 0 || poc_prefers(i, best, first, last, r.tie)) best = i;
  }
  // No row at the maximum happens only when it is inf (volumes summed past float64: the caller
  // raises); first keeps every index the caller derives from the POC inside the rows.
  return best < 0 ? first : best;
}

// Index (0..n-1) of the POC row of v[0..n-1], n >= 1 (the maximum over every row: untouched rows
// hold 0 and volumes are >= 0, so it is also the touched rows' maximum).
VPOC_HD int64_t poc_index(const double* v, int64_t n, const Rules& r) {
  double mx = v[0];
  for (int64_t i = 1; i < n; ++i) mx = v[i] > mx ? v[i] : mx;
  return poc_among(v, 0, n - 1, mx, r);
}

// The step rule (one home): whether the next step of the expansion takes the group of rows below
// (volume dn) rather than the one above (up); has_dn / has_up: whether a row is left on that side.
// 'tie_up': down only when below holds more (not tied); 'zero_absent' (py-market-profile, LEAN):
// down also when the rows above hold 0 (or none is left). A side with no row left is never taken.
// Every test is evaluated (& and |, not && and ||: pure, so the same answer): on a GPU the walk's step
// is one dependent chain, and the predicates combine without branches or bytes. more_below is
// dn > up && !tied(dn, up, tol) with tied's larger volume known to be dn where it counts (where
// dn <= up both are false), so tol * dn is not waiting for the comparison.
VPOC_HD bool takes_down(double dn, double up, bool has_dn, bool has_up, const Rules& r) {
  const bool more_below = (dn > up) & !(fabs(dn - up) <= r.tol * dn);
  return r.compare == VaCompare::zero_absent ? has_dn & ((!has_up) | (up == 0.0) | more_below)
                                             : (!has_up) | (has_dn & more_below);
}

// One step of the contiguous expansion ('cbot': step 2, 'single': step 1) inside rows
// [first, last] of v: adds the next `step` rows (touched rows only, with r.touched) above hi or
// below lo to [lo, hi] and running, by takes_down. False (nothing changed) when no row is left on
// either side.
// Rows: `const double*`, or any row accessor whose v[k] gives row k's volume (core/developing_chunk.hpp
// reads a snapshot through one); the arithmetic is the same either way.
// I: the row index type, taken from lo / hi (int64_t; the developing chunk's walk, int32_t: its rows are
// a block's shared memory, and 64-bit index arithmetic is two instructions a step on a GPU).
template <class T>
struct Given {  // a parameter that takes its type from the others (std::type_identity, C++20)
  using type = T;
};
template <class Rows, class I>
VPOC_HD bool expand_step(const Rows& v, typename Given<I>::type first, typename Given<I>::type last, int step, I& lo,
                         I& hi, double& running, const Rules& r) {
  I n_up = 0, n_dn = 0, new_hi = hi, new_lo = lo;
  double up = 0.0, dn = 0.0;
  if (!r.sparse()) {
    n_up = (last - hi) < step ? (last - hi) : step;
    n_dn = (lo - first) < step ? (lo - first) : step;
    // cbot's two rows a side and single's one, unrolled (the same additions in the same order as the
    // loop, which takes any longer step): the developing walks run this step as one dependent chain
    if (n_up > 0) up += v[hi + 1];
    if (n_up > 1) up += v[hi + 2];
    for (I k = 3; k <= n_up; ++k) up += v[hi + k];
    if (n_dn > 0) dn += v[lo - 1];
    if (n_dn > 1) dn += v[lo - 2];
    for (I k = 3; k <= n_dn; ++k) dn += v[lo - k];
    new_hi = hi + n_up;
    new_lo = lo - n_dn;
  } else {
    for (I i = hi + 1; i <= last && n_up < step; ++i)
      if (r.exists(i)) {
        up += v[i];
        ++n_up;
        new_hi = i;
      }
    for (I i = lo - 1; i >= first && n_dn < step; --i)
      if (r.exists(i)) {
        dn += v[i];
        ++n_dn;
        new_lo = i;
      }
  }
  if (n_up == 0 && n_dn == 0) return false;
  if (takes_down(dn, up, n_dn > 0, n_up > 0, r)) {
    running += dn;
    lo = new_lo;
  } else {
    running += up;
    hi = new_hi;
  }
  return true;
}

// Groups of `step` rows on one side of the POC that hold `rows` rows (the last group may be shorter).
VPOC_HD int64_t groups(int64_t rows, int step) { return (rows + step - 1) / step; }

// Group k (0, 1, ...) of one side of a POC: the volume of its rows summed from 0.0 outwards, as
// expand_step adds them. v: the session's rows; from: the first row of the side (poc + 1 above,
// poc - 1 below); dir +1 above, -1 below; rows: rows on that side.
struct GroupSum {
  const double* v;
  int64_t from, rows;
  int step, dir;
  VPOC_HD double operator()(int64_t k) const {
    const int64_t a = k * step, m = rows - a < step ? rows - a : step;
    double sum = 0.0;
    for (int64_t t = 0; t < m; ++t) sum += v[from + dir * (a + t)];
    return sum;
  }
};

// The contiguous expansion from the POC (every row exists) as a walk over the sums of its groups:
// up(k) / down(k) the volume of group k above / below the POC (GroupSum, or the same values staged
// by the caller), nu / nd groups on each side; running holds the POC row's volume on entry. Out: the
// groups taken above (i) and below (j), running at the stop. The steps of expand_step from [poc, poc],
// so the same bits; the next group of each side is read one step ahead (off the dependency chain).
template <class Up, class Down>
VPOC_HD void expand_groups(const Up& up, int64_t nu, const Down& down, int64_t nd, const Target& target,
                           double& running, int64_t& i, int64_t& j, const Rules& r) {
  i = j = 0;
  double u = nu > 0 ? up(0) : 0.0, d = nd > 0 ? down(0) : 0.0;
  double u1 = nu > 1 ? up(1) : 0.0, d1 = nd > 1 ? down(1) : 0.0;
  while ((i < nu || j < nd) && !reached(running, target, r)) {
    if (takes_down(d, u, j < nd, i < nu, r)) {
      running += d;
      ++j;
      d = d1;
      d1 = j + 1 < nd ? down(j + 1) : 0.0;
    } else {
      running += u;
      ++i;
      u = u1;
      u1 = i + 1 < nu ? up(i + 1) : 0.0;
    }
  }
}

// The contiguous expansion of rows [first, last] (every row exists; step 1 or 2) from [lo, hi] =
// [poc, poc], running = v[poc] on entry, through any row accessor v (v[k]: row k), for a GPU lane that
// walks alone (core/developing_chunk.hpp): the steps of expand_step, so the same bits (the same
// takes_down and reached tests on the same doubles, each group summed from 0.0 outwards from the POC
// as expand_step sums it, running += the group taken, in path order). Each side's next two groups are
// held in registers and the side taken reads its next one, one step before it is needed: no load on
// the step's dependent chain. The side is chosen by selects, not branches (a warp's lanes take
// different sides), and rows are 32-bit (a block's shared memory). Preconditions (its one caller,
// core/developing_chunk.hpp, meets them): dense rows (no sparse rule: every row in [first, last]
// exists) and step 1 or 2; other callers use expand / expand_step.
template <class Rows>
VPOC_HD void expand_ahead(const Rows& v, int32_t first, int32_t last, int step, const Target& target, int32_t& lo,
                          int32_t& hi, double& running, const Rules& r) {
  const bool two = step == 2;
  // the group of rows at and at + dir (two) inside [first, last]: 0.0 + v[at] (+ v[at + dir]), expand_step's adds
  auto group = [&](int32_t at, int32_t dir) {
    const int32_t at1 = at + dir;
    const double s0 = 0.0 + (at >= first && at <= last ? v[at] : 0.0);
    return two && at1 >= first && at1 <= last ? s0 + v[at1] : s0;
  };
  double u = group(hi + 1, 1), u1 = group(hi + 1 + step, 1);    // the groups above hi, the next one
  double d = group(lo - 1, -1), d1 = group(lo - 1 - step, -1);  // the groups below lo, the next one
  bool more = (hi < last || lo > first) && !reached(running, target, r);
  while (more) {
    const bool down = takes_down(d, u, lo > first, hi < last, r);
    // both sides' next running volume and stop test, beside takes_down rather than after it (the
    // step's chain): the side taken keeps its own, the very running += d or += u of expand_step
    const double run_dn = running + d, run_up = running + u;
    const bool stop_dn = reached(run_dn, target, r), stop_up = reached(run_up, target, r);
    running = down ? run_dn : run_up;
    const int32_t up_hi = hi + step < last ? hi + step : last, dn_lo = lo - step > first ? lo - step : first;
    hi = down ? hi : up_hi;
    lo = down ? dn_lo : lo;
    const double g = group(down ? lo - 1 - step : hi + 1 + step, down ? -1 : 1);  // the side's group after next
    d = down ? d1 : d;
    d1 = down ? g : d1;
    u = down ? u : u1;
    u1 = down ? u1 : g;
    more = (hi < last || lo > first) && !(down ? stop_dn : stop_up);
  }
}

// Contiguous expansion from the POC until running reaches target (reached()).
// In: v[0..n-1], poc. Out: [lo, hi] inclusive indices and the running volume at stop.
VPOC_HD void expand(const double* v, int64_t n, int64_t poc, const Target& target, int step, int64_t& lo,
                    int64_t& hi, double& running, const Rules& r) {
  lo = hi = poc;
  running = v[poc];
  if (r.sparse()) {
    while (!reached(running, target, r) && expand_step(v, 0, n - 1, step, lo, hi, running, r)) {
    }
    return;
  }
  const GroupSum up{v, poc + 1, n - 1 - poc, step, 1}, down{v, poc - 1, poc, step, -1};
  int64_t i = 0, j = 0;
  expand_groups(up, groups(n - 1 - poc, step), down, groups(poc, step), target, running, i, j, r);
  hi = poc + i * step < n - 1 ? poc + i * step : n - 1;
  lo = poc - j * step > 0 ? poc - j * step : 0;
}

// What a developing pass (core/developing.hpp: prefixes; core/window.hpp: rolling windows) keeps of
// its rows so far and reports: the rows [first, last] as scratch indices (first > last when empty),
// the volume (exact, and rounded once), the value area's volume, the POC / VAL / VAH scratch indices
// of the last row run.
class Running {
 public:
  VPOC_HD int64_t first() const { return first_; }
  VPOC_HD int64_t last() const { return last_; }
  VPOC_HD double total() const { return total_; }
  VPOC_HD const Fixed& total_fixed() const { return total_f_; }
  VPOC_HD double va_volume() const { return va_volume_; }
  VPOC_HD int64_t poc() const { return poc_; }
  VPOC_HD int64_t val() const { return val_; }
  VPOC_HD int64_t vah() const { return vah_; }

 protected:
  // out(i, poc_row, val_row, vah_row): the levels of row i, as absolute rows (index 0 = origin).
  template <class Out>
  VPOC_HD void report(Out& out, int64_t i, int64_t origin) const {
    out(i, origin + poc_, origin + val_, origin + vah_);
  }

  int64_t first_ = 0, last_ = -1;  // empty while first_ > last_
  Fixed total_f_;
  double total_ = 0.0, va_volume_ = 0.0;  // total_: total_f_ rounded once
  int64_t poc_ = -1, val_ = -1, vah_ = -1;
};

}  // namespace vpoc::levels
