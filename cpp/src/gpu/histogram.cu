// gpu/histogram.cu — binning kernels: validation + touched-row ranges, then volume accumulation.
// Contract: the same ladder and distribution code as the CPU (core/*.hpp); atomics only, no sorting.
#include "gpu/histogram.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/distribute.hpp"
#include "core/fixed.hpp"
#include "core/ladder.hpp"
#include "core/grid.hpp"
#include "core/side.hpp"
#include "core/source.hpp"
#include "gpu/finish.cuh"
#include "gpu/prim.hpp"
#include "vpoc/profiles.hpp"

namespace vpoc::gpu {
namespace {

constexpr int kThreads = 256;
// Rows each thread loads before it works on them (independent loads in flight hide latency):
// trades hold two values per row in registers, bars five.
template <bool Bars>
constexpr int kUnroll = Bars ? 4 : 8;
// The binning pass keeps fewer rows in flight (its atomics, not its loads, set its pace): trades
// four, bars one (ptxas sm_90: 110-112 registers with four, 2 blocks of 256 an SM; one bar and
// kBarsBinBlocksPerSm: 78-80 registers, no spill, 3 blocks; 4 blocks would spill 32-60 B at 64).
template <bool Bars>
constexpr int kBinUnroll = Bars ? 1 : 4;
[[maybe_unused]] constexpr int kBarsBinBlocksPerSm = 3;  // CUDA only (HIP reads no blocks per SM)
// Input rows per histogram row above which a session's rows are binned in shared memory.
constexpr int64_t kPrivateRowsPerRow = 4;
// Tile (block) sizes: at least one row per thread, at most 64 Ki rows (a block sweeping more
// would leave the last wave unbalanced); in between, about kBlocksPerSm blocks per SM.
constexpr int64_t kMinTile = kThreads;
constexpr int64_t kMaxTile = int64_t(1) << 16;
constexpr int64_t kBlocksPerSm = 8;
// Shared memory of the bin pass: 32 KiB of 8-byte words (under the 48 KiB every target has), so
// 4096 integer rows or 2048 fixed-point rows; a session no wider bins there, flushed once per tile.
constexpr int kSmemRows = 4096;
// Shared copies of a narrow session's rows: each group of kCopyThreads threads adds into its own
// copy, so fewer threads contend for the same row (consecutive rows often share a price).
constexpr int kCopyThreads = 32;
constexpr int kMaxCopies = kThreads / kCopyThreads;

__device__ inline unsigned long long enc_row(int64_t r) { return static_cast<unsigned long long>(r) ^ (1ull << 63); }
__device__ inline int64_t dec_row(unsigned long long e) { return static_cast<int64_t>(e ^ (1ull << 63)); }
// Order-preserving encoding of a double (for atomicMin / atomicMax on unsigned 64-bit).
__device__ inline unsigned long long enc_price(double x) {
  const auto b = static_cast<unsigned long long>(__double_as_longlong(x));
  return (b >> 63) ? ~b : (b | (1ull << 63));
}
__device__ inline double dec_price(unsigned long long e) {
  const unsigned long long b = (e >> 63) ? (e & ~(1ull << 63)) : ~e;
  return __longlong_as_double(static_cast<long long>(b));
}

// Session (index among n) holding absolute row i: the last s with offsets[s] <= i.
__device__ inline int64_t find_session(const int64_t* offsets, int64_t n, int64_t i) {
  int64_t lo = 0, hi = n - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (offsets[mid] <= i) lo = mid; else hi = mid - 1;
  }
  return lo;
}
__device__ inline int64_t find_session(const GroupScratch& g, int64_t i) { return find_session(g.offsets, g.n, i); }

__device__ inline distribute::LegacyLadder ladder_of(const GroupScratch& g, int64_t s, double tick, bool legacy) {
  if (!legacy) return distribute::LegacyLadder{};
  return distribute::LegacyLadder::make(dec_price(g.plo[s]), dec_price(g.phi[s]), tick);
}

// [tiles] one thread per tile: the sessions of its first and last row (so that no block searches).
__global__ void tile_table_kernel(RowSpan rows, GroupScratch g, int64_t* table, int64_t n_tiles) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (b >= n_tiles) return;
  const int64_t t0 = rows.begin + b * g.tile_rows;
  const int64_t t1 = min(t0 + g.tile_rows, rows.end);
  table[2 * b] = find_session(g, t0);
  table[2 * b + 1] = find_session(g, t1 - 1);
}

// src with its kind fixed at compile time, so that a trades kernel keeps no bar fields in registers.
template <bool Bars, class Src>
__device__ inline Src fixed_kind(Src src) {
  src.in.bars = Bars;
  if (!Bars) src.in.open = nullptr;
  return src;
}

// Calls body(i, item) for rows [a, e) of a block's session: thread k takes rows a + k,
// a + k + kThreads, ..., loading kUnroll rows before working on them. Rows are validated by the
// caller's body.
template <bool Bars, int U = kUnroll<Bars>, class Src, class Body>
__device__ inline void sweep(const Src& src, int64_t a, int64_t e, Body&& body) {
  for (int64_t i0 = a + threadIdx.x; i0 < e; i0 += int64_t(kThreads) * U) {
    Item it[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t i = i0 + int64_t(u) * kThreads;
      if (i < e) it[u] = src.item(i);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t i = i0 + int64_t(u) * kThreads;
      if (i < e) body(i, it[u]);
    }
  }
}

