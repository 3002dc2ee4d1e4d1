// cpu/row_window.hpp — one worker's scratch histogram for the session it is binning.
// Contract: rows are absolute; each row has kLanes accumulators (summed on drain); drain() re-zeroes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/fixed.hpp"
#include "cpu/drain.hpp"
#include "vpoc/profiles.hpp"

#if defined(__GNUC__) || defined(__clang__)
#define VPOC_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define VPOC_ALWAYS_INLINE inline
#endif

namespace vpoc::cpu {

// Consecutive rows of a session usually hit the same price row; spreading them over independent
// accumulators (input row i goes to lane i % kLanes) breaks the store-to-load dependency between
// them. 4 and 8 measured alike on trades with the lane-major layout (16: 20% slower), and again with
// the row-major one on a 2-core EPYC (Zen 5) VM, where one lane takes twice as long on trades in
// long runs on one row and more lanes gain nothing. (Merging runs of equal rows before adding pays
// only for runs of about 2.5 trades or more: cpu/scatter.hpp's record path does it for such blocks.)
constexpr int kLanes = 4;
// Rows past the end of the occupied range that stay addressable, so that a bar's ticks can be
// added in fixed-width, branch-free groups of kPad (zeros land past its high tick).
constexpr int kPad = 8;
// Uniform bars add into kDiffLanes interleaved difference arrays (bar j into lane j % kDiffLanes),
// summed at drain: consecutive bars often start on one tick, and their 128-bit read-modify-writes
// of one entry would wait on each other (histogram.cpp bars_blocked). Windows of up to
// kDiffLanesRows rows only: a wider one keeps one lane (lane 1 is lane 0), so that a session of
// 1e6 rows needs no more memory than before (tests/test_hardening_py.py: 128 MB a worker).
constexpr int kDiffLanes = 2;
constexpr int64_t kDiffLanesRows = int64_t{1} << 16;

// Accumulator conversions: a volume into Acc, and an accumulated row out of it.
template <class Acc, class V>
VPOC_ALWAYS_INLINE Acc to_acc(V v) {
  if constexpr (std::is_same_v<Acc, int64_t>) return static_cast<int64_t>(v);
  else if constexpr (std::is_integral_v<V>) return fixed::from_int(static_cast<uint64_t>(v));
  else return fixed::from_double(static_cast<double>(v));
}
inline double acc_to_double(int64_t x) { return static_cast<double>(x); }
// fixed::to_double bit for bit, without its branches: x86 has no unsigned 64-bit conversion below
// AVX-512, so a compiler branches on the top bit of each word, which the fraction of split volumes
// sets at random (a mispredict every other row of the drain). The fraction as two exact 32-bit
// halves whose sum rounds once is the correctly rounded float64 of the word, as the cast is; the
// integer part of a row sum is below 2**53 (fixed::kMaxTotal; checked for the session's total),
// where a signed cast of the word gives the same double, and past it the rows are refused anyway.
inline double acc_to_double(const Fixed& x) {
  const double lo = static_cast<double>(static_cast<int64_t>(x.lo >> 32)) * 4294967296.0 +
                    static_cast<double>(static_cast<int64_t>(x.lo & 0xffffffffu));
  return static_cast<double>(static_cast<int64_t>(x.hi)) + lo * fixed::kUnit;
}
inline Fixed acc_to_fixed(int64_t x) { return fixed::from_int(static_cast<uint64_t>(x)); }
inline Fixed acc_to_fixed(const Fixed& x) { return x; }

// Acc: int64_t for integer volumes landing whole on one row, Fixed (64.64) otherwise; both exact. Layout: row-major, lane l's
// accumulator of row r at data()[(r - origin()) * kLanes + l]: a row's lanes share a cache line
// (1-4% faster on float32 trades than lane-major, where lane l was at l * rows()).
// Sided calls (aggressor side, docs/design/side-single-pass.md §5) keep kSidePlanes planes a row: plane p of
// row r at data()[((r - origin()) * kSidePlanes + p) * kLanes + l] (0 unknown side, 1 buy, 3 sell, 2 unused:
// the plane of an int8 code c is c & 3); drain_sided() gives volume = the exact sum of the planes.
constexpr int kSidePlanes = 4;

template <class Acc>
class alignas(64) RowWindow {  // aligned: workers' windows never share a cache line
 public:
  explicit RowWindow(int64_t max_rows = 0) : max_rows_(max_rows) {}
  // A window kept across calls (cpu/scratch_cache.hpp) takes each call's limit; its rows are zero.
  void set_max_rows(int64_t max_rows) { max_rows_ = max_rows; }
  // The heap it holds, in bytes.
  size_t bytes() const {
    return buf_.capacity() * sizeof(Acc) + diff_.capacity() * sizeof(Fixed) + units_.capacity() * sizeof(int64_t);
  }

