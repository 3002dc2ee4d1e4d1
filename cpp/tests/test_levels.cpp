// cpp/tests/test_levels.cpp — core/levels.hpp (and cpu/levels.cpp's greedy): POC ties, value-area expansion.
// Contract: hand-computed profiles and reference.hpp's brute force of docs/contract.md "POC" / "Value area".
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/levels.hpp"
#include "cpu/levels.hpp"
#include "gpu/va_merge.hpp"
#include "reference.hpp"

using namespace vpoc;

namespace {
levels::Rules rules(PocTie tie = PocTie::center) {
  levels::Rules r;
  r.tie = tie;
  return r;
}
int64_t poc(const std::vector<double>& v, PocTie tie) {
  return levels::poc_index(v.data(), static_cast<int64_t>(v.size()), rules(tie));
}

struct Va {
  int64_t val, vah;
  double running;
};
Va expand(const std::vector<double>& v, int64_t p, double target, int step) {
  Va a{};
  const levels::Rules r = rules();
  levels::expand(v.data(), static_cast<int64_t>(v.size()), p, levels::target_of(1.0, target, r), step, a.val, a.vah,
                 a.running, r);
  return a;
}

// The rule mix of the random walk tests, by trial: tie band, compare ('tie_up' only unless `compare`),
// stop, a decimal target on one trial in 7; then the value area (1.0 on one in 9).
levels::Rules random_rules(int trial, std::mt19937_64& rng, bool compare) {
  levels::Rules r;
  r.tol = trial % 4 == 0 ? 0.0 : trial % 4 == 1 ? 1e-3 : levels::kRelTie;
  if (compare) r.compare = trial % 2 ? VaCompare::zero_absent : VaCompare::tie_up;
  r.stop = trial % 6 < 3 ? VaStop::exceeds : VaStop::reaches;
  if (trial % 7 == 3) {  // decimal target
    r.va_p = static_cast<int64_t>(1 + rng() % 99);
    r.va_q = 100;
  }
  return r;
}
double random_value_area(int trial, std::mt19937_64& rng) {
  return trial % 9 == 0 ? 1.0 : static_cast<double>(1 + rng() % 99) / 100.0;
}

cpu::SessionLevels session(const std::vector<double>& v, double value_area, VaMethod m, PocTie tie) {
  double total = 0;
  for (double x : v) total += x;
  Options opt;
  opt.value_area = value_area;
  opt.va_method = m;
  opt.poc_tie = tie;
  std::vector<int64_t> order;
  return cpu::session_levels(v.data(), static_cast<int64_t>(v.size()), total, opt, order);
}

ref::Tie ref_tie(PocTie t) { return t == PocTie::low ? ref::Tie::low : t == PocTie::high ? ref::Tie::high : ref::Tie::center; }
ref::Va ref_va(VaMethod m) { return m == VaMethod::greedy ? ref::Va::greedy : m == VaMethod::single ? ref::Va::single : ref::Va::cbot; }
}  // namespace

TEST_CASE("24_5_levels_relative_tie_band_1e_9") {
  CHECK(levels::tied(1.0, 1.0));
  CHECK(levels::tied(1.0, 1.0 + 0.9e-9));
  CHECK(levels::tied(1.0 + 0.9e-9, 1.0));
  CHECK_FALSE(levels::tied(1.0, 1.0 + 1.1e-9));
  CHECK_FALSE(levels::tied(1.0 + 1.1e-9, 1.0));
  CHECK(levels::tied(1e12, 1e12 + 999.0));  // relative, not absolute
  CHECK_FALSE(levels::tied(1e12, 1e12 + 1001.0));
  CHECK(levels::tied(0.0, 0.0));
  CHECK_FALSE(levels::tied(0.0, 1e-300));
  CHECK(levels::at_max(1e6 - 9e-4, 1e6));
  CHECK_FALSE(levels::at_max(1e6 - 1.1e-3, 1e6));
  CHECK(levels::at_max(0.0, 0.0));
  // reached: at or above the target, or below it by at most 1e-9 of it
  CHECK(levels::reached(100.0, 100.0));
  CHECK(levels::reached(100.5, 100.0));
  CHECK(levels::reached(100.0 - 0.99e-7, 100.0));
  CHECK_FALSE(levels::reached(100.0 - 1.01e-7, 100.0));
}

