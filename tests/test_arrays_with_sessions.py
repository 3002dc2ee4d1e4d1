"""from_bars / from_trades given arrays, ``timestamp=`` and a session rule: the same result as the same data as a frame.

Contract: arrays + timestamp= + session= give what the DataFrame (or vpoc.io container) gives, bit for bit (profiles,
levels, session facts, warnings); bad timestamps raise ValueError / TypeError naming ``timestamp`` (docs/contract.md).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import _deps
from _compare import assert_profiles_identical

import vpoc

pd = _deps.module("pandas")

CAL = _deps.needs("pandas", "pandas_market_calendars")  # session rules with the default CME calendar
PANDAS = _deps.needs("pandas")

START = np.datetime64("2024-03-04T21:00", "ns")  # 15:00 CT Monday: RTH, the halt, the overnight, Tuesday's RTH
MIN = np.timedelta64(60, "s")


def _bars(n=2000, seed=0):
    """One-minute bars from START: (timestamps datetime64[ns], open, high, low, close, volume int64)."""
    rng = np.random.default_rng(seed)
    ts = START + MIN * np.arange(n)
    c = 5000 + np.cumsum(rng.integers(-2, 3, n)) * 0.25
    o = np.r_[c[0], c[:-1]]
    h = np.maximum(o, c) + 0.25 * rng.integers(0, 3, n)
    lo = np.minimum(o, c) - 0.25 * rng.integers(0, 3, n)
    v = rng.integers(1, 50, n).astype(np.int64)
    return ts, o, h, lo, c, v


def _trades(n=3000, seed=1):
    """Trades 40 s apart from START: (timestamps datetime64[ns], price, volume int64)."""
    rng = np.random.default_rng(seed)
    ts = START + np.timedelta64(40, "s") * np.arange(n)
    p = 5000 + np.cumsum(rng.integers(-1, 2, n)) * 0.25
    return ts, p, rng.integers(1, 9, n).astype(np.int64)


def _utc(ts):
    return pd.Series(pd.DatetimeIndex(ts).tz_localize("UTC"))


def _called(fn, *args, **kw):
    """(result, [(category, message)]) of one call, every warning recorded."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = fn(*args, **kw)
    return out, [(w.category, str(w.message)) for w in got]


FACTS = ("session_rule", "dropped_rows", "dropped_volume", "trade_dates")


def _same(a, b):
    """Bit-identical profiles and session facts (labels, kept rows, rule, dropped rows and volume)."""
    assert_profiles_identical(a, b)
    assert np.asarray(a.session_labels).tobytes() == np.asarray(b.session_labels).tobytes()
    for k in FACTS:
        assert getattr(a, k) == getattr(b, k), k
    ka, kb = getattr(a, "kept_rows", None), getattr(b, "kept_rows", None)
    assert (ka is None) == (kb is None)
    if ka is not None:
        assert np.array_equal(ka, kb)
    if getattr(a, "dev_poc", None) is not None:
        for k in ("dev_poc", "dev_vah", "dev_val"):
            assert np.asarray(getattr(a, k)).tobytes() == np.asarray(getattr(b, k)).tobytes(), k


def _stamps(ts, form):
    """The timestamps ``ts`` (datetime64[ns], UTC) in another form ``timestamp=`` takes."""
    if form == "pandas":
        return _utc(ts)
    if form == "us":  # pandas 3's default unit: never read as ns
        return ts.astype("datetime64[us]")
    if form == "int64":
        return ts.astype(np.int64)
    return ts


FORMS = ["pandas", "ns", "us", "int64"]


@CAL
@pytest.mark.parametrize("rule", ["globex", "rth"])
@pytest.mark.parametrize("form", FORMS)
def test_bars_arrays_equal_frame(rule, form):
    ts, o, h, lo, c, v = _bars()
    df = pd.DataFrame({"timestamp": _utc(ts), "open": o, "high": h, "low": lo, "close": c, "volume": v})
    want, w_want = _called(vpoc.from_bars, df, tick_size=0.25, session=rule, developing=True)
    got, w_got = _called(vpoc.from_bars, h, lo, c, v, open=o, timestamp=_stamps(ts, form), tick_size=0.25,
                         session=rule, developing=True)
    _same(want, got)
    assert want.dropped_rows > 0 and want.n_sessions >= 2  # the halt (globex), the overnight (rth) left out
    assert w_got == w_want
    if rule == "globex":  # the daily halt's rows: reported (RTH leaves the overnight out by design)
        assert any(issubclass(cat, vpoc.DroppedRowsWarning) for cat, _ in w_got)


