// core/developing.hpp — developing (no-lookahead) POC / VAH / VAL of one session, row by row, shared
// by the CPU pass and the GPU kernel. Contract: docs/contract.md "Developing series" (= every prefix).
#pragma once

#include <cstdint>

#include "core/fixed.hpp"
#include "core/levels.hpp"
#include "core/source.hpp"

namespace vpoc::developing {

// Rows kept addressable beyond the session's final row range: with an inexact tick size a legacy
// ladder built for a prefix may put a level one tick past the final ladder's range.
constexpr int64_t kMargin = 2;
// POC candidates (rows tied at the maximum) tracked incrementally; with more (an all-zero
// profile, say) the POC is found by a scan of the prefix instead.
constexpr int kTiedCap = 8;

// One session's scratch: W = n_rows + 2 * kMargin rows, index 0 = absolute row `origin`.
// v must be zero on entry; the rest needs no initialisation.
struct Scratch {
  double* v = nullptr;          // [W] the prefix's row volumes (vf rounded once)
  Fixed* vf = nullptr;          // [W] the same, exact (64.64 fixed point); zero on entry too
  int32_t* path_lo = nullptr;   // [W + 1] expansion states (cbot / single): rows of state k
  int32_t* path_hi = nullptr;   // [W + 1]
  double* path_run = nullptr;   // [W + 1] running volume of state k
  int32_t* order = nullptr;     // [W] greedy: rows by levels::greedy_before
  int32_t* pos = nullptr;       // [W] greedy: inverse of order
  int64_t W = 0;
  int64_t origin = 0;
};

// Rows of scratch a session of n_rows needs (W).
VPOC_HD int64_t scratch_rows(int64_t n_rows) { return n_rows + 2 * kMargin; }

// The developing state of one session and the rules that update it. Generic false: the rules are
// levels::plain_rules() ones, known at compile time (the GPU's one-thread kernel instantiates both;
// the CPU uses Session, the generic one). Options are kept as the three fields read here (a
// smaller object: the GPU kernel keeps it on its stack).
template <bool Generic>
class SessionOf : public levels::Running {
 public:
  VPOC_HD SessionOf(const Scratch& sc, const Options& opt)
      : sc_(sc), value_area_(opt.value_area), method_(opt.va_method), rules_(levels::rules_of(opt)) {
    step_ = opt.va_method == VaMethod::cbot ? 2 : 1;
    if (opt.va_method == VaMethod::greedy)
      for (int64_t k = 0; k < sc.W; ++k) sc.order[k] = sc.pos[k] = static_cast<int32_t>(k);
  }

  // Runs rows [begin, end) of src, calling out(i, poc_row, val_row, vah_row) (absolute rows) after
  // each. False when a row falls outside the scratch (an internal error: the caller reports it).
  template <class Src, class Out>
  VPOC_HD bool run(const Src& src, int64_t begin, int64_t end, Out&& out) {
    return extend(src, begin, begin, end, out);
  }

  // Rows [from, end) of a session whose first row is `begin`, rows [begin, from) having been run
  // by this Session already (live updates). False, as in run(), when a row falls outside the
  // scratch; the caller then replays the session into a wider scratch.
  template <class Src, class Out>
  VPOC_HD bool extend(const Src& src, int64_t begin, int64_t from, int64_t end, Out&& out) {
    const bool legacy = src.in.bars && src.in.distribute == Distribute::legacy;
    for (int64_t i = from; i < end; ++i) {
      const Item it = src.item(i);
      if (legacy) {
        // The prefix's own ladder (no lookahead). With a power-of-two tick every level price is
        // exact whatever the ladder's base, so earlier bars keep their shares; otherwise a new
        // ladder re-distributes the prefix.
        price_lo_ = i == begin ? Src::legacy_lo(it) : fmin(price_lo_, Src::legacy_lo(it));
        price_hi_ = i == begin ? Src::legacy_hi(it) : fmax(price_hi_, Src::legacy_hi(it));
        const auto next = distribute::LegacyLadder::make(price_lo_, price_hi_, src.scale.tick);
        const bool moved = next.base != L_.base || next.K != L_.K;
        L_ = next;
        if (moved && i > begin && !src.scale.exact) {
          if (!rebuild(src, L_, begin, i)) return false;
        }
      }
      if (!add(src, L_, it)) return false;
      levels();
      report(out, i, sc_.origin);
    }
    return true;
  }