TEST_CASE("24_5_levels_poc_tie_rules_hand_values") {
  const std::vector<double> a = {5, 1, 5, 1, 5};
  CHECK(poc(a, PocTie::center) == 2);
  CHECK(poc(a, PocTie::low) == 0);
  CHECK(poc(a, PocTie::high) == 4);
  // rows 0..3, centre 1.5: rows 0 and 1 tie, row 1 is nearer
  const std::vector<double> b = {5, 5, 0, 0};
  CHECK(poc(b, PocTie::center) == 1);
  CHECK(poc(b, PocTie::low) == 0);
  CHECK(poc(b, PocTie::high) == 1);
  // rows 1 and 2 equally near the centre 1.5: the lower one
  const std::vector<double> c = {0, 5, 5, 0};
  CHECK(poc(c, PocTie::center) == 1);
  CHECK(poc(c, PocTie::high) == 2);
  // equally near the centre 2 (rows 0 and 4) with a smaller row between: the lower one
  const std::vector<double> d = {7, 0, 3, 0, 7};
  CHECK(poc(d, PocTie::center) == 0);
  CHECK(poc(d, PocTie::high) == 4);
  // within 1e-9 relative counts as tied: 'low' takes row 0 although row 1 is larger
  const std::vector<double> e = {10.0, 10.0 * (1 + 5e-10), 0.0, 0.0};
  CHECK(poc(e, PocTie::low) == 0);
  CHECK(poc(e, PocTie::center) == 1);
  CHECK(poc(e, PocTie::high) == 1);
  // beyond the band it is not: row 1 for every rule
  const std::vector<double> f = {10.0, 10.0 * (1 + 2e-9), 0.0, 0.0};
  CHECK(poc(f, PocTie::low) == 1);
  CHECK(poc(f, PocTie::center) == 1);
  // all zero: every row ties
  const std::vector<double> z = {0, 0, 0, 0, 0, 0};
  CHECK(poc(z, PocTie::center) == 2);
  CHECK(poc(z, PocTie::low) == 0);
  CHECK(poc(z, PocTie::high) == 5);
  CHECK(poc({3.0}, PocTie::center) == 0);
}

TEST_CASE("24_5_levels_poc_among_subrange_centre") {
  // rows 2..7 of v (centre 4.5): tied rows 3 and 6, row 3 is 1.5 away, row 6 1.5 away -> lower (3)
  const std::vector<double> v = {9, 9, 1, 4, 0, 0, 4, 2, 9, 9};
  CHECK(levels::poc_among(v.data(), 2, 7, 4.0, rules(PocTie::center)) == 3);
  CHECK(levels::poc_among(v.data(), 2, 7, 4.0, rules(PocTie::high)) == 6);
  CHECK(levels::poc_among(v.data(), 3, 7, 4.0, rules(PocTie::center)) == 6);  // centre 5: row 6 is 1 away, row 3 is 2
  CHECK(levels::poc_prefers(5, 3, 2, 7, PocTie::center));
  CHECK_FALSE(levels::poc_prefers(6, 3, 2, 7, PocTie::center));
  CHECK(levels::poc_prefers(3, 6, 2, 7, PocTie::center));
}

