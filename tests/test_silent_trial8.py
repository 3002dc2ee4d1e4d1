"""Silent or misleading behaviour found by the eighth new-user trial (code findings 1-6).

Contract: every test here failed before its fix: prices in cents with a tick in points (CoarseGridWarning),
the feature tables' tz="UTC" (SessionHoursWarning) and duplicated bars (DuplicateRowsWarning), datetime
session ids (YYYYMMDD labels, times of day refused), time_unit= / offsets error hints, Live's drop causes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import vpoc
from vpoc.sessions import SessionHoursWarning
import _deps

pd = pytest.importorskip("pandas")

TICK = 0.25


def _bars(n_sessions=3, seed=1):
    return vpoc.synth.es_bars(n_sessions=n_sessions, seed=seed)


def _caught(fn, *args, **kw):
    """(result, warnings raised) of fn(*args, **kw), every warning recorded."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = fn(*args, **kw)
    return out, rec


def _of(rec, cls):
    return [w for w in rec if issubclass(w.category, cls)]


# ---------------------------------------------------------------- 1. prices on a grid coarser than tick_size

def test_coarse_grid_warning_is_exported():
    assert issubclass(vpoc.CoarseGridWarning, UserWarning) and "CoarseGridWarning" in vpoc.__all__


@_deps.needs("pandas_market_calendars")
@pytest.mark.parametrize("api", ["bars", "trades", "bars_frame", "trades_list"])
def test_cents_with_a_point_tick_warn(api):
    b = _bars()
    if api == "bars":
        call = lambda k: vpoc.from_bars(b.high * k, b.low * k, b.close * k, b.volume, offsets=b.offsets,  # noqa: E731
                                        tick_size=TICK)
    elif api == "trades":
        call = lambda k: vpoc.from_trades(b.close * k, b.volume, offsets=b.offsets, tick_size=TICK)  # noqa: E731
    elif api == "trades_list":
        call = lambda k: vpoc.from_trades((b.close * k).tolist(), b.volume.tolist(), tick_size=TICK)  # noqa: E731
    else:
        df = b.to_pandas()

        def call(k):
            d = df.copy()
            for c in ("open", "high", "low", "close"):
                d[c] = d[c] * k
            return vpoc.from_bars(d, tick_size=TICK, session="globex")
    _, rec = _caught(call, 1)
    assert not _of(rec, vpoc.CoarseGridWarning)  # ES prices in points: nothing said
    _, rec = _caught(call, 100)
    (w,) = _of(rec, vpoc.CoarseGridWarning)
    msg = str(w.message)
    assert "100 times coarser than tick_size=0.25" in msg and "tick_size=25.0" in msg
    assert w.filename == __file__  # the caller's line


def test_coarse_grid_factor_and_suggestion():
    rng = np.random.default_rng(5)
    whole = rng.integers(4000, 4100, 5000).astype(np.float64)  # whole points, tick 0.25: k = 4
    _, rec = _caught(vpoc.from_trades, whole, np.ones(whole.size), tick_size=TICK)
    (w,) = _of(rec, vpoc.CoarseGridWarning)
    assert "4 times coarser" in str(w.message) and "tick_size=1.0" in str(w.message)
    # random prices on the 0.25 grid, a few prices on a coarse grid, one price: nothing
    fine = rng.integers(16000, 16400, 5000) * TICK
    few = np.repeat(np.arange(10) * 100.0 + 5000.0, 50)
    for p in (fine, few, np.full(100, 5000.0)):
        _, rec = _caught(vpoc.from_trades, p, np.ones(p.size), tick_size=TICK)
        assert not _of(rec, vpoc.CoarseGridWarning)


def test_coarse_grid_checks_every_price_not_only_the_sample():
    rng = np.random.default_rng(6)
    p = rng.integers(20_400, 20_600, 20_000) * 25.0  # cents of ES: 100 ticks of 0.25
    p[1] = 512_512.5  # one price on a 50-tick grid, where the sample (every 39th price) does not look
    _, rec = _caught(vpoc.from_trades, p, np.ones(p.size), tick_size=TICK)
    (w,) = _of(rec, vpoc.CoarseGridWarning)
    assert "50 times coarser" in str(w.message) and "tick_size=12.5" in str(w.message)
    p[1] = 512_512.25  # one price on the tick grid only: not every price is coarse
    _, rec = _caught(vpoc.from_trades, p, np.ones(p.size), tick_size=TICK)
    assert not _of(rec, vpoc.CoarseGridWarning)


