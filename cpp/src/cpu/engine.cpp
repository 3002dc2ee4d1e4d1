// cpu/engine.cpp — CPU backend: bin every session in parallel, then lay out and level the profiles.
// Contract: one pass over the input; worker-local scratch only; output identical for any thread count.
#include "cpu/engine.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/ladder.hpp"
#include "core/messages.hpp"
#include "core/side.hpp"
#include "cpu/developing.hpp"
#include "cpu/grid.hpp"
#include "cpu/histogram.hpp"
#include "cpu/levels.hpp"
#include "cpu/parallel.hpp"
#include "cpu/row_window.hpp"
#include "cpu/scratch_cache.hpp"
#include "cpu/touch.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/side.hpp"

namespace vpoc::cpu {
namespace {

// One worker's scratch, kept across calls (cpu/scratch_cache.hpp): its row windows (zeroed between
// sessions), the staging buffer of its binned rows, the levels' order.
struct WorkerScratch {
  RowWindow<int64_t> window_int;
  RowWindow<Fixed> window_fixed;
  HostVector<double> buffer;  // (uninitialised growth: the drain writes every row once)
  HostVector<double> buy, sell;  // sided calls: the buy / sell rows beside buffer's
  std::vector<int64_t> order;
  size_t handed_rows = 0;     // the rows of the buffer last handed over as a call's volume column (hand_over)
  int64_t handed_inputs = 0;  // and that call's input rows

