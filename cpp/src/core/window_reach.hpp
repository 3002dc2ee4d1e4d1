// core/window_reach.hpp — how far back each session's rolling windows reach across sessions (window_across_sessions).
// Contract: docs/design/windows-across-sessions.md 2-3: the first row and a row range holding every window; host only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>

#include "core/window.hpp"

namespace vpoc::window {

// The session holding row `row` of a call with offsets off[0..S]: the last s with off[s] <= row
// (empty sessions starting at `row` come before it). row in [0, off[S]).
inline int64_t session_of(const int64_t* off, int64_t S, int64_t row) {
  return static_cast<int64_t>(std::upper_bound(off, off + S + 1, row) - off) - 1;
}

// What each session's windows reach, given its sessions' final rows (low_row, n_rows: the profile
// pass's) and the call-wide starts (Starts::rows(N) with begin 0, or the time windows' starts):
// first[s] = starts(0, off[s]), the first row any window of s holds (starts are non-decreasing);
// origin[s], width[s]: the row range [origin, origin + width) of every session from the one holding
// first[s] to s that has rows, so every window of s lies in it (conservative: whole sessions, no
// pass over input rows). A session without rows (n_rows 0): first = off[s], origin = width = 0.
// Both ends of the span [k0, s] only move forward: two monotone deques give all S ranges in O(S).
inline void reach(const int64_t* off, int64_t S, const int64_t* low_row, const int64_t* n_rows, const Starts& starts,
                  int64_t* first, int64_t* origin, int64_t* width) {
  std::deque<int64_t> lo, hi;  // sessions with rows in [k0, s]: increasing low_row / decreasing top
  const auto top = [&](int64_t k) { return low_row[k] + n_rows[k]; };
  int64_t k0 = 0;
  for (int64_t s = 0; s < S; ++s) {
    first[s] = off[s];
    origin[s] = width[s] = 0;
    if (n_rows[s] > 0) {
      while (!lo.empty() && low_row[lo.back()] >= low_row[s]) lo.pop_back();
      lo.push_back(s);
      while (!hi.empty() && top(hi.back()) <= top(s)) hi.pop_back();
      hi.push_back(s);
    }
    if (off[s + 1] == off[s] || n_rows[s] == 0) continue;
    first[s] = starts(0, off[s]);
    k0 = std::max(k0, session_of(off, S, first[s]));
    while (lo.front() < k0) lo.pop_front();  // s itself stays: both deques are never empty here
    while (hi.front() < k0) hi.pop_front();
    origin[s] = low_row[lo.front()];
    width[s] = top(hi.front()) - origin[s];
  }
}

// Whether a session's scratch of `width` rows (reach) is wider than any session's whose windows all
// fit max_rows can be: the session holding its first window's first row, that first window and the
// session itself each span at most max_rows rows, and the window shares a row with each of the two
// (sessions between them lie inside it), so 3 * max_rows bounds the hull. Wider: the session's first
// window is too wide, which window_rows measures without any scratch (max_rows <= 10**9: no overflow).
inline bool beyond_reach(int64_t width, int64_t max_rows) { return width > 3 * max_rows; }

// Joins the rows that input rows [j, i] of src touch into [lo, hi] (lo > hi: none yet); false when
// a row's prices are invalid (the inputs changed under the call: the caller reports that).
template <class Src>
bool join_rows(const Src& src, int64_t j, int64_t i, int64_t& lo, int64_t& hi) {
  const distribute::LegacyLadder L{};  // legacy is refused with rolling windows
  for (int64_t k = j; k <= i; ++k) {
    const Item it = src.item(k);
    if (!src.valid_prices(it)) return false;
    int64_t a = 0, b = -1;
    src.rows(it, L, a, b);
    lo = std::min(lo, a);
    hi = std::max(hi, b);
  }
  return true;
}

// The width of row i's window (rows j..i) as Session's too-wide check measures it: the rows its
// input rows touch, last - first + 1; 0 when a row's prices are invalid.
template <class Src>
int64_t window_rows(const Src& src, int64_t j, int64_t i) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  return join_rows(src, j, i, lo, hi) && lo <= hi ? hi - lo + 1 : 0;
}

}  // namespace vpoc::window
