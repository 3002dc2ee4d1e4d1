"""Input normalisation: any 1-D array-like -> a contiguous numpy array the engine reads in place.

Contract: no copy when the input is already a contiguous array of a dtype the engine reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_array", "as_prices", "as_volume", "as_index"]

#: dtypes the C++ engine reads without conversion, per role.
PRICE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
VOLUME_DTYPES = PRICE_DTYPES + (np.dtype(np.int32), np.dtype(np.int64))


def _to_numpy(x: Any, name: str) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if getattr(x, "requires_grad", False) and hasattr(x, "detach"):
        x = x.detach()  # a torch tensor that tracks gradients: read its data, not the graph
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        device_type = int(x.__dlpack_device__()[0])
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
    if arr.dtype.kind == "f":  # float16
        return arr.astype(np.float32)
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        i = int(np.argmax(arr > np.iinfo(np.int64).max))
        raise ValueError(f"{name}[{i}]={arr[i]} does not fit in int64")
    return arr.astype(np.int64)


def as_index(x: Any, name: str) -> np.ndarray:
    """Offsets or session ids as int64 (datetime64 ids are taken as their int64 ticks)."""
    arr = _to_numpy(x, name)
    if arr.dtype.kind in "mM":
        arr = arr.view(np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{name} values must fit in int64")
    return np.ascontiguousarray(arr, dtype=np.int64)
