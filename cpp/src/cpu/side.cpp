// cpu/side.cpp — aggressor-side fields of the CPU engine: the per-session side epilogue and dev_delta (CPU backend).
// Contract: vpoc/side.hpp; the bits of three masked engine passes plus the rows pass (design side-single-pass.md §1).
#include "vpoc/side.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/fixed.hpp"
#include "core/ladder.hpp"
#include "core/levels.hpp"
#include "core/side.hpp"
#include "cpu/parallel.hpp"
#include "cpu/row_window.hpp"
#include "cpu/side_session.hpp"
#include "cpu/typed.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/profiles.hpp"

namespace vpoc {
namespace {

using cpu::acc_to_double;
using cpu::parallel_for;
using cpu::resolve_threads;
using cpu::with_volume;

using ladder::TickScale;

// Per worker: the delta POC's rows.
struct SideScratch {
  std::vector<Fixed> rows_fixed;
  std::vector<double> d;
};

}  // namespace

Options delta_poc_options(const Options& opt, double row_size) {
  Options o;
  o.tick_size = row_size;
  o.ticks_per_row = 1;
  o.value_area = 1.0;
  o.va_method = VaMethod::single;
  o.poc_tie = opt.poc_tie;
  o.max_rows = opt.max_rows;
  o.distribute = Distribute::close;
  o.snap = true;
  return o;
}

namespace {

// Runs of >= k consecutive flags in f[0, n).
int64_t runs_of(const uint8_t* f, int64_t n, int64_t k) {
  int64_t count = 0, len = 0;
  for (int64_t j = 0; j < n; ++j) {
    len = f[j] ? len + 1 : 0;
    count += len == k;
  }
  return count;
}

// The delta POC of one session's rows (n >= 1): (index into the rows engine's rows, its lowest row).
void delta_poc_of(const double* buy, const double* sell, int64_t n, int64_t low_row, const TickScale& ts,
                  const levels::Rules& rules, SideScratch& sc, int64_t& poc_row) {
  // each row's price row * row_size, binned at tick row_size: the rows engine's row of it
  const auto row_of = [&](int64_t r) { return side::delta_poc_row_of(r, ts); };
  const int64_t first = row_of(low_row), last = row_of(low_row + n - 1);
  bool straight = last - first == n - 1;
  for (int64_t j = 1; straight && j < n - 1; ++j) straight = row_of(low_row + j) == first + j;
  const int64_t lo = straight ? first : std::min(first, last);
  const int64_t span = straight ? n : std::max(first, last) - lo + 1;
  sc.d.resize(static_cast<size_t>(span));
  if (straight) {  // each row binned alone
    for (int64_t j = 0; j < n; ++j) sc.d[static_cast<size_t>(j)] = cpu::delta_poc_value(buy[j], sell[j]);
  } else {
    sc.rows_fixed.assign(static_cast<size_t>(span), Fixed{});
    for (int64_t j = 0; j < n; ++j)
      sc.rows_fixed[static_cast<size_t>(row_of(low_row + j) - lo)] += fixed::from_double(side::delta_abs(buy[j], sell[j]));
    for (int64_t j = 0; j < span; ++j)
      sc.d[static_cast<size_t>(j)] = acc_to_double(sc.rows_fixed[static_cast<size_t>(j)]);
  }
  poc_row = lo + levels::poc_index(sc.d.data(), span, rules);
}

}  // namespace

double cpu::delta_poc_value(double buy, double sell) {
  return acc_to_double(fixed::from_double(side::delta_abs(buy, sell)));
}

int64_t cpu::delta_poc_rows(const double* buy, const double* sell, int64_t n, int64_t low_row, const TickScale& ts,
                            const levels::Rules& rules) {
  SideScratch sc;
  int64_t row = 0;
  delta_poc_of(buy, sell, n, low_row, ts, rules, sc, row);
  return row;
}

void side_dev_delta(const Array& volume, const int8_t* side, const SessionSpan& sessions, const Options& opt,
                    std::vector<double>& out) {
  const int64_t S = sessions.n_sessions;
  const int64_t* off = sessions.offsets;
  out.assign(static_cast<size_t>(off[S]), 0.0);
  parallel_for(S, resolve_threads(opt.threads, S), opt.interrupt, [&](int64_t k, int) {
    with_volume(volume, [&](auto v) {
      double run = 0.0;
      for (int64_t i = off[k]; i < off[k + 1]; ++i) {
        // the masked columns' values, v * (side == 1) - v * (side == -1), summed in input order
        const double dv = static_cast<double>(v[i]);
        const double d = dv * static_cast<double>(side[i] == 1) - dv * static_cast<double>(side[i] == -1);
        run = i == off[k] ? d : run + d;
        out[static_cast<size_t>(i)] = run;
      }
    });
  });
}

void side_levels(SideColumns& c, const RowLayout& rows, const Options& opt, const SideRules& rules) {
  const int64_t S = rows.n_sessions;
  const int64_t R = rows.row_off[S];
  c.imbalance_buy.assign(static_cast<size_t>(R), 0);
  c.imbalance_sell.assign(static_cast<size_t>(R), 0);
  c.delta_poc.assign(static_cast<size_t>(S), std::numeric_limits<double>::quiet_NaN());
  c.delta_poc_row.assign(static_cast<size_t>(S), kNoRow);
  c.stacked_buy.assign(static_cast<size_t>(S), 0);
  c.stacked_sell.assign(static_cast<size_t>(S), 0);
  const Options po = delta_poc_options(opt, rows.row_size);
  const levels::Rules prules = levels::rules_of(po);
  const TickScale ts = TickScale::make(rows.row_size, 1);
  const ladder::RowPrice price_of = ladder::RowPrice::make(rows.row_size, 1, false);
  const double ratio = rules.imbalance_ratio;
  const int workers = resolve_threads(opt.threads, S);
  std::vector<SideScratch> scratch(static_cast<size_t>(workers));
  parallel_for(S, workers, opt.interrupt, [&](int64_t k, int worker) {
    const int64_t a = rows.row_off[k], n = rows.row_off[k + 1] - a;
    if (n == 0) return;
    const double* b = c.buy.data() + a;
    const double* s = c.sell.data() + a;
    uint8_t* ib = c.imbalance_buy.data() + a;
    uint8_t* is = c.imbalance_sell.data() + a;
    // ask volume at p against bid volume one row down (buy), and the mirror; a session's lowest row
    // has no row below it, its highest none above
    // has a row of a known side (side::sided; none: no delta POC, NaN and kNoRow as set above), tested in
    // the sell loop as side_levels_kernel does in its row loop; the highest row, which it does not visit, first
    bool any = side::sided(b[n - 1], s[n - 1]);
    for (int64_t j = 1; j < n; ++j) ib[j] = side::imbalance(b[j], s[j - 1], ratio);
    for (int64_t j = 0; j + 1 < n; ++j) {
      is[j] = side::imbalance(s[j], b[j + 1], ratio);
      any |= side::sided(b[j], s[j]);
    }
    c.stacked_buy[static_cast<size_t>(k)] = runs_of(ib, n, rules.stacked_min);
    c.stacked_sell[static_cast<size_t>(k)] = runs_of(is, n, rules.stacked_min);
    if (!any) return;
    int64_t poc_row = 0;
    delta_poc_of(b, s, n, rows.low_row[k], ts, prules, scratch[static_cast<size_t>(worker)], poc_row);
    c.delta_poc_row[static_cast<size_t>(k)] = poc_row;
    c.delta_poc[static_cast<size_t>(k)] = price_of(poc_row);
  });
}

void side_deltas(const double* buy_total, const double* sell_total, int64_t n, double* delta) {
  for (int64_t k = 0; k < n; ++k) delta[k] = side::delta(buy_total[k], sell_total[k]);
}

int64_t first_bad_side(const int8_t* s, int64_t n) { return side::first_bad_i8(s, n); }
int64_t side_letters(const uint8_t* in, int8_t* out, int64_t n) { return side::letters_to_codes(in, out, n); }

}  // namespace vpoc
