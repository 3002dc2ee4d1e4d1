"""Input normalisation: any 1-D array-like -> a contiguous numpy array the engine reads in place.

Contract: no copy when the input is already a contiguous array of a dtype the engine reads.
numpy masked arrays with masked entries raise ValueError (vpoc has no notion of a missing row:
drop the rows or fill them first); a masked array with nothing masked is read as its data.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np


__all__ = [
    "unmasked", "as_array", "as_prices", "as_volume", "as_index", "gpu_location", "gpu_view", "producer_stream",
]

#: dtypes the C++ engine reads without conversion, per role.
PRICE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
VOLUME_DTYPES = PRICE_DTYPES + (np.dtype(np.int32), np.dtype(np.int64))


_GPU_TYPESTRS = {"f4", "f8", "i4", "i8"}


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


# torch dtype name -> typestr, for the torch fast path (torch's __cuda_array_interface__ is a
# Python property that builds a dict per access: several accesses per array per call add up).
_TORCH_TYPESTRS = {"torch.float32": "f4", "torch.float64": "f8", "torch.int32": "i4", "torch.int64": "i8"}


def gpu_location(x: Any) -> Optional[int]:
    """The GPU index of an array in GPU memory (``__cuda_array_interface__`` or a DLPack device
    of type CUDA/ROCm), or None for host data."""
    if isinstance(x, np.ndarray):
        return None
    if _is_torch(x) and hasattr(x, "is_cuda"):
        return _device_index(x) if x.is_cuda else None
    x = _detached(x)
    if hasattr(x, "__cuda_array_interface__"):
        return _device_index(x)
    if hasattr(x, "__dlpack_device__"):
        kind, index = x.__dlpack_device__()
        if int(kind) in (2, 10):  # kDLCUDA, kDLROCM
            return int(index)
    return None


def _detached(x: Any) -> Any:
    """A torch tensor that tracks gradients, as its data (its array interfaces raise otherwise)."""
    if getattr(x, "requires_grad", False) and hasattr(x, "detach"):
        return x.detach()
    return x


def producer_stream(x: Any) -> Optional[int]:
    """The stream a GPU array's pending writes are on: the CUDA array interface v3 'stream', else
    torch's current stream for a torch tensor (its interface is v2, without one)."""
    if _is_torch(x) and hasattr(x, "is_cuda"):  # its interface is v2: no stream entry
        import torch

        return int(torch.cuda.current_stream(x.device).cuda_stream)
    x = _detached(x)
    stream = x.__cuda_array_interface__.get("stream")
    if stream is not None:
        return None if stream == -1 else int(stream)
    if type(x).__module__.startswith("torch"):
        import torch

        return int(torch.cuda.current_stream(x.device).cuda_stream)
    return None


def _device_index(x: Any) -> int:
    dev = getattr(x, "device", None)
    for attr in ("index", "id"):  # torch.device.index, cupy.cuda.Device.id
        value = getattr(dev, attr, None)
        if isinstance(value, int):
            return value
    return 0


def gpu_view(x: Any, name: str, kinds: str) -> Tuple[int, int, str, int]:
    """(pointer, size, typestr, device) of a 1-D contiguous array in GPU memory, read in place.

    ``kinds``: the accepted dtype kinds ("f" for prices, "fi" for volumes). The caller orders its
    work after ``producer_stream(x)``.
    """
    if _is_torch(x) and getattr(x, "is_cuda", False) and x.dim() == 1:
        typestr = _TORCH_TYPESTRS.get(str(x.dtype))
        if typestr is not None and typestr[0] in kinds and (x.numel() <= 1 or x.stride(0) == 1):
            return int(x.data_ptr()) if x.numel() else 0, int(x.numel()), typestr, _device_index(x)
        # anything else: the interface path below says what is wrong
    x = _detached(x)
    if not hasattr(x, "__cuda_array_interface__"):
        raise TypeError(f"{name} is a GPU array without __cuda_array_interface__; pass a torch "
                        "or cupy array (or copy it to the host)")
    cai = x.__cuda_array_interface__
    shape = tuple(cai["shape"])
    if len(shape) != 1:
        raise ValueError(f"{name} must be 1-D, got shape {shape}")
    typestr = cai["typestr"][1:]
    if typestr not in _GPU_TYPESTRS or typestr[0] not in kinds:
        allowed = "float32 or float64" if kinds == "f" else "float32, float64, int32 or int64"
        raise TypeError(f"{name} on the GPU must be {allowed} (got typestr {cai['typestr']!r}); "
                        "convert it on the device first, e.g. x.float()")
    strides = cai.get("strides")
    if strides is not None and shape[0] > 1 and tuple(strides) != (int(typestr[1]),):
        raise ValueError(f"{name} must be contiguous on the GPU; call .contiguous() first")
    return int(cai["data"][0]), int(shape[0]), typestr, _device_index(x)


