// cpu/bar_slots.cpp — phase A of bar binning: branch-free loops the compiler vectorises (AVX2 / v4 variants).
// Contract: bar_slots.hpp; the same checks and rows as histogram.cpp's per-bar loop, bit for bit.
#include "cpu/bar_slots.hpp"

#include <math.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "core/ladder.hpp"
#include "cpu/isa.hpp"
#include "cpu/slots_impl.hpp"

// Compiled for AVX2 too (and, with GCC 12+, for x86-64-v4: AVX-512, which runs the uniform loop
// twice as fast: 1.9 vs 4.2 ns a bar on a Xeon): the same loop inlined (flatten) into a function of
// each target, the variant picked at every call by simd::isa() (cpu/isa.hpp, VPOC_CPU_ISA), as
// cpu/grid.cpp does. Every variant does the same IEEE operations: identical results.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(VPOC_NO_CLONES)
#define VPOC_BAR_AVX2 1
#if __GNUC__ >= 12  // (GCC 12: arch=x86-64-v4 callers inline the default-target loop)
#define VPOC_BAR_V4 1
#endif
#endif

namespace vpoc::cpu {
namespace {

constexpr double kSlotClamp = 2e9;     // a session is at most 1e9 rows wide: clamped slots are out
constexpr double kSplitMaxVolume = 2147483648.0;  // 2**31: volume // ticks fits int32, v / n exact

// x as int32, clamped to its range (NaN to the low end): every conversion here is defined, so the
// compiler may assume nothing of it. Two min / max instructions in the vectorised loop.
inline int32_t to_i32(double x) {
  return static_cast<int32_t>(std::min(2147483647.0, std::max(-2147483648.0, x)));  // NaN: max gives -2**31
}

// The volume as float64 for the split, and whether the table split takes it (a whole volume below
// 2**31; a negative one fails the volume check, which refuses the block). Integers are compared as
// integers: a float64 of an int64 near 2**63 would round.
template <class V>
inline double split_volume(V x, int64_t& takes) {
  if constexpr (std::is_integral_v<V>) {
    takes = static_cast<uint64_t>(x) < static_cast<uint64_t>(kSplitMaxVolume);
    return static_cast<double>(static_cast<int32_t>(x));
  } else {
    const double d = static_cast<double>(x);
    takes = (d >= 0.0) & (d < kSplitMaxVolume) & (static_cast<double>(to_i32(d)) == d);
    return d;
  }
}

template <BarRow R, bool Open, class P, class V>
inline bool slots_loop(const P* h, const P* l, const P* c, const P* o, const V* v, int n, double inv,
                              double limit, double origin, BarSlots& out, double& mn, double& mx, bool& on_grid,
                              VolumeCheck& vc) {
  // Written for the vectoriser: integer reductions (a float min / max reduction is order-sensitive
  // to it), and no floating-point value chosen by a condition (it will not if-convert those); a bad
  // bar's slots may be garbage (NaN converts to INT32_MIN): the block is refused then anyway.
  int64_t ok = 1, grid = 1;
  int32_t lo_min = INT32_MAX, hi_max = INT32_MIN;
  int vok = 1, vwh = 1;  // the volumes' check (volumes_ok's rule) in the same pass
  simd::VolumeAcc<V> vacc = 0;
  for (int j = 0; j < n; ++j) {
    simd::volume_fold(v[j], vok, vwh, vacc);
    const double H = h[j], L = l[j], C = c[j];
    const double qh = H * inv, ql = L * inv, qc = C * inv;
    // |qc| < limit needs no test of its own: L <= C <= H and inv > 0 put qc between ql and qh (a NaN
    // close fails C >= L)
    bool good = (fabs(qh) < limit) & (fabs(ql) < limit) & (H >= L) & (C >= L) & (C <= H);
    if constexpr (Open) {
      const double O = o[j];
      good &= (fabs(O * inv) < limit) & (O >= L) & (O <= H);
    }
    const double rh = ladder::round_half_even_nb(qh), rl = ladder::round_half_even_nb(ql);
    const double rc = ladder::round_half_even_nb(qc);
    grid &= (rh == qh) & (rl == ql) & (rc == qc);
    double a, b;
    if constexpr (R == BarRow::uniform) {
      a = rl, b = rh;
    } else if constexpr (R == BarRow::close) {
      a = b = rc;
    } else {
      a = b = ladder::round_half_even_nb(((H + L + C) / 3.0) * inv);
    }
    a = std::min(kSlotClamp, std::max(-kSlotClamp, a - origin));  // NaN (a bad bar): -kSlotClamp
    b = std::min(kSlotClamp, std::max(-kSlotClamp, b - origin));
    const auto ai = static_cast<int32_t>(a), bi = static_cast<int32_t>(b);
    lo_min = std::min(lo_min, ai);
    hi_max = std::max(hi_max, bi);
    out.lo[j] = ai;
    out.hi[j] = bi;
    if constexpr (R == BarRow::uniform) {
      int64_t takes = 0;
      const double vol = split_volume(v[j], takes);
      // 1 .. 64 ticks; in unsigned arithmetic: clamped slots 4e9 apart wrap there (bi - ai overflowed int)
      takes &= static_cast<uint32_t>(bi) - static_cast<uint32_t>(ai) < static_cast<uint32_t>(kSplitTableMax);
      // clamped into the range where the table split applies (they change nothing where it takes
      // the bar), so every conversion below is defined
      const double ticks = std::min(64.0, std::max(1.0, b - a + 1.0));
      const double vol_c = std::min(2147483647.0, vol);
      // v / n rounded is within 2**-21 of the quotient for v < 2**31, n <= 64: its truncation is
      // the floor (a remainder is at least 1/64 from the next integer)
      const auto q = static_cast<int32_t>(vol_c / ticks);
      const double r = vol_c - static_cast<double>(q) * ticks;
      const auto at = static_cast<int32_t>(ticks * (ticks - 1.0) * 0.5 + r);
      out.whole[j] = q;
      out.split[j] = at | static_cast<int32_t>(takes - 1);  // -1 where the table split does not take it
    }
    ok &= good;
  }
  mn = lo_min;
  mx = hi_max;
  on_grid = grid != 0;
  vc.ok = simd::volume_verdict(v, n, vok, vwh, vacc, vc.vmax, vc.whole);
  return ok != 0;
}

#if defined(VPOC_BAR_V4)
template <BarRow R, bool Open, class P, class V>
__attribute__((target("arch=x86-64-v4"), flatten)) bool slots_v4(const P* h, const P* l, const P* c, const P* o,
                                                                  const V* v, int n, double inv, double limit,
                                                                  double origin, BarSlots& out, double& mn,
                                                                  double& mx, bool& on_grid, VolumeCheck& vc) {
  return slots_loop<R, Open>(h, l, c, o, v, n, inv, limit, origin, out, mn, mx, on_grid, vc);
}
#endif
#if defined(VPOC_BAR_AVX2)
template <BarRow R, bool Open, class P, class V>
__attribute__((target("avx2"), flatten)) bool slots_avx2(const P* h, const P* l, const P* c, const P* o, const V* v,
                                                         int n, double inv, double limit, double origin,
                                                         BarSlots& out, double& mn, double& mx, bool& on_grid,
                                                         VolumeCheck& vc) {
  return slots_loop<R, Open>(h, l, c, o, v, n, inv, limit, origin, out, mn, mx, on_grid, vc);
}
#endif

template <BarRow R, bool Open, class P, class V>
bool slots_of(const P* h, const P* l, const P* c, const P* o, const V* v, int n, double inv, double limit,
              double origin, BarSlots& out, double& mn, double& mx, bool& on_grid, VolumeCheck& vc) {
#if defined(VPOC_BAR_V4)
  static const bool v4 = simd::have_v4();
  if (v4) return slots_v4<R, Open>(h, l, c, o, v, n, inv, limit, origin, out, mn, mx, on_grid, vc);
#endif
#if defined(VPOC_BAR_AVX2)
  static const bool avx2 = simd::isa() >= simd::Isa::avx2;
  if (avx2) return slots_avx2<R, Open>(h, l, c, o, v, n, inv, limit, origin, out, mn, mx, on_grid, vc);
#endif
  return slots_loop<R, Open>(h, l, c, o, v, n, inv, limit, origin, out, mn, mx, on_grid, vc);
}

template <BarRow R, class P, class V>
bool slots_row(const P* h, const P* l, const P* c, const P* o, const V* v, int n, double inv, double limit,
               double origin, BarSlots& out, double& mn, double& mx, bool& on_grid, VolumeCheck& vc) {
  if (o != nullptr) return slots_of<R, true>(h, l, c, o, v, n, inv, limit, origin, out, mn, mx, on_grid, vc);
  return slots_of<R, false>(h, l, c, o, v, n, inv, limit, origin, out, mn, mx, on_grid, vc);
}

}  // namespace

template <class P, class V>
bool bar_slots(BarRow row, const P* h, const P* l, const P* c, const P* o, const V* v, int n, double inv,
               double limit, double origin, BarSlots& out, double& mn, double& mx, bool& on_grid, VolumeCheck& vc) {
  switch (row) {
    case BarRow::uniform:
      return slots_row<BarRow::uniform>(h, l, c, o, v, n, inv, limit, origin, out, mn, mx, on_grid, vc);
    case BarRow::close: return slots_row<BarRow::close>(h, l, c, o, v, n, inv, limit, origin, out, mn, mx, on_grid, vc);
    case BarRow::hlc3: return slots_row<BarRow::hlc3>(h, l, c, o, v, n, inv, limit, origin, out, mn, mx, on_grid, vc);
  }
  return false;
}

#define VPOC_BAR_SLOTS(P, V)                                                                                    \
  template bool bar_slots<P, V>(BarRow, const P*, const P*, const P*, const P*, const V*, int, double, double, \
                                double, BarSlots&, double&, double&, bool&, VolumeCheck&);
VPOC_BAR_SLOTS(float, float)
VPOC_BAR_SLOTS(float, double)
VPOC_BAR_SLOTS(float, int32_t)
VPOC_BAR_SLOTS(float, int64_t)
VPOC_BAR_SLOTS(double, float)
VPOC_BAR_SLOTS(double, double)
VPOC_BAR_SLOTS(double, int32_t)
VPOC_BAR_SLOTS(double, int64_t)
#undef VPOC_BAR_SLOTS

}  // namespace vpoc::cpu
