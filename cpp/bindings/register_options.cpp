// bindings/register_options.cpp — _core.Options (one options object per call) and _core.Placement.
// Contract: keyword construction checks every argument once (checks.hpp, then vpoc::validate); repr and pickle round-trip.
#include <pybind11/stl.h>

#include <climits>
#include <string>
#include <vector>

#include "checks.hpp"
#include "register.hpp"
#include "vpoc/engine.hpp"
#include "vpoc/errors.hpp"

namespace vpoc_bind {
namespace checks {
namespace {

py::handle np_bool() {
  // leaked on purpose: a static py::object would be released after the interpreter is gone
  static const py::handle t = py::module_::import("numpy").attr("bool_").cast<py::object>().release();
  return t;
}
bool is_bool(const py::handle& x) { return PyBool_Check(x.ptr()) || py::isinstance(x, np_bool()); }
std::string type_name(const py::handle& x) { return py::str(py::type::handle_of(x).attr("__name__")); }
// f"{x!r:.40}"
std::string repr40(const py::handle& x) {
  py::str r = py::repr(x);
  return py::str(r[py::slice(0, 40, 1)]);
}
bool is_a(const py::handle& x, const char* abc) {
  static const py::handle numbers = py::module_::import("numbers").release();  // leaked (see np_bool)
  return py::isinstance(x, numbers.attr(abc));
}
bool is_real(const py::handle& x) {
  if (PyFloat_Check(x.ptr()) || (PyLong_Check(x.ptr()) && !PyBool_Check(x.ptr()))) return true;
  return !is_bool(x) && is_a(x, "Real");
}
bool is_integral(const py::handle& x) {
  if (PyLong_Check(x.ptr())) return !PyBool_Check(x.ptr());
  return !is_bool(x) && is_a(x, "Integral");
}

}  // namespace

double real(const py::handle& x, const char* name) {
  if (!is_real(x)) VPOC_THROW_ARG(TypeError, name, name, " must be a real number, got ", type_name(x));
  return py::float_(py::reinterpret_borrow<py::object>(x)).cast<double>();
}

int64_t integer(const py::handle& x, const char* name, int64_t lo, int64_t hi) {
  if (!is_integral(x))
    VPOC_THROW_ARG(TypeError, name, name, " must be an integer in [", lo, ", ", hi, "], got ", type_name(x), " ", repr40(x));
  py::int_ v(py::reinterpret_borrow<py::object>(x));
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow != 0 || value < lo || value > hi) {
    const std::string text = py::str(v);
    if (hi == kInt64Max) VPOC_THROW_ARG(ValueError, name, name, " must be >= ", lo, " (and at most 2**63 - 1), got ", text);
    VPOC_THROW_ARG(ValueError, name, name, " must be in [", lo, ", ", hi, "], got ", text);
  }
  return value;
}

int threads(const py::handle& x) {
  if (x.is_none()) return 0;
  if (!is_integral(x))
    VPOC_THROW_ARG(TypeError, "threads", "threads must be None (all cores) or an integer in [1, ", vpoc::kMaxThreads, "], got ",
               type_name(x), " ", repr40(x));
  py::int_ v(py::reinterpret_borrow<py::object>(x));
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow != 0 || value < 1 || value > vpoc::kMaxThreads)
    VPOC_THROW_ARG(ValueError, "threads", "threads must be in [1, ", vpoc::kMaxThreads, "] (or None: all cores), got ",
               std::string(py::str(v)));
  return static_cast<int>(value);
}

bool boolean(const py::handle& x, const char* name) {
  if (!is_bool(x)) VPOC_THROW_ARG(TypeError, name, name, " must be True or False, got ", type_name(x));
  return PyObject_IsTrue(x.ptr()) == 1;
}

std::string string(const py::handle& x, const char* name) {
  if (!PyUnicode_Check(x.ptr())) VPOC_THROW_ARG(TypeError, name, name, " must be a string, got ", type_name(x));
  return x.cast<std::string>();
}

}  // namespace checks

using vpoc::name_of;  // the enums' Python spellings (vpoc/types.hpp EnumNames)

