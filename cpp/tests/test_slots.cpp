// cpp/tests/test_slots.cpp — phase A's instruction-set variants (cpu/slots.hpp) against the scalar one.
// Contract: on random and edge blocks every variant the CPU runs gives the same return, slots, range, flags.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/slots.hpp"
#include "cpu/slots_impl.hpp"
#include "phase_a.hpp"

using namespace vpoc::cpu;

#if defined(VPOC_HAVE_AVX2)
namespace {

using test_phase_a::Out;

// Equal results: the return; when it is true, the slots, the range (numerically: a zero's sign
// is not part of it) and the whole flag.
void same(const Out& a, const Out& b, const char* what) {
  INFO(what);
  REQUIRE(a.ok == b.ok);
  if (!a.ok) return;
  CHECK(a.slot == b.slot);
  CHECK(a.mn == b.mn);
  CHECK(a.mx == b.mx);
  CHECK(a.whole == b.whole);
}

using test_phase_a::prices;

template <class V>
std::vector<V> volumes(std::mt19937_64& rng, int n, bool bad) {
  std::uniform_int_distribution<int> kind(0, 99), whole(0, 500);
  std::uniform_real_distribution<double> frac(0.0, 100.0);
  std::vector<V> v(static_cast<size_t>(n));
  for (auto& x : v) {
    const int k = kind(rng);
    double y = whole(rng);
    if (k < 15) y = frac(rng);
    else if (k < 18) y = 0x1p23 + whole(rng);  // float32's whole-number limit
    else if (k < 20) y = 0x1p-40;               // below fixed point's smallest unit
    else if (k == 20) y = -0.0;
    x = static_cast<V>(y);
    if (bad && k == 99) x = std::numeric_limits<V>::quiet_NaN();
    if (bad && k == 98) x = static_cast<V>(0x1p60);
    if (bad && k == 97) x = V(-1);
  }
  return v;
}

template <class P, class F>
Out run(const std::vector<P>& p, F&& f) {
  Out o;
  o.slot.assign(p.size(), 0);
  o.ok = f(p.data(), static_cast<int>(p.size()), o.slot.data(), o.mn, o.mx, o.whole);
  return o;
}

const int kSizes[] = {0, 1, 7, 8, 9, 15, 16, 17, 33, 1000, 1024};

template <class P>
void check_slots(uint64_t seed) {
  std::mt19937_64 rng(seed);
  const double invs[] = {4.0, 1.0, 10.0, 100.0, 1.0 / 3.0, 0.5};
  for (const int n : kSizes)
    for (const double inv : invs)
      for (int r = 0; r < 6; ++r) {
        const bool bad = r % 3 == 2;
        const std::vector<P> p = prices<P>(rng, n, inv, bad);
        const double origin = r % 2 ? 40000.0 - 64 : -0x1p40;
        const auto with = [&](auto fn) {
          return run(p, [&](const P* q, int m, int32_t* s, double& mn, double& mx, bool& wh) {
            return fn(q, m, inv, origin, s, mn, mx, wh);
          });
        };
        const Out ref = with([](auto&&... a) { return simd::slots_scalar(a...); });
        if (simd::have_avx2()) same(ref, with([](auto&&... a) { return simd::slots_avx2(a...); }), "avx2");
#if defined(VPOC_HAVE_AVX512_SLOTS)
        if (simd::have_avx512()) same(ref, with([](auto&&... a) { return simd::slots_avx512(a...); }), "avx512");
#endif
        same(ref, with([](auto&&... a) { return block_slots(a...); }), "block_slots");
      }
}

// The float32 cases of the variant tests: every size, three inverse ticks, 8 draws (a bad price
// and a bad volume among them), two origins; fn(prices, volumes, n, inv, draw, origin).
template <class F>
void for_f32_cases(std::mt19937_64& rng, F&& fn) {
  const float invs[] = {4.0f, 1.0f, 8.0f};
  for (const int n : kSizes)
    for (const float inv : invs)
      for (int r = 0; r < 8; ++r) {
        const bool bad = r % 4 == 3;
        const std::vector<float> p = prices<float>(rng, n, inv, bad);
        const std::vector<float> v = volumes<float>(rng, n, bad || r % 4 == 2);
        const int64_t origin = r % 2 ? 40000 - 64 : -(int64_t(1) << 29);
        fn(p, v, n, inv, r, origin);
      }
}

}  // namespace

TEST_CASE("25_slots_variants_double_prices") { check_slots<double>(1); }
TEST_CASE("25_slots_variants_float_prices") { check_slots<float>(2); }