@CAL
@pytest.mark.parametrize("rule", ["globex", "rth"])
@pytest.mark.parametrize("form", FORMS)
def test_trades_arrays_equal_frame(rule, form):
    ts, p, v = _trades()
    df = pd.DataFrame({"timestamp": _utc(ts), "price": p, "volume": v})
    want, w_want = _called(vpoc.from_trades, df, tick_size=0.25, session=rule, developing=True)
    got, w_got = _called(vpoc.from_trades, p, v, timestamp=_stamps(ts, form), tick_size=0.25, session=rule,
                         developing=True)
    _same(want, got)
    assert want.dropped_rows > 0
    assert w_got == w_want


@CAL
def test_sessions_alias_and_sided_trades():
    ts, p, v = _trades()
    side = np.where(np.arange(p.shape[0]) % 3 == 0, -1, 1).astype(np.int8)
    df = pd.DataFrame({"timestamp": _utc(ts), "price": p, "volume": v, "side": side})
    want, w_want = _called(vpoc.from_trades, df, tick_size=0.25, sessions="globex")
    got, w_got = _called(vpoc.from_trades, p, v, side=side, timestamp=ts, tick_size=0.25, sessions="globex")
    _same(want, got)
    assert w_got == w_want
    assert np.array_equal(want.delta, got.delta)


@CAL
def test_default_rule_is_globex_as_for_a_frame():
    """timestamp= and no session: CME Globex sessions, announced as for a frame (and as bar_features does)."""
    ts, o, h, lo, c, v = _bars()
    df = pd.DataFrame({"timestamp": _utc(ts), "open": o, "high": h, "low": lo, "close": c, "volume": v})
    want, w_want = _called(vpoc.from_bars, df, tick_size=0.25)
    got, w_got = _called(vpoc.from_bars, h, lo, c, v, open=o, timestamp=ts, tick_size=0.25)
    _same(want, got)
    assert w_got == w_want
    assert any(issubclass(cat, vpoc.GuessedDefaultWarning) for cat, _ in w_got)


@CAL
def test_sessions_object_and_time_window():
    """A Sessions built from the timestamps, and window='60min' (needs timestamps), as for a frame."""
    ts, o, h, lo, c, v = _bars()
    df = pd.DataFrame({"timestamp": _utc(ts), "open": o, "high": h, "low": lo, "close": c, "volume": v})
    s = vpoc.sessions.globex(ts, volume=v, on_outside="drop")
    _same(vpoc.from_bars(df, tick_size=0.25, session=s), vpoc.from_bars(h, lo, c, v, timestamp=ts, tick_size=0.25,
                                                                         session=s))
    kw = dict(tick_size=0.25, session="globex", developing=True, window="60min")
    (want, w_want), (got, w_got) = _called(vpoc.from_bars, df, **kw), _called(vpoc.from_bars, h, lo, c, v, open=o,
                                                                                timestamp=ts, **kw)
    _same(want, got)
    assert w_got == w_want
    with pytest.raises(ValueError, match="session= was not built from this data's timestamps"):
        vpoc.from_bars(h, lo, c, v, timestamp=ts + MIN, tick_size=0.25, session=s)


@CAL
def test_close_label_and_time_unit():
    ts, o, h, lo, c, v = _bars()
    closes = ts + MIN
    df = pd.DataFrame({"timestamp": _utc(closes), "open": o, "high": h, "low": lo, "close": c, "volume": v})
    want, w_want = _called(vpoc.from_bars, df, tick_size=0.25, session="globex", label="close")
    got, w_got = _called(vpoc.from_bars, h, lo, c, v, open=o, timestamp=closes, tick_size=0.25, session="globex",
                         label="close")
    _same(want, got)
    assert w_got == w_want and any("label='close' without interval=" in m for _, m in w_got)
    secs = closes.astype("datetime64[s]").astype(np.int64)
    _same(want, _called(vpoc.from_bars, h, lo, c, v, open=o, timestamp=secs, time_unit="s", tick_size=0.25,
                        session="globex", label="close", interval=60)[0])


@PANDAS
def test_duplicate_bars_warned_as_for_a_frame():
    """An exact duplicate bar (same timestamp and values) is counted twice, announced as a frame's is."""
    ts, o, h, lo, c, v = _bars(300)
    k = np.r_[np.arange(100), 99, np.arange(100, 300)]  # bar 99 twice
    ts, o, h, lo, c, v = (x[k] for x in (ts, o, h, lo, c, v))
    df = pd.DataFrame({"timestamp": _utc(ts), "open": o, "high": h, "low": lo, "close": c, "volume": v})
    want, w_want = _called(vpoc.from_bars, df, tick_size=0.25, session="daily")
    got, w_got = _called(vpoc.from_bars, h, lo, c, v, open=o, timestamp=ts, tick_size=0.25, session="daily")
    _same(want, got)
    dup = [m for cat, m in w_got if issubclass(cat, vpoc.DuplicateRowsWarning)]
    assert [cat for cat, _ in w_got] == [cat for cat, _ in w_want] and len(dup) == 1
    assert dup[0].startswith("from_bars: 1 of 301 bars are exact duplicates")


