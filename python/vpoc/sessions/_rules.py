"""Session window definitions: CME Globex, RTH, daily and custom clock windows.

Contract: each builder returns a ``_Definition`` whose ``windows(d0, d1)`` are the sorted, disjoint,
labelled UTC windows around local dates d0..d1; the same windows whatever span is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Tuple

import numpy as np
import numpy.typing as npt

from .._optional import require
from .._time import zone as _zone
from ._calendar import CalendarLike, _cal_name, _calendar, _schedule, _valid_days
from ._clock import _flag, _localize_wall, _time_of_day, _yyyymmdd

__all__ = ["HOLIDAY_MODES", "_Definition", "_clock_definition", "_custom", "_daily", "_globex",
           "_holidays_mode", "_rth"]

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
    the one a call over a wider span would give. Used by the public functions and vpoc.Live.

    For naming why a row is left out (``_dropped``): ``clock`` is the regular daily window on
    every date, weekends included (None: the windows are the clock itself); ``weekdays`` whether
    weekend dates have no window; ``gap`` the cause of rows between the clock's windows and
    ``gap_by_definition`` whether such rows are out by definition (overnight rows of ``rth``: counted,
    never warned about); ``open_days(d0, d1)`` the dates the calendar has hours (a clock date
    without them is a closed holiday), ``session_days(d0, d1)`` the dates that have a window (None:
    the open days; a date with hours but no window is a holiday the definition leaves out, e.g. no
    RTH on a day that is not a trade date); a row on a date with a window is after an early close."""

    definition: str
    zone: Any
    windows: Callable[[int, int], Tuple[Int64Array, Int64Array, Int64Array]]
    clock: Optional["_Definition"] = None
    weekdays: bool = False
    gap: str = "outside"
    gap_by_definition: bool = True
    open_days: Optional[Callable[[int, int], Int64Array]] = None
    session_days: Optional[Callable[[int, int], Int64Array]] = None

    def __post_init__(self) -> None:
        # every definition localizes wall-clock times with pandas: say so when it is missing,
        # here (vpoc.sessions.*, Live(session=...) at construction), not at the first row
        require("pandas", f"vpoc.sessions.{self.definition}", "sessions")


#: ``holidays=`` values: "merge" books a holiday's trading on the next trade date (CME);
#: "own" keeps every calendar trading day as its own session. True / False are the older spelling.
HOLIDAY_MODES = ("merge", "own")


def _holidays_mode(x: Any) -> str:
    """``holidays=`` as "merge" or "own" (True -> "merge", False -> "own")."""
    if isinstance(x, (bool, np.bool_)):
        return "merge" if x else "own"
    if isinstance(x, str):
        if x in HOLIDAY_MODES:
            return x
        raise ValueError(f"holidays must be 'merge' (holiday trading booked on the next trade date, "
                         f"as CME does) or 'own' (one session per calendar trading day), got {x!r}")
    raise TypeError(f"holidays must be 'merge' or 'own' (or True / False, the older spelling), "
                    f"got {type(x).__name__}")


def _clock_definition(start: Any, end: Any, tz: Any, weekdays_only: bool, definition: str,
                      gap: Optional[str] = None, gap_by_definition: bool = True) -> _Definition:
    """Windows from local wall-clock times on every date (or weekday) around the data."""
    zone = _zone(tz)
    s_ns = _time_of_day(start, "start")
    e_ns = _time_of_day(end, "end", allow_24=True)

    def make(weekdays: bool) -> Callable[[int, int], Tuple[Int64Array, Int64Array, Int64Array]]:
        def windows(d0: int, d1: int) -> Tuple[Int64Array, Int64Array, Int64Array]:
            days = np.arange(d0 - 2, d1 + 3, dtype=np.int64)  # day numbers since 1970-01-01
            if weekdays:
                days = days[(days + 3) % 7 < 5]  # 1970-01-01 was a Thursday: Monday is (d + 3) % 7 == 0
            day_ns = days * _NS_PER_DAY
            open_wall = day_ns + s_ns - (_NS_PER_DAY if e_ns <= s_ns else 0)
            opens = _localize_wall(open_wall, zone)
            closes = _localize_wall(day_ns + e_ns, zone)
            return opens, closes, _yyyymmdd(days)
        return windows

    if gap is None:
        gap = f"outside {_hhmm(start)}-{_hhmm(end)} {zone}"
    every_day = _Definition(definition, zone, make(False), None, False, gap, gap_by_definition)
    return _Definition(definition, zone, make(weekdays_only), every_day, weekdays_only, gap,
                       gap_by_definition)


