// cpu/drain.hpp — an int64 row window's rows out as float64 and zeroed, in one pass (AVX-512 where the CPU has it).
// Contract: o[k] = float64 of row k's kLanes-lane sum, the rows' sum mod 2**64 returned, rows [0, clear) zero after.
#pragma once

#include <cstdint>

namespace vpoc::cpu {

// Rows 0..n-1 of an int64 window (kLanes accumulators a row, row-major from b): o[k] = the float64
// of row k's lane sum (a signed conversion, as acc_to_double), and returns the rows' sum mod 2**64
// (the integer word of their exact Fixed sum); rows 0..clear-1 (clear >= n) are zero after. The
// AVX-512 variant (runtime-dispatched) reads, converts and zeroes each row in the same pass; every
// variant returns identical results.
uint64_t drain_int64(int64_t* b, int64_t n, int64_t clear, double* o);

}  // namespace vpoc::cpu
