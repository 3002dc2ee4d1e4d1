"""CME Globex hours as evidence for vpoc.io.inspect: how well a reading of a file's stamps fits them.

Contract: pure functions of int64 ns UTC bar opens (and volumes): a reading's score (bars in the
16:00-17:00 CT halt, restarts at 17:00 CT, stops at 16:00 CT, weekly Sunday opens, busiest minute; for a
day-session file, days opening at 08:30 CT and ending at an RTH close), and the trading hours and pauses
of the winning one. No reading, no I/O: vpoc.io.inspect decides.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

__all__: list = []

_EXCHANGE = "America/Chicago"
_HALT = (16 * 60, 17 * 60)        # CT minutes of day [16:00, 17:00)
_RTH_OPEN, _CASH_CLOSE = 8 * 60 + 30, 15 * 60
_RTH_ENDS = (15 * 60, 15 * 60 + 15, 16 * 60)   # CT: cash close, ES day session end, Globex halt
_PAUSE_NS = 45 * 60 * 10**9       # a pause in trading long enough to be a halt
_WEEKEND_NS = 40 * 3600 * 10**9
_NS = 10**9


def _ct_fields(t: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Chicago minute of day, weekday (Mon=0) and day number of UTC ns ``t``."""
    import pandas as pd

    idx = pd.DatetimeIndex(t.view("datetime64[ns]")).tz_localize("UTC").tz_convert(_EXCHANGE)
    wall = np.asarray(idx.tz_localize(None).as_unit("ns").asi8, dtype=np.int64)
    day = wall // (86400 * _NS)
    return (wall // (60 * _NS)) % 1440, (day + 3) % 7, day


def _localize(wall: np.ndarray, tz: str) -> np.ndarray:
    """Naive wall clock (as ns) read in ``tz`` -> UTC ns; -1 marks times that do not exist."""
    import pandas as pd

    idx = pd.DatetimeIndex(wall.view("datetime64[ns]")).tz_localize(tz, ambiguous="NaT",
                                                                     nonexistent="NaT")
    out = np.asarray(idx.as_unit("ns").asi8, dtype=np.int64)
    return np.where(np.asarray(idx.isna()), -1, out)


#: trades: the first / last minute with a trade may fall this many minutes inside 17:00 / 16:00 CT (a
#: sparse market's first trade after the open is not at 17:00:00); bars open on the minute
TRADES_SLACK_MIN = 5


def _at_17(minute: np.ndarray, slack: int) -> np.ndarray:
    return (minute >= _HALT[1]) & (minute <= _HALT[1] + slack)


def _at_16(end_minute: np.ndarray, slack: int) -> np.ndarray:
    return _at_end(end_minute, _HALT[0], slack)


def _at_end(end_minute: np.ndarray, end: int, slack: int) -> np.ndarray:
    return (end_minute <= end) & (end_minute >= end - slack)


def _score(opens: np.ndarray, valid: np.ndarray, vol: np.ndarray, step: int, slack: int = 0) -> Dict[str, Any]:
    """A reading's fit to Globex hours; ``slack``: minutes a restart / stop may fall inside 17:00 / 16:00
    (TRADES_SLACK_MIN for trades' one-minute buckets, 0 for bars)."""
    o, v = opens[valid], vol[valid]
    minute, wday, _ = _ct_fields(o)
    in_halt = (minute >= _HALT[0]) & (minute < _HALT[1])
    sat = wday == 5
    # pauses and restarts are judged without Saturday rows (stray prints, counted apart)
    rows = np.flatnonzero(~sat)
    ow = o[rows]
    gap_before = np.diff(ow, prepend=ow[0] - _PAUSE_NS - 1) if ow.size else ow
    restart = rows[np.flatnonzero(gap_before > _PAUSE_NS)[1:]]   # the first row starts the file
    gap_before = np.zeros(o.size, dtype=np.int64)
    gap_before[rows] = np.diff(ow, prepend=ow[0] - _PAUSE_NS - 1) if ow.size else ow
    prev = np.searchsorted(rows, restart) - 1
    stop = rows[prev]
    weekly = restart[gap_before[restart] > _WEEKEND_NS]
    step_min = step // (60 * _NS)
    busiest = _busiest(minute, v)
    total_v = float(v.sum()) or 1.0
    return {"rows": int(o.size), "halt_rows": int(in_halt.sum()),
            "halt_volume_share": float(v[in_halt].sum()) / total_v,
            "restarts": int(restart.size),
            "restart_at_17": int(np.sum(_at_17(minute[restart], slack))),
            "stops": int(stop.size),
            "stop_at_16": int(np.sum(_at_16(minute[stop] + step_min, slack))),
            "weekly": int(weekly.size),
            "weekly_sunday_17": int(np.sum((wday[weekly] == 6) & _at_17(minute[weekly], slack))),
            "rth_open": int(np.sum((minute[restart] >= _RTH_OPEN) & (minute[restart] <= _RTH_OPEN + slack))),
            "rth_close": int(sum(np.sum(_at_end(minute[stop] + step_min, e, slack)) for e in _RTH_ENDS)),
            "busiest": busiest, "restart_mode": _mode(minute[restart]),
            "stop_mode": _mode(minute[stop]),
            "busiest_ok": int(bool(busiest) and busiest[0] == _RTH_OPEN),
            "saturday_rows": int(np.sum(sat)), "invalid": int(np.sum(~valid))}


def _mode(minutes: np.ndarray) -> Optional[int]:
    """The most common minute of day, or None."""
    if minutes.size == 0:
        return None
    return int(np.argmax(np.bincount(minutes, minlength=1440)))


def _busiest(minute: np.ndarray, vol: np.ndarray) -> List[int]:
    """Chicago minutes of day with the highest mean volume per bar (top 3)."""
    if minute.size == 0:
        return []
    n = np.bincount(minute, minlength=1440)
    s = np.bincount(minute, weights=vol.astype(np.float64), minlength=1440)
    mean = np.where(n >= max(2, n.max() // 4), s / np.maximum(n, 1), -1.0)
    top = np.argsort(-mean, kind="stable")[:3]
    return [int(m) for m in top if mean[m] > 0]


def _hm(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def _shown(distinct: List[Dict[str, Any]], best: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The rejected readings worth a line: the other label in the winning zone, the exchange's
    zone (what most docs assume) and the next best other zone."""
    out: List[Dict[str, Any]] = []
    picks = (lambda h: h["tz"] == best["tz"],
             lambda h: h["tz"] == _EXCHANGE,
             lambda h: h["tz"] not in (best["tz"], _EXCHANGE))
    for pick in picks:
        h = next((h for h in distinct if pick(h) and not any(
            h is x or np.array_equal(h["opens"], x["opens"]) for x in out)), None)
        if h is not None:
            out.append(h)
    return out


def _key(sc: Dict[str, Any], order: int, day: bool = False) -> Tuple[Any, ...]:
    """A reading's rank (smaller first); ``day``: a day-session file, ranked by its days' fit to US
    RTH (opens at 08:30 CT, ends at 15:00 / 15:15 / 16:00 CT) before the Globex restarts and stops."""
    matched = sc["restart_at_17"] + sc["stop_at_16"] + sc["weekly_sunday_17"]
    rth = sc["rth_open"] + sc["rth_close"] if day else 0
    return (sc["halt_rows"] + sc["invalid"], -rth, -matched, -sc["busiest_ok"], order)


# --------------------------------------------------------------------------- hours and gaps


def _day_gap(end_min: int, nxt: int, d0: int, d1: int, bounds: Tuple[int, int], slack: int) -> Optional[str]:
    """A day session's pause from a bar ending at CT minute ``end_min`` of day ``d0`` to one opening at
    ``nxt`` of day ``d1``: None for the daily pause (the day's end to the next weekday's open), else its
    kind."""
    at_open = bounds[0] <= nxt <= bounds[0] + slack
    at_end = bounds[1] - slack <= end_min <= bounds[1]
    skipped = int(np.busday_count(np.datetime64(d0 + 1, "D"), np.datetime64(max(d1, d0 + 1), "D")))
    if d1 <= d0 or not at_open:
        return "gap inside the session"
    if not at_end and end_min < bounds[1] - slack:
        return "early halt: holiday or early close"
    return "closed day(s): holiday" if skipped else None


def _hours_and_gaps(opens: np.ndarray, step: int, slack: int = 0, day_bounds: Optional[Tuple[int, int]] = None
                    ) -> Tuple[str, List[Dict[str, Any]], List[str]]:
    """The trading hours, the pauses other than the daily halt / weekends, Saturday rows; ``slack`` as
    in _score (trades: their minutes, worded as trades, not bars); ``day_bounds``: a day session's (open, end)
    CT minutes, whose pause from one day's end to the next weekday's open is the daily one."""
    import pandas as pd

    minute, wday, day = _ct_fields(opens)
    ev: List[str] = []
    seen = np.bincount(minute[(wday != 5)], minlength=1440) > 0
    hours = ""
    if seen.any() and not seen.all():
        # the longest circular run of minutes with no bar open: the daily pause
        runs = np.concatenate([~seen, ~seen])
        best, best_len, cur = 0, 0, 0
        for i, empty in enumerate(runs):
            cur = cur + 1 if empty else 0
            if cur > best_len:
                best, best_len = i, cur
        best_len = min(best_len, 1440)
        start = (best - best_len + 1) % 1440
        end = (start + best_len) % 1440
        hours = (f"{'trades' if slack else 'bars open'} {_hm(end)}-{_hm((start - 1) % 1440)} America/Chicago, none "
                 f"{_hm(start)}-{_hm((end - 1) % 1440)}")
        wd = np.bincount(wday, minlength=7)
        days = [n for n, c in zip(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), wd) if c]
        hours += f"; days with {'trades' if slack else 'bars'}: {', '.join(days)}"
    gaps: List[Dict[str, Any]] = []
    gap = np.diff(opens) - step
    idx = np.flatnonzero(gap >= 30 * 60 * _NS)
    ct = pd.DatetimeIndex(opens.view("datetime64[ns]")).tz_localize("UTC").tz_convert(_EXCHANGE)
    for i in idx:
        end_min = (int(minute[i]) + step // (60 * _NS)) % 1440
        nxt = int(minute[i + 1])
        if day_bounds is not None:
            kind = _day_gap(end_min, nxt, int(day[i]), int(day[i + 1]), day_bounds, slack)
            if kind is not None:
                gaps.append({"after": str(ct[i] + pd.Timedelta(step, "ns")), "resume": str(ct[i + 1]),
                             "hours": round(int(gap[i]) / 3600 / _NS, 2), "kind": kind})
            continue
        ends_1600 = bool(_at_16(np.array([end_min]), slack)[0] and _at_17(np.array([nxt]), slack)[0])
        if ends_1600 and gap[i] <= (60 + 2 * slack) * 60 * _NS:
            continue  # the daily halt
        # the weekend: 49 h Friday 16:00 -> Sunday 17:00 CT on the wall clock (50 h of real time over the
        # autumn clock change, 48 over the spring one), so measured in Chicago wall-clock time
        wall = (ct[i + 1].tz_localize(None) - ct[i].tz_localize(None)).value - step
        if ends_1600 and wday[i] == 4 and wday[i + 1] == 6 and wall <= (49 * 60 + 2 * slack) * 60 * _NS:
            continue
        if wday[i] == 5 or wday[i + 1] == 5:
            continue  # stray weekend prints are reported below
        hours_len = (int(gap[i])) / 3600 / _NS
        if _at_17(np.array([nxt]), slack)[0] and not ends_1600 and gap[i] < 30 * 3600 * _NS and \
                day[i + 1] == day[i]:
            kind = "early halt: holiday or early close"
        elif _at_17(np.array([nxt]), slack)[0] and gap[i] > 24 * 3600 * _NS:
            kind = "closed day(s): holiday"
        else:
            kind = "gap inside the session"
        gaps.append({"after": str(ct[i] + pd.Timedelta(step, "ns")), "resume": str(ct[i + 1]),
                     "hours": round(hours_len, 2), "kind": kind})
    usual = "the daily halt" if day_bounds is None else "the pause between days"
    if gaps:
        shown = "; ".join(f"{g['after'][:16]} -> {g['resume'][:16]} CT, {g['kind']}"
                          for g in gaps[:8])
        more = f"; and {len(gaps) - 8} more" if len(gaps) > 8 else ""
        ev.append(f"{len(gaps)} pauses other than {usual} and weekends: {shown}{more}")
    else:
        ev.append(f"no pauses other than {usual} and weekends")
    sat = np.flatnonzero(wday == 5)
    if sat.size:
        shown = ", ".join(str(ct[i])[:16] for i in sat[:5])
        ev.append(f"{sat.size} rows on Saturdays (CT), outside every Globex session (stray "
                  f"prints; vpoc.sessions drops and counts them): {shown}")
    return hours, gaps, ev