def unmasked(x: Any, name: str) -> Any:
    """``x`` itself, or its data when it is a numpy masked array with nothing masked; ValueError
    naming ``name`` and the first masked index when any entry is masked (np.asarray would hand
    the engine the values behind the mask)."""
    if not isinstance(x, np.ma.MaskedArray):
        return x
    mask = np.ma.getmaskarray(x)
    if mask.any():
        i = np.unravel_index(int(np.argmax(mask)), mask.shape) if mask.ndim != 1 else int(np.argmax(mask))
        raise ValueError(
            f"{name} is a numpy masked array with {int(mask.sum())} masked value(s) (first at "
            f"index {i}); masked values are not supported: drop those rows from every column "
            f"(e.g. keep = ~np.ma.getmaskarray({name}), or {name}.compressed() when only it is "
            f"masked) or fill them ({name}.filled(value))")
    return x.data


def _to_numpy(x: Any, name: str) -> np.ndarray:
    x = unmasked(x, name)
    if isinstance(x, np.ndarray):
        return x
    x = _detached(x)  # a torch tensor that tracks gradients: read its data, not the graph
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        device_type = int(x.__dlpack_device__()[0])
        if device_type == 3:  # kDLCUDAHost: pinned host memory, which numpy reads through __array__
            return np.asarray(x)
        if device_type != 1:  # kDLCPU
            raise ValueError(
                f"{name} lives on a GPU (DLPack device type {device_type}) but this call computes "
                "on the CPU; pass device='cpu' data or use a GPU build of vpoc"
            )
        try:
            return np.from_dlpack(x)
        except (TypeError, BufferError, RuntimeError):
            pass  # e.g. dtypes numpy cannot view: fall back to the array protocol
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name} must be a 1-D numeric array-like, got {type(x).__name__}: {e}") from None


def as_array(x: Any, name: str) -> np.ndarray:
    """Return ``x`` as a 1-D, C-contiguous numeric numpy array (a view when possible)."""
    arr = _to_numpy(x, name)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a numeric array (integer or float), got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if not arr.dtype.isnative:  # big-endian data: the same values in this machine's byte order
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return np.ascontiguousarray(arr)


def as_prices(x: Any, name: str) -> np.ndarray:
    """A price array as float32/float64 (other numeric dtypes are widened to float64)."""
    arr = as_array(x, name)
    return arr if arr.dtype in PRICE_DTYPES else arr.astype(np.float64)


def as_volume(x: Any, name: str) -> np.ndarray:
    """A volume array as float32/float64/int32/int64 (exact conversions only)."""
    arr = as_array(x, name)
    if arr.dtype in VOLUME_DTYPES:
        return arr
    if arr.dtype == np.float16:  # exact in float32
        return arr.astype(np.float32)
    if arr.dtype.kind == "f":  # long double: the nearest float64
        return arr.astype(np.float64)
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        i = int(np.argmax(arr > np.iinfo(np.int64).max))
        raise ValueError(f"{name}[{i}]={arr[i]} does not fit in int64")
    return arr.astype(np.int64)


def as_index(x: Any, name: str) -> np.ndarray:
    """Offsets or session ids as int64 (datetime64 ids are taken as their int64 ticks)."""
    arr = _to_numpy(x, name)
    if arr.dtype.kind in "mM":
        if arr.size and np.isnat(arr).any():
            raise ValueError(f"{name}[{int(np.argmax(np.isnat(arr)))}] is NaT")
        arr = arr.view(np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{name} values must fit in int64")
    return np.ascontiguousarray(arr, dtype=np.int64)
