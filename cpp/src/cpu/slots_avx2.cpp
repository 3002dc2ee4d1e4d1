// cpu/slots_avx2.cpp — phase A of trade binning with AVX2 (this file alone is built with -mavx2), and AVX-512.
// Contract: identical results to the SSE2/scalar variants; each only called when the CPU reports its instruction set.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "cpu/slots.hpp"
#include "cpu/slots_avx2_lanes.hpp"
#include "cpu/slots_impl.hpp"

namespace vpoc::cpu::simd {


template <class P>
bool slots_avx2(const P* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx, bool& whole) {
  return slots_run<Avx2>(p, n, inv, origin, slot, mn, mx, whole);
}
template bool slots_avx2<double>(const double*, int, double, double, int32_t*, double&, double&, bool&);
template bool slots_avx2<float>(const float*, int, double, double, int32_t*, double&, double&, bool&);

#if defined(VPOC_HAVE_AVX512_SLOTS)
// slots_run<Avx2> eight at a time with AVX-512 (F + DQ; picked at run time when the CPU has them):
// slots_body's operations in the same order, the lane masks in mask registers (an invalid lane's
// k is +0.0, as and_ with a zero mask gives). The horizontal min / max may meet +0.0 and -0.0 in
// another order than with four lanes: both read as slot 0 (callers compare and truncate them).
#if defined(__clang__)
#define VPOC_AVX512_TARGET __attribute__((target("avx512f,avx512dq")))
#else  // GCC: a target attribute on a template does not reach the intrinsics it inlines; a pragma does
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 headers: _mm512_min_pd, max_pd, extractf64x4_pd
#pragma GCC diagnostic ignored "-Wuninitialized"        // (its bug 105593)
#define VPOC_AVX512_TARGET
#endif
// slots_body's tick rule for eight float64 prices, one home for both AVX-512 float64 variants
// (slots_avx512, records_512): add(x) gives the lanes' slots k (clamped; +0.0 where a price is not
// valid) and folds them into the masks and the range; range() the vectors' mn / mx and whole, and
// whether every price was valid (what slots_tail then widens).
struct Ticks512 {
  __m512d vinv, vorg, lim, sign, clamp_lo, clamp_hi, lo, hi;
  __mmask8 valid = 0xFF, wh = 0xFF;
  VPOC_AVX512_TARGET Ticks512(double inv, double origin)
      : vinv(_mm512_set1_pd(inv)), vorg(_mm512_set1_pd(origin)), lim(_mm512_set1_pd(ladder::kMaxTicks)),
        sign(_mm512_set1_pd(-0.0)), clamp_lo(_mm512_set1_pd(-2e9)), clamp_hi(_mm512_set1_pd(2e9)),
        lo(_mm512_set1_pd(INFINITY)), hi(_mm512_set1_pd(-INFINITY)) {}
  VPOC_AVX512_TARGET __m512d add(__m512d x) {
    const __m512d q = _mm512_mul_pd(x, vinv);
    const __mmask8 ok = _mm512_cmp_pd_mask(_mm512_andnot_pd(sign, q), lim, _CMP_LT_OQ);
    valid &= ok;
    const __m512d m = _mm512_or_pd(_mm512_and_pd(q, sign), lim);
    const __m512d rounded = _mm512_sub_pd(_mm512_add_pd(q, m), m);
    wh &= _mm512_cmp_pd_mask(rounded, q, _CMP_EQ_OQ);
    __m512d k = _mm512_maskz_mov_pd(ok, _mm512_sub_pd(rounded, vorg));
    k = _mm512_min_pd(_mm512_max_pd(k, clamp_lo), clamp_hi);
    lo = _mm512_min_pd(lo, k);
    hi = _mm512_max_pd(hi, k);
    return k;
  }
  VPOC_AVX512_TARGET bool range(double& mn, double& mx, bool& whole) const {
    const __m256d lo4 = _mm256_min_pd(_mm512_castpd512_pd256(lo), _mm512_extractf64x4_pd(lo, 1));
    const __m256d hi4 = _mm256_max_pd(_mm512_castpd512_pd256(hi), _mm512_extractf64x4_pd(hi, 1));
    mn = Avx2::hmin(lo4);
    mx = Avx2::hmax(hi4);
    whole = wh == 0xFF;
    return valid == 0xFF;
  }
};
template <class P>
VPOC_AVX512_TARGET bool slots_avx512(const P* p, int n, double inv, double origin, int32_t* slot, double& mn,
                                     double& mx, bool& whole) {
  Ticks512 tk(inv, origin);
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    __m512d x;
    if constexpr (std::is_same_v<P, float>) x = _mm512_cvtps_pd(_mm256_loadu_ps(p + j));
    else x = _mm512_loadu_pd(p + j);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(slot + j), _mm512_cvttpd_epi32(tk.add(x)));
  }
  bool ok = tk.range(mn, mx, whole);
  slots_tail(p, j, n, inv, origin, slot, mn, mx, ok, whole);  // as slots_run
  return ok;
}
template bool slots_avx512<double>(const double*, int, double, double, int32_t*, double&, double&, bool&);
template bool slots_avx512<float>(const float*, int, double, double, int32_t*, double&, double&, bool&);

