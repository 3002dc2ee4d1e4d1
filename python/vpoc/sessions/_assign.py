"""Assignment of sorted timestamps to labelled session windows.

Contract: each row goes to the window ``[open, close)`` (``(open, close]`` with closed="right")
that holds it; every input row is either kept (offsets/index) or counted as left out (_dropped).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from .._time import infer_interval_ns
from ._clock import _date_span
from ._container import Sessions, fingerprint
from ._dropped import account
from ._rules import _Definition

__all__ = ["_assign", "_empty", "_run"]

Int64Array = npt.NDArray[np.int64]


#: Least tolerance when flagging partial sessions: one minute (trades and sub-minute bars).
PARTIAL_MIN_TOLERANCE_NS = 60 * 1_000_000_000


def _assign(t: Int64Array, opens: Int64Array, closes: Int64Array, labels: Int64Array,
            defn: _Definition, *, closed: str, keep_empty: bool, on_outside: str,
            volume: Optional[npt.NDArray[np.float64]] = None, step: Optional[int] = None,
            label: str = "open", what: str = "sessions", stamps: Optional[Int64Array] = None,
            whole_days: bool = True) -> Sessions:
    """Assign sorted timestamps to sorted, disjoint, labelled windows [open, close); ``whole_days``:
    whether whole days left out as "holiday" warn (_dropped.account)."""
    definition = defn.definition
    n = t.shape[0]
    if n == 0:
        return _empty(definition, label, step, volume is not None)
    order = np.argsort(opens, kind="stable")
    opens, closes, labels = opens[order], closes[order], labels[order]
    if np.any(closes[:-1] > opens[1:]) or np.any(np.diff(labels) < 0):
        raise ValueError(f"{definition}: the calendar's windows overlap or are out of order")
    side = "left" if closed == "left" else "right"
    lo = np.searchsorted(t, opens, side=side)
    hi = np.maximum(np.searchsorted(t, closes, side=side), lo)
    counts = hi - lo
    total = int(counts.sum())
    index: Optional[Int64Array] = None
    by_rows: dict = {}
    by_vol: dict = {}
    dropped_volume = float("nan") if volume is None else 0.0
    if total < n:
        nz = counts > 0
        lo_nz, c_nz = lo[nz], counts[nz]
        first = np.cumsum(c_nz) - c_nz  # position in the kept rows of each window's first row
        index = (np.arange(total, dtype=np.int64) + np.repeat(lo_nz - first, c_nz)).astype(np.int64)
        kept = np.zeros(n, dtype=bool)
        kept[index] = True
        by_rows, by_vol, dropped_volume = account(
            t if stamps is None else stamps, t, np.flatnonzero(~kept), defn, closed, volume,
            on_outside, what, closes[nz], int(nz.sum()), opens[nz], step, whole_days)
    # sessions = runs of equal labels; keep those between the first and last non-empty one
    starts = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
    sess_counts = np.add.reduceat(counts, starts) if starts.size else np.zeros(0, np.int64)
    sess_days = (np.add.reduceat((counts > 0).astype(np.int64), starts) if starts.size
                 else np.zeros(0, np.int64))
    sess_labels = labels[starts]
    sess_start = opens[starts]
    sess_end = np.maximum.reduceat(closes, starts) if starts.size else np.zeros(0, np.int64)
    nonempty = np.flatnonzero(sess_counts > 0)
    if nonempty.size == 0:
        keep = np.zeros(sess_counts.shape[0], dtype=bool)
    elif keep_empty:
        keep = np.zeros(sess_counts.shape[0], dtype=bool)
        keep[nonempty[0]:nonempty[-1] + 1] = True
    else:
        keep = sess_counts > 0
    offsets = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
    np.cumsum(sess_counts[keep], out=offsets[1:])
    start_ns = sess_start[keep].astype(np.int64)
    end_ns = sess_end[keep].astype(np.int64)
    kept_t = t if index is None else t[index]
    partial = _partial(kept_t, offsets, start_ns, end_ns, closed, step)
    # what from_bars / from_trades check a Sessions against: its timestamps as given and as matched
    # (bar opens), all rows then the kept rows (the order Sessions.mismatch reads them in)
    raw = t if stamps is None else stamps
    prints = (fingerprint(raw), fingerprint(t))
    prints += prints if index is None else (fingerprint(raw[index]), fingerprint(kept_t))
    return Sessions(
        offsets=offsets,
        labels=sess_labels[keep].astype(np.int64),
        start_ns=start_ns,
        end_ns=end_ns,
        index=index,
        n_input=n,
        definition=definition,
        partial=partial,
        merged_days=sess_days[keep].astype(np.int64),
        dropped_volume=dropped_volume,
        dropped_by_cause=by_rows,
        dropped_volume_by_cause=by_vol,
        label=label,
        interval=None if step is None else step / 1e9,
        fingerprints=prints,
    )


def _partial(kt: Int64Array, offsets: Int64Array, start: Int64Array, end: Int64Array, closed: str,
             step: Optional[int]) -> npt.NDArray[np.bool_]:
    """Sessions whose rows start more than one bar interval after the session's scheduled open or
    end (the last bar's close) more than one interval before its close; empty sessions too. The
    interval is ``step`` or the modal spacing of the rows; the tolerance is at least a minute."""
    n_rows = np.diff(offsets)
    out = n_rows == 0
    if kt.shape[0] == 0:
        return out
    bar = step
    if bar is None:
        try:
            bar = infer_interval_ns(kt)
        except ValueError:  # trades, or too few rows: no bar length
            bar = 0
    tol = max(int(bar), PARTIAL_MIN_TOLERANCE_NS)
    s = np.flatnonzero(~out)
    first = kt[offsets[s]]
    last = kt[offsets[s + 1] - 1]
    if closed == "right":  # stamps are closes: the bars open one interval earlier
        first, last = first - bar, last - bar
    out[s] = (first > start[s] + tol) | (last + bar < end[s] - tol)
    return out


def _run(t: Int64Array, defn: _Definition, opts: dict) -> Sessions:
    if t.shape[0] == 0:
        return _empty(defn.definition, opts.get("label", "open"), opts.get("step"),
                      opts.get("volume") is not None)
    return _assign(t, *defn.windows(*_date_span(t, defn.zone)), defn, **opts)


def _empty(definition: str, label: str = "open", step: Optional[int] = None,
           has_volume: bool = False) -> Sessions:
    z = np.zeros(0, dtype=np.int64)
    return Sessions(offsets=np.zeros(1, dtype=np.int64), labels=z, start_ns=z.copy(),
                    end_ns=z.copy(), index=None, n_input=0, definition=definition,
                    partial=np.zeros(0, dtype=bool), merged_days=z.copy(),
                    dropped_volume=0.0 if has_volume else float("nan"),
                    label=label, interval=None if step is None else step / 1e9)
