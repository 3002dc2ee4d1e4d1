// gpu/levels.cu — per-session POC, value area and totals on the device (one block per session).
// Contract: core/levels.hpp does the rule work for both backends; greedy reads a pre-sorted order.
#include "gpu/levels.hpp"

#include <climits>

#include "core/distribute.hpp"
#include "core/ladder.hpp"
#include "core/levels.hpp"
#include "core/source.hpp"
#include "gpu/finish.cuh"
#include "gpu/va_merge.hpp"
#include "vpoc/profiles.hpp"

namespace vpoc::gpu {
namespace {

constexpr int kThreads = 128;

unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// [n] elementwise.
__global__ void iota_kernel(int32_t* iota, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) iota[i] = static_cast<int32_t>(i);
}

// Rows of a session staged in shared memory by the levels kernel (16 KiB of doubles: ES sessions
// of ticks hold ~250 rows, a wide day ~1,000), and its threads: 128 threads and ~21 KiB a block
// let 8 blocks share an SM (58 registers), so 1,014 sessions run in one wave on an H100/H200 and
// the value-area walks (one thread each, latency-bound) of all of them overlap.
constexpr int kLevelRows = 2048;
constexpr int kLevelThreads = 128;
[[maybe_unused]] constexpr int kLevelBlocksPerSm = 8;  // CUDA: the register cap for 8 blocks an SM (64 a thread)

using levels::better_poc;

// Staged group sums of one side of a POC, k-th at base[dir * k] (shared memory).
struct Staged {
  const double* base;
  int dir;
  __device__ double operator()(int64_t k) const { return base[dir * k]; }
};

// The merged value-area path (gpu/va_merge.hpp): step t takes up group path[t], or down group
// path[t] & ~kDown (at most kLevelRows / 2 - 1 groups a side: 15 bits).
constexpr unsigned kDown = 0x8000u;
// a group index (< kLevelRows / 2, the gate of the merged walk) must stay below the kDown bit, and a
// code must fit the uint16 path
static_assert(kLevelRows / 2 <= kDown && kDown <= 0xffffu, "levels: the merged walk's 15-bit group codes");

// The merged walk (block scans, then thread 0 adds along the placed path) only pays past this many
// groups: its fixed cost (~14 block syncs and a search a group) exceeds a serial walk of a few dozen
// steps (~155 cycles each). H200: the batch workload's sessions (13-49 rows, <= 25 groups) took 8.6 us
// of levels with it for every session, 6.25 us without; ticks sessions (hundreds of rows) gain 2 us.
constexpr int64_t kMergeMinGroups = 32;
// A session total up to which whole row volumes sum exactly in any order: every partial sum of the
// walk (at most the total, its group sums rounded at most once each) stays below 2**53.
constexpr double kExactTotal = 4503599627370496.0;  // 2**52

// Block-wide inclusive prefix minima of a[0, na) and b[0, nb) in place (shared memory; every thread
// of the block calls it): a thread folds its own run of each, the runs' minima are scanned in
// sa / sb ([kLevelThreads] each), and each run takes the minimum of the runs before it. Ends synced.
__device__ inline void prefix_min2(double* a, int64_t na, double* b, int64_t nb, double* sa, double* sb) {
  const int k = static_cast<int>(threadIdx.x);
  const int64_t ga = (na + kLevelThreads - 1) / kLevelThreads, gb = (nb + kLevelThreads - 1) / kLevelThreads;
  const int64_t a0 = min(k * ga, na), a1 = min(a0 + ga, na), b0 = min(k * gb, nb), b1 = min(b0 + gb, nb);
  const double inf = __longlong_as_double(0x7ff0000000000000LL);
  double ma = inf, mb = inf;
  for (int64_t i = a0; i < a1; ++i) a[i] = ma = a[i] < ma ? a[i] : ma;
  for (int64_t i = b0; i < b1; ++i) b[i] = mb = b[i] < mb ? b[i] : mb;
  sa[k] = ma;
  sb[k] = mb;
  __syncthreads();
  for (int d = 1; d < kLevelThreads; d *= 2) {  // inclusive Hillis-Steele scan of the runs' minima
    const double xa = k >= d ? sa[k - d] : inf, xb = k >= d ? sb[k - d] : inf;
    __syncthreads();
    if (xa < sa[k]) sa[k] = xa;
    if (xb < sb[k]) sb[k] = xb;
    __syncthreads();
  }
  const double ca = k > 0 ? sa[k - 1] : inf, cb = k > 0 ? sb[k - 1] : inf;
  for (int64_t i = a0; i < a1; ++i)
    if (ca < a[i]) a[i] = ca;
  for (int64_t i = b0; i < b1; ++i)
    if (cb < b[i]) b[i] = cb;
  __syncthreads();
}

// Block-wide exclusive prefix sum of one value a thread (x), scanned in s ([kLevelThreads]); every
// thread of the block calls it. Exact where every partial sum is (whole numbers below 2**53: the
// order of the adds then does not matter). Ends synced.
__device__ inline double exclusive_sum(double x, double* s) {
  const int k = static_cast<int>(threadIdx.x);
  s[k] = x;
  __syncthreads();
  for (int d = 1; d < kLevelThreads; d *= 2) {  // inclusive Hillis-Steele scan
    const double y = k >= d ? s[k - d] : 0.0;
    __syncthreads();
    s[k] += y;
    __syncthreads();
  }
  return k > 0 ? s[k - 1] : 0.0;
}

// Session s's levels from its row indices (relative to its lowest row) and value-area volume.
__device__ inline void write_levels(const LevelColumns& c, int64_t s, const ladder::RowPrice& row_price, int64_t poc,
                                    int64_t lo, int64_t hi, double running) {
  const int64_t low = c.low_row[s];
  c.poc_row[s] = low + poc;
  c.val_row[s] = low + lo;
  c.vah_row[s] = low + hi;
  c.poc[s] = row_price(low + poc);
  c.val[s] = row_price(low + lo);
  c.vah[s] = row_price(low + hi);
  c.va_volume[s] = running;
}

// What the fused kernel bins before it finishes a session's rows: nothing (NoBin: the bin pass did),
// or the session's bars (BarsBin: every distribute but legacy, whose ladder comes from the price
// range pass), each share added exactly into `dst` at its row less the session's low row, as the
// bin pass adds them (gpu/histogram.cu bin_kernel: the same Source::emit, the same difference rows).
struct NoBin {
  static constexpr bool kBins = false;
};
// Thread t of BarsBin takes bars a + t, a + t + blockDim.x, ..., one at a time. H200, bench bars
// (1,014 sessions of 1,380 bars), the fused kernel: 51.7 us so, 54.2 us with two bars' loads in
// flight, 67.2 us with four (4 blocks an SM, 88 registers), 53.1 us with a run of consecutive bars a
// thread (lanes of a warp then add at prices far apart): neither the loads nor the conflicts of the
// shared-memory atomics set its pace.
template <class P, class V>
struct BarsBin {
  static constexpr bool kBins = true;
  Source<P, V> src;
  const int64_t* offsets;  // [S+1] the sessions' input rows (device)
  bool diff;               // uniform, one tick per row: the split as a difference array (FinishRows::scan)
  // [blockDim.x] threads: rows [offsets[s], offsets[s + 1]) into dst[0, width) (low: the session's low row).
  __device__ void session(int64_t s, const FixedRows& dst, int64_t low, int64_t width) const {
    const int64_t e = offsets[s + 1];  // (the adds may alias offsets for all the compiler knows)
    for (int64_t i = offsets[s] + threadIdx.x; i < e; i += blockDim.x) {
      if (diff) {  // block-uniform
        const int64_t k = i - src.base;  // three loads, not Source::item's five
        src.emit_diff(load<P>(src.in.high, k), load<P>(src.in.low, k), load_volume<V>(src.in.volume, k), low, width,
                      [&](int64_t r, const Fixed& x) { dst.add(r, x); });
      } else {
        src.emit(src.item(i), distribute::LegacyLadder{}, [&](int64_t r, const Fixed& x) {
          dst.add(r - low, x);
          return true;
        });
      }
    }
  }
};

// [S] blocks x [kLevelThreads], one block per session: the block stages the session's rows in
// shared memory (when they fit) and finds the maximum and the POC by tree reductions; then thread
// 0 expands the value area (a sequential rule: each step depends on the last) towards the total
// (the exact sum of the rows, as on the CPU).
// Fused false: the rows are the finish pass's float64 volumes and the total it wrote. Fused true
// (not for greedy, whose order is sorted from the finished rows first): the block first does the
// finish pass itself (gpu/finish.cuh: the binned rows `f` to float64 in place and into shared
// memory, the exact total), one launch fewer.
// Bin (Fused only): BarsBin bins the session's bars first, into the free half of shared memory when
// its rows fit there (kLevelRows / 2: the fraction plane in the other half), else into its own rows of
// f.hi / f.lo (zeroed here, added to by this block only): no zeroing, bin or finish pass of its own.
// Generic false (no touched rows, float64 target: every call of today's default rules): the rows
// and the decimal target are compiled out, so the kernel keeps the 40 registers it had before
// those rules (64 with them: 4 blocks per SM instead of 6, 1.9 waves of 1,014 sessions, not 1.3).
template <bool Generic, bool Fused, class Bin = NoBin>
__global__ void VPOC_LAUNCH_BOUNDS(kLevelThreads, kLevelBlocksPerSm) levels_kernel(const double* volume, const int32_t* order,
                                                               LevelColumns c, double value_area, VaMethod method,
                                                               levels::Rules rules, ladder::RowPrice row_price,
                                                               FinishRows f, Bin bin = Bin{}) {
  __shared__ double rows[kLevelRows];
  __shared__ double red_max[kLevelThreads];
  __shared__ int64_t red_poc[kLevelThreads];
  [[maybe_unused]] __shared__ double red_min[kLevelThreads];  // the merged walk's second scan
  [[maybe_unused]] __shared__ uint16_t path[kLevelRows / 2];   // the merged walk's steps
  if (c.go != nullptr && *c.go == 0) return;  // block-uniform: the call is run again or fails
  const int64_t s = blockIdx.x;
  const int64_t n = c.n_rows[s];
  if (n == 0) {
    if (threadIdx.x == 0) {
      const double nan = __longlong_as_double(0x7ff8000000000000LL);
      c.poc_row[s] = c.vah_row[s] = c.val_row[s] = kNoRow;
      c.poc[s] = c.vah[s] = c.val[s] = nan;
      c.total_volume[s] = c.va_volume[s] = 0.0;
    }
    return;
  }
  const double* v = volume + c.offsets[s];
  if constexpr (Fused) {
    __shared__ unsigned long long red_hi[kLevelThreads], red_lo[kLevelThreads];
    const bool staged = n <= kLevelRows;
    Fixed t;
    if constexpr (Bin::kBins) {
      const int64_t off = c.offsets[s];
      const bool in_smem = n <= kLevelRows / 2;  // block-uniform
      auto* words = reinterpret_cast<unsigned long long*>(rows);
      // [n] fixed-point rows: shared (hi in rows, lo in its upper half), or the session's own output rows
      const FixedRows dst = in_smem ? FixedRows{words, words + kLevelRows / 2}
                                    : FixedRows{f.hi + off, const_cast<unsigned long long*>(f.lo) + off};
      for (int64_t k = threadIdx.x; k < n; k += kLevelThreads) dst.zero(k);
      __syncthreads();
      bin.session(s, dst, c.low_row[s], n);
      __syncthreads();
      t = in_smem ? finish_session<kLevelThreads>(dst.hi, dst.lo, 0, n, f.scan, red_hi, red_lo, rows,
                                                  reinterpret_cast<double*>(f.hi) + off)
                  : finish_session<kLevelThreads>(f.hi, f.lo, off, n, f.scan, red_hi, red_lo, staged ? rows : nullptr);
    } else {
      const unsigned long long* lo = f.fractional != nullptr && (*f.fractional & f.fraction_bit) == 0 ? nullptr : f.lo;
      t = finish_session<kLevelThreads>(f.hi, lo, c.offsets[s], n, f.scan, red_hi, red_lo, staged ? rows : nullptr);
    }
    if (threadIdx.x == 0) c.total_volume[s] = total_of(t);  // read back below by this thread
    if (staged) v = rows;
  } else if (n <= kLevelRows) {
    for (int64_t i = threadIdx.x; i < n; i += kLevelThreads) rows[i] = v[i];
    __syncthreads();
    v = rows;
  }
  // maximum
  double mx = v[0];
  for (int64_t i = threadIdx.x; i < n; i += kLevelThreads) mx = v[i] > mx ? v[i] : mx;
  red_max[threadIdx.x] = mx;
  __syncthreads();
  for (int half = kLevelThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half)
      red_max[threadIdx.x] = fmax(red_max[threadIdx.x], red_max[threadIdx.x + half]);
    __syncthreads();
  }
  mx = red_max[0];
  // POC among the rows at the maximum (tie_tol relative), by the tie rule. va_rows='touched': the
  // tie rule reads ranks among the touched rows, so thread 0 scans them in order (poc_among).
  const PocTie tie = rules.tie;
  if constexpr (Generic) {
    if (c.touched != nullptr) rules.touched = c.touched + c.offsets[s];
  } else {  // known at compile time: no sparse rows, no decimal target
    rules.touched = nullptr;
    rules.cover = nullptr;
    rules.va_p = rules.va_q = 0;
  }
  int64_t best = -1;
  if (!rules.sparse()) {
    for (int64_t i = threadIdx.x; i < n; i += kLevelThreads)
      if (levels::at_max(v[i], mx, rules.tol)) best = better_poc(best, i, n, tie);
  }
  red_poc[threadIdx.x] = best;
  __syncthreads();
  for (int half = kLevelThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half)
      red_poc[threadIdx.x] = better_poc(red_poc[threadIdx.x], red_poc[threadIdx.x + half], n, tie);
    __syncthreads();
  }
  if constexpr (!Generic) {
    // Every row exists and the rows are staged: the value area walks the sums of its groups of
    // `step` rows (core/levels.hpp expand_groups), summed by the block first into the free half of
    // `rows` (step 2: the above groups at kLevelRows / 2, the below ones right after them), so
    // thread 0's walk reads one staged sum per step instead of adding rows on its dependency chain.
    // 'tie_up' steps (the default): the block also places every step of the walk (gpu/va_merge.hpp),
    // so thread 0 only adds along the path and tests the stop (H200, ticks: the walk cost ~155 cycles
    // a step, 17 of the kernel's 25.7 us at value_area 0.7).
    if (method != VaMethod::greedy && v == rows && n <= kLevelRows / 2) {
      const int64_t poc = red_poc[0] < 0 ? 0 : red_poc[0];  // none at an infinite maximum: row 0, as poc_among
      const int step = method == VaMethod::cbot ? 2 : 1;
      const int64_t nu = levels::groups(n - 1 - poc, step), nd = levels::groups(poc, step);
      const levels::GroupSum up_rows{rows, poc + 1, n - 1 - poc, step, 1}, down_rows{rows, poc - 1, poc, step, -1};
      double* up = rows + kLevelRows / 2;  // [nu] <= kLevelRows / 4 for step 2
      double* down = up + nu;              // [nd], nu + nd <= kLevelRows / 4 for step 2
      if (step > 1) {
        for (int64_t k = threadIdx.x; k < nu + nd; k += kLevelThreads) {
          if (k < nu)
            up[k] = up_rows(k);
          else
            down[k - nu] = down_rows(k - nu);
        }
        __syncthreads();
      }
      const Staged above{step > 1 ? up : rows + poc + 1, 1}, below{step > 1 ? down : rows + poc - 1, step > 1 ? 1 : -1};
      int64_t i = 0, j = 0;
      bool merged = false, exact = false;
      // 'tie_up' steps: the path as a merge (gpu/va_merge.hpp), placed by the block; thread 0 then only
      // sums along it. Keys in the free half of `rows` after the staged sums (2 (nu + nd) <= kLevelRows / 2).
      if (rules.compare == VaCompare::tie_up && nu + nd >= kMergeMinGroups) {  // block-uniform
        double* pu = step > 1 ? down + nd : up;  // [nu] the up keys (volumes), then their prefix minima
        double* pd = pu + nu;                    // [nd] the down thresholds, then their prefix minima
        bool bad = false, frac = false;
        for (int64_t k = threadIdx.x; k < nu + nd; k += kLevelThreads) {
          if (k < nu) {
            pu[k] = above(k);
            bad |= !va_merge::plain(pu[k]);
            frac |= !va_merge::whole(pu[k]);
          } else {
            bool ok = false;
            const double d = below(k - nu);
            pd[k - nu] = va_merge::threshold(d, rules, ok);
            bad |= !ok;
            frac |= !va_merge::whole(d);
          }
        }
        if (!__syncthreads_or(bad)) {  // block-uniform; else the walk below, as before
          prefix_min2(pu, nu, pd, nd, red_max, red_min);
          for (int64_t k = threadIdx.x; k < nu + nd; k += kLevelThreads) {
            if (k < nu)
              path[va_merge::up_place(pu, pd, nd, k)] = static_cast<uint16_t>(k);
            else
              path[va_merge::down_place(pu, nu, pd, k - nu)] = static_cast<uint16_t>(kDown | (k - nu));
          }
          // the placing's barrier, and whether the walk's sums are exact in any order (va_merge::run_stop):
          // every step's volume and the POC row's whole, the total at most 2**52 (whole volumes: ticks)
          exact = !__syncthreads_or(frac || !va_merge::whole(rows[poc]) || !(c.total_volume[s] <= kExactTotal));
          merged = true;
        }
      }
      const auto value = [&](int64_t t) {  // the volume of the path's step t
        const unsigned code = path[t];
        return (code & kDown) != 0 ? below(code & ~kDown) : above(code);
      };
      const levels::Target target = levels::target_of(value_area, c.total_volume[s], rules);
      double running = rows[poc];
      int64_t stop = 0;
      if (exact) {  // block-uniform: the stop by runs of steps, one a thread, instead of thread 0's walk
        __shared__ int stop_at;
        __shared__ double stop_run;
        const int64_t steps = nu + nd, per = (steps + kLevelThreads - 1) / kLevelThreads;
        const int64_t a = min(static_cast<int64_t>(threadIdx.x) * per, steps), b = min(a + per, steps);
        double sum = 0.0;
        for (int64_t t = a; t < b; ++t) sum += value(t);
        if (threadIdx.x == 0) stop_at = INT_MAX;  // before exclusive_sum's barriers
        running += exclusive_sum(sum, red_max);   // R_a: exact (whole numbers below 2**53)
        const int64_t t = va_merge::run_stop(value, a, b, steps, target, running, rules);
        if (t >= 0) atomicMin(&stop_at, static_cast<int>(t));
        __syncthreads();
        if (t >= 0 && t == stop_at) stop_run = running;  // one thread: the runs are disjoint
        __syncthreads();
        stop = stop_at;
        running = stop_run;
      }
      if (threadIdx.x != 0) return;
      if (merged) {
        const int64_t t = exact ? stop : va_merge::walk(value, nu + nd, target, running, rules);
        if (t > 0) {  // the groups taken on each side: from the last step's
          const unsigned code = path[t - 1];
          j = (code & kDown) != 0 ? (code & ~kDown) + 1 : t - (code + 1);
          i = t - j;
        }
      } else {
        levels::expand_groups(above, nu, below, nd, target, running, i, j, rules);
      }
      write_levels(c, s, row_price, poc, poc - j * step > 0 ? poc - j * step : 0,
                   poc + i * step < n - 1 ? poc + i * step : n - 1, running);
      return;
    }
  }
  if (threadIdx.x != 0) return;
  const int64_t poc = rules.sparse() ? levels::poc_among(v, 0, n - 1, mx, rules) : red_poc[0] < 0 ? 0 : red_poc[0];
  const double total = c.total_volume[s];  // exact sum of the rows, by the finish pass
  const levels::Target target = levels::target_of(value_area, total, rules);
  int64_t lo = poc, hi = poc;
  double running = 0.0;
  if (method == VaMethod::greedy) {
    const int32_t* o = order + c.offsets[s];
    lo = hi = o[0] - c.offsets[s];
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = o[k] - c.offsets[s];
      running += v[i];
      lo = i < lo ? i : lo;
      hi = i > hi ? i : hi;
      if (levels::reached(running, target, rules)) break;
    }
  } else {
    levels::expand(v, n, poc, target, method == VaMethod::cbot ? 2 : 1, lo, hi, running, rules);
  }
  write_levels(c, s, row_price, poc, lo, hi, running);
}

}  // namespace