  // The prefix so far: levels::Running's first() .. vah().

 private:
  // Puts item `it` on the ladder and updates the POC candidates; m_lo..m_hi: the rows whose
  // volume or membership in the prefix changed.
  template <class Src>
  VPOC_HD bool add(const Src& src, const distribute::LegacyLadder& L, const Item& it) {
    // Checked again: the batch pass validated the rows, but another thread may have changed the
    // inputs since. `it` is read once, so a row never indexes memory from an unchecked value.
    if (!src.valid_prices(it) || !Src::valid_volume(it)) return false;
    int64_t a = 0, b = -1;
    src.rows(it, L, a, b);
    a -= sc_.origin;
    b -= sc_.origin;
    if (a < 0 || b >= sc_.W) return false;
    m_lo_ = a;
    m_hi_ = b;
    if (first_ > last_) {
      first_ = a;
      last_ = b;
    } else {
      if (a < first_) {
        m_hi_ = b > first_ - 1 ? b : first_ - 1;
        first_ = a;
      }
      if (b > last_) {
        m_lo_ = a < last_ + 1 ? a : last_ + 1;
        last_ = b;
      }
    }
    double* v = sc_.v;
    const bool greedy = method_ == VaMethod::greedy;
    src.emit(it, L, [&](int64_t r, const Fixed& x) {
      const int64_t k = r - sc_.origin;
      sc_.vf[k] += x;
      v[k] = fixed::to_double(sc_.vf[k]);
      total_f_ += x;
      if (greedy) promote(k);
      return true;
    });
    total_ = fixed::to_double(total_f_);
    update_tied();
    return true;
  }

  // Re-distributes rows [begin, end) of the session on ladder L from an empty profile.
  template <class Src>
  VPOC_HD bool rebuild(const Src& src, const distribute::LegacyLadder& L, int64_t begin, int64_t end) {
    for (int64_t k = 0; k < sc_.W; ++k) {
      sc_.v[k] = 0.0;
      sc_.vf[k] = Fixed{};
    }
    if (method_ == VaMethod::greedy)
      for (int64_t k = 0; k < sc_.W; ++k) sc_.order[k] = sc_.pos[k] = static_cast<int32_t>(k);
    first_ = 0;
    last_ = -1;
    total_ = 0.0;
    total_f_ = Fixed{};
    mx_ = 0.0;
    n_tied_ = 0;
    overflow_ = false;
    for (int64_t i = begin; i < end; ++i)
      if (!add(src, L, src.item(i))) return false;
    poc_ = -1;  // the expansion path restarts
    return true;
  }

  // Greedy: row k's volume grew; move it forward to its place in the order.
  VPOC_HD void promote(int64_t k) {
    int32_t p = sc_.pos[k];
    while (p > 0) {
      const int32_t q = sc_.order[p - 1];
      if (!levels::greedy_before(sc_.v, k, q)) break;
      sc_.order[p] = q;
      sc_.pos[q] = p;
      --p;
    }
    sc_.order[p] = static_cast<int32_t>(k);
    sc_.pos[k] = p;
  }

  // Rows tied at the maximum: only rows m_lo..m_hi changed, and volumes only grow, so a row
  // outside them joins the tied set never, and leaves it only when the maximum rises.
  VPOC_HD void update_tied() {
    const double* v = sc_.v;
    double mx = mx_;
    for (int64_t k = m_lo_; k <= m_hi_; ++k) mx = v[k] > mx ? v[k] : mx;
    if (mx > mx_ || n_tied_ == 0) {
      mx_ = mx;
      int n = 0;
      if (overflow_) {
        overflow_ = false;
        for (int64_t k = first_; k <= last_; ++k)
          if ((k < m_lo_ || k > m_hi_) && levels::at_max(v[k], mx, rules_.tol)) push_tied(k, n);
      } else {
        for (int i = 0; i < n_tied_; ++i) {
          const int64_t k = tied_[i];
          if ((k < m_lo_ || k > m_hi_) && levels::at_max(v[k], mx, rules_.tol)) tied_[n++] = k;
        }
      }
      n_tied_ = n;
    } else {
      int n = 0;  // drop the changed rows: re-added below if still tied
      for (int i = 0; i < n_tied_; ++i)
        if (tied_[i] < m_lo_ || tied_[i] > m_hi_) tied_[n++] = tied_[i];
      n_tied_ = n;
    }
    for (int64_t k = m_lo_; k <= m_hi_; ++k)
      if (levels::at_max(v[k], mx_, rules_.tol)) push_tied(k, n_tied_);
  }

