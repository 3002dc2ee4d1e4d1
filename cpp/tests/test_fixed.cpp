// cpp/tests/test_fixed.cpp — core/fixed.hpp: 64.64 fixed-point volumes, exact order-free sums, even splits.
// Contract: expected values are hand-computed or come from unsigned __int128 arithmetic (reference.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "core/fixed.hpp"
#include "reference.hpp"

using namespace vpoc;
using ref::u128;

namespace {
u128 as_u128(const Fixed& f) { return (u128(f.hi) << 64) | f.lo; }
Fixed of_u128(u128 u) {
  Fixed f;
  f.hi = ref::hi64(u);
  f.lo = ref::lo64(u);
  return f;
}
constexpr u128 kOne = u128(1) << 64;  // 1.0 in units of 2**-64
}  // namespace

TEST_CASE("24_5_fixed_from_double_hand_values") {
  CHECK(as_u128(fixed::from_double(0.0)) == 0);
  CHECK(as_u128(fixed::from_double(1.0)) == kOne);
  CHECK(as_u128(fixed::from_double(0.5)) == kOne / 2);
  CHECK(as_u128(fixed::from_double(3.75)) == 3 * kOne + 3 * (kOne / 4));
  CHECK(as_u128(fixed::from_double(9007199254740992.0)) == (u128(1) << 53) * kOne);  // 2**53
  CHECK(as_u128(fixed::from_double(fixed::kMinVolume)) == (u128(1) << 32));          // 2**-32
  CHECK(as_u128(fixed::from_double(std::ldexp(3.0, -64))) == 3);                      // 3 units
  CHECK(as_u128(fixed::from_double(1.0 + std::ldexp(1.0, -52))) == kOne + (u128(1) << 12));
  CHECK(as_u128(fixed::from_double(std::ldexp(1.0, -40))) == (u128(1) << 24));
  CHECK(fixed::from_double(123456789.0).lo == 0);
  CHECK(fixed::from_double(123456789.0).hi == 123456789u);
}

TEST_CASE("24_5_fixed_from_double_is_floor_of_v_times_2_pow_64") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> frac(0.0, 1.0);
  std::uniform_int_distribution<int> expo(-32, 53);
  std::vector<double> vs = {0.1, 0.2, 0.3, 1e-3, 1e-8, 2.3283064365386963e-10, 1.0 / 3.0, 123456.789,
                            4503599627370495.5, 9007199254740991.0};
  for (int i = 0; i < 200000; ++i) {
    const double v = std::ldexp(frac(rng), expo(rng));
    if (v <= 9007199254740992.0) vs.push_back(v);
  }
  for (double v : vs) {
    const u128 got = as_u128(fixed::from_double(v));
    if (got != ref::units(v)) FAIL_CHECK("v=" << v);
    // exact for every v >= 2**-11: converting back gives v
    if (v >= 1.0 / 2048.0 && fixed::to_double(fixed::from_double(v)) != v) FAIL_CHECK("round trip v=" << v);
  }
}

TEST_CASE("24_5_fixed_to_double_rounds_fraction_once") {
  Fixed f;
  f.hi = 3;
  f.lo = uint64_t(1) << 63;
  CHECK(fixed::to_double(f) == 3.5);
  f.hi = uint64_t(1) << 53;
  f.lo = 0;
  CHECK(fixed::to_double(f) == 9007199254740992.0);
  f.hi = 0;
  f.lo = 1;
  CHECK(fixed::to_double(f) == std::ldexp(1.0, -64));
  // 0.1 summed ten times as units is exactly ten times the units of 0.1, whose double is 1 - tiny
  Fixed s;
  for (int i = 0; i < 10; ++i) s += fixed::from_double(0.1);
  CHECK(as_u128(s) == 10 * ref::units(0.1));
  CHECK(fixed::to_double(s) == ref::to_double(10 * ref::units(0.1)));
}

