// gpu/histogram.cu — binning kernels: validation + touched-row ranges, then volume accumulation.
// Contract: the same ladder and distribution code as the CPU (core/*.hpp); atomics only, no sorting.
#include "gpu/histogram.hpp"

#include <algorithm>
#include <cfloat>

#include "core/distribute.hpp"
#include "core/ladder.hpp"
#include "core/source.hpp"
#include "gpu/prim.hpp"
#include "vpoc/profiles.hpp"

namespace vpoc::gpu {
namespace {

// Rows per block tile: 256 threads x 8 rows each.
constexpr int kThreads = 256;
constexpr int kTile = kThreads * 8;
// A tile that lies in one session no wider than this bins into shared memory (32 KiB of 8-byte
// accumulators, under the 48 KiB every target has) and flushes once per tile.
constexpr int kSmemRows = 4096;

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

// Session (index in the group) holding absolute row i: the last s with offsets[s] <= i.
__device__ inline int64_t find_session(const GroupScratch& g, int64_t i) {
  int64_t lo = 0, hi = g.n - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (g.offsets[mid] <= i) lo = mid; else hi = mid - 1;
  }
  return lo;
}

__device__ inline distribute::LegacyLadder ladder_of(const GroupScratch& g, int64_t s, double tick, bool legacy) {
  if (!legacy) return distribute::LegacyLadder{};
  return distribute::LegacyLadder::make(dec_price(g.plo[s]), dec_price(g.phi[s]), tick);
}

// [tiles] one thread per tile: the sessions of its first and last row (so that no block searches).
__global__ void tile_table_kernel(RowSpan rows, GroupScratch g, int64_t* table, int64_t n_tiles) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (b >= n_tiles) return;
  const int64_t t0 = rows.begin + b * kTile;
  const int64_t t1 = min(t0 + kTile, rows.end);
  table[2 * b] = find_session(g, t0);
  table[2 * b + 1] = find_session(g, t1 - 1);
}

// [tiles] blocks x [kThreads]: per-session min(open, close, low) / max(open, close, high).
template <class P, class V>
__global__ void price_range_kernel(Source<P, V> src, RowSpan rows, GroupScratch g, const int64_t* table) {
  const int64_t t0 = rows.begin + static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t t1 = min(t0 + kTile, rows.end);
  int64_t s = table[2 * blockIdx.x];
  for (int64_t i = t0 + threadIdx.x; i < t1; i += kThreads) {
    while (g.offsets[s + 1] <= i) ++s;
    const Item it = src.item(i);
    if (!src.valid_prices(it)) continue;  // reported by the row-range pass
    atomicMin(&g.plo[s], enc_price(Source<P, V>::legacy_lo(it)));
    atomicMax(&g.phi[s], enc_price(Source<P, V>::legacy_hi(it)));
  }
}

// True when v is a whole number below 2**31: such volumes sum exactly in 64-bit integers.
__device__ inline bool whole(double v) { return v == floor(v) && v < 2147483648.0; }