// sweep for sided trades: each row's side code is loaded with its item, in the same batch of U loads,
// and handed to body(i, item, code) (loaded inside body, the code was one more dependent global load
// per trade: the H200 ncu of the sided bin pass had 77% of its stalls waiting on L1TEX).
template <int U, class Src, class Body>
__device__ inline void sweep_coded(const Src& src, const int8_t* codes, int64_t a, int64_t e, Body&& body) {
  for (int64_t i0 = a + threadIdx.x; i0 < e; i0 += int64_t(kThreads) * U) {
    Item it[U];
    int8_t code[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t i = i0 + int64_t(u) * kThreads;
      if (i < e) {
        it[u] = src.item(i);
        code[u] = codes[i];
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t i = i0 + int64_t(u) * kThreads;
      if (i < e) body(i, it[u], code[u]);
    }
  }
}

// The tile of this block and its sessions: rows [t0, t1), sessions first..last.
struct Tile {
  int64_t t0, t1, first, last;
  __device__ Tile(const RowSpan& rows, const GroupScratch& g, const int64_t* table) {
    t0 = rows.begin + static_cast<int64_t>(blockIdx.x) * g.tile_rows;
    t1 = min(t0 + g.tile_rows, rows.end);
    first = table[2 * blockIdx.x];
    last = table[2 * blockIdx.x + 1];
  }
  __device__ int64_t begin(const GroupScratch& g, int64_t s) const { return max(t0, g.offsets[s]); }
  __device__ int64_t end(const GroupScratch& g, int64_t s) const { return min(t1, g.offsets[s + 1]); }
};

// Block-wide min (of lo) and max (of hi) by tree reduction in red_lo / red_hi ([kThreads] each);
// thread 0 folds them into *glo / *ghi. Every thread of the block must call it.
__device__ inline void reduce_range(unsigned long long lo, unsigned long long hi, unsigned long long* red_lo,
                                    unsigned long long* red_hi, unsigned long long* glo, unsigned long long* ghi) {
  red_lo[threadIdx.x] = lo;
  red_hi[threadIdx.x] = hi;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      red_lo[threadIdx.x] = min(red_lo[threadIdx.x], red_lo[threadIdx.x + half]);
      red_hi[threadIdx.x] = max(red_hi[threadIdx.x], red_hi[threadIdx.x + half]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0 && red_lo[0] != kEncNone) {
    atomicMin(glo, red_lo[0]);
    atomicMax(ghi, red_hi[0]);
  }
  __syncthreads();
}

// A range pass thread's lowest and highest key of a session (any: it saw a valid row) through the ladder
// (a row is monotone in its key), then reduce_range. Every thread of the block must call it.
template <class Src, class Key>
__device__ inline void reduce_rows_of(const Src& src, bool any, Key lo_key, Key hi_key, unsigned long long* red_lo,
                                      unsigned long long* red_hi, unsigned long long* glo, unsigned long long* ghi) {
  unsigned long long lo = kEncNone, hi = 0;
  if (any) {
    lo = enc_row(src.row_of(static_cast<double>(lo_key)));
    hi = enc_row(src.row_of(static_cast<double>(hi_key)));
  }
  reduce_range(lo, hi, red_lo, red_hi, glo, ghi);
}

// A range pass thread's findings into the group's words: the first bad row, the off-grid count and
// first off-grid row, the kFractional / kHugeVolume bits (only the atomics that carry news).
__device__ inline void flush_checks(const GroupScratch& g, unsigned long long bad, unsigned long long off,
                                    unsigned long long first_off, bool fractional, bool huge) {
  if (bad != kEncNone) atomicMin(g.err, bad);
  if (off) {
    atomicAdd(g.off_grid, off);
    atomicMin(g.first_off_grid, first_off);
  }
  if (fractional || huge) atomicOr(g.fractional, (fractional ? kFractional : 0ull) | (huge ? kHugeVolume : 0ull));
}

// [tiles] blocks x [kThreads]: per-session min(open, close, low) / max(open, close, high).
template <class P, class V, bool Bars>
__global__ void __launch_bounds__(kThreads) price_range_kernel(Source<P, V> any_src, RowSpan rows, GroupScratch g,
                                                               const int64_t* table) {
  __shared__ unsigned long long red_lo[kThreads], red_hi[kThreads];
  const Source<P, V> src = fixed_kind<Bars>(any_src);
  const Tile t(rows, g, table);
  for (int64_t s = t.first; s <= t.last; ++s) {
    unsigned long long lo = kEncNone, hi = 0;
    sweep<Bars>(src, t.begin(g, s), t.end(g, s), [&](int64_t, const Item& it) {
      if (!src.valid_prices(it)) return;  // reported by the row-range pass
      lo = min(lo, enc_price(Source<P, V>::legacy_lo(it)));
      hi = max(hi, enc_price(Source<P, V>::legacy_hi(it)));
    });
    reduce_range(lo, hi, red_lo, red_hi, &g.plo[s], &g.phi[s]);
  }
}

// True when v is a whole number below 2**31: such volumes sum in 64-bit integers (one word).
// T: double, or float (a float volume gets the same answer unconverted).
template <class T>
__device__ inline bool whole(T v) { return v == floor(v) && v < static_cast<T>(2147483648.0); }

// [tiles] blocks x [kThreads]: validation (first bad row -> g.err), touched-row ranges (one block
// reduction and one atomic pair per session of the tile), and g.fractional |= 1 when a volume is
// not a whole number below 2**31.
template <class P, class V, bool Bars>
__global__ void __launch_bounds__(kThreads) row_range_kernel(Source<P, V> any_src, RowSpan rows, GroupScratch g,
                                                             const int64_t* table, double tick, bool legacy) {
  __shared__ unsigned long long red_lo[kThreads], red_hi[kThreads];
  const Source<P, V> src = fixed_kind<Bars>(any_src);
  const Tile t(rows, g, table);
  unsigned long long bad = kEncNone, off = 0, first_off = kEncNone;
  bool fractional = false, huge = false;
  // the price grid: high, low, close (open only with legacy, the one rule that reads it)
  constexpr double eps = sizeof(P) == 4 ? grid::kEpsF32 : grid::kEpsF64;
  const double inv = 1.0 / tick;
  const bool grid_open = Bars && legacy && src.in.open != nullptr;
  for (int64_t s = t.first; s <= t.last; ++s) {
    const distribute::LegacyLadder L = ladder_of(g, s, tick, legacy);
    unsigned long long lo = kEncNone, hi = 0;
    // one row in flight a thread (not kUnroll<Bars> = 4): 64 registers instead of 122, so 4 blocks of 256 fit
    // an SM instead of 2; bars on the H200 (ncu, 1.4 M rows in 912 blocks): 44.5 -> 27.4 us (2 rows: 28.3 us)
    sweep<Bars, 1>(src, t.begin(g, s), t.end(g, s), [&](int64_t i, const Item& it) {
      unsigned k = grid::off_grid_fast(it.a, tick, inv, eps);
      if (Bars)
        k += grid::off_grid_fast(it.b, tick, inv, eps) + grid::off_grid_fast(it.c, tick, inv, eps) +
             (grid_open && grid::off_grid_fast(it.d, tick, inv, eps));
      if (k) {
        off += k;
        first_off = min(first_off, static_cast<unsigned long long>(i));
      }
      if (!src.valid_prices(it) || !Source<P, V>::valid_volume(it)) {
        bad = min(bad, static_cast<unsigned long long>(i));
        return;
      }
      fractional |= !whole(it.v);
      huge |= it.v > g.huge_volume;
      int64_t r0, r1;
      src.rows(it, L, r0, r1);
      lo = min(lo, enc_row(r0));
      hi = max(hi, enc_row(r1));
    });
    reduce_range(lo, hi, red_lo, red_hi, &g.lo[s], &g.hi[s]);
  }
  flush_checks(g, bad, off, first_off, fractional, huge);
}

// [tiles] blocks x [kThreads], trades: row_range_kernel's results (the same first bad row, off-grid
// count, flags and row ranges), with the ladder applied to two prices per thread and session, the
// lowest and the highest valid one it read (a price's row is monotone in the price: rint(p / tick)
// is, core/ladder.hpp TickScale, and so is floor_div), not to every trade. A trade costs its grid
// prefilter, a range test in the price's own dtype (|p| < fast_limit proves it valid; the exact
// test only past it: NaN, inf, far prices) and the volume checks: the ticks workload's range pass
// was bound by float64 work per trade, not by its reads.
// The type trade_range_kernel checks volumes in: float volumes as they are, others as float64.
template <class V>
using CheckedVolume = std::conditional_t<std::is_same<V, float>::value, float, double>;

// Volume k of `volume` as the range passes check it: float volumes as they are, others as float64
// (load_volume: int64 past 2**53 reads as 2**54, refused by fixed::volume_in_range).
template <class V>
__device__ inline CheckedVolume<V> checked_volume(const void* volume, int64_t k) {
  if constexpr (std::is_same<CheckedVolume<V>, float>::value)
    return static_cast<const float*>(volume)[k];
  else
    return load_volume<V>(volume, k);
}

// The bin pass's checks of g.volumes_in_bin, as bits: a bad volume, a fraction, a huge volume.
constexpr unsigned kFoundBad = 1, kFoundFraction = 2, kFoundHuge = 4;

// Price bounds of trade_range_kernel in the price's dtype (see fast_limit / grid_scale below).
template <class P, class V>
struct TradeChecks {
  P fast_limit;             // |p| below it: a valid price
  P inv;                    // 1 / tick in P, exact when `exact_grid`
  bool exact_grid;          // tick a power of two whose inverse P holds: p * inv exact
  CheckedVolume<V> huge;    // g.huge_volume, rounded down to the checked volume type

  // Off the grid: on it for sure when p / tick is a whole number, exactly (exact_grid), else the
  // float64 rule of row_range_kernel (inv_tick = 1 / tick in float64, eps by P's precision).
  // trade_range_kernel writes these two out (its registers: see there); change both together.
  __device__ bool off_grid(P p, double tick, double inv_tick, double eps) const {
    const P tk = p * inv;
    return !(exact_grid && tk == rint(tk)) && grid::off_grid_fast(static_cast<double>(p), tick, inv_tick, eps);
  }
  // A valid price (Source::valid_price): |p| below fast_limit proves it, else the exact test.
  template <class Src>
  __device__ bool valid(P p, const Src& src) const {
    return fabs(p) < fast_limit || src.valid_price(static_cast<double>(p));
  }
};

// Volumes false (g.volumes_in_bin): prices only; the volumes are the bin pass's to check. Sided: each
// row's side code is checked too, first bad row into g.err_side (an instance of its own: the plain
// instances keep their registers).
template <class P, class V, bool Volumes, bool Sided = false>
// Sided instances: at least 4 blocks of 256 an SM (3 for float64 prices) caps their registers (78-110 without:
// 3 blocks, ncu of ticks_side: 37.5% theoretical occupancy); 0: no minimum, the plain instances as before.
__global__ void VPOC_LAUNCH_BOUNDS(kThreads, Sided ? (sizeof(P) == 4 ? 4 : 3) : 0) trade_range_kernel(Source<P, V> any_src, RowSpan rows, GroupScratch g,
                                                               const int64_t* table, double tick,
                                                               TradeChecks<P, V> c) {
  using W = CheckedVolume<V>;
  constexpr int U = kUnroll<false>;
  __shared__ unsigned long long red_lo[kThreads], red_hi[kThreads];
  const Source<P, V> src = fixed_kind<false>(any_src);
  const P* price = static_cast<const P*>(src.in.price) - src.base;  // [rows.base + k] = element k
  // sided trades: the side codes, checked here for every row (a bad price does not hide a bad side)
  [[maybe_unused]] const auto* sides = Sided ? static_cast<const uint8_t*>(src.in.side) - src.base : nullptr;
  const Tile t(rows, g, table);
  unsigned long long bad = kEncNone, off = 0, first_off = kEncNone, bad_side = kEncNone;
  bool fractional = false, huge = false;
  constexpr double eps = sizeof(P) == 4 ? grid::kEpsF32 : grid::kEpsF64;
  const double inv = 1.0 / tick;
  // Prices only (volumes in the bin pass): 16-byte packs (K prices) where the session's slice of the tile
  // is aligned, a pack a load: one 128-bit load and one index instead of K (the ticks workload's range
  // pass was bound by its per-trade instructions, not by bandwidth); the unaligned head and the tail one
  // price a load.
  constexpr int K = 16 / static_cast<int>(sizeof(P));
  constexpr int UP = U / K > 0 ? U / K : 1;  // packs in flight a thread: U prices, as the scalar loop
  struct alignas(16) Pack {
    P x[K];
  };
  for (int64_t s = t.first; s <= t.last; ++s) {
    const int64_t a = t.begin(g, s), e = t.end(g, s);
    P lo_p = static_cast<P>(INFINITY), hi_p = -static_cast<P>(INFINITY);
    bool any = false;  // a valid trade of session s seen by this thread
    // one trade i of price pv: its checks, and the session's price range
    const auto visit = [&](int64_t i, P pv, W vv, [[maybe_unused]] uint8_t code) {
      if constexpr (Sided)
        if (side::code_i8(code) == side::kBad) bad_side = min(bad_side, static_cast<unsigned long long>(i));
      // TradeChecks::off_grid and ::valid, written out: through the member calls ptxas gives this kernel
      // 52 registers instead of 62 and it ran 105 us instead of 74 (ticks, H200, 27f3470 vs 471de47)
      const P tk = pv * c.inv;
      if (!(c.exact_grid && tk == rint(tk)) && grid::off_grid_fast(static_cast<double>(pv), tick, inv, eps)) {
        ++off;
        first_off = min(first_off, static_cast<unsigned long long>(i));
      }
      if (!(fabs(pv) < c.fast_limit || src.valid_price(static_cast<double>(pv))) ||
          (Volumes && !fixed::volume_in_range(vv))) {
        bad = min(bad, static_cast<unsigned long long>(i));
        return;
      }
      if constexpr (Volumes) {
        fractional |= !whole(vv);
        huge |= vv > c.huge;
      }
      lo_p = min(lo_p, pv);
      hi_p = max(hi_p, pv);
      any = true;
    };
    if constexpr (Volumes) {  // prices and volumes, U trades in flight a thread
      for (int64_t i0 = a + threadIdx.x; i0 < e; i0 += int64_t(kThreads) * U) {
        P p[U];
        W v[U];
        uint8_t code[U] = {};
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int64_t i = i0 + int64_t(u) * kThreads;
          if (i < e) {
            p[u] = price[i];
            if constexpr (Sided) code[u] = sides[i];
            v[u] = checked_volume<V>(src.in.volume, i - src.base);
          }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int64_t i = i0 + int64_t(u) * kThreads;
          if (i < e) visit(i, p[u], v[u], code[u]);
        }
      }
    } else {  // prices only: packs where aligned
      const auto addr = reinterpret_cast<std::uintptr_t>(price + a);
      const int64_t head = addr % sizeof(P) != 0 ? e - a  // not element-aligned (never for a real array): scalar
                                                 : min(e - a, static_cast<int64_t>(((16 - addr % 16) % 16) / sizeof(P)));
      const int64_t vb = a + head, n_packs = (e - vb) / K, ve = vb + n_packs * K;
      const auto code_at = [&](int64_t i) -> uint8_t {
        if constexpr (Sided) return sides[i];
        return 0;
      };
      for (int64_t i = a + threadIdx.x; i < vb; i += kThreads) visit(i, price[i], W(0), code_at(i));
      for (int64_t i = ve + threadIdx.x; i < e; i += kThreads) visit(i, price[i], W(0), code_at(i));
      const Pack* packs = reinterpret_cast<const Pack*>(price + vb);
      for (int64_t q0 = threadIdx.x; q0 < n_packs; q0 += int64_t(kThreads) * UP) {
        Pack pk[UP];
        uint8_t code[UP][K] = {};  // sided: the packs' side codes, loaded with them
#pragma unroll
        for (int u = 0; u < UP; ++u) {
          const int64_t q = q0 + int64_t(u) * kThreads;
          if (q < n_packs) {
            pk[u] = packs[q];
#pragma unroll
            for (int j = 0; j < K; ++j) code[u][j] = code_at(vb + q * K + j);
          }
        }
#pragma unroll
        for (int u = 0; u < UP; ++u) {
          const int64_t q = q0 + int64_t(u) * kThreads;
          if (q >= n_packs) continue;
#pragma unroll
          for (int j = 0; j < K; ++j) visit(vb + q * K + j, pk[u].x[j], W(0), code[u][j]);
        }
      }
    }
    reduce_rows_of(src, any, lo_p, hi_p, red_lo, red_hi, &g.lo[s], &g.hi[s]);
  }
  flush_checks(g, bad, off, first_off, fractional, huge);
  if (Sided && bad_side != kEncNone) atomicMin(g.err_side, bad_side);
}

