// cpu/slots.cpp — phase A of trade binning: scalar and SSE2 variants and the runtime dispatch.
// Contract: block_slots() picks the widest variant compiled in that simd::isa() (cpu/isa.hpp) allows.
#include "cpu/slots.hpp"

#include <cmath>

#include "cpu/slots_impl.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace vpoc::cpu::simd {

// One double per "vector": the portable fallback.
struct Scalar {
  using D = double;
  static constexpr int kWidth = 1;
  static D set(double x) { return x; }
  static D all_ones() { return 1.0; }  // "true"
  static D load(const double* p) { return *p; }
  static D load(const float* p) { return static_cast<double>(*p); }
  static D mul(D a, D b) { return a * b; }
  static D add(D a, D b) { return a + b; }
  static D sub(D a, D b) { return a - b; }
  static D abs(D a) { return std::fabs(a); }
  static D lt(D a, D b) { return a < b ? 1.0 : 0.0; }
  static D eq(D a, D b) { return a == b ? 1.0 : 0.0; }
  static D and_(D a, D mask) { return mask != 0.0 ? a : 0.0; }
  static D copysign(D mag, D sign) { return std::copysign(mag, sign); }
  static D min(D a, D b) { return b < a ? b : a; }
  static D max(D a, D b) { return b > a ? b : a; }
  static double hmin(D a) { return a; }
  static double hmax(D a) { return a; }
  static bool all(D a) { return a != 0.0; }
  static void store_i32(int32_t* out, D k) { *out = static_cast<int32_t>(k); }
};

template <class P>
bool slots_scalar(const P* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx,
                  bool& whole) {
  return slots_run<Scalar>(p, n, inv, origin, slot, mn, mx, whole);
}
template bool slots_scalar<double>(const double*, int, double, double, int32_t*, double&, double&, bool&);
template bool slots_scalar<float>(const float*, int, double, double, int32_t*, double&, double&, bool&);

#if defined(__SSE2__)
// Two doubles per vector (x86-64 baseline).
struct Sse2 {
  using D = __m128d;
  static constexpr int kWidth = 2;
  static D set(double x) { return _mm_set1_pd(x); }
  static D all_ones() { return _mm_castsi128_pd(_mm_set1_epi32(-1)); }
  static D load(const double* p) { return _mm_loadu_pd(p); }
  static D load(const float* p) {
    return _mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static D mul(D a, D b) { return _mm_mul_pd(a, b); }
  static D add(D a, D b) { return _mm_add_pd(a, b); }
  static D sub(D a, D b) { return _mm_sub_pd(a, b); }
  static D abs(D a) { return _mm_andnot_pd(_mm_set1_pd(-0.0), a); }
  static D lt(D a, D b) { return _mm_cmplt_pd(a, b); }
  static D eq(D a, D b) { return _mm_cmpeq_pd(a, b); }
  static D and_(D a, D mask) { return _mm_and_pd(a, mask); }
  static D copysign(D mag, D sign) {
    return _mm_or_pd(_mm_and_pd(sign, _mm_set1_pd(-0.0)), mag);
  }
  static D min(D a, D b) { return _mm_min_pd(a, b); }
  static D max(D a, D b) { return _mm_max_pd(a, b); }
  static double hmin(D a) { return _mm_cvtsd_f64(_mm_min_sd(a, _mm_unpackhi_pd(a, a))); }
  static double hmax(D a) { return _mm_cvtsd_f64(_mm_max_sd(a, _mm_unpackhi_pd(a, a))); }
  static bool all(D a) { return _mm_movemask_pd(a) == 3; }
  static void store_i32(int32_t* out, D k) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_cvttpd_epi32(k));
  }
};
#endif

namespace {
template <class P>
bool dispatch(const P* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx, bool& whole) {
#if defined(VPOC_HAVE_AVX512_SLOTS)
  static const bool avx512 = have_avx512();
  if (avx512) return slots_avx512(p, n, inv, origin, slot, mn, mx, whole);
#endif
#if defined(VPOC_HAVE_AVX2)
  static const bool avx2 = have_avx2();
  if (avx2) return slots_avx2(p, n, inv, origin, slot, mn, mx, whole);
#endif
#if defined(__SSE2__)
  static const bool sse2 = isa() >= Isa::sse2;  // VPOC_CPU_ISA=scalar: the portable loop
  if (sse2) return slots_run<Sse2>(p, n, inv, origin, slot, mn, mx, whole);
#endif
  return slots_scalar(p, n, inv, origin, slot, mn, mx, whole);
}
}  // namespace

}  // namespace vpoc::cpu::simd

