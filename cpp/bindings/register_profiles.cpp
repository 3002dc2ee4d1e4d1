// bindings/register_profiles.cpp — _core.profile_trades / profile_bars: arrays in, one _core.Result out.
// Contract: plain numpy arrays and GpuInputs are read in place; anything else goes through vpoc._arrays' converters once.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "device_array.hpp"
#include "gpu_input.hpp"
#include "register.hpp"
#include "vpoc/engine.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/gpu.hpp"
#include "vpoc/side.hpp"
#include "vpoc/trace.hpp"

namespace vpoc_bind {
namespace {

// What a price or a volume may be read as without a conversion.
enum class Role { price, volume, index };

// The Python converter of a role (vpoc._arrays.host_prices / host_volume / host_index): array-likes,
// masked arrays, other dtypes, GPU-resident offsets.
py::object converter(Role role) {
  // leaked on purpose: static py::objects would be released after the interpreter is gone
  static const py::handle mod = py::module_::import("vpoc._arrays").release();
  static const py::handle fns[] = {mod.attr("host_prices").cast<py::object>().release(), mod.attr("host_volume").cast<py::object>().release(),
                                   mod.attr("host_index").cast<py::object>().release()};
  return py::reinterpret_borrow<py::object>(fns[static_cast<int>(role)]);
}

py::handle ndarray_type() {
  static const py::handle t = py::module_::import("numpy").attr("ndarray").cast<py::object>().release();  // leaked (see converter)
  return t;
}

bool readable(const py::array& a, Role role, vpoc::DType& dt) {
  if (a.ndim() != 1 || !(a.flags() & py::array::c_style) || !(a.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_)) return false;
  const auto& d = a.dtype();
  if (d.byteorder() == '>') return false;
  const char k = d.kind();
  const auto size = d.itemsize();
  if (k == 'f' && size == 4) dt = vpoc::DType::f32;
  else if (k == 'f' && size == 8) dt = vpoc::DType::f64;
  else if (role == Role::price) return false;
  else if (k == 'i' && size == 4 && role == Role::volume) dt = vpoc::DType::i32;
  else if (k == 'i' && size == 8) dt = vpoc::DType::i64;
  else return false;
  return role != Role::index || dt == vpoc::DType::i64;
}

// The inputs of one call, borrowed (or converted and kept alive here) for the engine.
class Inputs {
 public:
  // A host numpy array read in place, a converted one, or a GPU array as _core.gpu_inputs read it
  // (a GpuInput: the caller keeps it, and the memory it describes, alive while the call is queued;
  // one holding a DLPack capsule makes the call wait for its GPU work: holds_capsules).
  vpoc::Array array(const py::object& obj, const char* name, Role role) {
    if (const GpuInput* g = as_gpu_input(obj)) {
      holds_capsules_ |= g->keep && !g->keep.is_none();
      vpoc::Array out = g->array;
      out.name = name;
      return out;
    }
    vpoc::Array out;
    out.name = name;
    py::array a;
    if (py::type::handle_of(obj).is(ndarray_type())) {
      a = py::reinterpret_borrow<py::array>(obj);
      if (!readable(a, role, out.dtype)) a = convert(obj, name, role, out.dtype);
    } else {
      a = convert(obj, name, role, out.dtype);
    }
    out.data = a.data();
    out.size = static_cast<int64_t>(a.shape(0));
    return out;
  }

  // Session offsets from offsets= or session_ids= (neither: one session of n rows), copied while
  // the GIL is held: the engine validates them and then indexes the inputs with them (GIL released),
  // so another Python thread must not change them in between. S + 1 integers: small beside the rows.
  void sessions(const py::object& offsets, const py::object& session_ids, int64_t n) {
    if (!offsets.is_none() && !session_ids.is_none())
      VPOC_THROW(ValueError, "give either offsets or session_ids, not both");
    if (!session_ids.is_none()) {
      const vpoc::Array ids = array(session_ids, "session_ids", Role::index);
      if (ids.size != n) VPOC_THROW_ARG(ValueError, "session_ids", "session_ids has length ", ids.size, " but the data has ", n, " rows");
      std::vector<int64_t> labels;
      {
        py::gil_scoped_release nogil;
        vpoc::offsets_from_ids(static_cast<const int64_t*>(ids.data), n, "session_ids", offsets_, labels);
      }
      labels_ = py::array_t<int64_t>(static_cast<py::ssize_t>(labels.size()), labels.data());
    } else if (!offsets.is_none()) {
      const vpoc::Array o = array(offsets, "offsets", Role::index);
      if (o.size < 1) VPOC_THROW_ARG(ValueError, "offsets", "offsets must be 1-D with at least one element (0)");
      const auto* p = static_cast<const int64_t*>(o.data);
      offsets_.assign(p, p + o.size);
    } else {
      offsets_ = {0, n};
    }
  }

