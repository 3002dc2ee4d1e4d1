// core/fixed.hpp — 64.64 fixed-point volume: every share of volume is summed exactly, in any order.
// Contract: docs/contract.md "Exact sums"; integer arithmetic mod 2**128, one rounding to float64.
#pragma once

#include <math.h>

#include <cstdint>
#include <type_traits>

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
// A session's volumes must sum to at most 2**53: above it float64 cannot hold every integer, so
// an integer total could not be reported exactly (and a row sum could not either).
constexpr double kMaxTotal = 9007199254740992.0;  // 2**53
// The smallest non-zero volume: 2**32 units, so that truncating a share to whole units changes a
// volume by at most 2**-32 relative (a smaller one would be rounded away silently; 1 satoshi, 1e-8,
// is above it).
constexpr double kMinVolume = 2.3283064365386963e-10;  // 2**-32

// Whether v is a volume vpoc sums exactly enough: 0, or 2**-32 .. 2**53 (NaN, inf, negatives out).
// T: double, or float (both bounds are floats: a float volume gets the same answer unconverted).
template <class T = double>
VPOC_HD bool volume_in_range(T v) {
  static_assert(std::is_floating_point<T>::value, "a volume in float or double");
  return v == T(0) || (v >= static_cast<T>(kMinVolume) && v <= static_cast<T>(kMaxTotal));
}

// Whether f is above kMaxTotal.
VPOC_HD bool over_max(const Fixed& f) {
  constexpr uint64_t kMax = uint64_t(1) << 53;
  return f.hi > kMax || (f.hi == kMax && f.lo != 0);
}

// v (finite, 0 <= v <= 2**53) as 64.64, truncated to a multiple of 2**-64: exact for every float64
// volume >= 2**-11 and every integer; a smaller one loses the bits below 2**-64.
// Signed conversions only (one instruction each on x86, where a uint64 one is a branchy sequence):
// v <= 2**53 truncates to its floor, and the fraction is taken 32 bits at a time.
VPOC_HD Fixed from_double(double v) {
  Fixed f;
  const auto ip = static_cast<int64_t>(v);
  const double frac = v - static_cast<double>(ip);  // exact
  const double a = frac * 4294967296.0;               // exact (a power of two)
  const auto a_hi = static_cast<int64_t>(a);
  const auto a_lo = static_cast<int64_t>((a - static_cast<double>(a_hi)) * 4294967296.0);
  f.hi = static_cast<uint64_t>(ip);
  f.lo = (static_cast<uint64_t>(a_hi) << 32) | static_cast<uint64_t>(a_lo);
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

// floor(x / n) and x % n for 1 <= n < 2**32 and x <= 2**53 or x < n * 2**32, given inv = 1.0 / n (float64, rounded):
// the float64 product x * inv is within 4 of the true quotient (x, inv and the product each round
// once: 3 * 2**-53 relative, and x / n < 2**53), then corrected exactly. A multiply, not a division:
// divide() takes one division for its three digits (the bench's 1.4 M uniform bars on an H200: the
// fused bars kernel 52.6 -> 40.3 us with one division a bar instead of three). The product q * n
// never wraps: q <= x / n + 4 with x < 2**53 + 1 (the first digit), or q <= 2**32 with x < n * 2**32.
VPOC_HD uint64_t div_small(uint64_t x, uint64_t n, double inv, uint64_t& rem) {
  uint64_t q = static_cast<uint64_t>(static_cast<double>(x) * inv);
  uint64_t prod = q * n;
  while (prod > x) {
    --q;
    prod -= n;
  }
  uint64_t r = x - prod;
  while (r >= n) {
    ++q;
    r -= n;
  }
  rem = r;
  return q;
}

// q = f / n and the remainder (in units of 2**-64), for 1 <= n < 2**32 and f < 2**53 + 1: long
// division in 32-bit digits, so that every step is a div_small.
VPOC_HD Fixed divide(const Fixed& f, uint64_t n, uint64_t& rem) {
  const double inv = 1.0 / static_cast<double>(n);
  Fixed q;
  uint64_t r = 0;
  q.hi = div_small(f.hi, n, inv, r);
  const uint64_t qa = div_small((r << 32) | (f.lo >> 32), n, inv, r);
  const uint64_t qb = div_small((r << 32) | (f.lo & 0xffffffffu), n, inv, rem);
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
  // The share of tick k.
  VPOC_HD Fixed one(uint64_t k) const { return k < rem ? q + from_units(1) : q; }
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

// Exact products without FMA (Dekker): a * b == hi + lo exactly for finite a, b whose product
// neither overflows nor underflows. Only + - * in float64, so host and device get the same bits
// (contraction, where a compiler does it, yields the same exact error terms).
VPOC_HD void split(double a, double& hi, double& lo) {
  const double c = 134217729.0 * a;  // 2**27 + 1
  hi = c - (c - a);
  lo = a - hi;
}
VPOC_HD void two_prod(double a, double b, double& hi, double& lo) {
  hi = a * b;
  double ah, al, bh, bl;
  split(a, ah, al);
  split(b, bh, bl);
  lo = ((ah * bh - hi) + ah * bl + al * bh) + al * bl;
}

// Sign (-1, 0, +1) of a * b - c * d, exactly (a, b, c, d >= 0 finite, products within float64).
// va_target='decimal': running * Q against P * total (core/levels.hpp reached()).
VPOC_HD int mul_cmp(double a, double b, double c, double d) {
  double h1, l1, h2, l2;
  two_prod(a, b, h1, l1);
  two_prod(c, d, h2, l2);
  // Rounding is monotone: h1 > h2 implies a*b > c*d; equal heads leave the exact tails to decide.
  if (h1 != h2) return h1 > h2 ? 1 : -1;
  return l1 > l2 ? 1 : (l1 < l2 ? -1 : 0);
}

}  // namespace fixed
}  // namespace vpoc
