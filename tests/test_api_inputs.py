"""from_bars / from_trades inputs: vpoc.sessions objects, vpoc.io containers, DataFrames, integer
options and exact volume limits (issue 23 points 3 and 9, issue 28 points 5 and 6).

Contract: results equal the plain-NumPy reference on the rows an independent clock computation
keeps; every bad option raises a Python TypeError / ValueError naming the argument and its range.
"""

from __future__ import annotations

import datetime as dt
import pickle
import warnings

import numpy as np
import pytest

from _compare import assert_matches_reference
from reference import ref_bars, ref_trades
import _deps

vpoc = pytest.importorskip("vpoc")

MIN = 60 * 10**9
# 2025-01-21 20:00 UTC (14:00 CST) .. 2025-01-22 01:59 UTC, one bar a minute: 14:00-15:59 CT
# belongs to trade date 2025-01-21, 16:00-16:59 CT is the daily halt, 17:00-19:59 CT is 2025-01-22.
T0 = int(np.datetime64("2025-01-21T20:00", "ns").astype(np.int64))
N = 360


def bars(seed: int = 0):
    rng = np.random.default_rng(seed)
    ts = T0 + np.arange(N, dtype=np.int64) * MIN
    low = 6000.0 + np.cumsum(rng.integers(-2, 3, N)) * 0.25
    high = low + rng.integers(0, 6, N) * 0.25
    close = low + rng.integers(0, 2, N) * (high - low)
    open_ = low.copy()
    vol = rng.integers(1, 500, N)
    return ts, high, low, close, open_, vol