// Block-wide min (of lo) and max (of hi) by tree reduction in red_lo / red_hi ([kThreads] each);
// thread 0 folds them into *glo / *ghi. Every thread of the block must call it.
__device__ inline void reduce_range(unsigned long long lo, unsigned long long hi, unsigned long long* red_lo,
                                    unsigned long long* red_hi, unsigned long long* glo, unsigned long long* ghi) {
  red_lo[threadIdx.x] = lo;
  red_hi[threadIdx.x] = hi;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
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

// [tiles] blocks x [kThreads]: validation (first bad row -> g.err), touched-row ranges, and
// g.fractional |= 1 when a volume is not a whole number below 2**31. The tile's first and last
// sessions (which other tiles share) are reduced in the block and updated once; sessions wholly
// inside the tile take per-row atomics (only this block touches them).
template <class P, class V>
__global__ void __launch_bounds__(kThreads, 8) row_range_kernel(Source<P, V> src, RowSpan rows, GroupScratch g,
                                                                const int64_t* table, double tick, bool legacy) {
  __shared__ unsigned long long red_lo[kThreads], red_hi[kThreads];
  const int64_t t0 = rows.begin + static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t t1 = min(t0 + kTile, rows.end);
  const int64_t first = table[2 * blockIdx.x], last = table[2 * blockIdx.x + 1];
  int64_t s = first;
  distribute::LegacyLadder L = ladder_of(g, s, tick, legacy);
  unsigned long long lo_first = kEncNone, hi_first = 0, lo_last = kEncNone, hi_last = 0, bad = kEncNone;
  bool fractional = false;
  for (int64_t i = t0 + threadIdx.x; i < t1; i += kThreads) {
    if (s != last && g.offsets[s + 1] <= i) {
      while (g.offsets[s + 1] <= i) ++s;
      L = ladder_of(g, s, tick, legacy);
    }
    const Item it = src.item(i);
    if (!src.valid_prices(it) || !Source<P, V>::valid_volume(it)) {
      bad = min(bad, static_cast<unsigned long long>(i));
      continue;
    }
    fractional |= !whole(it.v);
    int64_t lo, hi;
    src.rows(it, L, lo, hi);
    if (s == first) {
      lo_first = min(lo_first, enc_row(lo));
      hi_first = max(hi_first, enc_row(hi));
    } else if (s == last) {
      lo_last = min(lo_last, enc_row(lo));
      hi_last = max(hi_last, enc_row(hi));
    } else {
      atomicMin(&g.lo[s], enc_row(lo));
      atomicMax(&g.hi[s], enc_row(hi));
    }
  }
  if (bad != kEncNone) atomicMin(g.err, bad);
  if (fractional) atomicOr(g.fractional, 1u);
  reduce_range(lo_first, hi_first, red_lo, red_hi, &g.lo[first], &g.hi[first]);
  if (last != first) reduce_range(lo_last, hi_last, red_lo, red_hi, &g.lo[last], &g.hi[last]);
}

__device__ inline void add_to(double* p, double v) { atomicAdd(p, v); }
__device__ inline void add_to(unsigned long long* p, double v) { atomicAdd(p, static_cast<unsigned long long>(v)); }

// Shared-memory copies of a narrow session's rows in the bin kernel: thread groups of 32 add into
// their own copy, so fewer threads contend for the same row (consecutive rows share prices).
constexpr int kCopies = kThreads / 32;

// [tiles] blocks x [kThreads], kSmemRows * sizeof(Acc) dynamic shared memory: volume into out.
// A tile within one or two sessions whose rows fit in kSmemRows bins into shared memory (kCopies
// copies when narrow enough, to spread contention) and flushes once; other tiles add straight
// to global memory.
template <class P, class V, class Acc>
__global__ void __launch_bounds__(kThreads, 8) bin_kernel(Source<P, V> src, RowSpan rows, GroupScratch g,
                                                          const int64_t* table, Acc* out, double tick, bool legacy) {
  extern __shared__ unsigned char smem_raw[];
  Acc* shared_rows = reinterpret_cast<Acc*>(smem_raw);
  const int64_t t0 = rows.begin + static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t t1 = min(t0 + kTile, rows.end);
  const int64_t first = table[2 * blockIdx.x], last = table[2 * blockIdx.x + 1];
  // Shared layout: [copy][first's rows | last's rows].
  const int64_t w_first = g.width[first], w_last = last == first ? 0 : g.width[last];
  const int64_t width = w_first + w_last;
  const bool privatized = last - first <= 1 && width <= kSmemRows;
  const int copies = privatized && width * kCopies <= kSmemRows ? kCopies : 1;
  if (privatized) {
    for (int64_t k = threadIdx.x; k < width * copies; k += kThreads) shared_rows[k] = Acc(0);
    __syncthreads();
  }
  Acc* mine = shared_rows + (threadIdx.x / 32) % copies * width;
  int64_t s = first;
  distribute::LegacyLadder L = ladder_of(g, s, tick, legacy);
  Acc* dst = privatized ? mine : out + g.out_off[s];
  int64_t low = g.low_row[s];
  const auto add = [&](int64_t r, double v) {
    add_to(dst + (r - low), v);
    return true;
  };
  for (int64_t i = t0 + threadIdx.x; i < t1; i += kThreads) {
    if (s != last && g.offsets[s + 1] <= i) {
      while (g.offsets[s + 1] <= i) ++s;
      L = ladder_of(g, s, tick, legacy);
      dst = privatized ? mine + w_first : out + g.out_off[s];
      low = g.low_row[s];
    }
    src.emit(src.item(i), L, add);
  }
  if (privatized) {
    __syncthreads();
    for (int64_t k = threadIdx.x; k < width; k += kThreads) {
      Acc sum = shared_rows[k];
      for (int c = 1; c < copies; ++c) sum += shared_rows[c * width + k];
      Acc* o = k < w_first ? out + g.out_off[first] + k : out + g.out_off[last] + (k - w_first);
      if (sum != Acc(0)) atomicAdd(o, sum);
    }
  }
}

// [n] one thread per session of the group.
__global__ void layout_widths_kernel(GroupScratch g, int64_t* width, int64_t* low, LayoutColumns cols,
                                     long long* summary) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (k >= g.n) return;
  const bool empty = g.lo[k] == kEncNone;
  const int64_t l = empty ? 0 : dec_row(g.lo[k]);
  const int64_t w = empty ? 0 : dec_row(g.hi[k]) - l + 1;
  width[k] = w;
  low[k] = l;
  cols.n_rows[k] = w;
  cols.low_row[k] = empty ? kNoRow : l;
  atomicMax(reinterpret_cast<unsigned long long*>(summary + 1), static_cast<unsigned long long>(w));
}

