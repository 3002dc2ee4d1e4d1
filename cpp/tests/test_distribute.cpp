// cpp/tests/test_distribute.cpp — core/distribute.hpp and core/source.hpp: one bar's volume on the ladder.
// Contract: close / hlc3 / uniform / legacy shares against hand values and reference.hpp's brute force.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "core/distribute.hpp"
#include "core/source.hpp"
#include "reference.hpp"

using namespace vpoc;
using ref::u128;

namespace {
u128 as_u128(const Fixed& f) { return (u128(f.hi) << 64) | f.lo; }
constexpr u128 kOne = u128(1) << 64;

// Every add(row, share) call of one distribution, in call order.
struct Calls {
  std::vector<std::pair<int64_t, u128>> list;
  std::map<int64_t, u128> rows() const {
    std::map<int64_t, u128> m;
    for (const auto& [r, u] : list) m[r] += u;
    return m;
  }
  u128 total() const {
    u128 t = 0;
    for (const auto& c : list) t += c.second;
    return t;
  }
  auto adder() {
    return [this](int64_t r, const Fixed& x) {
      list.emplace_back(r, as_u128(x));
      return true;
    };
  }
};

// One bar (or trade) as float64 columns, read through core/source.hpp.
struct OneBar {
  double h, l, c, o, v;
  InputView view(Distribute d, bool bars = true, bool has_open = true) const {
    InputView in;
    in.bars = bars;
    in.distribute = d;
    in.price = &c;
    in.high = &h;
    in.low = &l;
    in.close = &c;
    in.open = has_open ? &o : nullptr;
    in.volume = &v;
    return in;
  }
};

std::map<int64_t, u128> emit(const OneBar& b, Distribute d, double tick, int64_t tpr, bool bars = true) {
  Options opt;
  opt.tick_size = tick;
  opt.ticks_per_row = tpr;
  const auto src = make_source<double, double>(b.view(d, bars), opt, 0);
  const Item it = src.item(0);
  const auto L = distribute::LegacyLadder::make(Source<double, double>::legacy_lo(it),
                                                Source<double, double>::legacy_hi(it), tick);
  Calls calls;
  src.emit(it, L, calls.adder());
  int64_t lo = 0, hi = -1;
  src.rows(it, L, lo, hi);  // rows() names exactly the rows emit() touches
  const auto m = calls.rows();
  REQUIRE(!m.empty());
  CHECK(m.begin()->first == lo);
  CHECK(m.rbegin()->first == hi);
  return m;
}

ref::Profile ref_profile(const OneBar& b, ref::Mode mode, double tick, int64_t tpr) {
  return ref::profile({ref::Row{b.h, b.l, b.c, b.o, b.v}}, 1, mode, tick, tpr);
}
}  // namespace

