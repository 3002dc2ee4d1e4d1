// cpu/touch.cpp — touched-row flags of one session for va_rows='touched' (a pass of its own, run only then).
// Contract: the rows come from core/source.hpp Source::rows, the same rules the binning uses.
#include "cpu/touch.hpp"

#include <algorithm>

namespace vpoc::cpu {

int64_t touched_rows(const InputView& in, int64_t begin, int64_t end, const Options& opt, int64_t low_row,
                     int64_t n_rows, uint8_t* flags) {
  std::fill(flags, flags + n_rows, uint8_t{0});
  int64_t count = 0;
  with_types(in, [&](auto p, auto v) {
    const auto src = make_source<decltype(p), decltype(v)>(in, opt, 0);
    const distribute::LegacyLadder L{};  // unused: legacy is refused with va_rows='touched'
    for (int64_t i = begin; i < end; ++i) {
      int64_t lo = 0, hi = -1;
      src.rows(src.item(i), L, lo, hi);
      lo = std::max(lo - low_row, int64_t{0});
      hi = std::min(hi - low_row, n_rows - 1);
      for (int64_t k = lo; k <= hi; ++k) {
        count += flags[k] ? 0 : 1;
        flags[k] = 1;
      }
    }
  });
  return count;
}

}  // namespace vpoc::cpu
