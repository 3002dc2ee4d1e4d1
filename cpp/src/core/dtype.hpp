// core/dtype.hpp — the one switch over a volume column's dtype: fn(V{}) with V its element type.
// Contract: float32 / float64 / int32 / int64 call fn once and give true; int8 (side codes) is never a volume: false.
#pragma once

#include <cstdint>

#include "vpoc/types.hpp"

namespace vpoc {

// Calls fn(V{}) for volume dtype d (host code: the CPU passes' and the GPU launchers' dispatch).
template <class F>
bool with_volume_type(DType d, F&& fn) {
  switch (d) {
    case DType::f32: fn(float{}); return true;
    case DType::f64: fn(double{}); return true;
    case DType::i32: fn(int32_t{}); return true;
    case DType::i64: fn(int64_t{}); return true;
    case DType::i8: break;  // side codes: never a volume
  }
  return false;
}

}  // namespace vpoc
