// gpu/runtime.cu — device discovery, per-device state (workspace, result pool, events) and the
// vpoc::gpu public functions. Contract: every runtime failure is a typed exception; device memory
// is taken with plain mallocs (no stream-ordered driver pools) and reused in stream order.
#include "gpu/runtime.hpp"

#include <algorithm>
#include <atomic>
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
  for (auto& e : slot_events_) VPOC_GPU_CHECK(gpuEventCreateWithFlags(&e, gpuEventDisableTiming));
  VPOC_GPU_CHECK(gpuEventCreateWithFlags(&summary_event_, gpuEventDisableTiming));
}

int64_t DeviceState::rows_hint(uint64_t key) const {
  for (const RowsHint& h : hints_)
    if (h.key == key) return h.rows;
  return 0;
}

void DeviceState::note_fit(uint64_t key, int64_t rows) {
  for (RowsHint& h : hints_) {
    if (h.key != key) continue;
    if (rows * 2 >= h.rows) {
      h.small = 0;
      h.recent = 0;
    } else {
      h.recent = std::max(h.recent, rows);
      if (++h.small >= kShrinkCalls) {
        h.rows = h.recent;
        h.small = 0;
        h.recent = 0;
      }
    }
    return;
  }
}

bool DeviceState::fractional_hint(uint64_t key) const {
  for (const RowsHint& h : hints_)
    if (h.key == key) return h.fractional;
  return false;
}

void DeviceState::note_fractional(uint64_t key) {
  for (RowsHint& h : hints_)
    if (h.key == key) h.fractional = true;
}

void DeviceState::note_rows(uint64_t key, int64_t rows) {
  auto it = std::find_if(hints_.begin(), hints_.end(), [&](const RowsHint& h) { return h.key == key; });
  RowsHint h{key, rows};
  if (it != hints_.end()) {
    h.rows = std::max(h.rows, it->rows);  // the largest seen: calls of a shape vary a little
    h.fractional = it->fractional;
    hints_.erase(it);
  } else if (hints_.size() == kHints) {
    hints_.pop_back();
  }
  hints_.insert(hints_.begin(), h);
}

void* DeviceState::driver_malloc(size_t bytes) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    void* p = nullptr;
    if (gpuMalloc(&p, bytes) == gpuSuccess) {
      std::lock_guard<std::mutex> lock(pool_mutex_);
      stats_.driver_allocs += 1;
      return p;
    }
    (void)gpuGetLastError();
    // cached results may be what fills the device: give them back, try once more
    std::lock_guard<std::mutex> lock(pool_mutex_);
    trim(0);
  }
  return nullptr;
}

void DeviceState::driver_free(void* p) {
  (void)gpuFree(p);
  (void)gpuGetLastError();
  std::lock_guard<std::mutex> lock(pool_mutex_);
  stats_.driver_frees += 1;
}

void DeviceState::free_workspace() {
  if (ws_ == nullptr) return;
  VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));  // kernels in flight may still read it
  VPOC_GPU_CHECK(gpuStreamSynchronize(copy_stream_));
  driver_free(ws_);
  ws_ = nullptr;
  ws_bytes_ = 0;
  std::lock_guard<std::mutex> lock(pool_mutex_);
  stats_.frees += 1;
  stats_.workspace_bytes = 0;
}

void* DeviceState::workspace(size_t bytes) {
  if (bytes <= ws_bytes_) return ws_;
  bytes = std::max(align_up(bytes), size_t(1) << 20);  // at least 1 MiB: small calls never regrow
  DeviceGuard guard(device_);
  free_workspace();
  void* p = driver_malloc(bytes);
  if (p == nullptr)
    VPOC_THROW(OutOfMemoryError, "could not allocate the ", bytes, "-byte GPU workspace on device ",
               device_, "; lower memory_budget or free GPU memory");
  ws_ = p;
  ws_bytes_ = bytes;
  std::lock_guard<std::mutex> lock(pool_mutex_);
  stats_.allocs += 1;
  stats_.workspace_bytes = static_cast<int64_t>(bytes);
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.workspace_bytes);
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
    std::lock_guard<std::mutex> lock(pool_mutex_);
    stats_.driver_frees += 1;
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
  std::lock_guard<std::mutex> lock(pool_mutex_);
  stats_.driver_allocs += 1;
  return pinned_;
}

