"""Where a call runs: the device argument, the GPU inputs' pointers and streams, a call's Placement,
and the GPU memory pool's controls (memory_stats, empty_cache, set_pool_limit).

Contract: ``_placed`` has each input read once, in C++ (_core.gpu_inputs); every bad device / stream argument
raises ValueError / TypeError naming it; nothing here imports torch unless an input is a torch tensor.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from . import _core
from ._validate import INT64_MAX as _INT64_MAX, integer as _int

__all__ = ["backends", "gpu_available", "memory_stats", "empty_cache", "set_pool_limit", "DEFAULT_MEMORY_BUDGET"]

_DEVICES = "'cpu', 'auto', 'cuda' or 'cuda:N'"


def backends() -> list:
    """The backends compiled into this build, e.g. ``['cpu']`` or ``['cpu', 'cuda']``."""
    return list(_core.backends())


_HOW_TO_BUILD = ("rebuild it with pip install . -Ccmake.define.VPOC_GPU_BACKEND=cuda (NVIDIA) "
                 "or -Ccmake.define.VPOC_GPU_BACKEND=hip (AMD ROCm)")
DEFAULT_MEMORY_BUDGET = 256 << 20  # bytes of GPU scratch + staging a call may hold


def gpu_available() -> bool:
    """True when this build has a GPU backend and the runtime sees at least one GPU."""
    return _core.gpu_backend() != "none" and _core.gpu_device_count() > 0


def _gpu_index(name: str) -> int:
    index = _GPU_INDEX.get(name)
    if index is not None:
        return index
    digits = name[5:] if name.startswith("cuda:") else None
    if name != "cuda" and not (digits and digits.isascii() and digits.isdigit()):  # 'cpu', 'cuda:x', ...
        raise ValueError(f"device must be 'cuda' or 'cuda:N' (a GPU) here, got {name!r}")
    if _core.gpu_backend() == "none":
        raise ValueError(f"device={name!r}: this vpoc build has no GPU backend; {_HOW_TO_BUILD}")
    index = int(digits) if digits else 0
    _core.gpu_require_device(index)  # ValueError when it does not exist
    if len(_GPU_INDEX) < 64:
        _GPU_INDEX[name] = index
    return index


# Device names checked once: the runtime fixes the visible devices when it starts (gpu::device_count).
_GPU_INDEX: dict = {}


def _device(name: str, index: Optional[int]) -> Optional[int]:
    """None for the CPU, else the GPU index of a call on device ``name`` (not 'cpu'; 'cuda' names the
    GPU on NVIDIA and ROCm alike); ``index``: the GPU of the first GPU input (None: none)."""
    if name == "auto":
        if index is not None:
            return _gpu_index(f"cuda:{index}")
        return 0 if gpu_available() else None
    if name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit()):
        return _gpu_index(name)
    raise ValueError(f"device must be {_DEVICES}, got {name!r}")


# Placements of recent calls: (device, memory_budget, stream, user stream, producers) -> Placement
# (immutable; a training loop's calls share one).
_PLACEMENTS: dict = {}


def _placement(gpu: int, memory_budget: Any, handle: int, user: bool, producers: tuple) -> Any:
    key = (gpu, memory_budget, type(memory_budget), handle, user, producers)
    try:
        hash(key)
    except TypeError:  # an unhashable memory_budget (an array, a list): the constructor names it
        return _core.Placement(device=gpu, memory_budget=memory_budget, stream=handle, user_stream=user,
                               wait_streams=list(producers))
    place = _PLACEMENTS.get(key)
    if place is None:
        place = _core.Placement(device=gpu, memory_budget=memory_budget, stream=handle, user_stream=user,
                                wait_streams=list(producers))
        if len(_PLACEMENTS) >= 64:
            _PLACEMENTS.clear()
        _PLACEMENTS[key] = place
    return place


# Without stream=, calls of torch tensors run on torch's current stream (False: on vpoc's own
# stream, waiting for torch's; benchmarks/batch_timeline.py times both).
_TORCH_STREAM = True


def _current_raw_stream(index: int) -> int:
    """torch's current stream of device ``index`` as a raw handle."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # no Stream object per call
    if raw is not None:
        return int(raw(index))
    return int(torch.cuda.current_stream(index).cuda_stream)  # pragma: no cover - older torch


