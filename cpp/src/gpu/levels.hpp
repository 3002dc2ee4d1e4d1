// gpu/levels.hpp — launchers for the per-session POC / value-area pass and its helpers.
// Contract: the same rules as the CPU (core/levels.hpp), so equal histograms give equal levels.
#pragma once

#include <cstdint>

#include "gpu/vendor.hpp"
#include "vpoc/gpu.hpp"
#include "vpoc/types.hpp"

namespace vpoc::gpu {

// Output columns of the sessions (device pointers, [S] each).
struct LevelColumns {
  const int64_t* offsets;  // [S+1]
  const int64_t* n_rows;
  const int64_t* low_row;
  int64_t *poc_row, *vah_row, *val_row;
  double *poc, *vah, *val, *total_volume, *va_volume;
  const long long* go = nullptr;  // [1] speculative calls: 0 = the binning did not run, do nothing
  const uint8_t* touched = nullptr;  // [R] va_rows='touched': rows an input row touched (gpu/touch.hpp); else null
};

// iota[i] = i for i < n (the values the greedy sort carries).
void launch_iota(int32_t* iota, int64_t n, gpuStream_t stream);
// One block per session: POC and value area (total_volume already written by the finish pass). `order` (greedy only) holds each session's
// global row indices sorted by volume descending, lower row first on ties.
void launch_levels(const double* volume, const int32_t* order, const LevelColumns& c, int64_t S,
                   const Options& opt, gpuStream_t stream);

}  // namespace vpoc::gpu
