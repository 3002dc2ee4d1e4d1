"""The few array operations of the aggressor-side inputs (masks, checks, dev_delta), run in the inputs' library.

Contract: numpy on the host, or the torch / cupy of a GPU array; host_array copies any of them to numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core
from ._arrays import gpu_location
from ._device import _current_raw_stream

__all__ = ["host_array"]


# --------------------------------------------------------------------------- the arrays' library


def _torch_import(torch: Any, x: Any) -> Any:
    """A vpoc DeviceArray as a torch tensor, ordered on torch's current stream of its GPU: what
    torch.from_dlpack(x) does, with the stream looked up once by handle (vpoc._device) and the capsule
    handed over directly (torch.from_dlpack's device-string stream lookup and protocol probing cost
    more than the import itself, once per side field). A torch that does not take the versioned capsule
    gets x itself."""
    dev_type, index = x.__dlpack_device__()
    raw = _current_raw_stream(index)
    stream = 1 if raw == 0 and dev_type == _DL_CUDA else raw  # the array API's legacy default stream on CUDA
    try:
        cap = x.__dlpack__(stream=stream, max_version=(1, 0))
    except TypeError:  # pragma: no cover - a DeviceArray always takes max_version
        return torch.from_dlpack(x)
    try:
        return torch.from_dlpack(cap)
    except (TypeError, RuntimeError, BufferError):  # pragma: no cover - a torch without versioned capsules
        return torch.from_dlpack(x)


_DL_CUDA = 2  # DLPack's kDLCUDA


class _Lib:
    """numpy on the host, or the torch / cupy of a GPU array: the few operations the side fields
    need, run where that library keeps its arrays."""

    def __init__(self, like: Any = None) -> None:
        mod = "numpy" if like is None else type(like).__module__.split(".")[0]
        self.name = mod if mod in ("torch", "cupy") else "numpy"
        self.device = None if self.name == "numpy" else like.device
        if self.name == "torch":
            import torch

            self.xp: Any = torch
        elif self.name == "cupy":
            import cupy

            self.xp = cupy
        else:
            self.xp = np

    @staticmethod
    def of(*arrays: Any) -> "_Lib":
        """The library of the first array in GPU memory (numpy when none is)."""
        for x in arrays:
            if x is not None and gpu_location(x) is not None and type(x).__module__.split(".")[0] in ("torch",
                                                                                                    "cupy"):
                return _Lib(x)
        return _Lib()

    def put(self, x: Any) -> Any:
        """``x`` (numpy, a DeviceArray, or another library's array) as this library's array."""
        if self.name == "numpy":
            return host_array(x)
        if type(x).__module__.split(".")[0] == self.name:
            return x
        if isinstance(x, np.ndarray):
            if self.name == "torch":
                return self.xp.as_tensor(x, device=self.device)
            with self.device:
                return self.xp.asarray(x)
        if self.name == "torch" and type(x) is _core.DeviceArray:
            return _torch_import(self.xp, x)
        return self.xp.from_dlpack(x)

    def zeros(self, n: int, kind: str) -> Any:
        if self.name == "torch":
            dtype = {"i8": self.xp.int64, "f8": self.xp.float64, "b1": self.xp.bool}[kind]
            return self.xp.zeros(n, dtype=dtype, device=self.device)
        dtype = {"i8": np.int64, "f8": np.float64, "b1": np.bool_}[kind]
        if self.name == "cupy":
            with self.device:
                return self.xp.zeros(n, dtype=dtype)
        return np.zeros(n, dtype=dtype)

    def cumsum(self, x: Any) -> Any:
        return self.xp.cumsum(x, 0) if self.name == "torch" else self.xp.cumsum(x)

    def cat(self, parts: list) -> Any:
        return self.xp.cat(parts) if self.name == "torch" else self.xp.concatenate(parts)

    def cast(self, x: Any, kind: str) -> Any:
        if self.name == "torch":
            return x.to({"i8": self.xp.int64, "f8": self.xp.float64, "i1": self.xp.int8}[kind])
        return x.astype({"i8": np.int64, "f8": np.float64, "i1": np.int8}[kind], copy=False)

    def flatnonzero(self, mask: Any) -> Any:
        return self.xp.nonzero(mask).flatten() if self.name == "torch" else self.xp.flatnonzero(mask)

    def kind(self, x: Any) -> str:
        """The dtype kind of ``x``: "b", "i", "u", "f", "c" or another numpy kind."""
        if self.name != "torch":
            return x.dtype.kind
        if x.dtype == self.xp.bool:
            return "b"
        if x.is_complex():
            return "c"
        if x.is_floating_point():
            return "f"
        return "u" if x.dtype == self.xp.uint8 else "i"

    def contiguous(self, x: Any) -> Any:
        """``x`` with unit stride (a copy only when it is a strided view)."""
        return x.contiguous() if self.name == "torch" else self.xp.ascontiguousarray(x)

    def is_int8(self, x: Any) -> bool:
        """Whether ``x`` holds int8 values (side codes the engine reads as they are)."""
        return x.dtype == (self.xp.int8 if self.name == "torch" else np.int8)

    def whole(self, x: Any) -> bool:
        """Whether every value of ``x`` is a whole number (integer dtypes always are)."""
        if self.kind(x) in "iu":
            return True
        return not bool((x != self.xp.floor(x)).any())


def host_array(x: Any) -> Any:
    """``x`` as a host numpy array: numpy as it is, a DeviceArray / torch / cupy array copied; None stays."""
    if x is None or isinstance(x, np.ndarray):
        return x
    mod = type(x).__module__.split(".")[0]
    if mod == "torch":
        return x.detach().cpu().numpy()
    if mod == "cupy":
        return x.get()
    return np.asarray(x)
