"""Tests of issue 23.3 in vpoc.sessions: rows left out are counted by cause and warned about.

Contract: UTC times misread as Chicago give a DroppedRowsWarning naming the daily halt and the right
counts (checked against a per-row zoneinfo reference); on_outside / outside= modes; volume= checks.
"""

from __future__ import annotations

import datetime as dt
import warnings
from zoneinfo import ZoneInfo

import numpy as np
import pytest

import _deps

pd = _deps.require("pandas")
NEEDS_CAL = _deps.needs("pandas_market_calendars")

from _user_file import user_bars  # noqa: E402

import vpoc  # noqa: E402
from vpoc import sessions as S  # noqa: E402

CHI = ZoneInfo("America/Chicago")
UTC = dt.timezone.utc
MIN = 60 * 10**9


@pytest.fixture(scope="module")
def misread():
    """Bars 2025-01-12 .. 2025-01-24 stamped at their UTC close, read as Chicago wall time."""
    es = user_bars(start="2025-01-12", end="2025-01-24", strays=False)
    utc = es["open_ns"] + MIN
    wall = [dt.datetime.fromtimestamp(x // 10**9, tz=UTC).replace(tzinfo=CHI) for x in utc]
    t = np.array([int(w.timestamp()) * 10**9 for w in wall], dtype=np.int64)
    return t, wall, es["volume"]


def reference_cause(w: dt.datetime):
    """Cause of a Chicago wall time under CME Globex ES hours Jan 12-24 2025 (None: kept)."""
    wd, hm = w.weekday(), (w.hour, w.minute)
    d = w.date()
    if wd == 5 or (wd == 4 and hm >= (17, 0)) or (wd == 6 and hm < (17, 0)):
        return "weekend"
    if (16, 0) <= hm < (17, 0):
        return "halt"
    if d == dt.date(2025, 1, 20) and (12, 0) <= hm < (16, 0):  # MLK day halts at 12:00 CT
        return "early-close"
    return None


@NEEDS_CAL
def test_23_3_misread_as_chicago_warns_and_counts(misread) -> None:
    t, wall, vol = misread
    causes = [reference_cause(w) for w in wall]
    dropped = np.array([c is not None for c in causes])
    halt = sum(c == "halt" for c in causes)
    share = f"{halt / t.size:.1%}"
    with pytest.warns(vpoc.DroppedRowsWarning) as rec:
        s = S.globex(t, volume=vol)
    msg = str(rec[0].message)
    assert (f"{share} of rows ({halt:,}) fall in the daily halt 16:00-17:00 America/Chicago: "
            "the time zone the timestamps were read in is likely wrong") in msg
    assert "label='close'" not in msg  # rows deep inside the halt: not close stamps
    assert f"{int(dropped.sum()):,} of {t.size:,} rows" in msg
    assert f"{vol[dropped].sum() / vol.sum():.1%} of the volume" in msg
    assert s.dropped_rows == s.n_dropped == int(dropped.sum())
    want = {k: sum(c == k for c in causes) for k in ("halt", "weekend", "early-close")}
    assert s.dropped_by_cause == {k: v for k, v in want.items() if v}
    assert s.dropped_volume == float(vol[dropped].sum())
    assert s.dropped_volume_by_cause["halt"] == float(vol[[c == "halt" for c in causes]].sum())
    np.testing.assert_array_equal(s.mask, ~dropped)


@NEEDS_CAL
def test_23_3_on_outside_modes(misread) -> None:
    t, wall, vol = misread
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = S.globex(t, on_outside="drop")
        old = S.globex(t, outside="drop")
    assert quiet.dropped_rows == old.dropped_rows > 0
    assert np.isnan(quiet.dropped_volume)  # no volume given
    first = next(i for i, w in enumerate(wall) if reference_cause(w) is not None)
    for kw in (dict(on_outside="raise"), dict(outside="raise")):
        with pytest.raises(ValueError, match=rf"ts\[{first}\] = .* is outside every session"):
            S.globex(t, **kw)
    with pytest.raises(ValueError, match="disagree"):
        S.globex(t, outside="drop", on_outside="raise")
    with pytest.raises(ValueError, match="on_outside must be 'warn'"):
        S.globex(t, on_outside="ignore")


@NEEDS_CAL
def test_23_3_rth_overnight_counted_not_warned_nor_raised() -> None:
    es = user_bars(start="2025-01-12", end="2025-01-17", strays=False)
    t = es["open_ns"]
    minute = np.array([(dt.datetime.fromtimestamp(x // 10**9, tz=CHI).hour * 60
                        + dt.datetime.fromtimestamp(x // 10**9, tz=CHI).minute) for x in t])
    outside = (minute < 8 * 60 + 30) | (minute >= 15 * 60 + 15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = S.rth(t, volume=es["volume"], on_outside="raise")
    assert r.dropped_by_cause == {"outside RTH": int(outside.sum())}
    assert r.dropped_volume == float(es["volume"][outside].sum())


def test_23_3_threshold_and_weekend_prints() -> None:
    # Monday-Friday UTC minutes of one week plus k Saturday prints, daily(weekdays_only=True)
    mon = int(np.datetime64("2025-03-03T00:00", "ns").astype(np.int64))
    week = mon + np.arange(5 * 1440, dtype=np.int64) * MIN
    sat = mon + 5 * 1440 * MIN
    few = np.concatenate([week, sat + np.arange(7, dtype=np.int64) * MIN])  # 0.097% of rows
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = S.daily(few, weekdays_only=True)
    assert s.dropped_by_cause == {"weekend": 7}
    many = np.concatenate([week, sat + np.arange(8, dtype=np.int64) * MIN])  # 0.11%
    with pytest.warns(vpoc.DroppedRowsWarning, match=r"8 of 7,208 rows \(0\.11%.*fall in weekends"):
        S.daily(many, weekdays_only=True)
    # a few rows holding more than 0.1% of the volume warn too
    vol = np.ones(few.size)
    vol[-7:] = 100.0
    with pytest.warns(vpoc.DroppedRowsWarning, match=r"8\.9% of the volume"):
        S.daily(few, weekdays_only=True, volume=vol)


@NEEDS_CAL
def test_23_3_holiday_closed_and_custom_window() -> None:
    # rows on Christmas Day 2025 at 10:00 CT: the exchange is closed
    t = np.array([int(dt.datetime(2025, 12, 25, 10, m, tzinfo=CHI).timestamp()) * 10**9
                  for m in range(5)], dtype=np.int64)
    with pytest.warns(vpoc.DroppedRowsWarning, match="holidays"):
        s = S.globex(t)
    assert s.dropped_by_cause == {"holiday-closed": 5} and s.n_sessions == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = S.custom(t, "11:00", "12:00", "America/Chicago")
    assert c.dropped_by_cause == {"outside window": 5}


@pytest.mark.parametrize("volume, exc, match", [
    (np.ones(2), ValueError, "volume has 2 values but ts has 3"),
    (np.array(["a", "b", "c"]), TypeError, "volume must be a 1-D numeric array"),
    (np.ones((3, 1)), TypeError, "volume must be a 1-D numeric array"),
])
def test_23_3_bad_volume(volume, exc, match) -> None:
    t = np.array([0, 60, 120], dtype=np.int64) * 10**9 + 1_741_046_400 * 10**9
    with pytest.raises(exc, match=match):
        S.daily(t, volume=volume)


def test_23_3_nothing_dropped_volume_zero_or_nan() -> None:
    t = np.array([0, 60, 120], dtype=np.int64) * 10**9 + 1_741_046_400 * 10**9
    assert S.daily(t, volume=[1, 2, 3]).dropped_volume == 0.0
    assert np.isnan(S.daily(t).dropped_volume)
    assert S.daily(t).dropped_by_cause == {}
