// gpu/side.cu — aggressor-side passes of sided trades: the finish over the unknown / buy / sell planes, the side epilogue.
// Contract: gpu/side.hpp; the rules are core/side.hpp's and core/levels.hpp's, as cpu/side.cpp reads them.
#include "gpu/side.hpp"

#include <algorithm>
#include <mutex>

#include "core/dtype.hpp"
#include "core/fixed.hpp"
#include "core/ladder.hpp"
#include "core/levels.hpp"
#include "core/side.hpp"
#include "gpu/finish.cuh"
#include "gpu/runtime.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/profiles.hpp"

namespace vpoc::gpu {
namespace {

constexpr int kThreads = 256;      // side finish: a block per session, as finish_rows_kernel
constexpr int kSideThreads = 128;  // side levels: a block per session, as levels_kernel


// [n] blocks x [kThreads], one block per session of the group: the three planes of its rows become the
// float64 volume (U + B + S, exact), buy and sell rows in place; its total, delta and buy / sell totals.
__global__ void __launch_bounds__(kThreads) side_finish_kernel(GroupScratch g, unsigned long long* hi,
                                                               const unsigned long long* lo, double* total,
                                                               double* delta, double* buy_total,
                                                               double* sell_total) {
  __shared__ unsigned long long red_hi[kThreads], red_lo[kThreads];
  if (g.go != nullptr && *g.go == 0) return;  // block-uniform
  if (g.fixed_by_flag && (*g.fractional & kFractional) == 0) lo = nullptr;  // integer rows were binned
  const int64_t s = blockIdx.x;
  const int64_t off = g.out_off[s], width = g.width[s];
  const int64_t hs = g.hi_stride, ls = g.lo_stride;
  Fixed sum, buy_sum, sell_sum;
  for (int64_t k = off + threadIdx.x; k < off + width; k += kThreads) {
    Fixed u, b, x;  // unknown, buy, sell
    u.hi = hi[k];
    b.hi = hi[k + hs];
    x.hi = hi[k + 2 * hs];
    if (lo != nullptr) {
      u.lo = lo[k];
      b.lo = lo[k + ls];
      x.lo = lo[k + 2 * ls];
    }
    const Fixed v = u + b + x;
    sum += v;
    buy_sum += b;
    sell_sum += x;
    auto* rows = reinterpret_cast<double*>(hi);
    rows[k] = fixed::to_double(v);
    rows[k + hs] = fixed::to_double(b);
    rows[k + 2 * hs] = fixed::to_double(x);
  }
  const Fixed t = block_sum<kThreads>(sum, red_hi, red_lo);
  const Fixed tb = block_sum<kThreads>(buy_sum, red_hi, red_lo);
  const Fixed ts = block_sum<kThreads>(sell_sum, red_hi, red_lo);
  if (threadIdx.x == 0) {  // each total rounded once; delta their difference (cpu/engine.cpp's rule)
    const double bt = fixed::to_double(tb), st = fixed::to_double(ts);
    total[s] = total_of(t);
    delta[s] = side::delta(bt, st);
    buy_total[s] = bt;
    sell_total[s] = st;
  }
}

// |buy - sell| of row j as the delta-POC pass's rows hold it: binned alone (one 64.64 add), rounded once.
__device__ inline double delta_row(const double* b, const double* x, int64_t j) {
  return fixed::to_double(fixed::from_double(side::delta_abs(b[j], x[j])));
}

// The delta POC (an index into rows lo .. lo + span - 1 of the delta-POC pass) of a session whose rows do
// not map one to one onto that pass's rows (rows astronomically far from 0): one thread, in row order.
// The map is monotone, so the rows of one target are consecutive; a target no row maps to holds 0.
__device__ inline int64_t bent_poc(const double* b, const double* x, int64_t n, int64_t low, const ladder::TickScale& ts,
                                   const levels::Rules& rules, int64_t& first) {
  const int64_t r0 = side::delta_poc_row_of(low, ts), r1 = side::delta_poc_row_of(low + n - 1, ts);
  first = r0 < r1 ? r0 : r1;
  const int64_t span = (r0 < r1 ? r1 : r0) - first + 1;
  // value of target t (walked in order: j is where the next target's rows start)
  const auto walk = [&](auto&& visit) {
    int64_t j = 0;
    for (int64_t t = 0; t < span; ++t) {
      Fixed acc;
      for (; j < n && side::delta_poc_row_of(low + j, ts) == first + t; ++j)
        acc += fixed::from_double(side::delta_abs(b[j], x[j]));
      visit(t, fixed::to_double(acc));
    }
  };
  double mx = 0.0;
  bool any = false;
  walk([&](int64_t, double v) {
    mx = !any || v > mx ? v : mx;
    any = true;
  });
  int64_t best = -1;
  walk([&](int64_t t, double v) {
    if (levels::at_max(v, mx, rules.tol) && (best < 0 || levels::poc_prefers(t, best, 0, span - 1, rules.tie))) best = t;
  });
  return best < 0 ? 0 : best;
}

// Runs of >= k flagged rows that start at row j of f[0, n) (0 or 1): the run is walked up to k rows.
__device__ inline unsigned long long run_at(const int8_t* f, int64_t j, int64_t n, int64_t k) {
  if (!f[j] || (j > 0 && f[j - 1])) return 0;
  int64_t len = 0;
  while (j + len < n && len < k && f[j + len]) ++len;
  return len == k ? 1 : 0;
}

// [S] blocks x [kSideThreads], one block per session: imbalance flags, stacked counts (runs counted at
// their first row, block sums), delta POC (block max and tree of better_poc, as levels_kernel; NaN /
// kNoRow for a session without a row of a known side; a session
// whose rows are not one to one with the delta-POC pass's: thread 0, bent_poc).
__global__ void __launch_bounds__(kSideThreads) side_levels_kernel(SideLevelColumns c, double ratio, int64_t k,
                                                                   levels::Rules rules, ladder::TickScale ts,
                                                                   ladder::RowPrice price_of) {
  __shared__ double red_max[kSideThreads];
  __shared__ int64_t red_poc[kSideThreads];
  __shared__ unsigned long long runs[2];
  __shared__ int bent, any_sided;
  if (c.go != nullptr && *c.go == 0) return;  // block-uniform
  const int64_t s = blockIdx.x;
  if (c.delta != nullptr && threadIdx.x == 0) c.delta[s] = side::delta(c.buy_total[s], c.sell_total[s]);
  int64_t n = c.n_rows != nullptr ? c.n_rows[s] : c.offsets[s + 1] - c.offsets[s];
  if (c.n_rows_total >= 0 && (c.offsets[s] < 0 || n < 0 || c.offsets[s] > c.n_rows_total - n)) n = 0;
  if (n == 0) {
    if (threadIdx.x == 0) {
      c.delta_poc[s] = __longlong_as_double(0x7ff8000000000000LL);
      c.delta_poc_row[s] = kNoRow;
      c.stacked_buy[s] = c.stacked_sell[s] = 0;
    }
    return;
  }
  const int64_t a = c.offsets[s], low = c.low_row[s];
  const double* b = c.buy + a;
  const double* x = c.sell + a;
  int8_t* ib = c.imbalance_buy + a;
  int8_t* is = c.imbalance_sell + a;
  const int64_t first = side::delta_poc_row_of(low, ts);
  if (threadIdx.x == 0) {
    runs[0] = runs[1] = 0;
    bent = side::delta_poc_row_of(low + n - 1, ts) - first != n - 1;
    any_sided = 0;
  }
  // a session's lowest row has no row below it (no buy imbalance), its highest none above
  for (int64_t j = threadIdx.x; j < n; j += kSideThreads) {
    ib[j] = j >= 1 && side::imbalance(b[j], x[j - 1], ratio);
    is[j] = j + 1 < n && side::imbalance(x[j], b[j + 1], ratio);
  }
  __syncthreads();  // the flags (global memory) and the shared words above, for every thread of the block
  unsigned long long rb = 0, rs = 0;
  int mine_bent = 0, mine_sided = 0;
  double mx = -1.0;
  for (int64_t j = threadIdx.x; j < n; j += kSideThreads) {
    rb += run_at(ib, j, n, k);
    rs += run_at(is, j, n, k);
    mine_bent |= side::delta_poc_row_of(low + j, ts) != first + j;
    mine_sided |= side::sided(b[j], x[j]);
    const double d = delta_row(b, x, j);
    mx = d > mx ? d : mx;
  }
  if (rb) atomicAdd(&runs[0], rb);
  if (rs) atomicAdd(&runs[1], rs);
  if (mine_bent) bent = 1;
  if (mine_sided) any_sided = 1;
  red_max[threadIdx.x] = mx;
  __syncthreads();
  for (int half = kSideThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) red_max[threadIdx.x] = fmax(red_max[threadIdx.x], red_max[threadIdx.x + half]);
    __syncthreads();
  }
  if (!any_sided) {  // block-uniform: no row of a known side, no delta POC (core/side.hpp sided)
    if (threadIdx.x == 0) {
      c.delta_poc[s] = __longlong_as_double(0x7ff8000000000000LL);
      c.delta_poc_row[s] = kNoRow;
      c.stacked_buy[s] = static_cast<int64_t>(runs[0]);
      c.stacked_sell[s] = static_cast<int64_t>(runs[1]);
    }
    return;
  }
  if (bent) {  // block-uniform (read after the barrier above)
    if (threadIdx.x == 0) {
      int64_t lo = 0;
      const int64_t t = bent_poc(b, x, n, low, ts, rules, lo);
      c.delta_poc_row[s] = lo + t;
      c.delta_poc[s] = price_of(lo + t);
      c.stacked_buy[s] = static_cast<int64_t>(runs[0]);
      c.stacked_sell[s] = static_cast<int64_t>(runs[1]);
    }
    return;
  }
  mx = red_max[0];
  int64_t best = -1;
  for (int64_t j = threadIdx.x; j < n; j += kSideThreads)
    if (levels::at_max(delta_row(b, x, j), mx, rules.tol)) best = levels::better_poc(best, j, n, rules.tie);
  red_poc[threadIdx.x] = best;
  __syncthreads();
  for (int half = kSideThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half)
      red_poc[threadIdx.x] = levels::better_poc(red_poc[threadIdx.x], red_poc[threadIdx.x + half], n, rules.tie);
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  const int64_t row = first + (red_poc[0] < 0 ? 0 : red_poc[0]);  // none at an infinite maximum: row 0
  c.delta_poc_row[s] = row;
  c.delta_poc[s] = price_of(row);
  c.stacked_buy[s] = static_cast<int64_t>(runs[0]);
  c.stacked_sell[s] = static_cast<int64_t>(runs[1]);
}

// [S] blocks x [kThreads], one block per session: its rows in chunks of kThreads, each an inclusive
// Hillis-Steele scan of int64 signed volumes in shared memory plus the carry of the chunks before.
template <class V>
__global__ void __launch_bounds__(kThreads) dev_delta_kernel(const V* volume, const int8_t* sides,
                                                             const int64_t* offsets, double* out) {
  __shared__ long long scan[kThreads];
  const int64_t s = blockIdx.x;
  const int64_t a = offsets[s], e = offsets[s + 1];
  long long carry = 0;
  for (int64_t c0 = a; c0 < e; c0 += kThreads) {  // block-uniform trip count
    const int64_t i = c0 + threadIdx.x;
    long long x = 0;
    if (i < e) {
      const auto v = static_cast<long long>(volume[i]);  // whole and below 2**31 (the caller's kFractional test)
      x = sides[i] == 1 ? v : sides[i] == -1 ? -v : 0;
    }
    scan[threadIdx.x] = x;
    __syncthreads();
    for (int d = 1; d < kThreads; d *= 2) {
      const long long add = static_cast<int>(threadIdx.x) >= d ? scan[threadIdx.x - d] : 0;
      __syncthreads();
      scan[threadIdx.x] += add;
      __syncthreads();
    }
    if (i < e) out[i] = static_cast<double>(carry + scan[threadIdx.x]);
    carry += scan[kThreads - 1];
    __syncthreads();
  }
}

// [blocks] x [kThreads], grid-stride: the first bad side code into *word.
__global__ void first_bad_side_kernel(const int8_t* side, int64_t n, unsigned long long* word) {
  unsigned long long bad = kEncNone;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * kThreads)
    if (side::code_i8(static_cast<uint8_t>(side[i])) == side::kBad) {
      bad = static_cast<unsigned long long>(i);
      break;  // this thread's later rows come after it
    }
  if (bad != kEncNone) atomicMin(word, bad);
}

}  // namespace

