// core/sessions.cpp — session boundaries: offsets validation and per-row ids -> offsets.
// Contract: offsets[0] == 0, non-decreasing, offsets[S] == N; ids non-decreasing; first bad index named.
#include "vpoc/engine.hpp"
#include "vpoc/errors.hpp"

namespace vpoc {

void validate_offsets(const SessionSpan& sessions, int64_t n_rows) {
  const int64_t* o = sessions.offsets;
  const int64_t s = sessions.n_sessions;
  if (o == nullptr || s < 0) VPOC_THROW_ARG(ValueError, "offsets", "offsets must have at least one element (0)");
  if (o[0] != 0) VPOC_THROW_ARG(ValueError, "offsets", "offsets[0] must be 0, got ", o[0]);
  for (int64_t i = 1; i <= s; ++i)
    if (o[i] < o[i - 1])
      VPOC_THROW_ARG(ValueError, "offsets", "offsets must be non-decreasing: offsets[", i, "]=", o[i], " < offsets[",
                 i - 1, "]=", o[i - 1]);
  if (o[s] < n_rows && s >= 1)  // the usual cause, said once here for every entry point
    VPOC_THROW_ARG(ValueError, "offsets", "offsets[-1] must equal the number of rows N=", n_rows, ", got ", o[s], ": offsets index only ",
               o[s], " rows. Offsets from vpoc.sessions (s.offsets) count the rows kept in a session, not every "
               "input row: pass session=s instead of offsets=s.offsets, or select the kept rows first with "
               "s.take(high, low, close, volume)");
  if (o[s] != n_rows)
    VPOC_THROW_ARG(ValueError, "offsets", "offsets[-1] must equal the number of rows N=", n_rows, ", got ", o[s]);
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
