// cpu/bins.cpp — bins=N on the CPU: validate each row, then core/bins.hpp per session (and per row with developing).
// Contract: docs/presets.md ("bins"); one worker per session, its rows in input order; any thread count, same bits.
#include "cpu/bins.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "core/bins.hpp"
#include "core/messages.hpp"
#include "core/source.hpp"
#include "core/window.hpp"
#include "cpu/histogram.hpp"
#include "cpu/parallel.hpp"

namespace vpoc::cpu {
namespace {

struct Scratch {
  std::vector<double> bins;
  std::vector<Fixed> acc;
};

// problem(i): what is wrong with input row i (messages::trade_problem / bar_problem wording).
template <class P, class V, class Problem>
Profiles run(const InputView& in, const SessionSpan& sessions, const Options& opt, const char* volume_name,
             Problem&& problem, std::vector<double>& bin_low, std::vector<double>& bin_width) {
  const int64_t S = sessions.n_sessions;
  const int64_t* off = sessions.offsets;
  const int64_t N = opt.bins;
  const Source<P, V> src = make_source<P, V>(in, opt, 0);
  const bins::RowsOf<decltype(src)> get{src};
  const int workers = resolve_threads(opt.threads, S);
  std::vector<Scratch> scratch(static_cast<size_t>(workers));
  FirstFailure failure;

  Profiles out;
  out.tick_size = opt.tick_size;
  out.ticks_per_row = opt.ticks_per_row;
  out.resize_sessions(S);
  for (int64_t s = 0; s < S; ++s) out.offsets[s + 1] = out.offsets[s] + (off[s + 1] > off[s] ? N : 0);
  out.volume.assign(static_cast<size_t>(out.offsets[S]), 0.0);
  const int64_t rows = S > 0 ? off[S] : 0;
  if (opt.developing) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    out.dev_poc.assign(static_cast<size_t>(rows), nan);
    out.dev_vah.assign(static_cast<size_t>(rows), nan);
    out.dev_val.assign(static_cast<size_t>(rows), nan);
  }
  bin_low.assign(static_cast<size_t>(S), std::numeric_limits<double>::quiet_NaN());
  bin_width.assign(static_cast<size_t>(S), std::numeric_limits<double>::quiet_NaN());
  const bins::Columns cols{out.n_rows.data(), out.low_row.data(), out.poc_row.data(), out.vah_row.data(),
                           out.val_row.data(), out.poc.data(), out.vah.data(), out.val.data(),
                           out.total_volume.data(), out.va_volume.data(), bin_low.data(), bin_width.data()};

  const auto scratch_of = [&](int worker) -> Scratch& {
    Scratch& sc = scratch[static_cast<size_t>(worker)];
    sc.bins.resize(static_cast<size_t>(N));
    if (opt.accumulate == Accumulate::exact) sc.acc.resize(static_cast<size_t>(N));
    return sc;
  };
  // every row valid and every session's profile first (its sum checked), then the windows: the
  // first failing session comes before any window's failure, as on the GPU and without bins
  parallel_for(S, workers, opt.interrupt, [&](int64_t s, int worker) {
    const int64_t b = off[s], e = off[s + 1];
    if (failure.before(b)) return;
    for (int64_t i = b; i < e; ++i) {
      const Item it = src.item(i);
      if (!src.valid_prices(it) || !Source<P, V>::valid_volume(it)) {
        failure.record(i, problem(i));
        return;
      }
    }
    if (e == b) {
      bins::write_empty(cols, s);
      return;
    }
    Scratch& sc = scratch_of(worker);
    double* v = out.volume.data() + out.offsets[s];
    bins::Ladder L;
    bins::Levels lv;
    double total = 0.0;
    if (!bins::session(b, e, opt, get, v, sc.acc.data(), L, total, lv)) {
      failure.record(b, messages::session_volume_overflow(volume_name, s));
      return;
    }
    bins::write(cols, s, N, L, total, lv);
  });
  if (failure.failed()) messages::raise(failure.problem(), __FILE__, __LINE__);
  if (!opt.developing) return out;
  // each row's prefix (its last `window` rows, of the call with window_across_sessions) rebuilt from its
  // rows, as wickra rebuilds a window
  parallel_for(S, workers, opt.interrupt, [&](int64_t s, int worker) {
    const int64_t b = off[s], e = off[s + 1];
    if (e == b || failure.before(b)) return;
    Scratch& sc = scratch_of(worker);
    for (int64_t i = b; i < e; ++i) {
      const int64_t start = opt.window > 0 ? window::Starts::rows(opt.window)(opt.window_across ? 0 : b, i) : b;
      bins::Ladder Li;
      bins::Levels li;
      double ti = 0.0;
      if (!bins::session(start, i + 1, opt, get, sc.bins.data(), sc.acc.data(), Li, ti, li)) {  // across sessions
        failure.record(i, messages::window_volume_overflow(volume_name, in.bars ? "bar" : "row", i, s));
        return;
      }
      out.dev_poc[static_cast<size_t>(i)] = li.poc_price;
      out.dev_vah[static_cast<size_t>(i)] = li.vah_price;
      out.dev_val[static_cast<size_t>(i)] = li.val_price;
    }
  });
  if (failure.failed()) messages::raise(failure.problem(), __FILE__, __LINE__);
  return out;
}

}  // namespace

Profiles profile_bins_trades(const Array& price, const Array& volume, const SessionSpan& sessions, const Options& opt,
                             std::vector<double>& bin_low, std::vector<double>& bin_width) {
  const InputView in = view_of(price, volume);
  Profiles out;
  with_types(in, [&](auto p, auto vv) {
    using P = decltype(p);
    using V = decltype(vv);
    const auto problem = [&](int64_t i) {
      return messages::trade_problem(i, price, load<P>(price.data, i), volume, static_cast<const V*>(volume.data)[i],
                                     opt.tick_size, opt.ticks_per_row);
    };
    out = run<P, V>(in, sessions, opt, volume.name, problem, bin_low, bin_width);
  });
  return out;
}

Profiles profile_bins_bars(const BarsInput& bars, const SessionSpan& sessions, const Options& opt,
                           std::vector<double>& bin_low, std::vector<double>& bin_width) {
  const InputView in = view_of(bars, Distribute::uniform);
  Profiles out;
  with_types(in, [&](auto p, auto vv) {
    using P = decltype(p);
    using V = decltype(vv);
    const auto problem = [&](int64_t i) {
      const double o = bars.has_open ? load<P>(bars.open.data, i) : 0.0;
      return messages::bar_problem(i, bars, load<P>(bars.high.data, i), load<P>(bars.low.data, i),
                                   load<P>(bars.close.data, i), o, static_cast<const V*>(bars.volume.data)[i],
                                   opt.tick_size, opt.ticks_per_row);
    };
    out = run<P, V>(in, sessions, opt, bars.volume.name, problem, bin_low, bin_width);
  });
  return out;
}

}  // namespace vpoc::cpu
