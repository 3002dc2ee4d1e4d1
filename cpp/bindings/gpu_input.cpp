// bindings/gpu_input.cpp — foreign GPU arrays read once in C++: torch tensors (their C-level accessors),
// __cuda_array_interface__ v2/v3, DLPack capsules. Contract: the only place that understands them; never touches their memory.
#include "gpu_input.hpp"

#include <pybind11/stl.h>

#include <new>
#include <string>

#include "dlpack.hpp"
#include "vpoc/errors.hpp"

namespace vpoc_bind {
namespace {

namespace dl = dlpack;

// kDLCUDAManaged: CUDA managed memory (dlpack.h), read by the GPU engine in place like device memory.
constexpr int32_t kDLCUDAManaged = 13;

bool gpu_device_type(long long t) { return t == dl::kDLCUDA || t == dl::kDLROCM || t == kDLCUDAManaged; }

// A new reference or nullptr (Python error set).
using Ref = py::object;
Ref steal(PyObject* p) {
  if (p == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(p);
}

PyObject* intern(const char* s) { return PyUnicode_InternFromString(s); }  // leaked: lives as long as the module

// getattr(x, name), or an empty object when x has no such attribute (other errors propagate);
// no AttributeError is made for a plain miss (the lookup getattr(x, name, None) uses).
Ref attr_or_null(const py::handle& x, PyObject* name) {
  PyObject* v = nullptr;
#if PY_VERSION_HEX >= 0x030D0000
  const int r = PyObject_GetOptionalAttr(x.ptr(), name, &v);
#else
  const int r = _PyObject_LookupAttr(x.ptr(), name, &v);
#endif
  if (r < 0) throw py::error_already_set();
  return r == 0 ? Ref() : py::reinterpret_steal<py::object>(v);
}

// An integer entry (int, numpy integer: anything with __index__, never bool) as a Python int.
Ref index_of(const py::handle& v, const char* name, const char* what) {
  if (PyLong_CheckExact(v.ptr())) return py::reinterpret_borrow<py::object>(v);
  if (PyBool_Check(v.ptr()) || !PyIndex_Check(v.ptr()))
    VPOC_THROW_ARG(TypeError, name, name, ": ", what, " must be an int, got ",
                   std::string(py::str(py::type::handle_of(v).attr("__name__"))));
  return steal(PyNumber_Index(v.ptr()));
}

long long as_int(const py::handle& v, const char* name, const char* what) {
  const long long r = PyLong_AsLongLong(index_of(v, name, what).ptr());
  if (r == -1 && PyErr_Occurred()) throw py::error_already_set();
  return r;
}

std::string allowed(Kinds k) { return k == Kinds::floats ? "float32 or float64" : "float32, float64, int32 or int64"; }

// The engine dtype of (kind, bytes) when `kinds` accepts it.
bool engine_dtype(char kind, int bytes, Kinds kinds, vpoc::DType& dt) {
  if (kind == 'f' && bytes == 4) dt = vpoc::DType::f32;
  else if (kind == 'f' && bytes == 8) dt = vpoc::DType::f64;
  else if (kinds == Kinds::floats) return false;
  else if (kind == 'i' && bytes == 4) dt = vpoc::DType::i32;
  else if (kind == 'i' && bytes == 8) dt = vpoc::DType::i64;
  else return false;
  return true;
}

[[noreturn]] void bad_dtype(const char* name, Kinds kinds, const std::string& typestr) {
  VPOC_THROW_ARG(TypeError, name, name, " on the GPU must be ", allowed(kinds), " (got typestr '", typestr,
                 "'); convert it on the device first, e.g. x.float()");
}

[[noreturn]] void not_1d(const char* name, const std::string& shape) {
  VPOC_THROW_ARG(ValueError, name, name, " must be 1-D, got shape ", shape);
}

[[noreturn]] void not_contiguous(const char* name) {
  VPOC_THROW_ARG(ValueError, name, name, " must be contiguous on the GPU; call .contiguous() first");
}

// ---------------------------------------------------------------- torch

// torch.Tensor and its engine dtypes, looked up once torch is imported (never imports it: without
// torch in sys.modules no torch tensor exists). Leaked references, as the module's other statics.
struct Torch {
  PyTypeObject* tensor = nullptr;
  PyObject* dtypes[4] = {};  // float32, float64, int32, int64 (vpoc::DType order)
};

const Torch* torch_api() {
  static Torch api;
  if (api.tensor != nullptr) return &api;
  static PyObject* const torch_name = intern("torch");
  PyObject* mod = PyImport_GetModule(torch_name);
  if (mod == nullptr) {
    if (PyErr_Occurred()) throw py::error_already_set();
    return nullptr;
  }
  const auto m = steal(mod);
  const char* names[4] = {"float32", "float64", "int32", "int64"};
  Torch got;
  for (int i = 0; i < 4; ++i) {
    Ref d = attr_or_null(m, py::str(names[i]).ptr());
    if (!d) return nullptr;  // torch still importing
    got.dtypes[i] = d.release().ptr();
  }
  Ref t = attr_or_null(m, py::str("Tensor").ptr());
  if (!t || !PyType_Check(t.ptr())) return nullptr;
  got.tensor = reinterpret_cast<PyTypeObject*>(t.release().ptr());
  api = got;
  return &api;
}

bool is_torch(const py::handle& x, const Torch*& api) {
  api = torch_api();
  return api != nullptr && PyObject_TypeCheck(x.ptr(), api->tensor);
}

struct TorchNames {
  PyObject *is_cuda = intern("is_cuda"), *shape = intern("shape"), *dtype = intern("dtype"),
           *is_contiguous = intern("is_contiguous"), *data_ptr = intern("data_ptr"), *get_device = intern("get_device"),
           *requires_grad = intern("requires_grad"), *detach = intern("detach");
};
const TorchNames& tn() {
  static const TorchNames n;
  return n;
}

bool truth(const Ref& v) {
  const int t = PyObject_IsTrue(v.ptr());
  if (t < 0) throw py::error_already_set();
  return t != 0;
}

// The fast read of a CUDA torch tensor through its C-level accessors (is_cuda, shape, dtype,
// is_contiguous(), data_ptr(), get_device(): 6 calls, about 0.2 us; its __cuda_array_interface__ is a
// Python property building a dict, several times that): true and `out` filled for a 1-D contiguous tensor of an
// accepted dtype; false for anything else (the interface path then says what is wrong). `any_device`
// (measurement and tests only): a CPU tensor is read too (device -1).
bool torch_fields(const py::handle& x, const Torch& api, Kinds kinds, GpuInput& out, bool any_device = false) {
  const auto& n = tn();
  if (!any_device && !truth(steal(PyObject_GetAttr(x.ptr(), n.is_cuda)))) return false;
  const Ref shape = steal(PyObject_GetAttr(x.ptr(), n.shape));
  if (!PyTuple_Check(shape.ptr()) || PyTuple_GET_SIZE(shape.ptr()) != 1) return false;
  const long long size = PyLong_AsLongLong(PyTuple_GET_ITEM(shape.ptr(), 0));
  if (size == -1 && PyErr_Occurred()) throw py::error_already_set();
  const Ref dtype = steal(PyObject_GetAttr(x.ptr(), n.dtype));
  int k = 0;
  while (k < 4 && api.dtypes[k] != dtype.ptr()) ++k;
  if (k == 4) return false;
  const auto dt = static_cast<vpoc::DType>(k);
  if (kinds == Kinds::floats && dt != vpoc::DType::f32 && dt != vpoc::DType::f64) return false;
  if (size > 1 && !truth(steal(PyObject_CallMethodNoArgs(x.ptr(), n.is_contiguous)))) return false;  // 1-D: stride 1
  std::uintptr_t ptr = 0;
  if (size > 0) {
    const Ref p = steal(PyObject_CallMethodNoArgs(x.ptr(), n.data_ptr));
    ptr = static_cast<std::uintptr_t>(PyLong_AsUnsignedLongLong(p.ptr()));
    if (PyErr_Occurred()) throw py::error_already_set();
  }
  const long long device = PyLong_AsLongLong(steal(PyObject_CallMethodNoArgs(x.ptr(), n.get_device)).ptr());
  if (device == -1 && PyErr_Occurred()) throw py::error_already_set();
  out.array.data = reinterpret_cast<const void*>(ptr);
  out.array.size = size;
  out.array.dtype = dt;
  out.array.device = static_cast<int>(device);
  out.stream_kind = GpuInput::Stream::torch;
  out.stream = 0;
  out.keep = py::none();
  return true;
}

// A torch tensor that tracks gradients, as its data (its array interfaces raise otherwise).
Ref detached(const py::handle& x) {
  const auto& n = tn();
  Ref g = attr_or_null(x, n.requires_grad);
  if (g && truth(g)) return steal(PyObject_CallMethodNoArgs(x.ptr(), n.detach));
  return py::reinterpret_borrow<py::object>(x);
}

// ---------------------------------------------------------------- __cuda_array_interface__

struct CaiNames {
  PyObject *cai = intern("__cuda_array_interface__"), *dl_device = intern("__dlpack_device__"),
           *dlpack = intern("__dlpack__"), *device = intern("device"), *index = intern("index"), *id = intern("id");
};
const CaiNames& cn() {
  static const CaiNames n;
  return n;
}

// The GPU of a __cuda_array_interface__ array (the interface has no device entry): x.device.index
// (torch) or x.device.id (cupy), else 0.
int cai_device(const py::handle& x) {
  const auto& n = cn();
  const Ref dev = attr_or_null(x, n.device);
  if (!dev) return 0;
  for (PyObject* a : {n.index, n.id}) {
    const Ref v = attr_or_null(dev, a);
    if (v && PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr())) return static_cast<int>(PyLong_AsLong(v.ptr()));
  }
  return 0;
}

// d[key] (borrowed) or nullptr; `key` an interned name.
PyObject* item(const py::dict& d, PyObject* key) {
  PyObject* v = PyDict_GetItemWithError(d.ptr(), key);
  if (v == nullptr && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

struct CaiKeys {
  PyObject *shape = intern("shape"), *typestr = intern("typestr"), *strides = intern("strides"), *mask = intern("mask"),
           *data = intern("data"), *stream = intern("stream");
};
const CaiKeys& ck() {
  static const CaiKeys k;
  return k;
}

// CAI v3 'stream': None (or absent, v2) -> nothing to wait for; 1 -> the legacy default stream
// (handle 0, as vpoc/gpu.hpp names it; 0, which the interface disallows as ambiguous, is read so too);
// 2 -> the per-thread default stream (handle 2); > 2 -> that stream; -1 -> nothing to wait for.
void cai_stream(PyObject* s, const char* name, GpuInput& out) {
  out.stream_kind = GpuInput::Stream::none;
  out.stream = 0;
  if (s == nullptr || s == Py_None) return;
  const long long v = as_int(py::handle(s), name, "__cuda_array_interface__['stream']");
  if (v == -1) return;
  if (v < -1) VPOC_THROW_ARG(ValueError, name, name, ": __cuda_array_interface__['stream'] must be None or a stream handle >= 0, got ", v);
  out.stream_kind = GpuInput::Stream::handle;
  out.stream = v <= 1 ? 0 : static_cast<std::uintptr_t>(v);
}

GpuInput from_cai(const py::handle& x, const py::handle& obj, const char* name, Kinds kinds) {
  if (!PyDict_Check(obj.ptr()))
    VPOC_THROW_ARG(TypeError, name, name, ".__cuda_array_interface__ must be a dict, got ",
                   std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
  const auto d = py::reinterpret_borrow<py::dict>(obj);
  PyObject* shape = item(d, ck().shape);
  if (shape == nullptr || !PySequence_Check(shape))
    VPOC_THROW_ARG(TypeError, name, name, ".__cuda_array_interface__ has no 'shape' tuple");
  const py::tuple shp = py::tuple(py::reinterpret_borrow<py::object>(shape));
  if (shp.size() != 1) not_1d(name, std::string(py::repr(shp)));
  const long long size = as_int(shp[0], name, "__cuda_array_interface__['shape'][0]");
  if (size < 0) VPOC_THROW_ARG(ValueError, name, name, ": __cuda_array_interface__ shape (", size, ",) is negative");
  PyObject* ts = item(d, ck().typestr);
  if (ts == nullptr || !PyUnicode_Check(ts)) VPOC_THROW_ARG(TypeError, name, name, ".__cuda_array_interface__ has no 'typestr' str");
  const std::string typestr = py::reinterpret_borrow<py::str>(ts);
  GpuInput out;
  // '<f4': byte order ('<' little, '|' not applicable, '=' native), kind, item bytes
  const bool order_ok = typestr.size() == 3 && (typestr[0] == '<' || typestr[0] == '|' || typestr[0] == '=');
  const int bytes = typestr.size() == 3 ? typestr[2] - '0' : 0;
  if (!order_ok || !engine_dtype(typestr[1], bytes, kinds, out.array.dtype)) bad_dtype(name, kinds, typestr);
  PyObject* strides = item(d, ck().strides);
  if (strides != nullptr && strides != Py_None && size > 1) {
    const py::tuple st = py::tuple(py::reinterpret_borrow<py::object>(strides));
    if (st.size() != 1 || as_int(st[0], name, "__cuda_array_interface__['strides'][0]") != bytes) not_contiguous(name);
  }
  PyObject* mask = item(d, ck().mask);
  if (mask != nullptr && mask != Py_None)
    VPOC_THROW_ARG(ValueError, name, name, " has a mask (__cuda_array_interface__['mask']); masked GPU arrays are not "
                   "supported: drop or fill the masked rows first");
  PyObject* data = item(d, ck().data);
  if (data == nullptr || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) < 1)
    VPOC_THROW_ARG(TypeError, name, name, ".__cuda_array_interface__ has no 'data' (pointer, read_only) tuple");
  const Ref p = index_of(PyTuple_GET_ITEM(data, 0), name, "__cuda_array_interface__['data'][0]");
  const auto ptr = static_cast<std::uintptr_t>(PyLong_AsUnsignedLongLong(p.ptr()));
  if (PyErr_Occurred()) throw py::error_already_set();
  cai_stream(item(d, ck().stream), name, out);
  out.array.data = reinterpret_cast<const void*>(ptr);
  out.array.size = size;
  out.array.device = cai_device(x);
  out.keep = py::none();
  return out;
}

// ---------------------------------------------------------------- DLPack

// (device_type, device_id) from x.__dlpack_device__(), or false when x has none.
bool dlpack_device(const py::handle& x, long long& type, long long& id) {
  const Ref f = attr_or_null(x, cn().dl_device);
  if (!f) return false;
  const Ref dev = steal(PyObject_CallNoArgs(f.ptr()));
  const Ref pair = steal(PySequence_Fast(dev.ptr(), "__dlpack_device__() must return a (device_type, device_id) pair"));
  if (PySequence_Fast_GET_SIZE(pair.ptr()) != 2)
    VPOC_THROW(TypeError, "__dlpack_device__() must return a (device_type, device_id) pair");
  type = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(pair.ptr(), 0));  // an int or an IntEnum
  id = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(pair.ptr(), 1));
  if (PyErr_Occurred()) throw py::error_already_set();
  return true;
}

// A typestr for a DLPack dtype (the error's wording): '<f2', '|b1', '<c8', 'bfloat16', ...
std::string dl_typestr(const dl::DLDataType& t) {
  if (t.lanes != 1) return "lanes=" + std::to_string(t.lanes);
  const int bytes = t.bits / 8;
  switch (t.code) {
    case dl::kDLInt: return (bytes == 1 ? "|i" : "<i") + std::to_string(bytes);
    case dl::kDLUInt: return (bytes == 1 ? "|u" : "<u") + std::to_string(bytes);
    case dl::kDLFloat: return "<f" + std::to_string(bytes);
    case 4: return "bfloat" + std::to_string(t.bits);
    case 5: return "<c" + std::to_string(bytes);
    case 6: return "|b" + std::to_string(bytes);
    default: return "DLPack code " + std::to_string(t.code) + " bits " + std::to_string(t.bits);
  }
}

// The array's DLPack capsule: __dlpack__(max_version=(1, 0)) (a producer without the keyword:
// __dlpack__()). No stream is passed: on CUDA/ROCm the producer orders its work before the legacy
// default stream, which the call then waits for (handle 0).
Ref dlpack_capsule(const py::handle& x) {
  const Ref f = steal(PyObject_GetAttr(x.ptr(), cn().dlpack));
  const Ref kw = steal(Py_BuildValue("{s:(ii)}", "max_version", 1, 0));
  const Ref args = steal(PyTuple_New(0));
  PyObject* cap = PyObject_Call(f.ptr(), args.ptr(), kw.ptr());
  if (cap == nullptr && PyErr_ExceptionMatches(PyExc_TypeError)) {  // a pre-1.0 producer: no max_version
    PyErr_Clear();
    cap = PyObject_CallNoArgs(f.ptr());
  }
  return steal(cap);
}

GpuInput from_dlpack(const py::handle& x, const char* name, Kinds kinds) {
  const Ref cap = dlpack_capsule(x);
  const dl::DLTensor* t = nullptr;
  if (PyCapsule_IsValid(cap.ptr(), dl::kCapsuleNameVersioned)) {
    const auto* m = static_cast<const dl::DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap.ptr(), dl::kCapsuleNameVersioned));
    if (m->version.major != dl::kMajorVersion)
      VPOC_THROW_ARG(TypeError, name, name, ": DLPack version ", m->version.major, ".", m->version.minor,
                     " is not supported (vpoc reads 1.x)");
    t = &m->dl_tensor;
  } else if (PyCapsule_IsValid(cap.ptr(), dl::kCapsuleName)) {
    t = &static_cast<const dl::DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), dl::kCapsuleName))->dl_tensor;
  } else {
    VPOC_THROW_ARG(TypeError, name, name, ".__dlpack__() did not return an unused DLPack capsule");
  }
  if (t->ndim != 1) {
    std::string shape = "(";
    for (int32_t i = 0; i < t->ndim; ++i) shape += (i ? ", " : "") + std::to_string(t->shape[i]);
    not_1d(name, shape + (t->ndim == 1 ? ",)" : ")"));
  }
  GpuInput out;
  const int bytes = t->dtype.bits / 8;
  const char kind = t->dtype.code == dl::kDLFloat ? 'f' : t->dtype.code == dl::kDLInt ? 'i' : '?';
  if (t->dtype.lanes != 1 || t->dtype.bits % 8 != 0 || !engine_dtype(kind, bytes, kinds, out.array.dtype))
    bad_dtype(name, kinds, dl_typestr(t->dtype));
  const int64_t size = t->shape[0];
  if (t->strides != nullptr && size > 1 && t->strides[0] != 1) not_contiguous(name);
  out.array.data = t->data == nullptr ? nullptr : static_cast<const char*>(t->data) + t->byte_offset;
  out.array.size = size;
  out.array.device = t->device.device_id;
  out.stream_kind = GpuInput::Stream::handle;  // the legacy default stream (see dlpack_capsule)
  out.stream = 0;
  out.keep = cap;  // the producer's deleter runs when the capsule goes, after the call
  return out;
}