TEST_CASE("24_5_distribute_trades_close_hlc3_hand_values") {
  // ES: high 6002, low 6000, close 6001.25 -> hlc3 = 6001.0833 (tick 24004, price 6001.0)
  const OneBar b{6002.0, 6000.0, 6001.25, 6000.0, 5.0};
  CHECK(emit(b, Distribute::close, 0.25, 1) == std::map<int64_t, u128>{{24005, 5 * kOne}});
  CHECK(emit(b, Distribute::hlc3, 0.25, 1) == std::map<int64_t, u128>{{24004, 5 * kOne}});
  CHECK(emit(b, Distribute::close, 0.25, 4) == std::map<int64_t, u128>{{6001, 5 * kOne}});
  CHECK(emit(b, Distribute::hlc3, 0.25, 4) == std::map<int64_t, u128>{{6001, 5 * kOne}});
  CHECK(emit(b, Distribute::close, 0.25, 1, /*bars=*/false) == std::map<int64_t, u128>{{24005, 5 * kOne}});
  // negative prices: high -1, low -3, close -2.75: hlc3 = -2.25 (tick -9), close tick -11
  const OneBar n{-1.0, -3.0, -2.75, -3.0, 2.5};
  CHECK(emit(n, Distribute::close, 0.25, 1) == std::map<int64_t, u128>{{-11, 2 * kOne + kOne / 2}});
  CHECK(emit(n, Distribute::hlc3, 0.25, 1) == std::map<int64_t, u128>{{-9, 2 * kOne + kOne / 2}});
  CHECK(emit(n, Distribute::close, 0.25, 2) == std::map<int64_t, u128>{{-6, 2 * kOne + kOne / 2}});
  CHECK(emit(n, Distribute::hlc3, 0.25, 2) == std::map<int64_t, u128>{{-5, 2 * kOne + kOne / 2}});
  // hlc3 on a half tick rounds to the even tick: (0.75 + 0 + 0.375) / 3 = 0.375 -> 1.5 ticks -> 2
  const OneBar h{0.75, 0.0, 0.375, 0.0, 1.0};
  CHECK(emit(h, Distribute::hlc3, 0.25, 1) == std::map<int64_t, u128>{{2, kOne}});
  // decimal tick: hlc3 of (1.17, 1.11, 1.15) = 1.1433.. -> tick 114
  const OneBar d{1.17, 1.11, 1.15, 1.11, 3.0};
  CHECK(emit(d, Distribute::hlc3, 0.01, 1) == std::map<int64_t, u128>{{114, 3 * kOne}});
  CHECK(emit(d, Distribute::close, 0.01, 1) == std::map<int64_t, u128>{{115, 3 * kOne}});
}

TEST_CASE("24_5_distribute_uniform_exact_split_hand_values") {
  // ticks 23999..24002 (n = 4), volume 7: 1.75 each
  const OneBar b{6000.5, 5999.75, 6000.0, 6000.0, 7.0};
  CHECK(emit(b, Distribute::uniform, 0.25, 1) ==
        std::map<int64_t, u128>{{23999, 7 * kOne / 4}, {24000, 7 * kOne / 4}, {24001, 7 * kOne / 4},
                                {24002, 7 * kOne / 4}});
  // rows of 2 ticks: rows 11999 (ticks 23998..23999) and 12000, 12001
  CHECK(emit(b, Distribute::uniform, 0.25, 2) ==
        std::map<int64_t, u128>{{11999, 7 * kOne / 4}, {12000, 7 * kOne / 2}, {12001, 7 * kOne / 4}});
  // volume 1 over 3 ticks: the one left-over unit on the lowest tick
  const OneBar c{-0.5, -1.0, -0.75, -1.0, 1.0};
  CHECK(emit(c, Distribute::uniform, 0.25, 1) ==
        std::map<int64_t, u128>{{-4, 6148914691236517206u}, {-3, 6148914691236517205u}, {-2, 6148914691236517205u}});
  // 10 units over ticks -2..1 (4 ticks): 3, 3, 2, 2 -> rows of 2: row -1 gets 6, row 0 gets 4
  Calls calls;
  CHECK(distribute::uniform(-2, 1, fixed::Split::from_units(10), 2, calls.adder()));
  CHECK(calls.rows() == std::map<int64_t, u128>{{-1, 6}, {0, 4}});
  Calls ticks;
  CHECK(distribute::uniform(-2, 1, fixed::Split::from_units(10), 1, ticks.adder()));
  CHECK(ticks.rows() == std::map<int64_t, u128>{{-2, 3}, {-1, 3}, {0, 2}, {1, 2}});
}

