// cpp/tests/test_developing.cpp — core/developing.hpp: the developing POC / VAL / VAH of every prefix.
// Contract: each prefix's levels equal reference.hpp's brute force (profile rebuilt from scratch, levels recomputed).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "columns.hpp"
#include "core/developing.hpp"
#include "reference.hpp"
#include "scratch.hpp"
#include "series.hpp"

using namespace vpoc;

namespace {

using test_series::Levels;

// One session as columns, run through developing::Session the way the CPU pass does.
struct Case {
  std::vector<double> h, l, c, o, v;
  bool bars = true;
  Distribute d = Distribute::close;
  Options opt;

  ref::Mode mode() const {
    if (!bars) return ref::Mode::trades;
    switch (d) {
      case Distribute::close: return ref::Mode::close;
      case Distribute::hlc3: return ref::Mode::hlc3;
      case Distribute::uniform: return ref::Mode::uniform;
      case Distribute::legacy: return ref::Mode::legacy;
    }
    return ref::Mode::close;
  }
  std::vector<ref::Row> rows() const {
    std::vector<ref::Row> r;
    for (size_t i = 0; i < v.size(); ++i) r.push_back(ref::Row{h[i], l[i], c[i], o[i], v[i]});
    return r;
  }
  std::string describe() const {
    std::string s = "tick " + std::to_string(opt.tick_size) + " tpr " + std::to_string(opt.ticks_per_row) + " mode " +
                    std::to_string(static_cast<int>(mode())) + " va " + std::to_string(static_cast<int>(opt.va_method)) +
                    " tie " + std::to_string(static_cast<int>(opt.poc_tie)) + " value_area " + std::to_string(opt.value_area) + ":";
    for (size_t i = 0; i < v.size(); ++i)
      s += " (" + std::to_string(h[i]) + "," + std::to_string(l[i]) + "," + std::to_string(c[i]) + "," +
           std::to_string(o[i]) + "," + std::to_string(v[i]) + ")";
    return s;
  }

  // Brute force: every prefix's profile from scratch, then its levels (absolute rows).
  std::vector<Levels> expected() const {
    std::vector<Levels> out;
    const auto r = rows();
    const ref::Tie tie = opt.poc_tie == PocTie::low ? ref::Tie::low : opt.poc_tie == PocTie::high ? ref::Tie::high : ref::Tie::center;
    const ref::Va va = opt.va_method == VaMethod::greedy ? ref::Va::greedy : opt.va_method == VaMethod::single ? ref::Va::single : ref::Va::cbot;
    for (size_t i = 1; i <= r.size(); ++i) {
      const auto dn = ref::dense(ref::profile(r, i, mode(), opt.tick_size, opt.ticks_per_row));
      const auto a = ref::value_area(dn.v, dn.total, opt.value_area, va, tie);
      out.push_back(Levels{dn.low_row + a.poc, dn.low_row + a.val, dn.low_row + a.vah});
    }
    return out;
  }

  // developing::Session over rows [0, n), in pieces of `chunk` rows (0: one run() call), as Live does.
  std::vector<Levels> run(size_t chunk = 0) const {
    const auto final_profile = ref::dense(ref::profile(rows(), v.size(), mode(), opt.tick_size, opt.ticks_per_row));
    const auto n_rows = static_cast<int64_t>(final_profile.v.size());
    test_scratch::Buffers buf;
    const developing::Scratch sc = buf.developing(developing::scratch_rows(n_rows), final_profile.low_row - developing::kMargin);
    const auto src = make_source<double, double>(test_columns::view(bars, d, h, l, c, o, v), opt, 0);
    developing::Session s(sc, opt);
    std::vector<Levels> out;
    const auto n = static_cast<int64_t>(v.size());
    auto record = [&](int64_t i, int64_t poc, int64_t val, int64_t vah) {
      CHECK(i == static_cast<int64_t>(out.size()));
      out.push_back(Levels{poc, val, vah});
    };
    if (chunk == 0) {
      REQUIRE(s.run(src, 0, n, record));
    } else {
      for (int64_t from = 0; from < n; from += static_cast<int64_t>(chunk))
        REQUIRE(s.extend(src, 0, from, std::min(n, from + static_cast<int64_t>(chunk)), record));
    }
    // the whole session's total is exact
    CHECK(s.total() == final_profile.total);
    return out;
  }
};

void check(const Case& k, size_t chunk = 0) {
  const auto want = k.expected();
  test_series::check(k.run(chunk), want, "prefix", chunk, k.describe());
}

Case bars_case(std::initializer_list<std::array<double, 5>> rows, Distribute d) {
  Case k;
  k.d = d;
  for (const auto& r : rows) {
    k.h.push_back(r[0]);
    k.l.push_back(r[1]);
    k.c.push_back(r[2]);
    k.o.push_back(r[3]);
    k.v.push_back(r[4]);
  }
  return k;
}

}  // namespace