void* DeviceState::small_pinned() {
  if (small_pinned_ == nullptr) {
    DeviceGuard guard(device_);
    void* host = nullptr;
    VPOC_GPU_CHECK(gpuMallocHost(&host, kSmallPinned));
    void* dev = nullptr;
    const gpuError_t e = gpuHostGetDevicePointer(&dev, host);
    if (e != gpuSuccess) {  // kept only with its device address (the layout writes the summary there)
      (void)gpuFreeHost(host);
      throw_gpu_error(e, "gpuHostGetDevicePointer (summary staging)", __FILE__, __LINE__);
    }
    small_pinned_ = host;
    small_pinned_device_ = dev;
    std::lock_guard<std::mutex> lock(pool_mutex_);
    stats_.driver_allocs += 1;
  }
  return small_pinned_;
}

void* DeviceState::small_pinned_device() {
  small_pinned();
  return small_pinned_device_;
}

gpuEvent_t DeviceState::take_event() {
  if (!free_events_.empty()) {
    gpuEvent_t e = free_events_.back();
    free_events_.pop_back();
    return e;
  }
  gpuEvent_t e = nullptr;
  VPOC_GPU_CHECK(gpuEventCreateWithFlags(&e, gpuEventDisableTiming));
  return e;
}

std::shared_ptr<void> DeviceState::event() {
  gpuEvent_t e = nullptr;
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    e = take_event();
  }
  return std::shared_ptr<void>(e, [this](void* ev) {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    free_events_.push_back(static_cast<gpuEvent_t>(ev));
  });
}

namespace {
// Size classes, so that the varying sizes of a training loop's results reuse the same buffers:
// powers of two up to 1 MiB (at least 512 bytes), then multiples of 1 MiB.
size_t size_class(size_t bytes) {
  constexpr size_t kMiB = size_t(1) << 20;
  if (bytes >= kMiB) return (bytes + kMiB - 1) / kMiB * kMiB;
  size_t c = 512;
  while (c < bytes) c *= 2;
  return c;
}
}  // namespace