// Eight volumes' 32-bit words (cpu/slots.hpp volume_word where it matters: whole and below 2**31).
VPOC_AVX512_TARGET inline __m256i volume_words(const double* v) { return _mm512_cvttpd_epi32(_mm512_loadu_pd(v)); }
VPOC_AVX512_TARGET inline __m256i volume_words(const float* v) { return _mm256_cvttps_epi32(_mm256_loadu_ps(v)); }
VPOC_AVX512_TARGET inline __m256i volume_words(const int32_t* v) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v));
}
VPOC_AVX512_TARGET inline __m256i volume_words(const int64_t* v) {
  return _mm512_cvtepi64_epi32(_mm512_loadu_si512(reinterpret_cast<const void*>(v)));
}

// Eight float volumes as float64 (exact), for the volume check.
VPOC_AVX512_TARGET inline __m512d volumes_pd(const double* v) { return _mm512_loadu_pd(v); }
VPOC_AVX512_TARGET inline __m512d volumes_pd(const float* v) { return _mm512_cvtps_pd(_mm256_loadu_ps(v)); }
// Eight integer volumes in 64-bit lanes (sign-extended), for the bitwise OR of the volume check.
VPOC_AVX512_TARGET inline __m512i volumes_epi64(const int32_t* v) {
  return _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v)));
}
VPOC_AVX512_TARGET inline __m512i volumes_epi64(const int64_t* v) {
  return _mm512_loadu_si512(reinterpret_cast<const void*>(v));
}

// The volumes' check of the AVX-512 record loops (volumes_ok_impl's rule). Float volumes eight at a
// time in float64, where a float32 one is exact (the same bounds, and a float32 from 2**23 up is a
// whole float64; the maximum by vmaxpd, which differs from the integer one only in a zero's sign);
// then the block's tail [from, n) one at a time. Integer ones by their bitwise OR (all: the vectors'
// lanes), the tail's OR'ed in, then volume_verdict.
VPOC_AVX512_TARGET inline void check_pd(__m512d x, __mmask8& ok, __mmask8& wh, __m512d& mx) {
  ok &= static_cast<__mmask8>(_mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_EQ_OQ) |
                              (_mm512_cmp_pd_mask(x, _mm512_set1_pd(2.3283064365386963e-10), _CMP_GE_OQ) &
                               _mm512_cmp_pd_mask(x, _mm512_set1_pd(9007199254740992.0), _CMP_LE_OQ)));
  const __m512d big = _mm512_set1_pd(4503599627370496.0);
  wh &= _mm512_cmp_pd_mask(_mm512_sub_pd(_mm512_add_pd(x, big), big), x, _CMP_EQ_OQ);
  mx = _mm512_max_pd(mx, x);
}
template <class V>
VPOC_AVX512_TARGET inline void finish_pd(const V* v, int from, int n, __mmask8 ok, __mmask8 wh, __m512d mx,
                                         VolumeCheck* vc) {
  double tail_max = 0.0;
  bool tail_whole = true;
  const bool tail_ok = volumes_ok_impl(v + from, n - from, tail_max, tail_whole);
  const __m256d m4 = _mm256_max_pd(_mm512_castpd512_pd256(mx), _mm512_extractf64x4_pd(mx, 1));
  vc->vmax = std::max(Avx2::hmax(m4), tail_max);
  vc->whole = wh == 0xFF && tail_whole;
  vc->ok = ok == 0xFF && tail_ok;
}
template <class V>
inline void finish_int(VolumeAcc<V> all, const V* v, int from, int n, VolumeCheck* vc) {
  for (int t = from; t < n; ++t) all |= v[t];
  vc->ok = volume_verdict(v, n, 1, 1, all, vc->vmax, vc->whole);
}

