// cpu/bar_slots.hpp — phase A of bar binning: a block of bars -> window slots and uniform split terms.
// Contract: the per-bar loop's checks and rows (histogram.cpp bar_ok / bars_loop), power-of-two tick, one tick per row.
#pragma once

#include <cstdint>

#include "cpu/slots.hpp"

namespace vpoc::cpu {

// Bars a block holds: 4 x 2 KiB of terms, in L1 beside the window.
constexpr int kBarBlock = 512;

// The widest bar (in ticks) whose uniform split of a whole volume comes from histogram.cpp's table:
// 1-minute ES bars span a few to a few dozen ticks.
constexpr int kSplitTableMax = 64;

// Where a bar's volume goes: split over its ticks, or whole to the row of its close / of hlc3.
enum class BarRow { uniform, close, hlc3 };

// One block's per-bar terms.
struct BarSlots {
  alignas(64) int32_t lo[kBarBlock];     // uniform: the low tick's slot; close / hlc3: the row's slot
  alignas(64) int32_t hi[kBarBlock];     // uniform: the high tick's slot; close / hlc3: = lo
  alignas(64) int32_t whole[kBarBlock];  // uniform: volume // ticks (when split >= 0)
  alignas(64) int32_t split[kBarBlock];  // uniform: n (n - 1) / 2 + volume % n for n ticks, an index
                                         // into the split table (n <= kSplitTableMax, whole
                                         // volume < 2**31);
                                         // -1: the bar takes the general split
};

// For the n bars at h, l, c (o: the opens, or null), volumes v, prices in ticks p * inv (inv a power
// of two, so exact): fills `out` with slots relative to `origin`, returns false when some bar fails
// the loop's checks (|p * inv| < limit for every price, low <= close <= high, low <= open <= high).
// The volumes are checked in the same pass into vc as volumes_ok does (vc.ok, vc.vmax, vc.whole);
// the slots and split terms of a block whose volumes fail are unspecified. mn / mx: the smallest lo and
// largest hi slot (clamped to +-2e9); on_grid: every high, low and close of the block was a whole
// number of ticks. `whole` / `split` are filled for BarRow::uniform only. Built for AVX2 too,
// picked at run time. P: float or double; V: float, double, int32_t or int64_t.
template <class P, class V>
bool bar_slots(BarRow row, const P* h, const P* l, const P* c, const P* o, const V* v, int n, double inv,
               double limit, double origin, BarSlots& out, double& mn, double& mx, bool& on_grid, VolumeCheck& vc);

}  // namespace vpoc::cpu
