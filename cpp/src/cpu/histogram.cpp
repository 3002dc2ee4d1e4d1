// cpu/histogram.cpp — per-session binning of trades and bars into a worker's window (CPU backend).
// Contract: docs/contract.md; inputs widen to float64; hot loops only detect bad rows, a precise
// rescan then names the first one.
#include "cpu/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/distribute.hpp"
#include "core/ladder.hpp"
#include "core/messages.hpp"
#include "core/source.hpp"
#include "cpu/bar_slots.hpp"
#include "cpu/grid.hpp"
#include "cpu/scatter.hpp"
#include "cpu/side_planes.hpp"
#include "cpu/slots.hpp"
#include "cpu/typed.hpp"
#include "cpu/uniform_split.hpp"
#include "cpu/bars_uniform512.hpp"
#include "vpoc/errors.hpp"



namespace vpoc::cpu {
namespace {

using ladder::kMaxTicks;
using ladder::TickScale;

// 0 or 2**-32 .. 2**53 (rejects NaN, inf, negatives): fixed::volume_in_range. Integers are compared
// exactly: as float64, 2**53 + 1 would be 2**53 and pass.
template <class V>
bool valid_volume(V v) {
  if constexpr (std::is_floating_point_v<V>)
    return fixed::volume_in_range(static_cast<double>(v));
  else
    return v >= V(0) && static_cast<int64_t>(v) <= (int64_t(1) << 53);
}

// int64 row sums stay exact and cannot overflow while every volume is a whole number below 2**31
// (a session would need 2**32 rows to overflow). A volume that is not (a fraction, a larger one,
// NaN) makes the call bin in fixed point instead: the int64 rows are only a faster way to the
// same exact sums.
constexpr double kInt64SafeVolume = 2147483648.0;  // 2**31

template <class V, class Acc>
void require_int64_safe(V v) {
  if constexpr (std::is_same_v<Acc, int64_t>) {
    if constexpr (std::is_same_v<V, int64_t>) {
      if (v >> 31) throw NeedsFixed{};
    } else if constexpr (std::is_floating_point_v<V>) {
      const double d = static_cast<double>(v);
      if (!(d >= 0.0 && d < kInt64SafeVolume && d == static_cast<double>(static_cast<int64_t>(d)))) throw NeedsFixed{};
    }
  }
}

// The same for a block that volumes_ok found valid, `whole` and at most vmax. For integer volumes
// vmax is the block's bitwise OR as a float64: at least 2**31 exactly when some volume is (every
// integer below 2**31 converts exactly), so no second pass over the block is needed.
template <class V, class Acc>
void require_int64_safe_block(bool whole, double vmax) {
  if constexpr (std::is_same_v<Acc, int64_t>) {
    if constexpr (std::is_same_v<V, int64_t>) {
      if (!(vmax < kInt64SafeVolume)) throw NeedsFixed{};
    } else if constexpr (std::is_floating_point_v<V>) {
      if (!whole || !(vmax < kInt64SafeVolume)) throw NeedsFixed{};
    }
  }
}

bool valid_ticks(double q, const TickScale& s) { return s.valid(q); }  // also rejects NaN and inf

// Calls fn(bool_constant<Exact>, bool_constant<OneTickPerRow>): the hot loops' fast paths.
template <class F>
void with_ladder(const TickScale& s, int64_t ticks_per_row, F&& fn) {
  using T = std::true_type;
  using N = std::false_type;
  if (s.exact && ticks_per_row == 1) return fn(T{}, T{});
  if (s.exact) return fn(T{}, N{});
  if (ticks_per_row == 1) return fn(N{}, T{});
  return fn(N{}, N{});
}

// ---- trades ------------------------------------------------------------------------------------

// Hot loop over rows [b, e). Returns e when all went well, else the row where it stopped (a bad
// price, or the session outgrowing max_rows); a bad volume anywhere returns e - 1. side (sided calls,
// else null): each trade into plane side[i] & 3 of its row.
template <bool Exact, bool OneTick, class P, class V, class Acc>
int64_t trades_loop(const P* price, const V* vol, int64_t b, int64_t e, const TickScale& s,
                    int64_t tpr, Bins<Acc>& out, const int8_t* side) {
  Bins<Acc> bins = out;
  bool volume_ok = true;
  int64_t i = b;
  for (; i < e; ++i) {
    const double q = s.ticks<Exact>(static_cast<double>(price[i]));
    if (!valid_ticks(q, s)) break;
    const auto t = static_cast<int64_t>(ladder::round_half_even(q));
    const int64_t r = OneTick ? t : ladder::floor_div(t, tpr);
    const V v = vol[i];  // read once: checked and added, the same value
    volume_ok &= valid_volume(v);
    require_int64_safe<V, Acc>(v);
    bins.note_volume(static_cast<double>(v));
    const auto lane = static_cast<unsigned>(i - b);
    if (!(side ? bins.add_plane(r, static_cast<uint8_t>(side[i]) & 3u, to_acc<Acc>(v), lane)
               : bins.add(r, to_acc<Acc>(v), lane)))
      break;
  }
  out = bins;
  return i < e ? i : (volume_ok ? e : e - 1);
}

// Trades in blocks: phase A turns a block of prices into window slots (a loop the compiler
// vectorises), phase B adds the volumes into the slots (a scatter). Exact tick sizes and one tick
// per row only (the common case); everything else takes trades_loop.
constexpr int kBlock = 1024;  // 4 KiB of slots: stays in L1 beside the window
using EntryBuffers = EntryBuffersOf<kBlock>;

// Exact tick sizes only (phase A's p * inv is then exact): the blocks whose prices phase A proves
// whole need no grid test; the others are counted exactly into `grid` while in cache.
// side (sided calls, else null): after phase A each slot moves to its trade's plane (cpu/side_planes.hpp);
// no merged runs, no entries (both sum trades of one row whatever their side).
template <class P, class V, class Acc>
int64_t trades_blocked(const P* price, const V* vol, int64_t b, int64_t e, const TickScale& s,
                       Bins<Acc>& bins, GridCount& grid, const int8_t* side) {
  alignas(64) int32_t slot[kBlock];
  alignas(64) uint64_t rec[kBlock];  // records (cpu/slots.hpp) where phase A has a variant for them
  EntryBuffers eb;  // entries (scatter.hpp), until a block can't: this block's and the pending ones
  Entries ent{eb.off[0], eb.sum[0]};
  // A block's entries are added while the next block's phase A runs (block_entries_f32 with pend:
  // its vector work and these scalar adds overlap; float32, 20 M trades: -14%, 8.54 -> 7.51 ms on a
  // 2-core EPYC (Zen 5) VM); what no phase A took, one by one (pending_scatter) before anything
  // else touches the window or the buffers, and the last block's after the loop.
  PendingEntries pend;
  uint32_t* spare_off = eb.off[1];
  uint32_t* spare_sum = eb.sum[1];
  // float32 prices with a power-of-two tick <= 1: phase A can stay in float32 (8 per instruction).
  const bool f32 = std::is_same_v<P, float> && s.exact && s.inv >= 1.0;
  bool try_records = true;  // trade_records has a variant for these inputs (until a block says it has not)
  // runs merged in phase A (float32 prices, volumes) where runs_likely; not after a block that can't,
  // nor where entries can take the blocks (have_entries): there they beat merged runs even on
  // trades in long runs, and no block is sampled (Zen 4 VM, 1 thread, in-process A/B: float32,
  // 20 M trades moving on 1 in 10 (cpu_floor.py trades_f32_runs) 13.75 -> 10.87 ms; moving on 2 in 3,
  // -2.3%: runs_likely's reads of a block's first prices waited on memory)
  static const bool entries = have_entries();
  bool merging = std::is_same_v<P, float> && std::is_same_v<V, float> && side == nullptr && !entries;
  // runs_likely is asked again only after `skip` more blocks once a block was run-free, the wait
  // doubling (up to kMaxRunSkip) while the answer stays no: trades that rarely repeat a price
  // (float32, 20 M trades moving on 2 in 3: every block's check said no, ~1% of the call) ask
  // about one block in eight; a run-heavy block resets it.
  constexpr int kMaxRunSkip = 8;
  int skip = 0, wait = 1;
  for (int64_t i0 = b; i0 < e; i0 += kBlock) {
    const int n = static_cast<int>(std::min<int64_t>(kBlock, e - i0));
    const int64_t last = i0 + n - 1;
    double mn, mx;
    bool on_grid = false;
    VolumeCheck vc;  // volumes checked in phase A's pass (vc_done)
    bool vc_done = false, recs = false;  // recs: phase A wrote rec (else slot)
    int runs = -1;  // merged records: how many (-1: none)
    bool want_runs = false;
    if (merging && n >= kRunSample) {
      if (skip > 0) --skip;
      else if (runs_likely(price + i0)) want_runs = true, wait = 1;
      else skip = wait, wait = std::min(2 * wait, kMaxRunSkip);
    }
    for (;;) {
      vc_done = false;
      recs = try_records && trade_records(price + i0, vol + i0, n, s, f32, bins, rec, mn, mx, on_grid, vc, vc_done,
                                          want_runs ? &runs : nullptr, side ? nullptr : &ent, &pend);
      if (pend.m >= 0) pending_scatter(pend);
      bool done = recs;
      try_records = try_records && (recs || (bins.rows() << bins.plane_shift()) > Records<Acc>::kMaxRows);
      if constexpr (std::is_same_v<P, float>) {
        const float* fv = nullptr;
        if constexpr (std::is_same_v<V, float>) fv = vol + i0;
        if (!done) {
          done = f32 && block_slots_f32(price + i0, n, static_cast<float>(s.inv), bins.origin(), slot, mn, mx,
                                        on_grid, fv, fv ? &vc : nullptr);
          vc_done = done && fv != nullptr;
        }
      }
      if (!done && !block_slots(price + i0, n, s.inv, static_cast<double>(bins.origin()), slot, mn, mx, on_grid))
        return last;
      if (mn >= 0.0 && mx < static_cast<double>(bins.rows() - kPad)) break;
      int64_t lo = bins.origin() + static_cast<int64_t>(mn), hi = bins.origin() + static_cast<int64_t>(mx);
      if (mn <= -2e9 || mx >= 2e9) {  // slots were clamped: find the block's true rows (rare)
        lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
        for (int j = 0; j < n; ++j) {
          int64_t t = 0;
          ladder::to_tick<true>(static_cast<double>(price[i0 + j]), s, t);
          lo = std::min(lo, t), hi = std::max(hi, t);
        }
      }
      if (!bins.reserve(lo, hi)) return last;
    }
    if (s.limit < kMaxTicks) {  // rows so large that some row prices leave float64 (tick_limit)
      const double lo_t = static_cast<double>(bins.origin()) + mn, hi_t = static_cast<double>(bins.origin()) + mx;
      if (!(s.valid(lo_t) && s.valid(hi_t))) return last;
    }
    double vmax = vc.vmax;
    bool whole = vc.whole;
    if (vc_done ? !vc.ok : !volumes_ok(vol + i0, n, vmax, whole)) return last;
    bins.note_volume(vmax);
    require_int64_safe_block<V, Acc>(whole, vmax);
    // slots: the block after next (the next one's came too late); records: the next block, which
    // fetch_ahead brought in four blocks ahead, back to L1 (float32, 20 M trades: -2%)
    const int64_t ahead = !recs && i0 + n + kBlock < e ? i0 + n + kBlock : i0 + n;
    const NextBlock<P, V, 1> fetch{{price + ahead}, ahead < e ? vol + ahead : nullptr};
    if (recs && runs >= 0 && !(whole && vmax * n < 4294967296.0)) {  // runs could sum past 2**32: unmerged
      merging = false;
      trade_records(price + i0, vol + i0, n, s, f32, bins, rec, mn, mx, on_grid, vc, vc_done);
      runs = -1;
    }
    if (side && recs) side_records(rec, side + i0, n, Records<Acc>::kShift);
    else if (side) side_slots(slot, side + i0, n);
    if (recs && ent.m >= 0) {  // added by the next block's phase A, or after the last block
      pend.off = ent.off, pend.sum = ent.sum, pend.m = ent.m;
      pend.base = reinterpret_cast<char*>(bins.lane(0));
      std::swap(ent.off, spare_off);
      std::swap(ent.sum, spare_sum);
    } else if (recs && runs >= 0) merged_scatter(rec, runs, n, bins, fetch);
    else if (recs && whole && vmax < kInt64SafeVolume) records_scatter(Records<Acc>{rec}, n, bins, fetch);
    else if (recs && whole) block_scatter<true>(Records<Acc>{rec}, vol + i0, n, bins, fetch);
    else if (recs) block_scatter<false>(Records<Acc>{rec}, vol + i0, n, bins, fetch);
    else if (whole) block_scatter<true>(Slots32{slot}, vol + i0, n, bins, fetch);
    else block_scatter<false>(Slots32{slot}, vol + i0, n, bins, fetch);
    bins.touch(bins.origin() + static_cast<int64_t>(mn), bins.origin() + static_cast<int64_t>(mx));
    if (!on_grid) grid.add(count_off_grid(price, i0, i0 + n, s.tick));
  }
  if (pend.m >= 0) pending_scatter(pend);
  return e;
}

// Session [b, e)'s span, by each row's lowest and highest row (the engine's ladder and distribute rule,
// core/source.hpp, as the GPU's range pass; legacy bars on the session's own level ladder), and the
// first row that takes the running span past max_rows (-1: none).
template <class P, class V>
SessionWidth span_of(const InputView& in, int64_t b, int64_t e, const Options& opt) {
  const auto src = make_source<P, V>(in, opt, 0);
  distribute::LegacyLadder L;
  if (in.bars && in.distribute == Distribute::legacy) {
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = b; i < e; ++i) {
      const Item it = src.item(i);
      lo = std::min(lo, Source<P, V>::legacy_lo(it));
      hi = std::max(hi, Source<P, V>::legacy_hi(it));
    }
    L = distribute::LegacyLadder::make(lo, hi, src.scale.tick);
  }
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  SessionWidth span;
  for (int64_t i = b; i < e; ++i) {
    int64_t r0 = 0, r1 = 0;
    src.rows(src.item(i), L, r0, r1);
    lo = std::min(lo, r0);
    hi = std::max(hi, r1);
    if (span.first < 0 && hi - lo >= opt.max_rows) span.first = i;
  }
  span.rows = e > b ? hi - lo + 1 : 0;
  return span;
}

// Session s = [b, e), every row of it valid, wider than max_rows: "session s spans N rows ... from row i
// on" at its first row, N its exact span (span_of), i the first row that takes the running span past
// max_rows.
template <class P, class V>
void report_span(const InputView& in, int64_t b, int64_t e, int64_t s, const Options& opt, FirstFailure& f) {
  const SessionWidth span = span_of<P, V>(in, b, e, opt);
  const char* what = in.bars ? "bar" : "row";
  if (span.first < 0)  // (never: the window's limit is max_rows) the old words, no span to give
    return f.record(b, messages::too_wide(what, b, opt.max_rows));
  f.record(b, messages::session_too_wide(s, span.rows, opt.max_rows, what, span.first));
}

// Session s = [b, e), whose binning stopped (at a bad row, or with the window full): its first bad row,
// else report_span (no bad row in it: the window was full, max_rows). The same words whatever window an
// earlier call left.
template <class P, class V, class Problem>
void report_session(int64_t b, int64_t e, int64_t s, const InputView& in, const Options& opt,
                    FirstFailure& f, Problem&& problem_at) {
  for (int64_t i = b; i < e; ++i) {
    messages::Problem m = problem_at(i);
    if (!m.empty()) return f.record(i, std::move(m));
  }
  report_span<P, V>(in, b, e, s, opt, f);
}

// Trades [b, e) of session s whose binning stopped: report_session.
template <class P, class V>
void report_trades(const P* price, const V* vol, int64_t b, int64_t e, int64_t s, const Options& opt,
                   const Array& pa, const Array& va, FirstFailure& f) {
  report_session<P, V>(b, e, s, view_of(pa, va), opt, f, [&](int64_t i) {
    return messages::trade_problem(i, pa, static_cast<double>(price[i]), va, vol[i], opt.tick_size, opt.ticks_per_row);
  });
}

// ---- bars --------------------------------------------------------------------------------------

template <class P>
struct BarPtrs {
  const P* high;
  const P* low;
  const P* close;
  const P* open;  // nullptr when absent
};

// One bar's values, read once: what bar_ok checks is what is used (another thread may change the
// inputs while the GIL is released). o = c when the bars carry no open.
template <class V>
struct Bar {
  double h, l, c, o;
  V v;
};

template <class P, class V>
VPOC_ALWAYS_INLINE Bar<V> load_bar(const BarPtrs<P>& b, const V* vol, int64_t i) {
  const double c = b.close[i];
  return {static_cast<double>(b.high[i]), static_cast<double>(b.low[i]), c,
          b.open ? static_cast<double>(b.open[i]) : c, vol[i]};
}

// q (in range) is a whole number of ticks.
VPOC_ALWAYS_INLINE bool is_whole(double q) { return ladder::round_half_even_nb(q) == q; }

// True when the bar is valid: finite, in-range prices, low <= close, open <= high, volume finite
// and >= 0.
template <bool Exact, class V>
VPOC_ALWAYS_INLINE bool bar_ok(const Bar<V>& x, bool has_open, const TickScale& s) {
  bool ok = valid_ticks(s.ticks<Exact>(x.h), s) & valid_ticks(s.ticks<Exact>(x.l), s) &
            valid_ticks(s.ticks<Exact>(x.c), s) & (x.h >= x.l) & (x.c >= x.l) & (x.c <= x.h) & valid_volume(x.v);
  if (has_open) ok &= valid_ticks(s.ticks<Exact>(x.o), s) & (x.o >= x.l) & (x.o <= x.h);
  return ok;
}

// Hot loop over bars [b, e) for close/hlc3/uniform. Returns e, or the bar where it stopped.
// on_grid: with a power-of-two tick (Exact), whether every high, low and close in ticks was whole
// (p * inv is then exact, so that proves them on the grid); false otherwise.
template <bool Exact, bool OneTick, Distribute D, class P, class V, class Acc>
int64_t bars_loop(const BarPtrs<P>& bp, const V* vol, int64_t b, int64_t e, const TickScale& s,
                  int64_t tpr, Bins<Acc>& out, bool& on_grid) {
  Bins<Acc> bins = out;
  int64_t i = b;
  bool whole = Exact;
  for (; i < e; ++i) {
    const Bar<V> x = load_bar(bp, vol, i);
    if (!bar_ok<Exact>(x, bp.open != nullptr, s)) break;
    if constexpr (Exact) whole &= is_whole(s.ticks<true>(x.h)) & is_whole(s.ticks<true>(x.l)) & is_whole(s.ticks<true>(x.c));
    require_int64_safe<V, Acc>(x.v);
    bins.note_volume(static_cast<double>(x.v));
    const auto lane = static_cast<unsigned>(i - b);
    const auto row = [tpr](double q) {
      const auto t = static_cast<int64_t>(ladder::round_half_even(q));
      return OneTick ? t : ladder::floor_div(t, tpr);
    };
    const double h = x.h, l = x.l, c = x.c;
    bool ok = true;
    if constexpr (D == Distribute::close) {
      ok = bins.add(row(s.ticks<Exact>(c)), to_acc<Acc>(x.v), lane);
    } else if constexpr (D == Distribute::hlc3) {
      ok = bins.add(row(s.ticks<Exact>((h + l + c) / 3.0)), to_acc<Acc>(x.v), lane);
    } else if constexpr (!std::is_same_v<Acc, Fixed>) {
      ok = false;  // never: a split distribution always bins in fixed point
    } else if constexpr (OneTick) {
      // v split evenly over ticks tl..th (fixed::Split), as difference-array entries (as bars_blocked).
      const auto tl = static_cast<int64_t>(ladder::round_half_even(s.ticks<Exact>(l)));
      const auto th = static_cast<int64_t>(ladder::round_half_even(s.ticks<Exact>(h)));
      ok = bins.reserve(tl, th);
      if (ok) {
        bins.touch(tl, th);
        const auto n = static_cast<uint64_t>(th - tl + 1);
        const Fixed v = to_acc<Fixed>(x.v);
        const fixed::Split split = v.lo == 0 && n <= kSplitTableMax ? split_whole(v.hi, n) : fixed::Split::make(v, n);
        auto& w = bins.window();
        add_uniform_diff(0, th - tl, split, w.diff_row(tl), w.units_row(tl));
        w.mark_diff();
      }
    } else {
      const auto tl = static_cast<int64_t>(ladder::round_half_even(s.ticks<Exact>(l)));
      const auto th = static_cast<int64_t>(ladder::round_half_even(s.ticks<Exact>(h)));
      ok = distribute::uniform(tl, th, to_acc<Fixed>(x.v), tpr,
                               [&](int64_t r, const Fixed& w) { return bins.add(r, w, lane); });
    }
    if (!ok) break;
  }
  out = bins;
  on_grid = whole;
  return i;
}

// The next block's bars, from bar `at` (null vol: none), for NextBlock.
template <class P, class V>
NextBlock<P, V, 4> next_bars(const BarPtrs<P>& bp, const V* vol, int64_t at, bool more) {
  return {{bp.high + at, bp.low + at, bp.close + at, bp.open ? bp.open + at : nullptr}, more ? vol + at : nullptr};
}

// Bars in blocks, as trades_blocked does: phase A (bar_slots, vectorised) checks a block of bars and
// turns it into slots and split terms, phase B adds them into the window: the split's three
// difference-array entries (uniform) or the scatter of volumes into lanes (close / hlc3). Exact
// tick sizes with one tick per row only. A block phase A cannot take (a bad bar, a volume check
// that fails, a session outgrowing max_rows) and the rest of the session go to bars_loop, which
// finds and reports the bar.
template <Distribute D, class P, class V, class Acc>
int64_t bars_blocked(const BarPtrs<P>& bp, const V* vol, int64_t b, int64_t e, const TickScale& s,
                     Bins<Acc>& bins, bool& on_grid) {
  constexpr BarRow kRow = D == Distribute::uniform ? BarRow::uniform
                          : D == Distribute::close ? BarRow::close
                                                   : BarRow::hlc3;
  BarSlots slots;
  bool grid_all = true;
  bool termed = false;  // the block's phase A wrote `terms` (else slots)
#if defined(VPOC_HAVE_AVX512_SLOTS)
  // uniform bars: phase A in AVX-512 (cpu/bars_uniform512.hpp) where the CPU has it, into phase B's
  // operands where the window's byte offsets fit int32
  static const bool a512 = D == Distribute::uniform && simd::have_avx512();
  UniformTerms terms;
#endif
  for (int64_t i0 = b; i0 < e;) {
    const int n = static_cast<int>(std::min<int64_t>(kBarBlock, e - i0));
    double mn = 0.0, mx = 0.0;
    bool grid = false, fits = true;
    VolumeCheck vc;  // the volumes, checked in bar_slots' pass
    while (fits) {
      const P* const o = bp.open ? bp.open + i0 : nullptr;
      const double org = static_cast<double>(bins.origin());
#if defined(VPOC_HAVE_AVX512_SLOTS)
      termed = a512 && std::is_same_v<Acc, Fixed> && bins.rows() <= UniformTerms::kMaxRows;
      if (termed) {
        const auto a = o ? uniform_slots512<true, P, V, UniformTerms> : uniform_slots512<false, P, V, UniformTerms>;
        fits = a(bp.high + i0, bp.low + i0, bp.close + i0, o, vol + i0, n, s.inv, s.limit, org, terms, mn, mx, grid, vc);
      } else if (a512) {
        const auto a = o ? uniform_slots512<true, P, V, BarSlots> : uniform_slots512<false, P, V, BarSlots>;
        fits = a(bp.high + i0, bp.low + i0, bp.close + i0, o, vol + i0, n, s.inv, s.limit, org, slots, mn, mx, grid, vc);
      } else
#endif
        fits = bar_slots(kRow, bp.high + i0, bp.low + i0, bp.close + i0, o, vol + i0, n, s.inv, s.limit, org, slots, mn,
                         mx, grid, vc) &&
               vc.ok;
      if (!fits || (mn >= 0.0 && mx < static_cast<double>(bins.rows() - kPad))) break;
      fits = mn > -2e9 && mx < 2e9 && bins.reserve(bins.origin() + static_cast<int64_t>(mn),
                                                    bins.origin() + static_cast<int64_t>(mx));
    }
    if (!fits) {
      bool rest_on_grid = false;
      const int64_t stop = bars_loop<true, true, D>(bp, vol, i0, e, s, 1, bins, rest_on_grid);
      on_grid = grid_all && rest_on_grid;
      return stop;
    }
    grid_all &= grid;
    bins.note_volume(vc.vmax);
    if constexpr (D == Distribute::uniform) {
      if constexpr (std::is_same_v<Acc, Fixed>) {
        auto& w = bins.window();
        // slot k's entries at d[k], u[k] in lane 0, at d[k + rows], u[k + rows] in lane 1: bar j
        // into lane j % 2 (RowWindow kDiffLanes), so that consecutive bars on one tick do not wait
        // on each other's stores (1.4 M ES bars, 1 thread: -3%, 5.19 -> 5.00 ms, this VM)
        static_assert(kDiffLanes == 2, "bars alternate between two lanes");
        bool continue_block = false;  // phase B done (the terms' loop)
        Fixed* const d0 = w.diff_row(bins.origin());
        int64_t* const u0 = w.units_row(bins.origin());
        Fixed* const d1 = d0 + w.diff_stride();  // (stride 0 on wide windows: lane 1 is lane 0)
        int64_t* const u1 = u0 + w.diff_stride();
        const NextBlock<P, V, 4> fetch = next_bars(bp, vol, i0 + n, i0 + n < e);
        const auto bar = [&](int j, Fixed* d, int64_t* u) {
          const int64_t tl = slots.lo[j], th = slots.hi[j];
          const int32_t k = slots.split[j];
          // split_whole, its terms from phase A, or the general split
          const fixed::Split split =
              k >= 0 ? split_of_table(static_cast<uint64_t>(slots.whole[j]), static_cast<size_t>(k))
                     : fixed::Split::make(to_acc<Fixed>(vol[i0 + j]), static_cast<uint64_t>(th - tl + 1));
          add_uniform_diff(tl, th, split, d, u);
        };
        w.mark_diff();
#if defined(VPOC_HAVE_AVX512_SLOTS)
        if (termed) {
          Fixed* const d[2] = {d0, d1};
          int64_t* const u[2] = {u0, u1};
          add_terms(terms, n, vol + i0, d, u);  // (phase A fetched the next block)
          continue_block = true;
        }
#endif
        int j = 0;
        for (; !continue_block && j + 2 <= n; j += 2) {
          fetch(j);
          bar(j, d0, u0);
          bar(j + 1, d1, u1);
        }
        if (!continue_block && j < n) bar(j, d0, u0);
      }
    } else {
      require_int64_safe_block<V, Acc>(vc.whole, vc.vmax);
      const NextBlock<P, V, 4> fetch = next_bars(bp, vol, i0 + n, i0 + n < e);
      if (vc.whole) block_scatter<true>(Slots32{slots.lo}, vol + i0, n, bins, fetch);
      else block_scatter<false>(Slots32{slots.lo}, vol + i0, n, bins, fetch);
    }
    bins.touch(bins.origin() + static_cast<int64_t>(mn), bins.origin() + static_cast<int64_t>(mx));
    i0 += n;
  }
  on_grid = grid_all;
  return e;
}

// True when a legacy session whose prices span [lo, hi] surely touches more than max_rows rows:
// the bars at its ends put volume within one tick of ceil(lo / tick) and floor(hi / tick).
inline bool legacy_too_wide(double lo, double hi, const TickScale& s, int64_t tpr, int64_t max_rows) {
  const auto t_lo = static_cast<int64_t>(ceil(lo / s.tick)) + 1, t_hi = static_cast<int64_t>(floor(hi / s.tick)) - 1;
  return t_hi >= t_lo && ladder::floor_div(t_hi, tpr) - ladder::floor_div(t_lo, tpr) + 1 > max_rows;
}

// Legacy needs the session's price range first, so it validates in a pass of its own, which also
// stops at the first bar that makes the session wider than max_rows: a fat-finger bar (high=1e12)
// is never weighed level by level. The second pass checks each bar again, as read then.
template <bool Exact, class P, class V, class Acc>
int64_t legacy_loop(const BarPtrs<P>& bp, const V* vol, int64_t b, int64_t e, const TickScale& s,
                    int64_t tpr, Bins<Acc>& bins) {
  double lo = INFINITY, hi = -INFINITY;
  const int64_t max_rows = bins.window().max_rows();
  for (int64_t i = b; i < e; ++i) {
    const Bar<V> x = load_bar(bp, vol, i);
    if (!bar_ok<Exact>(x, bp.open != nullptr, s)) return i;
    bins.note_volume(static_cast<double>(x.v));
    lo = std::min({lo, x.o, x.c, x.l});
    hi = std::max({hi, x.o, x.c, x.h});
    if (legacy_too_wide(lo, hi, s, tpr, max_rows)) return i;
  }
  if (e == b) return e;
  if constexpr (!std::is_same_v<Acc, Fixed>) {
    return b;  // never: a split distribution always bins in fixed point
  } else {
  const auto L = distribute::LegacyLadder::make(lo, hi, s.tick);
  // the session's rows at once (its ladder is known): no regrowth, one window of the final size. A hint
  // only: the ladder's ends (floor / ceil of off-grid extremes) can lie a row past the rows the bars
  // touch, so a refusal here is no error; the adds below refuse exactly past max_rows touched rows (a
  // window grown by an earlier call, or not, then gives the same answer)
  (void)bins.reserve(ladder::tick_to_row(L.base, tpr), ladder::tick_to_row(L.base + L.K, tpr));
  for (int64_t i = b; i < e; ++i) {
    const Bar<V> x = load_bar(bp, vol, i);
    const double mn = std::min({x.o, x.c, x.l}), mx = std::max({x.o, x.c, x.h});
    if (!bar_ok<Exact>(x, bp.open != nullptr, s) || mn < lo || mx > hi) return i;  // changed since
    const auto lane = static_cast<unsigned>(i - b);
    if (!distribute::legacy(L, mn, mx, x.c, static_cast<double>(x.v), tpr,
                            [&](int64_t r, const Fixed& w) { return bins.add(r, w, lane); }))
      return i;
  }
  return e;
  }
}

// Bars [b, e) of session s whose binning stopped: report_session.
template <class P, class V>
void report_bars(const BarPtrs<P>& bp, const V* vol, int64_t b, int64_t e, int64_t s,
                 Distribute distribute, const Options& opt, const BarsInput& in, FirstFailure& f) {
  report_session<P, V>(b, e, s, view_of(in, distribute), opt, f, [&](int64_t i) {
    const double o = bp.open ? static_cast<double>(bp.open[i]) : 0.0;
    return messages::bar_problem(i, in, bp.high[i], bp.low[i], bp.close[i], o, vol[i], opt.tick_size,
                                 opt.ticks_per_row);
  });
}

}  // namespace

