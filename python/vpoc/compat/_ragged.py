"""Per-session operations on flat arrays grouped by CSR offsets (one numpy pass over all sessions).

Contract: ``offsets`` is int64 [S+1] with offsets[0] == 0 and non-decreasing; every function
returns one value per session (or per element) and gives empty sessions their stated value.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

__all__ = ["first", "layout", "ratio", "reduce", "smooth"]


def layout(offsets: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(counts, session of each element, index of each element inside its session)."""
    counts = np.diff(offsets)
    seg = np.repeat(np.arange(counts.size), counts)
    local = np.arange(int(offsets[-1]), dtype=np.int64) - np.repeat(offsets[:-1], counts)
    return counts, seg, local


def reduce(ufunc: np.ufunc, x: np.ndarray, offsets: np.ndarray, empty: Any) -> np.ndarray:
    """ufunc.reduceat over each session, ``empty`` for empty sessions."""
    counts = np.diff(offsets)
    dtype = np.result_type(x.dtype, np.asarray(empty).dtype)
    out = np.full(counts.size, empty, dtype=dtype)
    ne = counts > 0
    if ne.any():
        out[ne] = ufunc.reduceat(x, offsets[:-1][ne])
    return out


def first(mask: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Index inside its session of each session's first True element (-1 when none)."""
    _, _, local = layout(offsets)
    big = np.iinfo(np.int64).max
    found = reduce(np.minimum, np.where(mask, local, big), offsets, big)
    return np.where(found == big, -1, found)


def smooth(vol: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """3-level moving average of each session with zero padding: (v[k-1] + v[k] + v[k+1]) / 3."""
    counts, _, local = layout(offsets)
    left = np.zeros_like(vol)
    right = np.zeros_like(vol)
    left[1:] = vol[:-1]
    right[:-1] = vol[1:]
    left[local == 0] = 0.0
    right[local == np.repeat(counts - 1, counts)] = 0.0
    return (left + vol + right) / 3.0


def ratio(num: np.ndarray, den: np.ndarray, scale: float) -> np.ndarray:
    """num / den * scale, NaN where den == 0 (without a floating-point warning)."""
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return np.where(den > 0, out * scale, np.nan)