TEST_CASE("24_5_fixed_add_sub_carry_borrow_mod_2_pow_128") {
  Fixed a;
  a.lo = ~uint64_t(0);
  a += fixed::Split::from_units(1);
  CHECK(a.lo == 0);
  CHECK(a.hi == 1);
  a -= fixed::Split::from_units(1);
  CHECK(a.lo == ~uint64_t(0));
  CHECK(a.hi == 0);
  const Fixed wrapped = Fixed{} - fixed::Split::from_units(1);  // -1 unit wraps to 2**128 - 1
  CHECK(wrapped.lo == ~uint64_t(0));
  CHECK(wrapped.hi == ~uint64_t(0));
  std::mt19937_64 rng(8);
  for (int i = 0; i < 200000; ++i) {
    const u128 x = (u128(rng()) << 64) | rng(), y = (u128(rng()) << 64) | rng();
    if (as_u128(of_u128(x) + of_u128(y)) != x + y) FAIL_CHECK("add");
    if (as_u128(of_u128(x) - of_u128(y)) != x - y) FAIL_CHECK("sub");
  }
  CHECK(of_u128(5) == of_u128(5));
  CHECK(of_u128(5) != of_u128(u128(5) << 64));
  CHECK(Fixed{}.zero());
  CHECK_FALSE(of_u128(u128(1) << 64).zero());
}

TEST_CASE("24_5_fixed_sums_do_not_depend_on_order") {
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> u(0.0, 1000.0);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> vs(500);
    for (double& v : vs) v = u(rng) * (trial % 2 ? 1.0 : 1e-6);
    u128 want = 0;
    for (double v : vs) want += ref::units(v);
    Fixed a;
    for (double v : vs) a += fixed::from_double(v);
    std::shuffle(vs.begin(), vs.end(), rng);
    Fixed b;
    for (double v : vs) b += fixed::from_double(v);
    REQUIRE(as_u128(a) == want);
    REQUIRE(as_u128(b) == want);
    REQUIRE(fixed::to_double(a) == fixed::to_double(b));
  }
}

TEST_CASE("24_5_fixed_volume_range_and_over_max") {
  CHECK(fixed::volume_in_range(0.0));
  CHECK(fixed::volume_in_range(fixed::kMinVolume));
  CHECK_FALSE(fixed::volume_in_range(std::nextafter(fixed::kMinVolume, 0.0)));
  CHECK(fixed::volume_in_range(9007199254740992.0));
  CHECK_FALSE(fixed::volume_in_range(std::nextafter(9007199254740992.0, INFINITY)));
  CHECK(fixed::volume_in_range(1e-8));  // one satoshi
  CHECK_FALSE(fixed::volume_in_range(-1.0));
  CHECK_FALSE(fixed::volume_in_range(-0.0 - 1e-300));
  CHECK_FALSE(fixed::volume_in_range(NAN));
  CHECK_FALSE(fixed::volume_in_range(INFINITY));
  CHECK_FALSE(fixed::over_max(of_u128((u128(1) << 53) * kOne)));
  CHECK(fixed::over_max(of_u128((u128(1) << 53) * kOne + 1)));
  CHECK(fixed::over_max(of_u128((u128(1) << 54) * kOne)));
}

TEST_CASE("24_5_fixed_times_div_small_divide_vs_int128") {
  std::mt19937_64 rng(13);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t k = rng() >> (32 + i % 32);  // 0 .. 2**32 - 1
    const u128 x = (u128(rng() >> 11) << 64) | rng();
    if (as_u128(fixed::times(of_u128(x), k)) != x * k) FAIL_CHECK("times k=" << k);
    const uint64_t n = std::max<uint64_t>(1, rng() >> (32 + i % 32));
    // div_small's domain: y <= 2**53 (a volume's whole part), or y < n * 2**32 (divide's lower digits)
    const uint64_t y = i % 2 ? rng() % ((uint64_t(1) << 53) + 1) : (rng() >> 32) * n + rng() % n;
    uint64_t r = 0;
    const uint64_t q = fixed::div_small(y, n, 1.0 / static_cast<double>(n), r);
    if (q != y / n || r != y % n) FAIL_CHECK("div_small " << y << " / " << n);
    const u128 f = (u128(rng() >> 11) << 64) | rng();  // < 2**53 whole units
    uint64_t rem = 0;
    const Fixed fq = fixed::divide(of_u128(f), n, rem);
    if (as_u128(fq) != f / n || rem != static_cast<uint64_t>(f % n)) FAIL_CHECK("divide n=" << n);
  }
}

