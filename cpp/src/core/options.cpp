// core/options.cpp — parsing of the string options and range checks of Options.
// Contract: every message names the argument, the accepted values and what was given.
#include <cmath>

#include "core/ladder.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/types.hpp"

namespace vpoc {

Distribute parse_distribute(const std::string& s) {
  if (s == "close") return Distribute::close;
  if (s == "hlc3") return Distribute::hlc3;
  if (s == "uniform") return Distribute::uniform;
  if (s == "legacy") return Distribute::legacy;
  VPOC_THROW_ARG(ValueError, "distribute", "distribute must be one of 'close', 'hlc3', 'uniform', 'legacy'; got '", s,
             "'");
}

VaMethod parse_va_method(const std::string& s) {
  if (s == "cbot") return VaMethod::cbot;
  if (s == "single") return VaMethod::single;
  if (s == "greedy") return VaMethod::greedy;
  VPOC_THROW_ARG(ValueError, "va_method", "va_method must be one of 'cbot', 'single', 'greedy'; got '", s, "'");
}

PocTie parse_poc_tie(const std::string& s) {
  if (s == "center") return PocTie::center;
  if (s == "low") return PocTie::low;
  if (s == "high") return PocTie::high;
  if (s == "mid_n2") return PocTie::mid_n2;
  if (s == "mid_floor") return PocTie::mid_floor;
  VPOC_THROW_ARG(ValueError, "poc_tie", "poc_tie must be one of 'center', 'low', 'high', 'mid_n2', 'mid_floor'; got '", s,
                 "'");
}

VaRows parse_va_rows(const std::string& s) {
  if (s == "all") return VaRows::all;
  if (s == "touched") return VaRows::touched;
  VPOC_THROW_ARG(ValueError, "va_rows", "va_rows must be one of 'all', 'touched'; got '", s, "'");
}

VaCompare parse_va_compare(const std::string& s) {
  if (s == "tie_up") return VaCompare::tie_up;
  if (s == "zero_absent") return VaCompare::zero_absent;
  VPOC_THROW_ARG(ValueError, "va_compare", "va_compare must be one of 'tie_up', 'zero_absent'; got '", s, "'");
}

VaStop parse_va_stop(const std::string& s) {
  if (s == "reaches") return VaStop::reaches;
  if (s == "exceeds") return VaStop::exceeds;
  VPOC_THROW_ARG(ValueError, "va_stop", "va_stop must be one of 'reaches', 'exceeds'; got '", s, "'");
}

RowLabel parse_row_label(const std::string& s) {
  if (s == "low") return RowLabel::low;
  if (s == "top") return RowLabel::top;
  VPOC_THROW_ARG(ValueError, "row_label", "row_label must be one of 'low', 'top'; got '", s, "'");
}

PriceLabel parse_price_label(const std::string& s) {
  if (s == "product") return PriceLabel::product;
  if (s == "decimal") return PriceLabel::decimal;
  VPOC_THROW_ARG(ValueError, "price_label", "price_label must be one of 'product', 'decimal'; got '", s, "'");
}

VaTarget parse_va_target(const std::string& s) {
  if (s == "float") return VaTarget::float64;
  if (s == "decimal") return VaTarget::decimal;
  VPOC_THROW_ARG(ValueError, "va_target", "va_target must be one of 'float', 'decimal'; got '", s, "'");
}

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
  if (opt.threads < 0 || opt.threads > kMaxThreads)
    VPOC_THROW_ARG(ValueError, "threads", "threads must be in [1, ", kMaxThreads, "] (or None: all cores), got ", opt.threads);
}

}  // namespace vpoc