// [tiles] blocks x [kThreads], bars distributed close, hlc3 or uniform: row_range_kernel's results
// (the same first bad row, off-grid count, flags and row ranges) with the ladder applied once per
// thread and session, to the lowest and the highest key its valid bars reach (uniform: their lows
// and highs; close: their closes; hlc3: (high + low + close) / 3 in float64, as Source::rows takes
// it), not to every bar: a row is monotone in its key (trade_range_kernel above says why). A bar
// costs its loads, three grid prefilters and its range tests in the prices' own dtype (TradeChecks,
// as for trades); legacy, whose ladder comes from the price range pass, keeps row_range_kernel.
// Rule: Distribute::close, hlc3 or uniform (a template argument: the other rules compiled out).
template <class P, class V, Distribute Rule>
// 4 blocks of 256 an SM (3 for float64 prices: 20 B spilled at 64 registers), two bars in flight a
// thread (four: 80 registers, or 44-336 B spilled at 64). H200, the bench's 1.4 M float32 bars: 19.1 us
// (row_range_kernel 27.6); 16-byte packs of each column (four bars a load, 78-80 registers, 3 blocks an
// SM: 2.3 waves of its 912 tiles instead of 1.7) took 30.9 us.
__global__ void VPOC_LAUNCH_BOUNDS(kThreads, sizeof(P) == 4 ? 4 : 3) bar_range_kernel(Source<P, V> any_src, RowSpan rows, GroupScratch g,
                                                             const int64_t* table, double tick, TradeChecks<P, V> c) {
  static_assert(Rule != Distribute::legacy, "legacy: row_range_kernel");
  using W = CheckedVolume<V>;
  using Key = std::conditional_t<Rule == Distribute::hlc3, double, P>;
  constexpr int U = 2;
  __shared__ unsigned long long red_lo[kThreads], red_hi[kThreads];
  const Source<P, V> src = fixed_kind<true>(any_src);
  // [rows.base + k] = element k of each column (open: the close where there is none, as Source::item)
  const P* high = static_cast<const P*>(src.in.high) - src.base;
  const P* low = static_cast<const P*>(src.in.low) - src.base;
  const P* close = static_cast<const P*>(src.in.close) - src.base;
  const P* open = src.in.open != nullptr ? static_cast<const P*>(src.in.open) - src.base : close;
  const Tile t(rows, g, table);
  unsigned long long bad = kEncNone, off = 0, first_off = kEncNone;
  bool fractional = false, huge = false;
  constexpr double eps = sizeof(P) == 4 ? grid::kEpsF32 : grid::kEpsF64;
  const double inv = 1.0 / tick;
  // off the grid (open is read by legacy only, which this kernel does not take), valid: as for trades
  const auto off_grid = [&](P p) -> unsigned { return c.off_grid(p, tick, inv, eps); };
  const auto valid = [&](P p) { return c.valid(p, src); };
  for (int64_t s = t.first; s <= t.last; ++s) {
    const int64_t a = t.begin(g, s), e = t.end(g, s);
    Key lo_k = static_cast<Key>(INFINITY), hi_k = -static_cast<Key>(INFINITY);
    bool any = false;  // a valid bar of session s seen by this thread
    for (int64_t i0 = a + threadIdx.x; i0 < e; i0 += int64_t(kThreads) * U) {
      P h[U], l[U], cl[U], o[U];
      W v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t i = i0 + int64_t(u) * kThreads;
        if (i < e) {
          h[u] = high[i];
          l[u] = low[i];
          cl[u] = close[i];
          o[u] = open[i];
          v[u] = checked_volume<V>(src.in.volume, i - src.base);
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t i = i0 + int64_t(u) * kThreads;
        if (i >= e) continue;
        const unsigned k = off_grid(h[u]) + off_grid(l[u]) + off_grid(cl[u]);
        if (k) {
          off += k;
          first_off = min(first_off, static_cast<unsigned long long>(i));
        }
        // Source::valid_prices and valid_volume, in P (comparisons of P values equal those of their doubles)
        if (!(valid(h[u]) && valid(l[u]) && valid(cl[u]) && valid(o[u]) && h[u] >= l[u] && cl[u] >= l[u] &&
              cl[u] <= h[u] && o[u] >= l[u] && o[u] <= h[u]) ||
            !fixed::volume_in_range(v[u])) {
          bad = min(bad, static_cast<unsigned long long>(i));
          continue;
        }
        fractional |= !whole(v[u]);
        huge |= v[u] > c.huge;
        if constexpr (Rule == Distribute::uniform) {
          lo_k = min(lo_k, l[u]);
          hi_k = max(hi_k, h[u]);
        } else if constexpr (Rule == Distribute::close) {
          lo_k = min(lo_k, cl[u]);
          hi_k = max(hi_k, cl[u]);
        } else {
          const double m = (static_cast<double>(h[u]) + static_cast<double>(l[u]) + static_cast<double>(cl[u])) / 3.0;
          lo_k = min(lo_k, m);
          hi_k = max(hi_k, m);
        }
        any = true;
      }
    }
    reduce_rows_of(src, any, lo_k, hi_k, red_lo, red_hi, &g.lo[s], &g.hi[s]);
  }
  flush_checks(g, bad, off, first_off, fractional, huge);
}

