// bindings/register_device.cpp — GPU discovery, memory counters, the result pool and build facts.
// Contract: callable in every build; without a GPU backend the GPU calls raise ValueError saying how to build one.
#include <pybind11/stl.h>

#include <algorithm>
#include <string>
#include <utility>

#include "device_array.hpp"
#include "register.hpp"
#include "vpoc/engine.hpp"
#include "vpoc/gpu.hpp"
#include "vpoc/trace.hpp"

namespace vpoc_bind {

void register_device(py::module_& m) {
  m.def("gpu_backend", []() { return std::string(vpoc::gpu::backend()); });
  m.def("gpu_device_count", []() { return vpoc::gpu::device_count(); });
  m.def("gpu_require_device", [](int d) { vpoc::gpu::require_device(d); });
  m.def("gpu_synchronize_stream", [](int d, std::uintptr_t s) {
    py::gil_scoped_release nogil;
    vpoc::gpu::synchronize_stream(d, s);
  });
  m.def("memory_stats", [](int device) {
    const auto st = vpoc::gpu::memory_stats(device);
    using S = vpoc::gpu::MemoryStats;
    static const std::pair<const char*, int64_t S::*> fields[] = {
        {"workspace_bytes", &S::workspace_bytes}, {"peak_bytes", &S::peak_bytes}, {"allocs", &S::allocs},
        {"frees", &S::frees}, {"output_allocs", &S::output_allocs}, {"output_frees", &S::output_frees},
        {"output_bytes", &S::output_bytes}, {"pool_bytes", &S::pool_bytes},
        {"pool_cached_bytes", &S::pool_cached_bytes}, {"pool_limit_bytes", &S::pool_limit_bytes},
        {"pool_hits", &S::pool_hits}, {"driver_allocs", &S::driver_allocs}, {"driver_frees", &S::driver_frees},
        {"speculative_calls", &S::speculative_calls}, {"speculative_reruns", &S::speculative_reruns},
        {"fused_bar_calls", &S::fused_bar_calls}};
    py::dict d;
    for (const auto& [name, member] : fields) d[name] = st.*member;
    return d;
  });
  m.def(
      "host_trace",
      []() {
        py::list out;
        for (const auto& [name, ns] : vpoc::trace::take()) out.append(py::make_tuple(name, ns));
        return out;
      },
      "Host phase marks (name, steady-clock ns) recorded since the last call, oldest first, when VPOC_HOST_TRACE=1 "
      "was in the environment at the first mark (vpoc/trace.hpp; benchmarks/host_phases.py): bar calls mark their "
      "binding and dispatcher, GPU calls their engine's speculative path; else [].");
  m.def("gpu_set_speculation", &vpoc::gpu::set_speculation, py::arg("enabled"),
        "Whether GPU calls of a shape seen before bin before reading their layout back (default True).");
  m.def("gpu_speculation", &vpoc::gpu::speculation);
  m.def("empty_cache", [](int device) {
    py::gil_scoped_release nogil;
    vpoc::gpu::empty_cache(device);
  });
  m.def("set_pool_limit", [](int device, int64_t bytes) {
    py::gil_scoped_release nogil;
    vpoc::gpu::set_pool_limit(device, bytes);
  });

  // Read-only facts about this build and the GPUs the runtime sees (vpoc doctor).
  m.def("build_info", []() {
    py::dict d;
    d["backend"] = std::string(vpoc::gpu::backend());
    const std::string archs = VPOC_GPU_ARCHS;
    py::list a;
    for (size_t i = 0; i < archs.size();) {
      const size_t j = std::min(archs.find(',', i), archs.size());
      if (j > i) a.append(archs.substr(i, j - i));
      i = j + 1;
    }
    d["gpu_archs"] = a;
    d["gpu_compiler"] = std::string(VPOC_GPU_COMPILER);
    d["cxx_compiler"] = std::string(VPOC_CXX_COMPILER);
    d["sanitize"] = std::string(VPOC_BUILD_SANITIZE);
    // the CPU engine's instruction-set level (VPOC_CPU_ISA caps it; README "Environment variables")
    const vpoc::CpuIsaInfo isa = vpoc::cpu_isa_info();
    d["cpu_isa"] = isa.active;
    d["cpu_isa_cpu"] = isa.cpu;
    d["cpu_isa_capped"] = isa.capped;
    d["cpu_isa_env"] = isa.set ? py::object(py::str(isa.value)) : py::object(py::none());
    d["cpu_isa_error"] = isa.error.empty() ? py::object(py::none()) : py::object(py::str(isa.error));
    return d;
  });
  m.def("gpu_versions", []() {
    py::dict d;
    d["runtime"] = vpoc::gpu::runtime_version();
    d["driver"] = vpoc::gpu::driver_version();
    return d;
  });
  m.def("gpu_devices", []() {
    py::list out;
    for (const auto& info : vpoc::gpu::devices()) {
      py::dict d;
      d["index"] = info.index;
      d["name"] = info.name;
      d["arch"] = info.arch;
      d["total_memory"] = info.total_memory;
      d["has_code"] = info.has_code;
      d["binary_version"] = info.binary_version;
      d["ptx_version"] = info.ptx_version;
      d["code_error"] = info.code_error;
      out.append(d);
    }
    return out;
  });

  m.def("backends", []() {
    std::vector<std::string> b{"cpu"};
    if (std::string(vpoc::gpu::backend()) != "none") b.emplace_back(vpoc::gpu::backend());
    return b;
  });

  vpoc_bind::register_device_array(m);
  // Test-only: a host-memory (kDLCPU) DeviceArray over a copy of a 1-D (or 2-D) array, for CPU-only DLPack tests.
  m.def("_host_device_array", &vpoc_bind::host_device_array, py::arg("array"),
        py::arg("device_type") = 1, py::arg("device_id") = 0, py::arg("col_stride") = -1);
}

}  // namespace vpoc_bind
