// gpu/runtime.cu — device discovery, per-device state and the vpoc::gpu public functions.
// Contract: every runtime failure is a typed exception; device memory is taken with plain mallocs.
#include "gpu/runtime.hpp"

#include <algorithm>
#include <map>

namespace vpoc::gpu {

DeviceGuard::DeviceGuard(int device) {
  VPOC_GPU_CHECK(gpuGetDevice(&previous_));
  if (previous_ != device) VPOC_GPU_CHECK(gpuSetDevice(device));
}
DeviceGuard::~DeviceGuard() { (void)gpuSetDevice(previous_); }

DeviceState::DeviceState(int device) : device_(device) {
  DeviceGuard guard(device);
  VPOC_GPU_CHECK(gpuStreamCreateWithFlags(&stream_, gpuStreamNonBlocking));
  VPOC_GPU_CHECK(gpuStreamCreateWithFlags(&copy_stream_, gpuStreamNonBlocking));
}

void* DeviceState::workspace(size_t bytes) {
  if (bytes <= ws_bytes_) return ws_;
  bytes = std::max(align_up(bytes), size_t(1) << 20);  // at least 1 MiB: small calls never regrow
  DeviceGuard guard(device_);
  if (ws_ != nullptr) {
    VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));  // kernels in flight may still read it
    VPOC_GPU_CHECK(gpuStreamSynchronize(copy_stream_));
    VPOC_GPU_CHECK(gpuFree(ws_));
    ws_ = nullptr;
    std::lock_guard<std::mutex> lock(*stats_mutex_);
    stats_->frees += 1;
    stats_->workspace_bytes = 0;
  }
  void* p = nullptr;
  const gpuError_t e = gpuMalloc(&p, bytes);
  if (e != gpuSuccess) {
    (void)gpuGetLastError();
    ws_bytes_ = 0;
    VPOC_THROW(OutOfMemoryError, "could not allocate the ", bytes, "-byte GPU workspace on device ",
               device_, " (", gpuGetErrorName(e), "); lower memory_budget or free GPU memory");
  }
  ws_ = p;
  ws_bytes_ = bytes;
  std::lock_guard<std::mutex> lock(*stats_mutex_);
  stats_->allocs += 1;
  stats_->workspace_bytes = static_cast<int64_t>(bytes);
  stats_->peak_bytes = std::max(stats_->peak_bytes, stats_->workspace_bytes);
  return ws_;
}

void* DeviceState::pinned(size_t bytes) {
  if (bytes <= pinned_bytes_) return pinned_;
  bytes = std::max(align_up(bytes), size_t(1) << 20);
  DeviceGuard guard(device_);
  if (pinned_ != nullptr) {
    VPOC_GPU_CHECK(gpuStreamSynchronize(copy_stream_));
    VPOC_GPU_CHECK(gpuFreeHost(pinned_));
    pinned_ = nullptr;
    pinned_bytes_ = 0;
  }
  void* p = nullptr;
  const gpuError_t e = gpuMallocHost(&p, bytes);
  if (e != gpuSuccess) {
    (void)gpuGetLastError();
    VPOC_THROW(OutOfMemoryError, "could not allocate ", bytes, " bytes of pinned host staging (",
               gpuGetErrorName(e), "); lower memory_budget");
  }
  pinned_ = p;
  pinned_bytes_ = bytes;
  return pinned_;
}

void* DeviceState::small_pinned() {
  if (small_pinned_ == nullptr) {
    DeviceGuard guard(device_);
    VPOC_GPU_CHECK(gpuMallocHost(&small_pinned_, kSmallPinned));
  }
  return small_pinned_;
}

