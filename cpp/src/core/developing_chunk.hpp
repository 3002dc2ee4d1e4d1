// core/developing_chunk.hpp — the developing series of one session by a block of kThreads threads, up to
// kChunk bars at a time (docs/design/developing-gpu.md). Contract: every row's levels equal core/developing.hpp's.
#pragma once

// What a chunk does. The block keeps the session's base (the exact rows vf and their doubles v
// after the last finished chunk) and cuts the next bars into a chunk of n <= kChunk whose hull
// [A, A + H) of rows fits a table of n x stride_of(H) doubles. Snapshot j (the prefix ending at bar j of the
// chunk) reads row k as table[j][k - A] inside the hull and as the base outside it: the table holds
// to_double(vf_base[k] + the shares of bars 0..j on row k), integer adds mod 2**128, so the very
// doubles the CPU's Session holds after that bar. Each snapshot's maximum is exact in any order,
// its POC the best at-max row of a strict total order (poc_prefers), so any split of the rows
// finds the CPU's; then one lane per snapshot runs the sequential expansion (levels::expand_ahead: the steps
// of expand_step and reached) from that POC on those doubles: the same float additions in the same order. A bar
// whose own rows pass the table is a chunk of one, folded into the base first and read from it.
//
// The phases run by every thread t of the block, the caller syncing the block between them (4 syncs a
// chunk; the data each phase writes and the data any other thread reads in it are disjoint):
//   start -> { plan + fill -> max_part -> poc_part -> walk_ahead }
// until the session's last row: start zeroes the base and prepares the first chunk's bars; plan (every
// thread, the same cut on each: no sync before the fill) cuts the chunk and sets the snapshots' ranges
// and totals, fill writes the table, folds the hull into the base and takes each thread's maximum of
// the base rows outside the hull (rows the fill does not write); max_part takes the snapshots' hull
// maxima and the rows outside the hull at their maximum; walk_ahead runs the walks on lanes t < kChunk
// and prepares the next chunk's bars on the lanes above (the walks read no bar: the bars of chunk c + 1
// load while chunk c's walks run). cpp/tests/test_developing_chunk.cpp runs them on the host (a loop
// over t between the sync points) against Session; gpu/developing.cu runs them as a kernel.

#include <cstdint>

#include "core/fixed.hpp"
#include "core/levels.hpp"
#include "core/source.hpp"

