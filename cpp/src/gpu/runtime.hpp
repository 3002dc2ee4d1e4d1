// gpu/runtime.hpp — per-device state: streams, the one reusable workspace, pinned staging, the
// result pool, pooled events, counters. Contract: in the steady state no call reaches the driver's
// allocator (the workspace only grows; results come from the pool, reused in stream order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "gpu/vendor.hpp"
#include "vpoc/gpu.hpp"

namespace vpoc::gpu {

// Makes `device` current for its lifetime and restores the previous device after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

class DeviceState {
 public:
  explicit DeviceState(int device);
  int device() const { return device_; }
  gpuStream_t stream() const { return stream_; }
  gpuStream_t copy_stream() const { return copy_stream_; }
  std::mutex& mutex() { return mutex_; }

  // The device workspace, at least `bytes` long (grown, never shrunk; callers hold mutex()).
  void* workspace(size_t bytes);
  // Pinned host staging, at least `bytes` long (same policy).
  void* pinned(size_t bytes);
  // kSmallPinned bytes of pinned host memory for small transfers (summaries, session offsets).
  void* small_pinned();
  static constexpr size_t kSmallPinned = size_t(1) << 20;
  // small_pinned()'s address in kernels (page-locked host memory is mapped into the device's
  // address space): a kernel writes a few words there and the host reads them after an event,
  // with no copy of their own.
  void* small_pinned_device();
  // kSlotEvents events owned by the state for one call's double buffering (callers hold mutex()).
  static constexpr int kSlotEvents = 4;
  gpuEvent_t slot_event(int k) const { return slot_events_[k]; }
  // The event a speculative call records after its summary copy (callers hold mutex()).
  gpuEvent_t summary_event() const { return summary_event_; }
  // Output rows seen for calls of one shape (`key`, see gpu/engine.cu), 0 when none: the size a
  // call that bins before reading its layout back gives its histogram (callers hold mutex()).
  int64_t rows_hint(uint64_t key) const;
  void note_rows(uint64_t key, int64_t rows);
  // A call of shape `key` that fit in its hint with `rows` rows: after kShrinkCalls calls in a row
  // under half the hint, the hint comes down to the most of them (one unusually wide call no longer
  // sizes every later call's histogram).
  void note_fit(uint64_t key, int64_t rows);
  // Calls of shape `key` met a fractional volume (then their range pass checks volumes first, as the
  // bin pass can only bin whole ones without it); false for a shape not seen.
  bool fractional_hint(uint64_t key) const;
  void note_fractional(uint64_t key);
  static constexpr int kShrinkCalls = 64;
  // A result buffer of at least `bytes`, written on `stream`: a cached buffer when one fits (the
  // stream first waits for the buffer's earlier users), else a new driver allocation. It returns
  // to the pool with its last reference.
  BufferPtr output(size_t bytes, gpuStream_t stream);
  // An event from the pool; it goes back to the pool with the last reference.
  std::shared_ptr<void> event();
  MemoryStats stats();
  void count_speculative(bool rerun, bool fused = false);  // a speculative call binned (false; fused: bars
                                                           // binned by the levels kernel) / ran again (true)
  void empty_cache();
  void set_pool_limit(int64_t bytes);
  // The end of the last call on this device: the next call's stream waits for it before it
  // touches the shared workspace (calls may run on different streams).
  std::shared_ptr<void> last_call;
  std::uintptr_t last_call_stream = ~std::uintptr_t(0);  // last_call's Ready::stream: a call on it needs no wait
  // s when it is a stream that cannot be destroyed (the legacy default stream, 0 and 1, vpoc's own
  // two), else ~0: only such a stream's handle proves "the same stream" later. Not the per-thread
  // default stream (2): that handle names the calling thread's stream, another on another thread.
  std::uintptr_t permanent(std::uintptr_t s) const {
    const bool p = s <= 1 || s == reinterpret_cast<std::uintptr_t>(stream_) ||
                   s == reinterpret_cast<std::uintptr_t>(copy_stream_);
    return p ? s : ~std::uintptr_t(0);
  }

