"""Synthetic ES one-minute bars with the users' file conventions (GUIDE section 6), for tests.

Contract: ``write_user_file(path, ...)`` writes the file and returns what a correct reader must find
(rows, true bar opens, trade dates, sessions, strays); ``user_bars(...)``: the same in memory.

The data (plain Python + NumPy, no vpoc and no calendar package: tests check vpoc against it):

* CME Globex ES hours: Sunday-Friday 17:00-16:00 America/Chicago, daily halt 16:00-17:00; the
  overnight part belongs to the next trade date. One bar per minute of every window (a few
  overnight minutes 00:00-06:00 CT are missing, never a window's first or last minute).
* Holidays (span 2024-12-15 .. 2025-03-20 by default): Dec 24 early close 12:15 CT; Dec 25 and
  Jan 1 closed (no session); Jan 9 (national day of mourning) halts at 08:30 CT; MLK Jan 20 and
  Presidents Day Feb 17 halt at 12:00 CT; the trading of these three days is booked to the next
  trade date (Jan 10 / Jan 21 / Feb 18), whose session then has two windows (CME's booking, as
  pandas_market_calendars' CME_TradeDate has it). DST starts Mar 9 2025 inside the span.
* Two stray prints on Saturdays (2025-01-04 10:15 CT and 2025-02-08 09:40 CT): in no session.
* Prices on the 0.25 grid (a random walk from ``price``); integer volumes, busiest in the bar that
  opens 08:30 CT (RTH open) and the bar that closes 15:00 CT (opens 14:59, the cash close).

Timestamps are written in ``tz`` (wall clock, naive: the legacy format has no offset; CSV and
Parquet naive too unless ``aware=True``) and stamped at each bar's ``label`` ("close": open + 60 s).

Example::

    exp = write_user_file(tmp_path / "ES 03-25.Last.txt")            # UTC, close-stamped, legacy
    bars = vpoc.io.read_bars(exp["path"], **exp["read_kwargs"])       # tz="UTC", label="close"
    assert (bars.timestamp == exp["open_ns"]).all()
"""

from __future__ import annotations

import datetime as _dt
import os
import zoneinfo
from typing import Any, Dict, List, Tuple

import numpy as np

__all__ = ["user_bars", "user_frame", "write_user_file", "CHICAGO", "HOLIDAY_RULES"]

CHICAGO = zoneinfo.ZoneInfo("America/Chicago")
_NS = 1_000_000_000
_MIN = 60 * _NS

#: Special days of the default span: date -> (rule, CT close time of that Globex day; None: closed).
HOLIDAY_RULES: Dict[_dt.date, Tuple[str, Any]] = {
    _dt.date(2024, 12, 24): ("early close", _dt.time(12, 15)),
    _dt.date(2024, 12, 25): ("closed", None),
    _dt.date(2025, 1, 1): ("closed", None),
    _dt.date(2025, 1, 9): ("halt at the cash open (day of mourning), booked to the next trade date",
                           _dt.time(8, 30)),
    _dt.date(2025, 1, 20): ("holiday, early halt, booked to the next trade date", _dt.time(12, 0)),
    _dt.date(2025, 2, 17): ("holiday, early halt, booked to the next trade date", _dt.time(12, 0)),
}
_BOOKED_FORWARD = {d for d, (rule, _) in HOLIDAY_RULES.items() if "booked" in rule}
_STRAYS = [(_dt.date(2025, 1, 4), _dt.time(10, 15)), (_dt.date(2025, 2, 8), _dt.time(9, 40))]


def _ct_ns(day: _dt.date, t: _dt.time) -> int:
    """UTC ns of wall time ``t`` on ``day`` in Chicago."""
    dt = _dt.datetime.combine(day, t, tzinfo=CHICAGO)
    return int(dt.timestamp()) * _NS


def _yyyymmdd(d: _dt.date) -> int:
    return d.year * 10000 + d.month * 100 + d.day


def _windows(start: _dt.date, end: _dt.date) -> List[Tuple[int, int, int]]:
    """(open_ns, close_ns, trade_date) of every Globex window whose day is in [start, end]."""
    out = []
    d = start
    while d <= end:
        if d.weekday() < 5:
            rule = HOLIDAY_RULES.get(d)
            close_t = _dt.time(16, 0) if rule is None else rule[1]
            if close_t is not None:
                label = d
                if d in _BOOKED_FORWARD:  # booked to the next weekday
                    label = d + _dt.timedelta(days=1)
                    while label.weekday() >= 5:
                        label += _dt.timedelta(days=1)
                prev = d - _dt.timedelta(days=1)  # the evening before (Sunday for a Monday)
                out.append((_ct_ns(prev, _dt.time(17, 0)), _ct_ns(d, close_t), _yyyymmdd(label)))
        d += _dt.timedelta(days=1)
    return out


