// core/validate.cpp — the backend-neutral checks of a call: options, lengths, dtypes, offsets, placement.
// Contract: run once per call by the dispatcher (dispatch.cpp), before any backend; every failure names the argument.
#include "vpoc/engine.hpp"
#include "vpoc/errors.hpp"

namespace vpoc {

void Profiles::resize_sessions(int64_t s) {
  n_sessions = s;
  const auto n = static_cast<size_t>(s);
  offsets.assign(n + 1, 0);
  // reserve(1): a non-null data() even for S == 0, so views never need a copy
#define VPOC_X(name, type, extent)      \
  if (Extent::extent == Extent::sessions) { \
    name.resize(n);                     \
    name.reserve(1);                    \
  }
  VPOC_RESULT_COLUMNS(VPOC_X)
#undef VPOC_X
  volume.reserve(1);
}

namespace {

void require_same_length(const Array& a, const Array& ref) {
  if (a.size != ref.size)
    VPOC_THROW_ARG(ValueError, a.name, a.name, " has length ", a.size, " but ", ref.name, " has length ",
               ref.size);
}

void require_price_dtype(const Array& a) {
  if (a.dtype != DType::f32 && a.dtype != DType::f64)
    VPOC_THROW_ARG(TypeError, a.name, a.name, " must be float32 or float64 for the engine");
}

// A CPU call reads host memory only.
void require_placed(const Array& a, const Placement& place) {
  if (place.device < 0 && a.device >= 0)
    VPOC_THROW_ARG(ValueError, a.name, a.name, " is in GPU memory (cuda:", a.device, "); the CPU engine needs host arrays");
}

}  // namespace

void validate_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                     const Options& opt, const Placement& place) {
  validate(opt);
  require_same_length(volume, price);
  require_price_dtype(price);
  validate_offsets(sessions, price.size);
  require_placed(price, place);
  require_placed(volume, place);
  validate_window_start(sessions, opt, price.device >= 0 || volume.device >= 0);
}

void validate_bars(const BarsInput& bars, const SessionSpan& sessions, const Options& opt,
                   const Placement& place) {
  validate(opt);
  for (const Array* a : {&bars.low, &bars.close, &bars.volume}) require_same_length(*a, bars.high);
  if (bars.has_open) require_same_length(bars.open, bars.high);
  for (const Array* a : {&bars.high, &bars.low, &bars.close}) {
    require_price_dtype(*a);
    if (a->dtype != bars.high.dtype)
      VPOC_THROW_ARG(TypeError, a->name, a->name, " must have the dtype of ", bars.high.name);
  }
  if (bars.has_open && bars.open.dtype != bars.high.dtype)
    VPOC_THROW_ARG(TypeError, bars.open.name, bars.open.name, " must have the dtype of ", bars.high.name);
  validate_offsets(sessions, bars.high.size);
  for (const Array* a : {&bars.high, &bars.low, &bars.close, &bars.volume}) require_placed(*a, place);
  if (bars.has_open) require_placed(bars.open, place);
  bool on_device = bars.high.device >= 0 || bars.low.device >= 0 || bars.close.device >= 0 || bars.volume.device >= 0;
  if (bars.has_open) on_device |= bars.open.device >= 0;
  validate_window_start(sessions, opt, on_device);
}

}  // namespace vpoc
