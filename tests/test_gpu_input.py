"""The C++ reader of foreign GPU arrays (cpp/bindings/gpu_input.cpp) without a GPU: fake producers.

Contract: __cuda_array_interface__ dicts and DLPack capsules (ctypes-built kDLCUDA ones, numpy's kDLCPU one)
are read without touching their memory; every bad array raises TypeError/ValueError naming the argument.
"""

from __future__ import annotations

import ctypes
import re
import sys

import numpy as np
import pytest

from vpoc import _core, _device

PTR = 0x7F00_0000_0000


# ---------------------------------------------------------------- fake producers


class CAI:
    """An object exposing a __cuda_array_interface__ dict (defaults: v3, 1-D float32, no stream)."""

    def __init__(self, device=None, drop=(), **entries):
        d = dict(shape=(10,), typestr="<f4", data=(PTR, False), version=3, strides=None, stream=None)
        d.update(entries)
        for k in drop:
            d.pop(k)
        self.__cuda_array_interface__ = d
        if device is not None:
            self.device = device


class Dev:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_NAMES = {True: b"dltensor_versioned", False: b"dltensor"}

# DLPack dtype codes
INT, UINT, FLOAT, BFLOAT, COMPLEX, BOOL = 0, 1, 2, 4, 5, 6


class FakeDL:
    """A DLPack producer whose capsule (no deleter: nothing to free) describes memory it never has."""

    def __init__(self, device=(2, 0), shape=(10,), strides=None, code=FLOAT, bits=32, lanes=1, data=PTR,
                 byte_offset=0, versioned=True, major=1, legacy_producer=False, cai=None):
        self.device, self.versioned, self.legacy_producer = device, versioned, legacy_producer
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._strides = None if strides is None else (ctypes.c_int64 * len(strides))(*strides)
        t = DLTensor(data, DLDevice(*device), len(shape), DLDataType(code, bits, lanes), self._shape,
                     self._strides, byte_offset)
        if versioned:
            self._managed = DLManagedTensorVersioned(DLPackVersion(major, 0), None, None, 0, t)
        else:
            self._managed = DLManagedTensor(t, None, None)
        self.calls = []
        self.capsules = []
        if cai is not None:
            self.__cuda_array_interface__ = cai

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None):
        if self.legacy_producer and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        self.calls.append((stream, max_version))
        versioned = self.versioned and max_version is not None
        cap = _capsule_new(ctypes.addressof(self._managed), _NAMES[versioned], None)
        self.capsules.append(cap)
        return cap


def parse(x, name="price", kinds="f", host_ok=False, stream=0):
    return _core._parse_gpu_input(x, name, kinds, host_ok, stream)


# ---------------------------------------------------------------- __cuda_array_interface__


@pytest.mark.parametrize("typestr,kinds,ok", [
    ("<f4", "f", "f4"), ("<f8", "f", "f8"), ("|f4", "f", "f4"), ("=f8", "f", "f8"),
    ("<i4", "fi", "i4"), ("<i8", "fi", "i8"), ("<f4", "fi", "f4"), ("<f8", "fi", "f8"),
    ("<i4", "f", None), ("<i8", "f", None), ("<f2", "f", None), ("<f2", "fi", None), ("|b1", "fi", None),
    ("<u4", "fi", None), ("<u8", "fi", None), ("|i1", "fi", None), ("<i2", "fi", None), ("<c8", "f", None),
    (">f4", "f", None), (">i8", "fi", None), ("<f3", "f", None), ("f4", "f", None), ("<x4", "f", None),
    ("<f16", "f", None), ("", "f", None),
])
def test_cai_every_dtype(typestr, kinds, ok):
    if ok is not None:
        assert parse(CAI(typestr=typestr), "volume", kinds) == (PTR, 10, ok, 0, None)
        return
    allowed = "float32 or float64" if kinds == "f" else "float32, float64, int32 or int64"
    with pytest.raises(TypeError, match=f"volume on the GPU must be {allowed} \\(got typestr '{typestr}'\\)") as e:
        parse(CAI(typestr=typestr), "volume", kinds)
    assert e.value.argument == "volume"


@pytest.mark.parametrize("version", [2, 3])
def test_cai_versions(version):
    x = CAI(version=version, drop=("stream",) if version == 2 else ())
    assert parse(x) == (PTR, 10, "f4", 0, None)


@pytest.mark.parametrize("stream,want", [(None, None), (1, 0), (2, 2), (0, 0), (0x5555_0000_1000, 0x5555_0000_1000),
                                         (-1, None)])
def test_cai_stream_values(stream, want):
    """1: the legacy default stream (handle 0); 2: per-thread (handle 2); None / -1: nothing to wait for;
    0 (which the interface disallows as ambiguous) is read as the legacy default too."""
    assert parse(CAI(stream=stream))[4] == want


