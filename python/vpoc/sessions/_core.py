"""Session offsets and trading-date labels from timestamps: CME Globex, RTH, daily, custom windows.

Contract: DST-correct (``zoneinfo`` rules), holidays and early closes from pandas_market_calendars;
the result's ``offsets`` / ``index`` plug straight into ``from_bars`` / ``from_trades``.

Every definition is a set of half-open windows ``[start, end)`` in UTC, each labelled with a
trading date (``YYYYMMDD``); a session is the union of the windows that share a label. Rows
(timestamps, sorted) are assigned to the window that contains them; rows in no window (the
daily 16:00-17:00 halt, weekends, after an early close, overnight rows for ``rth``) are
dropped and reported through ``Sessions.index`` / ``Sessions.mask``, or raise with
``outside="raise"``. See docs/sessions.md for the rules and the calendar choice.

Example
-------
>>> s = vpoc.sessions.globex(bars.timestamp)                        # doctest: +SKIP
>>> h, l, c, v = s.take(bars.high, bars.low, bars.close, bars.volume)  # doctest: +SKIP
>>> prof = vpoc.from_bars(h, l, c, v, offsets=s.offsets, tick_size=0.25)  # doctest: +SKIP
>>> prof.poc, s.labels                                               # doctest: +SKIP
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from .._arrays import unmasked
from .._optional import require
from .._time import check_time_unit, datetime64_ns, epoch_ns
from .._time import zone as _zone

if TYPE_CHECKING:  # pragma: no cover
    from pandas_market_calendars import MarketCalendar

__all__ = [
    "DEFAULT_CALENDAR",
    "DEFAULT_TRADE_DATES",
    "Sessions",
    "custom",
    "daily",
    "globex",
    "rth",
]

#: pandas_market_calendars calendar with the CME Globex equity (ES) hours, early closes
#: (12:15 CT) and holiday halts (12:00 CT).
DEFAULT_CALENDAR: str = "CME Globex Equity"
#: pandas_market_calendars calendar of CME trade dates (dates that settle; holidays are not).
DEFAULT_TRADE_DATES: str = "CME_TradeDate"

_NS_PER_SECOND = 1_000_000_000
_NS_PER_DAY = 86_400 * _NS_PER_SECOND
_CHICAGO = "America/Chicago"
_GLOBEX_START = "17:00"
_GLOBEX_END = "16:00"
# Margins (days) around the data's dates when reading calendars: a Globex window opens the
# evening before its date, and a holiday folds into a trade date a few days later.
_SCHEDULE_MARGIN_DAYS = 7
_TRADE_DATE_MARGIN_DAYS = 21
_TIME_RE = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")

Int64Array = npt.NDArray[np.int64]
CalendarLike = Union[str, "MarketCalendar", None]


# --------------------------------------------------------------------------- result


@dataclass(frozen=True, repr=False, eq=False)
class Sessions:
    """Sessions of a sorted timestamp array: CSR ``offsets`` over the kept rows plus labels.

    Attributes
    ----------
    offsets : int64 (S+1,)
        Session ``s`` is kept rows ``offsets[s] .. offsets[s+1]-1`` (pass as ``offsets=``).
    labels : int64 (S,)
        Trading date of each session as ``YYYYMMDD``.
    start_ns, end_ns : int64 (S,)
        UTC bounds of each session, nanoseconds since the epoch: the session is
        ``[start_ns, end_ns)`` (``(start_ns, end_ns]`` when built with ``closed="right"``).
        A session made of several windows (a holiday folded into the next trade date) spans
        from its first window's start to its last window's end; rows in the gaps between its
        windows are not part of it.
    index : int64 (K,) or None
        Positions, in the input, of the rows that belong to a session (K kept rows, sorted).
        ``None`` when every input row is kept; then ``offsets`` index the input directly.
    n_input : int
        Number of input timestamps N.
    definition : str
        The call that built these sessions, e.g. ``"globex(calendar='CME Globex Equity')"``.

    Use ``take(array)`` to select the kept rows of any per-row array (``array[index]``, or the
    array itself when ``index`` is None); ``session_ids`` is the label of every kept row and
    ``mask`` the kept rows as a boolean array over the input.
    """

    offsets: Int64Array
    labels: Int64Array
    start_ns: Int64Array
    end_ns: Int64Array
    index: Optional[Int64Array]
    n_input: int
    definition: str

    @property
    def n_sessions(self) -> int:
        """Number of sessions S."""
        return int(self.labels.shape[0])

    def __len__(self) -> int:
        return self.n_sessions

    def __repr__(self) -> str:
        span = f", {self.labels[0]} .. {self.labels[-1]}" if self.n_sessions else ""
        return (f"Sessions({self.n_sessions} sessions{span}, {self.n_kept} of {self.n_input} rows "
                f"kept, {self.definition})")

    @property
    def n_kept(self) -> int:
        """Number of rows that belong to a session (``offsets[-1]``)."""
        return int(self.offsets[-1])

    @property
    def n_dropped(self) -> int:
        """Number of input rows outside every session."""
        return self.n_input - self.n_kept

    @cached_property
    def session_ids(self) -> Int64Array:
        """Trading date (``YYYYMMDD``) of every kept row, int64 (K,) (computed on first use)."""
        return np.repeat(self.labels, np.diff(self.offsets))

    @cached_property
    def mask(self) -> npt.NDArray[np.bool_]:
        """Boolean (N,) over the input rows: True where the row belongs to a session."""
        out = np.zeros(self.n_input, dtype=bool)
        if self.index is None:
            out[:] = True
        else:
            out[self.index] = True
        return out

    def take(self, *arrays: Any) -> Any:
        """The kept rows of one or more per-row arrays (numpy, torch, pandas, lists).

        Returns ``array[index]`` (``.iloc`` for pandas objects), or the array itself when no
        row was dropped; a tuple when several arrays are given. Each array must have the
        input's length N.
        """
        if not arrays:
            raise TypeError("take() needs at least one array")
        out = tuple(self._take_one(a, i) for i, a in enumerate(arrays))
        return out[0] if len(out) == 1 else out

    def _take_one(self, array: Any, position: int) -> Any:
        try:
            n = len(array)
        except TypeError:
            raise TypeError(f"take(): argument {position} must be a per-row array, "
                            f"got {type(array).__name__}") from None
        if n != self.n_input:
            raise ValueError(f"take(): argument {position} has length {n} but the sessions were "
                             f"built from {self.n_input} timestamps")
        if self.index is None:
            return array
        if hasattr(array, "iloc"):
            return array.iloc[self.index]
        if type(array).__module__.startswith("torch"):
            import torch

            return array[torch.as_tensor(self.index, device=array.device)]
        if isinstance(array, (list, tuple)):
            return np.asarray(array)[self.index]
        return array[self.index]

    def to_pandas(self) -> Any:
        """One row per session: ``label``, ``start``, ``end`` (datetime64[ns, UTC]), ``first_row``,
        ``n_rows`` (kept-row positions). Needs pandas."""
        import pandas as pd

        return pd.DataFrame({
            "label": self.labels,
            "start": pd.to_datetime(self.start_ns, unit="ns", utc=True),
            "end": pd.to_datetime(self.end_ns, unit="ns", utc=True),
            "first_row": self.offsets[:-1],
            "n_rows": np.diff(self.offsets),
        })


# --------------------------------------------------------------------------- public API


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


def _daily(tz: Any, weekdays_only: bool) -> "_Definition":
    weekdays_only = _flag(weekdays_only, "weekdays_only")
    zone = _zone(tz)
    definition = f"daily(tz={str(zone)!r}, weekdays_only={weekdays_only})"
    return _clock_definition("00:00", "24:00", zone, weekdays_only, definition)


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


def _custom(start: Any, end: Any, tz: Any, weekdays_only: bool) -> "_Definition":
    weekdays_only = _flag(weekdays_only, "weekdays_only")
    _time_of_day(start, "start")
    _time_of_day(end, "end", allow_24=True)
    zone = _zone(tz)
    definition = (f"custom(start={start!r}, end={end!r}, tz={str(zone)!r}, "
                  f"weekdays_only={weekdays_only})")
    return _clock_definition(start, end, zone, weekdays_only, definition)


# --------------------------------------------------------------------------- window assignment


def _assign(t: Int64Array, opens: Int64Array, closes: Int64Array, labels: Int64Array,
            definition: str, *, closed: str, keep_empty: bool, outside: str) -> Sessions:
    """Assign sorted timestamps to sorted, disjoint, labelled windows [open, close)."""
    n = t.shape[0]
    if n == 0:
        return _empty(definition)
    order = np.argsort(opens, kind="stable")
    opens, closes, labels = opens[order], closes[order], labels[order]
    if np.any(closes[:-1] > opens[1:]) or np.any(np.diff(labels) < 0):
        raise ValueError(f"{definition}: the calendar's windows overlap or are out of order")
    side = "left" if closed == "left" else "right"
    lo = np.searchsorted(t, opens, side=side)
    hi = np.maximum(np.searchsorted(t, closes, side=side), lo)
    counts = hi - lo
    total = int(counts.sum())
    if outside == "raise" and total < n:
        covered = np.zeros(n + 1, dtype=np.int64)
        np.add.at(covered, lo, 1)
        np.add.at(covered, hi, -1)
        i = int(np.argmin(np.cumsum(covered)[:n] > 0))
        raise ValueError(f"ts[{i}] = {_iso(t[i])} is outside every session of {definition}; "
                         "pass outside='drop' to drop such rows")
    # sessions = runs of equal labels; keep those between the first and last non-empty one
    starts = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
    sess_counts = np.add.reduceat(counts, starts) if starts.size else np.zeros(0, np.int64)
    sess_labels = labels[starts]
    sess_start = opens[starts]
    sess_end = np.maximum.reduceat(closes, starts) if starts.size else np.zeros(0, np.int64)
    nonempty = np.flatnonzero(sess_counts > 0)
    if nonempty.size == 0:
        keep = np.zeros(sess_counts.shape[0], dtype=bool)
    elif keep_empty:
        keep = np.zeros(sess_counts.shape[0], dtype=bool)
        keep[nonempty[0]:nonempty[-1] + 1] = True
    else:
        keep = sess_counts > 0
    offsets = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
    np.cumsum(sess_counts[keep], out=offsets[1:])
    index: Optional[Int64Array] = None
    if total < n:
        nz = counts > 0
        lo_nz, c_nz = lo[nz], counts[nz]
        first = np.cumsum(c_nz) - c_nz  # position in the kept rows of each window's first row
        index = (np.arange(total, dtype=np.int64) + np.repeat(lo_nz - first, c_nz)).astype(np.int64)
    return Sessions(
        offsets=offsets,
        labels=sess_labels[keep].astype(np.int64),
        start_ns=sess_start[keep].astype(np.int64),
        end_ns=sess_end[keep].astype(np.int64),
        index=index,
        n_input=n,
        definition=definition,
    )


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


def _run(t: Int64Array, defn: _Definition, opts: dict) -> Sessions:
    if t.shape[0] == 0:
        return _empty(defn.definition)
    return _assign(t, *defn.windows(*_date_span(t, defn.zone)), defn.definition, **opts)


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


def _empty(definition: str) -> Sessions:
    z = np.zeros(0, dtype=np.int64)
    return Sessions(offsets=np.zeros(1, dtype=np.int64), labels=z, start_ns=z.copy(),
                    end_ns=z.copy(), index=None, n_input=0, definition=definition)


# --------------------------------------------------------------------------- helpers


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
                raise ValueError(f"ts[{i}] is NaT")
            return _sorted(np.ascontiguousarray(arr, dtype=np.int64))
        if dtype.kind == "M":
            raise ValueError("ts is a timezone-naive pandas datetime; localize it first, e.g. "
                             "ts.dt.tz_localize('America/Chicago'), or pass int64 ns UTC")
        ts = ts.to_numpy()
    elif module.startswith("polars"):
        if not hasattr(ts, "dtype"):
            raise TypeError("ts must be 1-D timestamps, got a polars DataFrame; pass one column")
        if getattr(ts.dtype, "time_zone", "") is None:
            raise ValueError("ts is a timezone-naive polars Datetime; localize it first, e.g. "
                             "ts.dt.replace_time_zone('America/Chicago'), or pass int64 ns UTC")
        ts = ts.to_numpy()  # a zoned polars Datetime converts to UTC datetime64
    arr = np.asarray(unmasked(ts, "ts"))
    if arr.ndim != 1:
        raise ValueError(f"ts must be 1-D, got shape {arr.shape}")
    if arr.dtype.kind == "M":
        arr = datetime64_ns(arr, "ts")
    elif arr.dtype.kind in "iu":
        arr = epoch_ns(arr, "ts", time_unit)
    else:
        raise TypeError("ts must be integer epoch times (ns, or time_unit=), datetime64, or a "
                        f"timezone-aware pandas Series/DatetimeIndex; got dtype {arr.dtype}")
    return _sorted(np.ascontiguousarray(arr))


def _sorted(arr: Int64Array) -> Int64Array:
    if arr.shape[0] > 1:
        bad = np.flatnonzero(arr[1:] < arr[:-1])
        if bad.size:
            i = int(bad[0]) + 1
            raise ValueError(f"ts must be sorted (non-decreasing): ts[{i}] = {_iso(arr[i])} is "
                             f"before ts[{i - 1}] = {_iso(arr[i - 1])}")
    return arr


def _options(closed: Any, keep_empty: Any, outside: Any) -> dict:
    if closed not in ("left", "right"):
        raise ValueError(f"closed must be 'left' or 'right', got {closed!r}")
    if outside not in ("drop", "raise"):
        raise ValueError(f"outside must be 'drop' or 'raise', got {outside!r}")
    return dict(closed=closed, keep_empty=_flag(keep_empty, "keep_empty"), outside=outside)


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


def _yyyymmdd(days: Int64Array) -> Int64Array:
    """Days since 1970-01-01 -> YYYYMMDD integers."""
    d = np.asarray(days, dtype=np.int64).astype("datetime64[D]")
    y = d.astype("datetime64[Y]").astype(np.int64) + 1970
    m = d.astype("datetime64[M]").astype(np.int64) % 12 + 1
    dd = (d - d.astype("datetime64[M]")).astype(np.int64) + 1
    return (y * 10000 + m * 100 + dd).astype(np.int64)


def _iso(ns: Any) -> str:
    ns = int(ns)
    return str(np.datetime64(ns // 1_000_000_000, "s") if ns % 1_000_000_000 == 0
               else np.datetime64(ns, "ns")) + "Z"


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
