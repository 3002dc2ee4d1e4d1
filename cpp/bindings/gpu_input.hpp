// bindings/gpu_input.hpp — the one reader of a foreign GPU array: torch tensors, __cuda_array_interface__, DLPack.
// Contract: reads an array's description only (never its memory); a bad GPU array raises TypeError/ValueError naming it.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "vpoc/types.hpp"

namespace vpoc_bind {

namespace py = pybind11;

// The dtypes a GPU input may have: prices float32/float64; volumes also int32/int64; aggressor-side
// codes int8 only (vpoc._side_profiles converts other sides on the device first).
enum class Kinds { floats, numbers, side };

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
  // A DLPack capsule (its deleter means "the consumer is done"), or None: the engine's binding keeps it
  // until the call's GPU work is complete (register_profiles.cpp: run synchronizes first).
  py::object keep;
};

// Whether a DLPack device type is host memory: kDLCPU (1), kDLCUDAHost (3), kDLROCMHost (11). The one rule
// (vpoc._arrays reads it as _core.dlpack_host_memory).
bool dlpack_host_memory(long long device_type);

// The GPU index of `x` when it lives in GPU memory (a CUDA torch tensor, a __cuda_array_interface__,
// a DLPack device of type CUDA (2), CUDA managed (13) or ROCm (10)); -1 for anything else. A malformed
// description raises TypeError/ValueError naming `name`.
int gpu_location(const py::handle& x, const char* name = "x");

// `x` read as the GPU input `name`: true and `out` filled for a GPU array; false (out untouched) for
// host data. A GPU array that is not 1-D, not contiguous, masked, of a dtype outside `kinds` (torch: not
// dense, the negative bit set) raises TypeError/ValueError naming `name`. `consumer`: the raw stream the
// call runs on (0: the legacy default), passed to DLPack producers as __dlpack__(stream=...) so that
// their work is ordered before it. `host_ok` (tests only): a kDLCPU DLPack capsule is read too.
bool read_gpu_input(const py::handle& x, const char* name, Kinds kinds, GpuInput& out, std::uintptr_t consumer = 0,
                    bool host_ok = false);

// The torch fast read of any torch tensor (CPU too; test hook): as read_gpu_input's; name nullptr: false
// where it would raise. TypeError when `x` is not a torch tensor.
bool torch_fields_any(const py::handle& x, Kinds kinds, GpuInput& out, const char* name);

// Helpers of the bindings (register_gpu_input.cpp): 'f4', 'f8', 'i4', 'i8'; a GpuInput's stream as
// Python sees it (handle, None or 'torch'); 'f' / 'fi' as Kinds; the TypeError of host data.
const char* typestr_of(vpoc::DType dt);
py::object stream_of(const GpuInput& g);
Kinds kinds_arg(const std::string& k);
[[noreturn]] void not_gpu(const char* name, const std::string& why);

// Registers GpuInput, gpu_location, dlpack_host_memory, gpu_inputs and the test hooks _parse_gpu_input /
// _torch_fields (register_gpu_input.cpp).
void register_gpu_input(py::module_& m);

// The GpuInput held by `obj` when it is one (a gpu_inputs result), else nullptr.
const GpuInput* as_gpu_input(const py::handle& obj);

}  // namespace vpoc_bind
