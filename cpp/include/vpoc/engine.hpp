// vpoc/engine.hpp — the public entry points: trades or bars (host or GPU arrays) in, one Result out.
// Contract: docs/contract.md; each call is validated once here and run by the backend its Placement names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vpoc/profiles.hpp"
#include "vpoc/types.hpp"

namespace vpoc {

// Session boundaries as CSR offsets [S+1] (int64, borrowed, host). window_start (host, [N] or
// null): with developing=True, row i's window is rows window_start[i] .. i of its session (time
// windows: the caller's starts, checked by validate_window_start; docs/contract.md "Rolling windows").
struct SessionSpan {
  const int64_t* offsets = nullptr;
  int64_t n_sessions = 0;
  const int64_t* window_start = nullptr;
};

struct BarsInput {
  Array high, low, close, volume;
  Array open;  // read only when has_open
  bool has_open = false;
};

// Where a call runs: device < 0 the CPU (opt.threads workers), else that GPU, within
// memory_budget bytes of scratch + staging, on `stream` (a raw handle; 0: vpoc's own stream)
// after the work of wait_streams (the inputs' producers).
struct Placement {
  int device = -1;
  int64_t memory_budget = int64_t(256) << 20;
  std::uintptr_t stream = 0;
  bool user_stream = false;  // stream was given by the caller
  std::vector<std::uintptr_t> wait_streams;
};

// The point in a GPU stream after which a result is complete (an event); null when already complete.
struct Ready {
  std::shared_ptr<void> event;
  int device = -1;
  // The producer's stream when it cannot be destroyed (the default streams, vpoc's own): a
  // consumer on that very stream needs no wait. ~0: another stream (its handle may be reused
  // once it is destroyed, so equal handles prove nothing).
  std::uintptr_t stream = ~std::uintptr_t(0);
};

// Prices off the tick_size grid (core/grid.hpp) among the price inputs of a call, counted by the
// engine as it reads them (CPU: session by session before binning; GPU: in its range pass).
// Inputs: trades 0 = price; bars 0 high, 1 low, 2 close, 3 open (legacy only). `refused`: more than
// kGridMaxShare of them and not opt.snap (the caller refuses the result).
struct GridCheck {
  bool counted = false;
  int64_t off = 0;       // prices off the grid (the engine rounds each to the nearest tick)
  int64_t prices = 0;    // prices checked
  int first_input = -1;      // -1 with first_index >= 0: the GPU's count (the row, not the input)
  int64_t first_index = -1;
  bool refused = false;
};

// One result column: `size` elements of `dtype` at `data`, kept alive by `owner` (host memory of
// a Profiles, or a GPU result buffer, a vpoc::gpu::Buffer).
struct Column {
  std::shared_ptr<void> owner;
  void* data = nullptr;
  int64_t size = 0;
  DType dtype = DType::f64;
};

// What every call returns, from either backend: the columns of VPOC_RESULT_COLUMNS.
struct Result {
  int device = -1;  // -1: host memory; >= 0: memory of that GPU, complete after `ready`
  int64_t n_sessions = 0;
  double tick_size = 0.0;
  int64_t ticks_per_row = 1;
  bool developing = false;  // the inputs-extent columns exist
  Column columns[kNumColumns];
  Ready ready;
  GridCheck grid;
  // bins=N (opt.bins > 0): each session's ladder, lowest price and bin width [S] (host memory,
  // NaN for an empty session); empty otherwise.
  bool bins = false;
  std::vector<double> bin_low, bin_width;
  const Column& operator[](Col c) const { return columns[static_cast<int>(c)]; }
};

// Throws ValueError unless offsets[0] == 0, offsets is non-decreasing and offsets[S] == n_rows.
void validate_offsets(const SessionSpan& sessions, int64_t n_rows);
// The same rule for offsets of another name (`name` in the messages and InputError.argument); `hints`:
// the user-facing advice (session lengths, vpoc.sessions' kept rows).
void validate_offsets(const SessionSpan& sessions, int64_t n_rows, const char* name, bool hints);

// Throws ValueError naming `window` unless sessions.window_start (when given) is a window start per
// row: offsets[s] <= start[i] <= i within each session, non-decreasing; and the call can take it
// (developing=True, no window=N, no bins, not 'legacy', host inputs: `on_device` false).
void validate_window_start(const SessionSpan& sessions, const Options& opt, bool on_device);

// Non-decreasing per-row ids [N] -> offsets [S+1] and the id of each session [S].
void offsets_from_ids(const int64_t* ids, int64_t n, const char* name, std::vector<int64_t>& offsets,
                      std::vector<int64_t>& labels);

// Backend-neutral checks every call runs once, first: options, lengths, dtypes, offsets, and that
// every input lives where `place` runs the call.
void validate_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                     const Options& opt, const Placement& place);
void validate_bars(const BarsInput& bars, const SessionSpan& sessions, const Options& opt,
                   const Placement& place);

struct SideJob;  // vpoc/side.hpp

// The one entry per operation: validate, run cpu:: or gpu::, report the engine's off-grid count.
// side (trades with an aggressor side, else null): a host call fills side->cols in the same binning
// pass (vpoc/side.hpp); GPU calls leave it (side->done false: the caller's masked passes make them).
Result profile_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                      const Options& opt, const Placement& place = {}, SideJob* side = nullptr);
Result profile_bars(const BarsInput& bars, const SessionSpan& sessions, const Options& opt,
                    const Placement& place = {});

// (prices of a float32/float64 host array off the tick_size grid, index of the first or -1): the
// count each host call makes first (GridCheck), for the callers' own checks of other prices.
std::pair<int64_t, int64_t> count_off_grid(const Array& prices, double tick_size, int threads);
// One float64 price against the same rule (Live's row-by-row check).
bool price_off_grid(double price, double tick_size);

// The CPU engine's instruction-set level (README "Environment variables": VPOC_CPU_ISA caps it):
// the CPU's own (cpu), the one the kernels use (active: the lower of the two; the CPU's own while
// the value is refused), the variable as set (value; set: set and not empty), capped (active below
// cpu) and error: why the value is refused (empty: it is not), the ValueError every engine call
// above raises then. Level names: scalar, sse2, avx2, avx512, avx512cd. Never throws.
struct CpuIsaInfo {
  std::string cpu, active, value, error;
  bool set = false, capped = false;
};
CpuIsaInfo cpu_isa_info();

}  // namespace vpoc
