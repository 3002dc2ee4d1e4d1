// cpu/slots.hpp — phase A of trade binning: a block of prices -> window slots (int32), vectorised.
// Contract: slot[j] = rint(p[j] * inv) - origin, clamped to +-2e9; false when a price is NaN/inf/huge.
#pragma once

#include <cstdint>

namespace vpoc::cpu {

// For j < n: slot[j] = round_half_even(p[j] * inv) - origin (invalid prices give slot 0), and the
// smallest / largest unclamped slot in mn / mx. Returns false when some |p[j] * inv| >= 2**52, NaN
// or inf. Picks the widest instruction set the CPU has (AVX2 where compiled in, else SSE2/scalar).
bool block_slots(const double* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx);
bool block_slots(const float* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx);

namespace simd {
// The same, one per instruction set; every variant returns identical results.
template <class P>
bool slots_scalar(const P* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx);
template <class P>
bool slots_avx2(const P* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx);
bool have_avx2();
}  // namespace simd

}  // namespace vpoc::cpu
