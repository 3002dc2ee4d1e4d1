"""DeviceArray's export machinery on host memory (CPU only): DLPack capsules of both flavours,
zero-copy sharing with NumPy and PyTorch, lifetimes, and the stream/CAI rules for GPU arrays."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
from vpoc import _core  # noqa: E402

# NumPy 2.1 asks for DLPack 1.0 capsules (their flags: writable) and has from_dlpack(copy=);
# older NumPy asks for legacy capsules, which it imports read-only. NumPy 2.0 has asarray(copy=).
NUMPY_2_1 = np.lib.NumpyVersion(np.__version__) >= "2.1.0"
NUMPY_2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"

DTYPES = (np.float64, np.int64, np.float32, np.int32)
KDLCPU, KDLCUDA, KDLROCM = 1, 2, 10


def values(dtype, n=1000):
    rng = np.random.default_rng(7)
    if np.issubdtype(dtype, np.floating):
        return rng.normal(100.0, 5.0, n).astype(dtype)
    return rng.integers(-(10**6), 10**6, n).astype(dtype)


def host_array(dtype=np.float64, n=1000):
    src = values(dtype, n)
    return src, _core._host_device_array(src)


# ---- ctypes views of the capsule and of the DLPack structs (checks the ABI, not a consumer) ----

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]
_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def capsule_name(capsule) -> str:
    return _get_name(capsule).decode()


def managed(capsule):
    name = capsule_name(capsule)
    struct = DLManagedTensorVersioned if name == "dltensor_versioned" else DLManagedTensor
    return struct.from_address(_get_pointer(capsule, name.encode()))


class LegacyOnly:
    """A producer wrapper that always hands out the legacy capsule (as a pre-1.0 producer would)."""

    def __init__(self, arr):
        self.arr = arr

    def __dlpack_device__(self):
        return self.arr.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        return self.arr.__dlpack__()


# ---- surface ----

@pytest.mark.parametrize("dtype", DTYPES)
def test_surface(dtype):
    src, arr = host_array(dtype, 37)
    assert arr.shape == (37,)
    assert arr.size == 37 and len(arr) == 37 and arr.ndim == 1
    assert arr.dtype == np.dtype(dtype)
    assert arr.nbytes == 37 * np.dtype(dtype).itemsize
    assert arr.device == "cpu"
    assert arr.__dlpack_device__() == (KDLCPU, 0)
    assert arr.data_ptr != 0 and arr.data_ptr != src.ctypes.data  # a copy of the input
    assert repr(arr) == f"vpoc.DeviceArray(size=37, dtype={np.dtype(dtype).name}, device='cpu')"
    assert not hasattr(arr, "__cuda_array_interface__")


def test_not_constructible_from_python():
    with pytest.raises(TypeError):
        _core.DeviceArray()


def test_host_factory_rejects_bad_input():
    with pytest.raises(ValueError):
        _core._host_device_array(np.zeros((2, 2, 2)))
    with pytest.raises(TypeError):
        _core._host_device_array(np.zeros(3, dtype=np.uint8))


def test_host_factory_copies_noncontiguous_input():
    src = np.arange(20, dtype=np.int64)[::2]
    arr = _core._host_device_array(src)
    np.testing.assert_array_equal(arr.numpy(), src)


# ---- capsules ----

@pytest.mark.parametrize("max_version, name", [
    (None, "dltensor"), ((0, 8), "dltensor"), ((1, 0), "dltensor_versioned"),
    ((1, 3), "dltensor_versioned"), ((2, 0), "dltensor_versioned"),
])
def test_capsule_flavour(max_version, name):
    _, arr = host_array()
    cap = arr.__dlpack__() if max_version is None else arr.__dlpack__(max_version=max_version)
    assert capsule_name(cap) == name
    assert f'"{name}"' in repr(cap)


@pytest.mark.parametrize("dtype, code, bits", [(np.float64, 2, 64), (np.int64, 0, 64),
                                               (np.float32, 2, 32), (np.int32, 0, 32)])
@pytest.mark.parametrize("versioned", [False, True])
def test_capsule_abi(dtype, code, bits, versioned):
    _, arr = host_array(dtype, 11)
    cap = arr.__dlpack__(max_version=(1, 0)) if versioned else arr.__dlpack__()
    m = managed(cap)
    if versioned:
        assert (m.version.major, m.version.minor) == (1, 0)
        assert m.flags == 0  # writable, not a copy
    t = m.dl_tensor
    assert t.data == arr.data_ptr and t.byte_offset == 0
    assert (t.device.device_type, t.device.device_id) == (KDLCPU, 0)
    assert t.ndim == 1 and t.shape[0] == 11 and t.strides[0] == 1
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (code, bits, 1)
    assert m.manager_ctx and m.deleter


# ---- zero-copy consumers ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("legacy", [False, True])
def test_numpy_from_dlpack_shares_memory(dtype, legacy):
    src, arr = host_array(dtype)
    out = np.from_dlpack(LegacyOnly(arr) if legacy else arr)
    assert out.dtype == np.dtype(dtype) and out.shape == (arr.size,)
    assert out.ctypes.data == arr.data_ptr
    np.testing.assert_array_equal(out, src)
    if legacy or not NUMPY_2_1:
        assert not out.flags.writeable  # NumPy imports flag-less legacy capsules read-only
    else:
        out[0] = 42  # writable (no READ_ONLY flag), and the same memory
        assert arr.numpy()[0] == 42


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("legacy", [False, True])
def test_torch_from_dlpack_shares_memory(dtype, legacy):
    torch = pytest.importorskip("torch")
    src, arr = host_array(dtype)
    t = torch.from_dlpack(LegacyOnly(arr) if legacy else arr)
    assert t.device.type == "cpu" and tuple(t.shape) == (arr.size,)
    assert t.data_ptr() == arr.data_ptr
    np.testing.assert_array_equal(t.numpy(), src)


def test_consumed_capsules_are_renamed():
    torch = pytest.importorskip("torch")
    _, arr = host_array()
    cap = arr.__dlpack__()
    t = torch.from_dlpack(cap)
    assert capsule_name(cap) == "used_dltensor"
    assert t.data_ptr() == arr.data_ptr
    capv = arr.__dlpack__(max_version=(1, 0))
    try:
        tv = torch.from_dlpack(capv)
    except Exception:  # older torch reads only legacy capsules
        pytest.skip("this torch cannot consume a dltensor_versioned capsule directly")
    assert capsule_name(capv) == "used_dltensor_versioned"
    assert tv.data_ptr() == arr.data_ptr


# ---- lifetimes ----

@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_consumers_outlive_the_array(dtype):
    torch = pytest.importorskip("torch")
    src, arr = host_array(dtype)
    base = arr._owner_refs
    t = torch.from_dlpack(arr)
    n = np.from_dlpack(arr)
    legacy = np.from_dlpack(LegacyOnly(arr))
    assert arr._owner_refs == base + 3
    del arr
    gc.collect()
    _ = [np.empty(1000, dtype=dtype) for _ in range(100)]  # reuse freed memory, if it was freed
    np.testing.assert_array_equal(t.numpy(), src)
    np.testing.assert_array_equal(n, src)
    np.testing.assert_array_equal(legacy, src)


def test_consumers_release_the_owner():
    torch = pytest.importorskip("torch")
    _, arr = host_array()
    base = arr._owner_refs
    t, n, legacy = torch.from_dlpack(arr), np.from_dlpack(arr), np.from_dlpack(LegacyOnly(arr))
    del t, n, legacy
    gc.collect()
    assert arr._owner_refs == base


def test_unconsumed_capsule_keeps_memory_alive():
    torch = pytest.importorskip("torch")
    src, arr = host_array()
    cap = arr.__dlpack__()
    del arr
    gc.collect()
    np.testing.assert_array_equal(torch.from_dlpack(cap).numpy(), src)


def test_dropped_capsules_free_their_tensors():
    _, arr = host_array(np.float64, 10)
    base = arr._owner_refs
    held = [arr.__dlpack__(max_version=(1, 0)) for _ in range(10)]
    assert arr._owner_refs == base + 10
    del held
    for i in range(10000):
        cap = arr.__dlpack__(max_version=(1, 0)) if i % 2 else arr.__dlpack__()
        del cap
    gc.collect()
    assert arr._owner_refs == base
    np.testing.assert_array_equal(np.from_dlpack(arr), arr.numpy())


# ---- __dlpack__ arguments ----

def test_copy_and_device_requests():
    _, arr = host_array()
    with pytest.raises(BufferError):
        arr.__dlpack__(copy=True)
    with pytest.raises(BufferError):
        arr.__dlpack__(max_version=(1, 0), copy=True)
    with pytest.raises(BufferError):
        arr.__dlpack__(dl_device=(KDLCUDA, 0))
    with pytest.raises(BufferError):
        arr.__dlpack__(dl_device=(KDLCPU, 1))
    assert capsule_name(arr.__dlpack__(copy=False)) == "dltensor"
    assert capsule_name(arr.__dlpack__(max_version=(1, 0), dl_device=(KDLCPU, 0))) == "dltensor_versioned"
    if NUMPY_2_1:
        with pytest.raises(BufferError):
            np.from_dlpack(arr, copy=True)
    with pytest.raises(TypeError):
        arr.__dlpack__(None)  # keyword-only


def test_host_memory_stream_argument():
    _, arr = host_array()
    arr.__dlpack__(stream=None)
    arr.__dlpack__(stream=-1)
    with pytest.raises(ValueError):
        arr.__dlpack__(stream=1)


# ---- host copies ----

@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_and_array_protocol(dtype):
    src, arr = host_array(dtype)
    host = arr.numpy()
    np.testing.assert_array_equal(host, src)
    assert host.ctypes.data != arr.data_ptr  # numpy() always copies
    view = np.asarray(arr)
    np.testing.assert_array_equal(view, src)
    assert view.ctypes.data == arr.data_ptr  # host memory: __array__ is a view...
    copied = np.array(arr, copy=True)
    assert copied.ctypes.data != arr.data_ptr  # ...unless a copy is asked for
    np.testing.assert_array_equal(copied, src)
    np.testing.assert_array_equal(np.asarray(arr, dtype=np.float64), src.astype(np.float64))


def test_array_view_keeps_memory_alive():
    src, arr = host_array()
    view = np.asarray(arr)
    del arr
    gc.collect()
    np.testing.assert_array_equal(view, src)


def test_empty_array():
    arr = _core._host_device_array(np.array([], dtype=np.int64))
    assert arr.shape == (0,) and len(arr) == 0
    for cap in (arr.__dlpack__(), arr.__dlpack__(max_version=(1, 0))):
        assert managed(cap).dl_tensor.shape[0] == 0
    assert np.from_dlpack(arr).shape == (0,)
    assert arr.numpy().shape == (0,) and np.asarray(arr).shape == (0,)
    torch = pytest.importorskip("torch")
    assert tuple(torch.from_dlpack(arr).shape) == (0,)


# ---- GPU rules, on host memory merely labelled as GPU memory (never consumed) ----

def test_cuda_labelled_array_interface_and_streams():
    src = np.arange(8, dtype=np.float64)
    arr = _core._host_device_array(src, device_type=KDLCUDA, device_id=0)
    assert arr.device == "cuda:0" and arr.__dlpack_device__() == (KDLCUDA, 0)
    cai = arr.__cuda_array_interface__
    assert cai == {"shape": (8,), "typestr": "<f8", "data": (arr.data_ptr, False), "version": 3,
                   "strides": None, "stream": None}  # nothing pending: no synchronization needed
    for stream in (None, -1, 1, 2, 0x7F00_0000_1000):
        capsule_name(arr.__dlpack__(stream=stream))  # nothing pending: no wait is issued
    with pytest.raises(ValueError):
        arr.__dlpack__(stream=0)  # ambiguous for CUDA
    with pytest.raises(ValueError):
        arr.__dlpack__(stream=-2)
    with pytest.raises(TypeError):
        arr.__dlpack__(stream="default")
    with pytest.raises(BufferError):
        arr.__dlpack__(dl_device=(KDLCPU, 0))
    with pytest.raises(ValueError):  # device memory cannot be viewed from the host
        np.asarray(arr, copy=False) if NUMPY_2 else np.asarray(arr)


def test_rocm_labelled_streams():
    arr = _core._host_device_array(np.arange(4, dtype=np.int64), device_type=KDLROCM, device_id=1)
    assert arr.device == "rocm:1" and arr.__dlpack_device__() == (KDLROCM, 1)
    assert not hasattr(arr, "__cuda_array_interface__")
    for stream in (None, -1, 0, 0x7F00_0000_1000):
        capsule_name(arr.__dlpack__(stream=stream))
    for stream in (1, 2):
        with pytest.raises(ValueError):
            arr.__dlpack__(stream=stream)
