// gpu/levels.hpp — launchers for the per-session POC / value-area pass and its helpers.
// Contract: the same rules as the CPU (core/levels.hpp), so equal histograms give equal levels.
#pragma once

#include <cstdint>

#include "core/source.hpp"
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

// A group's binned rows as launch_finish_levels reads them (see gpu/histogram.hpp launch_bin /
// launch_finish_rows): hi (the volumes in the end, in place), lo (fraction plane, or null),
// used only when *fractional has fraction_bit (fractional null: always), scan for difference rows.
struct FinishRows {
  unsigned long long* hi = nullptr;
  const unsigned long long* lo = nullptr;
  const unsigned long long* fractional = nullptr;
  unsigned long long fraction_bit = 0;
  bool scan = false;
};

// iota[i] = i for i < n (the values the greedy sort carries).
void launch_iota(int32_t* iota, int64_t n, gpuStream_t stream);
// One block per session: POC and value area (total_volume already written by the finish pass). `order` (greedy only) holds each session's
// global row indices sorted by volume descending, lower row first on ties.
void launch_levels(const double* volume, const int32_t* order, const LevelColumns& c, int64_t S,
                   const Options& opt, gpuStream_t stream);
// launch_finish_rows and launch_levels in one launch, for a call of one group whose output
// offsets are its own (base 0): c.total_volume written here. Not for greedy or touched rows.
void launch_finish_levels(const FinishRows& f, const LevelColumns& c, int64_t S, const Options& opt,
                          gpuStream_t stream);
// Bars (InputView `in`, device rows read in place, base 0) whose every session the fused kernel bins
// itself: bin_levels_takes(in, opt, most_bars), most_bars the most bars of any session (a block of the
// levels kernel bins a whole session: kFusedMaxBars at most). Then launch_bin_levels does launch_bin's
// work too, so the rows need no zeroing and no bin pass: one launch; f.lo must be given (the fraction
// plane, [R] words), `offsets` the sessions' input rows [S+1] on the device.
// 4096 bars: 32 a thread of the block (a day of 30-second bars); longer sessions (a composite of months
// of minute bars, second bars) go to the bin pass, whose tiles spread one session over every SM.
inline constexpr int64_t kFusedMaxBars = 4096;
bool bin_levels_takes(const InputView& in, const Options& opt, int64_t most_bars);
void launch_bin_levels(const InputView& in, const int64_t* offsets, const FinishRows& f, const LevelColumns& c,
                       int64_t S, const Options& opt, gpuStream_t stream);

}  // namespace vpoc::gpu