BufferPtr DeviceState::output(size_t bytes) {
  DeviceGuard guard(device_);
  void* p = nullptr;
  const size_t n = std::max<size_t>(bytes, 256);
  const gpuError_t e = gpuMalloc(&p, n);
  if (e != gpuSuccess) {
    (void)gpuGetLastError();
    VPOC_THROW(OutOfMemoryError, "could not allocate ", n, " bytes for results on device ", device_,
               " (", gpuGetErrorName(e), ")");
  }
  {
    std::lock_guard<std::mutex> lock(*stats_mutex_);
    stats_->output_allocs += 1;
    stats_->output_bytes += static_cast<int64_t>(n);
  }
  const int device = device_;
  auto stats = stats_;
  auto mutex = stats_mutex_;
  auto* buffer = new Buffer{p, n, device};
  return BufferPtr(buffer, [stats, mutex](Buffer* b) {
    int previous = 0;
    // Errors are ignored here: at interpreter exit the runtime may already be gone.
    if (gpuGetDevice(&previous) == gpuSuccess) {
      (void)gpuSetDevice(b->device);
      (void)gpuFree(b->data);
      (void)gpuSetDevice(previous);
    }
    (void)gpuGetLastError();
    {
      std::lock_guard<std::mutex> lock(*mutex);
      stats->output_frees += 1;
      stats->output_bytes -= static_cast<int64_t>(b->bytes);
    }
    delete b;
  });
}

MemoryStats DeviceState::stats() {
  std::lock_guard<std::mutex> lock(*stats_mutex_);
  return *stats_;
}

DeviceState& state(int device) {
  static std::mutex m;
  static auto* states = new std::map<int, DeviceState*>();  // never destroyed: no exit-order issues
  std::lock_guard<std::mutex> lock(m);
  auto it = states->find(device);
  if (it == states->end()) it = states->emplace(device, new DeviceState(device)).first;
  return *it->second;
}

Ready record_ready(gpuStream_t stream, int device) {
  gpuEvent_t ev = nullptr;
  VPOC_GPU_CHECK(gpuEventCreateWithFlags(&ev, gpuEventDisableTiming));
  VPOC_GPU_CHECK(gpuEventRecord(ev, stream));
  Ready r;
  r.device = device;
  r.event = std::shared_ptr<void>(ev, [](void* e) { (void)gpuEventDestroy(static_cast<gpuEvent_t>(e)); });
  return r;
}

const char* backend() { return kBackend; }

int device_count() {
  int n = 0;
  if (gpuGetDeviceCount(&n) != gpuSuccess) {
    (void)gpuGetLastError();  // no driver / no device: not an error for discovery
    return 0;
  }
  return n;
}

bool available() { return device_count() > 0; }

void require_device(int device) {
  const int n = device_count();
  if (device < 0 || device >= n)
    VPOC_THROW(ValueError, "device index ", device, " does not exist: ", n, " GPU(s) visible to the ",
               kBackend, " runtime");
}

int dlpack_device_type() { return kDLPackDevice; }

void wait(const Ready& ready, std::uintptr_t consumer_stream) {
  if (!ready.event) return;
  DeviceGuard guard(ready.device);
  VPOC_GPU_CHECK(gpuStreamWaitEvent(reinterpret_cast<gpuStream_t>(consumer_stream),
                                    static_cast<gpuEvent_t>(ready.event.get())));
}

void synchronize_stream(int device, std::uintptr_t stream) {
  DeviceGuard guard(device);
  VPOC_GPU_CHECK(gpuStreamSynchronize(reinterpret_cast<gpuStream_t>(stream)));
}

void copy_to_host(void* dst, const void* src, size_t bytes, int device, const Ready& ready) {
  DeviceGuard guard(device);
  if (ready.event) VPOC_GPU_CHECK(gpuEventSynchronize(static_cast<gpuEvent_t>(ready.event.get())));
  DeviceState& st = state(device);
  VPOC_GPU_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDeviceToHost, st.copy_stream()));
  VPOC_GPU_CHECK(gpuStreamSynchronize(st.copy_stream()));
}

MemoryStats memory_stats(int device) {
  require_device(device);
  return state(device).stats();
}

}  // namespace vpoc::gpu
