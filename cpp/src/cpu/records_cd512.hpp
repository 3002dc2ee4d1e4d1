// cpu/records_cd512.hpp — float32 and float64 trades as entries: each 16 trades' equal rows merged before phase B (AVX-512 CD).
// Contract: included only by cpu/slots_avx2.cpp in its AVX-512 region; true: block_entries_f32 / _f64's entries, range, flags.
#pragma once

// Phase B (cpu/scatter.hpp) does about one scattered store a cycle, one a trade from records. A
// random walk of 16 trades touches only ~5 rows (ES-like ticks, 2 in 3 trades move one tick), so
// phase A merges a vector's equal rows here: one entry per distinct row of each 16 trades (two
// for a row of more than 8 of them), its volumes summed, the lane folded into the byte offset
// (all of a vector's entries in lane vector index % kLanes: distinct rows, and four vectors apart
// on one row). Sums are 32-bit: every volume is whole and below 2**28, so 16 of them stay below 2**32.
// Lambdas inside: clang gives them no target of their enclosing function, so they carry it themselves
// (VPOC_CD512_INLINE); GCC's pragma covers them.
#if defined(__clang__)
#define VPOC_CD512_TARGET __attribute__((target("avx512f,avx512dq,avx512cd,avx512vpopcntdq,popcnt")))
#define VPOC_CD512_INLINE __attribute__((always_inline, target("avx512f,avx512dq,avx512cd,avx512vpopcntdq,popcnt")))
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512cd,avx512vpopcntdq,popcnt")
#define VPOC_CD512_TARGET
#define VPOC_CD512_INLINE __attribute__((always_inline))
#endif

// w summed over runs of up to 8 lanes of equal k (keep: the lanes that hold a run's sum, every
// lane of k's 1st, 9th occurrence; each lane of a k in exactly one run). next(i): the next lane
// after i with k's value, from the conflicts of the lanes reversed, put back in order (bit b of
// lane i: lane 15 - b > i; the nearest is lzcnt - 16, 16 when none: an index into the zero
// vector). Three rounds of pointer jumping: after round r a lane holds the sum of the 2**(r+1)
// lanes of its k from itself on; a lane's rank (its k's occurrences before it) picks the keepers.
// A k repeats in more than 8 of 16 lanes in ~8% of vectors of the walk above: a 9th-occurrence
// keeper (one more entry) costs less there than a fourth round everywhere (float32, 20 M trades:
// new/old 0.95 with three rounds, 0.98 with four, 0.97 with two; this VM, Zen 5).
// On a Zen 4 VM (float32, 20 M trades, 12.4 ms a call; ablations, results not kept): the loop without
// merging or adds 7.1 ms (about 2 ms of it per-session work outside this loop), one conflict and the
// compress 8.2, both conflicts 8.6, group_sums whole 11.0, with the pending adds 12.4. Tried and
// dropped there: plain stores instead of the compress (wrong entries, for timing) -3% at most, so
// zeroed non-kept lanes (16 adds a vector) cannot pay; masked stores of the compressed entries +7%;
// two rounds as three; one-source permutes with masks +9%; runs of equal consecutive rows by a
// segmented scan instead (4 shifts, masked adds) 10.3 ms without adds, but about twice the entries:
// 15.5 ms with them.
VPOC_CD512_TARGET inline __m512i group_sums(__m512i k, __m512i w, __mmask16& keep) {
  constexpr int kRounds = 3;
  const __m512i rev = _mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i s16 = _mm512_set1_epi32(16), zero = _mm512_setzero_si512();
  const __m512i later = _mm512_permutexvar_epi32(rev, _mm512_conflict_epi32(_mm512_permutexvar_epi32(rev, k)));
  __m512i next = _mm512_sub_epi32(_mm512_lzcnt_epi32(later), s16);
  const __m512i rank = _mm512_popcnt_epi32(_mm512_conflict_epi32(k));
  keep = _mm512_testn_epi32_mask(rank, _mm512_set1_epi32((1 << kRounds) - 1));
  for (int r = 0; r < kRounds; ++r) {
    w = _mm512_add_epi32(w, _mm512_permutex2var_epi32(w, next, zero));
    if (r + 1 < kRounds) next = _mm512_permutex2var_epi32(next, next, s16);
  }
  return w;
}

