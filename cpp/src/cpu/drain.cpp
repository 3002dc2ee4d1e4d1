// cpu/drain.cpp — drain_int64 (cpu/drain.hpp): a scalar loop, and an AVX-512 one picked at run time.
// Contract: both variants write the same o[], return the same sum and leave the same zero rows.
#include "cpu/drain.hpp"

#include <algorithm>
#include <cstring>

#include "cpu/row_window.hpp"
#include "cpu/slots.hpp"

#if defined(VPOC_HAVE_AVX512_SLOTS)
#include <immintrin.h>
#endif

namespace vpoc::cpu {
namespace {

static_assert(kLanes == 4, "the drains below read rows of four int64 lanes");

// Rows [from, n): the lanes summed in int64 (wrapping, as the window's adds), converted, zeroed with the rest.
uint64_t drain_scalar(int64_t* b, int64_t from, int64_t n, int64_t clear, double* o) {
  uint64_t sum = 0;
  for (int64_t k = from; k < n; ++k) {
    const int64_t* r = b + k * kLanes;
    const uint64_t s = static_cast<uint64_t>(r[0]) + static_cast<uint64_t>(r[1]) + static_cast<uint64_t>(r[2]) +
                       static_cast<uint64_t>(r[3]);
    o[k] = static_cast<double>(static_cast<int64_t>(s));
    sum += s;
  }
  if (clear > from) std::memset(b + from * kLanes, 0, static_cast<size_t>(clear - from) * kLanes * sizeof(int64_t));
  return sum;
}

#if defined(VPOC_HAVE_AVX512_SLOTS)
#if defined(__clang__)
#define VPOC_DRAIN512_TARGET __attribute__((target("avx512f,avx512dq")))
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq")
#define VPOC_DRAIN512_TARGET
#endif

// Eight rows a turn (four 64-byte loads): the lanes' pair sums of two rows at a time, then the
// eight row sums in order, one conversion and one store; the rows' lines zeroed as they are read.
VPOC_DRAIN512_TARGET uint64_t drain_avx512(int64_t* b, int64_t n, int64_t clear, double* o) {
  const __m512i lo2 = _mm512_set_epi64(13, 12, 9, 8, 5, 4, 1, 0);   // lanes 0, 1 of rows r, r+1 (a), r+2, r+3 (b)
  const __m512i hi2 = _mm512_set_epi64(15, 14, 11, 10, 7, 6, 3, 2);  // lanes 2, 3 of them
  const __m512i even = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
  const __m512i zero = _mm512_setzero_si512();
  __m512i acc = zero;
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    int64_t* r = b + k * kLanes;
    const __m512i a = _mm512_loadu_si512(r), c = _mm512_loadu_si512(r + 8);
    const __m512i d = _mm512_loadu_si512(r + 16), e = _mm512_loadu_si512(r + 24);
    _mm512_storeu_si512(r, zero);
    _mm512_storeu_si512(r + 8, zero);
    _mm512_storeu_si512(r + 16, zero);
    _mm512_storeu_si512(r + 24, zero);
    // rows k..k+3: (l0 + l2, l1 + l3) of each; then rows k+4..k+7
    const __m512i p = _mm512_add_epi64(_mm512_permutex2var_epi64(a, lo2, c), _mm512_permutex2var_epi64(a, hi2, c));
    const __m512i q = _mm512_add_epi64(_mm512_permutex2var_epi64(d, lo2, e), _mm512_permutex2var_epi64(d, hi2, e));
    const __m512i s = _mm512_add_epi64(_mm512_permutex2var_epi64(p, even, q), _mm512_permutex2var_epi64(p, odd, q));
    _mm512_storeu_pd(o + k, _mm512_cvtepi64_pd(s));
    acc = _mm512_add_epi64(acc, s);
  }
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, acc);
  uint64_t sum = 0;
  for (const uint64_t x : lanes) sum += x;
  return sum + drain_scalar(b, k, n, clear, o);
}

#if !defined(__clang__)
#pragma GCC pop_options
#endif
#undef VPOC_DRAIN512_TARGET
#endif

}  // namespace

uint64_t drain_int64(int64_t* b, int64_t n, int64_t clear, double* o) {
#if defined(VPOC_HAVE_AVX512_SLOTS)
  static const bool avx512 = simd::have_avx512();
  if (avx512) return drain_avx512(b, n, clear, o);
#endif
  return drain_scalar(b, 0, n, clear, o);
}

}  // namespace vpoc::cpu
