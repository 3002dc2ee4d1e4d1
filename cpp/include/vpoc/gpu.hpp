// vpoc/gpu.hpp — the GPU backend's public face: device discovery, memory accounting, result memory.
// Contract: callable in every build; without a GPU backend, available() is false and the rest throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vpoc/engine.hpp"
#include "vpoc/side.hpp"
#include "vpoc/types.hpp"

namespace vpoc::gpu {

// Compiled backend: "cuda", "hip" or "none".
const char* backend();
bool available();
// GPUs the runtime sees (0 without a backend or a driver).
int device_count();
// Throws ValueError unless 0 <= device < device_count().
void require_device(int device);

// One GPU the runtime sees.
struct DeviceInfo {
  int index = 0;
  std::string name;          // e.g. "NVIDIA H200", "AMD Radeon RX 7900 XT"
  std::string arch;          // "sm_90" on NVIDIA; "gfx1100" on AMD (gcnArchName without ":feature" flags)
  int64_t total_memory = 0;  // bytes
  // Whether this build's kernels load on it: the runtime found a code object for it (CUDA: SASS of
  // a compatible sm, or PTX it can JIT; HIP: a code object for exactly this gfx target).
  bool has_code = false;
  int binary_version = 0;  // CUDA: the sm of the loaded kernel code (90 = sm_90); 0 unknown / HIP
  int ptx_version = 0;     // CUDA: its PTX version when JIT-compiled from PTX; 0 otherwise / HIP
  std::string code_error;  // the runtime's error when !has_code
};
// Every GPU the runtime sees; empty without a backend or a driver. Never throws.
std::vector<DeviceInfo> devices();
// The runtime's and the driver's version as the vendor encodes them (CUDA: 1000*major + 10*minor,
// e.g. 12040; HIP: 10000000*major + 100000*minor + patch); 0 without a driver, -1 unknown. Never throw.
int runtime_version();
int driver_version();

// DLPack device type of this backend's memory: kDLCUDA (2) on NVIDIA, kDLROCM (10) on AMD.
int dlpack_device_type();

// Memory that stays alive while any array views it. Device memory goes back to vpoc's result pool
// with the last view, and is handed out again only after the work queued so far on every stream
// that may still use it (its producer's, each DLPack consumer's, the legacy default stream).
struct Buffer {
  void* data = nullptr;
  size_t bytes = 0;
  int device = -1;  // -1: host memory
  std::vector<std::uintptr_t> streams;  // raw stream handles that used it (besides the legacy default)
  std::mutex streams_mutex;
};
using BufferPtr = std::shared_ptr<Buffer>;
// Records that `stream` (a raw handle, 0 = legacy default) may use `buffer` from now on (a DLPack
// consumer's stream): when the buffer returns to the pool, its reuse waits for that stream's work.
void note_stream(Buffer& buffer, std::uintptr_t stream);

using Ready = ::vpoc::Ready;
// Makes `consumer_stream` (a raw stream handle; 0 = legacy default) wait for `ready`.
void wait(const Ready& ready, std::uintptr_t consumer_stream);
// Blocks the host until the work queued so far on a caller's stream (raw handle) is complete:
// producers of input arrays hand their stream over with the data (CUDA array interface).
void synchronize_stream(int device, std::uintptr_t stream);
// Blocks the host until `ready` (nothing when it has no event): the call that made it is complete.
void synchronize(const Ready& ready);
// Blocks the host until `ready`, then copies `bytes` from device memory to host memory.
void copy_to_host(void* dst, const void* src, size_t bytes, int device, const Ready& ready);

struct MemoryStats {
  int64_t workspace_bytes = 0;  // the reusable scratch + staging workspace now held
  int64_t peak_bytes = 0;       // most workspace bytes ever held
  int64_t allocs = 0;           // workspace device allocations so far
  int64_t frees = 0;            // workspace device frees so far
  int64_t output_allocs = 0;    // result buffers handed out (from the pool or the driver)
  int64_t output_frees = 0;     // result buffers given back (to the pool)
  int64_t output_bytes = 0;     // result bytes alive now
  int64_t pool_bytes = 0;       // device bytes the result pool holds (alive + cached)
  int64_t pool_cached_bytes = 0;  // of those, free and ready for reuse
  int64_t pool_limit_bytes = 0;   // most cached bytes kept; beyond it freed buffers go to the driver
  int64_t pool_hits = 0;          // result buffers served from the cache
  int64_t driver_allocs = 0;  // every device/pinned allocation vpoc asked the driver for
  int64_t driver_frees = 0;   // every free vpoc gave the driver (each one syncs the device)
  int64_t speculative_calls = 0;   // calls that binned before reading their layout back (no mid-call wait)
  int64_t speculative_reruns = 0;  // of those, calls run again because the rows outgrew the expected size
  int64_t fused_bar_calls = 0;     // speculative bar calls binned by the levels kernel (bin + finish + levels in one launch)
};
MemoryStats memory_stats(int device);
// Whether calls of a shape seen before bin before reading their layout back (default true; false:
// every call waits for its layout mid-call, as the first call of a shape does). Process-wide.
void set_speculation(bool enabled);
bool speculation();
// Gives every cached (free) result buffer, the workspace and the pinned staging of `device` back
// to the driver. Live results stay valid.
void empty_cache(int device);
// Most bytes of free result buffers the pool of `device` keeps for reuse (default kPoolLimit).
void set_pool_limit(int device, int64_t bytes);
constexpr int64_t kPoolLimit = int64_t(1) << 30;  // 1 GiB: a few hundred results of a training loop

// How a GPU call runs: on which device, within which scratch budget, on which stream.
using GpuOptions = ::vpoc::Placement;

// One result column in device memory.
struct DeviceColumn {
  void* data = nullptr;
  int64_t size = 0;
  DType dtype = DType::f64;
};

// Profiles (same fields and meaning as vpoc::Profiles) whose arrays live on the device. The
// columns view `sessions_mem` / `volume_mem`; `ready` completes when they are written.
struct DeviceProfiles {
  int device = 0;
  int64_t n_sessions = 0;
  double tick_size = 0.0;
  int64_t ticks_per_row = 1;
  BufferPtr sessions_mem, volume_mem, developing_mem;  // extents offsets/sessions, rows, inputs
#define VPOC_X(name, type, extent) DeviceColumn name;
  VPOC_RESULT_COLUMNS(VPOC_X)  // inputs-extent columns (developing) empty unless opt.developing
#undef VPOC_X
  Ready ready;
  int64_t off_grid = 0;         // prices off the tick_size grid (core/grid.hpp), counted by the range pass
  int64_t first_off_grid = -1;  // the first row holding one; -1: none
};

// The GPU engines (inputs validated by the dispatcher). Inputs may be host arrays (streamed in
// chunks through staging buffers) or arrays on gopt.device (Array::device == that index: read in place).
// side (trades with an aggressor side, else null): side->side the int8 codes (where the prices are),
// side->device gets the side columns (vpoc/side.hpp; the engine's one binning pass, 3 planes a row).
DeviceProfiles profile_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                              const Options& opt, const GpuOptions& gopt, SideJob* side = nullptr);
DeviceProfiles profile_bars(const BarsInput& bars, const SessionSpan& sessions,
                            Distribute distribute, const Options& opt, const GpuOptions& gopt);