[[noreturn]] void not_gpu(const char* name, const std::string& why) {
  VPOC_THROW_ARG(TypeError, name, name, " is not a GPU array (", why, "); pass a torch, cupy or other CUDA/ROCm "
                 "array with __cuda_array_interface__ or __dlpack__");
}

py::handle ndarray_type() {
  static const py::handle t = py::module_::import("numpy").attr("ndarray").cast<py::object>().release();  // leaked
  return t;
}

bool host_for_sure(const py::handle& x) {
  return x.is_none() || PyObject_TypeCheck(x.ptr(), reinterpret_cast<PyTypeObject*>(ndarray_type().ptr()));
}

// A torch tensor's read: -1 not in CUDA memory (host data), 0 declined (the interface path says
// why), 1 read into `out`.
int torch_read(const py::handle& x, const Torch& api, Kinds kinds, GpuInput& out) {
  if (!truth(steal(PyObject_GetAttr(x.ptr(), tn().is_cuda)))) return -1;
  return torch_fields(x, api, kinds, out) ? 1 : 0;
}

py::object typestr_of(vpoc::DType dt) {
  static const char* names[4] = {"f4", "f8", "i4", "i8"};
  return py::str(names[static_cast<int>(dt)]);
}

py::object stream_of(const GpuInput& g) {
  switch (g.stream_kind) {
    case GpuInput::Stream::none: return py::none();
    case GpuInput::Stream::handle: return py::int_(g.stream);
    case GpuInput::Stream::torch: return py::str("torch");
  }
  return py::none();
}