BufferPtr DeviceState::output(size_t bytes, gpuStream_t stream) {
  size_t n = size_class(std::max<size_t>(bytes, 1));
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    // Best fit among cached buffers no more than 25% (+1 MiB) larger than asked for.
    const size_t most = n + n / 4 + (size_t(1) << 20);
    size_t best = cached_.size();
    for (size_t k = 0; k < cached_.size(); ++k)
      if (cached_[k].bytes >= n && cached_[k].bytes <= most &&
          (best == cached_.size() || cached_[k].bytes < cached_[best].bytes))
        best = k;
    if (best != cached_.size()) {
      Cached c = std::move(cached_[best]);
      cached_[best] = std::move(cached_.back());
      cached_.pop_back();
      cached_bytes_ -= c.bytes;
      // Stream-ordered reuse, no host wait: the stream waits for the buffer's earlier users. The
      // entry keeps its events until every wait is queued: a failure puts it back as it was.
      gpuError_t err = gpuSuccess;
      for (size_t k = 0; k < c.after.size() && err == gpuSuccess; ++k)
        // recorded on this very stream: its work is in order already (no API call)
        if (c.on[k] != reinterpret_cast<std::uintptr_t>(stream)) err = gpuStreamWaitEvent(stream, c.after[k]);
      for (size_t k = 0; k < c.later.size() && err == gpuSuccess; ++k) {  // usually the same stream: nothing
        const std::uintptr_t s = c.later[k];
        if (s == reinterpret_cast<std::uintptr_t>(stream)) continue;
        gpuEvent_t e = nullptr;  // back to the pool at once: the wait took its state
        if (free_events_.empty()) {
          err = gpuEventCreateWithFlags(&e, gpuEventDisableTiming);
        } else {
          e = free_events_.back();
          free_events_.pop_back();
        }
        if (err == gpuSuccess) err = gpuEventRecord(e, reinterpret_cast<gpuStream_t>(s));
        if (err == gpuSuccess) err = gpuStreamWaitEvent(stream, e);
        if (e != nullptr) free_events_.push_back(e);
      }
      if (err != gpuSuccess) {
        cached_.push_back(std::move(c));
        cached_bytes_ += cached_.back().bytes;
        throw_gpu_error(err, "gpuStreamWaitEvent (result pool)", __FILE__, __LINE__);
      }
      for (const gpuEvent_t e : c.after) free_events_.push_back(e);
      p = c.data;
      n = c.bytes;  // the buffer's real size: it returns to the pool as that
      stats_.pool_hits += 1;
    }
  }
  if (p == nullptr) {
    DeviceGuard guard(device_);
    p = driver_malloc(n);
    if (p == nullptr)
      VPOC_THROW(OutOfMemoryError, "could not allocate ", n, " bytes for results on device ", device_,
                 " (out of memory); free GPU memory (drop results, vpoc.empty_cache())");
    std::lock_guard<std::mutex> lock(pool_mutex_);
    stats_.pool_bytes += static_cast<int64_t>(n);
  }
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    stats_.output_allocs += 1;
    stats_.output_bytes += static_cast<int64_t>(n);
  }
  auto* buffer = new Buffer;
  buffer->data = p;
  buffer->bytes = n;
  buffer->device = device_;
  // vpoc's own stream needs no event at release: every call waits for the previous one (last_call).
  if (stream != stream_) buffer->streams.push_back(reinterpret_cast<std::uintptr_t>(stream));
  return BufferPtr(buffer, [this](Buffer* b) { release(b); });
}

void DeviceState::release(Buffer* b) {
  std::unique_ptr<Buffer> owned(b);
  int previous = 0;
  // At interpreter exit the runtime may already be gone: then the memory goes with the process.
  if (gpuGetDevice(&previous) != gpuSuccess) {
    (void)gpuGetLastError();
    return;
  }
  (void)gpuSetDevice(device_);
  std::vector<std::uintptr_t> streams;
  {
    std::lock_guard<std::mutex> lock(b->streams_mutex);
    streams = b->streams;
  }
  // No stream (it never left vpoc's stream): reusable in stream order as it is, no event.
  std::sort(streams.begin(), streams.end());
  streams.erase(std::unique(streams.begin(), streams.end()), streams.end());
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    Cached c{b->data, b->bytes, {}, {}, {}};
    bool unordered = false;
    // Used on one stream only, one that cannot be destroyed (torch's default stream, vpoc's own):
    // its handle still names it at the reuse, so its event waits until then (a training loop
    // reuses on that same stream: no event at all). Several streams: an event each now, so a
    // reuse on one of them does not wait for what the others queue later.
    if (streams.size() == 1 && permanent(streams[0]) == streams[0]) {
      c.later.push_back(streams[0]);
      streams.clear();
    }
    for (const std::uintptr_t s : streams) {
      gpuEvent_t e = nullptr;
      try {
        e = take_event();
      } catch (const Error&) {
        unordered = true;
        break;
      }
      if (gpuEventRecord(e, reinterpret_cast<gpuStream_t>(s)) != gpuSuccess) {
        (void)gpuGetLastError();  // a consumer stream destroyed since: order by a full wait instead
        free_events_.push_back(e);
        unordered = true;
        continue;
      }
      c.after.push_back(e);
      c.on.push_back(permanent(s));  // a destroyed stream's handle may come back: no skip on it
    }
    if (unordered) {
      (void)gpuDeviceSynchronize();
      (void)gpuGetLastError();
    }
    stats_.output_frees += 1;
    stats_.output_bytes -= static_cast<int64_t>(c.bytes);
    cached_bytes_ += c.bytes;
    cached_.push_back(std::move(c));
    if (cached_bytes_ > pool_limit_) trim(pool_limit_);
  }
  (void)gpuSetDevice(previous);
}