def _hhmm(x: Any) -> str:
    return x.strftime("%H:%M") if hasattr(x, "strftime") else str(x)


_GLOBEX_HALT = f"daily halt {_GLOBEX_END}-{_GLOBEX_START} {_CHICAGO}"


def _globex(calendar: CalendarLike, holidays: Any, trade_dates: CalendarLike) -> "_Definition":
    mode = _holidays_mode(holidays)
    if calendar is None:
        return _clock_definition(_GLOBEX_START, _GLOBEX_END, _CHICAGO, True, "globex(calendar=None)",
                                 gap=_GLOBEX_HALT, gap_by_definition=False)
    cal = _calendar(calendar, "calendar")
    tdc = _calendar(trade_dates, "trade_dates") if mode == "merge" and trade_dates is not None else None
    definition = (f"globex(calendar={_cal_name(cal)!r}, holidays={mode!r}, "
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

    def open_days(d0: int, d1: int) -> Int64Array:
        return _schedule(cal, d0 - _SCHEDULE_MARGIN_DAYS, d1 + _SCHEDULE_MARGIN_DAYS)[0]

    clock = _clock_definition(_GLOBEX_START, _GLOBEX_END, _CHICAGO, False, definition).clock
    return _Definition(definition, _CHICAGO, windows, clock, True, _GLOBEX_HALT, False, open_days)


def _rth(start: Any, end: Any, tz: Any, calendar: CalendarLike, holidays: Any,
         trade_dates: CalendarLike) -> "_Definition":
    mode = _holidays_mode(holidays)
    s_ns, e_ns = _time_of_day(start, "start"), _time_of_day(end, "end")
    if e_ns <= s_ns:
        raise ValueError(f"rth: end ({end!r}) must be after start ({start!r})")
    zone = _zone(tz)
    gap = f"outside RTH {_hhmm(start)}-{_hhmm(end)} {zone}"
    if calendar is None:
        definition = f"rth(start={start!r}, end={end!r}, tz={str(zone)!r}, calendar=None)"
        return _clock_definition(start, end, zone, True, definition, gap=gap)
    cal = _calendar(calendar, "calendar")
    tdc = _calendar(trade_dates, "trade_dates") if mode == "merge" and trade_dates is not None else None
    definition = (f"rth(start={start!r}, end={end!r}, tz={str(zone)!r}, "
                  f"calendar={_cal_name(cal)!r}, holidays={mode!r}, "
                  f"trade_dates={_cal_name(tdc) if tdc is None else repr(_cal_name(tdc))})")

    def rth_days(d0: int, d1: int) -> Tuple[Int64Array, Int64Array]:
        days, _, closes = _schedule(cal, d0 - _SCHEDULE_MARGIN_DAYS, d1 + _SCHEDULE_MARGIN_DAYS)
        if tdc is not None:
            tdates = _valid_days(tdc, d0 - _SCHEDULE_MARGIN_DAYS, d1 + _SCHEDULE_MARGIN_DAYS)
            keep = np.isin(days, tdates)  # a trade date the hours calendar calls closed has no RTH
            days, closes = days[keep], closes[keep]
        return days, closes

    def windows(d0: int, d1: int) -> Tuple[Int64Array, Int64Array, Int64Array]:
        days, closes = rth_days(d0, d1)
        opens = _localize_wall(days.astype(np.int64) * _NS_PER_DAY + s_ns, zone)
        ends = _localize_wall(days.astype(np.int64) * _NS_PER_DAY + e_ns, zone)
        ends = np.minimum(ends, closes)
        ok = ends > opens  # an early close before the RTH start leaves no window
        return opens[ok], ends[ok], _yyyymmdd(days[ok])

    def open_days(d0: int, d1: int) -> Int64Array:
        return _schedule(cal, d0 - _SCHEDULE_MARGIN_DAYS, d1 + _SCHEDULE_MARGIN_DAYS)[0]

    clock = _clock_definition(start, end, zone, False, definition).clock
    return _Definition(definition, zone, windows, clock, True, gap, True, open_days,
                       lambda d0, d1: rth_days(d0, d1)[0])


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
