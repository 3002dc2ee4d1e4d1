"""``vpoc.Live``: volume profiles of a live feed, updated bar by bar (or trade by trade).

Contract (docs/live.md): after every row the current session's POC / VAH / VAL equal the batch
``developing=True`` series of the same rows, the ``bar_features_row()`` equals the batch
``bar_features`` row, finished sessions equal ``from_bars`` / ``from_trades`` and
``session_features`` on the same rows; an update (or close()) that raises anything, a bad row or
KeyboardInterrupt / MemoryError alike, changes nothing, and ``state_dict()`` is a deep snapshot.
"""

from __future__ import annotations

import functools
import warnings
import math
import re
import numbers
import threading
from bisect import bisect_left, bisect_right
from types import SimpleNamespace
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _core
from . import _live_state as _state
from . import features as _f
from .sessions import _core as _s
from ._api import from_bars, from_trades
from ._validate import boolean as _bool, integer as _int, real as _real, string as _str
from ._profiles import NO_ROW, Profiles
from ._arrays import GRID_TOLERANCE, MAX_VOLUME, _volume_too_large, check_grid
from ._warnings import DroppedRowsWarning, GuessedDefaultWarning, user_stacklevel
from .sessions import DROP_WARN_SHARE
from .features._grouping import _yyyymmdd_days
from ._time import TIME_UNITS, bar_opens, check_label, check_time_unit, epoch_ns, interval_ns

__all__ = ["BAR_COLUMNS", "Live"]

_NAN = float("nan")
_NS_PER_MINUTE = 60 * 10**9
_NS_PER_DAY = 1440 * _NS_PER_MINUTE
_STATE_VERSION = _state.STATE_VERSION
_INT64_MAX = 2**63 - 1
# Integer timestamps in ns taken without further checks on the one-row path: 1990..2100, the span
# vpoc._time accepts as nanoseconds (others go through its unit check).
_PLAUSIBLE_NS = (631_152_000 * 10**9, 4_102_444_800 * 10**9)
# Finished sessions whose session_features rows may wait for session_table(): computing them is
# the slow part of a session's end (milliseconds), so it stays off the update path, but at most
# this many wait (they keep their sessions' bars alive).
_MAX_PENDING = 256
# Days of session windows computed at once past a timestamp the table does not cover: one
# calendar lookup serves about a month of a live feed.
_WINDOW_DAYS_AHEAD = 31
# Rows per engine call of an array update: each call runs without a Python-level interrupt check,
# so this bounds how long a KeyboardInterrupt waits (about 0.1-0.2 s on a 2-core VM).
_CHUNK = 1 << 17
# Runs of a rollback interrupted by yet another exception before it gives up.
_ROLLBACK_TRIES = 100
_SESSION_KINDS = ("globex", "rth", "daily", "custom")
_PER_SESSION = ("poc", "vah", "val", "poc_row", "vah_row", "val_row", "low_row", "n_rows",
                "total_volume", "va_volume")
_FEATURE_OPTIONS = ("composite_sessions", "naked_max_age", "node_smoothing", "node_order",
                    "hvn_threshold", "lvn_threshold", "tz", "rth_start", "ib_minutes",
                    "lookbacks", "shape_edge", "shape_b_peak", "shape_b_valley", "tpo_minutes")
_FEATURE_DEFAULTS: Dict[str, Any] = dict(
    composite_sessions=5, naked_max_age=None, node_smoothing=3, node_order=3, hvn_threshold=0.5,
    lvn_threshold=0.5, tz="America/Chicago", rth_start="08:30", ib_minutes=60,
    lookbacks=(5, 10, 20, 50), shape_edge=0.3, shape_b_peak=0.6, shape_b_valley=0.5,
    tpo_minutes=30)

#: The columns of ``Live.bar_features_row()``: those of ``vpoc.bar_features`` with timestamps.
BAR_COLUMNS: Tuple[str, ...] = (
    "bar_index", "cum_volume", "cum_volume_vs_prev", "close_change_pct", "close_to_vwap_pct",
    "dev_poc_dist", "dev_vah_dist", "dev_val_dist", "dev_va_position", "dev_high_dist",
    "dev_low_dist", "prev_poc_dist", "prev_vah_dist", "prev_val_dist", "composite_poc_dist",
    "composite_vah_dist", "composite_val_dist", "naked_poc_count", "naked_poc_above_dist",
    "naked_poc_below_dist", "prev_hvn_above_dist", "prev_hvn_below_dist", "prev_lvn_above_dist",
    "prev_lvn_below_dist", "minute_of_day", "minutes_elapsed", "ib_high_dist", "ib_low_dist",
)


def _locked(method: Any) -> Any:
    """Runs a Live method under the instance's lock: threads sharing one Live see its updates and
    reads one at a time (each as a whole), in some serial order."""
    @functools.wraps(method)
    def wrapper(self: "Live", *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)
    return wrapper


def _ratio(a: float, b: float) -> float:
    """features._ratio on scalars: a / b, NaN where b == 0 or the quotient is not finite."""
    if b == 0.0:
        return _NAN
    q = a / b
    return q if math.isfinite(q) else _NAN


def _nearest(levels: List[float], x: float) -> Tuple[float, float]:
    """features._nearest on one query: (min level - x over levels >= x, min x - level over
    levels <= x), NaN where there is none."""
    i = bisect_left(levels, x)
    above = levels[i] - x if i < len(levels) else _NAN
    j = bisect_right(levels, x) - 1
    below = x - levels[j] if j >= 0 else _NAN
    return above, below


def _renamed(e: ValueError, rows: np.ndarray) -> ValueError:
    """The engine's error with its row indices (positions in the rows it was given) replaced by
    their positions in the update."""
    msg = re.sub(r"\b(high|low|close|open|price|volume)\[(\d+)\]",
                 lambda m: f"{m.group(1)}[{int(rows[int(m.group(2))])}]", str(e))
    return ValueError(msg)


# =============================================================================== session clock


