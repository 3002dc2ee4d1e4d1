// cpu/developing.hpp — developing (no-lookahead) POC / VAH / VAL for every input row (CPU backend).
// Contract: docs/contract.md "Developing series"; reads the finished profiles' row ranges only.
#pragma once

#include <memory>
#include <vector>

#include "core/developing.hpp"
#include "core/window.hpp"
#include "core/source.hpp"
#include "vpoc/engine.hpp"

namespace vpoc::cpu {

// Host buffers behind a developing::Scratch, grown to the widest session they serve. The row
// volumes live in a shared buffer so that a view handed out (live histograms) keeps it alive:
// a buffer still shared is replaced, never rewritten, when the next session needs it.
struct ScratchBuffers {
  std::shared_ptr<std::vector<double>> v;
  std::vector<Fixed> vf;
  std::vector<double> run;
  std::vector<int32_t> lo, hi, order, pos, touch;

  // A zeroed scratch of developing::scratch_rows(n_rows) rows whose index 0 is absolute row origin.
  developing::Scratch for_session(int64_t n_rows, int64_t origin);
  // A zeroed rolling-window scratch of a session's n_rows rows from its low row `origin`.
  window::Scratch for_window(int64_t n_rows, int64_t origin);
  // The heap it holds, in bytes (cpu/scratch_cache.hpp keeps the batch workers' across calls).
  size_t bytes() const;

 private:
  void zero_rows(size_t W);
};

// Fills prof.dev_poc / dev_vah / dev_val ([N] row prices) for the inputs `in` (host pointers,
// element 0 = row 0), whose finished per-session profiles prof already holds.
void developing(const InputView& in, const SessionSpan& sessions, const Options& opt, Profiles& prof);

}  // namespace vpoc::cpu
