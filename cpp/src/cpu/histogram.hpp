// cpu/histogram.hpp — binning of one session's trades or bars onto the row ladder (CPU backend).
// Contract: docs/contract.md "Putting volume on the ladder"; the first bad row is reported, not skipped.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>

#include "core/messages.hpp"
#include "core/source.hpp"
#include "cpu/grid.hpp"
#include "cpu/row_window.hpp"
#include "vpoc/engine.hpp"
#include "vpoc/types.hpp"

namespace vpoc::cpu {

// The bad input row with the smallest index seen by any worker, with its message.
class FirstFailure {
 public:
  void record(int64_t index, messages::Problem p) {
    std::lock_guard<std::mutex> lock(m_);
    if (index < index_.load()) {
      index_.store(index);
      problem_ = std::move(p);
    }
  }
  void record(int64_t index, std::string msg) { record(index, messages::general(std::move(msg))); }
  // True when a failure at a row before `index` is known (so work from `index` on is moot).
  bool before(int64_t index) const { return index_.load(std::memory_order_relaxed) < index; }
  bool failed() const { return before(std::numeric_limits<int64_t>::max()); }
  const messages::Problem& problem() const { return problem_; }

 private:
  std::mutex m_;
  std::atomic<int64_t> index_{std::numeric_limits<int64_t>::max()};
  messages::Problem problem_;
};

// Thrown by the int64 binning when a volume is not a whole number below 2**31 (int64 row sums
// could overflow, or could not hold it); the engine then bins the whole call again in fixed point.
struct NeedsFixed {};

// The sum of volume[begin, end) in float64 (a check for sessions that may sum past 2**63).
double sum_volumes(const Array& volume, int64_t begin, int64_t end);

// True when the call bins in int64 rows first: every row's volume lands whole on one row (trades,
// bars with "close" / "hlc3"). Exact while the volumes are whole numbers below 2**31; the binning
// throws NeedsFixed at the first one that is not.
bool integer_accumulation(const Array& volume, bool splits_volume);

// Bins rows [begin, end) of the trades (session `session`) and adds their off-grid prices to `grid`.
// False (and f recorded) on a bad row, or when the session spans more rows than the window holds: then
// the first bad row of the whole session, else "session s spans N rows" at its first row, N its exact
// span (the same words whatever window an earlier call left). side (int8 codes, sided calls into a
// window of kSidePlanes planes; else null): each trade into plane side[i] & 3 of its row.
template <class Acc>
bool bin_trades(const Array& price, const Array& volume, int64_t begin, int64_t end, int64_t session,
                const Options& opt, Bins<Acc>& bins, FirstFailure& f, GridCount& grid, const int8_t* side = nullptr);

// Bins bars [begin, end) (session `session`) with the given distribution and adds the off-grid prices of
// the first n_grid inputs (high, low, close, open) to grid[0 .. n_grid). False (and f recorded) on a bad
// row or a session wider than the window, as bin_trades.
template <class Acc>
bool bin_bars(const BarsInput& bars, int64_t begin, int64_t end, int64_t session, Distribute distribute,
              const Options& opt, Bins<Acc>& bins, FirstFailure& f, GridCount* grid, int n_grid);

// Rows [begin, end) of `in` (one session, every row valid): its span in rows as the plain call bins it
// (legacy bars on the session's own level ladder), and the first row that takes the running span past
// max_rows (-1: the session fits). The rule report_too_wide reports by.
struct SessionWidth {
  int64_t rows = 0;
  int64_t first = -1;
};
SessionWidth session_span(const InputView& in, int64_t begin, int64_t end, const Options& opt);

// Session `session` = rows [begin, end) of `in`, binned whole and wider than max_rows: recorded at its
// first row as "session s spans N rows, more than max_rows from row i on" (bin_trades / bin_bars' words).
void report_too_wide(const InputView& in, int64_t begin, int64_t end, int64_t session, const Options& opt,
                     FirstFailure& f);

}  // namespace vpoc::cpu
