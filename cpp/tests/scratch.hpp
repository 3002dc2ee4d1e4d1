// cpp/tests/scratch.hpp — host buffers behind a developing::Scratch / window::Scratch for the rule tests.
// Contract: zeroed rows sized as the backends size them; the tests stay independent of cpu/ (header-only rules).
#pragma once

#include <cstdint>
#include <vector>

#include "core/developing.hpp"
#include "core/window.hpp"

namespace test_scratch {

using vpoc::Fixed;
namespace developing = vpoc::developing;
namespace window = vpoc::window;

// Owns the rows; the Scratch views it hands out live as long as it does.
struct Buffers {
  std::vector<double> v, run;
  std::vector<Fixed> vf;
  std::vector<int32_t> lo, hi, order, pos, touch;

  // developing::Session's scratch: W rows (developing::scratch_rows of the session's), index 0 = origin.
  developing::Scratch developing(int64_t W, int64_t origin) {
    const auto w = static_cast<size_t>(W);
    v.assign(w, 0.0);
    vf.assign(w, Fixed{});
    run.assign(w + 1, 0.0);
    lo.assign(w + 1, 0);
    hi.assign(w + 1, 0);
    order.assign(w, 0);
    pos.assign(w, 0);
    return {v.data(), vf.data(), lo.data(), hi.data(), run.data(), order.data(), pos.data(), W, origin};
  }

  // window::Session's scratch: the session's W rows from its low row `origin`.
  window::Scratch window(int64_t W, int64_t origin) {
    const auto w = static_cast<size_t>(W);
    v.assign(w, 0.0);
    vf.assign(w, Fixed{});
    touch.assign(w, 0);
    order.assign(w, 0);
    return {v.data(), vf.data(), touch.data(), order.data(), W, origin};
  }
};

}  // namespace test_scratch
