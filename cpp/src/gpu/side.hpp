// gpu/side.hpp — launchers of the aggressor-side passes of sided trades: the finish over the three planes, the side epilogue.
// Contract: the bits of the CPU engine's side fields (cpu/side.cpp, vpoc/side.hpp) from the same binned rows.
#pragma once

#include <cstdint>

#include "gpu/histogram.hpp"
#include "gpu/vendor.hpp"
#include "vpoc/side.hpp"
#include "vpoc/types.hpp"

namespace vpoc::gpu {

// [g.n] sessions of sided trades binned by launch_bin into g.planes = 3 planes (unknown, buy, sell) of
// out_hi / out_lo (plane p at + p * g.hi_stride / g.lo_stride words): per row the volume U + B + S
// (exact), the buy B and the sell S become float64 in place (plane 0, 1, 2 of out_hi); total[s] the
// session's exact volume rounded once (+inf past 2**53), delta[s] = to_double(buy total) -
// to_double(sell total) (the difference of the two rounded totals, as the CPU), buy_total[s] / sell_total[s]
// those two rounded totals. Honours g.go and g.fixed_by_flag as launch_finish_rows.
void launch_side_finish(const GroupScratch& g, void* out_hi, const void* out_lo, double* total, double* delta,
                        double* buy_total, double* sell_total, gpuStream_t stream);

// The per-session side columns of finished rows (device pointers).
struct SideLevelColumns {
  const int64_t* offsets;  // [S + 1] rows of session s: offsets[s] .. offsets[s + 1] - 1
  const int64_t* n_rows;   // [S]; nullptr: offsets[s + 1] - offsets[s]
  const int64_t* low_row;  // [S]
  const double* buy;       // [R]
  const double* sell;      // [R]
  int8_t *imbalance_buy, *imbalance_sell;  // [R] 0 / 1
  double* delta_poc;                       // [S]
  int64_t *delta_poc_row, *stacked_buy, *stacked_sell;  // [S]
  const long long* go = nullptr;  // [1] speculative calls: 0 = the binning did not run, do nothing
  // [S] with delta set: delta[s] = side::delta(buy_total[s], sell_total[s]) (the masked passes' rows)
  const double* buy_total = nullptr;
  const double* sell_total = nullptr;
  double* delta = nullptr;
  // >= 0: the rows' count R, offsets given from outside the engine (_core.side_levels): a session whose
  // offsets fall outside [0, R] or decrease is taken as empty, so no row past the columns is read or written
  int64_t n_rows_total = -1;
};

// One block per session: imbalance flags, stacked-imbalance counts, the delta POC (the rows engine's
// POC rule under vpoc::delta_poc_options(opt, row_size) on |buy - sell| per row): cpu/side.cpp's side_levels.
// Also delta when c.delta is set.
void launch_side_levels(const SideLevelColumns& c, int64_t S, const Options& opt, const SideRules& rules,
                        gpuStream_t stream);

// dev_delta of sided trades with whole volumes below 2**31 (no kFractional): out[i] = the session's sum of
// +v (buy), -v (sell), 0 (unknown) over its rows up to i, in input order, as an exact int64 segmented scan
// rounded once (a session's prefixes are at most its total, <= 2**53, so the CPU's float64 sum in input
// order gives these bits too). offsets: [S + 1] input rows of the sessions (device). One block a session.
void launch_side_dev_delta(const void* volume, DType volume_dtype, const int8_t* side, const int64_t* offsets,
                           int64_t S, double* out, gpuStream_t stream);

// *word = the smallest i < n whose side code side[i] is bad (core/side.hpp), ~0 when none (device memory;
// reset here). One launch after a reset.
void launch_first_bad_side(const int8_t* side, int64_t n, unsigned long long* word, gpuStream_t stream);

}  // namespace vpoc::gpu
