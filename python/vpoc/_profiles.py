"""``Profiles``: the result of one vpoc call, as numpy views of memory owned by the C++ result.

Contract: every per-session array has ``n_sessions`` entries; ``volume[offsets[s]:offsets[s+1]]``
is session s's histogram from its ``low_row`` up; nothing here copies the engine's output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

import numpy as np

from ._optional import require

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Profiles", "NO_ROW"]

#: Row index reported for an empty session's poc/vah/val/low rows.
NO_ROW: int = -(2**63)

#: Per-input-row developing series (present when computed with ``developing=True``).
_DEVELOPING = ("dev_poc", "dev_vah", "dev_val")

_PER_SESSION = (
    "poc", "vah", "val", "poc_row", "vah_row", "val_row", "low_row", "n_rows",
    "total_volume", "va_volume",
)


class _HostResult:
    """Host arrays shaped like the engine's result object: copies of a GPU result, or the
    state of an unpickled ``Profiles``."""

    def __init__(self, fields: Dict[str, Any]) -> None:
        self.__dict__.update(fields)

    @staticmethod
    def fields(prof: "Profiles") -> Dict[str, Any]:
        """Every array of ``prof`` as a host numpy array, with its scalars."""
        out: Dict[str, Any] = dict(n_sessions=prof.n_sessions, tick_size=prof.tick_size,
                                   ticks_per_row=prof.ticks_per_row)
        for name in _PER_SESSION + ("offsets", "volume"):
            out[name] = np.asarray(getattr(prof, name))
        for name in _DEVELOPING:
            value = getattr(prof, name)
            out[name] = None if value is None else np.asarray(value)
        return out


def _unpickle(fields: Dict[str, Any], session_labels: Optional[np.ndarray]) -> "Profiles":
    return Profiles(_HostResult(fields), session_labels=session_labels)


class Profiles:
    """Per-session volume profiles, POC and value area.

    Per session (length ``n_sessions``): ``poc``, ``vah``, ``val`` (float64 row prices),
    ``poc_row``, ``vah_row``, ``val_row``, ``low_row``, ``n_rows`` (int64 absolute ladder rows),
    ``total_volume``, ``va_volume`` (float64). Histograms: ``offsets`` (int64, S+1) into
    ``volume`` (float64). With ``developing=True``: ``dev_poc``, ``dev_vah``, ``dev_val`` (float64,
    one per input row: the levels of the row's session up to and including it), else None. Empty sessions have ``n_rows == 0``, NaN prices and ``NO_ROW`` rows.

    On the CPU the arrays are numpy views of the result's memory; on a GPU (``device`` is
    "cuda:N") they are ``DeviceArray`` objects in device memory, exported zero-copy through
    ``__dlpack__`` / ``__cuda_array_interface__`` (``to_torch()``), and ``cpu()`` copies them.
    Profiles pickle (multiprocessing, Dask) as host arrays; GPU profiles unpickle on the CPU.
    """

    poc: np.ndarray
    vah: np.ndarray
    val: np.ndarray
    poc_row: np.ndarray
    vah_row: np.ndarray
    val_row: np.ndarray
    low_row: np.ndarray
    n_rows: np.ndarray
    total_volume: np.ndarray
    va_volume: np.ndarray
    offsets: np.ndarray
    volume: np.ndarray
    dev_poc: Optional[np.ndarray]
    dev_vah: Optional[np.ndarray]
    dev_val: Optional[np.ndarray]

    def __init__(self, result: Any, *, session_labels: Optional[np.ndarray] = None,
                 device: str = "cpu", developing: Optional[bool] = None) -> None:
        self._result = result
        self.n_sessions: int = int(result.n_sessions)
        self.tick_size: float = float(result.tick_size)
        self.ticks_per_row: int = int(result.ticks_per_row)
        self.row_size: float = self.tick_size * self.ticks_per_row
        self.session_labels: Optional[np.ndarray] = session_labels
        self.device: str = device
        for name in _PER_SESSION + ("offsets", "volume"):
            setattr(self, name, getattr(result, name))
        if developing is None:  # a host copy: has the series when its source had them
            developing = getattr(result, "dev_poc", None) is not None
        for name in _DEVELOPING:
            setattr(self, name, getattr(result, name) if developing else None)

    def __len__(self) -> int:
        return self.n_sessions

    def __repr__(self) -> str:
        return (f"Profiles(n_sessions={self.n_sessions}, rows={self.volume.shape[0]}, "
                f"tick_size={self.tick_size}, ticks_per_row={self.ticks_per_row}, "
                f"device='{self.device}')")

    @property
    def high_row(self) -> np.ndarray:
        """Highest row of each session (``NO_ROW`` for empty sessions; a host array)."""
        if self.device != "cpu":
            return self.cpu().high_row
        return np.where(self.n_rows > 0, self.low_row + self.n_rows - 1, NO_ROW)

    def cpu(self) -> "Profiles":
        """These profiles with every array copied to host memory (self when already there)."""
        if self.device == "cpu":
            return self
        return _unpickle(_HostResult.fields(self), self.session_labels)

    def __reduce__(self) -> Tuple[Any, ...]:
        """Pickles as host arrays (multiprocessing, Dask): GPU profiles are copied to the host
        and unpickle as CPU profiles (``device == "cpu"``)."""
        return (_unpickle, (_HostResult.fields(self), self.session_labels))

    def dense(self, fill: float = 0.0) -> np.ndarray:
        """[S, max(n_rows)] float64 matrix, row s aligned at session s's low row, padded with fill
        (a host array; GPU profiles are copied first)."""
        if self.device != "cpu":
            return self.cpu().dense(fill)
        width = int(self.n_rows.max()) if self.n_sessions else 0
        out = np.full((self.n_sessions, width), fill, dtype=np.float64)
        sessions = np.repeat(np.arange(self.n_sessions), self.n_rows)
        cols = np.arange(self.volume.shape[0]) - np.repeat(self.offsets[:-1], self.n_rows)
        out[sessions, cols] = self.volume
        return out

    def session(self, i: int) -> Tuple[np.ndarray, np.ndarray]:
        """(row prices, row volumes) of session i (negative i counts from the end; host arrays)."""
        if self.device != "cpu":
            return self.cpu().session(i)
        if not -self.n_sessions <= i < self.n_sessions:
            raise IndexError(f"session index {i} out of range for {self.n_sessions} sessions")
        i %= self.n_sessions
        n = int(self.n_rows[i])
        low = int(self.low_row[i]) if n else 0
        prices = (low + np.arange(n, dtype=np.int64)).astype(np.float64) * self.row_size
        return prices, self.volume[self.offsets[i]:self.offsets[i + 1]]

    def to_pandas(self) -> "pd.DataFrame":
        """One row per session with every per-session field (index: session labels or 0..S-1)."""
        if self.device != "cpu":
            return self.cpu().to_pandas()
        pd = require("pandas", "Profiles.to_pandas()")
        index = (pd.Index(self.session_labels, name="session") if self.session_labels is not None
                 else pd.RangeIndex(self.n_sessions, name="session"))
        return pd.DataFrame({name: getattr(self, name) for name in _PER_SESSION}, index=index)

    def plot(self, session: int, ax: Any = None, **kwargs: Any) -> Any:
        """Horizontal volume bars of one session with its POC line and value-area band
        (matplotlib; returns the Axes). Options: see ``vpoc._plot.plot_profile``."""
        from ._plot import plot_profile

        return plot_profile(self, session, ax=ax, **kwargs)

    def to_torch(self) -> dict:
        """Every array as a torch tensor sharing this result's memory (via DLPack)."""
        import torch

        names = _PER_SESSION + ("offsets", "volume")
        if self.dev_poc is not None:
            names += _DEVELOPING
        return {name: torch.from_dlpack(getattr(self, name)) for name in names}
