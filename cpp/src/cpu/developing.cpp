// cpu/developing.cpp — developing series on the CPU: sessions in parallel, rows in order within one.
// Contract: core/developing.hpp does the work; per-worker scratch only, results independent of threads.
#include "cpu/developing.hpp"

#include <limits>
#include <vector>

#include "core/ladder.hpp"
#include "core/messages.hpp"
#include "core/window.hpp"
#include "core/window_reach.hpp"
#include "cpu/parallel.hpp"
#include "cpu/scratch_cache.hpp"
#include "vpoc/errors.hpp"

namespace vpoc::cpu {

// The rows both kinds of scratch share, zeroed for W rows: volumes (a buffer still shared by a view
// handed out is replaced, not rewritten), fixed-point rows, the level order.
void ScratchBuffers::zero_rows(size_t W) {
  if (!v || v.use_count() > 1) v = std::make_shared<std::vector<double>>();
  v->assign(W, 0.0);
  vf.assign(W, Fixed{});
  order.resize(W);
}

developing::Scratch ScratchBuffers::for_session(int64_t n_rows, int64_t origin) {
  const auto W = static_cast<size_t>(developing::scratch_rows(n_rows));
  zero_rows(W);
  run.resize(W + 1);
  lo.resize(W + 1);
  hi.resize(W + 1);
  pos.resize(W);
  return {v->data(), vf.data(), lo.data(), hi.data(), run.data(), order.data(), pos.data(), static_cast<int64_t>(W),
          origin};
}

window::Scratch ScratchBuffers::for_window(int64_t n_rows, int64_t origin) {
  const auto W = static_cast<size_t>(n_rows);
  zero_rows(W);
  touch.assign(W, 0);
  return {v->data(), vf.data(), touch.data(), order.data(), static_cast<int64_t>(W), origin};
}

size_t ScratchBuffers::bytes() const {
  return (v ? v->capacity() * sizeof(double) : 0) + vf.capacity() * sizeof(Fixed) + run.capacity() * sizeof(double) +
         (lo.capacity() + hi.capacity() + order.capacity() + pos.capacity() + touch.capacity()) * sizeof(int32_t);
}

namespace {

// Why a window failed (window::Session::why) and at which row: the first of each session.
struct WindowFailure {
  int64_t row = -1;
  window::Why why = window::Why::none;
  int64_t rows = 0;  // the window's width (too_wide)
};

// Raises the failure of the smallest row (the same message on every backend and thread count); what:
// "row" (trades) or "bar".
void raise_window(const std::vector<WindowFailure>& failed, const SessionSpan& sessions, const Options& opt,
                  const window::Starts& starts, const char* what) {
  const WindowFailure* f = nullptr;
  for (const WindowFailure& x : failed)
    if (x.row >= 0 && (f == nullptr || x.row < f->row)) f = &x;
  if (f == nullptr) return;
  const int64_t S = sessions.n_sessions, *off = sessions.offsets, i = f->row, s = window::session_of(off, S, i);
  if (f->why == window::Why::too_wide) {
    const int64_t j = starts(0, i);
    messages::raise(messages::window_too_wide(what, i, j, window::session_of(off, S, j), s, f->rows, opt.max_rows),
                    __FILE__, __LINE__);
  }
  if (f->why == window::Why::overflow)
    messages::raise(messages::window_volume_overflow("volume", what, i, s), __FILE__, __LINE__);
  VPOC_THROW(Error, "developing series: a row of session ", s, " fell outside its final row range");
}

}  // namespace

void developing(const InputView& in, const SessionSpan& sessions, const Options& opt, Profiles& prof) {
  const int64_t S = sessions.n_sessions;
  const int64_t* off = sessions.offsets;
  const int64_t N = off[S];
  prof.dev_poc.assign(static_cast<size_t>(N), std::numeric_limits<double>::quiet_NaN());
  prof.dev_vah.assign(static_cast<size_t>(N), std::numeric_limits<double>::quiet_NaN());
  prof.dev_val.assign(static_cast<size_t>(N), std::numeric_limits<double>::quiet_NaN());
  const ladder::RowPrice row_price =
      ladder::RowPrice::make(opt.tick_size, opt.ticks_per_row, opt.price_label == PriceLabel::decimal);
  const int workers = resolve_threads(opt.threads, S);
  ScratchLease<ScratchBuffers> scratch(workers);  // every session sets its rows up afresh
  std::vector<char> lost(static_cast<size_t>(S), 0);
  std::vector<WindowFailure> failed(static_cast<size_t>(S));
  // rolling windows: the caller's per-row starts (time windows), else the last window::length rows
  const window::Starts starts = sessions.window_start ? window::Starts::given(sessions.window_start, 0)
                                                      : window::Starts::rows(window::length(opt));
  // windows across sessions: each session's first window row and the rows its windows reach, whose
  // tail of earlier sessions is replayed (preloaded) into a fresh window: sessions stay independent
  std::vector<int64_t> first(opt.window_across ? static_cast<size_t>(S) : 0), origin(first.size()), width(first.size());
  if (opt.window_across)
    window::reach(off, S, prof.low_row.data(), prof.n_rows.data(), starts, first.data(), origin.data(), width.data());

  with_types(in, [&](auto p, auto v) {
    const auto src = make_source<decltype(p), decltype(v)>(in, opt, 0);
    parallel_for(S, workers, opt.interrupt, [&](int64_t s, int worker) {
      if (prof.n_rows[s] == 0) return;
      const auto put = [&](int64_t i, int64_t poc, int64_t val, int64_t vah) {
        prof.dev_poc[i] = row_price(poc);
        prof.dev_val[i] = row_price(val);
        prof.dev_vah[i] = row_price(vah);
      };
      if (starts.at != nullptr || starts.count > 0) {  // rolling windows (or touched rows): the window's own profile
        const bool across = opt.window_across;
        const int64_t b0 = across ? first[s] : off[s];
        if (across && window::beyond_reach(width[s], opt.max_rows)) {  // the first window is too wide: no scratch
          const int64_t w = window::window_rows(src, b0, off[s]);
          failed[static_cast<size_t>(s)] = {off[s], w > opt.max_rows ? window::Why::too_wide : window::Why::outside, w};
          return;
        }
        const window::Scratch sc = across ? scratch[worker].for_window(width[s], origin[s])
                                          : scratch[worker].for_window(prof.n_rows[s], prof.low_row[s]);
        window::Session session(sc, opt);
        if (!session.preload(src, b0, off[s]) || !session.extend(src, b0, off[s], off[s + 1], starts, put))
          failed[static_cast<size_t>(s)] = {session.fail_row(), session.why(), session.last() - session.first() + 1};
        return;
      }
      const developing::Scratch sc = scratch[worker].for_session(
          prof.n_rows[s], prof.low_row[s] - developing::kMargin);
      developing::Session session(sc, opt);
      if (!session.run(src, off[s], off[s + 1], put)) lost[static_cast<size_t>(s)] = 1;
    });
  });
  scratch.keep();
  raise_window(failed, sessions, opt, starts, in.bars ? "bar" : "row");
  for (int64_t s = 0; s < S; ++s)
    if (lost[static_cast<size_t>(s)])
      VPOC_THROW(Error, "developing series: a row of session ", s, " fell outside its final row range");
}

}  // namespace vpoc::cpu