Kinds kinds_arg(const std::string& k) {
  if (k == "f") return Kinds::floats;
  if (k == "fi") return Kinds::numbers;
  VPOC_THROW_ARG(ValueError, "kinds", "kinds must be 'f' (prices) or 'fi' (volumes), got '", k, "'");
  return Kinds::floats;  // unreachable
}

}  // namespace

int gpu_location(const py::handle& x) {
  if (host_for_sure(x)) return -1;
  const Torch* api = nullptr;
  if (is_torch(x, api)) {
    if (!truth(steal(PyObject_GetAttr(x.ptr(), tn().is_cuda)))) return -1;
    return static_cast<int>(PyLong_AsLong(steal(PyObject_CallMethodNoArgs(x.ptr(), tn().get_device)).ptr()));
  }
  if (attr_or_null(x, cn().cai)) return cai_device(x);
  long long type = 0, id = 0;
  if (dlpack_device(x, type, id) && gpu_device_type(type)) return static_cast<int>(id);
  return -1;
}

bool read_gpu_input(const py::handle& x, const char* name, Kinds kinds, GpuInput& out, bool host_ok) {
  if (!host_ok && host_for_sure(x)) return false;
  const Torch* api = nullptr;
  py::object obj = py::reinterpret_borrow<py::object>(x);
  const bool torch = is_torch(x, api);
  if (torch) {
    const int r = torch_read(x, *api, kinds, out);
    if (r != 0) return r > 0;
    obj = detached(x);  // declined: its interface says what is wrong (or reads it after all)
  }
  if (const Ref cai = attr_or_null(obj, cn().cai)) {
    out = from_cai(obj, cai, name, kinds);
    if (torch) out.stream_kind = GpuInput::Stream::torch;  // torch's interface (v2) names no stream
    return true;
  }
  long long type = 0, id = 0;
  if (!dlpack_device(obj, type, id)) return false;
  if (!gpu_device_type(type) && !(host_ok && type == dl::kDLCPU)) return false;
  out = from_dlpack(obj, name, kinds);
  return true;
}