@pytest.mark.parametrize("stream,exc", [(-2, ValueError), (True, TypeError), ("1", TypeError), (1.0, TypeError)])
def test_cai_bad_stream(stream, exc):
    with pytest.raises(exc, match="price: __cuda_array_interface__\\['stream'\\]"):
        parse(CAI(stream=stream))


@pytest.mark.parametrize("strides,n,ok", [(None, 10, True), ((4,), 10, True), ((8,), 10, False), ((-4,), 10, False),
                                          ((8,), 1, True), ((8,), 0, True), ((4, 4), 10, False)])
def test_cai_strides(strides, n, ok):
    x = CAI(strides=strides, shape=(n,))
    if ok:
        assert parse(x)[:2] == (PTR, n)
    else:
        with pytest.raises(ValueError, match=r"price must be contiguous on the GPU; call \.contiguous\(\) first"):
            parse(x)


@pytest.mark.parametrize("shape,text", [((2, 5), "(2, 5)"), ((), "()"), ((1, 1, 10), "(1, 1, 10)"),
                                        ([2, 5], "(2, 5)")])
def test_cai_not_1d(shape, text):
    with pytest.raises(ValueError, match=re.escape(f"high must be 1-D, got shape {text}")) as e:
        parse(CAI(shape=shape), "high")
    assert e.value.argument == "high"


def test_cai_mask():
    assert parse(CAI(mask=None))[1] == 10
    with pytest.raises(ValueError, match="close has a mask"):
        parse(CAI(mask=CAI(typestr="|b1")), "close")


def test_cai_list_shape_and_empty():
    assert parse(CAI(shape=[7])) == (PTR, 7, "f4", 0, None)
    assert parse(CAI(shape=(np.int64(7),), data=(np.uint64(PTR), False), stream=np.int64(9),
                     strides=(np.int64(4),))) == (PTR, 7, "f4", 0, 9)
    assert parse(CAI(shape=(0,), data=(0, False))) == (0, 0, "f4", 0, None)


@pytest.mark.parametrize("entries,exc,text", [
    (dict(data=None), TypeError, "'data'"), (dict(data=("x", False)), TypeError, "data"),
    (dict(shape=None), TypeError, "'shape'"), (dict(typestr=4), TypeError, "'typestr'"),
    (dict(shape=(-3,)), ValueError, "negative"), (dict(shape=(2.0,)), TypeError, "shape"),
])
def test_cai_malformed(entries, exc, text):
    with pytest.raises(exc, match=text):
        parse(CAI(**entries))


@pytest.mark.parametrize("entries,exc,text", [
    (dict(data=(0, False)), ValueError, r"price: __cuda_array_interface__\['data'\]\[0\] is a null pointer but the "
                                        "array has 10 elements"),
    (dict(data=(-8, False)), ValueError, r"price: __cuda_array_interface__\['data'\]\[0\] must be an address >= 0"),
    (dict(data=(2**64, False)), ValueError, r"price: __cuda_array_interface__\['data'\]\[0\] must be an address"),
    (dict(strides=4), TypeError, r"price.__cuda_array_interface__\['strides'\] must be a tuple, got int"),
    (dict(strides=("4",)), TypeError, r"price: __cuda_array_interface__\['strides'\]\[0\] must be an int"),
    (dict(shape=10), TypeError, r"price.__cuda_array_interface__\['shape'\] must be a tuple, got int"),
    (dict(shape="10"), TypeError, r"price.__cuda_array_interface__\['shape'\] must be a tuple, got str"),
    (dict(shape=(2**70,)), ValueError, r"price: __cuda_array_interface__\['shape'\]\[0\] is out of range"),
])
def test_cai_errors_name_the_argument(entries, exc, text):
    with pytest.raises(exc, match=text) as e:
        parse(CAI(**entries))
    assert e.value.argument == "price"


@pytest.mark.parametrize("device", [Dev(index=2**40), Dev(index=-1), Dev(id=2**31)])
def test_cai_device_index_range(device):
    """A device index that is no GPU index is refused, naming the argument (2**40 was read as GPU 0)."""
    with pytest.raises(ValueError, match="volume: its device index must be a GPU index >= 0") as e:
        parse(CAI(device=device), "volume", "fi")
    assert e.value.argument == "volume"
    with pytest.raises(ValueError, match="x: its device index"):
        _core.gpu_location(CAI(device=device))


def test_cai_not_a_dict():
    x = CAI()
    x.__cuda_array_interface__ = [("shape", (1,))]
    with pytest.raises(TypeError, match=r"price.__cuda_array_interface__ must be a dict"):
        parse(x)


@pytest.mark.parametrize("device,want", [(None, 0), (Dev(index=3), 3), (Dev(id=2), 2), (Dev(index=None, id=1), 1),
                                         (Dev(), 0), ("cuda:5", 0)])