namespace vpoc::developing::chunk {

constexpr int kChunk = 32;                      // bars per chunk at most (one walker lane each)
constexpr int kThreads = 64;                    // threads of a block (a multiple of kChunk)
constexpr int kPerSnapshot = kThreads / kChunk;  // threads sharing one snapshot's POC search
static_assert(kThreads >= 2 * kChunk, "walk_ahead prepares the next chunk on the lanes past the walkers");
constexpr int kTableCells = 2048;               // doubles of the table (16 KiB)

// Whether the chunked pass takes these inputs and rules: va_rows 'all' without a rolling window
// (the caller routes those to core/window.hpp first), cbot or single, trades or bars distributed
// close / hlc3 / uniform. Greedy (an order kept across bars) and legacy (a ladder that moves with
// the prefix) stay with Session, one thread per session.
VPOC_HD bool takes(const InputView& in, const Options& opt) {
  return opt.va_method != VaMethod::greedy && !(in.bars && in.distribute == Distribute::legacy);
}

enum : int32_t { kBad = 0, kOne = 1, kUniform = 2, kNone = 3 };

// One bar of the chunk, from prepare().
struct Bar {
  Fixed vol;      // the volume (what the bar adds to the total)
  Fixed q;        // uniform: the split's share per tick (fixed::Split)
  uint64_t rem;   // uniform: ticks taking one unit more
  int64_t tl, th; // uniform: the bar's ticks
  int32_t a, b;   // scratch rows a..b
  int32_t kind;   // kBad (invalid item or a row outside the scratch), kOne (one row gets vol),
                  // kUniform, kNone (uniform over 2**32 ticks or more: nothing added, as on the CPU)
};

// The block's shared state ([kChunk] per bar / snapshot, [kThreads] per thread), followed in
// shared memory by vf [W], v [W] and the table [cells].
struct Block {
  Bar bar[kChunk];
  double total[kChunk];        // snapshot j: the prefix's total (exact, rounded once)
  double red_mx[kThreads];     // per thread: the maximum of its snapshot's rows on the hull
  double red_out[kThreads];    // per thread: the maximum of its rows outside the hull (base rows)
  double out_max;              // the maximum of the rows outside the hull
  Fixed base_total;            // the base's total (exact)
  Fixed fin_total;             // the chunk's last snapshot's total (exact): the base's from max_part on
  int64_t next;                // first input row of the next chunk
  int32_t first[kChunk], last[kChunk];  // snapshot j: the prefix's rows (scratch indices)
  int32_t red_poc[kThreads];   // per thread: its best at-max row (-1: none)
  int32_t cand[kThreads];      // per thread: its row outside the hull at out_max (-1: none)
  int32_t base_first, base_last;        // the base's rows (empty while first > last)
  int32_t n, A, H;             // bars in the chunk, first row and rows of its hull
  int32_t table;               // 1: snapshots read the table on the hull; 0: bar 0 was folded first
  int32_t cand_over;           // 1: a thread found two rows outside the hull at out_max (cand unused)
};

// A chunk's cut, as plan() gives it to every thread (the same values on each, from the same shared
// bars): n bars, the hull [A, A + H), the last snapshot's rows [F, L], table as in Block, fail: a bar
// of the chunk is invalid (the caller reports it; nothing else is set).
struct Cut {
  int32_t n = 0, A = 0, H = 0, F = 0, L = -1;
  int32_t table = 0, fail = 0;
};

VPOC_HD constexpr int64_t align16(int64_t x) { return (x + 15) / 16 * 16; }

// Doubles from one snapshot's row of the table to the next: the hull's rows H made odd. The walkers
// (lane j reads snapshot j near the same row as its neighbours) and the POC threads read the table
// at j * stride + c: with an even stride, lanes fall on few shared-memory banks (H = 16: all 32 on
// one); an odd stride spreads 16 lanes over 16 bank pairs, two wavefronts for 32 doubles. Measured on
// the H200 (bench developing): chunk_kernel 1,654 -> 1,647 us, so the walks' time is not conflicts.
VPOC_HD constexpr int64_t stride_of(int64_t H) { return H | 1; }

// Shared-memory bytes of a block whose session has at most `rows` scratch rows.
VPOC_HD int64_t smem_bytes(int64_t rows, int64_t cells = kTableCells) {
  return align16(static_cast<int64_t>(sizeof(Block))) + rows * (16 + 8) + cells * 8;
}

// Snapshot j's rows: the table's row j on the hull [A, B], the base elsewhere.
struct Rows {
  const double* base;
  const double* cells;  // table + j * stride_of(H)
  int32_t A;            // the hull's first row
  uint32_t n;           // the hull's rows (0: no table, every row from the base)
  // one unsigned test for A <= k < A + n (k - A wraps above n when k < A), in 32 bits (scratch rows are
  // a block's shared memory): the walk's step reads up to four rows, each through here (the ncu
  // profile of c2b1500: the walk is a chain of dependent instructions)
  VPOC_HD double operator[](int32_t k) const {
    return static_cast<uint32_t>(k - A) < n ? cells[k - A] : base[k];
  }
};

// One session's pass. Src: core/source.hpp's Source. Generic false: levels::plain_rules() holds, and the
// rules outside it are compiled out of the walk.
template <class Src, bool Generic = true>
struct Pass {
  Src src;
  levels::Rules rules;  // va_rows 'all': no touched rows
  double value_area = 0.7;
  int step = 2;
  int64_t W = 0, origin = 0, end = 0;  // scratch rows, absolute row of scratch row 0, end of the input rows
  int64_t cells = kTableCells;
  Block* blk = nullptr;
  Fixed* vf = nullptr;     // [W] the base, exact
  double* v = nullptr;     // [W] the base, rounded once
  double* table = nullptr; // [cells]

