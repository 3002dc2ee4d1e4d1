// gpu/bins.cu — bins=N on the GPU: core/bins.hpp run as is, one thread per session reading its rows in input order.
// Contract: the CPU's bits (same code, same order, no contraction); a bad row is the CPU's ValueError, named alike.
#include <algorithm>
#include <limits>
#include <vector>

#include "core/bins.hpp"
#include "core/messages.hpp"
#include "core/source.hpp"
#include "core/window.hpp"
#include "core/window_reach.hpp"
#include "gpu/runtime.hpp"
#include "vpoc/errors.hpp"

namespace vpoc::gpu {
namespace {

constexpr int kThreads = 64;

struct BinColumns {
  const int64_t* off = nullptr;      // input offsets [S+1]
  const int64_t* out_off = nullptr;  // result offsets [S+1]
  double* volume = nullptr;
  Fixed* acc = nullptr;  // [S * N] scratch ('exact')
  bins::Columns col;     // the level columns [S]
  unsigned long long* first_bad = nullptr;  // first invalid input row (~0: none)
  unsigned long long* overflow = nullptr;   // first session whose exact total passes 2**53 (~0: none)
};

// [S] threads: session s end to end (validation, ladder, bins, levels), as cpu/bins.cpp's worker.
template <class P, class V>
__global__ void bins_kernel(Source<P, V> src, int64_t S, Options opt, BinColumns c) {
  const int64_t s = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (s >= S) return;
  const int64_t b = c.off[s], e = c.off[s + 1];
  bins::write_empty(c.col, s);
  for (int64_t i = b; i < e; ++i) {
    const Item it = src.item(i);
    if (!src.valid_prices(it) || !Source<P, V>::valid_volume(it)) {
      atomicMin(c.first_bad, static_cast<unsigned long long>(i));
      return;
    }
  }
  if (e == b) return;
  const bins::RowsOf<decltype(src)> get{src};
  bins::Ladder L;
  bins::Levels lv;
  double total = 0.0;
  Fixed* acc = c.acc != nullptr ? c.acc + c.out_off[s] : nullptr;  // [bins] at the session's rows (empty sessions: none)
  if (!bins::session(b, e, opt, get, c.volume + c.out_off[s], acc, L, total, lv)) {
    atomicMin(c.overflow, static_cast<unsigned long long>(s));
    return;
  }
  bins::write(c.col, s, opt.bins, L, total, lv);
}

// [rows r0 .. r1) threads: input row i's prefix (its last opt.window rows) of its session (of the call:
// window_across_sessions) rebuilt through the same bins::session as cpu/bins.cpp (each thread its own [N]
// scratch, rows in order); `over`: the first row whose window sums past 2**53 (across sessions only).
template <class P, class V>
__global__ void bins_developing_kernel(Source<P, V> src, const int64_t* off, int64_t S, int64_t r0, int64_t r1,
                                       Options opt, double* scratch, Fixed* acc, double* dev_poc, double* dev_vah,
                                       double* dev_val, unsigned long long* over) {
  const int64_t i = r0 + static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= r1) return;
  int64_t a = 0, z = S;  // the session s with off[s] <= i < off[s + 1]: the last s with off[s] <= i
  while (z - a > 1) {
    const int64_t m = a + (z - a) / 2;
    if (off[m] <= i) a = m;
    else z = m;
  }
  const int64_t b = off[a];
  const int64_t start = opt.window > 0 ? window::Starts::rows(opt.window)(opt.window_across ? 0 : b, i) : b;
  const bins::RowsOf<decltype(src)> get{src};
  const int64_t slot = i - r0;
  bins::Ladder L;
  bins::Levels lv;
  double total = 0.0;
  // a prefix sums to at most its session's total (checked); a window across sessions may not
  Fixed* acc_i = acc != nullptr ? acc + slot * opt.bins : nullptr;
  if (!bins::session(start, i + 1, opt, get, scratch + slot * opt.bins, acc_i, L, total, lv))
    atomicMin(over, static_cast<unsigned long long>(i));
  dev_poc[i] = lv.poc_price;
  dev_vah[i] = lv.vah_price;
  dev_val[i] = lv.val_price;
}

size_t element_bytes(DType t) { return t == DType::f32 || t == DType::i32 ? 4 : 8; }

// One element of a (host or device) array, copied to the host.
template <class T>
T element(const Array& a, int64_t i, gpuStream_t stream) {
  T x{};
  if (a.device < 0) return static_cast<const T*>(a.data)[i];
  VPOC_GPU_CHECK(gpuMemcpyAsync(&x, static_cast<const T*>(a.data) + i, sizeof(T), gpuMemcpyDeviceToHost, stream));
  VPOC_GPU_CHECK(gpuStreamSynchronize(stream));
  return x;
}

}  // namespace

