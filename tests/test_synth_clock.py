"""vpoc.synth's session clock against the Globex session rule (trial 4 leftover: es_bars + sessions.globex
warned that the time zone looked wrong).

Contract: a synthetic session starts at 17:00 America/Chicago with US daylight saving time (23:00 UTC in
winter, 22:00 UTC in summer), so no synthetic bar falls in the daily 16:00-17:00 halt and the Globex rule
without a calendar gives back the synthetic sessions exactly, across the DST switches.
"""

from __future__ import annotations

import datetime as dt
import warnings

import numpy as np
import pytest

import _deps

vpoc = pytest.importorskip("vpoc")

from vpoc import synth  # noqa: E402

NEEDS_CAL = _deps.needs("pandas_market_calendars")
HOUR = 3600 * 10**9


def _chicago():
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        return zoneinfo.ZoneInfo("America/Chicago")
    except Exception:  # noqa: BLE001 - no time zone database on this machine
        pytest.skip("no America/Chicago in the time zone database")


def test_us_dst_equals_the_time_zone_database():
    """Every day 1990-2039: 17:00 local is DST by the rule iff the tz database says so."""
    z = _chicago()
    days = np.arange(np.datetime64("1990-01-01"), np.datetime64("2040-01-01"))
    want = np.array([bool(dt.datetime.fromisoformat(f"{d}T17:00").replace(tzinfo=z).dst()) for d in days])
    np.testing.assert_array_equal(synth._us_dst(days), want)


def test_session_starts_are_17_chicago():
    z = _chicago()
    bars = synth.es_bars(n_sessions=300, bars_per_session=3, seed=1)  # 2019-01-02 .. 2020-02-25
    starts = bars.timestamp[bars.offsets[:-1]]
    local = [dt.datetime.fromtimestamp(int(t) // 10**9, tz=dt.timezone.utc).astimezone(z) for t in starts]
    assert {(x.hour, x.minute) for x in local} == {(17, 0)}
    hours = sorted({int(t) % (24 * HOUR) // HOUR for t in starts})
    assert hours == [22, 23]  # summer and winter
    for x, label in zip(local, bars.session_labels):  # the evening before the trading date
        assert int((x + dt.timedelta(days=1)).strftime("%Y%m%d")) == int(label)


def test_globex_rule_gives_back_the_synthetic_sessions():
    """Without a calendar, sessions.globex keeps every synthetic bar in its own session, over a year with
    two DST switches (before: the summer sessions' last hour fell in the daily halt)."""
    pytest.importorskip("pandas")
    bars = synth.es_bars(n_sessions=300, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no DroppedRowsWarning
        s = vpoc.sessions.globex(bars.timestamp, calendar=None)
    assert s.n_dropped == 0
    np.testing.assert_array_equal(s.offsets, bars.offsets)
    np.testing.assert_array_equal(s.labels, bars.session_labels)


@NEEDS_CAL
def test_globex_calendar_finds_no_halt_rows():
    """With the exchange calendar only the unmodelled holidays and early closes are left out; no row is in the
    daily halt, so the warning does not say the time zone is likely wrong."""
    bars = synth.es_bars(n_sessions=80, seed=3)  # 2019-01-02 .. 2019-04-23, across the March switch
    with pytest.warns(vpoc.DroppedRowsWarning) as rec:
        s = vpoc.sessions.globex(bars.timestamp)
    assert "halt" not in s.dropped_by_cause
    assert set(s.dropped_by_cause) <= {"holiday-closed", "early-close"}
    text = " ".join(str(w.message) for w in rec)
    assert "likely wrong" not in text
