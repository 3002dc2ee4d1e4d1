// cpp/tests/test_developing_chunk.cpp — core/developing_chunk.hpp (the GPU's chunked developing pass) run on the host.
// Contract: a simulated block (a loop over thread ids between sync points) gives Session's rows bit for bit.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "columns.hpp"
#include "core/developing.hpp"
#include "core/developing_chunk.hpp"
#include "scratch.hpp"
#include "series.hpp"

using namespace vpoc;

namespace {

using test_series::Levels;
namespace chunk = developing::chunk;

struct Case {
  std::vector<double> h, l, c, o, v;
  bool bars = true;
  Distribute d = Distribute::uniform;
  Options opt;

  std::string describe() const {
    std::string s = "bars " + std::to_string(bars) + " d " + std::to_string(static_cast<int>(d)) + " tick " +
                    std::to_string(opt.tick_size) + " tpr " + std::to_string(opt.ticks_per_row) + " va " +
                    std::to_string(static_cast<int>(opt.va_method)) + " tie " + std::to_string(static_cast<int>(opt.poc_tie)) +
                    " cmp " + std::to_string(static_cast<int>(opt.va_compare)) + " stop " +
                    std::to_string(static_cast<int>(opt.va_stop)) + " tol " + std::to_string(opt.tie_tol) + " target " +
                    std::to_string(static_cast<int>(opt.va_target)) + " value_area " + std::to_string(opt.value_area) +
                    " n " + std::to_string(v.size());
    return s;
  }
  InputView view() const { return test_columns::view(bars, d, h, l, c, o, v); }

  // The session's final rows, as the engine's batch pass gives them: [low, high] absolute.
  void final_rows(int64_t& low, int64_t& high) const {
    const auto src = make_source<double, double>(view(), opt, 0);
    low = INT64_MAX;
    high = INT64_MIN;
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t a = 0, b = -1;
      src.rows(src.item(static_cast<int64_t>(i)), distribute::LegacyLadder{}, a, b);
      low = std::min(low, a);
      high = std::max(high, b);
    }
  }

  // developing::Session, one thread (the CPU pass and today's GPU fallback). ok: run()'s answer.
  // exact: the scratch's exact rows after the last row.
  std::vector<Levels> session(bool& ok, std::vector<Fixed>* exact = nullptr) const {
    int64_t low, high;
    final_rows(low, high);
    const int64_t W = developing::scratch_rows(high - low + 1);
    test_scratch::Buffers buf;
    const developing::Scratch sc = buf.developing(W, low - developing::kMargin);
    const auto src = make_source<double, double>(view(), opt, 0);
    developing::Session s(sc, opt);
    std::vector<Levels> out(v.size(), Levels{-1, -1, -1});
    ok = s.run(src, 0, static_cast<int64_t>(v.size()), [&](int64_t i, int64_t poc, int64_t val, int64_t vah) {
      out[static_cast<size_t>(i)] = Levels{poc, val, vah};
    });
    if (exact) *exact = buf.vf;
    return out;
  }

  // The chunked pass on a simulated block: each phase runs thread by thread (forwards or, `reverse`,
  // backwards: a phase reading what another thread of the same phase writes shows up as a mismatch).
  // fail: the pass's fail flag. chunks: how many chunks it took. exact: the base's exact rows at the end.
  template <bool Generic>
  std::vector<Levels> chunked(int64_t cells, bool reverse, bool& fail, int& chunks,
                              std::vector<Fixed>* exact = nullptr) const {
    int64_t low, high;
    final_rows(low, high);
    const int64_t W = developing::scratch_rows(high - low + 1);
    std::vector<long double> mem(static_cast<size_t>(chunk::smem_bytes(W, cells) / 16 + 1));
    const auto src = make_source<double, double>(view(), opt, 0);
    const auto n = static_cast<int64_t>(v.size());
    auto p = chunk::Pass<std::decay_t<decltype(src)>, Generic>::make(src, opt, mem.data(), W, low - developing::kMargin, n, cells);
    std::vector<Levels> out(v.size(), Levels{-1, -1, -1});
    auto record = [&](int64_t i, int64_t poc, int64_t val, int64_t vah) {
      REQUIRE(i >= 0);
      REQUIRE(i < n);
      CHECK(out[static_cast<size_t>(i)].poc == -1);  // each row once
      out[static_cast<size_t>(i)] = Levels{poc, val, vah};
    };
    auto each = [&](auto&& f) {
      for (int k = 0; k < chunk::kThreads; ++k) f(reverse ? chunk::kThreads - 1 - k : k);
    };
    fail = false;
    chunks = 0;
    each([&](int t) { p.start(t, 0); });
    int64_t i0 = 0;
    while (i0 < n) {
      // plan and fill are one phase (no sync between): each thread runs both before the next one
      std::vector<chunk::Cut> cut(chunk::kThreads);
      each([&](int t) {
        cut[static_cast<size_t>(t)] = p.plan(t, i0);
        if (!cut[static_cast<size_t>(t)].fail) p.fill(t, cut[static_cast<size_t>(t)]);
      });
      const chunk::Cut c = cut[0];
      for (const chunk::Cut& o : cut)  // every thread its own copy, all the same
        REQUIRE((o.n == c.n && o.A == c.A && o.H == c.H && o.F == c.F && o.L == c.L && o.table == c.table &&
                 o.fail == c.fail));
      if (c.fail) {
        fail = true;
        return out;
      }
      REQUIRE(c.n >= 1);
      REQUIRE(c.n <= chunk::kChunk);
      REQUIRE(p.blk->n == c.n);
      if (c.table) REQUIRE(static_cast<int64_t>(c.n) * chunk::stride_of(c.H) <= cells);
      else REQUIRE(c.n == 1);
      each([&](int t) { p.max_part(t); });
      each([&](int t) { p.poc_part(t); });
      each([&](int t) { p.walk_ahead(t, i0, record); });
      REQUIRE(p.blk->next == i0 + c.n);
      i0 += c.n;
      ++chunks;
    }
    if (exact) exact->assign(p.vf, p.vf + W);
    return out;
  }
};

