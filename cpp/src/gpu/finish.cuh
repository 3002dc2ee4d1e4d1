// gpu/finish.cuh — one block turns a session's binned rows into float64 volumes and their exact total.
// Contract: device code of the finish pass (gpu/histogram.cu) and the fused finish + levels pass (gpu/levels.cu).
#pragma once

#include <cstdint>

#include "core/fixed.hpp"
#include "gpu/vendor.hpp"

namespace vpoc::gpu {

// Fixed-point tree reduction / scan helpers over a block's words in shared memory (hi, lo).
__device__ inline Fixed load_fixed(const unsigned long long* hi, const unsigned long long* lo, int k) {
  Fixed f;
  f.hi = hi[k];
  f.lo = lo[k];
  return f;
}
__device__ inline void store_fixed(unsigned long long* hi, unsigned long long* lo, int k, const Fixed& f) {
  hi[k] = f.hi;
  lo[k] = f.lo;
}

// A session's (or a group's) binned rows in 64.64 fixed point as two planes of words, hi and lo,
// in global or shared memory: adds are atomic, lo's carry goes into hi (exact in any order).
struct FixedRows {
  unsigned long long* hi;
  unsigned long long* lo;
  static constexpr int kWords = 2;
  __device__ void add(int64_t k, const Fixed& x) const {
    unsigned long long carry = 0;
    if (x.lo != 0) {
      const unsigned long long old = atomicAdd(lo + k, static_cast<unsigned long long>(x.lo));
      carry = old + x.lo < old ? 1ull : 0ull;
    }
    const unsigned long long h = static_cast<unsigned long long>(x.hi) + carry;
    if (h != 0) atomicAdd(hi + k, h);
  }
  __device__ Fixed get(int64_t k) const {
    Fixed f;
    f.hi = hi[k];
    f.lo = lo[k];
    return f;
  }
  __device__ void zero(int64_t k) const { hi[k] = lo[k] = 0; }
  __device__ FixedRows at(int64_t k) const { return FixedRows{hi + k, lo + k}; }
  __device__ FixedRows plane(int p, int64_t hi_stride, int64_t lo_stride) const {
    return FixedRows{hi + p * hi_stride, lo + p * lo_stride};
  }
};
// A session's total as the result column holds it: the exact sum rounded once, +inf past 2**53
// (the host then reports the session).
__device__ inline double total_of(const Fixed& t) {
  return fixed::over_max(t) ? __longlong_as_double(0x7ff0000000000000LL) : fixed::to_double(t);
}

// The block-wide exact sum of every thread's f (red_hi / red_lo: [Threads] words of shared memory,
// free again when it returns; every thread of the block calls it).
template <int Threads>
__device__ inline Fixed block_sum(const Fixed& f, unsigned long long* red_hi, unsigned long long* red_lo) {
  store_fixed(red_hi, red_lo, threadIdx.x, f);
  __syncthreads();
  for (int half = Threads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half)
      store_fixed(red_hi, red_lo, threadIdx.x,
                  load_fixed(red_hi, red_lo, threadIdx.x) + load_fixed(red_hi, red_lo, threadIdx.x + half));
    __syncthreads();
  }
  const Fixed out = load_fixed(red_hi, red_lo, 0);
  __syncthreads();
  return out;
}

// [Threads] threads of one block, all of them (it synchronises): rows [off, off + width) of hi (and
// lo unless null; differences when `scan`, their running sums being the rows) become float64
// volumes in place (volume aliases hi) or at out[0, width) when out is not null, and also
// stage[0, width) when stage is not null (shared memory of at least width doubles; it may alias
// hi + off: each row is read before it is written, by the same thread). Returns the rows' exact sum to every thread; red_hi / red_lo:
// [Threads] words of shared memory each, free again once every thread has returned.
template <int Threads>
__device__ inline Fixed finish_session(unsigned long long* hi, const unsigned long long* lo, int64_t off,
                                       int64_t width, bool scan, unsigned long long* red_hi,
                                       unsigned long long* red_lo, double* stage, double* out = nullptr) {
  Fixed sum, carry;  // carry: the running sum of the chunks before this one (scan)
  for (int64_t c0 = 0; c0 < width; c0 += Threads) {  // block-uniform trip count
    const int64_t k = c0 + threadIdx.x;
    Fixed f;
    if (k < width) {
      f.hi = hi[off + k];
      f.lo = lo ? lo[off + k] : 0ull;
    }
    if (scan) {  // inclusive Hillis-Steele scan of the chunk, exact (integer adds)
      store_fixed(red_hi, red_lo, threadIdx.x, f);
      __syncthreads();
      for (int d = 1; d < Threads; d *= 2) {
        const Fixed add = static_cast<int>(threadIdx.x) >= d ? load_fixed(red_hi, red_lo, threadIdx.x - d) : Fixed{};
        __syncthreads();
        f += add;
        store_fixed(red_hi, red_lo, threadIdx.x, f);
        __syncthreads();
      }
      f += carry;
      carry += load_fixed(red_hi, red_lo, Threads - 1);
      __syncthreads();
    }
    if (k < width) {
      sum += f;
      const double x = fixed::to_double(f);
      if (out != nullptr) out[k] = x;
      else reinterpret_cast<double*>(hi)[off + k] = x;
      if (stage != nullptr) stage[k] = x;
    }
  }
  return block_sum<Threads>(sum, red_hi, red_lo);
}

}  // namespace vpoc::gpu
