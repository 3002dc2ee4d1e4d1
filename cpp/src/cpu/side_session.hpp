// cpu/side_session.hpp — the aggressor side of one session grown row by row: exact buy / sell rows, the delta, the delta POC.
// Contract: design side-single-pass.md §8: rows = the engine's profile of the buy / sell volumes (to_double of exact sums).
#pragma once

#include <math.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/distribute.hpp"
#include "core/fixed.hpp"
#include "core/ladder.hpp"
#include "core/levels.hpp"
#include "core/messages.hpp"
#include "core/side.hpp"
#include "core/source.hpp"
#include "vpoc/profiles.hpp"
#include "vpoc/side.hpp"
#include "cpu/histogram.hpp"
#include "cpu/parallel.hpp"

namespace vpoc::cpu {

// cpu/side.cpp: |buy - sell| of one row as the delta POC's rows pass holds it (side::delta_abs taken
// as a 64.64 volume and rounded back), and the delta POC row (of the rows pass) of one session's rows
// (n >= 1, from ladder row low_row): side_levels' own code.
double delta_poc_value(double buy, double sell);
int64_t delta_poc_rows(const double* buy, const double* sell, int64_t n, int64_t low_row, const ladder::TickScale& ts,
                       const levels::Rules& rules);

// A buy / sell volume's problem as the engine words one of `volume` (its range), said of `name`.
inline messages::Problem side_volume_problem(const char* name, int64_t i, double v) {
  messages::Problem p = messages::bad_volume("volume", i, v);
  if (p.empty()) return p;
  p.message = std::string(name) + p.message.substr(6);  // "volume[i]..." -> "name[i]..."
  p.argument = name;
  return p;
}

// Rows [0, n)'s side volumes, checked (ValueError naming the row): bars: each buy / sell a valid volume
// (the engine's range, named buy_volume / sell_volume; first every buy, then its total from buy_total,
// then the same of sell: a session's sums stay at or below 2**53), then buy + sell <= volume within
// 1e-9 relative (vpoc._side_profiles' float rule); trades: each the volume or 0, not both (named side).
// session: the session's number in the overflow message (-1: "the live session"); base: the index
// the messages give row 0.
inline void check_side_rows(bool bars, int64_t n, const double* volume, const double* buy, const double* sell,
                            Fixed buy_total, Fixed sell_total, int64_t session, int64_t base = 0) {
  if (!bars) {
    for (int64_t i = 0; i < n; ++i) {
      const double v = volume[i], b = buy[i], s = sell[i];
      if (!((b == 0.0 || b == v) && (s == 0.0 || s == v) && (b == 0.0 || s == 0.0)))
        messages::raise(messages::at("side", base + i, detail::concat(": the buy / sell volume of a trade is its volume or 0 "
                                                               "(one of them), got ", b, " / ", s, " of volume ", v)),
                        __FILE__, __LINE__);
    }
    return;
  }
  const char* names[2] = {"buy_volume", "sell_volume"};
  const double* vals[2] = {buy, sell};
  const Fixed start[2] = {buy_total, sell_total};
  for (int k = 0; k < 2; ++k) {
    for (int64_t i = 0; i < n; ++i) {
      const messages::Problem m = side_volume_problem(names[k], base + i, vals[k][i]);
      if (!m.empty()) messages::raise(m, __FILE__, __LINE__);
    }
    Fixed total = start[k];
    for (int64_t i = 0; i < n; ++i) {
      total += fixed::from_double(vals[k][i]);
      if (fixed::over_max(total))
        throw ValueError(detail::concat(names[k], ": ", session < 0 ? messages::volume_overflow("volume", "the live session")
                                                                    : messages::volume_overflow("volume", session)),
                         __FILE__, __LINE__);
    }
  }
  for (int64_t i = 0; i < n; ++i)
    if (!(buy[i] + sell[i] <= volume[i] * (1.0 + 1e-9)))
      messages::raise(messages::at("buy_volume", base + i, detail::concat(" + sell_volume[", base + i, "] = ", buy[i],
                                                                          " + ", sell[i], " is more than volume[",
                                                                          base + i, "] = ", volume[i],
                                                                   "; the aggressor-side volumes of a bar are part of "
                                                                   "its volume")),
                      __FILE__, __LINE__);
}

// The delta POC's rules for rows of size row_size (delta_poc_options: the rows pass at tick row_size).
struct DeltaPocRules {
  levels::Rules rules;
  ladder::TickScale ts;
  ladder::RowPrice price;
  static DeltaPocRules make(const Options& opt, double row_size) {
    const Options po = delta_poc_options(opt, row_size);
    return {levels::rules_of(po), ladder::TickScale::make(row_size, 1), ladder::RowPrice::make(row_size, 1, false)};
  }
};

// The buy and sell rows of one session, appended row by row (Live, bar_features' developing delta
// POC): each row's buy and sell volume put on the ladder by the engine's own Source (the same
// shares, summed exactly: the rows of the engine's profile of the buy / sell volumes), the
// running delta in input order (the batch dev_delta), and per prefix its delta POC.
class SideSession {
 public:
  // Appends rows [from, end) of src (rows [begin, from) appended already; begin: the session's first
  // row), buy[i] / sell[i] their side volumes (checked by the caller: valid volumes).
  template <class Src>
  void extend(const Src& src, const double* buy, const double* sell, int64_t begin, int64_t from, int64_t end) {
    const bool legacy = src.in.bars && src.in.distribute == Distribute::legacy;
    for (int64_t i = from; i < end; ++i) {
      const Item it = src.item(i);
      if (legacy) {  // the prefix's own ladder, as core/developing.hpp's SessionOf::extend
        price_lo_ = i == begin ? Src::legacy_lo(it) : fmin(price_lo_, Src::legacy_lo(it));
        price_hi_ = i == begin ? Src::legacy_hi(it) : fmax(price_hi_, Src::legacy_hi(it));
        const auto next = distribute::LegacyLadder::make(price_lo_, price_hi_, src.scale.tick);
        const bool moved = next.base != L_.base || next.K != L_.K;
        L_ = next;
        if (moved && i > begin && !src.scale.exact) rebuild(src, buy, sell, begin, i);
      }
      add(src, it, buy[i], sell[i]);
      delta_ = delta_ + (buy[i] - sell[i]);
    }
  }