def user_bars(start: str = "2024-12-15", end: str = "2025-03-20", seed: int = 0,
              price: float = 6000.0, strays: bool = True) -> Dict[str, Any]:
    """The bars in memory: dict of ``open_ns`` (true bar opens, int64 ns UTC, sorted), ``open``,
    ``high``, ``low``, ``close`` (float64 on the 0.25 grid), ``volume`` (int64), ``trade_date``
    (int64 YYYYMMDD per row, 0 for strays), ``stray`` (bool per row) and ``sessions``
    ({trade_date: {"first_open_ns", "last_open_ns", "rows", "windows"}}).
    Trade dates run over the weekdays of [start, end] (``start``'s evening opens the first)."""
    d0 = _dt.date.fromisoformat(start)
    d1 = _dt.date.fromisoformat(end)
    if d1 < d0:
        raise ValueError(f"end {end!r} is before start {start!r}")
    rng = np.random.default_rng(seed)
    opens_l, dates_l = [], []
    for lo, hi, label in _windows(d0 + _dt.timedelta(days=1), d1):
        t = np.arange(lo, hi, _MIN, dtype=np.int64)
        opens_l.append(t)
        dates_l.append(np.full(t.size, label, dtype=np.int64))
    t = np.concatenate(opens_l)
    tdate = np.concatenate(dates_l)
    local_min = _local_minute(t)
    # a few missing overnight minutes (00:00-06:00 CT), never a window's first or last bar
    first_last = np.zeros(t.size, dtype=bool)
    bounds = np.flatnonzero(np.diff(t) != _MIN)
    first_last[0] = first_last[-1] = True
    first_last[bounds] = first_last[bounds + 1] = True
    drop = (local_min < 360) & (rng.random(t.size) < 0.003) & ~first_last
    t, tdate, local_min = t[~drop], tdate[~drop], local_min[~drop]
    stray = np.zeros(t.size, dtype=bool)
    if strays:
        extra = np.array([_ct_ns(d, tt) for d, tt in _STRAYS if d0 <= d <= d1], dtype=np.int64)
        if extra.size:
            t = np.concatenate([t, extra])
            tdate = np.concatenate([tdate, np.zeros(extra.size, dtype=np.int64)])
            stray = np.concatenate([stray, np.ones(extra.size, dtype=bool)])
            order = np.argsort(t, kind="stable")
            t, tdate, stray = t[order], tdate[order], stray[order]
            local_min = _local_minute(t)
    n = t.size
    steps = rng.integers(-2, 3, size=n)
    close_t = np.round(price * 4) + np.cumsum(steps)  # in ticks
    open_t = np.concatenate([[close_t[0] - steps[0]], close_t[:-1]])
    high_t = np.maximum(open_t, close_t) + rng.integers(0, 3, size=n)
    low_t = np.minimum(open_t, close_t) - rng.integers(0, 3, size=n)
    rth = (local_min >= 510) & (local_min < 915)
    vol = np.where(rth, rng.integers(1500, 6000, size=n), rng.integers(100, 900, size=n))
    vol = np.where(local_min == 510, rng.integers(30000, 40000, size=n), vol)  # 08:30 CT open
    vol = np.where(local_min == 899, rng.integers(20000, 28000, size=n), vol)  # closes 15:00 CT
    vol = np.where(stray, 1, vol).astype(np.int64)
    sessions: Dict[int, Dict[str, int]] = {}
    for label in np.unique(tdate[~stray]).tolist():
        rows = np.flatnonzero(tdate == label)
        sessions[int(label)] = {"first_open_ns": int(t[rows[0]]), "last_open_ns": int(t[rows[-1]]),
                                "rows": int(rows.size),
                                "windows": int(1 + np.count_nonzero(np.diff(t[rows]) > 3600 * _NS))}
    return {"open_ns": t, "open": open_t / 4.0, "high": high_t / 4.0, "low": low_t / 4.0,
            "close": close_t / 4.0, "volume": vol, "trade_date": tdate, "stray": stray,
            "sessions": sessions}


