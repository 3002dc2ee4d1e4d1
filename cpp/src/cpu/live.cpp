// cpu/live.cpp — vpoc::LiveSession: one session's rows kept as they arrive, run through the
// developing code of the batch series. Contract: vpoc/live.hpp; rows are validated before any change.
#include "vpoc/live.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/developing.hpp"
#include "core/ladder.hpp"
#include "core/messages.hpp"
#include "core/source.hpp"
#include "core/window.hpp"
#include "core/window_reach.hpp"
#include "cpu/developing.hpp"
#include "cpu/side_session.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/profiles.hpp"

namespace vpoc {

namespace {

// Rows of slack kept on each side of a session's row range when its scratch is laid out again,
// at least this many (and at most the range itself): the scratch doubles as the range grows, so
// the replays it costs add up to O(rows) per session.
constexpr int64_t kMinSlack = 8;
// Wider layouts tried when a legacy ladder steps past the estimated range before giving up.
constexpr int kLayoutTries = 4;

enum Col : int { kPrice = 0, kHigh = 0, kLow = 1, kClose = 2, kOpen = 3, kVolume = 4, kBuy = 5, kSell = 6 };
constexpr int kCols = 7;

}  // namespace

struct LiveSession::Impl {
  bool bars;
  Distribute distribute;
  bool has_open;
  Options opt;
  std::vector<double> cols[kCols];
  // sided sessions: the whole session's buy / sell rows (its own rows: carried ones aside)
  bool sided = false;
  cpu::SideSession side;
  cpu::ScratchBuffers buf;
  developing::Scratch sc;
  std::optional<developing::Session> session;
  // opt.window > 0 (rolling windows): the window's session instead, and the whole session's exact
  // volume and row range (the batch judges its sum and its width on the session, not the window)
  window::Scratch wsc;
  std::optional<window::Session> wsession;
  Fixed all_total;
  int64_t all_lo = INT64_MAX, all_hi = INT64_MIN;
  // time windows: every row's window start (rows of cols), kept for replays
  bool timed = false;
  std::vector<int64_t> wstart;
  // windows across sessions (carry()): the first `carried` rows of cols came from earlier sessions,
  // in the windows only (a layout's scratch covers those still in a window: join_carry)
  int64_t carried = 0;

  // va_rows='touched' runs as one window over the whole session too (window::length)
  bool windowed() const { return timed || window::length(opt) > 0; }
  window::Starts starts() const {
    return timed ? window::Starts::given(wstart.data(), 0) : window::Starts::rows(window::length(opt));
  }

  InputView view() const {
    InputView in;
    in.bars = bars;
    in.distribute = distribute;
    in.price_dtype = in.volume_dtype = DType::f64;
    in.volume = cols[kVolume].data();
    if (!bars) {
      in.price = cols[kPrice].data();
      return in;
    }
    in.high = cols[kHigh].data();
    in.low = cols[kLow].data();
    in.close = cols[kClose].data();
    in.open = has_open ? cols[kOpen].data() : nullptr;
    return in;
  }
  Source<double, double> source() const { return make_source<double, double>(view(), opt, 0); }
  int64_t size() const { return static_cast<int64_t>(cols[kVolume].size()); }
  bool empty_profile() const {
    if (windowed()) return !wsession || wsession->first() > wsession->last();
    return !session || session->first() > session->last();
  }