// slots_avx512 for float64 prices, writing records (cpu/slots.hpp): the same slots, range and flags.
// Vol: the volumes' check in the same pass into *vc (check_pd / finish_pd, finish_int).
template <bool Vol, class V>
VPOC_AVX512_TARGET bool records_512(const double* p, const V* v, int n, double inv, double origin, int shift,
                                    uint64_t* rec, double& mn, double& mx, bool& whole, VolumeCheck* vc) {
  __mmask8 vok = 0xFF, vwh = 0xFF;
  __m512d vmx = _mm512_setzero_pd();
  __m512i any = _mm512_setzero_si512();
  const __m512i interleave = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  Ticks512 tk(inv, origin);
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    fetch_ahead(p + j, v + j);
    const __m512d k = tk.add(_mm512_loadu_pd(p + j));
    const __m256i off = _mm256_sll_epi32(_mm512_cvttpd_epi32(k), _mm_cvtsi32_si128(shift));
    const __m512i r = _mm512_permutex2var_epi32(_mm512_castsi256_si512(off), interleave,
                                                _mm512_castsi256_si512(volume_words(v + j)));
    _mm512_storeu_si512(reinterpret_cast<void*>(rec + j), r);
    if constexpr (Vol && !std::is_floating_point_v<V>) any = _mm512_or_si512(any, volumes_epi64(v + j));
    if constexpr (Vol && std::is_floating_point_v<V>) check_pd(volumes_pd(v + j), vok, vwh, vmx);
  }
  bool ok = tk.range(mn, mx, whole);
  int32_t tail[8];
  slots_tail(p + j, 0, n - j, inv, origin, tail, mn, mx, ok, whole);  // as slots_run
  for (int t = 0; j + t < n; ++t)
    rec[j + t] = static_cast<uint32_t>(static_cast<uint32_t>(tail[t]) << shift) | uint64_t{volume_word(v[j + t])} << 32;
  // int32: the sign-extended lanes' OR, narrowed
  if constexpr (Vol && !std::is_floating_point_v<V>) finish_int(static_cast<V>(_mm512_reduce_or_epi64(any)), v, j, n, vc);
  if constexpr (Vol && std::is_floating_point_v<V>) finish_pd(v, j, n, vok, vwh, vmx, vc);
  return ok;
}

template <class V>
VPOC_AVX512_TARGET bool records_avx512(const double* p, const V* v, int n, double inv, double origin, int shift,
                                       uint64_t* rec, double& mn, double& mx, bool& whole, VolumeCheck* vc) {
  if (vc != nullptr) return records_512<true>(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc);
  return records_512<false>(p, v, n, inv, origin, shift, rec, mn, mx, whole, nullptr);
}
template bool records_avx512<double>(const double*, const double*, int, double, double, int, uint64_t*, double&, double&,
                                     bool&, VolumeCheck*);
template bool records_avx512<float>(const double*, const float*, int, double, double, int, uint64_t*, double&, double&,
                                    bool&, VolumeCheck*);
template bool records_avx512<int32_t>(const double*, const int32_t*, int, double, double, int, uint64_t*, double&,
                                      double&, bool&, VolumeCheck*);
template bool records_avx512<int64_t>(const double*, const int64_t*, int, double, double, int, uint64_t*, double&,
                                      double&, bool&, VolumeCheck*);
#if !defined(__clang__)
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif
#endif

template <class V>
bool volumes_ok_avx2(const V* v, int n, double& vmax, bool& whole) {
  return volumes_ok_impl(v, n, vmax, whole);
}