// Where the bin pass adds row volumes: 64-bit integers (whole volumes landing whole on one row:
// every share is a whole number, lo == 0), or 64.64 fixed point as two planes (FixedRows,
// gpu/finish.cuh). Both are exact integer sums: the bits do not depend on the order of the adds.
struct U64Rows {
  unsigned long long* hi;
  static constexpr int kWords = 1;
  __device__ void add(int64_t k, const Fixed& x) const { atomicAdd(hi + k, static_cast<unsigned long long>(x.hi)); }
  __device__ Fixed get(int64_t k) const { return fixed::from_int(hi[k]); }
  __device__ void zero(int64_t k) const { hi[k] = 0; }
  __device__ U64Rows at(int64_t k) const { return U64Rows{hi + k}; }
  __device__ U64Rows plane(int p, int64_t hi_stride, int64_t) const { return U64Rows{hi + p * hi_stride}; }
};
template <class Rows>
__device__ Rows shared_rows_of(unsigned long long* smem, int64_t cap);
template <>
__device__ U64Rows shared_rows_of<U64Rows>(unsigned long long* smem, int64_t) { return U64Rows{smem}; }
template <>
__device__ FixedRows shared_rows_of<FixedRows>(unsigned long long* smem, int64_t cap) { return FixedRows{smem, smem + cap}; }