def test_cai_device_index(device, want):
    """The interface has no device entry: x.device.index (torch), x.device.id (cupy), else 0."""
    x = CAI(device=device)
    assert parse(x)[3] == want
    assert _core.gpu_location(x) == want


# ---------------------------------------------------------------- DLPack


@pytest.mark.parametrize("code,bits,kinds,ok", [
    (FLOAT, 32, "f", "f4"), (FLOAT, 64, "f", "f8"), (INT, 32, "fi", "i4"), (INT, 64, "fi", "i8"),
    (FLOAT, 32, "fi", "f4"), (FLOAT, 64, "fi", "f8"),
    (INT, 32, "f", "<i4"), (INT, 64, "f", "<i8"), (FLOAT, 16, "f", "<f2"), (BFLOAT, 16, "f", "bfloat16"),
    (BOOL, 8, "fi", "|b1"), (UINT, 32, "fi", "<u4"), (UINT, 8, "fi", "|u1"), (INT, 8, "fi", "|i1"),
    (COMPLEX, 64, "f", "<c8"), (FLOAT, 12, "f", None),
])
def test_dlpack_every_dtype(code, bits, kinds, ok):
    x = FakeDL(code=code, bits=bits)
    if ok in ("f4", "f8", "i4", "i8"):
        assert parse(x, "volume", kinds) == (PTR, 10, ok, 0, 0)
        return
    with pytest.raises(TypeError, match="volume on the GPU must be float") as e:
        parse(x, "volume", kinds)
    if ok is not None:
        assert f"(got typestr '{ok}')" in str(e.value)


def test_dlpack_lanes():
    with pytest.raises(TypeError, match="got typestr 'lanes=4'"):
        parse(FakeDL(lanes=4))


@pytest.mark.parametrize("versioned", [True, False])
@pytest.mark.parametrize("offset", [0, 8, 4096])
def test_dlpack_byte_offset(versioned, offset):
    assert parse(FakeDL(byte_offset=offset, versioned=versioned))[0] == PTR + offset


@pytest.mark.parametrize("strides,n,ok", [(None, 10, True), ((1,), 10, True), ((2,), 10, False), ((-1,), 10, False),
                                          ((5,), 1, True), ((3,), 0, True)])
def test_dlpack_strides(strides, n, ok):
    x = FakeDL(strides=strides, shape=(n,))
    if ok:
        assert parse(x)[1] == n
    else:
        with pytest.raises(ValueError, match="price must be contiguous on the GPU"):
            parse(x)


@pytest.mark.parametrize("shape,text", [((2, 5), "(2, 5)"), ((), "()"), ((1, 2, 3), "(1, 2, 3)")])
def test_dlpack_not_1d(shape, text):
    with pytest.raises(ValueError, match=re.escape(f"low must be 1-D, got shape {text}")):
        parse(FakeDL(shape=shape, strides=None), "low")


@pytest.mark.parametrize("device,want", [((2, 0), 0), ((2, 3), 3), ((10, 1), 1), ((13, 2), 2)])
def test_dlpack_gpu_devices(device, want):
    """kDLCUDA, kDLROCM and kDLCUDAManaged are GPU memory. The call's stream (default: the legacy default,
    handle 0) is passed explicitly, as DLPack words it: CUDA 1, ROCm 0 (a producer called without stream=
    may order nothing: torch's __dlpack__ defaults to stream=-1)."""
    x = FakeDL(device=device)
    assert parse(x) == (PTR, 10, "f4", want, 0)
    assert x.calls == [(0 if device[0] == 10 else 1, (1, 0))]
    assert _core.gpu_location(x) == want


@pytest.mark.parametrize("device_type", [2, 10, 13])
@pytest.mark.parametrize("handle", [0, 1, 2, 0x5555_0000_1000])
def test_dlpack_stream_argument(device_type, handle):
    """__dlpack__(stream=...) names the stream the call runs on (the Placement's handle, 0 = the legacy
    default): CUDA 0 -> 1 (legacy default), 1 -> 1, 2 -> 2 (per-thread), else the handle; ROCm as it is.
    The GpuInput's stream is that handle (the engine skips waiting on its own stream)."""
    x = FakeDL(device=(device_type, 0))
    want = handle if device_type == 10 else (1 if handle == 0 else handle)
    assert parse(x, stream=handle)[4] == handle
    assert x.calls == [(want, (1, 0))]


def test_dlpack_host_capsule_gets_no_stream():
    x = FakeDL(device=(1, 0))
    assert parse(x, host_ok=True, stream=77)[3] == 0
    assert x.calls == [(None, (1, 0))]


class StreamOnlyDL(FakeDL):
    """A producer that knows stream= but not max_version (DLPack before 1.0)."""

    def __dlpack__(self, *, stream=None):
        return FakeDL.__dlpack__(self, stream=stream)


