// cpu/typed.hpp — an input Array's data as a typed pointer, for the CPU passes' templates.
// Contract: fn runs once with the pointer type of a.dtype; prices other than float32/float64 are refused (TypeError).
#pragma once

#include <cstdint>

#include "vpoc/errors.hpp"
#include "vpoc/types.hpp"

namespace vpoc::cpu {

// Calls fn(const P*) with the typed pointer of a float32/float64 price array.
template <class F>
void with_price(const Array& a, F&& fn) {
  switch (a.dtype) {
    case DType::f32: return fn(static_cast<const float*>(a.data));
    case DType::f64: return fn(static_cast<const double*>(a.data));
    default: VPOC_THROW(TypeError, a.name, " must be float32 or float64 here (converted by the caller)");
  }
}

// Calls fn(const V*) with the typed pointer of a volume array (every volume dtype).
template <class F>
void with_volume(const Array& a, F&& fn) {
  switch (a.dtype) {
    case DType::f32: return fn(static_cast<const float*>(a.data));
    case DType::f64: return fn(static_cast<const double*>(a.data));
    case DType::i32: return fn(static_cast<const int32_t*>(a.data));
    case DType::i64: return fn(static_cast<const int64_t*>(a.data));
    case DType::i8: break;  // side codes: never a volume (the bindings refuse it)
  }
}

}  // namespace vpoc::cpu