// [tiles] blocks x [kThreads], kSmemBytes of dynamic shared memory: volume into out.
// Session by session through the tile: a session no wider than the shared rows bins into shared
// memory (as many copies as fit, up to kMaxCopies, to spread contention) and is flushed with one
// add per row; a wider one adds straight to global memory. Checks (trades, g.volumes_in_bin): the
// volume checks trade_range_kernel<P, V, false> left out, in an instance of its own (the other
// instances keep their registers). Sided (trades; with Checks too): each trade goes to one of g.planes = 3
// planes of rows by its side code (core/side.hpp plane_of), shared rows planes x copies x width; an
// instance of its own too (the plain ones keep their registers).
template <class P, class V, bool Bars, class Rows, bool Checks = false, bool Sided = false>
// Sided: at least 4 blocks of 256 an SM (the 32 KiB of shared rows allow 4), 64 registers instead of 78-80
// (44-52 B spilled); bars: kBarsBinBlocksPerSm; 0: no minimum, the plain trades instances as before.
__global__ void VPOC_LAUNCH_BOUNDS(kThreads, Sided ? 4 : Bars ? kBarsBinBlocksPerSm : 0) bin_kernel(Source<P, V> any_src, RowSpan rows, GroupScratch g,
                                                       const int64_t* table, Rows out, double tick, bool legacy,
                                                       bool diff, CheckedVolume<V> huge_w) {
  extern __shared__ unsigned long long smem_words[];
  // speculative calls: nothing when the layout said stop, or when the other row kind was chosen
  if (g.go != nullptr && *g.go == 0) return;
  if (g.fixed_by_flag && ((*g.fractional & kFractional) != 0) != (Rows::kWords == 2)) return;
  constexpr int64_t kCap = kSmemRows / Rows::kWords;  // shared rows (all copies)
  const Rows shared = shared_rows_of<Rows>(smem_words, kCap);
  const Source<P, V> src = fixed_kind<Bars>(any_src);
  const Tile t(rows, g, table);
  static_assert(!Sided || !Bars, "sided: trades");
  [[maybe_unused]] const auto* sides = Sided ? static_cast<const int8_t*>(src.in.side) - src.base : nullptr;
  const int planes = Sided ? g.planes : 1;
  unsigned found = 0;  // g.volumes_in_bin: kFound* bits of the checks trade_range_kernel left here
  // huge_w (Checks): g.huge_volume rounded down to the checked type on the host, as trade_checks does
  const CheckedVolume<V> below_2_31 = nextafter(CheckedVolume<V>(2147483648.0), CheckedVolume<V>(0));
  const CheckedVolume<V> fast_max = huge_w < below_2_31 ? huge_w : below_2_31;
  for (int64_t s = t.first; s <= t.last; ++s) {
    const int64_t a = t.begin(g, s), e = t.end(g, s);
    if (a >= e) continue;  // block-uniform: every thread skips together
    const distribute::LegacyLadder L = ladder_of(g, s, tick, legacy);
    const int64_t width = g.width[s], low = g.low_row[s];
    const Rows global_rows = out.at(g.out_off[s]);
    // Shared rows pay off when the session has many of the tile's rows per row of width (ticks);
    // a few bars per row (each spread over several rows) add straight to L2 faster.
    // Shared memory holds planes x copies x width rows (plane p, copy c at (p * copies + c) * width).
    const bool privatized = width * planes <= kCap && e - a >= kPrivateRowsPerRow * width;
    int copies = 1;
    while (privatized && copies < kMaxCopies && width * planes * copies * 2 <= kCap) copies *= 2;
    if (privatized) {
      for (int64_t k = threadIdx.x; k < width * planes * copies; k += kThreads) shared.zero(k);
      __syncthreads();
    }
    const Rows dst = privatized ? shared.at((threadIdx.x / kCopyThreads) % copies * width) : global_rows;
    const auto add = [&](int64_t r, const Fixed& x) {
      dst.add(r - low, x);
      return true;
    };
    if (Bars && diff) {  // uniform, one tick per row: the split as a difference array (three adds)
      sweep<Bars, kBinUnroll<Bars>>(src, a, e, [&](int64_t, const Item& it) {
        src.emit_diff(it.a, it.b, it.v, low, width, [&](int64_t k, const Fixed& x) { dst.add(k, x); });
      });
    } else if constexpr (!Bars && (Checks || Sided)) {
      // Checks: the range pass left the volumes to this pass. Sided: one add per trade, into its side's
      // plane (hs / ls: words from one plane to the next in dst).
      [[maybe_unused]] const int64_t hs = privatized ? copies * width : g.hi_stride;
      [[maybe_unused]] const int64_t ls = privatized ? copies * width : g.lo_stride;
      const auto body = [&](int64_t, const Item& it, [[maybe_unused]] int8_t code) {
        const auto put = [&](const Item& x) {
          if constexpr (Sided) {
            const Rows to = dst.plane(side::plane_of(code), hs, ls);
            src.emit(x, L, [&](int64_t r, const Fixed& f) {
              to.add(r - low, f);
              return true;
            });
          } else {
            src.emit(x, L, add);
          }
        };
        if constexpr (Checks) {
          using W = CheckedVolume<V>;
          const W w = static_cast<W>(it.v);  // exact: it.v came from V
          // the common case in four operations: a whole number in [0, fast_max] is in range, not a
          // fraction (below 2**31) and not huge (fast_max is the smaller of huge_w and the last W below 2**31)
          if (w >= W(0) && w <= fast_max && w == floor(w)) {
            put(it);
            return;
          }
          const bool ok = fixed::volume_in_range(w);  // trade_range_kernel's tests, in the same type
          // as trade_range_kernel: a bad row sets no other flag (a fraction would mark the shape for good)
          found |= ok ? (whole(w) ? 0u : kFoundFraction) | (w > huge_w ? kFoundHuge : 0u) : kFoundBad;
          Item jt = it;
          jt.v = ok ? it.v : 0.0;  // a bad row adds nothing (the call runs again down the waiting path)
          put(jt);
        } else {
          put(it);
        }
      };
      if constexpr (Sided)
        sweep_coded<kBinUnroll<Bars>>(src, sides, a, e, body);
      else
        sweep<Bars, kBinUnroll<Bars>>(src, a, e, [&](int64_t i, const Item& it) { body(i, it, int8_t(0)); });
    } else {
      sweep<Bars, kBinUnroll<Bars>>(src, a, e, [&](int64_t, const Item& it) { src.emit(it, L, add); });
    }
    if (privatized) {
      __syncthreads();
      if constexpr (Sided) {
        for (int64_t k = threadIdx.x; k < width * planes; k += kThreads) {
          const int64_t p = k / width, r = k - p * width;  // plane p, row r
          Fixed sum = shared.get(p * copies * width + r);
          for (int c = 1; c < copies; ++c) sum += shared.get((p * copies + c) * width + r);
          if (!sum.zero()) global_rows.plane(static_cast<int>(p), g.hi_stride, g.lo_stride).add(r, sum);
        }
      } else {
        for (int64_t k = threadIdx.x; k < width; k += kThreads) {
          Fixed sum = shared.get(k);
          for (int c = 1; c < copies; ++c) sum += shared.get(c * width + k);
          if (!sum.zero()) global_rows.add(k, sum);
        }
      }
      __syncthreads();  // the next session reuses the shared rows
    }
  }
  // a bad row is flagged as row 0: the speculative call only needs to know there is one (its rerun names it)
  if constexpr (!Bars && Checks)
    flush_checks(g, (found & kFoundBad) ? 0ull : kEncNone, 0, kEncNone, (found & kFoundFraction) != 0,
                 (found & kFoundHuge) != 0);
}

// [1] x [1]: the bin pass's findings (g.volumes_in_bin) into the summary mirror words 2 and 3, for
// the host's one wait of a speculative call (recorded after this launch).
__global__ void publish_checks_kernel(GroupScratch g, long long* mirror) {
  mirror[2] = static_cast<long long>(*g.err);
  mirror[3] = static_cast<long long>(*g.fractional);
}

