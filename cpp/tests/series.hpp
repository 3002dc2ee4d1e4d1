// cpp/tests/series.hpp — one row's levels of a developing or rolling-window series, and the check of a series.
// Contract: rows compared in order; the first differing row fails the test case with its values and `what`.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace test_series {

struct Levels {
  int64_t poc, val, vah;
  bool operator==(const Levels& o) const { return poc == o.poc && val == o.val && vah == o.vah; }
};

// got == want row by row (`row`: what a row is called in the message, e.g. "prefix", "row").
inline void check(const std::vector<Levels>& got, const std::vector<Levels>& want, const char* row, size_t chunk,
                  const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i)
    if (!(got[i] == want[i])) {
      FAIL_CHECK(row << " " << i << ": got " << got[i].poc << "/" << got[i].val << "/" << got[i].vah << " want "
                     << want[i].poc << "/" << want[i].val << "/" << want[i].vah << " chunk " << chunk << " — "
                     << what);
      return;
    }
}

}  // namespace test_series
