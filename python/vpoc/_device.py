"""Where a call runs: the device argument, the GPU inputs' pointers and streams, a call's Placement,
and the GPU memory pool's controls (memory_stats, empty_cache, set_pool_limit).

Contract: ``_placed`` probes each input once; every bad device / stream argument raises ValueError /
TypeError naming it; nothing here imports torch unless an input is a torch tensor.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from . import _core
from ._arrays import gpu_inputs_on_cpu, gpu_location, gpu_view, producer_stream, torch_view
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


def _device(device: Any, locations: Sequence[Optional[int]]) -> Optional[int]:
    """None for the CPU, else the GPU index ('cuda' names the GPU on NVIDIA and ROCm alike);
    ``locations``: gpu_location of each input (None: host)."""
    name = str(device)
    on_gpu = [d for d in locations if d is not None]
    if name == "cpu":
        if on_gpu:
            raise gpu_inputs_on_cpu()
        return None
    if name == "auto":
        if on_gpu:
            return _gpu_index(f"cuda:{on_gpu[0]}")
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


def _torch_placed(device: Any, arrays: dict, memory_budget: Any, stream: Any) -> Optional[tuple]:
    """_placed for the common GPU call: every input a 1-D contiguous CUDA torch tensor of an engine
    dtype on one device (and the device asked for); None for anything else (the general path then
    probes and reports). Reads each tensor's pointer, size and dtype once, and torch's current stream
    of that device once."""
    ins: dict = {}
    index = None
    for k, x in arrays.items():
        if x is None:
            ins[k] = None
            continue
        view = torch_view(x, "fi" if k == "volume" else "f") if _is_torch_tensor(x) else None
        if view is None:
            return None
        if index is None:
            index = view[3]
        elif view[3] != index:
            return None
        ins[k] = view
    # device= as the general path reads it: 'cuda' is cuda:0, 'auto' the inputs' GPU
    if index is None or not (device == "auto" or device == f"cuda:{index}" or (device == "cuda" and index == 0)):
        return None
    gpu = _gpu_index(f"cuda:{index}")
    producer = _current_raw_stream(index)
    # no stream=: torch's current stream, as torch's own ops (no wait between streams at all)
    handle, user = (producer, True) if stream is None and _TORCH_STREAM else _stream(stream)
    return gpu, ins, _placement(gpu, memory_budget, handle, user, (producer,))


# Without stream=, calls of torch tensors run on torch's current stream (False: on vpoc's own
# stream, waiting for torch's; benchmarks/batch_timeline.py times both).
_TORCH_STREAM = True


def _is_torch_tensor(x: Any) -> bool:
    return type(x).__module__ == "torch" and type(x).__name__ == "Tensor"


def _current_raw_stream(index: int) -> int:
    """torch's current stream of device ``index`` as a raw handle."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # no Stream object per call
    if raw is not None:
        return int(raw(index))
    return int(torch.cuda.current_stream(index).cuda_stream)  # pragma: no cover - older torch


def _placed(device: Any, arrays: dict, memory_budget: Any, stream: Any) -> Tuple[Optional[int], dict, Any]:
    """Where a call runs, probing each input once: (GPU index or None, the inputs as the engine
    reads them: GPU arrays as (pointer, size, typestr, device), host ones as they are, and the
    call's Placement: the stream, and the streams of the inputs' producers to wait for)."""
    if device != "cpu" and _is_torch_tensor(arrays.get("volume")):
        fast = _torch_placed(device, arrays, memory_budget, stream)
        if fast is not None:
            return fast
    where = {k: (None if x is None else gpu_location(x)) for k, x in arrays.items()}
    gpu = _device(device, list(where.values()))
    if gpu is None:
        return None, arrays, None
    ins, producers, torch_streams = {}, set(), {}
    for k, x in arrays.items():
        if where[k] is None:
            ins[k] = x
            continue
        ins[k] = gpu_view(x, k, "fi" if k == "volume" else "f")
        if type(x).__module__.startswith("torch"):  # torch's current stream, once per device
            if where[k] not in torch_streams:
                torch_streams[where[k]] = producer_stream(x)
            producers.add(torch_streams[where[k]])
        else:
            producers.add(producer_stream(x))
    if stream is None and _TORCH_STREAM and len(torch_streams) == 1 and producers == set(torch_streams.values()):
        handle, user = next(iter(torch_streams.values())), True  # torch inputs: torch's current stream
    else:
        handle, user = _stream(stream)
    return gpu, ins, _placement(gpu, memory_budget, handle, user, tuple(sorted(p for p in producers if p is not None)))


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
    the size the shape had before.
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