  Acc* data() { return buf_.data(); }
  // log2 of the planes a row holds (0: one, the plain call; 2: kSidePlanes). A window kept across
  // calls takes each call's; changing it drops the (zero) rows, the next make_room allocates.
  void set_plane_shift(int shift) {
    if (shift == plane_shift_) return;
    plane_shift_ = shift;
    buf_.clear();
    diff_.clear();
    units_.clear();
    diff_stride_ = 0;
    rows_ = 0;
  }
  int plane_shift() const { return plane_shift_; }
  int64_t origin() const { return origin_; }
  int64_t rows() const { return rows_; }
  int64_t max_rows() const { return max_rows_; }

  // A fixed-point difference array (Fixed windows only) for bars spread evenly over their ticks:
  // +share at a bar's first tick, -share past its last, in exact (wrapping) integer arithmetic;
  // drain() adds its running sum to the rows. Three stores per bar instead of one per tick.
  // kDiffLanes of them, lane l's entry of row r at diff_row(r)[l * diff_stride()] (stride 0: one).
  Fixed* diff_row(int64_t r) { return diff_.data() + (r - origin_); }
  // Beside it, a difference array of single units (2**-64) whose running sum drain() adds too: the
  // +1 / -1 unit entries of uniform splits, kept out of the 128-bit entries (no carry, one word).
  // As many lanes, the same layout.
  int64_t* units_row(int64_t r) { return units_.data() + (r - origin_); }
  void mark_diff() { diff_used_ = true; }
  int64_t diff_stride() const { return diff_stride_; }

