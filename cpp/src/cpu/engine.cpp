// cpu/engine.cpp — CPU backend: bin every session in parallel, then lay out and level the profiles.
// Contract: one pass over the input; worker-local scratch only; output identical for any thread count.
#include "cpu/engine.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "core/ladder.hpp"
#include "core/messages.hpp"
#include "cpu/developing.hpp"
#include "cpu/histogram.hpp"
#include "cpu/levels.hpp"
#include "cpu/parallel.hpp"
#include "cpu/row_window.hpp"
#include "vpoc/errors.hpp"

namespace vpoc::cpu {
namespace {

// Where a binned session's rows wait (in its worker's buffer) until the output is laid out.
struct Binned {
  int worker = 0;
  int64_t start = 0;  // into that worker's buffer
  int64_t n_rows = 0;
  int64_t low_row = kNoRow;
};

// bin(s, bins, failure) -> bool bins session s; a session whose volumes sum to inf is a ValueError
// naming volume_name. Returns the laid-out Profiles. Acc: the
// accumulator type (int64_t: exact integer volumes; double).
template <class Acc, class Bin>
Profiles run(const SessionSpan& sessions, const Options& opt, const char* volume_name, Bin&& bin) {
  const int64_t S = sessions.n_sessions;
  const int64_t* off = sessions.offsets;
  const int workers = resolve_threads(opt.threads, S);
  std::vector<RowWindow<Acc>> windows(static_cast<size_t>(workers), RowWindow<Acc>(opt.max_rows));
  std::vector<std::vector<double>> buffers(static_cast<size_t>(workers));
  std::vector<Binned> binned(static_cast<size_t>(S));
  FirstFailure failure;

  parallel_for(S, workers, opt.interrupt, [&](int64_t s, int worker) {
    if (failure.before(off[s])) return;  // an earlier row is already bad: this session is moot
    Bins<Acc> bins(windows[static_cast<size_t>(worker)]);
    std::vector<double>& buffer = buffers[static_cast<size_t>(worker)];
    const bool ok = bin(s, bins, failure);
    if (ok && bins.too_wide())
      failure.record(off[s], messages::session_too_wide(s, bins.hi() - bins.lo() + 1, opt.max_rows));
    if (!ok || bins.too_wide()) {
      const auto keep = buffer.size();
      bins.drain(buffer);  // leaves the window zeroed for the next session
      buffer.resize(keep);
      return;
    }
    Binned& b = binned[static_cast<size_t>(s)];
    b.worker = worker;
    b.start = static_cast<int64_t>(buffer.size());
    b.low_row = bins.empty() ? kNoRow : bins.lo();
    b.n_rows = bins.drain(buffer);
  });
  if (failure.failed()) throw ValueError(failure.message(), __FILE__, __LINE__);

  Profiles out;
  out.tick_size = opt.tick_size;
  out.ticks_per_row = opt.ticks_per_row;
  out.resize_sessions(S);
  for (int64_t s = 0; s < S; ++s) out.offsets[s + 1] = out.offsets[s] + binned[s].n_rows;
  out.volume.assign(static_cast<size_t>(out.offsets[S]), 0.0);

  const double row_size = opt.tick_size * static_cast<double>(opt.ticks_per_row);
  std::vector<std::vector<int64_t>> order(static_cast<size_t>(workers));
  std::atomic<int64_t> overflow{S};  // the first session whose volumes sum to inf
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
    const double* src = buffers[static_cast<size_t>(b.worker)].data() + b.start;
    std::copy(src, src + b.n_rows, v);
    const SessionLevels L = session_levels(v, b.n_rows, opt, order[static_cast<size_t>(worker)]);
    out.poc_row[s] = b.low_row + L.poc;
    out.val_row[s] = b.low_row + L.val;
    out.vah_row[s] = b.low_row + L.vah;
    out.poc[s] = ladder::row_price(out.poc_row[s], row_size);
    out.val[s] = ladder::row_price(out.val_row[s], row_size);
    out.vah[s] = ladder::row_price(out.vah_row[s], row_size);
    out.total_volume[s] = L.total;
    out.va_volume[s] = L.va_volume;
    if (!std::isfinite(L.total)) {
      for (int64_t cur = overflow.load(); s < cur && !overflow.compare_exchange_weak(cur, s);) {
      }
    }
  });
  if (overflow.load() < S)
    throw ValueError(messages::volume_overflow(volume_name, overflow.load()), __FILE__, __LINE__);
  return out;
}

}  // namespace

Profiles profile_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                        const Options& opt) {
  const auto go = [&](auto acc) {
    using Acc = decltype(acc);
    return run<Acc>(sessions, opt, volume.name, [&](int64_t s, Bins<Acc>& bins, FirstFailure& f) {
      return bin_trades(price, volume, sessions.offsets[s], sessions.offsets[s + 1], opt, bins, f);
    });
  };
  Profiles out = [&] {
    if (integer_accumulation(volume, false)) try {
        return go(int64_t{});
      } catch (const NeedsFloat64&) {
      }
    return go(double{});
  }();
  if (opt.developing) developing(view_of(price, volume), sessions, opt, out);
  return out;
}

Profiles profile_bars(const BarsInput& bars, const SessionSpan& sessions, Distribute distribute,
                      const Options& opt) {
  const auto go = [&](auto acc) {
    using Acc = decltype(acc);
    return run<Acc>(sessions, opt, bars.volume.name, [&](int64_t s, Bins<Acc>& bins, FirstFailure& f) {
      return bin_bars(bars, sessions.offsets[s], sessions.offsets[s + 1], distribute, opt, bins, f);
    });
  };
  const bool splits = distribute == Distribute::uniform || distribute == Distribute::legacy;
  Profiles out = [&] {
    if (integer_accumulation(bars.volume, splits)) try {
        return go(int64_t{});
      } catch (const NeedsFloat64&) {
      }
    return go(double{});
  }();
  if (opt.developing) developing(view_of(bars, distribute), sessions, opt, out);
  return out;
}

}  // namespace vpoc::cpu
