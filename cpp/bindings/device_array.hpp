// bindings/device_array.hpp — vpoc._core.DeviceArray: a 1-D (or [n, cols]) result in GPU (or host) memory, zero-copy.
// Contract: every export (DLPack, CAI, NumPy view) keeps `owner` alive; GPU data is synchronized first.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>

#include "vpoc/gpu.hpp"
#include "vpoc/types.hpp"

namespace vpoc_bind {

namespace py = pybind11;

// A contiguous 1-D array of `size` elements of `dtype` at `data` (or, with cols > 0, the 2-D
// array [size, cols] whose column k is the `size` elements at data + k * col_stride), in memory of DLPack device
// (device_type, device_id): 1 = host memory (kDLCPU, device_id 0), 2 = CUDA, 10 = ROCm.
// `owner` frees the memory with its last reference; `ready` marks when the producing GPU work is
// complete (null event: already complete). Host memory (device_type 1) never calls vpoc::gpu.
struct DeviceArray {
  vpoc::gpu::BufferPtr owner;
  void* data = nullptr;
  int64_t size = 0;
  vpoc::DType dtype = vpoc::DType::f64;
  int device_type = 1;
  int device_id = 0;
  vpoc::gpu::Ready ready;
  bool read_only = false;  // exported as read-only (DLPack flag, CAI data[1], NumPy views)
  int64_t cols = 0;        // 0: 1-D; else the number of columns (shape [size, cols])
  int64_t col_stride = 0;  // elements from one column's start to the next's (>= size)
};

// Registers vpoc._core.DeviceArray on `m` (call once, before make_device_array).
void register_device_array(py::module_& m);

// The NumPy dtype of an engine dtype.
py::dtype numpy_dtype(vpoc::DType dt);

// The engine's factory: wraps a result buffer as a Python DeviceArray. Needs the GIL.
// Throws vpoc::ValueError for a negative size, a null owner, an unknown device_type, or columns
// that overlap (cols > 0 with col_stride < size).
py::object make_device_array(vpoc::gpu::BufferPtr owner, void* data, int64_t size, vpoc::DType dt,
                             int device_type, int device_id, vpoc::gpu::Ready ready,
                             bool read_only = false, int64_t cols = 0, int64_t col_stride = 0);

// Test-only (exposed as _core._host_device_array): a DeviceArray in host memory (kDLCPU) holding
// a copy of the 1-D float32/float64/int32/int64 array `array` (2-D [n, cols]: its columns col_stride
// elements apart, default n, as Profiles.levels exports them). A device_type other than 1 only
// LABELS that host memory as GPU memory (with nothing pending), to test stream-argument checks and
// __cuda_array_interface__ without a GPU: never let a consumer import such an array.
py::object host_device_array(const py::object& array, int device_type = 1, int device_id = 0,
                             int64_t col_stride = -1);

}  // namespace vpoc_bind