class _Clock:
    """Assigns timestamps to sessions: a vpoc.sessions definition (windows computed a month at a
    time, exactly those a batch call would use), explicit session starts, or one session."""

    def __init__(self, session: Any, session_options: Optional[dict], session_starts: Any,
                 time_unit: Optional[str]) -> None:
        opts = dict(session_options or {})
        self.closed = "left"
        self.defn: Optional[Any] = None
        self.starts: Optional[np.ndarray] = None
        if session is not None and session_starts is not None:
            raise ValueError("give either session or session_starts, not both")
        if session is not None:
            if isinstance(session, str):
                if session not in _SESSION_KINDS:
                    raise ValueError(f"session must be one of {_SESSION_KINDS} or None, got {session!r}")
                kind = session
            else:
                raise TypeError("session must be 'globex', 'rth', 'daily' or 'custom' (options in "
                                f"session_options), got {type(session).__name__}")
            self.closed = opts.pop("closed", "left")
            if self.closed not in ("left", "right"):
                raise ValueError(f"session_options['closed'] must be 'left' or 'right', got {self.closed!r}")
            builders = {"globex": (_s._globex, dict(calendar=_s.DEFAULT_CALENDAR, holidays=True,
                                                   trade_dates=_s.DEFAULT_TRADE_DATES)),
                        "rth": (_s._rth, dict(start="08:30", end="15:15", tz="America/Chicago",
                                             calendar=_s.DEFAULT_CALENDAR, holidays=True,
                                             trade_dates=_s.DEFAULT_TRADE_DATES)),
                        "daily": (_s._daily, dict(tz="UTC", weekdays_only=False)),
                        "custom": (_s._custom, dict(weekdays_only=False))}
            build, defaults = builders[kind]
            unknown = set(opts) - set(defaults) - ({"start", "end", "tz"} if kind == "custom" else set())
            if unknown:
                raise ValueError(f"session_options has unknown key(s) {sorted(unknown)} for {kind!r}")
            args = {**defaults, **opts}
            if kind == "custom" and not {"start", "end", "tz"} <= set(args):
                raise ValueError("session='custom' needs session_options start, end and tz")
            self.defn = build(**args)
        elif session_starts is not None:
            starts = _f._timestamps_ns(session_starts, len(session_starts), time_unit)
            if starts.shape[0] == 0 or np.any(np.diff(starts) <= 0):
                raise ValueError("session_starts must be non-empty and strictly increasing")
            self.starts = starts
        self.table_lo = self.table_hi = 0  # UTC ns range the window table covers
        self.opens: List[int] = []
        self.closes: List[int] = []
        self.labels: List[int] = []
        self.cur: Optional[Tuple[int, int, int]] = None  # (open, close, label) of the last window hit

    def _cover(self, t: int) -> None:
        """Computes the windows for the local dates around t (a month ahead)."""
        zone = _f._tzinfo(self.defn.zone) if isinstance(self.defn.zone, str) else self.defn.zone
        sec = t // 10**9
        day = (sec + _f._zone_offset_s(sec, zone)) // 86400
        d0, d1 = day - 1, day + _WINDOW_DAYS_AHEAD
        opens, closes, labels = self.defn.windows(d0, d1)
        order = np.argsort(opens, kind="stable")
        opens, closes, labels = opens[order], closes[order], labels[order]
        if np.any(closes[:-1] > opens[1:]) or np.any(np.diff(labels) < 0):
            raise ValueError(f"{self.defn.definition}: the calendar's windows overlap or are out of order")
        bounds = _s._localize_wall(np.array([d0, d1 + 1], dtype=np.int64) * _NS_PER_DAY, zone)
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

    def at_close(self, ts: np.ndarray) -> int:
        """How many of the sorted timestamps ``ts`` (rows in no session) sit exactly on a session
        window's close: bar closes read as bar opens (label='close' puts them back)."""
        if self.defn is None or self.closed != "left" or ts.shape[0] == 0:
            return 0
        n, i0 = 0, 0
        while i0 < ts.shape[0]:
            t0 = int(ts[i0])
            if not self.table_lo <= t0 < self.table_hi:
                self._cover(t0)
            i1 = int(np.searchsorted(ts, self.table_hi, side="left"))
            n += int(np.isin(ts[i0:i1], np.asarray(self.closes, np.int64)).sum())
            i0 = i1
        return n

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


# =============================================================================== live profile


