"""session_features / bar_features: which rows form a session, bar labels, the IB window, clock range.

Contract checked: issue 23 points 1, 3, 5 (Globex default, frame grouping, label="close", IB on the
trade date's own RTH) and issue 28 points 4, 6, 7 (clock range, unsorted timestamps, IB boundary).
References are plain pandas (tz_convert, boolean masks), never vpoc's own clock code.
"""

from __future__ import annotations

import datetime as dt
import warnings
import zoneinfo

import numpy as np
import pytest

import _deps

pd = _deps.require("pandas")
_deps.require("pandas_market_calendars")  # the Globex default reads the CME calendars

import vpoc  # noqa: E402
from vpoc import DroppedRowsWarning, GuessedDefaultWarning  # noqa: E402

TICK = 0.25
MIN = 60 * 10**9
CHI = "America/Chicago"
IB_COLS = ("ib_high", "ib_low", "ib_range")
TPO_COLS = ("tpo_poc", "single_prints")


# ------------------------------------------------------------------------------- data
def globex_minutes(start: str, end: str) -> np.ndarray:
    """Open stamps (int64 ns UTC) of every minute that lies in a CME Globex session from
    ``start`` 17:00 CT to ``end`` 16:00 CT (the holiday halts and early closes included)."""
    every = pd.date_range(pd.Timestamp(start + " 17:00", tz=CHI), pd.Timestamp(end + " 15:59", tz=CHI),
                          freq="1min")
    ts = every.tz_convert("UTC").as_unit("ns").asi8
    s = vpoc.sessions.globex(ts, on_outside="drop")
    return ts if s.index is None else ts[s.index]


def random_bars(ts: np.ndarray, seed: int = 0):
    """Random-walk one-minute bars on the 0.25 grid at open stamps ``ts``."""
    rng = np.random.default_rng(seed)
    n = ts.shape[0]
    close_t = 24000 + np.cumsum(rng.integers(-3, 4, n))
    open_t = np.r_[close_t[0], close_t[:-1]]
    high_t = np.maximum(open_t, close_t) + rng.integers(0, 3, n)
    low_t = np.minimum(open_t, close_t) - rng.integers(0, 3, n)
    vol = rng.integers(1, 50, n).astype(np.int64)
    f = lambda t: t.astype(np.float64) * TICK  # noqa: E731
    return f(high_t), f(low_t), f(close_t), vol, f(open_t)


@pytest.fixture(scope="module")
def es():
    """About 51 Globex sessions of 2025 (MLK and Presidents' Day merged into the next trade date)."""
    ts = globex_minutes("2025-01-01", "2025-03-14")
    h, lo, c, v, o = random_bars(ts, 1)
    return dict(ts=ts, high=h, low=lo, close=c, volume=v, open=o)