void DeviceState::trim(size_t keep) {
  // Oldest first (the front of the cache); freeing syncs the device, so no event needs waiting.
  size_t k = 0;
  while (cached_bytes_ > keep && k < cached_.size()) {
    Cached& c = cached_[k++];
    (void)gpuFree(c.data);
    (void)gpuGetLastError();
    stats_.driver_frees += 1;
    stats_.pool_bytes -= static_cast<int64_t>(c.bytes);
    cached_bytes_ -= c.bytes;
    for (gpuEvent_t e : c.after) free_events_.push_back(e);
  }
  cached_.erase(cached_.begin(), cached_.begin() + static_cast<std::ptrdiff_t>(k));
}

void DeviceState::empty_cache() {
  std::lock_guard<std::mutex> call(mutex_);  // no call is using the workspace meanwhile
  DeviceGuard guard(device_);
  VPOC_GPU_CHECK(gpuStreamSynchronize(stream_));
  VPOC_GPU_CHECK(gpuStreamSynchronize(copy_stream_));
  free_workspace();
  if (pinned_ != nullptr) {
    (void)gpuFreeHost(pinned_);
    pinned_ = nullptr;
    pinned_bytes_ = 0;
    std::lock_guard<std::mutex> lock(pool_mutex_);
    stats_.driver_frees += 1;
  }
  std::lock_guard<std::mutex> lock(pool_mutex_);
  trim(0);
}

void DeviceState::set_pool_limit(int64_t bytes) {
  if (bytes < 0) VPOC_THROW(ValueError, "pool limit must be >= 0 bytes, got ", bytes);
  std::lock_guard<std::mutex> lock(pool_mutex_);
  pool_limit_ = static_cast<size_t>(bytes);
  if (cached_bytes_ > pool_limit_) {
    DeviceGuard guard(device_);
    trim(pool_limit_);
  }
}

void DeviceState::count_speculative(bool rerun, bool fused) {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  if (rerun) stats_.speculative_reruns += 1;
  else stats_.speculative_calls += 1;
  if (!rerun && fused) stats_.fused_bar_calls += 1;
}

namespace {
std::atomic<bool> g_speculation{true};
}  // namespace
void set_speculation(bool enabled) { g_speculation.store(enabled); }
bool speculation() { return g_speculation.load(); }

MemoryStats DeviceState::stats() {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  MemoryStats s = stats_;
  s.pool_cached_bytes = static_cast<int64_t>(cached_bytes_);
  s.pool_limit_bytes = static_cast<int64_t>(pool_limit_);
  return s;
}

DeviceState& state(int device) {
  static std::mutex m;
  static auto* states = new std::map<int, DeviceState*>();  // never destroyed: no exit-order issues
  std::lock_guard<std::mutex> lock(m);
  auto it = states->find(device);
  if (it == states->end()) it = states->emplace(device, new DeviceState(device)).first;
  return *it->second;
}

void allocate_session_columns(DeviceState& st, DeviceProfiles& out, int64_t S, gpuStream_t stream) {
  const size_t col = align_up(static_cast<size_t>(S + 1) * 8);
  out.sessions_mem = st.output(col * 11, stream);
  char* base = static_cast<char*>(out.sessions_mem->data);
  const auto column = [&](int k, int64_t size, DType dt) { return DeviceColumn{base + k * col, size, dt}; };
  out.offsets = column(0, S + 1, DType::i64);
  out.n_rows = column(1, S, DType::i64);
  out.low_row = column(2, S, DType::i64);
  out.poc_row = column(3, S, DType::i64);
  out.vah_row = column(4, S, DType::i64);
  out.val_row = column(5, S, DType::i64);
  out.poc = column(6, S, DType::f64);
  out.vah = column(7, S, DType::f64);
  out.val = column(8, S, DType::f64);
  out.total_volume = column(9, S, DType::f64);
  out.va_volume = column(10, S, DType::f64);
}

