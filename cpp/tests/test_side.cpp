// cpp/tests/test_side.cpp — core/side.hpp codes, cpu/side_planes.hpp, a sided RowWindow's drain, cpu/side_session.hpp's rows.
// Contract: codes per byte as vpoc._side reads them; planes drain to volume = U + B + S exactly, buy, sell each rounded once;
// a SideSession's rows after every append = reference.hpp's profile of the buy / sell volumes of the prefix.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "columns.hpp"
#include "core/side.hpp"
#include "cpu/row_window.hpp"
#include "cpu/side_planes.hpp"
#include "cpu/side_session.hpp"
#include "reference.hpp"

using namespace vpoc;

TEST_CASE("27_side_codes_of_every_byte") {
  for (int b = 0; b < 256; ++b) {
    const auto u = static_cast<uint8_t>(b);
    const int8_t want_i8 = b == 1 ? 1 : b == 0xFF ? -1 : b == 0 ? 0 : side::kBad;
    const int8_t want_c8 = b == 'B' ? 1 : b == 'A' ? -1 : b == 'N' ? 0 : side::kBad;
    CHECK(side::code_i8(u) == want_i8);
    CHECK(side::code_c8(u) == want_c8);
  }
  // the first bad one, across the 256-byte blocks; letters stop there
  std::vector<int8_t> s(1000, 1);
  CHECK(side::first_bad_i8(s.data(), 1000) == -1);
  CHECK(side::first_bad_i8(s.data(), 0) == -1);
  for (int64_t at : {0, 255, 256, 511, 999}) {
    s.assign(1000, -1);
    s[static_cast<size_t>(at)] = 2;
    if (at + 3 < 1000) s[static_cast<size_t>(at + 3)] = 66;
    CHECK(side::first_bad_i8(s.data(), 1000) == at);
  }
  const uint8_t letters[] = {'B', 'A', 'N', 'B', 'b', 'A'};
  int8_t out[6] = {};
  CHECK(side::letters_to_codes(letters, out, 4) == -1);
  CHECK((out[0] == 1 && out[1] == -1 && out[2] == 0 && out[3] == 1));
  CHECK(side::letters_to_codes(letters, out, 6) == 4);
}

TEST_CASE("27_side_planes_move_slots_and_records") {
  const int8_t side[] = {0, 1, -1, 1};
  int32_t slot[] = {0, 5, 5, 123};
  cpu::side_slots(slot, side, 4);
  CHECK((slot[0] == 0 && slot[1] == 21 && slot[2] == 23 && slot[3] == 493));
  constexpr int shift = 5;
  uint64_t rec[4];
  const uint32_t rows[] = {0, 5, 5, 123};
  for (int j = 0; j < 4; ++j) rec[j] = (uint64_t(1000 + j) << 32) | (rows[j] << shift);
  cpu::side_records(rec, side, 4, shift);
  for (int j = 0; j < 4; ++j) {
    CHECK((rec[j] >> 32) == uint64_t(1000 + j));  // the volume word stays
    CHECK(static_cast<uint32_t>(rec[j]) == ((rows[j] * 4u + (static_cast<uint8_t>(side[j]) & 3u)) << shift));
  }
}

namespace {

template <class Acc>
void sided_drain_case(uint64_t seed) {
  std::mt19937_64 rng(seed);
  cpu::RowWindow<Acc> w(1000);
  w.set_plane_shift(2);
  for (int round = 0; round < 3; ++round) {  // drained windows are zero and take the next session
    cpu::Bins<Acc> bins(w);
    const int64_t lo = -50 + static_cast<int64_t>(rng() % 100), n = 1 + static_cast<int64_t>(rng() % 300);
    std::vector<double> vol(static_cast<size_t>(n)), buy(vol), sell(vol);  // exact: small whole numbers
    for (int i = 0; i < 2000; ++i) {
      const int64_t r = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
      const int8_t c = static_cast<int8_t>(static_cast<int>(rng() % 3) - 1);
      const auto v = static_cast<int64_t>(rng() % 1000);
      REQUIRE(bins.add_plane(r, static_cast<uint8_t>(c) & 3u, cpu::to_acc<Acc>(v), static_cast<unsigned>(i)));
      const auto k = static_cast<size_t>(r - lo);
      vol[k] += static_cast<double>(v);
      (c == 1 ? buy : c == -1 ? sell : vol)[k] += c == 0 ? 0.0 : static_cast<double>(v);
    }
    bins.touch(lo, lo + n - 1);
    HostVector<double> out, ob, os;
    Fixed total, tb, ts;
    CHECK(bins.drain_sided(out, ob, os, total, tb, ts) == n);
    double sum = 0.0, sb = 0.0, ss = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      const auto i = static_cast<size_t>(k);
      CHECK(out[i] == vol[i]);
      CHECK(ob[i] == buy[i]);
      CHECK(os[i] == sell[i]);
      sum += vol[i], sb += buy[i], ss += sell[i];
    }
    CHECK(fixed::to_double(total) == sum);
    CHECK(fixed::to_double(tb) == sb);
    CHECK(fixed::to_double(ts) == ss);
  }
  for (int64_t k = 0; k < w.rows() * cpu::kLanes * cpu::kSidePlanes; ++k) CHECK(w.data()[k] == Acc{});
}

}  // namespace

