// gpu/histogram.hpp — launchers of the binning kernels (validation + row ranges, then volume).
// Contract: rows [begin, end) of one group of sessions; data pointers index (row - base).
#pragma once

#include <cstdint>

#include "core/source.hpp"
#include "gpu/vendor.hpp"
#include "vpoc/engine.hpp"
#include "vpoc/types.hpp"

namespace vpoc::gpu {

// Absolute rows [begin, end) of the inputs; element 0 of the views is row `base`.
struct RowSpan {
  int64_t begin = 0, end = 0, base = 0;
};

// Per-session scratch of one group of sessions, all device pointers, n sessions.
struct GroupScratch {
  const int64_t* offsets = nullptr;  // [n+1] absolute row offsets of the group's sessions
  int64_t n = 0;
  unsigned long long* lo = nullptr;   // [n] lowest touched row (order-preserving encoding)
  unsigned long long* hi = nullptr;   // [n] highest touched row
  unsigned long long* plo = nullptr;  // [n] legacy: lowest price (order-preserving encoding)
  unsigned long long* phi = nullptr;  // [n] legacy: highest price
  unsigned long long* err = nullptr;  // [1] smallest bad row index (~0: none)
  unsigned long long* fractional = nullptr;  // [1] |= kFractional, kHugeVolume (see launch_row_range)
  unsigned long long* off_grid = nullptr;    // [1] prices off the tick_size grid (core/grid.hpp)
  unsigned long long* first_off_grid = nullptr;  // [1] smallest row holding one (~0: none)
  double huge_volume = 0.0;           // a volume above this may make its session's sum overflow
  const int64_t* out_off = nullptr;   // [n] first output row of each session
  const int64_t* low_row = nullptr;   // [n] each session's low row
  const int64_t* width = nullptr;     // [n] each session's rows
  int64_t* tiles = nullptr;           // [2 * max_tiles] first / last session of each tile of a pass
  int64_t tile_rows = 0;              // rows per tile (block) of the current tile table
  RowSpan tiled{-1, -1, 0};           // host: the rows the tile table was built for (begin -1: none)
  // Speculative calls (the host does not read the layout back before binning):
  const long long* go = nullptr;      // [1] summary[kGo]: 0 when the output is too small or a row is bad;
                                      //     the passes after the layout then do nothing (nullptr: always run)
  bool fixed_by_flag = false;         // integer or fixed-point rows chosen on the device by *fractional
  // Trades, speculative calls (gpu/engine.cu): the range pass reads prices only and the bin pass checks
  // the volumes (first bad row into err, kFractional / kHugeVolume into fractional) while it bins them
  // as whole numbers; a bad row or a fraction sends the host back to the waiting path.
  bool volumes_in_bin = false;
  // Sided trades (InputView::side set): the range pass checks each side code (first bad row into
  // err_side, reported before err's); the bin pass adds each trade to one of `planes` = 3 planes of the
  // output rows (core/side.hpp plane_of: 0 unknown, 1 buy, 2 sell), plane p at out_hi + p * hi_stride
  // and out_lo + p * lo_stride (words). Unsided: 1 plane, err_side unused.
  unsigned long long* err_side = nullptr;  // [1] smallest row whose side code is bad (~0: none)
  int planes = 1;
  int64_t hi_stride = 0, lo_stride = 0;
};

// Words of the group summary (read back by the host: a copy, or the layout's mirror):
// [rows of the group, widest session, first bad row, fractional flags, off-grid count, first
// off-grid row, go, first bad side]; the layout fills kRows, kWidest, kGo, the other passes the rest.
inline constexpr int kRows = 0, kWidest = 1, kGo = 6, kErrSide = 7, kSummaryWords = 8;

// Tiles (blocks) a pass over `rows` rows may use: the size of GroupScratch::tiles / 2.
int64_t max_tiles(int64_t rows);

// A small group's session offsets passed by value in the launch's parameters (no copy of their
// own): n + 1 offsets, n <= kMax (64 sessions: 520 bytes, well under the 4 KiB of parameters
// every target takes); n = -1: none (the offsets are on the device already).
struct ParamOffsets {
  static constexpr int64_t kMax = 64;
  int64_t n = -1;
  int64_t v[kMax + 1];
};

// Resets the group's scratch for a new group of g.n sessions (row ranges, price ranges when
// legacy, error, fractional flag, off-grid count and row, the summary) and builds the tile table
// of the group's first pass over `rows`; g.offsets are on the device already or come in `given`
// (then written to g.offsets by this launch). One launch.
void launch_init_group(GroupScratch& g, bool legacy, long long* summary, RowSpan rows, const ParamOffsets& given,
                       gpuStream_t stream);

// Empty value of the order-preserving encodings used with unsigned atomics: "no minimum yet",
// "no error".
inline constexpr unsigned long long kEncNone = ~0ull;

// Legacy only: per-session lowest / highest price into g.plo / g.phi.
void launch_price_range(const InputView& in, RowSpan rows, GroupScratch& g, const Options& opt,
                        gpuStream_t stream);
// Bits of *GroupScratch::fractional: a volume that is not a whole number below 2**31 (fixed-point
// accumulation); a volume above huge_volume (a session's sum may pass 2**53: the host checks).
inline constexpr unsigned long long kFractional = 1, kHugeVolume = 2;
// Validates every row (first bad index into g.err), accumulates touched rows into g.lo / g.hi,
// and sets the kFractional / kHugeVolume bits of g.fractional.
void launch_row_range(const InputView& in, RowSpan rows, GroupScratch& g, const Options& opt,
                      gpuStream_t stream);
// Adds the volume of every row, exactly, at row g.out_off[s] + row - g.low_row[s] of out_hi
// (u64 integer part) and out_lo (u64 fraction, 2**-64 units; nullptr: whole volumes landing whole
// on one row, integer part only). Rows validated by launch_row_range; out planes zeroed.
// g.fixed_by_flag: out_lo is given and used only when *g.fractional says so (two launches, one returns).
void launch_bin(const InputView& in, RowSpan rows, GroupScratch& g, const Options& opt,
                void* out_hi, void* out_lo, gpuStream_t stream);
// g.volumes_in_bin: the bin pass's checks (g.err, g.fractional) into mirror[2], mirror[3] (the
// summary words the host reads after an event recorded next). One launch of one thread.
void launch_publish_checks(const GroupScratch& g, long long* mirror, gpuStream_t stream);
// Whether launch_bin puts the volume of `in` as a difference array (uniform, one tick per row):
// launch_finish_rows then sums it up.
bool uniform_diff(const InputView& in, const Options& opt);
// [g.n] sessions: the binned rows of launch_bin become float64 in place (out_hi) and total[s] is
// each session's exact sum rounded once (+inf past 2**53).
void launch_finish_rows(const InputView& in, const Options& opt, const GroupScratch& g, void* out_hi,
                        const void* out_lo, double* total, gpuStream_t stream);

// [planes][R] rows of out_hi (and out_lo, unless null or unused by g.fixed_by_flag) zeroed, R =
// summary[kRows] read on the device (at most cap), plane p at p * cap (sided calls: 3 planes, one
// launch). Nothing when *g.go == 0.
void launch_zero_rows(const GroupScratch& g, void* out_hi, void* out_lo, int64_t cap, const long long* summary,
                      gpuStream_t stream, int planes = 1);

// Result columns of one group, device pointers into the session outputs at the group's first session.
struct LayoutColumns {
  int64_t* n_rows;   // [n]
  int64_t* low_row;  // [n]
  int64_t* offsets;  // [n+1]: base + exclusive sum of widths
};
// Bytes of scan scratch launch_layout needs for n sessions.
size_t layout_temp_bytes(int64_t n);
// From g.lo / g.hi: widths and low rows into g (width / low_row / out_off, which launch_bin reads)
// and the result columns; summary[0] = the group's rows, summary[1] = its widest session
// (summary zeroed by launch_init_group), summary[kGo] = 1 when the rows fit in `cap`, no session is
// wider than `max_rows` and no row is bad (else 0). One launch up to kOneBlockLayout sessions.
// zero_hi (and zero_lo, as launch_zero_rows reads it): a one-launch layout also zeroes the group's
// rows there when summary[kGo] is 1 (callers pass them for at most kLayoutZeroRows rows).
// mirror (a device address of page-locked host memory, or null): a one-launch layout also writes
// the kSummaryWords summary words there; true when it did (else the caller copies them back).
bool launch_layout(const GroupScratch& g, int64_t* width, int64_t* low, int64_t* out_off, void* temp,
                   size_t temp_bytes, const LayoutColumns& cols, int64_t base, long long* summary,
                   int64_t cap, int64_t max_rows, gpuStream_t stream, void* zero_hi = nullptr,
                   void* zero_lo = nullptr, long long* mirror = nullptr);
// Rows up to which the one-block layout zeroes the output itself (64 per thread at most: a few
// microseconds, less than a launch of its own).
inline constexpr int64_t kLayoutZeroRows = int64_t(1) << 16;
// Sessions up to which the layout is one launch (and a call may bin without reading it back).
inline constexpr int64_t kOneBlockLayout = 16384;

}  // namespace vpoc::gpu
