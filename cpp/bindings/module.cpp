// bindings/module.cpp — the only pybind11 code: numpy arrays in, zero-copy result views out.
// Contract: the GIL is released while an engine runs; vpoc::Error subclasses map to Python exceptions here.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device_array.hpp"
#include "vpoc/vpoc.hpp"

namespace py = pybind11;

namespace {

// A 1-D C-contiguous numpy array as a borrowed vpoc::Array (the caller keeps it alive).
vpoc::Array borrow(const py::array& a, const char* name) {
  if (a.ndim() != 1) VPOC_THROW(ValueError, name, " must be 1-D, got ", a.ndim(), " dimensions");
  if (!(a.flags() & py::array::c_style)) VPOC_THROW(ValueError, name, " must be contiguous");
  vpoc::Array out;
  out.data = a.data();
  out.size = static_cast<int64_t>(a.shape(0));
  out.name = name;
  const char kind = a.dtype().kind();
  const auto size = a.dtype().itemsize();
  if (kind == 'f' && size == 4) out.dtype = vpoc::DType::f32;
  else if (kind == 'f' && size == 8) out.dtype = vpoc::DType::f64;
  else if (kind == 'i' && size == 4) out.dtype = vpoc::DType::i32;
  else if (kind == 'i' && size == 8) out.dtype = vpoc::DType::i64;
  else VPOC_THROW(TypeError, name, " must be float32, float64, int32 or int64 for the engine");
  return out;
}

vpoc::SessionSpan span_of(const py::array_t<int64_t, py::array::c_style>& offsets) {
  if (offsets.ndim() != 1 || offsets.shape(0) < 1)
    VPOC_THROW(ValueError, "offsets must be 1-D with at least one element (0)");
  return {offsets.data(), static_cast<int64_t>(offsets.shape(0)) - 1};
}

vpoc::Options options(double tick_size, int64_t ticks_per_row, double value_area,
                      const std::string& va_method, const std::string& poc_tie, int64_t max_rows,
                      int threads) {
  vpoc::Options o;
  o.tick_size = tick_size;
  o.ticks_per_row = ticks_per_row;
  o.value_area = value_area;
  o.va_method = vpoc::parse_va_method(va_method);
  o.poc_tie = vpoc::parse_poc_tie(poc_tie);
  o.max_rows = max_rows;
  o.threads = threads;
  vpoc::validate(o);
  return o;
}

// A numpy view of v whose base is the owning Result object: no copy, lifetime tied to it.
template <class T>
py::array view(const py::object& owner, const std::vector<T>& v) {
  return py::array_t<T>({static_cast<py::ssize_t>(v.size())}, {static_cast<py::ssize_t>(sizeof(T))},
                        v.data(), owner);
}

template <class T>
auto field(std::vector<T> vpoc::Profiles::*member) {
  return [member](const py::object& self) {
    const auto& p = self.cast<const vpoc::Profiles&>();
    return view(self, p.*member);
  };
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "vpoc C++ core (private; use the vpoc package)";

  static py::exception<vpoc::OutOfMemoryError> oom(m, "OutOfMemoryError", PyExc_MemoryError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const vpoc::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const vpoc::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const vpoc::OutOfMemoryError& e) {
      PyErr_SetString(oom.ptr(), e.what());
    } catch (const vpoc::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, (std::string(e.what()) + " [" + e.where() + "]").c_str());
    }
  });

  py::class_<vpoc::Profiles, std::shared_ptr<vpoc::Profiles>>(m, "Result")
      .def_property_readonly("n_sessions", [](const vpoc::Profiles& p) { return p.n_sessions; })
      .def_property_readonly("tick_size", [](const vpoc::Profiles& p) { return p.tick_size; })
      .def_property_readonly("ticks_per_row", [](const vpoc::Profiles& p) { return p.ticks_per_row; })
      .def_property_readonly("offsets", field(&vpoc::Profiles::offsets))
      .def_property_readonly("volume", field(&vpoc::Profiles::volume))
      .def_property_readonly("poc_row", field(&vpoc::Profiles::poc_row))
      .def_property_readonly("vah_row", field(&vpoc::Profiles::vah_row))
      .def_property_readonly("val_row", field(&vpoc::Profiles::val_row))
      .def_property_readonly("low_row", field(&vpoc::Profiles::low_row))
      .def_property_readonly("n_rows", field(&vpoc::Profiles::n_rows))
      .def_property_readonly("poc", field(&vpoc::Profiles::poc))
      .def_property_readonly("vah", field(&vpoc::Profiles::vah))
      .def_property_readonly("val", field(&vpoc::Profiles::val))
      .def_property_readonly("total_volume", field(&vpoc::Profiles::total_volume))
      .def_property_readonly("va_volume", field(&vpoc::Profiles::va_volume));

  m.def(
      "profile_trades",
      [](const py::array& price, const py::array& volume,
         const py::array_t<int64_t, py::array::c_style>& offsets, double tick_size,
         int64_t ticks_per_row, double value_area, const std::string& va_method,
         const std::string& poc_tie, int64_t max_rows, int threads) {
        const auto opt = options(tick_size, ticks_per_row, value_area, va_method, poc_tie, max_rows, threads);
        const auto p = borrow(price, "price"), v = borrow(volume, "volume");
        const auto s = span_of(offsets);
        py::gil_scoped_release nogil;
        return std::make_shared<vpoc::Profiles>(vpoc::profile_trades(p, v, s, opt));
      },
      py::arg("price"), py::arg("volume"), py::arg("offsets"), py::arg("tick_size"),
      py::arg("ticks_per_row"), py::arg("value_area"), py::arg("va_method"), py::arg("poc_tie"),
      py::arg("max_rows"), py::arg("threads"));

  m.def(
      "profile_bars",
      [](const py::array& high, const py::array& low, const py::array& close,
         const py::array& volume, const std::optional<py::array>& open,
         const py::array_t<int64_t, py::array::c_style>& offsets, double tick_size,
         int64_t ticks_per_row, const std::string& distribute, double value_area,
         const std::string& va_method, const std::string& poc_tie, int64_t max_rows, int threads) {
        const auto opt = options(tick_size, ticks_per_row, value_area, va_method, poc_tie, max_rows, threads);
        const auto dist = vpoc::parse_distribute(distribute);
        vpoc::BarsInput b;
        b.high = borrow(high, "high");
        b.low = borrow(low, "low");
        b.close = borrow(close, "close");
        b.volume = borrow(volume, "volume");
        if (open) {
          b.open = borrow(*open, "open");
          b.has_open = true;
        }
        const auto s = span_of(offsets);
        py::gil_scoped_release nogil;
        return std::make_shared<vpoc::Profiles>(vpoc::profile_bars(b, s, dist, opt));
      },
      py::arg("high"), py::arg("low"), py::arg("close"), py::arg("volume"), py::arg("open"),
      py::arg("offsets"), py::arg("tick_size"), py::arg("ticks_per_row"), py::arg("distribute"),
      py::arg("value_area"), py::arg("va_method"), py::arg("poc_tie"), py::arg("max_rows"),
      py::arg("threads"));

  m.def(
      "offsets_from_ids",
      [](const py::array_t<int64_t, py::array::c_style>& ids, const std::string& name) {
        std::vector<int64_t> offsets, labels;
        {
          py::gil_scoped_release nogil;
          vpoc::offsets_from_ids(ids.data(), static_cast<int64_t>(ids.size()), name.c_str(), offsets,
                                 labels);
        }
        return py::make_tuple(py::array_t<int64_t>(offsets.size(), offsets.data()),
                              py::array_t<int64_t>(labels.size(), labels.data()));
      },
      py::arg("ids"), py::arg("name"));

  m.def("backends", []() {
    std::vector<std::string> b{"cpu"};
#if defined(VPOC_BACKEND_CUDA)
    b.emplace_back("cuda");
#elif defined(VPOC_BACKEND_HIP)
    b.emplace_back("hip");
#endif
    return b;
  });
  m.attr("NO_ROW") = vpoc::kNoRow;

  vpoc_bind::register_device_array(m);
  // Test-only: a host-memory (kDLCPU) DeviceArray over a copy of a 1-D array, for CPU-only DLPack tests.
  m.def("_host_device_array", &vpoc_bind::host_device_array, py::arg("array"),
        py::arg("device_type") = 1, py::arg("device_id") = 0);
}
