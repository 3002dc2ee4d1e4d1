"""Tests of issue 23.8 in vpoc.sessions: holidays="merge"|"own", partial and merged_days, check_hours.

Contract: merge books MLK day's trading on the next trade date (merged_days 2), own keeps it apart;
partial flags sessions cut at either end by more than one bar; RTH windows outside ES hours warn.
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

from vpoc import sessions as S  # noqa: E402

CHI = ZoneInfo("America/Chicago")
MIN = 60 * 10**9


def ct_ns(y: int, mo: int, d: int, h: int, mi: int) -> int:
    return int(dt.datetime(y, mo, d, h, mi, tzinfo=CHI).timestamp()) * 10**9


@pytest.fixture(scope="module")
def mlk():
    return user_bars(start="2025-01-15", end="2025-01-23", strays=False)


@NEEDS_CAL
def test_23_8_merge_and_own(mlk) -> None:
    t = mlk["open_ns"]
    merge = S.globex(t)
    assert merge.labels.tolist() == [20250116, 20250117, 20250121, 20250122, 20250123]
    assert merge.merged_days.tolist() == [1, 1, 2, 1, 1]
    own = S.globex(t, holidays="own")
    assert own.labels.tolist() == [20250116, 20250117, 20250120, 20250121, 20250122, 20250123]
    assert own.merged_days.tolist() == [1] * 6
    # the rows: MLK day (Globex day 2025-01-20, 17:00 CT Sunday to its 12:00 CT halt) on its own
    k = own.labels.tolist().index(20250120)
    rows = own.offsets[k + 1] - own.offsets[k]
    assert rows == (ct_ns(2025, 1, 20, 12, 0) - ct_ns(2025, 1, 19, 17, 0)) // MIN
    # True / False are the older spelling of merge / own
    for old, new in ((True, merge), (False, own)):
        s = S.globex(t, holidays=old)
        np.testing.assert_array_equal(s.offsets, new.offsets)
        np.testing.assert_array_equal(s.labels, new.labels)
    assert "holidays='merge'" in merge.definition and "holidays='own'" in own.definition
    # rth: no RTH on MLK day with merge; its morning is a session with own (counted either way)
    r_merge, r_own = S.rth(t), S.rth(t, holidays="own")
    assert 20250120 not in r_merge.labels and 20250120 in r_own.labels
    assert r_merge.dropped_by_cause["holiday"] == (ct_ns(2025, 1, 20, 12, 0)
                                                   - ct_ns(2025, 1, 20, 8, 30)) // MIN
    table = merge.to_pandas()
    assert {"partial", "merged_days"} <= set(table.columns)
    assert table["merged_days"].tolist() == merge.merged_days.tolist()


@NEEDS_CAL
def test_23_8_partial_first_and_last_sessions(mlk) -> None:
    t = mlk["open_ns"]
    # the file starts mid-session (Thursday 10:00 CT) and ends mid-session (next Wednesday 11:00 CT)
    cut = t[(t >= ct_ns(2025, 1, 16, 10, 0)) & (t < ct_ns(2025, 1, 22, 11, 0))]
    s = S.globex(cut)
    assert s.labels.tolist() == [20250116, 20250117, 20250121, 20250122]
    assert s.partial.tolist() == [True, False, False, True]
    assert "2 partial" in repr(s)
    assert S.globex(t).partial.tolist() == [False] * 5


@NEEDS_CAL
def test_23_8_partial_tolerance_is_one_bar(mlk) -> None:
    t = mlk["open_ns"]
    day = (t >= ct_ns(2025, 1, 16, 17, 0)) & (t < ct_ns(2025, 1, 17, 16, 0))  # trade date Jan 17
    one = t[day][1:-1]  # first and last bar missing: within one bar of each end
    two = t[day][2:]  # first two bars missing
    assert S.globex(one).partial.tolist() == [False]
    assert S.globex(two).partial.tolist() == [True]
    assert S.globex(t[day][:-2]).partial.tolist() == [True]
    empty = S.globex(np.concatenate([t[day][:5], t[day][-5:] + 5 * 86_400 * 10**9]), keep_empty=True)
    assert empty.labels.tolist() == [20250117, 20250121, 20250122]
    assert np.diff(empty.offsets).tolist()[1] == 0 and empty.partial[1]


def test_23_8_partial_uses_interval_with_close_stamps() -> None:
    # 5-minute bars over 00:00-24:00 UTC stamped at their close: complete day, not partial
    day = int(np.datetime64("2025-03-04T00:00", "ns").astype(np.int64))
    closes = day + np.arange(1, 289, dtype=np.int64) * 5 * 60 * 10**9
    assert S.daily(closes, label="close").partial.tolist() == [False]
    assert S.daily(closes[2:], label="close").partial.tolist() == [True]


def test_23_8_check_hours() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert S.check_hours("08:30", "15:15", "America/Chicago")
        assert S.check_hours("09:30", "16:00", "America/New_York")  # the same hours in New York
        assert S.check_hours("14:30", "21:00", "UTC", dates=[dt.date(2025, 1, 15)])
    with pytest.warns(S.SessionHoursWarning, match=r"RTH 08:30-15:15 in UTC is 02:30-09:15 America/Chicago"):
        assert not S.check_hours("08:30", "15:15", "UTC")
    # London 14:30-21:15 is Chicago's RTH in winter, but not in the March weeks between the clock changes
    with pytest.warns(S.SessionHoursWarning, match="2025-03-12"):
        S.check_hours("14:30", "21:15", "Europe/London")
    with pytest.raises(ValueError, match="outside the exchange's regular hours"):
        S.check_hours("08:30", "15:15", "UTC", on_mismatch="raise")
    assert S.check_hours("08:30", "15:15", "UTC", on_mismatch="ignore") is False
    with pytest.raises(ValueError, match="on_mismatch must be"):
        S.check_hours(on_mismatch="loud")
    with pytest.raises(ValueError, match="must be after start"):
        S.check_hours("15:00", "08:00")


@NEEDS_CAL
def test_23_8_rth_in_utc_warns(mlk) -> None:
    with pytest.warns(S.SessionHoursWarning, match="tz='America/Chicago'"):
        S.rth(mlk["open_ns"], tz="UTC")


@NEEDS_CAL
def test_23_8_jan9_halt_flagged_partial_with_own() -> None:
    """2025-01-09: the data halts at 08:30 CT where the calendar has regular hours until 16:00."""
    es = user_bars(start="2025-01-06", end="2025-01-13", strays=False)
    merge = S.globex(es["open_ns"])
    k = merge.labels.tolist().index(20250110)
    assert merge.merged_days[k] == 2 and not merge.partial[k]  # the morning is booked on Jan 10
    own = S.globex(es["open_ns"], holidays="own")
    k = own.labels.tolist().index(20250109)
    assert own.partial[k] and own.merged_days[k] == 1
    assert own.partial.sum() == 1