// [n] blocks x [kThreads], one block per session of the group: gpu/finish.cuh's finish_session
// (the rows become float64 volumes in place, the total their exact sum rounded once, +inf past
// 2**53: the host then reports the session).
__global__ void __launch_bounds__(kThreads) finish_rows_kernel(GroupScratch g, unsigned long long* hi,
                                                               const unsigned long long* lo, double* total,
                                                               bool scan) {
  __shared__ unsigned long long red_hi[kThreads], red_lo[kThreads];
  if (g.go != nullptr && *g.go == 0) return;  // block-uniform
  if (g.fixed_by_flag && (*g.fractional & kFractional) == 0) lo = nullptr;  // integer rows were binned
  const int64_t s = blockIdx.x;
  const Fixed t = finish_session<kThreads>(hi, lo, g.out_off[s], g.width[s], scan, red_hi, red_lo, nullptr);
  if (threadIdx.x == 0) total[s] = total_of(t);
}

// [max(n, tiles)] threads: fresh per-group scratch (thread k: session k), and the tile table of
// the first pass (thread k: tile k; none when n_tiles is 0). `given`: the group's offsets when they
// came as the launch's parameter (n >= 0; written to g.offsets here, read from shared memory by the
// tile search: no other block's write is awaited), else g.offsets is on the device already.
__global__ void init_group_kernel(GroupScratch g, bool legacy, long long* summary, RowSpan rows, int64_t n_tiles,
                                  ParamOffsets given) {
  __shared__ int64_t off[ParamOffsets::kMax + 1];
  const int64_t k = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t* offsets = g.offsets;
  if (given.n >= 0) {  // block-uniform
    for (int64_t i = threadIdx.x; i <= given.n; i += kThreads) off[i] = given.v[i];
    if (blockIdx.x == 0)
      for (int64_t i = threadIdx.x; i <= given.n; i += kThreads) const_cast<int64_t*>(g.offsets)[i] = given.v[i];
    __syncthreads();
    offsets = off;
  }
  if (k < n_tiles) {
    const int64_t t0 = rows.begin + k * g.tile_rows;
    const int64_t t1 = min(t0 + g.tile_rows, rows.end);
    g.tiles[2 * k] = find_session(offsets, g.n, t0);
    g.tiles[2 * k + 1] = find_session(offsets, g.n, t1 - 1);
  }
  if (k == 0) {
    *g.err = kEncNone;
    *g.fractional = 0ull;
    *g.off_grid = 0ull;
    *g.first_off_grid = kEncNone;
    if (g.err_side != nullptr) *g.err_side = kEncNone;
    summary[kRows] = summary[kWidest] = summary[kGo] = 0;
  }
  if (k >= g.n) return;
  g.lo[k] = kEncNone;
  g.hi[k] = 0;
  if (legacy) {
    g.plo[k] = kEncNone;
    g.phi[k] = 0;
  }
}

// Up to kOneBlockLayout sessions (histogram.hpp) the layout runs as one block (a scan in shared
// memory, chunk by chunk); beyond, three launches with the library's device-wide scan.
constexpr int kLayoutThreads = 1024;

// Whether the passes after the layout may run: the rows fit, no session is too wide, no row is bad.
__device__ inline long long go_on(const GroupScratch& g, long long rows, unsigned long long widest, int64_t cap,
                                  int64_t max_rows) {
  return rows <= cap && widest <= static_cast<unsigned long long>(max_rows) && *g.err == kEncNone &&
                 (g.err_side == nullptr || *g.err_side == kEncNone)
             ? 1
             : 0;
}

// [blocks] x [kThreads], grid-stride: rows [0, summary[kRows]) of hi (and lo) zeroed.
__global__ void zero_rows_kernel(GroupScratch g, unsigned long long* hi, unsigned long long* lo,
                                 const long long* summary, int planes, int64_t stride) {
  if (*g.go == 0) return;
  if (g.fixed_by_flag && (*g.fractional & kFractional) == 0) lo = nullptr;
  const int64_t n = summary[kRows];
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * kThreads)
    for (int p = 0; p < planes; ++p) {
      hi[p * stride + k] = 0;
      if (lo != nullptr) lo[p * stride + k] = 0;
    }
}

// Width and low row of session k from the row ranges; the result columns.
__device__ inline int64_t lay_out_session(const GroupScratch& g, int64_t k, int64_t* width, int64_t* low,
                                          const LayoutColumns& cols) {
  const bool empty = g.lo[k] == kEncNone;
  const int64_t l = empty ? 0 : dec_row(g.lo[k]);
  const int64_t w = empty ? 0 : dec_row(g.hi[k]) - l + 1;
  width[k] = w;
  low[k] = l;
  cols.n_rows[k] = w;
  cols.low_row[k] = empty ? kNoRow : l;
  return w;
}

// [1] block x [kLayoutThreads]: the whole layout of a group of at most kOneBlockLayout sessions.
__global__ void __launch_bounds__(kLayoutThreads) layout_one_block_kernel(GroupScratch g, int64_t* width,
                                                                          int64_t* low, int64_t* out_off,
                                                                          LayoutColumns cols, int64_t base,
                                                                          long long* summary, int64_t cap,
                                                                          int64_t max_rows,
                                                                          unsigned long long* zero_hi,
                                                                          unsigned long long* zero_lo,
                                                                          long long* mirror) {
  __shared__ int64_t scan[kLayoutThreads];
  __shared__ unsigned long long widest;
  __shared__ long long go;
  if (threadIdx.x == 0) widest = 0;
  int64_t carry = 0;
  for (int64_t c0 = 0; c0 < g.n; c0 += kLayoutThreads) {
    const int64_t k = c0 + threadIdx.x;
    const int64_t w = k < g.n ? lay_out_session(g, k, width, low, cols) : 0;
    scan[threadIdx.x] = w;
    __syncthreads();
    if (w > 0) atomicMax(&widest, static_cast<unsigned long long>(w));
    for (int d = 1; d < kLayoutThreads; d *= 2) {  // inclusive Hillis-Steele scan
      const int64_t add = static_cast<int>(threadIdx.x) >= d ? scan[threadIdx.x - d] : 0;
      __syncthreads();
      scan[threadIdx.x] += add;
      __syncthreads();
    }
    if (k < g.n) {
      out_off[k] = carry + scan[threadIdx.x] - w;
      cols.offsets[k] = base + out_off[k];
    }
    carry += scan[kLayoutThreads - 1];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    summary[kRows] = carry;
    summary[kWidest] = static_cast<long long>(widest);
    go = go_on(g, carry, widest, cap, max_rows);
    summary[kGo] = go;
    cols.offsets[g.n] = base + carry;
    if (mirror != nullptr)  // the host reads these after an event: no copy of their own
      for (int w = 0; w < kSummaryWords; ++w) mirror[w] = summary[w];
  }
  if (zero_hi == nullptr) return;  // block-uniform
  __syncthreads();
  if (go == 0) return;
  unsigned long long* lo = zero_lo;
  if (g.fixed_by_flag && (*g.fractional & kFractional) == 0) lo = nullptr;
  for (int64_t k = threadIdx.x; k < carry; k += kLayoutThreads) {
    zero_hi[k] = 0;
    if (lo != nullptr) lo[k] = 0;
  }
}