  // mem: smem_bytes(W, cells) bytes, 16-aligned; rows [begin, end) of src; origin as in Scratch.
  VPOC_HD static Pass make(const Src& src, const Options& opt, void* mem, int64_t W, int64_t origin, int64_t end,
                           int64_t cells = kTableCells) {
    Pass p;
    p.src = src;
    p.rules = levels::rules_of(opt);
    p.value_area = opt.value_area;
    p.step = opt.va_method == VaMethod::cbot ? 2 : 1;
    p.W = W;
    p.origin = origin;
    p.end = end;
    p.cells = cells;
    char* m = static_cast<char*>(mem);
    p.blk = reinterpret_cast<Block*>(m);
    m += align16(static_cast<int64_t>(sizeof(Block)));
    p.vf = reinterpret_cast<Fixed*>(m);
    p.v = reinterpret_cast<double*>(m + 16 * W);
    p.table = p.v + W;
    return p;
  }

  // [W] rows zeroed, t 0 the base state.
  VPOC_HD void init(int t, int64_t begin) {
    for (int64_t k = t; k < W; k += kThreads) {
      v[k] = 0.0;
      vf[k] = Fixed{};
    }
    if (t == 0) {
      blk->base_total = Fixed{};
      blk->base_first = 0;
      blk->base_last = -1;
      blk->next = begin;
    }
  }

  // The first phase: the base zeroed (init) and the first chunk's bars prepared.
  VPOC_HD void start(int t, int64_t begin) {
    init(t, begin);
    prepare(t, begin);
  }

  // Lane j < kChunk: bar i0 + j loaded, checked and put on the rows (Session::add's checks).
  VPOC_HD void prepare(int t, int64_t i0) {
    if (t >= kChunk || i0 + t >= end) return;
    Bar& bar = blk->bar[t];
    const Item it = src.item(i0 + t);
    bar.kind = kBad;
    if (!src.valid_prices(it) || !Src::valid_volume(it)) return;
    int64_t a = 0, b = -1;
    src.rows(it, distribute::LegacyLadder{}, a, b);  // no legacy here (takes())
    a -= origin;
    b -= origin;
    if (a < 0 || b >= W) return;
    bar.a = static_cast<int32_t>(a);
    bar.b = static_cast<int32_t>(b);
    bar.vol = fixed::from_double(it.v);
    if (!src.in.bars || src.in.distribute != Distribute::uniform) {
      bar.kind = kOne;  // a == b
      return;
    }
    // as Source::emit -> distribute::uniform
    bar.tl = static_cast<int64_t>(ladder::round_half_even(src.ticks(it.b)));
    bar.th = static_cast<int64_t>(ladder::round_half_even(src.ticks(it.a)));
    const auto n = static_cast<uint64_t>(bar.th - bar.tl + 1);
    if (n >= (uint64_t(1) << 32)) {
      bar.kind = kNone;
      return;
    }
    const fixed::Split split = fixed::Split::make(bar.vol, n);
    bar.q = split.q;
    bar.rem = split.rem;
    bar.kind = kUniform;
  }

  // Bar j's share of scratch row k (a_j <= k <= b_j), as distribute::uniform gives it.
  VPOC_HD Fixed share(const Bar& bar, int64_t k) const {
    if (bar.kind == kOne) return bar.vol;
    if (bar.kind != kUniform) return Fixed{};
    fixed::Split split;
    split.q = bar.q;
    split.rem = bar.rem;
    const int64_t r = k + origin, tpr = src.tpr;
    if (tpr == 1) return split.one(static_cast<uint64_t>(r - bar.tl));
    const int64_t lo = bar.tl > r * tpr ? bar.tl : r * tpr;
    const int64_t hi = bar.th < r * tpr + tpr - 1 ? bar.th : r * tpr + tpr - 1;
    return split.sum(static_cast<uint64_t>(lo - bar.tl), static_cast<uint64_t>(hi - lo + 1));
  }