TEST_CASE("24_5_levels_value_area_cbot_single_greedy_hand_values") {
  // total 22, target 15.4, POC row 3
  const std::vector<double> v = {1, 2, 3, 10, 3, 2, 1};
  // cbot: U = 3+2 = 5, D = 3+2 = 5 tie -> up (15); U = 1, D = 5 -> down (20)
  Va a = expand(v, 3, 0.7 * 22, 2);
  CHECK(a.val == 1);
  CHECK(a.vah == 5);
  CHECK(a.running == 20.0);
  // single: U = 3, D = 3 tie -> up (13); U = 2, D = 3 -> down (16)
  a = expand(v, 3, 0.7 * 22, 1);
  CHECK(a.val == 2);
  CHECK(a.vah == 4);
  CHECK(a.running == 16.0);
  // greedy: 10 (row 3), 3 (row 2, lower first), 3 (row 4) -> 16
  const auto g = session(v, 0.7, VaMethod::greedy, PocTie::center);
  CHECK(g.poc == 3);
  CHECK(g.val == 2);
  CHECK(g.vah == 4);
  CHECK(g.va_volume == 16.0);
  // one side exhausted: take the other. POC at the top row
  const std::vector<double> top = {1, 1, 1, 1, 6};
  a = expand(top, 4, 0.7 * 10, 2);
  CHECK(a.val == 2);
  CHECK(a.vah == 4);
  CHECK(a.running == 8.0);
  // greedy need not be contiguous: 9 and 10 at rows 0 and 2
  const auto h = session({9, 0, 10, 0, 0}, 0.7, VaMethod::greedy, PocTie::center);
  CHECK(h.val == 0);
  CHECK(h.vah == 2);
  CHECK(h.va_volume == 19.0);
  // greedy with equal volumes takes the lower row first: rows 1 and 3 hold 4, target 0.5 * 12 = 6
  const auto e = session({0, 4, 4, 4, 0}, 0.5, VaMethod::greedy, PocTie::center);
  CHECK(e.poc == 2);
  CHECK(e.val == 1);
  CHECK(e.vah == 2);
  // value_area = 1: everything
  a = expand(v, 3, 1.0 * 22, 2);
  CHECK(a.val == 0);
  CHECK(a.vah == 6);
}

TEST_CASE("24_5_levels_value_area_down_up_tie_band") {
  // D slightly above U but within 1e-9: a tie, goes up; beyond the band: goes down
  const double u = 1000.0;
  std::vector<double> v = {0, u * (1 + 5e-10), 5000, u, 0};
  Va a = expand(v, 2, 6000.0, 1);
  CHECK(a.val == 2);
  CHECK(a.vah == 3);
  v[1] = u * (1 + 2e-9);
  a = expand(v, 2, 6000.0, 1);
  CHECK(a.val == 1);
  CHECK(a.vah == 2);
}

TEST_CASE("24_5_levels_value_area_stops_on_exact_target_despite_rounding") {
  // docs/contract.md: one bar 6000 .. 6002.25 (10 rows) of volume 530 or 531; 7 rows hold exactly
  // 70%, whatever the float rounding of 0.7 * total and of the running sum.
  for (double total : {530.0, 531.0}) {
    const std::vector<double> v(10, total / 10);
    const auto s = session(v, 0.7, VaMethod::cbot, PocTie::center);
    CHECK(s.poc == 4);  // rows 4 and 5 equally near the centre 4.5: the lower
    CHECK(s.vah - s.val + 1 == 7);
    CHECK(s.val == 2);
    CHECK(s.vah == 8);
    const auto g = session(v, 0.7, VaMethod::greedy, PocTie::center);
    CHECK(g.vah - g.val + 1 == 7);
    const auto one = session(v, 0.7, VaMethod::single, PocTie::center);
    CHECK(one.vah - one.val + 1 == 7);
  }
}

TEST_CASE("24_5_levels_greedy_order") {
  const std::vector<double> v = {3, 5, 5, 1, 5};
  CHECK(levels::greedy_before(v.data(), 1, 0));
  CHECK(levels::greedy_before(v.data(), 1, 2));
  CHECK_FALSE(levels::greedy_before(v.data(), 2, 1));
  CHECK(levels::greedy_before(v.data(), 2, 4));
  CHECK_FALSE(levels::greedy_before(v.data(), 1, 1));
}

