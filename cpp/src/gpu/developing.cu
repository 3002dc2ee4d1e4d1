// gpu/developing.cu — developing series kernels: a block per session, a chunk of bars at a time, or one thread per session.
// Contract: core/developing_chunk.hpp / core/developing.hpp do the work, bit-equal to the CPU pass; no allocation.
#include "gpu/developing.hpp"

#include <algorithm>
#include <vector>

#include "core/developing.hpp"
#include "core/developing_chunk.hpp"
#include "core/ladder.hpp"
#include "core/window.hpp"
#include "core/window_reach.hpp"

namespace vpoc::gpu {
namespace {

// A session's scratch goes to shared memory when the batch's widest fits in the 48 KiB every
// target gives a block without opting in (1536 rows: ES sessions have a few hundred): its
// dependent chain of loads then waits ~30 cycles each instead of an L2 round trip.
constexpr int64_t kSmemBytes = 48 * 1024;

namespace chunk = developing::chunk;

// The chunked kernel's shared memory per block is aimed at one wave of the bench's 1,014 sessions:
// 8 blocks per SM on an H100 / H200 (228 KiB, 1 KiB reserved per block). The table takes what the
// base rows leave, between these bounds (a smaller table only cuts chunks earlier).
constexpr int64_t kChunkSmemTarget = 27 * 1024;
constexpr int64_t kChunkMinCells = 512;

// [n] blocks x [chunk::kThreads]: one block per session running core/developing_chunk.hpp's phases,
// the block synced between them (4 syncs per chunk of up to chunk::kChunk bars, 1 before the first). Shared memory:
// [chunk::smem_bytes(b.widest, cells)] from the launcher (block state, base rows, table of cells).
// Generic false: levels::plain_rules() (the rules outside it compiled out of the walk).
template <class P, class V, bool Generic>
__global__ void __launch_bounds__(chunk::kThreads)
    chunk_kernel(Source<P, V> src, DevelopingBatch b, Options opt, int64_t cells, unsigned* failed) {
  const int64_t s = blockIdx.x;
  if (s >= b.n || b.n_rows[s] == 0) return;  // block-uniform
  extern __shared__ double smem[];
  const int t = static_cast<int>(threadIdx.x);
  const int64_t begin = b.offsets[s];
  auto pass = chunk::Pass<Source<P, V>, Generic>::make(src, opt, smem, developing::scratch_rows(b.n_rows[s]),
                                                        b.low_row[s] - developing::kMargin, b.offsets[s + 1], cells);
  const ladder::RowPrice row_price =
      ladder::RowPrice::make(opt.tick_size, opt.ticks_per_row, opt.price_label == PriceLabel::decimal);
  pass.start(t, begin);  // the base zeroed, the first chunk's [kChunk] bars
  __syncthreads();
  // i0 (every thread's copy): the chunk's first input row, advanced by each thread's own cut (the same
  // on every thread). 4 syncs a chunk: each phase writes only what no other thread reads in it.
  for (int64_t i0 = begin; i0 < pass.end;) {
    const chunk::Cut c = pass.plan(t, i0);  // every thread: the cut, its hull; lanes: their prefix's rows, total
    if (c.fail) {                           // block-uniform: every thread read the same bars
      if (t == 0) atomicExch(failed, 1u);
      return;
    }
    pass.fill(t, c);  // [n x H] table, base folded; [kThreads] maxima outside the hull
    __syncthreads();
    pass.max_part(t);  // [kThreads] partial hull maxima, rows outside the hull at their maximum
    __syncthreads();
    pass.poc_part(t);  // [kThreads] partial POCs
    __syncthreads();
    // [n] walking lanes; the lanes past kChunk prepare the next chunk's [kChunk] bars meanwhile
    pass.walk_ahead(t, i0, [&](int64_t i, int64_t poc, int64_t val, int64_t vah) {
      b.dev_poc[i] = row_price(poc);
      b.dev_val[i] = row_price(val);
      b.dev_vah[i] = row_price(vah);
    });
    __syncthreads();
    i0 += c.n;
  }
}

// [n] blocks x [1] thread: a session is a sequential chain of dependent updates, so one thread
// each, every thread its own warp (lanes of one warp would serialise on their divergent branches).
// Generic false: levels::plain_rules(), the other rules compiled out (developing::SessionOf).
template <class P, class V, bool Generic>
__global__ void developing_kernel(Source<P, V> src, DevelopingBatch b, Options opt, bool in_smem, unsigned* failed) {
  const int64_t s = blockIdx.x;
  if (s >= b.n || b.n_rows[s] == 0) return;
  const int64_t w = developing::scratch_rows(b.n_rows[s]);
  developing::Scratch sc;
  if (in_smem) {  // [widest] of each array, one after the other
    extern __shared__ double smem[];
    sc.vf = reinterpret_cast<Fixed*>(smem);
    sc.v = smem + 2 * b.widest;
    sc.path_run = smem + 3 * b.widest;
    sc.path_lo = reinterpret_cast<int32_t*>(smem + 4 * b.widest);
    sc.path_hi = sc.path_lo + b.widest;
    if (opt.va_method == VaMethod::greedy) {  // [widest] more of each (see kDevelopingOrderBytes)
      sc.order = sc.path_hi + b.widest;
      sc.pos = sc.order + b.widest;
    }
    for (int64_t k = 0; k < w; ++k) {
      sc.v[k] = 0.0;
      sc.vf[k] = Fixed{};
    }
  } else {
    const int64_t at = b.start[s];
    sc.v = b.v + at;
    sc.vf = b.vf + at;
    sc.path_run = b.run + at;
    sc.path_lo = b.lo + at;
    sc.path_hi = b.hi + at;
    sc.order = b.order + at;
    sc.pos = b.pos + at;
  }
  sc.W = w;
  sc.origin = b.low_row[s] - developing::kMargin;
  const ladder::RowPrice row_price =
      ladder::RowPrice::make(opt.tick_size, opt.ticks_per_row, opt.price_label == PriceLabel::decimal);
  developing::SessionOf<Generic> session(sc, opt);
  const bool ok = session.run(src, b.offsets[s], b.offsets[s + 1], [&](int64_t i, int64_t poc, int64_t val, int64_t vah) {
    b.dev_poc[i] = row_price(poc);
    b.dev_val[i] = row_price(val);
    b.dev_vah[i] = row_price(vah);
  });
  if (!ok) atomicExch(failed, 1u);
}

// [n] blocks x [1] thread: rolling windows (window::length input rows, or b.window_start's time
// windows; va_rows='touched': the whole session as one window), core/window.hpp as on the CPU.
// Scratch in global memory: v, vf, and the cover counts in lo (each thread zeroes its own rows).
// Across sessions (b.origin): each session's scratch spans the rows its windows reach, and the rows
// before it that its first window holds are preloaded (replayed), as cpu/developing.cpp does.
template <class P, class V>
__global__ void window_kernel(Source<P, V> src, DevelopingBatch b, Options opt, window::Starts starts,
                              unsigned* failed) {
  const int64_t s = blockIdx.x;
  if (s >= b.n || b.n_rows[s] == 0) return;
  const int64_t at = b.start[s];
  const bool across = b.origin != nullptr;
  window::Scratch sc;
  sc.v = b.v + at;
  sc.vf = b.vf + at;
  sc.touch = b.lo + at;
  sc.order = b.order + at;
  sc.W = across ? b.width[s] : b.n_rows[s];  // within a session every window's rows lie in the session's
  sc.origin = across ? b.origin[s] : b.low_row[s];
  for (int64_t k = 0; k < sc.W; ++k) {
    sc.v[k] = 0.0;
    sc.vf[k] = Fixed{};
    sc.touch[k] = 0;
  }
  const ladder::RowPrice row_price =
      ladder::RowPrice::make(opt.tick_size, opt.ticks_per_row, opt.price_label == PriceLabel::decimal);
  window::Session session(sc, opt);
  const int64_t b0 = across ? starts(0, b.offsets[s]) : b.offsets[s];  // the first row of its first window
  const bool ok = session.preload(src, b0, b.offsets[s]) &&
                  session.extend(src, b0, b.offsets[s], b.offsets[s + 1], starts,
                                 [&](int64_t i, int64_t poc, int64_t val, int64_t vah) {
                                   b.dev_poc[i] = row_price(poc);
                                   b.dev_val[i] = row_price(val);
                                   b.dev_vah[i] = row_price(vah);
                                 });
  if (ok) return;
  if (b.window_failed == nullptr || session.why() == window::Why::outside) {
    atomicExch(failed, 1u);
    return;
  }
  b.fail_width[s] = session.last() - session.first() + 1;
  atomicMin(b.window_failed, static_cast<unsigned long long>(session.fail_row()) << 2 |
                                 static_cast<unsigned long long>(session.why()));
}

}  // namespace

void launch_developing(const InputView& in, int64_t base, const DevelopingBatch& b, const Options& opt,
                       unsigned* failed, gpuStream_t stream) {
  if (b.n <= 0) return;
  if (b.window_start || window::length(opt) > 0) {  // rolling windows (or touched rows): their own kernel
    const window::Starts starts = b.window_start ? window::Starts::given(b.window_start, base)
                                                 : window::Starts::rows(window::length(opt));
    with_types(in, [&](auto p, auto v) {
      using P = decltype(p);
      using V = decltype(v);
      window_kernel<P, V><<<static_cast<unsigned>(b.n), 1, 0, stream>>>(make_source<P, V>(in, opt, base), b, opt,
                                                                          starts, failed);
    });
    VPOC_GPU_CHECK_LAUNCH("window_kernel");
    return;
  }
  // A block per session where core/developing_chunk.hpp takes the rules and the widest session's
  // rows fit in shared memory beside a table of kChunkMinCells; else one thread per session.
  const bool generic = !levels::plain_rules(levels::rules_of(opt));
  const int64_t base_smem = chunk::smem_bytes(b.widest, 0);
  int64_t cells = (kChunkSmemTarget - base_smem) / 8;
  cells = cells < kChunkMinCells ? kChunkMinCells : (cells > chunk::kTableCells ? chunk::kTableCells : cells);
  if (chunk::takes(in, opt) && base_smem + cells * 8 <= kSmemBytes) {
    const auto smem = static_cast<size_t>(chunk::smem_bytes(b.widest, cells));
    with_types(in, [&](auto p, auto v) {
      using P = decltype(p);
      using V = decltype(v);
      const auto src = make_source<P, V>(in, opt, base);
      if (generic)
        chunk_kernel<P, V, true><<<static_cast<unsigned>(b.n), chunk::kThreads, smem, stream>>>(src, b, opt, cells, failed);
      else
        chunk_kernel<P, V, false><<<static_cast<unsigned>(b.n), chunk::kThreads, smem, stream>>>(src, b, opt, cells, failed);
    });
    VPOC_GPU_CHECK_LAUNCH("chunk_kernel");
    return;
  }
  const int64_t row_bytes = kDevelopingRowBytes - (opt.va_method == VaMethod::greedy ? 0 : kDevelopingOrderBytes);
  const int64_t smem = b.widest * row_bytes;
  const bool in_smem = smem <= kSmemBytes;
  if (!in_smem) {
    VPOC_GPU_CHECK(gpuMemsetAsync(b.v, 0, static_cast<size_t>(b.scratch_rows) * sizeof(double), stream));
    VPOC_GPU_CHECK(gpuMemsetAsync(b.vf, 0, static_cast<size_t>(b.scratch_rows) * sizeof(Fixed), stream));
  }
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    const auto src = make_source<P, V>(in, opt, base);
    const auto bytes = in_smem ? static_cast<size_t>(smem) : 0;
    if (generic)
      developing_kernel<P, V, true><<<static_cast<unsigned>(b.n), 1, bytes, stream>>>(src, b, opt, in_smem, failed);
    else
      developing_kernel<P, V, false><<<static_cast<unsigned>(b.n), 1, bytes, stream>>>(src, b, opt, in_smem, failed);
  });
  VPOC_GPU_CHECK_LAUNCH("developing_kernel");
}

