// cpu/levels.cpp — POC and value area of one session (CPU backend).
// Contract: docs/contract.md; cbot/single share core/levels.hpp with the GPU, greedy sorts here.
#include "cpu/levels.hpp"

#include <algorithm>
#include <numeric>

#include "core/levels.hpp"

namespace vpoc::cpu {
namespace {

// levels::poc_index's maximum of v[0..n-1] (n >= 1) in eight independent chains (vectorised) instead
// of one (a maxsd each 3 cycles: a third of session_levels on float32 trades). Rows are sums of
// valid volumes, never NaN (+0.0 where empty): their maximum is the same in any order.
double row_max(const double* v, int64_t n) {
  double m[8];
  for (int k = 0; k < 8; ++k) m[k] = v[0];
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) m[k] = v[i + k] > m[k] ? v[i + k] : m[k];
  for (; i < n; ++i) m[0] = v[i] > m[0] ? v[i] : m[0];
  for (int k = 1; k < 8; ++k) m[0] = m[k] > m[0] ? m[k] : m[0];
  return m[0];
}

}  // namespace

SessionLevels session_levels(const double* v, int64_t n, double total, const Options& opt,
                             std::vector<int64_t>& order, const uint8_t* touched) {
  SessionLevels out{};
  out.total = total;
  const levels::Rules rules = levels::rules_of(opt, touched);
  out.poc = levels::poc_among(v, 0, n - 1, row_max(v, n), rules);  // levels::poc_index
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