// AVX2 lanes of float32 (8) or float64 (4) volumes: what the volume check needs of each. The
// operations both spell alike but for the intrinsics' suffix (ps / pd) are written once, here.
#define VPOC_LANE_OPS(S)                                                           \
  static R load(const T* p) { return _mm256_loadu_##S(p); }                        \
  static R ones() { return _mm256_castsi256_##S(_mm256_set1_epi32(-1)); }          \
  static R ge(R a, R b) { return _mm256_cmp_##S(a, b, _CMP_GE_OQ); }               \
  static R le(R a, R b) { return _mm256_cmp_##S(a, b, _CMP_LE_OQ); }               \
  static R eq(R a, R b) { return _mm256_cmp_##S(a, b, _CMP_EQ_OQ); }               \
  static R and_(R a, R b) { return _mm256_and_##S(a, b); }                         \
  static R or_(R a, R b) { return _mm256_or_##S(a, b); }                           \
  static R add(R a, R b) { return _mm256_add_##S(a, b); }                          \
  static R sub(R a, R b) { return _mm256_sub_##S(a, b); }                          \
  static R max(R a, R b) { return _mm256_max_##S(a, b); }                          \
  static int mask(R a) { return _mm256_movemask_##S(a); }
template <class T>
struct Lanes;
template <>
struct Lanes<float> {
  using T = float;
  using R = __m256;
  static constexpr int kWidth = 8, kAll = 0xFF;
  VPOC_LANE_OPS(ps)
  static R set(double x) { return _mm256_set1_ps(static_cast<float>(x)); }
  static double hmax(R a) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return static_cast<double>(_mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1))));
  }
};
template <>
struct Lanes<double> {
  using T = double;
  using R = __m256d;
  static constexpr int kWidth = 4, kAll = 0xF;
  VPOC_LANE_OPS(pd)
  static R set(double x) { return _mm256_set1_pd(x); }
  static double hmax(R a) {
    const __m128d m = _mm_max_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
    return _mm_cvtsd_f64(_mm_max_sd(m, _mm_unpackhi_pd(m, m)));
  }
};
#undef VPOC_LANE_OPS

// volumes_ok_impl's check of float volumes, fed a vector at a time, the maximum by vmaxps / vmaxpd
// (AVX2 has no int64 max, whose emulation by compares and blends cost as much as reading the
// prices; a NaN makes `ok` false, so what the max does with it does not matter).
template <class T>
struct VolumeLanes {
  using L = Lanes<T>;
  using R = typename L::R;
  static constexpr bool kF32 = sizeof(T) == 4;
  // volume_in_range's bounds; kWhole: adding and removing it keeps a whole number below it
  const R zero = L::set(0.0), lo = L::set(2.3283064365386963e-10), hi = L::set(9007199254740992.0),
          big = L::set(kF32 ? 8388608.0 : 4503599627370496.0);
  R ok = L::ones(), wh = L::ones(), mx = L::set(0.0);

  void add(R x) {
    ok = L::and_(ok, L::or_(L::eq(x, zero), L::and_(L::ge(x, lo), L::le(x, hi))));
    R whole = L::eq(L::sub(L::add(x, big), big), x);
    if (kF32) whole = L::or_(whole, L::ge(x, big));  // every float from 2**23 up is whole
    wh = L::and_(wh, whole);
    mx = L::max(mx, x);
  }
  // With the scalar check of the n values at tail: volumes_ok's results.
  bool finish(const T* tail, int n, double& vmax, bool& whole) const {
    double tail_max = 0.0;
    bool tail_whole = true;
    const bool tail_ok = volumes_ok_impl(tail, n, tail_max, tail_whole);
    vmax = std::max(L::hmax(mx), tail_max);
    whole = L::mask(wh) == L::kAll && tail_whole;
    return L::mask(ok) == L::kAll && tail_ok;
  }
};

template <class T>
bool volumes_ok_lanes(const T* v, int n, double& vmax, bool& whole) {
  VolumeLanes<T> acc;
  int j = 0;
  for (; j + Lanes<T>::kWidth <= n; j += Lanes<T>::kWidth) acc.add(Lanes<T>::load(v + j));
  return acc.finish(v + j, n - j, vmax, whole);
}

template <>
bool volumes_ok_avx2<double>(const double* v, int n, double& vmax, bool& whole) {
  return volumes_ok_lanes(v, n, vmax, whole);
}
template <>
bool volumes_ok_avx2<float>(const float* v, int n, double& vmax, bool& whole) {
  return volumes_ok_lanes(v, n, vmax, whole);
}
template bool volumes_ok_avx2<int32_t>(const int32_t*, int, double&, bool&);
template bool volumes_ok_avx2<int64_t>(const int64_t*, int, double&, bool&);

// The min of l4's four lanes and the max of h4's, in registers (a stack array here made GCC keep
// the vectors in memory).
inline void hminmax4(__m128i l4, __m128i h4, int32_t& l, int32_t& h) {
  l4 = _mm_min_epi32(l4, _mm_shuffle_epi32(l4, _MM_SHUFFLE(1, 0, 3, 2)));
  h4 = _mm_max_epi32(h4, _mm_shuffle_epi32(h4, _MM_SHUFFLE(1, 0, 3, 2)));
  l4 = _mm_min_epi32(l4, _mm_shuffle_epi32(l4, _MM_SHUFFLE(2, 3, 0, 1)));
  h4 = _mm_max_epi32(h4, _mm_shuffle_epi32(h4, _MM_SHUFFLE(2, 3, 0, 1)));
  l = _mm_cvtsi128_si32(l4);
  h = _mm_cvtsi128_si32(h4);
}

// Prices [j, n) of a block after its vectors, float32 with a power-of-two tick, one at a time
// (the AVX2 and AVX-512 variants end their blocks here): false when a price is out of range.
// With rec (records, cpu/slots.hpp) the slots go there, beside the volumes' words, instead of slot.
template <class V = float>
inline bool slots_f32_tail(const float* p, int j, int n, float inv, int32_t org, int32_t* slot, int32_t& l, int32_t& h,
                           bool& all_whole, uint64_t* rec = nullptr, const V* v = nullptr, int shift = 0) {
  constexpr float kLim = 8388608.0f;  // 2**23: below it, adding and removing 2**23 rounds to integer
  for (; j < n; ++j) {
    const float q = p[j] * inv;
    if (!(std::fabs(q) < kLim)) return false;
    const float m = std::copysign(kLim, q);
    all_whole &= ((q + m) - m) == q;
    const int32_t k = static_cast<int32_t>((q + m) - m) - org;
    l = std::min(l, k), h = std::max(h, k);
    if (rec != nullptr) rec[j] = static_cast<uint32_t>(static_cast<uint32_t>(k) << shift) | uint64_t{volume_word(v[j])} << 32;
    else slot[j] = k;
  }
  return true;
}

namespace {
// Eight records (cpu/slots.hpp) from eight slots and eight volume words, in order.
inline void store_records(uint64_t* rec, __m256i k, __m256i w) {
  const __m256i lo = _mm256_unpacklo_epi32(k, w), hi = _mm256_unpackhi_epi32(k, w);  // 0 1 4 5, 2 3 6 7
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(rec), _mm256_permute2x128_si256(lo, hi, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(rec + 4), _mm256_permute2x128_si256(lo, hi, 0x31));
}

// slots_f32_avx2, and with Vol the float32 volumes' check (volumes_ok) in the same loop: one pass
// over the block instead of two. With Rec (and Vol) records into rec instead of slots.
template <bool Vol, bool Rec = false>
bool slots_f32_impl(const float* p, int n, float inv, int64_t origin, int32_t* slot, double& mn, double& mx,
                    bool& whole, const float* v, VolumeCheck* vc, uint64_t* rec = nullptr, int shift = 0) {
  static_assert(Vol || !Rec, "records need the volumes");
  constexpr float kLim = 8388608.0f;  // 2**23: below it, adding and removing 2**23 rounds to integer
  if (origin <= -(int64_t(1) << 30) || origin >= (int64_t(1) << 30)) return false;
  const auto org = static_cast<int32_t>(origin);
  const __m256 vinv = _mm256_set1_ps(inv), lim = _mm256_set1_ps(kLim), sign = _mm256_set1_ps(-0.0f);
  const __m256i vorg = _mm256_set1_epi32(org);
  __m256i lo = _mm256_set1_epi32(std::numeric_limits<int32_t>::max());
  __m256i hi = _mm256_set1_epi32(std::numeric_limits<int32_t>::min());
  __m256 valid = _mm256_castsi256_ps(_mm256_set1_epi32(-1)), wh = valid;
  VolumeLanes<float> vol;  // the volumes' check, as volumes_ok_avx2<float>
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    if constexpr (Rec) fetch_ahead(p + j, v + j);
    const __m256 q = _mm256_mul_ps(_mm256_loadu_ps(p + j), vinv);
    valid = _mm256_and_ps(valid, _mm256_cmp_ps(_mm256_andnot_ps(sign, q), lim, _CMP_LT_OQ));
    const __m256 m = _mm256_or_ps(_mm256_and_ps(q, sign), lim);
    const __m256 rounded = _mm256_sub_ps(_mm256_add_ps(q, m), m);
    wh = _mm256_and_ps(wh, _mm256_cmp_ps(rounded, q, _CMP_EQ_OQ));
    const __m256i k = _mm256_sub_epi32(_mm256_cvttps_epi32(rounded), vorg);
    lo = _mm256_min_epi32(lo, k);
    hi = _mm256_max_epi32(hi, k);
    if constexpr (Vol) {
      const __m256 x = Lanes<float>::load(v + j);
      vol.add(x);
      if constexpr (Rec) store_records(rec + j, _mm256_sll_epi32(k, _mm_cvtsi32_si128(shift)), _mm256_cvttps_epi32(x));
    }
    if constexpr (!Rec) _mm256_storeu_si256(reinterpret_cast<__m256i*>(slot + j), k);
  }
  if (_mm256_movemask_ps(valid) != 0xFF) return false;
  // Horizontal min / max in registers (a stack array here made GCC keep lo/hi in memory).
  __m128i l4 = _mm_min_epi32(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1));
  __m128i h4 = _mm_max_epi32(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1));
  int32_t l, h;
  hminmax4(l4, h4, l, h);
  bool all_whole = _mm256_movemask_ps(wh) == 0xFF;
  const int tail = j;
  if (!slots_f32_tail(p, j, n, inv, org, slot, l, h, all_whole, Rec ? rec : nullptr, v, shift)) return false;
  mn = l;
  mx = h;
  whole = all_whole;
  if constexpr (Vol) vc->ok = vol.finish(v + tail, n - tail, vc->vmax, vc->whole);
  return true;
}
}  // namespace

bool slots_f32_avx2(const float* p, int n, float inv, int64_t origin, int32_t* slot, double& mn, double& mx,
                    bool& whole, const float* v, VolumeCheck* vc) {
  if (v != nullptr) return slots_f32_impl<true>(p, n, inv, origin, slot, mn, mx, whole, v, vc);
  return slots_f32_impl<false>(p, n, inv, origin, slot, mn, mx, whole, nullptr, nullptr);
}

bool records_f32_avx2(const float* p, const float* v, int n, float inv, int64_t origin, int shift, uint64_t* rec, double& mn,
                      double& mx, bool& whole, VolumeCheck& vc) {
  return slots_f32_impl<true, true>(p, n, inv, origin, nullptr, mn, mx, whole, v, &vc, rec, shift);
}

#if defined(VPOC_HAVE_AVX512_SLOTS)
#if !defined(__clang__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 headers (its bug 105593)
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
namespace {
// slots_f32_impl sixteen at a time with AVX-512: the same operations, the lane masks in mask
// registers; the volumes' check as VolumeLanes<float> does it (its maximum may differ from the
// AVX2 one only in the sign of a zero maximum, which no caller can tell: it is compared with bounds).
// Merge (with Rec): merged records (cpu/slots.hpp block_records_f32), their number in *count.
// V: float32 volumes, or (records only) float64 ones checked as records_512 does, or integer ones
// (their bitwise OR, then volume_verdict: volumes_ok's rule).
template <bool Vol, bool Rec = false, bool Merge = false, class V = float>
VPOC_AVX512_TARGET bool slots_f32_512(const float* p, int n, float inv, int64_t origin, int32_t* slot, double& mn,
                                      double& mx, bool& whole, const V* v, VolumeCheck* vc,
                                      uint64_t* rec = nullptr, int shift = 0, int* count = nullptr) {
  static_assert(Vol || !Rec, "records need the volumes");
  static_assert(Rec || !Merge, "merged records are records");
  static_assert(std::is_same_v<V, float> || (Rec && !Merge), "other volumes: unmerged records only");
  constexpr bool kF32 = std::is_same_v<V, float>, kF64 = std::is_same_v<V, double>;
  __m512i any = _mm512_setzero_si512();  // integer volumes: their OR
  __mmask8 vokd = 0xFF, vwhd = 0xFF;     // float64 volumes: check_pd's
  __m512d vmxd = _mm512_setzero_pd();
  // Merge: prevk the previous vector's slots, base the volume words' sum before this vector (all
  // lanes, mod 2**32), first the lanes that may start a run (not the block's first), m records so far
  __m512i prevk = _mm512_setzero_si512(), base = _mm512_setzero_si512();
  const __m512i izero = _mm512_setzero_si512(), lane15 = _mm512_set1_epi32(15);
  __mmask16 first = 0xFFFE;
  int m_out = 0;
  // records: slot and volume word of lanes 0-7, then 8-15, interleaved (cpu/slots.hpp)
  const __m512i rec_lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i rec_hi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
  constexpr float kLim = 8388608.0f;
  if (origin <= -(int64_t(1) << 30) || origin >= (int64_t(1) << 30)) return false;
  const auto org = static_cast<int32_t>(origin);
  const __m512 vinv = _mm512_set1_ps(inv), lim = _mm512_set1_ps(kLim), sign = _mm512_set1_ps(-0.0f);
  const __m512i vorg = _mm512_set1_epi32(org);
  __m512i lo = _mm512_set1_epi32(std::numeric_limits<int32_t>::max());
  __m512i hi = _mm512_set1_epi32(std::numeric_limits<int32_t>::min());
  __mmask16 valid = 0xFFFF, wh = 0xFFFF;
  // the volumes' check (VolumeLanes<float>)
  const __m512 zero = _mm512_set1_ps(0.0f), vlo = _mm512_set1_ps(2.3283064365386963e-10f),
               vhi = _mm512_set1_ps(9007199254740992.0f), big = _mm512_set1_ps(8388608.0f);
  __mmask16 vok = 0xFFFF, vwh = 0xFFFF;
  __m512 vmx = _mm512_set1_ps(0.0f);
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    if constexpr (Vol) fetch_ahead(p + j, v + j);
    const __m512 q = _mm512_mul_ps(_mm512_loadu_ps(p + j), vinv);
    valid &= _mm512_cmp_ps_mask(_mm512_andnot_ps(sign, q), lim, _CMP_LT_OQ);
    const __m512 m = _mm512_or_ps(_mm512_and_ps(q, sign), lim);
    const __m512 rounded = _mm512_sub_ps(_mm512_add_ps(q, m), m);
    wh &= _mm512_cmp_ps_mask(rounded, q, _CMP_EQ_OQ);
    const __m512i k = _mm512_sub_epi32(_mm512_cvttps_epi32(rounded), vorg);
    lo = _mm512_min_epi32(lo, k);
    hi = _mm512_max_epi32(hi, k);
    if constexpr (!Rec) _mm512_storeu_si512(reinterpret_cast<void*>(slot + j), k);
    if constexpr (Vol) {
      __m512i w;  // the sixteen volume words (cpu/slots.hpp volume_word)
      if constexpr (kF32) {
        const __m512 x = _mm512_loadu_ps(v + j);
        vok &= static_cast<__mmask16>(_mm512_cmp_ps_mask(x, zero, _CMP_EQ_OQ) |
                                      (_mm512_cmp_ps_mask(x, vlo, _CMP_GE_OQ) & _mm512_cmp_ps_mask(x, vhi, _CMP_LE_OQ)));
        vwh &= static_cast<__mmask16>(_mm512_cmp_ps_mask(_mm512_sub_ps(_mm512_add_ps(x, big), big), x, _CMP_EQ_OQ) |
                                      _mm512_cmp_ps_mask(x, big, _CMP_GE_OQ));
        vmx = _mm512_max_ps(vmx, x);
        w = _mm512_cvttps_epi32(x);
      } else if constexpr (kF64) {
        __m256i half[2];
        for (int hf = 0; hf < 2; ++hf) {
          const __m512d x = _mm512_loadu_pd(v + j + 8 * hf);
          check_pd(x, vokd, vwhd, vmxd);
          half[hf] = _mm512_cvttpd_epi32(x);
        }
        w = _mm512_inserti64x4(_mm512_castsi256_si512(half[0]), half[1], 1);
      } else if constexpr (sizeof(V) == 4) {
        w = _mm512_loadu_si512(reinterpret_cast<const void*>(v + j));
        any = _mm512_or_si512(any, w);
      } else {
        const __m512i a = _mm512_loadu_si512(reinterpret_cast<const void*>(v + j));
        const __m512i b = _mm512_loadu_si512(reinterpret_cast<const void*>(v + j + 8));
        any = _mm512_or_si512(any, _mm512_or_si512(a, b));
        w = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(a)), _mm512_cvtepi64_epi32(b), 1);
      }
      if constexpr (Rec && !Merge) {
        const __m512i off = _mm512_sll_epi32(k, _mm_cvtsi32_si128(shift));
        _mm512_storeu_si512(reinterpret_cast<void*>(rec + j), _mm512_permutex2var_epi32(off, rec_lo, w));
        _mm512_storeu_si512(reinterpret_cast<void*>(rec + j + 8), _mm512_permutex2var_epi32(off, rec_hi, w));
      }
      if constexpr (Merge) {
        // a run starts where the slot differs from the one before; at each start, a record of the
        // run before it: its slot's offset and the volume words' sum before the start (mod 2**32)
        __m512i in = _mm512_add_epi32(w, _mm512_alignr_epi32(w, izero, 15));  // inclusive prefix sums
        in = _mm512_add_epi32(in, _mm512_alignr_epi32(in, izero, 14));
        in = _mm512_add_epi32(in, _mm512_alignr_epi32(in, izero, 12));
        in = _mm512_add_epi32(in, _mm512_alignr_epi32(in, izero, 8));
        const __m512i before = _mm512_add_epi32(_mm512_sub_epi32(in, w), base);
        base = _mm512_add_epi32(base, _mm512_permutexvar_epi32(lane15, in));
        const __m512i kp = _mm512_alignr_epi32(k, prevk, 15);  // each lane's previous slot
        prevk = k;
        const __mmask16 starts = _mm512_cmpneq_epi32_mask(k, kp) & first;
        first = 0xFFFF;
        const __m512i off = _mm512_maskz_compress_epi32(starts, _mm512_sll_epi32(kp, _mm_cvtsi32_si128(shift)));
        const __m512i sum = _mm512_maskz_compress_epi32(starts, before);
        _mm512_storeu_si512(reinterpret_cast<void*>(rec + m_out), _mm512_permutex2var_epi32(off, rec_lo, sum));
        _mm512_storeu_si512(reinterpret_cast<void*>(rec + m_out + 8), _mm512_permutex2var_epi32(off, rec_hi, sum));
        m_out += __builtin_popcount(starts);
      }
    }
  }
  if (valid != 0xFFFF) return false;
  const __m256i lo8 = _mm256_min_epi32(_mm512_castsi512_si256(lo), _mm512_extracti64x4_epi64(lo, 1));
  const __m256i hi8 = _mm256_max_epi32(_mm512_castsi512_si256(hi), _mm512_extracti64x4_epi64(hi, 1));
  __m128i l4 = _mm_min_epi32(_mm256_castsi256_si128(lo8), _mm256_extracti128_si256(lo8, 1));
  __m128i h4 = _mm_max_epi32(_mm256_castsi256_si128(hi8), _mm256_extracti128_si256(hi8, 1));
  int32_t l, h;
  hminmax4(l4, h4, l, h);
  bool all_whole = wh == 0xFFFF;
  const int tail = j;
  if constexpr (Merge) {  // the tail's records one at a time, then the last run's
    uint64_t t_rec[16];
    if (!slots_f32_tail(p + j, 0, n - j, inv, org, nullptr, l, h, all_whole, t_rec, v + j, shift)) return false;
    uint32_t poff = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm512_castsi512_si128(_mm512_permutexvar_epi32(lane15, prevk))))
                    << shift;
    auto sum = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm512_castsi512_si128(base)));
    for (int t = 0; j + t < n; ++t) {
      const auto o = static_cast<uint32_t>(t_rec[t]);
      if (j + t > 0 && o != poff) rec[m_out++] = poff | uint64_t{sum} << 32;
      sum += static_cast<uint32_t>(t_rec[t] >> 32);
      poff = o;
    }
    if (n > 0) rec[m_out++] = poff | uint64_t{sum} << 32;
    *count = m_out;
  } else if (!slots_f32_tail(p, j, n, inv, org, slot, l, h, all_whole, Rec ? rec : nullptr, v, shift)) {
    return false;  // as slots_f32_impl
  }
  mn = l;
  mx = h;
  whole = all_whole;
  if constexpr (Vol && !kF32 && !kF64) {
    finish_int(static_cast<V>(sizeof(V) == 4 ? _mm512_reduce_or_epi32(any) : _mm512_reduce_or_epi64(any)), v, tail, n, vc);
  } else if constexpr (kF64) {
    finish_pd(v, tail, n, vokd, vwhd, vmxd, vc);
  } else if constexpr (Vol) {
    double tail_max = 0.0;
    bool tail_whole = true;
    const bool tail_ok = volumes_ok_impl(v + tail, n - tail, tail_max, tail_whole);
    const __m256 m8 = _mm256_max_ps(_mm512_castps512_ps256(vmx),
                                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(vmx), 1)));
    vc->vmax = std::max(Lanes<float>::hmax(m8), tail_max);
    vc->whole = vwh == 0xFFFF && tail_whole;
    vc->ok = vok == 0xFFFF && tail_ok;
  }
  return true;
}
}  // namespace