@PANDAS
def test_daily_rule_without_calendar():
    """session='daily' (UTC dates, no calendar): arrays + timestamp= as the frame."""
    ts, p, v = _trades()
    df = pd.DataFrame({"timestamp": _utc(ts), "price": p, "volume": v})
    _same(vpoc.from_trades(df, tick_size=0.25, session="daily"),
          vpoc.from_trades(p, v, timestamp=ts.astype("datetime64[us]"), tick_size=0.25, session="daily"))


# ---------------------------------------------------------------- bad input, each naming its argument


def test_bad_timestamps_name_the_argument():
    """Checked before any session is built (NumPy alone)."""
    ts, o, h, lo, c, v = _bars(50)
    with pytest.raises(ValueError, match="timestamp has length 49 but the data has 50 rows"):
        vpoc.from_bars(h, lo, c, v, timestamp=ts[:49], tick_size=0.25, session="daily")
    with pytest.raises(TypeError, match="timestamp must be integer epoch times"):
        vpoc.from_trades(c, v, timestamp=ts.astype(np.int64) / 1e9, tick_size=0.25, session="daily")
    back = ts.copy()
    back[7] = back[3]
    with pytest.raises(ValueError, match=r"from_trades: timestamp\[7\] is before timestamp\[6\]"):
        vpoc.from_trades(c, v, timestamp=back, tick_size=0.25, session="daily")
    with pytest.raises(ValueError, match="timestamp"):  # seconds read as ns: implausible
        vpoc.from_trades(c, v, timestamp=ts.astype("datetime64[s]").astype(np.int64), tick_size=0.25,
                         session="daily")
    with pytest.raises(ValueError, match="price must be a 1-D array"):
        vpoc.from_trades(5000.0, 1.0, timestamp=ts[:1], tick_size=0.25, session="daily")
    with pytest.raises(ValueError, match="time_unit must be one of"):
        vpoc.from_trades(c, v, timestamp=ts.astype(np.int64), time_unit="min", tick_size=0.25, session="daily")


@PANDAS
def test_naive_pandas_timestamps_refused():
    """Naive pandas datetimes: no zone guessed (as a frame's without tz=, as vpoc.Live's)."""
    ts, o, h, lo, c, v = _bars(50)
    with pytest.raises(ValueError, match="timestamp"):
        vpoc.from_bars(h, lo, c, v, timestamp=pd.Series(pd.DatetimeIndex(ts)), tick_size=0.25, session="daily")


@PANDAS
def test_wrong_combinations_name_the_argument():
    ts, o, h, lo, c, v = _bars(50)
    df = pd.DataFrame({"timestamp": _utc(ts), "open": o, "high": h, "low": lo, "close": c, "volume": v})
    with pytest.raises(TypeError, match="timestamp= goes with arrays"):
        vpoc.from_bars(df, timestamp=ts, tick_size=0.25, session="daily")
    trades = df.rename(columns={"close": "price"})[["timestamp", "price", "volume"]]
    with pytest.raises(TypeError, match="timestamp= goes with arrays"):
        vpoc.from_trades(trades, timestamp=ts, tick_size=0.25, session="daily")
    with pytest.raises(TypeError, match="tz= applies only when the first argument is a DataFrame"):
        vpoc.from_bars(h, lo, c, v, timestamp=ts, tz="UTC", tick_size=0.25, session="daily")
    with pytest.raises(TypeError, match=r"label= applies only when .*also with timestamp="):
        vpoc.from_bars(h, lo, c, v, label="close", tick_size=0.25)
    with pytest.raises(TypeError, match="timestamp= takes one array"):
        vpoc.from_bars(h, lo, c, v, timestamp=df, tick_size=0.25, session="daily")
    with pytest.raises(ValueError, match="pass timestamp= with the arrays"):  # a rule without timestamps
        vpoc.from_trades(c, v, tick_size=0.25, session="daily")
    with pytest.raises(ValueError, match="not both"):
        vpoc.from_trades(c, v, timestamp=ts, offsets=[0, 50], tick_size=0.25, session="daily")


def test_without_timestamp_unchanged():
    """Guard (passes on main): no timestamp=, the plain call, one session (no rule guessed)."""
    p = np.array([5000.0, 5000.25, 5000.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prof = vpoc.from_trades(p, np.ones(3), tick_size=0.25)
    assert prof.n_sessions == 1 and getattr(prof, "session_rule", None) is None
