// cpp/tests/test_window.cpp — core/window.hpp: the rolling-window POC / VAL / VAH of every row.
// Contract: each row's levels equal reference.hpp's brute force on exactly its window's rows (rebuilt from scratch).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "columns.hpp"
#include "core/window.hpp"
#include "reference.hpp"
#include "scratch.hpp"
#include "series.hpp"

using namespace vpoc;

namespace {

using test_series::Levels;

struct WindowCase {
  std::vector<double> h, l, c, v;
  bool bars = true;
  Distribute d = Distribute::close;
  Options opt;
  int64_t window = 1;
  std::vector<int64_t> starts;  // given: each row's window start (time windows); empty: the last `window` rows

  int64_t start(size_t i) const {
    if (!starts.empty()) return starts[i];
    return i + 1 > static_cast<size_t>(window) ? static_cast<int64_t>(i + 1 - static_cast<size_t>(window)) : 0;
  }
  ref::Mode mode() const {
    if (!bars) return ref::Mode::trades;
    return d == Distribute::hlc3 ? ref::Mode::hlc3 : d == Distribute::uniform ? ref::Mode::uniform : ref::Mode::close;
  }
  std::vector<ref::Row> rows(size_t a, size_t b) const {  // rows [a, b)
    std::vector<ref::Row> r;
    for (size_t i = a; i < b; ++i) r.push_back(ref::Row{h[i], l[i], c[i], c[i], v[i]});
    return r;
  }
  std::string describe() const {
    std::string s = "window " + std::to_string(window) + (starts.empty() ? "" : " (starts)") + " tpr " + std::to_string(opt.ticks_per_row) + " mode " +
                    std::to_string(static_cast<int>(mode())) + " va " + std::to_string(static_cast<int>(opt.va_method)) +
                    " tie " + std::to_string(static_cast<int>(opt.poc_tie)) + ":";
    for (size_t i = 0; i < v.size(); ++i)
      s += " (" + std::to_string(h[i]) + "," + std::to_string(l[i]) + "," + std::to_string(c[i]) + "," +
           std::to_string(v[i]) + ")";
    return s;
  }

  // Brute force: every window's profile from scratch, then its levels (absolute rows).
  std::vector<Levels> expected() const {
    std::vector<Levels> out;
    const ref::Tie tie = opt.poc_tie == PocTie::low ? ref::Tie::low : opt.poc_tie == PocTie::high ? ref::Tie::high : ref::Tie::center;
    const ref::Va va = opt.va_method == VaMethod::greedy ? ref::Va::greedy : opt.va_method == VaMethod::single ? ref::Va::single : ref::Va::cbot;
    for (size_t i = 0; i < v.size(); ++i) {
      const auto a = static_cast<size_t>(start(i));
      const auto r = rows(a, i + 1);
      const auto dn = ref::dense(ref::profile(r, r.size(), mode(), opt.tick_size, opt.ticks_per_row));
      const auto lv = ref::value_area(dn.v, dn.total, opt.value_area, va, tie);
      out.push_back(Levels{dn.low_row + lv.poc, dn.low_row + lv.val, dn.low_row + lv.vah});
    }
    return out;
  }

  // window::Session over the session's rows, in pieces of `chunk` rows (0: one run() call), as Live does.
  std::vector<Levels> run(size_t chunk = 0) const {
    const auto whole = ref::dense(ref::profile(rows(0, v.size()), v.size(), mode(), opt.tick_size, opt.ticks_per_row));
    test_scratch::Buffers buf;
    const window::Scratch sc = buf.window(static_cast<int64_t>(whole.v.size()), whole.low_row);
    const auto src = make_source<double, double>(test_columns::view(bars, d, h, l, c, {}, v), opt, 0);
    window::Session s(sc, opt);
    std::vector<Levels> out;
    const auto n = static_cast<int64_t>(v.size());
    auto record = [&](int64_t i, int64_t poc, int64_t val, int64_t vah) {
      CHECK(i == static_cast<int64_t>(out.size()));
      out.push_back(Levels{poc, val, vah});
    };
    const window::Starts st = starts.empty() ? window::Starts::rows(window) : window::Starts::given(starts.data(), 0);
    if (chunk == 0) {
      REQUIRE(s.run(src, 0, n, st, record));
    } else {
      for (int64_t from = 0; from < n; from += static_cast<int64_t>(chunk))
        REQUIRE(s.extend(src, 0, from, std::min(n, from + static_cast<int64_t>(chunk)), st, record));
    }
    return out;
  }
};

void check(const WindowCase& k, size_t chunk = 0) {
  const auto want = k.expected();
  test_series::check(k.run(chunk), want, "row", chunk, k.describe());
}

}  // namespace