TEST_CASE("24_5_developing_hand_example_close") {
  // closes 6000, 6000.25, 6000.25, 6000 with volumes 5, 3, 3, 7 (tick 0.25, cbot, centre)
  Case k = bars_case({{6000.5, 6000.0, 6000.0, 6000.0, 5},
                      {6000.5, 6000.0, 6000.25, 6000.0, 3},
                      {6000.5, 6000.0, 6000.25, 6000.0, 3},
                      {6000.5, 6000.0, 6000.0, 6000.0, 7}},
                     Distribute::close);
  const auto got = k.run();
  // prefix 1: one row (24000) holds everything
  CHECK(got[0] == Levels{24000, 24000, 24000});
  // prefix 2: 5 | 3: POC 24000, target 5.6 -> add the row above
  CHECK(got[1] == Levels{24000, 24000, 24001});
  // prefix 3: 5 | 6: POC 24001, target 7.7 -> add the row below
  CHECK(got[2] == Levels{24001, 24000, 24001});
  // prefix 4: 12 | 6: POC 24000, target 12.6 -> add the row above
  CHECK(got[3] == Levels{24000, 24000, 24001});
}

TEST_CASE("24_5_developing_hand_example_uniform_many_ties") {
  // one bar over 12 ticks (12 tied rows: more than the 8 tracked incrementally), then a bar on the
  // top tick: the POC moves from the centre (lower of rows 5, 6 -> 24005) to the top row
  Case k = bars_case({{6002.75, 6000.0, 6001.0, 6001.0, 12}, {6002.75, 6002.75, 6002.75, 6002.75, 1}},
                     Distribute::uniform);
  const auto got = k.run();
  CHECK(got[0].poc == 24005);
  CHECK(got[1].poc == 24011);
  check(k);
}

TEST_CASE("24_5_developing_vs_brute_force_random_sessions") {
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const Distribute dists[] = {Distribute::close, Distribute::hlc3, Distribute::uniform, Distribute::legacy};
  const VaMethod methods[] = {VaMethod::cbot, VaMethod::single, VaMethod::greedy};
  const PocTie ties[] = {PocTie::center, PocTie::low, PocTie::high};
  const double tick_sizes[] = {0.25, 0.1, 0.01, 0.5};
  int cases = 0;
  for (int trial = 0; trial < 6000; ++trial) {
    Case k;
    k.bars = trial % 5 != 0;
    k.d = dists[trial % 4];
    k.opt.tick_size = tick_sizes[(trial / 4) % 4];
    k.opt.ticks_per_row = 1 + static_cast<int64_t>(rng() % 3);
    k.opt.va_method = methods[rng() % 3];
    k.opt.poc_tie = ties[rng() % 3];
    k.opt.value_area = trial % 7 == 0 ? 1.0 : static_cast<double>(10 + rng() % 90) / 100.0;
    const double ts = k.opt.tick_size;
    const double base = static_cast<double>(static_cast<int64_t>(rng() % 400) - 200) * ts;  // negative too
    const int64_t span = trial % 9 == 0 ? 20 : 6;
    const size_t n = 1 + rng() % 10;
    for (size_t i = 0; i < n; ++i) {
      double lo = base + static_cast<double>(rng() % static_cast<uint64_t>(span)) * ts;
      double hi = lo + static_cast<double>(rng() % static_cast<uint64_t>(span)) * ts;
      if (k.d == Distribute::legacy && trial % 3 == 0) {  // off-grid bars (legacy takes any price)
        lo += ts * u(rng) * 0.9;
        hi = std::max(lo, hi - ts * u(rng) * 0.9);
      }
      const double cl = lo + std::floor((hi - lo) / ts * u(rng)) * ts;
      const double op = lo + std::floor((hi - lo) / ts * u(rng)) * ts;
      k.h.push_back(hi);
      k.l.push_back(lo);
      k.c.push_back(std::min(std::max(cl, lo), hi));
      k.o.push_back(std::min(std::max(op, lo), hi));
      double vol = static_cast<double>(rng() % 5);  // zeros and exact ties
      if (trial % 4 == 3) vol = std::floor(u(rng) * 1000.0) / 8.0 + 0.125;
      if (trial % 11 == 0) vol = 0.0;
      k.v.push_back(vol);
    }
    check(k);
    if (n > 2) check(k, 1 + rng() % (n - 1));  // in pieces, as vpoc.Live feeds it
    ++cases;
  }
  CHECK(cases == 6000);
}
