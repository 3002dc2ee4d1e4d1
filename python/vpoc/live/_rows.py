"""Rows into vpoc.Live: one-row values and timestamps checked and converted, the price grid, engine appends.

Contract: every check runs before anything changes; an error names the argument and, for arrays,
the row's position in the update (the engine's indices are renamed to it).
"""

from __future__ import annotations

import bisect
import numbers
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import _core
from .._arrays import MAX_VOLUME, check_grid, duplicate_bars, volume_too_large
from .._errors import readdressed, row_of
from .._time import bar_opens, epoch_ns, input_timestamps_ns, iso_utc, naive_pandas_error
from .._warnings import DuplicateRowsWarning, user_stacklevel
from .._timewin import appended_starts
from ._common import _NS_PER_DAY
from ._guards import closed_session_error, session_too_wide

__all__ = ["_RowsMixin", "_renamed"]

# Integer timestamps in ns taken without further checks on the one-row path: 1990..2100, the span
# vpoc._time accepts as nanoseconds (others go through its unit check).
_PLAUSIBLE_NS = (631_152_000 * 10**9, 4_102_444_800 * 10**9)


# The engine's names of a row's arrays (its messages name them as name[i]).
_ROW_NAMES = ("high", "low", "close", "open", "price", "volume", "buy_volume", "sell_volume", "side")


def _renamed(e: ValueError, rows: np.ndarray) -> ValueError:
    """The engine's error about one of the rows it was given (a vpoc.InputError: its argument and
    row, e.index) said of that row's position in the update, rows[e.index]: same wording, the
    same .argument, .index the position. Errors about no one row are returned as they are."""
    i = row_of(e)
    if i is None:
        return e
    return readdressed(e, int(rows[i]), _ROW_NAMES, lambda name, row: f"{name}[{row}]")


