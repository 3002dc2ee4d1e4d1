// core/messages.hpp — what is wrong with one input row, worded once for every backend.
// Contract: empty string when the row is valid; else a message naming the argument and the index.
#pragma once

#include <cfloat>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/ladder.hpp"
#include "core/fixed.hpp"
#include "vpoc/engine.hpp"
#include "vpoc/errors.hpp"

namespace vpoc::messages {

// What is wrong with one input row: the message, and the argument, row and reason it names
// (vpoc::Error::set_input). Empty when the row is valid.
struct Problem {
  std::string message, argument, reason;
  int64_t index = -1;
  int64_t session = -1;  // the session (position) it is about, -1: none (Python names it by its label)
  bool empty() const { return message.empty(); }
};

// "name[i]" + rest (rest: "=value is ..." or " is ..."); the reason is rest without its "=value".
inline Problem at(const char* name, int64_t i, const std::string& rest) {
  Problem p;
  p.message = detail::concat(name, "[", i, "]", rest);
  p.argument = name;
  p.index = i;
  size_t k = 0;
  if (!rest.empty() && rest[0] == '=') k = std::min(rest.size(), rest.find(' '));
  while (k < rest.size() && rest[k] == ' ') ++k;
  p.reason = rest.substr(k);
  return p;
}

// A message about no one row (a session, a total).
inline Problem general(std::string message) {
  Problem p;
  p.message = std::move(message);
  return p;
}

// Throws the ValueError of `p`, carrying its argument, row and reason.
[[noreturn]] inline void raise(const Problem& p, const char* file, int line) {
  ValueError e(p.message, file, line);
  if (!p.argument.empty() || p.index >= 0) e.set_input(p.argument, p.index, p.reason);
  e.set_session(p.session);
  throw e;
}

// The rule is ladder::tick_limit (tick: tick_size, tpr: ticks_per_row).
inline Problem bad_price(const char* name, int64_t i, double p, double tick, int64_t tpr) {
  if (!std::isfinite(p)) return at(name, i, detail::concat(" is not finite (", p, ")"));
  const double limit = ladder::tick_limit(tick, tpr);
  if (std::fabs(p / tick) < limit) return {};
  if (limit == ladder::kMaxTicks)
    return at(name, i, detail::concat("=", p, " is out of range for tick_size=", tick,
                                      " (|price / tick_size| must be < 2**52)"));
  return at(name, i, detail::concat("=", p, " is out of range for tick_size=", tick, " and ticks_per_row=",
                                    tpr, ": its row price would be past the float64 range (|price / tick_size| "
                                    "must be < ", limit, ")"));
}

// Volumes are summed exactly in 64.64 fixed point (core/fixed.hpp); a session's total, and so
// every volume, must stay at or below 2**53, where float64 still holds every integer.
template <class T>
Problem volume_above_max(const char* name, int64_t i, T v) {
  return at(name, i, detail::concat("=", v, " is above 2**53 (9007199254740992), the largest volume "
                                    "vpoc sums exactly; scale ", name, " down"));
}

inline Problem bad_volume(const char* name, int64_t i, double v) {
  if (fixed::volume_in_range(v)) return {};
  if (v > 0.0 && v < fixed::kMinVolume)
    return at(name, i, detail::concat("=", v, " is below 2**-32 (2.3e-10), the smallest volume vpoc "
                                      "sums without rounding it away (in units of 2**-64); scale ", name, " up"));
  if (v > 9007199254740992.0 && std::isfinite(v)) return volume_above_max(name, i, v);
  return at(name, i, detail::concat(" must be finite and >= 0, got ", v));
}

// An integer volume is judged as the exact integer, before any rounding to float64 (2**53 + 1 would
// round to 2**53 and pass), and named by its exact value.
inline Problem bad_volume(const char* name, int64_t i, int64_t v) {
  if (v >= 0 && v <= (int64_t(1) << 53)) return {};
  if (v > 0) return volume_above_max(name, i, v);
  return at(name, i, detail::concat(" must be finite and >= 0, got ", v));
}
inline Problem bad_volume(const char* name, int64_t i, int32_t v) {
  return bad_volume(name, i, static_cast<int64_t>(v));
}
inline Problem bad_volume(const char* name, int64_t i, float v) {
  return bad_volume(name, i, static_cast<double>(v));
}

// The session holding input row i (a "row" of trades or a "bar") is wider than max_rows (about no
// one argument; the row is said in the text only: Live counts it within its session).
inline Problem too_wide(const char* what, int64_t i, int64_t max_rows) {
  return general(detail::concat("the session holding ", what, " ", i, " spans more than max_rows=", max_rows,
                                " rows; use a larger tick_size or ticks_per_row (or raise max_rows)"));
}

// Session s spans `rows` rows; `what` `first` (a "row" or "bar" index; what nullptr: not known) is the first
// input row that takes it past max_rows: a fat-finger print is named, and is the error's row (.index: callers
// that took some of the caller's rows name the input row); .session is s (named by its label where known).
// The one wording of every backend's too-wide session.
inline Problem session_too_wide(int64_t s, int64_t rows, int64_t max_rows, const char* what = nullptr,
                                int64_t first = -1) {
  Problem p = general(detail::concat("session ", s, " spans ", rows, " rows, more than max_rows=", max_rows,
                                     what != nullptr ? detail::concat(" from ", what, " ", first, " on") : std::string(),
                                     "; use a larger tick_size or ticks_per_row (or raise max_rows)"));
  if (what != nullptr) p.index = first;
  p.session = s;
  return p;
}

// The rolling window of input row i (rows j..i, a "row" of trades or a "bar": `what`; j in session k,
// i in session s: window_across_sessions) spans `rows` rows. .index is i (callers that took some of the
// caller's rows name the input row), .session s (named by its label where known, as session_too_wide);
// the window is said by its length and the sessions it reaches back, which stay true of the caller's
// rows and labels. The one wording of every backend's too-wide window.
inline Problem window_too_wide(const char* what, int64_t i, int64_t j, int64_t k, int64_t s, int64_t rows,
                               int64_t max_rows) {
  const int64_t back = s - k;
  Problem p = general(detail::concat(
      "the window of ", what, " ", i, " in session ", s, " (", i - j + 1, " ", what, i - j == 0 ? "" : "s",
      back > 0 ? detail::concat(", reaching back ", back, back == 1 ? " session" : " sessions") : std::string(),
      ") spans ", rows, " rows, more than max_rows=", max_rows, "; raise max_rows or shorten window"));
  p.index = i;
  p.session = s;
  return p;
}

// Trade i with price p (widened to float64) and volume v (as given: float or integer).
template <class V>
Problem trade_problem(int64_t i, const Array& price, double p, const Array& volume, V v, double tick,
                      int64_t tpr) {
  Problem m = bad_price(price.name, i, p, tick, tpr);
  return m.empty() ? bad_volume(volume.name, i, v) : m;
}

// Bar i; o is ignored unless bars.has_open. Close and open must lie in [low, high]. v: the volume
// as given (float or integer).
template <class V>
Problem bar_problem(int64_t i, const BarsInput& bars, double h, double l, double c, double o, V v,
                    double tick, int64_t tpr) {
  for (const auto& [arr, p] : {std::pair<const Array*, double>{&bars.high, h}, {&bars.low, l},
                               {&bars.close, c}, {&bars.open, o}}) {
    if (arr == &bars.open && !bars.has_open) continue;
    Problem m = bad_price(arr->name, i, p, tick, tpr);
    if (!m.empty()) return m;
  }
  if (!(h >= l))
    return at(bars.high.name, i, detail::concat(" < ", bars.low.name, "[", i, "] (", h, " < ", l, ")"));
  for (const auto& [arr, p] : {std::pair<const Array*, double>{&bars.close, c}, {&bars.open, o}}) {
    if (arr == &bars.open && !bars.has_open) continue;
    if (!(p >= l && p <= h))
      return at(arr->name, i, detail::concat("=", p, " is outside [", bars.low.name, "[", i, "], ",
                                             bars.high.name, "[", i, "]] = [", l, ", ", h, "]"));
  }
  return bad_volume(bars.volume.name, i, v);
}

// A session whose volumes (each valid) sum past 2**53; `session` names it ("session 3", "the
// live session").
inline std::string volume_overflow(const char* name, const std::string& session) {
  return detail::concat(name, " of ", session, " sums past 2**53 (9007199254740992), the largest total "
                        "vpoc sums exactly (float64 holds every integer only up to there); scale ", name, " down");
}
inline std::string volume_overflow(const char* name, int64_t s) {
  return volume_overflow(name, detail::concat("session ", s));
}
// Session s's volumes sum past 2**53: volume_overflow's words, with .session s (the caller names it by
// its label where it knows one, as the too-wide session).
inline Problem session_volume_overflow(const char* name, int64_t s) {
  Problem p = general(volume_overflow(name, s));
  p.session = s;
  return p;
}
// The volumes (`name`) of the window of input row i (a "row" or "bar": `what`), in session s, sum past
// 2**53: volume_overflow's words, with .index i and .session s as window_too_wide.
inline Problem window_volume_overflow(const char* name, const char* what, int64_t i, int64_t s) {
  Problem p = general(volume_overflow(name, detail::concat("the window of ", what, " ", i, " in session ", s)));
  p.index = i;
  p.session = s;
  return p;
}

}  // namespace vpoc::messages
