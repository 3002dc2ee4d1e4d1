// bindings/register_side.cpp — _core.check_side, side_trades, side_levels: the CPU aggressor-side fields (vpoc/side.hpp).
// Contract: host numpy in, a dict of numpy columns out; the side is checked by core/side.hpp, worded by vpoc._side.
#include <pybind11/numpy.h>

#include <cstring>
#include <vector>

#include "register.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/side.hpp"

namespace vpoc_bind {
namespace {

// A host price (float32 / float64) or volume (also int32 / int64) column read in place, or the
// engine's converter's copy of it (vpoc._arrays.host_prices / host_volume): what the engine read.
struct Column {
  vpoc::Array a;
  py::object keep;
};

bool readable(const py::array& a, bool volume, vpoc::DType& dt) {
  if (a.ndim() != 1 || !(a.flags() & py::array::c_style) || !(a.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
    return false;
  const auto& d = a.dtype();
  if (d.byteorder() == '>') return false;
  const char k = d.kind();
  const auto size = d.itemsize();
  if (k == 'f' && size == 4) dt = vpoc::DType::f32;
  else if (k == 'f' && size == 8) dt = vpoc::DType::f64;
  else if (volume && k == 'i' && size == 4) dt = vpoc::DType::i32;
  else if (volume && k == 'i' && size == 8) dt = vpoc::DType::i64;
  else return false;
  return true;
}

Column host_column(const py::object& obj, const char* name, bool volume) {
  Column c;
  c.a.name = name;
  py::array arr;
  if (py::isinstance<py::array>(obj) && readable(py::reinterpret_borrow<py::array>(obj), volume, c.a.dtype)) {
    arr = py::reinterpret_borrow<py::array>(obj);
  } else {
    const py::object conv = py::module_::import("vpoc._arrays").attr(volume ? "host_volume" : "host_prices");
    arr = py::array(conv(obj, name)).attr("copy")();
    if (!readable(arr, volume, c.a.dtype)) VPOC_THROW(TypeError, name, " could not be converted to an array the engine reads");
  }
  c.keep = arr;
  c.a.data = arr.data();
  c.a.size = static_cast<int64_t>(arr.shape(0));
  return c;
}

template <class T>
py::array_t<T> out_of(const std::vector<T>& v) {
  return py::array_t<T>(static_cast<py::ssize_t>(v.size()), v.data());
}

py::array flags_of(const std::vector<uint8_t>& v) {
  py::array_t<bool> out(static_cast<py::ssize_t>(v.size()));
  if (!v.empty()) std::memcpy(out.mutable_data(), v.data(), v.size());
  return out;
}

py::dict fields_of(const vpoc::SideColumns& c, bool with_rows) {
  py::dict d;
  if (with_rows) {
    d["buy_volume"] = out_of(c.buy);
    d["sell_volume"] = out_of(c.sell);
    d["delta"] = out_of(c.delta);
    d["dev_delta"] = out_of(c.dev_delta);
  }
  d["imbalance_buy"] = flags_of(c.imbalance_buy);
  d["imbalance_sell"] = flags_of(c.imbalance_sell);
  d["delta_poc"] = out_of(c.delta_poc);
  d["delta_poc_row"] = out_of(c.delta_poc_row);
  d["stacked_imbalance_buy"] = out_of(c.stacked_buy);
  d["stacked_imbalance_sell"] = out_of(c.stacked_sell);
  return d;
}

using I64 = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
using F64 = py::array_t<double, py::array::c_style | py::array::forcecast>;

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

}  // namespace

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
      "side_trades",
      [](const py::object& price, const py::object& volume, const py::array_t<int8_t, py::array::c_style>& side,
         const I64& offsets, const py::handle& options, const I64& row_off, const I64& low_row, double row_size,
         double imbalance_ratio, int64_t stacked_min) {
        const vpoc::Options& opt = options_of(options);
        const Column p = host_column(price, "price", false), v = host_column(volume, "volume", true);
        const auto S = static_cast<int64_t>(offsets.size()) - 1;
        if (S < 0 || static_cast<int64_t>(row_off.size()) != S + 1 || offsets.data()[S] != p.a.size ||
            v.a.size != p.a.size || static_cast<int64_t>(side.size()) != p.a.size)
          VPOC_THROW(ValueError, "side_trades: the inputs and the profile's layout do not match");
        const vpoc::RowLayout L = layout_of(row_off, low_row, row_size);
        vpoc::SessionSpan span{offsets.data(), S, nullptr};
        vpoc::SideColumns c;
        {
          py::gil_scoped_release nogil;
          c = vpoc::side_trades(p.a, v.a, side.data(), span, opt, L, {imbalance_ratio, stacked_min});
        }
        py::dict d = fields_of(c, true);
        if (!opt.developing) d["dev_delta"] = py::none();
        return d;
      },
      py::arg("price"), py::arg("volume"), py::arg("side"), py::arg("offsets"), py::arg("options"),
      py::arg("row_offsets"), py::arg("low_row"), py::arg("row_size"), py::arg("imbalance_ratio"),
      py::arg("stacked_min"),
      "Every side field of trades (valid inputs the engine binned, int8 side codes) on their profile's rows: "
      "one pass over the trades (vpoc/side.hpp), a dict of host columns.");
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
}

}  // namespace vpoc_bind
