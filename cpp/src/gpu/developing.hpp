// gpu/developing.hpp — launcher of the developing (no-lookahead) series kernel.
// Contract: the rules of core/developing.hpp (the CPU pass runs the same code), one thread per session.
#pragma once

#include <cstdint>

#include "core/fixed.hpp"
#include "core/source.hpp"
#include "gpu/vendor.hpp"
#include "vpoc/types.hpp"

namespace vpoc::gpu {

// A batch of n sessions, all device pointers.
struct DevelopingBatch {
  int64_t n = 0;
  const int64_t* offsets = nullptr;  // [n+1] absolute input rows of the sessions
  const int64_t* n_rows = nullptr;   // [n] profile rows of each session (0: empty)
  const int64_t* low_row = nullptr;  // [n]
  const int64_t* start = nullptr;    // [n] first scratch row of each session: sum of (W + 1) before it
  int64_t scratch_rows = 0;          // sum of (W + 1) over the batch
  int64_t widest = 0;                // max (W + 1) over the batch
  double* v = nullptr;               // [scratch_rows] zeroed by the launcher
  Fixed* vf = nullptr;               // [scratch_rows] zeroed by the launcher
  double* run = nullptr;             // [scratch_rows]
  int32_t *lo = nullptr, *hi = nullptr, *order = nullptr, *pos = nullptr;  // [scratch_rows] each
  double *dev_poc = nullptr, *dev_vah = nullptr, *dev_val = nullptr;        // [N] by absolute input row
  // time windows: each input row's window start (absolute rows; element 0 = the launch's row
  // `base`); null: window::length rows (core/window.hpp Starts)
  const int64_t* window_start = nullptr;
  // windows across sessions (window_across_sessions; null: within each session): each session's
  // scratch rows [origin, origin + width) (core/window_reach.hpp); a session whose window fails a
  // check (too wide, too heavy) writes the window's width to fail_width[s] and atomicMin's
  // row << 2 | window::Why into *window_failed (~0: none)
  const int64_t* origin = nullptr;
  const int64_t* width = nullptr;
  int64_t* fail_width = nullptr;
  unsigned long long* window_failed = nullptr;
};

// Bytes of scratch per scratch row (v, vf, run, lo, hi, order, pos); order and pos serve
// va_method greedy only, so the other methods' shared-memory copy leaves them out (8 bytes less
// per row: more blocks fit an SM, and a batch of ~1000 sessions runs in one wave).
inline constexpr int64_t kDevelopingRowBytes = 8 + 16 + 8 + 4 * 4;
inline constexpr int64_t kDevelopingOrderBytes = 4 * 2;

// Runs the developing series of the batch; the inputs are `in` with element 0 = absolute row base.
// *failed (device) is set to 1 when a row falls outside its session's scratch (internal error).
void launch_developing(const InputView& in, int64_t base, const DevelopingBatch& b, const Options& opt,
                       unsigned* failed, gpuStream_t stream);

// Host: the width of row i's window (rows j..i, window::window_rows) over `in`, element 0 = row 0,
// its columns read back in pieces when on the device; 0 when a row's prices are invalid. For a
// window too wide to lay out (window::beyond_reach), measured without any scratch.
int64_t window_rows(const InputView& in, bool on_device, const Options& opt, int64_t j, int64_t i,
                    gpuStream_t stream);

}  // namespace vpoc::gpu
