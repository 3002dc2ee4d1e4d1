// cpp/tests/test_row_window.cpp — cpu/row_window.hpp: a worker's drain (lanes + difference arrays) and its float64s.
// Contract: drained rows and totals equal a brute-force 128-bit sum converted by fixed::to_double, bit for bit;
// drain_int64 (cpu/drain.cpp, the variant this CPU runs) equals a plain loop and zeroes its rows.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/fixed.hpp"
#include "cpu/drain.hpp"
#include "cpu/row_window.hpp"

using namespace vpoc;

namespace {

__extension__ typedef unsigned __int128 u128;

u128 as_u128(const Fixed& f) { return (static_cast<u128>(f.hi) << 64) | f.lo; }
Fixed of_u128(u128 x) { return Fixed{static_cast<uint64_t>(x), static_cast<uint64_t>(x >> 64)}; }

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("25_row_window_acc_to_double_is_fixed_to_double_bit_for_bit") {
  std::mt19937_64 rng(25);
  std::vector<Fixed> cases;
  // the fraction's top bit set (where a signed cast of the word goes wrong), ties of float64 rounding
  // of the word (a multiple of 2**11 plus half of it), the extremes
  for (uint64_t hi : {uint64_t(0), uint64_t(1), uint64_t(12345), (uint64_t(1) << 53) - 1, uint64_t(1) << 53}) {
    for (uint64_t lo : {uint64_t(0), uint64_t(1), ~uint64_t(0), uint64_t(1) << 63, (uint64_t(1) << 63) + (uint64_t(1) << 10),
                        (uint64_t(1) << 63) + (uint64_t(3) << 10), (uint64_t(1) << 53) + 1, (uint64_t(1) << 54) + 2,
                        uint64_t(0xffffffff), uint64_t(0x100000000), uint64_t(0xfffffffffffff800)})
      cases.push_back(Fixed{lo, hi});
  }
  for (int i = 0; i < 200000; ++i) {
    const uint64_t hi = rng() >> (11 + rng() % 53);  // < 2**53, of every size
    uint64_t lo = rng();
    if (i % 4 == 1) lo = (lo >> 11 << 11) | (uint64_t(1) << 10);  // a tie
    if (i % 4 == 2) lo >>= rng() % 64;
    cases.push_back(Fixed{lo, hi});
  }
  int top_bit = 0, naive_differs = 0;
  for (const Fixed& f : cases) {
    const double want = fixed::to_double(f);
    if (!same_bits(cpu::acc_to_double(f), want)) FAIL_CHECK("hi " << f.hi << " lo " << f.lo);
    top_bit += static_cast<int>(f.lo >> 63);
    // a slip this test must see: the word through a signed cast
    const double naive = static_cast<double>(f.hi) + static_cast<double>(static_cast<int64_t>(f.lo)) * fixed::kUnit;
    naive_differs += !same_bits(naive, want);
  }
  CHECK(top_bit > 1000);
  CHECK(naive_differs > 1000);
}

TEST_CASE("25_row_window_drain_of_lanes_and_difference_arrays_is_the_exact_sum") {
  // random lane adds and difference-array entries (what uniform bars write), drained: each row's
  // float64 and the total equal a brute-force 128-bit sum; the window is zero again afterwards
  std::mt19937_64 rng(26);
  for (int trial = 0; trial < 300; ++trial) {
    cpu::RowWindow<Fixed> w(1 << 20);
    cpu::Bins<Fixed> bins(w);
    const int64_t lo = static_cast<int64_t>(rng() % 1000) - 500, hi = lo + static_cast<int64_t>(rng() % 200);
    REQUIRE(bins.reserve(lo, hi));
    const int64_t n = hi - lo + 1;
    std::vector<u128> want(static_cast<size_t>(n), 0);
    const bool diff = trial % 3 != 0, lanes = trial % 3 != 1;
    for (int k = 0; lanes && k < 500; ++k) {
      const int64_t r = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
      const Fixed v{rng(), rng() >> 40};
      REQUIRE(bins.add(r, v, static_cast<unsigned>(k)));
      want[static_cast<size_t>(r - lo)] += as_u128(v);
    }
    if (diff) {
      for (int k = 0; k < 500; ++k) {
        const int64_t a = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
        const int64_t b = a + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - a + 1));
        const Fixed q{rng(), rng() >> 40};
        const int64_t units = static_cast<int64_t>(rng() % 3);
        const int64_t until = a + static_cast<int64_t>(rng() % static_cast<uint64_t>(b - a + 1));
        w.diff_row(a)[0] += q;
        w.diff_row(b + 1)[0] -= q;
        w.units_row(a)[0] += units;
        w.units_row(until)[0] -= units;  // ticks a .. until - 1 get the units
        for (int64_t t = a; t <= b; ++t) want[static_cast<size_t>(t - lo)] += as_u128(q) + (t < until ? units : 0);
      }
      w.mark_diff();
      bins.touch(lo, hi);
    }
    bins.touch(lo, hi);
    HostVector<double> out{-1.0};  // drain appends
    Fixed total{7, 0};
    REQUIRE(bins.drain(out, total) == n);
    REQUIRE(out.size() == static_cast<size_t>(n) + 1);
    u128 sum = 7;
    for (int64_t k = 0; k < n; ++k) {
      sum += want[static_cast<size_t>(k)];
      if (!same_bits(out[static_cast<size_t>(k) + 1], fixed::to_double(of_u128(want[static_cast<size_t>(k)]))))
        FAIL_CHECK("trial " << trial << " row " << k);
    }
    CHECK(as_u128(total) == sum);
    // zeroed: the same rows drain to 0 now
    bins.touch(lo, hi);
    HostVector<double> again;
    Fixed t2;
    bins.drain(again, t2);
    for (double x : again) REQUIRE(x == 0.0);
    CHECK(t2.zero());
  }
}

TEST_CASE("25_drain_int64_is_the_plain_loop_and_zeroes_its_rows") {
  // every remainder of the AVX-512 variant's eight-row turns, lanes of any sign and size (the int64
  // sums wrap as the window's adds do), rows past n up to `clear` zeroed, rows past clear untouched
  std::mt19937_64 rng(2511);
  for (int64_t n = 0; n <= 41; ++n) {
    const int64_t clear = n + static_cast<int64_t>(rng() % 9), rows = clear + 3;
    std::vector<int64_t> lanes(static_cast<size_t>(rows * 4));
    for (auto& x : lanes) x = rng() % 4 == 0 ? static_cast<int64_t>(rng()) : static_cast<int64_t>(rng() % 1000000);
    const std::vector<int64_t> before = lanes;
    std::vector<double> got(static_cast<size_t>(n) + 1, -1.0);
    const uint64_t sum = cpu::drain_int64(lanes.data(), n, clear, got.data());
    uint64_t want_sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      uint64_t r = 0;
      for (int l = 0; l < 4; ++l) r += static_cast<uint64_t>(before[static_cast<size_t>(k * 4 + l)]);
      want_sum += r;
      if (!same_bits(got[static_cast<size_t>(k)], static_cast<double>(static_cast<int64_t>(r))))
        FAIL_CHECK("n " << n << " row " << k);
    }
    CHECK(got[static_cast<size_t>(n)] == -1.0);  // nothing written past row n - 1
    CHECK(sum == want_sum);
    for (int64_t k = 0; k < rows * 4; ++k)
      REQUIRE(lanes[static_cast<size_t>(k)] == (k < clear * 4 ? 0 : before[static_cast<size_t>(k)]));
  }
}