def by_hand(ts):
    """Independent of vpoc.sessions: the UTC minute of day puts each row in 20250121 (20:00-21:59
    UTC), the halt (22:00-22:59) or 20250122 (23:00 on)."""
    minute = (ts // MIN) % 1440
    keep = (minute < 22 * 60) | (minute >= 23 * 60)
    day2 = (minute[keep] >= 23 * 60) | (minute[keep] < 20 * 60)  # 23:00 UTC on, past midnight
    offsets = np.array([0, int((~day2).sum()), int(keep.sum())])
    return keep, offsets


def clock_sessions(ts):
    # the clock alone (no calendar package needed); the 60 halt rows are dropped on purpose
    return vpoc.sessions.globex(ts, calendar=None, on_outside="drop")


@_deps.needs("pandas")
def test_23_3_sessions_object_takes_kept_rows_and_keeps_trade_dates():
    ts, h, l, c, o, v = bars()
    s = clock_sessions(ts)
    keep, offs = by_hand(ts)
    assert s.n_dropped == 60
    prof = vpoc.from_bars(h, l, c, v, open=o, sessions=s, tick_size=0.25)
    ref = ref_bars(h[keep], l[keep], c[keep], v[keep], None, offs, tick_size=0.25)
    assert_matches_reference(prof, ref, exact=False, value_area=0.7, va_method="cbot",
                             poc_tie="center")
    assert prof.labels.tolist() == [20250121, 20250122]
    assert prof.session_labels is prof.labels and prof.trade_dates
    assert prof.dropped_rows == 60 and prof.dropped_volume == float(v[~keep].sum())
    assert prof.session_rule == s.definition
    # arrays already reduced to the kept rows are taken as they are
    same = vpoc.from_bars(*s.take(h, l, c, v), session=s, tick_size=0.25)  # the one name; sessions= is its alias
    np.testing.assert_array_equal(same.volume, prof.volume)
    # trades too
    pt = vpoc.from_trades(c, v, sessions=s, tick_size=0.25)
    rt = ref_trades(c[keep], v[keep], offs, tick_size=0.25)
    assert_matches_reference(pt, rt, exact=True, value_area=0.7, va_method="cbot", poc_tie="center")
    assert pt.labels.tolist() == [20250121, 20250122]


def test_23_3_loc_to_pandas_and_plot_by_date():
    pd = pytest.importorskip("pandas")
    ts, h, l, c, o, v = bars(1)
    prof = vpoc.from_bars(h, l, c, v, sessions=clock_sessions(ts), tick_size=0.25)
    for key in (20250122, "2025-01-22", "20250122", dt.date(2025, 1, 22),
                dt.datetime(2025, 1, 22, 9, 30), pd.Timestamp("2025-01-22"),
                np.datetime64("2025-01-22")):
        one = prof.loc[key]
        assert one.position == 1 and one.label == 20250122, key
        assert one.poc == prof.poc[1] and one.total_volume == prof.total_volume[1]
        prices, volume = prof.session(1)
        np.testing.assert_array_equal(one.prices, prices)
        np.testing.assert_array_equal(one.volume, volume)
    with pytest.raises(KeyError, match="2025-01-23.*20250121 .. 20250122"):
        prof.loc["2025-01-23"]
    df = prof.to_pandas()
    assert isinstance(df.index, pd.DatetimeIndex) and df.index.name == "trade_date"
    assert list(df.index) == [pd.Timestamp("2025-01-21"), pd.Timestamp("2025-01-22")]
    assert df.loc["2025-01-22", "poc"] == prof.poc[1]
    # labels survive pickling (and the facts about the sessions with them)
    back = pickle.loads(pickle.dumps(prof))
    assert back.labels.tolist() == [20250121, 20250122] and back.trade_dates
    assert back.dropped_rows == 60 and back.loc["2025-01-21"].poc == prof.poc[0]
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    ax = prof.plot("2025-01-22")
    assert ax.get_title() == "session 2025-01-22"
    assert prof.plot(20250121).get_title() == "session 2025-01-21"
    assert prof.plot(0).get_title() == "session 2025-01-21"  # an in-range integer is a position


def test_23_3_to_torch_with_labels():
    torch = pytest.importorskip("torch")
    ts, h, l, c, o, v = bars(2)
    prof = vpoc.from_bars(h, l, c, v, sessions=clock_sessions(ts), tick_size=0.25)
    t = prof.to_torch()
    assert torch.equal(t["poc"], torch.as_tensor(prof.poc))


@_deps.needs("pandas")
def test_23_3_offsets_of_sessions_with_all_rows_points_to_take():
    ts, h, l, c, o, v = bars()
    s = clock_sessions(ts)
    with pytest.raises(ValueError, match=r"offsets\[-1\] must equal.*N=360.*session=s.*s\.take"):
        vpoc.from_bars(h, l, c, v, offsets=s.offsets, tick_size=0.25)
    with pytest.raises(ValueError, match=r"session=s.*s\.take"):
        vpoc.from_trades(c, v, offsets=s.offsets, tick_size=0.25)


@_deps.needs("pandas")
def test_23_3_bad_sessions_arguments():
    ts, h, l, c, o, v = bars()
    s = clock_sessions(ts)
    with pytest.raises(ValueError, match="not both"):
        vpoc.from_bars(h, l, c, v, sessions=s, offsets=s.offsets, tick_size=0.25)
    with pytest.raises(ValueError, match="has 10 rows but session= was built from 360"):
        vpoc.from_trades(c[:10], v[:10], sessions=s, tick_size=0.25)
    with pytest.raises(TypeError, match="session must be a vpoc.sessions.Sessions"):
        vpoc.from_trades(c, v, sessions=[0, 5], tick_size=0.25)
    with pytest.raises(ValueError, match="builds sessions from timestamps"):
        vpoc.from_trades(c, v, sessions="globex", tick_size=0.25)
    with pytest.raises(ValueError, match="session must be"):
        vpoc.from_trades(c, v, sessions="weekly", tick_size=0.25)


# ---------------------------------------------------------------- containers and DataFrames


def _frame(pd, ts, h, l, c, o, v):
    return pd.DataFrame({"timestamp": pd.to_datetime(ts, unit="ns", utc=True), "open": o, "high": h,
                         "low": l, "close": c, "volume": v})


def test_23_9_bars_container_and_frame_default_to_globex():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pandas_market_calendars")
    ts, h, l, c, o, v = bars(3)
    keep, offs = by_hand(ts)
    ref = ref_bars(h[keep], l[keep], c[keep], v[keep], None, offs, tick_size=0.25)
    df = _frame(pd, ts, h, l, c, o, v)
    container = vpoc.io.read_bars(df)
    for src in (container, df, df.set_index("timestamp")):
        with pytest.warns(vpoc.GuessedDefaultWarning, match="CME Globex sessions"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", vpoc.DroppedRowsWarning)
                prof = vpoc.from_bars(src, tick_size=0.25)
        assert_matches_reference(prof, ref, exact=False, value_area=0.7, va_method="cbot",
                                 poc_tie="center")
        assert prof.session_rule == "globex" and prof.labels.tolist() == [20250121, 20250122]
        assert prof.dropped_rows == 60 and prof.dropped_volume == float(v[~keep].sum())
    # an explicit rule: no warning about a guessed default
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vpoc.DroppedRowsWarning)
        prof = vpoc.from_bars(df, sessions="globex", tick_size=0.25)
    assert prof.session_rule == "globex"
    # explicit offsets over every row: one session, no guess
    prof = vpoc.from_bars(df, offsets=[0, N], tick_size=0.25)
    assert prof.n_sessions == 1 and prof.session_rule is None


def test_23_9_close_stamped_frame_gives_the_open_stamped_result():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pandas_market_calendars")
    ts, h, l, c, o, v = bars(5)
    opened = _frame(pd, ts, h, l, c, o, v)
    closed = _frame(pd, ts + MIN, h, l, c, o, v)  # the same bars stamped at their close
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vpoc.DroppedRowsWarning)
        want = vpoc.from_bars(opened, sessions="globex", tick_size=0.25)
        got = vpoc.from_bars(closed, sessions="globex", label="close", interval=60, tick_size=0.25)
        with pytest.warns(vpoc.GuessedDefaultWarning, match="interval was taken as 60 s"):
            guessed = vpoc.from_bars(closed, sessions="globex", label="close", tick_size=0.25)
    for prof in (got, guessed):
        np.testing.assert_array_equal(prof.volume, want.volume)
        np.testing.assert_array_equal(prof.labels, want.labels)
        assert prof.dropped_rows == want.dropped_rows == 60