vpoc::Options make_options(const py::object& tick_size, const py::object& ticks_per_row, const py::object& value_area,
                           const py::object& va_method, const py::object& poc_tie, const py::object& max_rows,
                           const py::object& threads, const py::object& developing, const py::object& distribute,
                           const py::object& snap, const py::object& window, const py::object& va_rows,
                           const py::object& va_compare, const py::object& va_stop, const py::object& tie_tol,
                           const py::object& row_label, const py::object& price_label, const py::object& va_target,
                           const py::object& bins, const py::object& accumulate, const py::object& bin_report,
                           const py::object& window_across) {
  vpoc::Options o;
  o.tick_size = checks::real(tick_size, "tick_size");
  o.ticks_per_row = checks::integer(ticks_per_row, "ticks_per_row", 1);
  o.value_area = checks::real(value_area, "value_area");
  o.va_method = vpoc::parse_va_method(checks::string(va_method, "va_method"));
  o.poc_tie = vpoc::parse_poc_tie(checks::string(poc_tie, "poc_tie"));
  o.max_rows = checks::integer(max_rows, "max_rows", 1, 1000000000);
  o.developing = checks::boolean(developing, "developing");
  o.distribute = vpoc::parse_distribute(checks::string(distribute, "distribute"));
  o.snap = checks::boolean(snap, "snap");
  o.threads = checks::threads(threads);
  o.window = window.is_none() ? 0 : checks::integer(window, "window", 1);
  // Peer rules (docs/presets.md); None: the default.
  if (!va_rows.is_none()) o.va_rows = vpoc::parse_va_rows(checks::string(va_rows, "va_rows"));
  if (!va_compare.is_none()) o.va_compare = vpoc::parse_va_compare(checks::string(va_compare, "va_compare"));
  if (!va_stop.is_none()) o.va_stop = vpoc::parse_va_stop(checks::string(va_stop, "va_stop"));
  if (!tie_tol.is_none()) o.tie_tol = checks::real(tie_tol, "tie_tol");
  if (!row_label.is_none()) o.row_label = vpoc::parse_row_label(checks::string(row_label, "row_label"));
  if (!price_label.is_none()) o.price_label = vpoc::parse_price_label(checks::string(price_label, "price_label"));
  if (!va_target.is_none()) o.va_target = vpoc::parse_va_target(checks::string(va_target, "va_target"));
  // bins=N (docs/presets.md); None: the tick ladder
  o.bins = bins.is_none() ? 0 : checks::integer(bins, "bins", 1, 100000000);
  if (!accumulate.is_none()) o.accumulate = vpoc::parse_accumulate(checks::string(accumulate, "accumulate"));
  if (!bin_report.is_none()) o.bin_report = vpoc::parse_bin_report(checks::string(bin_report, "bin_report"));
  // windows across sessions (docs/contract.md "Rolling windows"); None: within each session
  if (!window_across.is_none()) o.window_across = checks::boolean(window_across, "window_across_sessions");
  vpoc::validate(o);
  return o;
}

namespace {

py::tuple state_of(const vpoc::Options& o) {
  return py::make_tuple(o.tick_size, o.ticks_per_row, o.value_area, name_of(o.va_method), name_of(o.poc_tie),
                        o.max_rows, o.threads ? py::object(py::int_(o.threads)) : py::object(py::none()),
                        o.developing, name_of(o.distribute), o.snap,
                        o.window ? py::object(py::int_(o.window)) : py::object(py::none()), name_of(o.va_rows),
                        name_of(o.va_compare), name_of(o.va_stop), o.tie_tol, name_of(o.row_label),
                        name_of(o.price_label), name_of(o.va_target),
                        o.bins ? py::object(py::int_(o.bins)) : py::object(py::none()), name_of(o.accumulate),
                        name_of(o.bin_report), o.window_across);
}

}  // namespace

const vpoc::Options& options_of(const py::handle& obj, const char* name) {
  if (!py::isinstance<vpoc::Options>(obj))
    VPOC_THROW_ARG(TypeError, name, name, " must be a vpoc._core.Options, got ", checks::type_name(obj));
  return obj.cast<const vpoc::Options&>();
}

