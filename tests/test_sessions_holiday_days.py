"""Tests of whole RTH days left out as "holiday" (vpoc.sessions._dropped, FULL_DAY_SHARE): they warn.

Contract: a date the calendar has no RTH session on, holding rows over most of its RTH window, warns (or
raises with on_outside='raise') naming rows and dates; a holiday's abbreviated morning stays quiet.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import _deps

pd = _deps.require("pandas")
_deps.require("pandas_market_calendars")

from _user_file import user_bars  # noqa: E402

import vpoc  # noqa: E402
from vpoc import sessions as S  # noqa: E402

NY, CHI = "America/New_York", "America/Chicago"


def _bars(days, start: str, end: str, tz: str, freq: str = "1min") -> "pd.DatetimeIndex":
    """One bar per ``freq`` from ``start`` to ``end`` (both included, local wall clock) on each day."""
    ts = []
    for d in days:
        d = pd.Timestamp(d)
        ts += list(pd.date_range(d + pd.Timedelta(start), d + pd.Timedelta(end), freq=freq))
    return pd.DatetimeIndex(sorted(ts)).tz_localize(tz)


def _rth_feed() -> "pd.DatetimeIndex":
    """The finding: RTH bars 09:30-15:59 ET on every weekday of 2025-01-06 .. 01-24, 2025-01-09 (CME
    closed, day of mourning) and 2025-01-20 (MLK: no RTH) included."""
    return _bars(pd.bdate_range("2025-01-06", "2025-01-24"), "9h30min", "15h59min", NY)


def _caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [x for x in w if issubclass(x.category, vpoc.DroppedRowsWarning)]


def test_whole_rth_days_on_closed_dates_warn() -> None:
    ts = _rth_feed()
    s, w = _caught(lambda: S.rth(ts))
    assert s.n_input == 5850 and s.dropped_by_cause == {"holiday": 780}
    assert len(w) == 1, [str(x.message) for x in w]
    msg = str(w[0].message)
    for part in ("780 of 5,850 rows", "2 dates", "2025-01-09", "2025-01-20", "no RTH session",
                 "calendar=None", "on_outside='drop'"):
        assert part in msg, (part, msg)
    assert w[0].filename == __file__  # points at the caller's line
    # the hint is true: calendar=None keeps them, quietly
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keep = S.rth(ts, calendar=None)
    assert keep.dropped_by_cause == {} and keep.n_sessions == 15


def test_whole_days_volume_share_named() -> None:
    ts = _rth_feed()
    vol = np.ones(len(ts))
    vol[(ts.day == 9) | (ts.day == 20)] = 3.0  # 2340 of 7410
    _, w = _caught(lambda: S.rth(ts, volume=vol))
    assert len(w) == 1 and "31.6% of the volume" in str(w[0].message), [str(x.message) for x in w]


def test_whole_days_drop_is_quiet() -> None:
    ts = _rth_feed()
    s, w = _caught(lambda: S.rth(ts, on_outside="drop"))
    assert w == [] and s.dropped_by_cause == {"holiday": 780}
    # ... and so is the older spelling
    s, w = _caught(lambda: S.rth(ts, outside="drop"))
    assert w == [] and s.dropped_rows == 780


def test_whole_days_raise() -> None:
    ts = _rth_feed()
    first = int(np.flatnonzero(ts.day == 9)[0])  # 2025-01-09 09:30 ET = 14:30Z
    with pytest.raises(ValueError, match=rf"ts\[{first}\] = 2025-01-09T14:30:00Z .*2025-01-09.*calendar=None"
                                         r".*780 of 5850 rows are"):
        S.rth(ts, on_outside="raise")


def test_mlk_morning_not_named_beside_a_whole_day() -> None:
    # Jan 9 a whole RTH day (08:30-14:59 CT); Jan 20 only the holiday morning 08:30-11:59 CT (the 12:00 halt)
    days = [d for d in pd.bdate_range("2025-01-06", "2025-01-24") if d.day != 20]
    ts = _bars(days, "8h30min", "14h59min", CHI).append(_bars(["2025-01-20"], "8h30min", "11h59min", CHI))
    ts = ts.sort_values()
    s, w = _caught(lambda: S.rth(ts))
    assert s.dropped_by_cause == {"holiday": 390 + 210}
    assert len(w) == 1, [str(x.message) for x in w]
    msg = str(w[0].message)
    assert "390 of 5,670 rows" in msg and "1 date (2025-01-09)" in msg and "2025-01-20" not in msg, msg


def test_share_of_the_window_is_the_rule() -> None:
    # FULL_DAY_SHARE of ES RTH 08:30-15:15 (405 min) is 303.75 min: 300 min stays quiet, 305 min warns
    normal = [d for d in pd.bdate_range("2025-01-13", "2025-01-24") if d.day != 20]
    base = _bars(normal, "8h30min", "14h59min", CHI)
    short = base.append(_bars(["2025-01-20"], "8h30min", "13h29min", CHI)).sort_values()
    long_ = base.append(_bars(["2025-01-20"], "8h30min", "13h34min", CHI)).sort_values()
    s, w = _caught(lambda: S.rth(short))
    assert w == [] and s.dropped_by_cause == {"holiday": 300}
    s, w = _caught(lambda: S.rth(long_))
    assert len(w) == 1 and "305 of" in str(w[0].message) and "2025-01-20" in str(w[0].message)


def test_whole_day_of_trades_warns() -> None:
    # trades (no bar interval): the span is the rows' own, 08:31-15:10 CT of 08:30-15:15
    rng = np.random.default_rng(3)
    days = pd.bdate_range("2025-01-13", "2025-01-24")
    ts = []
    for d in days:
        secs = np.sort(rng.choice(np.arange(60, 24_000), size=500, replace=False))
        ts.append(pd.Timestamp(d) + pd.Timedelta("8h30min") + pd.to_timedelta(secs, unit="s"))
    ts = pd.DatetimeIndex(np.concatenate([np.asarray(x) for x in ts])).tz_localize(CHI)
    s, w = _caught(lambda: S.rth(ts))
    assert s.dropped_by_cause == {"holiday": 500}
    assert len(w) == 1 and "500 of 5,000 rows" in str(w[0].message) and "2025-01-20" in str(w[0].message)


def test_globex_feed_mlk_morning_is_quiet() -> None:
    # real ES hours: MLK day trades 17:00 CT Sunday .. 12:00 CT Monday (halt): its RTH-hours rows are
    # 08:30-12:00 only, left out of rth as "holiday", without a warning (a guard: quiet on main too)
    b = user_bars(start="2025-01-15", end="2025-01-23", strays=False)
    s, w = _caught(lambda: S.rth(b["open_ns"]))
    assert w == [], [str(x.message) for x in w]
    assert s.dropped_by_cause["holiday"] == 210
    s = S.rth(b["open_ns"], on_outside="raise")  # excused: no error either
    assert 20250120 not in s.labels.tolist()


def test_globex_definition_unchanged() -> None:
    # globex books Jan 9 on Jan 10 and halts Jan 20 at 12:00: its warning (early close) is unchanged
    # and says nothing of whole days (a guard: the same on main)
    ts = _rth_feed()
    s, w = _caught(lambda: S.globex(ts))
    assert s.dropped_by_cause == {"early-close": 180}
    assert len(w) == 1 and "whole day" not in str(w[0].message)
    assert "hours after an early close or holiday halt" in str(w[0].message)


def test_window_in_another_zone_warns_about_the_window_only() -> None:
    # rth(tz="UTC"): 08:30-15:15 UTC is 02:30-09:15 CT, inside MLK day's overnight Globex session, which
    # fills it; the SessionHoursWarning names the zone, no whole-day warning blames the calendar (a guard)
    b = user_bars(start="2025-01-15", end="2025-01-23", strays=False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = S.rth(b["open_ns"], tz="UTC")
    assert [x.category for x in w] == [S.SessionHoursWarning], [str(x.message) for x in w]
    assert s.dropped_by_cause["holiday"] == 405
    # another calendar instance (no hours check): the whole day warns, naming the date
    import pandas_market_calendars as mcal

    _, w = _caught(lambda: S.rth(b["open_ns"], tz="UTC", calendar=mcal.get_calendar("CME Globex Equity")))
    assert len(w) == 1 and "2025-01-20" in str(w[0].message)
