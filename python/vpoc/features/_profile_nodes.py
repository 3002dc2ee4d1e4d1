"""High/low volume nodes (HVN/LVN) of each session profile and the profile shape (P, b, D, B).

Contract: smoothed by a centred moving sum, nodes are strict local extremes over ``node_order`` rows
within the 1e-9 tie band; every step is O(rows) whatever the window (docs/features.md, Rules).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

import numpy as np

from ._engine import _Context
from ._params import _TIE_REL
from ._segments import _segment_accumulate, _segment_count, _segment_reduce, _sliding

__all__ = ["_Nodes", "_node_levels", "_nodes", "_shapes"]


@dataclass
class _Nodes:
    hvn: np.ndarray  # bool per histogram row
    lvn: np.ndarray
    smooth: np.ndarray  # smoothed (window-summed) volume per histogram row
    row_price: np.ndarray
    row: np.ndarray  # int64 ladder row of each histogram row
    hoff: np.ndarray  # histogram offsets [S+1]


def _nodes(ctx: _Context) -> _Nodes:
    """HVN/LVN rows. Volumes are summed over a centred window of ``node_smoothing`` rows (rows
    outside the profile count 0). Consecutive rows with equal smoothed volume (within the 1e-9
    relative tie band) form a run; a run is an HVN when the rows just below and above it are
    strictly lower, no row within ``node_order`` rows of it is higher (those rows must lie inside
    the profile) and its volume is >= ``hvn_threshold`` x the session's largest smoothed volume;
    an LVN mirrors this (strictly higher neighbours, none lower, <= ``lvn_threshold`` x largest).
    The node is the run's middle row (the lower of two)."""
    rules, prof = ctx.rules, ctx.prof
    hoff = np.asarray(prof.offsets)
    vol = np.asarray(prof.volume)
    n_rows = np.asarray(prof.n_rows)
    R = vol.shape[0]
    pos = np.arange(R, dtype=np.int64) - np.repeat(hoff[:-1], n_rows)
    nr = np.repeat(n_rows, n_rows)
    # the window sum from per-session running sums: O(rows) whatever the window (the running sums
    # restart at every session, so their rounding is relative to the session's volume)
    h = rules.node_smoothing // 2
    idx = np.arange(R, dtype=np.int64)
    csum = _segment_accumulate(np.add, vol, hoff)
    top = csum[idx + np.minimum(nr - 1 - pos, h)]
    below = np.where(pos > h, csum[np.maximum(idx - h - 1, 0)], 0.0)
    sm = top - below if h else vol.astype(np.float64)
    smax = np.repeat(_segment_reduce(np.maximum, sm, hoff, 0.0), n_rows)
    tol = _TIE_REL * smax
    new_run = np.ones(R, dtype=bool)
    if R > 1:
        new_run[1:] = (pos[1:] == 0) | (np.abs(sm[1:] - sm[:-1]) > tol[1:])
    a = np.flatnonzero(new_run)  # run starts; runs never cross sessions
    b = np.append(a[1:], R)[:a.size].astype(np.int64) - 1  # run ends
    k = rules.node_order
    inside = (pos[a] >= k) & (pos[b] + k <= nr[a] - 1)
    a, b = a[inside], b[inside]
    c = (a + b) // 2
    v, t, top = sm[c], tol[c], smax[c]
    is_h = (v >= rules.hvn_threshold * top - t) & (v - sm[a - 1] > t) & (v - sm[b + 1] > t)
    is_l = (v <= rules.lvn_threshold * top + t) & (sm[a - 1] - v > t) & (sm[b + 1] - v > t)
    if a.size:  # the k rows on each side, by sliding-window extremes (windows inside sessions)
        hi_k, lo_k = _sliding(np.maximum, sm, k), _sliding(np.minimum, sm, k)
        is_h &= (v - hi_k[a - k] >= -t) & (v - hi_k[b + 1] >= -t)
        is_l &= (lo_k[a - k] - v >= -t) & (lo_k[b + 1] - v >= -t)
    hvn = np.zeros(R, dtype=bool)
    lvn = np.zeros(R, dtype=bool)
    hvn[c[is_h]] = True
    lvn[c[is_l]] = True
    row = np.repeat(np.asarray(prof.low_row), n_rows) + pos
    row_price = row.astype(np.float64) * rules.row_size
    return _Nodes(hvn=hvn, lvn=lvn, smooth=sm, row_price=row_price, row=row, hoff=hoff)


def _node_levels(nodes: _Nodes, flag: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(CSR offsets [S+1], sorted prices) of the flagged rows of every session."""
    offs = np.zeros(nodes.hoff.shape[0], dtype=np.int64)
    np.cumsum(_segment_count(flag, nodes.hoff), out=offs[1:])
    return offs, nodes.row_price[flag]


def _shapes(ctx: _Context, nodes: _Nodes) -> np.ndarray:
    """Shape code per session: 0 P, 1 b, 2 D, 3 B, -1 empty (docs/features.md)."""
    rules, prof = ctx.rules, ctx.prof
    S = ctx.S
    n_rows = np.asarray(prof.n_rows)
    code = np.full(S, -1, dtype=np.int64)
    ok = n_rows > 0
    poc_pos = np.full(S, 0.5)
    multi = n_rows > 1
    poc_pos[multi] = (np.asarray(prof.poc_row)[multi] - np.asarray(prof.low_row)[multi]) \
        / (n_rows[multi] - 1).astype(np.float64)
    code[ok] = 2
    code[ok & (poc_pos <= rules.shape_edge)] = 1
    code[ok & (poc_pos >= 1.0 - rules.shape_edge)] = 0
    # B: the two largest HVNs (by smoothed volume, equal ones lower row first)
    hv = np.flatnonzero(nodes.hvn)
    if hv.size >= 2:
        sess = np.repeat(np.arange(S), n_rows)[hv]
        order = np.lexsort((hv, -nodes.smooth[hv], sess))
        hv, sess = hv[order], sess[order]
        first = np.r_[True, sess[1:] != sess[:-1]]
        i1 = np.flatnonzero(first)
        has2 = (i1 + 1 < hv.size)
        has2[has2] = sess[i1[has2] + 1] == sess[i1[has2]]
        i1 = i1[has2]
        r1, r2 = hv[i1], hv[i1 + 1]
        s1, s2 = nodes.smooth[r1], nodes.smooth[r2]
        a, b = np.minimum(r1, r2), np.maximum(r1, r2)
        ext = np.append(nodes.smooth, np.inf)
        pairs = np.empty(2 * a.size, dtype=np.int64)
        pairs[0::2], pairs[1::2] = a, b + 1
        valley = np.minimum.reduceat(ext, pairs)[0::2]
        smax = s1  # the largest HVN is the session's largest smoothed volume or below it
        tol = _TIE_REL * np.maximum(smax, 0.0)
        is_b = (s2 >= rules.shape_b_peak * s1 - tol) & (valley <= rules.shape_b_valley * s2 + tol)
        code[sess[i1][is_b]] = 3
    return code

