"""Rows outside every session in vpoc.Live: the messages and the DroppedRowsWarning of on_outside=.

Contract: at most one DroppedRowsWarning per update call, when the dropped rows pass
vpoc.sessions.DROP_WARN_SHARE of the rows seen or a wrong bar label explains them (the batch's rule).
"""

from __future__ import annotations

import warnings
from typing import Any, Tuple

import numpy as np

from .._warnings import DroppedRowsWarning, GuessedDefaultWarning, user_stacklevel
from ..sessions import (CAUSES, DROP_WARN_SHARE, drop_cause_counts, drop_cause_hint, drop_cause_text,
                        label_hint_ambiguous)
from ._common import _NS_PER_DAY

__all__ = ["_DropsMixin"]

#: Dropped timestamps held before they are counted by cause (the batch's rule, one vectorised call).
_CAUSE_BATCH = 256


class _DropsMixin:
    """Reports of dropped rows and of the one-session default (methods of ``Live``)."""

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

    def _outside_message(self, t: int, on_close: int, k: int = 1, n: int = 1) -> str:
        iso = np.datetime64(int(t), "ns").astype("datetime64[s]")
        what = (self._clock.defn.definition if self._clock.defn is not None
                else "session_starts (before the first start)")
        causes = None if on_close or self._clock.defn is None else self._counted((), (int(t),))
        return (f"{iso} UTC is outside every session of {what} ({k} of {n} rows of this update are); "
                f"{self._drop_cause(on_close > 0, causes=causes)}; pass on_outside='warn' or 'drop' to leave such "
                "rows out")

    def _noted_drops(self, on_close: int, ts: Any) -> Tuple[Any, ...]:
        """``_drop_win`` with rows dropped: ``on_close`` of them on a session's close, ``ts`` their
        sorted timestamps, held to be counted by cause (the batch's rule, vpoc.sessions) when they
        may be reported (a session rule, on_outside='warn'), in batches of _CAUSE_BATCH."""
        w = self._drop_win
        causes, held = w[5], w[6]
        if len(ts) and self._clock.defn is not None and self._drops_warn and self._on_outside == "warn":
            held = held + tuple(int(x) for x in ts)
            if len(held) >= _CAUSE_BATCH:
                causes, held = self._counted(causes, held), ()
        return (w[0], w[1], w[2] + on_close, w[3], w[4], causes, held)

    def _counted(self, causes: Tuple[int, ...], held: Tuple[int, ...]) -> Tuple[int, ...]:
        """``causes`` (rows per cause of vpoc.sessions.CAUSES; () none yet) plus the causes of ``held``."""
        got = drop_cause_counts(np.asarray(held, dtype=np.int64), self._clock.defn, self._clock.closed)
        return tuple((causes[i] if causes else 0) + got.get(k, 0) for i, k in enumerate(CAUSES))

    def _misstamped(self, ts: np.ndarray) -> int:
        """How many of the sorted bar opens ``ts`` (rows in no session) a wrong bar label explains:
        with label='open' those on a session's close (bar closes read as opens), with label='close'
        those one interval before a session's open (bar opens read as closes). Trades have no bar
        label: none (their rows are reported by cause, in the words of the batch's rule)."""
        if not self._bars:
            return 0
        if self._stamp == "close":
            return self._clock.at_open(ts, self._interval_ns)
        return self._clock.at_close(ts)

    def _pushed(self, ts: np.ndarray) -> int:
        """How many of a session's sorted bar opens ``ts`` (rows kept) the other bar label would
        push out of it: with label='open' those exactly on a window's open (label='close' moves
        them into the halt), with label='close' those one interval before a window's close
        (label='open' moves them onto it). The batch's rule (vpoc.sessions._dropped)."""
        if self._stamp == "close":
            return self._clock.at_close(ts + self._interval_ns)
        return self._clock.at_close(ts, opens=True)

    def _drop_cause(self, closes: bool, stray: bool = False, causes: Any = None, finished: int = 1) -> str:
        if stray:
            return ("the rows sit on the sessions' ends where a wrong bar label would put them, but as many "
                    "kept rows would leave their sessions under the other label: prints at the close "
                    "(settlement?), not a bar label (vpoc.io.inspect(path) / `vpoc inspect FILE` weighs "
                    "all the rows)")
        if closes and self._stamp == "close":
            return ("the rows sit exactly one bar interval before a session's open: the timestamps look "
                    "like bar opens: pass label='open' (the default), not label='close'")
        if closes:
            return ("the rows sit exactly on a session's close: the timestamps look like bar closes: "
                    "pass label='close' and interval=")
        if self._clock.defn is None:
            return "rows before session_starts[0]"
        if causes:  # by the batch's cause rule (vpoc.sessions): holiday, early close, halt, weekend
            few = causes[CAUSES.index("halt")] <= 2 * max(1, finished)  # a wrong zone puts whole hours there
            return "; ".join(f"{c:,} fall in {drop_cause_text(k, self._clock.defn)}: {drop_cause_hint(k, few)}"
                             for c, k in sorted(zip(causes, CAUSES), key=lambda x: -x[0]) if c)
        return ("the time zone of the timestamps is likely wrong, or stray prints (vpoc.io.inspect(path) "
                "/ `vpoc inspect FILE` finds the zone and the bar label)")

    def _report_drops(self) -> None:
        """A DroppedRowsWarning for the rows dropped since the last report, when they pass
        vpoc.sessions.DROP_WARN_SHARE of the rows seen since then or look like bar closes (the
        batch's rule); called when sessions finish, so at most once per update call (or close())."""
        base_total, base_dropped, at_close, base_done, pushed, causes, held = self._drop_win
        seen = self.n_rows + self.n_dropped - base_total
        dropped = self.n_dropped - base_dropped
        finished = len(self._done) - base_done
        self._drop_win = (self.n_rows + self.n_dropped, self.n_dropped, 0, len(self._done), 0, (), ())
        if not dropped or not self._drops_warn or self._on_outside != "warn" or seen <= 0:
            return
        share = dropped / seen
        # close stamps read as opens: about one row per session on its close, few others (the
        # batch's rule, vpoc.sessions._dropped; a stray weekend print may come with them); with
        # label='close' the mirror: open stamps read as closes, one interval before each open
        slack = max(2, finished // 10)
        closes = 1 <= at_close <= finished + slack and dropped - at_close <= slack
        # ... unless the other label would push out about as many kept rows (_pushed): no label advice
        if closes and self._ts:  # the current session's rows count too (its drops are in at_close)
            pushed += self._pushed(np.asarray(self._ts, dtype=np.int64))
        stray = closes and label_hint_ambiguous(at_close, pushed)  # the batch's rule
        closes = closes and not stray
        if share <= DROP_WARN_SHARE and not closes:
            return
        pct = f"{share:.1%}" if share >= 0.01 else f"{share:.2%}"
        if held and not (closes or stray):
            causes = self._counted(causes, held)
        warnings.warn(
            f"vpoc.Live: {dropped:,} of {seen:,} rows ({pct}) since the last report ({finished} "
            f"session(s) finished) are outside every session and left out: "
            f"{self._drop_cause(closes, stray, None if closes or stray else causes, finished)}. "
            f"Counts: Live.n_dropped ({self.n_dropped:,} in all); on_outside='drop' silences this, "
            "on_outside='raise' makes it an error", DroppedRowsWarning, stacklevel=user_stacklevel())
