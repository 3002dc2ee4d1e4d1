// cpu/engine.hpp — the CPU backend's entry points (inputs already validated by core/engine.cpp).
// Contract: parallel across sessions on opt.threads workers; results independent of the thread count.
#pragma once

#include "vpoc/engine.hpp"

namespace vpoc::cpu {

Profiles profile_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                        const Options& opt);
Profiles profile_bars(const BarsInput& bars, const SessionSpan& sessions, Distribute distribute,
                      const Options& opt);

}  // namespace vpoc::cpu
