"""TPO brackets (one per session and clock period) and the TPO profile the engine builds from them.

Contract: a bracket spans the ladder rows from its period's lowest low to its highest high; a row's TPO count
is the number of the session's brackets touching it, an exact integer; POC / value area are the engine's rules.
``_tpo_pass`` is the one place a call's TPO engine pass runs (once per call: ``_context_pass`` shares it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .._api import from_bars
from .._arrays import derived_prices
from .._profiles import Profiles
from ._params import _Rules
from ._segments import _price_rows, _segment_count

__all__ = ["_Brackets", "_TpoPass", "_brackets", "_context_pass", "_single_print_mask", "_single_prints", "_tpo_pass",
           "_tpo_profiles"]


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
    with derived_prices():  # ladder rows: the call's from_bars reported their grid
        return from_bars(b.hi_row.astype(np.float64) * rs, b.lo_row.astype(np.float64) * rs,
                         b.lo_row.astype(np.float64) * rs, (b.hi_row - b.lo_row + 1).astype(np.int64),
                         offsets=b.offsets, tick_size=rs, ticks_per_row=1, distribute="uniform",
                         value_area=value_area, va_method=va_method, poc_tie=poc_tie, threads=threads)


def _single_print_mask(count: np.ndarray) -> np.ndarray:
    """Which rows are single prints: TPO count 1 (the one home of that rule)."""
    return np.asarray(count) == 1


def _single_prints(count: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Single prints per session (int64): the rows of ``_single_print_mask``."""
    return _segment_count(_single_print_mask(count), np.asarray(offsets, dtype=np.int64))


@dataclass
class _TpoPass:
    """One TPO engine pass over a call's bars: the brackets, their TPO profile (the engine's result),
    its counts per row (int64, exact) and single prints per session."""

    brackets: _Brackets
    prof: Profiles
    count: np.ndarray
    singles: np.ndarray


def _tpo_pass(offsets: np.ndarray, period: np.ndarray, low: np.ndarray, high: np.ndarray, rules: _Rules,
              threads: Optional[int] = None) -> _TpoPass:
    """The TPO pass of bars (``low`` / ``high`` prices, clock ``period`` of each, sessions by
    ``offsets``) on the ladder of ``rules``, by its value-area and POC rules."""
    b = _brackets(offsets, period, _price_rows(low, rules), _price_rows(high, rules))
    prof = _tpo_profiles(b, rules.row_size, value_area=rules.value_area, va_method=rules.va_method,
                         poc_tie=rules.poc_tie, threads=threads)
    count_f = np.asarray(prof.volume)
    count = count_f.astype(np.int64)
    if not np.array_equal(count, count_f):  # pragma: no cover (one unit per row: exact)
        raise AssertionError("TPO counts are not whole numbers")
    return _TpoPass(b, prof, count, _single_prints(count, np.asarray(prof.offsets)))


def _context_pass(ctx: Any, clock: Any) -> _TpoPass:
    """The TPO pass of a features call (``ctx``: its ``_Context``; ``clock``: its ``_Clock``), made on
    first use and kept on ``ctx`` for that clock: the session table's ``tpo_poc`` / ``single_prints``,
    its ``tpo_columns`` and its context columns read the same pass."""
    kept = ctx.__dict__.get("_tpo_pass")
    if kept is not None and kept[0] is clock:
        return kept[1]
    d = ctx.data
    p = _tpo_pass(d.offsets, clock.period, d.low, d.high, ctx.rules, ctx.threads)
    ctx.__dict__["_tpo_pass"] = (clock, p)
    return p
