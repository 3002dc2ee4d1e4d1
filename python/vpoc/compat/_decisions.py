"""The legacy decisions on a profile: first maximum, clustered VPOC, stepwise and greedy value areas.

Contract: every function decides all sessions of a CSR-grouped profile at once; values within
``tie_rel`` (relative) compare equal, ``tie_rel=0`` gives the legacy's exact comparisons.
"""

from __future__ import annotations

from typing import Tuple

import numpy as np

from ._ragged import first, layout, reduce

__all__ = ["cluster_vpoc", "expand", "first_max", "greedy"]


def first_max(vol: np.ndarray, offsets: np.ndarray, tie_rel: float) -> np.ndarray:
    """First level of each session whose volume is within tie_rel of the session maximum."""
    _, seg, _ = layout(offsets)
    vmax = reduce(np.maximum, vol, offsets, 0.0)
    return first(vol >= (vmax - tie_rel * vmax)[seg], offsets)


def _lerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Linear interpolation as numpy's quantile (method 'linear', pandas' default) computes it."""
    diff = b - a
    return np.where(t >= 0.5, b - diff * (1.0 - t), a + diff * t)


def cluster_vpoc(price: np.ndarray, vol: np.ndarray, offsets: np.ndarray, quantile: float,
                 min_levels: int, tie_rel: float) -> np.ndarray:
    """Index of the analyzer's VPOC level per session (-1 for empty sessions)."""
    counts, seg, _ = layout(offsets)
    simple = first_max(vol, offsets, tie_rel)
    ne = counts > 0
    # each session's quantile of its volumes (linear interpolation between order statistics)
    sorted_vol = vol[np.lexsort((vol, seg))]
    virtual = quantile * (np.maximum(counts, 1) - 1).astype(np.float64)
    below = np.floor(virtual).astype(np.int64)
    above = np.minimum(below + 1, np.maximum(counts - 1, 0))
    starts = offsets[:-1]
    q = np.zeros(counts.size)
    q[ne] = _lerp(sorted_vol[starts[ne] + below[ne]], sorted_vol[starts[ne] + above[ne]],
                  virtual[ne] - below[ne])
    member = vol >= (q - tie_rel * np.abs(q))[seg]
    n_members = reduce(np.add, member.astype(np.int64), offsets, 0)
    weights = np.where(member, vol, 0.0)
    wsum = reduce(np.add, weights, offsets, 0.0)
    psum = reduce(np.add, weights * price, offsets, 0.0)
    cluster = ne & (n_members >= min_levels) & (wsum > 0)  # zero weights: the simple rule
    mean = np.divide(psum, wsum, out=np.zeros_like(psum), where=cluster)
    dist = np.abs(price - mean[seg])
    dmin = reduce(np.minimum, dist, offsets, np.inf)
    nearest = first(dist <= (dmin + tie_rel * np.abs(mean))[seg], offsets)
    return np.where(cluster, nearest, simple)


def _reached(cur: np.ndarray, target: np.ndarray, tie_rel: float) -> np.ndarray:
    return cur >= target - tie_rel * target


def expand(vol: np.ndarray, offsets: np.ndarray, start: np.ndarray, fraction: float,
           tie_rel: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Analyzer value area: from ``start``, one level at a time towards the larger neighbour (ties
    up) until ``fraction`` of the total. Returns (low index, high index, volume inside, total)."""
    counts = np.diff(offsets)
    starts = offsets[:-1]
    ne = counts > 0
    total = reduce(np.add, vol, offsets, 0.0)
    target = total * fraction
    lo = np.where(ne, start, 0)
    hi = lo.copy()
    cur = np.where(ne, vol[np.where(ne, starts + lo, 0)] if vol.size else 0.0, 0.0)
    last = counts - 1
    while True:
        can_up = hi < last
        can_dn = lo > 0
        active = ne & ~_reached(cur, target, tie_rel) & (can_up | can_dn)
        if not active.any():
            break
        up = np.where(can_up, vol[np.minimum(starts + hi + 1, vol.size - 1)], 0.0)
        dn = np.where(can_dn, vol[np.maximum(starts + lo - 1, 0)], 0.0)
        go_up = active & can_up & (up >= dn - tie_rel * np.maximum(up, dn))
        go_dn = active & ~go_up & can_dn
        hi = hi + go_up
        lo = lo - go_dn
        cur = cur + np.where(go_up, up, np.where(go_dn, dn, 0.0))
    return lo, hi, cur, total


def greedy(vol: np.ndarray, offsets: np.ndarray, fraction: float,
           tie_rel: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Legacy dict value area: levels by volume (highest first, equal volumes lower level first)
    until ``fraction`` of the total. Returns (lowest, highest selected index, volume inside, total)."""
    counts, seg, local = layout(offsets)
    starts = offsets[:-1]
    total = reduce(np.add, vol, offsets, 0.0)
    target = total * fraction
    rank = vol
    if tie_rel > 0:  # volumes ranked at a resolution of tie_rel x the session's largest volume
        vmax = reduce(np.maximum, vol, offsets, 0.0)[seg]
        share = np.divide(vol, vmax, out=np.zeros_like(vol), where=vmax > 0)
        rank = np.rint(share / tie_rel)
    order = np.lexsort((local, -rank, seg))  # per session: rank descending, then level ascending
    sorted_vol = vol[order]
    taken = np.zeros(counts.size, dtype=np.int64)
    cur = np.zeros(counts.size)
    done = counts == 0
    for j in range(int(counts.max()) if counts.size else 0):
        take = ~done & (j < counts)
        if not take.any():
            break
        cur = cur + np.where(take, sorted_vol[np.minimum(starts + j, vol.size - 1)], 0.0)
        taken = taken + take
        done = done | (take & (_reached(cur, target, tie_rel) | (j + 1 >= counts)))
    selected = local[order] if vol.size else local
    in_va = (np.arange(vol.size) - np.repeat(starts, counts)) < taken[seg]
    big = np.iinfo(np.int64).max
    low = reduce(np.minimum, np.where(in_va, selected, big), offsets, big)
    high = reduce(np.maximum, np.where(in_va, selected, -1), offsets, -1)
    return low, high, cur, total