  VPOC_HD void push_tied(int64_t k, int& n) {
    if (n < kTiedCap) tied_[n++] = k;
    else overflow_ = true;
  }

  // POC and value area of the current prefix.
  VPOC_HD void levels() {
    const double* v = sc_.v;
    levels::Rules rules = rules_;
    if constexpr (!Generic) {  // levels::plain_rules(): known at compile time
      rules.compare = VaCompare::tie_up;
      rules.stop = VaStop::reaches;
      rules.va_p = rules.va_q = 0;
    }
    int64_t poc;
    if (overflow_) {
      poc = levels::poc_among(v, first_, last_, mx_, rules);
    } else {
      poc = tied_[0];
      for (int i = 1; i < n_tied_; ++i)
        if (levels::poc_prefers(tied_[i], poc, first_, last_, rules.tie)) poc = tied_[i];
    }
    const levels::Target target = levels::target_of(value_area_, total_, rules);
    if (method_ == VaMethod::greedy) {
      poc_ = poc;
      double running = 0.0;
      int64_t lo = -1, hi = -1;
      for (int64_t p = 0; p < sc_.W; ++p) {
        const int64_t k = sc_.order[p];
        if (k < first_ || k > last_) continue;  // outside the prefix: volume 0, as if absent
        running += v[k];
        lo = lo < 0 || k < lo ? k : lo;
        hi = k > hi ? k : hi;
        if (levels::reached(running, target, rules)) break;
      }
      val_ = lo;
      vah_ = hi;
      va_volume_ = running;
      return;
    }
    // Expansion states 0..n_path_-1 are kept. Step k's choice reads only rows within step_ of
    // [lo_k, hi_k] (its window); windows only grow, so the states before the first window that
    // meets a changed row are still valid, and none of them reached the (grown) target: resume
    // from the last such state, or from the previous stop if that came first.
    int64_t r = 0;
    if (poc == poc_ && n_path_ > 0) {
      int64_t lo = 0, hi = n_path_;  // first k whose window meets [m_lo_, m_hi_], n_path_ if none
      while (lo < hi) {
        const int64_t mid = (lo + hi) / 2;
        if (sc_.path_lo[mid] - step_ <= m_hi_ && sc_.path_hi[mid] + step_ >= m_lo_) hi = mid;
        else lo = mid + 1;
      }
      r = lo < n_path_ - 1 ? lo : n_path_ - 1;
    }
    poc_ = poc;
    int64_t lo, hi;
    double running;
    if (r == 0) {
      lo = hi = poc;
      running = v[poc];
    } else {
      lo = sc_.path_lo[r];
      hi = sc_.path_hi[r];
      running = sc_.path_run[r];
    }
    int64_t k = r;
    store(k, lo, hi, running);
    while (!levels::reached(running, target, rules) && levels::expand_step(v, first_, last_, step_, lo, hi, running, rules))
      store(++k, lo, hi, running);
    n_path_ = k + 1;
    val_ = lo;
    vah_ = hi;
    va_volume_ = running;
  }

  VPOC_HD void store(int64_t k, int64_t lo, int64_t hi, double running) {
    sc_.path_lo[k] = static_cast<int32_t>(lo);
    sc_.path_hi[k] = static_cast<int32_t>(hi);
    sc_.path_run[k] = running;
  }

  Scratch sc_;
  double value_area_;
  VaMethod method_;
  levels::Rules rules_;  // va_rows 'all': 'touched' runs core/window.hpp over the whole session instead
  int step_ = 2;
  int64_t m_lo_ = 0, m_hi_ = -1;   // rows changed by the last item
  double mx_ = 0.0;
  int64_t tied_[kTiedCap] = {};
  int n_tied_ = 0;
  bool overflow_ = false;
  int64_t n_path_ = 0;
  distribute::LegacyLadder L_;             // legacy: the prefix's ladder and price range
  double price_lo_ = 0.0, price_hi_ = 0.0;
};

using Session = SessionOf<true>;

}  // namespace vpoc::developing