// Pending entries (pend->m >= 0: the block before's, cpu/slots.hpp PendingEntries) added into the
// window by the entries loops below, a few a vector: the scalar adds overlap the vector work (two
// loops, each bound by its own units, ran one after the other). step() once for each vector of 16
// trades of the block's n, all() at the end: all are done on return, whatever the loop returns
// (pend->m = -1). step() comes between a vector's checks and its merge (group_sums): after the
// merge, the adds waited behind its long chain of shuffles (float32, 20 M trades, 1 thread, Zen 4
// VM: -4.3%, 12.32 -> 11.81 ms median in-process; float64 price / int64 volume -3.6%, float64 -0.8%;
// a standalone copy of the loop in cache: 0.484 -> 0.451 ns a trade).
struct PendingAdds {
  const uint32_t* off = nullptr;
  const uint32_t* sum = nullptr;
  char* base = nullptr;
  int m = 0, i = 0, per = 0;
  PendingAdds(PendingEntries* pend, int n) {
    if (pend != nullptr && pend->m > 0) {
      off = pend->off, sum = pend->sum, base = pend->base, m = pend->m;
      per = (m + std::max(1, n / 16) - 1) / std::max(1, n / 16);  // entries a vector: all by the loop's end
    }
    if (pend != nullptr) pend->m = -1;
  }
  VPOC_CD512_INLINE void upto(int k) {
    for (; i < k; ++i) *reinterpret_cast<int64_t*>(base + off[i]) += static_cast<int64_t>(sum[i]);
  }
  VPOC_CD512_INLINE void step() { upto(std::min(m, i + per)); }
  VPOC_CD512_INLINE void all() { upto(m); }
};

// A vector of 16 trades' ticks k and volume words w as entries at off / sum [e, ...): byte offsets
// (k << kShift) + bias, each row's volume summed once (group_sums), compressed; e advances past them.
template <int kShift>
VPOC_CD512_INLINE inline void put_entries(__m512i k, __m512i w, __m512i bias, uint32_t* off, uint32_t* sum, int& e) {
  const __m512i o = _mm512_add_epi32(_mm512_slli_epi32(k, kShift), bias);
  __mmask16 keep;
  const __m512i s = group_sums(k, w, keep);
  _mm512_storeu_si512(off + e, _mm512_maskz_compress_epi32(keep, o));
  _mm512_storeu_si512(sum + e, _mm512_maskz_compress_epi32(keep, s));
  e += _mm_popcnt_u32(keep);
}

// vec(at, bias) over the whole vectors of 16 trades from j: the byte offset of a row's lane,
// ((k - org) << kShift) + lane, is (k << kShift) + bias with bias = lane - (org << kShift) (mod 2**32
// either way); vector i of the block goes to lane i % 4, so the loop runs four vectors a turn with a
// constant bias each, then up to three more. j: the first trade left (the tail).
template <int kShift, class Vec>
VPOC_CD512_INLINE inline void each_vector(int n, int32_t org, int& j, Vec&& vec) {
  const uint32_t org_b = static_cast<uint32_t>(org) << kShift;
  const auto bias = [org_b](uint32_t lane) VPOC_CD512_INLINE { return _mm512_set1_epi32(static_cast<int>(lane - org_b)); };
  const __m512i b0 = bias(0), b1 = bias(8), b2 = bias(16), b3 = bias(24);
  for (; j + 64 <= n; j += 64) {
    vec(j, b0);
    vec(j + 16, b1);
    vec(j + 32, b2);
    vec(j + 48, b3);
  }
  if (j + 16 <= n) vec(j, b0), j += 16;
  if (j + 16 <= n) vec(j, b1), j += 16;
  if (j + 16 <= n) vec(j, b2), j += 16;
}

