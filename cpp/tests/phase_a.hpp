// cpp/tests/phase_a.hpp — phase A's test fixture (test_slots.cpp, test_records_blocks.cpp): random price blocks, the records check.
// Contract: the same rng gives the same prices in both; wide=false leaves out every kind that is out of range.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/slots.hpp"

namespace test_phase_a {

// A slot variant's results: its return, the whole flag, the range, the slots.
struct Out {
  bool ok = false, whole = false;
  double mn = 0.0, mx = 0.0;
  std::vector<int32_t> slot;
};

// A block of n prices in ticks of 1 / inv: on the grid, between (halves: ties), off the grid,
// negative; wide: also far out (past 2**52 ticks, about float32's 2**23) and signed zeros; bad (with
// wide): now and then a NaN, an infinity. wide=false draws the in-range kinds only (test_records_blocks:
// a price past 2**52 ticks in nearly every block of a thousand would leave only the return compared),
// from the same rng calls.
template <class P>
std::vector<P> prices(std::mt19937_64& rng, int n, double inv, bool bad, bool wide = true) {
  std::uniform_int_distribution<int> kind(0, 99), tick(-3000, 3000);
  std::uniform_real_distribution<double> frac(0.0, 1.0);
  std::vector<P> p(static_cast<size_t>(n));
  for (auto& x : p) {
    const int k = kind(rng);
    double t = 40000.0 + tick(rng);
    if (k < 10) t += 0.5;                                                   // a tie
    else if (k < 20) t += frac(rng);                                        // off the grid
    else if (k < 23) t = -t;                                                // negative
    else if (wide && k < 25) t = (k == 23 ? 1.0 : -1.0) * 0x1p52 * 1.5;     // past 2**52 ticks
    else if (wide && k < 27) t = (k == 25 ? 0x1p23 : -0x1p23) + tick(rng);  // about float32's 2**23
    x = static_cast<P>(t / inv);
    if (!wide) continue;
    if (bad && k == 99) x = std::numeric_limits<P>::quiet_NaN();
    if (bad && k == 98) x = std::numeric_limits<P>::infinity();
    if (k == 97) x = -P(0);
  }
  return p;
}

// Records rec against slot variant's output ref: the same return; when true the low words are
// ref's slots shifted, the range and flags are ref's, and every volume that is a whole number in
// [0, 2**31) is its record's high word.
template <class V>
void same_records(const Out& ref, bool ok, const std::vector<uint64_t>& rec, double mn, double mx, bool whole,
                  const std::vector<V>& v, int shift, const char* what) {
  INFO(std::string(what) << " shift " << shift);
  REQUIRE(ok == ref.ok);
  if (!ok) return;
  CHECK(mn == ref.mn);
  CHECK(mx == ref.mx);
  CHECK(whole == ref.whole);
  for (size_t j = 0; j < rec.size(); ++j) {
    INFO("row " << j);
    CHECK(static_cast<uint32_t>(rec[j]) == static_cast<uint32_t>(static_cast<uint32_t>(ref.slot[j]) << shift));
    const double x = static_cast<double>(v[j]);
    if (x >= 0.0 && x < 2147483648.0 && x == std::floor(x)) CHECK((rec[j] >> 32) == static_cast<uint64_t>(x));
  }
}

// A records variant's volume check against volumes_ok's verdict (ok, vmax, whole).
inline void same_check(const vpoc::cpu::VolumeCheck& a, bool ok, double vmax, bool whole) {
  REQUIRE(a.ok == ok);
  if (!ok) return;
  CHECK(a.whole == whole);
  CHECK(a.vmax == vmax);
}

}  // namespace test_phase_a
