// cpu/slots_avx2.cpp — phase A of trade binning with AVX2 (this file alone is built with -mavx2).
// Contract: identical results to the SSE2/scalar variants; only called when the CPU reports AVX2.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu/slots.hpp"
#include "cpu/slots_impl.hpp"

namespace vpoc::cpu::simd {

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

template <class P>
bool slots_avx2(const P* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx, bool& whole) {
  return slots_run<Avx2>(p, n, inv, origin, slot, mn, mx, whole);
}
template bool slots_avx2<double>(const double*, int, double, double, int32_t*, double&, double&, bool&);
template bool slots_avx2<float>(const float*, int, double, double, int32_t*, double&, double&, bool&);

template <class V>
bool volumes_ok_avx2(const V* v, int n, double& vmax, bool& whole) {
  return volumes_ok_impl(v, n, vmax, whole);
}

// float64 volumes with AVX2 intrinsics: the same checks as volumes_ok_impl, but the maximum by
// vmaxpd (AVX2 has no int64 max, which the compiler emulated with compares and blends: that loop
// cost as much as reading the prices). A NaN makes `ok` false, so what vmaxpd does with it does not
// matter.
template <>
bool volumes_ok_avx2<double>(const double* v, int n, double& vmax, bool& whole) {
  const __m256d zero = _mm256_setzero_pd(), lo = _mm256_set1_pd(2.3283064365386963e-10),
                hi = _mm256_set1_pd(9007199254740992.0), big = _mm256_set1_pd(4503599627370496.0);
  __m256d ok = _mm256_castsi256_pd(_mm256_set1_epi32(-1)), wh = ok, mx = zero;
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const __m256d x = _mm256_loadu_pd(v + j);
    const __m256d in = _mm256_and_pd(_mm256_cmp_pd(x, lo, _CMP_GE_OQ), _mm256_cmp_pd(x, hi, _CMP_LE_OQ));
    ok = _mm256_and_pd(ok, _mm256_or_pd(_mm256_cmp_pd(x, zero, _CMP_EQ_OQ), in));
    wh = _mm256_and_pd(wh, _mm256_cmp_pd(_mm256_sub_pd(_mm256_add_pd(x, big), big), x, _CMP_EQ_OQ));
    mx = _mm256_max_pd(mx, x);
  }
  double tail_max = 0.0;
  bool tail_whole = true;
  const bool tail_ok = volumes_ok_impl(v + j, n - j, tail_max, tail_whole);
  const __m128d m2 = _mm_max_pd(_mm256_castpd256_pd128(mx), _mm256_extractf128_pd(mx, 1));
  vmax = std::max(_mm_cvtsd_f64(_mm_max_sd(m2, _mm_unpackhi_pd(m2, m2))), tail_max);
  whole = _mm256_movemask_pd(wh) == 15 && tail_whole;
  return _mm256_movemask_pd(ok) == 15 && tail_ok;
}

// float32 volumes the same way, eight at a time (vmaxps).
template <>
bool volumes_ok_avx2<float>(const float* v, int n, double& vmax, bool& whole) {
  const __m256 zero = _mm256_setzero_ps(), lo = _mm256_set1_ps(2.3283064365386963e-10f),
               hi = _mm256_set1_ps(9007199254740992.0f), big = _mm256_set1_ps(8388608.0f);
  __m256 ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1)), wh = ok, mx = zero;
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 x = _mm256_loadu_ps(v + j);
    const __m256 in = _mm256_and_ps(_mm256_cmp_ps(x, lo, _CMP_GE_OQ), _mm256_cmp_ps(x, hi, _CMP_LE_OQ));
    ok = _mm256_and_ps(ok, _mm256_or_ps(_mm256_cmp_ps(x, zero, _CMP_EQ_OQ), in));
    // whole: below 2**23 adding and removing 2**23 keeps it; from 2**23 up every float is whole
    wh = _mm256_and_ps(wh, _mm256_or_ps(_mm256_cmp_ps(_mm256_sub_ps(_mm256_add_ps(x, big), big), x, _CMP_EQ_OQ),
                                        _mm256_cmp_ps(x, big, _CMP_GE_OQ)));
    mx = _mm256_max_ps(mx, x);
  }
  double tail_max = 0.0;
  bool tail_whole = true;
  const bool tail_ok = volumes_ok_impl(v + j, n - j, tail_max, tail_whole);
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
  vmax = std::max(static_cast<double>(_mm_cvtss_f32(m4)), tail_max);
  whole = _mm256_movemask_ps(wh) == 0xFF && tail_whole;
  return _mm256_movemask_ps(ok) == 0xFF && tail_ok;
}
template bool volumes_ok_avx2<int32_t>(const int32_t*, int, double&, bool&);
template bool volumes_ok_avx2<int64_t>(const int64_t*, int, double&, bool&);

