"""The public session functions: ``globex``, ``rth``, ``daily``, ``custom``.

Contract: each validates its arguments, builds its window definition (``_rules``) and assigns the
timestamps (``_assign``); see docs/sessions.md for the rules and the calendar choice.
"""

from __future__ import annotations

from typing import Any, Optional

from ._assign import _run
from ._calendar import DEFAULT_CALENDAR, DEFAULT_TRADE_DATES, CalendarLike
from ._clock import _options, _timestamps
from ._container import Sessions
from ._rules import _CHICAGO, _custom, _daily, _globex, _rth

__all__ = ["custom", "daily", "globex", "rth"]


def globex(ts: Any, *, calendar: CalendarLike = DEFAULT_CALENDAR, holidays: bool = True,
           trade_dates: CalendarLike = DEFAULT_TRADE_DATES, closed: str = "left",
           keep_empty: bool = False, outside: str = "drop",
           time_unit: Optional[str] = None) -> Sessions:
    """CME Globex sessions: 17:00 America/Chicago (previous evening) to 16:00, per trade date.

    ``calendar``: a ``pandas_market_calendars`` calendar (name or instance) giving each Globex
    day's open and close, so early closes (12:15 CT before Independence Day, Black Friday,
    Christmas Eve) and holiday halts (12:00 CT) end their window; closed days have none.
    ``None``: the clock alone, every Monday-Friday date D is ``[D-1 17:00, D 16:00)`` Chicago
    (no holidays, no early closes, no calendar package needed).
    ``holidays=True`` (default): a Globex day that is not a trade date of ``trade_dates``
    (e.g. the July 4 session that halts at 12:00 CT) belongs to the next trade date, as CME
    books it. ``holidays=False`` (or ``trade_dates=None``): every Globex day of ``calendar``
    is its own session.
    ``closed``: "left" (row times are bar open / trade times: windows are ``[start, end)``) or
    "right" (bar close times, as in NinjaTrader exports: ``(start, end]``).
    ``keep_empty``: also return sessions with no rows (every trade date between the first and
    the last row's). ``outside``: "drop" (default; see ``Sessions.index``) or "raise" for rows
    in no window (the 16:00-17:00 halt, weekends, after an early close).
    ``time_unit``: the unit of integer ``ts`` ("s", "ms", "us", "ns"; None = "ns"; datetimes carry
    their own). Integers that are 1990..2100 times only in another unit raise ValueError naming it
    (``pd.date_range(...).asi8`` is microseconds under pandas 3).
    """
    t = _timestamps(ts, time_unit)
    opts = _options(closed, keep_empty, outside)
    return _run(t, _globex(calendar, holidays, trade_dates), opts)


def rth(ts: Any, start: Any = "08:30", end: Any = "15:15", tz: Any = _CHICAGO, *,
        calendar: CalendarLike = DEFAULT_CALENDAR, holidays: bool = True,
        trade_dates: CalendarLike = DEFAULT_TRADE_DATES, closed: str = "left",
        keep_empty: bool = False, outside: str = "drop", time_unit: Optional[str] = None) -> Sessions:
    """Regular trading hours: ``[start, end)`` local time in ``tz`` on each trade date.

    Defaults are ES futures RTH, 08:30-15:15 America/Chicago (the cash index is 08:30-15:00).
    With a ``calendar`` a session ends at ``min(end, the calendar's close)``, so early closes
    (12:15 CT for ES) shorten it; trade dates come from ``trade_dates`` (``holidays=True``) or
    are every open day of ``calendar`` (``holidays=False`` or ``trade_dates=None``, holiday
    half days included).
    ``calendar=None``: every Monday-Friday, no holidays or early closes. Overnight rows are
    outside every session: they are dropped (``Sessions.index``) unless ``outside="raise"``.
    ``closed``, ``keep_empty``, ``time_unit``: as in :func:`globex`. Requires ``end > start``.
    """
    t = _timestamps(ts, time_unit)
    opts = _options(closed, keep_empty, outside)
    return _run(t, _rth(start, end, tz, calendar, holidays, trade_dates), opts)


def daily(ts: Any, tz: Any = "UTC", *, weekdays_only: bool = False, closed: str = "left",
          keep_empty: bool = False, outside: str = "drop", time_unit: Optional[str] = None) -> Sessions:
    """Calendar days in ``tz``: ``[D 00:00, D+1 00:00)`` local time, labelled D.

    DST days are 23 or 25 hours long. ``weekdays_only``: Saturdays and Sundays have no
    session (their rows are outside). ``closed``, ``keep_empty`` (every day, or weekday,
    between the first and last row's), ``outside``, ``time_unit``: as in :func:`globex`.
    """
    t = _timestamps(ts, time_unit)
    opts = _options(closed, keep_empty, outside)
    return _run(t, _daily(tz, weekdays_only), opts)


def custom(ts: Any, start: Any, end: Any, tz: Any, *, weekdays_only: bool = False,
           closed: str = "left", keep_empty: bool = False, outside: str = "drop",
           time_unit: Optional[str] = None) -> Sessions:
    """A daily window from ``start`` to ``end`` local time in ``tz`` ("HH:MM[:SS]" or
    ``datetime.time``), labelled with the date on which it ends.

    ``end > start``: ``[D start, D end)`` labelled D. ``end <= start``: the window spans
    midnight, ``[D-1 start, D end)`` labelled D (like Globex: the evening belongs to the next
    date; ``start == end`` is a 24-hour session). ``end="24:00"`` is midnight at the end of D.
    Local times that do not exist (spring forward) move forward to the first valid instant;
    ambiguous ones (fall back) take the first occurrence. ``weekdays_only``: only dates D from
    Monday to Friday have a session. ``closed``, ``keep_empty``, ``outside``, ``time_unit``: as in
    :func:`globex`.
    """
    t = _timestamps(ts, time_unit)
    opts = _options(closed, keep_empty, outside)
    return _run(t, _custom(start, end, tz, weekdays_only), opts)
