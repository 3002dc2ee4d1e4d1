// bindings/gpu_input.cpp — foreign GPU arrays read once in C++: torch tensors (their C-level accessors),
// __cuda_array_interface__ v2/v3, DLPack capsules. Contract: the only place that understands them; never touches their memory.
#include "gpu_input.hpp"

#include <pybind11/stl.h>

#include <climits>
#include <new>
#include <string>

#include "dlpack.hpp"
#include "vpoc/errors.hpp"

namespace vpoc_bind {
namespace {

namespace dl = dlpack;

// kDLCUDAManaged: CUDA managed memory (dlpack.h), read by the GPU engine in place like device memory
// (so device='cpu' refuses it as a GPU input); kDLROCMHost: pinned host memory of ROCm.
constexpr int32_t kDLCUDAManaged = 13;
constexpr int32_t kDLROCMHost = 11;

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

std::string type_name(const py::handle& v) { return py::str(py::type::handle_of(v).attr("__name__")); }
std::string text(const py::handle& v) { return steal(PyObject_Str(v.ptr())).cast<std::string>(); }

// An integer entry (int, numpy integer: anything with __index__, never bool) as a Python int.
Ref index_of(const py::handle& v, const char* name, const char* what) {
  if (PyLong_CheckExact(v.ptr())) return py::reinterpret_borrow<py::object>(v);
  if (PyBool_Check(v.ptr()) || !PyIndex_Check(v.ptr()))
    VPOC_THROW_ARG(TypeError, name, name, ": ", what, " must be an int, got ", type_name(v));
  return steal(PyNumber_Index(v.ptr()));
}

// An integer entry as a long long; ValueError naming `name` when it does not fit.
long long as_int(const py::handle& v, const char* name, const char* what) {
  const Ref i = index_of(v, name, what);
  int overflow = 0;
  const long long r = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (r == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0) VPOC_THROW_ARG(ValueError, name, name, ": ", what, " is out of range, got ", text(i));
  return r;
}

// A GPU index as an int; ValueError naming `name` unless 0 <= v <= INT_MAX (never truncated).
int device_index(long long v, const char* name, const char* what) {
  if (v < 0 || v > INT_MAX) VPOC_THROW_ARG(ValueError, name, name, ": ", what, " must be a GPU index >= 0, got ", v);
  return static_cast<int>(v);
}

// A data pointer entry (an int >= 0 below 2**64); null only for an empty array.
std::uintptr_t pointer(const py::handle& v, int64_t size, const char* name, const char* what) {
  const Ref p = index_of(v, name, what);
  const unsigned long long ptr = PyLong_AsUnsignedLongLong(p.ptr());
  if (PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw py::error_already_set();
    PyErr_Clear();
    VPOC_THROW_ARG(ValueError, name, name, ": ", what, " must be an address >= 0 below 2**64, got ", text(p));
  }
  if (ptr == 0 && size > 0) VPOC_THROW_ARG(ValueError, name, name, ": ", what, " is a null pointer but the array has ", size, " elements");
  return static_cast<std::uintptr_t>(ptr);
}

std::string allowed(Kinds k) {
  return k == Kinds::floats ? "float32 or float64" : k == Kinds::side ? "int8" : "float32, float64, int32 or int64";
}

// The engine dtype of (kind, bytes) when `kinds` accepts it.
bool engine_dtype(char kind, int bytes, Kinds kinds, vpoc::DType& dt) {
  if (kinds == Kinds::side) {
    dt = vpoc::DType::i8;
    return kind == 'i' && bytes == 1;
  }
  if (kind == 'f' && bytes == 4) dt = vpoc::DType::f32;
  else if (kind == 'f' && bytes == 8) dt = vpoc::DType::f64;
  else if (kinds == Kinds::floats) return false;
  else if (kind == 'i' && bytes == 4) dt = vpoc::DType::i32;
  else if (kind == 'i' && bytes == 8) dt = vpoc::DType::i64;
  else return false;
  return true;
}

// `got`: "typestr '<f2'" (interface, DLPack) or "dtype torch.bfloat16" (torch).
[[noreturn]] void bad_dtype(const char* name, Kinds kinds, const std::string& got) {
  VPOC_THROW_ARG(TypeError, name, name, " on the GPU must be ", allowed(kinds), " (got ", got,
                 "); convert it on the device first, e.g. x.float()");
}

[[noreturn]] void not_1d(const char* name, const std::string& shape) {
  VPOC_THROW_ARG(ValueError, name, name, " must be 1-D, got shape ", shape);
}

[[noreturn]] void not_contiguous(const char* name) {
  VPOC_THROW_ARG(ValueError, name, name, " must be contiguous on the GPU; call .contiguous() first");
}

// ---------------------------------------------------------------- torch

// torch.Tensor, torch.strided and the engine dtypes, looked up once torch is imported (never imports it:
// without torch in sys.modules no torch tensor exists). Leaked references, as the module's other statics.
struct Torch {
  PyTypeObject* tensor = nullptr;
  PyObject* strided = nullptr;
  PyObject* dtypes[5] = {};  // float32, float64, int32, int64, int8 (vpoc::DType order)
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
  const char* names[7] = {"float32", "float64", "int32", "int64", "int8", "strided", "Tensor"};
  Ref got[7];
  for (int i = 0; i < 7; ++i) {
    got[i] = attr_or_null(m, py::str(names[i]).ptr());
    if (!got[i]) return nullptr;  // torch still importing (nothing kept: the references go with `got`)
  }
  if (!PyType_Check(got[6].ptr())) return nullptr;
  for (int i = 0; i < 5; ++i) api.dtypes[i] = got[i].release().ptr();
  api.strided = got[5].release().ptr();
  api.tensor = reinterpret_cast<PyTypeObject*>(got[6].release().ptr());
  return &api;
}

bool is_torch(const py::handle& x, const Torch*& api) {
  api = torch_api();
  return api != nullptr && PyObject_TypeCheck(x.ptr(), api->tensor);
}

struct TorchNames {
  PyObject *is_cuda = intern("is_cuda"), *shape = intern("shape"), *dtype = intern("dtype"),
           *is_contiguous = intern("is_contiguous"), *data_ptr = intern("data_ptr"), *get_device = intern("get_device"),
           *layout = intern("layout"), *is_neg = intern("is_neg");
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

// The fast read of a torch tensor through its C-level accessors (layout, shape, dtype, is_neg(),
// is_contiguous(), data_ptr(), get_device(): 7 calls, about 0.2 us; its __cuda_array_interface__ is a
// Python property building a dict, several times that; the caller has read is_cuda): true and `out`
// filled for a dense 1-D contiguous tensor of an accepted dtype. Anything else raises TypeError /
// ValueError naming `name`, worded here (torch's own interface words dtypes by version, or not at all);
// name nullptr (the test hook on CPU tensors): false instead.
bool torch_fields(const py::handle& x, const Torch& api, Kinds kinds, GpuInput& out, const char* name) {
  const auto& n = tn();
  const Ref layout = steal(PyObject_GetAttr(x.ptr(), n.layout));
  if (layout.ptr() != api.strided) {
    if (name == nullptr) return false;
    VPOC_THROW_ARG(TypeError, name, name, " is a torch tensor of layout ", text(layout),
                   " (sparse or another non-dense layout); pass a dense one, e.g. x.to_dense()");
  }
  const Ref shape = steal(PyObject_GetAttr(x.ptr(), n.shape));
  if (!PyTuple_Check(shape.ptr()) || PyTuple_GET_SIZE(shape.ptr()) != 1) {
    if (name == nullptr) return false;
    not_1d(name, text(steal(PySequence_Tuple(shape.ptr()))));
  }
  const long long size = PyLong_AsLongLong(PyTuple_GET_ITEM(shape.ptr(), 0));
  if (size == -1 && PyErr_Occurred()) throw py::error_already_set();
  const Ref dtype = steal(PyObject_GetAttr(x.ptr(), n.dtype));
  int k = 0;
  while (k < 5 && api.dtypes[k] != dtype.ptr()) ++k;
  const auto dt = static_cast<vpoc::DType>(k);
  // side codes are int8 and only they are (a volume of int8 is not an engine dtype)
  if (k == 5 || (kinds == Kinds::side) != (dt == vpoc::DType::i8) ||
      (kinds == Kinds::floats && dt != vpoc::DType::f32 && dt != vpoc::DType::f64)) {
    if (name == nullptr) return false;
    bad_dtype(name, kinds, "dtype " + text(dtype));
  }
  // the negative bit (a lazy negation view: _neg_view, z.conj().imag): data_ptr() holds -x. The
  // conjugate bit needs a complex dtype, refused above.
  if (const Ref neg = attr_or_null(x, n.is_neg); neg && truth(steal(PyObject_CallNoArgs(neg.ptr())))) {
    if (name == nullptr) return false;
    VPOC_THROW_ARG(ValueError, name, name, " is a torch tensor with its negative bit set (a lazy negation view, "
                   "e.g. z.conj().imag): its memory holds -x; call .resolve_neg() first");
  }
  if (size > 1 && !truth(steal(PyObject_CallMethodNoArgs(x.ptr(), n.is_contiguous)))) {  // 1-D: stride 1
    if (name == nullptr) return false;
    not_contiguous(name);
  }
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
  out.array.device = static_cast<int>(device);  // torch's device index: an int8 in torch itself
  out.stream_kind = GpuInput::Stream::torch;
  out.stream = 0;
  out.keep = py::none();
  return true;
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
// (torch) or x.device.id (cupy), else 0; ValueError naming `name` for a negative or huge index.
int cai_device(const py::handle& x, const char* name) {
  const auto& n = cn();
  const Ref dev = attr_or_null(x, n.device);
  if (!dev) return 0;
  for (PyObject* a : {n.index, n.id}) {
    const Ref v = attr_or_null(dev, a);
    if (v && PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr()))
      return device_index(as_int(v, name, "device index"), name, "its device index");
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

// A tuple entry of the interface ('shape', 'strides'): any sequence; TypeError naming `name` otherwise.
py::tuple cai_tuple(PyObject* v, const char* name, const char* key) {
  if (v == nullptr || !PySequence_Check(v) || PyUnicode_Check(v))
    VPOC_THROW_ARG(TypeError, name, name, ".__cuda_array_interface__['", key, "'] must be a tuple, got ",
                   v == nullptr ? std::string("nothing") : type_name(v));
  return py::reinterpret_steal<py::tuple>(steal(PySequence_Tuple(v)).release());
}

GpuInput from_cai(const py::handle& x, const py::handle& obj, const char* name, Kinds kinds) {
  if (!PyDict_Check(obj.ptr()))
    VPOC_THROW_ARG(TypeError, name, name, ".__cuda_array_interface__ must be a dict, got ", type_name(obj));
  const auto d = py::reinterpret_borrow<py::dict>(obj);
  const py::tuple shp = cai_tuple(item(d, ck().shape), name, "shape");
  if (shp.size() != 1) not_1d(name, text(shp));
  const long long size = as_int(shp[0], name, "__cuda_array_interface__['shape'][0]");
  if (size < 0) VPOC_THROW_ARG(ValueError, name, name, ": __cuda_array_interface__ shape (", size, ",) is negative");
  PyObject* ts = item(d, ck().typestr);
  if (ts == nullptr || !PyUnicode_Check(ts)) VPOC_THROW_ARG(TypeError, name, name, ".__cuda_array_interface__ has no 'typestr' str");
  const std::string typestr = py::reinterpret_borrow<py::str>(ts);
  GpuInput out;
  // '<f4': byte order ('<' little, '|' not applicable, '=' native), kind, item bytes
  const bool order_ok = typestr.size() == 3 && (typestr[0] == '<' || typestr[0] == '|' || typestr[0] == '=');
  const int bytes = typestr.size() == 3 ? typestr[2] - '0' : 0;
  if (!order_ok || !engine_dtype(typestr[1], bytes, kinds, out.array.dtype)) bad_dtype(name, kinds, "typestr '" + typestr + "'");
  PyObject* strides = item(d, ck().strides);
  if (strides != nullptr && strides != Py_None) {
    const py::tuple st = cai_tuple(strides, name, "strides");
    if (st.size() != 1) not_contiguous(name);
    const long long step = as_int(st[0], name, "__cuda_array_interface__['strides'][0]");
    if (size > 1 && step != bytes) not_contiguous(name);
  }
  PyObject* mask = item(d, ck().mask);
  if (mask != nullptr && mask != Py_None)
    VPOC_THROW_ARG(ValueError, name, name, " has a mask (__cuda_array_interface__['mask']); masked GPU arrays are not "
                   "supported: drop or fill the masked rows first");
  PyObject* data = item(d, ck().data);
  if (data == nullptr || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) < 1)
    VPOC_THROW_ARG(TypeError, name, name, ".__cuda_array_interface__ has no 'data' (pointer, read_only) tuple");
  const std::uintptr_t ptr = pointer(PyTuple_GET_ITEM(data, 0), size, name, "__cuda_array_interface__['data'][0]");
  cai_stream(item(d, ck().stream), name, out);
  out.array.data = reinterpret_cast<const void*>(ptr);
  out.array.size = size;
  out.array.device = cai_device(x, name);
  out.keep = py::none();
  return out;
}

// ---------------------------------------------------------------- DLPack

// (device_type, device_id) from x.__dlpack_device__(), or false when x has none; errors name `name`.
bool dlpack_device(const py::handle& x, const char* name, long long& type, long long& id) {
  const Ref f = attr_or_null(x, cn().dl_device);
  if (!f) return false;
  const Ref dev = steal(PyObject_CallNoArgs(f.ptr()));
  PyObject* pair = PySequence_Check(dev.ptr()) && !PyUnicode_Check(dev.ptr()) ? PySequence_Fast(dev.ptr(), "") : nullptr;
  if (pair == nullptr) PyErr_Clear();
  const Ref p = pair == nullptr ? Ref() : steal(pair);
  if (!p || PySequence_Fast_GET_SIZE(p.ptr()) != 2)
    VPOC_THROW_ARG(TypeError, name, name, ".__dlpack_device__() must return a (device_type, device_id) pair, got ",
                   text(dev));
  type = as_int(PySequence_Fast_GET_ITEM(p.ptr(), 0), name, "__dlpack_device__()[0]");  // an int or an IntEnum
  id = as_int(PySequence_Fast_GET_ITEM(p.ptr(), 1), name, "__dlpack_device__()[1]");
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

// __dlpack__'s `stream` for a consumer on the raw stream `consumer` (0: the legacy default), as the
// DLPack spec words it: CUDA 1 = legacy default, 2 = per-thread default, else the handle; ROCm
// 0 = the default stream, else the handle; host memory None.
Ref dlpack_stream(long long device_type, std::uintptr_t consumer) {
  if (device_type == dl::kDLROCM) return steal(PyLong_FromUnsignedLongLong(consumer));
  if (gpu_device_type(device_type)) return steal(PyLong_FromUnsignedLongLong(consumer == 0 ? 1 : consumer));
  return py::none();
}

// The array's DLPack capsule, its producer's work ordered before the consumer's stream:
// __dlpack__(stream=s, max_version=(1, 0)); a producer without max_version: __dlpack__(stream=s); one
// without either: __dlpack__() (it orders nothing the consumer could name). A BufferError (the producer
// cannot export: a torch tensor on another device than the current one, ...) is a ValueError naming `name`.
Ref dlpack_capsule(const py::handle& x, const char* name, long long device_type, std::uintptr_t consumer) {
  const Ref f = steal(PyObject_GetAttr(x.ptr(), cn().dlpack));
  const Ref stream = dlpack_stream(device_type, consumer);
  const Ref args = steal(PyTuple_New(0));
  PyObject* cap = nullptr;
  for (int attempt = 0; attempt < 3 && cap == nullptr; ++attempt) {
    if (attempt > 0) {
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) break;
      PyErr_Clear();
    }
    const Ref kw = steal(PyDict_New());
    if (attempt < 2 && PyDict_SetItemString(kw.ptr(), "stream", stream.ptr()) < 0) throw py::error_already_set();
    if (attempt == 0) {
      const Ref version = steal(Py_BuildValue("(ii)", 1, 0));
      if (PyDict_SetItemString(kw.ptr(), "max_version", version.ptr()) < 0) throw py::error_already_set();
    }
    cap = PyObject_Call(f.ptr(), args.ptr(), kw.ptr());
  }
  if (cap == nullptr && PyErr_ExceptionMatches(PyExc_BufferError)) {
    py::error_already_set e;
    VPOC_THROW_ARG(ValueError, name, name, ": its __dlpack__() refused the export (BufferError: ", text(e.value()), ")");
  }
  return steal(cap);
}

// `x` read through DLPack; (type, id): its __dlpack_device__(); `consumer`: the call's raw stream.
GpuInput from_dlpack(const py::handle& x, const char* name, Kinds kinds, long long type, long long id,
                     std::uintptr_t consumer) {
  const Ref cap = dlpack_capsule(x, name, type, consumer);
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
  if (t->device.device_type != type || t->device.device_id != id)
    VPOC_THROW_ARG(ValueError, name, name, ": its DLPack capsule is on device (", t->device.device_type, ", ",
                   t->device.device_id, ") but its __dlpack_device__() says (", type, ", ", id, ")");
  if (t->ndim != 1) {
    std::string shape = "(";
    for (int32_t i = 0; i < t->ndim; ++i) shape += (i ? ", " : "") + std::to_string(t->shape[i]);
    not_1d(name, shape + ")");
  }
  GpuInput out;
  const int bytes = t->dtype.bits / 8;
  const char kind = t->dtype.code == dl::kDLFloat ? 'f' : t->dtype.code == dl::kDLInt ? 'i' : '?';
  if (t->dtype.lanes != 1 || t->dtype.bits % 8 != 0 || !engine_dtype(kind, bytes, kinds, out.array.dtype))
    bad_dtype(name, kinds, "typestr '" + dl_typestr(t->dtype) + "'");
  const int64_t size = t->shape[0];
  if (size < 0) VPOC_THROW_ARG(ValueError, name, name, ": its DLPack shape (", size, ",) is negative");
  if (t->strides != nullptr && size > 1 && t->strides[0] != 1) not_contiguous(name);
  if (t->data == nullptr && size > 0)
    VPOC_THROW_ARG(ValueError, name, name, ": its DLPack data is a null pointer but the array has ", size, " elements");
  out.array.data = t->data == nullptr ? nullptr : static_cast<const char*>(t->data) + t->byte_offset;
  out.array.size = size;
  out.array.device = type == dl::kDLCPU ? 0 : device_index(id, name, "its DLPack device id");
  out.stream_kind = GpuInput::Stream::handle;  // the producer ordered its work before it (dlpack_capsule)
  out.stream = consumer;
  out.keep = cap;  // the producer's deleter: after the call's work on the GPU (register_profiles: run)
  return out;
}

py::handle ndarray_type() {
  static const py::handle t = py::module_::import("numpy").attr("ndarray").cast<py::object>().release();  // leaked
  return t;
}

bool host_for_sure(const py::handle& x) {
  return x.is_none() || PyObject_TypeCheck(x.ptr(), reinterpret_cast<PyTypeObject*>(ndarray_type().ptr()));
}

}  // namespace

void not_gpu(const char* name, const std::string& why) {
  VPOC_THROW_ARG(TypeError, name, name, " is not a GPU array (", why, "); pass a torch, cupy or other CUDA/ROCm "
                 "array with __cuda_array_interface__ or __dlpack__");
}

const char* typestr_of(vpoc::DType dt) {
  static const char* const names[5] = {"f4", "f8", "i4", "i8", "i1"};  // vpoc::DType order
  return names[static_cast<int>(dt)];
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
}

bool torch_fields_any(const py::handle& x, Kinds kinds, GpuInput& out, const char* name) {
  const Torch* api = nullptr;
  if (!is_torch(x, api)) VPOC_THROW_ARG(TypeError, "x", "x must be a torch tensor");
  return torch_fields(x, *api, kinds, out, name);
}

bool dlpack_host_memory(long long device_type) {
  return device_type == dl::kDLCPU || device_type == dl::kDLCUDAHost || device_type == kDLROCMHost;
}

int gpu_location(const py::handle& x, const char* name) {
  if (host_for_sure(x)) return -1;
  const Torch* api = nullptr;
  if (is_torch(x, api)) {
    if (!truth(steal(PyObject_GetAttr(x.ptr(), tn().is_cuda)))) return -1;
    const long long d = PyLong_AsLongLong(steal(PyObject_CallMethodNoArgs(x.ptr(), tn().get_device)).ptr());
    if (d == -1 && PyErr_Occurred()) throw py::error_already_set();
    return device_index(d, name, "its get_device()");
  }
  if (attr_or_null(x, cn().cai)) return cai_device(x, name);
  long long type = 0, id = 0;
  if (dlpack_device(x, name, type, id) && gpu_device_type(type)) return device_index(id, name, "its DLPack device id");
  return -1;
}

bool read_gpu_input(const py::handle& x, const char* name, Kinds kinds, GpuInput& out, std::uintptr_t consumer,
                    bool host_ok) {
  if (!host_ok && host_for_sure(x)) return false;
  const Torch* api = nullptr;
  if (is_torch(x, api)) {  // never through torch's interfaces: the fast read words every refusal itself
    if (!truth(steal(PyObject_GetAttr(x.ptr(), tn().is_cuda)))) return false;
    return torch_fields(x, *api, kinds, out, name);
  }
  if (const Ref cai = attr_or_null(x, cn().cai)) {
    out = from_cai(x, cai, name, kinds);
    return true;
  }
  long long type = 0, id = 0;
  if (!dlpack_device(x, name, type, id)) return false;
  if (!gpu_device_type(type) && !(host_ok && type == dl::kDLCPU)) return false;
  out = from_dlpack(x, name, kinds, type, id, consumer);
  return true;
}

}  // namespace vpoc_bind