  // Throws ValueError naming the first bad row (indices are positions within `rows`).
  void validate(const LiveRows& r) const {
    if (r.n < 0) VPOC_THROW(ValueError, "the number of rows must be >= 0, got ", r.n);
    if (r.n == 0) return;
    if (!r.volume) VPOC_THROW(ValueError, "volume is required");
    if (!bars) {
      if (!r.price) VPOC_THROW(ValueError, "price is required for trades");
      Array price, volume;
      price.name = "price";
      volume.name = "volume";
      for (int64_t i = 0; i < r.n; ++i) {
        const messages::Problem m = messages::trade_problem(i, price, r.price[i], volume, r.volume[i], opt.tick_size,
                                                      opt.ticks_per_row);
        if (!m.empty()) messages::raise(m, __FILE__, __LINE__);
      }
      return;
    }
    if (!r.high || !r.low || !r.close) VPOC_THROW(ValueError, "high, low and close are required for bars");
    if (has_open != (r.open != nullptr))
      VPOC_THROW(ValueError, has_open ? "open is required: this live profile's bars carry an open"
                                      : "open was given but this live profile's bars carry none");
    BarsInput b;
    b.high.name = "high";
    b.low.name = "low";
    b.close.name = "close";
    b.open.name = "open";
    b.volume.name = "volume";
    b.has_open = has_open;
    for (int64_t i = 0; i < r.n; ++i) {
      const double o = has_open ? r.open[i] : r.close[i];
      const messages::Problem m = messages::bar_problem(i, b, r.high[i], r.low[i], r.close[i], o, r.volume[i], opt.tick_size,
                                                    opt.ticks_per_row);
      if (!m.empty()) messages::raise(m, __FILE__, __LINE__);
    }
  }

  // Sided sessions: append's rows carry buy and sell volumes exactly when the session is sided,
  // checked by cpu::check_side_rows after the rows' own columns (ValueError naming the side's column).
  void validate_sides(const LiveRows& r) const {
    if (r.n == 0) return;
    if (sided != (r.buy != nullptr && r.sell != nullptr) || (r.buy == nullptr) != (r.sell == nullptr))
      VPOC_THROW_ARG(ValueError, "side", sided ? "this live session is sided: every append needs each row's buy "
                     "and sell volume" : "buy / sell volumes were given but this live session is not sided");
    if (sided) cpu::check_side_rows(bars, r.n, r.volume, r.buy, r.sell, side.buy_total_fixed(), side.sell_total_fixed(), -1);
  }

  // Time windows: append's rows carry starts exactly when the session has a time window, each in
  // [the previous row's start, the row] (rows of the session: negative ones are carried rows;
  // ValueError naming window; check() reads no starts).
  void validate_starts(const LiveRows& r) const {
    if (r.n == 0) return;
    if (timed != (r.window_start != nullptr))
      VPOC_THROW_ARG(ValueError, "window", timed ? "this live session has a time window: every append needs its rows' "
                     "window starts" : "window starts were given but this live session has no time window");
    for (int64_t i = 0, prev = wstart.empty() ? -carried : wstart.back() - carried; i < r.n && timed; ++i) {
      const int64_t at = static_cast<int64_t>(wstart.size()) - carried + i, w = r.window_start[i];
      if (w < prev || w > at)
        VPOC_THROW_ARG(ValueError, "window", "window start of row ", at, " must lie in [", prev, ", ", at,
                       "] (non-decreasing, at most the row), got ", w);
      prev = w;
    }
  }

  // Throws the batch engine's ValueError when the session's volume would sum past 2**53 with these
  // rows (fresh: as if the session were empty), judged on the same exact fixed-point sum. Each
  // volume is <= 2**53 (validate), so the sum cannot wrap before it is judged.
  void check_total(const LiveRows& r, bool fresh) const {
    Fixed total = fresh ? Fixed{} : windowed() ? all_total : !session ? Fixed{} : session->total_fixed();
    for (int64_t i = 0; i < r.n; ++i) {
      total += fixed::from_double(r.volume[i]);
      if (fixed::over_max(total))
        throw ValueError(messages::volume_overflow("volume", "the live session"), __FILE__, __LINE__);
    }
  }

