"""``from_trades`` / ``from_bars``: argument checking and normalisation around the C++ engine.

Contract: docs/contract.md; every bad argument raises ValueError/TypeError naming it.
"""

from __future__ import annotations

import numbers
from typing import Any, Optional, Tuple

import numpy as np

from . import _core
from ._arrays import as_index, as_prices, as_volume
from ._profiles import Profiles

__all__ = ["from_trades", "from_bars", "backends"]

_DEVICES = "'cpu', 'auto', 'cuda' or 'cuda:N'"


def backends() -> list:
    """The backends compiled into this build, e.g. ``['cpu']`` or ``['cpu', 'cuda']``."""
    return list(_core.backends())


def _device(device: Any) -> str:
    name = str(device)
    if name in ("cpu", "auto"):
        return "cpu"  # 'auto' without a GPU build (or with CPU inputs) computes on the CPU
    if name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit()):
        gpu = [b for b in backends() if b != "cpu"]
        if not gpu:
            raise ValueError(
                f"device={name!r}: this vpoc build has no GPU backend; rebuild it with "
                "pip install . -Ccmake.define.VPOC_GPU_BACKEND=cuda (NVIDIA) or =hip (AMD ROCm)")
        raise ValueError(f"device={name!r} is not available in this build")
    raise ValueError(f"device must be {_DEVICES}, got {name!r}")


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


def _str(x: Any, name: str) -> str:
    if not isinstance(x, str):
        raise TypeError(f"{name} must be a string, got {type(x).__name__}")
    return x


def _sessions(offsets: Any, session_ids: Any, n: int) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    if offsets is not None and session_ids is not None:
        raise ValueError("give either offsets or session_ids, not both")
    if session_ids is not None:
        ids = as_index(session_ids, "session_ids")
        if ids.shape[0] != n:
            raise ValueError(f"session_ids has length {ids.shape[0]} but the data has {n} rows")
        offs, labels = _core.offsets_from_ids(ids, "session_ids")
        return offs, labels
    if offsets is not None:
        return as_index(offsets, "offsets"), None
    return np.array([0, n], dtype=np.int64), None


def _common(tick_size: Any, ticks_per_row: Any, value_area: Any, va_method: Any, poc_tie: Any,
            device: Any, threads: Any, max_rows: Any) -> dict:
    return dict(
        tick_size=_real(tick_size, "tick_size"),
        ticks_per_row=_int(ticks_per_row, "ticks_per_row", 1),
        value_area=_real(value_area, "value_area"),
        va_method=_str(va_method, "va_method"),
        poc_tie=_str(poc_tie, "poc_tie"),
        max_rows=_int(max_rows, "max_rows", 1),
        threads=0 if threads is None else _int(threads, "threads", 1),
        _device=_device(device),
    )


def from_trades(price: Any, volume: Any, *, offsets: Any = None, session_ids: Any = None,
                tick_size: float, ticks_per_row: int = 1, value_area: float = 0.70,
                va_method: str = "cbot", poc_tie: str = "center", device: Any = "cpu",
                threads: Optional[int] = None, max_rows: int = 1_000_000) -> Profiles:
    """Volume profiles of trades: each trade's volume goes to the row of its price.

    ``price``/``volume``: 1-D array-likes of any numeric dtype (read in place when contiguous
    float32/float64/int32/int64). Sessions by CSR ``offsets`` [S+1] or per-row
    ``session_ids``; neither means one session. See docs/contract.md for every rule.
    """
    opts = _common(tick_size, ticks_per_row, value_area, va_method, poc_tie, device, threads, max_rows)
    opts.pop("_device")
    p = as_prices(price, "price")
    v = as_volume(volume, "volume")
    offs, labels = _sessions(offsets, session_ids, p.shape[0])
    result = _core.profile_trades(p, v, offs, **opts)
    return Profiles(result, session_labels=labels)


def from_bars(high: Any, low: Any, close: Any, volume: Any, *, open: Any = None,
              offsets: Any = None, session_ids: Any = None, tick_size: float,
              ticks_per_row: int = 1, distribute: str = "uniform", value_area: float = 0.70,
              va_method: str = "cbot", poc_tie: str = "center", device: Any = "cpu",
              threads: Optional[int] = None, max_rows: int = 1_000_000) -> Profiles:
    """Volume profiles of OHLC bars; ``distribute`` puts each bar's volume on the ladder.

    ``"uniform"`` (default) splits it equally over every tick from low to high, ``"close"`` and
    ``"hlc3"`` put it on one price, ``"legacy"`` reproduces the legacy analyzer's weighting
    (uses ``open`` when given). See docs/contract.md for every rule.
    """
    opts = _common(tick_size, ticks_per_row, value_area, va_method, poc_tie, device, threads, max_rows)
    opts.pop("_device")
    dist = _str(distribute, "distribute")
    prices = {"high": high, "low": low, "close": close}
    if open is not None:
        prices["open"] = open
    arrs = {k: as_prices(x, k) for k, x in prices.items()}
    if len({a.dtype for a in arrs.values()}) > 1:  # mixed float32/float64: widen all
        arrs = {k: a.astype(np.float64) for k, a in arrs.items()}
    v = as_volume(volume, "volume")
    offs, labels = _sessions(offsets, session_ids, arrs["high"].shape[0])
    result = _core.profile_bars(arrs["high"], arrs["low"], arrs["close"], v, arrs.get("open"),
                                offs, distribute=dist, **opts)
    return Profiles(result, session_labels=labels)
