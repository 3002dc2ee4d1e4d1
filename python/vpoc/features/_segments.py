"""Vectorised per-session (segment) reductions and level look-ups shared by every feature module.

Contract: pure NumPy on CSR offsets; no Python loop over rows (loops over sessions at most);
division by zero and non-finite quotients give NaN.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from typing import Any, Tuple

import numpy as np

from ._params import _Rules

__all__ = ["_nearest", "_nearest_grouped", "_previous_nonempty", "_price_rows", "_ratio", "_segment_accumulate",
           "_segment_count", "_segment_reduce", "_sliding"]

_NAN = float("nan")


def _ratio(a: Any, b: Any) -> Any:
    """a / b, NaN where b == 0 (or either is NaN) or the quotient is not finite; on arrays, or
    on two Python floats (one bar of vpoc.Live: the same IEEE division, no array made)."""
    if type(a) is float and type(b) is float:
        if b == 0.0:
            return _NAN
        q = a / b
        return q if math.isfinite(q) else _NAN
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = np.broadcast_arrays(a, b)
    out = np.full(a.shape, np.nan)
    ok = b != 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out[ok] = a[ok] / b[ok]
    out[~np.isfinite(out)] = np.nan
    return out


def _segment_reduce(ufunc: np.ufunc, x: np.ndarray, offsets: np.ndarray, empty: float) -> np.ndarray:
    """``ufunc`` over each segment ``x[offsets[s]:offsets[s+1]]``; ``empty`` for empty ones."""
    S = offsets.shape[0] - 1
    out = np.full(S, empty, dtype=np.float64)
    nz = np.diff(offsets) > 0
    if nz.any():
        out[nz] = ufunc.reduceat(x, offsets[:-1][nz])
    return out


def _segment_count(mask: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Number of True entries per segment (exact, int64)."""
    c = np.zeros(mask.shape[0] + 1, dtype=np.int64)
    np.cumsum(mask, out=c[1:])
    return c[offsets[1:]] - c[offsets[:-1]]


def _segment_accumulate(ufunc: np.ufunc, x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``ufunc.accumulate`` restarted at every segment (one call per session of two or more
    rows, none per row; a one-row segment is its value)."""
    out = np.array(x, dtype=np.float64)
    bounds = offsets.tolist()
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b - a > 1:
            ufunc.accumulate(x[a:b], out=out[a:b])
    return out


def _sliding(ufunc: np.ufunc, x: np.ndarray, k: int) -> np.ndarray:
    """``ufunc.reduce(x[i:i+k])`` for i = 0..len(x)-k (np.maximum / np.minimum), in O(len(x)):
    the maximum of a block-wise suffix and the next block's prefix (van Herk / Gil-Werman)."""
    n = x.shape[0]
    if k > n:
        return np.zeros(0, dtype=x.dtype)
    fill = -np.inf if ufunc is np.maximum else np.inf
    blocks = np.concatenate([x, np.full(-n % k, fill)]).reshape(-1, k)
    prefix = ufunc.accumulate(blocks, axis=1).reshape(-1)
    suffix = ufunc.accumulate(blocks[:, ::-1], axis=1)[:, ::-1].reshape(-1)
    return ufunc(suffix[:n - k + 1], prefix[k - 1:n])


def _previous_nonempty(counts: np.ndarray) -> np.ndarray:
    """int64 [S]: the last session before s with rows (``counts > 0``), -1 when there is none."""
    nonempty = np.asarray(counts) > 0
    ne = np.flatnonzero(nonempty)
    before = np.cumsum(nonempty) - nonempty  # non-empty sessions before s
    if not ne.size:
        return np.full(nonempty.shape[0], -1, dtype=np.int64)
    return np.where(before > 0, ne[np.maximum(before - 1, 0)], -1).astype(np.int64)


def _price_rows(p: np.ndarray, rules: _Rules) -> np.ndarray:
    """The contract's ladder row of each price: floor(rint(p / tick_size) / ticks_per_row)."""
    t = np.rint(np.asarray(p, dtype=np.float64) / rules.tick_size).astype(np.int64)
    return np.floor_divide(t, np.int64(rules.ticks_per_row))


def _nearest(levels: Any, x: Any) -> Tuple[Any, Any]:
    """For sorted ``levels``: (min level - x over levels >= x, min x - level over levels <= x),
    NaN where there is none. ``x`` an array, or one float (vpoc.Live's bar; ``levels`` a sorted
    list then, searched by bisection)."""
    if isinstance(x, float):
        i = bisect_left(levels, x)
        up = levels[i] - x if i < len(levels) else _NAN
        j = bisect_right(levels, x) - 1
        return up, (x - levels[j] if j >= 0 else _NAN)
    above = np.full(x.shape[0], np.nan)
    below = np.full(x.shape[0], np.nan)
    if levels.shape[0] == 0 or x.shape[0] == 0:
        return above, below
    i = np.searchsorted(levels, x, side="left")
    ok = i < levels.shape[0]
    above[ok] = levels[i[ok]] - x[ok]
    j = np.searchsorted(levels, x, side="right") - 1
    ok = j >= 0
    below[ok] = x[ok] - levels[j[ok]]
    return above, below


def _nearest_grouped(level_offsets: np.ndarray, levels: np.ndarray, query_offsets: np.ndarray,
                     queries: np.ndarray, source: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Query group g (rows ``query_offsets[g]:[g+1]``) looks up the sorted levels of group
    ``source[g]`` (``levels[level_offsets[k]:[k+1]]``; -1: none). One loop step per group."""
    above = np.full(queries.shape[0], np.nan)
    below = np.full(queries.shape[0], np.nan)
    qo = query_offsets.tolist()
    lo = level_offsets.tolist()
    for g, k in enumerate(source.tolist()):
        a, b = qo[g], qo[g + 1]
        if k < 0 or b == a or lo[k + 1] == lo[k]:
            continue
        above[a:b], below[a:b] = _nearest(levels[lo[k]:lo[k + 1]], queries[a:b])
    return above, below

