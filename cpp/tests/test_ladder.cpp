// cpp/tests/test_ladder.cpp — core/ladder.hpp: price -> tick (rint, half to even) -> row (floor division).
// Contract: expected values are hand-computed or come from reference.hpp (libm rint, C++ division).
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <random>

#include "core/ladder.hpp"
#include "reference.hpp"

using namespace vpoc;

namespace {
int64_t tick_of(double p, double tick_size) {
  int64_t t = 0;
  REQUIRE(ladder::to_tick(p, tick_size, t));
  return t;
}
}  // namespace

TEST_CASE("24_5_ladder_ticks_half_to_even_hand_values") {
  CHECK(tick_of(6000.25, 0.25) == 24001);
  CHECK(tick_of(0.0, 0.25) == 0);
  CHECK(tick_of(-0.25, 0.25) == -1);
  CHECK(tick_of(-6000.75, 0.25) == -24003);
  // halves go to the even tick, on both sides of zero
  CHECK(tick_of(0.125, 0.25) == 0);     // 0.5
  CHECK(tick_of(0.375, 0.25) == 2);     // 1.5
  CHECK(tick_of(0.625, 0.25) == 2);     // 2.5
  CHECK(tick_of(-0.125, 0.25) == 0);    // -0.5
  CHECK(tick_of(-0.375, 0.25) == -2);   // -1.5
  CHECK(tick_of(-0.625, 0.25) == -2);   // -2.5
  CHECK(tick_of(6000.125, 0.25) == 24000);  // 24000.5
  CHECK(tick_of(6000.375, 0.25) == 24002);  // 24001.5
}

TEST_CASE("24_5_ladder_decimal_ticks_every_cent_and_tenth") {
  // k / 100 is the float64 nearest the decimal price; its tick must be k although k / 100 / 0.01
  // is rarely exactly k (1.15 / 0.01 = 114.99999999999999).
  CHECK(1.15 / 0.01 != 115.0);
  CHECK(tick_of(1.15, 0.01) == 115);
  for (int64_t k = -200000; k <= 200000; ++k) {
    const double p = static_cast<double>(k) / 100.0;
    int64_t t = 0;
    REQUIRE(ladder::to_tick(p, 0.01, t));
    if (t != k) FAIL_CHECK("tick of " << p << " is " << t << ", expected " << k);
  }
  for (int64_t k = -100000; k <= 100000; ++k) {
    const double p = static_cast<double>(k) / 10.0;
    int64_t t = 0;
    REQUIRE(ladder::to_tick(p, 0.1, t));
    if (t != k) FAIL_CHECK("tick of " << p << " is " << t << ", expected " << k);
  }
}

TEST_CASE("24_5_ladder_round_half_even_vs_libm") {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1e6, 1e6);
  for (int i = 0; i < 200000; ++i) {
    double q = u(rng);
    if (i % 3 == 0) q = std::floor(q) + 0.5;  // exact halves
    if (i % 3 == 1) q = std::nextafter(std::floor(q) + 0.5, i % 2 ? 1e9 : -1e9);
    const double want = ref::rint_even(q);
    if (ladder::round_half_even(q) != want || ladder::round_half_even_nb(q) != want)
      FAIL_CHECK("q=" << q << " want " << want);
  }
  for (double q : {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 4503599627370495.5, -4503599627370495.5}) {
    CHECK(ladder::round_half_even(q) == ref::rint_even(q));
    CHECK(ladder::round_half_even_nb(q) == ref::rint_even(q));
  }
}

TEST_CASE("24_5_ladder_rejects_nan_inf_and_2_pow_52_ticks") {
  int64_t t = 7;
  CHECK_FALSE(ladder::to_tick(NAN, 0.25, t));
  CHECK_FALSE(ladder::to_tick(INFINITY, 0.25, t));
  CHECK_FALSE(ladder::to_tick(-INFINITY, 0.25, t));
  CHECK_FALSE(ladder::to_tick(4503599627370496.0 * 0.25, 0.25, t));   // |p / tick| == 2**52
  CHECK_FALSE(ladder::to_tick(-4503599627370496.0 * 0.25, 0.25, t));
  REQUIRE(ladder::to_tick(4503599627370495.0 * 0.25, 0.25, t));       // 2**52 - 1 ticks
  CHECK(t == 4503599627370495);
  REQUIRE(ladder::to_tick(-4503599627370495.0 * 0.25, 0.25, t));
  CHECK(t == -4503599627370495);
}