// [n] one thread per session of the group.
__global__ void layout_offsets_kernel(int64_t n, const int64_t* width, const int64_t* out_off, LayoutColumns cols,
                                      int64_t base, long long* summary) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (k >= n) return;
  cols.offsets[k] = base + out_off[k];
  if (k == n - 1) {
    summary[0] = out_off[k] + width[k];
    cols.offsets[n] = base + summary[0];
  }
}

template <class P, class V>
Source<P, V> source(const InputView& in, RowSpan rows, const Options& opt) {
  return make_source<P, V>(in, opt, rows.base);
}

unsigned tiles(RowSpan rows) { return static_cast<unsigned>((rows.end - rows.begin + kTile - 1) / kTile); }

// The tile -> (first session, last session) table of rows, in g.tiles.
void tile_table(RowSpan rows, const GroupScratch& g, gpuStream_t stream) {
  const int64_t n = tiles(rows);
  tile_table_kernel<<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(rows, g, g.tiles, n);
  VPOC_GPU_CHECK_LAUNCH("tile_table_kernel");
}

}  // namespace

int64_t max_tiles(int64_t rows) { return (rows + kTile - 1) / kTile; }

void launch_price_range(const InputView& in, RowSpan rows, const GroupScratch& g, const Options& opt,
                        gpuStream_t stream) {
  if (rows.end <= rows.begin) return;
  tile_table(rows, g, stream);
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    price_range_kernel<P, V><<<tiles(rows), kThreads, 0, stream>>>(source<P, V>(in, rows, opt), rows, g, g.tiles);
  });
  VPOC_GPU_CHECK_LAUNCH("price_range_kernel");
}

void launch_row_range(const InputView& in, RowSpan rows, const GroupScratch& g, const Options& opt,
                      gpuStream_t stream) {
  if (rows.end <= rows.begin) return;
  tile_table(rows, g, stream);
  const bool legacy = in.bars && in.distribute == Distribute::legacy;
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    row_range_kernel<P, V><<<tiles(rows), kThreads, 0, stream>>>(source<P, V>(in, rows, opt), rows, g, g.tiles,
                                                                 opt.tick_size, legacy);
  });
  VPOC_GPU_CHECK_LAUNCH("row_range_kernel");
}

void launch_bin(const InputView& in, RowSpan rows, const GroupScratch& g, const Options& opt,
                bool integer_acc, void* out, gpuStream_t stream) {
  if (rows.end <= rows.begin) return;
  tile_table(rows, g, stream);
  const bool legacy = in.bars && in.distribute == Distribute::legacy;
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    const auto src = source<P, V>(in, rows, opt);
    if (integer_acc) {
      using Acc = unsigned long long;
      bin_kernel<P, V, Acc><<<tiles(rows), kThreads, kSmemRows * sizeof(Acc), stream>>>(
          src, rows, g, g.tiles, static_cast<Acc*>(out), opt.tick_size, legacy);
    } else {
      bin_kernel<P, V, double><<<tiles(rows), kThreads, kSmemRows * sizeof(double), stream>>>(
          src, rows, g, g.tiles, static_cast<double*>(out), opt.tick_size, legacy);
    }
  });
  VPOC_GPU_CHECK_LAUNCH("bin_kernel");
}

size_t layout_temp_bytes(int64_t n) {
  size_t bytes = 0;
  VPOC_GPU_CHECK(prim::exclusive_sum(nullptr, bytes, nullptr, nullptr, static_cast<int>(std::max<int64_t>(n, 1)), nullptr));
  return bytes;
}

void launch_layout(const GroupScratch& g, int64_t* width, int64_t* low, int64_t* out_off, void* temp,
                   size_t temp_bytes, const LayoutColumns& cols, int64_t base, long long* summary,
                   gpuStream_t stream) {
  if (g.n <= 0) return;
  const auto blocks = static_cast<unsigned>((g.n + kThreads - 1) / kThreads);
  VPOC_GPU_CHECK(gpuMemsetAsync(summary, 0, 2 * sizeof(long long), stream));
  layout_widths_kernel<<<blocks, kThreads, 0, stream>>>(g, width, low, cols, summary);
  VPOC_GPU_CHECK_LAUNCH("layout_widths_kernel");
  VPOC_GPU_CHECK(prim::exclusive_sum(temp, temp_bytes, width, out_off, static_cast<int>(g.n), stream));
  layout_offsets_kernel<<<blocks, kThreads, 0, stream>>>(g.n, width, out_off, cols, base, summary);
  VPOC_GPU_CHECK_LAUNCH("layout_offsets_kernel");
}

}  // namespace vpoc::gpu
