"""The session clock of a live feed: which session (label) each timestamp belongs to.

Contract: a vpoc.sessions rule gives exactly the windows (and result facts: ``facts``) a batch call would use
(computed a month at a time), ``session_starts`` gives session k = [starts[k], starts[k+1]), neither one session (0).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any, List, Optional, Tuple

import numpy as np

from .._frames import SESSION_RULES, session_facts
from .._time import input_timestamps_ns, zone, zone_offset_s
from ..sessions import RULES, localize_wall, rule_definition
from ._common import _NS_PER_DAY

__all__ = ["_Clock"]

# Days of session windows computed at once past a timestamp the table does not cover: one
# calendar lookup serves about a month of a live feed.
_WINDOW_DAYS_AHEAD = 31


class _Clock:
    """Assigns timestamps to sessions: a vpoc.sessions definition (windows computed a month at a
    time, exactly those a batch call would use), explicit session starts, or one session."""

    def __init__(self, session: Any, session_options: Optional[dict], session_starts: Any,
                 time_unit: Optional[str]) -> None:
        opts = dict(session_options or {})
        self.closed = "left"
        self.defn: Optional[Any] = None
        self.rule: Optional[str] = None
        self.starts: Optional[np.ndarray] = None
        if session is not None and session_starts is not None:
            raise ValueError("give either session or session_starts, not both")
        if session is not None:
            if isinstance(session, str):
                if session not in RULES:
                    raise ValueError(f"session must be one of {RULES} or None, got {session!r}")
                kind = session
            else:
                raise TypeError("session must be 'globex', 'rth', 'daily' or 'custom' (options in "
                                f"session_options), got {type(session).__name__}")
            self.closed = opts.pop("closed", "left")
            if self.closed not in ("left", "right"):
                raise ValueError(f"session_options['closed'] must be 'left' or 'right', got {self.closed!r}")
            self.defn = rule_definition(kind, opts)
            # the name a batch call states (from_bars(..., session="globex")); with options the batch
            # builds a vpoc.sessions.Sessions, whose definition names the rule
            self.rule = kind if kind in SESSION_RULES and not session_options else None
        elif session_starts is not None:
            starts = input_timestamps_ns(session_starts, len(session_starts), time_unit, False, "session_starts")
            if starts.shape[0] == 0 or np.any(np.diff(starts) <= 0):
                raise ValueError("session_starts must be non-empty and strictly increasing")
            self.starts = starts
        self.table_lo = self.table_hi = 0  # UTC ns range the window table covers
        self.opens: List[int] = []
        self.closes: List[int] = []
        self.labels: List[int] = []
        self.cur: Optional[Tuple[int, int, int]] = None  # (open, close, label) of the last window hit

    def facts(self, labels: Any) -> dict:
        """The session facts of a result holding the sessions ``labels``: with a session rule those
        the batch sets for it (``vpoc._frames.session_facts``: trade dates, ``session_rule``); else
        the labels alone (sessions by ``session_starts`` or ``close()``: ``session`` ints)."""
        if self.defn is None:
            return dict(session_labels=np.asarray(labels, dtype=np.int64))
        return session_facts(labels, self.rule, self.defn.definition)

    def _cover(self, t: int) -> None:
        """Computes the windows for the local dates around t (a month ahead)."""
        tz = zone(self.defn.zone) if isinstance(self.defn.zone, str) else self.defn.zone
        sec = t // 10**9
        day = (sec + zone_offset_s(sec, tz)) // 86400
        d0, d1 = day - 1, day + _WINDOW_DAYS_AHEAD
        opens, closes, labels = self.defn.windows(d0, d1)
        order = np.argsort(opens, kind="stable")
        opens, closes, labels = opens[order], closes[order], labels[order]
        if np.any(closes[:-1] > opens[1:]) or np.any(np.diff(labels) < 0):
            raise ValueError(f"{self.defn.definition}: the calendar's windows overlap or are out of order")
        bounds = localize_wall(np.array([d0, d1 + 1], dtype=np.int64) * _NS_PER_DAY, tz)
        # one C call replaces the whole table: an interrupt never leaves it half new, half old
        vars(self).update(table_lo=int(bounds[0]), table_hi=int(bounds[1]), opens=opens.tolist(),
                          closes=closes.tolist(), labels=labels.tolist())

    def label(self, t: int) -> Optional[int]:
        """The session label of timestamp t (ns), None when t is in no session."""
        cur = self.cur
        if cur is not None and (cur[0] <= t < cur[1] if self.closed == "left" else cur[0] < t <= cur[1]):
            return cur[2]
        if self.defn is None:
            if self.starts is None:
                return 0
            k = int(np.searchsorted(self.starts, t, side="right")) - 1
            if k < 0:
                return None
            hi = int(self.starts[k + 1]) if k + 1 < self.starts.shape[0] else 2**63 - 1
            self.cur = (int(self.starts[k]), hi, k)
            return k
        if not self.table_lo <= t < self.table_hi:
            self._cover(t)
        if self.closed == "left":
            i = bisect_right(self.opens, t) - 1
            inside = i >= 0 and t < self.closes[i]
        else:
            i = bisect_left(self.opens, t) - 1
            inside = i >= 0 and t <= self.closes[i]
        if not inside:
            return None
        self.cur = (self.opens[i], self.closes[i], self.labels[i])
        return self.labels[i]

    def at_close(self, ts: np.ndarray, opens: bool = False) -> int:
        """How many of the sorted timestamps ``ts`` (rows in no session) sit exactly on a session
        window's close (``opens``: on its open, for at_open): bar closes read as bar opens
        (label='close' puts them back)."""
        if self.defn is None or self.closed != "left" or ts.shape[0] == 0:
            return 0
        n, i0 = 0, 0
        while i0 < ts.shape[0]:
            t0 = int(ts[i0])
            if not self.table_lo <= t0 < self.table_hi:
                self._cover(t0)
            i1 = int(np.searchsorted(ts, self.table_hi, side="left"))
            edges = self.opens if opens else self.closes  # of the table just covered
            n += int(np.isin(ts[i0:i1], np.asarray(edges, np.int64)).sum())
            i0 = i1
        return n

    def at_open(self, ts: np.ndarray, step: int) -> int:
        """How many of the sorted bar opens ``ts`` (rows in no session) sit exactly one bar interval
        ``step`` before a session window's open: bar opens read as bar closes (label='close' on
        open-stamped bars moves each session's first bar there; label='open' puts them back)."""
        if self.defn is None or self.closed != "left" or ts.shape[0] == 0:
            return 0
        return self.at_close(ts + step, opens=True)

    def labels_of(self, ts: np.ndarray) -> np.ndarray:
        """Labels of sorted timestamps (-1: in no session; labels are >= 0)."""
        out = np.empty(ts.shape[0], dtype=np.int64)
        if self.defn is None and self.starts is None:
            out[:] = 0
            return out
        if self.defn is None:
            k = np.searchsorted(self.starts, ts, side="right") - 1
            return np.where(k >= 0, k, -1)
        i0 = 0
        while i0 < ts.shape[0]:
            t0 = int(ts[i0])
            if not self.table_lo <= t0 < self.table_hi:
                self._cover(t0)
            i1 = int(np.searchsorted(ts, self.table_hi, side="left"))
            seg = ts[i0:i1]
            opens, closes = np.asarray(self.opens, np.int64), np.asarray(self.closes, np.int64)
            side = "right" if self.closed == "left" else "left"
            i = np.searchsorted(opens, seg, side=side) - 1
            ok = i >= 0
            ic = np.maximum(i, 0)
            ok &= (seg < closes[ic]) if self.closed == "left" else (seg <= closes[ic])
            out[i0:i1] = np.where(ok, np.asarray(self.labels, np.int64)[ic] if self.labels else -1, -1)
            i0 = i1
        return out

