// core/window.hpp — rolling-window POC / VAH / VAL of one session: each input row's levels over its window
// (its last N rows, or per-row starts: time windows). Contract: docs/contract.md "Rolling windows".
#pragma once

#include <cstdint>

#include "core/fixed.hpp"
#include "core/levels.hpp"
#include "core/source.hpp"

namespace vpoc::window {

// Input rows a window holds for the developing series with va_rows='touched' (the window's cover
// counts are the touched rows): every row of the session, none removed.
constexpr int64_t kWholeSession = int64_t(1) << 62;

// The window length of a developing pass: opt.window, or kWholeSession when the developing series
// runs as one window (va_rows='touched'); 0: the plain developing pass (core/developing.hpp).
VPOC_HD int64_t length(const Options& opt) {
  return opt.window > 0 ? opt.window : opt.va_rows == VaRows::touched ? kWholeSession : 0;
}

// The first input row of row i's window (one home for the rule): `at` given (time windows: the
// caller's per-row starts, element 0 = absolute row `base`), at[i - base]; else the last `count`
// rows of the session that begins at row `begin`: max(begin, i - count + 1). Either way
// begin <= starts(begin, i) <= i, non-decreasing in i (time windows: checked by
// validate_window_start before any pass runs).
struct Starts {
  const int64_t* at = nullptr;
  int64_t base = 0;
  int64_t count = 0;
  VPOC_HD static Starts rows(int64_t n) {
    Starts s;
    s.count = n;
    return s;
  }
  VPOC_HD static Starts given(const int64_t* at, int64_t base) {
    Starts s;
    s.at = at;
    s.base = base;
    return s;
  }
  VPOC_HD int64_t operator()(int64_t begin, int64_t i) const {
    if (at != nullptr) return at[i - base];
    return i - count + 1 > begin ? i - count + 1 : begin;
  }
};

// One session's scratch: W rows, index 0 = absolute row `origin` (the session's low row: every
// window's rows lie within the session's; across sessions, the low row of the sessions its windows
// reach, core/window_reach.hpp). vf and touch must be zero on entry.
struct Scratch {
  double* v = nullptr;       // [W] the window's row volumes (vf rounded once)
  Fixed* vf = nullptr;       // [W] the same, exact: rows added and removed in 64.64 fixed point
  int32_t* touch = nullptr;  // [W] how many of the window's input rows cover the row
  int32_t* order = nullptr;  // [W] greedy: the window's rows by levels::greedy_before
  int64_t W = 0;
  int64_t origin = 0;
};

// Why a Session stopped (why(), at row fail_row()): a row outside the scratch or failing its check
// (the inputs changed under the call), a window spanning more than max_rows rows, or a window whose
// volume sums past 2**53 (both only possible when windows reach across sessions). The GPU packs
// row << 2 | why into one word (atomicMin: the first row wins), so a reason fits in 2 bits.
enum class Why : int32_t { none = 0, outside = 1, too_wide = 2, overflow = 3 };

// The window of one session and the rules that keep it: the newest row added, the row that falls
// out of the window removed (exactly: fixed-point sums), then the levels of the rows left, computed
// by the batch's rules over the window's row range [first, last] (the rows its input rows cover),
// so that each equals the batch profile of exactly those input rows.
class Session : public levels::Running {
 public:
  VPOC_HD Session(const Scratch& sc, const Options& opt) : sc_(sc), opt_(opt) {
    step_ = opt.va_method == VaMethod::cbot ? 2 : 1;
  }

  // Rows [begin, end) of src, row i's window being rows [starts(begin, i), i], calling out(i, poc_row,
  // val_row, vah_row) (absolute rows) after each. False when a row falls outside the scratch or fails
  // its check (the inputs changed under the call), or a window is too wide or too heavy: why().
  template <class Src, class Out>
  VPOC_HD bool run(const Src& src, int64_t begin, int64_t end, const Starts& starts, Out&& out) {
    return extend(src, begin, begin, end, starts, out);
  }

  // Rows [from, end) of a session whose first row is `begin`, rows [begin, from) having been run by
  // this Session already (live updates; or, on a fresh Session, from == begin). A fresh Session
  // given begin = the first row of row from - 1's window and from = that begin replays that window
  // (the caller ignores those rows' output). Each step adds row i, then removes every row before
  // starts(begin, i) still in the window (0, 1 or many: starts are non-decreasing, checked by the
  // caller), so the window never empties (row i stays). Across sessions, `begin` is the first row of
  // the first window (b0 = starts(0, first row of the session)), rows [begin, from) preloaded.
  template <class Src, class Out>
  VPOC_HD bool extend(const Src& src, int64_t begin, int64_t from, int64_t end, const Starts& starts, Out&& out) {
    const distribute::LegacyLadder L{};  // legacy (a ladder from the window's prices) is refused earlier
    if (!started_) {
      started_ = true;
      out_ = begin;
    }
    for (int64_t i = from; i < end; ++i) {
      if (!apply(src, L, i, i, false)) return false;
      const int64_t first = starts(begin, i);
      for (; out_ < first; ++out_)
        if (!apply(src, L, out_, i, true)) return false;
      // row i's window exactly (rows [first, i]): as wide and as heavy as from_*(those rows) allows
      if (last_ - first_ + 1 > opt_.max_rows) return fail(Why::too_wide, i);
      if (fixed::over_max(total_f_)) return fail(Why::overflow, i);
      levels();
      report(out, i, sc_.origin);
    }
    return true;
  }

