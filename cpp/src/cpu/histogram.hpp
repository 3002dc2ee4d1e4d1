// cpu/histogram.hpp — binning of one session's trades or bars onto the row ladder (CPU backend).
// Contract: docs/contract.md "Putting volume on the ladder"; the first bad row is reported, not skipped.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>

#include "cpu/row_window.hpp"
#include "vpoc/engine.hpp"
#include "vpoc/types.hpp"

namespace vpoc::cpu {

// The bad input row with the smallest index seen by any worker, with its message.
class FirstFailure {
 public:
  void record(int64_t index, std::string msg) {
    std::lock_guard<std::mutex> lock(m_);
    if (index < index_.load()) {
      index_.store(index);
      msg_ = std::move(msg);
    }
  }
  // True when a failure at a row before `index` is known (so work from `index` on is moot).
  bool before(int64_t index) const { return index_.load(std::memory_order_relaxed) < index; }
  bool failed() const { return before(std::numeric_limits<int64_t>::max()); }
  const std::string& message() const { return msg_; }

 private:
  std::mutex m_;
  std::atomic<int64_t> index_{std::numeric_limits<int64_t>::max()};
  std::string msg_;
};

// Bins rows [begin, end) of the trades into w. False (and f recorded) on a bad row.
bool bin_trades(const Array& price, const Array& volume, int64_t begin, int64_t end,
                const Options& opt, RowWindow& w, FirstFailure& f);

// Bins bars [begin, end) into w with the given distribution. False (and f recorded) on a bad row.
bool bin_bars(const BarsInput& bars, int64_t begin, int64_t end, Distribute distribute,
              const Options& opt, RowWindow& w, FirstFailure& f);

}  // namespace vpoc::cpu
