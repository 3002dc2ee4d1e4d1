// bindings/register_side.cpp — _core.check_side, sided_sessions, side_levels, the sided result's columns: CPU aggressor side (vpoc/side.hpp).
// Contract: host numpy in, a dict of numpy columns out; the side is checked by core/side.hpp, worded by vpoc._side.
#include <pybind11/numpy.h>

#include <initializer_list>
#include <utility>
#include <vector>

#include "device_array.hpp"
#include "register.hpp"
#include "vpoc/errors.hpp"
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
  const auto S = static_cast<int64_t>(offsets.size()) - 1;
  const int64_t* off = offsets.data();
  if (S < 0 || off[0] != 0 || off[S] != n)
    VPOC_THROW_ARG(ValueError, "offsets", "offsets must run from 0 to the number of bars (", n, ")");
  for (int64_t k = 0; k < S; ++k)
    if (off[k + 1] < off[k]) VPOC_THROW_ARG(ValueError, "offsets", "offsets must not decrease (at ", k + 1, ")");
  vpoc::SessionSpan sessions;
  sessions.offsets = off;
  sessions.n_sessions = S;
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

}  // namespace

py::dict side_device_dict(const vpoc::SideDeviceColumns& c, int device, const vpoc::Ready& ready) {
  py::dict d;
  const auto put = [&](const char* name, const vpoc::Column& col) {
    d[name] = make_device_array(std::static_pointer_cast<vpoc::gpu::Buffer>(col.owner), col.data, col.size, col.dtype,
                                vpoc::gpu::dlpack_device_type(), device, ready);
  };
  put("buy_volume", c.buy);
  put("sell_volume", c.sell);
  put("delta", c.delta);
  put("buy_total", c.buy_total);
  put("sell_total", c.sell_total);
  put("imbalance_buy", c.imbalance_buy);
  put("imbalance_sell", c.imbalance_sell);
  put("delta_poc", c.delta_poc);
  put("delta_poc_row", c.delta_poc_row);
  put("stacked_imbalance_buy", c.stacked_buy);
  put("stacked_imbalance_sell", c.stacked_sell);
  if (c.has_dev_delta)
    put("dev_delta", c.dev_delta);
  else
    d["dev_delta"] = py::none();
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
      "sided_sessions",
      [](const F64& buy_total, const F64& sell_total) {
        if (buy_total.ndim() != 1) VPOC_THROW_ARG(ValueError, "buy_total", "buy_total must be 1-D");
        const auto n = static_cast<int64_t>(buy_total.size());
        if (sell_total.ndim() != 1 || static_cast<int64_t>(sell_total.size()) != n)
          VPOC_THROW_ARG(ValueError, "sell_total", "sell_total must be 1-D with ", n, " sessions like buy_total");
        std::vector<uint8_t> out(static_cast<size_t>(n));
        vpoc::sided_sessions(buy_total.data(), sell_total.data(), n, out.data());
        return own(std::move(out), py::dtype::of<bool>());
      },
      py::arg("buy_total"), py::arg("sell_total"),
      "Per session, whether it holds volume of a known side (core/side.hpp sided on its buy / sell totals; "
      "False: no delta POC, NaN / NO_ROW), a bool array (vpoc/side.hpp sided_sessions).");
  m.def(
      "side_levels",
      [](const I64& row_off, const I64& low_row, const F64& buy, const F64& sell, double row_size,
         const py::handle& options, double imbalance_ratio, int64_t stacked_min) {
        const vpoc::Options& opt = options_of(options);
        const vpoc::RowLayout L = layout_of(row_off, low_row, row_size);
        const int64_t R = row_off.data()[L.n_sessions];
        if (static_cast<int64_t>(buy.size()) != R || static_cast<int64_t>(sell.size()) != R)
          VPOC_THROW(ValueError, "side_levels: buy / sell rows do not match the row offsets");
        vpoc::SideColumns c;
        c.buy.assign(buy.data(), buy.data() + R);
        c.sell.assign(sell.data(), sell.data() + R);
        {
          py::gil_scoped_release nogil;
          vpoc::side_levels(c, L, opt, {imbalance_ratio, stacked_min});
        }
        return fields_of(c, false);
      },
      py::arg("row_offsets"), py::arg("low_row"), py::arg("buy"), py::arg("sell"), py::arg("row_size"),
      py::arg("options"), py::arg("imbalance_ratio"), py::arg("stacked_min"),
      "Delta POC, imbalances and stacked counts of finished host buy / sell rows (vpoc/side.hpp side_levels).");
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
