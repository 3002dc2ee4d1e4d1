// vpoc/engine.hpp — the public entry points: trades or bars in, Profiles out.
// Contract: docs/contract.md; inputs are validated here, every failure is a vpoc::Error.
#pragma once

#include <cstdint>
#include <vector>

#include "vpoc/profiles.hpp"
#include "vpoc/types.hpp"

namespace vpoc {

// Session boundaries as CSR offsets [S+1] (int64, borrowed).
struct SessionSpan {
  const int64_t* offsets = nullptr;
  int64_t n_sessions = 0;
};

struct BarsInput {
  Array high, low, close, volume;
  Array open;  // read only when has_open
  bool has_open = false;
};

// Throws ValueError unless offsets[0] == 0, offsets is non-decreasing and offsets[S] == n_rows.
void validate_offsets(const SessionSpan& sessions, int64_t n_rows);

// Non-decreasing per-row ids [N] -> offsets [S+1] and the id of each session [S].
void offsets_from_ids(const int64_t* ids, int64_t n, const char* name, std::vector<int64_t>& offsets,
                      std::vector<int64_t>& labels);

// Backend-neutral checks every engine runs first: options, lengths, dtypes, offsets.
void validate_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                     const Options& opt);
void validate_bars(const BarsInput& bars, const SessionSpan& sessions, const Options& opt);

Profiles profile_trades(const Array& price, const Array& volume, const SessionSpan& sessions,
                        const Options& opt);

Profiles profile_bars(const BarsInput& bars, const SessionSpan& sessions, Distribute distribute,
                      const Options& opt);

}  // namespace vpoc