  template <class Acc>
  RowWindow<Acc>& window() {
    if constexpr (std::is_same_v<Acc, Fixed>) return window_fixed;
    else return window_int;
  }
  size_t bytes() const {
    return window_int.bytes() + window_fixed.bytes() + (buffer.capacity() + buy.capacity() + sell.capacity()) *
           sizeof(double) + order.capacity() * sizeof(int64_t);
  }
};

// Where a binned session's rows wait (in its worker's buffer) until the output is laid out.
struct Binned {
  int worker = 0;
  int64_t start = 0;  // into that worker's buffer
  int64_t n_rows = 0;
  int64_t low_row = kNoRow;
  Fixed total;  // the exact sum of the session's rows
  Fixed buy_total, sell_total;  // sided calls: those of its buy / sell rows
  SessionLevels levels{};  // made while binning (early_levels), else in the layout pass
};

// Whether a session's levels are made right after its rows are drained, while they are in cache
// (its worker's buffer), instead of in the layout pass from the output column (cold by then: float32,
// 20 M trades, 1 thread: session_levels 3.9% of the call's samples from the column). Not for
// va_rows='touched', whose flags come from the inputs in the layout pass.
bool early_levels(const Options& opt) { return opt.va_rows != VaRows::touched; }

// Spare capacity a handed-over buffer may keep beyond twice its rows: 32 KiB, noise against any
// allocation (a small column's growth steps stay under it).
constexpr size_t kHandOverSlackRows = 4096;

// Whether session s's volumes sum past 2**53 (fixed::kMaxTotal). Its binned total is exact unless
// the sum passed 2**64, which only a session holding a volume > 2**63 / rows can reach: then the
// volumes are summed again in float64 to tell.
bool sums_too_much(const Fixed& total, double vmax, const Array& volume, int64_t begin, int64_t end) {
  if (vmax * static_cast<double>(end - begin) >= 0x1p63 && sum_volumes(volume, begin, end) >= 0x1p62) return true;
  return fixed::over_max(total);
}

// Each worker's scratch ready for a call: its row window bounded by max_rows with `plane_shift` (2: the
// windows keep 4 planes a row, sided calls), its row buffers empty.
template <class Acc>
void fresh_scratch(ScratchLease<WorkerScratch>& scratch, int workers, const Options& opt, int plane_shift) {
  for (int w = 0; w < workers; ++w) {
    scratch[w].window<Acc>().set_max_rows(opt.max_rows);
    scratch[w].window<Acc>().set_plane_shift(plane_shift);
    scratch[w].buffer.clear();
    scratch[w].buy.clear();
    scratch[w].sell.clear();
  }
}

// bin(s, bins, failure) -> bool bins session s; a session whose volumes sum past 2**53 is a
// ValueError naming `volume`. Returns the laid-out Profiles. Acc: the accumulator type (int64_t:
// integer volumes landing whole on one row; Fixed: the rest); both sum exactly.
// `in`: the inputs again, read by the touched-row pass (va_rows='touched' only). side (sided trades, else
// null): the windows keep kSidePlanes planes a row, drained into the volume, buy and sell rows (side->cols).
template <class Acc, class Bin>
Profiles run(const SessionSpan& sessions, const Options& opt, const Array& volume, const InputView& in, Bin&& bin,
             SideJob* side = nullptr) {
  const int64_t S = sessions.n_sessions;
  const int64_t* off = sessions.offsets;
  const int workers = resolve_threads(opt.threads, S);
  ScratchLease<WorkerScratch> scratch(workers);
  fresh_scratch<Acc>(scratch, workers, opt, side ? 2 : 0);
  // the session's rows out of the window (which drain leaves zero): volume, and buy / sell when sided
  const auto drain = [side](Bins<Acc>& bins, WorkerScratch& w, Binned& b) {
    return side ? bins.drain_sided(w.buffer, w.buy, w.sell, b.total, b.buy_total, b.sell_total)
                : bins.drain(w.buffer, b.total);
  };
  std::vector<Binned> binned(static_cast<size_t>(S));
  FirstFailure failure;
  const bool early = early_levels(opt);
  // One worker's buffer holds every session's rows in order, the volume column itself: it is handed
  // over as the column (no copy of the rows) and the next call's buffer reserved at once at the size
  // handed over last, so that it grows by no reallocation and reuses the memory the caller freed
  // (float32, 20 M trades, 1 thread, fresh processes: -2.2%; handed over without the reserve, 7-9%
  // slower than the copy: the fresh buffer's pages faulted in as it grew). Only for a call of at least
  // half the input rows of that one: a small call after a large one reserves nothing.
  const bool hand_over = workers == 1 && side == nullptr;
  const int64_t inputs = S > 0 ? off[S] - off[0] : 0;
  if (hand_over && 2 * inputs >= scratch[0].handed_inputs) scratch[0].buffer.reserve(scratch[0].handed_rows);

  parallel_for(S, workers, opt.interrupt, [&](int64_t s, int worker) {
    if (failure.before(off[s])) return;  // an earlier row is already bad: this session is moot
    Bins<Acc> bins(scratch[worker].window<Acc>());
    HostVector<double>& buffer = scratch[worker].buffer;
    const bool ok = bin(s, bins, failure);
    if (ok && bins.too_wide())
      report_too_wide(in, off[s], off[s + 1], s, opt, failure);
    Binned& b = binned[static_cast<size_t>(s)];
    if (!ok || bins.too_wide()) {
      const auto keep = buffer.size();
      drain(bins, scratch[worker], b);  // leaves the window zeroed for the next session
      buffer.resize(keep);
      scratch[worker].buy.resize(side ? keep : 0);
      scratch[worker].sell.resize(side ? keep : 0);
      return;
    }
    b.worker = worker;
    b.start = static_cast<int64_t>(buffer.size());
    b.low_row = bins.empty() ? kNoRow : bins.lo();
    const double vmax = bins.vmax();
    b.n_rows = drain(bins, scratch[worker], b);
    if (sums_too_much(b.total, vmax, volume, off[s], off[s + 1]))
      failure.record(off[s], messages::session_volume_overflow(volume.name, s));
    else if (early && b.n_rows > 0)
      b.levels = session_levels(buffer.data() + b.start, b.n_rows, fixed::to_double(b.total), opt, scratch[worker].order);
  });
  if (failure.failed()) messages::raise(failure.problem(), __FILE__, __LINE__);

  Profiles out;
  out.tick_size = opt.tick_size;
  out.ticks_per_row = opt.ticks_per_row;
  out.resize_sessions(S);
  for (int64_t s = 0; s < S; ++s) out.offsets[s + 1] = out.offsets[s] + binned[s].n_rows;
  // Handed over only where the buffer is not much larger than the column: a call of many inputs and few
  // rows after a call of many rows (its reserve) would otherwise hand the result an allocation of the
  // earlier call's size, held as long as the result (the rows are copied then, the buffer kept here).
  const size_t rows = static_cast<size_t>(out.offsets[S]);
  const bool handed = hand_over && scratch[0].buffer.size() == rows &&
                      scratch[0].buffer.capacity() <= 2 * rows + kHandOverSlackRows;
  if (handed) {  // (its rows are the sessions' in order: no session failed, none was dropped)
    out.volume.swap(scratch[0].buffer);
    scratch[0].handed_rows = out.volume.size();
    scratch[0].handed_inputs = inputs;
  } else {
    out.volume.resize(static_cast<size_t>(out.offsets[S]));  // uninitialised: each session's rows copied in below
  }
  if (side) {
    side->cols.buy.assign(out.volume.size(), 0.0);
    side->cols.sell.assign(out.volume.size(), 0.0);
    side->cols.delta.assign(static_cast<size_t>(S), 0.0);
    side->cols.buy_total.assign(static_cast<size_t>(S), 0.0);
    side->cols.sell_total.assign(static_cast<size_t>(S), 0.0);
  }

  const ladder::RowPrice row_price =
      ladder::RowPrice::make(opt.tick_size, opt.ticks_per_row, opt.price_label == PriceLabel::decimal);
  const bool touched = opt.va_rows == VaRows::touched;
  std::vector<std::vector<uint8_t>> flags(static_cast<size_t>(touched ? workers : 0));
  parallel_for(S, workers, opt.interrupt, [&](int64_t s, int worker) {
    const Binned& b = binned[static_cast<size_t>(s)];
    out.n_rows[s] = b.n_rows;
    out.low_row[s] = b.low_row;
    if (b.n_rows == 0) {
      out.poc_row[s] = out.vah_row[s] = out.val_row[s] = kNoRow;
      out.poc[s] = out.vah[s] = out.val[s] = std::numeric_limits<double>::quiet_NaN();
      out.total_volume[s] = out.va_volume[s] = 0.0;
      return;
    }
    double* v = out.volume.data() + out.offsets[s];
    if (!handed) {
      const double* src = scratch[b.worker].buffer.data() + b.start;
      std::copy(src, src + b.n_rows, v);
    }
    if (side) {  // delta: the difference of the two rounded totals (as the masked passes' total_volume)
      const auto at = static_cast<size_t>(b.start);
      std::copy_n(scratch[b.worker].buy.data() + at, b.n_rows, side->cols.buy.data() + out.offsets[s]);
      std::copy_n(scratch[b.worker].sell.data() + at, b.n_rows, side->cols.sell.data() + out.offsets[s]);
      side->cols.buy_total[static_cast<size_t>(s)] = fixed::to_double(b.buy_total);
      side->cols.sell_total[static_cast<size_t>(s)] = fixed::to_double(b.sell_total);
      side->cols.delta[static_cast<size_t>(s)] = vpoc::side::delta(fixed::to_double(b.buy_total), fixed::to_double(b.sell_total));
    }
    const uint8_t* touch = nullptr;
    if (touched) {
      std::vector<uint8_t>& f = flags[static_cast<size_t>(worker)];
      f.resize(static_cast<size_t>(b.n_rows));
      touched_rows(in, off[s], off[s + 1], opt, b.low_row, b.n_rows, f.data());
      touch = f.data();
    }
    const SessionLevels L =
        early ? b.levels : session_levels(v, b.n_rows, fixed::to_double(b.total), opt, scratch[worker].order, touch);
    out.poc_row[s] = b.low_row + L.poc;
    out.val_row[s] = b.low_row + L.val;
    out.vah_row[s] = b.low_row + L.vah;
    out.poc[s] = row_price(out.poc_row[s]);
    out.val[s] = row_price(out.val_row[s]);
    out.vah[s] = row_price(out.vah_row[s]);
    out.total_volume[s] = L.total;
    out.va_volume[s] = L.va_volume;
  });
  scratch.keep();  // every window drained (zeroed), no exception
  return out;
}

// go(int64_t{}) where every volume may sum in 64-bit integers (whole volumes landing whole on one
// row: exact and fast); a bin that finds otherwise throws NeedsFixed and the call runs again as
// go(Fixed{}), 64.64 fixed point, which every volume takes.
template <class Go>
Profiles accumulate(const Array& volume, bool splits_volume, Go&& go) {
  if (integer_accumulation(volume, splits_volume)) try {
      return go(int64_t{});
    } catch (const NeedsFixed&) {
    }
  return go(Fixed{});
}

// bar_sides' rows in accumulator Acc: per session the engine's bar binning (bin_bars: phase A, the
// distribution, max_rows) of the buy column, then of the sell column, each drained to its rows and
// exact total; no levels, no grid count. The first bad buy value (or buy total past 2**53) is raised
// before the first bad sell one, each named as its column (the engine's words for `volume`).
template <class Acc>
SideColumns bar_side_rows(const BarsInput& bars, const Array& buy, const Array& sell, const SessionSpan& sessions,
                          Distribute distribute, const Options& opt, std::vector<int64_t>& row_off,
                          std::vector<int64_t>& low_row) {
  const int64_t S = sessions.n_sessions;
  const int64_t* off = sessions.offsets;
  const int workers = resolve_threads(opt.threads, S);
  ScratchLease<WorkerScratch> scratch(workers);
  fresh_scratch<Acc>(scratch, workers, opt, 0);
  struct Rows {
    int worker = 0;
    int64_t start = 0, n_rows = 0, low_row = kNoRow;
    Fixed buy_total, sell_total;
  };
  std::vector<Rows> rows(static_cast<size_t>(S));
  FirstFailure failure[2];
  const Array* column[2] = {&buy, &sell};
  parallel_for(S, workers, opt.interrupt, [&](int64_t s, int worker) {
    if (failure[0].before(off[s])) return;  // a buy error is raised first: this session is moot
    WorkerScratch& w = scratch[worker];
    Rows& r = rows[static_cast<size_t>(s)];
    const size_t keep = w.buy.size();  // both buffers grow in step
    bool ok = true;
    int64_t n[2] = {0, 0}, lo[2] = {kNoRow, kNoRow};
    for (int k = 0; k < 2; ++k) {
      BarsInput b = bars;
      b.volume = *column[k];
      Bins<Acc> bins(w.window<Acc>());
      GridCount grid[4];
      const bool binned = bin_bars(b, off[s], off[s + 1], s, distribute, opt, bins, failure[k], grid, 0);
      const bool wide = binned && bins.too_wide();
      if (wide) report_too_wide(view_of(b, distribute), off[s], off[s + 1], s, opt, failure[k]);
      lo[k] = bins.empty() ? kNoRow : bins.lo();
      const double vmax = bins.vmax();
      Fixed& total = k == 0 ? r.buy_total : r.sell_total;
      n[k] = bins.drain(k == 0 ? w.buy : w.sell, total);  // leaves the window zeroed
      ok = ok && binned && !wide;
      if (binned && !wide && sums_too_much(total, vmax, *column[k], off[s], off[s + 1]))
        failure[k].record(off[s], messages::session_volume_overflow("volume", s));
    }
    if (!ok || n[0] != n[1] || lo[0] != lo[1]) {  // (the same prices give the same rows)
      if (ok) failure[0].record(off[s], messages::general("bar_sides: the buy and sell rows differ; please report this"));
      w.buy.resize(keep);
      w.sell.resize(keep);
      return;
    }
    r.worker = worker;
    r.start = static_cast<int64_t>(keep);
    r.n_rows = n[0];
    r.low_row = lo[0];
  });
  for (int k = 0; k < 2; ++k)
    if (failure[k].failed()) {
      messages::Problem p = failure[k].problem();
      if (p.argument == "volume") {  // said of the column, as the masked passes' errors were readdressed
        p.argument = k == 0 ? "buy_volume" : "sell_volume";
        p.message = p.argument + p.message.substr(6);
      }
      messages::raise(p, __FILE__, __LINE__);
    }
  SideColumns c;
  row_off.assign(static_cast<size_t>(S + 1), 0);
  low_row.assign(static_cast<size_t>(S), kNoRow);
  for (int64_t s = 0; s < S; ++s) {
    row_off[static_cast<size_t>(s + 1)] = row_off[static_cast<size_t>(s)] + rows[static_cast<size_t>(s)].n_rows;
    low_row[static_cast<size_t>(s)] = rows[static_cast<size_t>(s)].low_row;
  }
  c.buy.assign(static_cast<size_t>(row_off[static_cast<size_t>(S)]), 0.0);
  c.sell.assign(c.buy.size(), 0.0);
  c.delta.assign(static_cast<size_t>(S), 0.0);
  c.buy_total.assign(static_cast<size_t>(S), 0.0);
  c.sell_total.assign(static_cast<size_t>(S), 0.0);
  for (int64_t s = 0; s < S; ++s) {  // delta: the difference of the two rounded totals
    const Rows& r = rows[static_cast<size_t>(s)];
    const auto at = static_cast<size_t>(r.start);
    std::copy_n(scratch[r.worker].buy.data() + at, r.n_rows, c.buy.data() + row_off[static_cast<size_t>(s)]);
    std::copy_n(scratch[r.worker].sell.data() + at, r.n_rows, c.sell.data() + row_off[static_cast<size_t>(s)]);
    c.buy_total[static_cast<size_t>(s)] = fixed::to_double(r.buy_total);
    c.sell_total[static_cast<size_t>(s)] = fixed::to_double(r.sell_total);
    c.delta[static_cast<size_t>(s)] = vpoc::side::delta(fixed::to_double(r.buy_total), fixed::to_double(r.sell_total));
  }
  scratch.keep();  // every window drained (zeroed), no exception
  return c;
}

}  // namespace

SideColumns bar_sides(const BarsInput& bars, const Array& buy, const Array& sell, const SessionSpan& sessions,
                      Distribute distribute, const Options& opt, const SideRules& rules, std::vector<int64_t>& row_off,
                      std::vector<int64_t>& low_row) {
  const bool splits = distribute == Distribute::uniform || distribute == Distribute::legacy;
  SideColumns c;
  bool done = false;
  if (integer_accumulation(buy, splits)) try {
      c = bar_side_rows<int64_t>(bars, buy, sell, sessions, distribute, opt, row_off, low_row);
      done = true;
    } catch (const NeedsFixed&) {
    }
  if (!done) c = bar_side_rows<Fixed>(bars, buy, sell, sessions, distribute, opt, row_off, low_row);
  const RowLayout layout{row_off.data(), low_row.data(), sessions.n_sessions,
                         opt.tick_size * static_cast<double>(opt.ticks_per_row)};
  side_levels(c, layout, opt, rules);
  return c;
}

Profiles profile_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                        const Options& opt, SideJob* side) {
  GridTally grid(1);
  const int8_t* codes = side ? side->codes : nullptr;
  const auto go = [&](auto acc) {
    using Acc = decltype(acc);
    grid.clear();
    return run<Acc>(
        sessions, opt, volume, view_of(price, volume),
        [&](int64_t s, Bins<Acc>& bins, FirstFailure& f) {
          GridCount g;
          const bool ok = bin_trades(price, volume, sessions.offsets[s], sessions.offsets[s + 1], s, opt, bins, f, g, codes);
          grid.add(0, g);
          return ok;
        },
        side);
  };
  Profiles out = accumulate(volume, false, go);
  grid.result(out.off_grid, out.first_off_grid_input, out.first_off_grid);
  if (side) {  // the per-session side fields on the finished rows; dev_delta in input order
    const RowLayout rows{out.offsets.data(), out.low_row.data(), sessions.n_sessions,
                         opt.tick_size * static_cast<double>(opt.ticks_per_row)};
    side_levels(side->cols, rows, opt, side->rules);
    if (opt.developing) side_dev_delta(volume, codes, sessions, opt, side->cols.dev_delta);
    side->done = true;
  }
  if (opt.developing) developing(view_of(price, volume), sessions, opt, out);
  return out;
}

