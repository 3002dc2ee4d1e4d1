"""Guard for regular-hours windows given in another time zone than the exchange's.

Contract: ``check_hours(start, end, tz)`` is True when ``[start, end)`` in ``tz`` lies inside the
exchange's regular hours on winter and summer dates; otherwise it warns (SessionHoursWarning) or raises.
"""

from __future__ import annotations

import datetime as _dt
import warnings
from typing import Any, Optional, Sequence

from .._time import zone as _zone
from ._clock import _time_of_day

__all__ = ["ES_RTH", "SessionHoursWarning", "check_hours"]

#: Regular trading hours of CME equity-index futures (ES): 08:30-15:15 America/Chicago.
ES_RTH = ("08:30", "15:15", "America/Chicago")
# Dates on which a window is compared: US and European winter time, the weeks when only the US
# has moved its clocks (March) or only Europe has moved them back (late October), US summer time.
_DATES = (_dt.date(2025, 1, 15), _dt.date(2025, 3, 12), _dt.date(2025, 7, 16), _dt.date(2025, 10, 29))


class SessionHoursWarning(UserWarning):
    """A regular-hours window, read in its time zone, lies outside the exchange's regular hours."""


def _wall(day: _dt.date, ns: int, tz: Any) -> _dt.datetime:
    return (_dt.datetime.combine(day, _dt.time(0), tzinfo=tz)
            + _dt.timedelta(microseconds=ns // 1000))


def check_hours(start: Any = "08:30", end: Any = "15:15", tz: Any = "America/Chicago", *,
                exchange: Sequence[Any] = ES_RTH, dates: Optional[Sequence[_dt.date]] = None,
                on_mismatch: str = "warn", stacklevel: int = 2) -> bool:
    """Whether the window ``[start, end)`` local time in ``tz`` lies inside the exchange's regular
    hours ``exchange = (start, end, tz)`` (default ES: 08:30-15:15 America/Chicago).

    Each of ``dates`` (default: Wednesdays in January, mid-March, July and late October 2025, so
    that zones that change their clocks on other dates than the US are caught) is checked: the
    window's start and end, converted to the exchange's zone, must fall on one date between the
    exchange's open and close. A window outside them (e.g. ``rth(tz="UTC")``: 08:30-15:15 UTC is
    02:30-09:15 Chicago, the European morning) warns with ``SessionHoursWarning``
    (``on_mismatch="warn"``, default), raises ValueError (``"raise"``), or only returns False
    (``"ignore"``). Returns True when the window is inside on every date.
    """
    if on_mismatch not in ("warn", "raise", "ignore"):
        raise ValueError(f"on_mismatch must be 'warn', 'raise' or 'ignore', got {on_mismatch!r}")
    if not isinstance(exchange, (tuple, list)) or len(exchange) != 3:
        raise TypeError("exchange must be (start, end, tz), e.g. ('08:30', '15:15', 'America/Chicago')")
    s_ns, e_ns = _time_of_day(start, "start"), _time_of_day(end, "end", allow_24=True)
    if e_ns <= s_ns:
        raise ValueError(f"end ({end!r}) must be after start ({start!r})")
    zone = _zone(tz)
    xs, xe = _time_of_day(exchange[0], "exchange start"), _time_of_day(exchange[1], "exchange end")
    xzone = _zone(exchange[2])
    starts: dict = {}  # the window's start in the exchange's zone, by date
    for day in (dates if dates is not None else _DATES):
        a = _wall(day, s_ns, zone).astimezone(xzone)
        starts[day] = a
        b = _wall(day, e_ns, zone).astimezone(xzone)
        a_ns = ((a.hour * 60 + a.minute) * 60 + a.second) * 10**9
        b_ns = ((b.hour * 60 + b.minute) * 60 + b.second) * 10**9
        if b.date() > a.date() and b_ns == 0:
            b_ns = 86_400 * 10**9  # ends at midnight
        elif b.date() != a.date():
            b_ns = 2 * 86_400 * 10**9
        if a_ns >= xs and b_ns <= xe:
            continue
        if str(zone) == str(xzone):  # the exchange's own zone: other hours, not another clock
            advice = (f"these are not the regular hours {_fmt(exchange[0])}-{_fmt(exchange[1])}: for ES RTH pass "
                      f"start={_fmt(exchange[0])!r}; if they are another market's hours on purpose, filter "
                      "vpoc.sessions.SessionHoursWarning")
        else:
            advice = (f"The session time zone is the zone of the RTH times, not of the data (read_bars tz=); for "
                      f"ES RTH pass tz={str(xzone)!r} (or times in {zone} that match)")
        return _mismatch(f"RTH {_fmt(start)}-{_fmt(end)} in {zone} is {a:%H:%M}-{b:%H:%M} {xzone} on {day}: "
                         f"outside the exchange's regular hours {_fmt(exchange[0])}-{_fmt(exchange[1])} "
                         f"{xzone}. " + advice, on_mismatch, stacklevel)
    days = sorted(starts)
    first = next((d for d in days if f"{starts[d]:%H:%M}" != f"{starts[days[0]]:%H:%M}"), None)
    if first is not None:  # inside the hours on every date, but not at one exchange time: the clocks differ
        return _mismatch(f"RTH {_fmt(start)}-{_fmt(end)} in {zone} starts at {starts[days[0]]:%H:%M} {xzone} on "
                         f"{days[0]} but {starts[first]:%H:%M} on {first}: {zone} does not change its clocks with "
                         f"{xzone}, so the window moves against the exchange's hours {_fmt(exchange[0])}-"
                         f"{_fmt(exchange[1])} {xzone} for part of the year. The session time zone is the zone of the "
                         f"RTH times, not of the data (read_bars tz=); for ES RTH pass tz={str(xzone)!r}",
                         on_mismatch, stacklevel)
    return True


def _mismatch(msg: str, on_mismatch: str, stacklevel: int) -> bool:
    """check_hours' answer to a window outside the exchange's hours: ValueError, a warning (``stacklevel``
    as check_hours was given it), or False."""
    if on_mismatch == "raise":
        raise ValueError(msg)
    if on_mismatch == "warn":
        warnings.warn(msg, SessionHoursWarning, stacklevel=stacklevel + 1)
    return False


def _fmt(x: Any) -> str:
    return x.strftime("%H:%M") if hasattr(x, "strftime") else str(x)
