// cpu/levels.cpp — POC and value area of one session (CPU backend).
// Contract: docs/contract.md; cbot/single share core/levels.hpp with the GPU, greedy sorts here.
#include "cpu/levels.hpp"

#include <algorithm>
#include <numeric>

#include "core/levels.hpp"

namespace vpoc::cpu {

SessionLevels session_levels(const double* v, int64_t n, double total, const Options& opt,
                             std::vector<int64_t>& order, const uint8_t* touched) {
  SessionLevels out{};
  out.total = total;
  const levels::Rules rules = levels::rules_of(opt, touched);
  out.poc = levels::poc_index(v, n, rules);
  const levels::Target target = levels::target_of(opt.value_area, out.total, rules);
  if (opt.va_method == VaMethod::greedy) {
    order.resize(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t(0));
    std::sort(order.begin(), order.end(),
              [v](int64_t a, int64_t b) { return levels::greedy_before(v, a, b); });
    double running = 0.0;
    int64_t lo = order[0], hi = order[0];
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = order[static_cast<size_t>(k)];
      running += v[i];
      lo = std::min(lo, i);
      hi = std::max(hi, i);
      if (levels::reached(running, target, rules)) break;
    }
    out.val = lo;
    out.vah = hi;
    out.va_volume = running;
    return out;
  }
  const int step = opt.va_method == VaMethod::cbot ? 2 : 1;
  levels::expand(v, n, out.poc, target, step, out.val, out.vah, out.va_volume, rules);
  return out;
}

}  // namespace vpoc::cpu
