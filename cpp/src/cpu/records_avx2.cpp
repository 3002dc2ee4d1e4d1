// cpu/records_avx2.cpp — block_records (float64 prices, any volume) for CPUs with AVX2 but not AVX-512 (built with -mavx2).
// Contract: cpu/slots.hpp block_records: the records, range and flags of slots_avx2 / records_512, volumes_ok's check in the same pass.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/ladder.hpp"
#include "cpu/slots.hpp"
#include "cpu/slots_avx2_lanes.hpp"
#include "cpu/slots_impl.hpp"

namespace vpoc::cpu::simd {
namespace {

// Four volumes' 32-bit words (cpu/slots.hpp volume_word where it matters: whole and below 2**31).
inline __m128i words4(const double* v) { return _mm256_cvttpd_epi32(_mm256_loadu_pd(v)); }
inline __m128i words4(const float* v) { return _mm_cvttps_epi32(_mm_loadu_ps(v)); }
inline __m128i words4(const int32_t* v) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(v)); }
inline __m128i words4(const int64_t* v) {  // the low words of four int64
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v));
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
}
// Four volumes in float64 (a float32 one is exact there: records_512's check) or in 64-bit lanes.
inline __m256d volumes4_pd(const double* v) { return _mm256_loadu_pd(v); }
inline __m256d volumes4_pd(const float* v) { return _mm256_cvtps_pd(_mm_loadu_ps(v)); }
inline __m256i volumes4_epi64(const int32_t* v) {
  return _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v)));
}
inline __m256i volumes4_epi64(const int64_t* v) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v)); }

// records_512 (slots_avx2.cpp) four at a time: slots_body's operations on the prices, the slots
// beside the volume words, the volumes' check (float ones as check_pd, integer ones by their OR).
template <class V>
bool records_4(const double* p, const V* v, int n, double inv, double origin, int shift, uint64_t* rec, double& mn,
               double& mx, bool& whole, VolumeCheck* vc) {
  const __m256d vinv = _mm256_set1_pd(inv), vorg = _mm256_set1_pd(origin), lim = _mm256_set1_pd(ladder::kMaxTicks),
                sign = _mm256_set1_pd(-0.0), clamp_lo = _mm256_set1_pd(-2e9), clamp_hi = _mm256_set1_pd(2e9);
  const __m256d zero = _mm256_setzero_pd(), vlo = _mm256_set1_pd(2.3283064365386963e-10),
                vhi = _mm256_set1_pd(9007199254740992.0), big = _mm256_set1_pd(4503599627370496.0);
  const __m128i sh = _mm_cvtsi32_si128(shift);
  __m256d lo = _mm256_set1_pd(INFINITY), hi = _mm256_set1_pd(-INFINITY), valid = Avx2::all_ones(), wh = valid;
  __m256d vok = valid, vwh = valid, vmx = zero;
  __m256i any = _mm256_setzero_si256();
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    fetch_ahead(p + j, v + j);
    const __m256d q = _mm256_mul_pd(_mm256_loadu_pd(p + j), vinv);
    const __m256d ok = _mm256_cmp_pd(_mm256_andnot_pd(sign, q), lim, _CMP_LT_OQ);
    valid = _mm256_and_pd(valid, ok);
    const __m256d m = _mm256_or_pd(_mm256_and_pd(q, sign), lim);
    const __m256d rounded = _mm256_sub_pd(_mm256_add_pd(q, m), m);
    wh = _mm256_and_pd(wh, _mm256_cmp_pd(rounded, q, _CMP_EQ_OQ));
    __m256d k = _mm256_and_pd(_mm256_sub_pd(rounded, vorg), ok);  // invalid -> +0.0
    k = _mm256_min_pd(_mm256_max_pd(k, clamp_lo), clamp_hi);
    lo = _mm256_min_pd(lo, k);
    hi = _mm256_max_pd(hi, k);
    const __m128i off = _mm_sll_epi32(_mm256_cvttpd_epi32(k), sh), w = words4(v + j);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rec + j), _mm_unpacklo_epi32(off, w));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rec + j + 2), _mm_unpackhi_epi32(off, w));
    if constexpr (std::is_floating_point_v<V>) {
      const __m256d x = volumes4_pd(v + j);
      vok = _mm256_and_pd(vok, _mm256_or_pd(_mm256_cmp_pd(x, zero, _CMP_EQ_OQ),
                                            _mm256_and_pd(_mm256_cmp_pd(x, vlo, _CMP_GE_OQ),
                                                          _mm256_cmp_pd(x, vhi, _CMP_LE_OQ))));
      vwh = _mm256_and_pd(vwh, _mm256_cmp_pd(_mm256_sub_pd(_mm256_add_pd(x, big), big), x, _CMP_EQ_OQ));
      vmx = _mm256_max_pd(vmx, x);
    } else {
      any = _mm256_or_si256(any, volumes4_epi64(v + j));
    }
  }
  mn = Avx2::hmin(lo);
  mx = Avx2::hmax(hi);
  bool ok = Avx2::all(valid);
  whole = Avx2::all(wh);
  int32_t tail[4];
  slots_tail(p + j, 0, n - j, inv, origin, tail, mn, mx, ok, whole);  // as slots_run
  for (int t = 0; j + t < n; ++t)
    rec[j + t] = static_cast<uint32_t>(static_cast<uint32_t>(tail[t]) << shift) | uint64_t{volume_word(v[j + t])} << 32;
  if (vc == nullptr) return ok;
  if constexpr (std::is_floating_point_v<V>) {
    double tail_max = 0.0;
    bool tail_whole = true;
    const bool tail_ok = volumes_ok_impl(v + j, n - j, tail_max, tail_whole);
    vc->vmax = std::max(Avx2::hmax(vmx), tail_max);
    vc->whole = Avx2::all(vwh) && tail_whole;
    vc->ok = Avx2::all(vok) && tail_ok;
  } else {
    const __m128i a2 = _mm_or_si128(_mm256_castsi256_si128(any), _mm256_extracti128_si256(any, 1));
    auto all = static_cast<V>(_mm_cvtsi128_si64(_mm_or_si128(a2, _mm_unpackhi_epi64(a2, a2))));  // int32: narrowed
    for (int t = j; t < n; ++t) all |= v[t];
    vc->ok = volume_verdict(v, n, 1, 1, static_cast<VolumeAcc<V>>(all), vc->vmax, vc->whole);
  }
  return ok;
}

}  // namespace

template <class V>
bool records_avx2(const double* p, const V* v, int n, double inv, double origin, int shift, uint64_t* rec, double& mn,
                  double& mx, bool& whole, VolumeCheck* vc) {
  return records_4(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc);
}
#define VPOC_RECORDS_AVX2(V)                                                                                      \
  template bool records_avx2<V>(const double*, const V*, int, double, double, int, uint64_t*, double&, double&, \
                                bool&, VolumeCheck*);
VPOC_RECORDS_AVX2(double)
VPOC_RECORDS_AVX2(float)
VPOC_RECORDS_AVX2(int32_t)
VPOC_RECORDS_AVX2(int64_t)
#undef VPOC_RECORDS_AVX2

}  // namespace vpoc::cpu::simd
