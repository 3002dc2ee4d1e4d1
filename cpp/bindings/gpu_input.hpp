// bindings/gpu_input.hpp — the one reader of a foreign GPU array: torch tensors, __cuda_array_interface__, DLPack.
// Contract: reads an array's description only (never its memory); a bad GPU array raises TypeError/ValueError naming it.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>

#include "vpoc/types.hpp"

namespace vpoc_bind {

namespace py = pybind11;

// The dtypes a GPU input may have: prices float32/float64; volumes also int32/int64.
enum class Kinds { floats, numbers };

// A GPU array as the engine reads it, with what orders the engine's work after its producer's.
struct GpuInput {
  enum class Stream {
    none,    // nothing to wait for (CAI stream None)
    handle,  // wait for the raw stream `stream` (0: the legacy default stream, 2: the per-thread one)
    torch,   // a torch tensor: its producer is torch's current stream of its device (Python reads it)
  };
  vpoc::Array array;  // data (byte_offset applied), size, dtype, device; name set by the engine's binding
  Stream stream_kind = Stream::none;
  std::uintptr_t stream = 0;
  py::object keep;  // keeps the described memory alive for the call (a DLPack capsule), or None
};

// The GPU index of `x` when it lives in GPU memory (a CUDA torch tensor, a __cuda_array_interface__,
// a DLPack device of type CUDA (2), CUDA managed (13) or ROCm (10)); -1 for anything else.
int gpu_location(const py::handle& x);

// `x` read as the GPU input `name`: true and `out` filled for a GPU array; false (out untouched) for
// host data. A GPU array that is not 1-D, not contiguous, masked, or of a dtype outside `kinds`
// raises TypeError/ValueError naming `name`. `host_ok` (tests only): a kDLCPU DLPack capsule is read too.
bool read_gpu_input(const py::handle& x, const char* name, Kinds kinds, GpuInput& out, bool host_ok = false);

// Registers GpuInput, gpu_location, gpu_inputs and the test hooks _parse_gpu_input / _torch_fields.
void register_gpu_input(py::module_& m);

// The GpuInput held by `obj` when it is one (a gpu_inputs result), else nullptr.
const GpuInput* as_gpu_input(const py::handle& obj);

}  // namespace vpoc_bind