void launch_side_dev_delta(const void* volume, DType volume_dtype, const int8_t* side, const int64_t* offsets,
                           int64_t S, double* out, gpuStream_t stream) {
  if (S <= 0) return;
  const auto blocks = static_cast<unsigned>(S);
  const bool launched = with_volume_type(volume_dtype, [&](auto v) {
    dev_delta_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const decltype(v)*>(volume), side, offsets, out);
  });
  if (!launched) VPOC_THROW(Error, "launch_side_dev_delta: side codes are not a volume");
  VPOC_GPU_CHECK_LAUNCH("dev_delta_kernel");
}

void launch_first_bad_side(const int8_t* side, int64_t n, unsigned long long* word, gpuStream_t stream) {
  VPOC_GPU_CHECK(gpuMemsetAsync(word, 0xff, sizeof(unsigned long long), stream));
  if (n <= 0) return;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(1024, (n + kThreads - 1) / kThreads));
  first_bad_side_kernel<<<blocks, kThreads, 0, stream>>>(side, n, word);
  VPOC_GPU_CHECK_LAUNCH("first_bad_side_kernel");
}

void launch_side_finish(const GroupScratch& g, void* out_hi, const void* out_lo, double* total, double* delta,
                        double* buy_total, double* sell_total, gpuStream_t stream) {
  if (g.n <= 0) return;
  if (g.planes != 3) VPOC_THROW(Error, "launch_side_finish: the rows of sided trades have 3 planes");
  side_finish_kernel<<<static_cast<unsigned>(g.n), kThreads, 0, stream>>>(
      g, static_cast<unsigned long long*>(out_hi), static_cast<const unsigned long long*>(out_lo), total, delta,
      buy_total, sell_total);
  VPOC_GPU_CHECK_LAUNCH("side_finish_kernel");
}