TEST_CASE("24_5_ladder_tick_scale_equals_division") {
  // ticks(p) may be p * (1 / tick); rint of it must equal rint(p / tick) always.
  for (double ts : {0.25, 0.5, 1.0, 0.01, 0.1, 0.05, 0.3, 1.0 / 3.0, 0.0001}) {
    const auto s = ladder::TickScale::make(ts, 1);
    int e = 0;
    CHECK(s.exact == (std::frexp(ts, &e) == 0.5));
    std::mt19937_64 rng(static_cast<uint64_t>(ts * 1e6));
    std::uniform_int_distribution<int64_t> k(-50000000, 50000000);
    for (int i = 0; i < 100000; ++i) {
      // prices near tick midpoints, where p * inv and p / tick can round apart
      double p = (static_cast<double>(k(rng)) + 0.5) * ts;
      if (i % 2) p = std::nextafter(p, i % 4 == 1 ? 1e300 : -1e300);
      if (i % 5 == 0) p = static_cast<double>(k(rng)) * ts;
      const double q = s.exact ? s.ticks<true>(p) : s.ticks<false>(p);
      const double want = ref::rint_even(p / ts);
      if (ladder::round_half_even(q) != want) FAIL_CHECK("tick " << ts << " p=" << p);
      int64_t t = 0;
      const bool ok = s.exact ? ladder::to_tick<true>(p, s, t) : ladder::to_tick<false>(p, s, t);
      if (!ok || t != static_cast<int64_t>(want)) FAIL_CHECK("to_tick(scale) tick " << ts << " p=" << p);
      int64_t t2 = 0;  // the plain division form
      if (!ladder::to_tick(p, ts, t2) || t2 != static_cast<int64_t>(want)) FAIL_CHECK("to_tick tick " << ts << " p=" << p);
    }
  }
}

TEST_CASE("24_5_ladder_floor_div_and_rows_of_negative_ticks") {
  // hand values: rows of 4 ticks
  CHECK(ladder::tick_to_row(3, 4) == 0);
  CHECK(ladder::tick_to_row(4, 4) == 1);
  CHECK(ladder::tick_to_row(-1, 4) == -1);
  CHECK(ladder::tick_to_row(-4, 4) == -1);
  CHECK(ladder::tick_to_row(-5, 4) == -2);
  CHECK(ladder::tick_to_row(-24003, 1) == -24003);
  CHECK(ladder::tick_to_row(-24003, 2) == -12002);
  // brute force, small and near the 2**52 tick bound (the float64 estimate needs its correction)
  for (int64_t b : {1, 2, 3, 4, 7, 10, 16, 1000, 999983}) {
    for (int64_t a = -3000; a <= 3000; ++a) REQUIRE(ladder::floor_div(a, b) == ref::floor_div(a, b));
    for (int64_t d = -3000; d <= 3000; ++d) {
      const int64_t a = (d < 0 ? -4503599627370495 : 4503599627370495) - d;
      REQUIRE(ladder::floor_div(a, b) == ref::floor_div(a, b));
    }
  }
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int64_t> big(-(int64_t(1) << 62), int64_t(1) << 62);
  std::uniform_int_distribution<int64_t> div(1, int64_t(1) << 31);
  for (int i = 0; i < 200000; ++i) {
    const int64_t a = big(rng), b = div(rng);
    if (ladder::floor_div(a, b) != ref::floor_div(a, b)) FAIL_CHECK(a << " / " << b);
  }
}

TEST_CASE("24_5_ladder_row_price_is_lowest_price_of_row") {
  // ES, 4 ticks a row: row -2 spans ticks -8..-5, prices -2.0 .. -1.25
  CHECK(ladder::row_price(-2, 0.25 * 4) == -2.0);
  CHECK(ladder::row_price(ladder::tick_to_row(tick_of(-1.25, 0.25), 4), 1.0) == -2.0);
  CHECK(ladder::row_price(ladder::tick_to_row(tick_of(-1.0, 0.25), 4), 1.0) == -1.0);
  CHECK(ladder::row_price(6001, 1.0) == 6001.0);
}

TEST_CASE("24_5_ladder_tick_limit_keeps_row_prices_finite") {
  CHECK(ladder::tick_limit(0.25, 1) == ladder::kMaxTicks);
  CHECK(ladder::tick_limit(0.01, 1000000) == ladder::kMaxTicks);
  for (double ts : {1e300, 3.7e299, 1e305, 1e308}) {
    for (int64_t tpr : {1, 3, 1000}) {
      const double lim = ladder::tick_limit(ts, tpr);
      const double row_size = ts * static_cast<double>(tpr);
      if (!std::isfinite(row_size)) continue;
      // lim = R * tpr - 0.5 with R the number of rows whose price R * row_size is finite
      const double R = (lim + 0.5) / static_cast<double>(tpr);
      CHECK(R == std::floor(R));
      CHECK(R * row_size <= DBL_MAX);
      CHECK_FALSE((R + 1.0) * row_size <= DBL_MAX);
      CHECK(lim < ladder::kMaxTicks);
    }
  }
}