namespace {

// _core.GpuInput: a plain CPython type holding a GpuInput inline (one allocation; a pybind11 class
// instance costs about as much again as reading the array). Made only by gpu_inputs.
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
PyObject* get_typestr(PyObject* self, void*) { return typestr_of(held(self).array.dtype).release().ptr(); }
PyObject* get_device(PyObject* self, void*) { return PyLong_FromLong(held(self).array.device); }
PyObject* get_stream(PyObject* self, void*) { return stream_of(held(self)).release().ptr(); }
PyObject* gpu_input_repr(PyObject* self) {
  const GpuInput& g = held(self);
  return PyUnicode_FromFormat("vpoc._core.GpuInput(size=%lld, typestr='%s', device=%d)", static_cast<long long>(g.array.size),
                              std::string(py::str(typestr_of(g.array.dtype))).c_str(), g.array.device);
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

PyType_Slot gpu_input_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(&gpu_input_dealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(&gpu_input_repr)},
    {Py_tp_getset, gpu_input_getset},
    {Py_tp_doc, const_cast<char*>("A GPU array as the engine reads it (made by gpu_inputs): pointer, length, dtype, "
                                  "device, the producer's stream, and what keeps the memory alive for the call.")},
    {0, nullptr}};

PyType_Spec gpu_input_spec = {"vpoc._core.GpuInput", static_cast<int>(sizeof(GpuInputObject)), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, gpu_input_slots};

py::object wrap(GpuInput&& g) {
  PyObject* o = gpu_input_type->tp_alloc(gpu_input_type, 0);
  if (o == nullptr) throw py::error_already_set();
  new (&reinterpret_cast<GpuInputObject*>(o)->g) GpuInput(std::move(g));
  return py::reinterpret_steal<py::object>(o);
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
      [](const py::handle& x) -> py::object {
        const int d = gpu_location(x);
        return d < 0 ? py::object(py::none()) : py::object(py::int_(d));
      },
      py::arg("x"),
      "The GPU index of an array in GPU memory (a CUDA torch tensor, __cuda_array_interface__, a DLPack "
      "device of type CUDA, CUDA managed or ROCm), or None for host data.");

