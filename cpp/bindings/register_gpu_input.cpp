// bindings/register_gpu_input.cpp — _core.GpuInput (a plain CPython type), gpu_location, gpu_inputs and the
// reader's test hooks. Contract: GpuInput's slots use the C API only; the reading itself is gpu_input.cpp's.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>

#include <new>
#include <optional>
#include <string>

#include "device_array.hpp"
#include "gpu_input.hpp"
#include "vpoc/errors.hpp"
#include "vpoc/gpu.hpp"

namespace vpoc_bind {
namespace {

// _core.GpuInput: a plain CPython type holding a GpuInput inline (one allocation; a pybind11 class
// instance costs about as much again as reading the array). Made only by gpu_inputs. Its slots use
// the C API only (no C++ exception may cross CPython).
struct GpuInputObject {
  PyObject_HEAD
  GpuInput g;
};

PyTypeObject* gpu_input_type = nullptr;

void gpu_input_dealloc(PyObject* self) {
  PyTypeObject* tp = Py_TYPE(self);
  reinterpret_cast<GpuInputObject*>(self)->g.~GpuInput();
  tp->tp_free(self);
  Py_DECREF(tp);
}

const GpuInput& held(PyObject* self) { return reinterpret_cast<GpuInputObject*>(self)->g; }

PyObject* get_data_ptr(PyObject* self, void*) {
  return PyLong_FromUnsignedLongLong(reinterpret_cast<std::uintptr_t>(held(self).array.data));
}
PyObject* get_size(PyObject* self, void*) { return PyLong_FromLongLong(held(self).array.size); }
PyObject* get_typestr(PyObject* self, void*) { return PyUnicode_FromString(typestr_of(held(self).array.dtype)); }
PyObject* get_device(PyObject* self, void*) { return PyLong_FromLong(held(self).array.device); }
PyObject* get_stream(PyObject* self, void*) {
  const GpuInput& g = held(self);
  switch (g.stream_kind) {
    case GpuInput::Stream::handle: return PyLong_FromUnsignedLongLong(g.stream);
    case GpuInput::Stream::torch: return PyUnicode_FromString("torch");
    default: Py_RETURN_NONE;
  }
}
PyObject* gpu_input_repr(PyObject* self) {
  const GpuInput& g = held(self);
  return PyUnicode_FromFormat("vpoc._core.GpuInput(size=%lld, typestr='%s', device=%d)", static_cast<long long>(g.array.size),
                              typestr_of(g.array.dtype), g.array.device);
}

PyGetSetDef gpu_input_getset[] = {
    {"data_ptr", &get_data_ptr, nullptr, "The first element's address (byte_offset applied).", nullptr},
    {"size", &get_size, nullptr, "The number of elements.", nullptr},
    {"typestr", &get_typestr, nullptr, "'f4', 'f8', 'i4' or 'i8'.", nullptr},
    {"device", &get_device, nullptr, "The GPU index.", nullptr},
    {"stream", &get_stream, nullptr,
     "The producer's stream: a raw handle, None (nothing to wait for) or 'torch' (torch's current stream of the device).",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

#if PY_VERSION_HEX >= 0x030A0000
constexpr unsigned long kNoInstances = Py_TPFLAGS_DISALLOW_INSTANTIATION;
#else
constexpr unsigned long kNoInstances = 0;  // Python 3.9: a tp_new that refuses
PyObject* gpu_input_new(PyTypeObject*, PyObject*, PyObject*) {
  PyErr_SetString(PyExc_TypeError, "cannot create 'vpoc._core.GpuInput' instances");
  return nullptr;
}
#endif

PyType_Slot gpu_input_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(&gpu_input_dealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(&gpu_input_repr)},
    {Py_tp_getset, gpu_input_getset},
#if PY_VERSION_HEX < 0x030A0000
    {Py_tp_new, reinterpret_cast<void*>(&gpu_input_new)},
#endif
    {Py_tp_doc, const_cast<char*>("A GPU array as the engine reads it (made by gpu_inputs): pointer, length, dtype, "
                                  "device, the producer's stream, and what keeps the memory alive for the call.")},
    {0, nullptr}};

PyType_Spec gpu_input_spec = {"vpoc._core.GpuInput", static_cast<int>(sizeof(GpuInputObject)), 0,
                              Py_TPFLAGS_DEFAULT | kNoInstances, gpu_input_slots};

py::object wrap(GpuInput&& g) {
  PyObject* o = gpu_input_type->tp_alloc(gpu_input_type, 0);
  if (o == nullptr) throw py::error_already_set();
  new (&reinterpret_cast<GpuInputObject*>(o)->g) GpuInput(std::move(g));
  return py::reinterpret_steal<py::object>(o);
}

py::tuple fields(const GpuInput& g) {
  return py::make_tuple(reinterpret_cast<std::uintptr_t>(g.array.data), g.array.size,
                        typestr_of(g.array.dtype), g.array.device, stream_of(g));
}

// The dtypes an engine input may have, by its role (the engine's argument names): prices float;
// volume also integer; side int8 codes. Any other name is a caller's mistake, not a user's.
Kinds role_kinds(const std::string& name) {
  if (name == "volume") return Kinds::numbers;
  if (name == "side") return Kinds::side;
  if (name == "price" || name == "high" || name == "low" || name == "close" || name == "open") return Kinds::floats;
  VPOC_THROW(Error, "gpu_inputs: no engine input is called '", name, "' (price, high, low, close, open, volume, side)");
}

}  // namespace

const GpuInput* as_gpu_input(const py::handle& obj) {
  if (gpu_input_type == nullptr || Py_TYPE(obj.ptr()) != gpu_input_type) return nullptr;
  return &held(obj.ptr());
}

void register_gpu_input(py::module_& m) {
  PyObject* type = PyType_FromSpec(&gpu_input_spec);
  if (type == nullptr) throw py::error_already_set();
  gpu_input_type = reinterpret_cast<PyTypeObject*>(type);  // a new reference, kept for the process
  m.attr("GpuInput") = py::reinterpret_borrow<py::object>(type);

  m.def(
      "gpu_location",
      [](const py::handle& x, const std::string& name) -> py::object {
        const int d = gpu_location(x, name.c_str());
        return d < 0 ? py::object(py::none()) : py::object(py::int_(d));
      },
      py::arg("x"), py::arg("name") = "x",
      "The GPU index of an array in GPU memory (a CUDA torch tensor, __cuda_array_interface__, a DLPack "
      "device of type CUDA, CUDA managed or ROCm), or None for host data; errors name `name`.");
  m.def("dlpack_host_memory", &dlpack_host_memory, py::arg("device_type"),
        "Whether a DLPack device type is host memory (kDLCPU 1, kDLCUDAHost 3, kDLROCMHost 11): the rule of "
        "the GPU reader and of vpoc._arrays.");

  m.def(
      "gpu_inputs",
      [](const py::dict& arrays, std::uintptr_t stream) {
        py::dict ins;
        int index = -1, torch_device = -1;
        py::list streams;
        for (const auto& kv : arrays) {
          const py::handle v = kv.second;
          GpuInput g;
          const std::string name = py::str(kv.first);
          if (!read_gpu_input(v, name.c_str(), role_kinds(name), g, stream)) {
            ins[kv.first] = v;
            continue;
          }
          if (index < 0) index = g.array.device;
          if (g.stream_kind == GpuInput::Stream::torch) {
            if (torch_device < 0) torch_device = g.array.device;
          } else {
            streams.append(stream_of(g));
          }
          ins[kv.first] = wrap(std::move(g));
        }
        const auto opt = [](int d) { return d < 0 ? py::object(py::none()) : py::object(py::int_(d)); };
        return py::make_tuple(opt(index), opt(torch_device), py::tuple(streams), ins);
      },
      py::arg("arrays"), py::arg("stream") = 0,
      "Each GPU array of {name: array} read once (GpuInput; 'volume' may be an integer array, the others "
      "float): (GPU index of the first or None, device of the first torch tensor or None, the producer "
      "streams of the others (handle or None), {name: GpuInput or the host input as it was}). `stream`: "
      "the raw stream DLPack producers order their work before (0: the legacy default stream).");

  m.def(
      "gpu_rows_to_host",
      [](const py::handle& x, py::ssize_t start, py::ssize_t stop, const std::string& name) {
        GpuInput g;  // a DLPack producer orders its work before the legacy default stream (consumer 0)
        if (!read_gpu_input(x, name.c_str(), Kinds::numbers, g, 0))
          not_gpu(name.c_str(), "no CUDA torch tensor, __cuda_array_interface__ or DLPack device of type CUDA/ROCm");
        if (g.stream_kind == GpuInput::Stream::torch)
          VPOC_THROW_ARG(TypeError, name.c_str(), name, ": a torch tensor is copied by torch (.cpu()), not here");
        const py::ssize_t n = g.array.size;  // Python slice bounds: negative ones count from the end, clipped to [0, n]
        if (start < 0) start += n;
        if (stop < 0) stop += n;
        start = std::clamp<py::ssize_t>(start, 0, n);
        stop = std::clamp<py::ssize_t>(stop, start, n);
        py::array out(numpy_dtype(g.array.dtype), py::array::ShapeContainer{stop - start});
        const size_t item = static_cast<size_t>(out.itemsize());
        if (stop > start) {
          py::gil_scoped_release nogil;
          if (g.stream_kind == GpuInput::Stream::handle) vpoc::gpu::synchronize_stream(g.array.device, g.stream);
          vpoc::gpu::copy_to_host(out.mutable_data(), static_cast<const char*>(g.array.data) + start * item,
                                  static_cast<size_t>(stop - start) * item, g.array.device, vpoc::Ready{});
        }
        return out;  // g.keep (a DLPack capsule) is released after the copy
      },
      py::arg("x"), py::arg("start"), py::arg("stop"), py::arg("name") = "x",
      "Elements start..stop-1 (slice bounds) of a GPU array given by __cuda_array_interface__ or DLPack, as a "
      "new NumPy array of its dtype, after its producer's work (the engine's reader: the same refusals). The "
      "host copies of a few rows for error reports; torch tensors and CuPy arrays are copied by their library.");

  // Test and measurement hooks: the reader without the engine; nothing here reads the arrays' memory.
  m.def(
      "_parse_gpu_input",
      [](const py::handle& x, const std::string& name, const std::string& kinds, bool host_ok, std::uintptr_t stream) {
        GpuInput g;
        if (!read_gpu_input(x, name.c_str(), kinds_arg(kinds), g, stream, host_ok))
          not_gpu(name.c_str(), "no CUDA torch tensor, __cuda_array_interface__ or DLPack device of type CUDA/ROCm");
        return fields(g);
      },
      py::arg("x"), py::arg("name"), py::arg("kinds"), py::arg("host_ok") = false, py::arg("stream") = 0,
      "(pointer, size, typestr, device, stream) of a GPU array as gpu_inputs reads it (host_ok: a kDLCPU "
      "DLPack capsule too); TypeError for host data.");
  m.def(
      "_torch_fields",
      [](const py::handle& x, const std::string& kinds, const std::optional<std::string>& name) -> py::object {
        GpuInput g;
        if (!torch_fields_any(x, kinds_arg(kinds), g, name ? name->c_str() : nullptr)) return py::none();
        return fields(g)[py::slice(0, 4, 1)];
      },
      py::arg("x"), py::arg("kinds") = "fi", py::arg("name") = py::none(),
      "The torch fast path's read of any tensor (CPU too): (pointer, size, typestr, device), or None when it "
      "declines (not dense, not 1-D, another dtype, the negative bit, not contiguous); with `name` it raises "
      "the error the CUDA path raises instead.");
}

}  // namespace vpoc_bind