void launch_iota(int32_t* iota, int64_t n, gpuStream_t stream) {
  if (n <= 0) return;
  iota_kernel<<<blocks(n), kThreads, 0, stream>>>(iota, n);
  VPOC_GPU_CHECK_LAUNCH("iota_kernel");
}

// One launch of levels_kernel for `opt`: the generic instance only where its rules need it.
template <bool Fused>
void launch(const double* volume, const int32_t* order, const LevelColumns& c, int64_t S, const Options& opt,
            const FinishRows& f, gpuStream_t stream) {
  const ladder::RowPrice row_price =
      ladder::RowPrice::make(opt.tick_size, opt.ticks_per_row, opt.price_label == PriceLabel::decimal);
  const levels::Rules rules = levels::rules_of(opt);
  const auto blocks = static_cast<unsigned>(S);
  if (c.touched != nullptr || rules.sparse() || rules.va_q != 0)
    levels_kernel<true, Fused><<<blocks, kLevelThreads, 0, stream>>>(volume, order, c, opt.value_area, opt.va_method,
                                                                     rules, row_price, f);
  else
    levels_kernel<false, Fused><<<blocks, kLevelThreads, 0, stream>>>(volume, order, c, opt.value_area, opt.va_method,
                                                                      rules, row_price, f);
  VPOC_GPU_CHECK_LAUNCH("levels_kernel");
}

