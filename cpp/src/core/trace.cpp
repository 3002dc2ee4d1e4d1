// core/trace.cpp — vpoc/trace.hpp: host phase marks in one process-wide buffer (bounded).
// Contract: off unless VPOC_HOST_TRACE=1 at first use; at most kMaxMarks kept between takes (later ones dropped).
#include "vpoc/trace.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace vpoc::trace {
namespace {
constexpr size_t kMaxMarks = size_t(1) << 20;  // ~16 MiB: a benchmark's few thousand calls of ~20 marks
std::mutex g_mutex;
std::vector<std::pair<const char*, int64_t>>& marks() {
  static auto* m = new std::vector<std::pair<const char*, int64_t>>();  // never destroyed: no exit-order issues
  return *m;
}
}  // namespace

bool on() {
  static const bool enabled = [] {
    const char* v = std::getenv("VPOC_HOST_TRACE");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return enabled;
}

void record(const char* name) {
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now().time_since_epoch())
                         .count();
  std::lock_guard<std::mutex> lock(g_mutex);
  if (marks().size() < kMaxMarks) marks().emplace_back(name, ns);
}

std::vector<std::pair<const char*, int64_t>> take() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<std::pair<const char*, int64_t>> out;
  out.swap(marks());
  return out;
}

}  // namespace vpoc::trace
