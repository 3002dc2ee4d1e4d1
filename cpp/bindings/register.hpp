// bindings/register.hpp — the pybind11 registration functions, one per concept, and what they share.
// Contract: only cpp/bindings/ includes pybind11; module.cpp calls each register_* once.
#pragma once

#include <pybind11/pybind11.h>

#include "vpoc/side.hpp"
#include "vpoc/types.hpp"

namespace vpoc_bind {

namespace py = pybind11;

void register_options(py::module_& m);   // Options, Placement
void register_profiles(py::module_& m);  // Result, profile_trades, profile_bars, offsets_from_ids
void register_live(py::module_& m);      // LiveSession
void register_device(py::module_& m);    // GPU discovery, memory, DeviceArray, build facts
void register_side(py::module_& m);      // check_side, side_levels, side_dict (CPU aggressor side)

// A checked vpoc::Options from Python values: _core.Options(...) itself (its keyword arguments, in
// this order), LiveSession's and the pickle's.
vpoc::Options make_options(const py::object& tick_size, const py::object& ticks_per_row, const py::object& value_area,
                           const py::object& va_method, const py::object& poc_tie, const py::object& max_rows,
                           const py::object& threads, const py::object& developing, const py::object& distribute,
                           const py::object& snap, const py::object& window = py::none(),
                           const py::object& va_rows = py::none(), const py::object& va_compare = py::none(),
                           const py::object& va_stop = py::none(), const py::object& tie_tol = py::none(),
                           const py::object& row_label = py::none(), const py::object& price_label = py::none(),
                           const py::object& va_target = py::none(), const py::object& bins = py::none(),
                           const py::object& accumulate = py::none(), const py::object& bin_report = py::none(),
                           const py::object& window_across = py::none());
// The peer-rule keywords of make_options (docs/presets.md), in its order after `window`.
inline constexpr const char* kRuleKeys[] = {"va_rows",   "va_compare",  "va_stop",  "tie_tol",
                                            "row_label", "price_label", "va_target"};
inline constexpr int kNRuleKeys = 7;

// Every side column of a sided call moved into a dict of host numpy arrays (register_side.cpp); dev_delta None
// unless developing.
py::dict side_dict(vpoc::SideColumns&& c, bool developing);
// A GPU call's side columns (vpoc::SideDeviceColumns) as zero-copy DeviceArrays of GPU `device`, complete
// after `ready` (imbalance flags: int8 0 / 1; dev_delta: None where the engine did not make it).
py::dict side_device_dict(const vpoc::SideDeviceColumns& c, int device, const vpoc::Ready& ready);

// The vpoc::Options held by a Python _core.Options object (TypeError naming `name` otherwise).
const vpoc::Options& options_of(const py::handle& obj, const char* name = "options");

}  // namespace vpoc_bind

#include "interrupt.hpp"  // interruptible(opt, fn): CPU calls without the GIL, Ctrl-C-able