  // Makes the window hold rows want_lo..want_hi + kPad beside the occupied rows lo..hi (lo > hi:
  // none yet). False when lo..hi and want_lo..want_hi together span more than max_rows rows. May
  // move the contents: callers reload data(), origin() and rows().
  bool make_room(int64_t lo, int64_t hi, int64_t want_lo, int64_t want_hi) {
    const bool empty = lo > hi;
    const int64_t nlo = empty ? want_lo : std::min(lo, want_lo);
    const int64_t nhi = empty ? want_hi : std::max(hi, want_hi);
    const int64_t span = nhi - nlo + 1;
    if (span > max_rows_ || span <= 0) return false;
    if (nlo >= origin_ && nhi + kPad < origin_ + rows_) return true;
    // A quarter more than the span leaves room to grow on both sides (growth stays geometric, so
    // regrowing costs O(rows) in all) while a wide session costs little more than its rows;
    // 1024 rows cover a typical ES session at once.
    const int64_t cap = std::max<int64_t>({rows_, span + span / 4 + kPad, 1024});
    if (empty && cap == rows_) {  // every row is zero (drain() re-zeroes): only the origin moves
      origin_ = nlo - (cap - span - kPad) / 2;
      return true;
    }
    const int64_t unit = int64_t{kLanes} << plane_shift_;  // accumulators a row
    std::vector<Acc> next(static_cast<size_t>(cap * unit), Acc{});
    const int64_t origin = nlo - (cap - span - kPad) / 2;
    if (!empty)
      std::copy(buf_.begin() + (lo - origin_) * unit, buf_.begin() + (hi - origin_ + 1) * unit,
                next.begin() + (lo - origin) * unit);
    buf_.swap(next);
    if (std::is_same_v<Acc, Fixed>) {
      // The difference arrays move with the rows (folded once, at drain), each lane; a window
      // growing past kDiffLanesRows folds its lane 1 into lane 0 (exact sums: the same result).
      const int64_t lanes = cap <= kDiffLanesRows ? kDiffLanes : 1, stride = lanes > 1 ? cap : 0;
      std::vector<Fixed> diff(static_cast<size_t>(cap * lanes));
      std::vector<int64_t> units(static_cast<size_t>(cap * lanes));
      if (!empty && diff_used_) {
        const int64_t end = std::min<int64_t>(hi + kPad, origin_ + rows_ - 1);  // the -share past hi
        const int64_t from = lo - origin_, len = end - lo + 1, to = lo - origin;
        std::copy(diff_.begin() + from, diff_.begin() + from + len, diff.begin() + to);
        std::copy(units_.begin() + from, units_.begin() + from + len, units.begin() + to);
        if (diff_stride_ > 0) {  // the old lane 1: to lane 1, or into lane 0
          for (int64_t k = 0; k < len; ++k) {
            diff[static_cast<size_t>(stride + to + k)] += diff_[static_cast<size_t>(diff_stride_ + from + k)];
            units[static_cast<size_t>(stride + to + k)] += units_[static_cast<size_t>(diff_stride_ + from + k)];
          }
        }
      }
      diff_.swap(diff);
      units_.swap(units);
      diff_stride_ = stride;
    }
    origin_ = origin;
    rows_ = cap;
    return true;
  }

  // Appends the lane sums of rows lo..hi to out as float64, adds them to `total` (exactly), and
  // zeroes rows lo..hi + kPad here. lanes = false: nothing was added to the lanes since the last
  // drain (uniform bars fill the difference arrays only): they are zero and neither read nor zeroed.
  // out grows uninitialised (HostVector): every appended row is written here once.
  void drain(int64_t lo, int64_t hi, HostVector<double>& out, Fixed& total, bool lanes = true) {
    if (lo > hi) return;
    const int64_t first = lo - origin_, n = hi - lo + 1;
    const int64_t clear = std::min<int64_t>(n + kPad, rows_ - first);
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(n));
    double* o = out.data() + at;
    if constexpr (std::is_same_v<Acc, int64_t>) {
      if (lanes) {  // read, converted and zeroed in one pass (cpu/drain.cpp)
        total += fixed::from_int(drain_int64(buf_.data() + first * kLanes, n, clear, o));
        return;
      }
    }
    Fixed sums;  // the rows' exact sum, kept in registers (total is in memory)
    const Acc* b = buf_.data() + first * kLanes;
    bool folded = false;
    if constexpr (std::is_same_v<Acc, Fixed>) {
      if (diff_used_) {  // the running sum of the difference array, with the lanes, in one pass
        Fixed running;
        int64_t running_units = 0;  // a count of bars, < 0 where the +1 units went into the 128-bit entries
        Fixed* d = diff_.data() + first;
        int64_t* u = units_.data() + first;
        static_assert(kDiffLanes == 2, "the fold below adds two lanes");
        const bool two = diff_stride_ > 0;  // else lane 1 is lane 0: added once
        Fixed* d1 = d + diff_stride_;
        int64_t* u1 = u + diff_stride_;
        const Fixed* d1_or_zero = two ? d1 : nullptr;
        const auto fold = [&](auto with_lanes) {
          for (int64_t k = 0; k < n; ++k) {
            running += d[k];
            if (d1_or_zero != nullptr) {
              running += d1_or_zero[k];
              running_units += u1[k];
            }
            running_units += u[k];
            Fixed sum = running + Fixed{static_cast<uint64_t>(running_units), running_units < 0 ? ~uint64_t{0} : 0};
            if constexpr (decltype(with_lanes)::value)
              for (int l = 0; l < kLanes; ++l) sum += b[k * kLanes + l];
            o[k] = acc_to_double(sum);
            sums += sum;
          }
        };
        if (lanes) fold(std::true_type{});
        else fold(std::false_type{});
        std::fill(d, d + clear, Fixed{});
        std::fill(u, u + clear, int64_t{0});
        if (two) {
          std::fill(d1, d1 + clear, Fixed{});
          std::fill(u1, u1 + clear, int64_t{0});
        }
        diff_used_ = false;
        folded = true;
      }
    }
    if (!folded && !lanes) std::fill(o, o + n, 0.0);  // no lanes, no difference arrays: the rows are 0
    if (!folded && lanes) {
      for (int64_t k = 0; k < n; ++k) {
        Acc sum = b[k * kLanes];
        for (int l = 1; l < kLanes; ++l) sum += b[k * kLanes + l];
        o[k] = acc_to_double(sum);
        sums += acc_to_fixed(sum);
      }
    }
    total += sums;
    if (lanes) std::fill(buf_.data() + first * kLanes, buf_.data() + (first + clear) * kLanes, Acc{});
  }