// Finished profile rows in device memory (vpoc._side_profiles' masked buy / sell engine passes of a GPU
// call: GPU bars, library columns), the input of side_levels below. Every pointer on the call's device.
struct SideRows {
  const int64_t* row_off = nullptr;     // [S + 1] rows of session s: row_off[s] .. row_off[s + 1] - 1
  const int64_t* low_row = nullptr;     // [S] ladder row of each session's first row (unread without rows)
  const double* buy = nullptr;          // [R] buy volume per row
  const double* sell = nullptr;         // [R] sell volume per row
  const double* buy_total = nullptr;    // [S] each session's exact buy total, rounded once
  const double* sell_total = nullptr;   // [S] its sell total
  int64_t n_sessions = 0;               // S
  int64_t n_rows = 0;                   // R = row_off[S]
  double row_size = 1.0;                // tick_size * ticks_per_row of the rows
  std::vector<Ready> after;             // the work that wrote them: the call's stream waits for each
  std::vector<BufferPtr> owners;        // their memory: its reuse waits for the call's stream
};
// The side epilogue of sided trades (gpu/side.cu side_levels_kernel: the rules of vpoc::side_levels, bit for bit)
// on `rows`, on gopt's stream (vpoc's own unless the caller gave one; after gopt.wait_streams and rows.after):
// imbalance_buy / imbalance_sell [R] (int8 0 / 1), delta (core/side.hpp delta of the totals), delta_poc [S]
// (float64), delta_poc_row, stacked_buy / stacked_sell [S] (int64) of the result, in one pool buffer; the
// other columns unset. `ready` completes when they are written.
SideDeviceColumns side_levels(const SideRows& rows, const Options& opt, const SideRules& rules, const GpuOptions& gopt,
                              Ready& ready);

// bins=N (opt.bins > 0): core/bins.hpp, one GPU thread per session (developing: per input row,
// rebuilding its prefix / window) reading rows in input order, so the bits are the CPU's. bin_low / bin_width [S]: as Result's (host).
// price: trades (bars null); bars: bars (price null).
DeviceProfiles profile_bins(const Array* price, const Array& volume, const BarsInput* bars,
                            const SessionSpan& sessions, const Options& opt, const GpuOptions& gopt,
                            std::vector<double>& bin_low, std::vector<double>& bin_width);

}  // namespace vpoc::gpu
