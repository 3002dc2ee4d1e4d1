"""``from_trades`` / ``from_bars``: argument checking and normalisation around the C++ engine.

Contract: docs/contract.md; every bad argument raises ValueError/TypeError naming it.
"""

from __future__ import annotations

import numbers
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from . import _core
from ._arrays import as_index, as_prices, as_volume, gpu_location, gpu_view, producer_stream
from ._profiles import Profiles

__all__ = ["from_trades", "from_bars", "backends", "gpu_available", "memory_stats", "empty_cache",
           "set_pool_limit"]

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
    if _core.gpu_backend() == "none":
        raise ValueError(f"device={name!r}: this vpoc build has no GPU backend; {_HOW_TO_BUILD}")
    index = int(name[5:]) if name.startswith("cuda:") else 0
    _core.gpu_require_device(index)  # ValueError when it does not exist
    return index


def _device(device: Any, inputs: Sequence[Any]) -> Optional[int]:
    """None for the CPU, else the GPU index ('cuda' names the GPU on NVIDIA and ROCm alike)."""
    name = str(device)
    on_gpu = [d for d in (gpu_location(x) for x in inputs if x is not None) if d is not None]
    if name == "cpu":
        if on_gpu:
            raise ValueError("device='cpu' but the inputs live on a GPU; pass device='cuda' "
                             "(or 'auto'), or copy them to the host")
        return None
    if name == "auto":
        if on_gpu:
            return _gpu_index(f"cuda:{on_gpu[0]}")
        return 0 if gpu_available() else None
    if name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit()):
        return _gpu_index(name)
    raise ValueError(f"device must be {_DEVICES}, got {name!r}")


