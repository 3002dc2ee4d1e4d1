// bindings/module.cpp — the only pybind11 code: numpy arrays in, zero-copy result views out.
// Contract: the GIL is released while an engine runs; vpoc::Error subclasses map to Python exceptions here.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "device_array.hpp"
#include "vpoc/gpu.hpp"
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

// Host numpy array, or (pointer, size, typestr, device) for an array in GPU memory.
vpoc::Array borrow_any(const py::object& obj, const char* name) {
  if (!py::isinstance<py::tuple>(obj)) return borrow(obj.cast<py::array>(), name);
  const auto t = obj.cast<py::tuple>();
  if (t.size() != 4) VPOC_THROW(ValueError, name, ": expected (pointer, size, typestr, device)");
  vpoc::Array out;
  out.data = reinterpret_cast<const void*>(t[0].cast<std::uintptr_t>());
  out.size = t[1].cast<int64_t>();
  out.device = t[3].cast<int>();
  out.name = name;
  const auto ts = t[2].cast<std::string>();
  if (ts == "f4") out.dtype = vpoc::DType::f32;
  else if (ts == "f8") out.dtype = vpoc::DType::f64;
  else if (ts == "i4") out.dtype = vpoc::DType::i32;
  else if (ts == "i8") out.dtype = vpoc::DType::i64;
  else VPOC_THROW(TypeError, name, " on the GPU must be float32, float64, int32 or int64, got '", ts, "'");
  return out;
}

// The bars of a call (host numpy arrays or GPU array tuples, see borrow_any); open may be None.
vpoc::BarsInput bars_input(const py::object& high, const py::object& low, const py::object& close,
                           const py::object& volume, const py::object& open) {
  vpoc::BarsInput b;
  b.high = borrow_any(high, "high");
  b.low = borrow_any(low, "low");
  b.close = borrow_any(close, "close");
  b.volume = borrow_any(volume, "volume");
  if (!open.is_none()) {
    b.open = borrow_any(open, "open");
    b.has_open = true;
  }
  return b;
}

// A GPU result: vpoc::gpu::DeviceProfiles, whose columns Python sees as DeviceArrays.
struct DeviceResult {
  vpoc::gpu::DeviceProfiles p;
};

py::object column(const DeviceResult& r, const vpoc::gpu::DeviceColumn vpoc::gpu::DeviceProfiles::*member) {
  const auto& c = r.p.*member;
  using DP = vpoc::gpu::DeviceProfiles;
  const bool dev = member == &DP::dev_poc || member == &DP::dev_vah || member == &DP::dev_val;
  const auto& owner = member == &DP::volume ? r.p.volume_mem : dev ? r.p.developing_mem : r.p.sessions_mem;
  return vpoc_bind::make_device_array(owner, c.data, c.size, c.dtype, vpoc::gpu::dlpack_device_type(),
                                      r.p.device, r.p.ready);
}

vpoc::gpu::GpuOptions gpu_options(int device, int64_t memory_budget, std::uintptr_t stream, bool user_stream,
                                  const std::vector<std::uintptr_t>& wait_streams) {
  if (memory_budget < 1) VPOC_THROW(ValueError, "memory_budget must be > 0 bytes, got ", memory_budget);
  vpoc::gpu::GpuOptions g;
  g.device = device;
  g.memory_budget = memory_budget;
  g.stream = stream;
  g.user_stream = user_stream;
  g.wait_streams = wait_streams;
  return g;
}

// The call's session offsets, copied while the GIL is held: the engine validates them and then
// indexes the inputs with them (GIL released), so another Python thread must not be able to change
// them in between. S + 1 integers: small beside the rows.
struct Offsets {
  std::vector<int64_t> copy;
  vpoc::SessionSpan span() const { return {copy.data(), static_cast<int64_t>(copy.size()) - 1}; }
};

Offsets span_of(const py::array_t<int64_t, py::array::c_style>& offsets) {
  if (offsets.ndim() != 1 || offsets.shape(0) < 1)
    VPOC_THROW(ValueError, "offsets must be 1-D with at least one element (0)");
  const int64_t* o = offsets.data();
  return {std::vector<int64_t>(o, o + offsets.shape(0))};
}

