// cpu/slots_impl.hpp — the body of phase A, written once over a tiny vector abstraction (V).
// Contract: included by slots.cpp (SSE2 / scalar) and slots_avx2.cpp (AVX2); same results from each.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/ladder.hpp"

namespace vpoc::cpu::simd {

// Lane-wise body shared by every width: q = p * inv; valid = |q| < 2**52; k = rint(q) - origin
// (0 when invalid), clamped to +-2e9 (a session is at most 1e9 rows wide, so clamped slots are only
// ever out of the window); running min / max of k; whole_all: every q was a whole number (with a
// power-of-two tick, p * inv is exact, so a whole q proves the price on the grid: core/grid.hpp).
template <class V>
inline void slots_body(typename V::D p, typename V::D inv, typename V::D origin, typename V::D& lo,
                       typename V::D& hi, typename V::D& valid_all, typename V::D& whole_all, int32_t* out) {
  const auto q = V::mul(p, inv);
  const auto valid = V::lt(V::abs(q), V::set(ladder::kMaxTicks));
  valid_all = V::and_(valid_all, valid);
  const auto m = V::copysign(V::set(ladder::kMaxTicks), q);
  const auto rounded = V::sub(V::add(q, m), m);
  whole_all = V::and_(whole_all, V::eq(rounded, q));
  auto k = V::sub(rounded, origin);
  k = V::and_(k, valid);  // invalid -> +0.0
  k = V::min(V::max(k, V::set(-2e9)), V::set(2e9));
  lo = V::min(lo, k);
  hi = V::max(hi, k);
  V::store_i32(out, k);
}

// Volume check written so that it vectorises (bitwise &, max, no early exit). 2**53: fixed::kMaxTotal.
// Per volume (volume_fold, also inside bar_slots' loop), then the block's verdict (volume_verdict).
// Float volumes: acc is the maximum through the bits as signed integers (non-negative floats order
// as their bit patterns do, and integer max vectorises where a float one, NaN rules, may not);
// integer volumes: acc is their bitwise OR (the sign bit survives it; OR >= max).
template <class T>
using VolumeAcc = std::conditional_t<std::is_floating_point_v<T>,
                                     std::conditional_t<sizeof(T) == 4, int32_t, int64_t>, T>;

template <class T>
inline void volume_fold(T x, int& ok, int& wh, VolumeAcc<T>& acc) {
  if constexpr (std::is_floating_point_v<T>) {
    // Whole numbers, in the same pass: adding and removing 2**23 (float) / 2**52 (double) leaves a
    // whole number below it unchanged; every float from 2**23 up is whole. A double volume in
    // (2**52, 2**53] that is odd reads as not whole here: only the fast whole path is skipped.
    constexpr T kWhole = sizeof(T) == 4 ? T(8388608.0) : T(4503599627370496.0);
    // fixed::volume_in_range: 0, or 2**-32 .. 2**53
    ok &= (x == T(0)) | ((x >= T(2.3283064365386963e-10)) & (x <= T(9007199254740992.0)));
    wh &= (((x + kWhole) - kWhole) == x) | (sizeof(T) == 4 && x >= kWhole);
    VolumeAcc<T> b;
    std::memcpy(&b, &x, sizeof b);
    acc = b > acc ? b : acc;
  } else {
    acc |= x;
  }
}

// The verdict on the n volumes at v that volume_fold saw (ok, wh, acc as it left them, starting
// from 1, 1, 0): valid (returned), their maximum or an upper bound of it (vmax), all whole.
template <class T>
inline bool volume_verdict(const T* v, int n, int ok, int wh, VolumeAcc<T> acc, double& vmax, bool& whole) {
  if constexpr (std::is_floating_point_v<T>) {
    T m;
    std::memcpy(&m, &acc, sizeof m);
    vmax = static_cast<double>(m);
    whole = wh != 0;
    return ok != 0;
  } else {
    (void)ok, (void)wh;
    whole = true;  // integers are
    vmax = static_cast<double>(acc);
    if (acc < 0) return false;
    if ((static_cast<uint64_t>(acc) >> 53) == 0) return true;
    for (int j = 0; j < n; ++j)  // some volume is near 2**53: check each exactly
      if (static_cast<uint64_t>(v[j]) > (uint64_t(1) << 53)) return false;
    return true;
  }
}

template <class T>
inline bool volumes_ok_impl(const T* v, int n, double& vmax, bool& whole) {
  int ok = 1, wh = 1;
  VolumeAcc<T> acc = 0;
  for (int j = 0; j < n; ++j) volume_fold(v[j], ok, wh, acc);
  return volume_verdict(v, n, ok, wh, acc, vmax, whole);
}

// Rows [j, n) of a block after its vectors: slots_body's rule one price at a time (every SIMD
// variant ends its blocks here, so their tails are the one scalar rule).
template <class P>
inline void slots_tail(const P* p, int j, int n, double inv, double origin, int32_t* slot, double& mn, double& mx,
                       bool& ok, bool& whole) {
  for (; j < n; ++j) {
    const double q = static_cast<double>(p[j]) * inv;
    const bool v = fabs(q) < ladder::kMaxTicks;
    ok &= v;
    whole &= ladder::round_half_even_nb(q) == q;
    double k = v ? ladder::round_half_even_nb(q) - origin : 0.0;
    k = k < -2e9 ? -2e9 : (k > 2e9 ? 2e9 : k);
    mn = k < mn ? k : mn;
    mx = k > mx ? k : mx;
    slot[j] = static_cast<int32_t>(k);
  }
}

template <class V, class P>
inline bool slots_run(const P* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx,
                      bool& whole) {
  auto lo = V::set(INFINITY), hi = V::set(-INFINITY), valid = V::all_ones(), wh = V::all_ones();
  const auto vinv = V::set(inv), vorg = V::set(origin);
  int j = 0;
  for (; j + V::kWidth <= n; j += V::kWidth) slots_body<V>(V::load(p + j), vinv, vorg, lo, hi, valid, wh, slot + j);
  mn = V::hmin(lo);
  mx = V::hmax(hi);
  bool ok = V::all(valid);
  whole = V::all(wh);
  slots_tail(p, j, n, inv, origin, slot, mn, mx, ok, whole);
  return ok;
}

}  // namespace vpoc::cpu::simd