void launch_levels(const double* volume, const int32_t* order, const LevelColumns& c, int64_t S,
                   const Options& opt, gpuStream_t stream) {
  if (S > 0) launch<false>(volume, order, c, S, opt, FinishRows{}, stream);
}

bool bin_levels_takes(const InputView& in, const Options& opt, int64_t most_bars) {
  const levels::Rules rules = levels::rules_of(opt);
  return in.bars && most_bars <= kFusedMaxBars && in.distribute != Distribute::legacy && opt.va_method != VaMethod::greedy &&
         opt.va_rows == VaRows::all && !rules.sparse() && rules.va_q == 0;
}

void launch_bin_levels(const InputView& in, const int64_t* offsets, const FinishRows& f, const LevelColumns& c,
                       int64_t S, const Options& opt, gpuStream_t stream) {
  if (S <= 0) return;
  if (!bin_levels_takes(in, opt, 0) || f.lo == nullptr || c.touched != nullptr)
    VPOC_THROW(Error, "launch_bin_levels: bars (not legacy) of the plain level rules, with a fraction plane");
  const ladder::RowPrice row_price =
      ladder::RowPrice::make(opt.tick_size, opt.ticks_per_row, opt.price_label == PriceLabel::decimal);
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    const BarsBin<P, V> bin{make_source<P, V>(in, opt, 0), offsets, f.scan};
    levels_kernel<false, true, BarsBin<P, V>><<<static_cast<unsigned>(S), kLevelThreads, 0, stream>>>(
        reinterpret_cast<const double*>(f.hi), nullptr, c, opt.value_area, opt.va_method, levels::rules_of(opt),
        row_price, f, bin);
  });
  VPOC_GPU_CHECK_LAUNCH("levels_kernel (binning)");
}

void launch_finish_levels(const FinishRows& f, const LevelColumns& c, int64_t S, const Options& opt,
                          gpuStream_t stream) {
  if (S <= 0) return;
  if (opt.va_method == VaMethod::greedy || c.touched != nullptr)
    VPOC_THROW(Error, "launch_finish_levels: greedy and touched rows need the finish pass first");
  launch<true>(reinterpret_cast<const double*>(f.hi), nullptr, c, S, opt, f, stream);
}

}  // namespace vpoc::gpu