void check(const Case& k, int64_t cells, bool reverse) {
  REQUIRE(chunk::takes(k.view(), k.opt));
  bool ok = false, fail = false;
  int chunks = 0;
  std::vector<Fixed> want_vf, got_vf;
  const auto want = k.session(ok, &want_vf);
  REQUIRE(ok);
  const std::string what = k.describe() + " cells " + std::to_string(cells);
  test_series::check(k.chunked<true>(cells, reverse, fail, chunks, &got_vf), want, "row", 0, what);
  CHECK(!fail);
  CHECK_MESSAGE(got_vf == want_vf, "exact rows differ: " << what);  // every share, to the unit
  if (levels::plain_rules(levels::rules_of(k.opt))) {
    test_series::check(k.chunked<false>(cells, reverse, fail, chunks), want, "row (plain rules)", 0, what);
    CHECK(!fail);
  }
}

// A random session of n rows: bars over `span` ticks around a random base, or trades.
Case random_case(std::mt19937_64& rng, size_t n, int trial) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const Distribute dists[] = {Distribute::close, Distribute::hlc3, Distribute::uniform, Distribute::uniform};
  const VaMethod methods[] = {VaMethod::cbot, VaMethod::single};
  const PocTie ties[] = {PocTie::center, PocTie::low, PocTie::high, PocTie::mid_n2, PocTie::mid_floor};
  const double tick_sizes[] = {0.25, 0.1, 0.01, 0.5};
  const double tols[] = {1e-9, 0.0, 1e-3, 1e-9};
  Case k;
  k.bars = trial % 7 != 0;
  k.d = dists[rng() % 4];
  k.opt.tick_size = tick_sizes[rng() % 4];
  k.opt.ticks_per_row = 1 + static_cast<int64_t>(rng() % 3);
  k.opt.va_method = methods[rng() % 2];
  k.opt.poc_tie = ties[rng() % 5];
  k.opt.tie_tol = tols[rng() % 4];
  const bool peer = trial % 3 == 0;  // non-default step / stop rules
  k.opt.va_compare = peer && rng() % 2 ? VaCompare::zero_absent : VaCompare::tie_up;
  k.opt.va_stop = peer && rng() % 2 ? VaStop::exceeds : VaStop::reaches;
  const bool whole = trial % 4 != 3;
  k.opt.va_target = peer && whole && rng() % 2 ? VaTarget::decimal : VaTarget::float64;
  k.opt.value_area = trial % 13 == 0 ? 1.0 : static_cast<double>(10 + rng() % 90) / 100.0;
  const double ts = k.opt.tick_size;
  const double base = static_cast<double>(static_cast<int64_t>(rng() % 400) - 200) * ts;  // negative too
  const auto span = static_cast<uint64_t>(trial % 9 == 0 ? 40 : trial % 2 ? 6 : 14);
  double walk = 0.0;  // a drifting session (the hull moves across chunks)
  for (size_t i = 0; i < n; ++i) {
    if (trial % 5 == 1) walk += static_cast<double>(static_cast<int64_t>(rng() % 5) - 2) * ts;
    const double lo = base + walk + static_cast<double>(rng() % span) * ts;
    const double hi = lo + static_cast<double>(rng() % span) * ts;
    const double cl = lo + std::floor((hi - lo) / ts * u(rng)) * ts;
    const double op = lo + std::floor((hi - lo) / ts * u(rng)) * ts;
    k.h.push_back(hi);
    k.l.push_back(lo);
    k.c.push_back(std::min(std::max(cl, lo), hi));
    k.o.push_back(std::min(std::max(op, lo), hi));
    double vol = static_cast<double>(rng() % 5);  // zeros and exact ties
    if (!whole) vol = trial % 8 == 3 ? std::floor(u(rng) * 1000.0) / 8.0 + 0.125 : u(rng) * 1000.0;
    if (trial % 17 == 0) vol = 0.0;  // all zero
    if (trial % 19 == 5) vol = static_cast<double>(1 + rng() % 7) * fixed::kMinVolume;  // a unit is visible
    k.v.push_back(vol);
  }
  return k;
}

}  // namespace