def _placed(device: Any, arrays: dict, memory_budget: Any, stream: Any) -> Tuple[Optional[int], dict, Any]:
    """Where a call runs: (GPU index or None, the inputs as the engine reads them: each GPU array
    read once by _core.gpu_inputs into a GpuInput, host ones as they are, and the call's Placement:
    its stream and the streams of the inputs' producers to wait for). device='cpu' reads nothing:
    the engine's converters refuse GPU inputs there (_arrays.gpu_inputs_on_cpu)."""
    name = device if device.__class__ is str else str(device)
    if name == "cpu":
        return None, arrays, None
    gpu = None if name == "auto" else _device(name, None)  # the device argument first, as ever
    handle, user = _stream(stream)
    # DLPack producers order their work before the call's stream: a given one, else the legacy default
    # (handle 0; vpoc's own stream or torch's current one then waits for it: the GpuInput's stream)
    index, torch_device, streams, ins = _core.gpu_inputs(arrays, handle)
    if gpu is None:
        gpu = _device(name, index)
        if gpu is None:
            return None, arrays, None
    if torch_device is None:
        waits = tuple(sorted({s for s in streams if s is not None}))
    else:
        producer = _current_raw_stream(torch_device)  # torch's current stream, once per call
        if stream is None and _TORCH_STREAM and (not streams or all(s == producer for s in streams)):
            handle, user = producer, True  # torch inputs: torch's current stream, as torch's own ops
        waits = (producer,) if not streams else tuple(sorted({producer, *(s for s in streams if s is not None)}))
    return gpu, ins, _placement(gpu, memory_budget, handle, user, waits)


def memory_stats(device: Any = "cuda") -> dict:
    """GPU memory counters of one device.

    ``workspace_bytes``, ``peak_bytes``, ``allocs``, ``frees``: the reusable scratch workspace.
    ``output_allocs`` / ``output_frees``: result buffers handed out / given back to the pool;
    ``output_bytes``: result bytes alive now. ``pool_bytes``: device bytes the result pool holds
    (alive + cached), ``pool_cached_bytes``: of those, free for reuse, ``pool_limit_bytes``: the
    cap on cached bytes, ``pool_hits``: results served from the cache. ``driver_allocs`` /
    ``driver_frees``: every allocation / free vpoc asked the GPU driver for (zero growth in a
    steady-state loop).
    ``speculative_calls``: calls of a shape seen before that binned without reading their layout
    back first; ``speculative_reruns``: of those, calls run again because their histogram outgrew
    the size the shape had before; ``fused_bar_calls``: speculative bar calls whose bars the levels
    kernel binned itself (one launch for bin, finish and levels).
    """
    return dict(_core.memory_stats(_gpu_index(str(device))))


def empty_cache(device: Any = "cuda") -> None:
    """Give the cached result buffers, the workspace and the pinned staging of ``device`` back to
    the driver (like ``torch.cuda.empty_cache``). Results still alive stay valid."""
    _core.empty_cache(_gpu_index(str(device)))


def set_pool_limit(nbytes: int, device: Any = "cuda") -> None:
    """Keep at most ``nbytes`` of free result buffers cached on ``device`` for reuse (default
    1 GiB). Buffers released beyond the limit go back to the driver (which synchronizes the device);
    0 disables caching."""
    nbytes = _int(nbytes, "nbytes", 0, _INT64_MAX)
    _core.set_pool_limit(_gpu_index(str(device)), nbytes)


def _stream(stream: Any) -> Tuple[int, bool]:
    if stream is None:
        return 0, False
    for attr in ("cuda_stream", "ptr", "handle"):  # torch.cuda.Stream, cupy Stream
        value = getattr(stream, attr, None)
        if isinstance(value, int):
            return value, True
    if isinstance(stream, (int, np.integer)) and not isinstance(stream, bool):
        return int(stream), True
    raise TypeError(f"stream must be an int handle or a torch/cupy stream, got {type(stream).__name__}")
