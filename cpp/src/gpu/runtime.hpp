// gpu/runtime.hpp — per-device state: stream, the one reusable workspace, pinned staging, counters.
// Contract: the workspace only grows (free + malloc, counted); nothing is allocated per chunk/session.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

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
  // A result allocation, freed (and counted) when the last view of it goes.
  BufferPtr output(size_t bytes);
  MemoryStats stats();
  // The end of the last call on this device: the next call's stream waits for it before it
  // touches the shared workspace (calls may run on different streams).
  std::shared_ptr<void> last_call;

 private:
  int device_;
  gpuStream_t stream_ = nullptr;       // vpoc's own compute stream (non-blocking)
  gpuStream_t copy_stream_ = nullptr;  // host-to-device staging copies
  std::mutex mutex_;
  void* ws_ = nullptr;
  size_t ws_bytes_ = 0;
  void* pinned_ = nullptr;
  size_t pinned_bytes_ = 0;
  void* small_pinned_ = nullptr;
  std::shared_ptr<std::mutex> stats_mutex_ = std::make_shared<std::mutex>();
  std::shared_ptr<MemoryStats> stats_ = std::make_shared<MemoryStats>();
};

// The state of `device` (created on first use; lives until the process ends).
DeviceState& state(int device);

// An event recorded on `stream` now, as a Ready for result arrays.
Ready record_ready(gpuStream_t stream, int device);

// Rounds n up to a multiple of 256 bytes (every workspace piece starts aligned for any type).
constexpr size_t align_up(size_t n) { return (n + 255) & ~size_t(255); }

}  // namespace vpoc::gpu