Ready record_ready(gpuStream_t stream, int device) {
  DeviceState& st = state(device);
  Ready r;
  r.device = device;
  r.event = st.event();
  r.stream = st.permanent(reinterpret_cast<std::uintptr_t>(stream));
  VPOC_GPU_CHECK(gpuEventRecord(static_cast<gpuEvent_t>(r.event.get()), stream));
  return r;
}

void note_stream(Buffer& buffer, std::uintptr_t stream) {
  if (buffer.device < 0) return;  // host memory
  std::lock_guard<std::mutex> lock(buffer.streams_mutex);
  if (std::find(buffer.streams.begin(), buffer.streams.end(), stream) == buffer.streams.end())
    buffer.streams.push_back(stream);
}

const char* backend() { return kBackend; }

// Read once per process: the runtime fixes the visible devices at its initialisation, and every
// call checks its device against this (the query cost two runtime calls per call before).
int device_count() {
  static const int n = [] {
    int count = 0;
    if (gpuGetDeviceCount(&count) != gpuSuccess) {
      (void)gpuGetLastError();  // no driver / no device: not an error for discovery
      return 0;
    }
    return count;
  }();
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
  // the producer's own stream runs its work in order: waiting there would be a no-op API call
  if (!ready.event || consumer_stream == ready.stream) return;
  DeviceGuard guard(ready.device);
  VPOC_GPU_CHECK(gpuStreamWaitEvent(reinterpret_cast<gpuStream_t>(consumer_stream),
                                    static_cast<gpuEvent_t>(ready.event.get())));
}

void synchronize_stream(int device, std::uintptr_t stream) {
  DeviceGuard guard(device);
  VPOC_GPU_CHECK(gpuStreamSynchronize(reinterpret_cast<gpuStream_t>(stream)));
}

void synchronize(const Ready& ready) {
  if (!ready.event) return;
  DeviceGuard guard(ready.device);
  VPOC_GPU_CHECK(gpuEventSynchronize(static_cast<gpuEvent_t>(ready.event.get())));
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

void empty_cache(int device) {
  require_device(device);
  state(device).empty_cache();
}

void set_pool_limit(int device, int64_t bytes) {
  require_device(device);
  state(device).set_pool_limit(bytes);
}

void wait_before_call(DeviceState& st, gpuStream_t stream, const std::vector<std::uintptr_t>& producers) {
  if (st.last_call && st.last_call_stream != reinterpret_cast<std::uintptr_t>(stream))
    VPOC_GPU_CHECK(gpuStreamWaitEvent(stream, static_cast<gpuEvent_t>(st.last_call.get())));
  for (const std::uintptr_t producer : producers) {
    if (reinterpret_cast<gpuStream_t>(producer) == stream) continue;
    const std::shared_ptr<void> ev = st.event();
    const auto e = static_cast<gpuEvent_t>(ev.get());
    VPOC_GPU_CHECK(gpuEventRecord(e, reinterpret_cast<gpuStream_t>(producer)));
    VPOC_GPU_CHECK(gpuStreamWaitEvent(stream, e));
  }
}

void allocate_developing_columns(DeviceState& st, DeviceProfiles& out, int64_t n, gpuStream_t stream) {
  const size_t col = align_up(static_cast<size_t>(std::max<int64_t>(n, 1)) * 8);
  out.developing_mem = st.output(3 * col, stream);
  char* base = static_cast<char*>(out.developing_mem->data);
  out.dev_poc = DeviceColumn{base, n, DType::f64};
  out.dev_vah = DeviceColumn{base + col, n, DType::f64};
  out.dev_val = DeviceColumn{base + 2 * col, n, DType::f64};
}

}  // namespace vpoc::gpu