namespace vpoc::cpu {
bool block_slots_f32(const float* p, int n, float inv, int64_t origin, int32_t* slot, double& mn,
                     double& mx, bool& whole, const float* v, VolumeCheck* vc) {
#if defined(VPOC_HAVE_AVX512_SLOTS)
  static const bool avx512 = simd::have_avx512();
  if (avx512) return simd::slots_f32_avx512(p, n, inv, origin, slot, mn, mx, whole, v, vc);
#endif
#if defined(VPOC_HAVE_AVX2)
  static const bool avx2 = simd::have_avx2();
  if (avx2) return simd::slots_f32_avx2(p, n, inv, origin, slot, mn, mx, whole, v, vc);
#endif
  (void)p, (void)n, (void)inv, (void)origin, (void)slot, (void)mn, (void)mx, (void)whole, (void)v, (void)vc;
  return false;
}

bool block_records_f32(const float* p, const float* v, int n, float inv, int64_t origin, int shift, uint64_t* rec, double& mn,
                       double& mx, bool& whole, VolumeCheck& vc, int* count) {
#if defined(VPOC_HAVE_AVX512_SLOTS)
  static const bool avx512 = simd::have_avx512();
  if (avx512) return simd::records_f32_avx512(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc, count);
#endif
  if (count != nullptr) *count = -1;
#if defined(VPOC_HAVE_AVX2)
  static const bool avx2 = simd::have_avx2();
  if (avx2) return simd::records_f32_avx2(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc);
#endif
  (void)p, (void)v, (void)n, (void)inv, (void)origin, (void)shift, (void)rec, (void)mn, (void)mx, (void)whole, (void)vc;
  return false;
}

template <class V>
static bool records_f32_other(const float* p, const V* v, int n, float inv, int64_t origin, int shift, uint64_t* rec,
                              double& mn, double& mx, bool& whole, VolumeCheck& vc, int* count) {
  if (count != nullptr) *count = -1;
#if defined(VPOC_HAVE_AVX512_SLOTS)
  static const bool avx512 = simd::have_avx512();
  if (avx512) return simd::records_f32_v_avx512(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc);
#endif
  (void)p, (void)v, (void)n, (void)inv, (void)origin, (void)shift, (void)rec, (void)mn, (void)mx, (void)whole, (void)vc;
  return false;
}
bool block_records_f32(const float* p, const double* v, int n, float inv, int64_t origin, int shift, uint64_t* rec,
                       double& mn, double& mx, bool& whole, VolumeCheck& vc, int* count) {
  return records_f32_other(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc, count);
}
bool block_records_f32(const float* p, const int32_t* v, int n, float inv, int64_t origin, int shift, uint64_t* rec,
                       double& mn, double& mx, bool& whole, VolumeCheck& vc, int* count) {
  return records_f32_other(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc, count);
}
bool block_records_f32(const float* p, const int64_t* v, int n, float inv, int64_t origin, int shift, uint64_t* rec,
                       double& mn, double& mx, bool& whole, VolumeCheck& vc, int* count) {
  return records_f32_other(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc, count);
}

// simd::have_cd512 once (it is asked for every block).
static bool entries_ok() {
  static const bool cd = simd::have_cd512();
  return cd;
}
bool have_entries() { return entries_ok(); }
bool block_entries_f32(const float* p, const float* v, int n, float inv, int64_t origin, uint32_t* off, uint32_t* sum,
                       int& m, double& mn, double& mx, bool& whole, VolumeCheck& vc, PendingEntries* pend) {
#if defined(VPOC_HAVE_AVX512_SLOTS)
  if (entries_ok()) return simd::entries_f32_cd512(p, v, n, inv, origin, off, sum, m, mn, mx, whole, vc, pend);
#endif
  (void)p, (void)v, (void)n, (void)inv, (void)origin, (void)off, (void)sum, (void)m, (void)mn, (void)mx, (void)whole, (void)vc;
  (void)pend;
  return false;
}
template <class V>
static bool entries_f64(const double* p, const V* v, int n, double inv, double origin, uint32_t* off, uint32_t* sum,
                        int& m, double& mn, double& mx, bool& whole, VolumeCheck& vc, PendingEntries* pend) {
#if defined(VPOC_HAVE_AVX512_SLOTS)
  if (entries_ok()) return simd::entries_f64_cd512(p, v, n, inv, origin, off, sum, m, mn, mx, whole, vc, pend);
#endif
  (void)p, (void)v, (void)n, (void)inv, (void)origin, (void)off, (void)sum, (void)m, (void)mn, (void)mx, (void)whole, (void)vc;
  (void)pend;
  return false;
}
bool block_entries_f64(const double* p, const double* v, int n, double inv, double origin, uint32_t* off,
                       uint32_t* sum, int& m, double& mn, double& mx, bool& whole, VolumeCheck& vc,
                       PendingEntries* pend) {
  return entries_f64(p, v, n, inv, origin, off, sum, m, mn, mx, whole, vc, pend);
}
bool block_entries_f64(const double* p, const int64_t* v, int n, double inv, double origin, uint32_t* off,
                       uint32_t* sum, int& m, double& mn, double& mx, bool& whole, VolumeCheck& vc,
                       PendingEntries* pend) {
  return entries_f64(p, v, n, inv, origin, off, sum, m, mn, mx, whole, vc, pend);
}

template <class V>
static bool records_dispatch(const double* p, const V* v, int n, double inv, double origin, int shift, uint64_t* rec, double& mn,
                             double& mx, bool& whole, VolumeCheck* vc) {
#if defined(VPOC_HAVE_AVX512_SLOTS)
  static const bool avx512 = simd::have_avx512();
  if (avx512) return simd::records_avx512(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc);
#endif
#if defined(VPOC_HAVE_AVX2)
  static const bool avx2 = simd::have_avx2();
  if (avx2) return simd::records_avx2(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc);
#endif
  (void)p, (void)v, (void)n, (void)inv, (void)origin, (void)shift, (void)rec, (void)mn, (void)mx, (void)whole, (void)vc;
  return false;
}
bool block_records(const double* p, const double* v, int n, double inv, double origin, int shift, uint64_t* rec, double& mn,
                   double& mx, bool& whole, VolumeCheck* vc) {
  return records_dispatch(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc);
}
bool block_records(const double* p, const float* v, int n, double inv, double origin, int shift, uint64_t* rec, double& mn,
                   double& mx, bool& whole, VolumeCheck* vc) {
  return records_dispatch(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc);
}
bool block_records(const double* p, const int32_t* v, int n, double inv, double origin, int shift, uint64_t* rec, double& mn,
                   double& mx, bool& whole, VolumeCheck* vc) {
  return records_dispatch(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc);
}
bool block_records(const double* p, const int64_t* v, int n, double inv, double origin, int shift, uint64_t* rec, double& mn,
                   double& mx, bool& whole, VolumeCheck* vc) {
  return records_dispatch(p, v, n, inv, origin, shift, rec, mn, mx, whole, vc);
}

// Float volumes on x86-64-v4 (AVX-512): volumes_ok_impl's loop as written, vectorised by the
// compiler with 64-bit integer max and mask registers (AVX2's VolumeLanes needs twice the
// instructions). Same operations: same results.
// GCC 12: the first whose __builtin_cpu_supports knows the x86-64-vN levels (GCC PR101696).
#if defined(VPOC_HAVE_AVX2) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define VPOC_HAVE_V4_VOLUMES 1
template <class T>
__attribute__((target("arch=x86-64-v4"), flatten)) static bool volumes_ok_v4(const T* v, int n, double& vmax,
                                                                              bool& whole) {
  return simd::volumes_ok_impl(v, n, vmax, whole);
}
#endif

template <class T>
static bool volumes_dispatch(const T* v, int n, double& vmax, bool& whole) {
#if defined(VPOC_HAVE_V4_VOLUMES)
  if constexpr (std::is_floating_point_v<T>) {
    static const bool v4 = simd::have_v4();
    if (v4) return volumes_ok_v4(v, n, vmax, whole);
  }
#endif
#if defined(VPOC_HAVE_AVX2)
  static const bool avx2 = simd::have_avx2();
  if (avx2) return simd::volumes_ok_avx2(v, n, vmax, whole);
#endif
  return simd::volumes_ok_impl(v, n, vmax, whole);
}
bool volumes_ok(const float* v, int n, double& vmax, bool& whole) { return volumes_dispatch(v, n, vmax, whole); }
bool volumes_ok(const double* v, int n, double& vmax, bool& whole) { return volumes_dispatch(v, n, vmax, whole); }
bool volumes_ok(const int32_t* v, int n, double& vmax, bool& whole) { return volumes_dispatch(v, n, vmax, whole); }
bool volumes_ok(const int64_t* v, int n, double& vmax, bool& whole) { return volumes_dispatch(v, n, vmax, whole); }

bool block_slots(const double* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx,
                 bool& whole) {
  return simd::dispatch(p, n, inv, origin, slot, mn, mx, whole);
}
bool block_slots(const float* p, int n, double inv, double origin, int32_t* slot, double& mn, double& mx,
                 bool& whole) {
  return simd::dispatch(p, n, inv, origin, slot, mn, mx, whole);
}
}  // namespace vpoc::cpu