class BareDL(FakeDL):
    """A producer whose __dlpack__ takes no argument at all."""

    def __dlpack__(self):
        return FakeDL.__dlpack__(self, stream="none given")


def test_dlpack_fallbacks():
    x = StreamOnlyDL(versioned=False)
    assert parse(x, stream=9)[4] == 9 and x.calls == [(9, None)]
    x = BareDL(versioned=False)
    assert parse(x)[1] == 10 and x.calls == [("none given", None)]


def test_dlpack_buffer_error_names_the_argument():
    x = FakeDL()

    def refuse(**kw):
        raise BufferError("Can't export tensors on a different CUDA device index")

    x.__dlpack__ = refuse
    with pytest.raises(ValueError, match=r"volume: its __dlpack__\(\) refused the export \(BufferError: Can't export") as e:
        parse(x, "volume", "fi")
    assert e.value.argument == "volume"


@pytest.mark.parametrize("device", [(1, 0), (3, 0), (4, 0), (11, 0), (14, 0)])
def test_dlpack_host_devices_are_not_gpu(device):
    x = FakeDL(device=device)
    assert _core.gpu_location(x) is None
    with pytest.raises(TypeError, match="price is not a GPU array"):
        parse(x)
    assert x.calls == []  # never asked for a capsule


def test_dlpack_device_as_list_and_enum():
    import enum

    class Kind(enum.IntEnum):
        CUDA = 2

    x = FakeDL(device=(2, 1))
    x.__dlpack_device__ = lambda: [Kind.CUDA, 1]
    assert _core.gpu_location(x) == 1 and parse(x)[3] == 1
    x.__dlpack_device__ = lambda: (2, 1, 0)
    with pytest.raises(TypeError, match="pair"):
        _core.gpu_location(x)


def test_dlpack_legacy_producer():
    """A producer without max_version: asked again without it (the stream still given), its legacy capsule read."""
    x = FakeDL(legacy_producer=True, versioned=False, byte_offset=16)
    assert parse(x)[0] == PTR + 16
    assert x.calls == [(1, None)]


def test_dlpack_unversioned_answer_to_max_version():
    x = FakeDL(versioned=False)  # answers max_version with a legacy capsule, as the spec allows
    assert parse(x) == (PTR, 10, "f4", 0, 0)


def test_dlpack_major_version():
    with pytest.raises(TypeError, match=r"DLPack version 2\.0 is not supported"):
        parse(FakeDL(major=2))


def test_dlpack_not_a_capsule():
    x = FakeDL()
    x.__dlpack__ = lambda **kw: "capsule"
    with pytest.raises(TypeError, match="did not return an unused DLPack capsule"):
        parse(x)


def test_cai_before_dlpack():
    """An array with both (cupy): its interface is read, its capsule never made."""
    x = FakeDL(cai=dict(shape=(4,), typestr="<f8", data=(PTR + 64, False), version=3, stream=9))
    assert parse(x) == (PTR + 64, 4, "f8", 0, 9)
    assert x.calls == []


@pytest.mark.parametrize("capsule,says", [((3, 0), (2, 0)), ((1, 0), (2, 0)), ((2, 1), (2, 0)), ((10, 0), (2, 0)),
                                          ((2, 0), (13, 0))])
def test_dlpack_capsule_device_must_agree(capsule, says):
    """The capsule's own device is checked against __dlpack_device__ (a kDLCUDAHost capsule behind a CUDA
    __dlpack_device__ was read as device memory)."""
    x = FakeDL(device=capsule)
    x.__dlpack_device__ = lambda: says
    with pytest.raises(ValueError, match=re.escape(f"price: its DLPack capsule is on device {capsule} but its "
                                                   f"__dlpack_device__() says {says}")) as e:
        parse(x)
    assert e.value.argument == "price"


def test_dlpack_negative_shape_and_null_data():
    with pytest.raises(ValueError, match=r"high: its DLPack shape \(-3,\) is negative"):
        parse(FakeDL(shape=(-3,)), "high")
    with pytest.raises(ValueError, match="low: its DLPack data is a null pointer but the array has 10 elements"):
        parse(FakeDL(data=None), "low")
    assert parse(FakeDL(data=None, shape=(0,)))[:2] == (0, 0)


@pytest.mark.parametrize("dev", [(2, 2**31), (2, -1), (2, 2**70)])
def test_dlpack_device_id_range(dev):
    x = FakeDL()
    x.__dlpack_device__ = lambda: dev
    with pytest.raises(ValueError, match="price: ") as e:
        _core.gpu_location(x, "price")
    assert e.value.argument == "price"