void launch_side_levels(const SideLevelColumns& c, int64_t S, const Options& opt, const SideRules& rules,
                        gpuStream_t stream) {
  if (S <= 0) return;
  const double row_size = opt.tick_size * static_cast<double>(opt.ticks_per_row);
  const levels::Rules prules = levels::rules_of(delta_poc_options(opt, row_size));
  side_levels_kernel<<<static_cast<unsigned>(S), kSideThreads, 0, stream>>>(
      c, rules.imbalance_ratio, rules.stacked_min, prules, ladder::TickScale::make(row_size, 1),
      ladder::RowPrice::make(row_size, 1, false));
  VPOC_GPU_CHECK_LAUNCH("side_levels_kernel");
}

SideDeviceColumns side_levels(const SideRows& rows, const Options& opt, const SideRules& rules, const GpuOptions& gopt,
                              Ready& ready) {
  require_device(gopt.device);
  const int64_t S = rows.n_sessions, R = rows.n_rows;
  if (S < 0 || R < 0) VPOC_THROW(ValueError, "side_levels: negative session or row count");
  DeviceGuard guard(gopt.device);
  DeviceState& st = state(gopt.device);
  std::lock_guard<std::mutex> lock(st.mutex());
  const auto stream = gopt.user_stream ? reinterpret_cast<gpuStream_t>(gopt.stream) : st.stream();
  const auto handle = reinterpret_cast<std::uintptr_t>(stream);
  wait_before_call(st, stream, gopt.wait_streams);
  for (const Ready& r : rows.after) wait(r, handle);
  // flags [2][R] then [5][S]: delta, delta_poc, delta_poc_row, stacked_buy, stacked_sell (engine.cu's pieces)
  const size_t flags = align_up(static_cast<size_t>(std::max<int64_t>(R, 1)));
  const size_t col = align_up(static_cast<size_t>(S + 1) * 8);
  BufferPtr mem = st.output(2 * flags + 5 * col, stream);
  char* base = static_cast<char*>(mem->data);
  const auto column = [&](int k, DType dt) { return Column{mem, base + 2 * flags + k * col, S, dt}; };
  SideDeviceColumns d;
  d.imbalance_buy = Column{mem, base, R, DType::i8};
  d.imbalance_sell = Column{mem, base + flags, R, DType::i8};
  d.delta = column(0, DType::f64);
  d.delta_poc = column(1, DType::f64);
  d.delta_poc_row = column(2, DType::i64);
  d.stacked_buy = column(3, DType::i64);
  d.stacked_sell = column(4, DType::i64);
  SideLevelColumns c{rows.row_off, nullptr, rows.low_row, rows.buy, rows.sell,
                     static_cast<int8_t*>(d.imbalance_buy.data), static_cast<int8_t*>(d.imbalance_sell.data),
                     static_cast<double*>(d.delta_poc.data), static_cast<int64_t*>(d.delta_poc_row.data),
                     static_cast<int64_t*>(d.stacked_buy.data), static_cast<int64_t*>(d.stacked_sell.data), nullptr};
  c.buy_total = rows.buy_total;
  c.sell_total = rows.sell_total;
  c.delta = static_cast<double*>(d.delta.data);
  c.n_rows_total = R;
  Options o = opt;  // the rows' own tick: launch_side_levels reads row_size as tick_size * ticks_per_row
  o.tick_size = rows.row_size;
  o.ticks_per_row = 1;
  launch_side_levels(c, S, o, rules, stream);
  for (const BufferPtr& b : rows.owners)
    if (b) note_stream(*b, handle);
  ready = record_ready(stream, gopt.device);
  st.last_call = ready.event;  // the workspace's last user: a call on another stream waits for these writes
  st.last_call_stream = ready.stream;
  return d;
}

}  // namespace vpoc::gpu