  // Absolute rows [lo, hi] that the rows of `r` can touch (legacy: one row more on each side,
  // where a prefix's ladder may place a level) and, in span_lo / span_hi, the rows they surely
  // touch (for the max_rows check).
  void reach(const LiveRows& r, int64_t& lo, int64_t& hi, int64_t& span_lo, int64_t& span_hi) const {
    const auto src = source();
    const distribute::LegacyLadder L;
    lo = span_lo = INT64_MAX;
    hi = span_hi = INT64_MIN;
    for (int64_t i = 0; i < r.n; ++i) {
      Item it;
      it.v = r.volume[i];
      int64_t a = 0, b = -1, pad = 0;
      if (bars) {
        it.a = r.high[i];
        it.b = r.low[i];
        it.c = r.close[i];
        it.d = r.open ? r.open[i] : it.c;
      } else {
        it.a = r.price[i];
      }
      if (bars && distribute == Distribute::legacy) {
        a = src.row_of(Source<double, double>::legacy_lo(it));
        b = src.row_of(Source<double, double>::legacy_hi(it));
        pad = 1;
      } else {
        src.rows(it, L, a, b);
      }
      span_lo = std::min(span_lo, a);
      span_hi = std::max(span_hi, b);
      lo = std::min(lo, a - pad);
      hi = std::max(hi, b + pad);
    }
  }

  // Joins into [lo, hi] the rows touched by the carried rows that row p's window and every later
  // one may still hold: rows [starts(0, p), carried) (starts never decrease: the earlier carried
  // rows are in no window any more, and no scratch needs to reach them).
  void join_carry(int64_t p, int64_t& lo, int64_t& hi) const {
    const int64_t b = starts()(0, p);
    if (b < carried) window::join_rows(source(), b, carried - 1, lo, hi);
  }

  // A window scratch around absolute rows [lo, hi] (the session's rows; slack doubling as the
  // session grows) and the carried rows still in a window, the window of row p = min(from, n - 1)
  // before p preloaded into it (no levels), then rows [p, n) (calling out for rows >= from).
  template <class Out>
  bool wlayout(int64_t lo, int64_t hi, int64_t from, int64_t n, Out&& out) {
    const window::Starts st = starts();
    const int64_t p = std::min(from, n - 1), b = st(0, p);
    join_carry(p, lo, hi);
    const int64_t slack = std::max(kMinSlack, std::min(hi - lo + 1, opt.max_rows));
    wsc = buf.for_window(hi - lo + 1 + 2 * slack, lo - slack);
    wsession.emplace(wsc, opt);
    const auto src = source();
    return wsession->preload(src, b, p) && wsession->extend(src, b, p, n, st, [&](int64_t i, int64_t q, int64_t a,
                                                                                 int64_t c) {
      if (i >= from) out(i, q, a, c);
    });
  }

