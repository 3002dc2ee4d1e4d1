// cpu/grid.hpp — counts the prices of host arrays that are off the tick_size grid (core/grid.hpp).
// Contract: the same count and first index as applying grid::off_grid to every price, in any thread count.
#pragma once

#include <cstdint>

#include "vpoc/types.hpp"

namespace vpoc::cpu {

struct GridCount {
  int64_t off = 0;
  int64_t first = -1;  // index of the first price off the grid; -1 when none
};

// Off-grid prices of a float32/float64 host array, on up to `threads` workers (0: all cores) for
// large arrays; `interrupt` is polled between pieces.
GridCount count_off_grid(const Array& prices, double tick_size, int threads, const Interrupt& interrupt);

}  // namespace vpoc::cpu