TEST_CASE("24_5_distribute_uniform_brute_force_rows_and_sums") {
  std::mt19937_64 rng(4);
  std::uniform_int_distribution<int64_t> tick(-60, 60);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 4000; ++trial) {
    int64_t tl = tick(rng), th = tick(rng);
    if (tl > th) std::swap(tl, th);
    const int64_t tpr = 1 + trial % 5;
    const double v = trial % 3 ? std::floor(u(rng) * 100) : std::ldexp(u(rng), trial % 40 - 20);
    const u128 V = ref::units(v);
    const auto n = static_cast<u128>(th - tl + 1);
    std::map<int64_t, u128> want;
    for (int64_t t = tl; t <= th; ++t) want[ref::floor_div(t, tpr)] += V / n + (u128(t - tl) < V % n ? 1 : 0);
    Calls calls;
    REQUIRE(distribute::uniform(tl, th, fixed::from_double(v), tpr, calls.adder()));
    REQUIRE(calls.rows() == want);
    REQUIRE(calls.total() == V);
    // through the Source: the bar's low / high are its ticks' prices
    const OneBar b{static_cast<double>(th) * 0.25, static_cast<double>(tl) * 0.25, static_cast<double>(tl) * 0.25,
                   static_cast<double>(th) * 0.25, v};
    REQUIRE(emit(b, Distribute::uniform, 0.25, tpr) == want);
  }
}

TEST_CASE("24_5_distribute_uniform_diff_running_sum_is_the_shares") {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t tl = static_cast<int64_t>(rng() % 40) - 20, th = tl + static_cast<int64_t>(rng() % 30);
    const double v = trial % 2 ? std::floor(u(rng) * 1000) : u(rng) * 10;
    const u128 V = ref::units(v);
    const auto n = static_cast<u128>(th - tl + 1);
    const auto split = fixed::Split::make(fixed::from_double(v), static_cast<uint64_t>(n));
    std::map<int64_t, u128> diff;
    distribute::uniform_diff(tl, th, split, [&](int64_t t, const Fixed& d) { diff[t] += as_u128(d); });
    u128 running = 0;  // mod 2**128, like the engines' accumulators
    for (int64_t t = tl - 3; t <= th + 3; ++t) {
      running += diff.count(t) ? diff[t] : 0;
      const u128 want = t < tl || t > th ? 0 : V / n + (u128(t - tl) < V % n ? 1 : 0);
      if (running != want) FAIL_CHECK("tick " << t << " of " << tl << ".." << th);
    }
  }
}

TEST_CASE("25_distribute_uniform_diff_with_units_apart_running_sums_are_the_shares") {
  // the CPU's form: 128-bit entries +q / -q and a one-word array of single units; the two running
  // sums together are each tick's share, for whole and fractional volumes, rem 0 or not
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int with_rem = 0, without_rem = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t tl = static_cast<int64_t>(rng() % 40) - 20, th = tl + static_cast<int64_t>(rng() % 70);
    const double v = trial % 3 == 0 ? u(rng) * 10 : std::floor(u(rng) * (trial % 3 == 1 ? 1000 : 4e9));
    const u128 V = ref::units(v);
    const auto n = static_cast<u128>(th - tl + 1);
    const auto split = fixed::Split::make(fixed::from_double(v), static_cast<uint64_t>(n));
    (split.rem ? with_rem : without_rem) += 1;
    std::map<int64_t, u128> diff;
    std::map<int64_t, int64_t> units;
    distribute::uniform_diff(
        tl, th, split, [&](int64_t t, const Fixed& q, bool negate) { diff[t] += negate ? u128(0) - as_u128(q) : as_u128(q); },
        [&](int64_t t, int64_t k) { units[t] += k; });
    u128 running = 0;  // mod 2**128, like the engines' accumulators
    int64_t running_units = 0;
    for (int64_t t = tl - 3; t <= th + 3; ++t) {
      running += diff.count(t) ? diff[t] : 0;
      running_units += units.count(t) ? units[t] : 0;
      REQUIRE(running_units >= 0);
      const u128 want = t < tl || t > th ? 0 : V / n + (u128(t - tl) < V % n ? 1 : 0);
      if (running + u128(running_units) != want) FAIL_CHECK("tick " << t << " of " << tl << ".." << th);
    }
  }
  CHECK(with_rem > 100);
  CHECK(without_rem > 100);
}