def test_dlpack_device_errors_name_the_argument():
    x = FakeDL()
    x.__dlpack_device__ = lambda: (2, "0")
    with pytest.raises(TypeError, match=r"close: __dlpack_device__\(\)\[1\] must be an int, got str"):
        parse(x, "close")
    x.__dlpack_device__ = lambda: 2
    with pytest.raises(TypeError, match=r"close.__dlpack_device__\(\) must return a \(device_type, device_id\) pair"):
        _core.gpu_location(x, "close")


def test_dlpack_host_memory_rule():
    """One rule for DLPack host memory (C++), which vpoc._arrays follows: kDLCPU, kDLCUDAHost, kDLROCMHost."""
    assert [t for t in range(20) if _core.dlpack_host_memory(t)] == [1, 3, 11]
    from vpoc import _arrays

    class PinnedROCm:
        def __init__(self, a):
            self.a = a

        def __dlpack_device__(self):
            return (11, 0)

        def __dlpack__(self, **kw):
            raise AssertionError("numpy reads pinned host memory through __array__")

        def __array__(self, dtype=None, copy=None):
            return self.a

    a = np.arange(3.0)
    assert _arrays._to_numpy(PinnedROCm(a), "price") is a
    x = FakeDL(device=(13, 0))
    with pytest.raises(ValueError, match=r"price lives on a GPU \(DLPack device type 13\)"):
        _arrays._to_numpy(x, "price")


def test_capsule_kept_for_the_call():
    x = FakeDL()
    index, torch_device, streams, ins = _core.gpu_inputs({"price": x, "volume": None})
    cap = x.capsules[0]
    held = sys.getrefcount(cap)
    g = ins["price"]
    del ins
    assert sys.getrefcount(cap) == held  # the GpuInput holds it
    del g
    assert sys.getrefcount(cap) == held - 1
    assert (index, torch_device, streams) == (0, None, (0,))


# ---------------------------------------------------------------- numpy: a real producer's capsule (kDLCPU)


@pytest.mark.parametrize("dtype,kinds", [(np.float32, "f"), (np.float64, "f"), (np.int32, "fi"), (np.int64, "fi")])
def test_numpy_capsule_read(dtype, kinds):
    a = np.arange(12, dtype=dtype)[3:]
    assert parse(a, "volume", kinds, host_ok=True) == (a.ctypes.data, 9, np.dtype(dtype).str[1:], 0, 0)


def test_numpy_capsule_errors():
    with pytest.raises(ValueError, match=r"price must be 1-D, got shape \(2, 3\)"):
        parse(np.zeros((2, 3)), host_ok=True)
    with pytest.raises(ValueError, match="price must be contiguous on the GPU"):
        parse(np.zeros(8)[::2], host_ok=True)
    with pytest.raises(TypeError, match=r"got typestr '\|b1'"):
        parse(np.zeros(3, bool), host_ok=True)
    with pytest.raises(TypeError, match=r"got typestr '<f2'"):
        parse(np.zeros(3, np.float16), host_ok=True)
    a = np.zeros(1)[::2]
    assert parse(a, host_ok=True)[:2] == (a.ctypes.data, 1)


@pytest.mark.parametrize("x", [np.zeros(3), np.zeros(3, np.int64), [1.0, 2.0], (1.0,), 3.5, "price", None,
                               np.ma.masked_array([1.0, 2.0])])
def test_host_data_is_not_a_gpu_array(x):
    assert _core.gpu_location(x) is None
    with pytest.raises(TypeError, match=r"price is not a GPU array \(.*\); pass a torch, cupy"):
        parse(x)


# ---------------------------------------------------------------- torch (CPU here: host; the fast read itself)


def test_torch_cpu_tensors_are_host():
    torch = pytest.importorskip("torch")
    for t in (torch.zeros(3), torch.zeros(3, requires_grad=True), torch.zeros(2, 2)):
        assert _core.gpu_location(t) is None
        with pytest.raises(TypeError, match="price is not a GPU array"):
            parse(t)
    t = torch.zeros(3)
    index, torch_device, streams, ins = _core.gpu_inputs({"price": t, "volume": t})
    assert (index, torch_device, streams) == (None, None, ())
    assert ins["price"] is t and ins["volume"] is t