// [n] one thread per session of the group.
__global__ void layout_widths_kernel(GroupScratch g, int64_t* width, int64_t* low, LayoutColumns cols,
                                     long long* summary) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (k >= g.n) return;
  const int64_t w = lay_out_session(g, k, width, low, cols);
  atomicMax(reinterpret_cast<unsigned long long*>(summary + kWidest), static_cast<unsigned long long>(w));
}

// [n] one thread per session of the group.
__global__ void layout_offsets_kernel(GroupScratch g, const int64_t* width, const int64_t* out_off, LayoutColumns cols,
                                      int64_t base, long long* summary, int64_t cap, int64_t max_rows) {
  const int64_t n = g.n;
  const int64_t k = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (k >= n) return;
  cols.offsets[k] = base + out_off[k];
  if (k == n - 1) {
    summary[kRows] = out_off[k] + width[k];
    cols.offsets[n] = base + summary[kRows];
    summary[kGo] = go_on(g, summary[kRows], static_cast<unsigned long long>(summary[kWidest]), cap, max_rows);
  }
}

template <class P, class V>
Source<P, V> source(const InputView& in, RowSpan rows, const Options& opt) {
  return make_source<P, V>(in, opt, rows.base);
}

// Rows per tile for a pass over `rows` rows of `sessions` sessions: about kBlocksPerSm blocks per
// SM, kMinTile..kMaxTile, and at most about 4 sessions' worth of rows (a block goes session by
// session, with a reduction per session).
int64_t tile_rows_for(int64_t rows, int64_t sessions) {
  static const int sms = [] {
    int d = 0, n = 0;
    if (gpuGetDevice(&d) != gpuSuccess || gpuMultiprocessorCount(&n, d) != gpuSuccess || n <= 0) {
      (void)gpuGetLastError();
      n = 64;  // unknown: a mid-size GPU
    }
    return n;
  }();
  const int64_t blocks = kBlocksPerSm * sms;
  int64_t t = (rows + blocks - 1) / blocks;
  t = std::min(t, 4 * rows / std::max<int64_t>(sessions, 1) + 1);
  t = (t + kThreads - 1) / kThreads * kThreads;
  return std::min(kMaxTile, std::max(kMinTile, t));
}

unsigned tiles(RowSpan rows, const GroupScratch& g) {
  return static_cast<unsigned>((rows.end - rows.begin + g.tile_rows - 1) / g.tile_rows);
}

// The tile -> (first session, last session) table of rows, in g.tiles (kept while the rows and the
// group stay the same: the passes of a group share it).
void tile_table(RowSpan rows, GroupScratch& g, gpuStream_t stream) {
  if (g.tiled.begin == rows.begin && g.tiled.end == rows.end) return;
  g.tile_rows = tile_rows_for(rows.end - rows.begin, g.n);
  const int64_t n = tiles(rows, g);
  tile_table_kernel<<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(rows, g, g.tiles, n);
  VPOC_GPU_CHECK_LAUNCH("tile_table_kernel");
  g.tiled = rows;
}

// The largest T <= x, for x >= 0 (+inf when x is past T's largest finite value: every finite T
// is then below x).
template <class T>
T round_down(double x) {
  if (!(x < static_cast<double>(std::numeric_limits<T>::max()))) return std::numeric_limits<T>::infinity();
  T f = static_cast<T>(x);
  if (static_cast<double>(f) > x) f = std::nextafter(f, T(0));
  return f;
}

// trade_range_kernel's fast_limit: |p| below it proves p valid (|p / tick| < limit, TickScale):
// limit * tick less 2**-20 of itself (far more than the few ulps between p * inv, p / tick and the
// product here), rounded down to P.
template <class P>
P fast_limit(const ladder::TickScale& s) {
  return round_down<P>(s.limit * s.tick * (1.0 - 1.0 / 1048576.0));
}

template <class P, class V>
TradeChecks<P, V> trade_checks(const ladder::TickScale& s, const GroupScratch& g) {
  TradeChecks<P, V> c;
  c.fast_limit = fast_limit<P>(s);
  c.inv = static_cast<P>(s.inv);
  c.exact_grid = s.exact && static_cast<double>(c.inv) == s.inv && std::isnormal(c.inv);
  // v > huge for a checked volume v exactly when v > g.huge_volume (no value of W lies between)
  c.huge = round_down<CheckedVolume<V>>(g.huge_volume);
  return c;
}

}  // namespace

int64_t max_tiles(int64_t rows) { return (rows + kMinTile - 1) / kMinTile; }

void launch_init_group(GroupScratch& g, bool legacy, long long* summary, RowSpan rows, const ParamOffsets& given,
                       gpuStream_t stream) {
  g.tiled = RowSpan{-1, -1, 0};
  int64_t n_tiles = 0;
  if (rows.end > rows.begin && g.n > 0) {  // the tile table of the first pass, in the same launch
    g.tile_rows = tile_rows_for(rows.end - rows.begin, g.n);
    n_tiles = tiles(rows, g);
    g.tiled = rows;
  }
  const auto blocks = static_cast<unsigned>(std::max<int64_t>(1, (std::max(g.n, n_tiles) + kThreads - 1) / kThreads));
  init_group_kernel<<<blocks, kThreads, 0, stream>>>(g, legacy, summary, rows, n_tiles, given);
  VPOC_GPU_CHECK_LAUNCH("init_group_kernel");
}

void launch_price_range(const InputView& in, RowSpan rows, GroupScratch& g, const Options& opt,
                        gpuStream_t stream) {
  if (rows.end <= rows.begin) return;
  tile_table(rows, g, stream);
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    // legacy is a bar distribution: trades never get here
    price_range_kernel<P, V, true><<<tiles(rows, g), kThreads, 0, stream>>>(source<P, V>(in, rows, opt), rows, g, g.tiles);
  });
  VPOC_GPU_CHECK_LAUNCH("price_range_kernel");
}

void launch_row_range(const InputView& in, RowSpan rows, GroupScratch& g, const Options& opt,
                      gpuStream_t stream) {
  if (rows.end <= rows.begin) return;
  tile_table(rows, g, stream);
  const bool legacy = in.bars && in.distribute == Distribute::legacy;
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    const auto src = source<P, V>(in, rows, opt);
    const auto checks = trade_checks<P, V>(src.scale, g);
    if (in.bars && in.distribute == Distribute::uniform)
      bar_range_kernel<P, V, Distribute::uniform><<<tiles(rows, g), kThreads, 0, stream>>>(src, rows, g, g.tiles,
                                                                                           opt.tick_size, checks);
    else if (in.bars && in.distribute == Distribute::close)
      bar_range_kernel<P, V, Distribute::close><<<tiles(rows, g), kThreads, 0, stream>>>(src, rows, g, g.tiles,
                                                                                         opt.tick_size, checks);
    else if (in.bars && in.distribute == Distribute::hlc3)
      bar_range_kernel<P, V, Distribute::hlc3><<<tiles(rows, g), kThreads, 0, stream>>>(src, rows, g, g.tiles,
                                                                                        opt.tick_size, checks);
    else if (in.bars)
      row_range_kernel<P, V, true><<<tiles(rows, g), kThreads, 0, stream>>>(src, rows, g, g.tiles, opt.tick_size, legacy);
    else if (g.volumes_in_bin && in.side != nullptr)  // sided: prices and side codes; volumes in the bin pass
      trade_range_kernel<P, V, false, true><<<tiles(rows, g), kThreads, 0, stream>>>(
          src, rows, g, g.tiles, opt.tick_size, checks);
    else if (g.volumes_in_bin)
      trade_range_kernel<P, V, false><<<tiles(rows, g), kThreads, 0, stream>>>(src, rows, g, g.tiles, opt.tick_size,
                                                                               checks);
    else if (in.side != nullptr)
      trade_range_kernel<P, V, true, true><<<tiles(rows, g), kThreads, 0, stream>>>(
          src, rows, g, g.tiles, opt.tick_size, checks);
    else
      trade_range_kernel<P, V, true><<<tiles(rows, g), kThreads, 0, stream>>>(src, rows, g, g.tiles, opt.tick_size,
                                                                              checks);
  });
  VPOC_GPU_CHECK_LAUNCH("row_range_kernel");
}

