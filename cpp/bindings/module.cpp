// bindings/module.cpp — the _core extension: one registration per concept, errors translated once.
// Contract: vpoc::Error subclasses become Python exceptions here and nowhere else; the GIL is released while engines run.
#include <pybind11/pybind11.h>

#include <string>

#include "gpu_input.hpp"
#include "register.hpp"
#include "vpoc/errors.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "vpoc C++ core (private; use the vpoc package)";

  static py::exception<vpoc::OutOfMemoryError> oom(m, "OutOfMemoryError", PyExc_MemoryError);
  // vpoc.InputError: every bad argument or input row the C++ finds, a ValueError carrying
  // .argument (name or None), .index (row or None), .reason (the message without the
  // "name[i]=value" lead) and .session (the session's position in the call, or None): callers
  // re-word or re-index it from these, never from the text.
  static py::exception<vpoc::ValueError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const vpoc::ValueError& e) {
      py::object err = py::reinterpret_borrow<py::object>(input_error)(py::str(e.what()));
      err.attr("argument") = e.argument().empty() ? py::object(py::none()) : py::object(py::str(e.argument()));
      err.attr("index") = e.index() < 0 ? py::object(py::none()) : py::object(py::int_(e.index()));
      err.attr("reason") = py::str(e.reason());
      err.attr("session") = e.session() < 0 ? py::object(py::none()) : py::object(py::int_(e.session()));
      PyErr_SetObject(input_error.ptr(), err.ptr());
    } catch (const vpoc::TypeError& e) {
      // a TypeError with the same fields (.argument, .index, .reason, .session) where it names an argument
      py::object err = py::reinterpret_borrow<py::object>(PyExc_TypeError)(py::str(e.what()));
      err.attr("argument") = e.argument().empty() ? py::object(py::none()) : py::object(py::str(e.argument()));
      err.attr("index") = e.index() < 0 ? py::object(py::none()) : py::object(py::int_(e.index()));
      err.attr("reason") = py::str(e.reason());
      err.attr("session") = e.session() < 0 ? py::object(py::none()) : py::object(py::int_(e.session()));
      PyErr_SetObject(PyExc_TypeError, err.ptr());
    } catch (const vpoc::OutOfMemoryError& e) {
      PyErr_SetString(oom.ptr(), e.what());
    } catch (const vpoc::Cancelled& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());  // no handler's exception to raise
    } catch (const vpoc::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, (std::string(e.what()) + " [" + e.where() + "]").c_str());
    }
  });

  vpoc_bind::register_options(m);
  vpoc_bind::register_profiles(m);
  vpoc_bind::register_live(m);
  vpoc_bind::register_device(m);
  vpoc_bind::register_gpu_input(m);
  vpoc_bind::register_side(m);
}
