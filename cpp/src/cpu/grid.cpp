// cpu/grid.cpp — the off-grid count of host prices: a multiply prefilter, the exact test on candidates.
// Contract: identical to grid::off_grid on every price (the prefilter only skips prices it proves on the grid).
#include "cpu/grid.hpp"

#include <math.h>

#include <algorithm>
#include <vector>

#include "core/grid.hpp"
#include "cpu/parallel.hpp"

// The prefilter loop compiled for AVX2 too, the variant picked when the CPU loads (GCC / clang
// function multiversioning on x86-64 ELF); elsewhere the one portable build.
#if defined(__x86_64__) && defined(__ELF__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(VPOC_NO_CLONES)
#define VPOC_GRID_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define VPOC_GRID_CLONES
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
// again for AVX2, picked at run time, where the compiler supports it).
template <class P>
VPOC_GRID_CLONES int64_t candidates_in(const P* p, int64_t b0, int64_t b1, double inv, double eps) {
  const double bound_slope = eps - grid::kPrefilterSlack;
  int64_t candidates = 0;
  for (int64_t i = b0; i < b1; ++i) {
    const double t = static_cast<double>(p[i]) * inv;
    const double a = fabs(t);
    const double d = fabs(t - round_magic(t));
    // grid::candidate, written with & (no short circuit); NaN / inf: a candidate
    candidates += !((a < grid::kPrefilterMax) & (d <= grid::kPrefilterTol + a * bound_slope));
  }
  return candidates;
}

template <class P>
GridCount count_range(const P* p, int64_t begin, int64_t end, double tick, double eps) {
  const double inv = 1.0 / tick;
  GridCount out;
  for (int64_t b0 = begin; b0 < end; b0 += kBlock) {
    const int64_t b1 = std::min(end, b0 + kBlock);
    if (candidates_in(p, b0, b1, inv, eps) == 0) continue;
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

GridCount count_off_grid(const Array& prices, double tick_size, int threads, const Interrupt& interrupt) {
  if (prices.dtype == DType::f32)
    return count(static_cast<const float*>(prices.data), prices.size, tick_size, grid::kEpsF32, threads, interrupt);
  return count(static_cast<const double*>(prices.data), prices.size, tick_size, grid::kEpsF64, threads, interrupt);
}

}  // namespace vpoc::cpu