def quiet(fn, *args, **kw):
    """Calls fn with the warnings it is expected to give (guessed defaults) recorded."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn(*args, **kw)
    return out, w


def ref_ib(ts, high, low, offsets, trade_dates, rth="08:30", minutes=60, tz=CHI):
    """Per session (ib_high, ib_low): bars opening in [D rth, D rth + minutes) local time on the
    trade date D, written with pandas."""
    local = pd.to_datetime(ts, unit="ns", utc=True).tz_convert(tz).tz_localize(None)
    hi, lo = [], []
    for s, d in enumerate(trade_dates):
        a, b = int(offsets[s]), int(offsets[s + 1])
        start = pd.Timestamp(str(d)) + pd.Timedelta(rth + ":00")
        inside = (local[a:b] >= start) & (local[a:b] < start + pd.Timedelta(minutes=minutes))
        m = np.asarray(inside)
        hi.append(high[a:b][m].max() if m.any() else np.nan)
        lo.append(low[a:b][m].min() if m.any() else np.nan)
    return np.array(hi), np.array(lo)


def yyyymmdd(labels):
    return [pd.Timestamp(str(int(x))).date() for x in labels]


# ------------------------------------------------------------------------------- 23.3 grouping
def test_23_3_timestamps_without_grouping_get_globex_sessions(es):
    args = (es["high"], es["low"], es["close"], es["volume"])
    with pytest.warns(GuessedDefaultWarning, match="Globex"):
        t = vpoc.session_features(*args, open=es["open"], timestamp=es["ts"], tick_size=TICK)
    s = vpoc.sessions.globex(es["ts"])
    assert t.session_rule == "globex" and t.dropped_rows == 0
    assert len(t) == len(s) >= 45  # one row per Globex session, not one for the whole input
    np.testing.assert_array_equal(t.session_labels, s.labels)
    ids = vpoc.session_features(*args, open=es["open"], timestamp=es["ts"], tick_size=TICK,
                                session_ids=s.session_ids)
    same = np.isnan(t.values) & np.isnan(ids.values) | (t.values == ids.values)
    ib = [t.columns.index(c) for c in IB_COLS]
    same[:, ib] = True  # the IB differs on the merged holidays (dated vs undated sessions: 23.5)
    assert same.all()
    # naming the rule announces nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        named = vpoc.session_features(*args, open=es["open"], timestamp=es["ts"], tick_size=TICK,
                                      session="globex")
        alias = vpoc.bar_features(*args, open=es["open"], timestamp=es["ts"], tick_size=TICK,
                                  sessions=s)
    np.testing.assert_array_equal(named.values, t.values)
    assert alias.session_rule == s.definition and len(alias.offsets) == len(s) + 1
    with pytest.warns(GuessedDefaultWarning, match="Globex"):
        b = vpoc.bar_features(*args, timestamp=es["ts"], tick_size=TICK)
    assert b.session_rule == "globex"
    np.testing.assert_array_equal(b.offsets, s.offsets)


@pytest.mark.parametrize("column", ["session_id", "session", "trade_date", "date"])
def test_23_3_frame_grouped_by_its_session_column(es, column):
    s = vpoc.sessions.globex(es["ts"])
    labels = s.session_ids
    values = {"session_id": labels, "session": labels.astype(str),
              "trade_date": pd.to_datetime(labels.astype(str)).date,
              "date": pd.to_datetime(labels.astype(str))}[column]
    frame = pd.DataFrame(dict(high=es["high"], low=es["low"], close=es["close"], volume=es["volume"],
                              open=es["open"], timestamp=pd.to_datetime(es["ts"], utc=True)))
    frame[column] = values
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a column is no guess
        t = vpoc.session_features(frame, tick_size=TICK)
        b = vpoc.bar_features(frame, tick_size=TICK)
    assert t.session_rule == f"column {column!r}" and len(t) == len(s)
    np.testing.assert_array_equal(b.offsets, s.offsets)
    want = vpoc.session_features(es["high"], es["low"], es["close"], es["volume"], open=es["open"],
                                 timestamp=es["ts"], tick_size=TICK, session=s)
    cols = [c for c in t.columns if c not in IB_COLS] if column in ("session_id", "session") else t.columns
    np.testing.assert_array_equal(t.select(cols).values, want.select(cols).values)


def test_23_3_polars_frame_grouped_by_its_session_column(es):
    pl = pytest.importorskip("polars")
    s = vpoc.sessions.globex(es["ts"])
    frame = pl.DataFrame(dict(high=es["high"], low=es["low"], close=es["close"], volume=es["volume"],
                              session_id=s.session_ids))
    t = vpoc.session_features(frame, tick_size=TICK)
    assert len(t) == len(s) and t.session_rule == "column 'session_id'"
    np.testing.assert_array_equal(t.session_labels, s.labels)


def test_23_3_unrecognized_grouping_raises(es):
    args = (es["high"], es["low"], es["close"], es["volume"])
    for fn in (vpoc.session_features, vpoc.bar_features):
        with pytest.raises(ValueError, match=r"session='weekly'.*'globex', 'rth', 'daily'.*'session_id'"):
            fn(*args, timestamp=es["ts"], tick_size=TICK, session="weekly")
        with pytest.raises(TypeError, match="session must be"):
            fn(*args, timestamp=es["ts"], tick_size=TICK, session=42)
        with pytest.raises(ValueError, match="not both"):
            fn(*args, timestamp=es["ts"], tick_size=TICK, session="globex", offsets=[0, len(es["ts"])])
        with pytest.raises(ValueError, match="not both"):
            fn(*args, tick_size=TICK, session="globex", sessions="rth")
        with pytest.raises(ValueError, match="builds sessions from timestamps"):
            fn(*args, tick_size=TICK, session="globex")
    frame = pd.DataFrame(dict(high=[2.0, 2.0, 2.0], low=[1.0, 1.0, 1.0], close=[1.5, 1.5, 1.5],
                              volume=[1, 1, 1], session=["a", "b", "a"]))
    with pytest.raises(ValueError, match="column 'session'.*'a'.*not contiguous"):
        vpoc.session_features(frame, tick_size=TICK)
    frame["session"] = [2, 1, 1]
    with pytest.raises(ValueError, match="column 'session' must be non-decreasing"):
        vpoc.session_features(frame, tick_size=TICK)
    frame["session"] = [1.0, np.nan, 2.0]
    with pytest.raises(ValueError, match=r"column 'session'\[1\] is missing"):
        vpoc.session_features(frame, tick_size=TICK)
    frame = frame.drop(columns="session").assign(trade_date=["2025-01-02", "2025-01-02", "soon"])
    with pytest.raises(ValueError, match="column 'trade_date'.*'soon' is not a date"):
        vpoc.session_features(frame, tick_size=TICK)
    frame = frame.assign(trade_date=[20250102, 20250102, 20250230])
    with pytest.raises(ValueError, match="20250230 is not a date"):
        vpoc.session_features(frame, tick_size=TICK)
    with pytest.raises(ValueError, match=r"session='when'.*this frame has \['trade_date'\]"):
        vpoc.session_features(frame, tick_size=TICK, session="when")


def test_23_3_rows_outside_sessions_are_counted(es):
    # stray prints in the daily halt (16:00-17:00 CT) and on a Saturday: left out and reported
    extra = pd.DatetimeIndex(["2025-01-07 16:10", "2025-01-07 16:40", "2025-01-11 10:00"], tz=CHI).tz_convert("UTC").as_unit("ns").asi8
    ts = np.sort(np.r_[es["ts"], np.repeat(extra, 40)])
    h, lo, c, v, o = random_bars(ts, 2)
    stray = np.isin(ts, extra)
    with pytest.warns(DroppedRowsWarning) as rec:
        t, _ = quiet(vpoc.session_features, h, lo, c, v, timestamp=ts, tick_size=TICK)
        b = vpoc.bar_features(h, lo, c, v, timestamp=ts, tick_size=TICK, session="globex")
    assert any("120" in str(r.message) for r in rec)
    for tab in (t, b):
        assert tab.dropped_rows == 120 == int(stray.sum())
        assert tab.dropped_volume == float(v[stray].sum())
        assert tab.session_rule == "globex"
    np.testing.assert_array_equal(b.input_index, np.flatnonzero(~stray))
    assert len(b) == int((~stray).sum())
    # the same table as on the kept rows alone
    k = ~stray
    want = vpoc.bar_features(h[k], lo[k], c[k], v[k], timestamp=ts[k], tick_size=TICK, session="globex")
    np.testing.assert_array_equal(b.values, want.values)
    assert "dropped_rows=120" in repr(b) and b.select(["cum_volume"]).dropped_rows == 120
    # a Sessions object built beforehand: the same rows and counts
    s = vpoc.sessions.globex(ts, volume=v, on_outside="drop")
    t2 = vpoc.session_features(h, lo, c, v, timestamp=ts, tick_size=TICK, session=s)
    assert t2.dropped_rows == 120 and t2.dropped_volume == float(v[stray].sum())
    np.testing.assert_array_equal(t2.values, t.values)
    # or its kept rows
    t3 = vpoc.session_features(*s.take(h, lo, c, v), timestamp=s.take(ts), tick_size=TICK, session=s)
    np.testing.assert_array_equal(t3.values, t.values)
    with pytest.raises(ValueError, match="built from"):
        vpoc.session_features(h[:10], lo[:10], c[:10], v[:10], timestamp=ts[:10], tick_size=TICK, session=s)


# ------------------------------------------------------------------------------- 23.1 labels
def test_23_1_close_stamped_bars_with_label_close_equal_open_stamped(es):
    args = (es["high"], es["low"], es["close"], es["volume"])
    ts_open, ts_close = es["ts"], es["ts"] + MIN
    s_open = vpoc.sessions.globex(ts_open)
    s_close = vpoc.sessions.globex(ts_close, label="close", interval=60)
    np.testing.assert_array_equal(s_open.offsets, s_close.offsets)
    ref = vpoc.session_features(*args, open=es["open"], timestamp=ts_open, tick_size=TICK, session=s_open)
    # stamps as closes, said so: every column equal (IB and TPO included)
    got = vpoc.session_features(*args, open=es["open"], timestamp=ts_close, tick_size=TICK,
                                session=s_close, label="close", interval="1min")
    np.testing.assert_array_equal(got.values, ref.values)
    assert got.label == "close" and got.interval == 60.0
    with pytest.warns(GuessedDefaultWarning, match="interval was inferred as 60 s"):
        inferred = vpoc.session_features(*args, open=es["open"], timestamp=ts_close, tick_size=TICK,
                                         session="globex", label="close")
    np.testing.assert_array_equal(inferred.values, ref.values)
    # sessions built from the closes with label="close", the closes passed as opens: refused
    with pytest.raises(ValueError, match=r"timestamp\[\d+\].*outside its session.*pass label='close'"):
        vpoc.session_features(*args, timestamp=ts_close, tick_size=TICK, session=s_close)
    with pytest.raises(ValueError, match=r"outside its session.*Are these bar closes"):
        vpoc.bar_features(*args, timestamp=ts_close, tick_size=TICK, session=s_open)
    bar_ref = vpoc.bar_features(*args, timestamp=ts_open, tick_size=TICK, session="globex")
    bar_got = vpoc.bar_features(*args, timestamp=ts_close, tick_size=TICK, session="globex",
                                label="close", interval=60)
    np.testing.assert_array_equal(bar_got.values, bar_ref.values)
    # the same stamps taken as opens: the IB and TPO of many sessions move (the defect it fixes)
    wrong = vpoc.session_features(*args, open=es["open"], timestamp=ts_close, tick_size=TICK,
                                  offsets=s_close.offsets)
    differ = lambda cols: int(np.sum(np.any(ref.select(cols).values != wrong.select(cols).values, axis=1)))  # noqa: E731
    assert differ(IB_COLS) > 5 and differ(TPO_COLS) > 5


def test_23_1_label_errors(es):
    args = (es["high"][:5], es["low"][:5], es["close"][:5], es["volume"][:5])
    with pytest.raises(ValueError, match="label must be 'open'"):
        vpoc.session_features(*args, timestamp=es["ts"][:5], tick_size=TICK, offsets=[0, 5], label="end")
    with pytest.raises(ValueError, match="label= and interval= describe timestamps"):
        vpoc.session_features(*args, tick_size=TICK, label="close")
    with pytest.raises(ValueError, match="interval must be a positive"):
        vpoc.bar_features(*args, timestamp=es["ts"][:5], tick_size=TICK, offsets=[0, 5], label="close",
                          interval=0)


# ------------------------------------------------------------------------------- 23.5 IB on the trade date
def mlk_bars():
    """Globex bars 2025-01-16 .. 2025-01-22: trade date 2025-01-21 holds MLK day's (Jan 20) trading
    from Sunday 17:00 CT to the 12:00 CT holiday halt. The holiday morning trades far above the
    trade date's own morning, so an IB taken on it is visibly wrong."""
    ts = globex_minutes("2025-01-15", "2025-01-22")
    h, lo, c, v, o = random_bars(ts, 3)
    local = pd.to_datetime(ts, unit="ns", utc=True).tz_convert(CHI)
    holiday = np.asarray((local.date == pd.Timestamp("2025-01-20").date()) & (local.hour < 12))
    h[holiday] += 100.0
    return ts, h, lo, c, v, o


