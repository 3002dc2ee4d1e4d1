// bindings/interrupt.hpp — Ctrl-C for CPU calls that run without the GIL (see register.hpp).
// Contract: only the interpreter's main thread polls (the only one Python runs signal handlers on).
#pragma once

#include <pybind11/pybind11.h>

#include "vpoc/errors.hpp"
#include "vpoc/types.hpp"

namespace vpoc_bind {

namespace py = pybind11;

// The ident of the interpreter's main thread.
inline unsigned long main_thread_ident() {
  static const unsigned long ident =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  return ident;
}

// Options::interrupt.check for the main thread: runs the Python handlers of pending signals;
// true when one raised (KeyboardInterrupt: its error stays set for interruptible()).
inline bool python_signal_raised(void*) {
  py::gil_scoped_acquire gil;
  return PyErr_CheckSignals() != 0;
}

// Runs fn() (a CPU engine call reading opt) with the GIL released; on the main thread the engine asks
// python_signal_raised between sessions, and the exception a handler raised is what this raises.
// Called with the GIL held.
template <class F>
auto interruptible(vpoc::Options& opt, F&& fn) -> decltype(fn()) {
  if (PyThread_get_thread_ident() == main_thread_ident()) opt.interrupt.check = &python_signal_raised;
  try {
    py::gil_scoped_release nogil;
    return fn();
  } catch (const vpoc::Cancelled&) {
    if (PyErr_Occurred()) throw py::error_already_set();
    throw;
  }
}

}  // namespace vpoc_bind