  // Every thread, after the sync that follows the bars' prepare: the chunk's cut (the most bars whose
  // hull fits the table: (j + 1) x stride_of(the hull's rows) only grows with j, so the bars that fit
  // are a prefix; bar 0 always, without a table when it alone does not fit), fail when a loaded bar is
  // bad. Each thread walks the same bars in the same order, so each gets the same Cut, and no thread
  // waits for another before the fill. Lane t < n also stores snapshot t's rows (first / last) and
  // total; thread 0 stores the cut for the later phases, the next chunk's first row and the chunk's
  // last total (fin_total: max_part advances the base, which every thread reads here).
  VPOC_HD Cut plan(int t, int64_t i0) {
    Block& k = *blk;
    const int64_t left = end - i0;
    const int cand = left < kChunk ? static_cast<int>(left) : kChunk;
    Cut c;
    int32_t f = k.base_first, l = k.base_last, lo = 0, hi = -1;
    Fixed tot = k.base_total, own;
    int32_t own_f = 0, own_l = -1;
    bool open = true;  // bars 0..j - 1 fit
    for (int j = 0; j < cand; ++j) {
      const Bar& bar = k.bar[j];
      if (bar.kind == kBad) {  // a bad bar's other fields are garbage: nothing below reads them
        c.fail = 1;
        return c;
      }
      if (!open) continue;
      const int32_t a = bar.a, b = bar.b;
      const int32_t nlo = j == 0 || a < lo ? a : lo, nhi = j == 0 || b > hi ? b : hi;
      const bool fits = (static_cast<int64_t>(j) + 1) * stride_of(static_cast<int64_t>(nhi) - nlo + 1) <= cells;
      if (j == 0) c.table = fits ? 1 : 0;
      if (j > 0 && !fits) {
        open = false;
        continue;
      }
      lo = nlo;
      hi = nhi;
      c.n = j + 1;
      if (f > l) {
        f = a;
        l = b;
      } else {
        f = a < f ? a : f;
        l = b > l ? b : l;
      }
      if (bar.kind != kNone) tot += bar.vol;  // the shares sum to the volume exactly
      if (j == t) {
        own_f = f;
        own_l = l;
        own = tot;
      }
      if (j == 0 && !fits) open = false;
    }
    c.A = lo;
    c.H = hi - lo + 1;
    c.F = f;
    c.L = l;
    if (t < c.n) {
      k.first[t] = own_f;
      k.last[t] = own_l;
      k.total[t] = fixed::to_double(own);
    }
    if (t == 0) {
      k.n = c.n;
      k.A = c.A;
      k.H = c.H;
      k.table = c.table;
      k.fin_total = tot;
      k.next = i0 + c.n;
      k.cand_over = 0;
    }
    return c;
  }

  // Lane per hull row: each snapshot's doubles into the table, then the chunk folded into the
  // base (snapshots read hull rows from the table only). No table: bar 0's rows folded. Then every
  // thread's maximum of every kThreads-th base row outside the hull (red_out): rows [F, A) and
  // (B, L], which no fill lane writes, so in the same phase. c: this thread's plan().
  VPOC_HD void fill(int t, const Cut& c) {
    const Block& k = *blk;
    double mo = 0.0;  // as Session's mx_: volumes are >= +0
    if (!c.table) {
      const Bar& bar = k.bar[0];
      for (int64_t r = bar.a + t; r <= bar.b; r += kThreads) {
        vf[r] += share(bar, r);
        v[r] = fixed::to_double(vf[r]);
      }
      blk->red_out[t] = mo;
      return;
    }
    const int64_t A = c.A, H = c.H, S = stride_of(H);
    const int n = c.n;
    for (int64_t col = t; col < H; col += kThreads) {
      const int64_t r = A + col;
      Fixed x = vf[r];
      double d = v[r];  // to_double(x): the base's row, rounded once
      for (int j = 0; j < n; ++j) {
        const Bar& bar = k.bar[j];
        if (r >= bar.a && r <= bar.b) {  // a bar covers ~3.5 of the hull's ~17 rows: round only what changed
          x += share(bar, r);
          d = fixed::to_double(x);
        }
        table[j * S + col] = d;
      }
      vf[r] = x;
      v[r] = d;
    }
    for (int64_t r = c.F + t; r < A; r += kThreads) mo = v[r] > mo ? v[r] : mo;
    for (int64_t r = A + H + t; r <= c.L; r += kThreads) mo = v[r] > mo ? v[r] : mo;
    blk->red_out[t] = mo;
  }

