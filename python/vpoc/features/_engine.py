"""Per-call session context (layout, OHLC summaries, VWAP), the engine call and composite profiles.

Contract: one ``from_bars`` call gives every session profile; composites are the row-wise sums of
the last ``composite_sessions`` non-empty sessions' histograms, profiled by ``from_trades``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import numpy as np

from .._api import from_bars, from_trades
from .._arrays import derived_prices
from .._errors import input_rows
from .._profiles import Profiles
from ._inputs import _Data
from ._params import _Rules
from ._segments import _previous_nonempty, _ratio, _segment_reduce

__all__ = ["_Context", "_composites", "_context", "_profiles"]


@dataclass
class _Context:
    """Everything computed once per call, shared by session and bar features."""

    data: _Data
    rules: _Rules
    prof: Profiles
    S: int
    counts: np.ndarray  # bars per session
    ne: np.ndarray  # indices of the non-empty sessions (m)
    k_of: np.ndarray  # [S] position of each session among the non-empty ones (-1 when empty)
    prev: np.ndarray  # [S] previous non-empty session (-1: none)
    s_open: np.ndarray
    s_close: np.ndarray
    s_high: np.ndarray
    s_low: np.ndarray
    total_volume: np.ndarray
    vwap: np.ndarray
    threads: Optional[int]


def _context(data: _Data, rules: _Rules, prof: Profiles, threads: Optional[int]) -> _Context:
    offs = data.offsets
    S = offs.shape[0] - 1
    counts = np.diff(offs)
    nonempty = counts > 0
    ne = np.flatnonzero(nonempty)
    k_of = np.full(S, -1, dtype=np.int64)
    k_of[ne] = np.arange(ne.shape[0])
    prev = _previous_nonempty(counts)
    first = offs[:-1]
    last = offs[1:] - 1
    s_close = np.full(S, np.nan)
    s_open = np.full(S, np.nan)
    s_close[nonempty] = data.close[last[nonempty]]
    if data.open is not None:
        s_open[nonempty] = data.open[first[nonempty]]
    s_high = _segment_reduce(np.maximum, data.high, offs, np.nan)
    s_low = _segment_reduce(np.minimum, data.low, offs, np.nan)
    total = _segment_reduce(np.add, data.volume, offs, np.nan)
    pv = _segment_reduce(np.add, data.close * data.volume, offs, np.nan)
    vwap = np.where(total > 0, _ratio(pv, total), s_close)  # no volume: the close (legacy)
    return _Context(data=data, rules=rules, prof=prof, S=S, counts=counts, ne=ne, k_of=k_of,
                    prev=np.asarray(prev, dtype=np.int64), s_open=s_open, s_close=s_close,
                    s_high=s_high, s_low=s_low, total_volume=total, vwap=vwap, threads=threads)


def _profiles(data: _Data, rules: _Rules, device: Any, threads: Optional[int],
              developing: bool, **side: Any) -> Tuple[Profiles, str]:
    """One engine call over all sessions; (host profiles, the device it ran on). ``side``: the
    aggressor-side arguments of ``from_bars`` (buy_volume=, sell_volume=, imbalance parameters).
    The engine's errors about a bar name the caller's input row of it (``facts["input_index"]``:
    the rows a session= kept) and a session by its label, as from_bars' own ``session=`` does."""
    h, lo, c, v, o = data.engine_inputs
    kw: Dict[str, Any] = dict(developing=True) if developing else {}
    kw.update(side)
    with input_rows(data.facts.get("input_index"), labels=data.labels):
        prof = from_bars(h, lo, c, v, open=o, offsets=data.offsets, tick_size=rules.tick_size,
                         ticks_per_row=rules.ticks_per_row, distribute=rules.distribute,
                         value_area=rules.value_area, va_method=rules.va_method, poc_tie=rules.poc_tie,
                         device=device, threads=threads, **kw)
    return prof.cpu(), prof.device


# ---------------------------------------------------------------------------- composite profiles


def _composites(ctx: _Context) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """POC/VAH/VAL of the composite of the N = composite_sessions non-empty sessions ending at
    each non-empty session (the sum of their histograms, same rules); NaN for the first N-1."""
    rules, prof = ctx.rules, ctx.prof
    m, N = ctx.ne.shape[0], rules.composite_sessions
    out = tuple(np.full(m, np.nan) for _ in range(3))
    if m < N:
        return out  # type: ignore[return-value]
    hoff = np.asarray(prof.offsets)
    vol = np.asarray(prof.volume)
    n_rows = np.asarray(prof.n_rows)
    row_price = (np.repeat(np.asarray(prof.low_row), n_rows)
                 + (np.arange(vol.shape[0]) - np.repeat(hoff[:-1], n_rows))).astype(np.float64) \
        * rules.row_size
    # the rows of window e are one contiguous slice of the flat histogram
    starts = hoff[ctx.ne[: m - N + 1]]
    ends = hoff[ctx.ne[N - 1:] + 1]
    lengths = ends - starts
    budget = 8_000_000  # histogram rows per engine call
    e0 = 0
    while e0 < starts.shape[0]:
        e1 = e0 + 1
        total = int(lengths[e0])
        while e1 < starts.shape[0] and total + int(lengths[e1]) <= budget:
            total += int(lengths[e1])
            e1 += 1
        seg = lengths[e0:e1]
        w_offs = np.zeros(e1 - e0 + 1, dtype=np.int64)
        np.cumsum(seg, out=w_offs[1:])
        idx = np.arange(total, dtype=np.int64) + np.repeat(starts[e0:e1] - w_offs[:-1], seg)
        with derived_prices():  # ladder rows: the call's from_bars reported their grid
            comp = from_trades(row_price[idx], vol[idx], offsets=w_offs, tick_size=rules.row_size,
                               ticks_per_row=1, value_area=rules.value_area, va_method=rules.va_method,
                               poc_tie=rules.poc_tie, threads=ctx.threads)
        for arr, name in zip(out, ("poc", "vah", "val")):
            arr[N - 1 + e0:N - 1 + e1] = getattr(comp, name)
        e0 = e1
    return out  # type: ignore[return-value]

