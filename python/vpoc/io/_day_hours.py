"""A day-session file (RTH only: hours of daily pause, not Globex 17:00-16:00) as evidence for vpoc.io.inspect.

Contract: pure functions of int64 ns stamps and the readings _globex_hours scored: whether the stamps
are a day session, the label their days' round bounds give (independent of zone and volume), and the
verdict: the reading whose days open at 08:30 CT and end at 15:00 / 15:15 / 16:00 CT, or why none fits.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ._globex_hours import _NS, _PAUSE_NS, _RTH_OPEN, _ct_fields, _hm, _shown

__all__: list = []

DAY_PAUSE_MIN = 180        # a daily pause this long (minutes, as written) makes a day session; Globex's is 60
_ROUND_NS = 15 * 60 * _NS  # session bounds fall on a quarter hour (09:30, 16:00, 08:30, 15:15...)
_MIN_DAYS = 3              # daily pauses needed for more than a guess
_RTH_ENDS_TEXT = "15:00 CT (cash close), 15:15 CT (ES day session) or 16:00 CT"


def day_span(t: np.ndarray, step: int) -> Optional[int]:
    """Minutes of the day the stamps ``t`` cover, as written (naive wall clock, else UTC), when a daily
    pause of DAY_PAUSE_MIN or more leaves the rest empty and trading pauses at least once; else None."""
    if t.size < 2 or step <= 0 or not np.any(np.diff(t) > _PAUSE_NS):
        return None
    span = _covered((t // (60 * _NS)) % 1440, step)
    return span if 1440 - span + max(step // (60 * _NS) - 1, 0) >= DAY_PAUSE_MIN else None


def _covered(minute: np.ndarray, step: int) -> int:
    """Minutes of the day between the first and last bar (as ``minute`` of day opens) around the longest
    empty stretch, the last bar's length included."""
    seen = np.zeros(1440, dtype=bool)
    seen[minute] = True
    run = longest = 0
    for empty in np.concatenate([~seen, ~seen]):
        run = run + 1 if empty else 0
        longest = max(longest, run)
    return min(1440 - min(longest, 1440) + max(step // (60 * _NS) - 1, 0), 1440)


def _days(t: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Each day's first and last stamp (days: runs of stamps between pauses of 45 min or more)."""
    brk = np.flatnonzero(np.diff(t) > _PAUSE_NS)
    return t[np.r_[0, brk + 1]], t[np.r_[brk, t.size - 1]]


def round_label(t: np.ndarray, step: int, clock: str = "as written") -> Tuple[Optional[str], str]:
    """The label under which the days' first bar opens and last bar ends on a quarter hour (09:30 and
    16:00: open stamps 09:30 / 15:59, close stamps 09:31 / 16:00), with its evidence line; None when
    both or neither do (bars of 15 min or more are round either way)."""
    first, last = _days(t)
    wall = lambda x: _hm(int((x // (60 * _NS)) % 1440))  # noqa: E731
    written = (f"the days' first stamps {clock} are mostly {wall(_mode(first))} and their last "
               f"{wall(_mode(last))}")
    if step >= _ROUND_NS or step <= 0:
        return None, f"{written}: bars of {step / _NS / 60:g} min end on a quarter hour either way (no label evidence)"
    share = {"open": (np.mean(first % _ROUND_NS == 0) + np.mean((last + step) % _ROUND_NS == 0)) / 2,
             "close": (np.mean((first - step) % _ROUND_NS == 0) + np.mean(last % _ROUND_NS == 0)) / 2}
    won = max(share, key=lambda k: share[k])
    lost = "close" if won == "open" else "open"
    if share[won] >= 0.8 and share[lost] <= 0.2:
        return won, (f"{written}: with label={won!r} the days' first bars open and last bars end on a "
                     f"quarter hour ({share[won]:.0%} of days' bounds; label={lost!r}: {share[lost]:.0%}), "
                     "which does not depend on the zone or the volumes")
    return None, (f"{written}: neither label puts the days' bounds on a quarter hour clearly (open "
                  f"{share['open']:.0%}, close {share['close']:.0%})")


def _mode(x: np.ndarray) -> int:
    vals, counts = np.unique(x % (86400 * _NS), return_counts=True)
    return int(vals[np.argmax(counts)])


def _fits(sc: Dict[str, Any]) -> bool:
    return sc["restarts"] >= 1 and sc["rth_open"] >= 0.8 * sc["restarts"] and sc["rth_close"] >= 0.5 * sc["stops"]


def reading_text(h: Dict[str, Any], trades: bool) -> str:
    """A reading as evidence lines name it: \"tz=..., label=...\" (\"as read\" when neither applies)."""
    return ", ".join(x for x in ("" if h["tz"] is None else f"tz={h['tz']}",
                                 "" if trades else f"label={h['label']}") if x) or "as read"


def _fit_text(sc: Dict[str, Any], step: int) -> str:
    end = "-" if sc["stop_mode"] is None else _hm((sc["stop_mode"] + step // (60 * _NS)) % 1440)
    start = "-" if sc["restart_mode"] is None else _hm(sc["restart_mode"])
    return (f"{sc['rth_open']} of {sc['restarts']} days (after a pause) open at 08:30 CT (mostly {start} CT), "
            f"{sc['rth_close']} of {sc['stops']} end at {_RTH_ENDS_TEXT} (mostly {end} CT)")


def judge_day(hyps: List[Dict[str, Any]], distinct: List[Dict[str, Any]], t: np.ndarray, step: int,
              span: int, trades: bool, naive: bool
              ) -> Tuple[Optional[str], Optional[str], str, bool, Optional[Tuple[int, int]], List[str]]:
    """(tz, label, confidence, chosen, (open, end) CT minutes, evidence) of a day-session file whose
    readings ``hyps`` are sorted best first (``distinct``: the others giving different opens)."""
    best, sc = hyps[0], hyps[0]["score"]
    clock = "as written" if naive else "in UTC"
    ev = [f"a day session: the stamps cover {span / 60:g} h of the day ({clock}), none in the other "
          f"{24 - span / 60:g} h: not CME Globex 17:00-16:00 (23 h); judged on US regular trading hours instead, a "
          f"day's first bar opening at 08:30 CT and its last ending at {_RTH_ENDS_TEXT}"]
    label_by_bounds, bounds_line = (None, "") if trades else round_label(t, step, clock)
    if bounds_line:
        ev.append(bounds_line)
    ev.append(f"{reading_text(best, trades)}: {_fit_text(sc, step)}; {sc['halt_rows']:,} of {sc['rows']:,} bars open "
              "in 16:00-17:00 CT")
    if not _fits(sc):
        tz_note = "the zone cannot be told from the hours" if naive else "the stamps do not look like US RTH"
        ev.append(f"ambiguous: no reading puts the days on US RTH (08:30 CT to {_RTH_ENDS_TEXT}): {tz_note}; "
                  + ("the label is the one of the days' round bounds (above)" if label_by_bounds
                     else "nor the label"))
        return None, label_by_bounds, "low", False, None, ev
    bounds = (int(sc["restart_mode"]), int((sc["stop_mode"] + step // (60 * _NS)) % 1440))
    rivals = [h for h in distinct if _fits(h["score"])]
    for h in _shown(distinct, best):
        verdict = "also possible" if h in rivals else "rejected"
        ev.append(f"{verdict} {reading_text(h, trades)}: {_fit_text(h['score'], step)}")
    confidence = "high"
    if sc["restarts"] < _MIN_DAYS:
        ev.append(f"ambiguous: only {sc['restarts']} daily pause(s) visible (too few days): the best reading "
                  "is a guess")
        confidence = "low"
    elif rivals:
        ev.append(f"ambiguous: the next reading ({reading_text(rivals[0], trades)}) puts the days on US RTH as well")
        confidence = "low"
    elif label_by_bounds not in (None, best["label"]):
        ev.append(f"ambiguous: the days' round bounds say label={label_by_bounds!r}, US RTH says "
                  f"label={best['label']!r}")
        confidence = "low"
    return best["tz"], best["label"], confidence, True, bounds, ev


def day_hours(hours: str, opens: np.ndarray, step: int, tz: Optional[str], trades: bool) -> str:
    """``hours`` (the CT hours of the chosen reading) said to be a day session, with ``tz``'s wall clock."""
    span = _covered(_ct_fields(opens)[0], step) if opens.size else 0
    extra = ""
    if tz not in (None, "America/Chicago") and opens.size:
        first, last = _days(opens)
        extra = (f" ({'trades' if trades else 'bars open'} {_hm(_wall_mode(first, tz))}-"
                 f"{_hm(_wall_mode(last, tz))} {tz})")
    return f"{hours}; an RTH-only day session of {span / 60:g} h{extra}, not Globex 17:00-16:00"


def written_hours(t: np.ndarray, span: int, naive: bool, trades: bool) -> str:
    """A day session's hours as written (no zone found): its days' usual first and last stamps."""
    first, last = _days(t)
    return (f"{'trades' if trades else 'stamps'} {_hm(_wall_mode(first, 'UTC'))}-{_hm(_wall_mode(last, 'UTC'))} "
            f"{'as written (zone unknown)' if naive else 'UTC'}; a day session of {span / 60:g} h, "
            "not Globex 17:00-16:00")


def _wall_mode(x: np.ndarray, tz: str) -> int:
    """The most common minute of day of UTC ns ``x`` on ``tz``'s wall clock."""
    import pandas as pd

    idx = pd.DatetimeIndex(x.view("datetime64[ns]")).tz_localize("UTC").tz_convert(tz)
    return int(np.argmax(np.bincount(np.asarray(idx.hour * 60 + idx.minute), minlength=1440)))


def rth_kept(opens: np.ndarray) -> str:
    """What session='rth' (vpoc.sessions.rth: 08:30-15:15 CT) keeps of bars opening at ``opens``."""
    minute, wday, _ = _ct_fields(opens)
    out = int(np.count_nonzero((minute < _RTH_OPEN) | (minute >= 15 * 60 + 15) | (wday >= 5)))
    if not out:
        return (f"read so, every one of the {opens.size:,} bars opens inside 08:30-15:15 CT: session='rth' "
                "(vpoc.sessions.rth) leaves none out for the hours (a holiday of its calendar still would)")
    return (f"read so, {out:,} of {opens.size:,} bars open outside 08:30-15:15 CT on weekdays: session='rth' "
            "(vpoc.sessions.rth) leaves them out (counted in dropped_by_cause['outside RTH'])")
