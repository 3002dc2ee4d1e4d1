// cpu/bars_uniform512.hpp — phase A of uniform bars with AVX-512 intrinsics: eight bars a vector, picked at run time.
// Contract: included by cpu/histogram.cpp only, after cpu/uniform_split.hpp; bar_slots' checks, slots and split terms.
#pragma once

#include "cpu/slots.hpp"

#if defined(VPOC_HAVE_AVX512_SLOTS)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/fixed.hpp"
#include "cpu/row_window.hpp"
#include "cpu/uniform_split.hpp"

#if defined(__clang__)
#define VPOC_U512_TARGET __attribute__((target("avx512f,avx512dq")))
#else  // GCC: a target attribute on a template does not reach the intrinsics it inlines; a pragma does
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 headers (its bug 105593)
#pragma GCC diagnostic ignored "-Wuninitialized"
#define VPOC_U512_TARGET
#endif

namespace vpoc::cpu {
namespace {

// Eight bars' volumes (lanes outside m read as 0): as float64 for the split, `ok` (volumes_ok's
// rule per volume: 0 or 2**-32 .. 2**53), `takes` (split_volume's: a whole volume below 2**31, the
// table split's), and the running maximum volume_verdict reports (the bitwise OR for integers, the
// largest bit pattern for floats: the maximum itself where every volume is valid).
template <class V>
struct Volumes512 {
  __m512i acc, last;
  VPOC_U512_TARGET Volumes512() : acc(_mm512_setzero_si512()), last(_mm512_setzero_si512()) {}
  VPOC_U512_TARGET __m512d load(const V* v, __mmask8 m, __mmask8& ok, __mmask8& takes) {
    if constexpr (std::is_same_v<V, int64_t>) {
      const __m512i x = _mm512_maskz_loadu_epi64(m, v);
      ok = _mm512_cmple_epu64_mask(x, _mm512_set1_epi64(int64_t{1} << 53));  // negatives are above it
      takes = _mm512_cmplt_epu64_mask(x, _mm512_set1_epi64(int64_t{1} << 31));
      last = x;
      return _mm512_cvtepi64_pd(x);
    } else if constexpr (std::is_same_v<V, int32_t>) {
      const __m512i x = _mm512_maskz_loadu_epi32(static_cast<__mmask16>(m), v);
      const __m512d d = _mm512_cvtepi32_pd(_mm512_castsi512_si256(x));
      ok = takes = _mm512_cmp_pd_mask(d, _mm512_setzero_pd(), _CMP_GE_OQ);
      last = x;
      return d;
    } else {
      __m512d d;
      if constexpr (std::is_same_v<V, float>)
        d = _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps(static_cast<__mmask16>(m), v)));
      else
        d = _mm512_maskz_loadu_pd(m, v);
      // a float volume widens exactly, and the rule's bounds are floats: the same verdict in float64
      const __mmask8 in = _mm512_cmp_pd_mask(d, _mm512_set1_pd(2.3283064365386963e-10), _CMP_GE_OQ) &
                          _mm512_cmp_pd_mask(d, _mm512_set1_pd(9007199254740992.0), _CMP_LE_OQ);
      ok = in | _mm512_cmp_pd_mask(d, _mm512_setzero_pd(), _CMP_EQ_OQ);
      const __m512d t = _mm512_roundscale_pd(d, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
      takes = _mm512_cmp_pd_mask(d, _mm512_setzero_pd(), _CMP_GE_OQ) &
              _mm512_cmp_pd_mask(d, _mm512_set1_pd(2147483648.0), _CMP_LT_OQ) & _mm512_cmp_pd_mask(t, d, _CMP_EQ_OQ);
      last = _mm512_castpd_si512(d);
      return d;
    }
  }
  // The last vector loaded, into the maximum (once its bars are added: every volume valid).
  VPOC_U512_TARGET void fold() {
    if constexpr (std::is_integral_v<V>) acc = _mm512_or_si512(acc, last);
    else acc = _mm512_max_epi64(acc, last);  // valid volumes: non-negative, ordered as their bits
  }
  VPOC_U512_TARGET double vmax() const {
    if constexpr (std::is_same_v<V, int64_t>) return static_cast<double>(_mm512_reduce_or_epi64(acc));
    else if constexpr (std::is_same_v<V, int32_t>) return static_cast<double>(_mm512_reduce_or_epi32(acc));
    else {
      const int64_t b = _mm512_reduce_max_epi64(acc);
      double x;
      std::memcpy(&x, &b, sizeof x);
      return x;
    }
  }
};

// Eight prices (lanes outside m read as 0) as float64.
template <class P>
VPOC_U512_TARGET inline __m512d load_prices(const P* p, __mmask8 m) {
  if constexpr (std::is_same_v<P, float>)
    return _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps(static_cast<__mmask16>(m), p)));
  else
    return _mm512_maskz_loadu_pd(m, p);
}