def memory_stats(device: Any = "cuda") -> dict:
    """GPU memory counters of one device.

    ``workspace_bytes``, ``peak_bytes``, ``allocs``, ``frees``: the reusable scratch workspace.
    ``output_allocs`` / ``output_frees``: result buffers handed out / given back to the pool;
    ``output_bytes``: result bytes alive now. ``pool_bytes``: device bytes the result pool holds
    (alive + cached), ``pool_cached_bytes``: of those, free for reuse, ``pool_limit_bytes``: the
    cap on cached bytes, ``pool_hits``: results served from the cache. ``driver_allocs`` /
    ``driver_frees``: every allocation / free vpoc asked the GPU driver for (zero growth in a
    steady-state loop).
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
    _core.set_pool_limit(_gpu_index(str(device)), _int(nbytes, "nbytes", 0))


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


def _host_index(x: Any) -> Any:
    """Offsets / session ids that live on a GPU, copied to the host (they are small)."""
    if gpu_location(x) is None:
        return x
    return x.cpu() if hasattr(x, "cpu") else x.get()


def _real(x: Any, name: str) -> float:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    return float(x)


def _int(x: Any, name: str, minimum: int) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__}")
    if int(x) < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {int(x)}")
    return int(x)


def _bool(x: Any, name: str) -> bool:
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(x).__name__}")
    return bool(x)


def _str(x: Any, name: str) -> str:
    if not isinstance(x, str):
        raise TypeError(f"{name} must be a string, got {type(x).__name__}")
    return x


def _sessions(offsets: Any, session_ids: Any, n: int) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    if offsets is not None and session_ids is not None:
        raise ValueError("give either offsets or session_ids, not both")
    if session_ids is not None:
        ids = as_index(_host_index(session_ids), "session_ids")
        if ids.shape[0] != n:
            raise ValueError(f"session_ids has length {ids.shape[0]} but the data has {n} rows")
        offs, labels = _core.offsets_from_ids(ids, "session_ids")
        return offs, labels
    if offsets is not None:
        return as_index(_host_index(offsets), "offsets"), None
    return np.array([0, n], dtype=np.int64), None


def _common(tick_size: Any, ticks_per_row: Any, value_area: Any, va_method: Any, poc_tie: Any,
            max_rows: Any, developing: Any) -> dict:
    return dict(
        tick_size=_real(tick_size, "tick_size"),
        ticks_per_row=_int(ticks_per_row, "ticks_per_row", 1),
        value_area=_real(value_area, "value_area"),
        va_method=_str(va_method, "va_method"),
        poc_tie=_str(poc_tie, "poc_tie"),
        max_rows=_int(max_rows, "max_rows", 1),
        developing=_bool(developing, "developing"),
    )


def _gpu_options(gpu: int, memory_budget: Any, stream: Any, inputs: Sequence[Any]) -> dict:
    handle, user = _stream(stream)
    producers = {producer_stream(x) for x in inputs if x is not None and gpu_location(x) is not None}
    return dict(device=gpu, memory_budget=_int(memory_budget, "memory_budget", 1), stream=handle,
                user_stream=user, wait_streams=sorted(p for p in producers if p is not None))


def _input(x: Any, name: str, gpu: Optional[int], prices: bool) -> Any:
    """Host inputs as numpy arrays the engine reads; GPU inputs as (pointer, size, typestr, device)."""
    if gpu is not None and gpu_location(x) is not None:
        return gpu_view(x, name, "f" if prices else "fi")
    return as_prices(x, name) if prices else as_volume(x, name)


def _n(x: Any) -> int:
    return x[1] if isinstance(x, tuple) else int(x.shape[0])


def from_trades(price: Any, volume: Any, *, offsets: Any = None, session_ids: Any = None,
                tick_size: float, ticks_per_row: int = 1, value_area: float = 0.70,
                va_method: str = "cbot", poc_tie: str = "center", device: Any = "cpu",
                threads: Optional[int] = None, max_rows: int = 1_000_000,
                memory_budget: int = DEFAULT_MEMORY_BUDGET, stream: Any = None,
                developing: bool = False) -> Profiles:
    """Volume profiles of trades: each trade's volume goes to the row of its price.

    ``price``/``volume``: 1-D array-likes of any numeric dtype (read in place when contiguous
    float32/float64/int32/int64), or GPU arrays (torch/cupy, read in place). Sessions by CSR
    ``offsets`` [S+1] or per-row ``session_ids``; neither means one session.
    ``device``: "cpu" (default), "cuda" / "cuda:N" (NVIDIA or AMD ROCm builds), or "auto" (the
    inputs' GPU, else a GPU if one is built and present, else the CPU). On a GPU,
    ``memory_budget`` caps vpoc's device scratch + staging bytes and ``stream`` (an int handle or
    a torch/cupy stream) is the stream vpoc works on. ``developing=True`` also computes
    ``dev_poc`` / ``dev_vah`` / ``dev_val`` [N]: for every trade, the levels of its session's
    profile up to and including it (no lookahead). See docs/contract.md for every rule.
    """
    opts = _common(tick_size, ticks_per_row, value_area, va_method, poc_tie, max_rows, developing)
    gpu = _device(device, (price, volume))
    if gpu is None:
        threads_n = 0 if threads is None else _int(threads, "threads", 1)
        p = as_prices(price, "price")
        v = as_volume(volume, "volume")
        offs, labels = _sessions(offsets, session_ids, p.shape[0])
        return Profiles(_core.profile_trades(p, v, offs, threads=threads_n, **opts), session_labels=labels,
                        developing=opts["developing"])
    p = _input(price, "price", gpu, True)
    v = _input(volume, "volume", gpu, False)
    offs, labels = _sessions(offsets, session_ids, _n(p))
    result = _core.profile_trades_gpu(p, v, offs, **opts,
                                      **_gpu_options(gpu, memory_budget, stream, (price, volume)))
    return Profiles(result, session_labels=labels, device=f"cuda:{gpu}", developing=opts["developing"])


def from_bars(high: Any, low: Any, close: Any, volume: Any, *, open: Any = None,
              offsets: Any = None, session_ids: Any = None, tick_size: float,
              ticks_per_row: int = 1, distribute: str = "uniform", value_area: float = 0.70,
              va_method: str = "cbot", poc_tie: str = "center", device: Any = "cpu",
              threads: Optional[int] = None, max_rows: int = 1_000_000,
              memory_budget: int = DEFAULT_MEMORY_BUDGET, stream: Any = None,
              developing: bool = False) -> Profiles:
    """Volume profiles of OHLC bars; ``distribute`` puts each bar's volume on the ladder.

    ``"uniform"`` (default) splits it equally over every tick from low to high, ``"close"`` and
    ``"hlc3"`` put it on one price, ``"legacy"`` reproduces the legacy analyzer's weighting
    (uses ``open`` when given). ``device``, ``memory_budget``, ``stream``, ``developing``: as in
    from_trades (the developing series has one entry per bar).
    See docs/contract.md for every rule.
    """
    opts = _common(tick_size, ticks_per_row, value_area, va_method, poc_tie, max_rows, developing)
    dist = _str(distribute, "distribute")
    gpu = _device(device, (high, low, close, volume, open))
    prices = {"high": high, "low": low, "close": close}
    if open is not None:
        prices["open"] = open
    if gpu is None:
        threads_n = 0 if threads is None else _int(threads, "threads", 1)
        arrs = {k: as_prices(x, k) for k, x in prices.items()}
        if len({a.dtype for a in arrs.values()}) > 1:  # mixed float32/float64: widen all
            arrs = {k: a.astype(np.float64) for k, a in arrs.items()}
        v = as_volume(volume, "volume")
        offs, labels = _sessions(offsets, session_ids, arrs["high"].shape[0])
        result = _core.profile_bars(arrs["high"], arrs["low"], arrs["close"], v, arrs.get("open"),
                                    offs, distribute=dist, threads=threads_n, **opts)
        return Profiles(result, session_labels=labels, developing=opts["developing"])
    ins = {k: _input(x, k, gpu, True) for k, x in prices.items()}
    on_gpu = [k for k, a in ins.items() if isinstance(a, tuple)]
    if on_gpu and len({a[2] for a in ins.values() if isinstance(a, tuple)}) > 1:
        raise TypeError("high, low, close (and open) on the GPU must share one dtype")
    if not on_gpu and len({a.dtype for a in ins.values()}) > 1:
        ins = {k: a.astype(np.float64) for k, a in ins.items()}
    v = _input(volume, "volume", gpu, False)
    offs, labels = _sessions(offsets, session_ids, _n(ins["high"]))
    result = _core.profile_bars_gpu(ins["high"], ins["low"], ins["close"], v, ins.get("open"), offs,
                                    distribute=dist, **opts,
                                    **_gpu_options(gpu, memory_budget, stream, (high, low, close, volume, open)))
    return Profiles(result, session_labels=labels, device=f"cuda:{gpu}", developing=opts["developing"])
