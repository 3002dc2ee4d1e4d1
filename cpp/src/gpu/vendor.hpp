// gpu/vendor.hpp — the only file that knows CUDA from HIP: neutral gpu* names and the error macro.
// Contract: kernels and launchers include this and use gpu* names only; a failed call throws.
#pragma once

#if defined(VPOC_BACKEND_HIP)
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>
#endif

#include <string>

#include "vpoc/errors.hpp"

namespace vpoc::gpu {

#if defined(VPOC_BACKEND_HIP)
constexpr const char* kBackend = "hip";
constexpr int kDLPackDevice = 10;  // kDLROCM: torch's ROCm build rejects kDLCUDA
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuEvent_t = hipEvent_t;
using gpuPointerAttributes = hipPointerAttribute_t;
constexpr gpuError_t gpuSuccess = hipSuccess;
constexpr gpuError_t gpuErrorMemoryAllocation = hipErrorOutOfMemory;
constexpr auto gpuMemcpyHostToDevice = hipMemcpyHostToDevice;
constexpr auto gpuMemcpyDeviceToHost = hipMemcpyDeviceToHost;
constexpr auto gpuMemcpyDeviceToDevice = hipMemcpyDeviceToDevice;
constexpr unsigned gpuStreamNonBlocking = hipStreamNonBlocking;
constexpr unsigned gpuEventDisableTiming = hipEventDisableTiming;
inline const char* gpuGetErrorName(gpuError_t e) { return hipGetErrorName(e); }
inline const char* gpuGetErrorString(gpuError_t e) { return hipGetErrorString(e); }
inline gpuError_t gpuGetLastError() { return hipGetLastError(); }
inline gpuError_t gpuGetDeviceCount(int* n) { return hipGetDeviceCount(n); }
inline gpuError_t gpuSetDevice(int d) { return hipSetDevice(d); }
inline gpuError_t gpuGetDevice(int* d) { return hipGetDevice(d); }
inline gpuError_t gpuMalloc(void** p, size_t n) { return hipMalloc(p, n); }
inline gpuError_t gpuFree(void* p) { return hipFree(p); }
inline gpuError_t gpuMallocHost(void** p, size_t n) { return hipHostMalloc(p, n, hipHostMallocDefault); }
inline gpuError_t gpuFreeHost(void* p) { return hipHostFree(p); }
inline gpuError_t gpuHostGetDevicePointer(void** d, void* h) { return hipHostGetDevicePointer(d, h, 0); }
inline gpuError_t gpuMemGetInfo(size_t* f, size_t* t) { return hipMemGetInfo(f, t); }
inline gpuError_t gpuMemcpyAsync(void* d, const void* s, size_t n, hipMemcpyKind k, gpuStream_t st) {
  return hipMemcpyAsync(d, s, n, k, st);
}
inline gpuError_t gpuMemsetAsync(void* d, int v, size_t n, gpuStream_t st) { return hipMemsetAsync(d, v, n, st); }
inline gpuError_t gpuStreamCreateWithFlags(gpuStream_t* s, unsigned f) { return hipStreamCreateWithFlags(s, f); }
inline gpuError_t gpuStreamSynchronize(gpuStream_t s) { return hipStreamSynchronize(s); }
inline gpuError_t gpuDeviceSynchronize() { return hipDeviceSynchronize(); }
inline gpuError_t gpuMultiprocessorCount(int* n, int d) {
  return hipDeviceGetAttribute(n, hipDeviceAttributeMultiprocessorCount, d);
}
inline gpuError_t gpuStreamWaitEvent(gpuStream_t s, gpuEvent_t e) { return hipStreamWaitEvent(s, e, 0); }
inline gpuError_t gpuEventCreateWithFlags(gpuEvent_t* e, unsigned f) { return hipEventCreateWithFlags(e, f); }
inline gpuError_t gpuEventDestroy(gpuEvent_t e) { return hipEventDestroy(e); }
inline gpuError_t gpuEventRecord(gpuEvent_t e, gpuStream_t s) { return hipEventRecord(e, s); }
inline gpuError_t gpuEventSynchronize(gpuEvent_t e) { return hipEventSynchronize(e); }
inline gpuError_t gpuPointerGetAttributes(gpuPointerAttributes* a, const void* p) {
  return hipPointerGetAttributes(a, p);
}
// Device facts for vpoc doctor: properties, the architecture name the code objects are built for
// ("gfx1100": gcnArchName without its ":sramecc+:xnack-" feature flags), versions, kernel images.
using gpuDeviceProp = hipDeviceProp_t;
using gpuFuncAttributes = hipFuncAttributes;
inline gpuError_t gpuGetDeviceProperties(gpuDeviceProp* p, int d) { return hipGetDeviceProperties(p, d); }
inline std::string gpuArchName(const gpuDeviceProp& p) {
  const std::string full = p.gcnArchName;
  return full.substr(0, full.find(':'));
}
inline gpuError_t gpuRuntimeGetVersion(int* v) { return hipRuntimeGetVersion(v); }
inline gpuError_t gpuDriverGetVersion(int* v) { return hipDriverGetVersion(v); }
inline gpuError_t gpuFuncGetAttributes(gpuFuncAttributes* a, const void* f) { return hipFuncGetAttributes(a, f); }
// Where a pointer lives: 0 pageable host, 1 pinned host, 2 device (index in *device).
inline int gpuPointerKind(const void* p, int* device) {
  gpuPointerAttributes a{};
  if (hipPointerGetAttributes(&a, p) != hipSuccess) {
    (void)hipGetLastError();  // unregistered host memory is an error on HIP: pageable
    return 0;
  }
#if HIP_VERSION_MAJOR >= 6
  const auto type = a.type;
#else
  const auto type = a.memoryType;
#endif
  *device = a.device;
  if (type == hipMemoryTypeDevice || a.isManaged) return 2;
  if (type == hipMemoryTypeHost) return 1;
  return 0;
}
#else
constexpr const char* kBackend = "cuda";
constexpr int kDLPackDevice = 2;  // kDLCUDA
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuEvent_t = cudaEvent_t;
constexpr gpuError_t gpuSuccess = cudaSuccess;
constexpr gpuError_t gpuErrorMemoryAllocation = cudaErrorMemoryAllocation;
constexpr auto gpuMemcpyHostToDevice = cudaMemcpyHostToDevice;
constexpr auto gpuMemcpyDeviceToHost = cudaMemcpyDeviceToHost;
constexpr auto gpuMemcpyDeviceToDevice = cudaMemcpyDeviceToDevice;
constexpr unsigned gpuStreamNonBlocking = cudaStreamNonBlocking;
constexpr unsigned gpuEventDisableTiming = cudaEventDisableTiming;
inline const char* gpuGetErrorName(gpuError_t e) { return cudaGetErrorName(e); }
inline const char* gpuGetErrorString(gpuError_t e) { return cudaGetErrorString(e); }
inline gpuError_t gpuGetLastError() { return cudaGetLastError(); }
inline gpuError_t gpuGetDeviceCount(int* n) { return cudaGetDeviceCount(n); }
inline gpuError_t gpuSetDevice(int d) { return cudaSetDevice(d); }
inline gpuError_t gpuGetDevice(int* d) { return cudaGetDevice(d); }
inline gpuError_t gpuMalloc(void** p, size_t n) { return cudaMalloc(p, n); }
inline gpuError_t gpuFree(void* p) { return cudaFree(p); }
inline gpuError_t gpuMallocHost(void** p, size_t n) { return cudaMallocHost(p, n); }
inline gpuError_t gpuFreeHost(void* p) { return cudaFreeHost(p); }
inline gpuError_t gpuHostGetDevicePointer(void** d, void* h) { return cudaHostGetDevicePointer(d, h, 0); }
inline gpuError_t gpuMemGetInfo(size_t* f, size_t* t) { return cudaMemGetInfo(f, t); }
inline gpuError_t gpuMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, gpuStream_t st) {
  return cudaMemcpyAsync(d, s, n, k, st);
}
inline gpuError_t gpuMemsetAsync(void* d, int v, size_t n, gpuStream_t st) { return cudaMemsetAsync(d, v, n, st); }
inline gpuError_t gpuStreamCreateWithFlags(gpuStream_t* s, unsigned f) { return cudaStreamCreateWithFlags(s, f); }
inline gpuError_t gpuStreamSynchronize(gpuStream_t s) { return cudaStreamSynchronize(s); }
inline gpuError_t gpuDeviceSynchronize() { return cudaDeviceSynchronize(); }
inline gpuError_t gpuMultiprocessorCount(int* n, int d) {
  return cudaDeviceGetAttribute(n, cudaDevAttrMultiProcessorCount, d);
}
inline gpuError_t gpuStreamWaitEvent(gpuStream_t s, gpuEvent_t e) { return cudaStreamWaitEvent(s, e, 0); }
inline gpuError_t gpuEventCreateWithFlags(gpuEvent_t* e, unsigned f) { return cudaEventCreateWithFlags(e, f); }
inline gpuError_t gpuEventDestroy(gpuEvent_t e) { return cudaEventDestroy(e); }
inline gpuError_t gpuEventRecord(gpuEvent_t e, gpuStream_t s) { return cudaEventRecord(e, s); }
inline gpuError_t gpuEventSynchronize(gpuEvent_t e) { return cudaEventSynchronize(e); }
// Device facts for vpoc doctor: properties, the architecture name ("sm_90" from the compute
// capability), versions, kernel images.
using gpuDeviceProp = cudaDeviceProp;
using gpuFuncAttributes = cudaFuncAttributes;
inline gpuError_t gpuGetDeviceProperties(gpuDeviceProp* p, int d) { return cudaGetDeviceProperties(p, d); }
inline std::string gpuArchName(const gpuDeviceProp& p) {
  return "sm_" + std::to_string(p.major) + std::to_string(p.minor);
}
inline gpuError_t gpuRuntimeGetVersion(int* v) { return cudaRuntimeGetVersion(v); }
inline gpuError_t gpuDriverGetVersion(int* v) { return cudaDriverGetVersion(v); }
inline gpuError_t gpuFuncGetAttributes(gpuFuncAttributes* a, const void* f) { return cudaFuncGetAttributes(a, f); }
// Where a pointer lives: 0 pageable host, 1 pinned host, 2 device (index in *device).
inline int gpuPointerKind(const void* p, int* device) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  *device = a.device;
  if (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) return 2;
  if (a.type == cudaMemoryTypeHost) return 1;
  return 0;
}
#endif