TEST_CASE("24_5_levels_brute_force_small_profiles") {
  std::mt19937_64 rng(7);
  const PocTie ties[] = {PocTie::center, PocTie::low, PocTie::high};
  const VaMethod methods[] = {VaMethod::cbot, VaMethod::single, VaMethod::greedy};
  int compared = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const size_t n = 1 + rng() % 12;
    std::vector<double> v(n);
    for (double& x : v) {
      x = static_cast<double>(rng() % 5);  // many exact ties
      if (trial % 3 == 0) x *= 1.0 + static_cast<double>(rng() % 3) * 4e-10;  // ties within the band
      if (trial % 7 == 0) x = static_cast<double>(rng() % 1000) / 7.0;
    }
    double total = 0;
    for (double x : v) total += x;
    const double va = trial % 4 == 0 ? 1.0 : static_cast<double>(1 + rng() % 99) / 100.0;
    for (PocTie tie : ties) {
      for (VaMethod m : methods) {
        const auto want = ref::value_area(v, total, va, ref_va(m), ref_tie(tie));
        Options opt;
        opt.value_area = va;
        opt.va_method = m;
        opt.poc_tie = tie;
        std::vector<int64_t> order;
        const auto got = cpu::session_levels(v.data(), static_cast<int64_t>(n), total, opt, order);
        ++compared;
        if (got.poc != want.poc || got.val != want.val || got.vah != want.vah || got.va_volume != want.va_volume) {
          std::string s;
          for (double x : v) s += std::to_string(x) + " ";
          FAIL_CHECK("v = [" << s << "] va " << va << " method " << static_cast<int>(m) << " tie " << static_cast<int>(tie)
                             << ": got " << got.poc << "/" << got.val << "/" << got.vah << " want " << want.poc << "/"
                             << want.val << "/" << want.vah);
        }
      }
    }
  }
  CHECK(compared == 180000);
}

TEST_CASE("27_5_levels_poc_tie_mid_floor_lean") {
  // LEAN GetMax: target floor((n - 1) / 2), the lower one on equal distance
  const std::vector<double> a = {5, 1, 5, 5};  // n 4: target 1 -> rows 0 and 2 tie at distance 1 -> 0
  CHECK(poc(a, PocTie::mid_floor) == 0);
  CHECK(poc(a, PocTie::mid_n2) == 2);  // target 2
  const std::vector<double> b = {0, 5, 5, 0, 0};  // n 5: target 2 -> row 2
  CHECK(poc(b, PocTie::mid_floor) == 2);
  const std::vector<double> c = {0, 5, 5, 0, 0, 0};  // n 6: target 2 -> row 2 (center 2.5: row 2)
  CHECK(poc(c, PocTie::mid_floor) == 2);
  const std::vector<double> d = {0, 0, 0, 5, 0, 5};  // target 2: row 3 (distance 1) beats row 5
  CHECK(poc(d, PocTie::mid_floor) == 3);
  CHECK(levels::poc_prefers(3, 1, 0, 5, PocTie::mid_floor) == false);  // both 1 from 2: lower stays
  CHECK(levels::poc_prefers(1, 3, 0, 5, PocTie::mid_floor));
}

TEST_CASE("27_5_levels_decimal_target_exact") {
  // total 10, value_area 0.7: target exactly 7; float 0.7 * 10 = 7.000000000000001 > 7
  levels::Rules r;
  r.tol = 0.0;
  r.stop = VaStop::exceeds;
  r.va_p = 7;
  r.va_q = 10;
  const levels::Target g = levels::target_of(0.7, 10.0, r);
  CHECK_FALSE(levels::reached(7.0, g, r));  // exceeds: 7 is not above 7
  CHECK(levels::reached(8.0, g, r));
  r.stop = VaStop::reaches;
  CHECK(levels::reached(7.0, g, r));
  CHECK_FALSE(levels::reached(6.0, g, r));
  // a multiple of 10 where fl(T * 0.7) < 7T/10: float 'reaches' would stop one row early
  const double T = 90.0;
  CHECK(0.7 * T < 63.0);
  r.stop = VaStop::reaches;
  CHECK(levels::reached(0.7 * T, 0.7 * T, 0.0, VaStop::reaches));  // float: 62.99999999999999 reaches
  CHECK_FALSE(levels::reached(0.7 * T, levels::target_of(0.7, T, r), r));  // decimal: below 63
  CHECK(fixed::mul_cmp(3.0, 7.0, 21.0, 1.0) == 0);
  CHECK(fixed::mul_cmp(9007199254740991.0, 999999.0, 9007199254740990.0, 999999.0) == 1);
  CHECK(fixed::mul_cmp(9007199254740990.0, 1000000.0, 9007199254740991.0, 999999.0) == 1);
  CHECK(fixed::mul_cmp(9007199254740991.0, 999999.0, 9007199254740990.0, 1000000.0) == -1);
}

