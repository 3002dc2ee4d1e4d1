// core/source.hpp — one input row (a trade or a bar) read from typed columns and put on the ladder,
// shared by the GPU kernels and the CPU developing pass. Contract: docs/contract.md "Putting volume on the ladder".
#pragma once

#include <cfloat>
#include <cstdint>
#include <math.h>

#include "core/distribute.hpp"
#include "core/dtype.hpp"
#include "core/ladder.hpp"
#include "vpoc/engine.hpp"
#include "vpoc/types.hpp"

namespace vpoc {

// The inputs of one call as raw pointers (host or device); element 0 is absolute row `base` of
// the Source reading them.
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
  const void* side = nullptr;  // trades with an aggressor side: int8 codes (core/side.hpp), else nullptr
};

inline InputView view_of(const Array& price, const Array& volume) {
  InputView v;
  v.price_dtype = price.dtype;
  v.volume_dtype = volume.dtype;
  v.price = price.data;
  v.volume = volume.data;
  return v;
}

inline InputView view_of(const BarsInput& bars, Distribute distribute) {
  InputView v;
  v.bars = true;
  v.distribute = distribute;
  v.price_dtype = bars.high.dtype;
  v.volume_dtype = bars.volume.dtype;
  v.high = bars.high.data;
  v.low = bars.low.data;
  v.close = bars.close.data;
  v.open = bars.has_open ? bars.open.data : nullptr;
  v.volume = bars.volume.data;
  return v;
}

template <class T>
VPOC_HD double load(const void* p, int64_t k) { return static_cast<double>(static_cast<const T*>(p)[k]); }

// A volume as float64 for validation and binning. An int64 above 2**53 would round to a volume in
// range (2**53 + 1 -> 2**53) and pass: it reads as 2**54 instead, out of range, so that every check
// refuses it (the messages read the exact integer again: messages::bad_volume).
VPOC_HD double volume_value(double x) { return x; }
VPOC_HD double volume_value(float x) { return static_cast<double>(x); }
VPOC_HD double volume_value(int32_t x) { return static_cast<double>(x); }
VPOC_HD double volume_value(int64_t x) {
  return x > (int64_t(1) << 53) ? 18014398509481984.0 /* 2**54 */ : static_cast<double>(x);
}
template <class V>
VPOC_HD double load_volume(const void* p, int64_t k) { return volume_value(static_cast<const V*>(p)[k]); }

// One input row, loaded: trades use a (price) and v; bars a, b, c, d = high, low, close, open
// (open = close when absent).
struct Item {
  double a = 0.0, b = 0.0, c = 0.0, d = 0.0, v = 0.0;
};

// How an input row meets the ladder. P / V: price and volume element types.
template <class P, class V>
struct Source {
  InputView in;
  ladder::TickScale scale;
  int64_t tpr;
  int64_t base;

  VPOC_HD Item item(int64_t i) const {
    Item it;
    const int64_t k = i - base;
    it.v = load_volume<V>(in.volume, k);
    if (!in.bars) {
      it.a = load<P>(in.price, k);
      return it;
    }
    it.a = load<P>(in.high, k);
    it.b = load<P>(in.low, k);
    it.c = load<P>(in.close, k);
    it.d = in.open ? load<P>(in.open, k) : it.c;
    return it;
  }
  VPOC_HD double ticks(double p) const { return scale.exact ? scale.ticks<true>(p) : scale.ticks<false>(p); }
  VPOC_HD bool valid_price(double p) const { return scale.valid(ticks(p)); }
  VPOC_HD int64_t row_of(double p) const {
    return ladder::tick_to_row(static_cast<int64_t>(ladder::round_half_even(ticks(p))), tpr);
  }
  // Finite, in-range prices; bars: high >= low and low <= close, open <= high.
  VPOC_HD bool valid_prices(const Item& it) const {
    if (!in.bars) return valid_price(it.a);
    return valid_price(it.a) && valid_price(it.b) && valid_price(it.c) && valid_price(it.d) && it.a >= it.b &&
           it.c >= it.b && it.c <= it.a && it.d >= it.b && it.d <= it.a;
  }
  // 0 or 2**-32 .. 2**53 (fixed::volume_in_range): summed exactly in 64.64 fixed point.
  VPOC_HD static bool valid_volume(const Item& it) { return fixed::volume_in_range(it.v); }