DeviceProfiles profile_bins(const Array* price, const Array& volume, const BarsInput* bars,
                            const SessionSpan& sessions, const Options& opt, const GpuOptions& gopt,
                            std::vector<double>& bin_low, std::vector<double>& bin_width) {
  require_device(gopt.device);
  DeviceGuard guard(gopt.device);
  DeviceState& st = state(gopt.device);
  std::lock_guard<std::mutex> lock(st.mutex());
  const gpuStream_t stream = gopt.user_stream ? reinterpret_cast<gpuStream_t>(gopt.stream) : st.stream();
  wait_before_call(st, stream, gopt.wait_streams);
  const int64_t S = sessions.n_sessions, N = opt.bins;
  const int64_t n = volume.size;
  // result offsets: N bins per non-empty session
  std::vector<int64_t> out_off(static_cast<size_t>(S + 1), 0);
  for (int64_t s = 0; s < S; ++s)
    out_off[static_cast<size_t>(s + 1)] =
        out_off[static_cast<size_t>(s)] + (sessions.offsets[s + 1] > sessions.offsets[s] ? N : 0);
  const int64_t R = out_off[static_cast<size_t>(S)];

  // the inputs as the kernel reads them: host arrays copied into the workspace, device ones in place
  std::vector<Array> arrays;
  if (bars != nullptr) {
    arrays = {bars->high, bars->low, bars->close, bars->volume};
    if (bars->has_open) arrays.push_back(bars->open);
  } else {
    arrays = {*price, volume};
  }
  const size_t idx_bytes = align_up(static_cast<size_t>(S + 1) * 8);
  const bool exact = opt.accumulate == Accumulate::exact;
  size_t bytes = idx_bytes + 2 * align_up(static_cast<size_t>(S) * 8) + 256 +
                 (exact ? align_up(static_cast<size_t>(R) * sizeof(Fixed)) : 0);
  for (const Array& a : arrays)
    if (a.device < 0) bytes += align_up(static_cast<size_t>(n) * element_bytes(a.dtype));
  // developing: [N] bins (and [N] Fixed, 'exact') per row of a batch of rows; batches fill
  // memory_budget (at least one row)
  const size_t per_row = static_cast<size_t>(N) * (8 + (exact ? sizeof(Fixed) : 0));
  const auto budget = static_cast<size_t>(gopt.memory_budget);
  const auto too_small = [&](size_t need) {
    VPOC_THROW_ARG(ValueError, "memory_budget", "memory_budget=", gopt.memory_budget, " is too small for bins=", N,
                   " over ", n, " input rows on the GPU (needs ", need, " bytes: the inputs", exact ? ", the exact sums" : "",
                   opt.developing ? " and at least one row's rebuild" : "", "); raise memory_budget",
                   volume.device >= 0 ? "" : " or pass the inputs as GPU arrays");
  };
  const size_t fixed_part = bytes + 2 * 256;  // the developing pieces' alignment
  if (fixed_part + (opt.developing ? per_row : 0) > budget) too_small(fixed_part + (opt.developing ? per_row : 0));
  const int64_t batch = !opt.developing ? 0
                        : std::max<int64_t>(1, std::min<int64_t>(std::max<int64_t>(n, 1),
                                                                 static_cast<int64_t>((budget - fixed_part) / per_row)));
  if (opt.developing)
    bytes += align_up(static_cast<size_t>(batch * N) * 8) + (exact ? align_up(static_cast<size_t>(batch * N) * sizeof(Fixed)) : 0);
  char* ws = static_cast<char*>(st.workspace(bytes));
  const auto take = [&](size_t b) {
    char* p = ws;
    ws += align_up(b);
    return p;
  };
  auto* d_off = reinterpret_cast<int64_t*>(take(static_cast<size_t>(S + 1) * 8));
  auto* d_low = reinterpret_cast<double*>(take(static_cast<size_t>(S) * 8));
  auto* d_width = reinterpret_cast<double*>(take(static_cast<size_t>(S) * 8));
  auto* d_flags = reinterpret_cast<unsigned long long*>(take(2 * sizeof(unsigned long long)));
  Fixed* d_acc = exact ? reinterpret_cast<Fixed*>(take(static_cast<size_t>(R) * sizeof(Fixed))) : nullptr;
  double* dev_scratch = opt.developing ? reinterpret_cast<double*>(take(static_cast<size_t>(batch * N) * 8)) : nullptr;
  Fixed* dev_acc = opt.developing && exact ? reinterpret_cast<Fixed*>(take(static_cast<size_t>(batch * N) * sizeof(Fixed)))
                                           : nullptr;
  for (Array& a : arrays) {
    if (a.device >= 0) continue;
    const size_t nb = static_cast<size_t>(n) * element_bytes(a.dtype);
    void* d = take(nb);
    if (nb) VPOC_GPU_CHECK(gpuMemcpyAsync(d, a.data, nb, gpuMemcpyHostToDevice, stream));
    a.data = d;
  }
  VPOC_GPU_CHECK(gpuMemcpyAsync(d_off, sessions.offsets, static_cast<size_t>(S + 1) * 8, gpuMemcpyHostToDevice, stream));
  VPOC_GPU_CHECK(gpuMemsetAsync(d_flags, 0xff, 2 * sizeof(unsigned long long), stream));

  DeviceProfiles out;
  allocate_session_columns(st, out, S, stream);
  out.volume_mem = st.output(static_cast<size_t>(std::max<int64_t>(R, 1)) * 8, stream);
  out.volume = DeviceColumn{out.volume_mem->data, R, DType::f64};
  VPOC_GPU_CHECK(gpuMemcpyAsync(out.offsets.data, out_off.data(), static_cast<size_t>(S + 1) * 8, gpuMemcpyHostToDevice,
                                stream));

  BinColumns c;
  c.off = d_off;
  c.out_off = static_cast<const int64_t*>(out.offsets.data);
  c.volume = static_cast<double*>(out.volume.data);
  c.acc = d_acc;
  const auto i64 = [](const DeviceColumn& d) { return static_cast<int64_t*>(d.data); };
  const auto f64 = [](const DeviceColumn& d) { return static_cast<double*>(d.data); };
  // the order of bins::Columns: n_rows, low_row, poc_row, vah_row, val_row, poc, vah, val, total_volume,
  // va_volume, bin_low, bin_width
  c.col = bins::Columns{i64(out.n_rows), i64(out.low_row), i64(out.poc_row), i64(out.vah_row),
                        i64(out.val_row), f64(out.poc), f64(out.vah), f64(out.val), f64(out.total_volume),
                        f64(out.va_volume), d_low, d_width};
  c.first_bad = d_flags;
  c.overflow = d_flags + 1;
  InputView view;
  if (bars != nullptr) {
    BarsInput b = *bars;
    b.high = arrays[0];
    b.low = arrays[1];
    b.close = arrays[2];
    b.volume = arrays[3];
    if (b.has_open) b.open = arrays[4];
    view = view_of(b, Distribute::uniform);
  } else {
    view = view_of(arrays[0], arrays[1]);
  }
  // launch(src, o): the view's Source in its element types and the call's options less the
  // interrupt (a host callback; kernels take none)
  const auto with_source = [&](auto&& launch) {
    with_types(view, [&](auto p, auto v) {
      using P = decltype(p);
      using V = decltype(v);
      const Source<P, V> src = make_source<P, V>(view, opt, 0);
      Options o = opt;
      o.interrupt = Interrupt{};
      launch(src, o);
    });
  };
  if (S > 0) {
    with_source([&](const auto& src, const Options& o) {
      bins_kernel<<<static_cast<unsigned>((S + kThreads - 1) / kThreads), kThreads, 0, stream>>>(src, S, o, c);
      VPOC_GPU_CHECK_LAUNCH("bins_kernel");
    });
  }
  unsigned long long flags[2] = {0, 0};
  bin_low.assign(static_cast<size_t>(S), 0.0);
  bin_width.assign(static_cast<size_t>(S), 0.0);
  VPOC_GPU_CHECK(gpuMemcpyAsync(flags, d_flags, sizeof(flags), gpuMemcpyDeviceToHost, stream));
  if (S > 0) {
    VPOC_GPU_CHECK(gpuMemcpyAsync(bin_low.data(), d_low, static_cast<size_t>(S) * 8, gpuMemcpyDeviceToHost, stream));
    VPOC_GPU_CHECK(gpuMemcpyAsync(bin_width.data(), d_width, static_cast<size_t>(S) * 8, gpuMemcpyDeviceToHost, stream));
  }
  out.ready = record_ready(stream, gopt.device);
  st.last_call = out.ready.event;
  st.last_call_stream = out.ready.stream;
  VPOC_GPU_CHECK(gpuStreamSynchronize(stream));  // the flags and ladders are read now; inputs no longer read
  constexpr unsigned long long kNone = ~0ull;
  const int64_t bad = flags[0] == kNone ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(flags[0]);
  const int64_t over = flags[1] == kNone ? std::numeric_limits<int64_t>::max() : sessions.offsets[flags[1]];
  if (bad < over) {  // the CPU's message for the same row (core/messages.hpp)
    messages::Problem p;
    with_types(view, [&](auto pt, auto vt) {
      using P = decltype(pt);
      using V = decltype(vt);
      const auto at = [&](const Array& a) { return static_cast<double>(element<P>(a, bad, stream)); };
      const V v = element<V>(volume, bad, stream);
      if (bars != nullptr)
        p = messages::bar_problem(bad, *bars, at(bars->high), at(bars->low), at(bars->close),
                                  bars->has_open ? at(bars->open) : 0.0, v, opt.tick_size, opt.ticks_per_row);
      else
        p = messages::trade_problem(bad, *price, at(*price), volume, v, opt.tick_size, opt.ticks_per_row);
    });
    messages::raise(p, __FILE__, __LINE__);
  }
  if (over != std::numeric_limits<int64_t>::max())
    messages::raise(messages::session_volume_overflow(volume.name, static_cast<int64_t>(flags[1])), __FILE__, __LINE__);
  if (opt.developing) {
    // [n] dev columns; rows in batches whose [N] scratch per row fits in memory_budget
    allocate_developing_columns(st, out, n, stream);
    with_source([&](const auto& src, const Options& o) {
      for (int64_t r0 = 0; r0 < n; r0 += batch) {
        const int64_t r1 = std::min(n, r0 + batch);
        bins_developing_kernel<<<static_cast<unsigned>((r1 - r0 + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
            src, d_off, S, r0, r1, o, dev_scratch, dev_acc, static_cast<double*>(out.dev_poc.data),
            static_cast<double*>(out.dev_vah.data), static_cast<double*>(out.dev_val.data), c.overflow);
        VPOC_GPU_CHECK_LAUNCH("bins_developing_kernel");
      }
    });
    out.ready = record_ready(stream, gopt.device);
    st.last_call = out.ready.event;
    st.last_call_stream = out.ready.stream;
    VPOC_GPU_CHECK(gpuMemcpyAsync(flags, d_flags, sizeof(flags), gpuMemcpyDeviceToHost, stream));
    VPOC_GPU_CHECK(gpuStreamSynchronize(stream));  // the inputs are no longer read when the call returns
    if (flags[1] != kNone)  // c.overflow was ~0 (no session overflowed): now a window's row
    {  // the window's session as the CPU names it
      const auto i = static_cast<int64_t>(flags[1]);
      messages::raise(messages::window_volume_overflow(volume.name, bars != nullptr ? "bar" : "row", i,
                                                       window::session_of(sessions.offsets, S, i)),
                      __FILE__, __LINE__);
    }
  }
  out.device = gopt.device;
  out.n_sessions = S;
  out.tick_size = opt.tick_size;
  out.ticks_per_row = opt.ticks_per_row;
  return out;
}

}  // namespace vpoc::gpu