  VPOC_HD Rows rows_of(int j) const {
    const Block& k = *blk;
    Rows r;
    r.base = v;
    if (k.table) {
      r.cells = table + static_cast<int64_t>(j) * stride_of(k.H);
      r.A = k.A;
      r.n = static_cast<uint32_t>(k.H);
    } else {
      r.cells = table;
      r.A = 0;
      r.n = 0;
    }
    return r;
  }

  // Rows outside the hull [A, B] hold base volumes, and they are the same rows in every snapshot of the
  // chunk: [first_j, last_j] minus the hull is [F, A) u (B, L] with F, L the last snapshot's rows (a
  // row below A within [F, L] is at or above the base's first row, hence within every snapshot's
  // range, since first_j = min(base first, rows >= A); likewise above B). So all threads take their
  // maximum once (red_out), and a snapshot's own threads scan only its hull rows (red_mx).

  // Snapshot j's rows on the hull, within its range: [lo, hi] (no table: its whole range).
  VPOC_HD void hull_rows(int j, int64_t& lo, int64_t& hi) const {
    const Block& k = *blk;
    lo = k.first[j];
    hi = k.last[j];
    if (k.table) {
      lo = lo > k.A ? lo : k.A;
      hi = hi < k.A + k.H - 1 ? hi : k.A + k.H - 1;
    }
  }

  // kPerSnapshot threads per snapshot: the maximum of every kPerSnapshot-th of its hull rows
  // (red_mx). Every thread: the maximum outside the hull from fill's red_out (t 0 stores it), and the
  // row of its own outside rows at that maximum (cand[t]; cand_over when it has two: then the
  // snapshots scan instead). Thread 0: the base advanced to the chunk's last bar (plan read it).
  VPOC_HD void max_part(int t) {
    Block& k = *blk;
    // red_out's maximum by kWays independent chains, then combined: every thread runs this before its
    // scan, so its depth is the phase's (63 dependent compares in one chain); the maximum of volumes
    // (>= +0, never NaN) is exact and the same in any order
    constexpr int kWays = 8;
    static_assert(kThreads % kWays == 0, "kWays chains of equal length");
    double part[kWays];
    for (int w = 0; w < kWays; ++w) part[w] = k.red_out[w];
    for (int g = kWays; g < kThreads; g += kWays)
      for (int w = 0; w < kWays; ++w) part[w] = k.red_out[g + w] > part[w] ? k.red_out[g + w] : part[w];
    for (int h = kWays / 2; h > 0; h /= 2)
      for (int w = 0; w < h; ++w) part[w] = part[w + h] > part[w] ? part[w + h] : part[w];
    const double mo = part[0];
    int32_t c = -1;
    if (k.table) {
      const int64_t F = k.first[k.n - 1], L = k.last[k.n - 1], A = k.A, B = k.A + k.H - 1;
      const double tol = rules.tol;
      for (int pass = 0; pass < 2; ++pass) {
        const int64_t r0 = pass == 0 ? F + t : B + 1 + t, r1 = pass == 0 ? A - 1 : L;
        for (int64_t r = r0; r <= r1; r += kThreads)
          if (levels::at_max(v[r], mo, tol)) {
            if (c >= 0) k.cand_over = 1;  // the same value from any thread that writes it
            c = static_cast<int32_t>(r);
          }
      }
    }
    k.cand[t] = c;
    if (t == 0) {
      k.out_max = mo;
      k.base_first = k.first[k.n - 1];
      k.base_last = k.last[k.n - 1];
      k.base_total = k.fin_total;
    }
    const int j = t / kPerSnapshot, h = t % kPerSnapshot;
    if (j >= k.n) return;
    const Rows rows = rows_of(j);
    int64_t lo, hi;
    hull_rows(j, lo, hi);
    double mx = 0.0;
    for (int64_t r = lo + h; r <= hi; r += kPerSnapshot) {
      const double x = rows[r];
      mx = x > mx ? x : mx;
    }
    k.red_mx[t] = mx;
  }

