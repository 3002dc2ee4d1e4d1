"""The local clock of each bar (time zone offsets, minute of day), the initial balance window and TPO.

Contract: wall-clock times come from the IANA zone rules (DST included), exact over the int64 ns range;
the IB window lies on each session's own trade date when the sessions carry dates; TPO periods align to
``rth_start``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np

from .._time import (offset_change as _offset_change, utc_offset_ns as _utc_offset_ns,
                     zone_offset_s as _zone_offset_s)
from ._engine import _Context
from ._params import _NS_PER_DAY, _NS_PER_MINUTE, _Rules
from ._tpo_counts import _context_pass

__all__ = ["_Clock", "_clock", "_ib_late_ns", "_ib_mask", "_ib_window", "_offset_change", "_tpo", "_utc_offset_ns",
           "_zone_offset_s"]


@dataclass
class _Clock:
    day: np.ndarray  # int64 local date of each bar open, days since 1970-01-01
    tod: np.ndarray  # int64 ns since local midnight
    period: np.ndarray  # int64 TPO period number


def _clock(ts: np.ndarray, rules: _Rules) -> _Clock:
    """Local wall-clock date, time of day and TPO period of each bar open in ``rules.tz``.

    Exact over the whole int64 nanosecond range, never wrapping: the local time is never formed
    as one int64 (2262-04-11 23:00 UTC is 2262-04-12 08:00 in Tokyo, past int64 ns); the UTC
    time is split into whole days (periods) and a remainder, and the offset added to the
    remainder."""
    off = _utc_offset_ns(ts, rules.tz)  # |off| < 1 day
    q, r = np.divmod(ts, _NS_PER_DAY)
    d, tod = np.divmod(r + off, _NS_PER_DAY)
    per_ns = rules.tpo_minutes * _NS_PER_MINUTE  # <= 1 day
    pq, pr = np.divmod(ts, per_ns)
    period = pq + np.floor_divide(pr + off - rules.rth_start_ns, per_ns)
    return _Clock(day=q + d, tod=tod, period=period)


def _ib_mask(clock: _Clock, offsets: np.ndarray, trade_days: Optional[np.ndarray],
             rules: _Rules, ts: Optional[np.ndarray] = None) -> np.ndarray:
    """Bool per bar: the bar opens inside its session's initial balance window.

    With the sessions' trade dates (``trade_days``, days since the epoch: sessions from
    vpoc.sessions, a SynthBars, a frame's trade_date/date column) the window is
    ``[D rth_start, D rth_start + ib_minutes)`` local time on the trade date D itself, so a
    holiday morning merged into the session (CME books it to the next trade date) is never its
    IB. Without them (offsets, session ids) every bar whose local time of day lies in
    ``[rth_start, rth_start + ib_minutes)`` (modulo a day) counts, whatever its date.
    ``rules.ib_end == "inclusive"`` closes the window (``]``: a bar stamped at its end counts);
    ``rules.ib_anchor == "first_bar"`` starts it at the session's first bar's stamp ``ts`` (int64
    ns, py-market-profile's ``ds.loc[:first + ib]``) instead of rth_start."""
    if rules.ib_anchor == "first_bar":
        if ts is None:
            raise AssertionError("ib_anchor='first_bar' needs the bar stamps")
        t = np.asarray(ts, dtype=np.int64)
        counts = np.diff(offsets)
        ne = counts > 0
        first = np.repeat(t[offsets[:-1][ne]], counts[ne])
        since = t - first
        return (since >= 0) & (since < _ib_limit(rules))
    if trade_days is None:
        return _ib_window(clock.day, clock.tod, None, rules)
    day = np.asarray(trade_days, dtype=np.int64)
    counts = np.diff(offsets)
    if day.shape != counts.shape:
        raise AssertionError(f"trade_days has shape {day.shape}, expected {counts.shape}")
    return _ib_window(clock.day, clock.tod, np.repeat(day, counts), rules)


def _ib_late_ns(clock: _Clock, offsets: np.ndarray, trade_days: Optional[np.ndarray], rules: _Rules,
                ib: np.ndarray, ts: np.ndarray, open_ns: Optional[np.ndarray]) -> np.ndarray:
    """int64 [S]: ns from the start the initial balance window should have to the session's first
    bar in it (``ib``, ``_ib_mask``); -1 where the session has no IB bar or the start is unknown.

    The start: with ``ib_anchor="rth"`` the window's own start, ``rth_start`` on the trade date (on
    the bar's local date without trade dates); with ``"first_bar"`` the session's scheduled open
    (``open_ns``: a session rule such as rth / globex), unknown without one (offsets, session ids,
    a date column: the first bar is taken as the open). The IB misses its start when this is at
    least one TPO period (``tpo_minutes``, at most ``ib_minutes``): ``_tpo._ib`` makes it incomplete."""
    counts = np.diff(offsets)
    S = counts.shape[0]
    late = np.full(S, -1, dtype=np.int64)
    c = np.r_[0, np.cumsum(ib, dtype=np.int64)]
    has = c[offsets[1:]] > c[offsets[:-1]]  # sessions with an IB bar
    if not has.any():
        return late
    if rules.ib_anchor == "first_bar":
        if open_ns is None:
            return late
        first = np.asarray(ts, dtype=np.int64)[offsets[:-1][has]]
        late[has] = np.maximum(first - np.asarray(open_ns, dtype=np.int64)[has], 0)
        return late
    if trade_days is None:
        since = np.mod(clock.tod - rules.rth_start_ns, _NS_PER_DAY)
    else:
        td = np.repeat(np.asarray(trade_days, dtype=np.int64), counts)
        since = np.clip(clock.day - td, -2, 2) * _NS_PER_DAY + clock.tod - rules.rth_start_ns
    big = np.iinfo(np.int64).max  # sessions between two of ``has`` have no IB bar: only ``big`` there
    first_since = np.minimum.reduceat(np.where(ib, since, big), offsets[:-1][has])
    late[has] = first_since
    return late


def _ib_limit(rules: _Rules) -> int:
    """The window's length in ns, plus 1 ns when its end is included (stamps are whole ns)."""
    return rules.ib_minutes * _NS_PER_MINUTE + (1 if rules.ib_end == "inclusive" else 0)


def _ib_window(day: Any, tod: Any, trade_day: Any, rules: _Rules) -> Any:
    """The IB rule of ``_ib_mask`` for bars of local date ``day`` (days since the epoch) and time
    of day ``tod`` (ns) in a session of trade date ``trade_day`` (None: no dates, every day's
    window): int64 arrays (the tables) or Python ints (one bar of vpoc.Live), the same arithmetic."""
    ib_ns = _ib_limit(rules)  # <= 1 day + 1 ns
    if trade_day is None:
        if isinstance(tod, int):
            return (tod - rules.rth_start_ns) % _NS_PER_DAY < ib_ns
        return np.mod(tod - rules.rth_start_ns, _NS_PER_DAY) < ib_ns
    # local time - (D + rth_start), from the day difference clipped to +-2 (no overflow: a window
    # of at most a day starting on D holds no bar of a date 2 days away)
    if isinstance(tod, int):
        since = max(-2, min(2, day - trade_day)) * _NS_PER_DAY + tod - rules.rth_start_ns
        return 0 <= since < ib_ns
    delta = np.clip(day - trade_day, -2, 2)
    since = delta * _NS_PER_DAY + tod - rules.rth_start_ns
    return (since >= 0) & (since < ib_ns)


def _tpo(ctx: _Context, clock: _Clock) -> Tuple[np.ndarray, np.ndarray]:
    """(TPO POC price, single-print count) per session. A TPO period covers every row from the
    row of its lowest low to the row of its highest high; a row's TPO count is the number of
    periods covering it; the TPO POC follows ``poc_tie``; single prints are rows counted once.
    The counts and the POC are those of ``vpoc.tpo``: the call's one TPO pass (``_context_pass``)."""
    p = _context_pass(ctx, clock)
    return np.asarray(p.prof.poc, dtype=np.float64), p.singles.astype(np.float64)
