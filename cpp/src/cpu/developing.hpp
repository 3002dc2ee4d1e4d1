// cpu/developing.hpp — developing (no-lookahead) POC / VAH / VAL for every input row (CPU backend).
// Contract: docs/contract.md "Developing series"; reads the finished profiles' row ranges only.
#pragma once

#include "core/source.hpp"
#include "vpoc/engine.hpp"

namespace vpoc::cpu {

// Fills prof.dev_poc / dev_vah / dev_val ([N] row prices) for the inputs `in` (host pointers,
// element 0 = row 0), whose finished per-session profiles prof already holds.
void developing(const InputView& in, const SessionSpan& sessions, const Options& opt, Profiles& prof);

}  // namespace vpoc::cpu
