"""Session window definitions: CME Globex, RTH, daily and custom clock windows.

Contract: each builder returns a ``_Definition`` whose ``windows(d0, d1)`` are the sorted, disjoint,
labelled UTC windows around local dates d0..d1; the same windows whatever span is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Tuple

import numpy as np
import numpy.typing as npt

from .._optional import require
from .._time import zone as _zone
from ._calendar import CalendarLike, _cal_name, _calendar, _schedule, _valid_days
from ._clock import _flag, _localize_wall, _time_of_day, _yyyymmdd

__all__ = ["_Definition", "_clock_definition", "_custom", "_daily", "_globex", "_rth"]

_NS_PER_DAY = 86_400 * 1_000_000_000
_CHICAGO = "America/Chicago"
_GLOBEX_START = "17:00"
_GLOBEX_END = "16:00"
# Margins (days) around the data's dates when reading calendars: a Globex window opens the
# evening before its date, and a holiday folds into a trade date a few days later.
_SCHEDULE_MARGIN_DAYS = 7
_TRADE_DATE_MARGIN_DAYS = 21

Int64Array = npt.NDArray[np.int64]


@dataclass(frozen=True)
class _Definition:
    """A session definition: ``windows(d0, d1)`` gives the sorted windows ``(opens, closes,
    labels)`` (UTC ns, YYYYMMDD) that can hold rows whose local dates in ``zone`` lie in
    ``d0 .. d1`` (days since 1970-01-01); the margins each builder adds make every such window
    the one a call over a wider span would give. Used by the public functions and vpoc.Live."""

    definition: str
    zone: Any
    windows: Callable[[int, int], Tuple[Int64Array, Int64Array, Int64Array]]

    def __post_init__(self) -> None:
        # every definition localizes wall-clock times with pandas: say so when it is missing,
        # here (vpoc.sessions.*, Live(session=...) at construction), not at the first row
        require("pandas", f"vpoc.sessions.{self.definition}", "sessions")


def _clock_definition(start: Any, end: Any, tz: Any, weekdays_only: bool,
                      definition: str) -> _Definition:
    """Windows from local wall-clock times on every date (or weekday) around the data."""
    zone = _zone(tz)
    s_ns = _time_of_day(start, "start")
    e_ns = _time_of_day(end, "end", allow_24=True)

    def windows(d0: int, d1: int) -> Tuple[Int64Array, Int64Array, Int64Array]:
        days = np.arange(d0 - 2, d1 + 3, dtype=np.int64)  # day numbers since 1970-01-01
        if weekdays_only:
            days = days[(days + 3) % 7 < 5]  # 1970-01-01 was a Thursday: Monday is (d + 3) % 7 == 0
        day_ns = days * _NS_PER_DAY
        open_wall = day_ns + s_ns - (_NS_PER_DAY if e_ns <= s_ns else 0)
        opens = _localize_wall(open_wall, zone)
        closes = _localize_wall(day_ns + e_ns, zone)
        return opens, closes, _yyyymmdd(days)

    return _Definition(definition, zone, windows)


def _globex(calendar: CalendarLike, holidays: bool, trade_dates: CalendarLike) -> "_Definition":
    holidays = _flag(holidays, "holidays")
    if calendar is None:
        return _clock_definition(_GLOBEX_START, _GLOBEX_END, _CHICAGO, True, "globex(calendar=None)")
    cal = _calendar(calendar, "calendar")
    tdc = _calendar(trade_dates, "trade_dates") if holidays and trade_dates is not None else None
    definition = (f"globex(calendar={_cal_name(cal)!r}, holidays={holidays}, "
                  f"trade_dates={_cal_name(tdc) if tdc is None else repr(_cal_name(tdc))})")

    def windows(d0: int, d1: int) -> Tuple[Int64Array, Int64Array, Int64Array]:
        days, opens, closes = _schedule(cal, d0 - _SCHEDULE_MARGIN_DAYS, d1 + _SCHEDULE_MARGIN_DAYS)
        if tdc is not None:
            tdates = _valid_days(tdc, d0 - _SCHEDULE_MARGIN_DAYS, d1 + _TRADE_DATE_MARGIN_DAYS)
            pos = np.searchsorted(tdates, days, side="left")
            known = pos < tdates.shape[0]  # Globex days beyond the trade-date range lie past the data
            days, opens, closes = days[known], opens[known], closes[known]
            win_labels = tdates[pos[known]]
        else:
            win_labels = days
        return opens, closes, _yyyymmdd(win_labels)

    return _Definition(definition, _CHICAGO, windows)


def _rth(start: Any, end: Any, tz: Any, calendar: CalendarLike, holidays: bool,
         trade_dates: CalendarLike) -> "_Definition":
    holidays = _flag(holidays, "holidays")
    s_ns, e_ns = _time_of_day(start, "start"), _time_of_day(end, "end")
    if e_ns <= s_ns:
        raise ValueError(f"rth: end ({end!r}) must be after start ({start!r})")
    zone = _zone(tz)
    if calendar is None:
        definition = f"rth(start={start!r}, end={end!r}, tz={str(zone)!r}, calendar=None)"
        return _clock_definition(start, end, zone, True, definition)
    cal = _calendar(calendar, "calendar")
    tdc = _calendar(trade_dates, "trade_dates") if holidays and trade_dates is not None else None
    definition = (f"rth(start={start!r}, end={end!r}, tz={str(zone)!r}, "
                  f"calendar={_cal_name(cal)!r}, holidays={holidays}, "
                  f"trade_dates={_cal_name(tdc) if tdc is None else repr(_cal_name(tdc))})")

    def windows(d0: int, d1: int) -> Tuple[Int64Array, Int64Array, Int64Array]:
        days, _, closes = _schedule(cal, d0 - _SCHEDULE_MARGIN_DAYS, d1 + _SCHEDULE_MARGIN_DAYS)
        if tdc is not None:
            tdates = _valid_days(tdc, d0 - _SCHEDULE_MARGIN_DAYS, d1 + _SCHEDULE_MARGIN_DAYS)
            keep = np.isin(days, tdates)  # a trade date the hours calendar calls closed has no RTH
            days, closes = days[keep], closes[keep]
        opens = _localize_wall(days.astype(np.int64) * _NS_PER_DAY + s_ns, zone)
        ends = _localize_wall(days.astype(np.int64) * _NS_PER_DAY + e_ns, zone)
        ends = np.minimum(ends, closes)
        ok = ends > opens  # an early close before the RTH start leaves no window
        return opens[ok], ends[ok], _yyyymmdd(days[ok])

    return _Definition(definition, zone, windows)


def _daily(tz: Any, weekdays_only: bool) -> "_Definition":
    weekdays_only = _flag(weekdays_only, "weekdays_only")
    zone = _zone(tz)
    definition = f"daily(tz={str(zone)!r}, weekdays_only={weekdays_only})"
    return _clock_definition("00:00", "24:00", zone, weekdays_only, definition)


def _custom(start: Any, end: Any, tz: Any, weekdays_only: bool) -> "_Definition":
    weekdays_only = _flag(weekdays_only, "weekdays_only")
    _time_of_day(start, "start")
    _time_of_day(end, "end", allow_24=True)
    zone = _zone(tz)
    definition = (f"custom(start={start!r}, end={end!r}, tz={str(zone)!r}, "
                  f"weekdays_only={weekdays_only})")
    return _clock_definition(start, end, zone, weekdays_only, definition)