TEST_CASE("24_5_distribute_uniform_refuses_2_pow_32_ticks_and_stops_on_false") {
  Calls none;
  CHECK_FALSE(distribute::uniform(0, int64_t(1) << 32, fixed::from_double(1.0), 1, none.adder()));
  CHECK(none.list.empty());
  int calls = 0;
  CHECK_FALSE(distribute::uniform(0, 9, fixed::from_double(1.0), 1, [&](int64_t, const Fixed&) { return ++calls < 3; }));
  CHECK(calls == 3);
}

TEST_CASE("24_5_distribute_legacy_weights_hand_values") {
  CHECK(distribute::legacy_weight(6000.0, 6000.25) == doctest::Approx(1.8).epsilon(1e-15));
  CHECK(distribute::legacy_weight(6000.25, 6000.25) == 2.0);
  // levels 6000, 6000.25, 6000.5 around close 6000.25: weights 1.8, 2, 1.8 (sum 5.6); volume 56
  // -> about 18, 20, 18, the middle (heaviest) level taking the rest so the shares sum to 56
  const auto L = distribute::LegacyLadder::make(6000.0, 6000.5, 0.25);
  CHECK(L.base == 24000);
  CHECK(L.K == 2);
  Calls calls;
  CHECK(distribute::legacy(L, 6000.0, 6000.5, 6000.25, 56.0, 1, calls.adder()));
  const auto m = calls.rows();
  REQUIRE(m.size() == 3);
  CHECK(ref::to_double(m.at(24000)) == doctest::Approx(18.0).epsilon(1e-14));
  CHECK(ref::to_double(m.at(24002)) == doctest::Approx(18.0).epsilon(1e-14));
  CHECK(m.at(24001) == 56 * kOne - m.at(24000) - m.at(24002));
  const double w = 1.0 + 1.0 / 1.25;  // float64 weight of a level 0.25 from the close
  CHECK(m.at(24000) == ref::units(56.0 * w / (w + 2.0 + w)));
  CHECK(calls.total() == 56 * kOne);
  CHECK(calls.list.back().first == 24001);  // the heaviest level comes last
}

TEST_CASE("24_5_distribute_legacy_equal_weights_first_level_takes_the_rest") {
  // close 6000.125 is as near 6000 as 6000.25: the first (lower) of the two heaviest takes the rest
  const auto L = distribute::LegacyLadder::make(6000.0, 6000.5, 0.25);
  Calls calls;
  CHECK(distribute::legacy(L, 6000.0, 6000.5, 6000.125, 1.0, 1, calls.adder()));
  const double w0 = 1.0 + 1.0 / 1.125, w2 = 1.0 + 1.0 / 1.375, wsum = w0 + w0 + w2;
  const auto m = calls.rows();
  CHECK(m.at(24001) == ref::units(w0 / wsum));
  CHECK(m.at(24002) == ref::units(w2 / wsum));
  CHECK(m.at(24000) == kOne - ref::units(w0 / wsum) - ref::units(w2 / wsum));
  CHECK(m.at(24000) != m.at(24001));  // the rest differs from the float share here
}

TEST_CASE("24_5_distribute_legacy_bar_without_level_goes_to_close_tick") {
  // session prices 6000.05 .. 6000.2 lie between levels 6000 and 6000.25
  const auto L = distribute::LegacyLadder::make(6000.05, 6000.2, 0.25);
  CHECK(L.base == 24000);
  CHECK(L.K == 1);
  Calls calls;
  CHECK(distribute::legacy(L, 6000.05, 6000.2, 6000.1, 3.0, 1, calls.adder()));
  CHECK(calls.rows() == std::map<int64_t, u128>{{24000, 3 * kOne}});  // rint(24000.4)
  Calls up;
  CHECK(distribute::legacy(L, 6000.15, 6000.2, 6000.2, 3.0, 1, up.adder()));
  CHECK(up.rows() == std::map<int64_t, u128>{{24001, 3 * kOne}});  // rint(24000.8)
}

