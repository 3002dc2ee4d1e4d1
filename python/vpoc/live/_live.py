"""``vpoc.Live``: volume profiles of a live feed, updated bar by bar (or trade by trade).

Contract (docs/live.md): after every row the current session's POC / VAH / VAL equal the batch
``developing=True`` series of the same rows, the ``bar_features_row()`` equals the batch
``bar_features`` row, finished sessions equal ``from_bars`` / ``from_trades`` and
``session_features`` on the same rows; an update (or close()) that raises anything, a bad row or
KeyboardInterrupt / MemoryError alike, changes nothing, and ``state_dict()`` is a deep snapshot.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import _core
from .._api import attach_facts, from_bars, from_trades
from .._arrays import as_prices, as_volume, check_grid, coarse_grid, derived_prices, first_decrease
from .._presets import (PEER_KEYWORDS, check_whole_volume, recorded_rules, resolve as resolve_preset, row_prices,
                        value_area_of, with_side_rules)
from .._profiles import NO_ROW, Profiles
from .._time import TIME_UNITS, bar_opens, check_label, check_time_unit, input_timestamps_ns, interval_ns, iso_utc
from .._timewin import window_arg
from .._validate import boolean as _bool, integer as _int, real as _real, string as _str
from .._warnings import user_stacklevel
from ..features import check_prior_gap, feature_rules
from ._atomic import _AtomicMixin
from ._clock import _Clock
from ._common import _Concat, _NAN, _NS_PER_DAY, _PER_SESSION, _locked
from ._drops import _DropsMixin
from ._features import _FEATURE_OPTIONS, _FeaturesMixin
from ._guards import check_bar_only, closed_session_error
from ._rows import _RowsMixin
from ._side import SIDE_DONE_KEYS, _SideMixin
from ._state import _StateMixin

__all__ = ["Live"]

# Rows per engine call of an array update: each call runs without a Python-level interrupt check,
# so this bounds how long a KeyboardInterrupt waits (about 0.1-0.2 s on a 2-core VM).
_CHUNK = 1 << 17


def _level(i: int, doc: str) -> property:
    """A read-only float property: entry ``i`` of ``levels`` (poc, vah, val, total_volume, va_volume)."""
    return property(lambda self: self._levels[i], doc=doc)


class Live(_RowsMixin, _AtomicMixin, _DropsMixin, _FeaturesMixin, _SideMixin, _StateMixin):
    """Volume profile of a live feed: ``update()`` with new bars (or trades) as they arrive,
    read the current session's POC / value area at once.

    Parameters
    ----------
    tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie, max_rows :
        the rules of ``vpoc.from_bars`` / ``vpoc.from_trades`` (``distribute`` bars only: a trades
        Live refuses it, as ``features``, ``session_features=True`` and ``label="close"``).
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
    side : True: every update carries the aggressor side (trades ``side=``: +1 / -1 / 0 or
        'B' / 'A' / 'N'; bars ``buy_volume=`` and ``sell_volume=``), and the Live keeps per-row buy /
        sell volume (``buy_histogram()``, ``sell_histogram()``), ``delta``, ``delta_poc`` and
        ``side_profile()`` of the session so far, and the side fields of ``profiles``, equal to
        ``from_trades(..., side=..., developing=True)`` / ``from_bars(..., buy_volume=, sell_volume=)``;
        ``imbalance_ratio`` / ``stacked_imbalance_min``: their footprint imbalance rule.
    window : N (input rows): ``poc`` / ``vah`` / ``val`` / ``total_volume`` / ``va_volume`` /
        ``histogram()`` and the levels ``update`` returns are those of the session's last N rows,
        equal to ``from_*(..., developing=True, window=N)`` for any chunking ("Rolling windows" in
        docs/contract.md); ``profiles`` stay whole sessions, the side fields cumulative, and
        ``bar_features_row()`` is refused (bar features read the session's developing levels). A time
        window (``"60min"``, a timedelta): the session's rows in ``(t - span, t]`` for each row's
        timestamp ``t`` (bar opens), equal to ``from_*(..., window="60min")`` as well.
        ``window_across_sessions=True``: the window may reach into earlier sessions, as in ``from_*``
        (a new session starts with the rows a later window reaches; the state records them).
    va_rows, va_compare, va_stop, tie_tol, row_label, price_label, va_target, preset : the peer rules and presets of
        ``from_bars`` (docs/presets.md); ``profiles.rules`` records them.

    After each ``update``: ``poc``, ``vah``, ``val`` (row prices, NaN before the first row),
    ``total_volume``, ``va_volume``, ``histogram()`` (zero-copy view), ``bar_features_row()``.
    Finished sessions: ``profiles`` (a ``Profiles``), ``session_table()`` (a FeatureTable).
    ``len(live)``: finished sessions; ``n_dropped``: rows outside every session; ``close()``
    ends the current session at once (later rows start a new one; with a session rule, rows of the
    ended session are refused).
    State: ``state_dict()`` / ``Live.from_state()`` (validated field by field; for .npz or JSON
    take ``state_dict(flat=True)``: flat keys of plain arrays and numbers, read back by
    ``Live.from_state(dict(numpy.load(path)))``), or ``pickle`` (only from a trusted source:
    unpickling runs code). See docs/live.md.
    """

    def __init__(self, *, tick_size: float, kind: str = "bars", ticks_per_row: int = 1,
                 distribute: Optional[str] = None, value_area: Optional[float] = None, va_method: Optional[str] = None,
                 poc_tie: Optional[str] = None, max_rows: int = 1_000_000, session: Any = None,
                 session_options: Optional[dict] = None, session_starts: Any = None,
                 features: Optional[dict] = None, session_features: Optional[bool] = None,
                 time_unit: Optional[str] = None, label: str = "open", interval: Any = None,
                 snap: bool = False, on_outside: str = "warn", side: bool = False,
                 imbalance_ratio: Optional[float] = None, stacked_imbalance_min: Optional[int] = None,
                 window: Any = None, va_rows: Optional[str] = None, va_compare: Optional[str] = None,
                 va_stop: Optional[str] = None, tie_tol: Optional[float] = None,
                 row_label: Optional[str] = None, preset: Optional[str] = None, price_label: Optional[str] = None,
                 va_target: Optional[str] = None, window_across_sessions: bool = False) -> None:
        self._lock = threading.RLock()  # see _locked
        given_distribute = distribute
        # preset= fills the rule keywords not passed (docs/presets.md); None: today's defaults
        rk, self._preset_rules = resolve_preset(preset, dict(
            distribute=distribute, va_method=va_method, poc_tie=poc_tie, va_rows=va_rows, va_compare=va_compare,
            va_stop=va_stop, tie_tol=tie_tol, row_label=row_label, price_label=price_label, va_target=va_target), True)
        distribute, va_method, poc_tie = rk["distribute"], rk["va_method"], rk["poc_tie"]
        if rk.get("bins") is not None:  # wickra's bins are rebuilt per window: from_* only (docs/presets.md)
            raise ValueError(f"bins={rk['bins']} (preset={preset!r}) is not available in vpoc.Live: its rows stay "
                             "on the tick ladder; use vpoc.from_bars(..., developing=True) for bins")
        self._preset_rules = recorded_rules(self._preset_rules, preset, value_area)  # as from_* record it
        value_area = value_area_of(preset, value_area)
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
        # bar-only arguments of a trades Live are refused, not ignored (a preset's distribute passes)
        check_bar_only(kind, self._stamp, given_distribute, resolve_preset(preset, dict(distribute=None), True)[0]
                       .get("distribute"), session_features, features)
        if self._stamp == "close":
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
        if side is not False or imbalance_ratio is not None or stacked_imbalance_min is not None:
            # only when used: a state of a Live without them keeps the keys it always had
            self._config.update(side=side, imbalance_ratio=imbalance_ratio,
                                stacked_imbalance_min=stacked_imbalance_min)
        self._bars = kind == "bars"
        self._time_unit = check_time_unit(time_unit)
        self._ts_scale = TIME_UNITS[self._time_unit or "ns"]
        self._rules_kw = dict(tick_size=_real(tick_size, "tick_size"),
                              ticks_per_row=_int(ticks_per_row, "ticks_per_row", 1),
                              value_area=_real(value_area, "value_area"),
                              va_method=_str(va_method, "va_method"), poc_tie=_str(poc_tie, "poc_tie"),
                              max_rows=_int(max_rows, "max_rows", 1))
        self._distribute = _str(distribute, "distribute")
        # rolling windows (the engine checks window=): the levels of the last `window` rows of the
        # session; only the session's own C++ profile takes it (the side profiles stay whole)
        # time windows ("60min"): each row's window start from the session's timestamps (_rows.py)
        count, self._span = window_arg(window)
        self._window = window
        self._core_kw = dict(self._rules_kw) if count is None else dict(self._rules_kw, window=count)
        if self._span is not None:
            self._core_kw["time_window"] = True
            window = window if isinstance(window, str) else f"{self._span}ns"  # a state keeps a string
        if window is not None:
            self._config["window"] = window  # only when used: other states keep their keys
        # windows across sessions: a new session's core starts with the rows a later window reaches
        self._across = _bool(window_across_sessions, "window_across_sessions")
        if self._across and window is None:
            raise ValueError("window_across_sessions=True lets each row's window reach into earlier sessions: pass "
                             "window=N or a time window")
        if self._across:
            self._config["window_across_sessions"] = True  # only when used, as window
        # peer rules (docs/presets.md), passed on to the engine and the finished sessions' profiles;
        # only when used, as window
        self._peer_kw = {} if self._preset_rules is None else {k: rk[k] for k in PEER_KEYWORDS}
        if self._peer_kw:
            self._config.update(self._peer_kw, preset=preset)
            self._core_kw["rules"] = dict(self._peer_kw)
        # the engine validates the rules once, here
        probe = _core.LiveSession(self._bars, self._distribute, False, **self._core_kw)
        del probe
        self._side_setup(side, imbalance_ratio, stacked_imbalance_min)
        fopts = dict(features or {})
        unknown = set(fopts) - set(_FEATURE_OPTIONS)
        if unknown:
            raise ValueError(f"features has unknown option(s) {sorted(unknown)}; known: {_FEATURE_OPTIONS}")
        self._rules = feature_rules(self._rules_kw["tick_size"], self._rules_kw["ticks_per_row"],
                                    self._distribute, self._rules_kw["value_area"],
                                    self._rules_kw["va_method"], self._rules_kw["poc_tie"], fopts)
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
        self._snapped_done: int = 0  # ... of them on the finished sessions' rows (profiles.snapped_prices)
        # rows seen, dropped, dropped on a session's close, sessions finished since the last
        # dropped-rows report (a DroppedRowsWarning at most once per update call / finished session)
        # and kept rows the other bar label would push out (_DropsMixin._pushed); the dropped rows by
        # cause and those not yet counted (_DropsMixin._noted_drops)
        self._drop_win: Tuple[Any, ...] = (0, 0, 0, 0, 0, (), ())
        self.n_rows: int = 0  # rows kept (in a session) so far
        self._last_ts: Optional[int] = None
        self._label: Optional[int] = None
        self._int_volume = True
        self._ts: List[int] = []  # timestamps of the current session's rows
        self._carry_ts: List[int] = []  # window_across_sessions: those of the rows carried before them
        self._carry_prev: Optional[int] = None  # and that of the newest finished row not carried (state: prev_ts)
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
        self._side_reset()

    # ------------------------------------------------------------------ reading

    poc = _level(0, "POC of the current session (row price; NaN before its first row).")
    vah = _level(1, "Value-area high of the current session (row price).")
    val = _level(2, "Value-area low of the current session (row price).")
    total_volume = _level(3, "Volume of the current session so far.")
    va_volume = _level(4, "Volume inside the current value area.")

    @property
    def levels(self) -> Tuple[float, float, float, float, float]:
        """(poc, vah, val, total_volume, va_volume) of the current session."""
        return self._levels

    @property
    def session_label(self) -> Optional[int]:
        """Label of the current session (YYYYMMDD with a session definition, k with
        session_starts; without either the number of sessions close() finished before it: 0, then
        1, ...); None before the first row."""
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
        rows = self.low_row + np.arange(n, dtype=np.int64)
        if self._peer_kw.get("price_label") == "decimal":  # as the engine's levels (docs/presets.md)
            return row_prices(rows, self._rules_kw["tick_size"], self._rules_kw["ticks_per_row"], self._peer_kw)
        return rows.astype(np.float64) * self._rules.row_size

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
    def update(self, *args: Any, open: Any = None, timestamp: Any = None, side: Any = None,
               buy_volume: Any = None, sell_volume: Any = None, **kwargs: Any
               ) -> Tuple[float, float, float, float, float]:
        """Appends rows (one or many, in time order): bars ``update(high, low, close, volume,
        open=None, timestamp=...)`` or trades ``update(price, volume, timestamp=...)``; scalars
        or 1-D arrays. ``timestamp``: int ns since the epoch (UTC), datetime64 (UTC) or
        timezone-aware pandas timestamps (bar opens, or bar closes with ``label="close"``); naive
        pandas timestamps raise ValueError, as in ``vpoc.sessions``. With ``Live(side=True)``
        every update also takes the rows' aggressor side: trades ``side=`` (+1 / -1 / 0 or
        'B' / 'A' / 'N'), bars ``buy_volume=`` and ``sell_volume=``. Returns ``levels`` after
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
        sides = self._side_args(side, buy_volume, sell_volume)
        if self._peer_kw.get("va_target") == "decimal":  # exact only for whole volumes (docs/presets.md)
            check_whole_volume(args[-1])
        first = args[0]
        if isinstance(first, (float, int, np.floating, np.integer)) and not isinstance(first, bool):
            return self._update_one(args, open, timestamp, sides)  # takes its own snapshot
        return self._all_or_nothing(self._snapshot(), self._update_many, args, open, timestamp, sides)

    def _labels_of(self, ts: np.ndarray) -> np.ndarray:
        """The session clock's labels of sorted timestamps (-1: in no session); without a session
        rule or starts, the one session's label: the number of sessions finished before it (each
        close() starts the next)."""
        labels = self._clock.labels_of(ts)
        if self._one_session:
            labels[:] = self._label if self._label is not None else len(self._done)
        return labels

    def _start_core(self, has_open: bool) -> None:
        self._has_open = has_open if self._bars else False
        self._core = _core.LiveSession(self._bars, self._distribute, self._has_open, **self._core_kw,
                                       sided=self._sided)
        self._side_start(self._has_open)

    # ------------------------------------------------------------------ many rows

    def _update_many(self, args: Sequence[Any], open: Any, timestamp: Any, given: Any = None
                     ) -> Tuple[float, float, float, float, float]:
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
        ts = input_timestamps_ns(timestamp, n, self._time_unit, naive_utc=False)  # as vpoc.sessions
        sides = self._side_many(given, args, cols[-1])
        if n == 0:
            return self._levels
        if self._stamp == "close":
            ts = bar_opens(ts, "close", np.timedelta64(self._interval_ns, "ns"))[0]
        i = first_decrease(ts)
        if i > 0:
            raise ValueError(f"timestamp[{i}] ({iso_utc(ts[i])}) is before timestamp[{i - 1}] ({iso_utc(ts[i - 1])}); "
                             "rows must arrive in time order")
        if self._last_ts is not None and ts[0] < self._last_ts:
            raise ValueError(f"timestamp[0] = {iso_utc(ts[0])} is before the previous row's "
                             f"({iso_utc(self._last_ts)}); rows must arrive in time order")
        labels = self._labels_of(ts)
        kept = labels >= 0
        if self._label is not None and kept.any() and labels[kept][0] < self._label:
            raise ValueError(f"timestamp[{int(np.argmax(kept))}] belongs to session "
                             f"{int(labels[kept][0])}, older than the current session {self._label}")
        if kept.any() and self._ended(int(labels[kept][0])):
            i = int(np.argmax(kept))
            raise closed_session_error(int(labels[i]), int(ts[i]), i)
        if self._core is not None and (o is not None) != self._has_open and kept.any():
            raise ValueError("open must be given with every bar or with none")
        idx = np.flatnonzero(kept)
        lab = labels[idx]
        starts = np.flatnonzero(np.r_[True, lab[1:] != lab[:-1]]) if idx.size else np.zeros(0, np.int64)
        bounds = np.r_[starts, idx.size].astype(np.int64)
        take = (lambda a: a[idx]) if idx.size < n else (lambda a: a)
        cols = [take(c) for c in cols]
        o = None if o is None else take(o)
        sides = None if sides is None else (take(sides[0]), take(sides[1]))
        ts_k = take(ts)
        n_out = int(n - idx.size)
        on_close = 0
        if n_out and self._drops_warn and self._on_outside != "drop":
            out_ts = ts[~kept]
            on_close = self._misstamped(out_ts)
            if self._on_outside == "raise":
                i = int(np.argmin(kept))
                raise ValueError(f"timestamp[{i}]: " + self._outside_message(
                    int(ts[i]), int(self._misstamped(ts[i:i + 1])), n_out, n))
        resent = self._resent(ts_k, cols, o) if idx.size else 0  # re-sent bars (a DuplicateRowsWarning)
        snapped, per_session = 0, [0] * len(starts)
        if idx.size:  # the price grid (vpoc._arrays.check_grid's rule), before anything changes
            prices = {nm: c for nm, c in zip(names[:-1], cols)}
            if o is not None:
                prices["open"] = o
            snapped = int(check_grid(prices, self._grid_tick, snap=self._snap, stacklevel=user_stacklevel(),
                                     counted_in="live.snapped_prices") or 0)
            if snapped:  # counted per session: profiles counts the finished sessions' (as the batch)
                per_session = self._snapped_by_session(prices, bounds) if len(starts) > 1 else [snapped]
        # Every change below is undone (update()'s rollback) if anything raises, a bad row of a
        # later chunk included: the engine checks each chunk before appending it. Chunks keep
        # each engine call short, so a KeyboardInterrupt is taken within a fraction of a second.
        self.n_dropped += n_out
        self._drop_win = self._noted_drops(on_close, ts[~kept] if n_out else ())
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
                self._append_rows(cols, o, ts_k, c0, min(c0 + _CHUNK, b), idx, sides)
            self._int_volume = self._int_volume and int_volume
            self.snapped_prices += per_session[g]  # before the next session's _finish reads it
        if len(self._done) > n_done:
            self._report_drops()
        if self._one_session and not self._one_session_warned and self._ts \
                and self._ts[-1] - self._ts[0] > _NS_PER_DAY:
            self._check_one_session(self._ts[-1])
        if resent:
            self._warn_resent(resent, n)
        return self._levels

    # ------------------------------------------------------------------ sessions

    def _begin(self, label: int) -> None:
        if self._bars and self._clock.defn is not None and self._done_labels:
            # the next session's prev_* features read the last finished one: days missing between
            # them are reported, as bar_features / session_features do; once per pair of sessions (an
            # update rolled back by a later bad row and sent again does not repeat it; kept out of the
            # rolled-back state on purpose, and marked only once the warning has not raised)
            pair = (self._done_labels[-1], label)
            warned = self.__dict__.setdefault("_gaps_warned", set())
            if pair not in warned:
                check_prior_gap(pair[0], label, "Live",
                                "prev_*_dist / cum_volume_vs_prev / session_table's prior-session columns read that session")
                warned.add(pair)
        self._label = label
        self._int_volume = True  # every volume of the session came as an integer so far
        self._levels = (_NAN, _NAN, _NAN, 0.0, 0.0)
        self._run = None  # the running bar state starts with the session's first bar

    @_locked
    def close(self) -> None:
        """Ends the current session now (it joins ``profiles``). Without ``session`` / ``session_starts``
        the next row starts a new one; with them a later row of the ended session is refused (ValueError:
        its profile was emitted) and rows of later sessions start theirs. All or nothing, like ``update``."""
        if self._label is not None and self._core is not None and self._core.size:
            self._all_or_nothing(self._snapshot(), self._close_now)

    def _close_now(self) -> None:
        self._finish()
        self._label = None
        self._clock.cur = None
        self._levels = (_NAN, _NAN, _NAN, 0.0, 0.0)
        self._report_drops()

    def _session_profile(self, h: np.ndarray, lo: Any, c: Any, o: Any, v: np.ndarray,
                         as_int: bool, sides: Optional[Tuple[np.ndarray, np.ndarray]] = None
                         ) -> Dict[str, np.ndarray]:
        """One finished session's profile arrays: from_bars / from_trades on its rows (integer
        volumes binned as integers, as the batch engine bins them); with ``sides`` (its rows' buy
        and sell volumes) also its side rows and delta. The rows were accepted by the engine,
        which rounds prices to the tick: snap=True does the same here."""
        kw = dict(tick_size=self._rules_kw["tick_size"], ticks_per_row=self._rules_kw["ticks_per_row"],
                  value_area=self._rules_kw["value_area"], va_method=self._rules_kw["va_method"],
                  poc_tie=self._rules_kw["poc_tie"], max_rows=self._rules_kw["max_rows"], snap=True,
                  **self._peer_kw)
        vol = v.astype(np.int64) if as_int else v
        if sides is not None:
            kw.update(self._side_profile_kw(*sides))
        if not self.__dict__.get("_coarse_warned"):  # a coarse price grid is said once a Live, not once a session
            prices = {"high": h, "low": lo, "close": c} if self._bars else {"price": h}
            self.__dict__["_coarse_warned"] = coarse_grid(h, prices, kw["tick_size"], kw["ticks_per_row"]) > 0
        with derived_prices():  # (the check above is this call's)
            if self._bars:
                prof = from_bars(h, lo, c, vol, open=o, distribute=self._distribute, **kw)
            else:
                prof = from_trades(h, vol, **kw)
        names = _PER_SESSION + ("volume",) + (SIDE_DONE_KEYS if sides is not None else ())
        return {name: np.array(getattr(prof, name)) for name in names}

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
        one = self._session_profile(h, lo, c, o, v, as_int, self._side_columns() if self._sided else None)
        self._done.append(one)
        self._done_labels.append(int(self._label))  # type: ignore[arg-type]
        self._snapped_done = self.snapped_prices  # the rows counted so far are the finished sessions'
        self._profiles_cache = None
        w = self._drop_win
        if w[2] and self._on_outside == "warn":  # rows a wrong label explains: what the hint weighs
            self._drop_win = w[:4] + (w[4] + self._pushed(np.asarray(self._ts, dtype=np.int64)),) + w[5:]
        if self._bars:
            ts = np.asarray(self._ts, dtype=np.int64)
            self._close_features(dict(high=h, low=lo, close=c, open=o, volume=v, ts=ts))
        self._core = _core.LiveSession(self._bars, self._distribute, bool(self._has_open),
                                       **self._core_kw, sided=self._sided)
        if self._across:
            self._carry_over(core)
        self._side_finished()
        self._ts = []

    # ------------------------------------------------------------------ finished sessions

    @property
    @_locked
    def profiles(self) -> Profiles:
        """The finished sessions as one ``Profiles``, with the batch's session facts (labels, session_rule)."""
        if self._profiles_cache is None:
            self._profiles_cache = self._side_attach(attach_facts(Profiles(  # the batch's session facts
                _Concat(self._done, self._rules_kw["tick_size"], self._rules_kw["ticks_per_row"])),
                self._clock.facts(self._done_labels)))
            self._profiles_cache.snapped_prices = self._snapped_done  # as the batch counts them on these rows
            if self._preset_rules is not None or self._sided:  # as from_* record them
                self._profiles_cache.rules = self._preset_rules if not self._sided else with_side_rules(
                    self._preset_rules, self._side_rules.imbalance_ratio, self._side_rules.stacked_min)
        return self._profiles_cache

    @property
    def labels(self) -> np.ndarray:
        """Labels of the finished sessions."""
        return np.asarray(self._done_labels, dtype=np.int64)

    def __getstate__(self) -> Dict[str, Any]:
        return self.state_dict()

    def __setstate__(self, state: Dict[str, Any]) -> None:
        fresh = Live.from_state(state)
        self.__dict__.update(fresh.__dict__)