def _local_minute(t: np.ndarray) -> np.ndarray:
    """Chicago wall-clock minute of day (0..1439) of UTC ns ``t``."""
    secs = t // _NS
    out = np.empty(t.size, dtype=np.int64)
    # offsets change only at DST transitions: compute per distinct UTC hour
    hours, inv = np.unique(secs // 3600, return_inverse=True)
    offs = np.array([CHICAGO.utcoffset(_dt.datetime.fromtimestamp(int(h) * 3600, _dt.timezone.utc)
                                       .replace(tzinfo=None)).total_seconds() for h in hours],
                    dtype=np.int64)
    local = secs + offs[inv.reshape(-1)]
    out[:] = (local % 86400) // 60
    return out


def _wall(stamp_ns: np.ndarray, tz: str) -> np.ndarray:
    """Naive wall-clock datetime64[ns] of UTC ns ``stamp_ns`` in ``tz``."""
    z = zoneinfo.ZoneInfo(tz)
    hours, inv = np.unique(stamp_ns // (3600 * _NS), return_inverse=True)
    offs = np.array([z.utcoffset(_dt.datetime.fromtimestamp(int(h) * 3600, _dt.timezone.utc)
                                 .replace(tzinfo=None)).total_seconds() for h in hours],
                    dtype=np.int64) * _NS
    return (stamp_ns + offs[inv.reshape(-1)]).view("datetime64[ns]")


def user_frame(tz: str = "UTC", label: str = "close", aware: bool = False,
               **kwargs: Any) -> Tuple[Any, Dict[str, Any]]:
    """(pandas DataFrame with timestamp/open/high/low/close/volume, ``user_bars`` dict); the
    timestamp column holds naive wall clock in ``tz`` (tz-aware in ``tz`` when ``aware``),
    stamped at the bar ``label``. ``kwargs`` go to :func:`user_bars`."""
    import pandas as pd

    if label not in ("open", "close"):
        raise ValueError(f"label must be 'open' or 'close', got {label!r}")
    data = user_bars(**kwargs)
    stamp = data["open_ns"] + (_MIN if label == "close" else 0)
    if aware:
        ts = pd.DatetimeIndex(stamp.view("datetime64[ns]")).tz_localize("UTC").tz_convert(tz)
    else:
        ts = pd.DatetimeIndex(_wall(stamp, tz))
    df = pd.DataFrame({"timestamp": ts, **{k: data[k] for k in ("open", "high", "low", "close",
                                                                  "volume")}})
    return df, data


def write_user_file(path: Any, fmt: str = "legacy", tz: str = "UTC", label: str = "close",
                    start: str = "2024-12-15", end: str = "2025-03-20", seed: int = 0,
                    aware: bool = False, strays: bool = True,
                    price: float = 6000.0) -> Dict[str, Any]:
    """Write the bars to ``path`` and return what a reader must find.

    ``fmt``: "legacy" (``YYYYMMDD HHMMSS;open;high;low;close;volume``, no header), "csv"
    (header ``timestamp,open,high,low,close,volume``, ``YYYY-MM-DD HH:MM:SS`` stamps, with the
    UTC offset when ``aware``) or "parquet" (timestamp[ns], naive or tz-aware; needs pyarrow).
    ``tz``: the zone of the written wall clock; ``label``: "close" (the users' file) or "open".

    Returns the :func:`user_bars` dict plus ``path``, ``fmt``, ``tz``, ``label``, ``interval``
    (60), ``tick_size`` (0.25), ``rows``, ``stray_rows``, ``stamp_ns`` (what the file holds, as
    UTC ns) and ``read_kwargs`` ({"tz", "label", "interval"}: read_bars gives ``open_ns``).
    """
    if fmt not in ("legacy", "csv", "parquet"):
        raise ValueError(f"fmt must be 'legacy', 'csv' or 'parquet', got {fmt!r}")
    if aware and fmt == "legacy":
        raise ValueError("the legacy format has no UTC offsets: aware=True needs fmt='csv' or "
                         "'parquet'")
    df, data = user_frame(tz, label, aware, start=start, end=end, seed=seed, strays=strays,
                          price=price)
    path = os.fspath(path)
    if fmt == "parquet":
        df.to_parquet(path, index=False)
    else:
        if aware:
            stamps = df["timestamp"].dt.strftime("%Y-%m-%d %H:%M:%S%z").str.replace(
                r"(\d\d)(\d\d)$", r"\1:\2", regex=True)
        elif fmt == "legacy":
            stamps = df["timestamp"].dt.strftime("%Y%m%d %H%M%S")
        else:
            stamps = df["timestamp"].dt.strftime("%Y-%m-%d %H:%M:%S")
        cols = [stamps.to_numpy(dtype=object)] + [
            np.char.mod("%.2f", df[c].to_numpy()) for c in ("open", "high", "low", "close")] + [
            df["volume"].to_numpy().astype(str)]
        sep = ";" if fmt == "legacy" else ","
        lines = [sep.join(r) for r in zip(*cols)]
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            if fmt == "csv":
                fh.write("timestamp,open,high,low,close,volume\n")
            fh.write("\n".join(lines) + "\n")
    stamp = data["open_ns"] + (_MIN if label == "close" else 0)
    data.update(path=path, fmt=fmt, tz=tz, label=label, interval=60, tick_size=0.25,
                rows=int(stamp.size), stray_rows=int(data["stray"].sum()), stamp_ns=stamp,
                read_kwargs={"tz": tz, "label": label, "interval": 60})
    return data
