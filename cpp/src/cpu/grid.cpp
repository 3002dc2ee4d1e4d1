// cpu/grid.cpp — the off-grid count of host prices: a multiply prefilter, the exact test on candidates.
// Contract: identical to grid::off_grid on every price (the prefilter only skips prices it proves on the grid).
#include "cpu/grid.hpp"

#include <math.h>

#include <cmath>
#include <type_traits>

#include <algorithm>
#include <limits>
#include <vector>

#include "core/grid.hpp"
#include "cpu/isa.hpp"
#include "cpu/parallel.hpp"

// The prefilter loops compiled for AVX2 too: each loop inlined (flatten) into an AVX2 function,
// picked at run time by simd::isa() (cpu/isa.hpp, VPOC_CPU_ISA) on x86-64 with GCC; elsewhere the
// one portable build. Same IEEE operations in both: the same counts.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(VPOC_NO_CLONES)
#define VPOC_GRID_AVX2 1
#endif

namespace vpoc::cpu {
namespace {

// Rows a worker takes at a time: 1M prices (4-8 MiB), large beside the thread start.
constexpr int64_t kPiece = int64_t(1) << 20;
// Rows the prefilter scans before the exact test revisits its candidates: cache-sized.
constexpr int64_t kBlock = 4096;

// Rounds to the nearest integer, half to even, for |x| < 2**51: adding and removing 1.5 * 2**52
// leaves the rounded value in the default rounding mode (plain SSE2 arithmetic, so the loop
// vectorises without SSE4.1's round instruction).
inline double round_magic(double x) {
  constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2**52 (not folded: IEEE semantics, no fast-math)
  return (x + kMagic) - kMagic;
}

// Prefilter candidates among p[b0, b1): branch-free, so the loop vectorises (and is compiled
// again for AVX2, picked at run time, where the compiler supports it: prefilter below).
template <class P>
inline int64_t candidates_in(const P* p, int64_t b0, int64_t b1, double inv, double eps) {
  int64_t candidates = 0;
  for (int64_t i = b0; i < b1; ++i) {
    const double t = static_cast<double>(p[i]) * inv;
    candidates += grid::candidate(t, round_magic(t), eps);  // round_magic is rint where it matters
  }
  return candidates;
}

// The same for a power-of-two tick_size: p * inv is then exact in the prices' own dtype, so every
// price on the grid gives a whole t, and a t that is not whole (or NaN / inf / beyond the rounding
// trick's range) is the candidate. Eight float32 (or four float64) prices per AVX2 instruction.
template <class P>
inline int candidates_exact(const P* p, int64_t b0, int64_t b1, P inv) {
  constexpr bool f32 = std::is_same_v<P, float>;
  const P magic = f32 ? P(12582912.0f) : P(6755399441055744.0);  // 1.5 * 2**23 / 2**52: round to whole
  const P max_t = f32 ? P(4194304.0f) : P(2251799813685248.0);   // 2**22 / 2**51: where that is exact
  int candidates = 0;
  for (int64_t i = b0; i < b1; ++i) {
    const P t = p[i] * inv;
    const P whole = (t + magic) - magic;
    candidates += !((std::fabs(t) < max_t) & (t == whole));
  }
  return candidates;
}

#if defined(VPOC_GRID_AVX2)
template <class P>
__attribute__((target("avx2"), flatten)) int64_t candidates_in_avx2(const P* p, int64_t b0, int64_t b1, double inv,
                                                                    double eps) {
  return candidates_in(p, b0, b1, inv, eps);
}
template <class P>
__attribute__((target("avx2"), flatten)) int candidates_exact_avx2(const P* p, int64_t b0, int64_t b1, P inv) {
  return candidates_exact(p, b0, b1, inv);
}
#endif

// The prefilter's count of p[b0, b1): candidates_exact where exact, else candidates_in, in AVX2
// where simd::isa() allows it.
template <class P>
int64_t prefilter(const P* p, int64_t b0, int64_t b1, double inv, double eps, bool exact) {
#if defined(VPOC_GRID_AVX2)
  static const bool avx2 = simd::isa() >= simd::Isa::avx2;
  if (avx2) return exact ? candidates_exact_avx2(p, b0, b1, static_cast<P>(inv)) : candidates_in_avx2(p, b0, b1, inv, eps);
#endif
  return exact ? candidates_exact(p, b0, b1, static_cast<P>(inv)) : candidates_in(p, b0, b1, inv, eps);
}

// Whether 1 / tick_size is a power of two that p * (1 / tick_size) keeps exact in P.
template <class P>
bool exact_scale(double tick) {
  int e = 0;
  if (!(std::frexp(tick, &e) == 0.5)) return false;
  const double inv = 1.0 / tick;
  return static_cast<double>(static_cast<P>(inv)) == inv && inv >= 1.0 / 1024 && inv <= 1024.0 * 1024.0;
}

template <class P>
GridCount count_range(const P* p, int64_t begin, int64_t end, double tick, double eps) {
  const double inv = 1.0 / tick;
  const bool exact = exact_scale<P>(tick);
  GridCount out;
  for (int64_t b0 = begin; b0 < end; b0 += kBlock) {
    const int64_t b1 = std::min(end, b0 + kBlock);
    if (prefilter(p, b0, b1, inv, eps, exact) == 0) continue;
    for (int64_t i = b0; i < b1; ++i)
      if (grid::off_grid(static_cast<double>(p[i]), tick, eps)) {
        if (out.first < 0) out.first = i;
        ++out.off;
      }
  }
  return out;
}

template <class P>
GridCount count(const P* p, int64_t n, double tick, double eps, int threads, const Interrupt& interrupt) {
  const int64_t pieces = (n + kPiece - 1) / kPiece;
  if (pieces <= 1) return count_range(p, 0, n, tick, eps);
  std::vector<GridCount> parts(static_cast<size_t>(pieces));
  parallel_for(pieces, resolve_threads(threads, pieces), interrupt, [&](int64_t k, int) {
    parts[static_cast<size_t>(k)] = count_range(p, k * kPiece, std::min(n, (k + 1) * kPiece), tick, eps);
  });
  GridCount out;
  for (const auto& g : parts) {
    if (g.off && out.first < 0) out.first = g.first;
    out.off += g.off;
  }
  return out;
}

}  // namespace

GridCount count_off_grid(const float* prices, int64_t begin, int64_t end, double tick_size) {
  return count_range(prices, begin, end, tick_size, grid::kEpsF32);
}
GridCount count_off_grid(const double* prices, int64_t begin, int64_t end, double tick_size) {
  return count_range(prices, begin, end, tick_size, grid::kEpsF64);
}
GridCount count_off_grid(const Array& prices, int64_t begin, int64_t end, double tick_size) {
  if (prices.dtype == DType::f32) return count_off_grid(static_cast<const float*>(prices.data), begin, end, tick_size);
  return count_off_grid(static_cast<const double*>(prices.data), begin, end, tick_size);
}

GridTally::GridTally(int n_inputs) : n_(n_inputs) { clear(); }

void GridTally::clear() {
  for (int k = 0; k < 4; ++k) {
    off_[k].store(0, std::memory_order_relaxed);
    first_[k].store(std::numeric_limits<int64_t>::max(), std::memory_order_relaxed);
  }
}

void GridTally::add(int k, const GridCount& c) {
  if (c.off == 0) return;
  off_[k].fetch_add(c.off, std::memory_order_relaxed);
  int64_t seen = first_[k].load(std::memory_order_relaxed);
  while (c.first < seen && !first_[k].compare_exchange_weak(seen, c.first, std::memory_order_relaxed)) {
  }
}

void GridTally::result(int64_t& off, int& first_input, int64_t& first_index) const {
  off = 0;
  first_input = -1;
  first_index = -1;
  for (int k = 0; k < n_; ++k) {
    const int64_t c = off_[k].load(std::memory_order_relaxed);
    if (c && first_input < 0) {
      first_input = k;
      first_index = first_[k].load(std::memory_order_relaxed);
    }
    off += c;
  }
}

GridCount count_off_grid(const Array& prices, double tick_size, int threads, const Interrupt& interrupt) {
  if (prices.dtype == DType::f32)
    return count(static_cast<const float*>(prices.data), prices.size, tick_size, grid::kEpsF32, threads, interrupt);
  return count(static_cast<const double*>(prices.data), prices.size, tick_size, grid::kEpsF64, threads, interrupt);
}

}  // namespace vpoc::cpu
