// cpu/uniform_split.hpp — a uniform bar's exact split (docs/contract.md) and its difference-array entries (CPU).
// Contract: included by cpu/histogram.cpp only (one translation unit: its tables are that file's); exact, bit for bit fixed::Split::make.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/distribute.hpp"
#include "core/fixed.hpp"
#include "cpu/bar_slots.hpp"
#include "cpu/row_window.hpp"

namespace vpoc::cpu {
namespace {

// fixed::Split::make(v, n) for whole volumes v <= 2**53 and bars of up to kSplitTableMax ticks,
// with one division instead of three: the fraction of v / n depends only on r = v % n, so it is
// tabulated (floor(r * 2**64 / n) and its remainder) for every n and r < n. Exact, so it equals
// fixed::Split::make bit for bit; 1-minute ES bars span a few to a few dozen ticks.
constexpr int kSplitTableMax = 64;
struct SplitTable {
  std::vector<uint64_t> frac, rem;  // at row n * (n - 1) / 2 + r
  SplitTable() : frac(kSplitTableMax * (kSplitTableMax + 1) / 2), rem(frac.size()) {
    for (uint64_t n = 1; n <= kSplitTableMax; ++n)
      for (uint64_t r = 0; r < n; ++r) {
        Fixed f;
        f.hi = r;
        uint64_t m = 0;
        const Fixed q = fixed::divide(f, n, m);
        frac[n * (n - 1) / 2 + r] = q.lo;
        rem[n * (n - 1) / 2 + r] = m;
      }
  }
};
const SplitTable split_table;

// ceil(2**64 / n) for n = 2 .. kSplitTableMax: v / n = (v * M) >> 64 exactly for every v < 2**32
// (Lemire, Kaser & Kurz, "Faster remainder by direct computation", 2019), a multiply where a
// division would wait ~15 cycles.
struct Reciprocals {
  uint64_t m[kSplitTableMax + 1] = {};
  Reciprocals() {
    for (uint64_t n = 2; n <= kSplitTableMax; ++n) m[n] = ~uint64_t(0) / n + 1;
  }
};
const Reciprocals reciprocals;

VPOC_ALWAYS_INLINE uint64_t div_whole(uint64_t v, uint64_t n, uint64_t& r) {
#if defined(__SIZEOF_INT128__)
  if (v < (uint64_t(1) << 32)) {
    __extension__ typedef unsigned __int128 U128;
    const auto q_mul = static_cast<uint64_t>((static_cast<U128>(reciprocals.m[n]) * v) >> 64);
    const uint64_t q = n == 1 ? v : q_mul;  // M would be 2**64 for n = 1
    r = v - q * n;
    return q;
  }
#endif
  return fixed::div_small(v, n, 1.0 / static_cast<double>(n), r);
}

// The split of a whole volume whose quotient by its n ticks is `whole` and whose table row is
// at = n * (n - 1) / 2 + remainder (bar_slots computes both for a block; split_whole for one bar).
VPOC_ALWAYS_INLINE fixed::Split split_of_table(uint64_t whole, size_t at) {
  fixed::Split s;
  s.q.hi = whole;
  s.q.lo = split_table.frac[at];
  s.rem = split_table.rem[at];
  return s;
}

VPOC_ALWAYS_INLINE fixed::Split split_whole(uint64_t v, uint64_t n) {
  uint64_t r = 0;
  const uint64_t whole = div_whole(v, n, r);
  return split_of_table(whole, n * (n - 1) / 2 + r);
}

// A bar's split over slots tl..th as difference-array entries (distribute::uniform_diff, the units
// apart): the 128-bit ones into d, the single units into u (the window's diff_row / units_row,
// indexed by slot). (Folding the +1 unit into the +q entry, three entries instead of four, measured
// 5% slower on 1.4 M ES bars: the compiler no longer adds into memory with add / adc.)
VPOC_ALWAYS_INLINE void add_uniform_diff(int64_t tl, int64_t th, const fixed::Split& split, Fixed* d, int64_t* u) {
  distribute::uniform_diff(
      tl, th, split, [d](int64_t t, const Fixed& q, bool negate) { negate ? d[t] -= q : d[t] += q; },
      [u](int64_t t, int64_t m) { u[t] += m; });
}

}  // namespace
}  // namespace vpoc::cpu