TEST_CASE("27_sided_window_drain_is_the_exact_sum_of_planes") {
  sided_drain_case<int64_t>(27);
  sided_drain_case<Fixed>(28);
}

TEST_CASE("27_side_rules_shared_with_the_device") {
  // plane of each code (GPU bin pass): 0 unknown (and a bad code, never binned), 1 buy, 2 sell
  for (int b = 0; b < 256; ++b) {
    const auto c = static_cast<int8_t>(b);
    CHECK(side::plane_of(c) == (c == 1 ? 1 : c == -1 ? 2 : 0));
  }
  // imbalance: x > 0 and x >= opposite * ratio (float64, no FMA)
  CHECK(side::imbalance(3.0, 1.0, 3.0));
  CHECK_FALSE(side::imbalance(2.999, 1.0, 3.0));
  CHECK_FALSE(side::imbalance(0.0, 0.0, 3.0));
  CHECK(side::imbalance(0.5, 0.0, 3.0));
  CHECK(side::imbalance(0.3, 0.1, 3.0) == (0.3 >= 0.1 * 3.0));
  // |buy - sell| below 2**-32 counts 0
  CHECK(side::delta_abs(1.0, 1.0 + 0x1p-40) == 0.0);
  CHECK(side::delta_abs(5.0, 2.0) == 3.0);
  CHECK(side::delta_abs(2.0, 5.0) == 3.0);
  CHECK(side::delta_abs(0.0, 0x1p-32) == 0x1p-32);
  // delta: the difference of the two rounded totals, in float64 (0.1 - 0.3, not the exact -0.2 rounded)
  CHECK(side::delta(5.0, 2.0) == 3.0);
  CHECK(side::delta(0.1, 0.3) == 0.1 - 0.3);
  CHECK(side::delta(0x1p53, 1.0) == 0x1p53 - 1.0);
  CHECK(std::signbit(side::delta(-0.0, 0.0)));
  // the rows pass's row of row r (price r * row_size at tick row_size): r itself near 0, monotone
  for (const double row_size : {0.25, 0.1 * 3, 0.01, 1.0 / 3.0, 12.5}) {
    const ladder::TickScale ts = ladder::TickScale::make(row_size, 1);
    int64_t prev = side::delta_poc_row_of(-100000, ts);
    for (int64_t r = -100000; r <= 100000; r += 7) {
      const int64_t got = side::delta_poc_row_of(r, ts);
      CHECK(got == r);
      CHECK(got >= prev);
      prev = got;
    }
  }
}

namespace {

// One random session through a SideSession in random chunks; after each chunk its buy / sell rows,
// totals and running delta against reference.hpp's profiles of the prefix's buy / sell volumes.
void side_session_case(bool bars, Distribute d, double tick, int64_t tpr, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int n = 1 + static_cast<int>(rng() % 40);
  std::vector<double> h, l, c, o, v, b, s;
  double mid = 100.0 + static_cast<double>(rng() % 9) * tick;
  for (int i = 0; i < n; ++i) {
    mid += static_cast<double>(static_cast<int64_t>(rng() % 7) - 3) * tick;
    const double lo = mid - static_cast<double>(rng() % 4) * tick, hi = mid + static_cast<double>(rng() % 4) * tick;
    const double cl = lo + static_cast<double>(rng() % 4) * tick;
    l.push_back(lo);
    h.push_back(hi);
    c.push_back(std::min(cl, hi));
    o.push_back(std::min(lo + static_cast<double>(rng() % 3) * tick, hi));
    const double vol = (rng() % 5 == 0) ? 0.0 : static_cast<double>(rng() % 50) + (rng() % 3 == 0 ? 0.375 : 0.0);
    v.push_back(vol);
    if (bars) {  // any part of the volume each side (fractions too), one price, all-buy, all-unknown
      const double fb = static_cast<double>(rng() % 5) / 4.0;
      b.push_back(vol * fb);
      s.push_back((vol - vol * fb) * static_cast<double>(rng() % 3) / 2.0);
    } else {
      const int code = static_cast<int>(rng() % 3) - 1;
      b.push_back(code == 1 ? vol : 0.0);
      s.push_back(code == -1 ? vol : 0.0);
    }
  }
  Options opt;
  opt.tick_size = tick;
  opt.ticks_per_row = tpr;
  opt.distribute = d;
  const auto src = make_source<double, double>(test_columns::view(bars, d, h, l, c, o, v), opt, 0);
  const ref::Mode mode = !bars ? ref::Mode::trades
                         : d == Distribute::close ? ref::Mode::close
                         : d == Distribute::hlc3 ? ref::Mode::hlc3
                         : d == Distribute::uniform ? ref::Mode::uniform
                                                    : ref::Mode::legacy;
  const auto rows_of = [&](const std::vector<double>& vol) {
    std::vector<ref::Row> r;
    for (int i = 0; i < n; ++i) r.push_back(ref::Row{h[static_cast<size_t>(i)], l[static_cast<size_t>(i)],
                                                     c[static_cast<size_t>(i)], o[static_cast<size_t>(i)],
                                                     vol[static_cast<size_t>(i)]});
    return r;
  };
  const auto rb = rows_of(b), rs = rows_of(s);
  cpu::SideSession side;
  CHECK(side.empty());
  CHECK(side.low_row() == kNoRow);
  double delta = 0.0;
  for (int from = 0; from < n;) {
    const int to = std::min(n, from + 1 + static_cast<int>(rng() % 5));
    side.extend(src, b.data(), s.data(), 0, from, to);
    for (int i = from; i < to; ++i) delta = delta + (b[static_cast<size_t>(i)] - s[static_cast<size_t>(i)]);
    from = to;
    const auto db = ref::dense(ref::profile(rb, static_cast<size_t>(to), mode, tick, tpr));
    const auto ds = ref::dense(ref::profile(rs, static_cast<size_t>(to), mode, tick, tpr));
    std::vector<double> gb, gs;
    side.rows(gb, gs);
    INFO("seed " << seed << " bars " << bars << " distribute " << static_cast<int>(d) << " rows " << to);
    REQUIRE(side.low_row() == db.low_row);
    REQUIRE(gb.size() == db.v.size());
    REQUIRE(ds.low_row == db.low_row);
    for (size_t j = 0; j < gb.size(); ++j) {
      CHECK(gb[j] == db.v[j]);
      CHECK(gs[j] == ds.v[j]);
    }
    CHECK(side.delta_total() == db.total - ds.total);
    CHECK(side.delta() == delta);  // input order, the batch dev_delta
  }
  side.clear();
  CHECK(side.empty());
  CHECK(side.delta() == 0.0);
}

}  // namespace

