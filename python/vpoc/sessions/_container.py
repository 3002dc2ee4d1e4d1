"""The result of vpoc.sessions: the ``Sessions`` container (offsets, labels, kept rows).

Contract: ``offsets`` index the kept rows (``index``), ``take()`` selects them from any per-row
array; every field is read-only and describes the input it was built from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Dict, Optional, Tuple

import numpy as np
import numpy.typing as npt

__all__ = ["Sessions", "fingerprint"]

Int64Array = npt.NDArray[np.int64]
Fingerprint = Tuple[int, int, int, int]


def fingerprint(t: Any) -> Fingerprint:
    """A cheap fingerprint of int64 ns timestamps: (count, first, last, their sum modulo 2**64);
    one vectorised pass."""
    t = np.asarray(t, dtype=np.int64)
    if t.shape[0] == 0:
        return (0, 0, 0, 0)
    return (int(t.shape[0]), int(t[0]), int(t[-1]), int(np.sum(t.view(np.uint64), dtype=np.uint64)))


def _iso(ns: int) -> str:
    return str(np.datetime64(int(ns), "ns")) + "Z"


@dataclass(frozen=True, repr=False, eq=False)
class Sessions:
    """Sessions of a sorted timestamp array: CSR ``offsets`` over the kept rows plus labels.

    Attributes
    ----------
    offsets : int64 (S+1,)
        Session ``s`` is kept rows ``offsets[s] .. offsets[s+1]-1`` (pass as ``offsets=``).
    labels : int64 (S,)
        Trading date of each session as ``YYYYMMDD``.
    start_ns, end_ns : int64 (S,)
        UTC bounds of each session, nanoseconds since the epoch: the session is
        ``[start_ns, end_ns)`` (``(start_ns, end_ns]`` when built with ``closed="right"``).
        A session made of several windows (a holiday folded into the next trade date) spans
        from its first window's start to its last window's end; rows in the gaps between its
        windows are not part of it.
    index : int64 (K,) or None
        Positions, in the input, of the rows that belong to a session (K kept rows, sorted).
        ``None`` when every input row is kept; then ``offsets`` index the input directly.
    n_input : int
        Number of input timestamps N.
    definition : str
        The call that built these sessions, e.g. ``"globex(calendar='CME Globex Equity')"``.
    partial : bool (S,)
        True where the data starts more than one bar interval (at least a minute) after the
        session's scheduled open, ends more than one interval before its close, or is empty
        (typically the first and last sessions of a file, and days the data has a hole at an end).
    merged_days : int64 (S,)
        Number of calendar days (windows of the definition) whose rows the session holds: 2 or
        more where a holiday's trading is booked on the next trade date (``holidays="merge"``).
    dropped_volume : float
        Volume of the rows outside every session (NaN when no ``volume=`` was given).
    dropped_by_cause, dropped_volume_by_cause : dict
        Rows (volume) left out by cause: "halt", "weekend", "holiday-closed", "early-close",
        "outside RTH", "outside window" (only causes with rows appear).
    label, interval :
        How the input was stamped ("open" / "close") and the bar interval in seconds used to turn
        close stamps into opens (None when none was needed or given).
    fingerprints :
        Fingerprints (count, first, last, checksum) of the timestamps it was built from, as given
        and as matched (bar opens), of all rows and of the kept rows; ``mismatch(ts)`` compares
        other timestamps with them (from_bars / from_trades refuse a Sessions of other timestamps).

    Use ``take(array)`` to select the kept rows of any per-row array (``array[index]``, or the
    array itself when ``index`` is None); ``session_ids`` is the label of every kept row and
    ``mask`` the kept rows as a boolean array over the input.
    """

    offsets: Int64Array
    labels: Int64Array
    start_ns: Int64Array
    end_ns: Int64Array
    index: Optional[Int64Array]
    n_input: int
    definition: str
    partial: Optional[npt.NDArray[np.bool_]] = None
    merged_days: Optional[Int64Array] = None
    dropped_volume: float = float("nan")
    dropped_by_cause: Dict[str, int] = field(default_factory=dict)
    dropped_volume_by_cause: Dict[str, float] = field(default_factory=dict)
    label: str = "open"
    interval: Optional[float] = None
    fingerprints: Optional[Tuple[Fingerprint, ...]] = field(default=None, repr=False)

    def __post_init__(self) -> None:
        S = int(self.labels.shape[0])
        if self.partial is None:
            object.__setattr__(self, "partial", np.zeros(S, dtype=bool))
        if self.merged_days is None:
            object.__setattr__(self, "merged_days", (np.diff(self.offsets) > 0).astype(np.int64))

    @property
    def n_sessions(self) -> int:
        """Number of sessions S."""
        return int(self.labels.shape[0])

    def __len__(self) -> int:
        return self.n_sessions

    def __repr__(self) -> str:
        span = f", {self.labels[0]} .. {self.labels[-1]}" if self.n_sessions else ""
        part = f", {int(np.sum(self.partial))} partial" if np.any(self.partial) else ""
        return (f"Sessions({self.n_sessions} sessions{span}{part}, {self.n_kept} of {self.n_input} "
                f"rows kept, {self.definition})")

    @property
    def n_kept(self) -> int:
        """Number of rows that belong to a session (``offsets[-1]``)."""
        return int(self.offsets[-1])

    @property
    def n_dropped(self) -> int:
        """Number of input rows outside every session."""
        return self.n_input - self.n_kept

    @property
    def dropped_rows(self) -> int:
        """Number of input rows outside every session (``n_dropped``); by cause in
        ``dropped_by_cause``."""
        return self.n_input - self.n_kept

    def mismatch(self, ts: Any) -> Optional[str]:
        """None when int64 ns ``ts`` (all N input rows, or the K kept rows; as given or as bar
        opens) are the timestamps these sessions were built from, by ``fingerprints`` (None too
        when the Sessions keeps none); else what differs, in words."""
        if not self.fingerprints:
            return None
        fp = fingerprint(ts)
        if fp in self.fingerprints:
            return None
        ref = self.fingerprints[0] if fp[0] == self.n_input else self.fingerprints[-2]
        if fp[0] != ref[0]:
            return f"{fp[0]} timestamps, the sessions were built from {ref[0]}"
        if fp[1] != ref[1] or fp[2] != ref[2]:
            return (f"this data runs {_iso(fp[1])} .. {_iso(fp[2])}, the timestamps the sessions were "
                    f"built from {_iso(ref[1])} .. {_iso(ref[2])}")
        return "the same first and last timestamps, other ones between them"

    @cached_property
    def session_ids(self) -> Int64Array:
        """Trading date (``YYYYMMDD``) of every kept row, int64 (K,) (computed on first use)."""
        return np.repeat(self.labels, np.diff(self.offsets))

    @cached_property
    def mask(self) -> npt.NDArray[np.bool_]:
        """Boolean (N,) over the input rows: True where the row belongs to a session."""
        out = np.zeros(self.n_input, dtype=bool)
        if self.index is None:
            out[:] = True
        else:
            out[self.index] = True
        return out

    def take(self, *arrays: Any) -> Any:
        """The kept rows of one or more per-row arrays (numpy, torch, pandas, lists).

        Returns ``array[index]`` (``.iloc`` for pandas objects), or the array itself when no
        row was dropped; a tuple when several arrays are given. Each array must have the
        input's length N.
        """
        if not arrays:
            raise TypeError("take() needs at least one array")
        out = tuple(self._take_one(a, i) for i, a in enumerate(arrays))
        return out[0] if len(out) == 1 else out

    def _take_one(self, array: Any, position: int) -> Any:
        try:
            n = len(array)
        except TypeError:
            raise TypeError(f"take(): argument {position} must be a per-row array, "
                            f"got {type(array).__name__}") from None
        if n != self.n_input:
            raise ValueError(f"take(): argument {position} has length {n} but the sessions were "
                             f"built from {self.n_input} timestamps")
        if self.index is None:
            return array
        if hasattr(array, "iloc"):
            return array.iloc[self.index]
        if type(array).__module__.startswith("torch"):
            import torch

            return array[torch.as_tensor(self.index, device=array.device)]
        if isinstance(array, (list, tuple)):
            return np.asarray(array)[self.index]
        return array[self.index]

    def to_pandas(self) -> Any:
        """One row per session: ``label``, ``start``, ``end`` (datetime64[ns, UTC]), ``first_row``,
        ``n_rows`` (kept-row positions), ``partial``, ``merged_days``. Needs pandas."""
        import pandas as pd

        return pd.DataFrame({
            "label": self.labels,
            "start": pd.to_datetime(self.start_ns, unit="ns", utc=True),
            "end": pd.to_datetime(self.end_ns, unit="ns", utc=True),
            "first_row": self.offsets[:-1],
            "n_rows": np.diff(self.offsets),
            "partial": np.asarray(self.partial, dtype=bool),
            "merged_days": np.asarray(self.merged_days, dtype=np.int64),
        })
