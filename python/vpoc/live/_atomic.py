"""All or nothing for vpoc.Live: the snapshot an update, close() or flush takes and the rollback to it.

Contract: ``_rollback(snap)`` puts back exactly the state of ``_snapshot()`` (or of the one-row
snapshot of ``_update_one``), idempotent, retried when it is itself interrupted; every update
and close() runs its changes under ``_all_or_nothing``.
"""

from __future__ import annotations

from typing import Any, Callable, Tuple

from .. import _core
from .._timewin import appended_starts

__all__ = ["_AtomicMixin", "_ROLLBACK_TRIES"]

# Runs of a rollback interrupted by yet another exception before it gives up.
_ROLLBACK_TRIES = 100


class _AtomicMixin:
    """Snapshot and rollback of a Live's state (methods of ``Live``)."""

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
                self._drop_win, (self._carry_ts, self._carry_prev), self._snapped_done)

    def _all_or_nothing(self, snap: Tuple[Any, ...], step: Callable[..., Any], *args: Any) -> Any:
        """``step(*args)`` under ``snap``: when it raises anything (KeyboardInterrupt and MemoryError
        included) the state of ``snap`` is put back and the exception raised again. Nested: a second
        interrupt taken as the rollback is called (before its own retry loop is set up) is caught here
        and the rollback runs again. One taken before the ``try`` finds nothing changed yet."""
        try:
            return step(*args)
        except BaseException:
            try:
                self._rollback(snap)
            except BaseException:
                try:
                    self._rollback(snap)
                except BaseException:
                    self._rollback(snap)
            raise

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
            if core.size != n_ts:  # the side rows and delta of a sided core come back with it
                core = self._rebuilt(core, n_ts, self._ts)
            del self._ts[n_ts:]
            vars(self).update(_core=core, _last_ts=last_ts, n_rows=n_rows, n_dropped=n_dropped,
                              _int_volume=int_volume, _levels=levels,
                              _run=None if run is None else list(run), snapped_prices=snapped)
            return
        (core, n_ts, ts, has_open, n_dropped, n_rows, last_ts, label, int_volume, levels, n_done,
         prof_cache, n_comp, naked, tail, n_srows, ctx, run, cur, snapped, drop_win, carry_ts, snapped_done) = snap
        self._carry_ts, self._carry_prev = carry_ts  # the carried rows' timestamps of the snapshot's session
        if core is not None and core.size != n_ts:  # rows were appended: the same rows again
            core = self._rebuilt(core, n_ts, ts)
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
            _run=None if run is None else list(run), snapped_prices=snapped, _drop_win=drop_win,
            _snapped_done=snapped_done)
        self._clock.cur = cur

    def _rebuilt(self, core: Any, n: int, ts: Any) -> Any:
        """A C++ session holding the first n rows of ``core`` (its rows before an interrupted
        append), run through the same code: the developing state does not depend on chunking, nor
        do a sided core's side rows and delta (input order). ``ts``: the session's timestamps (its
        window)."""
        sided = bool(core.sided)
        fresh = _core.LiveSession(self._bars, self._distribute, bool(core.has_open), **self._core_kw,  # type: ignore
                                  sided=sided)
        if core.carried:  # window_across_sessions: the same carried rows first
            fresh.carry(core, False)
        if n:
            c = [core.column(k)[:n] for k in range(7 if sided else 5)]
            side = dict(buy=c[5], sell=c[6]) if sided else {}
            span = getattr(self, "_span", None)
            ws = None if span is None else appended_starts(span, [], list(ts)[:n], self._carry_ts)
            if self._bars:
                fresh.append(None, c[0], c[1], c[2], c[3] if core.has_open else None, c[4], ws, **side)
            else:
                fresh.append(c[0], None, None, None, None, c[4], ws, **side)
        return fresh
