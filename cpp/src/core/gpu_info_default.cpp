// core/gpu_info_default.cpp — weak stand-ins for vpoc::gpu::devices() and the version queries in GPU builds.
// Contract: a GPU backend's strong definitions (gpu/runtime.cu) replace these; until then they report "unknown".
#include "vpoc/gpu.hpp"

namespace vpoc::gpu {

__attribute__((weak)) std::vector<DeviceInfo> devices() { return {}; }
__attribute__((weak)) int runtime_version() { return -1; }
__attribute__((weak)) int driver_version() { return -1; }

}  // namespace vpoc::gpu