@pytest.mark.parametrize("fn", ["session_features", "bar_features", "tpo"])
def test_coarse_grid_once_per_feature_table(fn):
    b = _bars()
    call = getattr(vpoc, fn)
    kw = dict(timestamp=b.timestamp, offsets=b.offsets, tick_size=TICK)
    if fn == "tpo":
        kw["incomplete"] = "ignore"
    _, rec = _caught(call, b.high, b.low, b.close, b.volume, **kw)
    assert not _of(rec, vpoc.CoarseGridWarning)
    _, rec = _caught(call, b.high * 100, b.low * 100, b.close * 100, b.volume, **kw)
    ws = _of(rec, vpoc.CoarseGridWarning)
    assert len(ws) == 1 and "tick_size=25.0" in str(ws[0].message)  # composites / TPO counts say nothing more
    assert ws[0].filename == __file__


# ---------------------------------------------------------------- 2. the feature tables' RTH clock in tz

@_deps.needs("pandas_market_calendars")
@pytest.mark.parametrize("fn", ["session_features", "bar_features", "tpo"])
def test_feature_tables_warn_about_rth_hours_as_sessions_rth(fn):
    b = _bars()
    call = getattr(vpoc, fn)
    kw = dict(tick_size=TICK, incomplete="ignore") if fn == "tpo" else dict(tick_size=TICK)
    _, rec = _caught(vpoc.sessions.rth, b.timestamp, tz="UTC")
    assert _of(rec, SessionHoursWarning)  # the rule reused
    _, rec = _caught(call, b, tz="UTC", **kw)
    (w,) = _of(rec, SessionHoursWarning)
    assert "in UTC is 02:30" in str(w.message) and "America/Chicago" in str(w.message)
    assert w.filename == __file__
    for ok in (dict(), dict(tz="America/New_York", rth_start="09:30")):
        _, rec = _caught(call, b, **ok, **kw)
        assert not _of(rec, SessionHoursWarning)


@_deps.needs("pandas_market_calendars")
def test_live_features_warn_about_rth_hours():
    _, rec = _caught(vpoc.Live, tick_size=TICK, session="globex", features=dict(tz="UTC"))
    (w,) = _of(rec, SessionHoursWarning)
    assert w.filename == __file__
    _, rec = _caught(vpoc.Live, tick_size=TICK, session="globex", features=dict())
    assert not _of(rec, SessionHoursWarning)


# ---------------------------------------------------------------- 3. duplicated bars in the feature tables

@pytest.mark.parametrize("fn", ["session_features", "bar_features", "tpo"])
def test_feature_tables_warn_about_duplicate_bars(fn):
    df = _bars().to_pandas()
    dup = pd.concat([df, df.iloc[[5]]]).sort_index(kind="stable").reset_index(drop=True)
    call = getattr(vpoc, fn)
    kw = dict(tick_size=TICK, incomplete="ignore") if fn == "tpo" else dict(tick_size=TICK)
    _, rec = _caught(call, dup, **kw)
    (w,) = _of(rec, vpoc.DuplicateRowsWarning)
    assert "1 of 4,141 bars are exact duplicates" in str(w.message) and fn in str(w.message)
    assert w.filename == __file__
    _, rec = _caught(call, df, **kw)
    assert not _of(rec, vpoc.DuplicateRowsWarning)


@_deps.needs("pandas_market_calendars")
def test_feature_tables_warn_about_duplicate_bars_of_arrays():
    b = _bars()
    i = np.r_[np.arange(b.high.size), 7]
    i.sort(kind="stable")
    _, rec = _caught(vpoc.session_features, b.high[i], b.low[i], b.close[i], b.volume[i],
                     timestamp=b.timestamp[i], tick_size=TICK, session="globex")
    (w,) = _of(rec, vpoc.DuplicateRowsWarning)
    assert "session_features: 1 of" in str(w.message)


# ---------------------------------------------------------------- 4. datetime session ids

def _dated(b):
    ts = pd.Series(pd.to_datetime(b.timestamp, utc=True)).dt.tz_convert("America/Chicago")
    return ts.dt.normalize()  # tz-aware midnights