def test_23_5_ib_of_a_merged_holiday_session_is_the_trade_dates_own(es):
    ts, h, lo, c, v, o = mlk_bars()
    s = vpoc.sessions.globex(ts)
    k = int(np.flatnonzero(s.labels == 20250121)[0])
    assert s.merged_days[k] == 2
    want_hi, want_lo = ref_ib(ts, h, lo, s.offsets, yyyymmdd(s.labels))
    local = pd.to_datetime(ts, unit="ns", utc=True).tz_convert(CHI).tz_localize(None)
    a, b = s.offsets[k], s.offsets[k + 1]
    own = np.asarray((local[a:b] >= "2025-01-21 08:30") & (local[a:b] < "2025-01-21 09:30"))
    assert want_hi[k] == h[a:b][own].max() < 6100  # the trade date's own morning, not the holiday's
    frame = pd.DataFrame(dict(high=h, low=lo, close=c, volume=v, timestamp=ts,
                              trade_date=pd.to_datetime(s.session_ids.astype(str)).date))
    for t in (vpoc.session_features(h, lo, c, v, timestamp=ts, tick_size=TICK, session=s),
              vpoc.session_features(h, lo, c, v, timestamp=ts, tick_size=TICK, session="globex"),
              vpoc.session_features(frame, tick_size=TICK),
              vpoc.session_features(h, lo, c, v, timestamp=ts, tick_size=TICK,
                                    session_ids=pd.to_datetime(s.session_ids.astype(str)).values)):
        np.testing.assert_array_equal(t["ib_high"], want_hi.astype(np.float32))
        np.testing.assert_array_equal(t["ib_low"], want_lo.astype(np.float32))
    # bar table: no IB before the trade date's 08:30 CT (the holiday morning is not in it)
    bt = vpoc.bar_features(h, lo, c, v, timestamp=ts, tick_size=TICK, session=s)
    d = bt["ib_high_dist"][a:b]
    first = int(np.argmax(own))
    assert np.isnan(d[:first]).all() and not np.isnan(d[first:]).any()
    assert d[-1] == np.float32((h[a:b][own].max() - c[b - 1]) / TICK)


