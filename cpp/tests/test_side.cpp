// cpp/tests/test_side.cpp — core/side.hpp codes, cpu/side_planes.hpp, and a sided RowWindow's drain.
// Contract: codes per byte as vpoc._side reads them; planes drain to volume = U + B + S exactly, buy, sell each rounded once.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/side.hpp"
#include "cpu/row_window.hpp"
#include "cpu/side_planes.hpp"

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
    std::vector<double> out, ob, os;
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