def _id_kinds(b):
    aware = _dated(b)
    naive = aware.dt.tz_localize(None)
    return {"aware": aware, "naive_ns": naive.astype("datetime64[ns]").to_numpy(),
            "series_us": naive.astype("datetime64[us]"), "days": naive.to_numpy().astype("datetime64[D]"),
            "index": pd.DatetimeIndex(aware)}


@pytest.mark.parametrize("kind", ["aware", "naive_ns", "series_us", "days", "index"])
@pytest.mark.parametrize("api", ["bars", "trades"])
def test_datetime_session_ids_are_yyyymmdd_labels(kind, api):
    b = _bars()
    ids = _id_kinds(b)[kind]
    if api == "bars":
        p = vpoc.from_bars(b.high, b.low, b.close, b.volume, session_ids=ids, tick_size=TICK)
    else:
        p = vpoc.from_trades(b.close, b.volume, session_ids=ids, tick_size=TICK)
    days = pd.Series(_dated(b).dt.strftime("%Y%m%d").astype(np.int64)).unique()
    np.testing.assert_array_equal(np.asarray(p.session_labels), days)
    assert np.asarray(p.session_labels).dtype == np.int64
    assert p.loc[int(days[1])].label == int(days[1])


@pytest.mark.parametrize("fn", ["from_bars", "from_trades", "session_features"])
def test_datetime_session_ids_with_a_time_of_day_are_refused(fn):
    b = _bars()
    ids = pd.Series(pd.to_datetime(b.timestamp, utc=True)).dt.tz_localize(None).dt.floor("6h")
    args = (b.close, b.volume) if fn == "from_trades" else (b.high, b.low, b.close, b.volume)
    with pytest.raises(ValueError, match=r"session_ids\[0\] = .* has a time of day.*normalize") as e:
        getattr(vpoc, fn)(*args, session_ids=ids, tick_size=TICK)
    assert e.value.argument == "session_ids" and e.value.index == 0


def test_feature_tables_read_tz_aware_session_ids():
    b = _bars()
    ft = vpoc.session_features(b.high, b.low, b.close, b.volume, session_ids=_dated(b), tick_size=TICK)
    assert len(ft) == len(np.unique(_id_kinds(b)["days"]))


# ---------------------------------------------------------------- 5. error messages that say what to do

def test_time_unit_conflicting_with_the_values_says_which_unit():
    b = _bars()
    df = b.to_pandas()
    df["timestamp"] = b.timestamp  # int64 ns
    with pytest.raises(ValueError, match="look like nanoseconds.*pass time_unit='ns'"):
        vpoc.from_bars(df, tick_size=TICK, time_unit="s")
    with pytest.raises(ValueError, match="look like nanoseconds.*pass time_unit='ns'"):
        vpoc.session_features(b, tick_size=TICK, time_unit="us")
    with pytest.raises(TypeError, match="pass time_unit='ns'.*from_bars") as e:
        vpoc.from_bars(df, tick_size=TICK)
    assert "read it with them first" not in str(e.value)


@pytest.mark.parametrize("offsets", [[3, 4, 5], [0, 3, 4, 5], [0, 5, 3, 4], [12]])
@pytest.mark.parametrize("fn", ["from_trades", "session_features"])
def test_offsets_that_look_like_lengths(offsets, fn):
    p = 100 + np.arange(12) * TICK
    args = (p, np.ones(12)) if fn == "from_trades" else (p, p, p, np.ones(12))
    with pytest.raises(vpoc.InputError, match=r"look like session lengths.*np\.concatenate\(\[\[0\], "
                                              r"np\.cumsum\(lengths\)\]\)") as e:
        getattr(vpoc, fn)(*args, offsets=np.array(offsets), tick_size=TICK)
    assert e.value.argument == "offsets"
    with pytest.raises(vpoc.InputError) as e:  # not lengths: no hint
        getattr(vpoc, fn)(*args, offsets=np.array([0, 3, 4, 6]), tick_size=TICK)
    assert "lengths" not in str(e.value) and e.value.argument == "offsets"


# ---------------------------------------------------------------- 6. Live names the cause of dropped rows