bool integer_accumulation(const Array& volume, bool splits_volume) {
  (void)volume;  // float volumes too: whole ones (contract counts) take int64 rows, others rebin
  return !splits_volume;
}

template <class Acc>
bool bin_trades(const Array& price, const Array& volume, int64_t begin, int64_t end, int64_t session,
                const Options& opt, Bins<Acc>& bins, FirstFailure& f, GridCount& grid, const int8_t* side) {
  const auto s = TickScale::make(opt.tick_size, opt.ticks_per_row);
  bool ok = true;
  with_price(price, [&](auto p) {
    with_volume(volume, [&](auto v) {
      with_ladder(s, opt.ticks_per_row, [&](auto exact, auto one_tick) {
        constexpr bool E = decltype(exact)::value, O = decltype(one_tick)::value;
        // sided slots (int32) hold row * kSidePlanes + plane: windows of 2**29 rows at most
        const bool blocked = E && O && !(side && opt.max_rows > (int64_t{1} << 28));
        if (!blocked) grid.add(count_off_grid(p, begin, end, s.tick));  // before: the prices go into cache
        const int64_t stop = blocked ? trades_blocked(p, v, begin, end, s, bins, grid, side)
                                     : trades_loop<E, O>(p, v, begin, end, s, opt.ticks_per_row, bins, side);
        ok = stop == end;
        if (!ok) report_trades(p, v, begin, end, session, opt, price, volume, f);
      });
    });
  });
  return ok;
}

