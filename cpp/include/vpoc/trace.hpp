// vpoc/trace.hpp — host phase marks of GPU calls, for finding where a call's host time goes.
// Contract: off unless VPOC_HOST_TRACE=1 is in the environment at the first mark (off: a call and a load a mark).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace vpoc::trace {

// Whether marks are recorded (VPOC_HOST_TRACE=1, read once).
bool on();
// Records (name, steady-clock ns) when on; `name` must outlive the process (a string literal).
void record(const char* name);
inline void mark(const char* name) {
  if (on()) record(name);
}
// The marks recorded since the last take (this process, every thread), oldest first.
std::vector<std::pair<const char*, int64_t>> take();

}  // namespace vpoc::trace