  // Legacy only: the bar's min(open, close, low) / max(open, close, high), which set its
  // session's level ladder.
  VPOC_HD static double legacy_lo(const Item& it) { return fmin(fmin(it.d, it.c), it.b); }
  VPOC_HD static double legacy_hi(const Item& it) { return fmax(fmax(it.d, it.c), it.a); }

  // Lowest and highest row the item touches (L: its session's legacy ladder, legacy only).
  VPOC_HD void rows(const Item& it, const distribute::LegacyLadder& L, int64_t& lo, int64_t& hi) const {
    if (!in.bars) {
      lo = hi = row_of(it.a);
      return;
    }
    switch (in.distribute) {
      case Distribute::close: lo = hi = row_of(it.c); return;
      case Distribute::hlc3: lo = hi = row_of((it.a + it.b + it.c) / 3.0); return;
      case Distribute::uniform: lo = row_of(it.b); hi = row_of(it.a); return;
      case Distribute::legacy: {
        int64_t ka, kb;
        L.range(legacy_lo(it), legacy_hi(it), ka, kb);
        if (ka > kb) {
          lo = hi = row_of(it.c);
        } else {
          lo = ladder::tick_to_row(L.base + ka, tpr);
          hi = ladder::tick_to_row(L.base + kb, tpr);
        }
        return;
      }
    }
  }

  // Calls add(row, Fixed share) for every share of the item (the shares sum to the volume).
  template <class Add>
  VPOC_HD void emit(const Item& it, const distribute::LegacyLadder& L, Add&& add) const {
    if (!in.bars) {
      add(row_of(it.a), fixed::from_double(it.v));
      return;
    }
    switch (in.distribute) {
      case Distribute::close: add(row_of(it.c), fixed::from_double(it.v)); return;
      case Distribute::hlc3: add(row_of((it.a + it.b + it.c) / 3.0), fixed::from_double(it.v)); return;
      case Distribute::uniform: {
        const auto tl = static_cast<int64_t>(ladder::round_half_even(ticks(it.b)));
        const auto th = static_cast<int64_t>(ladder::round_half_even(ticks(it.a)));
        distribute::uniform(tl, th, fixed::from_double(it.v), tpr, add);
        return;
      }
      case Distribute::legacy:
        distribute::legacy(L, legacy_lo(it), legacy_hi(it), it.c, it.v, tpr, add);
        return;
    }
  }

  // Uniform with one tick per row, as difference entries (distribute::uniform_diff): the bar of
  // `high`, `low` and volume v, add(k, entry) at k = its tick less `low_row` for the entries below
  // low_row + width (one past the session's top row is never summed). The GPU bin passes share it.
  template <class Add>
  VPOC_HD void emit_diff(double high, double low, double v, int64_t low_row, int64_t width, Add&& add) const {
    const auto tl = static_cast<int64_t>(ladder::round_half_even(ticks(low)));
    const auto th = static_cast<int64_t>(ladder::round_half_even(ticks(high)));
    const fixed::Split split = fixed::Split::make(fixed::from_double(v), static_cast<uint64_t>(th - tl + 1));
    distribute::uniform_diff(tl, th, split, [&](int64_t t, const Fixed& x) {
      if (t - low_row < width) add(t - low_row, x);
    });
  }
};

template <class P, class V>
Source<P, V> make_source(const InputView& in, const Options& opt, int64_t base) {
  return Source<P, V>{in, ladder::TickScale::make(opt.tick_size, opt.ticks_per_row), opt.ticks_per_row, base};
}

// Calls fn(P{}, V{}) for the input's element types (prices are float32 or float64).
template <class F>
void with_types(const InputView& in, F&& fn) {
  const auto with_v = [&](auto p) { with_volume_type(in.volume_dtype, [&](auto v) { fn(p, v); }); };
  if (in.price_dtype == DType::f32) with_v(float{});
  else with_v(double{});
}

}  // namespace vpoc
