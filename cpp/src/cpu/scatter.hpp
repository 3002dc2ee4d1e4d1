// cpu/scatter.hpp — phase B of block binning: a block's volumes added into the window's rows (CPU backend).
// Contract: exact integer / 64.64 additions into lane j % kLanes of each row; any order gives the same sums.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/ladder.hpp"
#include "cpu/row_window.hpp"
#include "cpu/slots.hpp"

namespace vpoc::cpu {

// A block's slots as phase A wrote them: an int32 array, or the low words of records (cpu/slots.hpp),
// whose high words hold the volumes when the block's volumes are whole and below 2**31.
struct Slots32 {
  const int32_t* s;
  VPOC_ALWAYS_INLINE size_t operator[](int j) const { return static_cast<size_t>(s[j]); }  // >= 0 in phase B
};
template <class Acc>
struct Records {
  // log2 of a row's bytes in the window (kLanes accumulators): the records' low words are byte offsets
  static constexpr int kShift = sizeof(Acc) == 8 ? 5 : 6;
  static_assert(sizeof(Acc) * kLanes == size_t{1} << kShift, "a row is kLanes accumulators");
  // the largest window (rows) whose byte offsets fit the low words
  static constexpr int64_t kMaxRows = int64_t{1} << (32 - kShift);
  const uint64_t* r;
  VPOC_ALWAYS_INLINE size_t operator[](int j) const { return static_cast<uint32_t>(r[j]) >> kShift; }  // the slot
  VPOC_ALWAYS_INLINE size_t offset(int j) const { return static_cast<uint32_t>(r[j]); }
  VPOC_ALWAYS_INLINE uint64_t volume(int j) const { return r[j] >> 32; }
};

// Phase B: h[slot[j]] += v[j] in lane j % kLanes. Meanwhile fetch(j) (called at every kLanes-th
// j) prefetches the next block's inputs, so phase A of that block finds them in cache: phase B is
// compute-bound and phase A memory-bound, this overlaps the two.
// Whole: every v[j] of the block is a whole number, so a fixed-point row takes it in its integer
// word alone (the same sum, half the memory traffic).
template <bool Whole, class S, class V, class Acc, class Fetch>
void block_scatter(S slot, const V* v, int n, const Bins<Acc>& bins, Fetch&& fetch) {
  Acc* lane[kLanes];
  for (int l = 0; l < kLanes; ++l) lane[l] = bins.lane(static_cast<unsigned>(l));
  const auto add = [](Acc& row, V x) {
    if constexpr (Whole && std::is_same_v<Acc, Fixed>) row.hi += static_cast<uint64_t>(static_cast<int64_t>(x));
    else row += to_acc<Acc>(x);
  };
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    fetch(j);
    for (int l = 0; l < kLanes; ++l) add(lane[l][slot[j + l] * kLanes], v[j + l]);
  }
  for (; j < n; ++j) add(lane[j % kLanes][slot[j] * kLanes], v[j]);
}

// Phase B from records whose volume words hold the block's volumes (whole, below 2**31): one load
// per trade for slot and volume, no conversion. The same sums as block_scatter<true>.
// Sixteen trades a turn (one prefetch test, one loop test), their byte offsets straight from the records.
template <class Acc, class Fetch>
void records_scatter(Records<Acc> rec, int n, const Bins<Acc>& bins, Fetch&& fetch) {
  // int64 rows, or a fixed-point row's integer word (Whole)
  using Word = std::conditional_t<std::is_same_v<Acc, Fixed>, uint64_t, int64_t>;
  constexpr size_t kAt = std::is_same_v<Acc, Fixed> ? offsetof(Fixed, hi) : 0;
  char* lane[kLanes];
  for (int l = 0; l < kLanes; ++l) lane[l] = reinterpret_cast<char*>(bins.lane(static_cast<unsigned>(l))) + kAt;
  const auto add = [&](int j, int l) {
    *reinterpret_cast<Word*>(lane[l] + rec.offset(j)) += static_cast<Word>(rec.volume(j));
  };
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    fetch(j);
    fetch(j + 8);
    for (int k = 0; k < 16; ++k) add(j + k, k % kLanes);
  }
  for (; j < n; ++j) add(j, j % kLanes);
}

// A block's entries (block_entries_f32): m of them (-1: none, the block has records), their offsets
// and sums; failed: a block could not have them (the caller stops asking).
struct Entries {
  uint32_t* off;
  uint32_t* sum;
  int m = -1;
  bool failed = false;
};

// Two sets of entry buffers (offsets, sums) of a block of kN trades each: a block's entries are
// written while the block before's are read (histogram.cpp trades_blocked). Their starts lie 1 KiB
// apart modulo 4 KiB, so that a load of one never seems to wait on a store to another at a
// nearby index (4K aliasing: both advance at about the same pace; float32, 20 M trades: 9.5 ms in
// most processes with the four 4 KiB apart, 7.5 ms this way).
template <int kN>
struct alignas(64) EntryBuffersOf {
  static_assert(kN * 4 % 4096 == 0, "the pads assume whole pages of entries");
  struct alignas(64) Slab {
    uint32_t v[kN];
    char pad[1024];
  };
  Slab slab[4];  // offsets 0, sums 0, offsets 1, sums 1
  uint32_t* off[2] = {slab[0].v, slab[2].v};
  uint32_t* sum[2] = {slab[1].v, slab[3].v};
};