  // Adds rows [begin, end) of a fresh Session's first window without computing any levels (their
  // windows are not this Session's to report): then extend(src, begin, end, ...) runs on. Exact when
  // starts(begin, i) == begin for every i < end (nothing would have left the window): the rows
  // before a session that its first window reaches back to. False as run() is (why()), naming row
  // `end` (the row whose window it builds, of the session being run: not the row of an earlier one).
  template <class Src>
  VPOC_HD bool preload(const Src& src, int64_t begin, int64_t end) {
    const distribute::LegacyLadder L{};
    started_ = true;
    out_ = begin;
    for (int64_t i = begin; i < end; ++i)
      if (!apply(src, L, i, end, false)) return false;
    return true;
  }

  // The window so far: levels::Running's first() .. vah(). Why the last run / extend / preload
  // returned false, and the row it was on (-1: it did not).
  VPOC_HD Why why() const { return why_; }
  VPOC_HD int64_t fail_row() const { return fail_row_; }

 private:
  VPOC_HD bool fail(Why why, int64_t row) {
    why_ = why;
    fail_row_ = row;
    return false;
  }

  // Adds (or removes) input row j: its volume on the rows it emits, its cover on rows [a, b]; row i:
  // the row being run (named by a failure).
  template <class Src>
  VPOC_HD bool apply(const Src& src, const distribute::LegacyLadder& L, int64_t j, int64_t i, bool remove) {
    const Item it = src.item(j);
    if (!src.valid_prices(it) || !Src::valid_volume(it)) return fail(Why::outside, i);
    int64_t a = 0, b = -1;
    src.rows(it, L, a, b);
    a -= sc_.origin;
    b -= sc_.origin;
    if (a < 0 || b >= sc_.W || a > b) return fail(Why::outside, i);
    const int32_t d = remove ? -1 : 1;
    for (int64_t k = a; k <= b; ++k) sc_.touch[k] += d;
    bool inside = true;
    src.emit(it, L, [&](int64_t r, const Fixed& x) {
      const int64_t k = r - sc_.origin;
      if (k < a || k > b) {
        inside = false;
        return false;
      }
      if (remove) {
        sc_.vf[k] -= x;
        total_f_ -= x;
      } else {
        sc_.vf[k] += x;
        total_f_ += x;
      }
      sc_.v[k] = fixed::to_double(sc_.vf[k]);
      return true;
    });
    if (!inside) return fail(Why::outside, i);
    total_ = fixed::to_double(total_f_);
    if (!remove) {
      if (first_ > last_) {
        first_ = a;
        last_ = b;
      } else {
        first_ = a < first_ ? a : first_;
        last_ = b > last_ ? b : last_;
      }
    } else {  // the range shrinks to the rows still covered (the window never empties: see run)
      while (first_ <= last_ && sc_.touch[first_] == 0) ++first_;
      while (last_ >= first_ && sc_.touch[last_] == 0) --last_;
    }
    return true;
  }

  // POC and value area of the window's rows [first_, last_], by cpu/levels.cpp's rules.
  VPOC_HD void levels() {
    const double* v = sc_.v + first_;
    const int64_t n = last_ - first_ + 1;
    levels::Rules rules = levels::rules_of(opt_);
    if (opt_.va_rows == VaRows::touched) rules.cover = sc_.touch + first_;  // rows the window's input rows cover
    const int64_t poc = levels::poc_index(v, n, rules);
    const levels::Target target = levels::target_of(opt_.value_area, total_, rules);
    int64_t lo = poc, hi = poc;
    double running = 0.0;
    if (opt_.va_method == VaMethod::greedy) {
      // The window's rows by levels::greedy_before (a strict total order: one sorted order), kept
      // from the last step (scratch indices): rows that left the range dropped, rows that entered
      // appended, then an insertion sort, which moves only the rows this step changed.
      int32_t* o = sc_.order;
      int64_t m = 0;
      for (int64_t k = 0; k < n_order_; ++k)
        if (o[k] >= first_ && o[k] <= last_) o[m++] = o[k];
      for (int64_t r = first_; r <= last_; ++r)
        if (n_order_ == 0 || r < order_first_ || r > order_last_) o[m++] = static_cast<int32_t>(r);
      n_order_ = m;
      order_first_ = first_;
      order_last_ = last_;
      for (int64_t k = 1; k < m; ++k) {
        const int32_t x = o[k];
        int64_t p = k;
        while (p > 0 && levels::greedy_before(sc_.v, x, o[p - 1])) {
          o[p] = o[p - 1];
          --p;
        }
        o[p] = x;
      }
      lo = hi = o[0] - first_;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t r = o[k] - first_;
        running += v[r];
        lo = r < lo ? r : lo;
        hi = r > hi ? r : hi;
        if (levels::reached(running, target, rules)) break;
      }
    } else {
      levels::expand(v, n, poc, target, step_, lo, hi, running, rules);
    }
    va_volume_ = running;
    poc_ = first_ + poc;
    val_ = first_ + lo;
    vah_ = first_ + hi;
  }

  Scratch sc_;
  Options opt_;
  int step_ = 2;
  Why why_ = Why::none;
  int64_t fail_row_ = -1;
  int64_t n_order_ = 0, order_first_ = 0, order_last_ = -1;  // greedy: the rows sc_.order holds
  bool started_ = false;
  int64_t out_ = 0;  // the oldest row still in the window (the next one to remove)
};

}  // namespace vpoc::window