// records_f32_whole512's loop (the same ticks, range and flags) writing entries: off[i] the byte
// offset of a row's lane in rows of kLanes int64 accumulators, sum[i] its volume words' sum; m
// entries, m <= n (each array holds n). The tail (n % 16 trades) one entry a trade. False: the
// block is not all valid prices and whole volumes below 2**28, n < 16, or the origin is beyond
// +-2**30 (off / sum written in part): the caller takes the records. pend: PendingAdds.
VPOC_CD512_TARGET bool entries_f32_cd512(const float* p, const float* v, int n, float inv, int64_t origin,
                                         uint32_t* off, uint32_t* sum, int& m, double& mn, double& mx, bool& whole,
                                         VolumeCheck& vc, PendingEntries* pend) {
  constexpr int kShift = 5;                     // log2 of a row's bytes: 4 lanes of int64
  constexpr uint32_t kBig = uint32_t{1} << 28;  // volumes below it: 16 sum below 2**32
  PendingAdds pending(pend, n);
  bool go = origin > -(int64_t(1) << 30) && origin < (int64_t(1) << 30) && n >= 16;
  if (go) go = F32Checks512::whole_below(v, kBig);  // the first vector's volumes: fractional or large blocks give up early
  if (!go) {
    pending.all();
    return false;
  }
  const auto org = static_cast<int32_t>(origin);
  F32Checks512 ck(inv);
  int j = 0, e = 0;
  // No software prefetch: the hardware's stream prefetch alone runs ahead further (float32, 20 M
  // trades from DRAM, this loop alone: 0.60 -> 0.52 ns a trade with both, -3% of it from the
  // unrolling of each_vector; 2-core EPYC VM).
  const auto vec = [&](int at, __m512i b) VPOC_CD512_INLINE {
    __m512i k0, w;
    ck.add(p + at, v + at, k0, w);
    pending.step();  // (between the checks and the merge: PendingAdds)
    put_entries<kShift>(k0, w, b, off, sum, e);
  };
  each_vector<kShift>(n, org, j, vec);
  pending.all();
  int32_t l, h;
  bool all_whole;
  uint32_t big;
  if (!ck.range(j, org, kBig, l, h, all_whole, big)) return false;  // j >= 16 here
  uint64_t tail[16];  // records (cpu/slots.hpp) of the last n % 16 trades
  if (!slots_f32_tail(p + j, 0, n - j, inv, org, nullptr, l, h, all_whole, tail, v + j, kShift)) return false;
  double tail_max = 0.0;
  bool tail_whole = true;
  if (!volumes_ok_impl(v + j, n - j, tail_max, tail_whole) || !tail_whole || !(tail_max < kBig)) return false;
  for (int t = 0; t < n - j; ++t, ++e) {
    off[e] = static_cast<uint32_t>(tail[t]) + 8 * static_cast<uint32_t>(t % 4);
    sum[e] = static_cast<uint32_t>(tail[t] >> 32);
  }
  m = e;
  F32Checks512::report(l, h, all_whole, big, tail_max, true, true, mn, mx, whole, vc);
  return true;
}

// entries_f64_cd512's volumes, eight at a time: float64 ones truncated (whole when converting back
// gives them), int64 ones narrowed (in range when below 2**28 unsigned; their bitwise OR kept for the
// verdict records_512 gives, cpu/slots.hpp volumes_ok); big: the lanes at or above 2**28 unsigned.
struct F64Volumes {
  __mmask8 vw = 0xFF, big = 0;
  __m512i any;
  VPOC_CD512_INLINE F64Volumes() : any(_mm512_setzero_si512()) {}
  VPOC_CD512_INLINE __m256i add(const double* v) {
    const __m512d x = _mm512_loadu_pd(v);
    const __m256i w = _mm512_cvttpd_epi32(x);
    vw = _mm512_mask_cmpeq_pd_mask(vw, _mm512_cvtepi32_pd(w), x);
    return w;
  }
  VPOC_CD512_INLINE __m256i add(const int64_t* v) {
    const __m512i x = _mm512_loadu_si512(reinterpret_cast<const void*>(v));
    big |= _mm512_cmpge_epu64_mask(x, _mm512_set1_epi64(int64_t{1} << 28));
    any = _mm512_or_si512(any, x);
    return _mm512_cvtepi64_epi32(x);
  }
};

