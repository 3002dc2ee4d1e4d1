// core/sessions.cpp — session boundaries: offsets validation and per-row ids -> offsets.
// Contract: offsets[0] == 0, non-decreasing, offsets[S] == N; ids non-decreasing; first bad index named.
#include <string>

#include "vpoc/engine.hpp"
#include "vpoc/errors.hpp"

namespace vpoc {

namespace {

// " (these look like session lengths: ...)" when the S+1 values are >= 0 and sum to n_rows, the usual
// cause of offsets that do not start at 0 or end at N: lengths passed where offsets are expected.
std::string lengths_hint(const int64_t* o, int64_t s, int64_t n_rows) {
  int64_t sum = 0;
  for (int64_t i = 0; i <= s; ++i) {
    if (o[i] < 0 || o[i] > n_rows - sum) return "";
    sum += o[i];
  }
  if (sum != n_rows || (o[0] == 0 && o[s] == n_rows)) return "";
  return ". These look like session lengths (they sum to N=" + std::to_string(n_rows) +
         "): offsets are the start row of each session and N, i.e. "
         "offsets=np.concatenate([[0], np.cumsum(lengths)])";
}

}  // namespace

void validate_offsets(const SessionSpan& sessions, int64_t n_rows) { validate_offsets(sessions, n_rows, "offsets", true); }

void validate_offsets(const SessionSpan& sessions, int64_t n_rows, const char* name, bool hints) {
  const int64_t* o = sessions.offsets;
  const int64_t s = sessions.n_sessions;
  const auto hint = [&]() { return hints ? lengths_hint(o, s, n_rows) : std::string(); };
  if (o == nullptr || s < 0) VPOC_THROW_ARG(ValueError, name, name, " must have at least one element (0)");
  if (o[0] != 0) VPOC_THROW_ARG(ValueError, name, name, "[0] must be 0, got ", o[0], hint());
  for (int64_t i = 1; i <= s; ++i)
    if (o[i] < o[i - 1])
      VPOC_THROW_ARG(ValueError, name, name, " must be non-decreasing: ", name, "[", i, "]=", o[i], " < ", name, "[",
                     i - 1, "]=", o[i - 1], hint());
  if (o[s] != n_rows && s >= 1) {
    const std::string h = hint();
    if (!h.empty())
      VPOC_THROW_ARG(ValueError, name, name, "[-1] must equal the number of rows N=", n_rows, ", got ", o[s], h);
  }
  if (hints && o[s] < n_rows && s >= 1)  // the usual cause, said once here for every entry point
    VPOC_THROW_ARG(ValueError, name, name, "[-1] must equal the number of rows N=", n_rows, ", got ", o[s],
                   ": offsets index only ", o[s], " rows. Offsets from vpoc.sessions (s.offsets) count the rows kept in "
                   "a session, not every input row: pass session=s instead of offsets=s.offsets, or select the kept "
                   "rows first with s.take(high, low, close, volume)");
  if (o[s] != n_rows)
    VPOC_THROW_ARG(ValueError, name, name, "[-1] must equal the number of rows N=", n_rows, ", got ", o[s]);
}

void validate_window_start(const SessionSpan& sessions, const Options& opt, bool on_device) {
  const int64_t* w = sessions.window_start;
  if (opt.window_across && !(opt.developing && (opt.window > 0 || w != nullptr)))
    VPOC_THROW_ARG(ValueError, "window_across_sessions", "window_across_sessions=True lets each row's window reach "
                   "into earlier sessions: pass window=N or a time window (with developing=True)");
  if (w == nullptr) return;
  if (!opt.developing)
    VPOC_THROW_ARG(ValueError, "window", "a time window gives the developing series of rolling windows: pass "
                   "developing=True with it");
  if (opt.window > 0)
    VPOC_THROW_ARG(ValueError, "window", "give window=N (input rows) or time-window starts, not both");
  if (opt.distribute == Distribute::legacy)
    VPOC_THROW_ARG(ValueError, "window", "a time window does not work with distribute='legacy' (its ladder follows "
                   "the prices seen so far); use 'uniform', 'close' or 'hlc3'");
  if (opt.bins > 0)
    VPOC_THROW_ARG(ValueError, "window", "a time window does not work with bins= yet (bins take window=N input rows)");
  if (on_device)
    VPOC_THROW_ARG(ValueError, "window", "a time window needs host inputs (its starts come from host timestamps); "
                   "got GPU arrays");
  const int64_t* o = sessions.offsets;
  if (opt.window_across) {  // the call's rows, not each session's (a window may reach into earlier sessions)
    for (int64_t i = 0; i < o[sessions.n_sessions]; ++i) {
      if (w[i] < 0 || w[i] > i)
        VPOC_THROW_ARG(ValueError, "window", "window start of row ", i, " must lie in [0, ", i,
                       "] (window_across_sessions), got ", w[i]);
      if (i > 0 && w[i] < w[i - 1])
        VPOC_THROW_ARG(ValueError, "window", "window starts must be non-decreasing: row ", i, " starts at ", w[i],
                       " < ", w[i - 1], " (row ", i - 1, ")");
    }
    return;
  }
  for (int64_t s = 0; s < sessions.n_sessions; ++s)
    for (int64_t i = o[s]; i < o[s + 1]; ++i) {
      if (w[i] < o[s] || w[i] > i)
        VPOC_THROW_ARG(ValueError, "window", "window start of row ", i, " must lie in [", o[s], ", ", i,
                       "] (its session's first row .. the row), got ", w[i]);
      if (i > o[s] && w[i] < w[i - 1])
        VPOC_THROW_ARG(ValueError, "window", "window starts must be non-decreasing within a session: row ", i,
                       " starts at ", w[i], " < ", w[i - 1], " (row ", i - 1, ")");
    }
}

void offsets_from_ids(const int64_t* ids, int64_t n, const char* name, std::vector<int64_t>& offsets,
                      std::vector<int64_t>& labels) {
  offsets.assign(1, 0);
  labels.clear();
  // Each id is read once (runs without the GIL: another thread may change ids meanwhile).
  int64_t prev = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = ids[i];
    if (i > 0 && id < prev)
      VPOC_THROW_ARG(ValueError, name, name, " must be non-decreasing: ", name, "[", i, "]=", id, " < ",
                 name, "[", i - 1, "]=", prev);
    if (i == 0 || id != prev) {
      if (i > 0) offsets.push_back(i);
      labels.push_back(id);
    }
    prev = id;
  }
  if (n > 0) offsets.push_back(n);
}

}  // namespace vpoc
