"""Tests of vpoc.sessions: literal UTC session boundaries (DST, holidays, early closes) and a
plain per-row zoneinfo reference over all of 2025, plus inputs, options and bad arguments.

The reference below re-implements the session rules row by row with ``datetime``/``zoneinfo``
and a literal table of the 2025 CME equity holidays and early closes; it does not call vpoc.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from typing import Dict, List, Optional, Sequence, Tuple
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from hypothesis import given, strategies as st

import _deps
import vpoc

pd = _deps.require("pandas")  # vpoc.sessions localizes times with pandas
pl = _deps.module("polars")  # tests that use it are marked _deps.needs("polars")
NEEDS_CAL = _deps.needs("pandas_market_calendars")  # globex / rth with their default calendars
NEEDS_POLARS = _deps.needs("polars")

from vpoc import io as vio
from vpoc import sessions as S

# These tests feed continuous minute grids (halts, weekends and holidays included) to check the
# windows; the rows left out are counted and warned about, which tests/test_sessions_dropped.py checks.
pytestmark = pytest.mark.filterwarnings("ignore::vpoc.DroppedRowsWarning")

CHI = ZoneInfo("America/Chicago")
UTC = dt.timezone.utc
MIN = 60 * 10**9


def ns(iso: str) -> int:
    """'2025-03-09T22:00Z' -> int64 ns since the epoch."""
    t = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return int(t.timestamp()) * 10**9 + t.microsecond * 1000


def minutes(first: str, last: str, step: int = 1) -> np.ndarray:
    return np.arange(ns(first), ns(last) + 1, step * MIN, dtype=np.int64)


def bounds(s: S.Sessions) -> Dict[int, Tuple[int, int]]:
    return {int(lab): (int(a), int(b)) for lab, a, b in zip(s.labels, s.start_ns, s.end_ns)}


# --------------------------------------------------------------------------- literal boundaries

# CME Globex ES sessions 2025, written out in UTC: [start, end).
GLOBEX_2025 = {
    # spring forward on Sunday 2025-03-09: CST (UTC-6) before, CDT (UTC-5) after
    20250307: ("2025-03-06T23:00Z", "2025-03-07T22:00Z"),
    20250310: ("2025-03-09T22:00Z", "2025-03-10T21:00Z"),
    # fall back on Sunday 2025-11-02
    20251031: ("2025-10-30T22:00Z", "2025-10-31T21:00Z"),
    20251103: ("2025-11-02T23:00Z", "2025-11-03T22:00Z"),
    # July 3 early close 12:15 CDT; the July 4 holiday session (halts 12:00 CDT) is booked on July 7
    20250702: ("2025-07-01T22:00Z", "2025-07-02T21:00Z"),
    20250703: ("2025-07-02T22:00Z", "2025-07-03T17:15Z"),
    20250707: ("2025-07-03T22:00Z", "2025-07-07T21:00Z"),
    # Thanksgiving (halts 12:00 CST) is booked on Black Friday, which closes at 12:15 CST
    20251126: ("2025-11-25T23:00Z", "2025-11-26T22:00Z"),
    20251128: ("2025-11-26T23:00Z", "2025-11-28T18:15Z"),
    20251201: ("2025-11-30T23:00Z", "2025-12-01T22:00Z"),
    # Christmas Eve early close, Christmas closed
    20251224: ("2025-12-23T23:00Z", "2025-12-24T18:15Z"),
    20251226: ("2025-12-25T23:00Z", "2025-12-26T22:00Z"),
}

RTH_2025 = {
    20250307: ("2025-03-07T14:30Z", "2025-03-07T21:15Z"),
    20250310: ("2025-03-10T13:30Z", "2025-03-10T20:15Z"),
    20251031: ("2025-10-31T13:30Z", "2025-10-31T20:15Z"),
    20251103: ("2025-11-03T14:30Z", "2025-11-03T21:15Z"),
    20250703: ("2025-07-03T13:30Z", "2025-07-03T17:15Z"),
    20250707: ("2025-07-07T13:30Z", "2025-07-07T20:15Z"),
    20251126: ("2025-11-26T14:30Z", "2025-11-26T21:15Z"),
    20251128: ("2025-11-28T14:30Z", "2025-11-28T18:15Z"),
    20251224: ("2025-12-24T14:30Z", "2025-12-24T18:15Z"),
}

DATA_RANGES = [("2025-03-05T00:00Z", "2025-03-12T00:00Z"), ("2025-06-30T00:00Z", "2025-07-09T00:00Z"),
               ("2025-10-29T00:00Z", "2025-11-05T00:00Z"), ("2025-11-24T00:00Z", "2025-12-02T00:00Z"),
               ("2025-12-22T00:00Z", "2025-12-30T00:00Z")]


@pytest.fixture(scope="module")
def minute_grid() -> np.ndarray:
    return np.concatenate([minutes(a, b) for a, b in DATA_RANGES])


@NEEDS_CAL
def test_globex_boundaries_2025_literal(minute_grid: np.ndarray) -> None:
    s = S.globex(minute_grid)
    got = bounds(s)
    for label, (a, b) in GLOBEX_2025.items():
        assert got[label] == (ns(a), ns(b)), label
    for missing in (20250704, 20251127, 20251225, 20250308, 20250309):
        assert missing not in got
    # every kept row lies inside its session's bounds; sessions are contiguous runs of rows
    ids, t = s.session_ids, s.take(minute_grid)
    starts = np.repeat(s.start_ns, np.diff(s.offsets))
    ends = np.repeat(s.end_ns, np.diff(s.offsets))
    assert np.all((t >= starts) & (t < ends))
    assert np.array_equal(ids, np.sort(ids))


@NEEDS_CAL
def test_globex_holiday_session_rows(minute_grid: np.ndarray) -> None:
    s = S.globex(minute_grid)
    counts = dict(zip(s.labels.tolist(), np.diff(s.offsets).tolist()))
    assert counts[20250703] == 19 * 60 + 15              # 17:00 CDT .. 12:15 CDT
    assert counts[20250707] == 19 * 60 + 23 * 60         # July 4 (17:00 .. 12:00) + July 7 (23 h)
    assert counts[20251128] == 19 * 60 + 19 * 60 + 15    # Thanksgiving + Black Friday
    assert counts[20251031] == 23 * 60 and counts[20251103] == 23 * 60


# (instant, expected label or None for "outside every session")
GLOBEX_PROBES = [
    ("2025-03-07T21:59Z", 20250307), ("2025-03-07T22:00Z", None),
    ("2025-03-09T21:59Z", None), ("2025-03-09T22:00Z", 20250310),
    ("2025-07-03T17:14Z", 20250703), ("2025-07-03T17:15Z", None), ("2025-07-03T21:59Z", None),
    ("2025-07-03T22:00Z", 20250707), ("2025-07-04T16:59Z", 20250707), ("2025-07-04T17:00Z", None),
    ("2025-07-06T21:59Z", None), ("2025-07-06T22:00Z", 20250707),
    ("2025-10-31T20:59Z", 20251031), ("2025-10-31T21:00Z", None),
    ("2025-11-02T22:59Z", None), ("2025-11-02T23:00Z", 20251103),
    ("2025-11-27T17:59Z", 20251128), ("2025-11-27T18:00Z", None), ("2025-11-27T23:00Z", 20251128),
    ("2025-11-28T18:14Z", 20251128), ("2025-11-28T18:15Z", None),
    ("2025-12-24T18:14Z", 20251224), ("2025-12-24T18:15Z", None), ("2025-12-25T12:00Z", None),
    ("2025-12-25T23:00Z", 20251226),
]

RTH_PROBES = [
    ("2025-03-07T14:29Z", None), ("2025-03-07T14:30Z", 20250307), ("2025-03-07T21:14Z", 20250307),
    ("2025-03-07T21:15Z", None), ("2025-03-10T13:30Z", 20250310), ("2025-03-10T20:15Z", None),
    ("2025-07-03T17:14Z", 20250703), ("2025-07-03T17:15Z", None), ("2025-07-04T15:00Z", None),
    ("2025-11-03T14:29Z", None), ("2025-11-03T14:30Z", 20251103),
    ("2025-11-27T15:00Z", None), ("2025-11-28T18:14Z", 20251128), ("2025-11-28T18:15Z", None),
]


def labels_of(s: S.Sessions, n: int) -> List[Optional[int]]:
    out: List[Optional[int]] = [None] * n
    kept = np.arange(n) if s.index is None else s.index
    for pos, lab in zip(kept.tolist(), s.session_ids.tolist()):
        out[pos] = lab
    return out


@NEEDS_CAL
@pytest.mark.parametrize("fn, probes", [(S.globex, GLOBEX_PROBES), (S.rth, RTH_PROBES)])
def test_probe_instants(fn, probes) -> None:
    t = np.array([ns(p) for p, _ in probes], dtype=np.int64)
    order = np.argsort(t, kind="stable")
    s = fn(t[order])
    got = labels_of(s, len(t))
    assert got == [probes[i][1] for i in order]


@NEEDS_CAL
def test_rth_boundaries_2025_literal(minute_grid: np.ndarray) -> None:
    s = S.rth(minute_grid)
    got = bounds(s)
    for label, (a, b) in RTH_2025.items():
        assert got[label] == (ns(a), ns(b)), label
    assert not {20250704, 20251127, 20251225, 20250308, 20250309} & set(got)
    assert s.index is not None and s.n_dropped == len(minute_grid) - s.n_kept > 0
    assert np.array_equal(s.take(minute_grid), minute_grid[s.mask])


def test_daily_and_custom_dst_literal() -> None:
    t = minutes("2025-03-08T00:00Z", "2025-03-11T00:00Z", 7)
    got = bounds(S.daily(t, "America/Chicago"))
    assert got[20250309] == (ns("2025-03-09T06:00Z"), ns("2025-03-10T05:00Z"))  # 23 hours
    t = minutes("2025-11-01T00:00Z", "2025-11-04T00:00Z", 7)
    got = bounds(S.daily(t, "America/Chicago"))
    assert got[20251102] == (ns("2025-11-02T05:00Z"), ns("2025-11-03T06:00Z"))  # 25 hours
    got = bounds(S.custom(t, "09:30", "16:00", "America/New_York"))
    assert got[20251103] == (ns("2025-11-03T14:30Z"), ns("2025-11-03T21:00Z"))
    # spanning midnight: labelled with the date on which it ends
    got = bounds(S.custom(t, "18:00", "17:00", "America/New_York"))
    assert got[20251103] == (ns("2025-11-02T23:00Z"), ns("2025-11-03T22:00Z"))
    assert got[20251102] == (ns("2025-11-01T22:00Z"), ns("2025-11-02T22:00Z"))  # 25 hours


def test_custom_nonexistent_and_ambiguous_boundaries() -> None:
    # 02:30 does not exist on 2025-03-09 in Chicago: the window starts at 03:00 CDT
    t = minutes("2025-03-09T00:00Z", "2025-03-10T00:00Z")
    got = bounds(S.custom(t, "02:30", "04:00", "America/Chicago"))
    assert got[20250309] == (ns("2025-03-09T08:00Z"), ns("2025-03-09T09:00Z"))
    # 01:30 happens twice on 2025-11-02: the first occurrence (CDT) starts the window
    t = minutes("2025-11-02T00:00Z", "2025-11-03T00:00Z")
    got = bounds(S.custom(t, "01:30", "03:00", "America/Chicago"))
    assert got[20251102] == (ns("2025-11-02T06:30Z"), ns("2025-11-02T09:00Z"))


def test_custom_24h_and_end_of_day() -> None:
    t = minutes("2025-01-06T00:00Z", "2025-01-09T00:00Z", 12)
    full = S.custom(t, "17:00", "17:00", "America/Chicago")
    assert full.index is None and full.n_kept == len(t)
    assert bounds(full)[20250107] == (ns("2025-01-06T23:00Z"), ns("2025-01-07T23:00Z"))
    eod = S.custom(t, "17:00", "24:00", "America/Chicago")
    assert bounds(eod)[20250106] == (ns("2025-01-06T23:00Z"), ns("2025-01-07T06:00Z"))
    d = S.daily(t, "UTC")
    assert d.labels.tolist() == [20250106, 20250107, 20250108, 20250109]
    assert bounds(d)[20250107] == (ns("2025-01-07T00:00Z"), ns("2025-01-08T00:00Z"))


def test_clock_globex_equals_custom_weekdays() -> None:
    t = minutes("2025-03-01T00:00Z", "2025-03-20T00:00Z", 13)
    a = S.globex(t, calendar=None)
    b = S.custom(t, "17:00", "16:00", "America/Chicago", weekdays_only=True)
    for f in ("offsets", "labels", "start_ns", "end_ns", "index"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert not set(a.labels % 100) & {1, 2, 8, 9, 15, 16}  # March 2025 weekends have no session


# --------------------------------------------------------------------------- plain reference

# CME Globex equity 2025, as published (and as pandas_market_calendars encodes it).
CLOSED_2025 = {dt.date(2025, 1, 1), dt.date(2025, 12, 25), dt.date(2026, 1, 1)}
HALT_2025 = {  # holiday sessions that halt early and are booked on the next trade date (CT)
    dt.date(2025, 1, 20): dt.time(12), dt.date(2025, 2, 17): dt.time(12),
    dt.date(2025, 4, 18): dt.time(8, 15), dt.date(2025, 5, 26): dt.time(12),
    dt.date(2025, 6, 19): dt.time(12), dt.date(2025, 7, 4): dt.time(12),
    dt.date(2025, 9, 1): dt.time(12), dt.date(2025, 11, 27): dt.time(12),
}
EARLY_2025 = {dt.date(2025, 7, 3): dt.time(12, 15), dt.date(2025, 11, 28): dt.time(12, 15),
              dt.date(2025, 12, 24): dt.time(12, 15)}
# not CME trade dates (CME_TradeDate): the holidays above plus the national day of mourning
NOT_TRADE_DATES_2025 = CLOSED_2025 | set(HALT_2025) | {dt.date(2025, 1, 9)}


def _local(t_ns: int, tz: ZoneInfo) -> dt.datetime:
    return dt.datetime.fromtimestamp(t_ns // 10**9, tz=tz) + dt.timedelta(microseconds=(t_ns % 10**9) // 1000)


def _hm(t: dt.datetime) -> dt.time:
    return t.time().replace(tzinfo=None)


def _next_trade_date(d: dt.date) -> dt.date:
    while d.weekday() >= 5 or d in NOT_TRADE_DATES_2025:
        d += dt.timedelta(days=1)
    return d


def ref_globex(t_ns: int, holidays: bool = True) -> Optional[int]:
    loc = _local(t_ns, CHI)
    tod, d = _hm(loc), loc.date()
    if tod >= dt.time(17):
        g = d + dt.timedelta(days=1)
    elif tod < dt.time(16):
        g = d
    else:
        return None
    if g.weekday() >= 5 or g in CLOSED_2025:
        return None
    close = HALT_2025.get(g) or EARLY_2025.get(g)
    if close is not None and d == g and tod >= close:
        return None
    label = _next_trade_date(g) if holidays else g
    return label.year * 10000 + label.month * 100 + label.day


def ref_rth(t_ns: int) -> Optional[int]:
    loc = _local(t_ns, CHI)
    tod, d = _hm(loc), loc.date()
    if d.weekday() >= 5 or d in NOT_TRADE_DATES_2025:
        return None
    end = min(dt.time(15, 15), EARLY_2025.get(d, dt.time(23)))
    if not dt.time(8, 30) <= tod < end:
        return None
    return d.year * 10000 + d.month * 100 + d.day


def ref_custom(t_ns: int, start: dt.time, end: dt.time, tz: ZoneInfo,
               weekdays_only: bool = False) -> Optional[int]:
    loc = _local(t_ns, tz)
    tod, d = _hm(loc), loc.date()
    if end <= start:  # spans midnight: the evening belongs to the next date
        if tod >= start:
            d += dt.timedelta(days=1)
        elif tod >= end:
            return None
    elif not start <= tod < end:
        return None
    if weekdays_only and d.weekday() >= 5:
        return None
    return d.year * 10000 + d.month * 100 + d.day


def check_against(s: S.Sessions, t: np.ndarray, expected: Sequence[Optional[int]]) -> None:
    got = labels_of(s, len(t))
    bad = [i for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    assert not bad, [(str(np.datetime64(int(t[i]), "ns")), got[i], expected[i]) for i in bad[:5]]
    assert np.array_equal(s.labels, np.unique([e for e in expected if e is not None]))
    assert s.offsets[0] == 0 and np.all(np.diff(s.offsets) > 0)


@pytest.fixture(scope="module")
def year_2025() -> np.ndarray:
    # every 7 minutes through 2025 (and into 2026): hits every boundary minute residue class
    return minutes("2024-12-30T00:00Z", "2026-01-03T00:00Z", 7)


@NEEDS_CAL
def test_globex_whole_year_vs_reference(year_2025: np.ndarray) -> None:
    t = year_2025[year_2025 < ns("2026-01-01T00:00Z")]
    check_against(S.globex(t), t, [ref_globex(int(x)) for x in t])


@NEEDS_CAL
def test_globex_no_holiday_folding_vs_reference(year_2025: np.ndarray) -> None:
    t = year_2025[(year_2025 >= ns("2025-01-02T00:00Z")) & (year_2025 < ns("2025-12-31T00:00Z"))]
    check_against(S.globex(t, holidays=False), t, [ref_globex(int(x), holidays=False) for x in t])


@NEEDS_CAL
def test_rth_whole_year_vs_reference(year_2025: np.ndarray) -> None:
    t = year_2025[year_2025 < ns("2026-01-01T00:00Z")]
    check_against(S.rth(t), t, [ref_rth(int(x)) for x in t])


_ZONES = ["America/Chicago", "America/New_York", "Europe/London", "Asia/Tokyo", "UTC"]
_times = st.builds(dt.time, st.integers(3, 23), st.sampled_from([0, 15, 30, 59]))


@given(
    offsets=st.lists(st.integers(0, 400 * 86400), min_size=1, max_size=80),
    start=_times, end=_times, zone=st.sampled_from(_ZONES), weekdays_only=st.booleans(),
)
def test_custom_vs_reference(offsets, start, end, zone, weekdays_only) -> None:
    # boundaries avoid 00:00-03:00, where DST transitions make local times skip or repeat
    t = np.sort(np.array(offsets, dtype=np.int64) * 10**9 + ns("2024-12-01T00:00Z"))
    s = S.custom(t, start, end, zone, weekdays_only=weekdays_only)
    check_against(s, t, [ref_custom(int(x), start, end, ZoneInfo(zone), weekdays_only) for x in t])


@given(offsets=st.lists(st.integers(0, 370 * 86400 * 1000), min_size=1, max_size=80),
       zone=st.sampled_from(_ZONES))
def test_daily_vs_reference(offsets, zone) -> None:
    t = np.sort(np.array(offsets, dtype=np.int64) * 10**6 + ns("2025-01-01T00:00Z"))
    s = S.daily(t, zone)
    expected = [int(_local(int(x), ZoneInfo(zone)).strftime("%Y%m%d")) for x in t]
    assert s.index is None
    check_against(s, t, expected)


@NEEDS_CAL
@given(offsets=st.lists(st.integers(-3 * 3600, 3 * 3600), min_size=1, max_size=60),
       anchors=st.lists(st.sampled_from([v for pair in GLOBEX_2025.values() for v in pair]),
                        min_size=1, max_size=60))
def test_globex_near_boundaries_vs_reference(offsets, anchors) -> None:
    t = np.sort(np.array([ns(a) + o * 10**9 for a, o in zip(anchors, offsets)], dtype=np.int64))
    check_against(S.globex(t), t, [ref_globex(int(x)) for x in t])
    check_against(S.rth(t), t, [ref_rth(int(x)) for x in t])


# --------------------------------------------------------------------------- options


@NEEDS_CAL
def test_closed_right() -> None:
    a, b = GLOBEX_2025[20250310]
    t = np.array([ns(a), ns(a) + 1, ns(b) - 1, ns(b)], dtype=np.int64)
    left = S.globex(t)
    assert left.index.tolist() == [0, 1, 2] and left.labels.tolist() == [20250310]
    right = S.globex(t, closed="right")
    assert right.index.tolist() == [1, 2, 3] and right.labels.tolist() == [20250310]
    assert bounds(right)[20250310] == (ns(a), ns(b))


@NEEDS_CAL
def test_outside_raise_names_the_row() -> None:
    t = np.array([ns("2025-03-07T21:59Z"), ns("2025-03-07T22:30Z")], dtype=np.int64)
    with pytest.raises(ValueError, match=r"ts\[1\] = 2025-03-07T22:30:00Z is outside every session"):
        S.globex(t, outside="raise")
    assert S.globex(t[:1], outside="raise").index is None


@NEEDS_CAL
def test_keep_empty() -> None:
    # data for 2025-07-01 and 2025-07-08 only: the trade dates in between become empty sessions
    t = np.concatenate([minutes("2025-07-01T14:00Z", "2025-07-01T15:00Z"),
                        minutes("2025-07-08T14:00Z", "2025-07-08T15:00Z")])
    s = S.globex(t, keep_empty=True)
    assert s.labels.tolist() == [20250701, 20250702, 20250703, 20250707, 20250708]
    assert np.diff(s.offsets).tolist() == [61, 0, 0, 0, 61]
    assert bounds(s)[20250703] == (ns(GLOBEX_2025[20250703][0]), ns(GLOBEX_2025[20250703][1]))
    assert S.globex(t).labels.tolist() == [20250701, 20250708]
    r = S.rth(t, keep_empty=True)
    assert r.labels.tolist() == [20250701, 20250702, 20250703, 20250707, 20250708]
    price = np.full(len(t), 5000.0)
    prof = vpoc.from_bars(*s.take(price, price, price, np.ones(len(t))), offsets=s.offsets,
                          tick_size=0.25)
    assert np.isnan(prof.poc[1:4]).all() and prof.poc[[0, 4]].tolist() == [5000.0, 5000.0]
    d = S.daily(t, "UTC", keep_empty=True)
    assert d.labels.tolist() == [20250701 + k for k in range(8)]


@NEEDS_CAL
def test_empty_and_all_dropped() -> None:
    for fn in (S.globex, S.rth, lambda x: S.daily(x), lambda x: S.custom(x, "1:00", "2:00", "UTC"),
               lambda x: S.globex(x, calendar=None)):
        s = fn(np.zeros(0, dtype=np.int64))
        assert s.n_sessions == 0 and s.offsets.tolist() == [0] and s.index is None
        assert s.session_ids.shape == (0,) and s.mask.shape == (0,)
    t = minutes("2025-07-05T00:00Z", "2025-07-05T12:00Z")  # a Saturday
    s = S.globex(t)
    assert s.n_sessions == 0 and s.index.shape == (0,) and s.n_dropped == len(t)
    h = s.take(np.ones(len(t)))
    prof = vpoc.from_bars(h, h, h, h, offsets=s.offsets, tick_size=0.25)
    assert prof.n_sessions == 0


@NEEDS_CAL
def test_one_row_and_duplicates() -> None:
    t = np.array([ns("2025-03-10T15:00Z")] * 3, dtype=np.int64)
    s = S.rth(t)
    assert s.labels.tolist() == [20250310] and s.offsets.tolist() == [0, 3] and s.index is None


@NEEDS_CAL
def test_holidays_false_keeps_holiday_sessions(minute_grid: np.ndarray) -> None:
    got = bounds(S.globex(minute_grid, holidays=False))
    assert got[20250704] == (ns("2025-07-03T22:00Z"), ns("2025-07-04T17:00Z"))
    assert got[20250707] == (ns("2025-07-06T22:00Z"), ns("2025-07-07T21:00Z"))
    assert got[20251127] == (ns("2025-11-26T23:00Z"), ns("2025-11-27T18:00Z"))
    rth = bounds(S.rth(minute_grid, holidays=False))
    assert rth[20250704] == (ns("2025-07-04T13:30Z"), ns("2025-07-04T17:00Z"))


@NEEDS_CAL
def test_calendar_instance_and_clock_rth(minute_grid: np.ndarray) -> None:
    import pandas_market_calendars as pmc

    a = S.globex(minute_grid, calendar=pmc.get_calendar("CME Globex Equity"),
                 trade_dates=pmc.get_calendar("CME_TradeDate"))
    b = S.globex(minute_grid)
    assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.labels, b.labels)
    clock = bounds(S.rth(minute_grid, calendar=None))
    assert clock[20250704] == (ns("2025-07-04T13:30Z"), ns("2025-07-04T20:15Z"))  # no calendar
    assert 20250705 not in clock


@NEEDS_CAL
def test_synth_winter_bars_match_synth_sessions() -> None:
    bars = vpoc.synth.es_bars(40, bars_per_session=1380, seed=3)  # Jan 2 .. Feb 26 2019, CST
    clock = S.globex(bars.timestamp, calendar=None)
    assert clock.index is None
    assert np.array_equal(clock.offsets, bars.offsets)
    assert np.array_equal(clock.labels, bars.session_labels)
    # with the calendar, MLK day (2019-01-21) and Presidents' Day (2019-02-18) halt at 12:00 CST
    # and are booked on the next day: 4 hours of each synthetic holiday session are outside
    cal = S.globex(bars.timestamp)
    assert cal.n_dropped == 2 * 240
    assert 20190121 not in cal.labels and 20190218 not in cal.labels
    counts = dict(zip(cal.labels.tolist(), np.diff(cal.offsets).tolist()))
    assert counts[20190122] == 1140 + 1380 and counts[20190219] == 1140 + 1380


@NEEDS_CAL
def test_plugs_into_from_bars_vs_numpy() -> None:
    bars = vpoc.synth.es_bars(12, seed=5)
    s = S.rth(bars.timestamp)
    h, lo, c, v = s.take(bars.high, bars.low, bars.close, bars.volume)
    prof = vpoc.from_bars(h, lo, c, v, offsets=s.offsets, tick_size=0.25, distribute="close",
                          poc_tie="low")
    ref = [ref_rth_synth(int(x)) for x in bars.timestamp]
    for k, label in enumerate(s.labels):
        rows = np.array([r == label for r in ref])
        vol = bars.volume[rows]
        ticks = np.rint(bars.close[rows] / 0.25).astype(np.int64)
        per_tick = np.bincount(ticks - ticks.min(), weights=vol)
        assert prof.total_volume[k] == vol.sum()
        assert prof.poc[k] == (ticks.min() + int(np.argmax(per_tick))) * 0.25


def ref_rth_synth(t_ns: int) -> Optional[int]:
    """RTH of 2019 (no early closes in the synthetic range; MLK/Presidents' Day closed)."""
    loc = _local(t_ns, CHI)
    d = loc.date()
    if d.weekday() >= 5 or d in (dt.date(2019, 1, 1), dt.date(2019, 1, 21), dt.date(2019, 2, 18)):
        return None
    if not dt.time(8, 30) <= _hm(loc) < dt.time(15, 15):
        return None
    return d.year * 10000 + d.month * 100 + d.day


# --------------------------------------------------------------------------- inputs and take()


@NEEDS_CAL
@NEEDS_POLARS
def test_input_types_agree() -> None:
    t = minutes("2025-11-01T00:00Z", "2025-11-04T00:00Z", 17)
    expected = S.globex(t)
    idx = pd.DatetimeIndex(t.view("datetime64[ns]")).tz_localize("UTC")
    variants = [
        t.view("datetime64[ns]"),
        t.view("datetime64[ns]").astype("datetime64[s]"),
        idx, idx.tz_convert("America/Chicago"), pd.Series(idx.tz_convert("Asia/Tokyo")),
        t.astype(np.uint64), t.tolist(),
        pl.Series(t.view("datetime64[ns]")).dt.replace_time_zone("UTC").dt.convert_time_zone(
            "America/Chicago"),
        vio.Bars(t, np.ones(len(t)), np.ones(len(t)), np.ones(len(t)), np.ones(len(t)),
                     np.ones(len(t))),
    ]
    for v in variants:
        got = S.globex(v)
        assert np.array_equal(got.offsets, expected.offsets)
        assert np.array_equal(got.index, expected.index)


@NEEDS_CAL
def test_take_torch() -> None:
    torch = pytest.importorskip("torch")
    t = minutes("2025-03-10T13:00Z", "2025-03-10T14:00Z")
    s = S.rth(t)
    x = np.arange(len(t), dtype=np.float64)
    assert torch.equal(s.take(torch.from_numpy(x)), torch.from_numpy(x[s.index]))


@NEEDS_CAL
def test_take_variants() -> None:
    t = minutes("2025-03-10T13:00Z", "2025-03-10T14:00Z")
    s = S.rth(t)
    assert s.index is not None
    x = np.arange(len(t), dtype=np.float64)
    assert np.array_equal(s.take(x), x[s.index])
    assert np.array_equal(s.take(list(x)), x[s.index])
    ser = pd.Series(x, index=np.arange(len(t)) + 100)
    assert np.array_equal(s.take(ser).to_numpy(), x[s.index])
    a, b = s.take(x, x * 2)
    assert np.array_equal(b, 2 * x[s.index])
    full = S.daily(t)
    assert full.take(x) is x
    assert np.array_equal(s.mask, np.isin(np.arange(len(t)), s.index))
    assert s.n_kept + s.n_dropped == len(t) and s.n_kept == 31
    df = s.to_pandas()
    assert df["label"].tolist() == [20250310] and str(df["start"].dtype) == "datetime64[ns, UTC]"
    assert "20250310" in repr(s)
    with pytest.raises(ValueError, match="argument 0 has length 3"):
        s.take(np.ones(3))
    with pytest.raises(TypeError, match="at least one array"):
        s.take()
    with pytest.raises(TypeError, match="argument 0 must be a per-row array"):
        s.take(5)


@pytest.mark.parametrize("ts, exc, match", [
    (np.array([3, 2, 1], dtype=np.int64), ValueError, r"ts must be sorted .*ts\[1\]"),
    (np.array([0.5, 1.0]), TypeError, "ts must be integer epoch times"),
    (np.array(["2025-01-01"], dtype=object), TypeError, "ts must be integer epoch times"),
    (np.zeros((2, 2), dtype=np.int64), ValueError, "ts must be 1-D"),
    (np.array(["2025-01-01", "NaT"], dtype="datetime64[ns]"), ValueError, r"ts\[1\] is NaT"),
    (pd.Series(pd.to_datetime(["2025-01-01"])), ValueError, "timezone-naive"),
    (pd.DataFrame({"a": [1]}), TypeError, "DataFrame"),
    pytest.param(lambda: pl.Series([dt.datetime(2025, 1, 1)]), ValueError, "timezone-naive polars",
                 marks=NEEDS_POLARS),
    pytest.param(lambda: pl.DataFrame({"a": [1]}), TypeError, "polars DataFrame", marks=NEEDS_POLARS),
    (pd.Series(pd.to_datetime(["2025-01-01", None]).tz_localize("UTC")), ValueError,
     r"ts\[1\] is NaT"),
])
def test_bad_ts(ts, exc, match) -> None:
    ts = ts() if callable(ts) else ts  # polars inputs are made only when polars is installed
    with pytest.raises(exc, match=match):
        S.globex(ts)


T1 = np.array([ns("2025-03-10T15:00Z")], dtype=np.int64)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: S.globex(T1, closed="both"), ValueError, "closed must be 'left' or 'right'"),
    (lambda: S.globex(T1, outside="keep"), ValueError, "outside must be 'drop' or 'raise'"),
    (lambda: S.globex(T1, holidays="yes"), ValueError, "holidays must be 'merge'"),
    (lambda: S.globex(T1, holidays=1), TypeError, "holidays must be 'merge' or 'own'"),
    (lambda: S.globex(T1, keep_empty=1), TypeError, "keep_empty must be True or False"),
    pytest.param(lambda: S.globex(T1, calendar="NO_SUCH_CAL"), ValueError,
                 "calendar='NO_SUCH_CAL' is not", marks=NEEDS_CAL),
    pytest.param(lambda: S.globex(T1, calendar=5), TypeError,
                 "calendar must be a pandas_market_calendars", marks=NEEDS_CAL),
    pytest.param(lambda: S.globex(T1, trade_dates="NOPE"), ValueError, "trade_dates='NOPE'",
                 marks=NEEDS_CAL),
    (lambda: S.rth(T1, start="25:00"), ValueError, "start must be a time of day"),
    (lambda: S.rth(T1, end="15"), ValueError, "end must be a time of day"),
    (lambda: S.rth(T1, start=830), TypeError, "start must be a 'HH:MM' string"),
    (lambda: S.rth(T1, start="15:15", end="08:30"), ValueError, "end .* must be after start"),
    (lambda: S.rth(T1, tz="Mars/Olympus"), ValueError, "tz='Mars/Olympus' is not a known"),
    (lambda: S.daily(T1, tz=3), TypeError, "tz must be a time zone name"),
    (lambda: S.daily(T1, weekdays_only=None), TypeError, "weekdays_only must be True or False"),
    (lambda: S.custom(T1, "24:00", "10:00", "UTC"), ValueError, "start must be a time of day"),
    (lambda: S.custom(T1, dt.time(1, tzinfo=UTC), "10:00", "UTC"), ValueError, "naive time"),
])
def test_bad_arguments(call, exc, match) -> None:
    with pytest.raises(exc, match=match):
        call()


def test_time_objects_and_seconds() -> None:
    t = minutes("2025-03-10T13:00Z", "2025-03-10T14:00Z")
    a = S.custom(t, dt.time(8, 30, 30), dt.time(8, 45), "America/Chicago")
    b = S.custom(t, "08:30:30", "08:45:00", "America/Chicago")
    assert np.array_equal(a.index, b.index)
    assert bounds(a)[20250310] == (ns("2025-03-10T13:30:30Z"), ns("2025-03-10T13:45Z"))


def test_import_is_lazy() -> None:
    code = ("import sys, vpoc, vpoc.io, vpoc.sessions; "
            "assert 'pandas' not in sys.modules and 'pandas_market_calendars' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