Profiles profile_bars(const BarsInput& bars, const SessionSpan& sessions, Distribute distribute,
                      const Options& opt) {
  // open is read only by distribute='legacy' (which weights prices where they lie)
  const bool open = bars.has_open && distribute == Distribute::legacy;
  GridTally grid(open ? 4 : 3);  // high, low, close (, open)
  const int n_grid = grid.inputs();
  const auto go = [&](auto acc) {
    using Acc = decltype(acc);
    grid.clear();
    return run<Acc>(sessions, opt, bars.volume, view_of(bars, distribute), [&](int64_t s, Bins<Acc>& bins, FirstFailure& f) {
      GridCount g[4];
      const bool ok = bin_bars(bars, sessions.offsets[s], sessions.offsets[s + 1], s, distribute, opt, bins, f, g, n_grid);
      for (int k = 0; k < n_grid; ++k) grid.add(k, g[k]);
      return ok;
    });
  };
  const bool splits = distribute == Distribute::uniform || distribute == Distribute::legacy;
  Profiles out = accumulate(bars.volume, splits, go);
  grid.result(out.off_grid, out.first_off_grid_input, out.first_off_grid);
  if (opt.developing) developing(view_of(bars, distribute), sessions, opt, out);
  return out;
}

}  // namespace vpoc::cpu

namespace vpoc {

SideColumns bar_side_fields(const BarsInput& bars, const Array& buy, const Array& sell, const SessionSpan& sessions,
                            const Options& opt, const SideRules& rules, std::vector<int64_t>& row_off,
                            std::vector<int64_t>& low_row) {
  return cpu::bar_sides(bars, buy, sell, sessions, opt.distribute, opt, rules, row_off, low_row);
}

}  // namespace vpoc