void register_options(py::module_& m) {
  using O = vpoc::Options;
  py::class_<O>(m, "Options", "Every option of a call but the data and the device: ladder, levels, bars, threads.")
      .def(py::init(&make_options),
           py::kw_only(), py::arg("tick_size"), py::arg("ticks_per_row") = 1, py::arg("value_area") = 0.70,
           py::arg("va_method") = "cbot", py::arg("poc_tie") = "center", py::arg("max_rows") = 1000000,
           py::arg("threads") = py::none(), py::arg("developing") = false, py::arg("distribute") = "uniform",
           py::arg("snap") = false, py::arg("window") = py::none(), py::arg("va_rows") = "all",
           py::arg("va_compare") = "tie_up", py::arg("va_stop") = "reaches", py::arg("tie_tol") = 1e-9,
           py::arg("row_label") = "low", py::arg("price_label") = "product", py::arg("va_target") = "float",
           py::arg("bins") = py::none(), py::arg("accumulate") = "exact", py::arg("bin_report") = "center_edges",
           py::arg("window_across_sessions") = false)
      .def_property_readonly("tick_size", [](const O& o) { return o.tick_size; })
      .def_property_readonly("ticks_per_row", [](const O& o) { return o.ticks_per_row; })
      .def_property_readonly("value_area", [](const O& o) { return o.value_area; })
      .def_property_readonly("va_method", [](const O& o) { return name_of(o.va_method); })
      .def_property_readonly("poc_tie", [](const O& o) { return name_of(o.poc_tie); })
      .def_property_readonly("max_rows", [](const O& o) { return o.max_rows; })
      .def_property_readonly("threads", [](const O& o) { return o.threads ? py::object(py::int_(o.threads)) : py::object(py::none()); })
      .def_property_readonly("developing", [](const O& o) { return o.developing; })
      .def_property_readonly("distribute", [](const O& o) { return name_of(o.distribute); })
      .def_property_readonly("snap", [](const O& o) { return o.snap; })
      .def_property_readonly("window", [](const O& o) { return o.window ? py::object(py::int_(o.window)) : py::object(py::none()); })
      .def_property_readonly("va_rows", [](const O& o) { return name_of(o.va_rows); })
      .def_property_readonly("va_compare", [](const O& o) { return name_of(o.va_compare); })
      .def_property_readonly("va_stop", [](const O& o) { return name_of(o.va_stop); })
      .def_property_readonly("tie_tol", [](const O& o) { return o.tie_tol; })
      .def_property_readonly("row_label", [](const O& o) { return name_of(o.row_label); })
      .def_property_readonly("price_label", [](const O& o) { return name_of(o.price_label); })
      .def_property_readonly("va_target", [](const O& o) { return name_of(o.va_target); })
      .def_property_readonly("bins", [](const O& o) { return o.bins ? py::object(py::int_(o.bins)) : py::object(py::none()); })
      .def_property_readonly("accumulate", [](const O& o) { return name_of(o.accumulate); })
      .def_property_readonly("bin_report", [](const O& o) { return name_of(o.bin_report); })
      .def_property_readonly("window_across_sessions", [](const O& o) { return o.window_across; })
      .def("__repr__",
           [](const O& o) {
             static const char* keys[] = {"tick_size", "ticks_per_row", "value_area", "va_method", "poc_tie",
                                          "max_rows",  "threads",       "developing", "distribute", "snap",
                                          "window",    "va_rows",       "va_compare", "va_stop",    "tie_tol",
                                          "row_label", "price_label", "va_target", "bins", "accumulate",
                                          "bin_report", "window_across_sessions"};
             const py::tuple t = state_of(o);
             std::string s = "Options(";
             for (size_t i = 0; i < t.size(); ++i)
               s += std::string(i ? ", " : "") + keys[i] + "=" + std::string(py::repr(t[i]));
             return s + ")";
           })
      .def(py::pickle([](const O& o) { return state_of(o); },
                      [](const py::tuple& t) {
                        // 10 entries: a state pickled before window= existed; 11: before the peer rules;
                        // 16: before price_label / va_target; 18: before bins / accumulate / bin_report; 21: before
                        // window_across_sessions
                        if (t.size() != 10 && t.size() != 11 && t.size() != 16 && t.size() != 18 && t.size() != 21 &&
                            t.size() != 22)
                          VPOC_THROW(ValueError, "Options state must have 22 entries, got ", t.size());
                        const auto at = [&](size_t i) { return i < t.size() ? py::object(t[i]) : py::object(py::none()); };
                        return make_options(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], at(10), at(11),
                                            at(12), at(13), at(14), at(15), at(16), at(17), at(18), at(19), at(20),
                                            at(21));
                      }));

  using P = vpoc::Placement;
  py::class_<P>(m, "Placement", "Where a call runs: a GPU, its scratch budget, its stream and the streams to wait for.")
      .def(py::init([](int device, const py::object& memory_budget, std::uintptr_t stream, bool user_stream,
                       const std::vector<std::uintptr_t>& wait_streams) {
             P p;
             p.device = device;
             p.memory_budget = checks::integer(memory_budget, "memory_budget", 1);
             p.stream = stream;
             p.user_stream = user_stream;
             p.wait_streams = wait_streams;
             return p;
           }),
           py::kw_only(), py::arg("device"), py::arg("memory_budget") = int64_t(256) << 20, py::arg("stream") = 0,
           py::arg("user_stream") = false, py::arg("wait_streams") = std::vector<std::uintptr_t>{})
      .def_property_readonly("device", [](const P& p) { return p.device; })
      .def_property_readonly("memory_budget", [](const P& p) { return p.memory_budget; });

  // The scalar checks, for every Python entry point (vpoc._validate): one wording.
  m.def("check_real", [](const py::object& x, const std::string& name) { return checks::real(x, name.c_str()); },
        py::arg("x"), py::arg("name"));
  m.def("check_int",
        [](const py::object& x, const std::string& name, int64_t lo, int64_t hi) {
          return checks::integer(x, name.c_str(), lo, hi);
        },
        py::arg("x"), py::arg("name"), py::arg("minimum"), py::arg("maximum") = checks::kInt64Max);
  m.def("check_threads", [](const py::object& x) { return checks::threads(x); }, py::arg("x"));
  m.def("check_bool", [](const py::object& x, const std::string& name) { return checks::boolean(x, name.c_str()); },
        py::arg("x"), py::arg("name"));
  m.def("check_str", [](const py::object& x, const std::string& name) { return checks::string(x, name.c_str()); },
        py::arg("x"), py::arg("name"));
}

}  // namespace vpoc_bind