TEST_CASE("27_side_session_rows_equal_the_profiles_of_each_side") {
  uint64_t seed = 1;
  for (int rep = 0; rep < 25; ++rep)
    for (double tick : {0.25, 0.1})
      for (int64_t tpr : {1, 3}) {
        side_session_case(false, Distribute::close, tick, tpr, seed++);
        for (Distribute d : {Distribute::close, Distribute::hlc3, Distribute::uniform, Distribute::legacy})
          side_session_case(true, d, tick, tpr, seed++);
      }
}

TEST_CASE("27_side_rows_checked_as_the_live_session_checks_them") {
  const double v[] = {10.0, 10.0}, b_ok[] = {4.0, 0.0}, s_ok[] = {6.0, 10.0};
  CHECK_NOTHROW(cpu::check_side_rows(true, 2, v, b_ok, s_ok, Fixed{}, Fixed{}, -1));
  const double b_tiny[] = {1e-12, 0.0};
  CHECK_THROWS_WITH_AS(cpu::check_side_rows(true, 2, v, b_tiny, s_ok, Fixed{}, Fixed{}, -1, 5),
                       doctest::Contains("buy_volume[5]=9.9999999999999998e-13 is below 2**-32"), ValueError);
  const double s_over[] = {6.5, 10.0};
  CHECK_THROWS_WITH_AS(cpu::check_side_rows(true, 2, v, b_ok, s_over, Fixed{}, Fixed{}, -1),
                       doctest::Contains("buy_volume[0] + sell_volume[0] = 4 + 6.5 is more than volume[0] = 10"),
                       ValueError);
  const double s_nan[] = {NAN, 0.0};
  CHECK_THROWS_WITH_AS(cpu::check_side_rows(true, 2, v, b_ok, s_nan, Fixed{}, Fixed{}, -1),
                       doctest::Contains("sell_volume[0] must be finite and >= 0"), ValueError);
  // trades: the volume or 0, one of them
  const double tb[] = {10.0, 0.0}, ts[] = {0.0, 10.0}, both[] = {10.0, 10.0}, part[] = {3.0, 0.0};
  CHECK_NOTHROW(cpu::check_side_rows(false, 2, v, tb, ts, Fixed{}, Fixed{}, -1));
  CHECK_THROWS_WITH_AS(cpu::check_side_rows(false, 2, v, both, ts, Fixed{}, Fixed{}, -1),
                       doctest::Contains("side[1]"), ValueError);
  CHECK_THROWS_WITH_AS(cpu::check_side_rows(false, 2, v, part, ts, Fixed{}, Fixed{}, -1),
                       doctest::Contains("side[0]"), ValueError);
  // a session's side total past 2**53
  const double big_v[] = {9007199254740992.0, 9007199254740992.0}, big_b[] = {9007199254740992.0, 1.0},
               zero[] = {0.0, 0.0};
  CHECK_THROWS_WITH_AS(cpu::check_side_rows(true, 2, big_v, big_b, zero, Fixed{}, Fixed{}, 3),
                       doctest::Contains("buy_volume: volume of session 3 sums past 2**53"), ValueError);
}
