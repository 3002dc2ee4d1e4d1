// bindings/device_array.cpp — DeviceArray's Python surface: DLPack (both flavours), CAI v3, NumPy.
// Contract: only numpy()/__array__ copy device memory; host-memory arrays never call vpoc::gpu.
#include "device_array.hpp"

#include <pybind11/numpy.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dlpack.hpp"
#include "vpoc/errors.hpp"

namespace vpoc_bind {

py::dtype numpy_dtype(vpoc::DType dt) {
  switch (dt) {
    case vpoc::DType::f32: return py::dtype::of<float>();
    case vpoc::DType::f64: return py::dtype::of<double>();
    case vpoc::DType::i32: return py::dtype::of<int32_t>();
    case vpoc::DType::i64: return py::dtype::of<int64_t>();
    case vpoc::DType::i8: return py::dtype::of<int8_t>();
  }
  return py::dtype::of<double>();  // unreachable: every DType is listed above
}

namespace {

namespace dl = dlpack;

bool on_host(const DeviceArray& a) { return a.device_type == dl::kDLCPU; }

int64_t columns(const DeviceArray& a) { return a.cols > 0 ? a.cols : 1; }

size_t nbytes(const DeviceArray& a) {
  return static_cast<size_t>(a.size) * static_cast<size_t>(columns(a)) * dl::item_size(a.dtype);
}

py::tuple shape(const DeviceArray& a) {
  if (a.cols > 0) return py::make_tuple(a.size, a.cols);
  return py::make_tuple(a.size);
}

const char* dtype_name(vpoc::DType dt) {
  switch (dt) {
    case vpoc::DType::f32: return "float32";
    case vpoc::DType::f64: return "float64";
    case vpoc::DType::i32: return "int32";
    case vpoc::DType::i64: return "int64";
    case vpoc::DType::i8: return "int8";
  }
  return "?";
}

// 'cpu', 'cuda:N' (kDLCUDA) or 'rocm:N' (kDLROCM).
std::string device_name(const DeviceArray& a) {
  switch (a.device_type) {
    case dl::kDLCPU: return "cpu";
    case dl::kDLCUDA: return "cuda:" + std::to_string(a.device_id);
    case dl::kDLROCM: return "rocm:" + std::to_string(a.device_id);
    default: return "dlpack" + std::to_string(a.device_type) + ":" + std::to_string(a.device_id);
  }
}

bool truthy(const py::object& o) {
  const int t = PyObject_IsTrue(o.ptr());
  if (t < 0) throw py::error_already_set();
  return t != 0;
}

bool is_int(const py::object& o) { return PyLong_Check(o.ptr()) && !PyBool_Check(o.ptr()); }

// The consumer's `stream` (array API __dlpack__) as the raw handle vpoc::gpu::wait takes, or
// nullopt for -1 ("producer must not synchronize"). Array API conventions:
//   CUDA: None or 1 -> legacy default stream (handle 0, per vpoc/gpu.hpp); 2 -> per-thread
//         default stream (cudaStreamPerThread is handle 2); > 2 -> a cudaStream_t; 0 is refused
//         as ambiguous.
//   ROCm: None or 0 -> default stream (handle 0); > 2 -> a hipStream_t; 1 and 2 are refused.
std::optional<std::uintptr_t> consumer_stream(const DeviceArray& a, const py::object& stream) {
  if (stream.is_none()) return std::uintptr_t{0};
  if (!is_int(stream))
    VPOC_THROW(TypeError, "__dlpack__: stream must be None or an int, not ",
               std::string(py::str(py::type::handle_of(stream).attr("__name__"))));
  const auto s = stream.cast<long long>();
  if (s == -1) return std::nullopt;
  if (s < -1) VPOC_THROW(ValueError, "__dlpack__: stream must be -1 or a stream handle >= 0, got ", s);
  if (a.device_type == dl::kDLCUDA) {
    if (s == 0)
      VPOC_THROW(ValueError, "__dlpack__: stream=0 is ambiguous for CUDA; pass 1 (legacy default), "
                             "2 (per-thread default), a stream handle, or None");
    if (s == 1) return std::uintptr_t{0};
    return static_cast<std::uintptr_t>(s);
  }
  if (s == 1 || s == 2)
    VPOC_THROW(ValueError, "__dlpack__: stream=", s, " is not valid for ROCm; pass 0 (default stream), "
                           "a stream handle, or None");
  return static_cast<std::uintptr_t>(s);
}

py::object export_dlpack(const DeviceArray& a, const py::object& stream, const py::object& max_version,
                         const py::object& dl_device, const py::object& copy) {
  if (!copy.is_none() && truthy(copy))
    throw py::buffer_error("vpoc.DeviceArray.__dlpack__: copy=True is not supported (vpoc exports "
                           "without copying); copy in the consumer, or use .numpy() for a host copy");
  if (!dl_device.is_none()) {
    const auto dev = dl_device.cast<py::sequence>();
    if (dev.size() != 2)
      VPOC_THROW(ValueError, "__dlpack__: dl_device must be a (device_type, device_id) pair");
    const int type = dev[0].cast<int>(), id = dev[1].cast<int>();
    if (type != a.device_type || id != a.device_id)
      throw py::buffer_error("vpoc.DeviceArray.__dlpack__: the array lives on " + device_name(a) + " (" +
                             std::to_string(a.device_type) + ", " + std::to_string(a.device_id) +
                             "); exporting to (" + std::to_string(type) + ", " + std::to_string(id) +
                             ") would need a copy, which vpoc does not make");
  }
  bool versioned = false;
  if (!max_version.is_none()) {
    const auto v = max_version.cast<py::sequence>();
    if (v.size() < 1) VPOC_THROW(ValueError, "__dlpack__: max_version must be a (major, minor) pair");
    versioned = v[0].cast<long long>() >= static_cast<long long>(dl::kMajorVersion);
  }
  if (on_host(a)) {
    // Host memory has no stream to order against; the array API allows only None (we also take -1).
    if (!stream.is_none() && !(is_int(stream) && stream.cast<long long>() == -1))
      VPOC_THROW(ValueError, "__dlpack__: stream must be None for host (kDLCPU) memory");
  } else {
    const auto s = consumer_stream(a, stream);
    if (s) {
      py::gil_scoped_release nogil;
      if (a.ready.event) vpoc::gpu::wait(a.ready, *s);  // the consumer's stream waits; host does not block
      vpoc::gpu::note_stream(*a.owner, *s);  // reused only after the consumer's work on it so far
    }
  }
  PyObject* capsule = dl::make_capsule(a.owner, a.data, a.size, a.dtype, a.device_type, a.device_id,
                                       versioned, a.read_only, dl::Columns{a.cols, a.col_stride});
  if (capsule == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(capsule);
}

// CUDA Array Interface v3. Its `stream` entry names a stream the consumer must synchronize on
// (1 = legacy default); None means "no synchronization required". With work still pending we
// make the legacy default stream wait for it (no host block) and report stream 1, so a consumer
// that honours v3 orders its work after ours; with nothing pending we report None.
py::dict cuda_array_interface(const DeviceArray& a) {
  if (a.device_type != dl::kDLCUDA)
    throw py::attribute_error("__cuda_array_interface__ is defined only for CUDA device memory; this "
                              "array is on '" + device_name(a) + "' (use __dlpack__ / from_dlpack)");
  py::object stream = py::none();
  if (a.ready.event) {
    {
      py::gil_scoped_release nogil;
      vpoc::gpu::wait(a.ready, 0);
    }
    stream = py::int_(1);
  }
  // The interface names no consumer stream: the pool orders reuse after the legacy default stream
  // (where cupy and numba work unless told otherwise); other streams must keep the result alive.
  if (a.owner) vpoc::gpu::note_stream(*a.owner, 0);
  py::dict d;
  d["shape"] = shape(a);
  d["typestr"] = numpy_dtype(a.dtype).attr("str");
  d["data"] = py::make_tuple(py::int_(nbytes(a) > 0 ? reinterpret_cast<std::uintptr_t>(a.data) : 0),
                             py::bool_(a.read_only));
  d["version"] = 3;
  const auto item = static_cast<int64_t>(dl::item_size(a.dtype));
  d["strides"] = a.cols > 0 ? py::object(py::make_tuple(item, a.col_stride * item)) : py::object(py::none());
  d["stream"] = stream;
  return d;
}

// A new host NumPy array holding a copy (blocks until `ready` for device memory); a 2-D array
// comes back as the transpose of a C-ordered [cols, size] copy (one copy per column).
py::array to_numpy(const DeviceArray& a) {
  const auto n = static_cast<py::ssize_t>(a.size), k = static_cast<py::ssize_t>(columns(a));
  py::array out = a.cols > 0 ? py::array(numpy_dtype(a.dtype), py::array::ShapeContainer{k, n})
                             : py::array(numpy_dtype(a.dtype), py::array::ShapeContainer{n});
  const size_t item = dl::item_size(a.dtype), bytes = static_cast<size_t>(a.size) * item;
  if (bytes > 0) {
    auto* dst = static_cast<char*>(out.mutable_data());
    const auto* src = static_cast<const char*>(a.data);
    const size_t step = static_cast<size_t>(a.col_stride) * item;
    if (on_host(a)) {
      for (py::ssize_t c = 0; c < k; ++c) std::memcpy(dst + c * bytes, src + c * step, bytes);
    } else {
      py::gil_scoped_release nogil;
      for (py::ssize_t c = 0; c < k; ++c) vpoc::gpu::copy_to_host(dst + c * bytes, src + c * step, bytes, a.device_id, a.ready);
    }
  }
  return a.cols > 0 ? py::array(out.attr("T")) : out;
}

// NumPy's __array__(dtype=None, copy=None): host memory gives a view (base: this DeviceArray)
// unless copy=True; device memory always copies, so copy=False raises ValueError (NumPy 2 rule).
py::object to_array(const py::object& self, const py::object& dtype, const py::object& copy) {
  const auto& a = self.cast<const DeviceArray&>();
  const bool force_copy = !copy.is_none() && truthy(copy);
  const bool forbid_copy = !copy.is_none() && !truthy(copy);
  py::object out;
  if (on_host(a) && !force_copy && nbytes(a) > 0) {
    const auto item = static_cast<py::ssize_t>(dl::item_size(a.dtype));
    const auto n = static_cast<py::ssize_t>(a.size);
    py::array view = a.cols > 0 ? py::array(numpy_dtype(a.dtype), py::array::ShapeContainer{n, static_cast<py::ssize_t>(a.cols)},
                                            py::array::StridesContainer{item, static_cast<py::ssize_t>(a.col_stride) * item}, a.data, self)
                                : py::array(numpy_dtype(a.dtype), py::array::ShapeContainer{n},
                                            py::array::StridesContainer{item}, a.data, self);
    if (a.read_only) view.attr("setflags")(py::arg("write") = false);
    out = std::move(view);
  } else if (!on_host(a) && forbid_copy) {
    VPOC_THROW(ValueError, "a DeviceArray on ", device_name(a),
               " cannot become a NumPy array without a copy (copy=False)");
  } else {
    out = to_numpy(a);
  }
  if (!dtype.is_none()) out = out.attr("astype")(dtype, py::arg("copy") = false);
  return out;
}

std::string repr(const DeviceArray& a) {
  const std::string dims = a.cols > 0 ? "shape=(" + std::to_string(a.size) + ", " + std::to_string(a.cols) + ")"
                                      : "size=" + std::to_string(a.size);
  return "vpoc.DeviceArray(" + dims + ", dtype=" + dtype_name(a.dtype) + ", device='" + device_name(a) + "')";
}

// Host storage for host_device_array: the Buffer the DeviceArray sees plus the words behind it.
struct HostStorage {
  vpoc::gpu::Buffer buffer;
  std::vector<int64_t> words;  // 8-byte aligned backing store
};

}  // namespace

void register_device_array(py::module_& m) {
  py::class_<DeviceArray>(m, "DeviceArray",
                          "A vpoc result in GPU (or host) memory: 1-D, or [n, cols] for several columns "
                          "of one result (Profiles.levels). Zero-copy to PyTorch/CuPy/JAX via DLPack "
                          "(torch.from_dlpack(arr)); .numpy() copies to host memory.")
      .def_property_readonly("shape", &shape)
      .def_property_readonly("size", [](const DeviceArray& a) { return a.size * columns(a); })
      .def_property_readonly("ndim", [](const DeviceArray& a) { return a.cols > 0 ? 2 : 1; })
      .def_property_readonly("nbytes", [](const DeviceArray& a) { return nbytes(a); })
      .def_property_readonly("dtype", [](const DeviceArray& a) { return numpy_dtype(a.dtype); })
      .def_property_readonly("device", &device_name)
      .def_property_readonly("data_ptr",
                             [](const DeviceArray& a) { return reinterpret_cast<std::uintptr_t>(a.data); })
      .def_property_readonly("_owner_refs",
                             [](const DeviceArray& a) { return static_cast<long>(a.owner.use_count()); })
      .def("__len__", [](const DeviceArray& a) { return a.size; })
      .def("__repr__", &repr)
      .def("__dlpack_device__",
           [](const DeviceArray& a) { return py::make_tuple(a.device_type, a.device_id); })
      .def("__dlpack__", &export_dlpack, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
           py::arg("copy") = py::none())
      .def_property_readonly("__cuda_array_interface__", &cuda_array_interface)
      .def("numpy", &to_numpy, "A host NumPy copy (waits for the GPU work that produced this array).")
      .def(
          "__array__",
          [](const py::object& self, const py::object& dtype, const py::object& copy) {
            return to_array(self, dtype, copy);
          },
          py::arg("dtype") = py::none(), py::arg("copy") = py::none());
}

py::object make_device_array(vpoc::gpu::BufferPtr owner, void* data, int64_t size, vpoc::DType dt,
                             int device_type, int device_id, vpoc::gpu::Ready ready, bool read_only,
                             int64_t cols, int64_t col_stride) {
  if (size < 0) VPOC_THROW(ValueError, "DeviceArray size must be >= 0, got ", size);
  if (cols < 0 || (cols > 0 && col_stride < size))
    VPOC_THROW(ValueError, "DeviceArray columns must not overlap: cols ", cols, ", col_stride ", col_stride, " < size ", size);
  if (!owner) VPOC_THROW(ValueError, "DeviceArray needs an owner that keeps its memory alive");
  if (size > 0 && data == nullptr) VPOC_THROW(ValueError, "DeviceArray of size ", size, " has no data");
  if (device_type != dl::kDLCPU && device_type != dl::kDLCUDA && device_type != dl::kDLROCM)
    VPOC_THROW(ValueError, "DeviceArray device_type must be 1 (CPU), 2 (CUDA) or 10 (ROCm), got ",
               device_type);
  DeviceArray a;
  a.owner = std::move(owner);
  a.data = data;
  a.size = size;
  a.dtype = dt;
  a.device_type = device_type;
  a.device_id = device_type == dl::kDLCPU ? 0 : device_id;
  a.ready = std::move(ready);
  a.read_only = read_only;
  a.cols = cols;
  a.col_stride = cols > 0 ? col_stride : 0;
  return py::cast(std::move(a));
}

py::object host_device_array(const py::object& array, int device_type, int device_id, int64_t col_stride) {
  py::array a = py::array::ensure(array, py::array::c_style);
  if (!a) VPOC_THROW(TypeError, "_host_device_array needs an array-like");
  if (a.ndim() != 1 && a.ndim() != 2)
    VPOC_THROW(ValueError, "_host_device_array needs a 1-D or 2-D array, got ", a.ndim(), " dimensions");
  const char kind = a.dtype().kind();
  const auto item = a.dtype().itemsize();
  vpoc::DType dt;
  if (kind == 'f' && item == 4) dt = vpoc::DType::f32;
  else if (kind == 'f' && item == 8) dt = vpoc::DType::f64;
  else if (kind == 'i' && item == 4) dt = vpoc::DType::i32;
  else if (kind == 'i' && item == 8) dt = vpoc::DType::i64;
  else VPOC_THROW(TypeError, "_host_device_array supports float32, float64, int32 and int64");
  const auto n = static_cast<int64_t>(a.shape(0));
  const int64_t cols = a.ndim() == 2 ? static_cast<int64_t>(a.shape(1)) : 0;
  if (a.ndim() == 2 && cols == 0) VPOC_THROW(ValueError, "_host_device_array needs at least one column");
  if (cols > 0 && col_stride < 0) col_stride = n;
  if (cols > 0 && col_stride < n) VPOC_THROW(ValueError, "_host_device_array: col_stride must be >= the rows");
  // 2-D: column c at element c * col_stride of the words (the gaps zero), as Profiles.levels lays them
  const int64_t span = cols > 0 ? col_stride * (cols - 1) + n : n;
  const size_t bytes = static_cast<size_t>(span) * static_cast<size_t>(item);
  auto storage = std::make_shared<HostStorage>();
  storage->words.resize((bytes + sizeof(int64_t) - 1) / sizeof(int64_t));
  auto* dst = reinterpret_cast<char*>(storage->words.data());
  const auto* src = static_cast<const char*>(a.data());
  if (cols == 0) {
    if (bytes > 0) std::memcpy(dst, src, bytes);
  } else {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < cols; ++c)
        std::memcpy(dst + (c * col_stride + i) * item, src + (i * cols + c) * item, static_cast<size_t>(item));
  }
  storage->buffer.data = storage->words.data();
  storage->buffer.bytes = bytes;
  storage->buffer.device = -1;
  vpoc::gpu::BufferPtr owner(storage, &storage->buffer);  // aliasing: frees the words with the Buffer
  void* data = owner->data;
  return make_device_array(std::move(owner), data, n, dt, device_type, device_id, vpoc::gpu::Ready{}, false, cols,
                           col_stride);
}

}  // namespace vpoc_bind
