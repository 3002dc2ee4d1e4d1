"""Assignment of sorted timestamps to labelled session windows.

Contract: each row goes to the window ``[open, close)`` (``(open, close]`` with closed="right")
that holds it; the result's offsets/index account for every input row.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from ._clock import _date_span, _iso
from ._container import Sessions
from ._rules import _Definition

__all__ = ["_assign", "_empty", "_run"]

Int64Array = npt.NDArray[np.int64]


def _assign(t: Int64Array, opens: Int64Array, closes: Int64Array, labels: Int64Array,
            definition: str, *, closed: str, keep_empty: bool, outside: str) -> Sessions:
    """Assign sorted timestamps to sorted, disjoint, labelled windows [open, close)."""
    n = t.shape[0]
    if n == 0:
        return _empty(definition)
    order = np.argsort(opens, kind="stable")
    opens, closes, labels = opens[order], closes[order], labels[order]
    if np.any(closes[:-1] > opens[1:]) or np.any(np.diff(labels) < 0):
        raise ValueError(f"{definition}: the calendar's windows overlap or are out of order")
    side = "left" if closed == "left" else "right"
    lo = np.searchsorted(t, opens, side=side)
    hi = np.maximum(np.searchsorted(t, closes, side=side), lo)
    counts = hi - lo
    total = int(counts.sum())
    if outside == "raise" and total < n:
        covered = np.zeros(n + 1, dtype=np.int64)
        np.add.at(covered, lo, 1)
        np.add.at(covered, hi, -1)
        i = int(np.argmin(np.cumsum(covered)[:n] > 0))
        raise ValueError(f"ts[{i}] = {_iso(t[i])} is outside every session of {definition}; "
                         "pass outside='drop' to drop such rows")
    # sessions = runs of equal labels; keep those between the first and last non-empty one
    starts = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
    sess_counts = np.add.reduceat(counts, starts) if starts.size else np.zeros(0, np.int64)
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
    index: Optional[Int64Array] = None
    if total < n:
        nz = counts > 0
        lo_nz, c_nz = lo[nz], counts[nz]
        first = np.cumsum(c_nz) - c_nz  # position in the kept rows of each window's first row
        index = (np.arange(total, dtype=np.int64) + np.repeat(lo_nz - first, c_nz)).astype(np.int64)
    return Sessions(
        offsets=offsets,
        labels=sess_labels[keep].astype(np.int64),
        start_ns=sess_start[keep].astype(np.int64),
        end_ns=sess_end[keep].astype(np.int64),
        index=index,
        n_input=n,
        definition=definition,
    )


def _run(t: Int64Array, defn: _Definition, opts: dict) -> Sessions:
    if t.shape[0] == 0:
        return _empty(defn.definition)
    return _assign(t, *defn.windows(*_date_span(t, defn.zone)), defn.definition, **opts)


def _empty(definition: str) -> Sessions:
    z = np.zeros(0, dtype=np.int64)
    return Sessions(offsets=np.zeros(1, dtype=np.int64), labels=z, start_ns=z.copy(),
                    end_ns=z.copy(), index=None, n_input=0, definition=definition)
