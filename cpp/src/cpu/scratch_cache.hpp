// cpu/scratch_cache.hpp — the CPU workers' scratch, kept across calls in a process-wide cache (issue 25).
// Contract: a lease never blocks and never shares an entry; only scratch of a call that ended cleanly goes back.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "cpu/parallel.hpp"

namespace vpoc::cpu {

// Workers (the pool's threads, cpu/pool.hpp, or a call's own when no pool is free) grow their scratch
// (row windows, staging buffers) in their own malloc arenas, which glibc may trim between calls: the
// next call then faults the pages in again
// (issue 25: ~1,400 faults per two-thread call in some processes). Scratch taken from here and given
// back outlives the call, so a steady call allocates nothing.
//
// T: default-constructible, with `size_t bytes() const` (the heap it holds). The cache keeps at most
// one entry per core (more callers at once get fresh ones), each of at most kKeepBytes (a larger one
// is freed when given back), and at most kKeepTotal bytes in all (a many-core machine after one big
// call keeps no more than that). Its mutex is only
// ever try-locked (when busy, the lease takes fresh scratch or frees it), so no caller waits on
// another, and a child forked while another thread held it cannot deadlock (it caches nothing).
// The cache itself is never destroyed: a call still running at interpreter exit can give back.
template <class T>
class ScratchCache {
 public:
  static constexpr size_t kKeepBytes = size_t{16} << 20;
  static constexpr size_t kKeepTotal = size_t{256} << 20;

  static ScratchCache& instance() {
    static ScratchCache* const cache = new ScratchCache;  // never destroyed (see above)
    return *cache;
  }

  // n entries: cached ones first (most recently used on top), then new ones.
  std::vector<std::unique_ptr<T>> take(size_t n) {
    std::vector<std::unique_ptr<T>> out;
    out.reserve(n);
    {
      std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
      if (lock.owns_lock())
        while (out.size() < n && !free_.empty()) {
          held_ -= free_.back()->bytes();
          out.push_back(std::move(free_.back()));
          free_.pop_back();
        }
    }
    while (out.size() < n) out.push_back(std::make_unique<T>());
    return out;
  }

  // Keeps what fits (see above); frees the rest when `items` goes out of scope.
  void give(std::vector<std::unique_ptr<T>>& items) {
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return;
    for (auto& item : items) {
      if (!item || free_.size() >= max_entries()) continue;
      const size_t b = item->bytes();
      if (b > kKeepBytes || held_ + b > kKeepTotal) continue;
      held_ += b;
      free_.push_back(std::move(item));  // within the reserved capacity: no allocation here
    }
  }

 private:
  ScratchCache() { free_.reserve(max_entries()); }
  static size_t max_entries() { return static_cast<size_t>(std::max(1, cores())); }
  std::mutex mutex_;
  std::vector<std::unique_ptr<T>> free_;
  size_t held_ = 0;  // bytes() of the entries in free_
};

// One call's scratch, entry w for worker w. Goes back to the cache only after keep() (the call
// ended cleanly, the entries are in their reusable state); otherwise it is freed.
template <class T>
class ScratchLease {
 public:
  explicit ScratchLease(int workers) : items_(ScratchCache<T>::instance().take(static_cast<size_t>(workers))) {}
  ~ScratchLease() {
    if (keep_) ScratchCache<T>::instance().give(items_);
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;

  T& operator[](int worker) { return *items_[static_cast<size_t>(worker)]; }
  void keep() { keep_ = true; }

 private:
  std::vector<std::unique_ptr<T>> items_;
  bool keep_ = false;
};

}  // namespace vpoc::cpu
