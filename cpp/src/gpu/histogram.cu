// gpu/histogram.cu — binning kernels: validation + touched-row ranges, then volume accumulation.
// Contract: the same ladder and distribution code as the CPU (core/*.hpp); atomics only, no sorting.
#include "gpu/histogram.hpp"

#include <algorithm>
#include <cfloat>

#include "core/distribute.hpp"
#include "core/ladder.hpp"
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

template <class T>
__device__ inline double load(const void* p, int64_t k) { return static_cast<double>(static_cast<const T*>(p)[k]); }

// One input row as the ladder sees it. P / V: price and volume element types.
template <class P, class V>
struct Source {
  InputView in;
  ladder::TickScale scale;
  int64_t tpr;
  int64_t base;

  __device__ double ticks(double p) const { return scale.exact ? scale.ticks<true>(p) : scale.ticks<false>(p); }
  __device__ bool valid_price(double p) const { return fabs(ticks(p)) < ladder::kMaxTicks; }
  __device__ int64_t row_of(double p) const {
    return ladder::tick_to_row(static_cast<int64_t>(ladder::round_half_even(ticks(p))), tpr);
  }
  __device__ double volume(int64_t i) const { return load<V>(in.volume, i - base); }
  __device__ double open_or(int64_t i, double c) const { return in.open ? load<P>(in.open, i - base) : c; }

  // Finite, in-range prices (and high >= low).
  __device__ bool valid_prices(int64_t i) const {
    if (!in.bars) return valid_price(load<P>(in.price, i - base));
    const double h = load<P>(in.high, i - base), l = load<P>(in.low, i - base);
    bool ok = valid_price(h) && valid_price(l) && valid_price(load<P>(in.close, i - base)) && h >= l;
    if (in.open) ok = ok && valid_price(load<P>(in.open, i - base));
    return ok;
  }
  __device__ bool valid_volume(int64_t i) const {
    const double v = volume(i);
    return v >= 0.0 && v <= DBL_MAX;
  }

  // Lowest and highest row row i touches (L: its session's legacy ladder, legacy only).
  __device__ void rows(int64_t i, const distribute::LegacyLadder& L, int64_t& lo, int64_t& hi) const {
    if (!in.bars) {
      lo = hi = row_of(load<P>(in.price, i - base));
      return;
    }
    const double h = load<P>(in.high, i - base), l = load<P>(in.low, i - base), c = load<P>(in.close, i - base);
    switch (in.distribute) {
      case Distribute::close: lo = hi = row_of(c); return;
      case Distribute::hlc3: lo = hi = row_of((h + l + c) / 3.0); return;
      case Distribute::uniform: lo = row_of(l); hi = row_of(h); return;
      case Distribute::legacy: {
        const double o = open_or(i, c);
        int64_t ka, kb;
        L.range(fmin(fmin(o, c), l), fmax(fmax(o, c), h), ka, kb);
        if (ka > kb) {
          lo = hi = row_of(c);
        } else {
          lo = ladder::tick_to_row(L.base + ka, tpr);
          hi = ladder::tick_to_row(L.base + kb, tpr);
        }
        return;
      }
    }
  }

  // Calls add(row, volume) for every share of row i.
  template <class Add>
  __device__ void emit(int64_t i, const distribute::LegacyLadder& L, Add&& add) const {
    const double v = volume(i);
    if (!in.bars) {
      add(row_of(load<P>(in.price, i - base)), v);
      return;
    }
    const double h = load<P>(in.high, i - base), l = load<P>(in.low, i - base), c = load<P>(in.close, i - base);
    switch (in.distribute) {
      case Distribute::close: add(row_of(c), v); return;
      case Distribute::hlc3: add(row_of((h + l + c) / 3.0), v); return;
      case Distribute::uniform: {
        const auto tl = static_cast<int64_t>(ladder::round_half_even(ticks(l)));
        const auto th = static_cast<int64_t>(ladder::round_half_even(ticks(h)));
        distribute::uniform(tl, th, v, tpr, add);
        return;
      }
      case Distribute::legacy: {
        const double o = open_or(i, c);
        distribute::legacy(L, fmin(fmin(o, c), l), fmax(fmax(o, c), h), c, v, tpr, add);
        return;
      }
    }
  }
};

__device__ inline distribute::LegacyLadder ladder_of(const GroupScratch& g, int64_t s, double tick, bool legacy) {
  if (!legacy) return distribute::LegacyLadder{};
  return distribute::LegacyLadder::make(dec_price(g.plo[s]), dec_price(g.phi[s]), tick);
}

// The sessions of tile [t0, t1): first and last (equal when the tile lies in one session).
__device__ inline void tile_sessions(const GroupScratch& g, int64_t t0, int64_t t1, int64_t& first, int64_t& last) {
  __shared__ int64_t sh[2];
  if (threadIdx.x == 0) {
    sh[0] = find_session(g, t0);
    sh[1] = find_session(g, t1 - 1);
  }
  __syncthreads();
  first = sh[0];
  last = sh[1];
}

