// cpu/records_f32_512.hpp — a short AVX-512 phase A for float32 trades whose volumes are whole and below 2**31.
// Contract: included only by cpu/slots_avx2.cpp in its AVX-512 region; true: slots_f32_512's records, range and flags exactly.
#pragma once

// slots_f32_512<true, true> (records of float32 prices and volumes, unmerged) in fewer operations
// a vector, for the common block: every price valid and every volume a whole number in [0, 2**31).
// The prices' ticks by one rounding conversion (round half to even, as adding and removing 2**23
// does below 2**23), the grid test by converting back (exact there), the range test from the
// ticks' min / max after the loop (a tick beyond +-(2**23 - 1), or NaN / inf's 0x80000000, fails
// it; a price in (2**23 - 0.5, 2**23) fails here and passes there). A volume x is whole and in range
// when converting cvtt(x) back gives x and cvtt(x) < 2**31 unsigned (negatives are >= 2**31 there):
// volumes_ok's verdict is then ok and whole, its maximum max(cvtt(x)). False: nothing is promised
// (rec written in part): the caller runs slots_f32_512, which decides. The first vector's volumes
// are tested before the loop: blocks of fractional volumes give up after 16 trades, not 1024.
// 30 instructions a vector instead of 53: phase A alone 0.12 ns a trade in cache on a 2-core EPYC
// (Zen 5) VM, the whole call -8..-10% in cache; from DRAM -2% (histogram.cpp trades_blocked).
// The checks both AVX-512 float32 phase A variants make (records_f32_whole512 here, entries_f32_cd512
// in cpu/records_cd512.hpp), one home for them. Per 16 trades (add): a price's tick by one rounding
// conversion, the grid test by converting it back (wh), the ticks' min / max; a volume's truncation
// w, the whole test by converting it back (vw), the truncations' unsigned maximum.
struct F32Checks512 {
  __m512 vinv;
  __m512i lo, hi, umax;
  __mmask16 wh = 0xFFFF, vw = 0xFFFF;
  VPOC_AVX512_TARGET explicit F32Checks512(float inv)
      : vinv(_mm512_set1_ps(inv)), lo(_mm512_set1_epi32(INT32_MAX)), hi(_mm512_set1_epi32(INT32_MIN)),
        umax(_mm512_setzero_si512()) {}
  VPOC_AVX512_TARGET void add(const float* p, const float* v, __m512i& k0, __m512i& w) {
    constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const __m512 q = _mm512_mul_ps(_mm512_loadu_ps(p), vinv);
    k0 = _mm512_cvt_roundps_epi32(q, kRound);  // the tick
    wh = _mm512_mask_cmpeq_ps_mask(wh, _mm512_cvtepi32_ps(k0), q);
    lo = _mm512_min_epi32(lo, k0);
    hi = _mm512_max_epi32(hi, k0);
    const __m512 x = _mm512_loadu_ps(v);
    w = _mm512_cvttps_epi32(x);
    vw = _mm512_mask_cmpeq_ps_mask(vw, _mm512_cvtepi32_ps(w), x);
    umax = _mm512_max_epu32(umax, w);
  }
  // After the loop over the first j trades (j % 16 == 0; 0: no vector): false when a volume was not
  // whole or reached `bound` (unsigned), or a tick lies beyond +-(2**23 - 1); else the ticks' range
  // l / h less org (INT32_MAX / INT32_MIN when no vector), all_whole (every price on the grid) and
  // big (the volumes' maximum), which the tail then widens.
  VPOC_AVX512_TARGET bool range(int j, int32_t org, uint32_t bound, int32_t& l, int32_t& h, bool& all_whole,
                                uint32_t& big) const {
    const int32_t l0 = _mm512_reduce_min_epi32(lo), h0 = _mm512_reduce_max_epi32(hi);
    big = static_cast<uint32_t>(_mm512_reduce_max_epu32(umax));
    if (vw != 0xFFFF || big >= bound) return false;
    if (j > 0 && (l0 <= -8388608 || h0 >= 8388608)) return false;
    l = j > 0 ? l0 - org : INT32_MAX;
    h = j > 0 ? h0 - org : INT32_MIN;
    all_whole = wh == 0xFFFF;
    return true;
  }
  // What both variants return on success: the block's range and flags (the vectors' and the tail's).
  static void report(int32_t l, int32_t h, bool all_whole, uint32_t big, double tail_max, bool tail_whole,
                     bool tail_ok, double& mn, double& mx, bool& whole, VolumeCheck& vc) {
    mn = l;
    mx = h;
    whole = all_whole;
    vc.vmax = std::max(static_cast<double>(big), tail_max);
    vc.whole = tail_whole;
    vc.ok = tail_ok;
  }
  // Whether the 16 volumes at v are whole and below `bound` (unsigned; negatives are above it):
  // the variants test the first vector before their loop, so fractional blocks give up early.
  VPOC_AVX512_TARGET static bool whole_below(const float* v, uint32_t bound) {
    const __m512 x = _mm512_loadu_ps(v);
    const __m512i w = _mm512_cvttps_epi32(x);
    return _mm512_cmpneq_ps_mask(_mm512_cvtepi32_ps(w), x) == 0 &&
           _mm512_cmpge_epu32_mask(w, _mm512_set1_epi32(static_cast<int>(bound))) == 0;
  }
};

VPOC_AVX512_TARGET inline bool records_f32_whole512(const float* p, const float* v, int n, float inv, int64_t origin,
                                                    int shift, uint64_t* rec, double& mn, double& mx, bool& whole,
                                                    VolumeCheck& vc) {
  bool go = origin > -(int64_t(1) << 30) && origin < (int64_t(1) << 30);
  if (go && n >= 16) go = F32Checks512::whole_below(v, 0x80000000u);  // the first vector's volumes
  if (!go) return false;
  const auto org = static_cast<int32_t>(origin);
  const __m512i vorg = _mm512_set1_epi32(org);
  const __m128i sh = _mm_cvtsi32_si128(shift);
  const __m512i rec_lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i rec_hi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
  F32Checks512 ck(inv);
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    fetch_ahead(p + j, v + j);
    __m512i k0, w;
    ck.add(p + j, v + j, k0, w);
    const __m512i off = _mm512_sll_epi32(_mm512_sub_epi32(k0, vorg), sh);
    _mm512_storeu_si512(reinterpret_cast<void*>(rec + j), _mm512_permutex2var_epi32(off, rec_lo, w));
    _mm512_storeu_si512(reinterpret_cast<void*>(rec + j + 8), _mm512_permutex2var_epi32(off, rec_hi, w));
  }
  int32_t l, h;
  bool all_whole;
  uint32_t big;
  if (!ck.range(j, org, 0x80000000u, l, h, all_whole, big)) return false;
  if (!slots_f32_tail(p, j, n, inv, org, nullptr, l, h, all_whole, rec, v, shift)) return false;
  double tail_max = 0.0;
  bool tail_whole = true;
  const bool tail_ok = volumes_ok_impl(v + j, n - j, tail_max, tail_whole);
  F32Checks512::report(l, h, all_whole, big, tail_max, tail_whole, tail_ok, mn, mx, whole, vc);
  return true;
}