TEST_CASE("25_slots_f32_variants_with_volume_check") {
  if (!simd::have_avx2()) return;
  std::mt19937_64 rng(3);
  for_f32_cases(rng, [&](const std::vector<float>& p, const std::vector<float>& v, int, float inv, int, int64_t origin) {
    for (const bool with_volumes : {false, true}) {
      const auto with = [&](auto fn, VolumeCheck& vc) {
        return run(p, [&](const float* q, int m, int32_t* s, double& mn, double& mx, bool& wh) {
          return fn(q, m, inv, origin, s, mn, mx, wh, with_volumes ? v.data() : nullptr,
                    with_volumes ? &vc : nullptr);
        });
      };
      VolumeCheck a, b;
      const Out ref = with([](auto&&... x) { return simd::slots_f32_avx2(x...); }, a);
#if defined(VPOC_HAVE_AVX512_SLOTS)
      if (!simd::have_avx512()) continue;
      const Out got = with([](auto&&... x) { return simd::slots_f32_avx512(x...); }, b);
      same(ref, got, "f32 avx512");
      if (ref.ok && with_volumes) {
        CHECK(a.ok == b.ok);
        if (a.ok) {
          CHECK(a.whole == b.whole);
          CHECK(a.vmax == b.vmax);
        }
      }
#endif
    }
  });
}

TEST_CASE("25_volumes_ok_variants") {
  std::mt19937_64 rng(4);
  const auto check = [&](auto tag) {
    using V = decltype(tag);
    for (const int n : kSizes)
      for (int r = 0; r < 8; ++r) {
        const std::vector<V> v = volumes<V>(rng, n, r % 4 == 3);
        double m0 = 0, m1 = 0, m2 = 0;
        bool w0 = false, w1 = false, w2 = false;
        const bool ok0 = simd::volumes_ok_impl(v.data(), n, m0, w0);
        const bool ok1 = volumes_ok(v.data(), n, m1, w1);  // the variant this CPU runs
        REQUIRE(ok0 == ok1);
        if (ok0) CHECK((w0 == w1 && m0 == m1));
        if (simd::have_avx2()) {
          const bool ok2 = simd::volumes_ok_avx2(v.data(), n, m2, w2);
          REQUIRE(ok0 == ok2);
          if (ok0) CHECK((w0 == w2 && m0 == m2));
        }
      }
  };
  check(double{});
  check(float{});
}
#endif

// ---- records (block_records*, phase A's hand-off to phase B's records_scatter) ------------------
#if defined(VPOC_HAVE_AVX2)
namespace {

using test_phase_a::same_check;
using test_phase_a::same_records;

template <class V>
void check_records_double(uint64_t seed) {
  std::mt19937_64 rng(seed);
  const double invs[] = {4.0, 1.0, 10.0, 1.0 / 3.0};
  for (const int n : kSizes)
    for (const double inv : invs)
      for (int r = 0; r < 6; ++r) {
        const bool bad = r % 3 == 2;
        const std::vector<double> p = prices<double>(rng, n, inv, bad);
        std::vector<V> v;
        if constexpr (std::is_floating_point_v<V>) {
          v = volumes<V>(rng, n, r % 2 == 1);
        } else {
          std::uniform_int_distribution<int64_t> d(0, r % 2 ? (int64_t{1} << 31) + 5 : 1000);
          for (int j = 0; j < n; ++j) v.push_back(static_cast<V>(d(rng)));
          // now and then a negative volume, one at 2**53 or past it (int64): the OR rule's cases
          if (n > 0 && r % 3 == 2) v[static_cast<size_t>(rng() % static_cast<uint64_t>(n))] = V(-1);
          if (n > 0 && r % 3 == 1 && sizeof(V) == 8)
            v[static_cast<size_t>(rng() % static_cast<uint64_t>(n))] = static_cast<V>((int64_t{1} << 53) + (r % 2));
        }
        const double origin = r % 2 ? 40000.0 - 64 : -0x1p40;
        const Out ref = run(p, [&](const double* q, int m, int32_t* s, double& mn, double& mx, bool& wh) {
          return simd::slots_scalar(q, m, inv, origin, s, mn, mx, wh);
        });
        double vmax = 0;
        bool vwhole = false;
        const bool vok = simd::volumes_ok_impl(v.data(), n, vmax, vwhole);
        for (const int shift : {0, 5, 6}) {
          std::vector<uint64_t> rec(static_cast<size_t>(n));
          double mn = 0, mx = 0;
          bool wh = false;
          VolumeCheck vc;
          const bool ok = block_records(p.data(), v.data(), n, inv, origin, shift, rec.data(), mn, mx, wh, &vc);
          // a variant for AVX-512 (records_512) and one for AVX2 (records_avx2)
          if (!simd::have_avx2()) {
            CHECK(!ok);
            continue;
          }
          same_records(ref, ok, rec, mn, mx, wh, v, shift, "block_records");
          if (ok) same_check(vc, vok, vmax, vwhole);
          std::vector<uint64_t> rec2(static_cast<size_t>(n));
          double mn2 = 0, mx2 = 0;
          bool wh2 = false;
          VolumeCheck vc2;
          const bool ok2 = simd::records_avx2(p.data(), v.data(), n, inv, origin, shift, rec2.data(), mn2, mx2, wh2, &vc2);
          same_records(ref, ok2, rec2, mn2, mx2, wh2, v, shift, "records avx2");
          if (ok2) same_check(vc2, vok, vmax, vwhole);
        }
      }
}

}  // namespace

