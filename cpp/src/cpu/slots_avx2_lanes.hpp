// cpu/slots_avx2_lanes.hpp — the AVX2 lanes (four doubles a vector) that slots_impl.hpp's body runs on.
// Contract: included only by cpu/slots_avx2.cpp, the one file built with -mavx2; the same operations as the SSE2 / scalar lanes.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace vpoc::cpu::simd {

// Every record variant of phase A (trades: slots_avx2.cpp, records_avx2.cpp) fetches the prices and
// volumes this many elements ahead: four blocks of trades (histogram.cpp kBlock), so that the
// memory stream runs while phase A computes; phase B then fetches nothing for record blocks
// (histogram.cpp trades_blocked). Float64 trades, 20 M (320 MB a call): -6% on a 2-core EPYC
// (Zen 5) VM (2048 ahead: -4%, 3072 and 6144 alike); float32: -1%, and -2..-4% more with phase B's
// fetches gone (compute-bound: 0.48 ns a trade in cache, 0.54 from DRAM). A prefetch never faults:
// past an array's end it is dropped. (Float32 trades as entries, cpu/records_cd512.hpp, fetch nothing:
// there the hardware's stream prefetch alone ran faster.)
constexpr int kFetchAhead = 4096;
template <class P, class V>
inline void fetch_ahead(const P* p, const V* v) {
  _mm_prefetch(reinterpret_cast<const char*>(p + kFetchAhead), _MM_HINT_T0);
  _mm_prefetch(reinterpret_cast<const char*>(v + kFetchAhead), _MM_HINT_T0);
}

// Four doubles per vector.
struct Avx2 {
  using D = __m256d;
  static constexpr int kWidth = 4;
  static D set(double x) { return _mm256_set1_pd(x); }
  static D all_ones() { return _mm256_castsi256_pd(_mm256_set1_epi32(-1)); }
  static D load(const double* p) { return _mm256_loadu_pd(p); }
  static D load(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
  static D mul(D a, D b) { return _mm256_mul_pd(a, b); }
  static D add(D a, D b) { return _mm256_add_pd(a, b); }
  static D sub(D a, D b) { return _mm256_sub_pd(a, b); }
  static D abs(D a) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a); }
  static D lt(D a, D b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
  static D eq(D a, D b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
  static D and_(D a, D mask) { return _mm256_and_pd(a, mask); }
  static D copysign(D mag, D sign) {
    return _mm256_or_pd(_mm256_and_pd(sign, _mm256_set1_pd(-0.0)), mag);
  }
  static D min(D a, D b) { return _mm256_min_pd(a, b); }
  static D max(D a, D b) { return _mm256_max_pd(a, b); }
  static double hmin(D a) {
    const __m128d m = _mm_min_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
    return _mm_cvtsd_f64(_mm_min_sd(m, _mm_unpackhi_pd(m, m)));
  }
  static double hmax(D a) {
    const __m128d m = _mm_max_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
    return _mm_cvtsd_f64(_mm_max_sd(m, _mm_unpackhi_pd(m, m)));
  }
  static bool all(D a) { return _mm256_movemask_pd(a) == 15; }
  static void store_i32(int32_t* out, D k) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_cvttpd_epi32(k));
  }
};

}  // namespace vpoc::cpu::simd
