// cpu/pool.cpp — persistent worker pools for parallel_for (issue 25 follow-up: no thread start per call).
// Contract: see pool.hpp; a pool serves one caller at a time, claimed by a compare-and-swap, so no caller waits on another.
#include "cpu/pool.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "cpu/parallel.hpp"

namespace vpoc::cpu {
namespace {

// Helper threads of all pools together: at most pooled_thread_budget() (an idle helper keeps its
// stack for the life of the process; 8 pools of cores - 1 each would keep 8 x that). A pool takes
// its new threads out of this count before starting them and gives back the ones it could not
// start; a caller whose pool gets fewer helpers than it asked for runs the rest of its workers on
// threads of its own (parallel.hpp), as when every pool is taken.
std::atomic<int> g_pooled_threads{0};

int reserve_threads(int want) noexcept {
  const int budget = pooled_thread_budget();
  int cur = g_pooled_threads.load(std::memory_order_relaxed);
  for (;;) {
    const int k = std::min(want, budget - cur);
    if (k <= 0) return 0;
    if (g_pooled_threads.compare_exchange_weak(cur, cur + k, std::memory_order_relaxed)) return k;
  }
}

// One helper thread. state: kIdle (asleep), kPosted (the caller gave it the pool's job),
// kRunning (it took the job). kPosted -> kRunning (helper) and kPosted -> kIdle (the caller taking
// an unstarted post back) are compare-and-swaps: exactly one of them wins.
struct Helper {
  enum : int { kIdle, kPosted, kRunning };
  std::mutex mutex;
  std::condition_variable wake;
  std::atomic<int> state{kIdle};
};

class Pool {
 public:
  // Threads up to n (fewer where the process's budget is spent or one cannot be started);
  // returns how many it has for the call (at most n).
  int grow(int n) noexcept {
    if (static_cast<int>(helpers_.size()) >= n) return n;
    const int have = static_cast<int>(helpers_.size());
    const int granted = reserve_threads(n - have);
    if (granted == 0) return have;
    n = have + granted;
    // Helpers take no asynchronous signal (SIGINT must reach a thread that runs Python); they inherit
    // this mask. A fault's signal stays open, so faulthandler still reports a crash on a helper.
    sigset_t all, old;
    sigfillset(&all);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) sigdelset(&all, sig);
    const bool masked = pthread_sigmask(SIG_BLOCK, &all, &old) == 0;
    try {
      helpers_.reserve(static_cast<size_t>(n));
      while (static_cast<int>(helpers_.size()) < n) {
        auto h = std::make_unique<Helper>();
        const int k = static_cast<int>(helpers_.size()) + 1;
        std::thread(&Pool::loop, this, h.get(), k).detach();
        helpers_.push_back(std::move(h));  // within the reserved capacity: cannot throw
      }
    } catch (const std::exception&) {
      // std::system_error (EAGAIN: no memory for a stack, no thread left) or bad_alloc: go on with
      // the threads there are.
    }
    if (masked) pthread_sigmask(SIG_SETMASK, &old, nullptr);
    const int started = static_cast<int>(helpers_.size()) - have;
    if (started < granted) g_pooled_threads.fetch_sub(granted - started, std::memory_order_relaxed);
    return static_cast<int>(helpers_.size());
  }

  // noexcept: once a helper is posted, nothing may leave before they have all finished (they read
  // the caller's stack); a mutex that cannot be locked ends the process instead.
  int run(int helpers, PoolJob job, PoolJob own, void* ctx) noexcept {
    const int h = grow(helpers);
    if (h == 0) return 0;
    job_ = job;
    ctx_ = ctx;
    remaining_.store(h, std::memory_order_relaxed);
    for (int k = 0; k < h; ++k) {
      Helper& w = *helpers_[static_cast<size_t>(k)];
      {
        std::lock_guard<std::mutex> lock(w.mutex);
        w.state.store(Helper::kPosted, std::memory_order_release);
      }
      w.wake.notify_one();
    }
    own(ctx, h);
    // Helpers that have not woken yet are not needed any more: the items are all handed out.
    for (int k = 0; k < h; ++k) {
      int posted = Helper::kPosted;
      if (helpers_[static_cast<size_t>(k)]->state.compare_exchange_strong(posted, Helper::kIdle,
                                                                          std::memory_order_acq_rel))
        remaining_.fetch_sub(1, std::memory_order_acq_rel);
    }
    std::unique_lock<std::mutex> lock(done_mutex_);
    done_.wait(lock, [&] { return remaining_.load(std::memory_order_acquire) == 0; });
    return h;
  }

 private:
  void loop(Helper* w, int k) {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(w->mutex);
        w->wake.wait(lock, [&] { return w->state.load(std::memory_order_acquire) == Helper::kPosted; });
        int posted = Helper::kPosted;
        if (!w->state.compare_exchange_strong(posted, Helper::kRunning, std::memory_order_acq_rel)) continue;
      }
      job_(ctx_, k);
      w->state.store(Helper::kIdle, std::memory_order_release);
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(done_mutex_);
        done_.notify_one();
      }
    }
  }

  std::vector<std::unique_ptr<Helper>> helpers_;  // touched only by the pool's current caller
  PoolJob job_ = nullptr;                          // set before any post, read after taking one
  void* ctx_ = nullptr;
  std::atomic<int> remaining_{0};  // helpers posted for the current job and not yet finished
  std::mutex done_mutex_;
  std::condition_variable done_;
};

// Up to kPools callers at once use a pool each (more fall back to per-call threads). A slot's pool
// is created by the caller that claimed it, and read only by later claimants (acquire on the claim).
constexpr int kPools = 8;
struct Registry {
  std::atomic<bool> busy[kPools] = {};
  Pool* pools[kPools] = {};
};

std::atomic<Registry*> g_registry{nullptr};

// In a forked child only the forking thread exists: the parent's helpers are gone (and a pool's
// mutexes may be held by them), so the child forgets those pools (leaked) and starts new ones.
void forget_pools_in_child() {
  g_registry.store(nullptr, std::memory_order_relaxed);
  g_pooled_threads.store(0, std::memory_order_relaxed);
}
const int g_atfork = pthread_atfork(nullptr, nullptr, &forget_pools_in_child);

Registry* registry() noexcept {
  Registry* r = g_registry.load(std::memory_order_acquire);
  if (r != nullptr) return r;
  auto* fresh = new (std::nothrow) Registry;  // never destroyed: helpers may sleep in it at exit
  if (fresh == nullptr) return nullptr;
  if (g_registry.compare_exchange_strong(r, fresh, std::memory_order_acq_rel)) return fresh;
  delete fresh;  // another thread made one first
  return r;
}

}  // namespace

int run_on_pool(int helpers, PoolJob job, PoolJob own, void* ctx) noexcept {
  (void)g_atfork;
  if (helpers <= 0) return 0;
  Registry* r = registry();
  if (r == nullptr) return 0;
  Registry& reg = *r;
  for (int p = 0; p < kPools; ++p) {
    bool free = false;
    if (!reg.busy[p].compare_exchange_strong(free, true, std::memory_order_acquire)) continue;
    if (reg.pools[p] == nullptr) reg.pools[p] = new (std::nothrow) Pool;  // never destroyed (see Registry)
    const int h = reg.pools[p] != nullptr ? reg.pools[p]->run(helpers, job, own, ctx) : 0;
    reg.busy[p].store(false, std::memory_order_release);
    return h;
  }
  return 0;
}

}  // namespace vpoc::cpu