  void clear() { *this = SideSession(); }

  bool empty() const { return first_ > last_; }
  int64_t low_row() const { return empty() ? kNoRow : first_; }
  int64_t n_rows() const { return empty() ? 0 : last_ - first_ + 1; }
  // The float64 buy / sell rows low_row() .. low_row() + n_rows() - 1.
  void rows(std::vector<double>& b, std::vector<double>& s) const {
    const int64_t n = n_rows();
    b.resize(static_cast<size_t>(n));
    s.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      b[static_cast<size_t>(j)] = fixed::to_double(b_[static_cast<size_t>(first_ - origin_ + j)]);
      s[static_cast<size_t>(j)] = fixed::to_double(s_[static_cast<size_t>(first_ - origin_ + j)]);
    }
  }
  // buy total - sell total, each rounded once (the batch delta); the running delta in input order.
  double delta_total() const { return fixed::to_double(bt_) - fixed::to_double(st_); }
  double delta() const { return delta_; }
  const Fixed& buy_total_fixed() const { return bt_; }
  const Fixed& sell_total_fixed() const { return st_; }

  // The delta POC row (of the rows pass) of the rows so far, kNoRow when empty or when no row has a
  // known side (side::sided of the exact totals): side_levels' rule (delta_poc_rows), each row's
  // |buy - sell| kept from the rows the last appends changed.
  int64_t delta_poc_row(const DeltaPocRules& R) {
    if (empty() || !side::sided(fixed::to_double(bt_), fixed::to_double(st_))) return kNoRow;
    const int64_t n = last_ - first_ + 1;
    if (dirty_lo_ <= dirty_hi_) {
      d_.resize(b_.size());
      for (int64_t k = dirty_lo_; k <= dirty_hi_; ++k)
        d_[static_cast<size_t>(k - origin_)] = delta_poc_value(fixed::to_double(b_[static_cast<size_t>(k - origin_)]),
                                                               fixed::to_double(s_[static_cast<size_t>(k - origin_)]));
      dirty_lo_ = INT64_MAX;
      dirty_hi_ = INT64_MIN;
    }
    if (!straight(R)) {  // rows the rows pass merges (astronomically far from 0): the epilogue's own path
      std::vector<double> b, s;
      rows(b, s);
      return delta_poc_rows(b.data(), s.data(), n, first_, R.ts, R.rules);
    }
    return side::delta_poc_row_of(first_, R.ts) + levels::poc_index(d_.data() + (first_ - origin_), n, R.rules);
  }