template <class Acc>
bool bin_bars(const BarsInput& bars, int64_t begin, int64_t end, int64_t session, Distribute distribute,
              const Options& opt, Bins<Acc>& bins, FirstFailure& f, GridCount* grid, int n_grid) {
  const auto s = TickScale::make(opt.tick_size, opt.ticks_per_row);
  bool ok = true;
  bool on_grid = false;
  with_price(bars.high, [&](auto high) {
    using P = std::remove_const_t<std::remove_pointer_t<decltype(high)>>;
    const BarPtrs<P> bp{high, static_cast<const P*>(bars.low.data), static_cast<const P*>(bars.close.data),
                        bars.has_open ? static_cast<const P*>(bars.open.data) : nullptr};
    with_volume(bars.volume, [&](auto v) {
      with_ladder(s, opt.ticks_per_row, [&](auto exact, auto one_tick) {
        constexpr bool E = decltype(exact)::value, O = decltype(one_tick)::value;
        const int64_t tpr = opt.ticks_per_row;
        int64_t stop = end;
        switch (distribute) {
          case Distribute::close:
            stop = E && O ? bars_blocked<Distribute::close>(bp, v, begin, end, s, bins, on_grid)
                          : bars_loop<E, O, Distribute::close>(bp, v, begin, end, s, tpr, bins, on_grid);
            break;
          case Distribute::hlc3:
            stop = E && O ? bars_blocked<Distribute::hlc3>(bp, v, begin, end, s, bins, on_grid)
                          : bars_loop<E, O, Distribute::hlc3>(bp, v, begin, end, s, tpr, bins, on_grid);
            break;
          case Distribute::uniform:
            stop = E && O ? bars_blocked<Distribute::uniform>(bp, v, begin, end, s, bins, on_grid)
                          : bars_loop<E, O, Distribute::uniform>(bp, v, begin, end, s, tpr, bins, on_grid);
            break;
          case Distribute::legacy: stop = legacy_loop<E>(bp, v, begin, end, s, tpr, bins); break;
        }
        ok = stop == end;
        if (!ok) report_bars(bp, v, begin, end, session, distribute, opt, bars, f);
      });
    });
  });
  // inputs the binning did not prove on the grid (an open, a tick that is not a power of two,
  // legacy): counted exactly while in cache
  const Array* inputs[4] = {&bars.high, &bars.low, &bars.close, &bars.open};
  for (int k = on_grid ? 3 : 0; k < n_grid; ++k) grid[k].add(count_off_grid(*inputs[k], begin, end, opt.tick_size));
  return ok;
}