  // A scratch around absolute rows [lo, hi] with `slack` more rows on each side, the session's
  // rows [0, n) replayed into it (calling out for rows >= from).
  template <class Out>
  bool layout(int64_t lo, int64_t hi, int64_t slack, int64_t n, int64_t from, Out&& out) {
    const int64_t rows = hi - lo + 1 + 2 * slack;
    sc = buf.for_session(rows, lo - slack - developing::kMargin);
    session.emplace(sc, opt);
    return session->extend(source(), 0, 0, n, [&](int64_t i, int64_t p, int64_t a, int64_t b) {
      if (i >= from) out(i, p, a, b);
    });
  }
};

LiveSession::LiveSession(bool bars, Distribute distribute, bool has_open, const Options& opt, bool time_window,
                         bool sided)
    : impl_(std::make_unique<Impl>()) {
  validate(opt);
  if (time_window && opt.window > 0)
    VPOC_THROW_ARG(ValueError, "window", "give window=N (input rows) or a time window, not both");
  if (time_window && opt.distribute == Distribute::legacy && bars)
    VPOC_THROW_ARG(ValueError, "window", "a time window does not work with distribute='legacy' (its ladder follows "
                   "the prices seen so far); use 'uniform', 'close' or 'hlc3'");
  impl_->timed = time_window;
  impl_->sided = sided;
  impl_->bars = bars;
  impl_->distribute = distribute;
  impl_->has_open = bars && has_open;
  impl_->opt = opt;
}

LiveSession::~LiveSession() = default;
LiveSession::LiveSession(LiveSession&&) noexcept = default;
LiveSession& LiveSession::operator=(LiveSession&&) noexcept = default;

namespace {

// The rows' reach joined with the session's current range (unless fresh); throws when the
// session would span more than max_rows rows.
template <class Impl>
void checked_reach(const Impl& s, const LiveRows& r, bool fresh, int64_t& lo, int64_t& hi) {
  int64_t span_lo, span_hi;
  s.reach(r, lo, hi, span_lo, span_hi);
  if (!fresh && s.windowed() && s.all_lo <= s.all_hi) {  // the whole session's range, not the window's
    lo = std::min(lo, s.all_lo);
    hi = std::max(hi, s.all_hi);
    span_lo = std::min(span_lo, s.all_lo);
    span_hi = std::max(span_hi, s.all_hi);
  } else if (!fresh && !s.windowed() && !s.empty_profile()) {
    const int64_t first = s.sc.origin + s.session->first(), last = s.sc.origin + s.session->last();
    lo = std::min(lo, first);
    hi = std::max(hi, last);
    span_lo = std::min(span_lo, first);
    span_hi = std::max(span_hi, last);
  }
  if (span_hi - span_lo + 1 > s.opt.max_rows)
    messages::raise(messages::too_wide("row", (fresh ? 0 : s.size() - s.carried) + r.n - 1, s.opt.max_rows),
                    __FILE__, __LINE__);
}

template <class Impl>
void run_levels(Impl& s, const LiveRows& r, int64_t lo, int64_t hi, int64_t old_n, double* out_poc, double* out_vah,
                double* out_val);

}  // namespace

void LiveSession::check(const LiveRows& r, bool fresh) const {
  impl_->validate(r);
  if (r.n == 0) return;
  impl_->check_total(r, fresh);
  int64_t lo, hi;
  checked_reach(*impl_, r, fresh, lo, hi);
}

void LiveSession::append(const LiveRows& r, double* out_poc, double* out_vah, double* out_val) {
  Impl& s = *impl_;
  s.validate(r);
  s.validate_starts(r);
  if (r.n == 0) return;
  s.check_total(r, false);
  int64_t lo, hi;
  checked_reach(s, r, false, lo, hi);
  s.validate_sides(r);
  const int64_t old_n = s.size();

  // Nothing has changed so far; from here on the rows are valid and the append cannot fail (but for
  // a window reaching into earlier sessions, which puts the session back as it was and throws).
  const double* src_cols[kCols] = {s.bars ? r.high : r.price, r.low, r.close, r.open, r.volume,
                                   s.sided ? r.buy : nullptr, s.sided ? r.sell : nullptr};
  for (int k = 0; k < kCols; ++k)
    if (src_cols[k]) s.cols[k].insert(s.cols[k].end(), src_cols[k], src_cols[k] + r.n);
  run_levels(s, r, lo, hi, old_n, out_poc, out_vah, out_val);
  // the whole session's buy / sell rows (its own rows; windows aside), once the levels took the rows
  if (s.sided) s.side.extend(s.source(), s.cols[kBuy].data(), s.cols[kSell].data(), s.carried, old_n, s.size());
}

namespace {

// append's levels: rows r (in s's columns already, from old_n on) run through the session's
// developing (or window) state, each row's levels into out_*.
template <class Impl>
void run_levels(Impl& s, const LiveRows& r, int64_t lo, int64_t hi, int64_t old_n, double* out_poc, double* out_vah,
                double* out_val) {
  const ladder::RowPrice row_price =
      ladder::RowPrice::make(s.opt.tick_size, s.opt.ticks_per_row, s.opt.price_label == PriceLabel::decimal);
  const auto out = [&](int64_t i, int64_t poc, int64_t val, int64_t vah) {
    const auto k = static_cast<size_t>(i - old_n);
    if (out_poc) out_poc[k] = row_price(poc);
    if (out_vah) out_vah[k] = row_price(vah);
    if (out_val) out_val[k] = row_price(val);
  };
  const int64_t n = s.size();
  if (s.timed)
    for (int64_t i = 0; i < r.n; ++i) s.wstart.push_back(r.window_start[i] + s.carried);  // rows of cols
  if (s.windowed()) {
    const Fixed old_total = s.all_total;
    const int64_t old_lo = s.all_lo, old_hi = s.all_hi;
    for (int64_t i = 0; i < r.n; ++i) s.all_total += fixed::from_double(r.volume[i]);
    int64_t span_lo, span_hi, reach_lo, reach_hi;
    s.reach(r, reach_lo, reach_hi, span_lo, span_hi);
    s.all_lo = std::min(s.all_lo, span_lo);
    s.all_hi = std::max(s.all_hi, span_hi);
    // the scratch covers the session's rows (and the carried rows still in a window: wlayout); the
    // rows that leave the window are in it already, so only the new ones need to fit
    const bool wfits = s.wsession && lo >= s.wsc.origin && hi < s.wsc.origin + s.wsc.W;
    if (wfits && s.wsession->extend(s.source(), 0, old_n, n, s.starts(), out)) return;
    bool changed = wfits;  // the window's session took some of the rows: laid out again on failure
    window::Why why = window::Why::outside;
    int64_t i = 0, rows = 0;  // the failing row (of cols) and its window's width
    const auto failed = [&] {
      why = s.wsession->why();
      i = s.wsession->fail_row();
      rows = s.wsession->last() - s.wsession->first() + 1;
    };
    if (wfits) failed();
    if (why == window::Why::outside) {
      // a scratch around every row of the session and the carried rows still in a window, wider
      // than 3 * max_rows only when the first new row's window is too wide (window::beyond_reach):
      // then that window is measured alone and nothing is laid out
      int64_t llo = lo, lhi = hi;
      s.join_carry(old_n, llo, lhi);
      if (!window::beyond_reach(lhi - llo + 1, s.opt.max_rows)) {
        if (s.wlayout(lo, hi, old_n, n, out)) return;
        changed = true;
        failed();
        if (why == window::Why::outside)
          VPOC_THROW(Error, "live session: a row fell outside its rolling-window scratch");
      } else {
        why = window::Why::too_wide;
        i = old_n;
        rows = window::window_rows(s.source(), s.starts()(0, old_n), old_n);
        if (rows <= s.opt.max_rows) VPOC_THROW(Error, "live session: a window's reach outgrew its own rows");
      }
    }
    // a window reaching into earlier sessions too wide or too heavy: the rows go, the window is
    // laid out as it was over the rows kept (when it took some of the new ones), and the batch's
    // error is raised (row i of the session)
    i -= s.carried;
    for (auto& c : s.cols)
      if (static_cast<int64_t>(c.size()) > old_n) c.resize(static_cast<size_t>(old_n));
    if (s.timed) s.wstart.resize(static_cast<size_t>(old_n));
    s.all_total = old_total;
    s.all_lo = old_lo;
    s.all_hi = old_hi;
    if (changed) {
      s.wsession.reset();
      if (old_n > s.carried) s.wlayout(old_lo, old_hi, old_n, old_n, out);
    }
    if (why == window::Why::too_wide)
      VPOC_THROW(ValueError, "the window of row ", i, " of the live session (with ", s.carried, " rows carried "
                 "from earlier sessions) spans ", rows, " rows, more than max_rows=", s.opt.max_rows,
                 "; raise max_rows or shorten window");
    throw ValueError(
        messages::volume_overflow("volume", detail::concat("the window of row ", i, " of the live session")), __FILE__,
        __LINE__);
  }
  const bool fits = s.session && lo - developing::kMargin >= s.sc.origin &&
                    hi + developing::kMargin < s.sc.origin + s.sc.W;
  if (fits && s.session->extend(s.source(), 0, old_n, n, out)) return;
  int64_t slack = std::max(kMinSlack, std::min(hi - lo + 1, s.opt.max_rows));
  for (int t = 0; t < kLayoutTries; ++t, slack *= 2)
    if (s.layout(lo, hi, slack, n, old_n, out)) return;
  VPOC_THROW(Error, "live session: a row fell outside its scratch after ", kLayoutTries, " layouts");
}

}  // namespace

namespace {

// Whether two sessions put rows on the same ladder by the same rules: every option but threads
// and the interrupt (carry: rows of one run through the other's windows).
bool same_rules(const Options& a, const Options& b) {
  return a.tick_size == b.tick_size && a.ticks_per_row == b.ticks_per_row && a.value_area == b.value_area &&
         a.va_method == b.va_method && a.poc_tie == b.poc_tie && a.max_rows == b.max_rows &&
         a.developing == b.developing && a.distribute == b.distribute && a.snap == b.snap && a.window == b.window &&
         a.window_across == b.window_across && a.va_rows == b.va_rows && a.va_compare == b.va_compare &&
         a.va_stop == b.va_stop && a.tie_tol == b.tie_tol && a.row_label == b.row_label &&
         a.price_label == b.price_label && a.va_target == b.va_target && a.bins == b.bins &&
         a.accumulate == b.accumulate && a.bin_report == b.bin_report;
}

}  // namespace

void LiveSession::carry(const LiveSession& from, bool tail) {
  Impl& s = *impl_;
  const Impl& f = *from.impl_;
  if (s.size() != 0) VPOC_THROW(Error, "live session: carry() needs an empty session");
  // the rows keep their meaning only between sessions of one feed (a time window's starts, a bar's
  // columns): anything else is refused before a change
  const char* differs = s.bars != f.bars                 ? "kind (bars or trades)"
                        : s.has_open != f.has_open       ? "open column"
                        : s.distribute != f.distribute   ? "distribute"
                        : s.timed != f.timed             ? "window (a time window or window=N)"
                        : !same_rules(s.opt, f.opt)      ? "options"
                                                         : nullptr;
  if (differs)
    VPOC_THROW_ARG(ValueError, "from_session", "carry: from_session differs from this session in its ", differs);
  const int64_t T = f.size();
  int64_t k = f.carried;  // a rebuilt session: from's own carried rows
  if (tail)  // the rows a later window can reach: a time window's last window, or the last N - 1 rows
    k = s.timed ? (T > 0 ? T - f.wstart.back() : 0) : std::min(T, std::max<int64_t>(s.opt.window - 1, 0));
  const int64_t a = tail ? T - k : 0;
  for (int c = 0; c < kBuy; ++c)
    if (!f.cols[c].empty()) s.cols[c].assign(f.cols[c].begin() + a, f.cols[c].begin() + a + k);
  s.carried = k;
  if (s.sided)  // carried rows are in the windows only: their side volumes are never read
    for (int c : {kBuy, kSell}) s.cols[c].assign(static_cast<size_t>(k), 0.0);
  if (s.timed) s.wstart.assign(static_cast<size_t>(k), 0);  // their own windows are never reported
}

int64_t LiveSession::carried() const { return impl_->carried; }

void LiveSession::clear() {
  for (auto& c : impl_->cols) c.clear();
  impl_->carried = 0;
  impl_->side.clear();
  impl_->session.reset();
  impl_->wsession.reset();
  impl_->wstart.clear();
  impl_->all_total = Fixed{};
  impl_->all_lo = INT64_MAX;
  impl_->all_hi = INT64_MIN;
}

int64_t LiveSession::size() const { return impl_->size() - impl_->carried; }
bool LiveSession::bars() const { return impl_->bars; }
bool LiveSession::has_open() const { return impl_->has_open; }
Distribute LiveSession::distribute() const { return impl_->distribute; }
const Options& LiveSession::options() const { return impl_->opt; }

// The current profile's state as (origin, first, last, poc, val, vah, total, va_volume): the
// session's, or with rolling windows the window's.
namespace {
template <class Impl, class F>
auto profile_of(const Impl& s, F&& f) {
  return s.windowed() ? f(s.wsc.origin, *s.wsession) : f(s.sc.origin, *s.session);
}
}  // namespace

int64_t LiveSession::low_row() const {
  if (impl_->empty_profile()) return kNoRow;
  return profile_of(*impl_, [](int64_t o, const auto& p) { return o + p.first(); });
}
int64_t LiveSession::n_rows() const {
  if (impl_->empty_profile()) return 0;
  return profile_of(*impl_, [](int64_t, const auto& p) { return p.last() - p.first() + 1; });
}
int64_t LiveSession::poc_row() const {
  if (impl_->empty_profile()) return kNoRow;
  return profile_of(*impl_, [](int64_t o, const auto& p) { return o + p.poc(); });
}
int64_t LiveSession::vah_row() const {
  if (impl_->empty_profile()) return kNoRow;
  return profile_of(*impl_, [](int64_t o, const auto& p) { return o + p.vah(); });
}
int64_t LiveSession::val_row() const {
  if (impl_->empty_profile()) return kNoRow;
  return profile_of(*impl_, [](int64_t o, const auto& p) { return o + p.val(); });
}
double LiveSession::total_volume() const {
  if (impl_->windowed() ? !impl_->wsession : !impl_->session) return 0.0;
  return profile_of(*impl_, [](int64_t, const auto& p) { return p.total(); });
}
double LiveSession::va_volume() const {
  if (impl_->empty_profile()) return 0.0;
  return profile_of(*impl_, [](int64_t, const auto& p) { return p.va_volume(); });
}

const double* LiveSession::histogram(std::shared_ptr<const std::vector<double>>& owner) const {
  owner = impl_->buf.v;
  if (impl_->empty_profile() || !owner) return owner ? owner->data() : nullptr;
  return owner->data() + profile_of(*impl_, [](int64_t, const auto& p) { return p.first(); });
}

const std::vector<double>& LiveSession::column(int k) const {
  const int last = impl_->sided ? kSell : kVolume;
  if (k < 0 || k > last) VPOC_THROW(ValueError, "column must be 0..", last, ", got ", k);
  return impl_->cols[k];
}

bool LiveSession::sided() const { return impl_->sided; }

double LiveSession::delta() const {
  if (!impl_->sided) VPOC_THROW(ValueError, "delta: this live session is not sided");
  return impl_->side.delta();
}

SideColumns LiveSession::side_fields(const SideRules& rules) const {
  const Impl& s = *impl_;
  if (!s.sided) VPOC_THROW(ValueError, "side_fields: this live session is not sided");
  SideColumns c;
  s.side.rows(c.buy, c.sell);
  const int64_t off[2] = {0, s.side.n_rows()};
  const int64_t low[1] = {s.side.low_row()};
  RowLayout rows;
  rows.row_off = off;
  rows.low_row = low;
  rows.n_sessions = 1;
  rows.row_size = s.opt.tick_size * static_cast<double>(s.opt.ticks_per_row);
  side_levels(c, rows, s.opt, rules);
  c.delta.assign(1, s.side.delta_total());
  c.buy_total.assign(1, fixed::to_double(s.side.buy_total_fixed()));
  c.sell_total.assign(1, fixed::to_double(s.side.sell_total_fixed()));
  return c;
}

// The Live's code (cpu/side_session.hpp) in the Live's translation unit: the same bits.
void developing_delta_poc(const BarsInput& bars, const double* buy, const double* sell, const int64_t* offsets,
                          int64_t n_sessions, const Options& opt, double* out) {
  cpu::developing_delta_poc_f64(bars, buy, sell, offsets, n_sessions, opt, out);
}

}  // namespace vpoc
