// cpu/side_planes.hpp — the aggressor side of a block of trades into its binning slots (sided calls, CPU backend).
// Contract: a trade of int8 code c goes to plane c & 3 of its row (0 unknown, 1 buy, 3 sell: RowWindow's sided layout).
#pragma once

#include <cstdint>

#include "cpu/row_window.hpp"

namespace vpoc::cpu {

// Records (cpu/slots.hpp) whose low word is the byte offset slot << shift of a row of kLanes accumulators:
// the offset of the trade's plane in rows of kSidePlanes planes, ((slot << 2) + plane) << shift. The
// caller keeps slot << (shift + 2) below 2**32 (Records::kMaxRows / kSidePlanes rows).
inline void side_records(uint64_t* rec, const int8_t* side, int n, int shift) {
  for (int j = 0; j < n; ++j) {
    const uint64_t r = rec[j];
    const auto plane = static_cast<uint32_t>(static_cast<uint8_t>(side[j]) & 3u);
    const uint32_t lo = (static_cast<uint32_t>(r) << 2) + (plane << shift);
    rec[j] = (r & 0xFFFFFFFF00000000ull) | lo;
  }
}

// int32 slots (rows): slot * kSidePlanes + plane, the plane's index in units of kLanes accumulators. The
// caller keeps the window below 2**29 rows.
inline void side_slots(int32_t* slot, const int8_t* side, int n) {
  for (int j = 0; j < n; ++j) slot[j] = slot[j] * kSidePlanes + (static_cast<uint8_t>(side[j]) & 3);
}

}  // namespace vpoc::cpu