void launch_bin(const InputView& in, RowSpan rows, GroupScratch& g, const Options& opt,
                void* out_hi, void* out_lo, gpuStream_t stream) {
  if (rows.end <= rows.begin) return;
  tile_table(rows, g, stream);
  const bool legacy = in.bars && in.distribute == Distribute::legacy;
  auto* hi = static_cast<unsigned long long*>(out_hi);
  auto* lo = static_cast<unsigned long long*>(out_lo);
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    const auto src = source<P, V>(in, rows, opt);
    const auto go = [&](auto bars, auto sink) {
      constexpr bool Bars = decltype(bars)::value;
      using Rows = decltype(sink);
      if constexpr (!Bars)
        if (in.side != nullptr) {  // sided trades: the 3-plane instance
          bin_kernel<P, V, false, Rows, false, true><<<tiles(rows, g), kThreads, kSmemRows * 8, stream>>>(
              src, rows, g, g.tiles, sink, opt.tick_size, legacy, false, CheckedVolume<V>(0));
          return;
        }
      bin_kernel<P, V, Bars, Rows><<<tiles(rows, g), kThreads, kSmemRows * 8, stream>>>(
          src, rows, g, g.tiles, sink, opt.tick_size, legacy, uniform_diff(in, opt), CheckedVolume<V>(0));
    };
    using Yes = std::true_type;
    using No = std::false_type;
    if (!in.bars && g.volumes_in_bin) {  // whole-number rows only; a fraction reruns the call
      if (lo != nullptr || g.fixed_by_flag) VPOC_THROW(Error, "launch_bin: volumes_in_bin bins integer rows only");
      if (in.side != nullptr)  // sided: the 3-plane instance that checks volumes too
        bin_kernel<P, V, false, U64Rows, true, true><<<tiles(rows, g), kThreads, kSmemRows * 8, stream>>>(
            src, rows, g, g.tiles, U64Rows{hi}, opt.tick_size, legacy, false,
            round_down<CheckedVolume<V>>(g.huge_volume));
      else
        bin_kernel<P, V, false, U64Rows, true><<<tiles(rows, g), kThreads, kSmemRows * 8, stream>>>(
            src, rows, g, g.tiles, U64Rows{hi}, opt.tick_size, legacy, false,
            round_down<CheckedVolume<V>>(g.huge_volume));
      return;
    }
    // g.fixed_by_flag: both kinds are launched and the one the flag does not pick returns at once
    const bool u64 = lo == nullptr || g.fixed_by_flag, fixed = lo != nullptr;
    if (in.bars) {
      if (u64) go(Yes{}, U64Rows{hi});
      if (fixed) go(Yes{}, FixedRows{hi, lo});
    } else {
      if (u64) go(No{}, U64Rows{hi});
      if (fixed) go(No{}, FixedRows{hi, lo});
    }
  });
  VPOC_GPU_CHECK_LAUNCH("bin_kernel");
}

bool uniform_diff(const InputView& in, const Options& opt) {
  return in.bars && in.distribute == Distribute::uniform && opt.ticks_per_row == 1;
}

void launch_finish_rows(const InputView& in, const Options& opt, const GroupScratch& g, void* out_hi,
                        const void* out_lo, double* total, gpuStream_t stream) {
  if (g.n <= 0) return;
  finish_rows_kernel<<<static_cast<unsigned>(g.n), kThreads, 0, stream>>>(
      g, static_cast<unsigned long long*>(out_hi), static_cast<const unsigned long long*>(out_lo), total,
      uniform_diff(in, opt));
  VPOC_GPU_CHECK_LAUNCH("finish_rows_kernel");
}

void launch_publish_checks(const GroupScratch& g, long long* mirror, gpuStream_t stream) {
  publish_checks_kernel<<<1, 1, 0, stream>>>(g, mirror);
  VPOC_GPU_CHECK_LAUNCH("publish_checks_kernel");
}

size_t layout_temp_bytes(int64_t n) {
  if (n <= kOneBlockLayout) return 0;
  size_t bytes = 0;
  VPOC_GPU_CHECK(prim::exclusive_sum(nullptr, bytes, nullptr, nullptr, static_cast<int>(std::max<int64_t>(n, 1)), nullptr));
  return bytes;
}

void launch_zero_rows(const GroupScratch& g, void* out_hi, void* out_lo, int64_t cap, const long long* summary,
                      gpuStream_t stream, int planes) {
  if (cap <= 0) return;
  // about 8 rows per thread, at most 1024 blocks (grid-stride beyond)
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(1024, (cap + 8 * kThreads - 1) / (8 * kThreads)));
  zero_rows_kernel<<<blocks, kThreads, 0, stream>>>(g, static_cast<unsigned long long*>(out_hi),
                                                    static_cast<unsigned long long*>(out_lo), summary, planes, cap);
  VPOC_GPU_CHECK_LAUNCH("zero_rows_kernel");
}

bool launch_layout(const GroupScratch& g, int64_t* width, int64_t* low, int64_t* out_off, void* temp,
                   size_t temp_bytes, const LayoutColumns& cols, int64_t base, long long* summary,
                   int64_t cap, int64_t max_rows, gpuStream_t stream, void* zero_hi, void* zero_lo,
                   long long* mirror) {
  if (g.n <= 0) return false;
  if (g.n <= kOneBlockLayout) {
    layout_one_block_kernel<<<1, kLayoutThreads, 0, stream>>>(g, width, low, out_off, cols, base, summary, cap,
                                                              max_rows, static_cast<unsigned long long*>(zero_hi),
                                                              static_cast<unsigned long long*>(zero_lo), mirror);
    VPOC_GPU_CHECK_LAUNCH("layout_one_block_kernel");
    return mirror != nullptr;
  }
  if (zero_hi != nullptr) VPOC_THROW(Error, "launch_layout: zeroing needs the one-block layout");
  const auto blocks = static_cast<unsigned>((g.n + kThreads - 1) / kThreads);
  layout_widths_kernel<<<blocks, kThreads, 0, stream>>>(g, width, low, cols, summary);
  VPOC_GPU_CHECK_LAUNCH("layout_widths_kernel");
  VPOC_GPU_CHECK(prim::exclusive_sum(temp, temp_bytes, width, out_off, static_cast<int>(g.n), stream));
  layout_offsets_kernel<<<blocks, kThreads, 0, stream>>>(g, width, out_off, cols, base, summary, cap, max_rows);
  VPOC_GPU_CHECK_LAUNCH("layout_offsets_kernel");
  return false;
}

}  // namespace vpoc::gpu
