// gpu/touch.hpp — launcher of the touched-row pass (va_rows='touched'): which profile rows input rows touched.
// Contract: the rows core/source.hpp Source::rows gives (the binning's rules), as cpu/touch.cpp; flags 0/1.
#pragma once

#include <cstdint>

#include "core/source.hpp"
#include "gpu/vendor.hpp"
#include "vpoc/types.hpp"

namespace vpoc::gpu {

// Input rows [r0, r1) (absolute) of sessions s0.., all device pointers indexed from the batch's
// first session: offsets [n+1] absolute input rows (offsets[0] <= r0, r1 <= offsets[n]); out_offsets,
// low_row, n_rows [n] of the result's columns.
struct TouchBatch {
  int64_t n = 0;
  int64_t r0 = 0, r1 = 0;
  const int64_t* offsets = nullptr;
  const int64_t* out_offsets = nullptr;
  const int64_t* low_row = nullptr;
  const int64_t* n_rows = nullptr;
  uint8_t* touched = nullptr;  // [R] by output row; zeroed by the caller
};

// Sets touched[out_offsets[s] + r - low_row[s]] = 1 for every row r an input row of the batch
// touches; `in` holds element 0 = absolute row base.
void launch_touch(const InputView& in, int64_t base, const TouchBatch& b, const Options& opt, gpuStream_t stream);

}  // namespace vpoc::gpu
