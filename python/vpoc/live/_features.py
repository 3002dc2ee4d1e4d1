"""The feature state of vpoc.Live: what finished sessions leave for the next one, the running bar state, the rows.

Contract: ``bar_features_row()`` and ``session_table()`` equal the rows of ``vpoc.bar_features`` /
``session_features`` on the same bars and sessions: every rule comes from vpoc.features' own functions.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._profiles import Profiles
from .._time import offset_change, utc_offset_ns, yyyymmdd_days, zone_offset_s
from ..features import (FEATURE_DEFAULTS, FeatureTable, bar_row, composite_levels, ib_window,
                        last_session_row, nearest, node_levels, price_rows, session_volume)
from ._common import _Concat, _NAN, _NS_PER_DAY, _NS_PER_MINUTE, _locked

__all__ = ["BAR_COLUMNS", "BAR_SIDE_COLUMNS", "_FEATURE_OPTIONS", "_FeaturesMixin"]

#: The columns of ``Live.bar_features_row()``: those of ``vpoc.bar_features`` with timestamps.
BAR_COLUMNS: Tuple[str, ...] = (
    "bar_index", "cum_volume", "cum_volume_vs_prev", "close_change_pct", "close_to_vwap_pct",
    "dev_poc_dist", "dev_vah_dist", "dev_val_dist", "dev_va_position", "dev_high_dist",
    "dev_low_dist", "prev_poc_dist", "prev_vah_dist", "prev_val_dist", "composite_poc_dist",
    "composite_vah_dist", "composite_val_dist", "naked_poc_count", "naked_poc_above_dist",
    "naked_poc_below_dist", "prev_hvn_above_dist", "prev_hvn_below_dist", "prev_lvn_above_dist",
    "prev_lvn_below_dist", "minute_of_day", "minutes_elapsed", "ib_high_dist", "ib_low_dist",
)
#: The columns ``bar_features_row()`` adds after ``BAR_COLUMNS`` with ``Live(side=True)``: those of
#: ``vpoc.bar_features(..., buy_volume=, sell_volume=)``.
BAR_SIDE_COLUMNS: Tuple[str, ...] = ("bar_delta", "cum_delta", "cum_delta_ratio", "dev_delta_poc_dist")

#: The feature options ``Live(features=...)`` takes (those of session_features / bar_features).
_FEATURE_OPTIONS = tuple(FEATURE_DEFAULTS)
# Finished sessions whose session_features rows may wait for session_table(): computing them is
# the slow part of a session's end (milliseconds), so it stays off the update path, but at most
# this many wait (they keep their sessions' bars alive).
_MAX_PENDING = 256


class _FeaturesMixin:
    """Feature state and rows (methods of ``Live``)."""

    def _window_profiles(self, k: int) -> Profiles:
        """The last k finished sessions as one Profiles."""
        return Profiles(_Concat(self._done[-k:], self._rules_kw["tick_size"],
                                self._rules_kw["ticks_per_row"]))

    def _close_features(self, bars: Dict[str, Any]) -> None:
        rules = self._rules
        e = len(self._done) - 1  # this session's position among the (non-empty) finished ones
        one = self._done[-1]
        # composite of the last composite_sessions sessions, ending here
        N = rules.composite_sessions
        if e + 1 >= N:
            comp = composite_levels(self._window_profiles(N), rules)
            self._comp.append((float(comp[0][-1]), float(comp[1][-1]), float(comp[2][-1])))
        else:
            self._comp.append((_NAN, _NAN, _NAN))
        # naked POCs at the end of this session
        s_low, s_high = float(np.min(bars["low"])), float(np.max(bars["high"]))
        lo_r, hi_r = (int(x) for x in price_rows(np.array([s_low, s_high]), rules))
        self._naked = [(j, r, p) for (j, r, p) in self._naked if not lo_r <= r <= hi_r]
        self._naked.append((e, int(one["poc_row"][0]), float(one["poc"][0])))
        # bars kept for the session_features lookbacks
        # (the tail is replaced, never changed in place: a rollback puts the old one back)
        self._tail = (self._tail + [bars])[-self._tail_n:]
        if self._with_session_rows:  # computed later, off the update path (session_table())
            m = len(self._tail)
            levels = self._naked_levels(e)
            naked = (float(len(levels)),) + nearest(levels, float(bars["close"][-1]))
            self._session_rows.append((list(self._tail), self._comp[-m:], naked, e))
            if len(self._session_rows) - self._pending_from >= _MAX_PENDING:
                self._flush()
        self._ctx = self._next_context()

    def _naked_levels(self, e: int) -> List[float]:
        age = self._rules.naked_max_age
        return sorted(p for (j, _, p) in self._naked if age is None or e - j < age)

    def _flush(self) -> None:
        """The session_features rows of the sessions finished since the last call, each put in
        place of its record in one step: an interrupted flush leaves every entry a row or a
        record (both valid), keeps what it computed (also through an update's rollback), and the
        next flush goes on from there."""
        rows = self._session_rows
        for i in range(self._pending_from, len(rows)):
            if isinstance(rows[i], tuple):
                values, names = self._session_row(*rows[i])
                if self._session_columns is None:
                    self._session_columns = names
                rows[i] = values
            self._pending_from = i + 1

    def _session_row(self, tail: List[Dict[str, Any]], comp_tail: List[Tuple[float, float, float]],
                     naked_last: Tuple[float, float, float], e: int
                     ) -> Tuple[np.ndarray, Tuple[str, ...]]:
        """session_features' row of the session that ended with ``tail`` (the bars of it and of
        the sessions before it that its lookbacks need), from the features module's own code and
        the naked POCs as they were when it ended."""
        m = len(tail)
        labels = np.asarray(self._done_labels[e - m + 1:e + 1], dtype=np.int64)
        trade_days = yyyymmdd_days(labels, "session labels") if self._clock.defn is not None else None
        done = self._done[e - m + 1:e + 1]
        prof = Profiles(_Concat(done, self._rules_kw["tick_size"], self._rules_kw["ticks_per_row"]))
        # with side=True the profiles carry their side fields, which add session_features' side columns
        prof = self._side_attach(prof, done)  # type: ignore[attr-defined]
        return last_session_row(tail, prof, labels, trade_days, comp_tail, naked_last, self._rules)

    def _next_context(self) -> SimpleNamespace:
        """What the bars of the next session read from the finished ones."""
        rules, tick = self._rules, self._rules.tick_size
        e = len(self._done) - 1
        ctx = SimpleNamespace(prev_total=_NAN, prev=(_NAN, _NAN, _NAN), comp=(_NAN, _NAN, _NAN),
                              naked=[], hvn=[], lvn=[], tick=tick)
        if e < 0:
            return ctx
        one = self._done[-1]
        tail = self._tail[-1] if self._tail else None
        if tail is not None:
            vol = tail["volume"]
            ctx.prev_total = session_volume(vol)
        ctx.prev = (float(one["poc"][0]), float(one["vah"][0]), float(one["val"][0]))
        ctx.comp = self._comp[-1] if self._comp else (_NAN, _NAN, _NAN)
        ctx.naked = self._naked_levels(e)
        ctx.hvn, ctx.lvn = node_levels(self._window_profiles(1), rules)
        return ctx

    def _utc_offset_ns(self, t: int) -> int:
        """features._utc_offset_ns for one instant, cached per UTC day."""
        sec = t // 10**9
        day = sec // 86400
        hit = self._offsets_cache.get(day)
        if hit is None:
            before = zone_offset_s(day * 86400, self._tz)
            after = zone_offset_s((day + 1) * 86400, self._tz)
            when = offset_change(day, self._tz, before) if before != after else (day + 1) * 86400
            hit = (before, when, after)
            if len(self._offsets_cache) > 64:
                self._offsets_cache.clear()
            self._offsets_cache[day] = hit
        return (hit[0] if sec < hit[1] else hit[2]) * 10**9

    def _trade_day(self) -> Optional[int]:
        """The current session's trade date (days since the epoch) when its label is one (a
        session definition's YYYYMMDD labels), else None: the IB window of ``_ib_mask``."""
        label = self._label
        if self._clock.defn is None or label is None:
            return None
        hit = self._days_cache.get(label)
        if hit is None:
            hit = int(yyyymmdd_days(np.array([label], dtype=np.int64), "session label")[0])
            if len(self._days_cache) > 64:
                self._days_cache.clear()
            self._days_cache[label] = hit
        return hit

    def _advance_one(self, high: float, low: float, close: float, volume: float, t: int,
                     open: Optional[float]) -> None:
        """The running per-bar state (the batch's segment accumulations) after one bar."""
        local = t + self._utc_offset_ns(t)
        tod = local % _NS_PER_DAY
        ib = ib_window(local // _NS_PER_DAY, tod, self._trade_day(), self._rules)  # the tables' rule
        r = self._run
        if r is None:
            self._run = [0, volume, close * volume, high, low, high if ib else -math.inf,
                         low if ib else math.inf, t, _NAN if open is None else open, close, tod, t]
            return
        r[0] += 1
        r[1] += volume
        r[2] += close * volume
        if high > r[3]:
            r[3] = high
        if low < r[4]:
            r[4] = low
        if ib:
            if high > r[5]:
                r[5] = high
            if low < r[6]:
                r[6] = low
        r[9], r[10], r[11] = close, tod, t

    def _advance_many(self, high: np.ndarray, low: np.ndarray, close: np.ndarray,
                      volume: np.ndarray, ts: np.ndarray, open: Optional[np.ndarray]) -> None:
        # the same sums in the same order as _advance_one (np.add.accumulate is sequential)
        n = high.shape[0]
        local = ts + np.asarray([self._utc_offset_ns(int(x)) for x in ts], dtype=np.int64) \
            if n < 64 else ts + utc_offset_ns(ts, self._tz)
        tod = np.mod(local, _NS_PER_DAY)
        ib = ib_window(np.floor_divide(local, _NS_PER_DAY), tod, self._trade_day(), self._rules)
        r = self._run
        if r is None:
            r = self._run = [-1, 0.0, 0.0, -math.inf, math.inf, -math.inf, math.inf, int(ts[0]),
                             _NAN if open is None else float(open[0]), 0.0, 0, 0]
            cv = np.add.accumulate(volume)
            cpv = np.add.accumulate(close * volume)
        else:
            cv = np.add.accumulate(np.r_[r[1], volume])[1:]
            cpv = np.add.accumulate(np.r_[r[2], close * volume])[1:]
        r[0] += n
        r[1] = float(cv[-1])
        r[2] = float(cpv[-1])
        r[3] = max(r[3], float(np.max(high)))
        r[4] = min(r[4], float(np.min(low)))
        if ib.any():
            r[5] = max(r[5], float(np.max(high[ib])))
            r[6] = min(r[6], float(np.min(low[ib])))
        r[9], r[10], r[11] = float(close[-1]), int(tod[-1]), int(ts[-1])

    @_locked
    def bar_features_row(self) -> np.ndarray:
        """The ``vpoc.bar_features`` row (float32 [F], columns ``BAR_COLUMNS``, then
        ``BAR_SIDE_COLUMNS`` with ``Live(side=True)``) of the latest bar: equal to the batch
        table's row for the same bars and sessions (with timestamps; and ``buy_volume=`` /
        ``sell_volume=``)."""
        if not self._bars:
            raise TypeError("bar features need bars (this Live profile takes trades)")
        if self._window is not None:
            raise ValueError(f"bar_features_row: this Live has window={self._window}, so its levels are the "
                             "rolling window's, while bar features read the session's developing levels (as "
                             "vpoc.bar_features does); use a Live without window= for features")
        r = self._run
        if r is None:
            raise ValueError("no bar in the current session yet")
        ctx = self._ctx
        c = r[9]
        q = SimpleNamespace(
            close=c, bar_index=float(r[0]), cum_volume=r[1], cum_pv=r[2], prev_total=ctx.prev_total,
            s_open=r[8], dev=self._levels[:3], run_high=r[3], run_low=r[4], prev=ctx.prev,
            comp=ctx.comp, naked=(float(len(ctx.naked)),) + nearest(ctx.naked, c),
            hvn=nearest(ctx.hvn, c), lvn=nearest(ctx.lvn, c), has_clock=True, tod=r[10],
            minutes_elapsed=(r[11] - r[7]) / _NS_PER_MINUTE, ib_high=r[5], ib_low=r[6],
            has_side=self._sided)
        if self._sided:  # the latest bar's delta, the session's so far, its delta POC so far
            b, s = self._last_side()
            q.bar_delta, q.cum_delta = b - s, self._side_delta()
            q.delta_poc = float(self._side_fields_now().field("delta_poc")[0])
        row = [v for _, v in bar_row(q, ctx.tick)]  # the table's own rule, on this bar
        return np.array(row, dtype=np.float32)

    @_locked
    def session_table(self) -> FeatureTable:
        """The ``session_features`` rows of the finished sessions (a FeatureTable); with
        ``Live(side=True)`` ending in ``vpoc.features.SIDE_TABLE_COLUMNS``, as ``session_features(...,
        buy_volume=, sell_volume=)``."""
        if not self._with_session_rows:
            raise ValueError("session features are off (bars only; session_features=True)")
        self._flush()
        S = len(self._session_rows)
        if S == 0:
            values = np.zeros((0, 0), dtype=np.float32)
            names: Tuple[str, ...] = ()
        else:
            values = np.ascontiguousarray(np.stack(self._session_rows))
            names = self._session_columns or ()
        return FeatureTable(values, names, session_labels=self.labels,
                               offsets=np.arange(S + 1, dtype=np.int64), kind="session",
                               snapped_prices=self._snapped_done,  # as session_features counts them
                               session_rule=self._clock.facts(self.labels).get("session_rule"))  # ... names it
