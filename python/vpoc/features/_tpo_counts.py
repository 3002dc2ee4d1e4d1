"""TPO brackets (one per session and clock period) and the TPO profile the engine builds from them.

Contract: a bracket spans the ladder rows from its period's lowest low to its highest high; a row's TPO count
is the number of the session's brackets touching it, an exact integer; POC / value area are the engine's rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .._api import from_bars
from .._profiles import Profiles

__all__ = ["_Brackets", "_brackets", "_tpo_profiles"]


@dataclass
class _Brackets:
    """The (session, period) brackets of a call, sorted by session then period."""

    offsets: np.ndarray  # int64 [S+1]: the brackets of session s are offsets[s]:offsets[s+1]
    period: np.ndarray  # int64 clock period number of each bracket (increasing within a session)
    lo_row: np.ndarray  # int64 row of the bracket's lowest low
    hi_row: np.ndarray  # int64 row of the bracket's highest high
    first_bar: np.ndarray  # int64 index (input order) of the bracket's first bar
    bar_bracket: np.ndarray  # int64 [N] the bracket of each bar (input order)


def _brackets(offsets: np.ndarray, period: np.ndarray, lo_row: np.ndarray,
              hi_row: np.ndarray) -> _Brackets:
    """Group the bars of each session by clock ``period`` (bars of one period need not be
    contiguous: a repeated wall-clock hour puts two hours in the same periods)."""
    S = offsets.shape[0] - 1
    counts = np.diff(offsets)
    sid = np.repeat(np.arange(S, dtype=np.int64), counts)
    per = np.asarray(period, dtype=np.int64)
    if per.size > 1 and not np.all((np.diff(per) >= 0) | (np.diff(sid) != 0)):
        order = np.lexsort((per, sid))  # stable: a bracket's first bar is its earliest
    else:
        order = np.arange(per.size, dtype=np.int64)
    sid_o, per_o = sid[order], per[order]
    lo_o, hi_o = lo_row[order], hi_row[order]
    new = np.ones(sid_o.size, dtype=bool)  # a bar that opens a bracket
    new[1:] = (sid_o[1:] != sid_o[:-1]) | (per_o[1:] != per_o[:-1])
    start = np.flatnonzero(new)
    if start.size:
        g_lo = np.minimum.reduceat(lo_o, start)
        g_hi = np.maximum.reduceat(hi_o, start)
    else:
        g_lo = g_hi = np.zeros(0, dtype=np.int64)
    g_offs = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(np.bincount(sid_o[start], minlength=S), out=g_offs[1:])
    bar_bracket = np.empty(per.size, dtype=np.int64)
    bar_bracket[order] = np.cumsum(new) - 1
    return _Brackets(offsets=g_offs, period=per_o[start], lo_row=g_lo.astype(np.int64),
                     hi_row=g_hi.astype(np.int64), first_bar=order[start].astype(np.int64),
                     bar_bracket=bar_bracket)


def _tpo_profiles(b: _Brackets, row_size: float, *, value_area: float = 0.70,
                  va_method: str = "cbot", poc_tie: str = "center",
                  threads: Optional[int] = None) -> Profiles:
    """The TPO profile of every session: one ``from_bars`` call with one bar per bracket, from the
    row of its low to the row of its high, carrying as many volume units as it has rows, spread
    uniformly (one unit per row, exactly); on the ladder of ``row_size`` (one tick per row), so row
    indices and row prices are those of the volume profile's ladder. POC, value area and ties are
    the engine's rules applied to the counts."""
    rs = float(row_size)
    return from_bars(b.hi_row.astype(np.float64) * rs, b.lo_row.astype(np.float64) * rs,
                     b.lo_row.astype(np.float64) * rs, (b.hi_row - b.lo_row + 1).astype(np.int64),
                     offsets=b.offsets, tick_size=rs, ticks_per_row=1, distribute="uniform",
                     value_area=value_area, va_method=va_method, poc_tie=poc_tie, threads=threads)