def test_torch_fast_read():
    """The C-level read the CUDA fast path uses, on CPU tensors (device -1): what it accepts, and what it
    leaves to the interface path (which words the error)."""
    torch = pytest.importorskip("torch")
    for dt, ts in ((torch.float32, "f4"), (torch.float64, "f8"), (torch.int32, "i4"), (torch.int64, "i8")):
        t = torch.arange(6, dtype=dt)
        assert _core._torch_fields(t, "fi") == (t.data_ptr(), 6, ts, -1)
        assert (_core._torch_fields(t, "f") is None) == (ts[0] == "i")
    t = torch.arange(10.0)
    assert _core._torch_fields(t[2:], "f") == (t[2:].data_ptr(), 8, "f8" if t.dtype == torch.float64 else "f4", -1)
    assert _core._torch_fields(t[::2], "f") is None  # not contiguous
    assert _core._torch_fields(t[::5][:1], "f")[1] == 1  # one element: any stride
    assert _core._torch_fields(t.reshape(2, 5), "f") is None
    assert _core._torch_fields(t[0], "f") is None  # 0-d
    assert _core._torch_fields(t.half(), "f") is None
    assert _core._torch_fields(t.bool(), "fi") is None
    assert _core._torch_fields(torch.zeros(0), "f")[:2] == (0, 0)
    assert _core._torch_fields(torch.zeros(3, requires_grad=True), "f")[1] == 3
    assert _core._torch_fields(torch._neg_view(t), "f") is None
    assert _core._torch_fields(torch.zeros(3).to_sparse(), "f") is None


def _torch_dtypes(torch):
    names = ("bfloat16", "float16", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "bool", "complex64",
             "complex128")
    return [getattr(torch, n) for n in names if hasattr(torch, n)]


def test_torch_refusals_worded_by_vpoc():
    """What the fast path declines on a CUDA tensor raises vpoc's own error naming the argument and torch's
    dtype (torch's interface worded bfloat16 / uint16-64 as a bare KeyError, or bfloat16 as '<f2'), here on
    CPU tensors through the same code (_torch_fields with a name)."""
    torch = pytest.importorskip("torch")
    for dt in _torch_dtypes(torch):
        t = torch.zeros(4, dtype=dt)
        for kinds, allowed in (("f", "float32 or float64"), ("fi", "float32, float64, int32 or int64")):
            with pytest.raises(TypeError, match=re.escape(f"volume on the GPU must be {allowed} (got dtype {dt})")) as e:
                _core._torch_fields(t, kinds, "volume")
            assert e.value.argument == "volume"
    with pytest.raises(TypeError, match=re.escape("price on the GPU must be float32 or float64 (got dtype torch.int64)")):
        _core._torch_fields(torch.zeros(3, dtype=torch.int64), "f", "price")
    t = torch.arange(10.0)
    with pytest.raises(ValueError, match=re.escape("high must be 1-D, got shape (2, 5)")):
        _core._torch_fields(t.reshape(2, 5), "f", "high")
    with pytest.raises(ValueError, match=re.escape("high must be 1-D, got shape ()")):
        _core._torch_fields(t[0], "f", "high")
    with pytest.raises(ValueError, match="low must be contiguous on the GPU"):
        _core._torch_fields(t[::2], "f", "low")
    assert _core._torch_fields(t, "f", "close")[1] == 10


def test_torch_neg_and_sparse_refused():
    """A neg-bit view's memory holds -x (read silently with the wrong sign before); sparse tensors raised
    torch's own RuntimeError from is_contiguous()."""
    torch = pytest.importorskip("torch")
    t = torch.arange(4.0)
    neg = torch._neg_view(t)
    assert neg.is_neg()
    with pytest.raises(ValueError, match=r"price is a torch tensor with its negative bit set .*resolve_neg\(\)") as e:
        _core._torch_fields(neg, "f", "price")
    assert e.value.argument == "price"
    assert _core._torch_fields(neg.resolve_neg(), "f", "price")[1] == 4
    z = torch.tensor([1 + 2j, 3 - 4j])
    imag = z.conj().imag
    if imag.is_neg():
        with pytest.raises(ValueError, match="negative bit"):
            _core._torch_fields(imag, "f", "price")
    with pytest.raises(TypeError, match="got dtype torch.complex"):
        _core._torch_fields(z.conj(), "f", "price")  # the conjugate bit: complex only, refused by its dtype
    with pytest.raises(TypeError, match=r"volume is a torch tensor of layout torch.sparse_coo .*to_dense\(\)"):
        _core._torch_fields(t.to_sparse(), "fi", "volume")


# ---------------------------------------------------------------- gpu_inputs, GpuInput, _placed


def test_gpu_inputs_summary():
    host = np.zeros(10)
    arrays = {"high": CAI(stream=5, device=Dev(index=1)), "low": host, "close": CAI(stream=None),
              "volume": CAI(typestr="<i8", stream=2), "open": None}
    index, torch_device, streams, ins = _core.gpu_inputs(arrays)
    assert index == 1 and torch_device is None and streams == (5, None, 2)
    assert ins["low"] is host and ins["open"] is None and list(ins) == list(arrays)
    g = ins["volume"]
    assert type(g).__name__ == "GpuInput"
    assert (g.data_ptr, g.size, g.typestr, g.device, g.stream) == (PTR, 10, "i8", 0, 2)
    assert repr(g) == "vpoc._core.GpuInput(size=10, typestr='i8', device=0)"
    with pytest.raises(TypeError):
        type(g)()
    with pytest.raises(TypeError, match=r"high on the GPU must be float32 or float64 \(got typestr '<i8'\)"):
        _core.gpu_inputs({"high": CAI(typestr="<i8")})  # only volume may hold integers
    with pytest.raises(RuntimeError, match=r"gpu_inputs: no engine input is called 'prise'"):
        _core.gpu_inputs({"prise": CAI()})  # roles by the engine's argument names only (a caller's mistake)