 private:
  struct Cached {
    void* data;
    size_t bytes;
    std::vector<gpuEvent_t> after;  // recorded on the buffer's user streams when it was released
    std::vector<std::uintptr_t> on;  // after[k]'s stream
    // Permanent user streams (see permanent()), with no event: a reuse on another stream records
    // one there then (it orders after every use queued before the release, and more).
    std::vector<std::uintptr_t> later;
  };
  void release(Buffer* b);                // the deleter of output() buffers
  gpuEvent_t take_event();                // pool_mutex_ held
  void trim(size_t keep);                 // frees cached buffers down to `keep` bytes; pool_mutex_ held
  // Counted; on failure empties the cache and tries once more; nullptr when that fails too (error
  // cleared). Takes pool_mutex_ itself.
  void* driver_malloc(size_t bytes);
  void driver_free(void* p);              // counted
  void free_workspace();                  // after the streams are done with it; callers hold mutex()

  int device_;
  gpuStream_t stream_ = nullptr;       // vpoc's own compute stream (non-blocking)
  gpuStream_t copy_stream_ = nullptr;  // host-to-device staging copies
  gpuEvent_t slot_events_[kSlotEvents] = {};
  gpuEvent_t summary_event_ = nullptr;
  struct RowsHint {
    uint64_t key;
    int64_t rows;
    int64_t recent = 0;  // the most rows of the calls under half `rows` since the last one above
    int small = 0;       // how many such calls in a row
    bool fractional = false;  // a call of this shape met a fractional volume (note_fractional)
  };
  static constexpr size_t kHints = 16;  // shapes remembered (a training loop has a few)
  std::vector<RowsHint> hints_;         // most recent first
  std::mutex mutex_;
  void* ws_ = nullptr;
  size_t ws_bytes_ = 0;
  void* pinned_ = nullptr;
  size_t pinned_bytes_ = 0;
  void* small_pinned_ = nullptr;
  void* small_pinned_device_ = nullptr;
  std::mutex pool_mutex_;  // the cache, the event pool and the counters (deleters take only this)
  std::vector<Cached> cached_;
  size_t cached_bytes_ = 0;
  size_t pool_limit_ = static_cast<size_t>(kPoolLimit);
  std::vector<gpuEvent_t> free_events_;
  MemoryStats stats_;  // counters; pool_cached_bytes / pool_limit_bytes are filled in by stats()
};

// The state of `device` (created on first use; lives until the process ends).
DeviceState& state(int device);

// A result's 11 per-session columns (offsets [S+1], n_rows .. va_volume [S]) in one pool buffer of
// aligned pieces, to be written on `stream`.
void allocate_session_columns(DeviceState& st, DeviceProfiles& out, int64_t S, gpuStream_t stream);

// An event recorded on `stream` now, as a Ready for result arrays.
Ready record_ready(gpuStream_t stream, int device);

// Rounds n up to a multiple of 256 bytes (every workspace piece starts aligned for any type).
constexpr size_t align_up(size_t n) { return (n + 255) & ~size_t(255); }

// Orders a call's work on `stream` after what it must not overtake: the last call on st's device
// (st.last_call, unless it ran on `stream`: the workspace they share) and the work queued on the
// inputs' producer streams (an event from the pool recorded on each one other than `stream`).
// Callers hold st.mutex().
void wait_before_call(DeviceState& st, gpuStream_t stream, const std::vector<std::uintptr_t>& producers);

// A result's developing columns (dev_poc, dev_vah, dev_val [n]) in one pool buffer of aligned
// pieces, to be written on `stream` (as allocate_session_columns does for the session columns).
void allocate_developing_columns(DeviceState& st, DeviceProfiles& out, int64_t n, gpuStream_t stream);

}  // namespace vpoc::gpu