  // window_start= (time windows: each row's window start, vpoc._timewin), copied while the GIL is
  // held as the offsets; None: no per-row starts.
  void window_starts(const py::object& starts, int64_t n) {
    if (starts.is_none()) return;
    const vpoc::Array w = array(starts, "window", Role::index);
    if (w.size != n) VPOC_THROW_ARG(ValueError, "window", "window starts have length ", w.size, " but the data has ", n, " rows");
    const auto* p = static_cast<const int64_t*>(w.data);
    window_start_.reserve(static_cast<size_t>(n) + 1);  // data() not null with no rows: still a time window
    window_start_.assign(p, p + n);
    has_window_start_ = true;
  }

  vpoc::SessionSpan span() const {
    return {offsets_.data(), static_cast<int64_t>(offsets_.size()) - 1, has_window_start_ ? window_start_.data() : nullptr};
  }
  py::object labels() const { return labels_; }
  // An input is a DLPack capsule's memory: its deleter may free or reuse that memory as soon as the
  // caller drops the capsule (DLPack: "the consumer is done"), so the call's GPU work must be complete by then.
  bool holds_capsules() const { return holds_capsules_; }

  // Prices of several columns in one dtype: mixed float32 / float64 are all read as float64.
  void same_dtype(std::initializer_list<vpoc::Array*> prices) {
    bool mixed = false;
    for (auto* a : prices) mixed |= a->dtype != (*prices.begin())->dtype;
    if (!mixed) return;
    for (auto* a : prices) {
      if (a->device >= 0) VPOC_THROW(TypeError, "high, low, close (and open) on the GPU must share one dtype");
      if (a->dtype == vpoc::DType::f64) continue;
      py::array_t<double> wide(static_cast<py::ssize_t>(a->size));
      const auto* src = static_cast<const float*>(a->data);
      double* dst = wide.mutable_data();
      for (int64_t i = 0; i < a->size; ++i) dst[i] = src[i];
      keep_.push_back(wide);
      a->data = wide.data();
      a->dtype = vpoc::DType::f64;
    }
  }