int64_t window_rows(const InputView& in, bool on_device, const Options& opt, int64_t j, int64_t i,
                    gpuStream_t stream) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  bool ok = true;
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    if (!on_device) {
      ok = window::join_rows(make_source<P, V>(in, opt, 0), j, i, lo, hi);
      return;
    }
    // device columns: rows [a, a + n) of each read back into host copies (element 0 = row a)
    constexpr int64_t kPiece = int64_t(1) << 20;
    using Field = const void* InputView::*;
    const Field fields[6] = {&InputView::price, &InputView::high, &InputView::low,
                             &InputView::close, &InputView::open, &InputView::volume};
    std::vector<char> host[6];
    for (int64_t a = j; a <= i && ok; a += kPiece) {
      const int64_t n = std::min(kPiece, i + 1 - a);
      InputView h = in;
      for (int k = 0; k < 6; ++k) {
        if (in.*fields[k] == nullptr) continue;
        const size_t size = k == 5 ? sizeof(V) : sizeof(P);
        host[k].resize(static_cast<size_t>(n) * size);
        const char* at = static_cast<const char*>(in.*fields[k]) + static_cast<size_t>(a) * size;
        VPOC_GPU_CHECK(
            gpuMemcpyAsync(host[k].data(), at, static_cast<size_t>(n) * size, gpuMemcpyDeviceToHost, stream));
        h.*fields[k] = host[k].data();
      }
      VPOC_GPU_CHECK(gpuStreamSynchronize(stream));
      ok = window::join_rows(make_source<P, V>(h, opt, a), a, a + n - 1, lo, hi);
    }
  });
  return ok && lo <= hi ? hi - lo + 1 : 0;
}

}  // namespace vpoc::gpu
