// cpp/tests/test_records_blocks.cpp — block_records (float64 prices, any volume) and its AVX2 variant on whole blocks.
// Contract: records == the scalar slot variant's slots (shifted) beside volume_word, same range and flags, volumes_ok's check.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu/slots.hpp"
#include "cpu/slots_impl.hpp"
#include "phase_a.hpp"

using namespace vpoc::cpu;

#if defined(VPOC_HAVE_AVX2)
namespace {

template <class V>
std::vector<V> some_volumes(std::mt19937_64& rng, int n, int r) {
  std::vector<V> v(static_cast<size_t>(n));
  std::uniform_int_distribution<int64_t> d(0, r % 2 ? (int64_t{1} << 31) + 5 : 1000);
  for (auto& x : v) x = static_cast<V>(d(rng));
  if constexpr (std::is_floating_point_v<V>)
    if (r % 3 == 1) v[static_cast<size_t>(rng() % static_cast<uint64_t>(n))] = V(0.375);
  if (r % 3 == 2) v[static_cast<size_t>(rng() % static_cast<uint64_t>(n))] = V(-1);
  return v;
}

template <class V, class F>
void check_against_scalar(F&& records, const char* what, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (const int n : {1, 3, 4, 5, 255, 256, 257, 511, 1000, 1024})
    for (const double inv : {4.0, 1.0 / 3.0})
      for (int r = 0; r < 6; ++r) {
        INFO(std::string(what) << " n " << n << " inv " << inv << " r " << r);
        const std::vector<double> p = test_phase_a::prices<double>(rng, n, inv, false, false);  // in range
        const std::vector<V> v = some_volumes<V>(rng, n, r);
        const double origin = r % 2 ? 40000.0 - 64 : -0x1p40;
        std::vector<int32_t> slot(static_cast<size_t>(n));
        double rmn = 0, rmx = 0, vmax = 0;
        bool rwh = false, vwhole = false;
        REQUIRE(simd::slots_scalar(p.data(), n, inv, origin, slot.data(), rmn, rmx, rwh));
        const bool vok = simd::volumes_ok_impl(v.data(), n, vmax, vwhole);
        for (const int shift : {0, 5, 6}) {
          std::vector<uint64_t> rec(static_cast<size_t>(n));
          double mn = 0, mx = 0;
          bool wh = false;
          VolumeCheck vc;
          const bool ok = records(p.data(), v.data(), n, inv, origin, shift, rec.data(), mn, mx, wh, &vc);
          test_phase_a::same_records(test_phase_a::Out{true, rwh, rmn, rmx, slot}, ok, rec, mn, mx, wh, v, shift, what);
          test_phase_a::same_check(vc, vok, vmax, vwhole);
        }
      }
}

}  // namespace

TEST_CASE("25_block_records_on_whole_blocks") {
  if (!simd::have_avx2()) return;  // no variant: the caller takes the slots
  const auto records = [](auto&&... x) { return block_records(x...); };
  check_against_scalar<double>(records, "double volumes", 1);
  check_against_scalar<float>(records, "float volumes", 2);
  check_against_scalar<int32_t>(records, "int32 volumes", 3);
  check_against_scalar<int64_t>(records, "int64 volumes", 4);
}

TEST_CASE("25_records_avx2_on_whole_blocks") {
  // block_records' choice on CPUs without AVX-512, run here on any AVX2 CPU
  if (!simd::have_avx2()) return;
  const auto records = [](auto&&... x) { return simd::records_avx2(x...); };
  check_against_scalar<double>(records, "avx2 double volumes", 11);
  check_against_scalar<float>(records, "avx2 float volumes", 12);
  check_against_scalar<int32_t>(records, "avx2 int32 volumes", 13);
  check_against_scalar<int64_t>(records, "avx2 int64 volumes", 14);
}
#endif