 private:
  py::array convert(const py::object& obj, const char* name, Role role, vpoc::DType& dt) {
    py::object got = converter(role)(obj, name);
    // numpy keeps unaligned arrays as they are (e.g. out of a pickle-5 buffer): an aligned copy
    if (!(py::reinterpret_borrow<py::array>(got).flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
      got = got.attr("copy")();
    py::array a = py::reinterpret_borrow<py::array>(got);
    if (!readable(a, role, dt)) VPOC_THROW(TypeError, name, " could not be converted to an array the engine reads");
    keep_.push_back(got);
    return a;
  }

  std::vector<py::object> keep_;
  std::vector<int64_t> offsets_;
  std::vector<int64_t> window_start_;
  bool has_window_start_ = false;
  bool holds_capsules_ = false;
  py::object labels_ = py::none();
};

// A call's result as Python sees it: the engine's Result and the session labels of session_ids=.
struct PyResult {
  vpoc::Result r;
  py::object labels = py::none();
  py::object side_fields = py::none();  // sided host calls: the side columns (register_side.cpp side_dict)
};

// One column as a numpy view (host; its base is the Result object) or a DeviceArray (GPU).
py::object column(const py::object& self, vpoc::Col c) {
  const auto& pr = self.cast<const PyResult&>();
  const vpoc::Column& col = pr.r[c];
  if (pr.r.device >= 0)
    return make_device_array(std::static_pointer_cast<vpoc::gpu::Buffer>(col.owner), col.data, col.size, col.dtype,
                             vpoc::gpu::dlpack_device_type(), pr.r.device, pr.r.ready);
  const auto& info = vpoc::kColumns[static_cast<int>(c)];
  const py::dtype dt = info.dtype == vpoc::DType::i64 ? py::dtype::of<int64_t>() : py::dtype::of<double>();
  return py::array(dt, {static_cast<py::ssize_t>(col.size)}, {static_cast<py::ssize_t>(8)}, col.data, self);
}

// POC, VAH and VAL as one [S, 3] float64 array: on a GPU a zero-copy DeviceArray over the session
// columns (one allocation, the three columns equally spaced: gpu/runtime.cu allocate_session_columns),
// on the host a new C-ordered numpy array (the three columns are separate vectors there).
py::object levels(const py::object& self) {
  const auto& pr = self.cast<const PyResult&>();
  const vpoc::Column &poc = pr.r[vpoc::Col::poc], &vah = pr.r[vpoc::Col::vah], &val = pr.r[vpoc::Col::val];
  const auto S = static_cast<py::ssize_t>(poc.size);
  if (pr.r.device >= 0) {
    const auto* p = static_cast<const double*>(poc.data);
    const auto stride = static_cast<const double*>(vah.data) - p;
    if (static_cast<const double*>(val.data) - p != 2 * stride || poc.owner != vah.owner || vah.owner != val.owner)
      VPOC_THROW(DeviceError, "internal: the GPU result's poc, vah, val columns are not equally spaced in one buffer");
    return make_device_array(std::static_pointer_cast<vpoc::gpu::Buffer>(poc.owner), poc.data, poc.size,
                             vpoc::DType::f64, vpoc::gpu::dlpack_device_type(), pr.r.device, pr.r.ready, false, 3,
                             static_cast<int64_t>(stride));
  }
  py::array_t<double> out({S, static_cast<py::ssize_t>(3)});
  double* dst = out.mutable_data();
  const auto *a = static_cast<const double*>(poc.data), *b = static_cast<const double*>(vah.data),
             *c = static_cast<const double*>(val.data);
  for (py::ssize_t s = 0; s < S; ++s) {
    dst[3 * s] = a[s];
    dst[3 * s + 1] = b[s];
    dst[3 * s + 2] = c[s];
  }
  return out;
}

bool present(const PyResult& pr, vpoc::Col c) {
  return pr.r.developing || vpoc::kColumns[static_cast<int>(c)].extent != vpoc::Extent::inputs;
}

PyResult run(vpoc::Options opt, const vpoc::Placement& place, Inputs& in,
             vpoc::Result (*fn)(const void*, const vpoc::SessionSpan&, const vpoc::Options&, const vpoc::Placement&),
             const void* data) {
  PyResult out;
  const auto span = in.span();
  if (place.device < 0) {
    out.r = interruptible(opt, [&] { return fn(data, span, opt, place); });
  } else {
    py::gil_scoped_release nogil;
    vpoc::trace::mark("bind.gil_released");
    out.r = fn(data, span, opt, place);
    // DLPack inputs: their capsules (held by the caller's GpuInputs) go when the call returns, so the host
    // waits here for the call's GPU work (the cost falls on calls with DLPack-only inputs alone).
    if (in.holds_capsules()) vpoc::gpu::synchronize(out.r.ready);
  }
  out.labels = in.labels();
  return out;
}

}  // namespace

void register_profiles(py::module_& m) {
  py::class_<PyResult, std::shared_ptr<PyResult>> result(m, "Result",
                                                         "One call's profiles: host numpy views or GPU DeviceArrays.");
  result.def_property_readonly("n_sessions", [](const PyResult& p) { return p.r.n_sessions; })
      .def_property_readonly("tick_size", [](const PyResult& p) { return p.r.tick_size; })
      .def_property_readonly("ticks_per_row", [](const PyResult& p) { return p.r.ticks_per_row; })
      .def_property_readonly("device", [](const PyResult& p) { return p.r.device; })
      .def_property_readonly("developing", [](const PyResult& p) { return p.r.developing; })
      .def_property_readonly("session_labels", [](const PyResult& p) { return p.labels; })
      .def_property_readonly("grid_counted", [](const PyResult& p) { return p.r.grid.counted; })
      .def_property_readonly("off_grid", [](const PyResult& p) { return p.r.grid.off; })
      .def_property_readonly("grid_prices", [](const PyResult& p) { return p.r.grid.prices; })
      .def_property_readonly("first_off_grid", [](const PyResult& p) {
        return py::make_tuple(p.r.grid.first_input, p.r.grid.first_index);
      })
      .def_property_readonly("grid_refused", [](const PyResult& p) { return p.r.grid.refused; })
      .def_property_readonly("side_fields", [](const PyResult& p) { return p.side_fields; },
                             "A sided host call's side columns (dict of numpy arrays); None otherwise.")
      // bins=N: each session's lowest price and bin width (host float64 [S]); None without bins
      .def_property_readonly("bin_low", [](const PyResult& p) {
        return p.r.bins ? py::object(py::array_t<double>(static_cast<py::ssize_t>(p.r.bin_low.size()), p.r.bin_low.data()))
                        : py::object(py::none());
      })
      .def_property_readonly("bin_width", [](const PyResult& p) {
        return p.r.bins ? py::object(py::array_t<double>(static_cast<py::ssize_t>(p.r.bin_width.size()), p.r.bin_width.data()))
                        : py::object(py::none());
      })
      .def_property_readonly("levels", &levels,
                             "POC, VAH, VAL as one [S, 3] float64 array (GPU: a zero-copy DeviceArray; host: a new array).")
      .def("fields",
           [](const py::object& self) {
             const auto& pr = self.cast<const PyResult&>();
             py::dict d;
             d["n_sessions"] = pr.r.n_sessions;
             d["tick_size"] = pr.r.tick_size;
             d["ticks_per_row"] = pr.r.ticks_per_row;
             d["row_size"] = pr.r.tick_size * static_cast<double>(pr.r.ticks_per_row);
             d["session_labels"] = pr.labels;
             for (int k = 0; k < vpoc::kNumColumns; ++k) {
               const auto c = static_cast<vpoc::Col>(k);
               d[vpoc::kColumns[k].name] = present(pr, c) ? column(self, c) : py::object(py::none());
             }
             return d;
           },
           "Every column (None: not computed) and the scalars, as a dict: what vpoc.Profiles holds.");
  for (int k = 0; k < vpoc::kNumColumns; ++k) {
    const auto c = static_cast<vpoc::Col>(k);
    result.def_property_readonly(vpoc::kColumns[k].name, [c](const py::object& self) {
      return present(self.cast<const PyResult&>(), c) ? column(self, c) : py::object(py::none());
    });
  }

  m.def(
      "profile_trades",
      [](const py::object& price, const py::object& volume, const py::object& offsets, const py::object& session_ids,
         const py::handle& options, const std::optional<vpoc::Placement>& placement, const py::object& window_start,
         const py::object& side, double imbalance_ratio, int64_t stacked_min) {
        const vpoc::Options& opt = options_of(options);
        const vpoc::Placement place = placement.value_or(vpoc::Placement{});
        Inputs in;
        // sided calls: int8 codes (vpoc._side_profiles.trade_side): a host numpy column (checked there; the CPU
        // engine reads job.codes, a GPU call uploads job.side) or a GpuInput (checked by the GPU range pass)
        vpoc::SideJob job;
        struct Trades {
          vpoc::Array price, volume;
          vpoc::SideJob* side;
        } t{in.array(price, "price", Role::price), in.array(volume, "volume", Role::volume), nullptr};
        py::array host_side;  // kept alive through the call
        if (!side.is_none()) {
          if (as_gpu_input(side) != nullptr) {
            job.side = in.array(side, "side", Role::volume);  // a GpuInput as read (a DLPack one: the call waits)
          } else {
            host_side = py::array_t<int8_t, py::array::c_style>::ensure(side);
            if (!host_side || host_side.ndim() != 1)
              VPOC_THROW_ARG(TypeError, "side", "side must be a 1-D int8 array of codes here (vpoc._side_profiles)");
            job.codes = static_cast<const int8_t*>(host_side.data());
            job.side.data = host_side.data();
            job.side.size = static_cast<int64_t>(host_side.shape(0));
          }
          job.side.dtype = vpoc::DType::i8;
          job.side.name = "side";
          if (job.side.size != t.price.size)
            VPOC_THROW_ARG(ValueError, "side", "side has length ", job.side.size, " but there are ", t.price.size, " trades");
          job.rules = {imbalance_ratio, stacked_min};
          t.side = &job;
        }
        in.sessions(offsets, session_ids, t.price.size);
        in.window_starts(window_start, t.price.size);
        auto pr = std::make_shared<PyResult>(run(
            opt, place, in,
            [](const void* d, const vpoc::SessionSpan& s, const vpoc::Options& o, const vpoc::Placement& p) {
              const auto* x = static_cast<const Trades*>(d);
              return vpoc::profile_trades(x->price, x->volume, s, o, p, x->side);
            },
            &t));
        if (job.done) pr->side_fields = side_dict(std::move(job.cols), opt.developing);
        if (job.device_done) pr->side_fields = side_device_dict(job.device, pr->r.device, pr->r.ready);
        return pr;
      },
      py::arg("price"), py::arg("volume"), py::arg("offsets"), py::arg("session_ids"), py::arg("options"),
      py::arg("placement") = py::none(), py::arg("window_start") = py::none(), py::kw_only(),
      py::arg("side") = py::none(), py::arg("imbalance_ratio") = 3.0, py::arg("stacked_min") = 3);

  m.def(
      "profile_bars",
      [](const py::object& high, const py::object& low, const py::object& close, const py::object& volume,
         const py::object& open, const py::object& offsets, const py::object& session_ids, const py::handle& options,
         const std::optional<vpoc::Placement>& placement, const py::object& window_start) {
        vpoc::trace::mark("bind.enter");
        const vpoc::Options& opt = options_of(options);
        const vpoc::Placement place = placement.value_or(vpoc::Placement{});
        Inputs in;
        vpoc::BarsInput b;
        b.high = in.array(high, "high", Role::price);
        b.low = in.array(low, "low", Role::price);
        b.close = in.array(close, "close", Role::price);
        b.volume = in.array(volume, "volume", Role::volume);
        if (!open.is_none()) {
          b.open = in.array(open, "open", Role::price);
          b.has_open = true;
        }
        if (b.has_open) in.same_dtype({&b.high, &b.low, &b.close, &b.open});
        else in.same_dtype({&b.high, &b.low, &b.close});
        in.sessions(offsets, session_ids, b.high.size);
        in.window_starts(window_start, b.high.size);
        vpoc::trace::mark("bind.inputs_read");
        auto pr = std::make_shared<PyResult>(run(
            opt, place, in,
            [](const void* d, const vpoc::SessionSpan& s, const vpoc::Options& o, const vpoc::Placement& p) {
              return vpoc::profile_bars(*static_cast<const vpoc::BarsInput*>(d), s, o, p);
            },
            &b));
        vpoc::trace::mark("bind.result");
        return pr;
      },
      py::arg("high"), py::arg("low"), py::arg("close"), py::arg("volume"), py::arg("open"), py::arg("offsets"),
      py::arg("session_ids"), py::arg("options"), py::arg("placement") = py::none(),
      py::arg("window_start") = py::none());

  m.def(
      "offsets_from_ids",
      [](const py::array_t<int64_t, py::array::c_style>& ids, const std::string& name) {
        std::vector<int64_t> offsets, labels;
        {
          py::gil_scoped_release nogil;
          vpoc::offsets_from_ids(ids.data(), static_cast<int64_t>(ids.size()), name.c_str(), offsets, labels);
        }
        return py::make_tuple(py::array_t<int64_t>(offsets.size(), offsets.data()),
                              py::array_t<int64_t>(labels.size(), labels.data()));
      },
      py::arg("ids"), py::arg("name"));
  m.def(
      "session_offsets",
      [](const py::object& offsets, const py::object& session_ids, int64_t n) {
        Inputs in;
        in.sessions(offsets, session_ids, n);
        const auto span = in.span();
        return py::make_tuple(py::array_t<int64_t>(span.n_sessions + 1, span.offsets), in.labels());
      },
      py::arg("offsets"), py::arg("session_ids"), py::arg("n"),
      "(offsets [S+1] int64, session labels or None) of n rows from offsets= or session_ids= (neither: one "
      "session), as every call reads them; offsets are validated by the engine call that uses them.");
  m.def(
      "count_off_grid",
      [](const py::array& prices, double tick_size, int threads) {
        vpoc::Array a;
        if (!readable(prices, Role::price, a.dtype)) VPOC_THROW_ARG(TypeError, "prices", "prices must be 1-D contiguous float32/float64");
        a.data = prices.data();
        a.size = static_cast<int64_t>(prices.shape(0));
        a.name = "prices";
        std::pair<int64_t, int64_t> c;
        {
          py::gil_scoped_release nogil;
          c = vpoc::count_off_grid(a, tick_size, threads);
        }
        return py::make_tuple(c.first, c.second);
      },
      py::arg("prices"), py::arg("tick_size"), py::arg("threads") = 1,
      "(prices off the tick_size grid, index of the first or -1): the rule of core/grid.hpp.");
  m.def("price_off_grid", &vpoc::price_off_grid, py::arg("price"), py::arg("tick_size"),
        "Whether one float64 price is off the tick_size grid: the rule of core/grid.hpp.");
  m.attr("NO_ROW") = vpoc::kNoRow;
}

}  // namespace vpoc_bind