TEST_CASE("27_4_window_hand_example") {
  // trades 100 (1000 lots), 110, 110.25, 110.5, 110.25 (1, 2, 1, 1 lots), tick 0.25, window 3, cbot
  WindowCase k;
  k.bars = false;
  k.window = 3;
  k.c = {100.0, 110.0, 110.25, 110.5, 110.25};
  k.h = k.l = k.c;
  k.v = {1000, 1, 2, 1, 1};
  const auto got = k.run();
  CHECK(got[2].poc == 400);                   // rows 0..2: the 1000 lot
  CHECK(got[3] == Levels{441, 441, 442});     // rows 1..3: cbot takes the tie upwards, 3 of 4 >= 70%
  CHECK(got[4] == Levels{441, 441, 441});     // rows 2..4: 3 of 4 at 110.25
  check(k);
}

TEST_CASE("27_4_window_vs_brute_force_random_sessions") {
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const Distribute dists[] = {Distribute::close, Distribute::hlc3, Distribute::uniform};
  const VaMethod methods[] = {VaMethod::cbot, VaMethod::single, VaMethod::greedy};
  const PocTie ties[] = {PocTie::center, PocTie::low, PocTie::high};
  const double tick_sizes[] = {0.25, 0.1, 0.5};
  int cases = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    WindowCase k;
    k.bars = trial % 4 != 0;
    k.d = dists[trial % 3];
    k.opt.tick_size = tick_sizes[(trial / 3) % 3];
    k.opt.ticks_per_row = 1 + static_cast<int64_t>(rng() % 3);
    k.opt.va_method = methods[rng() % 3];
    k.opt.poc_tie = ties[rng() % 3];
    k.opt.value_area = trial % 7 == 0 ? 1.0 : static_cast<double>(10 + rng() % 90) / 100.0;
    k.window = 1 + static_cast<int64_t>(rng() % 8);
    const double ts = k.opt.tick_size;
    const double base = static_cast<double>(static_cast<int64_t>(rng() % 400) - 200) * ts;
    const int64_t span = trial % 9 == 0 ? 20 : 6;
    const size_t n = 1 + rng() % 14;
    for (size_t i = 0; i < n; ++i) {
      const double lo = base + static_cast<double>(rng() % static_cast<uint64_t>(span)) * ts;
      const double hi = lo + static_cast<double>(rng() % static_cast<uint64_t>(span)) * ts;
      const double cl = lo + std::floor((hi - lo) / ts * u(rng)) * ts;
      k.h.push_back(hi);
      k.l.push_back(lo);
      k.c.push_back(std::min(std::max(cl, lo), hi));
      double vol = static_cast<double>(rng() % 5);  // zeros and exact ties
      if (trial % 4 == 3) vol = std::floor(u(rng) * 1000.0) / 8.0 + 0.125;
      if (trial % 11 == 0) vol = 0.0;
      k.v.push_back(vol);
    }
    if (!k.bars) k.h = k.l = k.c;
    check(k);
    if (n > 2) check(k, 1 + rng() % (n - 1));  // in pieces, as vpoc.Live feeds it
    ++cases;
  }
  CHECK(cases == 4000);
}

TEST_CASE("27_4_window_given_starts_vs_brute_force") {
  // time windows: per-row starts that stay, step by one or drop many rows at once (a gap in time)
  std::mt19937_64 rng(2027);
  const VaMethod methods[] = {VaMethod::cbot, VaMethod::single, VaMethod::greedy};
  int cases = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    WindowCase k;
    k.bars = trial % 3 != 0;
    k.d = trial % 2 ? Distribute::uniform : Distribute::close;
    k.opt.va_method = methods[rng() % 3];
    k.opt.value_area = static_cast<double>(10 + rng() % 91) / 100.0;
    const size_t n = 1 + rng() % 16;
    int64_t prev = 0;
    for (size_t i = 0; i < n; ++i) {
      const double lo = static_cast<double>(rng() % 10) * 0.25;
      const double hi = lo + static_cast<double>(rng() % 4) * 0.25;
      k.h.push_back(hi);
      k.l.push_back(lo);
      k.c.push_back(hi);
      k.v.push_back(static_cast<double>(rng() % 5));
      const auto room = static_cast<uint64_t>(static_cast<int64_t>(i) - prev + 1);
      const uint64_t pick = rng() % 4;  // stay, the row alone, or anywhere in [prev, i]
      prev = pick == 0 ? prev : pick == 1 ? static_cast<int64_t>(i) : prev + static_cast<int64_t>(rng() % room);
      k.starts.push_back(prev);
    }
    if (!k.bars) k.h = k.l = k.c;
    check(k);
    if (n > 2) check(k, 1 + rng() % (n - 1));
    ++cases;
  }
  CHECK(cases == 3000);
}

TEST_CASE("27_4_window_starts_rule") {
  const auto rows = window::Starts::rows(3);
  CHECK(rows(10, 10) == 10);
  CHECK(rows(10, 12) == 10);
  CHECK(rows(10, 13) == 11);
  const int64_t at[] = {5, 5, 6, 8};
  const auto given = window::Starts::given(at, 5);  // element 0 = row 5
  CHECK(given(5, 5) == 5);
  CHECK(given(5, 8) == 8);
}