VPOC_AVX512_TARGET bool slots_f32_avx512(const float* p, int n, float inv, int64_t origin, int32_t* slot, double& mn,
                                         double& mx, bool& whole, const float* v, VolumeCheck* vc) {
  if (v != nullptr) return slots_f32_512<true>(p, n, inv, origin, slot, mn, mx, whole, v, vc);
  return slots_f32_512<false>(p, n, inv, origin, slot, mn, mx, whole, static_cast<const float*>(nullptr), nullptr);
}

#include "cpu/records_f32_512.hpp"
#include "cpu/records_cd512.hpp"
VPOC_AVX512_TARGET bool records_f32_avx512(const float* p, const float* v, int n, float inv, int64_t origin, int shift,
                                           uint64_t* rec, double& mn, double& mx, bool& whole, VolumeCheck& vc,
                                           int* count) {
  if (count == nullptr && records_f32_whole512(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc)) return true;
  if (count != nullptr) return slots_f32_512<true, true, true>(p, n, inv, origin, nullptr, mn, mx, whole, v, &vc, rec,
                                                               shift, count);
  return slots_f32_512<true, true>(p, n, inv, origin, nullptr, mn, mx, whole, v, &vc, rec, shift);
}
template <class V>
VPOC_AVX512_TARGET bool records_f32_v_avx512(const float* p, const V* v, int n, float inv, int64_t origin, int shift,
                                             uint64_t* rec, double& mn, double& mx, bool& whole, VolumeCheck& vc) {
  return slots_f32_512<true, true, false, V>(p, n, inv, origin, nullptr, mn, mx, whole, v, &vc, rec, shift);
}
#define VPOC_RECORDS_F32(V) \
  template bool records_f32_v_avx512<V>(const float*, const V*, int, float, int64_t, int, uint64_t*, double&, double&, \
                                        bool&, VolumeCheck&);
VPOC_RECORDS_F32(double)
VPOC_RECORDS_F32(int32_t)
VPOC_RECORDS_F32(int64_t)
#undef VPOC_RECORDS_F32
#if !defined(__clang__)
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif
#endif

}  // namespace vpoc::cpu::simd