def test_gpu_input_refused_by_the_cpu_engine():
    """The engine binding reads a GpuInput as a GPU array (here: a CPU call, which refuses it)."""
    _, _, _, ins = _core.gpu_inputs({"price": CAI(typestr="<f8"), "volume": CAI(typestr="<f8")})
    opts = _core.Options(tick_size=0.25)
    with pytest.raises(ValueError, match=r"price is in GPU memory \(cuda:0\); the CPU engine needs host arrays"):
        _core.profile_trades(ins["price"], ins["volume"], None, None, opts)


@pytest.fixture
def placements(monkeypatch):
    """_placed with GPU 0..7 taken as existing and the Placement's arguments recorded."""
    monkeypatch.setattr(_device, "_gpu_index", lambda name: 0 if name == "cuda" else int(name[5:]))
    monkeypatch.setattr(_device, "_placement", lambda *a: a)
    monkeypatch.setattr(_device, "_current_raw_stream", lambda index: 4242 + index)


def test_placed_streams(placements):
    arrays = {"price": CAI(stream=9), "volume": CAI(stream=None)}
    gpu, ins, place = _device._placed("cuda", arrays, 123, None)
    assert gpu == 0 and place == (0, 123, 0, False, (9,))
    assert type(ins["price"]).__name__ == "GpuInput"
    stream = Dev(ptr=77)  # a cupy Stream
    assert _device._placed("auto", {"price": CAI(stream=2, device=Dev(index=3)), "volume": np.zeros(10)}, 5,
                           stream)[2] == (3, 5, 77, True, (2,))


def test_placed_passes_the_call_stream_to_dlpack(placements):
    """DLPack producers are given the call's stream: a given one as it is; none given: the legacy default
    (1 on CUDA), which the call (on vpoc's own stream) then waits for (handle 0 among the waits)."""
    p, v = FakeDL(), FakeDL(code=INT, bits=64)
    gpu, ins, place = _device._placed("cuda", {"price": p, "volume": v}, 7, None)
    assert place == (0, 7, 0, False, (0,))
    assert p.calls == v.calls == [(1, (1, 0))]
    p, v = FakeDL(), FakeDL(device=(2, 0))
    _, ins, place = _device._placed("cuda", {"price": p, "volume": v}, 7, Dev(ptr=77))
    assert place == (0, 7, 77, True, (77,)) and ins["price"].stream == 77
    assert p.calls == v.calls == [(77, (1, 0))]
    r = FakeDL(device=(10, 0))
    _device._placed("cuda", {"price": r, "volume": None}, 7, None)
    assert r.calls == [(0, (1, 0))]  # ROCm: 0 is its default stream


def test_placed_cpu_reads_nothing(placements):
    class Untouchable:
        @property
        def __cuda_array_interface__(self):
            raise AssertionError("read")

    arrays = {"price": Untouchable(), "volume": None}
    assert _device._placed("cpu", arrays, 1, None) == (None, arrays, None)


def test_placed_device_argument_first(placements):
    with pytest.raises(ValueError, match="device must be"):
        _device._placed("gpu", {"price": CAI(shape=(2, 5)), "volume": None}, 1, None)
    with pytest.raises(ValueError, match=r"price must be 1-D, got shape \(2, 5\)"):
        _device._placed("cuda", {"price": CAI(shape=(2, 5)), "volume": None}, 1, None)


# ---------------------------------------------------------------- on a GPU (device machine): real producers


def _cuda_torch():
    torch = pytest.importorskip("torch")
    import vpoc

    if not (vpoc.gpu_available() and torch.cuda.is_available()):
        pytest.skip("needs a vpoc GPU build, a GPU and torch with CUDA")
    return torch


class OnlyDLPack:
    """A GPU array reachable through DLPack only (as a JAX array)."""

    def __init__(self, t):
        self.t = t

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()

    def __dlpack__(self, **kw):
        return self.t.__dlpack__(**kw)


class OnlyCAI:
    """A GPU array reachable through __cuda_array_interface__ only (as a numba array)."""

    def __init__(self, t):
        self.__cuda_array_interface__ = t.__cuda_array_interface__
        self.device = t.device
        self.t = t


