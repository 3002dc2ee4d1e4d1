// cpu/row_window.hpp — one worker's scratch histogram for the session it is binning.
// Contract: add() accumulates into absolute rows; drain() hands back rows lo..hi and leaves it all zero.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace vpoc::cpu {

// Cache-line aligned: each worker updates its own window on every row, so windows never share a line.
class alignas(64) RowWindow {
 public:
  explicit RowWindow(int64_t max_rows) : max_rows_(max_rows) {}

  void begin() {
    lo_ = std::numeric_limits<int64_t>::max();
    hi_ = std::numeric_limits<int64_t>::min();
  }
  bool empty() const { return lo_ > hi_; }
  int64_t lo() const { return lo_; }
  int64_t hi() const { return hi_; }
  // Rows lo..hi exceed max_rows.
  bool too_wide() const { return !empty() && hi_ - lo_ >= max_rows_; }

  // Adds v to row r. False when r would make the session wider than max_rows (nothing added).
  bool add(int64_t r, double v) {
    uint64_t k = static_cast<uint64_t>(r - origin_);
    if (k >= buf_.size()) {
      if (!make_room(r)) return false;
      k = static_cast<uint64_t>(r - origin_);
    }
    buf_[k] += v;
    lo_ = std::min(lo_, r);
    hi_ = std::max(hi_, r);
    return true;
  }

  // Appends rows lo..hi to out, zeroes them here. Returns the number of rows appended.
  int64_t drain(std::vector<double>& out) {
    if (empty()) return 0;
    const auto first = buf_.begin() + (lo_ - origin_);
    const auto last = buf_.begin() + (hi_ - origin_) + 1;
    out.insert(out.end(), first, last);
    std::fill(first, last, 0.0);
    return hi_ - lo_ + 1;
  }

 private:
  // Re-centres (and if needed grows) the window so that it holds lo..hi and r.
  bool make_room(int64_t r) {
    const int64_t nlo = empty() ? r : std::min(lo_, r);
    const int64_t nhi = empty() ? r : std::max(hi_, r);
    const int64_t span = nhi - nlo + 1;
    if (span > max_rows_) return false;
    // Twice the span leaves room to grow on both sides; 1024 rows cover a typical ES session at once.
    const int64_t cap = std::max<int64_t>({int64_t(buf_.size()), 2 * span, 1024});
    std::vector<double> next(static_cast<size_t>(cap), 0.0);
    const int64_t origin = nlo - (cap - span) / 2;
    if (!empty())
      std::copy(buf_.begin() + (lo_ - origin_), buf_.begin() + (hi_ - origin_) + 1,
                next.begin() + (lo_ - origin));
    buf_.swap(next);
    origin_ = origin;
    return true;
  }

  int64_t max_rows_;
  std::vector<double> buf_;
  int64_t origin_ = 0;  // absolute row of buf_[0]
  int64_t lo_ = std::numeric_limits<int64_t>::max();
  int64_t hi_ = std::numeric_limits<int64_t>::min();
};

}  // namespace vpoc::cpu