void report_too_wide(const InputView& in, int64_t begin, int64_t end, int64_t session, const Options& opt,
                     FirstFailure& f) {
  with_types(in, [&](auto p, auto v) { report_span<decltype(p), decltype(v)>(in, begin, end, session, opt, f); });
}

SessionWidth session_span(const InputView& in, int64_t begin, int64_t end, const Options& opt) {
  SessionWidth span;
  with_types(in, [&](auto p, auto v) { span = span_of<decltype(p), decltype(v)>(in, begin, end, opt); });
  return span;
}

template bool bin_trades<int64_t>(const Array&, const Array&, int64_t, int64_t, int64_t, const Options&,
                                  Bins<int64_t>&, FirstFailure&, GridCount&, const int8_t*);
template bool bin_trades<Fixed>(const Array&, const Array&, int64_t, int64_t, int64_t, const Options&,
                                 Bins<Fixed>&, FirstFailure&, GridCount&, const int8_t*);
template bool bin_bars<int64_t>(const BarsInput&, int64_t, int64_t, int64_t, Distribute, const Options&,
                                Bins<int64_t>&, FirstFailure&, GridCount*, int);
template bool bin_bars<Fixed>(const BarsInput&, int64_t, int64_t, int64_t, Distribute, const Options&,
                              Bins<Fixed>&, FirstFailure&, GridCount*, int);

double sum_volumes(const Array& volume, int64_t begin, int64_t end) {
  double sum = 0.0;
  with_volume(volume, [&](auto v) {
    for (int64_t i = begin; i < end; ++i) sum += static_cast<double>(v[i]);
  });
  return sum;
}

}  // namespace vpoc::cpu