def test_gpu_torch_fast_read():
    torch = _cuda_torch()
    t = torch.arange(10, dtype=torch.float32, device="cuda")
    v = torch.ones(10, dtype=torch.int64, device="cuda", requires_grad=False)
    index, torch_device, streams, ins = _core.gpu_inputs({"price": t, "volume": v})
    assert (index, torch_device, streams) == (t.device.index, t.device.index, ())
    g = ins["price"]
    assert (g.data_ptr, g.size, g.typestr, g.device, g.stream) == (t.data_ptr(), 10, "f4", t.device.index, "torch")
    assert ins["volume"].typestr == "i8"
    assert parse(t[3:])[0] == t[3:].data_ptr()
    assert parse(torch.ones(4, device="cuda", requires_grad=True))[1] == 4
    assert _core.gpu_location(t) == t.device.index
    with pytest.raises(ValueError, match="price must be contiguous on the GPU"):
        parse(t[::2])
    with pytest.raises(ValueError, match=re.escape("price must be 1-D, got shape (2, 5)")):
        parse(t.reshape(2, 5))
    with pytest.raises(TypeError, match="price on the GPU must be float32 or float64 \\(got dtype torch.float16\\)"):
        parse(t.half())
    with pytest.raises(TypeError, match="got dtype torch.int64"):
        parse(v)  # kinds 'f'
    for dt in _torch_dtypes(torch):
        with pytest.raises(TypeError, match=re.escape(f"(got dtype {dt})")):
            parse(torch.zeros(4, dtype=dt, device="cuda"))
    with pytest.raises(ValueError, match="negative bit"):
        parse(torch._neg_view(t))
    with pytest.raises(TypeError, match="layout torch.sparse_coo"):
        parse(t.to_sparse())


@pytest.mark.parametrize("wrap", [OnlyDLPack, OnlyCAI])
def test_gpu_other_producers_match_torch(wrap):
    """The same tensors through DLPack only / the interface only: the same pointers and the same profile."""
    torch = _cuda_torch()
    import vpoc

    rng = np.random.default_rng(3)
    price = 4000.0 + rng.integers(-40, 40, 5000) * 0.25
    volume = rng.integers(1, 100, 5000).astype(np.float64)
    p, v = torch.from_numpy(price).cuda(), torch.from_numpy(volume).cuda()
    got = parse(wrap(p))
    assert got[:4] == (p.data_ptr(), 5000, "f8", p.device.index)
    offsets = np.array([0, 2000, 5000])
    want = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25)
    for args in ((wrap(p), wrap(v)), (p, wrap(v)), (wrap(p), v)):
        g = vpoc.from_trades(*args, offsets=offsets, tick_size=0.25, device="cuda")
        for k in ("poc", "vah", "val", "total_volume"):
            np.testing.assert_array_equal(np.asarray(getattr(g, k)), np.asarray(getattr(want, k)), err_msg=k)


class CopiedDLPack(OnlyDLPack):
    """A DLPack-only producer whose capsule is the only owner of its memory (a copy, as IS_COPIED)."""

    def __dlpack__(self, **kw):
        return self.t.clone().__dlpack__(**kw)


def test_gpu_dlpack_producer_stream_and_lifetime():
    """P1-1: the producer writes on a side stream after a long sleep; vpoc passes stream= so torch orders
    that work before the call. P1-2: each capsule owns a copy freed when the capsule goes; the call waits
    for its kernels before the capsules are dropped, so memory reused at once (same size, overwritten)
    changes nothing. Both checked against the CPU's profile, many times."""
    torch = _cuda_torch()
    import vpoc

    rng = np.random.default_rng(5)
    n = 1 << 20
    price = 4000.0 + rng.integers(-400, 400, n) * 0.25
    volume = rng.integers(1, 100, n).astype(np.float64)
    offsets = np.array([0, n // 3, n])
    want = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25)
    p0, v0 = torch.from_numpy(price).cuda(), torch.from_numpy(volume).cuda()
    side = torch.cuda.Stream()
    for _ in range(5):
        with torch.cuda.stream(side):
            p, v = torch.empty_like(p0), torch.empty_like(v0)
            torch.cuda._sleep(20_000_000)
            p.copy_(p0)
            v.copy_(v0)
            g = vpoc.from_trades(OnlyDLPack(p), OnlyDLPack(v), offsets=offsets, tick_size=0.25, device="cuda")
        for k in ("poc", "vah", "val", "total_volume"):
            np.testing.assert_array_equal(np.asarray(getattr(g, k)), np.asarray(getattr(want, k)), err_msg=k)
        g = vpoc.from_trades(CopiedDLPack(p0), CopiedDLPack(v0), offsets=offsets, tick_size=0.25, device="cuda")
        junk = [torch.full_like(p0, -1.0) for _ in range(4)]  # reuses the copies' blocks at once
        for k in ("poc", "vah", "val", "total_volume"):
            np.testing.assert_array_equal(np.asarray(getattr(g, k)), np.asarray(getattr(want, k)), err_msg=k)
        del junk
