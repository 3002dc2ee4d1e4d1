// gpu/touch.cu — touched-row flags (va_rows='touched') on the device, one thread per input row.
// Contract: core/source.hpp Source::rows, as cpu/touch.cpp; every writer stores 1, so order is free.
#include "gpu/touch.hpp"

namespace vpoc::gpu {
namespace {

constexpr int kThreads = 256;

template <class P, class V>
__global__ void touch_kernel(Source<P, V> src, TouchBatch b) {
  const int64_t i = b.r0 + static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= b.r1) return;
  int64_t lo = 0, hi = b.n;  // session of row i: the last s with offsets[s] <= i
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    if (b.offsets[mid] <= i) lo = mid;
    else hi = mid;
  }
  const int64_t s = lo, n = b.n_rows[s];
  if (n == 0) return;
  int64_t a = 0, z = -1;
  const distribute::LegacyLadder L{};  // unused: legacy is refused with va_rows='touched'
  src.rows(src.item(i), L, a, z);
  a -= b.low_row[s];
  z -= b.low_row[s];
  a = a < 0 ? 0 : a;
  z = z > n - 1 ? n - 1 : z;
  uint8_t* t = b.touched + b.out_offsets[s];
  for (int64_t k = a; k <= z; ++k) t[k] = 1;
}

}  // namespace

void launch_touch(const InputView& in, int64_t base, const TouchBatch& b, const Options& opt, gpuStream_t stream) {
  if (b.n <= 0 || b.r1 <= b.r0) return;
  const auto blocks = static_cast<unsigned>((b.r1 - b.r0 + kThreads - 1) / kThreads);
  with_types(in, [&](auto p, auto v) {
    using P = decltype(p);
    using V = decltype(v);
    touch_kernel<P, V><<<blocks, kThreads, 0, stream>>>(make_source<P, V>(in, opt, base), b);
  });
  VPOC_GPU_CHECK_LAUNCH("touch_kernel");
}

}  // namespace vpoc::gpu
