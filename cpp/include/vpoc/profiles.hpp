// vpoc/profiles.hpp — the one column schema of a result, and the CPU engine's host Profiles built from it.
// Contract: every per-session column has n_sessions entries, offsets n_sessions + 1; a new column is one X line.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "vpoc/types.hpp"

namespace vpoc {

// Row index of an empty session's poc/vah/val/low rows.
constexpr int64_t kNoRow = std::numeric_limits<int64_t>::min();

// How long a column is: offsets [S+1], sessions [S], rows [sum n_rows] (the ragged histograms),
// inputs [N] (one per input row: the developing series, present only when asked for).
enum class Extent : int { offsets, sessions, rows, inputs };

// The result columns, in the order the bindings list them: X(name, element type, extent).
// Declared once: vpoc::Profiles (host vectors), vpoc::gpu::DeviceProfiles (device columns),
// vpoc::Result (what a call returns) and the Python Result class are all generated from it.
#define VPOC_RESULT_COLUMNS(X)        \
  X(offsets, int64_t, offsets)        \
  X(volume, double, rows)             \
  X(poc_row, int64_t, sessions)       \
  X(vah_row, int64_t, sessions)       \
  X(val_row, int64_t, sessions)       \
  X(low_row, int64_t, sessions)       \
  X(n_rows, int64_t, sessions)        \
  X(poc, double, sessions)            \
  X(vah, double, sessions)            \
  X(val, double, sessions)            \
  X(total_volume, double, sessions)   \
  X(va_volume, double, sessions)      \
  X(dev_poc, double, inputs)          \
  X(dev_vah, double, inputs)          \
  X(dev_val, double, inputs)

enum class Col : int {
#define VPOC_X(name, type, extent) name,
  VPOC_RESULT_COLUMNS(VPOC_X)
#undef VPOC_X
      count
};
constexpr int kNumColumns = static_cast<int>(Col::count);

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<double>() { return DType::f64; }
template <>
constexpr DType dtype_of<int64_t>() { return DType::i64; }

struct ColumnInfo {
  const char* name;
  DType dtype;
  Extent extent;
};
inline constexpr ColumnInfo kColumns[kNumColumns] = {
#define VPOC_X(name, type, extent) {#name, dtype_of<type>(), Extent::extent},
    VPOC_RESULT_COLUMNS(VPOC_X)
#undef VPOC_X
};

// std::allocator whose value-less construct leaves the element uninitialised (default-initialised):
// resize(n) of a vector of numbers then writes nothing, so a buffer whose every element the caller
// writes anyway (the CPU engine's drained rows) is written once, not zeroed first. resize(n, v),
// assign and push_back initialise as usual.
template <class T>
struct UninitAllocator : std::allocator<T> {
  static_assert(std::is_trivially_default_constructible_v<T>, "for plain numbers only");
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() noexcept = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
template <class T>
using HostVector = std::vector<T, UninitAllocator<T>>;

// The host vector of a column: the ragged rows (Extent::rows, written once by the engine's drain)
// leave resize() uninitialised; every other column is a plain std::vector.
template <class T, Extent E>
using HostColumn = std::conditional_t<E == Extent::rows, HostVector<T>, std::vector<T>>;

// The CPU engine's result: one host vector per column.
struct Profiles {
  int64_t n_sessions = 0;
  double tick_size = 0.0;
  int64_t ticks_per_row = 1;
#define VPOC_X(name, type, extent) HostColumn<type, Extent::extent> name;
  VPOC_RESULT_COLUMNS(VPOC_X)
#undef VPOC_X

  // Prices off the tick_size grid the engine counted while binning (core/grid.hpp): how many,
  // the first input holding one (trades: 0 price; bars: 0 high, 1 low, 2 close, 3 open with
  // legacy) and its first row; -1: none.
  int64_t off_grid = 0;
  int first_off_grid_input = -1;
  int64_t first_off_grid = -1;

  // Sizes every per-session vector for S sessions and offsets for S + 1 (contents unspecified).
  void resize_sessions(int64_t s);
};

}  // namespace vpoc