  // kPerSnapshot threads per snapshot: the best row at the snapshot's maximum among theirs
  // (levels::poc_among). Rows outside the hull count only when their maximum is at the snapshot's
  // (at_max is monotone in the volume below the maximum: when the largest is not at it, none is);
  // when it is the snapshot's maximum itself, they are the cand rows (unless cand_over), else
  // (a hull maximum above but within the tie band) they are scanned.
  VPOC_HD void poc_part(int t) {
    const Block& k = *blk;
    const int j = t / kPerSnapshot, h = t % kPerSnapshot;
    if (j >= k.n) return;
    const double mo = k.out_max;
    double mx = mo;
    for (int g = 0; g < kPerSnapshot; ++g) {
      const double x = k.red_mx[j * kPerSnapshot + g];
      mx = x > mx ? x : mx;
    }
    const Rows rows = rows_of(j);
    const int64_t first = k.first[j], last = k.last[j];
    const double tol = rules.tol;
    const PocTie tie = rules.tie;
    int64_t best = -1;
    int64_t lo, hi;
    hull_rows(j, lo, hi);
    for (int64_t r = lo + h; r <= hi; r += kPerSnapshot)
      if (levels::at_max(rows[r], mx, tol) && (best < 0 || levels::poc_prefers(r, best, first, last, tie))) best = r;
    if (k.table && levels::at_max(mo, mx, tol)) {
      if (mx == mo && !k.cand_over) {
        for (int g = h; g < kThreads; g += kPerSnapshot) {
          const int64_t r = k.cand[g];
          if (r >= first && r <= last && levels::at_max(v[r], mx, tol) &&
              (best < 0 || levels::poc_prefers(r, best, first, last, tie)))
            best = r;
        }
      } else {
        const int64_t A = k.A, B = k.A + k.H - 1;
        for (int64_t r = first + h; r < A; r += kPerSnapshot)
          if (levels::at_max(v[r], mx, tol) && (best < 0 || levels::poc_prefers(r, best, first, last, tie))) best = r;
        for (int64_t r = B + 1 + h; r <= last; r += kPerSnapshot)
          if (levels::at_max(v[r], mx, tol) && (best < 0 || levels::poc_prefers(r, best, first, last, tie))) best = r;
      }
    }
    blk->red_poc[t] = static_cast<int32_t>(best);
  }

  // Lane j < n: snapshot j's POC (the best of its threads' picks), then its value area by the
  // sequential expansion; out(i, poc_row, val_row, vah_row) with absolute rows.
  template <class Out>
  VPOC_HD void walk(int t, int64_t i0, Out&& out) const {
    if (t >= blk->n) return;
    const int j = t;
    const int32_t first = blk->first[j], last = blk->last[j];
    levels::Rules r = rules;
    if constexpr (!Generic) {  // levels::plain_rules(): known at compile time
      r.compare = VaCompare::tie_up;
      r.stop = VaStop::reaches;
      r.va_p = r.va_q = 0;
    }
    int32_t poc = -1;
    for (int g = 0; g < kPerSnapshot; ++g) {
      const int32_t c = blk->red_poc[j * kPerSnapshot + g];
      if (c >= 0 && (poc < 0 || levels::poc_prefers(c, poc, first, last, r.tie))) poc = c;
    }
    if (poc < 0) poc = first;  // no row at the maximum: only an inf one (poc_among's answer)
    const Rows rows = rows_of(j);
    const levels::Target target = levels::target_of(value_area, blk->total[j], r);
    int32_t lo = poc, hi = poc;
    double running = rows[poc];
    levels::expand_ahead(rows, first, last, step, target, lo, hi, running, r);  // expand_step's walk
    out(i0 + j, origin + poc, origin + lo, origin + hi);
  }

  // The last phase of a chunk: lanes t < kChunk walk its snapshots (walk), lanes kChunk..2 kChunk - 1
  // prepare the next chunk's bars (from blk->next, written by plan), which no walk reads.
  template <class Out>
  VPOC_HD void walk_ahead(int t, int64_t i0, Out&& out) {
    if (t < kChunk) return walk(t, i0, out);
    if (t < 2 * kChunk) prepare(t - kChunk, blk->next);
  }
};

}  // namespace vpoc::developing::chunk
