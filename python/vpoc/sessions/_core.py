"""Compatibility module: the names of the former single-file ``vpoc.sessions`` implementation.

Contract: re-exports only (vpoc.live imports the private builders from here); the code lives in
_calendar, _clock, _container, _rules, _assign and _public.
"""


from ._assign import _assign, _empty, _run  # noqa: F401
from ._calendar import (DEFAULT_CALENDAR, DEFAULT_TRADE_DATES, CalendarLike, _cal_name,  # noqa: F401
                        _calendar, _schedule, _valid_days)
from ._clock import (_date_span, _flag, _iso, _localize_wall, _options, _sorted,  # noqa: F401
                     _time_of_day, _timestamps, _yyyymmdd)
from ._container import Sessions  # noqa: F401
from ._guard import check_hours  # noqa: F401
from ._public import custom, daily, globex, rth  # noqa: F401
from ._rules import (_Definition, _clock_definition, _custom, _daily, _globex,  # noqa: F401
                     _rth)

__all__ = [
    "DEFAULT_CALENDAR",
    "DEFAULT_TRADE_DATES",
    "Sessions",
    "custom",
    "daily",
    "globex",
    "rth",
]