def _holiday_feed():
    """Minute bars of a plain Mon-Fri 17:00-16:00 Chicago clock over 2024-07-01..05: the feed prints
    after CME's early close of July 3 and through the July 4 holiday halt."""
    ts = pd.date_range("2024-07-01 22:00", "2024-07-06 00:00", freq="1min", tz="UTC", inclusive="left")
    t = ts.as_unit("ns").asi8
    s0 = vpoc.sessions.globex(t, calendar=None, on_outside="drop")
    t = t if s0.index is None else t[s0.index]
    p = 5500 + np.round(np.cumsum(np.random.default_rng(0).normal(0, 1, t.size))) * TICK
    return t, p


@_deps.needs("pandas_market_calendars")
def test_live_names_holiday_drops_as_the_batch_does():
    t, p = _holiday_feed()
    _, rec = _caught(vpoc.sessions.globex, t, volume=np.ones(t.size))
    batch = vpoc.sessions.globex(t, on_outside="drop")
    assert set(batch.dropped_by_cause) == {"early-close"}
    live = vpoc.Live(tick_size=TICK, session="globex")

    def feed():
        for i in range(0, t.size, 500):
            s = slice(i, i + 500)
            live.update(p[s], p[s] - TICK, p[s], np.ones(p[s].size), timestamp=t[s])
        live.close()
    _, rec = _caught(feed)
    ws = _of(rec, vpoc.DroppedRowsWarning)
    assert ws and live.n_dropped == batch.n_dropped
    for w in ws:
        msg = str(w.message)
        assert "fall in hours after an early close or holiday halt" in msg
        assert "time zone of the timestamps is likely wrong" not in msg
    assert sum(int(str(w.message).split(" fall in ")[0].split(": ")[-1].replace(",", "")) for w in ws) \
        == batch.n_dropped


@_deps.needs("pandas_market_calendars")
def test_live_names_the_cause_row_by_row_and_when_raising():
    t, p = _holiday_feed()
    live = vpoc.Live(tick_size=TICK, session="globex")

    def feed():
        for k in range(t.size):
            live.update(p[k], p[k] - TICK, p[k], 1.0, timestamp=int(t[k]))
        live.close()
    _, rec = _caught(feed)
    ws = _of(rec, vpoc.DroppedRowsWarning)
    assert ws and all("early close or holiday halt" in str(w.message) for w in ws)
    strict = vpoc.Live(tick_size=TICK, session="globex", on_outside="raise")
    dropped = np.setdiff1d(t, t[vpoc.sessions.globex(t, on_outside="drop").index])
    k = int(np.searchsorted(t, dropped[0]))  # on the early close (a bar-label hint), then the halt after it
    strict.update(p[:k], p[:k] - TICK, p[:k], np.ones(k), timestamp=t[:k])
    strict.close()
    with pytest.raises(ValueError, match="early close or holiday halt"):
        strict.update(p[k + 5], p[k + 5] - TICK, p[k + 5], 1.0, timestamp=int(t[k + 5]))
    with pytest.raises(ValueError, match=r"\(3 of 3 rows of this update are\); .*early close or holiday halt"):
        strict.update(p[k + 6:k + 9], p[k + 6:k + 9] - TICK, p[k + 6:k + 9], np.ones(3), timestamp=t[k + 6:k + 9])


@pytest.mark.parametrize("kw, warns, words", [
    (dict(ticks_per_row=4), False, None),  # rows of 4 ticks: whole points fill every row
    (dict(ticks_per_row=2), True, "ladder of ticks_per_row=2 ticks holds 1 empty row between neighbouring prices"),
    (dict(ticks_per_row=3), False, None),  # 4 // 3 = 1: no row is sure to stay empty between two prices
    (dict(bins=20), False, None),  # N equal-width bins: no tick ladder
    (dict(), True, "holds 3 empty rows"),
])
def test_coarse_grid_counts_rows_not_ticks(kw, warns, words):
    """review8 #4: whole-point prices (k = 4 ticks of 0.25) leave empty rows only where a row is finer than
    the grid: ticks_per_row >= k or bins=N say nothing; the message counts rows of ticks_per_row ticks."""
    rng = np.random.default_rng(3)
    p = 4000.0 + np.cumsum(rng.integers(-3, 4, 400)).astype(np.float64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vpoc.from_trades(p, np.ones(len(p)), offsets=[0, len(p)], tick_size=0.25, **kw)
    got = [str(w.message) for w in caught if issubclass(w.category, vpoc.CoarseGridWarning)]
    assert bool(got) == warns, got
    if warns:
        assert words in got[0], got[0]
