"""Plain-Python reference of ``bins=N`` (wickra 2.0.0's equal-width bins), independent of the C++ engine.

Contract: docs/presets.md "bins"; a line-by-line reading of wickra's ValueArea / CompositeProfile /
VolumeProfile ``compute`` (kingchenc/wickra crates/wickra-core/src/indicators), plus the exact mode in Fractions.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import List, Tuple

import numpy as np


def ladder(high, low, n: int) -> Tuple[float, float, bool]:
    """(lo, w, flat) of one session: lo = min low, w = (max high - lo) / n; flat when hi <= lo."""
    lo = float(min(low))
    span = float(max(high)) - lo
    if not span > 0.0:
        return lo, 0.0, True
    return lo, span / n, False


def bin_of(p: float, lo: float, w: float, flat: bool, n: int) -> int:
    if flat:
        return 0
    raw = math.floor((p - lo) / w)
    return int(min(max(raw, 0), n - 1))


def histogram(high, low, vol, n: int, exact: bool = False) -> Tuple[list, float, float]:
    """(bins, lo, w): 'sequential' float64 bins in input order (wickra), or exact Fractions."""
    lo, w, flat = ladder(high, low, n)
    bins: List = [Fraction(0) if exact else 0.0 for _ in range(n)]
    for h, lw, v in zip(high, low, vol):
        h, lw, v = float(h), float(lw), float(v)
        if v == 0.0:
            continue
        if flat or h <= lw:
            k = bin_of(lw, lo, w, flat, n)
            bins[k] += Fraction(v) if exact else v
            continue
        a, z = bin_of(lw, lo, w, flat, n), bin_of(h, lo, w, flat, n)
        share = Fraction(v) / (z - a + 1) if exact else v / float(z - a + 1)
        for k in range(a, z + 1):
            bins[k] += share
    return bins, lo, w


def levels(bins: list, pct: float) -> Tuple[int, int, int, object]:
    """(poc, val, vah, acc): first maximum; one bin a step, up when up >= down; stop at acc >= target."""
    total = bins[0] * 0
    for b in bins:  # summed in bin order
        total += b
    target = total * (Fraction(pct) if isinstance(total, Fraction) else pct)
    poc = 0
    for i in range(1, len(bins)):
        if bins[i] > bins[poc]:
            poc = i
    acc, lo, hi = bins[poc], poc, poc
    n = len(bins)
    while acc < target and (lo > 0 or hi + 1 < n):
        up = bins[hi + 1] if hi + 1 < n else None
        dn = bins[lo - 1] if lo > 0 else None
        if up is not None and (dn is None or up >= dn):
            hi += 1
            acc += up
        else:
            lo -= 1
            acc += dn
    return poc, lo, hi, acc


def value_area(high, low, vol, n: int, pct: float = 0.70, centers: bool = False) -> Tuple[float, float, float]:
    """wickra ValueArea (centers=False: POC centre, VAH / VAL edges) or CompositeProfile (centers)."""
    bins, lo, w = histogram(high, low, vol, n)
    _, _, flat = ladder(high, low, n)
    if flat:
        return lo, lo, lo
    poc, a, z, _ = levels(bins, pct)
    if centers:
        return lo + w * (poc + 0.5), lo + w * (z + 0.5), lo + w * (a + 0.5)
    return lo + w * (poc + 0.5), lo + w * (z + 1.0), lo + w * a


def session_rows(offsets) -> List[Tuple[int, int]]:
    off = np.asarray(offsets, dtype=np.int64)
    return [(int(off[s]), int(off[s + 1])) for s in range(off.size - 1)]
