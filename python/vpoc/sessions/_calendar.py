"""pandas_market_calendars access for vpoc.sessions: named calendars, schedules and trade dates.

Contract: calendars by name or instance (ValueError/TypeError naming the argument otherwise);
schedules and valid days as day numbers since 1970-01-01 plus UTC ns, cached per calendar year.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from .._optional import require

if TYPE_CHECKING:  # pragma: no cover
    from pandas_market_calendars import MarketCalendar

__all__ = ["CalendarLike", "DEFAULT_CALENDAR", "DEFAULT_TRADE_DATES", "_cal_name", "_calendar",
           "_schedule", "_valid_days"]

#: (12:15 CT) and holiday halts (12:00 CT).
DEFAULT_CALENDAR: str = "CME Globex Equity"
#: pandas_market_calendars calendar of CME trade dates (dates that settle; holidays are not).
DEFAULT_TRADE_DATES: str = "CME_TradeDate"

_NS_PER_DAY = 86_400 * 1_000_000_000
Int64Array = npt.NDArray[np.int64]
CalendarLike = Union[str, "MarketCalendar", None]


def _calendar(cal: Any, name: str) -> Any:
    pmc = require("pandas_market_calendars", f"{name}={cal!r}", "sessions",
                  alternative=f"or pass {name}=None (no holidays or early closes)")
    if isinstance(cal, pmc.MarketCalendar):
        return cal
    if not isinstance(cal, str):
        raise TypeError(f"{name} must be a pandas_market_calendars calendar name or instance, "
                        f"got {type(cal).__name__}")
    if cal not in _NAMED:
        try:
            _NAMED[cal] = pmc.get_calendar(cal)
        except (RuntimeError, KeyError, ValueError):
            raise ValueError(f"{name}={cal!r} is not a pandas_market_calendars calendar (see "
                             "pandas_market_calendars.get_calendar_names())") from None
    return _NAMED[cal]


#: Calendars created from a name, shared between calls (read only); their schedules are
#: cached per calendar year.
_NAMED: Dict[str, Any] = {}


def _cal_name(cal: Any) -> Optional[str]:
    if cal is None:
        return None
    aliases = getattr(cal, "aliases", None)
    return aliases[0] if aliases else str(getattr(cal, "name", type(cal).__name__))


def _to_days(index: Any) -> Int64Array:
    """Session dates of a calendar (DatetimeIndex, naive or UTC midnight) -> days since epoch."""
    import pandas as pd

    idx = pd.DatetimeIndex(index)
    if idx.tz is not None:
        idx = idx.tz_localize(None)
    return np.asarray(idx.normalize().as_unit("ns").asi8 // _NS_PER_DAY, dtype=np.int64)


def _year(day: int) -> int:
    return int(np.datetime64(day, "D").astype("datetime64[Y]").astype(np.int64)) + 1970


def _by_year(cal: Any, d0: int, d1: int, one_year: Callable[[Any, int], Tuple[Int64Array, ...]]
             ) -> Tuple[Int64Array, ...]:
    """Whole calendar years of ``one_year(cal, year)`` (cached for calendars given by name),
    concatenated and cut to the days d0..d1 (the first array holds the days)."""
    key = next((k for k, v in _NAMED.items() if v is cal), None)
    years = range(_year(d0), _year(d1) + 1)
    parts = [_year_cached(one_year, key, y) if key is not None else one_year(cal, y)
             for y in years]
    cols = tuple(np.concatenate(c) for c in zip(*parts))
    keep = (cols[0] >= d0) & (cols[0] <= d1)
    return tuple(c[keep] for c in cols)


@lru_cache(maxsize=256)
def _year_cached(one_year: Callable[[Any, int], Tuple[Int64Array, ...]], name: str,
                 year: int) -> Tuple[Int64Array, ...]:
    return one_year(_NAMED[name], year)


def _schedule_year(cal: Any, year: int) -> Tuple[Int64Array, Int64Array, Int64Array]:
    import pandas as pd

    sched = cal.schedule(start_date=f"{year}-01-01", end_date=f"{year}-12-31")
    days = _to_days(sched.index)
    opens = pd.DatetimeIndex(sched["market_open"]).tz_convert("UTC").as_unit("ns").asi8
    closes = pd.DatetimeIndex(sched["market_close"]).tz_convert("UTC").as_unit("ns").asi8
    return days, np.asarray(opens, dtype=np.int64), np.asarray(closes, dtype=np.int64)


def _valid_days_year(cal: Any, year: int) -> Tuple[Int64Array]:
    return (_to_days(cal.valid_days(start_date=f"{year}-01-01", end_date=f"{year}-12-31")),)


def _schedule(cal: Any, d0: int, d1: int) -> Tuple[Int64Array, Int64Array, Int64Array]:
    """(day, open_ns, close_ns) of each open day of ``cal`` between two day numbers."""
    days, opens, closes = _by_year(cal, d0, d1, _schedule_year)
    return days, opens, closes


def _valid_days(cal: Any, d0: int, d1: int) -> Int64Array:
    return _by_year(cal, d0, d1, _valid_days_year)[0]
