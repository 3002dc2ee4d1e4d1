// gpu/device_info.cu — the GPUs the runtime sees (name, architecture, memory, whether this build's
// kernels load on them) and the runtime / driver versions, for vpoc doctor. Contract: never throws.
#include <string>
#include <vector>

#include "gpu/runtime.hpp"
#include "gpu/vendor.hpp"
#include "vpoc/gpu.hpp"

namespace vpoc::gpu {
namespace {

// An empty kernel compiled like every other: if the runtime finds no image of it for a device,
// none of vpoc's kernels can run there.
__global__ void probe_kernel() {}

// Fills the kernel-image fields of `info` for the current device.
void probe_code(DeviceInfo& info) {
  gpuFuncAttributes attr{};
  const gpuError_t e = gpuFuncGetAttributes(&attr, reinterpret_cast<const void*>(&probe_kernel));
  if (e != gpuSuccess) {
    info.code_error = std::string(gpuGetErrorName(e)) + " (" + gpuGetErrorString(e) + ")";
    (void)gpuGetLastError();
    return;
  }
  info.has_code = true;
  info.binary_version = attr.binaryVersion;
  info.ptx_version = attr.ptxVersion;
}

// A version the runtime reports through get (gpuRuntimeGetVersion, gpuDriverGetVersion); -1 when it fails.
int version_of(gpuError_t (*get)(int*)) {
  int v = 0;
  if (get(&v) != gpuSuccess) {
    (void)gpuGetLastError();
    return -1;
  }
  return v;
}

}  // namespace

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> out;
  try {
    const int n = device_count();
    for (int d = 0; d < n; ++d) {
      DeviceInfo info;
      info.index = d;
      gpuDeviceProp prop{};
      if (gpuGetDeviceProperties(&prop, d) != gpuSuccess) {
        (void)gpuGetLastError();
        info.code_error = "the runtime could not read this device's properties";
        out.push_back(info);
        continue;
      }
      info.name = prop.name;
      info.arch = gpuArchName(prop);
      info.total_memory = static_cast<int64_t>(prop.totalGlobalMem);
      DeviceGuard guard(d);
      probe_code(info);
      out.push_back(info);
    }
  } catch (const std::exception&) {  // a runtime failure mid-way: report what was read
    (void)gpuGetLastError();
  }
  return out;
}

int runtime_version() { return version_of(gpuRuntimeGetVersion); }

int driver_version() { return version_of(gpuDriverGetVersion); }  // 0: no driver installed

}  // namespace vpoc::gpu