namespace {
// slots_f32_avx2, and with Vol the float32 volumes' check (volumes_ok) in the same loop: one pass
// over the block instead of two.
template <bool Vol>
bool slots_f32_impl(const float* p, int n, float inv, int64_t origin, int32_t* slot, double& mn, double& mx,
                    bool& whole, const float* v, VolumeCheck* vc) {
  constexpr float kLim = 8388608.0f;  // 2**23: below it, adding and removing 2**23 rounds to integer
  if (origin <= -(int64_t(1) << 30) || origin >= (int64_t(1) << 30)) return false;
  const auto org = static_cast<int32_t>(origin);
  const __m256 vinv = _mm256_set1_ps(inv), lim = _mm256_set1_ps(kLim), sign = _mm256_set1_ps(-0.0f);
  const __m256i vorg = _mm256_set1_epi32(org);
  __m256i lo = _mm256_set1_epi32(std::numeric_limits<int32_t>::max());
  __m256i hi = _mm256_set1_epi32(std::numeric_limits<int32_t>::min());
  __m256 valid = _mm256_castsi256_ps(_mm256_set1_epi32(-1)), wh = valid;
  // the volumes' bounds as volumes_ok_avx2<float> has them
  const __m256 zero = _mm256_setzero_ps(), vlo = _mm256_set1_ps(2.3283064365386963e-10f),
               vhi = _mm256_set1_ps(9007199254740992.0f);
  __m256 vok = valid, vwh = valid, vmx = zero;
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 q = _mm256_mul_ps(_mm256_loadu_ps(p + j), vinv);
    valid = _mm256_and_ps(valid, _mm256_cmp_ps(_mm256_andnot_ps(sign, q), lim, _CMP_LT_OQ));
    const __m256 m = _mm256_or_ps(_mm256_and_ps(q, sign), lim);
    const __m256 rounded = _mm256_sub_ps(_mm256_add_ps(q, m), m);
    wh = _mm256_and_ps(wh, _mm256_cmp_ps(rounded, q, _CMP_EQ_OQ));
    const __m256i k = _mm256_sub_epi32(_mm256_cvttps_epi32(rounded), vorg);
    lo = _mm256_min_epi32(lo, k);
    hi = _mm256_max_epi32(hi, k);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(slot + j), k);
    if constexpr (Vol) {
      const __m256 x = _mm256_loadu_ps(v + j);
      const __m256 in = _mm256_and_ps(_mm256_cmp_ps(x, vlo, _CMP_GE_OQ), _mm256_cmp_ps(x, vhi, _CMP_LE_OQ));
      vok = _mm256_and_ps(vok, _mm256_or_ps(_mm256_cmp_ps(x, zero, _CMP_EQ_OQ), in));
      vwh = _mm256_and_ps(vwh, _mm256_or_ps(_mm256_cmp_ps(_mm256_sub_ps(_mm256_add_ps(x, lim), lim), x, _CMP_EQ_OQ),
                                            _mm256_cmp_ps(x, lim, _CMP_GE_OQ)));
      vmx = _mm256_max_ps(vmx, x);
    }
  }
  if (_mm256_movemask_ps(valid) != 0xFF) return false;
  // Horizontal min / max in registers (a stack array here made GCC keep lo/hi in memory).
  __m128i l4 = _mm_min_epi32(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1));
  __m128i h4 = _mm_max_epi32(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1));
  l4 = _mm_min_epi32(l4, _mm_shuffle_epi32(l4, _MM_SHUFFLE(1, 0, 3, 2)));
  h4 = _mm_max_epi32(h4, _mm_shuffle_epi32(h4, _MM_SHUFFLE(1, 0, 3, 2)));
  l4 = _mm_min_epi32(l4, _mm_shuffle_epi32(l4, _MM_SHUFFLE(2, 3, 0, 1)));
  h4 = _mm_max_epi32(h4, _mm_shuffle_epi32(h4, _MM_SHUFFLE(2, 3, 0, 1)));
  int32_t l = _mm_cvtsi128_si32(l4), h = _mm_cvtsi128_si32(h4);
  bool all_whole = _mm256_movemask_ps(wh) == 0xFF;
  const int tail = j;
  for (; j < n; ++j) {
    const float q = p[j] * inv;
    if (!(std::fabs(q) < kLim)) return false;
    const float m = std::copysign(kLim, q);
    all_whole &= ((q + m) - m) == q;
    const int32_t k = static_cast<int32_t>((q + m) - m) - org;
    l = std::min(l, k), h = std::max(h, k);
    slot[j] = k;
  }
  mn = l;
  mx = h;
  whole = all_whole;
  if constexpr (Vol) {
    double tail_max = 0.0;
    bool tail_whole = true;
    const bool tail_ok = volumes_ok_impl(v + tail, n - tail, tail_max, tail_whole);
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vmx), _mm256_extractf128_ps(vmx, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
    vc->vmax = std::max(static_cast<double>(_mm_cvtss_f32(m4)), tail_max);
    vc->whole = _mm256_movemask_ps(vwh) == 0xFF && tail_whole;
    vc->ok = _mm256_movemask_ps(vok) == 0xFF && tail_ok;
  }
  return true;
}
}  // namespace

bool slots_f32_avx2(const float* p, int n, float inv, int64_t origin, int32_t* slot, double& mn, double& mx,
                    bool& whole, const float* v, VolumeCheck* vc) {
  if (v != nullptr) return slots_f32_impl<true>(p, n, inv, origin, slot, mn, mx, whole, v, vc);
  return slots_f32_impl<false>(p, n, inv, origin, slot, mn, mx, whole, nullptr, nullptr);
}

}  // namespace vpoc::cpu::simd
