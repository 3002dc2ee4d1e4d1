// cpu/grid.hpp — counts the prices of host arrays that are off the tick_size grid (core/grid.hpp).
// Contract: the same count and first index as applying grid::off_grid to every price, in any thread count.
#pragma once

#include <atomic>
#include <cstdint>

#include "vpoc/types.hpp"

namespace vpoc::cpu {

struct GridCount {
  int64_t off = 0;
  int64_t first = -1;  // index of the first price off the grid; -1 when none
  // Adds the count of a later range (its first index only counts when this one has none).
  void add(const GridCount& later) {
    if (later.off && first < 0) first = later.first;
    off += later.off;
  }
};

// Off-grid prices of a float32/float64 host array, on up to `threads` workers (0: all cores) for
// large arrays; `interrupt` is polled between pieces.
GridCount count_off_grid(const Array& prices, double tick_size, int threads, const Interrupt& interrupt);

// Off-grid prices of prices[begin, end) (first: an absolute index).
GridCount count_off_grid(const Array& prices, int64_t begin, int64_t end, double tick_size);
GridCount count_off_grid(const float* prices, int64_t begin, int64_t end, double tick_size);
GridCount count_off_grid(const double* prices, int64_t begin, int64_t end, double tick_size);

// The off-grid counts of up to 4 price inputs of one call, added session by session by the engine's
// workers (the binning counts them: cpu/histogram.cpp bin_trades / bin_bars).
class GridTally {
 public:
  explicit GridTally(int n_inputs);
  int inputs() const { return n_; }
  // Adds a count of input k (thread-safe).
  void add(int k, const GridCount& c);
  // Forgets every count (the engine bins again in fixed point).
  void clear();
  // Into the Profiles fields: total, the first input holding one and its first row.
  void result(int64_t& off, int& first_input, int64_t& first_index) const;

 private:
  int n_;
  std::atomic<int64_t> off_[4];
  std::atomic<int64_t> first_[4];
};

}  // namespace vpoc::cpu
