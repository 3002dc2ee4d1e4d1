"""Pieces every module of vpoc.live shares: the instance lock, time constants, finished sessions laid end to end.

Contract: ``_locked`` runs a method under the Live's RLock; ``_Concat`` is shaped like the engine's
result object, so ``Profiles(_Concat(...))`` holds finished sessions exactly as ``from_bars`` gave them.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, List

import numpy as np

__all__ = ["_Concat", "_NAN", "_NS_PER_DAY", "_NS_PER_MINUTE", "_PER_SESSION", "_locked"]

_NAN = float("nan")
_NS_PER_MINUTE = 60 * 10**9
_NS_PER_DAY = 1440 * _NS_PER_MINUTE
_PER_SESSION = ("poc", "vah", "val", "poc_row", "vah_row", "val_row", "low_row", "n_rows",
                "total_volume", "va_volume")


def _locked(method: Any) -> Any:
    """Runs a Live method under the instance's lock: threads sharing one Live see its updates and
    reads one at a time (each as a whole), in some serial order."""
    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)
    return wrapper



class _Concat:
    """Per-session profile arrays laid end to end, shaped like the engine's result object."""

    def __init__(self, parts: List[Dict[str, np.ndarray]], tick_size: float, ticks_per_row: int) -> None:
        self.n_sessions = len(parts)
        self.tick_size = tick_size
        self.ticks_per_row = ticks_per_row
        for name in _PER_SESSION:
            dt = np.float64 if name in ("poc", "vah", "val", "total_volume", "va_volume") else np.int64
            setattr(self, name, np.concatenate([p[name] for p in parts]) if parts else np.zeros(0, dt))
        self.volume = np.concatenate([p["volume"] for p in parts]) if parts else np.zeros(0)
        self.offsets = np.zeros(self.n_sessions + 1, dtype=np.int64)
        if parts:
            np.cumsum(self.n_rows, out=self.offsets[1:])
        self.dev_poc = self.dev_vah = self.dev_val = None
