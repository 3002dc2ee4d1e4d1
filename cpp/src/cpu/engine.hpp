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

// The side fields of bars whose buy / sell volumes are the columns buy / sell (aligned with bars; bars.volume
// unread): each column put on the ladder by the engine's bar binning (the rows of profile_bars with it as the
// volume: the masked passes of before), then side_levels; row_off [S + 1] / low_row [S] receive the rows'
// layout (the call's profile's). ValueError naming buy_volume[i] / sell_volume[i] (buy first) as the engine
// names volume[i]; a bad bar as profile_bars. dev_delta empty.
SideColumns bar_sides(const BarsInput& bars, const Array& buy, const Array& sell, const SessionSpan& sessions,
                      Distribute distribute, const Options& opt, const SideRules& rules, std::vector<int64_t>& row_off,
                      std::vector<int64_t>& low_row);

}  // namespace vpoc::cpu
