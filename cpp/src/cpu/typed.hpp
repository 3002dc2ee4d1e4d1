// cpu/typed.hpp — an input Array's data as a typed pointer, for the CPU passes' templates.
// Contract: fn runs once with the pointer type of a.dtype; prices other than float32/float64 are refused (TypeError).
#pragma once

#include <cstdint>

#include "core/dtype.hpp"
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
  // int8 side codes are never a volume (the bindings refuse them): fn is not called
  with_volume_type(a.dtype, [&](auto v) { fn(static_cast<const decltype(v)*>(a.data)); });
}

}  // namespace vpoc::cpu
