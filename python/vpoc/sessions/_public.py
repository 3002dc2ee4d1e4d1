"""The public session functions: ``globex``, ``rth``, ``daily``, ``custom``.

Contract: each validates its arguments, builds its window definition (``_rules``) and assigns the
timestamps (``_assign``); see docs/sessions.md for the rules and the calendar choice.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from .._time import bar_opens, check_label, interval_ns
from .._validate import check_rows
from ._assign import _run
from ._calendar import DEFAULT_CALENDAR, DEFAULT_TRADE_DATES, CalendarLike
from ._clock import _options, _timestamps
from ._container import Sessions
from ._dropped import check_on_outside
from ._guard import check_hours
from ._rules import _CHICAGO, _custom, _daily, _globex, _rth

__all__ = ["custom", "daily", "globex", "rth"]


def _prepare(what: str, ts: Any, time_unit: Optional[str], label: Any, interval: Any, volume: Any,
             closed: Any, keep_empty: Any, on_outside: Any, outside: Any) -> Tuple[Any, dict]:
    """Checked arguments shared by the four functions: the timestamps the windows are matched
    against (bar opens when ``label="close"``) and the options of ``_assign``."""
    opts = _options(closed, keep_empty)
    opts["on_outside"] = check_on_outside(on_outside, outside)
    stamps = _timestamps(ts, time_unit)
    if label == "close" and closed == "right":
        raise ValueError("label='close' and closed='right' both say the timestamps are bar closes; "
                         "pass label='close' only (closed='right' is the older spelling)")
    if stamps.shape[0] == 0:  # nothing to shift: the label and interval are only checked
        check_label(label)
        t, step = stamps, interval_ns(interval)
    else:
        t, step = bar_opens(stamps, label, interval, name="ts")
    if volume is not None:
        if hasattr(volume, "to_numpy"):
            volume = volume.to_numpy()
        v = np.asarray(volume)
        if v.dtype.kind not in "iuf" or v.ndim != 1:
            raise TypeError(f"volume must be a 1-D numeric array (one value per timestamp), got "
                            f"{'dtype ' + str(v.dtype) if v.dtype.kind not in 'iuf' else f'shape {v.shape}'}")
        if v.shape[0] != t.shape[0]:
            raise ValueError(f"volume has {v.shape[0]} values but ts has {t.shape[0]} timestamps")
        check_rows({"volume": v}, lambda i: f"vpoc.sessions.{what}: row {i}")  # read_bars' rule (vpoc._validate)
        volume = v.astype(np.float64, copy=False)
    opts.update(volume=volume, step=step, label=label, what=what, stamps=stamps)
    return t, opts


def globex(ts: Any, *, calendar: CalendarLike = DEFAULT_CALENDAR, holidays: Any = "merge",
           trade_dates: CalendarLike = DEFAULT_TRADE_DATES, closed: str = "left",
           keep_empty: bool = False, label: str = "open", interval: Any = None,
           volume: Any = None, on_outside: Optional[str] = None, outside: Optional[str] = None,
           time_unit: Optional[str] = None) -> Sessions:
    """CME Globex sessions: 17:00 America/Chicago (previous evening) to 16:00, per trade date.

    ``calendar``: a ``pandas_market_calendars`` calendar (name or instance) giving each Globex
    day's open and close, so early closes (12:15 CT before Independence Day, Black Friday,
    Christmas Eve) and holiday halts (12:00 CT) end their window; closed days have none.
    ``None``: the clock alone, every Monday-Friday date D is ``[D-1 17:00, D 16:00)`` Chicago
    (no holidays, no early closes, no calendar package needed).
    ``holidays="merge"`` (default; ``True`` is the older spelling): a Globex day that is not a
    trade date of ``trade_dates`` (e.g. the July 4 session that halts at 12:00 CT) belongs to the
    next trade date, as CME books it (``Sessions.merged_days`` counts the days a session holds).
    ``holidays="own"`` (``False``, or ``trade_dates=None``): every Globex day of ``calendar`` is
    its own session.
    ``label``: "open" (default; timestamps are bar opens or trade times) or "close" (bar closes:
    each becomes its bar's open, ``ts - interval``, before it is matched to the windows);
    ``interval``: the bar length (seconds, timedelta or "1min"; None: the modal spacing).
    ``closed``: "left" (windows are ``[start, end)``) or "right" (``(start, end]``, the older way
    to say bar closes; use ``label="close"``).
    ``keep_empty``: also return sessions with no rows (every trade date between the first and
    the last row's).
    ``volume``: per-row volume, only to report the volume of the rows left out
    (``Sessions.dropped_volume``; NaN without it).
    ``on_outside``: rows in no window (the 16:00-17:00 halt, weekends, holidays, after an early
    close) are left out and counted (``Sessions.dropped_rows``, ``dropped_by_cause``); "warn"
    (default) emits a ``vpoc.DroppedRowsWarning`` naming count, shares and likely cause when they
    are more than 0.1% of the rows or of the volume (or look like close stamps); "drop" does not
    warn; "raise" makes any such row a ValueError naming it. ``outside="drop"|"raise"`` is the
    older spelling.
    ``time_unit``: the unit of integer ``ts`` ("s", "ms", "us", "ns"; None = "ns"; datetimes carry
    their own). Integers that are 1990..2100 times only in another unit raise ValueError naming it
    (``pd.date_range(...).asi8`` is microseconds under pandas 3).
    """
    t, opts = _prepare("globex", ts, time_unit, label, interval, volume, closed, keep_empty,
                       on_outside, outside)
    return _run(t, _globex(calendar, holidays, trade_dates), opts)


def rth(ts: Any, start: Any = "08:30", end: Any = "15:15", tz: Any = _CHICAGO, *,
        calendar: CalendarLike = DEFAULT_CALENDAR, holidays: Any = "merge",
        trade_dates: CalendarLike = DEFAULT_TRADE_DATES, closed: str = "left",
        keep_empty: bool = False, label: str = "open", interval: Any = None, volume: Any = None,
        on_outside: Optional[str] = None, outside: Optional[str] = None,
        time_unit: Optional[str] = None) -> Sessions:
    """Regular trading hours: ``[start, end)`` local time in ``tz`` on each trade date.

    Defaults are ES futures RTH, 08:30-15:15 America/Chicago (the cash index is 08:30-15:00).
    With a ``calendar`` a session ends at ``min(end, the calendar's close)``, so early closes
    (12:15 CT for ES) shorten it; trade dates come from ``trade_dates`` (``holidays="merge"``) or
    are every open day of ``calendar`` (``holidays="own"`` or ``trade_dates=None``, holiday
    half days included).
    ``calendar=None``: every Monday-Friday, no holidays or early closes. Overnight rows are
    outside every session by definition: they are left out and counted
    (``Sessions.dropped_by_cause["outside RTH"]``), never warned about nor raised.
    With the default calendar, a window that lies outside the ES regular hours (08:30-15:15
    America/Chicago) in ``tz`` warns (:func:`check_hours`; e.g. tz="UTC" with 08:30-15:15).
    ``label``, ``interval``, ``closed``, ``keep_empty``, ``volume``, ``on_outside``,
    ``time_unit``: as in :func:`globex`. Requires ``end > start``.
    """
    t, opts = _prepare("rth", ts, time_unit, label, interval, volume, closed, keep_empty,
                       on_outside, outside)
    defn = _rth(start, end, tz, calendar, holidays, trade_dates)
    if isinstance(calendar, str) and calendar == DEFAULT_CALENDAR:
        # a window outside ES hours (warned here) can lie inside a holiday's overnight Globex session,
        # which fills it: whole days left out as "holiday" are then no sign of a wrong calendar
        opts["whole_days"] = check_hours(start, end, tz, stacklevel=3)
    return _run(t, defn, opts)


def daily(ts: Any, tz: Any = "UTC", *, weekdays_only: bool = False, closed: str = "left",
          keep_empty: bool = False, label: str = "open", interval: Any = None, volume: Any = None,
          on_outside: Optional[str] = None, outside: Optional[str] = None,
          time_unit: Optional[str] = None) -> Sessions:
    """Calendar days in ``tz``: ``[D 00:00, D+1 00:00)`` local time, labelled D.

    DST days are 23 or 25 hours long. ``weekdays_only``: Saturdays and Sundays have no
    session (their rows are outside). ``closed``, ``keep_empty`` (every day, or weekday,
    between the first and last row's), ``label``, ``interval``, ``volume``, ``on_outside``,
    ``time_unit``: as in :func:`globex`.
    """
    t, opts = _prepare("daily", ts, time_unit, label, interval, volume, closed, keep_empty,
                       on_outside, outside)
    return _run(t, _daily(tz, weekdays_only), opts)


def custom(ts: Any, start: Any, end: Any, tz: Any, *, weekdays_only: bool = False,
           closed: str = "left", keep_empty: bool = False, label: str = "open", interval: Any = None,
           volume: Any = None, on_outside: Optional[str] = None, outside: Optional[str] = None,
           time_unit: Optional[str] = None) -> Sessions:
    """A daily window from ``start`` to ``end`` local time in ``tz`` ("HH:MM[:SS]" or
    ``datetime.time``), labelled with the date on which it ends.

    ``end > start``: ``[D start, D end)`` labelled D. ``end <= start``: the window spans
    midnight, ``[D-1 start, D end)`` labelled D (like Globex: the evening belongs to the next
    date; ``start == end`` is a 24-hour session). ``end="24:00"`` is midnight at the end of D.
    Local times that do not exist (spring forward) move forward to the first valid instant;
    ambiguous ones (fall back) take the first occurrence. ``weekdays_only``: only dates D from
    Monday to Friday have a session. Rows outside the window are out by definition: counted
    (``dropped_by_cause["outside window"]``), not warned about; weekend rows (``weekdays_only``)
    are. ``label``, ``interval``, ``closed``, ``keep_empty``, ``volume``, ``on_outside``,
    ``time_unit``: as in :func:`globex`.
    """
    t, opts = _prepare("custom", ts, time_unit, label, interval, volume, closed, keep_empty,
                       on_outside, outside)
    return _run(t, _custom(start, end, tz, weekdays_only), opts)