// bar_slots' phase A for uniform bars, a vector of eight bars at a time (lanes outside m read as
// bars at 0 with volume 0, which pass every check): the same checks, slots and split terms.
// Rounding by roundscale (nearest even) equals round_half_even_nb below 2**52; a bar beyond fails
// |q| < limit (limit <= 2**52) and its slots do not matter.
template <bool Open, class P, class V>
struct UniformA512 {
  const P *h, *l, *c, *o;
  const V* v;
  __m512d vinv, vlim, vorg;
  Volumes512<V> vol;
  // One vector's results: a, b the low / high tick's slots (clamped to +-2e9), q the whole volume //
  // ticks, at the table row (or -1: the general split); good: the bar passed the checks, price and
  // volume; whole: its high, low and close were whole numbers of ticks.
  struct Out {
    __m512d a, b, q, at;
    __mmask8 good, whole;
  };
  VPOC_U512_TARGET UniformA512(const P* h_, const P* l_, const P* c_, const P* o_, const V* v_, double inv,
                               double limit, double origin)
      : h(h_), l(l_), c(c_), o(o_), v(v_), vinv(_mm512_set1_pd(inv)), vlim(_mm512_set1_pd(limit)),
        vorg(_mm512_set1_pd(origin)) {}

  VPOC_U512_TARGET void prefetch(int64_t j) const {
    _mm_prefetch(reinterpret_cast<const char*>(h + j), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(l + j), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + j), _MM_HINT_T0);
    if constexpr (Open) _mm_prefetch(reinterpret_cast<const char*>(o + j), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(v + j), _MM_HINT_T0);
  }

  VPOC_U512_TARGET void run(int64_t j, __mmask8 m, Out& out) {
    constexpr int kNear = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    constexpr int kTrunc = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
    const __m512d clamp_lo = _mm512_set1_pd(-2e9), clamp_hi = _mm512_set1_pd(2e9), one = _mm512_set1_pd(1.0);
    const __m512d H = load_prices(h + j, m), L = load_prices(l + j, m), C = load_prices(c + j, m);
    const __m512d qh = _mm512_mul_pd(H, vinv), ql = _mm512_mul_pd(L, vinv), qc = _mm512_mul_pd(C, vinv);
    // as bar_slots: |qc| < limit follows from L <= C <= H (a NaN close fails C >= L)
    __mmask8 good = _mm512_cmp_pd_mask(_mm512_abs_pd(qh), vlim, _CMP_LT_OQ) &
                    _mm512_cmp_pd_mask(_mm512_abs_pd(ql), vlim, _CMP_LT_OQ) & _mm512_cmp_pd_mask(H, L, _CMP_GE_OQ) &
                    _mm512_cmp_pd_mask(C, L, _CMP_GE_OQ) & _mm512_cmp_pd_mask(C, H, _CMP_LE_OQ);
    if constexpr (Open) {
      const __m512d O = load_prices(o + j, m);
      good = static_cast<__mmask8>(good & _mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_mul_pd(O, vinv)), vlim, _CMP_LT_OQ) &
                                   _mm512_cmp_pd_mask(O, L, _CMP_GE_OQ) & _mm512_cmp_pd_mask(O, H, _CMP_LE_OQ));
    }
    const __m512d rh = _mm512_roundscale_pd(qh, kNear), rl = _mm512_roundscale_pd(ql, kNear);
    const __m512d rc = _mm512_roundscale_pd(qc, kNear);
    out.whole = _mm512_cmp_pd_mask(rh, qh, _CMP_EQ_OQ) & _mm512_cmp_pd_mask(rl, ql, _CMP_EQ_OQ) &
                _mm512_cmp_pd_mask(rc, qc, _CMP_EQ_OQ);
    out.a = _mm512_min_pd(_mm512_max_pd(_mm512_sub_pd(rl, vorg), clamp_lo), clamp_hi);  // NaN: clamp_lo
    out.b = _mm512_min_pd(_mm512_max_pd(_mm512_sub_pd(rh, vorg), clamp_lo), clamp_hi);
    __mmask8 vok, takes;
    const __m512d x = vol.load(v + j, m, vok, takes);
    out.good = good & vok;
    // the split's terms: whole volume // n ticks, the table row n (n - 1) / 2 + volume % n, where
    // the table split takes the bar (a whole volume below 2**31, 1 <= n <= 64; a good bar has
    // a <= b, and b - a + 1 is exact in float64), -1 where not
    const __m512d ticks = _mm512_add_pd(_mm512_sub_pd(out.b, out.a), one);
    takes = static_cast<__mmask8>(takes & _mm512_cmp_pd_mask(ticks, _mm512_set1_pd(kSplitTableMax), _CMP_LE_OQ) &
                                  _mm512_cmp_pd_mask(ticks, one, _CMP_GE_OQ));
    const __m512d vc = _mm512_min_pd(x, _mm512_set1_pd(2147483647.0));
    out.q = _mm512_roundscale_pd(_mm512_div_pd(vc, ticks), kTrunc);  // the floor (bar_slots.cpp says why)
    const __m512d r = _mm512_fnmadd_pd(out.q, ticks, vc);             // exact: q * ticks < 2**37
    const __m512d at = _mm512_fmadd_pd(_mm512_mul_pd(ticks, _mm512_sub_pd(ticks, one)), _mm512_set1_pd(0.5), r);
    out.at = _mm512_mask_blend_pd(takes, _mm512_set1_pd(-1.0), at);
  }
};