 private:
  template <class Src>
  void add(const Src& src, const Item& it, double buy, double sell) {
    int64_t a = 0, b = -1;
    src.rows(it, L_, a, b);
    if (first_ > last_) {
      first_ = a;
      last_ = b;
    } else {
      first_ = std::min(first_, a);
      last_ = std::max(last_, b);
    }
    reserve(a, b);
    // the bar's buy (or sell) volume spread over its rows as the engine spreads a bar, into rows / total
    const auto put = [&](double v, std::vector<Fixed>& rows, Fixed& total) {
      Item x = it;
      x.v = v;
      src.emit(x, L_, [&](int64_t r, const Fixed& f) {
        reserve(r, r);
        rows[static_cast<size_t>(r - origin_)] += f;
        total += f;
        touch(r);
        return true;
      });
    };
    put(buy, b_, bt_);
    put(sell, s_, st_);
  }

  // Rows [begin, end) of src put again on the (moved) ladder L_, from empty rows.
  template <class Src>
  void rebuild(const Src& src, const double* buy, const double* sell, int64_t begin, int64_t end) {
    std::fill(b_.begin(), b_.end(), Fixed{});
    std::fill(s_.begin(), s_.end(), Fixed{});
    bt_ = st_ = Fixed{};
    first_ = 0;
    last_ = -1;
    dirty_lo_ = origin_;
    dirty_hi_ = origin_ + static_cast<int64_t>(b_.size()) - 1;
    for (int64_t i = begin; i < end; ++i) add(src, src.item(i), buy[i], sell[i]);
  }

  void touch(int64_t r) {
    dirty_lo_ = std::min(dirty_lo_, r);
    dirty_hi_ = std::max(dirty_hi_, r);
  }

  // Absolute rows [lo, hi] addressable: the rows laid out again around them (slack doubling as the
  // session widens: O(rows) copies in all).
  void reserve(int64_t lo, int64_t hi) {
    const auto W = static_cast<int64_t>(b_.size());
    if (W > 0 && lo >= origin_ && hi < origin_ + W) return;
    const int64_t nlo = W > 0 ? std::min(lo, origin_) : lo, nhi = W > 0 ? std::max(hi, origin_ + W - 1) : hi;
    const int64_t slack = std::max<int64_t>(8, nhi - nlo + 1);
    const int64_t o = nlo - slack, w = nhi - nlo + 1 + 2 * slack;
    std::vector<Fixed> nb(static_cast<size_t>(w)), ns(static_cast<size_t>(w));
    std::vector<double> nd(d_.empty() ? 0 : static_cast<size_t>(w), 0.0);
    for (int64_t k = 0; k < W; ++k) {
      nb[static_cast<size_t>(origin_ + k - o)] = b_[static_cast<size_t>(k)];
      ns[static_cast<size_t>(origin_ + k - o)] = s_[static_cast<size_t>(k)];
      if (!d_.empty()) nd[static_cast<size_t>(origin_ + k - o)] = d_[static_cast<size_t>(k)];
    }
    b_.swap(nb);
    s_.swap(ns);
    d_.swap(nd);
    origin_ = o;
  }

