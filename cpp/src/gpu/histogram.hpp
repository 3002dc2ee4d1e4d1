// gpu/histogram.hpp — launchers of the binning kernels (validation + row ranges, then volume).
// Contract: rows [begin, end) of one group of sessions; data pointers index (row - base).
#pragma once

#include <cstdint>

#include "gpu/vendor.hpp"
#include "vpoc/engine.hpp"
#include "vpoc/types.hpp"

namespace vpoc::gpu {

// Per-session scratch of one group of sessions, all device pointers, n sessions.
struct GroupScratch {
  const int64_t* offsets = nullptr;  // [n+1] absolute row offsets of the group's sessions
  int64_t n = 0;
  unsigned long long* lo = nullptr;   // [n] lowest touched row (order-preserving encoding)
  unsigned long long* hi = nullptr;   // [n] highest touched row
  unsigned long long* plo = nullptr;  // [n] legacy: lowest price (order-preserving encoding)
  unsigned long long* phi = nullptr;  // [n] legacy: highest price
  unsigned long long* err = nullptr;  // [1] smallest bad row index (~0: none)
  const int64_t* out_off = nullptr;   // [n] first output row of each session
  const int64_t* low_row = nullptr;   // [n] each session's low row
  const int64_t* width = nullptr;     // [n] each session's rows
};

// Absolute rows [begin, end) of the inputs; element 0 of the views is row `base`.
struct RowSpan {
  int64_t begin = 0, end = 0, base = 0;
};

// The inputs of one call as device pointers (element 0 = row base of the current RowSpan).
struct InputView {
  bool bars = false;
  Distribute distribute = Distribute::close;
  DType price_dtype = DType::f64, volume_dtype = DType::f64;
  const void* price = nullptr;  // trades
  const void* high = nullptr;   // bars
  const void* low = nullptr;
  const void* close = nullptr;
  const void* open = nullptr;  // nullptr when absent
  const void* volume = nullptr;
};

// Order-preserving encodings for unsigned atomics.
inline constexpr unsigned long long kEncNone = ~0ull;  // "no minimum yet" / "no error"
inline unsigned long long encode_row(int64_t r) { return static_cast<unsigned long long>(r) ^ (1ull << 63); }
inline int64_t decode_row(unsigned long long e) { return static_cast<int64_t>(e ^ (1ull << 63)); }

// Legacy only: per-session lowest / highest price into g.plo / g.phi.
void launch_price_range(const InputView& in, RowSpan rows, const GroupScratch& g, const Options& opt,
                        gpuStream_t stream);
// Validates every row (first bad index into g.err) and accumulates touched rows into g.lo / g.hi.
void launch_row_range(const InputView& in, RowSpan rows, const GroupScratch& g, const Options& opt,
                      gpuStream_t stream);
// Adds the volume of every row into out (u64 when integer_acc, else double), at
// out[g.out_off[s] + row - g.low_row[s]].
void launch_bin(const InputView& in, RowSpan rows, const GroupScratch& g, const Options& opt,
                bool integer_acc, void* out, gpuStream_t stream);

}  // namespace vpoc::gpu
