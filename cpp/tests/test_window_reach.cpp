// cpp/tests/test_window_reach.cpp — windows across sessions: core/window_reach.hpp and window::Session::preload.
// Contract: reach() == a brute-force hull; preload + extend == reference.hpp per call-wide window; why() names the row.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "columns.hpp"
#include "core/window_reach.hpp"
#include "reference.hpp"
#include "scratch.hpp"
#include "series.hpp"

using namespace vpoc;

namespace {

using test_series::Levels;

// reach() by brute force: the hull of every session with rows from the one holding first[s] to s.
void brute_reach(const std::vector<int64_t>& off, const std::vector<int64_t>& low, const std::vector<int64_t>& n,
                 const window::Starts& st, int64_t s, int64_t& first, int64_t& origin, int64_t& width) {
  first = off[static_cast<size_t>(s)];
  origin = width = 0;
  if (off[static_cast<size_t>(s) + 1] == first || n[static_cast<size_t>(s)] == 0) return;
  first = st(0, first);
  int64_t k0 = 0;
  while (off[static_cast<size_t>(k0) + 1] <= first) ++k0;  // the session holding row `first`
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int64_t k = k0; k <= s; ++k)
    if (n[static_cast<size_t>(k)] > 0) {
      lo = std::min(lo, low[static_cast<size_t>(k)]);
      hi = std::max(hi, low[static_cast<size_t>(k)] + n[static_cast<size_t>(k)]);
    }
  origin = lo;
  width = hi - lo;
}

// A call of trades in sessions; each row's window is the call's last `window` rows (or `starts`).
struct Call {
  std::vector<double> p, v;
  std::vector<int64_t> off{0};
  std::vector<int64_t> starts;  // given (time windows): call-wide, non-decreasing
  int64_t window = 1;
  Options opt;

  window::Starts st() const {
    return starts.empty() ? window::Starts::rows(window) : window::Starts::given(starts.data(), 0);
  }
  std::vector<ref::Row> rows(size_t a, size_t b) const {
    std::vector<ref::Row> r;
    for (size_t i = a; i < b; ++i) r.push_back(ref::Row{p[i], p[i], p[i], p[i], v[i]});
    return r;
  }
  std::vector<Levels> expected() const {
    std::vector<Levels> out;
    const ref::Va va = opt.va_method == VaMethod::greedy ? ref::Va::greedy
                       : opt.va_method == VaMethod::single ? ref::Va::single : ref::Va::cbot;
    const ref::Tie tie = opt.poc_tie == PocTie::low ? ref::Tie::low : opt.poc_tie == PocTie::high ? ref::Tie::high
                                                                                                  : ref::Tie::center;
    for (size_t i = 0; i < p.size(); ++i) {
      const auto a = static_cast<size_t>(st()(0, static_cast<int64_t>(i)));
      const auto r = rows(a, i + 1);
      const auto dn = ref::dense(ref::profile(r, r.size(), ref::Mode::trades, opt.tick_size, opt.ticks_per_row));
      const auto lv = ref::value_area(dn.v, dn.total, opt.value_area, va, tie);
      out.push_back(Levels{dn.low_row + lv.poc, dn.low_row + lv.val, dn.low_row + lv.vah});
    }
    return out;
  }
  // Each session on its own: reach, a fresh Session over the hull, preload of the tail, extend.
  std::vector<Levels> run() const {
    const auto S = static_cast<int64_t>(off.size()) - 1;
    std::vector<int64_t> low(off.size() - 1, 0), n(off.size() - 1, 0);
    for (size_t s = 0; s + 1 < off.size(); ++s) {
      if (off[s + 1] == off[s]) continue;
      const auto r = rows(static_cast<size_t>(off[s]), static_cast<size_t>(off[s + 1]));
      const auto dn = ref::dense(ref::profile(r, r.size(), ref::Mode::trades, opt.tick_size, opt.ticks_per_row));
      low[s] = dn.low_row;
      n[s] = static_cast<int64_t>(dn.v.size());
    }
    std::vector<int64_t> first(low.size()), origin(low.size()), width(low.size());
    window::reach(off.data(), S, low.data(), n.data(), st(), first.data(), origin.data(), width.data());
    const auto src = make_source<double, double>(test_columns::view(false, Distribute::close, p, p, p, {}, v), opt, 0);
    std::vector<Levels> out(p.size(), Levels{-1, -1, -1});
    for (int64_t s = 0; s < S; ++s) {
      const auto k = static_cast<size_t>(s);
      if (n[k] == 0) continue;
      test_scratch::Buffers buf;
      window::Session w(buf.window(width[k], origin[k]), opt);
      const auto put = [&](int64_t i, int64_t poc, int64_t val, int64_t vah) {
        out[static_cast<size_t>(i)] = Levels{poc, val, vah};
      };
      REQUIRE(w.preload(src, first[k], off[k]));
      REQUIRE(w.extend(src, first[k], off[k], off[k + 1], st(), put));
    }
    return out;
  }
};

}  // namespace