  // Whether the rows pass keeps rows first_ .. last_ one to one (delta_poc_row_of(r) - r the same
  // for every row): the rows known so since the last check are kept, only new ones are tested.
  bool straight(const DeltaPocRules& R) {
    if (shift_lo_ > shift_hi_) {
      shift_ = side::delta_poc_row_of(first_, R.ts) - first_;
      shift_lo_ = shift_hi_ = first_;
    }
    const auto same = [&](int64_t r) { return side::delta_poc_row_of(r, R.ts) - r == shift_; };
    while (shift_lo_ > first_)
      if (same(shift_lo_ - 1)) --shift_lo_;
      else return false;
    while (shift_hi_ < last_)
      if (same(shift_hi_ + 1)) ++shift_hi_;
      else return false;
    return true;
  }

  std::vector<Fixed> b_, s_;  // exact buy / sell volume of absolute rows origin_ ..
  std::vector<double> d_;     // the delta POC's |buy - sell| of each row (delta_poc_row)
  int64_t origin_ = 0;
  int64_t first_ = 0, last_ = -1;  // the rows the session touches (absolute)
  Fixed bt_, st_;
  double delta_ = 0.0;
  int64_t dirty_lo_ = INT64_MAX, dirty_hi_ = INT64_MIN;  // rows whose d_ is stale
  int64_t shift_ = 0, shift_lo_ = 0, shift_hi_ = -1;    // rows known to keep their row in the rows pass
  distribute::LegacyLadder L_;                          // legacy: the prefix's ladder and price range
  double price_lo_ = 0.0, price_hi_ = 0.0;
};

// vpoc::developing_delta_poc over float64 bars (side volumes checked by check_side_rows; the caller
// checked the lengths): the bars are checked in input order first, then the sessions run in parallel,
// each through one SideSession, a bar at a time. A session's first bad bar, else its too-wide span, is
// raised as the plain call (from_bars) raises it: report_too_wide's words, whole span and first bar.
inline void developing_delta_poc_f64(const BarsInput& bars, const double* buy, const double* sell,
                                     const int64_t* offsets, int64_t S, const Options& opt, double* out) {
  const InputView in = view_of(bars, opt.distribute);
  const auto src = make_source<double, double>(in, opt, 0);
  const double* volume = static_cast<const double*>(bars.volume.data);
  for (int64_t k = 0; k < S; ++k) {
    const int64_t a = offsets[k], n = offsets[k + 1] - a;
    for (int64_t i = a; i < a + n; ++i) {
      const Item it = src.item(i);
      const messages::Problem m = messages::bar_problem(i, bars, it.a, it.b, it.c, it.d, it.v, opt.tick_size,
                                                        opt.ticks_per_row);
      if (!m.empty()) messages::raise(m, __FILE__, __LINE__);
    }
    // refused as the plain call refuses it: the session's span by its rule (session_span: legacy bars
    // on the session's level ladder), reported in its words (the SideSession grows its rows as it goes)
    if (n > 0 && session_span(in, a, a + n, opt).first >= 0) {
      FirstFailure f;
      report_too_wide(in, a, a + n, k, opt, f);
      messages::raise(f.problem(), __FILE__, __LINE__);
    }
    check_side_rows(true, n, volume + a, buy + a, sell + a, Fixed{}, Fixed{}, k, a);
  }
  const DeltaPocRules R = DeltaPocRules::make(opt, opt.tick_size * static_cast<double>(opt.ticks_per_row));
  parallel_for(S, resolve_threads(opt.threads, S), opt.interrupt, [&](int64_t k, int) {
    SideSession side;
    for (int64_t i = offsets[k]; i < offsets[k + 1]; ++i) {
      side.extend(src, buy, sell, offsets[k], i, i + 1);
      const int64_t row = side.delta_poc_row(R);  // kNoRow: no bar of a known side so far
      out[i] = row == kNoRow ? std::numeric_limits<double>::quiet_NaN() : R.price(row);
    }
  });
}

}  // namespace vpoc::cpu
