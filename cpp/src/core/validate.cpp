// core/engine.cpp — public entry points: validate what is backend-neutral, then run a backend.
// Contract: lengths, dtypes, options and offsets are checked here once, before any backend runs.
#include "vpoc/engine.hpp"

#include "cpu/engine.hpp"
#include "vpoc/errors.hpp"

namespace vpoc {

void Profiles::resize_sessions(int64_t s) {
  n_sessions = s;
  const auto n = static_cast<size_t>(s);
  offsets.assign(n + 1, 0);
  for (auto* v : {&poc_row, &vah_row, &val_row, &low_row, &n_rows}) {
    v->resize(n);
    v->reserve(1);  // a non-null data() even for S == 0, so views never need a copy
  }
  for (auto* v : {&poc, &vah, &val, &total_volume, &va_volume}) {
    v->resize(n);
    v->reserve(1);
  }
  volume.reserve(1);
}

namespace {

void require_same_length(const Array& a, const Array& ref) {
  if (a.size != ref.size)
    VPOC_THROW(ValueError, a.name, " has length ", a.size, " but ", ref.name, " has length ",
               ref.size);
}

void require_price_dtype(const Array& a) {
  if (a.dtype != DType::f32 && a.dtype != DType::f64)
    VPOC_THROW(TypeError, a.name, " must be float32 or float64 for the engine");
}

// The CPU engine reads host memory only.
void require_host(const Array& a) {
  if (a.device >= 0)
    VPOC_THROW(ValueError, a.name, " is in GPU memory (cuda:", a.device, "); the CPU engine needs host arrays");
}

}  // namespace

void validate_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                     const Options& opt) {
  validate(opt);
  require_same_length(volume, price);
  require_price_dtype(price);
  validate_offsets(sessions, price.size);
}

void validate_bars(const BarsInput& bars, const SessionSpan& sessions, const Options& opt) {
  validate(opt);
  for (const Array* a : {&bars.low, &bars.close, &bars.volume}) require_same_length(*a, bars.high);
  if (bars.has_open) require_same_length(bars.open, bars.high);
  for (const Array* a : {&bars.high, &bars.low, &bars.close}) {
    require_price_dtype(*a);
    if (a->dtype != bars.high.dtype)
      VPOC_THROW(TypeError, a->name, " must have the dtype of ", bars.high.name);
  }
  if (bars.has_open && bars.open.dtype != bars.high.dtype)
    VPOC_THROW(TypeError, bars.open.name, " must have the dtype of ", bars.high.name);
  validate_offsets(sessions, bars.high.size);
}

Profiles profile_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                        const Options& opt) {
  validate_trades(price, volume, sessions, opt);
  require_host(price);
  require_host(volume);
  return cpu::profile_trades(price, volume, sessions, opt);
}

Profiles profile_bars(const BarsInput& bars, const SessionSpan& sessions, Distribute distribute,
                      const Options& opt) {
  validate_bars(bars, sessions, opt);
  for (const Array* a : {&bars.high, &bars.low, &bars.close, &bars.volume}) require_host(*a);
  if (bars.has_open) require_host(bars.open);
  return cpu::profile_bars(bars, sessions, distribute, opt);
}

}  // namespace vpoc
