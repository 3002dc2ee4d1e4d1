// vpoc/live.hpp — one session grown row by row (live data): its developing POC / value area now.
// Contract: after each appended row the levels equal the batch developing series of the same rows.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "vpoc/side.hpp"
#include "vpoc/types.hpp"

namespace vpoc {

// The rows of one append: bars (high, low, close, open [nullptr: absent], volume) or trades
// (price, volume), n rows each, float64. Argument names are used in error messages.
struct LiveRows {
  const double* price = nullptr;  // trades
  const double* high = nullptr;   // bars
  const double* low = nullptr;
  const double* close = nullptr;
  const double* open = nullptr;
  const double* volume = nullptr;
  // time windows (a session made with time_window): each row's window start, a row of the session
  // (0 = its first; negative: a carried row, -carried() the first): non-decreasing, at most the row
  // itself (checked: ValueError naming window)
  const int64_t* window_start = nullptr;
  // a sided session (LiveSession(..., sided)): each row's buy- and sell-aggressor volume (bars: their
  // columns, buy + sell <= volume; trades: the volume or 0 by the trade's side), ValueError naming
  // buy_volume / sell_volume (bars) or side (trades) for a bad one; nullptr otherwise
  const double* buy = nullptr;
  const double* sell = nullptr;
  int64_t n = 0;
};

// The current session of a live feed. append() validates every new row before it changes
// anything (a bad row throws ValueError naming it and leaves the session as it was), then runs
// the new rows through core/developing.hpp, the code of the batch developing series.
class LiveSession {
 public:
  // bars: OHLC bars distributed by `distribute` (has_open: bars carry an open), else trades.
  // time_window: the levels are those of each row's window [window_start, row] (LiveRows), as the
  // batch series with SessionSpan::window_start; needs opt.window == 0.
  // sided: every append carries each row's buy / sell volume (LiveRows), kept as exact buy / sell
  // rows of the whole session (also under a window) and a running delta (design side-single-pass.md §8).
  LiveSession(bool bars, Distribute distribute, bool has_open, const Options& opt, bool time_window = false,
              bool sided = false);
  ~LiveSession();
  LiveSession(LiveSession&&) noexcept;
  LiveSession& operator=(LiveSession&&) noexcept;

  // Appends rows; out_poc / out_vah / out_val (nullptr or n entries) receive each row's
  // developing levels as row prices.
  void append(const LiveRows& rows, double* out_poc, double* out_vah, double* out_val);
  // Throws what append(rows) would throw (fresh: as if the session were empty), changing nothing.
  void check(const LiveRows& rows, bool fresh) const;
  // Starts a new, empty session (the rules stay).
  void clear();
  // Windows across sessions (window_across_sessions): on an empty session, the rows of `from` that a
  // later window can still reach become this session's carried prefix: tail, the rows of `from`
  // (its carry included) that a later row's window holds (window=N: its last N - 1 rows; a time
  // window: the window of its last row, every later row's being no older); else `from`'s own carry
  // (a rebuilt session). Carried rows are in the windows only: not in size(), column(), the
  // session's total or width, nor in a sided session's side (their buy / sell columns read 0); their
  // levels are never reported. ValueError (naming from_session) unless both sessions have the same
  // kind, open column, distribute, kind of window and options (sided or not may differ).
  void carry(const LiveSession& from, bool tail);
  int64_t carried() const;

  int64_t size() const;  // rows appended since the session began (carried rows aside)
  bool bars() const;
  bool has_open() const;
  Distribute distribute() const;
  const Options& options() const;
  // The current profile: absolute rows low_row() .. low_row() + n_rows() - 1 (n_rows() == 0 and
  // kNoRow levels while empty), POC / VAH / VAL rows, total and value-area volume.
  int64_t low_row() const;
  int64_t n_rows() const;
  int64_t poc_row() const;
  int64_t vah_row() const;
  int64_t val_row() const;
  double total_volume() const;
  double va_volume() const;
  // n_rows() row volumes from low_row() up, inside `owner` (which stays valid after the session
  // grows or is cleared: a buffer still shared is replaced, never rewritten).
  const double* histogram(std::shared_ptr<const std::vector<double>>& owner) const;
  // The session's rows so far, carried rows first (column k: 0 high or price, 1 low, 2 close, 3 open,
  // 4 volume; sided: 5 buy, 6 sell volume): rows [carried(), carried() + size()) are the session's own.
  const std::vector<double>& column(int k) const;

  // Sided sessions (else ValueError): the session's buy - sell volume so far, summed in input order
  // (the batch dev_delta of its latest row; 0.0 while empty), and every side field of its rows
  // (one session: buy / sell rows from low_row of the side rows, delta = buy total - sell total,
  // delta POC, imbalances, stacked counts; side_levels' code; dev_delta empty).
  bool sided() const;
  double delta() const;
  SideColumns side_fields(const SideRules& rules) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vpoc
