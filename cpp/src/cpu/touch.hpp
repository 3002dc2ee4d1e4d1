// cpu/touch.hpp — the rows of one session that its input rows touched (va_rows='touched'), CPU backend.
// Contract: a row is touched when Source::rows (the binning's ladder rules) puts a share on it, even 0.
#pragma once

#include <cstdint>

#include "core/source.hpp"
#include "vpoc/types.hpp"

namespace vpoc::cpu {

// flags[0..n_rows-1] (row low_row + k): 1 where one of input rows [begin, end) put a share, else 0.
// Runs only when va_rows='touched' (options refuse it with distribute='legacy'). Returns the number
// of touched rows; rows outside [low_row, low_row + n_rows) (none after a successful binning) are
// not flagged.
int64_t touched_rows(const InputView& in, int64_t begin, int64_t end, const Options& opt, int64_t low_row,
                     int64_t n_rows, uint8_t* flags);

}  // namespace vpoc::cpu
