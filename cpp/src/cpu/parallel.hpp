// cpu/parallel.hpp — the CPU backend's thread pool: a dynamic parallel-for over sessions.
// Contract: fn(i, worker) runs once for every i in [0, n); the first exception is rethrown on the caller.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace vpoc::cpu {

// Workers actually used for n items with `threads` requested (0: all cores).
inline int resolve_threads(int threads, int64_t n) {
  int t = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  t = std::max(t, 1);
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(t, n)));
}

// Runs fn(i, worker) for i in [0, n) on `workers` threads (the caller is worker 0). Items are
// handed out in small chunks from an atomic counter, so uneven sessions balance themselves.
template <class F>
void parallel_for(int64_t n, int workers, F&& fn) {
  if (n <= 0) return;
  if (workers <= 1) {
    for (int64_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  // ~16 chunks per worker: enough to balance uneven sessions, few enough to keep the counter cold.
  const int64_t grain = std::max<int64_t>(1, n / (int64_t(workers) * 16));
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&](int worker) {
    try {
      for (;;) {
        const int64_t begin = next.fetch_add(grain, std::memory_order_relaxed);
        if (begin >= n) break;
        const int64_t end = std::min(n, begin + grain);
        for (int64_t i = begin; i < end; ++i) fn(i, worker);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next.store(n, std::memory_order_relaxed);
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(workers - 1));
  for (int w = 1; w < workers; ++w) pool.emplace_back(run, w);
  run(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace vpoc::cpu