TEST_CASE("26_fixed_div_small_at_the_ends_of_its_domain") {
  const uint64_t top = uint64_t(1) << 53;
  const uint64_t ns[] = {1, 2, 3, 7, 10, 1000003, (uint64_t(1) << 31) + 1, (uint64_t(1) << 32) - 1};
  for (const uint64_t n : ns) {
    const double inv = 1.0 / static_cast<double>(n);
    uint64_t xs[] = {0, 1, n - 1, n, top - 1, top, n * (uint64_t(1) << 32) - 1, n * ((uint64_t(1) << 32) - 1),
                     n * ((uint64_t(1) << 32) - 1) - 1};
    for (const uint64_t x : xs) {
      if (!(x <= top || x < n * (uint64_t(1) << 32))) continue;
      uint64_t r = 0;
      const uint64_t q = fixed::div_small(x, n, inv, r);
      if (q != x / n || r != x % n) FAIL_CHECK("div_small " << x << " / " << n);
    }
    for (uint64_t d = 0; d < 64; ++d) {  // whole volumes near 2**53 and fractions at every digit
      uint64_t rem = 0;
      const u128 f = (u128(top - d) << 64) | (~uint64_t(0) - d * 0x0123456789abcdefull);
      const Fixed fq = fixed::divide(of_u128(f), n, rem);
      if (as_u128(fq) != f / n || rem != static_cast<uint64_t>(f % n)) FAIL_CHECK("divide " << d << " n=" << n);
    }
  }
}

TEST_CASE("24_5_fixed_split_leftover_units_go_to_the_lowest_ticks") {
  // 10 units over 4 ticks: q = 2, rem = 2 -> 3, 3, 2, 2
  const auto s = fixed::Split::make(fixed::Split::from_units(10), 4);
  CHECK(as_u128(s.q) == 2);
  CHECK(s.rem == 2);
  CHECK(as_u128(s.one(0)) == 3);
  CHECK(as_u128(s.one(1)) == 3);
  CHECK(as_u128(s.one(2)) == 2);
  CHECK(as_u128(s.one(3)) == 2);
  CHECK(as_u128(s.sum(0, 4)) == 10);
  CHECK(as_u128(s.sum(1, 2)) == 5);
  CHECK(as_u128(s.sum(2, 2)) == 4);
  // volume 1 over 3 ticks: 2**64 = 3 * 6148914691236517205 + 1
  const auto t = fixed::Split::make(fixed::from_double(1.0), 3);
  CHECK(t.q.hi == 0);
  CHECK(t.q.lo == 6148914691236517205u);
  CHECK(t.rem == 1);
  CHECK(t.one(0).lo == 6148914691236517206u);
  CHECK(t.one(1).lo == 6148914691236517205u);
  CHECK(as_u128(t.one(0) + t.one(1) + t.one(2)) == kOne);
  // 7 over 4 ticks: 1.75 each, nothing left over
  const auto w = fixed::Split::make(fixed::from_double(7.0), 4);
  CHECK(w.rem == 0);
  CHECK(fixed::to_double(w.one(3)) == 1.75);
}

TEST_CASE("24_5_fixed_split_shares_brute_force") {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 3000; ++trial) {
    const double v = std::ldexp(u(rng), trial % 60 - 20);
    const uint64_t n = 1 + rng() % (trial % 10 == 0 ? 5000 : 40);
    const u128 V = ref::units(v);
    const auto s = fixed::Split::make(fixed::from_double(v), n);
    u128 total = 0;
    std::vector<u128> share(n);
    for (uint64_t k = 0; k < n; ++k) {
      share[k] = V / n + (k < V % n ? 1 : 0);
      if (as_u128(s.one(k)) != share[k]) FAIL_CHECK("one(" << k << ") n=" << n << " v=" << v);
      total += as_u128(s.one(k));
    }
    REQUIRE(total == V);
    for (int j = 0; j < 20; ++j) {
      const uint64_t k0 = rng() % n, count = 1 + rng() % (n - k0);
      u128 want = 0;
      for (uint64_t k = k0; k < k0 + count; ++k) want += share[k];
      if (as_u128(s.sum(k0, count)) != want) FAIL_CHECK("sum(" << k0 << ", " << count << ") n=" << n);
    }
  }
}
