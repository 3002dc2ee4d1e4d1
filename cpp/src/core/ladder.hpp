// core/ladder.hpp — price -> tick -> row arithmetic of the contract, shared by the CPU and GPU code.
// Contract: t = rint(p / tick_size) (half to even), r = floor(t / ticks_per_row); host and device alike.
#pragma once

#include <math.h>

#include <cfloat>
#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define VPOC_HD __host__ __device__ inline
#else
#define VPOC_HD inline
#endif

namespace vpoc::ladder {

// |p / tick_size| must stay below 2**52 so that every tick is an exact integer in float64.
constexpr double kMaxTicks = 4503599627370496.0;

// The bound on |price / tick_size| of every backend: kMaxTicks, and less when rows are so large
// (tick_size * ticks_per_row > ~4e292) that rows within 2**52 ticks would have prices past the
// float64 range: then |price / tick_size| < R * ticks_per_row - 0.5 for the R rows whose price
// R * row_size is finite, so that every row price (and the ceil of a price, a legacy level) stays
// finite. Validation and error messages share this one rule.
VPOC_HD double tick_limit(double tick_size, int64_t ticks_per_row) {
  const double tpr = static_cast<double>(ticks_per_row);
  const double row_size = tick_size * tpr;
  double rows = floor(DBL_MAX / row_size);  // +inf for rows smaller than 1
  if (!(rows * tpr < kMaxTicks)) return kMaxTicks;
  while (rows > 0.0 && !(rows * row_size <= DBL_MAX)) rows -= 1.0;  // DBL_MAX / row_size rounded up
  return rows * tpr - 0.5;
}

// floor(a / b) for b >= 1, also for negative a. Estimated through float64 and corrected exactly:
// 64-bit integer division is a long software routine on GPUs (and a slow instruction on CPUs).
VPOC_HD int64_t floor_div(int64_t a, int64_t b) {
  if (b == 1) return a;
  int64_t q = static_cast<int64_t>(floor(static_cast<double>(a) / static_cast<double>(b)));
  while (q * b > a) --q;
  while ((q + 1) * b <= a) ++q;
  return q;
}

// rint(q) (round half to even) for |q| < 2**52 without a libm call: adding then removing 2**52
// leaves no fraction bits, so the FPU rounds (half to even). glibc's rint does not scale across
// threads on some x86 machines (measured: 2 threads no faster than 1), this does.
VPOC_HD double round_half_even(double q) {
  return q >= 0.0 ? (q + kMaxTicks) - kMaxTicks : (q - kMaxTicks) + kMaxTicks;
}

// round_half_even without a branch on the sign (vectorises): copysign puts 2**52 on q's side.
VPOC_HD double round_half_even_nb(double q) {
  const double m = copysign(kMaxTicks, q);
  return (q + m) - m;
}

// Tick of price p; false when p is NaN/inf or too far from zero for this tick size.
VPOC_HD bool to_tick(double p, double tick_size, int64_t& t) {
  const double q = p / tick_size;
  if (!(fabs(q) < kMaxTicks)) return false;  // also rejects NaN and inf
  t = static_cast<int64_t>(round_half_even(q));
  return true;
}

// p / tick_size in ticks, computed as p * (1 / tick_size). When tick_size is a power of two
// (ES: 0.25) the product equals the quotient exactly. Otherwise the product is within 2.3e-16
// relative of the quotient, so their roundings can differ only when the product lies that close to
// a half-integer: then the quotient itself is returned. Either way rint() of the result equals
// rint(p / tick_size), at the cost of a multiply instead of a divide.
struct TickScale {
  double tick = 1.0;
  double inv = 1.0;
  bool exact = true;         // tick_size is a power of two
  double limit = kMaxTicks;  // valid prices: |price / tick_size| < limit (tick_limit)

  VPOC_HD static TickScale make(double tick_size, int64_t ticks_per_row) {
    TickScale s;
    s.tick = tick_size;
    s.limit = tick_limit(tick_size, ticks_per_row);
    s.inv = 1.0 / tick_size;
    int e = 0;
    s.exact = frexp(tick_size, &e) == 0.5;
    return s;
  }
  template <bool Exact>
  VPOC_HD double ticks(double p) const {
    const double q = p * inv;
    if (Exact) return q;
    const double d = fabs(q - round_half_even(q));  // distance to the nearest integer, exact
    return (0.5 - d <= fabs(q) * 4.5e-16) ? p / tick : q;
  }
  // q (a price in ticks) is in range; false for NaN and inf too.
  VPOC_HD bool valid(double q) const { return fabs(q) < limit; }
};

// Tick of price p through a TickScale; false when p is NaN/inf or too large.
template <bool Exact>
VPOC_HD bool to_tick(double p, const TickScale& s, int64_t& t) {
  const double q = s.ticks<Exact>(p);
  if (!s.valid(q)) return false;
  t = static_cast<int64_t>(round_half_even(q));
  return true;
}

VPOC_HD int64_t tick_to_row(int64_t t, int64_t ticks_per_row) { return floor_div(t, ticks_per_row); }

// Lowest price of row r.
VPOC_HD double row_price(int64_t r, double row_size) { return static_cast<double>(r) * row_size; }

// x as p / q with q = 10**d, d <= max_digits the fewest decimals whose p / q rounds back to x
// (x's shortest decimal form); false when none does, or p would pass 2**53. Shared by the
// options check and the rules (price_label / va_target 'decimal'), host and device alike.
VPOC_HD bool decimal_fraction(double x, int max_digits, int64_t& p, int64_t& q) {
  double scale = 1.0;
  for (int d = 0; d <= max_digits; ++d, scale *= 10.0) {  // 10**d is exact in float64 for d <= 22
    const double a = round_half_even(x * scale);
    if (!(fabs(a) < 9007199254740992.0)) return false;
    if (a / scale == x) {
      p = static_cast<int64_t>(a);
      q = static_cast<int64_t>(scale);
      return true;
    }
  }
  return false;
}

// Row prices of a call. 'product' (default): r * row_size, one float64 product (row_price).
// 'decimal' (price_label='decimal', LEAN's C# decimal labels): tick_size read as its shortest decimal
// a / 10**d (d <= 15), row r priced (r * a * ticks_per_row) / 10**d: two exact integers in float64
// and one correctly rounded division, so the price is the float64 nearest the exact decimal
// (for |r * a * ticks_per_row| <= 2**53; past that the numerator is rounded first). den 0: 'product'.
struct RowPrice {
  double row_size = 1.0;
  int64_t num = 0;   // a * ticks_per_row
  double den = 0.0;  // 10**d; 0: product labels

  VPOC_HD static RowPrice make(double tick_size, int64_t ticks_per_row, bool decimal) {
    RowPrice rp;
    rp.row_size = tick_size * static_cast<double>(ticks_per_row);
    int64_t a = 0, q = 0;
    if (decimal && decimal_fraction(tick_size, 15, a, q) && a > 0 &&
        static_cast<double>(a) * static_cast<double>(ticks_per_row) < 9007199254740992.0) {
      rp.num = a * ticks_per_row;
      rp.den = static_cast<double>(q);
    }
    return rp;
  }
  VPOC_HD double operator()(int64_t r) const {
    if (den == 0.0) return row_price(r, row_size);
    return (static_cast<double>(r) * static_cast<double>(num)) / den;  // the product is exact below 2**53
  }
};

}  // namespace vpoc::ladder
