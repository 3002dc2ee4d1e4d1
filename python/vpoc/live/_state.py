"""vpoc.Live's state: ``state_dict()`` (a deep snapshot, nested or flat) and ``Live.from_state`` (validated).

Contract: ``Live.from_state(live.state_dict())`` continues exactly where ``live`` stopped; a state
``state_dict()`` could not have produced raises TypeError or ValueError naming the field.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

from .. import _core
from .._profiles import Profiles
from .._timewin import appended_starts
from .._validate import boolean as _bool
from ..features import composite_levels
from ._common import _Concat, _locked
from ._guards import state_part_error
from ._state_check import STATE_VERSION, check_envelope, check_state
from ._state_flat import flatten, is_flat, unflatten

__all__ = ["_StateMixin"]

_NO_PREV = object()  # a state['carry'] without 'prev_ts' (states of earlier versions)


class _StateMixin:
    """state_dict / from_state (methods of ``Live``)."""

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
            if self._sided:  # the rows' buy and sell volume
                cur["buy"], cur["sell"] = (np.array(x) for x in self._side_columns())
        copy = lambda a: None if a is None else np.array(a, copy=True)  # noqa: E731
        st = dict(
            version=STATE_VERSION, config=self._config_copy(), has_open=self._has_open,
            n_dropped=self.n_dropped, n_rows=self.n_rows, last_ts=self._last_ts, label=self._label,
            done=[{k: copy(v) for k, v in d.items()} for d in self._done],
            done_labels=list(self._done_labels), comp=list(self._comp), naked=list(self._naked),
            tail=[{k: copy(v) for k, v in t.items()} for t in self._tail],
            session_rows=[copy(r) for r in self._session_rows],
            session_columns=self._session_columns if self._session_rows else None, current=cur,
        )
        if self._across:  # the rows carried into the current session (only when used, as window)
            core = self._core
            st["carry"] = None if core is None or not core.carried else dict(
                {k: core.carry_column(i) for i, k in enumerate(("high", "low", "close", "open", "volume"))},
                ts=np.asarray(self._carry_ts, dtype=np.int64), prev_ts=self._carry_prev)
        return flatten(st) if _bool(flat, "flat") else st

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
    def from_state(cls, state: Any) -> Any:
        """A Live profile continuing exactly where ``state`` (from ``state_dict()``, nested or
        ``flat=True``; a loaded ``.npz`` as it comes from ``np.load``) stopped.

        Every field is validated (types, lengths, ranges, counters and their consistency, the
        kept bars and composites against the finished sessions: see ``vpoc.live._state_check``); a
        state ``state_dict()`` could not have produced raises TypeError or ValueError naming the
        field, e.g. ``state['done'][2]['volume']``. Arrays may come back as lists (a state
        stored as JSON). A pickle, of a Live or of anything else, runs code when it is loaded and
        must come from a trusted source.
        """
        if is_flat(state):
            state = unflatten(state)
        config = check_envelope(state)
        try:
            live = cls(**config)
        except (TypeError, ValueError) as e:
            raise type(e)(f"state['config']: {e}") from None
        live._restore(state)
        return live

    def _restore(self, st: Dict[str, Any]) -> None:
        st = check_state(st, bars=self._bars, row_size=self._rules.row_size,
                         tail_n=self._tail_n, session_rows=self._with_session_rows,
                         profile_of=self._tail_profile, composites_of=self._composites_of,
                         sided=self._sided, across=self._across)
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
        if st.get("carry") is not None:
            self._seed_carry(st["carry"])
        if self._across:
            self._check_reach(st)
        cur = st["current"]
        if cur is not None:
            names = ("high", "low", "close", "volume") if self._bars else ("high", "volume")
            cols = [np.ascontiguousarray(cur[k]) for k in names]
            o = np.ascontiguousarray(cur["open"]) if self._has_open else None
            ts = cur["ts"]
            labels = self._labels_of(ts)
            if np.any(labels != self._label):
                i = int(np.argmax(labels != self._label))
                raise ValueError(f"state['current']['ts'][{i}] is not in session state['label'] = "
                                 f"{self._label} of this Live's session clock")
            try:  # the engine validates the rows (NaN, high < low, negative volume, max_rows)
                self._check_rows(cols, o, 0, ts.shape[0], None, np.arange(ts.shape[0]))
            except ValueError as e:  # a session wider than max_rows: in Live.update's words (its row, .index)
                raise state_part_error(self._too_wide(e, None, cols, o, 0, ts.shape[0]), "state['current']") from None
            sides = (np.ascontiguousarray(cur["buy"]), np.ascontiguousarray(cur["sell"])) if self._sided else None
            try:  # the engine checks the buy / sell volumes as it takes them
                self._append_rows(cols, o, ts, 0, cols[0].shape[0], None, sides)
            except ValueError as e:
                raise state_part_error(e, "state['current']") from None
            self._int_volume = bool(cur["int_volume"])
        self.n_rows = int(st["n_rows"])
        self._last_ts = st["last_ts"]

    def _seed_carry(self, carry: Dict[str, np.ndarray]) -> None:
        """window_across_sessions: the restored session's core starts with state['carry'], taken as a
        finished session's rows are (the rows a later window reaches: all of them, or the state is
        not one state_dict() gives)."""
        n = carry["ts"].shape[0]
        names = ("high", "low", "close", "volume") if self._bars else ("high", "volume")
        cols = [np.ascontiguousarray(carry[k]) for k in names]
        o = np.ascontiguousarray(carry["open"]) if self._has_open else None
        old = _core.LiveSession(self._bars, self._distribute, bool(self._has_open), **self._core_kw)
        ws = None if self._span is None else appended_starts(self._span, [], carry["ts"])
        try:
            self._append_core(old, cols, o, 0, n, ws)
        except ValueError as e:
            raise ValueError(f"state['carry']: {e}") from None
        self._core.carry(old, True)
        if int(self._core.carried) != n:
            raise ValueError(f"state['carry'] holds {n} rows, but a later row's window reaches only the last "
                             f"{int(self._core.carried)} of them (window={self._window!r})")
        self._carry_ts = carry["ts"].tolist()
        self._carry_prev = carry.get("prev_ts")

    def _check_reach(self, st: Dict[str, Any]) -> None:
        """The other direction of _seed_carry's check: a later row's window must not reach finished
        rows that state['carry'] does not hold (a state made with a shorter window, e.g. an edited
        state['config']['window']). A count window N reaches the last N - 1 finished rows; a time
        window the finished rows of state['tail'] (bars) within it of the last one, and must not reach
        state['carry']['prev_ts'], the newest finished row left out of the carry (bars and trades)."""
        carry, cur = st.get("carry"), st["current"]
        k = 0 if carry is None else int(carry["ts"].shape[0])
        finished = int(st["n_rows"]) - (0 if cur is None else int(cur["ts"].shape[0]))
        if k >= finished:  # every finished row is carried
            return
        count = self._core_kw.get("window")
        if self._span is None:
            need = min(int(count) - 1, finished)
        else:
            tails = [np.asarray(t["ts"], dtype=np.int64) for t in st.get("tail") or () if t.get("ts") is not None]
            ts = np.concatenate(tails) if tails else np.zeros(0, dtype=np.int64)
            need = int(np.count_nonzero(ts > ts[-1] - self._span)) if ts.size else 0
            prev = None if carry is None else carry.get("prev_ts", _NO_PREV)
            if prev is _NO_PREV and not self._bars:  # trades keep no tail: prev_ts is all there is
                raise ValueError("state['carry'] has no 'prev_ts' (the timestamp of the newest finished row it "
                                 "does not hold), which a time window over trades needs to check that the carry "
                                 "holds every row the window reaches: take the state with state_dict() of this "
                                 "version")
            if prev is not None and prev is not _NO_PREV and k and prev > int(carry["ts"][-1]) - self._span:
                raise ValueError(f"state['carry'] holds {k} rows, but this Live's window ({self._window!r}) also "
                                 f"reaches the finished row at {prev} (state['carry']['prev_ts']), which it does "
                                 "not hold: the state was made with another window (state['config']['window'])")
        if k < need:
            raise ValueError(f"state['carry'] holds {k} rows, but this Live's window ({self._window!r}) reaches "
                             f"{need} rows of the finished sessions: the state was made with another window "
                             "(state['config']['window'])")

    def _tail_profile(self, bars: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        """The profile a finished session's kept bars give (to check state['tail'] against
        state['done'])."""
        v = bars["volume"]
        as_int = bool(np.all(v == np.floor(v))) and float(np.max(v)) < 2.0**63
        return self._session_profile(bars["high"], bars["low"], bars["close"], bars["open"], v, as_int)

    def _composites_of(self, done: List[Dict[str, np.ndarray]]) -> List[Tuple[float, float, float]]:
        """The composite ending at each finished session (to check state['comp'])."""
        S = len(done)
        comp = composite_levels(Profiles(_Concat(done, self._rules_kw["tick_size"],
                                                 self._rules_kw["ticks_per_row"])), self._rules)
        return [(float(comp[0][k]), float(comp[1][k]), float(comp[2][k])) for k in range(S)]