// Phase A of a block of trades as records (cpu/slots.hpp) where a variant has them: float64 prices,
// or float32 ones with a power-of-two tick <= 1 (f32; volumes other than float32 with AVX-512 only). The volumes are checked
// in the same pass (into vc; checked says so). False: take the slot variants (no variant for this
// CPU or these inputs, a window too wide for the records' byte offsets, or a price they will report).
// count: merged records may do (float32 prices and volumes), their number there; -1: not merged.
// ent: entries may do (float32 prices and volumes with f32, or float64 prices, float64 / int64 volumes; int64 rows, no count, not ent->failed): ent->m >= 0
// when phase A wrote them.
template <class P, class V, class Acc>
bool trade_records(const P* p, const V* v, int n, const ladder::TickScale& s, bool f32, const Bins<Acc>& bins,
                   uint64_t* rec, double& mn, double& mx, bool& on_grid, VolumeCheck& vc, bool& checked,
                   int* count = nullptr, Entries* ent = nullptr, PendingEntries* pend = nullptr) {
  constexpr int kShift = Records<Acc>::kShift;
  checked = false;
  if (count != nullptr) *count = -1;
  if (ent != nullptr) ent->m = -1;
  if ((bins.rows() << bins.plane_shift()) > Records<Acc>::kMaxRows) return false;  // sided: planes a row
  if constexpr (std::is_same_v<P, double>) {
    if constexpr ((std::is_same_v<V, double> || std::is_same_v<V, int64_t>) && std::is_same_v<Acc, int64_t>) {
      if (ent != nullptr && count == nullptr && !ent->failed) {
        checked = block_entries_f64(p, v, n, s.inv, static_cast<double>(bins.origin()), ent->off, ent->sum, ent->m, mn,
                                    mx, on_grid, vc, pend);
        if (checked) return true;
        ent->m = -1, ent->failed = true;
      }
    }
    checked = block_records(p, v, n, s.inv, static_cast<double>(bins.origin()), kShift, rec, mn, mx, on_grid, &vc);
    return checked;
  } else {
    if constexpr (std::is_same_v<V, float> && std::is_same_v<Acc, int64_t>) {
      if (ent != nullptr && count == nullptr && !ent->failed && f32) {
        checked = block_entries_f32(p, v, n, static_cast<float>(s.inv), bins.origin(), ent->off, ent->sum, ent->m, mn,
                                    mx, on_grid, vc, pend);
        if (checked) return true;
        ent->m = -1, ent->failed = true;
      }
    }
    checked = f32 && block_records_f32(p, v, n, static_cast<float>(s.inv), bins.origin(), kShift, rec, mn, mx, on_grid,
                                       vc, count);
    return checked;
  }
}

// The adds of pending entries (block_entries_f32's pend) that no phase A took: all of them, one by one.
inline void pending_scatter(PendingEntries& pend) {
  for (int i = 0; i < pend.m; ++i)
    *reinterpret_cast<int64_t*>(pend.base + pend.off[i]) += static_cast<int64_t>(pend.sum[i]);
  pend.m = -1;
}

// Whether a block's trades come in runs on one price of 2.5 trades or more on average (60% of its
// first kRunSample prices equal the one before), where merging runs in phase A pays: on this EPYC
// (Zen 5) merged phase A costs about 0.15 ns a trade more and saves ~0.27 ns a merged trade in phase B.
constexpr int kRunSample = 128;
template <class P>
bool runs_likely(const P* p) {
  int equal = 0;
  for (int j = 1; j < kRunSample; ++j) equal += p[j] == p[j - 1];
  return 5 * equal >= 3 * (kRunSample - 1);
}

// Phase B from merged records (block_records_f32 with a count: m runs of the block's n trades): a
// run's volume is its record's sum minus the record before's, mod 2**32 (each run sums below 2**32).
// The next blocks' lines are fetched at the pace of 16 trades every 4 runs, the rest at the end.
template <class Acc, class Fetch>
void merged_scatter(const uint64_t* rec, int m, int n, const Bins<Acc>& bins, Fetch&& fetch) {
  using Word = std::conditional_t<std::is_same_v<Acc, Fixed>, uint64_t, int64_t>;
  constexpr size_t kAt = std::is_same_v<Acc, Fixed> ? offsetof(Fixed, hi) : 0;
  char* lane[kLanes];
  for (int l = 0; l < kLanes; ++l) lane[l] = reinterpret_cast<char*>(bins.lane(static_cast<unsigned>(l))) + kAt;
  uint32_t before = 0;
  const auto add = [&](int i, int l) {
    const uint64_t r = rec[i];
    const auto sum = static_cast<uint32_t>(r >> 32);
    *reinterpret_cast<Word*>(lane[l] + static_cast<uint32_t>(r)) += static_cast<Word>(static_cast<uint32_t>(sum - before));
    before = sum;
  };
  int i = 0, f = 0;
  for (; i + kLanes <= m; i += kLanes) {
    if (f < n) fetch(f), fetch(f + 8), f += 16;
    for (int l = 0; l < kLanes; ++l) add(i + l, l);
  }
  for (; i < m; ++i) add(i, i % kLanes);
  for (; f < n; f += 8) fetch(f);
}

// The prefetch rule of both block paths (trades, bars): while phase B of a block runs, next(j) is
// called at its rows j; at the first row of each cache line of prices (64 / sizeof(P) rows) it
// fetches that line of the next block's price arrays (null ones skipped: bars without an open) and
// the volume lines those rows cover (two when V is wider than P). vol null: no next block.
template <class P, class V, int N>
struct NextBlock {
  const P* price[N];
  const V* vol;
  VPOC_ALWAYS_INLINE void operator()(int j) const {
    if (vol == nullptr || j % (64 / static_cast<int>(sizeof(P))) != 0) return;
    for (int k = 0; k < N; ++k)
      if (price[k] != nullptr) __builtin_prefetch(price[k] + j);
    __builtin_prefetch(vol + j);
    if (sizeof(V) > sizeof(P)) __builtin_prefetch(reinterpret_cast<const char*>(vol + j) + 64);
  }
};

}  // namespace vpoc::cpu