TEST_CASE("27_5_ladder_decimal_fraction_and_row_price") {
  int64_t p = 0, q = 0;
  CHECK(ladder::decimal_fraction(0.7, 6, p, q));
  CHECK((p == 7 && q == 10));
  CHECK(ladder::decimal_fraction(0.6827, 6, p, q));
  CHECK((p == 6827 && q == 10000));
  CHECK_FALSE(ladder::decimal_fraction(1.0 / 3.0, 6, p, q));
  CHECK(ladder::decimal_fraction(1.0, 6, p, q));
  CHECK((p == 1 && q == 1));
  const ladder::RowPrice dec = ladder::RowPrice::make(1e-6, 50000, true);  // LEAN rows of 0.05
  CHECK(dec.num == 50000);
  CHECK(dec.den == 1e6);
  CHECK(dec(2601) == 130.05);              // the literal: the float64 nearest the decimal
  CHECK(2601 * (1e-6 * 50000) != 130.05);  // the product is not (130.04999999999998)
  const ladder::RowPrice prod = ladder::RowPrice::make(0.05, 1, false);
  CHECK(prod(2709) == 2709 * 0.05);
  CHECK(ladder::RowPrice::make(1.0 / 3.0, 1, true).den == 0.0);  // no decimal form with <= 15 digits
}

TEST_CASE("26_4_levels_takes_down_band_of_the_larger_volume") {
  // the band is tol x the larger volume (tied()), here the one below: 3 vs 1.6 at tol 0.5 is tied
  // (1.4 <= 1.5), though not within 0.5 x 1.6 = 0.8; so tie_up takes the rows above
  levels::Rules r;
  r.tol = 0.5;
  CHECK(levels::tied(3.0, 1.6, r.tol));
  CHECK(!levels::takes_down(3.0, 1.6, true, true, r));
  CHECK(!levels::takes_down(3.1, 1.6, true, true, r));  // 1.5 <= 1.55: tied
  CHECK(levels::takes_down(3.3, 1.6, true, true, r));   // 1.7 > 1.65: below holds more
  CHECK(!levels::takes_down(1.6, 3.0, true, true, r));  // below holds less
  CHECK(levels::takes_down(0.0, 0.0, true, false, r));  // no row above
  CHECK(!levels::takes_down(5.0, 0.0, false, true, r)); // no row below
  r.compare = VaCompare::zero_absent;
  CHECK(levels::takes_down(0.0, 0.0, true, true, r));   // rows above hold 0
  CHECK(!levels::takes_down(3.0, 1.6, true, true, r));
}

TEST_CASE("26_4_levels_expand_ahead_equals_expand_step") {
  // expand_ahead (the developing chunk's walk: groups read a step ahead, the side chosen by selects)
  // against the loop of expand_step it replaces, over a subrange [first, last] of the rows, every
  // step / stop / target rule: lo, hi and running bit for bit.
  std::mt19937_64 rng(2604);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int compared = 0;
  for (int trial = 0; trial < 30000; ++trial) {
    const auto n = static_cast<int32_t>(1 + rng() % 40);
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) {
      x = static_cast<double>(rng() % 5);  // exact ties, zeros
      if (trial % 3 == 0) x *= 1.0 + static_cast<double>(rng() % 3) * 4e-10;  // ties within the band
      if (trial % 5 == 1) x = u(rng) * 1000.0;                                 // fractional
      if (trial % 11 == 2) x = std::ldexp(1.0, static_cast<int>(rng() % 4)) * 1e300;  // inf sums
    }
    const auto first = static_cast<int32_t>(rng() % static_cast<uint64_t>(n));
    const auto last = first + static_cast<int32_t>(rng() % static_cast<uint64_t>(n - first));
    const auto poc = first + static_cast<int32_t>(rng() % static_cast<uint64_t>(last - first + 1));
    double total = 0.0;
    for (int32_t k = first; k <= last; ++k) total += v[static_cast<size_t>(k)];
    const levels::Rules r = random_rules(trial, rng, true);
    const double va = random_value_area(trial, rng);
    const levels::Target target = levels::target_of(va, total, r);
    for (int step = 1; step <= 2; ++step) {
      int32_t lo = poc, hi = poc;
      double running = v[static_cast<size_t>(poc)];
      while (!levels::reached(running, target, r) &&
             levels::expand_step(v.data(), first, last, step, lo, hi, running, r)) {
      }
      int32_t lo2 = poc, hi2 = poc;
      double running2 = v[static_cast<size_t>(poc)];
      levels::expand_ahead(v.data(), first, last, step, target, lo2, hi2, running2, r);
      ++compared;
      const bool same = lo2 == lo && hi2 == hi && std::memcmp(&running, &running2, sizeof running) == 0;
      CHECK_MESSAGE(same, "trial " << trial << " step " << step << " [" << first << ", " << last << "] poc " << poc
                                   << ": got " << lo2 << ".." << hi2 << " want " << lo << ".." << hi);
    }
  }
  CHECK(compared == 60000);
}