def test_23_9_polars_frame_and_trades():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pandas_market_calendars")
    ts, h, l, c, o, v = bars(4)
    keep, offs = by_hand(ts)
    trades = pd.DataFrame({"ts": pd.to_datetime(ts, unit="ns", utc=True), "price": c, "size": v})
    rt = ref_trades(c[keep], v[keep], offs, tick_size=0.25)
    srcs = [trades, vpoc.io.read_trades(trades)]
    pl = None
    try:
        import polars as pl
        pytest.importorskip("pyarrow")
    except (ImportError, pytest.skip.Exception):
        pl = None
    if pl is not None:
        srcs.append(pl.from_pandas(trades))
    for src in srcs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", vpoc.DroppedRowsWarning)
            warnings.simplefilter("ignore", vpoc.GuessedDefaultWarning)
            prof = vpoc.from_trades(src, tick_size=0.25)
        assert_matches_reference(prof, rt, exact=True, value_area=0.7, va_method="cbot",
                                 poc_tie="center")
        assert prof.loc["2025-01-21"].total_volume == float(v[keep][:offs[1]].sum())


def test_23_9_container_errors():
    pd = pytest.importorskip("pandas")
    ts, h, l, c, o, v = bars()
    df = _frame(pd, ts, h, l, c, o, v)
    with pytest.raises(TypeError, match="use from_bars"):
        vpoc.from_trades(vpoc.io.read_bars(df), tick_size=0.25)
    with pytest.raises(TypeError, match="needs high, low, close and volume"):
        vpoc.from_bars(h, tick_size=0.25)
    with pytest.raises(TypeError, match="low is missing"):
        vpoc.from_bars(h, close=c, volume=v, tick_size=0.25)
    with pytest.raises(TypeError, match="appl(y|ies) only when the first argument is a DataFrame"):
        vpoc.from_bars(h, l, c, v, tz="UTC", tick_size=0.25)
    with pytest.raises(ValueError, match="container was read with them already"):
        vpoc.from_bars(vpoc.io.read_bars(df), label="close", tick_size=0.25)


