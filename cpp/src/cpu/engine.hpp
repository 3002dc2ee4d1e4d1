// cpu/engine.hpp — the CPU backend's entry points (inputs already validated by core/engine.cpp).
// Contract: parallel across sessions on opt.threads workers; results independent of the thread count.
#pragma once

#include "vpoc/engine.hpp"
#include "vpoc/side.hpp"

namespace vpoc::cpu {

// side (sided trades, else null): the aggressor-side fields too, in the same binning pass (vpoc/side.hpp).
Profiles profile_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                        const Options& opt, SideJob* side = nullptr);
Profiles profile_bars(const BarsInput& bars, const SessionSpan& sessions, Distribute distribute,
                      const Options& opt);

}  // namespace vpoc::cpu