TEST_CASE("26_4_chunked_developing_equals_session_random") {
  std::mt19937_64 rng(26004);
  const size_t sizes[] = {1, 2, 31, 32, 33, 64, 65, 97};
  const int64_t cells[] = {chunk::kTableCells, 64, 17, 5};
  int cases = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    const size_t n = trial % 3 == 0 ? sizes[rng() % 8] : 1 + rng() % 120;
    const Case k = random_case(rng, n, trial);
    check(k, cells[trial % 4], trial % 2 == 1);
    ++cases;
  }
  CHECK(cases == 1500);
}

TEST_CASE("26_4_chunked_developing_cuts") {
  // 70 bars of 3 rows each on a slowly rising price: with 12 cells a chunk holds at most 4 bars
  // (a 3-row hull), fewer where the hull grows; with 2 cells every bar is folded first (no table).
  Case k;
  for (int i = 0; i < 70; ++i) {
    const double lo = 6000.0 + 0.25 * (i / 3);
    k.l.push_back(lo);
    k.h.push_back(lo + 0.5);
    k.c.push_back(lo + 0.25);
    k.o.push_back(lo);
    k.v.push_back(1.0 + i % 4);
  }
  for (const int64_t cells : {int64_t{12}, int64_t{2}, int64_t{3}, int64_t{chunk::kTableCells}}) {
    bool ok = false, fail = false;
    int chunks = 0;
    const auto want = k.session(ok);
    REQUIRE(ok);
    test_series::check(k.chunked<true>(cells, false, fail, chunks), want, "row", 0, k.describe());
    CHECK(!fail);
    if (cells == chunk::kTableCells) CHECK(chunks == 3);  // 32 + 32 + 6
    if (cells <= 2) CHECK(chunks == 70);
    if (cells == 12) CHECK(chunks >= 70 / 4);
  }
}

TEST_CASE("26_4_chunked_developing_bad_bar_fails") {
  // a negative volume in the second chunk: the pass stops with its fail flag, as Session::run
  // returns false there
  Case k;
  for (int i = 0; i < 40; ++i) {
    k.l.push_back(100.0);
    k.h.push_back(101.0);
    k.c.push_back(100.5);
    k.o.push_back(100.25);
    k.v.push_back(i == 35 ? -1.0 : 2.0);
  }
  bool ok = true, fail = false;
  int chunks = 0;
  (void)k.session(ok);
  CHECK(!ok);
  const auto got = k.chunked<true>(chunk::kTableCells, false, fail, chunks);
  CHECK(fail);
  CHECK(chunks == 1);
  CHECK(got[31].poc >= 0);  // the first chunk's rows were written
}

TEST_CASE("26_4_chunked_developing_takes") {
  Case k;
  Options o;
  CHECK(chunk::takes(k.view(), o));
  o.va_method = VaMethod::greedy;
  CHECK(!chunk::takes(k.view(), o));
  o.va_method = VaMethod::single;
  k.d = Distribute::legacy;
  CHECK(!chunk::takes(k.view(), o));
  k.bars = false;  // trades: no distribution
  CHECK(chunk::takes(k.view(), o));
}

TEST_CASE("26_4_chunked_developing_long_sessions") {
  // 400-bar sessions as a market trades them: a random walk of 1-12 tick bars (the hull moves and
  // widens, the POC moves inside chunks), fractional or whole volumes, default and peer rules.
  std::mt19937_64 rng(264);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 60; ++trial) {
    Case k;
    k.d = trial % 3 == 0 ? Distribute::close : Distribute::uniform;
    k.opt.va_method = trial % 2 ? VaMethod::single : VaMethod::cbot;
    k.opt.poc_tie = trial % 5 == 0 ? PocTie::mid_n2 : PocTie::center;
    if (trial % 4 == 1) {
      k.opt.va_compare = VaCompare::zero_absent;
      k.opt.va_stop = VaStop::exceeds;
      k.opt.tie_tol = 0.0;
    }
    double p = 4500.0;
    for (int i = 0; i < 400; ++i) {
      p += 0.25 * static_cast<double>(static_cast<int64_t>(rng() % 7) - 3);
      const double lo = p - 0.25 * static_cast<double>(rng() % 6), hi = p + 0.25 * static_cast<double>(rng() % 6);
      k.l.push_back(lo);
      k.h.push_back(hi);
      k.c.push_back(p);
      k.o.push_back(lo);
      k.v.push_back(trial % 2 ? std::floor(u(rng) * 50.0) : u(rng) * 1000.0);
    }
    check(k, trial % 3 == 2 ? 300 : chunk::kTableCells, trial % 2 == 0);
  }
}
