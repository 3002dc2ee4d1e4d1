// core/fixed.hpp — 64.64 fixed-point volume: every share of volume is summed exactly, in any order.
// Contract: docs/contract.md "Exact sums"; integer arithmetic mod 2**128, one rounding to float64.
#pragma once

#include <math.h>

#include <cstdint>

#include "core/ladder.hpp"

namespace vpoc {

// A non-negative volume as hi + lo / 2**64 (hi: integer part, lo: fraction). Sums are integer
// additions (with carry), so they are exact and do not depend on the order of the additions:
// every backend, thread count and chunking gets the same bits. Intermediate values may wrap
// (differences of running sums); the final sums are < kMaxTotal and so are exact.
struct Fixed {
  uint64_t lo = 0, hi = 0;

  VPOC_HD Fixed& operator+=(const Fixed& b) {
    lo += b.lo;
    hi += b.hi + (lo < b.lo ? 1u : 0u);
    return *this;
  }
  VPOC_HD Fixed& operator-=(const Fixed& b) {
    const uint64_t borrow = lo < b.lo ? 1u : 0u;
    lo -= b.lo;
    hi -= b.hi + borrow;
    return *this;
  }
  VPOC_HD friend Fixed operator+(Fixed a, const Fixed& b) { return a += b; }
  VPOC_HD friend Fixed operator-(Fixed a, const Fixed& b) { return a -= b; }
  VPOC_HD bool operator==(const Fixed& b) const { return lo == b.lo && hi == b.hi; }
  VPOC_HD bool operator!=(const Fixed& b) const { return !(*this == b); }
  VPOC_HD bool zero() const { return (lo | hi) == 0; }
};

namespace fixed {

// One unit of the fraction: 2**-64 (every share is a whole number of these).
constexpr double kUnit = 5.421010862427522e-20;  // 2**-64
constexpr double kTwo64 = 18446744073709551616.0;  // 2**64
// A session's volumes must sum to at most 2**53: above it float64 cannot hold every integer, so
// an integer total could not be reported exactly (and a row sum could not either).
constexpr double kMaxTotal = 9007199254740992.0;  // 2**53

// Whether f is above kMaxTotal.
VPOC_HD bool over_max(const Fixed& f) {
  constexpr uint64_t kMax = uint64_t(1) << 53;
  return f.hi > kMax || (f.hi == kMax && f.lo != 0);
}

// v (finite, 0 <= v < 2**64) as 64.64, truncated to a multiple of 2**-64: exact for every float64
// volume >= 2**-11 and every integer; a smaller one loses the bits below 2**-64.
VPOC_HD Fixed from_double(double v) {
  Fixed f;
  const double ip = floor(v);
  f.hi = static_cast<uint64_t>(ip);
  f.lo = static_cast<uint64_t>((v - ip) * kTwo64);  // v - ip is exact; * 2**64 is exact
  return f;
}

VPOC_HD Fixed from_int(uint64_t v) {
  Fixed f;
  f.hi = v;
  return f;
}

// To float64: the integer part exactly (< 2**53), plus the fraction rounded once. A function of
// the bits alone, so equal sums give equal doubles everywhere.
VPOC_HD double to_double(const Fixed& f) {
  return static_cast<double>(f.hi) + static_cast<double>(f.lo) * kUnit;
}

// f * k for a small count k (< 2**32), mod 2**128.
VPOC_HD Fixed times(const Fixed& f, uint64_t k) {
  const uint64_t a0 = f.lo & 0xffffffffu, a1 = f.lo >> 32;
  const uint64_t p0 = a0 * k, p1 = a1 * k;  // each < 2**64
  Fixed r;
  const uint64_t mid = (p0 >> 32) + (p1 & 0xffffffffu);
  r.lo = (p0 & 0xffffffffu) | (mid << 32);
  r.hi = f.hi * k + (p1 >> 32) + (mid >> 32);
  return r;
}

// q = f / n and the remainder (in units of 2**-64), for 1 <= n < 2**32: long division in
// 32-bit digits, so that it needs only 64-bit integer division (on every device).
VPOC_HD Fixed divide(const Fixed& f, uint64_t n, uint64_t& rem) {
  Fixed q;
  q.hi = f.hi / n;
  uint64_t r = f.hi % n;
  const uint64_t x = (r << 32) | (f.lo >> 32);
  const uint64_t qa = x / n;
  r = x % n;
  const uint64_t y = (r << 32) | (f.lo & 0xffffffffu);
  const uint64_t qb = y / n;
  rem = y % n;
  q.lo = (qa << 32) | qb;
  return q;
}

// Splits volume f evenly over n ticks (1 <= n < 2**32) so that the shares sum to f exactly: tick
// k (0-based from the lowest) gets q + 1 unit when k < rem, else q.
struct Split {
  Fixed q;
  uint64_t rem = 0;
  VPOC_HD static Split make(const Fixed& f, uint64_t n) {
    Split s;
    s.q = divide(f, n, s.rem);
    return s;
  }
  // The sum of the shares of ticks k0 .. k0 + count - 1.
  VPOC_HD Fixed sum(uint64_t k0, uint64_t count) const {
    Fixed r = times(q, count);
    const uint64_t end = k0 + count;
    const uint64_t extra = rem <= k0 ? 0 : (rem >= end ? count : rem - k0);
    r += from_units(extra);
    return r;
  }
  VPOC_HD static Fixed from_units(uint64_t u) {
    Fixed r;
    r.lo = u;
    return r;
  }
};

}  // namespace fixed
}  // namespace vpoc