def test_23_5_ib_on_every_dated_session_matches_pandas(es):
    s = vpoc.sessions.globex(es["ts"])
    t = vpoc.session_features(es["high"], es["low"], es["close"], es["volume"], timestamp=es["ts"],
                              tick_size=TICK, session=s, ib_minutes=45, rth_start="08:45")
    hi, lo = ref_ib(es["ts"], es["high"], es["low"], s.offsets, yyyymmdd(s.labels), "08:45", 45)
    np.testing.assert_array_equal(t["ib_high"], hi.astype(np.float32))
    np.testing.assert_array_equal(t["ib_low"], lo.astype(np.float32))


# ------------------------------------------------------------------------------- 28.4 clock range
def wall(ts_ns, tz):
    """Local wall-clock datetimes with the standard library (pandas cannot hold 2262-04-12)."""
    return [(dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=int(t) // 1000))
            .astimezone(zoneinfo.ZoneInfo(tz)) for t in ts_ns]


@pytest.mark.parametrize("tz, stamps", [
    ("Asia/Tokyo", ["2262-04-10T23:00", "2262-04-11T14:00", "2262-04-11T15:00", "2262-04-11T23:00",
                    "2262-04-11T23:30", "2262-04-11T23:47:16"]),
    ("America/Chicago", ["1677-09-21T00:13", "1677-09-21T06:00", "1677-09-21T14:20", "1677-09-22T12:00"]),
])
@pytest.mark.filterwarnings("ignore::vpoc.sessions.SessionHoursWarning")  # 08:00 in several zones on purpose (t8fix)
def test_28_4_local_clock_near_the_int64_limits_is_exact(tz, stamps):
    # 2262-04-11 23:00 UTC is 2262-04-12 08:00 in Tokyo, past the int64 ns range: the clock wrapped
    # (minute_of_day 505.44 instead of 480); Chicago's 1677 offset is its local mean time, -5:50:36
    ts = np.array(stamps, dtype="datetime64[ns]").astype(np.int64)
    n = ts.shape[0]
    p = 100.0 + np.arange(n)
    local = wall(ts, tz)
    minute = np.array([w.hour * 60 + w.minute + w.second / 60 for w in local])
    b = vpoc.bar_features(p, p - 1, p, np.ones(n), timestamp=ts, tick_size=TICK, offsets=[0, n], tz=tz,
                          rth_start="08:00", ib_minutes=60)
    np.testing.assert_array_equal(b["minute_of_day"], minute.astype(np.float32))
    in_ib = np.array([w.hour == 8 for w in local])
    t = vpoc.session_features(p, p - 1, p, np.ones(n), timestamp=ts, tick_size=TICK, offsets=[0, n], tz=tz,
                              rth_start="08:00", ib_minutes=60, lookbacks=())
    assert t["ib_high"][0] == (p[in_ib].max() if in_ib.any() else np.float32("nan")) or not in_ib.any()
    if tz == "Asia/Tokyo":
        assert b["minute_of_day"][3] == 480.0 and in_ib[3] and t["ib_high"][0] == p[in_ib].max()
        # dated sessions: the IB of trade date 2262-04-12 (a local date past the int64 ns range)
        frame = pd.DataFrame(dict(high=p, low=p - 1, close=p, volume=np.ones(n), timestamp=ts,
                                  trade_date=[dt.date(2262, 4, 11)] * 3 + [dt.date(2262, 4, 12)] * 3))
        t2 = vpoc.session_features(frame, tick_size=TICK, tz=tz, rth_start="08:00", lookbacks=())
        day = np.array([w.date() for w in local]) == np.array(frame["trade_date"])
        assert t2["ib_high"][0] == p[:3][(in_ib & day)[:3]].max() == 100.0
        assert t2["ib_high"][1] == p[3:][(in_ib & day)[3:]].max() == 105.0


@pytest.mark.parametrize("fn", [vpoc.session_features, vpoc.bar_features])
def test_28_4_clock_options_are_range_checked(fn):
    one = np.array([2.0, 2.0])
    ts = np.array(["2025-01-02T15:00", "2025-01-02T15:01"], dtype="datetime64[ns]")
    for name in ("ib_minutes",) + (("tpo_minutes",) if fn is vpoc.session_features else ()):
        with pytest.raises(ValueError, match=f"{name} must be <= 1440"):
            fn(one, one, one, one, timestamp=ts, tick_size=TICK, offsets=[0, 2], **{name: 10**12})
    b = vpoc.bar_features(one, one, one, one, tick_size=TICK, offsets=[0, 2],
                          timestamp=np.array(["1677-09-22T00:00", "2262-04-11T23:00"], dtype="datetime64[ns]"))
    assert b["minutes_elapsed"][1] == np.float32((np.datetime64("2262-04-11T23:00", "m") -
                                                  np.datetime64("1677-09-22T00:00", "m")).astype(np.int64))


# ------------------------------------------------------------------------------- 28.6 unsorted
@pytest.mark.parametrize("fn", [vpoc.session_features, vpoc.bar_features])
def test_28_6_unsorted_timestamps_within_a_session_raise(fn):
    t0 = np.datetime64("2025-01-06T15:00", "ns").astype(np.int64)
    ts = np.array([0, 2, 1, 5, 3, 4], dtype=np.int64) * MIN + t0
    p = np.full(6, 2.0)
    with pytest.raises(ValueError, match=r"sorted.*within a session: timestamp\[2\].*timestamp\[1\]"):
        fn(p, p, p, p, timestamp=ts, tick_size=TICK, offsets=[0, 3, 6])
    # a session that starts before the previous one ended is no error; inside each they are sorted
    ok = fn(p, p, p, p, timestamp=np.array([0, 1, 2, 1, 3, 6]) * MIN + t0, tick_size=TICK, offsets=[0, 3, 6])
    assert len(ok) in (2, 6)
    with pytest.raises(ValueError, match=r"sorted.*timestamp\[2\]"):  # Globex from the timestamps
        quiet(fn, p, p, p, p, timestamp=ts, tick_size=TICK)


# ------------------------------------------------------------------------------- 28.7 IB boundary
@pytest.mark.parametrize("dated", [False, True])
def test_28_7_bar_at_exactly_plus_60_minutes_is_not_in_the_ib(dated):
    day = "2025-01-08"
    opens = pd.DatetimeIndex([f"{day} 08:30", f"{day} 09:29", f"{day} 09:30", f"{day} 09:31"], tz=CHI)
    ts = opens.tz_convert("UTC").as_unit("ns").asi8
    high = np.array([100.0, 101.0, 150.0, 160.0])
    low = np.array([99.0, 98.0, 90.0, 80.0])
    close = np.array([100.0, 100.0, 100.0, 100.0])
    vol = np.ones(4)
    kw = dict(timestamp=ts, tick_size=TICK)
    kw.update(dict(session="rth") if dated else dict(offsets=[0, 4]))
    t = vpoc.session_features(high, low, close, vol, **kw)
    assert (t["ib_high"][0], t["ib_low"][0]) == (101.0, 98.0)  # +0 and +59 in, +60 out
    b = vpoc.bar_features(high, low, close, vol, **kw)
    np.testing.assert_array_equal(b["ib_high_dist"], np.float32([0.0, 4.0, 4.0, 4.0]))
    np.testing.assert_array_equal(b["ib_low_dist"], np.float32([4.0, 8.0, 8.0, 8.0]))