vpoc::Options options(double tick_size, int64_t ticks_per_row, double value_area,
                      const std::string& va_method, const std::string& poc_tie, int64_t max_rows,
                      int64_t threads, bool developing) {
  vpoc::Options o;
  // checked before narrowing to int; vpoc::validate holds the same rule
  if (threads < 0 || threads > vpoc::kMaxThreads)
    VPOC_THROW(ValueError, "threads must be in [1, ", vpoc::kMaxThreads, "] (or None: all cores), got ", threads);
  o.tick_size = tick_size;
  o.ticks_per_row = ticks_per_row;
  o.value_area = value_area;
  o.va_method = vpoc::parse_va_method(va_method);
  o.poc_tie = vpoc::parse_poc_tie(poc_tie);
  o.max_rows = max_rows;
  o.threads = static_cast<int>(threads);
  o.developing = developing;
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

// The ident of the interpreter's main thread: the only thread that runs Python signal handlers.
unsigned long main_thread_ident() {
  static const unsigned long ident =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  return ident;
}

// Options::interrupt.check for the main thread: runs the Python handlers of pending signals;
// true when one raised (KeyboardInterrupt: its error stays set for interruptible()).
bool python_signal_raised(void*) {
  py::gil_scoped_acquire gil;
  return PyErr_CheckSignals() != 0;
}

// Runs fn() (a CPU engine call reading opt) with the GIL released, Ctrl-C-able: on the main thread
// (the only one Python runs signal handlers on) the engine asks python_signal_raised between
// sessions, and the exception a handler raised (KeyboardInterrupt) is what this call raises.
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

// The float64 columns of one live append (None: absent), kept alive while it runs; `copy`: private
// copies, so that the append reads exactly the rows it validated even if the caller's arrays change.
struct Cols {
  using A = py::array_t<double, py::array::c_style>;
  std::vector<A> keep;
  vpoc::LiveRows rows;
  bool copy;

  Cols(const py::object& price, const py::object& high, const py::object& low, const py::object& close,
       const py::object& open, const py::object& volume, bool copy_rows)
      : copy(copy_rows) {
    A v = volume.cast<A>();
    if (v.ndim() != 1) VPOC_THROW(ValueError, "volume must be 1-D");
    v = own(v);
    rows.n = static_cast<int64_t>(v.shape(0));
    keep.push_back(v);
    rows.volume = v.data();
    rows.price = col(price, "price");
    rows.high = col(high, "high");
    rows.low = col(low, "low");
    rows.close = col(close, "close");
    rows.open = col(open, "open");
  }
  A own(A a) const {
    if (!copy) return a;
    return A(a.size(), a.data());  // a new array holding a copy (1-D)
  }
  const double* col(const py::object& o, const char* name) {
    if (o.is_none()) return nullptr;
    A a = o.cast<A>();
    if (a.ndim() != 1 || a.shape(0) != rows.n)
      VPOC_THROW(ValueError, name, " must be 1-D with ", rows.n, " rows like volume");
    a = own(a);
    keep.push_back(a);
    return a.data();
  }
};

// A live session and the lock its Python methods hold while they use it.
struct LockedLive {
  explicit LockedLive(vpoc::LiveSession session) : s(std::move(session)) {}
  std::mutex m;
  vpoc::LiveSession s;
};

// Holds a live session's lock. Taken with the GIL held; it never waits for the lock while holding
// the GIL (the holder may be waiting for the GIL to finish its append): it tries once, and else
// waits with the GIL released. The GIL is held again once the lock is.
class LiveLock {
 public:
  explicit LiveLock(LockedLive& l) : lock_(l.m, std::try_to_lock) {
    if (!lock_.owns_lock()) {
      py::gil_scoped_release nogil;
      lock_.lock();
    }
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

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
    } catch (const vpoc::Cancelled& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());  // no handler's exception to raise
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
      .def_property_readonly("va_volume", field(&vpoc::Profiles::va_volume))
      .def_property_readonly("dev_poc", field(&vpoc::Profiles::dev_poc))
      .def_property_readonly("dev_vah", field(&vpoc::Profiles::dev_vah))
      .def_property_readonly("dev_val", field(&vpoc::Profiles::dev_val));

  m.def(
      "profile_trades",
      [](const py::array& price, const py::array& volume,
         const py::array_t<int64_t, py::array::c_style>& offsets, double tick_size,
         int64_t ticks_per_row, double value_area, const std::string& va_method,
         const std::string& poc_tie, int64_t max_rows, int64_t threads, bool developing) {
        auto opt = options(tick_size, ticks_per_row, value_area, va_method, poc_tie, max_rows, threads, developing);
        const auto p = borrow(price, "price"), v = borrow(volume, "volume");
        const auto s = span_of(offsets);
        return interruptible(opt, [&] {
          return std::make_shared<vpoc::Profiles>(vpoc::profile_trades(p, v, s.span(), opt));
        });
      },
      py::arg("price"), py::arg("volume"), py::arg("offsets"), py::arg("tick_size"),
      py::arg("ticks_per_row"), py::arg("value_area"), py::arg("va_method"), py::arg("poc_tie"),
      py::arg("max_rows"), py::arg("threads"), py::arg("developing"));

  m.def(
      "profile_bars",
      [](const py::array& high, const py::array& low, const py::array& close,
         const py::array& volume, const py::object& open,
         const py::array_t<int64_t, py::array::c_style>& offsets, double tick_size,
         int64_t ticks_per_row, const std::string& distribute, double value_area,
         const std::string& va_method, const std::string& poc_tie, int64_t max_rows, int64_t threads, bool developing) {
        auto opt = options(tick_size, ticks_per_row, value_area, va_method, poc_tie, max_rows, threads, developing);
        const auto dist = vpoc::parse_distribute(distribute);
        const vpoc::BarsInput b = bars_input(high, low, close, volume, open);
        const auto s = span_of(offsets);
        return interruptible(opt, [&] {
          return std::make_shared<vpoc::Profiles>(vpoc::profile_bars(b, s.span(), dist, opt));
        });
      },
      py::arg("high"), py::arg("low"), py::arg("close"), py::arg("volume"), py::arg("open"),
      py::arg("offsets"), py::arg("tick_size"), py::arg("ticks_per_row"), py::arg("distribute"),
      py::arg("value_area"), py::arg("va_method"), py::arg("poc_tie"), py::arg("max_rows"),
      py::arg("threads"), py::arg("developing"));

  using DP = vpoc::gpu::DeviceProfiles;
  py::class_<DeviceResult, std::shared_ptr<DeviceResult>>(m, "DeviceResult")
      .def_property_readonly("n_sessions", [](const DeviceResult& r) { return r.p.n_sessions; })
      .def_property_readonly("tick_size", [](const DeviceResult& r) { return r.p.tick_size; })
      .def_property_readonly("ticks_per_row", [](const DeviceResult& r) { return r.p.ticks_per_row; })
      .def_property_readonly("device", [](const DeviceResult& r) { return r.p.device; })
      .def_property_readonly("offsets", [](const DeviceResult& r) { return column(r, &DP::offsets); })
      .def_property_readonly("volume", [](const DeviceResult& r) { return column(r, &DP::volume); })
      .def_property_readonly("poc_row", [](const DeviceResult& r) { return column(r, &DP::poc_row); })
      .def_property_readonly("vah_row", [](const DeviceResult& r) { return column(r, &DP::vah_row); })
      .def_property_readonly("val_row", [](const DeviceResult& r) { return column(r, &DP::val_row); })
      .def_property_readonly("low_row", [](const DeviceResult& r) { return column(r, &DP::low_row); })
      .def_property_readonly("n_rows", [](const DeviceResult& r) { return column(r, &DP::n_rows); })
      .def_property_readonly("poc", [](const DeviceResult& r) { return column(r, &DP::poc); })
      .def_property_readonly("vah", [](const DeviceResult& r) { return column(r, &DP::vah); })
      .def_property_readonly("val", [](const DeviceResult& r) { return column(r, &DP::val); })
      .def_property_readonly("total_volume", [](const DeviceResult& r) { return column(r, &DP::total_volume); })
      .def_property_readonly("va_volume", [](const DeviceResult& r) { return column(r, &DP::va_volume); })
      .def_property_readonly("dev_poc", [](const DeviceResult& r) { return column(r, &DP::dev_poc); })
      .def_property_readonly("dev_vah", [](const DeviceResult& r) { return column(r, &DP::dev_vah); })
      .def_property_readonly("dev_val", [](const DeviceResult& r) { return column(r, &DP::dev_val); });

  m.def(
      "profile_trades_gpu",
      [](const py::object& price, const py::object& volume,
         const py::array_t<int64_t, py::array::c_style>& offsets, double tick_size,
         int64_t ticks_per_row, double value_area, const std::string& va_method,
         const std::string& poc_tie, int64_t max_rows, bool developing, int device, int64_t memory_budget,
         std::uintptr_t stream, bool user_stream, const std::vector<std::uintptr_t>& wait_streams) {
        const auto opt = options(tick_size, ticks_per_row, value_area, va_method, poc_tie, max_rows, 0, developing);
        const auto g = gpu_options(device, memory_budget, stream, user_stream, wait_streams);
        const auto p = borrow_any(price, "price"), v = borrow_any(volume, "volume");
        const auto s = span_of(offsets);
        auto r = std::make_shared<DeviceResult>();
        {
          py::gil_scoped_release nogil;
          r->p = vpoc::gpu::profile_trades(p, v, s.span(), opt, g);
        }
        return r;
      },
      py::arg("price"), py::arg("volume"), py::arg("offsets"), py::arg("tick_size"),
      py::arg("ticks_per_row"), py::arg("value_area"), py::arg("va_method"), py::arg("poc_tie"),
      py::arg("max_rows"), py::arg("developing"), py::arg("device"), py::arg("memory_budget"), py::arg("stream"),
      py::arg("user_stream"), py::arg("wait_streams"));

  m.def(
      "profile_bars_gpu",
      [](const py::object& high, const py::object& low, const py::object& close,
         const py::object& volume, const py::object& open,
         const py::array_t<int64_t, py::array::c_style>& offsets, double tick_size,
         int64_t ticks_per_row, const std::string& distribute, double value_area,
         const std::string& va_method, const std::string& poc_tie, int64_t max_rows, bool developing, int device,
         int64_t memory_budget, std::uintptr_t stream, bool user_stream,
         const std::vector<std::uintptr_t>& wait_streams) {
        const auto opt = options(tick_size, ticks_per_row, value_area, va_method, poc_tie, max_rows, 0, developing);
        const auto g = gpu_options(device, memory_budget, stream, user_stream, wait_streams);
        const auto dist = vpoc::parse_distribute(distribute);
        const vpoc::BarsInput b = bars_input(high, low, close, volume, open);
        const auto s = span_of(offsets);
        auto r = std::make_shared<DeviceResult>();
        {
          py::gil_scoped_release nogil;
          r->p = vpoc::gpu::profile_bars(b, s.span(), dist, opt, g);
        }
        return r;
      },
      py::arg("high"), py::arg("low"), py::arg("close"), py::arg("volume"), py::arg("open"),
      py::arg("offsets"), py::arg("tick_size"), py::arg("ticks_per_row"), py::arg("distribute"),
      py::arg("value_area"), py::arg("va_method"), py::arg("poc_tie"), py::arg("max_rows"),
      py::arg("developing"), py::arg("device"), py::arg("memory_budget"), py::arg("stream"), py::arg("user_stream"),
      py::arg("wait_streams"));

  // Live sessions: scalar appends (one bar / trade) keep the GIL, since releasing it would cost
  // more than the work; array appends release it. Every method holds the session's lock (see
  // LockedLive), so threads sharing a session see its appends one at a time.
  using LS = vpoc::LiveSession;
  // One row appended: (poc, vah, val, total_volume, va_volume) of the session after it.
  const auto append_one = [](LockedLive& l, const vpoc::LiveRows& r) {
    const LiveLock lock(l);
    double poc, vah, val;
    l.s.append(r, &poc, &vah, &val);
    return py::make_tuple(poc, vah, val, l.s.total_volume(), l.s.va_volume());
  };
  // A read of the session under its lock.
  const auto read = [](auto member) {
    return [member](LockedLive& l) {
      const LiveLock lock(l);
      return (l.s.*member)();
    };
  };
  py::class_<LockedLive, std::shared_ptr<LockedLive>>(m, "LiveSession")
      .def(py::init([](bool bars, const std::string& distribute, bool has_open, double tick_size,
                       int64_t ticks_per_row, double value_area, const std::string& va_method,
                       const std::string& poc_tie, int64_t max_rows) {
             const auto opt = options(tick_size, ticks_per_row, value_area, va_method, poc_tie, max_rows, 1, true);
             return std::make_shared<LockedLive>(LS(bars, vpoc::parse_distribute(distribute), has_open, opt));
           }),
           py::arg("bars"), py::arg("distribute"), py::arg("has_open"), py::arg("tick_size"),
           py::arg("ticks_per_row"), py::arg("value_area"), py::arg("va_method"), py::arg("poc_tie"),
           py::arg("max_rows"))
      .def("append_bar",
           [append_one](LockedLive& l, double high, double low, double close, const py::object& open,
                        double volume) {
             vpoc::LiveRows r;
             double o = 0.0;
             r.high = &high;
             r.low = &low;
             r.close = &close;
             if (!open.is_none()) {
               o = open.cast<double>();
               r.open = &o;
             }
             r.volume = &volume;
             r.n = 1;
             return append_one(l, r);
           })
      .def("append_trade",
           [append_one](LockedLive& l, double price, double volume) {
             vpoc::LiveRows r;
             r.price = &price;
             r.volume = &volume;
             r.n = 1;
             return append_one(l, r);
           })
      .def("append",
           [](LockedLive& l, const py::object& price, const py::object& high, const py::object& low,
              const py::object& close, const py::object& open, const py::object& volume) {
             // Private copies of the rows: another thread may change the caller's arrays while the
             // append runs without the GIL (it validates a row, then reads it again).
             Cols c(price, high, low, close, open, volume, true);
             const int64_t n = c.rows.n;
             py::array_t<double> poc(n), vah(n), val(n);
             const LiveLock lock(l);
             {
               py::gil_scoped_release nogil;
               l.s.append(c.rows, poc.mutable_data(), vah.mutable_data(), val.mutable_data());
             }
             return py::make_tuple(poc, vah, val);
           },
           py::arg("price"), py::arg("high"), py::arg("low"), py::arg("close"), py::arg("open"),
           py::arg("volume"))
      .def("check",
           [](LockedLive& l, const py::object& price, const py::object& high, const py::object& low,
              const py::object& close, const py::object& open, const py::object& volume, bool fresh) {
             Cols c(price, high, low, close, open, volume, true);
             const LiveLock lock(l);
             py::gil_scoped_release nogil;
             l.s.check(c.rows, fresh);
           },
           py::arg("price"), py::arg("high"), py::arg("low"), py::arg("close"), py::arg("open"),
           py::arg("volume"), py::arg("fresh"))
      .def("clear", [](LockedLive& l) {
        const LiveLock lock(l);
        l.s.clear();
      })
      .def_property_readonly("size", read(&LS::size))
      .def_property_readonly("bars", read(&LS::bars))
      .def_property_readonly("has_open", read(&LS::has_open))
      .def_property_readonly("low_row", read(&LS::low_row))
      .def_property_readonly("n_rows", read(&LS::n_rows))
      .def_property_readonly("poc_row", read(&LS::poc_row))
      .def_property_readonly("vah_row", read(&LS::vah_row))
      .def_property_readonly("val_row", read(&LS::val_row))
      .def_property_readonly("total_volume", read(&LS::total_volume))
      .def_property_readonly("va_volume", read(&LS::va_volume))
      .def("histogram",
           [](LockedLive& l) {
             const LiveLock lock(l);
             auto owner = std::make_shared<std::shared_ptr<const std::vector<double>>>();
             const double* p = l.s.histogram(*owner);
             const auto n = static_cast<py::ssize_t>(l.s.n_rows());
             static const double kNone = 0.0;
             py::capsule base(new std::shared_ptr<std::shared_ptr<const std::vector<double>>>(owner), [](void* q) {
               delete static_cast<std::shared_ptr<std::shared_ptr<const std::vector<double>>>*>(q);
             });
             py::array out(py::dtype::of<double>(), {n}, {static_cast<py::ssize_t>(sizeof(double))}, p ? p : &kNone, base);
             py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
             return out;
           },
           "The current histogram as a read-only view (n_rows() rows from low_row()).")
      .def("column", [](LockedLive& l, int k) {
        const LiveLock lock(l);
        const auto& c = l.s.column(k);
        return py::array_t<double>(static_cast<py::ssize_t>(c.size()), c.data());
      });

  m.def("gpu_backend", []() { return std::string(vpoc::gpu::backend()); });
  m.def("gpu_device_count", []() { return vpoc::gpu::device_count(); });
  m.def("gpu_require_device", [](int d) { vpoc::gpu::require_device(d); });
  m.def("gpu_synchronize_stream", [](int d, std::uintptr_t s) {
    py::gil_scoped_release nogil;
    vpoc::gpu::synchronize_stream(d, s);
  });
  m.def("memory_stats", [](int device) {
    const auto st = vpoc::gpu::memory_stats(device);
    using S = vpoc::gpu::MemoryStats;
    static const std::pair<const char*, int64_t S::*> fields[] = {
        {"workspace_bytes", &S::workspace_bytes}, {"peak_bytes", &S::peak_bytes}, {"allocs", &S::allocs},
        {"frees", &S::frees}, {"output_allocs", &S::output_allocs}, {"output_frees", &S::output_frees},
        {"output_bytes", &S::output_bytes}, {"pool_bytes", &S::pool_bytes},
        {"pool_cached_bytes", &S::pool_cached_bytes}, {"pool_limit_bytes", &S::pool_limit_bytes},
        {"pool_hits", &S::pool_hits}, {"driver_allocs", &S::driver_allocs}, {"driver_frees", &S::driver_frees}};
    py::dict d;
    for (const auto& [name, member] : fields) d[name] = st.*member;
    return d;
  });
  m.def("empty_cache", [](int device) {
    py::gil_scoped_release nogil;
    vpoc::gpu::empty_cache(device);
  });
  m.def("set_pool_limit", [](int device, int64_t bytes) {
    py::gil_scoped_release nogil;
    vpoc::gpu::set_pool_limit(device, bytes);
  });

  // Read-only facts about this build and the GPUs the runtime sees (vpoc doctor).
  m.def("build_info", []() {
    py::dict d;
    d["backend"] = std::string(vpoc::gpu::backend());
    const std::string archs = VPOC_GPU_ARCHS;
    py::list a;
    for (size_t i = 0; i < archs.size();) {
      const size_t j = std::min(archs.find(',', i), archs.size());
      if (j > i) a.append(archs.substr(i, j - i));
      i = j + 1;
    }
    d["gpu_archs"] = a;
    d["gpu_compiler"] = std::string(VPOC_GPU_COMPILER);
    d["cxx_compiler"] = std::string(VPOC_CXX_COMPILER);
    d["sanitize"] = std::string(VPOC_BUILD_SANITIZE);
    return d;
  });
  m.def("gpu_versions", []() {
    py::dict d;
    d["runtime"] = vpoc::gpu::runtime_version();
    d["driver"] = vpoc::gpu::driver_version();
    return d;
  });
  m.def("gpu_devices", []() {
    py::list out;
    for (const auto& info : vpoc::gpu::devices()) {
      py::dict d;
      d["index"] = info.index;
      d["name"] = info.name;
      d["arch"] = info.arch;
      d["total_memory"] = info.total_memory;
      d["has_code"] = info.has_code;
      d["binary_version"] = info.binary_version;
      d["ptx_version"] = info.ptx_version;
      d["code_error"] = info.code_error;
      out.append(d);
    }
    return out;
  });

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
    if (std::string(vpoc::gpu::backend()) != "none") b.emplace_back(vpoc::gpu::backend());
    return b;
  });
  m.attr("NO_ROW") = vpoc::kNoRow;

  vpoc_bind::register_device_array(m);
  // Test-only: a host-memory (kDLCPU) DeviceArray over a copy of a 1-D array, for CPU-only DLPack tests.
  m.def("_host_device_array", &vpoc_bind::host_device_array, py::arg("array"),
        py::arg("device_type") = 1, py::arg("device_id") = 0);
}
