// cpp/tests/columns.hpp — test inputs as the engine reads them: an InputView over float64 columns.
// Contract: the view borrows the vectors (they outlive it); a trade's price is the close column.
#pragma once

#include <vector>

#include "core/source.hpp"

namespace test_columns {

// bars (high h, low l, close c, open o when not empty) or trades (price c), volume v.
inline vpoc::InputView view(bool bars, vpoc::Distribute d, const std::vector<double>& h, const std::vector<double>& l,
                            const std::vector<double>& c, const std::vector<double>& o, const std::vector<double>& v) {
  vpoc::InputView in;
  in.bars = bars;
  in.distribute = d;
  in.price = c.data();
  in.high = h.data();
  in.low = l.data();
  in.close = c.data();
  in.open = o.empty() ? nullptr : o.data();
  in.volume = v.data();
  return in;
}

}  // namespace test_columns
