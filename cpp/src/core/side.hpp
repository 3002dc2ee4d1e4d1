// core/side.hpp — aggressor-side codes: +1 buyer-initiated, -1 seller-initiated, 0 unknown, of int8 and 'S1' columns.
// Contract: docs/contract.md "Aggressor side"; the index of the first bad value (vpoc._side words it), host and device.
#pragma once

#include <cstdint>

#include "core/ladder.hpp"  // VPOC_HD, TickScale, round_half_even

namespace vpoc::side {

// Not a side: the code of every byte that is none of the accepted values.
constexpr int8_t kBad = 2;

// The code of an int8 side (numpy int8: 1, -1 (0xFF), 0); kBad otherwise.
VPOC_HD int8_t code_i8(uint8_t b) { return b == 1 ? int8_t(1) : b == 0xFF ? int8_t(-1) : b == 0 ? int8_t(0) : kBad; }
// The code of a one-byte letter (numpy 'S1', Databento's: 'B' buy aggressor, 'A' sell aggressor, 'N' none).
VPOC_HD int8_t code_c8(uint8_t b) {
  return b == 'B' ? int8_t(1) : b == 'A' ? int8_t(-1) : b == 'N' ? int8_t(0) : kBad;
}

// The plane a trade's volume is binned into by its code: 0 unknown (the volume plane), 1 buy, 2 sell
// (a bad code lands in plane 0: its call raises before any row is read).
VPOC_HD int plane_of(int8_t code) { return code == 1 ? 1 : code == -1 ? 2 : 0; }

// Footprint imbalance of row volume x against the opposite side's volume on the diagonal row: x > 0
// and x >= opposite * ratio, in float64 (one multiply, one compare).
VPOC_HD bool imbalance(double x, double opposite, double ratio) { return x > 0.0 && x >= opposite * ratio; }

// Whether a row (or a session's totals) holds volume of a known side. A session none of whose rows
// does (every trade / bar of unknown side: buy and sell totals 0, as the rows are exact non-negative
// sums) has no delta POC: NaN and kNoRow, as an empty session (docs/contract.md "Aggressor side").
// The one rule: side_levels (CPU), side_levels_kernel (GPU: sided trades, and the rows of the masked
// passes of vpoc._side_profiles), SideSession (Live, bar_features).
VPOC_HD bool sided(double buy, double sell) { return buy != 0.0 || sell != 0.0; }

// A session's delta: its buy total less its sell total, each the exact sum rounded once to float64 (the
// difference of the two rounded totals, not the rounded exact difference: they differ for fractional
// volumes). The one rule: the CPU engine, side_finish_kernel, side_levels (host and device rows).
VPOC_HD double delta(double buy_total, double sell_total) { return buy_total - sell_total; }

// |buy - sell| of a row as the delta-POC pass bins it: closer to zero than 2**-32 (float rounding
// noise below the engine's smallest volume) counts 0.
VPOC_HD double delta_abs(double buy, double sell) {
  const double d = fabs(buy - sell);
  return d >= 0x1p-32 ? d : 0.0;
}

// The delta-POC pass's row of profile row r: the price r * row_size binned at tick row_size (ts =
// TickScale::make(row_size, 1)); r itself unless r is astronomically far from 0 (monotone in r).
VPOC_HD int64_t delta_poc_row_of(int64_t r, const ladder::TickScale& ts) {
  const double p = ladder::row_price(r, ts.tick);
  const double q = ts.exact ? ts.ticks<true>(p) : ts.ticks<false>(p);
  return static_cast<int64_t>(ladder::round_half_even(q));
}

// The index of the first int8 side in s[0, n) that is not -1, 0 or +1; -1 when every one is. Blocks of
// 256 are tested branch-free (a loop the compiler vectorises); only a block holding a bad one is searched.
inline int64_t first_bad_i8(const int8_t* s, int64_t n) {
  constexpr int64_t kBlock = 256;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = b + kBlock < n ? b + kBlock : n;
    uint8_t bad = 0;
    for (int64_t i = b; i < e; ++i) bad |= static_cast<uint8_t>(static_cast<uint8_t>(s[i] + 1) > 2);
    if (bad)
      for (int64_t i = b; i < e; ++i)
        if (static_cast<uint8_t>(s[i] + 1) > 2) return i;
  }
  return -1;
}

// Letters in[0, n) as int8 codes into out; the index of the first byte that is not 'B', 'A' or 'N'
// (out is then incomplete), or -1.
inline int64_t letters_to_codes(const uint8_t* in, int8_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const int8_t c = code_c8(in[i]);
    if (c == kBad) return i;
    out[i] = c;
  }
  return -1;
}

}  // namespace vpoc::side