class _RowsMixin:
    """One-row updates and the row checks shared by every update (methods of ``Live``)."""

    def _ts_one(self, t: Any) -> int:
        if type(t) is int or isinstance(t, np.integer):
            t = int(t)
            if self._ts_scale == 1 and _PLAUSIBLE_NS[0] <= t <= _PLAUSIBLE_NS[1]:
                return t if self._stamp == "open" else self._opens(np.array([t], dtype=np.int64))
            t = int(epoch_ns(np.array([t], dtype=np.int64), "timestamp", self._time_unit)[0])
        else:
            if hasattr(t, "value") and hasattr(t, "tz_localize"):  # a pandas Timestamp: ns
                if getattr(t, "tzinfo", None) is None:  # naive: not guessed, as vpoc.sessions
                    raise naive_pandas_error("timestamp", "")
                t = np.datetime64(int(t.value), "ns")
            t = int(input_timestamps_ns(np.asarray([t]), 1, self._time_unit)[0])
        return t if self._stamp == "open" else self._opens(np.array([t], dtype=np.int64))

    def _opens(self, ts: np.ndarray) -> Any:
        """Bar-open times of close stamps (vpoc._time.bar_opens with this feed's interval)."""
        out = bar_opens(ts, "close", np.timedelta64(self._interval_ns, "ns"))[0]
        return int(out[0]) if out.shape[0] == 1 else out

    def _scalar(self, x: Any, name: str) -> float:
        """A one-row value as a float: a real number (not bool / None / a string); volumes as the
        exact integer are range-checked before any rounding."""
        if isinstance(x, (bool, np.bool_)):
            raise TypeError(f"{name} must be a number, got bool")
        if type(x) is int or isinstance(x, np.integer):
            if name == "volume" and int(x) > MAX_VOLUME:
                raise volume_too_large("volume", 0, int(x))
            return float(x)
        if not isinstance(x, numbers.Real):
            raise TypeError(f"{name} must be a number, got {type(x).__name__}")
        return float(x)

    def _update_one(self, args: Sequence[Any], open: Any, timestamp: Any, given: Any = None
                    ) -> Tuple[float, float, float, float, float]:
        # checks and conversions first (nothing changes), then the row under a snapshot
        if self._bars:
            high, low, close, volume = args
            if type(high) is not float:
                high = self._scalar(high, "high")
            if type(low) is not float:
                low = self._scalar(low, "low")
            if type(close) is not float:
                close = self._scalar(close, "close")
            if open is not None and type(open) is not float:
                open = self._scalar(open, "open")
        else:
            high, volume = args
            low = close = None
            if type(high) is not float:
                high = self._scalar(high, "price")
        int_vol = type(volume) is int or isinstance(volume, np.integer)
        volume_in = volume
        if type(volume) is not float:
            volume = self._scalar(volume, "volume")
        bs = None if given is None else self._side_one(given, volume_in, high, volume)
        t = self._ts_one(timestamp)
        if self._last_ts is not None and t < self._last_ts:
            raise ValueError(f"timestamp {iso_utc(t)} is before the previous row's ({iso_utc(self._last_ts)}); "
                             "rows must arrive in time order")
        label = self._clock.label(t) if not self._one_session else \
            (self._label if self._label is not None else len(self._done))  # as _labels_of
        if label is None:
            on_close = self._misstamped(np.array([t], dtype=np.int64))
            if self._on_outside == "raise" and self._drops_warn:
                raise ValueError(self._outside_message(t, on_close))
            vars(self).update(_last_ts=t, n_dropped=self.n_dropped + 1,  # one step
                              _drop_win=self._noted_drops(on_close, (t,)))
            return self._levels
        if self._label is not None and label < self._label:
            raise ValueError(f"timestamp {t} belongs to session {label}, older than the current "
                             f"session {self._label}")
        if self._ended(label):
            raise closed_session_error(label, t, None)
        has_open = open is not None
        snapped = 0
        if self._bars:
            for x in (high, low, close, open):
                if x is not None and not self._on_grid(x):
                    snapped += 1
        elif not self._on_grid(high):
            snapped = 1
        resent = 0 if t != self._last_ts or not self._bars else \
            self._resent(np.array([t], np.int64), [np.array([x]) for x in (high, low, close, volume)],
                         None if open is None else np.array([open]))
        if snapped and not self._snap:
            self._grid_error(*((high, low, close, open) if self._bars else (high, None, None, None)),
                             volume)
        if self._core is not None and has_open != self._has_open:
            raise ValueError("open must be given with every bar or with none "
                             f"(this feed's bars {'carry' if self._has_open else 'carry no'} open)")
        core, run = self._core, self._run
        if label == self._label:  # the row joins the current session: what it may change
            snap: Tuple[Any, ...] = (core, len(self._ts), self._last_ts, self.n_rows, self.n_dropped,
                                     self._int_volume, self._levels, None if run is None else run[:],
                                     self.snapped_prices)
        else:
            snap = self._snapshot()
        return self._all_or_nothing(snap, self._append_one,
                                    (label, core, has_open, high, low, close, open, volume, int_vol, bs, t, snapped,
                                     resent))

    def _append_one(self, row: Tuple[Any, ...]) -> Tuple[float, float, float, float, float]:
        """The checked row of ``_update_one`` appended (under its snapshot)."""
        label, core, has_open, high, low, close, open, volume, int_vol, bs, t, snapped, resent = row
        finished = False
        if label != self._label:  # the old session ends, the new one begins
            if self._label is not None:
                self._finish()
                finished = True
            if self._core is None:
                self._start_core(has_open)
            self._begin(label)
            core = self._core
        ws = None if self._span is None else bisect.bisect_right(self._ts, t - self._span)  # time window
        if ws == 0 and self._carry_ts:  # window_across_sessions: it may reach into the carried rows
            ws = bisect.bisect_right(self._carry_ts, t - self._span) - len(self._carry_ts)
        side = self._side_kw(bs)  # type: ignore[attr-defined]
        try:
            if self._bars:
                lv = core.append_bar(high, low, close, open, volume, ws, **side)
            else:
                lv = core.append_trade(high, volume, ws, **side)
        except ValueError as e:  # a session wider than max_rows: said as the batch says it, of row 0
            w = self._too_wide(e, core, [np.array([x], np.float64) for x in ((high, low, close, volume)
                               if self._bars else (high, volume))], None if open is None else np.array([open]), 0, 1)
            if w is e:
                raise
            raise w from None
        if bs is not None:
            self._side_append_one(bs)  # type: ignore[attr-defined]
        if self._int_volume and not int_vol:
            self._int_volume = False
        self._levels = lv
        self._last_ts = t
        self._ts.append(t)
        self.n_rows += 1
        if self._bars:
            self._advance_one(high, low, close, volume, t, open)
        if snapped:
            self.snapped_prices += snapped
        if finished:
            self._report_drops()
        if self._one_session and not self._one_session_warned and t - self._ts[0] > _NS_PER_DAY:
            self._check_one_session(t)
        if resent:
            self._warn_resent(resent, 1)
        return lv

    def _ended(self, label: int) -> bool:
        """Whether a row of session ``label`` belongs to a session close() ended (with a session rule or
        session_starts: refused, docs/live.md); no current session, and one of the finished ones."""
        return self._label is None and bool(self._done_labels) and not self._one_session \
            and label <= self._done_labels[-1]

    def _too_wide(self, e: ValueError, core: Any, cols: List[np.ndarray], o: Optional[np.ndarray], a: int,
                  b: int) -> BaseException:
        """The engine's error ``e`` on rows [a, b) of ``cols`` joining ``core`` (vpoc.live._guards.session_too_wide:
        a session wider than max_rows said as the batch says it, its first such row and this session's label)."""
        kw = dict(self._rules_kw, snap=True, **self._peer_kw)
        return session_too_wide(e, self._bars, core, cols, o, a, b, self._label, kw, self._distribute)

    def _resent(self, ts: np.ndarray, cols: List[np.ndarray], o: Optional[np.ndarray]) -> int:
        """How many of an update's bars (kept rows: bar opens ``ts``, ``cols`` high, low, close,
        volume, ``o`` open or None) are exact duplicates of an earlier bar of the session (same
        timestamp and values), the bars the session already holds at ``ts[0]`` included: the batch's
        count (vpoc._arrays.duplicate_bars), which from_bars warns about and counts again."""
        if not self._bars or not ts.shape[0]:
            return 0
        k = 0  # the session's last bars at ts[0] (a re-sent bar repeats one of them)
        while k < len(self._ts) and self._ts[-1 - k] == ts[0]:
            k += 1
        if not k:
            return duplicate_bars(ts, cols if o is None else cols + [o])[0] if ts.shape[0] > 1 else 0
        core = self._core
        held = [core.column(j)[-k:] for j in ((0, 1, 2, 4, 3) if o is not None else (0, 1, 2, 4))]
        held_ts = np.full(k, ts[0], np.int64)
        both = [np.concatenate([a, np.asarray(b, np.float64)]) for a, b in zip(held, cols if o is None else cols + [o])]
        return duplicate_bars(np.concatenate([held_ts, ts]), both)[0] - duplicate_bars(held_ts, held)[0]

    def _warn_resent(self, dups: int, n: int) -> None:
        """The DuplicateRowsWarning of an update with ``dups`` re-sent bars of its ``n`` rows (under
        the update's snapshot: warnings.simplefilter("error", vpoc.DuplicateRowsWarning) refuses
        the update, which then changes nothing)."""
        warnings.warn(f"vpoc.Live.update: {dups:,} of {n:,} bars repeat an earlier bar of the session exactly "
                      "(same timestamp, open, high, low, close and volume): each copy's volume is counted "
                      "again, as from_bars counts exact duplicates (a feed re-sending bars after a reconnect "
                      "should skip them; warnings.simplefilter('error', vpoc.DuplicateRowsWarning) makes "
                      "such an update raise and change nothing)", DuplicateRowsWarning,
                      stacklevel=user_stacklevel())

    def _carry_over(self, old: Any) -> None:
        """window_across_sessions: the new session's core (``self._core``, empty) starts with the rows
        of ``old`` (the finished session's core) that a later row's window reaches, and their
        timestamps (``_carry_ts``, a new list: snapshots keep the old one)."""
        self._core.carry(old, True)
        k = int(self._core.carried)
        both = list(self._carry_ts) + list(self._ts)
        if len(both) > k:  # the newest row left behind (from_state checks a time window's reach with it)
            self._carry_prev = both[len(both) - k - 1]
        self._carry_ts = both[len(both) - k:] if k else []

    def _snapped_by_session(self, prices: Dict[str, np.ndarray], bounds: np.ndarray) -> List[int]:
        """The off-grid prices of an update's kept rows (``prices``: name -> column) counted per
        session (rows ``bounds[g]:bounds[g + 1]``), by check_grid's rule (snap=True: no report)."""
        return [int(check_grid({k: x[int(bounds[g]):int(bounds[g + 1])] for k, x in prices.items()},
                               self._grid_tick, snap=True) or 0) for g in range(len(bounds) - 1)]

    def _on_grid(self, x: float) -> bool:
        """The engine's grid rule on one price (core/grid.hpp, as check_grid); a non-finite price
        is on it here and left to the engine's error."""
        return not _core.price_off_grid(x, self._grid_tick)

    def _grid_error(self, high: float, low: Any, close: Any, open: Any, volume: float) -> None:
        """Raises check_grid's ValueError for one row off the grid (no share tolerance can apply
        to one row: Live refuses any off-grid price unless snap=True); the engine's own errors
        on the row (a price past the float64 range, high < low, ...) come first."""
        one = lambda x: None if x is None else np.array([x], dtype=np.float64)  # noqa: E731
        cols = ([one(high), one(low), one(close), one(volume)] if self._bars
                else [one(high), one(volume)])
        self._check_rows(cols, one(open), 0, 1, None, np.arange(1))
        names = ("high", "low", "close", "open") if self._bars else ("price",)
        prices = {nm: np.array([x], dtype=np.float64) for nm, x in zip(names, (high, low, close, open))
                  if x is not None}
        try:
            check_grid(prices, self._grid_tick, snap=False)
        except ValueError as e:
            raise ValueError(f"{e} (Live refuses any off-grid price of a one-row update; "
                             "Live(..., snap=True) rounds and counts them in snapped_prices)") from None
        raise ValueError(f"tick_size={self._grid_tick!r}: a price of this row is off its grid")  # pragma: no cover

    def _check_rows(self, cols: List[np.ndarray], o: Optional[np.ndarray], a: int, b: int,
                    current: Any, positions: np.ndarray) -> None:
        """Raises what appending rows [a, b) would raise, changing nothing (current: the
        session they join, None for a new one)."""
        core = current if current is not None else \
            _core.LiveSession(self._bars, self._distribute, o is not None, **self._core_kw)
        sl = lambda x: None if x is None else x[a:b]  # noqa: E731
        try:
            if self._bars:
                core.check(None, sl(cols[0]), sl(cols[1]), sl(cols[2]), sl(o), sl(cols[3]),
                           fresh=current is None)
            else:
                core.check(sl(cols[0]), None, None, None, None, sl(cols[1]), fresh=current is None)
        except ValueError as e:
            raise _renamed(e, positions[a:b]) from None

    def _append_core(self, core: Any, cols: List[np.ndarray], o: Optional[np.ndarray], a: int,
                     b: int, ws: Optional[np.ndarray] = None, sides: Optional[Tuple[np.ndarray, np.ndarray]] = None
                     ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        side = self._side_kw(sides, a, b)  # type: ignore[attr-defined]
        if self._bars:
            return core.append(None, cols[0][a:b], cols[1][a:b], cols[2][a:b],
                               None if o is None else o[a:b], cols[3][a:b], ws, **side)
        return core.append(cols[0][a:b], None, None, None, None, cols[1][a:b], ws, **side)

    def _append_rows(self, cols: List[np.ndarray], o: Optional[np.ndarray], ts: np.ndarray,
                     a: int, b: int, positions: Optional[np.ndarray] = None,
                     sides: Optional[Tuple[np.ndarray, np.ndarray]] = None) -> None:
        core = self._core
        try:  # the engine checks the rows first and changes nothing when one is bad
            ws = None if self._span is None else appended_starts(self._span, self._ts, ts[a:b],  # time window
                                                                 self._carry_ts)
            poc, vah, val = self._append_core(core, cols, o, a, b, ws, sides)  # with the rows' buy / sell volume
        except ValueError as e:
            w = self._too_wide(e, core, cols, o, a, b)  # the batch's words, its first row past max_rows
            if positions is None:
                if w is e:
                    raise
                raise w from None
            raise _renamed(w, positions[a:b]) from None
        if sides is not None:
            self._side_append(a, b)  # type: ignore[attr-defined]
        self._levels = (float(poc[-1]), float(vah[-1]), float(val[-1]), float(core.total_volume),
                        float(core.va_volume))
        self._ts.extend(ts[a:b].tolist())
        self.n_rows += b - a
        if self._bars:
            self._advance_many(cols[0][a:b], cols[1][a:b], cols[2][a:b], cols[3][a:b], ts[a:b],
                               None if o is None else o[a:b])
