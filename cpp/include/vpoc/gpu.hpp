// vpoc/gpu.hpp — the GPU backend's public face: device discovery, memory accounting, result memory.
// Contract: callable in every build; without a GPU backend, available() is false and the rest throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "vpoc/types.hpp"

namespace vpoc::gpu {

// Compiled backend: "cuda", "hip" or "none".
const char* backend();
bool available();
// GPUs the runtime sees (0 without a backend or a driver).
int device_count();
// Throws ValueError unless 0 <= device < device_count().
void require_device(int device);

// DLPack device type of this backend's memory: kDLCUDA (2) on NVIDIA, kDLROCM (10) on AMD.
int dlpack_device_type();

// Memory that stays alive while any array views it (the device frees it with the last view).
struct Buffer {
  void* data = nullptr;
  size_t bytes = 0;
  int device = -1;  // -1: host memory
};
using BufferPtr = std::shared_ptr<Buffer>;

// The point in a stream after which a result is complete (an event); null when already complete.
struct Ready {
  std::shared_ptr<void> event;
  int device = -1;
};
// Makes `consumer_stream` (a raw stream handle; 0 = legacy default) wait for `ready`.
void wait(const Ready& ready, std::uintptr_t consumer_stream);
// Blocks the host until `ready`, then copies `bytes` from device memory to host memory.
void copy_to_host(void* dst, const void* src, size_t bytes, int device, const Ready& ready);

struct MemoryStats {
  int64_t workspace_bytes = 0;  // the reusable scratch + staging workspace now held
  int64_t peak_bytes = 0;       // most workspace bytes ever held
  int64_t allocs = 0;           // workspace device allocations so far
  int64_t frees = 0;            // workspace device frees so far
  int64_t output_allocs = 0;    // result allocations (one or two per call)
  int64_t output_frees = 0;
  int64_t output_bytes = 0;     // result bytes alive now
};
MemoryStats memory_stats(int device);

}  // namespace vpoc::gpu