TEST_CASE("25_records_double_prices") {
  check_records_double<double>(11);
  check_records_double<float>(12);
  check_records_double<int32_t>(13);
  check_records_double<int64_t>(14);
}

TEST_CASE("25_records_f32_variants") {
  if (!simd::have_avx2()) return;
  std::mt19937_64 rng(15);
  for_f32_cases(rng, [&](const std::vector<float>& p, const std::vector<float>& v, int n, float inv, int r, int64_t origin) {
    VolumeCheck a;
    const Out ref = run(p, [&](const float* q, int m, int32_t* s, double& mn, double& mx, bool& wh) {
      return simd::slots_f32_avx2(q, m, inv, origin, s, mn, mx, wh, v.data(), &a);
    });
    for (const int shift : {0, 5, 6}) {
      const auto check = [&](auto fn, const char* what) {
        std::vector<uint64_t> rec(static_cast<size_t>(n));
        double mn = 0, mx = 0;
        bool wh = false;
        VolumeCheck b;
        const bool ok = fn(p.data(), v.data(), n, inv, origin, shift, rec.data(), mn, mx, wh, b);
        same_records(ref, ok, rec, mn, mx, wh, v, shift, what);
        INFO(std::string(what) << " n " << n << " r " << r);
        if (ok && n > 0) same_check(b, a.ok, a.vmax, a.whole);  // n = 0: v.data() may be null (no check)
      };
      check([](auto&&... x) { return simd::records_f32_avx2(x...); }, "records f32 avx2");
      check([](auto&&... x) { return block_records_f32(x...); }, "block_records_f32");
#if defined(VPOC_HAVE_AVX512_SLOTS)
      if (simd::have_avx512()) check([](auto&&... x) { return simd::records_f32_avx512(x...); }, "records f32 avx512");
#endif
    }
  });
}
#endif

#if defined(VPOC_HAVE_AVX2) && defined(VPOC_HAVE_AVX512_SLOTS)
// Merged records (block_records_f32 with a count): the runs of the slot variant's slots, in order,
// each with the volume words' sum before the next run (mod 2**32); the same range, flags and check.
TEST_CASE("25_records_f32_merged_runs") {
  if (!simd::have_avx512()) return;
  std::mt19937_64 rng(16);
  const int sizes[] = {0, 1, 2, 15, 16, 17, 31, 32, 33, 100, 1000, 1024};
  for (const int n : sizes)
    for (int r = 0; r < 12; ++r) {
      // run lengths 1 .. 1 + 3r (r = 0: every trade its own run), prices on the grid, whole volumes
      std::vector<float> p, v;
      std::uniform_int_distribution<int> len(1, 1 + 3 * r), step(-2, 2), vol(0, 1000);
      float price = 4000.0f;
      while (static_cast<int>(p.size()) < n) {
        price += 0.25f * static_cast<float>(step(rng));
        for (int k = len(rng); k > 0 && static_cast<int>(p.size()) < n; --k) {
          p.push_back(price);
          v.push_back(static_cast<float>(vol(rng)));
        }
      }
      if (r == 11 && n > 5) p[3] = std::numeric_limits<float>::quiet_NaN();  // refused as by the slot variant
      const int64_t origin = 16000 - 64;
      VolumeCheck a;
      const Out ref = run(p, [&](const float* q, int m, int32_t* s, double& mn, double& mx, bool& wh) {
        return simd::slots_f32_avx2(q, m, 4.0f, origin, s, mn, mx, wh, v.data(), &a);
      });
      for (const int shift : {0, 5, 6}) {
        INFO("n " << n << " r " << r << " shift " << shift);
        std::vector<uint64_t> rec(static_cast<size_t>(n) + 1);
        double mn = 0, mx = 0;
        bool wh = false;
        VolumeCheck b;
        int count = -2;
        const bool ok = block_records_f32(p.data(), v.data(), n, 4.0f, origin, shift, rec.data(), mn, mx, wh, b, &count);
        REQUIRE(ok == ref.ok);
        if (!ok) continue;
        CHECK(mn == ref.mn);
        CHECK(mx == ref.mx);
        CHECK(wh == ref.whole);
        if (n > 0) same_check(b, a.ok, a.vmax, a.whole);
        std::vector<uint64_t> want;  // the model: a record at each run's end
        uint32_t sum = 0;
        for (int j = 0; j < n; ++j) {
          sum += static_cast<uint32_t>(v[static_cast<size_t>(j)]);
          if (j + 1 == n || ref.slot[static_cast<size_t>(j + 1)] != ref.slot[static_cast<size_t>(j)])
            want.push_back(static_cast<uint32_t>(static_cast<uint32_t>(ref.slot[static_cast<size_t>(j)]) << shift) |
                           uint64_t{sum} << 32);
        }
        REQUIRE(count == static_cast<int>(want.size()));
        CHECK(std::vector<uint64_t>(rec.begin(), rec.begin() + count) == want);
      }
    }
}
#endif