  // drain() of a sided window (trades): per row volume = the exact sum of its planes to out, the buy
  // plane to buy, the sell plane to sell (float64, each rounded once), their exact sums added to
  // total, buy_total, sell_total; rows lo..hi + kPad zeroed.
  void drain_sided(int64_t lo, int64_t hi, HostVector<double>& out, HostVector<double>& buy,
                   HostVector<double>& sell, Fixed& total, Fixed& buy_total, Fixed& sell_total) {
    if (lo > hi) return;
    constexpr int64_t unit = int64_t{kLanes} * kSidePlanes;
    const int64_t first = lo - origin_, n = hi - lo + 1;
    const int64_t clear = std::min<int64_t>(n + kPad, rows_ - first);
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(n));  // (uninitialised: each row written below)
    buy.resize(at + static_cast<size_t>(n));
    sell.resize(at + static_cast<size_t>(n));
    Fixed sums, bs, ss;
    const Acc* b = buf_.data() + first * unit;
    const auto plane = [](const Acc* r) {
      Acc sum = r[0];
      for (int l = 1; l < kLanes; ++l) sum += r[l];
      return sum;
    };
    for (int64_t k = 0; k < n; ++k) {
      const Acc* r = b + k * unit;
      const Acc u = plane(r), pb = plane(r + kLanes), ps = plane(r + 3 * kLanes);
      Acc v = u;
      v += pb;
      v += ps;
      out[at + static_cast<size_t>(k)] = acc_to_double(v);
      buy[at + static_cast<size_t>(k)] = acc_to_double(pb);
      sell[at + static_cast<size_t>(k)] = acc_to_double(ps);
      sums += acc_to_fixed(v);
      bs += acc_to_fixed(pb);
      ss += acc_to_fixed(ps);
    }
    total += sums;
    buy_total += bs;
    sell_total += ss;
    std::fill(buf_.data() + first * unit, buf_.data() + (first + clear) * unit, Acc{});
  }

 private:
  int64_t max_rows_;
  std::vector<Acc> buf_;
  std::vector<Fixed> diff_;      // [lanes][rows_] difference arrays (Fixed windows only)
  std::vector<int64_t> units_;   // [lanes][rows_] their single units
  int64_t diff_stride_ = 0;      // lane 1 at diff_ + diff_stride_ (rows_ with two lanes, 0 with one)
  bool diff_used_ = false;
  int plane_shift_ = 0;  // log2 of the planes a row holds
  int64_t origin_ = 0;  // absolute row of each lane's first accumulator
  int64_t rows_ = 0;    // accumulators per lane
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
    if (k >= static_cast<uint64_t>(rows_)) {
      if (!reserve(r, r)) return false;
      k = static_cast<uint64_t>(r - origin_);
    }
    h_[(static_cast<int64_t>(k) * kLanes << shift_) + (lane % kLanes)] += v;
    lanes_ = true;
    touch(r, r);
    return true;
  }
  // add() into plane p of a sided window (p < kSidePlanes).
  VPOC_ALWAYS_INLINE bool add_plane(int64_t r, unsigned p, Acc v, unsigned lane) {
    uint64_t k = static_cast<uint64_t>(r - origin_);
    if (k >= static_cast<uint64_t>(rows_)) {
      if (!reserve(r, r)) return false;
      k = static_cast<uint64_t>(r - origin_);
    }
    h_[((static_cast<int64_t>(k) * kSidePlanes + p) * kLanes) + (lane % kLanes)] += v;
    lanes_ = true;
    touch(r, r);
    return true;
  }
  // log2 of the planes a row holds (RowWindow::plane_shift).
  int plane_shift() const { return shift_; }
  // Makes rows want_lo..want_hi + kPad addressable (false: the session would exceed max_rows).
  VPOC_ALWAYS_INLINE bool reserve(int64_t want_lo, int64_t want_hi) {
    if (want_lo >= origin_ && want_hi + kPad < origin_ + rows_) return true;
    if (!w_->make_room(lo_, hi_, want_lo, want_hi)) return false;
    reload();
    return true;
  }
  // Marks rows lo..hi as touched (they were added through lane() directly).
  VPOC_ALWAYS_INLINE void touch(int64_t lo, int64_t hi) {
    lo_ = lo < lo_ ? lo : lo_;
    hi_ = hi > hi_ ? hi : hi_;
  }
  // Lane l's accumulator of row origin(), for a caller that adds to the lanes itself.
  Acc* lane(unsigned l) const {  // row origin() + k at [k * kLanes]
    lanes_ = true;
    return h_ + (l % kLanes);
  }
  RowWindow<Acc>& window() const { return *w_; }
  int64_t origin() const { return origin_; }
  int64_t rows() const { return rows_; }
  bool empty() const { return lo_ > hi_; }
  int64_t lo() const { return lo_; }
  int64_t hi() const { return hi_; }
  bool too_wide() const { return !empty() && hi_ - lo_ >= w_->max_rows(); }
  // The largest volume (or an upper bound of it) binned so far: whether the session's sum could
  // pass 2**63 (where the accumulators' integer part would wrap) is judged from it.
  VPOC_ALWAYS_INLINE void note_volume(double v) { vmax_ = v > vmax_ ? v : vmax_; }
  double vmax() const { return vmax_; }
  // Moves rows lo..hi to out (float64), adds their exact sum to total, and resets. Returns the
  // number of rows moved.
  int64_t drain(HostVector<double>& out, Fixed& total) {
    w_->drain(lo_, hi_, out, total, lanes_);
    return reset();
  }
  // drain() of a sided window (RowWindow::drain_sided).
  int64_t drain_sided(HostVector<double>& out, HostVector<double>& buy, HostVector<double>& sell, Fixed& total,
                      Fixed& buy_total, Fixed& sell_total) {
    w_->drain_sided(lo_, hi_, out, buy, sell, total, buy_total, sell_total);
    return reset();
  }

 private:
  int64_t reset() {
    lanes_ = false;
    const int64_t n = empty() ? 0 : hi_ - lo_ + 1;
    lo_ = std::numeric_limits<int64_t>::max();
    hi_ = std::numeric_limits<int64_t>::min();
    vmax_ = 0.0;
    return n;
  }
  void reload() {
    h_ = w_->data();
    origin_ = w_->origin();
    rows_ = w_->rows();
    shift_ = w_->plane_shift();
  }
  RowWindow<Acc>* w_;
  Acc* h_ = nullptr;
  int64_t origin_ = 0;
  int64_t rows_ = 0;
  int shift_ = 0;  // log2 of the planes a row holds
  int64_t lo_ = std::numeric_limits<int64_t>::max();
  int64_t hi_ = std::numeric_limits<int64_t>::min();
  double vmax_ = 0.0;
  mutable bool lanes_ = false;  // add() or lane() since the last drain: the lanes may hold volume
};

}  // namespace vpoc::cpu