// Throws OutOfMemoryError (allocation failures) or DeviceError, stamped with the call site and
// the runtime's error name. Clears the runtime's sticky last-error so the next call starts clean.
[[noreturn]] inline void throw_gpu_error(gpuError_t e, const char* what, const char* file, int line) {
  (void)gpuGetLastError();
  const std::string msg =
      std::string(what) + " failed: " + gpuGetErrorName(e) + " (" + gpuGetErrorString(e) + ")";
  if (e == gpuErrorMemoryAllocation) throw OutOfMemoryError(msg, file, line);
  throw DeviceError(msg, file, line);
}

}  // namespace vpoc::gpu

// VPOC_GPU_CHECK(gpuMalloc(&p, n)): any error becomes a typed vpoc exception (never an abort).
#define VPOC_GPU_CHECK(call)                                                      \
  do {                                                                            \
    const ::vpoc::gpu::gpuError_t vpoc_err_ = (call);                             \
    if (vpoc_err_ != ::vpoc::gpu::gpuSuccess)                                     \
      ::vpoc::gpu::throw_gpu_error(vpoc_err_, #call, __FILE__, __LINE__);         \
  } while (0)

// After a kernel launch: launch-configuration errors surface here.
#define VPOC_GPU_CHECK_LAUNCH(name) VPOC_GPU_CHECK(::vpoc::gpu::gpuGetLastError())

// A kernel's most threads per block and the blocks an SM should hold at once (CUDA caps the
// registers for it). HIP reads a second argument as waves per execution unit instead, so it takes
// the first only.
#if defined(VPOC_BACKEND_HIP)
#define VPOC_LAUNCH_BOUNDS(threads, blocks_per_sm) __launch_bounds__(threads)
#else
#define VPOC_LAUNCH_BOUNDS(threads, blocks_per_sm) __launch_bounds__(threads, blocks_per_sm)
#endif
