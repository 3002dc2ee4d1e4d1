// bindings/register_live.cpp — _core.LiveSession: a live session's histogram, appended row by row.
// Contract: every method holds the session's lock; array appends release the GIL and read private copies.
#include <pybind11/numpy.h>

#include <memory>
#include <algorithm>
#include <functional>
#include <limits>
#include <mutex>
#include <vector>

#include "register.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/live.hpp"

namespace vpoc_bind {
namespace {

// The float64 columns of one live append (None: absent), kept alive while it runs; `copy`: private
// copies, so that the append reads exactly the rows it validated even if the caller's arrays change.
struct Cols {
  using A = py::array_t<double, py::array::c_style>;
  std::vector<A> keep;
  vpoc::LiveRows rows;
  bool copy;

  Cols(const py::object& price, const py::object& high, const py::object& low, const py::object& close,
       const py::object& open, const py::object& volume, bool copy_rows, const py::object& buy = py::none(),
       const py::object& sell = py::none())
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
    rows.buy = col(buy, "buy");
    rows.sell = col(sell, "sell");
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

// The rows of a one-row append: `volume` and, unless None, the row's window start (kept in `ws`)
// and its buy / sell volume (kept in `bs`); the caller points the price fields at its own scalars.
// Reads only addresses: its arguments outlive the append.
vpoc::LiveRows one_row(const double& volume, const py::object& window_start, int64_t& ws, const py::object& buy,
                       const py::object& sell, double (&bs)[2]) {
  vpoc::LiveRows r;
  if (!window_start.is_none()) {
    ws = window_start.cast<int64_t>();
    r.window_start = &ws;
  }
  if (!buy.is_none()) {
    bs[0] = buy.cast<double>();
    r.buy = &bs[0];
  }
  if (!sell.is_none()) {
    bs[1] = sell.cast<double>();
    r.sell = &bs[1];
  }
  r.volume = &volume;
  r.n = 1;
  return r;
}

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

void register_live(py::module_& m) {
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
      .def(py::init([](bool bars, const py::object& distribute, bool has_open, const py::object& tick_size,
                       const py::object& ticks_per_row, const py::object& value_area, const py::object& va_method,
                       const py::object& poc_tie, const py::object& max_rows, const py::object& window,
                       const py::dict& rules, bool time_window, bool sided) {
             // rules: the peer-rule keywords (kRuleKeys) given; the others keep their defaults
             py::object r[kNRuleKeys];
             for (int k = 0; k < kNRuleKeys; ++k) r[k] = rules.contains(kRuleKeys[k]) ? py::object(rules[kRuleKeys[k]]) : py::object(py::none());
             for (const auto& item : rules) {
               const std::string key = py::str(item.first);
               bool known = false;
               for (const char* k : kRuleKeys) known = known || key == k;
               if (!known) VPOC_THROW_ARG(TypeError, "rules", "rules: unknown keyword '", key, "'");
             }
             const auto opt = make_options(tick_size, ticks_per_row, value_area, va_method, poc_tie, max_rows,
                                           py::int_(1), py::bool_(true), distribute, py::bool_(false), window, r[0],
                                           r[1], r[2], r[3], r[4], r[5], r[6]);
             return std::make_shared<LockedLive>(LS(bars, opt.distribute, has_open, opt, time_window, sided));
           }),
           py::arg("bars"), py::arg("distribute"), py::arg("has_open"), py::arg("tick_size"),
           py::arg("ticks_per_row"), py::arg("value_area"), py::arg("va_method"), py::arg("poc_tie"),
           py::arg("max_rows"), py::arg("window") = py::none(), py::arg("rules") = py::dict(),
           py::arg("time_window") = false, py::arg("sided") = false)
      .def("append_bar",
           [append_one](LockedLive& l, double high, double low, double close, const py::object& open,
                        double volume, const py::object& window_start, const py::object& buy, const py::object& sell) {
             double o = 0.0, bs[2];
             int64_t ws = 0;
             vpoc::LiveRows r = one_row(volume, window_start, ws, buy, sell, bs);
             r.high = &high;
             r.low = &low;
             r.close = &close;
             if (!open.is_none()) {
               o = open.cast<double>();
               r.open = &o;
             }
             return append_one(l, r);
           },
           py::arg("high"), py::arg("low"), py::arg("close"), py::arg("open"), py::arg("volume"),
           py::arg("window_start") = py::none(), py::arg("buy") = py::none(), py::arg("sell") = py::none())
      .def("append_trade",
           [append_one](LockedLive& l, double price, double volume, const py::object& window_start,
                        const py::object& buy, const py::object& sell) {
             int64_t ws = 0;
             double bs[2];
             vpoc::LiveRows r = one_row(volume, window_start, ws, buy, sell, bs);
             r.price = &price;
             return append_one(l, r);
           },
           py::arg("price"), py::arg("volume"), py::arg("window_start") = py::none(), py::arg("buy") = py::none(),
           py::arg("sell") = py::none())
      .def("append",
           [](LockedLive& l, const py::object& price, const py::object& high, const py::object& low,
              const py::object& close, const py::object& open, const py::object& volume,
              const py::object& window_start, const py::object& buy, const py::object& sell) {
             // Private copies of the rows: another thread may change the caller's arrays while the
             // append runs without the GIL (it validates a row, then reads it again).
             Cols c(price, high, low, close, open, volume, true, buy, sell);
             const int64_t n = c.rows.n;
             using Starts = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
             Starts ws;
             if (!window_start.is_none()) {  // a private copy too
               ws = Starts(Starts(window_start).attr("copy")());
               if (ws.ndim() != 1 || ws.shape(0) != n)
                 VPOC_THROW_ARG(ValueError, "window", "window starts must be 1-D with one per row (", n, "), got ",
                                ws.ndim() == 1 ? ws.shape(0) : -1);
               c.rows.window_start = ws.data();
             }
             py::array_t<double> poc(n), vah(n), val(n);
             const LiveLock lock(l);
             {
               py::gil_scoped_release nogil;
               l.s.append(c.rows, poc.mutable_data(), vah.mutable_data(), val.mutable_data());
             }
             return py::make_tuple(poc, vah, val);
           },
           py::arg("price"), py::arg("high"), py::arg("low"), py::arg("close"), py::arg("open"),
           py::arg("volume"), py::arg("window_start") = py::none(), py::arg("buy") = py::none(),
           py::arg("sell") = py::none())
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
      .def(
          "carry",
          [](LockedLive& l, LockedLive& from, bool tail) {
            if (&l == &from) VPOC_THROW(ValueError, "carry: from_session must be another session");
            // both locks in address order: a.carry(b) and b.carry(a) on two threads never wait for each other
            const bool l_first = std::less<const LockedLive*>()(&l, &from);
            const LiveLock first(l_first ? l : from);
            const LiveLock second(l_first ? from : l);
            l.s.carry(from.s, tail);
          },
          py::arg("from_session"), py::arg("tail"),
          "window_across_sessions: on an empty session, the rows of from_session a later window reaches "
          "(tail) or its own carried rows (not tail) become this session's carried prefix.")
      .def_property_readonly("carried", read(&LS::carried))
      .def_property_readonly("sided", read(&LS::sided))
      .def_property_readonly("delta", read(&LS::delta),
                             "Sided: the session's buy - sell volume so far, in input order (its latest dev_delta).")
      .def(
          "side_fields",
          [](LockedLive& l, double imbalance_ratio, int64_t stacked_min) {
            vpoc::SideColumns c;
            {
              const LiveLock lock(l);
              c = l.s.side_fields({imbalance_ratio, stacked_min});
            }
            return side_dict(std::move(c), false);
          },
          py::arg("imbalance_ratio"), py::arg("stacked_min"),
          "Sided: every side field of the session so far (one session: buy_volume / sell_volume rows, delta, "
          "delta_poc(_row), imbalances, stacked counts; dev_delta None).")
      .def("last_side",
           [](LockedLive& l) {
             const LiveLock lock(l);
             if (!l.s.sided()) VPOC_THROW(ValueError, "last_side: this live session is not sided");
             const auto& b = l.s.column(5);
             const auto& s = l.s.column(6);
             const double nan = std::numeric_limits<double>::quiet_NaN();
             const bool any = l.s.size() > 0;
             return py::make_tuple(any ? b.back() : nan, any ? s.back() : nan);
           },
           "Sided: (buy, sell) volume of the session's latest row ((nan, nan) before its first).")
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
        const auto& c = l.s.column(k);  // the session's own rows: carried rows aside
        const auto skip = std::min(static_cast<size_t>(l.s.carried()), c.size());
        return py::array_t<double>(static_cast<py::ssize_t>(c.size() - skip), c.data() + skip);
      })
      .def("carry_column", [](LockedLive& l, int k) {
        const LiveLock lock(l);
        const auto& c = l.s.column(k);  // the rows carried from earlier sessions (window_across_sessions)
        const auto m = std::min(static_cast<size_t>(l.s.carried()), c.size());
        return py::array_t<double>(static_cast<py::ssize_t>(m), c.data());
      });

}

}  // namespace vpoc_bind