  m.def(
      "gpu_inputs",
      [](const py::dict& arrays) {
        py::dict ins;
        int index = -1, torch_device = -1;
        py::list streams;
        for (const auto& kv : arrays) {
          const py::handle v = kv.second;
          GpuInput g;
          const std::string name = py::str(kv.first);
          if (!read_gpu_input(v, name.c_str(), name == "volume" ? Kinds::numbers : Kinds::floats, g)) {
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
      py::arg("arrays"),
      "Each GPU array of {name: array} read once (GpuInput; 'volume' may be an integer array, the others "
      "float): (GPU index of the first or None, device of the first torch tensor or None, the producer "
      "streams of the others (handle or None), {name: GpuInput or the host input as it was}).");

  // Test and measurement hooks: the reader without the engine; nothing here reads the arrays' memory.
  m.def(
      "_parse_gpu_input",
      [](const py::handle& x, const std::string& name, const std::string& kinds, bool host_ok) {
        GpuInput g;
        if (!read_gpu_input(x, name.c_str(), kinds_arg(kinds), g, host_ok))
          not_gpu(name.c_str(), "no CUDA torch tensor, __cuda_array_interface__ or DLPack device of type CUDA/ROCm");
        return py::make_tuple(reinterpret_cast<std::uintptr_t>(g.array.data), g.array.size, typestr_of(g.array.dtype),
                              g.array.device, stream_of(g));
      },
      py::arg("x"), py::arg("name"), py::arg("kinds"), py::arg("host_ok") = false,
      "(pointer, size, typestr, device, stream) of a GPU array as gpu_inputs reads it (host_ok: a kDLCPU "
      "DLPack capsule too); TypeError for host data.");
  m.def(
      "_torch_fields",
      [](const py::handle& x, const std::string& kinds) -> py::object {
        const Torch* api = nullptr;
        if (!is_torch(x, api)) VPOC_THROW_ARG(TypeError, "x", "x must be a torch tensor");
        GpuInput g;
        if (!torch_fields(x, *api, kinds_arg(kinds), g, true)) return py::none();
        return py::make_tuple(reinterpret_cast<std::uintptr_t>(g.array.data), g.array.size, typestr_of(g.array.dtype),
                              g.array.device);
      },
      py::arg("x"), py::arg("kinds") = "fi",
      "The torch fast path's read of any tensor (CPU too): (pointer, size, typestr, device) or None when "
      "it declines (not 1-D, not contiguous, another dtype).");
}

}  // namespace vpoc_bind