// [tiles] blocks x [kThreads]: per-session min(open, close, low) / max(open, close, high).
template <class P, class V>
__global__ void price_range_kernel(Source<P, V> src, RowSpan rows, GroupScratch g) {
  const int64_t t0 = rows.begin + static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t t1 = min(t0 + kTile, rows.end);
  int64_t s, last;
  tile_sessions(g, t0, t1, s, last);
  for (int64_t i = t0 + threadIdx.x; i < t1; i += kThreads) {
    while (g.offsets[s + 1] <= i) ++s;
    if (!src.valid_prices(i)) continue;  // reported by the row-range pass
    const double h = load<P>(src.in.high, i - src.base), l = load<P>(src.in.low, i - src.base);
    const double c = load<P>(src.in.close, i - src.base), o = src.open_or(i, c);
    atomicMin(&g.plo[s], enc_price(fmin(fmin(o, c), l)));
    atomicMax(&g.phi[s], enc_price(fmax(fmax(o, c), h)));
  }
}

// [tiles] blocks x [kThreads]: validation (first bad row -> g.err) and touched-row ranges.
template <class P, class V>
__global__ void row_range_kernel(Source<P, V> src, RowSpan rows, GroupScratch g, double tick, bool legacy) {
  __shared__ unsigned long long block_lo, block_hi;
  const int64_t t0 = rows.begin + static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t t1 = min(t0 + kTile, rows.end);
  int64_t first, last;
  tile_sessions(g, t0, t1, first, last);
  if (threadIdx.x == 0) {
    block_lo = kEncNone;
    block_hi = 0;
  }
  __syncthreads();
  const bool one = first == last;
  distribute::LegacyLadder L = ladder_of(g, first, tick, legacy);
  int64_t s = first;
  unsigned long long my_lo = kEncNone, my_hi = 0;
  for (int64_t i = t0 + threadIdx.x; i < t1; i += kThreads) {
    if (!one) {
      const int64_t before = s;
      while (g.offsets[s + 1] <= i) ++s;
      if (s != before) L = ladder_of(g, s, tick, legacy);
    }
    if (!src.valid_prices(i)) {
      atomicMin(g.err, static_cast<unsigned long long>(i));
      continue;
    }
    int64_t lo, hi;
    src.rows(i, L, lo, hi);
    if (one) {
      my_lo = min(my_lo, enc_row(lo));
      my_hi = max(my_hi, enc_row(hi));
    } else {
      atomicMin(&g.lo[s], enc_row(lo));
      atomicMax(&g.hi[s], enc_row(hi));
    }
  }
  if (one) {
    if (my_lo != kEncNone) {
      atomicMin(&block_lo, my_lo);
      atomicMax(&block_hi, my_hi);
    }
    __syncthreads();
    if (threadIdx.x == 0 && block_lo != kEncNone) {
      atomicMin(&g.lo[first], block_lo);
      atomicMax(&g.hi[first], block_hi);
    }
  }
}

__device__ inline void add_to(double* p, double v) { atomicAdd(p, v); }
__device__ inline void add_to(unsigned long long* p, double v) { atomicAdd(p, static_cast<unsigned long long>(v)); }

// [tiles] blocks x [kThreads], kSmemRows * sizeof(Acc) dynamic shared memory: volume into out.
// Each thread bins kItems consecutive rows and merges runs of equal rows before its atomics
// (consecutive trades mostly repeat the last price).
template <class P, class V, class Acc>
__global__ void bin_kernel(Source<P, V> src, RowSpan rows, GroupScratch g, Acc* out, double tick, bool legacy) {
  constexpr int kItems = kTile / kThreads;
  extern __shared__ unsigned char smem_raw[];
  Acc* shared_rows = reinterpret_cast<Acc*>(smem_raw);
  const int64_t t0 = rows.begin + static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t t1 = min(t0 + kTile, rows.end);
  int64_t first, last;
  tile_sessions(g, t0, t1, first, last);
  const bool privatized = first == last && g.width[first] <= kSmemRows;
  if (privatized) {
    for (int64_t k = threadIdx.x; k < g.width[first]; k += kThreads) shared_rows[k] = Acc(0);
    __syncthreads();
  }
  const int64_t i0 = t0 + static_cast<int64_t>(threadIdx.x) * kItems;
  int64_t s = first;
  if (!privatized && i0 < t1)
    while (g.offsets[s + 1] <= i0) ++s;
  distribute::LegacyLadder L = ladder_of(g, s, tick, legacy);
  Acc* dst = privatized ? shared_rows : out + g.out_off[s];
  int64_t low = g.low_row[s];
  int64_t run_row = 0;  // the pending run: rows run_row of dst, volume run_v
  double run_v = 0.0;
  bool pending = false;
  const auto flush = [&]() {
    if (pending) add_to(dst + (run_row - low), run_v);
    pending = false;
  };
  const auto add = [&](int64_t r, double v) {
    if (pending && r == run_row) {
      run_v += v;
    } else {
      flush();
      run_row = r;
      run_v = v;
      pending = true;
    }
    return true;
  };
  for (int64_t i = i0; i < min(i0 + kItems, t1); ++i) {
    if (!privatized && g.offsets[s + 1] <= i) {
      flush();
      while (g.offsets[s + 1] <= i) ++s;
      L = ladder_of(g, s, tick, legacy);
      dst = out + g.out_off[s];
      low = g.low_row[s];
    }
    if (!src.valid_volume(i)) {
      atomicMin(g.err, static_cast<unsigned long long>(i));
      continue;
    }
    src.emit(i, L, add);
  }
  flush();
  if (privatized) {
    __syncthreads();
    Acc* o = out + g.out_off[first];
    for (int64_t k = threadIdx.x; k < g.width[first]; k += kThreads)
      if (shared_rows[k] != Acc(0)) atomicAdd(o + k, shared_rows[k]);
  }
}

