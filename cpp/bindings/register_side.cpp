// bindings/register_side.cpp — _core.check_side, side_levels, bar_sides, the sided result's columns: aggressor side (vpoc/side.hpp).
// Contract: host numpy in, numpy out; side_levels also device rows in, DeviceArrays out; sides checked by core/side.hpp, worded by vpoc._side.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "device_array.hpp"
#include "gpu_input.hpp"
#include "register.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/gpu.hpp"
#include "vpoc/side.hpp"

namespace vpoc_bind {
namespace {

// A column moved into a numpy array that owns it (no copy: the rows of a big call are megabytes).
template <class T>
py::array own(std::vector<T>&& v, const py::dtype& dt) {
  auto* heap = new std::vector<T>(std::move(v));
  py::capsule free(heap, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array(dt, {static_cast<py::ssize_t>(heap->size())}, {static_cast<py::ssize_t>(sizeof(T))}, heap->data(),
                   free);
}
template <class T>
py::array own(std::vector<T>&& v) {
  return own(std::move(v), py::dtype::of<T>());
}

// Every column of c (moved out); with_rows: also buy / sell rows, delta, buy / sell totals and dev_delta.
py::dict fields_of(vpoc::SideColumns& c, bool with_rows) {
  py::dict d;
  if (with_rows) {
    d["buy_volume"] = own(std::move(c.buy));
    d["sell_volume"] = own(std::move(c.sell));
    d["delta"] = own(std::move(c.delta));
    d["buy_total"] = own(std::move(c.buy_total));
    d["sell_total"] = own(std::move(c.sell_total));
    d["dev_delta"] = own(std::move(c.dev_delta));
  }
  d["imbalance_buy"] = own(std::move(c.imbalance_buy), py::dtype::of<bool>());  // 0 / 1 bytes: numpy bools
  d["imbalance_sell"] = own(std::move(c.imbalance_sell), py::dtype::of<bool>());
  d["delta_poc"] = own(std::move(c.delta_poc));
  d["delta_poc_row"] = own(std::move(c.delta_poc_row));
  d["stacked_imbalance_buy"] = own(std::move(c.stacked_buy));
  d["stacked_imbalance_sell"] = own(std::move(c.stacked_sell));
  return d;
}

using I64 = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
using F64 = py::array_t<double, py::array::c_style | py::array::forcecast>;

// A host volume column as the engine reads it, in its own dtype (float32 / float64 / int32 / int64, contiguous,
// 1-D; anything else as float64), kept alive in `keep`.
vpoc::Array volume_column(const py::object& x, const char* name, int64_t n, py::array& keep) {
  py::array a = py::array::ensure(x, py::array::c_style);
  if (!a) VPOC_THROW_ARG(TypeError, name, name, " must be an array");
  const char k = a.dtype().kind();
  const auto size = a.dtype().itemsize();
  vpoc::DType dt = vpoc::DType::f64;
  if (k == 'f' && size == 4) dt = vpoc::DType::f32;
  else if (k == 'i' && size == 4) dt = vpoc::DType::i32;
  else if (k == 'i' && size == 8) dt = vpoc::DType::i64;
  else if (!(k == 'f' && size == 8)) a = F64(a);
  if (a.ndim() != 1 || static_cast<int64_t>(a.shape(0)) != n)
    VPOC_THROW_ARG(ValueError, name, name, " must be 1-D with ", n, " rows like high");
  keep = a;
  vpoc::Array v;
  v.data = a.data();
  v.size = n;
  v.dtype = dt;
  v.name = "volume";
  return v;
}

vpoc::RowLayout layout_of(const I64& row_off, const I64& low_row, double row_size) {
  const auto S = static_cast<int64_t>(row_off.size()) - 1;
  if (S < 0 || static_cast<int64_t>(low_row.size()) != S)
    VPOC_THROW(ValueError, "row offsets [S + 1] and low rows [S] do not match");
  vpoc::RowLayout L;
  L.row_off = row_off.data();
  L.low_row = low_row.data();
  L.n_sessions = S;
  L.row_size = row_size;
  return L;
}

// Each named float64 column (nullptr: absent) 1-D with n rows, as `high`: ValueError naming the first that is not.
void check_bar_columns(std::initializer_list<std::pair<const char*, const F64*>> cols, int64_t n) {
  for (const auto& [name, a] : cols)
    if (a && (a->ndim() != 1 || static_cast<int64_t>(a->size()) != n))
      VPOC_THROW_ARG(ValueError, name, name, " must be 1-D with ", n, " rows like high");
}

// CSR session offsets over n bars: 0 .. n, never decreasing (ValueError naming offsets), as a SessionSpan.
vpoc::SessionSpan bar_sessions(const I64& offsets, int64_t n) {
  vpoc::SessionSpan sessions;
  sessions.offsets = offsets.size() > 0 ? offsets.data() : nullptr;
  sessions.n_sessions = static_cast<int64_t>(offsets.size()) - 1;
  vpoc::validate_offsets(sessions, n);  // the engine's rule and wording (core/sessions.cpp)
  return sessions;
}

// A checked float64 column as the engine's Array of n rows.
vpoc::Array bar_column(const F64& a, const char* name, int64_t n) {
  vpoc::Array x;
  x.data = a.data();
  x.size = n;
  x.name = name;
  return x;
}

// The bars' price columns (open: has_open) as the engine reads them; the caller sets the volume.
vpoc::BarsInput bar_prices(const F64& high, const F64& low, const F64& close, const F64* open, int64_t n) {
  vpoc::BarsInput bars;
  bars.high = bar_column(high, "high", n);
  bars.low = bar_column(low, "low", n);
  bars.close = bar_column(close, "close", n);
  bars.has_open = open != nullptr;
  if (open != nullptr) bars.open = bar_column(*open, "open", n);
  return bars;
}

// Every column of c that was made (has memory) as a zero-copy DeviceArray of GPU `device`, complete after `ready`;
// dev_delta only with c.has_dev_delta.
void put_device_columns(py::dict& d, const vpoc::SideDeviceColumns& c, int device, const vpoc::Ready& ready) {
  const std::pair<const char*, const vpoc::Column*> cols[] = {
      {"buy_volume", &c.buy},         {"sell_volume", &c.sell},       {"delta", &c.delta},
      {"buy_total", &c.buy_total},    {"sell_total", &c.sell_total},  {"imbalance_buy", &c.imbalance_buy},
      {"imbalance_sell", &c.imbalance_sell}, {"delta_poc", &c.delta_poc}, {"delta_poc_row", &c.delta_poc_row},
      {"stacked_imbalance_buy", &c.stacked_buy}, {"stacked_imbalance_sell", &c.stacked_sell},
      {"dev_delta", c.has_dev_delta ? &c.dev_delta : nullptr}};
  for (const auto& [name, col] : cols)
    if (col != nullptr && col->owner)
      d[name] = make_device_array(std::static_pointer_cast<vpoc::gpu::Buffer>(col->owner), col->data, col->size,
                                  col->dtype, vpoc::gpu::dlpack_device_type(), device, ready);
}

// Both or neither of buy_total / sell_total (TypeError naming the missing one).
bool has_totals(const py::object& buy_total, const py::object& sell_total) {
  if (buy_total.is_none() != sell_total.is_none())
    VPOC_THROW_ARG(TypeError, buy_total.is_none() ? "buy_total" : "sell_total",
                   "side_levels: give buy_total and sell_total together");
  return !buy_total.is_none();
}

// What device rows' columns need kept and waited for besides their Ready events (device_column).
struct Producers {
  std::vector<std::uintptr_t> streams;  // raw producer streams of foreign GPU arrays
  std::vector<py::object> capsules;     // DLPack capsules: the call completes before they go
};

// One column of device rows, on GPU `device`, of dtype `dt` and `n` elements (-1: any, written to n): a DeviceArray
// in GPU memory (its producer's Ready and memory go to `rows`), a GpuInput of _core.gpu_inputs (its producer's
// stream is the placement's wait_streams), or any other GPU array (torch, __cuda_array_interface__, DLPack: read
// here, DLPack producers ordered before `consumer`; its producer stream and capsule go to `prod`). TypeError /
// ValueError naming `name`.
const void* device_column(const py::object& x, const char* name, vpoc::DType dt, int64_t& n, int device,
                          std::uintptr_t consumer, vpoc::gpu::SideRows& rows, Producers& prod) {
  vpoc::Array a;
  GpuInput g;
  if (py::isinstance<DeviceArray>(x)) {
    const auto& d = x.cast<const DeviceArray&>();
    if (d.device_type == 1 || d.cols != 0)
      VPOC_THROW_ARG(TypeError, name, "side_levels: ", name, " must be a 1-D array in GPU memory with placement=");
    a.data = d.data;
    a.size = d.size;
    a.dtype = d.dtype;
    a.device = d.device_id;
    rows.after.push_back(d.ready);
    rows.owners.push_back(d.owner);
  } else if (const GpuInput* held = as_gpu_input(x)) {
    a = held->array;
    if (held->keep && !held->keep.is_none()) prod.capsules.push_back(held->keep);
  } else if (read_gpu_input(x, name, Kinds::numbers, g, consumer)) {
    a = g.array;
    if (g.stream_kind == GpuInput::Stream::handle) prod.streams.push_back(g.stream);
    if (g.stream_kind == GpuInput::Stream::torch)  // torch's current stream of the device (vpoc._device's read)
      prod.streams.push_back(py::module_::import("vpoc._device").attr("_current_raw_stream")(a.device).cast<std::uintptr_t>());
    if (g.keep && !g.keep.is_none()) prod.capsules.push_back(g.keep);
  } else {
    VPOC_THROW_ARG(TypeError, name, "side_levels: ", name, " must be an array in GPU memory with a GPU placement=");
  }
  if (a.device != device)
    VPOC_THROW_ARG(ValueError, name, "side_levels: ", name, " is on GPU ", a.device, ", the placement on GPU ", device);
  if (a.dtype != dt)
    VPOC_THROW_ARG(TypeError, name, "side_levels: ", name, " must be ", dt == vpoc::DType::i64 ? "int64" : "float64");
  if (n >= 0 && a.size != n)
    VPOC_THROW_ARG(ValueError, name, "side_levels: ", name, " has ", a.size, " elements, not ", n);
  n = a.size;
  return a.data;
}

// side_levels of rows in GPU memory (vpoc/gpu.hpp side_levels) as DeviceArrays; totals required.
py::dict device_side_levels(const py::object& row_off, const py::object& low_row, const py::object& buy,
                            const py::object& sell, double row_size, const vpoc::Options& opt,
                            const vpoc::SideRules& rules, const py::object& buy_total, const py::object& sell_total,
                            const vpoc::Placement& place) {
  if (!has_totals(buy_total, sell_total))
    VPOC_THROW_ARG(TypeError, "buy_total", "side_levels: rows on a GPU need buy_total and sell_total");
  vpoc::gpu::SideRows rows;
  Producers prod;
  const int dev = place.device;
  const std::uintptr_t consumer = place.user_stream ? place.stream : 0;  // vpoc's own stream waits for the default
  const auto column = [&](const py::object& x, const char* name, vpoc::DType dt, int64_t& n) {
    return device_column(x, name, dt, n, dev, consumer, rows, prod);
  };
  int64_t S1 = -1, S = -1, R = -1;
  rows.row_off = static_cast<const int64_t*>(column(row_off, "row_offsets", vpoc::DType::i64, S1));
  if (S1 < 1) VPOC_THROW_ARG(ValueError, "row_offsets", "side_levels: row_offsets must have S + 1 >= 1 elements");
  S = S1 - 1;
  rows.low_row = static_cast<const int64_t*>(column(low_row, "low_row", vpoc::DType::i64, S));
  rows.buy = static_cast<const double*>(column(buy, "buy", vpoc::DType::f64, R));
  rows.sell = static_cast<const double*>(column(sell, "sell", vpoc::DType::f64, R));
  rows.buy_total = static_cast<const double*>(column(buy_total, "buy_total", vpoc::DType::f64, S));
  rows.sell_total = static_cast<const double*>(column(sell_total, "sell_total", vpoc::DType::f64, S));
  vpoc::Placement at = place;  // also after the foreign arrays' producers
  at.wait_streams.insert(at.wait_streams.end(), prod.streams.begin(), prod.streams.end());
  rows.n_sessions = S;
  rows.n_rows = R;  // = row_offsets[S]: the caller's rows (the masked passes' Result columns)
  rows.row_size = row_size;
  vpoc::SideDeviceColumns c;
  vpoc::Ready ready;
  {
    py::gil_scoped_release nogil;
    c = vpoc::gpu::side_levels(rows, opt, rules, at, ready);
    if (!prod.capsules.empty()) vpoc::gpu::synchronize(ready);  // DLPack inputs: done before their capsules go
  }
  py::dict d;
  put_device_columns(d, c, dev, ready);
  return d;
}

}  // namespace

py::dict side_device_dict(const vpoc::SideDeviceColumns& c, int device, const vpoc::Ready& ready) {
  py::dict d;
  put_device_columns(d, c, device, ready);
  if (!c.has_dev_delta) d["dev_delta"] = py::none();
  return d;
}

py::dict side_dict(vpoc::SideColumns&& c, bool developing) {
  py::dict d = fields_of(c, true);
  if (!developing) d["dev_delta"] = py::none();
  return d;
}

void register_side(py::module_& m) {
  m.def(
      "check_side",
      [](const py::array& side) -> py::tuple {
        if (side.ndim() != 1 || !(side.flags() & py::array::c_style) || side.dtype().itemsize() != 1)
          return py::make_tuple(py::none(), -2);
        const char k = side.dtype().kind();
        const auto n = static_cast<int64_t>(side.shape(0));
        if (k == 'i') {
          int64_t bad;
          {
            py::gil_scoped_release nogil;
            bad = vpoc::first_bad_side(static_cast<const int8_t*>(side.data()), n);
          }
          return py::make_tuple(side, bad);
        }
        if (k == 'S') {
          py::array_t<int8_t> codes(static_cast<py::ssize_t>(n));
          int64_t bad;
          {
            py::gil_scoped_release nogil;
            bad = vpoc::side_letters(static_cast<const uint8_t*>(side.data()), codes.mutable_data(), n);
          }
          return py::make_tuple(codes, bad);
        }
        return py::make_tuple(py::none(), -2);
      },
      py::arg("side"),
      "(int8 codes, index of the first bad value or -1) of a contiguous int8 or 'S1' side column (core/side.hpp's rule); "
      "(None, -2) for any other array (vpoc._side converts it).");
  m.def(
      "side_levels",
      [](const py::object& row_off, const py::object& low_row, const py::object& buy, const py::object& sell,
         double row_size, const py::handle& options, double imbalance_ratio, int64_t stacked_min,
         const py::object& buy_total, const py::object& sell_total,
         const std::optional<vpoc::Placement>& placement) -> py::dict {
        const vpoc::Options& opt = options_of(options);
        const vpoc::SideRules rules{imbalance_ratio, stacked_min};
        if (placement && placement->device >= 0)
          return device_side_levels(row_off, low_row, buy, sell, row_size, opt, rules, buy_total, sell_total, *placement);
        const I64 off = row_off.cast<I64>(), low = low_row.cast<I64>();
        const F64 b = buy.cast<F64>(), s = sell.cast<F64>();
        const vpoc::RowLayout L = layout_of(off, low, row_size);
        if (b.size() != s.size()) VPOC_THROW(ValueError, "side_levels: buy and sell have different row counts");
        const int64_t R = static_cast<int64_t>(b.size());
        vpoc::SessionSpan rows;  // the row offsets run 0 .. R, never decreasing: checked before any row is read
        rows.offsets = off.data();
        rows.n_sessions = L.n_sessions;
        vpoc::validate_offsets(rows, R, "row_offsets", false);
        const bool totals = has_totals(buy_total, sell_total);
        F64 bt, st;
        if (totals) {
          bt = buy_total.cast<F64>();
          st = sell_total.cast<F64>();
          if (static_cast<int64_t>(bt.size()) != L.n_sessions || static_cast<int64_t>(st.size()) != L.n_sessions)
            VPOC_THROW(ValueError, "side_levels: buy_total / sell_total must have one value per session (",
                       L.n_sessions, ")");
        }
        vpoc::SideColumns c;
        c.buy.assign(b.data(), b.data() + R);
        c.sell.assign(s.data(), s.data() + R);
        {
          py::gil_scoped_release nogil;
          vpoc::side_levels(c, L, opt, rules);
          if (totals) {
            c.delta.resize(static_cast<size_t>(L.n_sessions));
            vpoc::side_deltas(bt.data(), st.data(), L.n_sessions, c.delta.data());
          }
        }
        py::dict d = fields_of(c, false);
        if (totals) d["delta"] = own(std::move(c.delta));
        return d;
      },
      py::arg("row_offsets"), py::arg("low_row"), py::arg("buy"), py::arg("sell"), py::arg("row_size"),
      py::arg("options"), py::arg("imbalance_ratio"), py::arg("stacked_min"), py::kw_only(),
      py::arg("buy_total") = py::none(), py::arg("sell_total") = py::none(), py::arg("placement") = py::none(),
      "Delta POC, imbalances and stacked counts of finished buy / sell rows (vpoc/side.hpp side_levels); with "
      "buy_total / sell_total [S] also delta (core/side.hpp delta). Host rows: numpy in and out. A placement on "
      "a GPU: every column in that GPU's memory (a DeviceArray, a GpuInput, a torch / CuPy / DLPack array; int64 "
      "offsets and low rows, float64 rows and totals), the GPU epilogue (gpu/side.cu side_levels_kernel) on the "
      "placement's stream after their producers, DeviceArrays out (flags int8).");
  m.def(
      "bar_sides",
      [](const F64& high, const F64& low, const F64& close, const py::object& open, const py::object& buy,
         const py::object& sell, const I64& offsets, const py::handle& options, double imbalance_ratio,
         int64_t stacked_min) {
        const vpoc::Options& opt = options_of(options);
        const auto n = static_cast<int64_t>(high.size());
        F64 o;
        if (!open.is_none()) o = open.cast<F64>();
        check_bar_columns({{"high", &high}, {"low", &low}, {"close", &close}, {"open", open.is_none() ? nullptr : &o}}, n);
        py::array keep_b, keep_s;
        const vpoc::Array b = volume_column(buy, "buy_volume", n, keep_b);
        const vpoc::Array s = volume_column(sell, "sell_volume", n, keep_s);
        const vpoc::SessionSpan sessions = bar_sessions(offsets, n);
        vpoc::BarsInput bars = bar_prices(high, low, close, open.is_none() ? nullptr : &o, n);
        bars.volume = b;
        std::vector<int64_t> row_off, low_row;
        vpoc::SideColumns c;
        {
          py::gil_scoped_release nogil;
          c = vpoc::bar_side_fields(bars, b, s, sessions, opt, {imbalance_ratio, stacked_min}, row_off, low_row);
        }
        py::dict d = side_dict(std::move(c), false);
        d["row_offsets"] = own(std::move(row_off));
        d["low_row"] = own(std::move(low_row));
        return d;
      },
      py::arg("high"), py::arg("low"), py::arg("close"), py::arg("open"), py::arg("buy"), py::arg("sell"),
      py::arg("offsets"), py::arg("options"), py::arg("imbalance_ratio"), py::arg("stacked_min"),
      "from_bars' side fields on the CPU in one call (vpoc/side.hpp bar_side_fields): the buy / sell columns "
      "binned by the engine's bar binning, then the side epilogue; also row_offsets / low_row (the rows' layout).");
  m.def(
      "developing_delta_poc",
      [](const F64& high, const F64& low, const F64& close, const py::object& open, const F64& volume, const F64& buy,
         const F64& sell, const I64& offsets, const py::handle& options) {
        const vpoc::Options& opt = options_of(options);
        const auto n = static_cast<int64_t>(high.size());
        F64 o;
        if (!open.is_none()) o = open.cast<F64>();
        check_bar_columns({{"high", &high}, {"low", &low}, {"close", &close}, {"volume", &volume}, {"buy_volume", &buy},
                           {"sell_volume", &sell}, {"open", open.is_none() ? nullptr : &o}},
                          n);
        const vpoc::SessionSpan sessions = bar_sessions(offsets, n);
        vpoc::BarsInput bars = bar_prices(high, low, close, open.is_none() ? nullptr : &o, n);
        bars.volume = bar_column(volume, "volume", n);
        py::array_t<double> out(static_cast<py::ssize_t>(n));
        {
          py::gil_scoped_release nogil;
          vpoc::developing_delta_poc(bars, buy.data(), sell.data(), sessions.offsets, sessions.n_sessions, opt, out.mutable_data());
        }
        return out;
      },
      py::arg("high"), py::arg("low"), py::arg("close"), py::arg("open"), py::arg("volume"), py::arg("buy"),
      py::arg("sell"), py::arg("offsets"), py::arg("options"),
      "Per bar, the delta POC (row price) of its session's bars so far: a sided LiveSession's rows and rule after "
      "each bar (vpoc/side.hpp developing_delta_poc), sessions by CSR offsets, float64 columns.");
}

}  // namespace vpoc_bind
