// vpoc/profiles.hpp — the result of one engine call: ragged per-session histograms and levels.
// Contract: every per-session vector has n_sessions entries; offsets has n_sessions + 1.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace vpoc {

// Row index of an empty session's poc/vah/val/low rows.
constexpr int64_t kNoRow = std::numeric_limits<int64_t>::min();

struct Profiles {
  int64_t n_sessions = 0;
  double tick_size = 0.0;
  int64_t ticks_per_row = 1;
  std::vector<int64_t> offsets;  // [S+1] into volume
  std::vector<double> volume;    // [sum n_rows] row volumes, each session from its low row up
  std::vector<int64_t> poc_row, vah_row, val_row, low_row, n_rows;  // [S] absolute ladder rows
  std::vector<double> poc, vah, val;                               // [S] row prices
  std::vector<double> total_volume, va_volume;                     // [S]
  std::vector<double> dev_poc, dev_vah, dev_val;  // [N] developing series (empty unless asked for)

  // Sizes every per-session vector for S sessions (contents unspecified).
  void resize_sessions(int64_t s);
};

}  // namespace vpoc
