// cpu/row_window.hpp — one worker's scratch histogram for the session it is binning.
// Contract: rows are absolute; each row has kLanes accumulators (summed on drain); drain() re-zeroes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#if defined(__GNUC__) || defined(__clang__)
#define VPOC_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define VPOC_ALWAYS_INLINE inline
#endif

namespace vpoc::cpu {

// Consecutive rows of a session usually hit the same price row; spreading them over independent
// accumulators (row i goes to lane i % kLanes) breaks the store-to-load dependency between them.
constexpr int kLanes = 8;

// Acc: int64_t for integer volumes (exact), double otherwise.
template <class Acc>
class alignas(64) RowWindow {  // aligned: workers' windows never share a cache line
 public:
  explicit RowWindow(int64_t max_rows) : max_rows_(max_rows) {}

  Acc* data() { return buf_.data(); }
  int64_t origin() const { return origin_; }
  uint64_t rows() const { return static_cast<uint64_t>(buf_.size() / kLanes); }
  int64_t max_rows() const { return max_rows_; }

  // Makes the window hold rows want_lo..want_hi beside the occupied rows lo..hi (lo > hi: none
  // yet). False when that would span more than max_rows rows. May move the contents: callers
  // reload data() and origin().
  bool make_room(int64_t lo, int64_t hi, int64_t want_lo, int64_t want_hi) {
    const bool empty = lo > hi;
    const int64_t nlo = empty ? want_lo : std::min(lo, want_lo);
    const int64_t nhi = empty ? want_hi : std::max(hi, want_hi);
    const int64_t span = nhi - nlo + 1;
    if (span > max_rows_ || span <= 0) return false;
    if (nlo >= origin_ && nhi < origin_ + int64_t(rows())) return true;
    // Twice the span leaves room to grow on both sides; 1024 rows cover a typical ES session at once.
    const int64_t cap = std::max<int64_t>({int64_t(rows()), 2 * span, 1024});
    std::vector<Acc> next(static_cast<size_t>(cap * kLanes), Acc(0));
    const int64_t origin = nlo - (cap - span) / 2;
    if (!empty)
      std::copy(buf_.begin() + (lo - origin_) * kLanes, buf_.begin() + (hi - origin_ + 1) * kLanes,
                next.begin() + (lo - origin) * kLanes);
    buf_.swap(next);
    origin_ = origin;
    return true;
  }

  // Appends the lane sums of rows lo..hi to out as float64 and zeroes them here.
  void drain(int64_t lo, int64_t hi, std::vector<double>& out) {
    if (lo > hi) return;
    Acc* p = buf_.data() + (lo - origin_) * kLanes;
    for (int64_t r = lo; r <= hi; ++r, p += kLanes) {
      Acc sum = p[0];
      for (int l = 1; l < kLanes; ++l) sum += p[l];
      out.push_back(static_cast<double>(sum));
      std::fill(p, p + kLanes, Acc(0));
    }
  }

 private:
  int64_t max_rows_;
  std::vector<Acc> buf_;
  int64_t origin_ = 0;  // absolute row of the first accumulator group
};

// A session being binned: a window plus the occupied range. Hot loops work on a local copy (so the
// compiler keeps it in registers: histogram stores cannot alias it) and store it back at the end.
template <class Acc>
class Bins {
 public:
  explicit Bins(RowWindow<Acc>& w) : w_(&w) { reload(); }

  // Adds v to row r in lane `lane`. False when the session would exceed max_rows.
  VPOC_ALWAYS_INLINE bool add(int64_t r, Acc v, unsigned lane) {
    uint64_t k = static_cast<uint64_t>(r - origin_);
    if (k >= rows_) {
      if (!w_->make_room(lo_, hi_, r, r)) return false;
      reload();
      k = static_cast<uint64_t>(r - origin_);
    }
    h_[k * kLanes + (lane & (kLanes - 1))] += v;
    lo_ = r < lo_ ? r : lo_;
    hi_ = r > hi_ ? r : hi_;
    return true;
  }
  // Makes rows want_lo..want_hi addressable (false: the session would exceed max_rows).
  bool reserve(int64_t want_lo, int64_t want_hi) {
    if (!w_->make_room(lo_, hi_, want_lo, want_hi)) return false;
    reload();
    return true;
  }
  // Marks rows lo..hi as touched (they were added through data() directly).
  void touch(int64_t lo, int64_t hi) {
    lo_ = lo < lo_ ? lo : lo_;
    hi_ = hi > hi_ ? hi : hi_;
  }
  Acc* data() const { return h_; }
  int64_t origin() const { return origin_; }
  uint64_t rows() const { return rows_; }
  bool empty() const { return lo_ > hi_; }
  int64_t lo() const { return lo_; }
  int64_t hi() const { return hi_; }
  bool too_wide() const { return !empty() && hi_ - lo_ >= w_->max_rows(); }
  // Moves rows lo..hi to out (float64) and resets. Returns the number of rows moved.
  int64_t drain(std::vector<double>& out) {
    w_->drain(lo_, hi_, out);
    const int64_t n = empty() ? 0 : hi_ - lo_ + 1;
    lo_ = std::numeric_limits<int64_t>::max();
    hi_ = std::numeric_limits<int64_t>::min();
    return n;
  }

 private:
  void reload() {
    h_ = w_->data();
    origin_ = w_->origin();
    rows_ = w_->rows();
  }
  RowWindow<Acc>* w_;
  Acc* h_ = nullptr;
  int64_t origin_ = 0;
  uint64_t rows_ = 0;
  int64_t lo_ = std::numeric_limits<int64_t>::max();
  int64_t hi_ = std::numeric_limits<int64_t>::min();
};

}  // namespace vpoc::cpu
