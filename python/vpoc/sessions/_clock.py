"""Timestamp inputs and wall-clock arithmetic for vpoc.sessions.

Contract: any accepted timestamp input becomes a sorted int64 ns UTC array (or a ValueError/TypeError
naming ``ts``); local wall-clock times become UTC ns by the IANA zone rules.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Optional, Tuple

import numpy as np
import numpy.typing as npt

from .._arrays import first_decrease, unmasked
from .._errors import input_error
from .._time import check_datetimes, check_time_unit, days_yyyymmdd, host, naive_pandas_error, timestamps_ns

__all__ = ["_date_span", "_flag", "_iso", "_localize_wall", "_options", "_sorted", "_time_of_day",
           "_timestamps", "_yyyymmdd"]

_NS_PER_SECOND = 1_000_000_000
_NS_PER_DAY = 86_400 * _NS_PER_SECOND
_TIME_RE = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")
Int64Array = npt.NDArray[np.int64]


def _timestamps(ts: Any, time_unit: Optional[str] = None) -> Int64Array:
    """``ts`` as a sorted int64 ns UTC array (see the module docs for accepted types); integers
    are in ``time_unit`` (None: ns, checked for plausibility)."""
    check_time_unit(time_unit)
    if hasattr(ts, "timestamp") and not hasattr(ts, "dtype") and not hasattr(ts, "iloc"):
        ts = ts.timestamp  # vpoc.io.Bars / Trades, vpoc.synth bars
    module = type(ts).__module__
    if module.startswith("pandas"):
        import pandas as pd

        if isinstance(ts, pd.DataFrame):
            raise TypeError("ts must be 1-D timestamps, got a DataFrame; pass one column")
        dtype = ts.dtype
        if isinstance(dtype, pd.DatetimeTZDtype):
            idx = pd.DatetimeIndex(ts).tz_convert("UTC").as_unit("ns")
            arr = idx.asi8
            if idx.hasnans:
                i = int(np.flatnonzero(np.asarray(idx.isna()))[0])
                raise input_error(f"ts[{i}] is NaT", "ts", i)
            return _sorted(check_datetimes(np.ascontiguousarray(arr, dtype=np.int64), "ts"))
        if dtype.kind == "M":
            raise naive_pandas_error("ts")
        ts = ts.to_numpy()
    elif module.startswith("polars"):
        if not hasattr(ts, "dtype"):
            raise TypeError("ts must be 1-D timestamps, got a polars DataFrame; pass one column")
        if getattr(ts.dtype, "time_zone", "") is None:
            raise ValueError("ts is a timezone-naive polars Datetime; localize it first, e.g. "
                             "ts.dt.replace_time_zone('America/Chicago'), or pass int64 ns UTC")
        ts = ts.to_numpy()  # a zoned polars Datetime converts to UTC datetime64
    arr = np.asarray(unmasked(host(ts, "ts"), "ts"))  # GPU timestamps: copied to the host (sessions live there)
    arr = timestamps_ns(arr, "ts", time_unit, "datetime64, or a timezone-aware pandas Series/DatetimeIndex")
    return _sorted(np.ascontiguousarray(arr))


def _sorted(arr: Int64Array) -> Int64Array:
    i = first_decrease(arr)
    if i > 0:
        raise input_error(f"ts must be sorted (non-decreasing): ts[{i}] = {_iso(arr[i])} is before the row "
                          f"before it, {_iso(arr[i - 1])}", "ts", i)
    return arr


def _options(closed: Any, keep_empty: Any) -> dict:
    if closed not in ("left", "right"):
        raise ValueError(f"closed must be 'left' or 'right', got {closed!r}")
    return dict(closed=closed, keep_empty=_flag(keep_empty, "keep_empty"))


def _flag(x: Any, name: str) -> bool:
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {x!r}")
    return bool(x)


def _time_of_day(x: Any, name: str, allow_24: bool = False) -> int:
    """Nanoseconds after local midnight of "HH:MM[:SS]" or a datetime.time ("24:00" if allowed)."""
    if isinstance(x, _dt.time):
        if x.tzinfo is not None:
            raise ValueError(f"{name} must be a naive time of day (the zone is tz=), got {x!r}")
        return ((x.hour * 60 + x.minute) * 60 + x.second) * _NS_PER_SECOND + x.microsecond * 1000
    if not isinstance(x, str):
        raise TypeError(f"{name} must be a 'HH:MM' string or a datetime.time, "
                        f"got {type(x).__name__}")
    m = _TIME_RE.match(x.strip())
    if m:
        h, mi, s = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
        if allow_24 and (h, mi, s) == (24, 0, 0):
            return _NS_PER_DAY
        if h < 24 and mi < 60 and s < 60:
            return ((h * 60 + mi) * 60 + s) * _NS_PER_SECOND
    extra = " or '24:00'" if allow_24 else ""
    raise ValueError(f"{name} must be a time of day 'HH:MM' or 'HH:MM:SS'{extra}, got {x!r}")


def _localize_wall(wall_ns: Int64Array, zone: Any) -> Int64Array:
    """Local wall-clock nanoseconds -> UTC ns; nonexistent times shift forward, ambiguous ones
    take the first occurrence (DST)."""
    import pandas as pd

    idx = pd.DatetimeIndex(np.asarray(wall_ns, dtype=np.int64).view("datetime64[ns]"))
    loc = idx.tz_localize(zone, ambiguous=np.ones(idx.shape[0], dtype=bool),
                          nonexistent="shift_forward")
    return np.asarray(loc.as_unit("ns").asi8, dtype=np.int64)


def _date_span(t: Int64Array, zone: Any) -> Tuple[int, int]:
    """Local dates (days since 1970-01-01) of the first and last timestamp."""
    import pandas as pd

    ends = pd.DatetimeIndex(t[[0, -1]].view("datetime64[ns]")).tz_localize("UTC").tz_convert(zone)
    days = ends.tz_localize(None).normalize().as_unit("ns").asi8 // _NS_PER_DAY
    return int(days[0]), int(days[1])


#: Days since 1970-01-01 -> YYYYMMDD integers (vpoc._time's rule, shared with datetime session ids).
_yyyymmdd = days_yyyymmdd


def _iso(ns: Any) -> str:
    ns = int(ns)
    return str(np.datetime64(ns // 1_000_000_000, "s") if ns % 1_000_000_000 == 0
               else np.datetime64(ns, "ns")) + "Z"