def test_23_9_plain_arrays_keep_one_session():
    ts, h, l, c, o, v = bars()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prof = vpoc.from_bars(h, l, c, v, tick_size=0.25)
    assert prof.n_sessions == 1 and prof.labels is None and prof.session_rule is None
    assert prof.dropped_rows == 0 and prof.snapped_prices == 0


# ---------------------------------------------------------------- integer options (28.6)


@pytest.mark.parametrize("name, value, exc, match", [
    ("ticks_per_row", 2**63, ValueError, r"ticks_per_row must be >= 1 \(and at most 2\*\*63 - 1\), got 9223372036854775808"),
    ("ticks_per_row", -(2**70), ValueError, r"ticks_per_row must be >= 1"),
    ("max_rows", 2**63, ValueError, r"max_rows must be in \[1, 1000000000\], got 9223372036854775808"),
    ("max_rows", 0, ValueError, r"max_rows must be in \[1, 1000000000\]"),
    ("threads", 2**63, ValueError, r"threads must be in \[1, 1024\]"),
    ("threads", 2**64 + 1, ValueError, r"threads must be in \[1, 1024\]"),
    ("ticks_per_row", "2", TypeError, r"ticks_per_row must be an integer in \[1, 9223372036854775807\], got str"),
    ("ticks_per_row", None, TypeError, r"ticks_per_row must be an integer.*got NoneType"),
    ("ticks_per_row", True, TypeError, r"ticks_per_row must be an integer.*got bool"),
    ("ticks_per_row", 2.0, TypeError, r"ticks_per_row must be an integer.*got float"),
    ("max_rows", np.True_, TypeError, r"max_rows must be an integer.*got bool"),
    ("threads", "4", TypeError, r"threads must be None \(all cores\) or an integer in \[1, 1024\], got str"),
    ("threads", False, TypeError, r"threads must be None"),
    ("memory_budget", 2**63, ValueError, r"memory_budget must be >= 1 \(and at most 2\*\*63 - 1\)"),
    ("memory_budget", "1GB", TypeError, r"memory_budget must be an integer"),
])
@pytest.mark.parametrize("api", ["trades", "bars"])
def test_28_6_integer_options_raise_python_errors(api, name, value, exc, match):
    p = np.array([1.0, 1.25])
    v = np.array([1, 2])
    kw = {name: value}
    if name == "memory_budget":  # read only on the GPU path: checked by the helper all paths share
        from vpoc._validate import integer as _int
        with pytest.raises(exc, match=match):
            _int(value, "memory_budget", 1)
        return
    with pytest.raises(exc, match=match) as info:
        if api == "trades":
            vpoc.from_trades(p, v, tick_size=0.25, **kw)
        else:
            vpoc.from_bars(p, p, p, v, tick_size=0.25, **kw)
    assert "incompatible function arguments" not in str(info.value)


def test_28_6_set_pool_limit_range():
    with pytest.raises(ValueError, match=r"nbytes must be >= 0 \(and at most 2\*\*63 - 1\)"):
        vpoc.set_pool_limit(2**63)
    with pytest.raises(TypeError, match="nbytes must be an integer"):
        vpoc.set_pool_limit("1G")


# ---------------------------------------------------------------- exact volume limit (28.5)


BIG = 2**53 + 1
VOLUME_MSG = r"volume\[1\]=9007199254740993 is above 2\*\*53 \(9007199254740992\), the largest volume"


@pytest.mark.parametrize("volume", [np.array([1, BIG, 1], dtype=np.int64), [1, BIG, 1],
                                    np.array([1, BIG, 1], dtype=np.uint64)])
def test_28_5_trades_volume_past_2_53_is_named_exactly(volume):
    with pytest.raises(ValueError, match=VOLUME_MSG):
        vpoc.from_trades(np.array([1.0, 1.0, 2.0]), volume, tick_size=1.0)