// A block's phase B operands, ready to add (uniform_slots512 into it, then add_terms), two int32 a
// bar in one 64-bit word each (one load, not two: phase B is bound by its loads and stores): the
// byte offsets of its +q and -q entries in the window's difference array from the origin row (at
// the low slot and past the high slot; the unit array's offsets are half of them), and q's whole
// part with the table row (-1: the general split). Byte offsets of slots below kMaxRows fit int32.
struct UniformTerms {
  static constexpr int64_t kMaxRows = int64_t{1} << 26;
  alignas(64) int64_t at[kBarBlock];   // 16 * low slot | 16 * (high slot + 1) << 32
  alignas(64) int64_t row[kBarBlock];  // whole | table row << 32

  // Bars j.. (a vector) from phase A's slots a, b, quotient q and table row r (-1: none).
  VPOC_U512_TARGET void put(int j, __m512d a, __m512d b, __m512d q, __m512d r) {
    const __m512i pairs = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m256i lo = _mm256_slli_epi32(_mm512_cvttpd_epi32(a), 4);
    const __m256i hi = _mm256_slli_epi32(_mm256_add_epi32(_mm512_cvttpd_epi32(b), _mm256_set1_epi32(1)), 4);
    const __m512i whole = _mm512_castsi256_si512(_mm512_cvttpd_epi32(q));
    _mm512_store_si512(at + j, _mm512_permutex2var_epi32(_mm512_castsi256_si512(lo), pairs, _mm512_castsi256_si512(hi)));
    _mm512_store_si512(row + j, _mm512_permutex2var_epi32(whole, pairs, _mm512_castsi256_si512(_mm512_cvttpd_epi32(r))));
  }
};

