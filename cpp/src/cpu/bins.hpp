// cpu/bins.hpp — bins=N on the CPU: each session (window) through core/bins.hpp, sessions in parallel.
// Contract: docs/presets.md ("bins"); rows read in input order within a session, results independent of threads.
#pragma once

#include <vector>

#include "vpoc/engine.hpp"

namespace vpoc::cpu {

// The profiles of bins=N (opt.bins > 0): `volume` holds N bins per non-empty session, the levels
// are bin indices (low_row 0) and prices; bin_low / bin_width [S] are each session's ladder
// (NaN for an empty one). With opt.developing, dev_* are each row's prefix (window) rebuilt.
Profiles profile_bins_trades(const Array& price, const Array& volume, const SessionSpan& sessions, const Options& opt,
                             std::vector<double>& bin_low, std::vector<double>& bin_width);
Profiles profile_bins_bars(const BarsInput& bars, const SessionSpan& sessions, const Options& opt,
                           std::vector<double>& bin_low, std::vector<double>& bin_width);

}  // namespace vpoc::cpu