TEST_CASE("27_4x_reach_vs_brute_force") {
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto S = static_cast<int64_t>(1 + rng() % 8);
    std::vector<int64_t> off{0}, low, n;
    for (int64_t s = 0; s < S; ++s) {
      const int64_t rows = rng() % 4 == 0 ? 0 : static_cast<int64_t>(1 + rng() % 5);
      off.push_back(off.back() + rows);
      low.push_back(rows ? static_cast<int64_t>(rng() % 50) - 25 : -7);
      n.push_back(rows ? static_cast<int64_t>(1 + rng() % 20) : 0);
    }
    std::vector<int64_t> at(static_cast<size_t>(off.back()));
    int64_t prev = 0;
    for (size_t i = 0; i < at.size(); ++i) {
      prev = rng() % 3 == 0 ? prev : prev + static_cast<int64_t>(rng() % (static_cast<uint64_t>(i) - prev + 1));
      at[i] = prev;
    }
    const window::Starts st =
        trial % 2 ? window::Starts::given(at.data(), 0) : window::Starts::rows(static_cast<int64_t>(1 + rng() % 12));
    std::vector<int64_t> first(n.size()), origin(n.size()), width(n.size());
    window::reach(off.data(), S, low.data(), n.data(), st, first.data(), origin.data(), width.data());
    for (int64_t s = 0; s < S; ++s) {
      int64_t f = 0, o = 0, w = 0;
      brute_reach(off, low, n, st, s, f, o, w);
      const auto k = static_cast<size_t>(s);
      CHECK_MESSAGE((first[k] == f && origin[k] == o && width[k] == w), "trial ", trial, " session ", s);
    }
  }
}

TEST_CASE("27_4x_session_of") {
  const int64_t off[] = {0, 2, 2, 5, 5};  // sessions 1 and 3 empty
  CHECK(window::session_of(off, 4, 0) == 0);
  CHECK(window::session_of(off, 4, 1) == 0);
  CHECK(window::session_of(off, 4, 2) == 2);
  CHECK(window::session_of(off, 4, 4) == 2);
}

TEST_CASE("27_4x_preload_extend_vs_brute_force") {
  std::mt19937_64 rng(27);
  const VaMethod methods[] = {VaMethod::cbot, VaMethod::single, VaMethod::greedy};
  const PocTie ties[] = {PocTie::center, PocTie::low, PocTie::high};
  for (int trial = 0; trial < 1500; ++trial) {
    Call c;
    c.opt.va_method = methods[rng() % 3];
    c.opt.poc_tie = ties[rng() % 3];
    c.opt.ticks_per_row = 1 + static_cast<int64_t>(rng() % 2);
    c.opt.value_area = static_cast<double>(10 + rng() % 91) / 100.0;
    c.window = 1 + static_cast<int64_t>(rng() % 15);
    const auto S = 1 + rng() % 6;
    for (uint64_t s = 0; s < S; ++s) {
      const double base = trial % 5 == 0 ? static_cast<double>(s) * 40.0 : 100.0;  // far apart, or overlapping
      const size_t rows = rng() % 5 == 0 ? 0 : 1 + rng() % 6;
      for (size_t i = 0; i < rows; ++i) {
        c.p.push_back(base + static_cast<double>(rng() % 8) * 0.25);
        c.v.push_back(static_cast<double>(rng() % 5));  // zeros and ties
      }
      c.off.push_back(static_cast<int64_t>(c.p.size()));
    }
    if (trial % 3 == 0) {  // given starts: stay, the row alone, or anywhere in [prev, i]
      int64_t prev = 0;
      for (size_t i = 0; i < c.p.size(); ++i) {
        const uint64_t pick = rng() % 4;
        const auto room = static_cast<uint64_t>(static_cast<int64_t>(i) - prev + 1);
        prev = pick == 0 ? prev : pick == 1 ? static_cast<int64_t>(i) : prev + static_cast<int64_t>(rng() % room);
        c.starts.push_back(prev);
      }
    }
    test_series::check(c.run(), c.expected(), "row", 0, "trial " + std::to_string(trial));
  }
}