TEST_CASE("24_5_distribute_legacy_ladder_range_brute_force_decimal_ticks") {
  std::mt19937_64 rng(23);
  for (double tick : {0.25, 0.1, 0.01, 0.05, 0.3}) {
    std::uniform_int_distribution<int64_t> k(-3000, 3000);
    for (int trial = 0; trial < 3000; ++trial) {
      double lo = static_cast<double>(k(rng)) * tick, hi = lo + static_cast<double>(rng() % 40) * tick;
      if (trial % 3 == 0) lo += tick * 0.37;  // off the grid
      if (trial % 4 == 0) hi -= tick * 0.41;
      if (hi < lo) hi = lo;
      const auto L = distribute::LegacyLadder::make(lo, hi, tick);
      REQUIRE(L.base_price == std::floor(lo / tick));
      REQUIRE(L.K == static_cast<int64_t>(std::ceil(hi / tick)) - L.base);
      for (int j = 0; j < 5; ++j) {
        const double a = lo + (hi - lo) * static_cast<double>(rng() % 1000) / 1000.0;
        const double b = a + (hi - a) * static_cast<double>(rng() % 1000) / 1000.0;
        int64_t ka = 0, kb = 0;
        L.range(a, b, ka, kb);
        for (int64_t kk = 0; kk <= L.K; ++kk) {
          const double level = L.base_price * tick + static_cast<double>(kk) * tick;
          const bool inside = level >= a && level <= b;
          if (inside != (kk >= ka && kk <= kb)) FAIL_CHECK("tick " << tick << " level " << level << " [" << a << ", " << b << "]");
        }
      }
    }
  }
}

TEST_CASE("24_5_distribute_legacy_brute_force_shares") {
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (double tick : {0.25, 0.1, 0.01}) {
    for (int trial = 0; trial < 2000; ++trial) {
      const double base = static_cast<double>(static_cast<int64_t>(rng() % 2000) - 1000) * tick;
      const double l = base + (trial % 2 ? 0.0 : tick * u(rng)), h = l + tick * static_cast<double>(rng() % 12) * u(rng) * 2;
      const double c = l + (h - l) * u(rng), o = l + (h - l) * u(rng);
      const double v = trial % 3 ? std::floor(u(rng) * 500) : u(rng) * 50;
      const int64_t tpr = 1 + trial % 3;
      const OneBar b{h, l, c, o, v};
      const auto want = ref_profile(b, ref::Mode::legacy, tick, tpr);
      const auto got = emit(b, Distribute::legacy, tick, tpr);
      if (got != std::map<int64_t, u128>(want.begin(), want.end()))
        FAIL_CHECK("tick " << tick << " bar h=" << h << " l=" << l << " c=" << c << " o=" << o << " v=" << v);
    }
  }
}

TEST_CASE("24_5_distribute_all_modes_brute_force_through_source") {
  std::mt19937_64 rng(41);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::pair<Distribute, ref::Mode> modes[] = {{Distribute::close, ref::Mode::close},
                                                    {Distribute::hlc3, ref::Mode::hlc3},
                                                    {Distribute::uniform, ref::Mode::uniform},
                                                    {Distribute::legacy, ref::Mode::legacy}};
  for (double tick : {0.25, 0.01, 0.1, 0.5}) {
    for (int trial = 0; trial < 1500; ++trial) {
      const double l = static_cast<double>(static_cast<int64_t>(rng() % 4000) - 2000) * tick;
      const double h = l + static_cast<double>(rng() % 20) * tick;
      const double c = l + std::round((h - l) / tick * u(rng)) * tick;
      const OneBar b{h, l, c, l, trial % 2 ? std::floor(u(rng) * 100) : u(rng)};
      const int64_t tpr = 1 + trial % 4;
      for (const auto& [d, mode] : modes) {
        const auto want = ref_profile(b, mode, tick, tpr);
        if (emit(b, d, tick, tpr) != std::map<int64_t, u128>(want.begin(), want.end()))
          FAIL_CHECK("mode " << static_cast<int>(d) << " tick " << tick << " h=" << h << " l=" << l << " c=" << c);
      }
    }
  }
}