// Float64 prices and float64 or int64 volumes as entries, for the common block: every price's tick
// within +-2**30 and every volume whole in [0, 2**28). Per 16 trades (two vectors of eight float64 lanes): a price's
// tick by one rounding conversion to int32 (round half to even, as records_512's Ticks512 rounds
// below 2**52; a tick beyond int32 or NaN gives INT32_MIN, which the range test after the loop
// refuses), the grid test by converting it back (exact), the ticks' min / max; a volume's
// truncation, the whole test by converting it back, the truncations' unsigned maximum (negatives
// are above 2**28 there). On such a block records_512 gives the same ticks (relative to the
// origin, none clamped), range and flags, and check_pd / finish_pd the same verdict (ok, whole,
// the maximum). The entries as entries_f32_cd512 writes them, the tail (n % 16) one entry a trade
// by slots_tail. False: any other block, n < 16, or the origin beyond +-2**30 (off / sum written
// in part): the caller takes the records, which decide. pend: PendingAdds.
template <class V>
VPOC_CD512_TARGET bool entries_f64_cd512(const double* p, const V* v, int n, double inv, double origin,
                                         uint32_t* off, uint32_t* sum, int& m, double& mn, double& mx, bool& whole,
                                         VolumeCheck& vc, PendingEntries* pend) {
  constexpr int kShift = 5;                     // log2 of a row's bytes: 4 lanes of int64
  constexpr uint32_t kBig = uint32_t{1} << 28;  // volumes below it: 16 sum below 2**32
  constexpr int32_t kTicks = int32_t{1} << 30;  // ticks and origin within +-2**30: k - org fits int32
  PendingAdds pending(pend, n);
  bool go = n >= 16 && origin > -kTicks && origin < kTicks;
  if (go) {  // the first vector's volumes: fractional or large blocks give up early
    F64Volumes first;
    const __m512i w = _mm512_inserti64x4(_mm512_castsi256_si512(first.add(v)), first.add(v + 8), 1);
    go = first.vw == 0xFF && first.big == 0 &&
         _mm512_cmpge_epu32_mask(w, _mm512_set1_epi32(static_cast<int>(kBig))) == 0;
  }
  if (!go) {
    pending.all();
    return false;
  }
  const auto org = static_cast<int32_t>(origin);
  const __m512d vinv = _mm512_set1_pd(inv);
  __m512i lo = _mm512_set1_epi32(INT32_MAX), hi = _mm512_set1_epi32(INT32_MIN), umax = _mm512_setzero_si512();
  __mmask8 wh = 0xFF;
  F64Volumes vol;
  int j = 0, e = 0;
  // a vector of 16 trades: its entries by put_entries, the block by each_vector (as entries_f32_cd512)
  const auto vec = [&](int at, __m512i bias) VPOC_CD512_INLINE {
    constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const __m512d q0 = _mm512_mul_pd(_mm512_loadu_pd(p + at), vinv);
    const __m512d q1 = _mm512_mul_pd(_mm512_loadu_pd(p + at + 8), vinv);
    const __m256i k0 = _mm512_cvt_roundpd_epi32(q0, kRound), k1 = _mm512_cvt_roundpd_epi32(q1, kRound);
    wh = _mm512_mask_cmpeq_pd_mask(wh, _mm512_cvtepi32_pd(k0), q0);
    wh = _mm512_mask_cmpeq_pd_mask(wh, _mm512_cvtepi32_pd(k1), q1);
    const __m512i k = _mm512_inserti64x4(_mm512_castsi256_si512(k0), k1, 1);
    lo = _mm512_min_epi32(lo, k);
    hi = _mm512_max_epi32(hi, k);
    const __m256i w0 = vol.add(v + at), w1 = vol.add(v + at + 8);
    const __m512i w = _mm512_inserti64x4(_mm512_castsi256_si512(w0), w1, 1);
    if constexpr (std::is_floating_point_v<V>) umax = _mm512_max_epu32(umax, w);
    pending.step();  // (between the checks and the merge: PendingAdds)
    put_entries<kShift>(k, w, bias, off, sum, e);
  };
  each_vector<kShift>(n, org, j, vec);
  pending.all();
  const int32_t l0 = _mm512_reduce_min_epi32(lo), h0 = _mm512_reduce_max_epi32(hi);
  const auto big = static_cast<uint32_t>(_mm512_reduce_max_epu32(umax));
  if (vol.vw != 0xFF || vol.big != 0 || big >= kBig || l0 <= -kTicks || h0 >= kTicks) return false;  // j >= 16 here
  mn = static_cast<double>(l0 - org);
  mx = static_cast<double>(h0 - org);
  whole = wh == 0xFF;
  bool ok = true;
  int32_t tail[16];
  slots_tail(p + j, 0, n - j, inv, origin, tail, mn, mx, ok, whole);  // as records_512
  if (!ok) return false;
  if constexpr (std::is_floating_point_v<V>) {
    double tail_max = 0.0;
    bool tail_whole = true;
    if (!volumes_ok_impl(v + j, n - j, tail_max, tail_whole) || !tail_whole || !(tail_max < kBig)) return false;
    vc.vmax = std::max(static_cast<double>(big), tail_max);
    vc.whole = true;
    vc.ok = true;
  } else {
    for (int t = j; t < n; ++t)
      if (static_cast<uint64_t>(v[t]) >= kBig) return false;
    finish_int(static_cast<V>(_mm512_reduce_or_epi64(vol.any)), v, j, n, &vc);  // records_512's verdict
  }
  for (int t = 0; j + t < n; ++t, ++e) {
    off[e] = (static_cast<uint32_t>(tail[t]) << kShift) + 8 * static_cast<uint32_t>(t % 4);
    sum[e] = volume_word(v[j + t]);
  }
  m = e;
  return true;
}
// instantiated here, inside this header's target region: instantiated in slots_avx2.cpp, GCC 12 compiled them
// without avx512cd (its always_inline calls failed: target specific option mismatch)
template bool entries_f64_cd512<double>(const double*, const double*, int, double, double, uint32_t*, uint32_t*, int&,
                                        double&, double&, bool&, VolumeCheck&, PendingEntries*);
template bool entries_f64_cd512<int64_t>(const double*, const int64_t*, int, double, double, uint32_t*, uint32_t*, int&,
                                         double&, double&, bool&, VolumeCheck&, PendingEntries*);

#if !defined(__clang__)
#pragma GCC pop_options
#endif
#undef VPOC_CD512_TARGET
#undef VPOC_CD512_INLINE
