// core/gpu_none.cpp — vpoc::gpu for builds without a GPU backend (VPOC_GPU_BACKEND=none).
// Contract: nothing is available; every call that needs a GPU throws a ValueError saying how to build one.
#include "vpoc/errors.hpp"
#include "vpoc/gpu.hpp"

namespace vpoc::gpu {
namespace {
[[noreturn]] void no_backend() {
  VPOC_THROW(ValueError,
             "this vpoc build has no GPU backend; rebuild it with "
             "pip install . -Ccmake.define.VPOC_GPU_BACKEND=cuda (NVIDIA) or "
             "-Ccmake.define.VPOC_GPU_BACKEND=hip (AMD ROCm)");
}
}  // namespace

const char* backend() { return "none"; }
bool available() { return false; }
int device_count() { return 0; }
void require_device(int) { no_backend(); }
int dlpack_device_type() { return 1; }
std::vector<DeviceInfo> devices() { return {}; }
int runtime_version() { return -1; }
int driver_version() { return -1; }
void wait(const Ready&, std::uintptr_t) { no_backend(); }
void synchronize_stream(int, std::uintptr_t) { no_backend(); }
void synchronize(const Ready& ready) {
  if (ready.event) no_backend();
}
void copy_to_host(void*, const void*, size_t, int, const Ready&) { no_backend(); }
MemoryStats memory_stats(int) { no_backend(); }
void empty_cache(int) { no_backend(); }
void set_pool_limit(int, int64_t) { no_backend(); }
void note_stream(Buffer&, std::uintptr_t) {}
void set_speculation(bool) {}
bool speculation() { return false; }
DeviceProfiles profile_trades(const Array&, const Array&, const SessionSpan&, const Options&,
                              const GpuOptions&, SideJob*) {
  no_backend();
}
DeviceProfiles profile_bars(const BarsInput&, const SessionSpan&, Distribute, const Options&,
                            const GpuOptions&) {
  no_backend();
}
SideDeviceColumns side_levels(const SideRows&, const Options&, const SideRules&, const GpuOptions&, Ready&) {
  no_backend();
}
DeviceProfiles profile_bins(const Array*, const Array&, const BarsInput*, const SessionSpan&, const Options&,
                            const GpuOptions&, std::vector<double>&, std::vector<double>&) {
  no_backend();
}

}  // namespace vpoc::gpu
