"""Tests of issue 23.1 in vpoc.sessions: label="close" / interval= on globex, rth, daily, custom.

Contract: a UTC close-stamped ES series read with label="close" keeps every Globex row (first bar
17:00 CT, last 15:59 CT) and RTH bars open 08:30-15:14 CT; checked against tests/_user_file.py.
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
MIN = 60 * 10**9
# pandas_market_calendars 5.5 does not list 2025-01-09 (national day of mourning) as a CME trade
# date: vpoc books that morning's trading on 2025-01-10 (the data file gives it its own date).
PMC_BOOKING = {20250109: 20250110}


def ct(ns: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ns / 1e9, tz=CHI)


@pytest.fixture(scope="module")
def es():
    return user_bars(start="2024-12-15", end="2025-02-20")


@NEEDS_CAL
def test_23_1_globex_close_stamps_keep_every_session_row(es) -> None:
    stamps = es["open_ns"] + MIN  # UTC, stamped at each bar's close
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # two Saturday strays of ~60k rows: counted, no warning
        s = S.globex(stamps, label="close", volume=es["volume"])
    assert s.dropped_rows == int(es["stray"].sum()) == 2
    assert s.dropped_by_cause == {"weekend": 2}
    assert s.dropped_volume == float(es["volume"][es["stray"]].sum())
    assert s.label == "close" and s.interval == 60.0
    opens = es["open_ns"][s.index]
    # every non-stray row in the session of its trade date (booked as pandas_market_calendars does)
    want_ids = np.array([PMC_BOOKING.get(int(d), int(d)) for d in es["trade_date"][~es["stray"]]])
    np.testing.assert_array_equal(s.session_ids, want_ids)
    for k, lab in enumerate(s.labels):
        first, last = ct(int(opens[s.offsets[k]])), ct(int(opens[s.offsets[k + 1] - 1]))
        assert (first.hour, first.minute) == (17, 0), (lab, first)
        if lab == 20241224:  # early close 12:15 CT: the last bar opens 12:14
            assert (last.hour, last.minute) == (12, 14)
        else:
            assert (last.hour, last.minute) == (15, 59), (lab, last)


@NEEDS_CAL
def test_23_1_label_open_misses_each_sessions_last_bar(es) -> None:
    """The same close stamps taken as opens lose each session's 16:00 bar: warned, with the cure."""
    stamps = es["open_ns"] + MIN
    with pytest.warns(vpoc.DroppedRowsWarning, match=r"sit exactly on a session's close.*label='close'"):
        s = S.globex(stamps)
    n_sessions = len(es["sessions"])
    # the last bar of each full session (16:00 stamp) falls in the halt; early closes / holiday
    # halts put theirs after the shortened close
    assert s.dropped_by_cause["halt"] + s.dropped_by_cause.get("early-close", 0) >= n_sessions - 5


@NEEDS_CAL
def test_23_1_rth_close_stamps_open_0830_to_1514(es) -> None:
    stamps = es["open_ns"] + MIN
    r = S.rth(stamps, label="close", volume=es["volume"])
    opens = es["open_ns"][r.index]
    minute = np.array([ct(int(x)).hour * 60 + ct(int(x)).minute for x in opens])
    assert minute.min() == 8 * 60 + 30 and minute.max() == 15 * 60 + 14
    for k, lab in enumerate(r.labels):
        a, b = minute[r.offsets[k]], minute[r.offsets[k + 1] - 1]
        assert a == 8 * 60 + 30
        assert b == (12 * 60 + 14 if lab == 20241224 else 15 * 60 + 14), lab
    # overnight rows are out by definition: counted, not warned (the call above did not warn)
    assert r.dropped_by_cause["outside RTH"] > 0
    assert not r.partial.any()


@NEEDS_CAL
def test_23_1_close_equals_opens_and_closed_right(es) -> None:
    stamps = es["open_ns"] + MIN
    a = S.globex(stamps, label="close")
    b = S.globex(es["open_ns"])
    c = S.globex(stamps, label="close", interval="1min")
    for x in (b, c):
        np.testing.assert_array_equal(a.offsets, x.offsets)
        np.testing.assert_array_equal(a.labels, x.labels)
        np.testing.assert_array_equal(a.index, x.index)
    d = S.globex(stamps, closed="right")  # the older spelling: same rows, same sessions
    np.testing.assert_array_equal(a.offsets, d.offsets)
    np.testing.assert_array_equal(a.index, d.index)


def test_23_1_daily_and_custom_take_label() -> None:
    # 5-minute bars over one UTC day, stamped at their close: the 00:00 stamp of the next day is
    # the last bar of this day
    day = int(np.datetime64("2025-03-04T00:00", "ns").astype(np.int64))
    opens = day + np.arange(288, dtype=np.int64) * 5 * MIN
    s = S.daily(opens + 5 * MIN, label="close")
    assert s.labels.tolist() == [20250304] and s.n_dropped == 0 and s.interval == 300.0
    assert S.daily(opens + 5 * MIN).labels.tolist() == [20250304, 20250305]
    c = S.custom(opens + 5 * MIN, "00:00", "12:00", "UTC", label="close", interval=300)
    assert c.n_kept == 144 and c.dropped_by_cause == {"outside window": 144}


@pytest.mark.parametrize("kw, exc, match", [
    (dict(label="end"), ValueError, "label must be 'open'"),
    (dict(label="close", closed="right"), ValueError, "both say the timestamps are bar closes"),
    (dict(label="close", interval="soon"), ValueError, "not a duration"),
    (dict(label="close", interval=-60), ValueError, "positive duration"),
])
def test_23_1_bad_label_arguments(kw, exc, match) -> None:
    t = np.array([0, 60, 120], dtype=np.int64) * 10**9 + 1_741_046_400 * 10**9
    with pytest.raises(exc, match=match):
        S.daily(t, **kw)


def test_23_1_label_close_needs_an_interval() -> None:
    t = np.array([1_741_046_400 * 10**9], dtype=np.int64)
    with pytest.raises(ValueError, match="pass interval="):
        S.daily(t, label="close")
    assert S.daily(t, label="close", interval=60).n_kept == 1


def test_23_1_empty_input_with_label_close() -> None:
    s = S.daily(np.zeros(0, dtype=np.int64), label="close")
    assert s.n_sessions == 0 and s.n_input == 0 and s.label == "close"
    with pytest.raises(ValueError, match="label must be"):
        S.daily(np.zeros(0, dtype=np.int64), label="mid")