class Live:
    """Volume profile of a live feed: ``update()`` with new bars (or trades) as they arrive,
    read the current session's POC / value area at once.

    Parameters
    ----------
    tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie, max_rows :
        the rules of ``vpoc.from_bars`` / ``vpoc.from_trades`` (``distribute`` bars only).
    kind : "bars" (default: ``update(high, low, close, volume, open=..., timestamp=...)``) or
        "trades" (``update(price, volume, timestamp=...)``).
    session : None (one session, or ``session_starts``), "globex", "rth", "daily" or "custom":
        the definitions of ``vpoc.sessions``, with ``session_options`` their keyword arguments
        (``calendar``, ``holidays``, ``trade_dates``, ``start``, ``end``, ``tz``,
        ``weekdays_only``, ``closed``). Rows in no session are dropped and counted
        (``n_dropped``). A session ends when a row of a later session arrives (or ``close()``).
    time_unit : unit of integer timestamps ("s", "ms", "us", "ns"; None: ns, with the unit check
        of ``vpoc.sessions`` / ``bar_features``).
    label, interval : "open" (default: timestamps are bar opens) or "close" (bar closes: each
        becomes ``timestamp - interval``, ``vpoc._time.bar_opens``); label="close" needs
        ``interval=`` (seconds, a timedelta or "1min"), which a live feed cannot infer.
    session_starts : sorted timestamps; session k is ``[starts[k], starts[k+1])`` (label k).
        Neither ``session`` nor ``session_starts``: one session, with a GuessedDefaultWarning
        (once) when its rows span more than a day.
    snap : False (default): an update with a price off the ``tick_size`` grid raises (one row:
        any off-grid price; arrays: ``vpoc._arrays.check_grid``'s rule) before anything changes;
        True rounds them and counts them in ``snapped_prices``.
    on_outside : "warn" (default: a DroppedRowsWarning when rows in no session pass
        ``vpoc.sessions.DROP_WARN_SHARE`` of the rows seen, or sit on session closes; at most
        once per update call), "drop" (counted in ``n_dropped`` only) or "raise".
    features : options of ``bar_features`` / ``session_features`` (``composite_sessions``,
        ``naked_max_age``, ``node_*``, ``*_threshold``, ``tz``, ``rth_start``, ``ib_minutes``,
        ``lookbacks``, ``shape_*``, ``tpo_minutes``); bars only.
    session_features : also compute the ``session_features`` row of every finished session
        (default True for bars).

    After each ``update``: ``poc``, ``vah``, ``val`` (row prices, NaN before the first row),
    ``total_volume``, ``va_volume``, ``histogram()`` (zero-copy view), ``bar_features_row()``.
    Finished sessions: ``profiles`` (a ``Profiles``), ``session_table()`` (a FeatureTable).
    ``len(live)``: finished sessions; ``n_dropped``: rows outside every session; ``close()``
    ends the current session at once (later rows start a new one).
    State: ``state_dict()`` / ``Live.from_state()`` (validated field by field; store it as .npz
    or JSON), or ``pickle`` (only from a trusted source: unpickling runs code). See docs/live.md.
    """

    def __init__(self, *, tick_size: float, kind: str = "bars", ticks_per_row: int = 1,
                 distribute: str = "uniform", value_area: float = 0.70, va_method: str = "cbot",
                 poc_tie: str = "center", max_rows: int = 1_000_000, session: Any = None,
                 session_options: Optional[dict] = None, session_starts: Any = None,
                 features: Optional[dict] = None, session_features: Optional[bool] = None,
                 time_unit: Optional[str] = None, label: str = "open", interval: Any = None,
                 snap: bool = False, on_outside: str = "warn") -> None:
        self._lock = threading.RLock()  # see _locked
        self._snap = _bool(snap, "snap")
        if on_outside not in ("warn", "drop", "raise"):
            raise ValueError(f"on_outside must be 'warn' (default), 'drop' (counted in n_dropped, no "
                             f"warning) or 'raise', got {on_outside!r}")
        self._on_outside = on_outside
        kind = _str(kind, "kind")
        if kind not in ("bars", "trades"):
            raise ValueError(f"kind must be 'bars' or 'trades', got {kind!r}")
        self._stamp = check_label(label)
        self._interval_ns = interval_ns(interval)
        if self._stamp == "close":
            if kind != "bars":
                raise ValueError("label='close' is for bars (a trade's timestamp is its time); "
                                 "use label='open' with kind='trades'")
            if self._interval_ns is None:
                raise ValueError("label='close' needs interval= (the bar length, e.g. interval='1min' "
                                 "or 60): a live feed's bar interval cannot be inferred from the "
                                 "bars, which arrive one at a time")
        self._config = dict(tick_size=tick_size, kind=kind, ticks_per_row=ticks_per_row,
                            distribute=distribute, value_area=value_area, va_method=va_method,
                            poc_tie=poc_tie, max_rows=max_rows, session=session,
                            session_options=None if session_options is None else dict(session_options),
                            session_starts=None if session_starts is None else np.asarray(session_starts),
                            features=None if features is None else dict(features),
                            session_features=session_features, time_unit=time_unit, label=label,
                            interval=interval, snap=self._snap, on_outside=on_outside)
        self._bars = kind == "bars"
        self._time_unit = check_time_unit(time_unit)
        self._ts_scale = TIME_UNITS[self._time_unit or "ns"]
        self._rules_kw = dict(tick_size=_real(tick_size, "tick_size"),
                              ticks_per_row=_int(ticks_per_row, "ticks_per_row", 1),
                              value_area=_real(value_area, "value_area"),
                              va_method=_str(va_method, "va_method"), poc_tie=_str(poc_tie, "poc_tie"),
                              max_rows=_int(max_rows, "max_rows", 1))
        self._distribute = _str(distribute, "distribute")
        # the engine validates the rules once, here
        probe = _core.LiveSession(self._bars, self._distribute, False, **self._rules_kw)
        del probe
        fopts = dict(features or {})
        unknown = set(fopts) - set(_FEATURE_OPTIONS)
        if unknown:
            raise ValueError(f"features has unknown option(s) {sorted(unknown)}; known: {_FEATURE_OPTIONS}")
        fo = {**_FEATURE_DEFAULTS, **fopts}
        self._rules = _f._rules(self._rules_kw["tick_size"], self._rules_kw["ticks_per_row"],
                                self._distribute, self._rules_kw["value_area"],
                                self._rules_kw["va_method"], self._rules_kw["poc_tie"],
                                fo["lookbacks"], fo["composite_sessions"], fo["naked_max_age"],
                                fo["node_smoothing"], fo["node_order"], fo["hvn_threshold"],
                                fo["lvn_threshold"], fo["shape_edge"], fo["shape_b_peak"],
                                fo["shape_b_valley"], fo["tz"], fo["rth_start"], fo["ib_minutes"],
                                fo["tpo_minutes"])
        self._with_session_rows = self._bars if session_features is None else \
            (_bool(session_features, "session_features") and self._bars)
        self._clock = _Clock(session, session_options, session_starts, self._time_unit)
        self._tick = self._rules.tick_size
        self._grid_tick = float(self._rules_kw["tick_size"])
        # rows in no session that warn: not the overnight rows of a definition that leaves them
        # out on purpose (rth, custom windows)
        self._drops_warn = self._clock.defn is None or not self._clock.defn.gap_by_definition
        # session=None and no session_starts: one session for everything, a guessed default that
        # is reported once when the rows span more than a day (see _check_one_session)
        self._one_session = session is None and session_starts is None
        self._one_session_warned = False
        self._tz = self._rules.tz
        self._ib_ns = self._rules.ib_minutes * _NS_PER_MINUTE
        self._rth_ns = self._rules.rth_start_ns
        self._offsets_cache: Dict[int, Tuple[int, int, int]] = {}
        self._days_cache: Dict[int, int] = {}
        self._tail_n = max([p + 1 for p in self._rules.lookbacks] + [2])
        self._reset_history()

    # ------------------------------------------------------------------ state

    def _reset_history(self) -> None:
        self._core: Optional[Any] = None  # the C++ LiveSession (made at the first row: open or not)
        self._has_open: Optional[bool] = None
        self.n_dropped: int = 0
        self.snapped_prices: int = 0  # prices rounded to the tick grid (snap=True; array updates)
        # rows seen, dropped, dropped on a session's close, sessions finished since the last
        # dropped-rows report (a DroppedRowsWarning at most once per update call / finished session)
        self._drop_win: Tuple[int, int, int, int] = (0, 0, 0, 0)
        self.n_rows: int = 0  # rows kept (in a session) so far
        self._last_ts: Optional[int] = None
        self._label: Optional[int] = None
        self._int_volume = True
        self._ts: List[int] = []  # timestamps of the current session's rows
        self._levels: Tuple[float, float, float, float, float] = (_NAN, _NAN, _NAN, 0.0, 0.0)
        # finished sessions
        self._done: List[Dict[str, np.ndarray]] = []  # per-session profile arrays
        self._done_labels: List[int] = []
        self._profiles_cache: Optional[Profiles] = None
        self._comp: List[Tuple[float, float, float]] = []  # composite ending at each finished session
        self._naked: List[Tuple[int, int, float]] = []  # untouched POCs: (session k, row, price)
        self._tail: List[Dict[str, np.ndarray]] = []  # bars of the last finished sessions
        # per finished session its session_features row, or the record it is computed from
        # (a tuple) until _flush replaces it in place; rows before _pending_from are all computed
        self._session_rows: List[Any] = []
        self._pending_from = 0
        self._session_columns: Optional[Tuple[str, ...]] = None
        self._ctx = self._next_context()
        self._run = None

    # ------------------------------------------------------------------ reading

    @property
    def poc(self) -> float:
        """POC of the current session (row price; NaN before its first row)."""
        return self._levels[0]

    @property
    def vah(self) -> float:
        """Value-area high of the current session (row price)."""
        return self._levels[1]

    @property
    def val(self) -> float:
        """Value-area low of the current session (row price)."""
        return self._levels[2]

    @property
    def total_volume(self) -> float:
        """Volume of the current session so far."""
        return self._levels[3]

    @property
    def va_volume(self) -> float:
        """Volume inside the current value area."""
        return self._levels[4]

    @property
    def levels(self) -> Tuple[float, float, float, float, float]:
        """(poc, vah, val, total_volume, va_volume) of the current session."""
        return self._levels

    @property
    def session_label(self) -> Optional[int]:
        """Label of the current session (YYYYMMDD with a session definition, k with
        session_starts, 0 without either); None before the first row."""
        return self._label

    @property
    def session_rows(self) -> int:
        """Rows of the current session."""
        return 0 if self._core is None else int(self._core.size)

    @property
    def low_row(self) -> int:
        """Lowest ladder row of the current session (NO_ROW while empty)."""
        return NO_ROW if self._core is None else int(self._core.low_row)

    @property
    @_locked
    def row_prices(self) -> np.ndarray:
        """Prices of the rows of ``histogram()``."""
        n = 0 if self._core is None else int(self._core.n_rows)
        return (self.low_row + np.arange(n, dtype=np.int64)).astype(np.float64) * self._rules.row_size

    @_locked
    def histogram(self) -> np.ndarray:
        """The current session's row volumes from ``low_row`` up: a read-only view of the live
        buffer (no copy). It follows later updates in place until the session's row range
        grows or the session ends; take it again after an update."""
        if self._core is None:
            return np.zeros(0)
        return self._core.histogram()

    def __len__(self) -> int:
        return len(self._done)

    def __repr__(self) -> str:
        return (f"Live(kind={self._config['kind']!r}, finished={len(self._done)}, "
                f"session={self._label}, rows={self.session_rows}, poc={self.poc})")

    # ------------------------------------------------------------------ updating

    @_locked
    def update(self, *args: Any, open: Any = None, timestamp: Any = None, **kwargs: Any
               ) -> Tuple[float, float, float, float, float]:
        """Appends rows (one or many, in time order): bars ``update(high, low, close, volume,
        open=None, timestamp=...)`` or trades ``update(price, volume, timestamp=...)``; scalars
        or 1-D arrays. ``timestamp``: int ns since the epoch (UTC), datetime64 or pandas
        timestamps (bar opens, or bar closes with ``label="close"``). Returns ``levels`` after
        the last row. All or nothing: when it raises anything (a bad row, KeyboardInterrupt,
        MemoryError, ...) the Live is as it was before the call, and the same update may be
        retried."""
        names = ("high", "low", "close", "volume") if self._bars else ("price", "volume")
        if kwargs:
            unknown = set(kwargs) - set(names)
            if unknown:
                raise TypeError(f"update() got unexpected argument(s) {sorted(unknown)}")
            args = args + tuple(kwargs[n] for n in names[len(args):] if n in kwargs)
        if len(args) != len(names):
            raise TypeError(f"update() takes {', '.join(names)} (got {len(args)} values)")
        if timestamp is None:
            raise TypeError("update() needs timestamp=")
        if not self._bars and open is not None:
            raise TypeError("open is for bars; this Live profile takes trades")
        first = args[0]
        if isinstance(first, (float, int, np.floating, np.integer)) and not isinstance(first, bool):
            return self._update_one(args, open, timestamp)  # takes its own snapshot
        snap = self._snapshot()
        try:
            return self._update_many(args, open, timestamp)
        except BaseException:
            # nested: a second interrupt taken as the rollback is called (before its own retry
            # loop is set up) is caught here and the rollback runs again
            try:
                self._rollback(snap)
            except BaseException:
                try:
                    self._rollback(snap)
                except BaseException:
                    self._rollback(snap)
            raise

    # ------------------------------------------------------------------ all or nothing

    def _snapshot(self) -> Tuple[Any, ...]:
        """What an update, close() or flush may change: scalars and replaced objects by
        reference, append-only lists by length, the running bar state by copy. The C++ session
        only grows during an update (a session's end replaces it), so its row count is enough."""
        run = self._run
        return (self._core, len(self._ts), self._ts, self._has_open, self.n_dropped, self.n_rows,
                self._last_ts, self._label, self._int_volume, self._levels, len(self._done),
                self._profiles_cache, len(self._comp), self._naked, self._tail,
                len(self._session_rows), self._ctx,
                None if run is None else run[:], self._clock.cur, self.snapped_prices,
                self._drop_win)

    def _rollback(self, snap: Tuple[Any, ...]) -> None:
        """Puts back the state of ``snap``. Idempotent: when it is itself interrupted (a second
        KeyboardInterrupt) it runs again, so the Live is never left between the two states."""
        for attempt in range(_ROLLBACK_TRIES):
            try:
                self._put_back(snap)
                return
            except BaseException:
                if attempt == _ROLLBACK_TRIES - 1:
                    raise

    def _put_back(self, snap: Tuple[Any, ...]) -> None:
        if len(snap) == 9:  # a row appended to the current session (_update_one)
            core, n_ts, last_ts, n_rows, n_dropped, int_volume, levels, run, snapped = snap
            if core.size != n_ts:
                core = self._rebuilt(core, n_ts)
            del self._ts[n_ts:]
            vars(self).update(_core=core, _last_ts=last_ts, n_rows=n_rows, n_dropped=n_dropped,
                              _int_volume=int_volume, _levels=levels,
                              _run=None if run is None else list(run), snapped_prices=snapped)
            return
        (core, n_ts, ts, has_open, n_dropped, n_rows, last_ts, label, int_volume, levels, n_done,
         prof_cache, n_comp, naked, tail, n_srows, ctx, run, cur, snapped, drop_win) = snap
        if core is not None and core.size != n_ts:  # rows were appended: the same rows again
            core = self._rebuilt(core, n_ts)
        del ts[n_ts:]
        del self._done[n_done:]
        del self._done_labels[n_done:]
        del self._comp[n_comp:]
        # session rows computed meanwhile (in place) stay computed: only the added ones go
        del self._session_rows[n_srows:]
        vars(self).update(
            _core=core, _ts=ts, _has_open=has_open, n_dropped=n_dropped, n_rows=n_rows,
            _last_ts=last_ts, _label=label, _int_volume=int_volume, _levels=levels,
            _profiles_cache=prof_cache, _naked=naked, _tail=tail,
            _pending_from=min(self._pending_from, n_srows), _ctx=ctx,
            _run=None if run is None else list(run), snapped_prices=snapped, _drop_win=drop_win)
        self._clock.cur = cur

    def _rebuilt(self, core: Any, n: int) -> Any:
        """A C++ session holding the first n rows of ``core`` (its rows before an interrupted
        append), run through the same code: the developing state does not depend on chunking."""
        fresh = _core.LiveSession(self._bars, self._distribute, bool(core.has_open), **self._rules_kw)
        if n:
            c = [core.column(k)[:n] for k in range(5)]
            if self._bars:
                fresh.append(None, c[0], c[1], c[2], c[3] if core.has_open else None, c[4])
            else:
                fresh.append(c[0], None, None, None, None, c[4])
        return fresh

    # ------------------------------------------------------------------ one row

    def _ts_one(self, t: Any) -> int:
        if type(t) is int or isinstance(t, np.integer):
            t = int(t)
            if self._ts_scale == 1 and _PLAUSIBLE_NS[0] <= t <= _PLAUSIBLE_NS[1]:
                return t if self._stamp == "open" else self._opens(np.array([t], dtype=np.int64))
            t = int(epoch_ns(np.array([t], dtype=np.int64), "timestamp", self._time_unit)[0])
        else:
            if hasattr(t, "value") and hasattr(t, "tz_localize"):  # a pandas Timestamp: ns
                t = np.datetime64(int(t.value), "ns")
            t = int(_f._timestamps_ns(np.asarray([t]), 1, self._time_unit)[0])
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
                raise _volume_too_large("volume", 0, int(x))
            return float(x)
        if not isinstance(x, numbers.Real):
            raise TypeError(f"{name} must be a number, got {type(x).__name__}")
        return float(x)

    def _update_one(self, args: Sequence[Any], open: Any, timestamp: Any
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
            if type(high) is not float:
                high = self._scalar(high, "price")
        int_vol = type(volume) is int or isinstance(volume, np.integer)
        if type(volume) is not float:
            volume = self._scalar(volume, "volume")
        t = self._ts_one(timestamp)
        if self._last_ts is not None and t < self._last_ts:
            raise ValueError(f"timestamp {t} is before the previous row's ({self._last_ts}); "
                             "rows must arrive in time order")
        label = self._clock.label(t)
        if label is None:
            on_close = self._clock.at_close(np.array([t], dtype=np.int64))
            if self._on_outside == "raise" and self._drops_warn:
                raise ValueError(self._outside_message(t, on_close))
            w = self._drop_win
            vars(self).update(_last_ts=t, n_dropped=self.n_dropped + 1,  # one step
                              _drop_win=(w[0], w[1], w[2] + on_close, w[3]))
            return self._levels
        if self._label is not None and label < self._label:
            raise ValueError(f"timestamp {t} belongs to session {label}, older than the current "
                             f"session {self._label}")
        has_open = open is not None
        snapped = 0
        if self._bars:
            for x in (high, low, close, open):
                if x is not None and not self._on_grid(x):
                    snapped += 1
        elif not self._on_grid(high):
            snapped = 1
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
        try:
            finished = False
            if label != self._label:  # the old session ends, the new one begins
                if self._label is not None:
                    self._finish()
                    finished = True
                if self._core is None:
                    self._start_core(has_open)
                self._begin(label)
                core = self._core
            if self._bars:
                lv = core.append_bar(high, low, close, open, volume)
            else:
                lv = core.append_trade(high, volume)
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
            return lv
        except BaseException:  # see update()
            try:
                self._rollback(snap)
            except BaseException:
                try:
                    self._rollback(snap)
                except BaseException:
                    self._rollback(snap)
            raise

    def _start_core(self, has_open: bool) -> None:
        self._has_open = has_open if self._bars else False
        self._core = _core.LiveSession(self._bars, self._distribute, self._has_open, **self._rules_kw)

    # ------------------------------------------------------------------ many rows

    def _update_many(self, args: Sequence[Any], open: Any, timestamp: Any
                     ) -> Tuple[float, float, float, float, float]:
        from ._arrays import as_prices, as_volume

        names = ("high", "low", "close", "volume") if self._bars else ("price", "volume")
        vol_in = args[-1]
        int_volume = np.asarray(vol_in).dtype.kind in "iu" if not hasattr(vol_in, "__cuda_array_interface__") else False
        cols = [np.ascontiguousarray(as_prices(a, n) if n != "volume" else as_volume(a, n),
                                     dtype=np.float64) for a, n in zip(args, names)]
        n = cols[0].shape[0]
        for c, nm in zip(cols, names):
            if c.shape != (n,):
                raise ValueError(f"{nm} has {c.shape[0]} rows but {names[0]} has {n}")
        o = None
        if open is not None:
            if not self._bars:
                raise TypeError("open is for bars")
            o = np.ascontiguousarray(as_prices(open, "open"), dtype=np.float64)
            if o.shape != (n,):
                raise ValueError(f"open has {o.shape[0]} rows but high has {n}")
        ts = _f._timestamps_ns(timestamp, n, self._time_unit)
        if n == 0:
            return self._levels
        if self._stamp == "close":
            ts = bar_opens(ts, "close", np.timedelta64(self._interval_ns, "ns"))[0]
        if n > 1 and np.any(ts[1:] < ts[:-1]):
            i = int(np.flatnonzero(ts[1:] < ts[:-1])[0]) + 1
            raise ValueError(f"timestamp[{i}] is before timestamp[{i - 1}]; rows must arrive in time order")
        if self._last_ts is not None and ts[0] < self._last_ts:
            raise ValueError(f"timestamp[0] = {int(ts[0])} is before the previous row's "
                             f"({self._last_ts}); rows must arrive in time order")
        labels = self._clock.labels_of(ts)
        kept = labels >= 0
        if self._label is not None and kept.any() and labels[kept][0] < self._label:
            raise ValueError(f"timestamp[{int(np.argmax(kept))}] belongs to session "
                             f"{int(labels[kept][0])}, older than the current session {self._label}")
        if self._core is not None and (o is not None) != self._has_open and kept.any():
            raise ValueError("open must be given with every bar or with none")
        idx = np.flatnonzero(kept)
        lab = labels[idx]
        starts = np.flatnonzero(np.r_[True, lab[1:] != lab[:-1]]) if idx.size else np.zeros(0, np.int64)
        bounds = np.r_[starts, idx.size].astype(np.int64)
        take = (lambda a: a[idx]) if idx.size < n else (lambda a: a)
        cols = [take(c) for c in cols]
        o = None if o is None else take(o)
        ts_k = take(ts)
        n_out = int(n - idx.size)
        on_close = 0
        if n_out and self._drops_warn and self._on_outside != "drop":
            out_ts = ts[~kept]
            on_close = self._clock.at_close(out_ts)
            if self._on_outside == "raise":
                i = int(np.argmin(kept))
                raise ValueError(f"timestamp[{i}]: " + self._outside_message(
                    int(ts[i]), int(self._clock.at_close(ts[i:i + 1])), n_out, n))
        snapped = 0
        if idx.size:  # the price grid (vpoc._arrays.check_grid's rule), before anything changes
            prices = {nm: c for nm, c in zip(names[:-1], cols)}
            if o is not None:
                prices["open"] = o
            snapped = int(check_grid(prices, self._grid_tick, snap=self._snap, stacklevel=4) or 0)
        # Every change below is undone (update()'s rollback) if anything raises, a bad row of a
        # later chunk included: the engine checks each chunk before appending it. Chunks keep
        # each engine call short, so a KeyboardInterrupt is taken within a fraction of a second.
        self.n_dropped += n_out
        w = self._drop_win
        self._drop_win = (w[0], w[1], w[2] + on_close, w[3])
        self._last_ts = int(ts[-1])
        n_done = len(self._done)
        for g in range(len(starts)):
            a, b = int(bounds[g]), int(bounds[g + 1])
            label = int(lab[a])
            if label != self._label:
                if self._label is not None:
                    self._finish()
                if self._core is None:
                    self._start_core(o is not None)
                self._begin(label)
            for c0 in range(a, b, _CHUNK):
                self._append_rows(cols, o, ts_k, c0, min(c0 + _CHUNK, b), idx)
            self._int_volume = self._int_volume and int_volume
        self.snapped_prices += snapped
        if len(self._done) > n_done:
            self._report_drops()
        if self._one_session and not self._one_session_warned and self._ts \
                and self._ts[-1] - self._ts[0] > _NS_PER_DAY:
            self._check_one_session(self._ts[-1])
        return self._levels

    def _check_one_session(self, t: int) -> None:
        """The GuessedDefaultWarning of session=None, once per Live: its rows span more than a
        day, all in one session (the batch functions default to session='globex' instead)."""
        days = (t - self._ts[0]) / _NS_PER_DAY
        warnings.warn(
            f"vpoc.Live(session=None) puts every row in one session, and this feed's rows span "
            f"{days:.1f} days: pass session='globex' (CME trade dates, what session_features / "
            "bar_features default to), 'rth', 'daily' or 'custom' (session_options=), or "
            "session_starts=; to keep one session on purpose pass session_starts=[first timestamp]",
            GuessedDefaultWarning, stacklevel=user_stacklevel())
        self._one_session_warned = True

    # ------------------------------------------------------------------ checks

    def _on_grid(self, x: float) -> bool:
        """check_grid's test on one price: within GRID_TOLERANCE ticks (plus float64 rounding) of
        the tick grid; a non-finite price is left to the engine's error."""
        q = x / self._grid_tick
        if not math.isfinite(q):
            return True
        return abs(q - round(q)) <= abs(q) * 2.0**-52 + GRID_TOLERANCE

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

    def _outside_message(self, t: int, on_close: int, k: int = 1, n: int = 1) -> str:
        iso = np.datetime64(int(t), "ns").astype("datetime64[s]")
        what = (self._clock.defn.definition if self._clock.defn is not None
                else "session_starts (before the first start)")
        return (f"{iso} UTC is outside every session of {what} ({k} of {n} rows of this update are); "
                f"{self._drop_cause(on_close > 0)}; pass on_outside='warn' or 'drop' to leave such "
                "rows out")

    def _drop_cause(self, closes: bool) -> str:
        if closes:
            return ("the rows sit exactly on a session's close: the timestamps look like bar closes: "
                    "pass label='close' and interval=")
        if self._clock.defn is None:
            return "rows before session_starts[0]"
        return ("the time zone of the timestamps is likely wrong, or stray prints (vpoc.io.inspect(path) "
                "/ `vpoc inspect FILE` finds the zone and the bar label)")

    def _report_drops(self) -> None:
        """A DroppedRowsWarning for the rows dropped since the last report, when they pass
        vpoc.sessions.DROP_WARN_SHARE of the rows seen since then or look like bar closes (the
        batch's rule); called when sessions finish, so at most once per update call (or close())."""
        base_total, base_dropped, at_close, base_done = self._drop_win
        seen = self.n_rows + self.n_dropped - base_total
        dropped = self.n_dropped - base_dropped
        finished = len(self._done) - base_done
        self._drop_win = (self.n_rows + self.n_dropped, self.n_dropped, 0, len(self._done))
        if not dropped or not self._drops_warn or self._on_outside != "warn" or seen <= 0:
            return
        share = dropped / seen
        # close stamps read as opens: about one row per session on its close, few others (the
        # batch's rule, vpoc.sessions._dropped; a stray weekend print may come with them)
        slack = max(2, finished // 10)
        closes = 1 <= at_close <= finished + slack and dropped - at_close <= slack
        if share <= DROP_WARN_SHARE and not closes:
            return
        pct = f"{share:.1%}" if share >= 0.01 else f"{share:.2%}"
        warnings.warn(
            f"vpoc.Live: {dropped:,} of {seen:,} rows ({pct}) since the last report ({finished} "
            f"session(s) finished) are outside every session and left out: {self._drop_cause(closes)}. "
            f"Counts: Live.n_dropped ({self.n_dropped:,} in all); on_outside='drop' silences this, "
            "on_outside='raise' makes it an error", DroppedRowsWarning, stacklevel=user_stacklevel())

    def _check_rows(self, cols: List[np.ndarray], o: Optional[np.ndarray], a: int, b: int,
                    current: Any, positions: np.ndarray) -> None:
        """Raises what appending rows [a, b) would raise, changing nothing (current: the
        session they join, None for a new one)."""
        core = current if current is not None else \
            _core.LiveSession(self._bars, self._distribute, o is not None, **self._rules_kw)
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
                     b: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._bars:
            return core.append(None, cols[0][a:b], cols[1][a:b], cols[2][a:b],
                               None if o is None else o[a:b], cols[3][a:b])
        return core.append(cols[0][a:b], None, None, None, None, cols[1][a:b])

    def _append_rows(self, cols: List[np.ndarray], o: Optional[np.ndarray], ts: np.ndarray,
                     a: int, b: int, positions: Optional[np.ndarray] = None) -> None:
        core = self._core
        try:  # the engine checks the rows first and changes nothing when one is bad
            poc, vah, val = self._append_core(core, cols, o, a, b)
        except ValueError as e:
            if positions is None:
                raise
            raise _renamed(e, positions[a:b]) from None
        self._levels = (float(poc[-1]), float(vah[-1]), float(val[-1]), float(core.total_volume),
                        float(core.va_volume))
        self._ts.extend(ts[a:b].tolist())
        self.n_rows += b - a
        if self._bars:
            self._advance_many(cols[0][a:b], cols[1][a:b], cols[2][a:b], cols[3][a:b], ts[a:b],
                               None if o is None else o[a:b])

    # ------------------------------------------------------------------ sessions

    def _begin(self, label: int) -> None:
        self._label = label
        self._int_volume = True  # every volume of the session came as an integer so far
        self._levels = (_NAN, _NAN, _NAN, 0.0, 0.0)
        self._run = None  # the running bar state starts with the session's first bar

    @_locked
    def close(self) -> None:
        """Ends the current session now (it joins ``profiles``); the next row starts a new one.
        All or nothing, like ``update``."""
        if self._label is not None and self._core is not None and self._core.size:
            snap = self._snapshot()
            try:
                self._finish()
                self._label = None
                self._clock.cur = None
                self._levels = (_NAN, _NAN, _NAN, 0.0, 0.0)
                self._report_drops()
            except BaseException:  # see update()
                try:
                    self._rollback(snap)
                except BaseException:
                    try:
                        self._rollback(snap)
                    except BaseException:
                        self._rollback(snap)
                raise

    def _session_profile(self, h: np.ndarray, lo: Any, c: Any, o: Any, v: np.ndarray,
                         as_int: bool) -> Dict[str, np.ndarray]:
        """One finished session's profile arrays: from_bars / from_trades on its rows (integer
        volumes binned as integers, as the batch engine bins them). The rows were accepted by the
        engine, which rounds prices to the tick: snap=True does the same here."""
        kw = dict(tick_size=self._rules_kw["tick_size"], ticks_per_row=self._rules_kw["ticks_per_row"],
                  value_area=self._rules_kw["value_area"], va_method=self._rules_kw["va_method"],
                  poc_tie=self._rules_kw["poc_tie"], max_rows=self._rules_kw["max_rows"], snap=True)
        vol = v.astype(np.int64) if as_int else v
        if self._bars:
            prof = from_bars(h, lo, c, vol, open=o, distribute=self._distribute, **kw)
        else:
            prof = from_trades(h, vol, **kw)
        return {name: np.array(getattr(prof, name)) for name in _PER_SESSION + ("volume",)}

    def _finish(self) -> None:
        """The current session is complete: its profile (from_bars / from_trades on its rows),
        the state the next session's features read, its session_features row. The C++ session
        is replaced by an empty one (not cleared), so that a rollback finds it as it was."""
        core = self._core
        # ones whose float64 value reaches 2**63 (int64 near its maximum) stay float64, which is
        # how the engine bins such large int64 volumes anyway
        if self._bars:
            h, lo, c, o, v = (core.column(k) for k in range(5))
            o = o if self._has_open else None
        else:
            h, v = core.column(0), core.column(4)
            lo = c = o = None
        as_int = self._int_volume and (v.size == 0 or float(np.max(v)) < 2.0**63)
        one = self._session_profile(h, lo, c, o, v, as_int)
        self._done.append(one)
        self._done_labels.append(int(self._label))  # type: ignore[arg-type]
        self._profiles_cache = None
        if self._bars:
            ts = np.asarray(self._ts, dtype=np.int64)
            self._close_features(dict(high=h, low=lo, close=c, open=o, volume=v, ts=ts))
        self._core = _core.LiveSession(self._bars, self._distribute, bool(self._has_open),
                                       **self._rules_kw)
        self._ts = []

    # ------------------------------------------------------------------ features

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
            ctx = SimpleNamespace(rules=rules, prof=self._window_profiles(N), ne=np.arange(N),
                                  threads=None)
            comp = _f._composites(ctx)  # type: ignore[arg-type]
            self._comp.append((float(comp[0][-1]), float(comp[1][-1]), float(comp[2][-1])))
        else:
            self._comp.append((_NAN, _NAN, _NAN))
        # naked POCs at the end of this session
        s_low, s_high = float(np.min(bars["low"])), float(np.max(bars["high"]))
        lo_r, hi_r = (int(x) for x in _f._price_rows(np.array([s_low, s_high]), rules))
        self._naked = [(j, r, p) for (j, r, p) in self._naked if not lo_r <= r <= hi_r]
        self._naked.append((e, int(one["poc_row"][0]), float(one["poc"][0])))
        # bars kept for the session_features lookbacks
        # (the tail is replaced, never changed in place: a rollback puts the old one back)
        self._tail = (self._tail + [bars])[-self._tail_n:]
        if self._with_session_rows:  # computed later, off the update path (session_table())
            m = len(self._tail)
            levels = self._naked_levels(e)
            naked = (float(len(levels)),) + _nearest(levels, float(bars["close"][-1]))
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
        counts = [t["close"].shape[0] for t in tail]
        offs = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(counts, out=offs[1:])
        cat = lambda k: np.concatenate([t[k] for t in tail])  # noqa: E731
        labels = np.asarray(self._done_labels[e - m + 1:e + 1], dtype=np.int64)
        data = _f._Data(high=cat("high"), low=cat("low"), close=cat("close"), volume=cat("volume"),
                        open=None if tail[-1]["open"] is None else cat("open"), ts=cat("ts"),
                        offsets=offs, labels=labels, engine_inputs=(),
                        trade_days=(_yyyymmdd_days(labels, "session labels")
                                    if self._clock.defn is not None else None))
        prof = Profiles(_Concat(self._done[e - m + 1:e + 1], self._rules_kw["tick_size"],
                                self._rules_kw["ticks_per_row"]))
        ctx = _f._context(data, self._rules, prof, None)
        nodes = _f._nodes(ctx)
        clock = _f._clock(data.ts, self._rules)
        comp = tuple(np.array([c[i] for c in comp_tail]) for i in range(3))
        naked = {k: np.full(m, np.nan) for k in ("count", "above", "below")}
        naked["count"][-1], naked["above"][-1], naked["below"][-1] = naked_last
        cols = _f._session_columns(ctx, nodes, comp, naked, clock)  # type: ignore[arg-type]
        values, names = cols.matrix()
        return values[-1].copy(), tuple(names)

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
            ctx.prev_total = float(_f._segment_reduce(np.add, vol, np.array([0, vol.shape[0]]), np.nan)[0])
        ctx.prev = (float(one["poc"][0]), float(one["vah"][0]), float(one["val"][0]))
        ctx.comp = self._comp[-1] if self._comp else (_NAN, _NAN, _NAN)
        ctx.naked = self._naked_levels(e)
        nodes = _f._nodes(SimpleNamespace(rules=rules, prof=self._window_profiles(1)))  # type: ignore[arg-type]
        for kind, flag in (("hvn", nodes.hvn), ("lvn", nodes.lvn)):
            _, levels = _f._node_levels(nodes, flag)
            setattr(ctx, kind, levels.tolist())
        return ctx

    def _utc_offset_ns(self, t: int) -> int:
        """features._utc_offset_ns for one instant, cached per UTC day."""
        sec = t // 10**9
        day = sec // 86400
        hit = self._offsets_cache.get(day)
        if hit is None:
            before = _f._zone_offset_s(day * 86400, self._tz)
            after = _f._zone_offset_s((day + 1) * 86400, self._tz)
            when = _f._offset_change(day, self._tz, before) if before != after else (day + 1) * 86400
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
            hit = int(_yyyymmdd_days(np.array([label], dtype=np.int64), "session label")[0])
            if len(self._days_cache) > 64:
                self._days_cache.clear()
            self._days_cache[label] = hit
        return hit

    def _advance_one(self, high: float, low: float, close: float, volume: float, t: int,
                     open: Optional[float]) -> None:
        """The running per-bar state (the batch's segment accumulations) after one bar."""
        local = t + self._utc_offset_ns(t)
        tod = local % _NS_PER_DAY
        D = self._trade_day()
        if D is None:
            ib = (tod - self._rth_ns) % _NS_PER_DAY < self._ib_ns
        else:  # features._ib_mask: the window on the session's own trade date
            since = max(-2, min(2, local // _NS_PER_DAY - D)) * _NS_PER_DAY + tod - self._rth_ns
            ib = 0 <= since < self._ib_ns
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
            if n < 64 else ts + _f._utc_offset_ns(ts, self._tz)
        tod = np.mod(local, _NS_PER_DAY)
        D = self._trade_day()
        if D is None:
            ib = np.mod(tod - self._rth_ns, _NS_PER_DAY) < self._ib_ns
        else:  # features._ib_mask: the window on the session's own trade date
            since = np.clip(np.floor_divide(local, _NS_PER_DAY) - D, -2, 2) * _NS_PER_DAY \
                + tod - self._rth_ns
            ib = (since >= 0) & (since < self._ib_ns)
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
        """The ``vpoc.bar_features`` row (float32 [F], columns ``BAR_COLUMNS``) of the latest bar:
        equal to the batch table's row for the same bars and sessions (with timestamps)."""
        if not self._bars:
            raise TypeError("bar features need bars (this Live profile takes trades)")
        r = self._run
        if r is None:
            raise ValueError("no bar in the current session yet")
        ctx = self._ctx
        tick = ctx.tick
        c = r[9]
        cum_vol, cum_pv = r[1], r[2]
        poc, vah, val = self._levels[0], self._levels[1], self._levels[2]
        vwap = _ratio(cum_pv, cum_vol) if cum_vol > 0 else c
        s_open = r[8]
        ib_hi = r[5] if math.isfinite(r[5]) else _NAN
        ib_lo = r[6] if math.isfinite(r[6]) else _NAN
        na, nb = _nearest(ctx.naked, c)
        ha, hb = _nearest(ctx.hvn, c)
        la, lb = _nearest(ctx.lvn, c)
        pp, pa, pb = ctx.prev
        cp, ca, cb = ctx.comp
        row = [
            float(r[0]), cum_vol, _ratio(cum_vol, ctx.prev_total),
            _ratio(c - s_open, s_open) * 100.0, _ratio(c - vwap, vwap) * 100.0,
            (c - poc) / tick, (c - vah) / tick, (c - val) / tick, _ratio(c - val, vah - val),
            (r[3] - c) / tick, (c - r[4]) / tick,
            (c - pp) / tick, (c - pa) / tick, (c - pb) / tick,
            (c - cp) / tick, (c - ca) / tick, (c - cb) / tick,
            float(len(ctx.naked)), na / tick, nb / tick,
            ha / tick, hb / tick, la / tick, lb / tick,
            r[10] / _NS_PER_MINUTE, (r[11] - r[7]) / _NS_PER_MINUTE,
            (ib_hi - c) / tick, (c - ib_lo) / tick,
        ]
        return np.array(row, dtype=np.float32)

    # ------------------------------------------------------------------ finished sessions

    @property
    @_locked
    def profiles(self) -> Profiles:
        """The finished sessions as one ``Profiles`` (labels: their session labels)."""
        if self._profiles_cache is None:
            self._profiles_cache = Profiles(
                _Concat(self._done, self._rules_kw["tick_size"], self._rules_kw["ticks_per_row"]),
                session_labels=np.asarray(self._done_labels, dtype=np.int64))
        return self._profiles_cache

    @property
    def labels(self) -> np.ndarray:
        """Labels of the finished sessions."""
        return np.asarray(self._done_labels, dtype=np.int64)

    @_locked
    def session_table(self) -> "_f.FeatureTable":
        """The ``session_features`` rows of the finished sessions (a FeatureTable)."""
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
        return _f.FeatureTable(values, names, session_labels=self.labels,
                               offsets=np.arange(S + 1, dtype=np.int64), kind="session")

    # ------------------------------------------------------------------ serialization

    @_locked
    def state_dict(self, flat: bool = False) -> Dict[str, Any]:
        """Everything needed to continue exactly: the rules, the finished sessions' results,
        the state their features carry, and the current session's rows. A deep snapshot taken
        under the instance's lock: nothing in it is shared with the Live, so it does not change
        as the feed goes on (``Live.from_state`` restores it).

        ``flat=False``: nested dicts and lists of numbers, strings, None and numpy arrays (for
        pickle / in-memory checkpoints). ``flat=True``: one level of numpy arrays (int64, float64,
        float32, str) and strings, nothing else: ``np.savez(path, **live.state_dict(flat=True))``
        then ``Live.from_state(np.load(path))`` (``allow_pickle=False``), or JSON with
        ``{k: np.asarray(v).tolist() for k, v in state.items()}``. See docs/live.md."""
        self._flush()
        cur = None
        if self._core is not None and self._core.size:
            cur = {k: self._core.column(i) for i, k in enumerate(("high", "low", "close", "open", "volume"))}
            cur["ts"] = np.asarray(self._ts, dtype=np.int64)
            cur["int_volume"] = self._int_volume
        copy = lambda a: None if a is None else np.array(a, copy=True)  # noqa: E731
        st = dict(
            version=_STATE_VERSION, config=self._config_copy(), has_open=self._has_open,
            n_dropped=self.n_dropped, n_rows=self.n_rows, last_ts=self._last_ts, label=self._label,
            done=[{k: copy(v) for k, v in d.items()} for d in self._done],
            done_labels=list(self._done_labels), comp=list(self._comp), naked=list(self._naked),
            tail=[{k: copy(v) for k, v in t.items()} for t in self._tail],
            session_rows=[copy(r) for r in self._session_rows],
            session_columns=self._session_columns if self._session_rows else None, current=cur,
        )
        return _state.flatten(st) if _bool(flat, "flat") else st

    def _config_copy(self) -> Dict[str, Any]:
        """The constructor's arguments, copied down to their leaves (which are immutable or the
        user's own objects, e.g. a calendar)."""
        c = dict(self._config)
        for k in ("session_options", "features"):
            if c[k] is not None:
                c[k] = dict(c[k])
        if c["session_starts"] is not None:
            c["session_starts"] = np.array(c["session_starts"], copy=True)
        return c

    @classmethod
    def from_state(cls, state: Any) -> "Live":
        """A Live profile continuing exactly where ``state`` (from ``state_dict()``, nested or
        ``flat=True``; a loaded ``.npz`` as it comes from ``np.load``) stopped.

        Every field is validated (types, lengths, ranges, counters and their consistency, the
        kept bars and composites against the finished sessions: see ``vpoc._live_state``); a
        state ``state_dict()`` could not have produced raises TypeError or ValueError naming the
        field, e.g. ``state['done'][2]['volume']``. Arrays may come back as lists (a state
        stored as JSON). A pickle, of a Live or of anything else, runs code when it is loaded and
        must come from a trusted source.
        """
        if _state.is_flat(state):
            state = _state.unflatten(state)
        config = _state.check_envelope(state)
        try:
            live = cls(**config)
        except (TypeError, ValueError) as e:
            raise type(e)(f"state['config']: {e}") from None
        live._restore(state)
        return live

    def _restore(self, st: Dict[str, Any]) -> None:
        st = _state.check_state(st, bars=self._bars, row_size=self._rules.row_size,
                                tail_n=self._tail_n, session_rows=self._with_session_rows,
                                profile_of=self._tail_profile, composites_of=self._composites_of)
        self._has_open = st["has_open"]
        self.n_dropped, self._label = int(st["n_dropped"]), st["label"]
        self._done = [dict(d) for d in st["done"]]
        self._done_labels = list(st["done_labels"])
        self._comp = [tuple(c) for c in st["comp"]]
        self._naked = [tuple(x) for x in st["naked"]]
        self._tail = [dict(t) for t in st["tail"]]
        self._session_rows = list(st["session_rows"])
        self._pending_from = len(self._session_rows)
        self._session_columns = st["session_columns"]
        self._ctx = self._next_context()
        if self._has_open is not None:
            self._start_core(bool(self._has_open))
        cur = st["current"]
        if cur is not None:
            names = ("high", "low", "close", "volume") if self._bars else ("high", "volume")
            cols = [np.ascontiguousarray(cur[k]) for k in names]
            o = np.ascontiguousarray(cur["open"]) if self._has_open else None
            ts = cur["ts"]
            labels = self._clock.labels_of(ts)
            if np.any(labels != self._label):
                i = int(np.argmax(labels != self._label))
                raise ValueError(f"state['current']['ts'][{i}] is not in session state['label'] = "
                                 f"{self._label} of this Live's session clock")
            try:  # the engine validates the rows (NaN, high < low, negative volume, max_rows)
                self._check_rows(cols, o, 0, ts.shape[0], None, np.arange(ts.shape[0]))
            except ValueError as e:
                raise ValueError(f"state['current']: {e}") from None
            self._append_rows(cols, o, ts, 0, cols[0].shape[0])
            self._int_volume = bool(cur["int_volume"])
        self.n_rows = int(st["n_rows"])
        self._last_ts = st["last_ts"]

    def _tail_profile(self, bars: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """The profile a finished session's kept bars give (to check state['tail'] against
        state['done'])."""
        v = bars["volume"]
        as_int = bool(np.all(v == np.floor(v))) and float(np.max(v)) < 2.0**63
        return self._session_profile(bars["high"], bars["low"], bars["close"], bars["open"], v, as_int)

    def _composites_of(self, done: List[Dict[str, np.ndarray]]) -> List[Tuple[float, float, float]]:
        """The composite ending at each finished session (to check state['comp'])."""
        S = len(done)
        ctx = SimpleNamespace(rules=self._rules, threads=None, ne=np.arange(S),
                              prof=Profiles(_Concat(done, self._rules_kw["tick_size"],
                                                    self._rules_kw["ticks_per_row"])))
        comp = _f._composites(ctx)  # type: ignore[arg-type]
        return [(float(comp[0][k]), float(comp[1][k]), float(comp[2][k])) for k in range(S)]

    def __getstate__(self) -> Dict[str, Any]:
        return self.state_dict()

    def __setstate__(self, state: Dict[str, Any]) -> None:
        fresh = Live.from_state(state)
        self.__dict__.update(fresh.__dict__)


class _Concat:
    """Per-session profile arrays laid end to end, shaped like the engine's result object."""

    def __init__(self, parts: List[Dict[str, np.ndarray]], tick_size: float, ticks_per_row: int) -> None:
        self.n_sessions = len(parts)
        self.tick_size = tick_size
        self.ticks_per_row = ticks_per_row
        for name in _PER_SESSION:
            dt = np.float64 if name in ("poc", "vah", "val", "total_volume", "va_volume") else np.int64
            setattr(self, name, np.concatenate([p[name] for p in parts]) if parts else np.zeros(0, dt))
        self.volume = np.concatenate([p["volume"] for p in parts]) if parts else np.zeros(0)
        self.offsets = np.zeros(self.n_sessions + 1, dtype=np.int64)
        if parts:
            np.cumsum(self.n_rows, out=self.offsets[1:])
        self.dev_poc = self.dev_vah = self.dev_val = None
