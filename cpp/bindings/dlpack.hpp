// bindings/dlpack.hpp — the DLPack 1.x ABI (written from the spec, not vendored) and 1-D capsule export.
// Contract: a capsule's tensor keeps its owner alive until its deleter runs (any thread, no GIL needed).
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include "vpoc/types.hpp"

namespace vpoc_bind::dlpack {

// ---- The DLPack C ABI (dlpack.h v1.x). Layouts must match the C header byte for byte. ----

// DLDeviceType codes (the C header's enum is int-sized; we store it as int32_t).
enum DeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLROCM = 10 };
// DLDataTypeCode codes (stored in DLDataType::code, a uint8_t).
enum TypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2 };

// The version this header implements; a consumer must reject a different major.
constexpr uint32_t kMajorVersion = 1;
constexpr uint32_t kMinorVersion = 0;

constexpr uint64_t kFlagReadOnly = uint64_t{1} << 0;  // DLPACK_FLAG_BITMASK_READ_ONLY
constexpr uint64_t kFlagIsCopied = uint64_t{1} << 1;  // DLPACK_FLAG_BITMASK_IS_COPIED

// Capsule names: producers hand out the first two, consumers rename to the "used_" ones.
constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kCapsuleNameVersioned = "dltensor_versioned";
constexpr const char* kCapsuleNameUsed = "used_dltensor";
constexpr const char* kCapsuleNameUsedVersioned = "used_dltensor_versioned";

// Plain structs with the C header's layout (checked below); their names match dlpack.h.
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

struct DLDevice {
  int32_t device_type;  // a DeviceType code
  int32_t device_id;    // 0 for host memory
};

struct DLDataType {
  uint8_t code;    // a TypeCode
  uint8_t bits;    // bits per lane
  uint16_t lanes;  // 1 for scalars
};

struct DLTensor {
  void* data;            // null for a zero-size tensor
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;        // ndim elements
  int64_t* strides;      // ndim elements, in elements (never null when ndim != 0, per v1.x)
  uint64_t byte_offset;
};

// Legacy (pre-1.0) exchange struct, still what consumers get without max_version.
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// The 1.x exchange struct; everything up to and including `flags` is ABI-stable across 1.x.
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

static_assert(sizeof(DLPackVersion) == 8, "DLPackVersion layout");
static_assert(sizeof(DLDevice) == 8, "DLDevice layout");
static_assert(sizeof(DLDataType) == 4, "DLDataType layout");
static_assert(offsetof(DLDataType, lanes) == 2, "DLDataType layout");
#if INTPTR_MAX == INT64_MAX
static_assert(offsetof(DLTensor, device) == 8, "DLTensor layout");
static_assert(offsetof(DLTensor, ndim) == 16, "DLTensor layout");
static_assert(offsetof(DLTensor, dtype) == 20, "DLTensor layout");
static_assert(offsetof(DLTensor, shape) == 24, "DLTensor layout");
static_assert(offsetof(DLTensor, strides) == 32, "DLTensor layout");
static_assert(offsetof(DLTensor, byte_offset) == 40, "DLTensor layout");
static_assert(sizeof(DLTensor) == 48, "DLTensor layout");
static_assert(offsetof(DLManagedTensor, manager_ctx) == 48, "DLManagedTensor layout");
static_assert(offsetof(DLManagedTensor, deleter) == 56, "DLManagedTensor layout");
static_assert(sizeof(DLManagedTensor) == 64, "DLManagedTensor layout");
static_assert(offsetof(DLManagedTensorVersioned, manager_ctx) == 8, "DLManagedTensorVersioned layout");
static_assert(offsetof(DLManagedTensorVersioned, deleter) == 16, "DLManagedTensorVersioned layout");
static_assert(offsetof(DLManagedTensorVersioned, flags) == 24, "DLManagedTensorVersioned layout");
static_assert(offsetof(DLManagedTensorVersioned, dl_tensor) == 32, "DLManagedTensorVersioned layout");
static_assert(sizeof(DLManagedTensorVersioned) == 80, "DLManagedTensorVersioned layout");
#endif

// ---- vpoc dtypes in DLPack terms ----

inline DLDataType data_type(vpoc::DType dt) {
  switch (dt) {
    case vpoc::DType::f32: return {kDLFloat, 32, 1};
    case vpoc::DType::f64: return {kDLFloat, 64, 1};
    case vpoc::DType::i32: return {kDLInt, 32, 1};
    case vpoc::DType::i64: return {kDLInt, 64, 1};
    case vpoc::DType::i8: return {kDLInt, 8, 1};
  }
  return {kDLFloat, 64, 1};  // unreachable: every DType is listed above
}

