// cpu/levels.hpp — POC, value area and totals of one session's finished row histogram (CPU backend).
// Contract: docs/contract.md "POC" and "Value area"; n >= 1 rows starting at absolute row low_row.
#pragma once

#include <cstdint>
#include <vector>

#include "vpoc/types.hpp"

namespace vpoc::cpu {

struct SessionLevels {
  int64_t poc, val, vah;  // indices into the session's rows (0..n-1)
  double total, va_volume;
};

// `total`: the session's exact total (its fixed-point sum, rounded once). `order` is the caller's
// reusable scratch for the greedy method. `touched` ([n], va_rows='touched'; else null): the rows
// an input row touched (cpu/touch.hpp).
SessionLevels session_levels(const double* v, int64_t n, double total, const Options& opt,
                             std::vector<int64_t>& order, const uint8_t* touched = nullptr);

}  // namespace vpoc::cpu
