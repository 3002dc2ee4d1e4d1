// core/options.cpp — parsing of the string options and range checks of Options.
// Contract: every message names the argument, the accepted values and what was given.
#include <cmath>

#include "core/ladder.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/types.hpp"

namespace vpoc {

template <class E>
E parse_enum(const std::string& s) {
  using T = EnumNames<E>;
  for (int k = 0; k < T::count; ++k)
    if (s == T::names[k]) return static_cast<E>(k);
  std::string accepted;
  for (int k = 0; k < T::count; ++k) accepted += detail::concat(k ? ", '" : "'", T::names[k], "'");
  VPOC_THROW_ARG(ValueError, T::keyword, T::keyword, " must be one of ", accepted, "; got '", s, "'");
}

template Distribute parse_enum<Distribute>(const std::string&);
template VaMethod parse_enum<VaMethod>(const std::string&);
template PocTie parse_enum<PocTie>(const std::string&);
template VaRows parse_enum<VaRows>(const std::string&);
template VaCompare parse_enum<VaCompare>(const std::string&);
template VaStop parse_enum<VaStop>(const std::string&);
template RowLabel parse_enum<RowLabel>(const std::string&);
template PriceLabel parse_enum<PriceLabel>(const std::string&);
template VaTarget parse_enum<VaTarget>(const std::string&);
template Accumulate parse_enum<Accumulate>(const std::string&);
template BinReport parse_enum<BinReport>(const std::string&);

namespace {

// bins=N: the rules that read the tick ladder or sort rows do not apply to bins (a ValueError
// naming bins); accumulate / bin_report other than their defaults need bins.
void validate_bins(const Options& opt) {
  if (opt.bins < 0)
    VPOC_THROW_ARG(ValueError, "bins", "bins must be None or an integer >= 1, got ", opt.bins);
  if (opt.bins == 0) {
    if (opt.accumulate != Accumulate::exact)
      VPOC_THROW_ARG(ValueError, "accumulate", "accumulate='", name_of(opt.accumulate), "' applies to bins=N "
                     "only (the tick ladder always sums exactly); pass bins= with it");
    if (opt.bin_report != BinReport::center_edges)
      VPOC_THROW_ARG(ValueError, "bin_report", "bin_report='", name_of(opt.bin_report), "' applies to bins=N only; "
                     "pass bins= with it");
    return;
  }
  if (opt.bins > 100000000)
    VPOC_THROW_ARG(ValueError, "bins", "bins must be at most 100_000_000 (bins per session), got ", opt.bins);
  const auto refuse = [&](const char* what, const char* value) {
    VPOC_THROW_ARG(ValueError, "bins", "bins=", opt.bins, " does not work with ", what, "='", value,
                   "' (bins replace the tick ladder: ", what, " reads it)");
  };
  if (opt.va_method == VaMethod::greedy) refuse("va_method", "greedy");
  if (opt.va_rows != VaRows::all) refuse("va_rows", name_of(opt.va_rows));
  if (opt.row_label != RowLabel::low) refuse("row_label", name_of(opt.row_label));
  if (opt.price_label != PriceLabel::product) refuse("price_label", name_of(opt.price_label));
  if (opt.va_target != VaTarget::float64) refuse("va_target", name_of(opt.va_target));
  if (opt.distribute != Distribute::uniform) refuse("distribute", name_of(opt.distribute));
  if (opt.ticks_per_row != 1)
    VPOC_THROW_ARG(ValueError, "bins", "bins=", opt.bins, " does not work with ticks_per_row=", opt.ticks_per_row,
                   " (bins replace the tick ladder's rows: pass one or the other)");
  if (opt.snap)
    VPOC_THROW_ARG(ValueError, "bins", "bins=", opt.bins, " does not work with snap=True (bins read prices as they "
                   "are: nothing is snapped to the tick grid)");
  if (opt.bins > opt.max_rows)
    VPOC_THROW_ARG(ValueError, "bins", "bins=", opt.bins, " is above max_rows=", opt.max_rows,
                   " (the most rows a session may hold); raise max_rows");
}

}  // namespace

void validate(const Options& opt) {
  if (!(std::isfinite(opt.tick_size) && opt.tick_size > 0.0))
    VPOC_THROW_ARG(ValueError, "tick_size", "tick_size must be a finite number > 0, got ", opt.tick_size);
  if (opt.ticks_per_row < 1)
    VPOC_THROW_ARG(ValueError, "ticks_per_row", "ticks_per_row must be an integer >= 1, got ", opt.ticks_per_row);
  // Row prices are row * tick_size * ticks_per_row: an infinite row size would make them NaN.
  if (!std::isfinite(opt.tick_size * static_cast<double>(opt.ticks_per_row)))
    VPOC_THROW(ValueError, "tick_size * ticks_per_row must be finite (the row size), got ", opt.tick_size,
               " * ", opt.ticks_per_row);
  if (!(opt.value_area > 0.0 && opt.value_area <= 1.0))
    VPOC_THROW_ARG(ValueError, "value_area", "value_area must be in (0, 1], got ", opt.value_area);
  // Rows within a session are addressed with 32-bit offsets by the binning kernels.
  if (opt.max_rows < 1 || opt.max_rows > 1000000000)
    VPOC_THROW_ARG(ValueError, "max_rows", "max_rows must be in [1, 1_000_000_000], got ", opt.max_rows);
  if (opt.window < 0)
    VPOC_THROW_ARG(ValueError, "window", "window must be None or an integer >= 1 (input rows), got ", opt.window);
  if (opt.window > 0 && !opt.developing)
    VPOC_THROW_ARG(ValueError, "window", "window=", opt.window,
                   " gives the developing series of rolling windows: pass developing=True with it");
  if (opt.window > 0 && opt.distribute == Distribute::legacy)
    VPOC_THROW_ARG(ValueError, "window", "window= does not work with distribute='legacy' (its ladder follows the "
                   "prices seen so far); use 'uniform', 'close' or 'hlc3'");
  if (!(opt.tie_tol >= 0.0 && opt.tie_tol <= 1e-3))
    VPOC_THROW_ARG(ValueError, "tie_tol", "tie_tol must be in [0, 1e-3] (relative), got ", opt.tie_tol);
  // With one tick per row a row's top tick is its low tick: 'top' labels and groups as 'low' does.
  // Wider rows shift the grouping by ticks_per_row - 1 ticks in the binning passes: not done yet.
  if (opt.row_label == RowLabel::top && opt.ticks_per_row > 1)
    VPOC_THROW_ARG(ValueError, "row_label", "row_label='top' is implemented for ticks_per_row=1 only (where a row's top "
                   "tick is its only tick) so far; got ticks_per_row=", opt.ticks_per_row);
  if (opt.price_label == PriceLabel::decimal) {
    const ladder::RowPrice rp = ladder::RowPrice::make(opt.tick_size, opt.ticks_per_row, true);
    if (rp.den == 0.0)
      VPOC_THROW_ARG(ValueError, "price_label", "price_label='decimal' needs a tick_size with at most 15 decimals whose "
                     "row size (tick_size * ticks_per_row) has a numerator below 2**53; got tick_size=", opt.tick_size,
                     ", ticks_per_row=", opt.ticks_per_row);
  }
  if (opt.va_target == VaTarget::decimal) {
    int64_t p = 0, q = 0;
    if (!ladder::decimal_fraction(opt.value_area, 6, p, q))
      VPOC_THROW_ARG(ValueError, "va_target", "va_target='decimal' reads value_area as a decimal with at most 6 "
                     "digits after the point; got value_area=", opt.value_area);
  }
  if (opt.va_rows == VaRows::touched) {
    if (opt.va_method == VaMethod::greedy)
      VPOC_THROW_ARG(ValueError, "va_rows", "va_rows='touched' works with va_method='cbot' or 'single', not 'greedy'");
    if (opt.distribute == Distribute::legacy)
      VPOC_THROW_ARG(ValueError, "va_rows", "va_rows='touched' does not work with distribute='legacy'; use 'close', "
                     "'hlc3' or 'uniform'");
  }
  validate_bins(opt);
  if (opt.threads < 0 || opt.threads > kMaxThreads)
    VPOC_THROW_ARG(ValueError, "threads", "threads must be in [1, ", kMaxThreads, "] (or None: all cores), got ", opt.threads);
}

}  // namespace vpoc