@pytest.mark.parametrize("distribute", ["legacy", "uniform", "close", "hlc3"])
def test_28_5_bars_volume_past_2_53_is_refused(distribute):
    p = np.array([1.0, 1.0, 2.0])
    with pytest.raises(ValueError, match=VOLUME_MSG):
        vpoc.from_bars(p, p, p, np.array([1, BIG, 1], dtype=np.int64), tick_size=1.0,
                       distribute=distribute)
    # 2**53 itself is the largest volume
    prof = vpoc.from_bars(p[:1], p[:1], p[:1], np.array([2**53], dtype=np.int64), tick_size=1.0,
                          distribute=distribute)
    assert prof.total_volume[0] == 2.0**53


@_deps.needs("pandas")
def test_23_8_session_is_the_one_name_and_sessions_its_alias():
    """from_bars/from_trades take the session rule as session= like every other entry point;
    sessions= is the same argument, and giving two different ones is refused."""
    s = vpoc.sessions.daily(np.array([0, 60, 86_400 + 60], dtype=np.int64) * 10**9)
    h = np.array([101.0, 102.0, 103.0]); l = h - 1; c = h - 0.5; v = np.array([1, 2, 3])
    a = vpoc.from_bars(h, l, c, v, session=s, tick_size=0.25)
    b = vpoc.from_bars(h, l, c, v, sessions=s, tick_size=0.25)
    np.testing.assert_array_equal(a.poc, b.poc)
    assert list(a.labels) == list(s.labels)
    t = vpoc.from_trades(c, v, session=s, tick_size=0.25)
    assert list(t.labels) == list(s.labels)
    other = vpoc.sessions.daily(np.array([0, 60, 86_400 + 60], dtype=np.int64) * 10**9)
    with pytest.raises(TypeError, match="give the session rule once"):
        vpoc.from_bars(h, l, c, v, session=s, sessions=other, tick_size=0.25)


def test_24_3_input_errors_carry_structure():
    # every bad argument or row the C++ finds is a vpoc.InputError (a ValueError) with the
    # argument, the row and the reason as fields, so callers never parse the message
    bad = np.array([2.0, 2.0, 2.0])
    with pytest.raises(vpoc.InputError) as e:
        vpoc.from_bars(bad, bad - 1, np.array([1.5, 3.0, 1.5]), np.ones(3), tick_size=0.25)
    assert isinstance(e.value, ValueError)
    assert (e.value.argument, e.value.index) == ("close", 1)
    assert e.value.reason == "is outside [low[1], high[1]] = [1, 2]"
    assert str(e.value) == "close[1]=3 is outside [low[1], high[1]] = [1, 2]"
    with pytest.raises(vpoc.InputError) as e:
        vpoc.from_trades(np.array([1.0, np.nan]), np.ones(2), tick_size=0.25)
    assert (e.value.argument, e.value.index, e.value.reason) == ("price", 1, "is not finite (nan)")
    with pytest.raises(vpoc.InputError) as e:
        vpoc.from_trades(np.ones(2), np.array([1, -5]), tick_size=0.25)
    assert (e.value.argument, e.value.index) == ("volume", 1)
    assert e.value.reason == "must be finite and >= 0, got -5"
    with pytest.raises(vpoc.InputError) as e:
        vpoc.from_trades(np.ones(2), np.ones(2), tick_size=-1.0)
    assert (e.value.argument, e.value.index) == ("tick_size", None)
    with pytest.raises(vpoc.InputError) as e:
        vpoc.from_trades(np.ones(3), np.ones(3), session_ids=np.array([2, 1, 1]), tick_size=0.25)
    assert e.value.argument == "session_ids"
    with pytest.raises(vpoc.InputError) as e:  # about no one argument: the row and session it names
        vpoc.from_trades(np.array([0.0, 1e6]), np.ones(2), tick_size=0.25, max_rows=10)
    assert (e.value.argument, e.value.index, e.value.session) == (None, 1, 0)
    assert e.value.reason == str(e.value)


@pytest.mark.parametrize("budget", [np.array(2**28), [2**28], 1.5])
def test_gpu_placement_cache_names_a_bad_memory_budget(budget):
    """GPU calls cache their Placement by its arguments: an unhashable or wrong memory_budget still
    gets the constructor's TypeError naming it (not 'unhashable type')."""
    from vpoc import _device

    with pytest.raises(TypeError, match="memory_budget"):
        _device._placement(0, budget, 0, False, ())
