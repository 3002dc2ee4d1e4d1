// cpu/parallel.hpp — the CPU backend's parallel-for over sessions, on the persistent pool (cpu/pool.hpp).
// Contract: fn(i, worker) runs once for every i in [0, n) unless interrupted; the first exception is rethrown on the caller.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "cpu/pool.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/types.hpp"

namespace vpoc::cpu {

// The machine's core count, read once per process (the C library reads it from sysfs: 12-20 us, a
// large part of a tiny call); 0 when it cannot tell.
inline int cores() {
  static const int n = static_cast<int>(std::thread::hardware_concurrency());
  return n;
}

// Workers actually used for n items with `threads` requested (0: all cores).
inline int resolve_threads(int threads, int64_t n) {
  int t = threads > 0 ? threads : cores();
  t = std::max(t, 1);
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(t, n)));
}

// Most persistent pool helpers a call uses, and the process's budget of them over all its pools
// together (cpu/pool.cpp): one per core besides the caller (at least 3, so that a small machine's
// calls of up to 4 threads still run on the pool). A pool keeps its helpers' stacks for the life of
// the process: asked for threads=400, it would keep 399 of them (3 GiB of address space), and up
// to 8 callers at once would each keep a pool of cores - 1; workers beyond the budget run on
// threads of the call instead, as before the pool.
inline int max_pooled_helpers() { return std::max(cores() - 1, 3); }
inline int pooled_thread_budget() { return max_pooled_helpers(); }

// The calling thread's side of an Interrupt: poll() asks interrupt.check about every
// kInterruptPollMs and throws Cancelled when it says stop. It counts calls and reads the clock only
// every `stride_` of them: the stride doubles while items are short (up to kMaxStride: a clock read
// costs about as much as a small session) and halves when the items between two reads took long,
// so a call of long sessions still reads it at each one.
class InterruptPoll {
 public:
  explicit InterruptPoll(const Interrupt& interrupt) : interrupt_(interrupt) {}
  void poll() {
    if (interrupt_.check == nullptr || --countdown_ > 0) return;
    const auto now = std::chrono::steady_clock::now();
    const auto since = now - last_;
    last_ = now;
    if (since < std::chrono::milliseconds(1)) stride_ = std::min(stride_ * 2, kMaxStride);
    else if (since > std::chrono::milliseconds(kInterruptPollMs / 4)) stride_ = std::max(stride_ / 2, 1);
    countdown_ = stride_;
    if (now < next_) return;
    if (interrupt_.check(interrupt_.ctx)) VPOC_THROW(Cancelled, "interrupted");
    next_ = now + std::chrono::milliseconds(kInterruptPollMs);
  }

 private:
  static constexpr int kMaxStride = 64;
  Interrupt interrupt_;
  int stride_ = 1, countdown_ = 1;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point next_ = last_ + std::chrono::milliseconds(kInterruptPollMs);
};

// Runs fn(i, worker) for i in [0, n) on up to `workers` threads (the caller is worker 0). Items are
// handed out in small chunks from an atomic counter, so uneven sessions balance themselves. A
// worker that cannot be started (no memory for its stack, a thread limit) leaves its share to the
// others: same result. Once an item throws, or the caller's `interrupt` says stop (asked by
// worker 0 between items), every worker stops before its next item and the exception (Cancelled)
// is rethrown here.
template <class F>
void parallel_for(int64_t n, int workers, const Interrupt& interrupt, F&& fn) {
  if (n <= 0) return;
  InterruptPoll poll(interrupt);
  if (workers <= 1) {
    for (int64_t i = 0; i < n; ++i) {
      poll.poll();
      fn(i, 0);
    }
    return;
  }
  // ~16 chunks per worker: enough to balance uneven sessions, few enough to keep the counter cold.
  const int64_t grain = std::max<int64_t>(1, n / (int64_t(workers) * 16));
  std::atomic<int64_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&](int worker) noexcept {
    try {
      for (;;) {
        const int64_t begin = next.fetch_add(grain, std::memory_order_relaxed);
        if (begin >= n) break;
        const int64_t end = std::min(n, begin + grain);
        for (int64_t i = begin; i < end; ++i) {
          if (stop.load(std::memory_order_relaxed)) return;
          if (worker == 0) poll.poll();
          fn(i, worker);
        }
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next.store(n, std::memory_order_relaxed);
      stop.store(true, std::memory_order_relaxed);
    }
  };
  // The process's persistent helpers when a pool is free (no thread start per call), at most
  // `pooled` of them and as many as the process's budget leaves (run_on_pool tells own how many
  // it got); workers beyond those (threads= above the core count, the budget spent by other
  // callers' pools), or all of them when every pool is taken (or nested in one), run on threads
  // of this call.
  std::vector<std::thread> extra;
  auto own_share = [&](int first_extra) noexcept {
    try {
      extra.reserve(static_cast<size_t>(std::max(0, workers - first_extra)));
      for (int w = first_extra; w < workers; ++w) extra.emplace_back(run, w);
    } catch (const std::exception&) {
      // std::system_error (EAGAIN: no memory for a stack, or no thread left) or bad_alloc: go on
      // with the workers already running; every started thread is joined below.
    }
    run(0);
    for (auto& t : extra) t.join();
  };
  const int pooled = std::min(workers - 1, max_pooled_helpers());
  auto own = [&](int helpers) noexcept { own_share(helpers + 1); };
  using Run = decltype(run);
  using Own = decltype(own);
  struct Ctx {
    Run* run;
    Own* own;
  } ctx{&run, &own};
  const PoolJob helper = [](void* c, int k) { (*static_cast<Ctx*>(c)->run)(k); };
  const PoolJob caller = [](void* c, int helpers) { (*static_cast<Ctx*>(c)->own)(helpers); };
  if (run_on_pool(pooled, helper, caller, &ctx) == 0) own_share(1);
  if (error) std::rethrow_exception(error);
}

}  // namespace vpoc::cpu