inline size_t item_size(vpoc::DType dt) {
  return dt == vpoc::DType::i8 ? 1 : (dt == vpoc::DType::f32 || dt == vpoc::DType::i32) ? 4 : 8;
}

// A 2-D array's columns: `cols` columns of n elements each, column k starting `stride` elements after
// column k - 1 (shape [n, cols], strides [1, stride] in elements); cols == 0: a 1-D array of n.
struct Columns {
  int64_t cols = 0;
  int64_t stride = 0;
};

namespace detail {

// One allocation per export: the managed tensor, the owner it keeps alive, and the shape/strides
// the tensor points into. manager_ctx points back here; the deleter deletes it (no Python calls).
template <class Managed>
struct Export {
  Managed managed{};
  std::shared_ptr<void> owner;
  int64_t shape[2] = {0, 0};
  int64_t strides[2] = {1, 0};
};

template <class Managed>
void delete_export(Managed* self) noexcept {
  if (self != nullptr) delete static_cast<Export<Managed>*>(self->manager_ctx);
}

// The capsule's destructor: a consumed capsule was renamed "used_*" and its consumer owns the
// deleter call, so only a capsule still carrying `name` (never consumed) frees its tensor.
template <class Managed>
void destroy_capsule(PyObject* capsule, const char* name) noexcept {
  if (!PyCapsule_IsValid(capsule, name)) return;  // renamed (consumed): not ours any more
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

inline void destroy_legacy_capsule(PyObject* capsule) {
  destroy_capsule<DLManagedTensor>(capsule, kCapsuleName);
}
inline void destroy_versioned_capsule(PyObject* capsule) {
  destroy_capsule<DLManagedTensorVersioned>(capsule, kCapsuleNameVersioned);
}

template <class Managed>
void fill_tensor(Export<Managed>& e, void* data, int64_t n, vpoc::DType dt, int device_type,
                 int device_id, const Columns& c) {
  e.shape[0] = n;
  e.strides[0] = 1;
  e.shape[1] = c.cols;
  e.strides[1] = c.stride;
  DLTensor& t = e.managed.dl_tensor;
  t.data = n > 0 ? data : nullptr;  // the spec asks for a null pointer on zero-size tensors (cols is 0: 1-D, or > 0)
  t.device = {static_cast<int32_t>(device_type), static_cast<int32_t>(device_id)};
  t.ndim = c.cols > 0 ? 2 : 1;
  t.dtype = data_type(dt);
  t.shape = e.shape;
  t.strides = e.strides;
  t.byte_offset = 0;
  e.managed.manager_ctx = &e;
  e.managed.deleter = &delete_export<Managed>;
}

}  // namespace detail

// A new capsule ("dltensor_versioned" when `versioned`, else legacy "dltensor") over the 1-D
// contiguous array [data, data + n) of `dt` on (device_type, device_id), or the 2-D one `cols` says. The managed tensor
// holds `owner` until the consumer calls its deleter, or until the capsule is dropped unconsumed.
// `read_only` sets DLPACK_FLAG_BITMASK_READ_ONLY (versioned only; legacy has no flags).
// Returns a new reference, or nullptr with a Python exception set; never throws. Needs the GIL.
inline PyObject* make_capsule(std::shared_ptr<void> owner, void* data, int64_t n, vpoc::DType dt,
                              int device_type, int device_id, bool versioned, bool read_only,
                              const Columns& cols = {}) {
  if (versioned) {
    auto* e = new (std::nothrow) detail::Export<DLManagedTensorVersioned>();
    if (e == nullptr) return PyErr_NoMemory();
    e->owner = std::move(owner);
    detail::fill_tensor(*e, data, n, dt, device_type, device_id, cols);
    e->managed.version = {kMajorVersion, kMinorVersion};
    e->managed.flags = read_only ? kFlagReadOnly : 0;
    PyObject* capsule =
        PyCapsule_New(&e->managed, kCapsuleNameVersioned, &detail::destroy_versioned_capsule);
    if (capsule == nullptr) delete e;
    return capsule;
  }
  auto* e = new (std::nothrow) detail::Export<DLManagedTensor>();
  if (e == nullptr) return PyErr_NoMemory();
  e->owner = std::move(owner);
  detail::fill_tensor(*e, data, n, dt, device_type, device_id, cols);
  PyObject* capsule = PyCapsule_New(&e->managed, kCapsuleName, &detail::destroy_legacy_capsule);
  if (capsule == nullptr) delete e;
  return capsule;
}

}  // namespace vpoc_bind::dlpack