// [tiles] blocks x [kThreads]: first bad volume into g.err.
template <class P, class V>
__global__ void volume_check_kernel(Source<P, V> src, RowSpan rows, GroupScratch g) {
  const int64_t t0 = rows.begin + static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t t1 = min(t0 + kTile, rows.end);
  for (int64_t i = t0 + threadIdx.x; i < t1; i += kThreads)
    if (!src.valid_volume(i)) atomicMin(g.err, static_cast<unsigned long long>(i));
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

// Calls fn(P{}, V{}) for the input's element types.
template <class F>
void with_types(const InputView& in, F&& fn) {
  const auto with_v = [&](auto p) {
    switch (in.volume_dtype) {
      case DType::f32: return fn(p, float{});
      case DType::f64: return fn(p, double{});
      case DType::i32: return fn(p, int32_t{});
      case DType::i64: return fn(p, int64_t{});
    }
  };
  if (in.price_dtype == DType::f32) with_v(float{});
  else with_v(double{});
}

template <class P, class V>
Source<P, V> source(const InputView& in, RowSpan rows, const Options& opt) {
  return Source<P, V>{in, ladder::TickScale::make(opt.tick_size), opt.ticks_per_row, rows.base};
}

unsigned tiles(RowSpan rows) { return static_cast<unsigned>((rows.end - rows.begin + kTile - 1) / kTile); }

}  // namespace

void launch_price_range(const InputView& in, RowSpan rows, const GroupScratch& g, const Options& opt,
                        gpuStream_t stream) {
  if (rows.end <= rows.begin) return;
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    price_range_kernel<P, V><<<tiles(rows), kThreads, 0, stream>>>(source<P, V>(in, rows, opt), rows, g);
  });
  VPOC_GPU_CHECK_LAUNCH("price_range_kernel");
}

void launch_row_range(const InputView& in, RowSpan rows, const GroupScratch& g, const Options& opt,
                      gpuStream_t stream) {
  if (rows.end <= rows.begin) return;
  const bool legacy = in.bars && in.distribute == Distribute::legacy;
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    row_range_kernel<P, V><<<tiles(rows), kThreads, 0, stream>>>(source<P, V>(in, rows, opt), rows, g,
                                                                 opt.tick_size, legacy);
  });
  VPOC_GPU_CHECK_LAUNCH("row_range_kernel");
}

void launch_bin(const InputView& in, RowSpan rows, const GroupScratch& g, const Options& opt,
                bool integer_acc, void* out, gpuStream_t stream) {
  if (rows.end <= rows.begin) return;
  const bool legacy = in.bars && in.distribute == Distribute::legacy;
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    const auto src = source<P, V>(in, rows, opt);
    if (integer_acc) {
      using Acc = unsigned long long;
      bin_kernel<P, V, Acc><<<tiles(rows), kThreads, kSmemRows * sizeof(Acc), stream>>>(
          src, rows, g, static_cast<Acc*>(out), opt.tick_size, legacy);
    } else {
      bin_kernel<P, V, double><<<tiles(rows), kThreads, kSmemRows * sizeof(double), stream>>>(
          src, rows, g, static_cast<double*>(out), opt.tick_size, legacy);
    }
  });
  VPOC_GPU_CHECK_LAUNCH("bin_kernel");
}

void launch_volume_check(const InputView& in, RowSpan rows, const GroupScratch& g, gpuStream_t stream) {
  if (rows.end <= rows.begin) return;
  Options opt;  // the volume check needs no ladder
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    volume_check_kernel<P, V><<<tiles(rows), kThreads, 0, stream>>>(source<P, V>(in, rows, opt), rows, g);
  });
  VPOC_GPU_CHECK_LAUNCH("volume_check_kernel");
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