// Where the time goes (issue 25, 1.4 M ES bars, 1 thread, Zen 4 VM at ~2.6 GHz, 5.6 ms a call):
// phase A ~2.3 ms (it streams 44 MB of inputs from DRAM: ~1.4 ms at this VM's 30 GB/s), phase B
// ~2.7 ms (about 2 ns a bar), the drain, levels and Python ~0.6 ms. Tried for phase B and not kept
// (each measured against main in alternating processes; branch cpu13):
// - three carry-free 64-bit words an entry (whole, fraction's high and low halves, the units in the
//   low word), 32 bytes, added as one AVX2 vector: 3 read-modify-writes a bar instead of 5 scalar
//   ones, ~15 instructions instead of ~28: no faster (5.85 vs 5.83 ms); a 32-byte load of an entry
//   just stored in part (the unit as an 8-byte add) cannot be forwarded: +15%; with the unit's
//   offset from a table load in phase B, or from phase A (a vpgatherdq: phase A +0.3-0.5 ms; a
//   scalar lookup: +1.1 ms), +10-20% overall; every bar's three entries on distinct addresses (no
//   store forwarding, results wrong) still left phase B at ~2.8 ms: it is not the forwarding chains
//   of bars on one tick;
// - phase B of a block inside the next block's phase A (eight bars after each vector of eight, as
//   the trades' PendingEntries): +10-15%; prefetching 2 or 4 blocks ahead: no change;
// - the terms read as two vectors and split into registers (no scalar loads): no change.
//
// Phase B of a block from its terms: bar j's entries into lane j % 2 (d[0] / u[0], d[1] / u[1]: the
// window's difference arrays at the origin row, each lane). vol: the block's volumes (the general
// split's). Per bar two 128-bit entries and one unit: the +1 unit of the low slot goes into the +q
// entry's fraction (q.lo + 1 < 2**64: the fraction is at most 1 - 1 / n of 2**64, and 0 when rem is
// 0), the -1 rem slots on into the units (the same slot when rem is 0: they cancel); the drain
// sign-extends the units' running count (cpu/row_window.hpp).
template <class V>
VPOC_U512_TARGET void add_terms(const UniformTerms& t, int n, const V* vol, Fixed* const d[2], int64_t* const u[2]) {
  const uint64_t* const frac = split_table.frac.data();
  const uint64_t* const rems = split_table.rem.data();
  const auto bar = [&](int j, Fixed* dl, int64_t* ul) {
    const int64_t at = t.at[j], row = t.row[j];
    const int64_t lo = static_cast<int32_t>(at), hi = at >> 32, k = row >> 32;
    char* const db = reinterpret_cast<char*>(dl);
    if (k >= 0) {
      const uint64_t f = frac[k], w = static_cast<uint32_t>(row);
      Fixed q;
      q.lo = f + 1;
      q.hi = w;
      *reinterpret_cast<Fixed*>(db + lo) += q;
      q.lo = f;
      *reinterpret_cast<Fixed*>(db + hi) -= q;
      reinterpret_cast<int64_t*>(reinterpret_cast<char*>(ul) + (lo >> 1))[rems[k]] -= 1;
    } else {
      const int64_t tl = lo / 16, th = hi / 16 - 1;
      add_uniform_diff(tl, th, fixed::Split::make(to_acc<Fixed>(vol[j]), static_cast<uint64_t>(th - tl + 1)), dl, ul);
    }
  };
  int j = 0;
  for (; j + 2 <= n; j += 2) {
    bar(j, d[0], u[0]);
    bar(j + 1, d[1], u[1]);
  }
  if (j < n) bar(j, d[0], u[0]);
}

// bar_slots (cpu/bar_slots.hpp) for BarRow::uniform with AVX-512: the same return, slots, split
// terms (where a good block uses them), mn / mx, on_grid and volume check (vc.whole: not computed,
// false; the uniform path does not read it).
template <bool Open, class P, class V, class Out>
VPOC_U512_TARGET bool uniform_slots512(const P* h, const P* l, const P* c, const P* o, const V* v, int n, double inv,
                                       double limit, double origin, Out& out, double& mn, double& mx,
                                       bool& on_grid, VolumeCheck& vc) {
  UniformA512<Open, P, V> A(h, l, c, o, v, inv, limit, origin);
  __m512d lo = _mm512_set1_pd(INFINITY), hi = _mm512_set1_pd(-INFINITY);
  __mmask8 good = 0xFF, grid = 0xFF;
  for (int j = 0; j < n; j += 8) {
    const auto m = static_cast<__mmask8>(n - j >= 8 ? 0xFFu : (1u << (n - j)) - 1);
    typename UniformA512<Open, P, V>::Out r;
    A.prefetch(j + kBarBlock);  // the next block (-20% on 1.4 M ES bars: phase A waited on memory)
    A.run(j, m, r);
    A.vol.fold();
    good &= r.good;  // (lanes outside m are good)
    grid &= r.whole;
    lo = _mm512_mask_min_pd(lo, m, lo, r.a);
    hi = _mm512_mask_max_pd(hi, m, hi, r.b);
    if constexpr (std::is_same_v<Out, BarSlots>) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(out.lo + j), _mm512_cvttpd_epi32(r.a));
      _mm256_store_si256(reinterpret_cast<__m256i*>(out.hi + j), _mm512_cvttpd_epi32(r.b));
      _mm256_store_si256(reinterpret_cast<__m256i*>(out.whole + j), _mm512_cvttpd_epi32(r.q));
      _mm256_store_si256(reinterpret_cast<__m256i*>(out.split + j), _mm512_cvttpd_epi32(r.at));
    } else {
      out.put(j, r.a, r.b, r.q, r.at);
    }
  }
  mn = _mm512_reduce_min_pd(lo);
  mx = _mm512_reduce_max_pd(hi);
  on_grid = grid == 0xFF;
  vc.vmax = A.vol.vmax();
  vc.whole = false;
  vc.ok = good == 0xFF;  // prices too: the caller refuses the block either way
  return good == 0xFF;
}

}  // namespace
}  // namespace vpoc::cpu

#if !defined(__clang__)
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif
#undef VPOC_U512_TARGET
#endif