TEST_CASE("26_3_va_merge_run_stop_equals_walk_on_whole_volumes") {
  // gpu/levels.cu's stop by runs (va_merge::run_stop, each run starting at its exclusive prefix of
  // the steps' volumes, summed in another order than the path's) against va_merge::walk, on whole
  // volumes whose total stays below 2**52: the same step and the same running bits. With fractional
  // volumes the order of the adds shows (some trials differ): the kernel takes runs only on whole ones.
  std::mt19937_64 rng(2603);
  int compared = 0, fractional_differ = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const bool fractional = trial % 10 == 9;
    const auto total_steps = static_cast<int64_t>(1 + rng() % 600);
    std::vector<double> x(static_cast<size_t>(total_steps));
    for (double& e : x) {
      e = trial % 3 == 0 ? static_cast<double>(rng() % 4)                            // ties, zeros
          : trial % 3 == 1 ? static_cast<double>(rng() % 1000)
                           : static_cast<double>(rng() % (uint64_t(1) << 40));  // large whole volumes
      if (fractional) e = static_cast<double>(rng() % 1000) / 7.0 + 0.1;
    }
    const double r0 = fractional ? 0.3 : static_cast<double>(rng() % 5000);
    double total = r0;
    for (double e : x) total += e;
    const levels::Rules r = random_rules(trial, rng, false);
    const double va = random_value_area(trial, rng);
    const levels::Target target = levels::target_of(va, total, r);
    const auto value = [&](int64_t t) { return x[static_cast<size_t>(t)]; };
    double want_run = r0;
    const int64_t want = va_merge::walk(value, total_steps, target, want_run, r);
    const int threads[] = {1, 3, 7, 64, 128, 1000};
    for (int nt : threads) {
      const int64_t per = (total_steps + nt - 1) / nt;
      int64_t got = -1;
      double got_run = 0.0;
      for (int k = 0; k < nt; ++k) {
        const int64_t a = std::min(static_cast<int64_t>(k) * per, total_steps), b = std::min(a + per, total_steps);
        double prefix = 0.0;
        for (int64_t t = a - 1; t >= 0; --t) prefix += x[static_cast<size_t>(t)];  // the path's order reversed
        double run = r0 + prefix;
        const int64_t t = va_merge::run_stop(value, a, b, total_steps, target, run, r);
        if (t >= 0 && (got < 0 || t < got)) {
          got = t;
          got_run = run;
        }
      }
      const bool same = got == want && std::memcmp(&got_run, &want_run, sizeof got_run) == 0;
      if (fractional) {
        fractional_differ += same ? 0 : 1;
        continue;
      }
      ++compared;
      CHECK_MESSAGE(same, "trial " << trial << " threads " << nt << ": got step " << got << " running " << got_run
                                   << ", want " << want << " running " << want_run);
    }
  }
  CHECK(compared == 18000 * 6);
  CHECK(fractional_differ > 0);
}
