// bindings/register.hpp — the pybind11 registration functions, one per concept, and what they share.
// Contract: only cpp/bindings/ includes pybind11; module.cpp calls each register_* once.
#pragma once

#include <pybind11/pybind11.h>

#include "vpoc/types.hpp"

namespace vpoc_bind {

namespace py = pybind11;

void register_options(py::module_& m);   // Options, Placement
void register_profiles(py::module_& m);  // Result, profile_trades, profile_bars, offsets_from_ids
void register_live(py::module_& m);      // LiveSession
void register_device(py::module_& m);    // GPU discovery, memory, DeviceArray, build facts

// A checked vpoc::Options from Python values (the keyword arguments of _core.Options).
vpoc::Options make_options(const py::handle& tick_size, const py::handle& ticks_per_row, const py::handle& value_area,
                           const py::handle& va_method, const py::handle& poc_tie, const py::handle& max_rows,
                           const py::handle& threads, const py::handle& developing, const py::handle& distribute,
                           const py::handle& snap, const py::handle& window = py::none(),
                           const py::handle& va_rows = py::none(), const py::handle& va_compare = py::none(),
                           const py::handle& va_stop = py::none(), const py::handle& tie_tol = py::none(),
                           const py::handle& row_label = py::none(), const py::handle& price_label = py::none(),
                           const py::handle& va_target = py::none(), const py::handle& bins = py::none(),
                           const py::handle& accumulate = py::none(), const py::handle& bin_report = py::none(),
                           const py::handle& window_across = py::none());
// The peer-rule keywords of make_options (docs/presets.md), in its order after `window`.
inline constexpr const char* kRuleKeys[] = {"va_rows",   "va_compare",  "va_stop",  "tie_tol",
                                            "row_label", "price_label", "va_target"};
inline constexpr int kNRuleKeys = 7;

// The vpoc::Options held by a Python _core.Options object (TypeError naming `name` otherwise).
const vpoc::Options& options_of(const py::handle& obj, const char* name = "options");

}  // namespace vpoc_bind

#include "interrupt.hpp"  // interruptible(opt, fn): CPU calls without the GIL, Ctrl-C-able