TEST_CASE("27_4x_window_too_wide_and_too_heavy") {
  // sessions at 100 and 200 (tick 1): row 1's window (rows 0..1) spans 101 rows
  Call c;
  c.opt.tick_size = 1.0;
  c.p = {100.0, 200.0, 200.0};
  c.v = {1.0, 1.0, 1.0};
  c.window = 2;
  const auto src = make_source<double, double>(test_columns::view(false, Distribute::close, c.p, c.p, c.p, {}, c.v),
                                               c.opt, 0);
  const auto none = [](int64_t, int64_t, int64_t, int64_t) {};
  {
    c.opt.max_rows = 100;
    test_scratch::Buffers buf;
    window::Session w(buf.window(101, 100), c.opt);
    CHECK(w.preload(src, 0, 1));  // the tail alone is one row wide
    CHECK_FALSE(w.extend(src, 0, 1, 3, window::Starts::rows(2), none));
    CHECK(w.why() == window::Why::too_wide);
    CHECK(w.fail_row() == 1);
    CHECK(w.last() - w.first() + 1 == 101);
  }
  {
    c.opt.max_rows = 101;  // exactly as wide as allowed: runs on
    test_scratch::Buffers buf;
    window::Session w(buf.window(101, 100), c.opt);
    CHECK(w.preload(src, 0, 1));
    CHECK(w.extend(src, 0, 1, 3, window::Starts::rows(2), none));
    CHECK(w.why() == window::Why::none);
  }
  {
    // two rows of 2**52 + 2**51 each: every row alone fits, any window of both sums past 2**53
    Call h;
    h.opt.tick_size = 1.0;
    h.p = {100.0, 100.0, 101.0};
    h.v = {6755399441055744.0, 6755399441055744.0, 1.0};
    const auto hs = make_source<double, double>(test_columns::view(false, Distribute::close, h.p, h.p, h.p, {}, h.v),
                                                h.opt, 0);
    test_scratch::Buffers buf;
    window::Session w(buf.window(2, 100), h.opt);
    CHECK(w.preload(hs, 0, 1));
    CHECK_FALSE(w.extend(hs, 0, 1, 3, window::Starts::rows(2), none));
    CHECK(w.why() == window::Why::overflow);
    CHECK(w.fail_row() == 1);
    test_scratch::Buffers buf1;
    window::Session one(buf1.window(2, 100), h.opt);  // window=1: each row alone
    CHECK(one.run(hs, 0, 3, window::Starts::rows(1), none));
  }
}

TEST_CASE("27_4x_beyond_reach_means_the_first_window_is_too_wide") {
  // Sessions each at most max_rows wide (the profile pass refuses wider ones), at random, often far
  // apart, levels: a scratch past 3 * max_rows (beyond_reach) only when the session's first window
  // is too wide; window_rows measures that window as Session's too-wide check does.
  std::mt19937_64 rng(43);
  int beyond = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Call c;
    c.opt.tick_size = 1.0;
    c.opt.max_rows = 2 + static_cast<int64_t>(rng() % 30);
    c.window = 1 + static_cast<int64_t>(rng() % 12);
    const auto S = 1 + rng() % 7;
    std::vector<int64_t> low, n;
    for (uint64_t s = 0; s < S; ++s) {
      const int64_t base = static_cast<int64_t>(rng() % (trial % 2 ? 400 : 40));
      const int64_t span = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(c.opt.max_rows));
      const size_t rows = rng() % 5 == 0 ? 0 : 1 + rng() % 6;
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (size_t i = 0; i < rows; ++i) {
        const int64_t r = base + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
        c.p.push_back(static_cast<double>(r));
        c.v.push_back(1.0);
        lo = std::min(lo, r);
        hi = std::max(hi, r);
      }
      c.off.push_back(static_cast<int64_t>(c.p.size()));
      low.push_back(rows ? lo : 0);
      n.push_back(rows ? hi - lo + 1 : 0);
    }
    const auto src = make_source<double, double>(test_columns::view(false, Distribute::close, c.p, c.p, c.p, {}, c.v),
                                                 c.opt, 0);
    std::vector<int64_t> first(n.size()), origin(n.size()), width(n.size());
    window::reach(c.off.data(), static_cast<int64_t>(S), low.data(), n.data(), c.st(), first.data(), origin.data(),
                  width.data());
    for (size_t s = 0; s < S; ++s) {
      if (n[s] == 0) continue;
      const int64_t w = window::window_rows(src, first[s], c.off[s]);
      if (window::beyond_reach(width[s], c.opt.max_rows)) {
        ++beyond;
        CHECK_MESSAGE(w > c.opt.max_rows, "trial ", trial, " session ", s);
        continue;
      }
      // laid out: the first row's window fails too wide exactly when window_rows says so, as wide
      test_scratch::Buffers buf;
      window::Session ws(buf.window(width[s], origin[s]), c.opt);
      const auto none = [](int64_t, int64_t, int64_t, int64_t) {};
      REQUIRE(ws.preload(src, first[s], c.off[s]));
      const bool ok = ws.extend(src, first[s], c.off[s], c.off[s] + 1, c.st(), none);
      CHECK_MESSAGE(ok == (w <= c.opt.max_rows), "trial ", trial, " session ", s);
      if (!ok) CHECK(ws.last() - ws.first() + 1 == w);
    }
  }
  CHECK(beyond > 100);  // the bound is exercised
}

TEST_CASE("27_4x_preload_names_the_row_it_builds_for") {
  // a scratch holding neither tail row (the inputs changed under the call): the failure names row 2,
  // the session's first row, not the tail row of an earlier session
  Call c;
  c.opt.tick_size = 1.0;
  c.p = {100.0, 200.0, 150.0};
  c.v = {1.0, 1.0, 1.0};
  const auto src = make_source<double, double>(test_columns::view(false, Distribute::close, c.p, c.p, c.p, {}, c.v),
                                               c.opt, 0);
  test_scratch::Buffers buf;
  window::Session w(buf.window(1, 150), c.opt);
  CHECK_FALSE(w.preload(src, 0, 2));
  CHECK(w.why() == window::Why::outside);
  CHECK(w.fail_row() == 2);
}
