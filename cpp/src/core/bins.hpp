// core/bins.hpp — `bins=N`: wickra 2.0.0's ladder of N equal-width bins over a session's (window's) range.
// Contract: docs/presets.md ("bins"); the one home of the rule, VPOC_HD, run as is by the CPU and the GPU.
#pragma once

#include <math.h>

#include <cstdint>

#include "core/fixed.hpp"
#include "core/levels.hpp"
#include "vpoc/profiles.hpp"
#include "vpoc/types.hpp"

namespace vpoc::bins {

// The bins of one session (or window): lo = min low, w = (max high - lo) / n (float64, in that
// order), bin(p) = clamp(floor((p - lo) / w), 0, n - 1), the top price in the last bin. `flat`
// (max high <= lo): every volume in bin 0, w = 0 (so every reported price is lo).
struct Ladder {
  double lo = 0.0, w = 0.0;
  int64_t n = 1;
  bool flat = true;

  VPOC_HD static Ladder make(double lo, double hi, int64_t n) {
    Ladder L;
    L.lo = lo;
    L.n = n;
    const double span = hi - lo;
    L.flat = !(span > 0.0);
    L.w = L.flat ? 0.0 : span / static_cast<double>(n);
    return L;
  }
  // wickra's price_to_bin: floor, then clamp into [0, n - 1]; NaN (w underflowed to 0 at 0 / 0)
  // is bin 0, as Rust's `NaN as usize`.
  VPOC_HD int64_t bin_of(double p) const {
    if (flat) return 0;
    const double raw = floor((p - lo) / w);
    if (!(raw >= 0.0)) return 0;
    const double top = static_cast<double>(n - 1);
    return raw > top ? n - 1 : static_cast<int64_t>(raw);
  }
  // lo + w * k: a bin edge (k whole) or centre (k + 0.5). No contraction (the builds turn it off).
  VPOC_HD double price(double k) const { return lo + w * k; }
};

// One input row as the bins read it: high, low (a trade: its price twice) and volume, float64.
struct Row {
  double high = 0.0, low = 0.0, volume = 0.0;
};

// Row i of a Source (core/source.hpp) as the bins read it: the getter every bins::session caller
// passes (CPU and GPU alike).
template <class Src>
struct RowsOf {
  const Src& src;
  VPOC_HD Row operator()(int64_t i) const {
    const auto it = src.item(i);
    Row r;
    r.high = it.a;
    r.low = src.in.bars ? it.b : it.a;
    r.volume = it.v;
    return r;
  }
};

// The ladder of rows [b, e) (e > b): min low, max high of every row (volume 0 included).
template <class Get>
VPOC_HD Ladder ladder_of(int64_t b, int64_t e, int64_t n, Get&& get) {
  const Row r0 = get(b);
  double lo = r0.low, hi = r0.high;
  for (int64_t i = b + 1; i < e; ++i) {
    const Row r = get(i);
    lo = r.low < lo ? r.low : lo;
    hi = r.high > hi ? r.high : hi;
  }
  return Ladder::make(lo, hi, n);
}

// Calls put(k, share index j, of count c) for each bin k a row with volume v > 0 touches: `flat`
// or high <= low: one bin (bin 0 / bin(low)); else bins bin(low) .. bin(high), share v / c each.
template <class Put>
VPOC_HD void spread(const Ladder& L, const Row& r, Put&& put) {
  if (r.volume == 0.0) return;  // skipped (the row still set the ladder's range)
  if (L.flat || r.high <= r.low) {
    put(L.bin_of(r.low), int64_t(0), int64_t(1));
    return;
  }
  const int64_t a = L.bin_of(r.low), z = L.bin_of(r.high);
  for (int64_t k = a; k <= z; ++k) put(k, k - a, z - a + 1);
}

// accumulate='sequential' (wickra): out[k] += v / c in float64, rows in input order; the total is
// the bins summed 0 .. n-1. Returns the total.
template <class Get>
VPOC_HD double accumulate_sequential(const Ladder& L, int64_t b, int64_t e, Get&& get, double* out) {
  for (int64_t k = 0; k < L.n; ++k) out[k] = 0.0;
  for (int64_t i = b; i < e; ++i) {
    const Row r = get(i);
    // wickra's share v / c (c = 1 for one bin: v itself), added to each bin touched
    spread(L, r, [&](int64_t k, int64_t, int64_t c) { out[k] += r.volume / static_cast<double>(c); });
  }
  double total = 0.0;
  for (int64_t k = 0; k < L.n; ++k) total += out[k];
  return total;
}

// accumulate='exact' (vpoc's own sums): each row's volume split into c shares that sum to it
// exactly (fixed::Split, as distribute='uniform' splits a bar over its ticks), summed in 64.64
// fixed point (any order gives the same bits); out[k] its float64, the total the exact sum
// rounded once. `acc`: [n] scratch. Returns false when the total passes 2**53.
template <class Get>
VPOC_HD bool accumulate_exact(const Ladder& L, int64_t b, int64_t e, Get&& get, Fixed* acc, double* out,
                              double& total) {
  for (int64_t k = 0; k < L.n; ++k) acc[k] = Fixed{};
  Fixed sum;
  for (int64_t i = b; i < e; ++i) {
    const Row r = get(i);
    if (r.volume == 0.0) continue;
    const Fixed v = fixed::from_double(r.volume);
    sum += v;
    if (fixed::over_max(sum)) break;  // each volume <= 2**53: the sum is seen past 2**53 before it can wrap
    fixed::Split split;
    int64_t count = -1;
    spread(L, r, [&](int64_t k, int64_t j, int64_t c) {
      if (c != count) {
        split = fixed::Split::make(v, static_cast<uint64_t>(c));
        count = c;
      }
      acc[k] += split.one(static_cast<uint64_t>(j));
    });
  }
  for (int64_t k = 0; k < L.n; ++k) out[k] = fixed::to_double(acc[k]);
  total = fixed::to_double(sum);
  return !fixed::over_max(sum);
}

// POC, value area and reported prices of bins v[0..n-1] with total `total` (the accumulation's).
struct Levels {
  int64_t poc = 0, val = 0, vah = 0;
  double va_volume = 0.0, poc_price = 0.0, val_price = 0.0, vah_price = 0.0;
};

// The level rules of the call (levels.hpp: POC tie, tie band, step comparison, stop) on the bins;
// 'center_edges' (ValueArea): POC at its bin's centre, VAH the upper edge of the top bin, VAL the
// lower edge of the bottom bin; 'centers' (CompositeProfile): all three at centres.
VPOC_HD Levels levels_of(const double* v, const Ladder& L, double total, const Options& opt) {
  Levels out;
  const levels::Rules rules = levels::rules_of(opt);
  out.poc = levels::poc_index(v, L.n, rules);
  const levels::Target target = levels::target_of(opt.value_area, total, rules);
  levels::expand(v, L.n, out.poc, target, opt.va_method == VaMethod::cbot ? 2 : 1, out.val, out.vah, out.va_volume,
                 rules);
  out.poc_price = L.price(static_cast<double>(out.poc) + 0.5);
  if (opt.bin_report == BinReport::centers) {
    out.val_price = L.price(static_cast<double>(out.val) + 0.5);
    out.vah_price = L.price(static_cast<double>(out.vah) + 0.5);
  } else {
    out.val_price = L.price(static_cast<double>(out.val));
    out.vah_price = L.price(static_cast<double>(out.vah) + 1.0);
  }
  return out;
}

// The per-session level columns of a bins result (host or device arrays, [S] each): what the CPU
// (cpu/bins.cpp) and the GPU (gpu/bins.cu) fill for every session through write().
struct Columns {
  int64_t *n_rows = nullptr, *low_row = nullptr, *poc_row = nullptr, *vah_row = nullptr, *val_row = nullptr;
  double *poc = nullptr, *vah = nullptr, *val = nullptr, *total_volume = nullptr, *va_volume = nullptr;
  double *bin_low = nullptr, *bin_width = nullptr;
};

// Session s of a bins result: its n bins (rows 0 .. n-1), levels `lv`, total and ladder `L`.
VPOC_HD void write(const Columns& c, int64_t s, int64_t n, const Ladder& L, double total, const Levels& lv) {
  c.n_rows[s] = n;
  c.low_row[s] = 0;
  c.poc_row[s] = lv.poc;
  c.val_row[s] = lv.val;
  c.vah_row[s] = lv.vah;
  c.poc[s] = lv.poc_price;
  c.val[s] = lv.val_price;
  c.vah[s] = lv.vah_price;
  c.total_volume[s] = total;
  c.va_volume[s] = lv.va_volume;
  c.bin_low[s] = L.lo;
  c.bin_width[s] = L.w;
}

// Session s without rows: no bins, no levels (kNoRow, NaN), no volume.
VPOC_HD void write_empty(const Columns& c, int64_t s) {
  const double nan = static_cast<double>(NAN);
  c.n_rows[s] = 0;
  c.poc_row[s] = c.vah_row[s] = c.val_row[s] = c.low_row[s] = kNoRow;
  c.poc[s] = c.vah[s] = c.val[s] = c.bin_low[s] = c.bin_width[s] = nan;
  c.total_volume[s] = c.va_volume[s] = 0.0;
}

// Rows [b, e) (e > b) end to end: ladder, bins into out[0..n-1] (acc: [n] scratch for 'exact'),
// levels. Returns false when an exact total passes 2**53 (the caller raises).
template <class Get>
VPOC_HD bool session(int64_t b, int64_t e, const Options& opt, Get&& get, double* out, Fixed* acc, Ladder& L,
                     double& total, Levels& lv) {
  L = ladder_of(b, e, opt.bins, get);
  bool ok = true;
  if (opt.accumulate == Accumulate::sequential)
    total = accumulate_sequential(L, b, e, get, out);
  else
    ok = accumulate_exact(L, b, e, get, acc, out, total);
  lv = levels_of(out, L, total, opt);
  return ok;
}

}  // namespace vpoc::bins
