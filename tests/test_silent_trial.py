"""Silent behaviour a new-user trial found (notes/trial_findings.md items 1-4, 6, 7, 10, 11, 13, 15, 16).

Contract: each test fails before its fix: a naive time, a Sessions of other timestamps, a wrong bar label,
a left-out row or a duplicated bar is refused or reported, never taken silently.
"""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pytest

import _deps

vpoc = pytest.importorskip("vpoc")
pd = pytest.importorskip("pandas")
NEEDS_CAL = _deps.needs("pandas_market_calendars")  # the Globex rule's holiday calendar

NAIVE = "timezone-naive pandas datetime; localize it first"
BARS = ("high", "low", "close", "volume")


def _frame(n_sessions=3, bars=300, seed=1):
    return vpoc.synth.es_bars(n_sessions=n_sessions, bars_per_session=bars, seed=seed).to_pandas()


def _quiet(f, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kw)


# ---------------------------------------------------------------- 1: Live refuses naive pandas times


@NEEDS_CAL
@pytest.mark.parametrize("how", ["index", "series", "scalar"])
def test_live_refuses_naive_pandas_timestamps_as_sessions_do(how):
    ts = pd.DatetimeIndex(["2024-03-05 15:58", "2024-03-05 17:01", "2024-03-05 17:02"])
    with pytest.raises(ValueError, match=NAIVE):
        vpoc.sessions.globex(ts)  # the batch rule the Live follows
    lv = vpoc.Live(tick_size=0.25, session="globex")
    with pytest.raises(ValueError, match=NAIVE + r".*timestamp" + (r"\.dt" if how == "series" else "") + r"\.tz_localize"):
        if how == "index":
            lv.update([100.5] * 3, [100.0] * 3, [100.25] * 3, [1, 1, 1], timestamp=ts)
        elif how == "series":
            lv.update([100.5] * 3, [100.0] * 3, [100.25] * 3, [1, 1, 1], timestamp=pd.Series(ts))
        else:
            lv.update(100.5, 100.0, 100.25, 1, timestamp=ts[0])
    assert lv.session_label is None and lv.n_rows == 0  # nothing taken
    with pytest.raises(ValueError, match="session_starts is a " + NAIVE):
        vpoc.Live(tick_size=0.25, session_starts=ts)


@NEEDS_CAL
def test_live_takes_aware_pandas_and_numpy_datetime64_as_the_batch_does():
    ts = pd.DatetimeIndex(["2024-03-05 15:58", "2024-03-05 17:01", "2024-03-05 17:02"])
    aware = ts.tz_localize("America/Chicago")
    lv = vpoc.Live(tick_size=0.25, session="globex")
    lv.update([100.5] * 3, [100.0] * 3, [100.25] * 3, [1, 1, 1], timestamp=aware)
    assert (len(lv), lv.session_label) == (1, 20240306)
    assert list(vpoc.sessions.globex(aware).labels) == [20240305, 20240306]
    # numpy datetime64 is UTC in vpoc.sessions and in Live alike
    utc = aware.tz_convert("UTC").tz_localize(None).to_numpy()
    lv2 = vpoc.Live(tick_size=0.25, session="globex")
    for t in utc:
        lv2.update(100.5, 100.0, 100.25, 1, timestamp=t)
    assert (len(lv2), lv2.session_label) == (1, 20240306)
    assert list(vpoc.sessions.globex(utc).labels) == [20240305, 20240306]


# ---------------------------------------------------------------- 2: a Sessions of other timestamps


@NEEDS_CAL
def test_from_bars_refuses_sessions_built_from_other_timestamps_of_the_same_length():
    df = _frame()
    shifted = _quiet(vpoc.sessions.globex, df["timestamp"] + pd.Timedelta("1D"))
    assert shifted.n_input == len(df)
    with pytest.raises(ValueError, match=r"from_bars: session= was not built from this data's timestamps"):
        vpoc.from_bars(df, session=shifted, tick_size=0.25)
    # same first and last timestamps, one moved between them
    ts = df["timestamp"].copy()
    ts.iloc[5] = ts.iloc[5] + pd.Timedelta("30s")
    other = vpoc.sessions.globex(ts)
    with pytest.raises(ValueError, match="the same first and last timestamps, other ones between them"):
        vpoc.from_bars(df, session=other, tick_size=0.25)
    trades = vpoc.synth.es_trades(500, 2, seed=3).to_pandas()
    with pytest.raises(ValueError, match="from_trades: session= was not built"):
        vpoc.from_trades(trades, session=_quiet(vpoc.sessions.globex, trades["timestamp"] + pd.Timedelta("1h")),
                         tick_size=0.25)


@NEEDS_CAL
def test_from_bars_takes_sessions_of_its_own_timestamps_however_read():
    df = _frame()
    s = vpoc.sessions.globex(df["timestamp"], volume=df["volume"])
    ref = vpoc.from_bars(df, session=s, tick_size=0.25)
    bars = vpoc.io.read_bars(df)
    assert np.array_equal(vpoc.from_bars(bars, session=s, tick_size=0.25).poc, ref.poc)
    assert np.array_equal(vpoc.from_bars(vpoc.synth.es_bars(n_sessions=3, bars_per_session=300, seed=1),
                                         session=s, tick_size=0.25).poc, ref.poc)
    # close stamps: sessions built with label="close", the frame read with it (or not)
    closes = df.assign(timestamp=df["timestamp"] + pd.Timedelta("1min"))
    sc = vpoc.sessions.globex(closes["timestamp"], label="close", interval=60)
    a = vpoc.from_bars(closes, session=sc, tick_size=0.25, label="close", interval=60)
    b = vpoc.from_bars(closes, session=sc, tick_size=0.25)
    assert np.array_equal(a.poc, ref.poc) and np.array_equal(b.poc, ref.poc)
    # a frame of the kept rows only
    df5 = pd.concat([df, df.iloc[[-1]].assign(timestamp=df["timestamp"].iloc[-1] + pd.Timedelta("20h"))],
                    ignore_index=True)  # a Saturday row: left out
    s5 = _quiet(vpoc.sessions.globex, df5["timestamp"])
    assert s5.n_dropped == 1
    kept = df5.iloc[s5.index]
    assert np.array_equal(vpoc.from_bars(kept, session=s5, tick_size=0.25).poc, ref.poc)


# ---------------------------------------------------------------- 3: the wrong bar label both ways


@NEEDS_CAL
def test_label_close_on_open_stamped_bars_warns_like_the_opposite_mistake():
    df = _frame(n_sessions=4, bars=1380)  # one bar a session misplaced: 0.07%, under the share threshold
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ok = vpoc.from_bars(df, session="globex", tick_size=0.25)
    assert ok.dropped_rows == 0
    with pytest.warns(vpoc.DroppedRowsWarning, match=r"one bar interval \(60 s\) before a session's open.*"
                                                     r"pass label='open'"):
        p = vpoc.from_bars(df, session="globex", tick_size=0.25, label="close", interval=60)
    assert p.dropped_rows == 4
    with pytest.warns(vpoc.DroppedRowsWarning, match="look like bar opens"):
        vpoc.sessions.globex(df["timestamp"], label="close", interval=60)
    bars = vpoc.io.read_bars(df, label="close", interval=60)
    with pytest.warns(vpoc.DroppedRowsWarning, match="look like bar opens"):  # interval inferred
        vpoc.sessions.globex(bars.timestamp)
    # the opposite mistake keeps its warning
    closes = df.assign(timestamp=df["timestamp"] + pd.Timedelta("1min"))
    with pytest.warns(vpoc.DroppedRowsWarning, match="look like bar closes: pass label='close'"):
        vpoc.sessions.globex(closes["timestamp"])


@NEEDS_CAL
@pytest.mark.parametrize("chunk", [None, 1])
def test_live_label_close_on_open_stamped_bars_warns(chunk):
    b = vpoc.synth.es_bars(n_sessions=3, bars_per_session=1380, seed=2)
    cols = [getattr(b, k) for k in BARS]
    lv = vpoc.Live(tick_size=0.25, session="globex", label="close", interval=60)
    with pytest.warns(vpoc.DroppedRowsWarning, match="one bar interval before a session's open.*label='open'"):
        if chunk is None:
            lv.update(*cols, open=b.open, timestamp=b.timestamp)
        else:
            for i in range(len(b)):
                lv.update(*[float(c[i]) for c in cols], open=float(b.open[i]), timestamp=int(b.timestamp[i]))
    assert lv.n_dropped == 3
    right = vpoc.Live(tick_size=0.25, session="globex")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        right.update(*cols, open=b.open, timestamp=b.timestamp)
    assert right.n_dropped == 0


# ---------------------------------------------------------------- 4: which input rows were kept


@NEEDS_CAL
def test_profiles_name_the_kept_rows_when_a_session_rule_drops_rows():
    df = _frame(n_sessions=2, bars=200)
    extra = df.iloc[[10, 250]].assign(timestamp=lambda d: d["timestamp"].dt.floor("D") + pd.Timedelta("22h30min"))
    df = pd.concat([df, extra]).sort_values("timestamp", kind="stable").reset_index(drop=True)  # in the halt
    s = _quiet(vpoc.sessions.globex, df["timestamp"])
    assert s.n_dropped == 2
    p = _quiet(vpoc.from_bars, df, session="globex", tick_size=0.25, developing=True)
    assert p.kept_rows.dtype == np.int64 and np.array_equal(p.kept_rows, s.index)
    assert p.dev_poc.shape == p.kept_rows.shape
    # dev_poc[j] is input row kept_rows[j]: the arrays of the kept rows give the same series
    h, lo, c, v = (df[k].to_numpy()[p.kept_rows] for k in BARS)
    ref = vpoc.from_bars(h, lo, c, v, offsets=s.offsets, tick_size=0.25, developing=True)
    assert np.array_equal(ref.dev_poc, p.dev_poc)
    for q in (pickle.loads(pickle.dumps(p)), p.cpu()):
        assert np.array_equal(q.kept_rows, p.kept_rows)
    whole = _frame(n_sessions=2, bars=200)
    assert vpoc.from_bars(whole, session="globex", tick_size=0.25).kept_rows is None
    assert vpoc.from_bars(*(whole[k].to_numpy() for k in BARS), tick_size=0.25).kept_rows is None


# ---------------------------------------------------------------- 6, 7: synth bars, frames without open


@NEEDS_CAL
def test_from_bars_takes_synth_bars_as_session_features_does():
    b = vpoc.synth.es_bars(n_sessions=3)
    s = vpoc.sessions.globex(b.timestamp, volume=b.volume)
    p = vpoc.from_bars(b, session=s, tick_size=0.25, developing=True)
    q = vpoc.from_bars(b.to_pandas(), session=s, tick_size=0.25, developing=True)
    assert np.array_equal(p.poc, q.poc) and np.array_equal(p.dev_poc, q.dev_poc)
    assert list(p.session_labels) == list(b.session_labels)
    t = vpoc.synth.es_trades(3000, 2, seed=3)
    assert np.array_equal(vpoc.from_trades(t, session="globex", tick_size=0.25).poc,
                          vpoc.from_trades(t.to_pandas(), session="globex", tick_size=0.25).poc)
    with pytest.raises(TypeError, match="from_trades got a vpoc.synth.SynthBars; use from_bars"):
        vpoc.from_trades(b, tick_size=0.25)
    with pytest.raises(ValueError, match="apply to DataFrames"):
        vpoc.from_bars(b, session=s, tick_size=0.25, tz="UTC")


@NEEDS_CAL
def test_frame_without_open_is_read_as_arrays_without_open():
    df = _frame(n_sessions=2, bars=100)
    no_open = df.drop(columns=["open"])
    p = vpoc.from_bars(no_open, session="globex", tick_size=0.25, developing=True)
    s = vpoc.sessions.globex(df["timestamp"])
    ref = vpoc.from_bars(*(df[k].to_numpy() for k in BARS), offsets=s.offsets, tick_size=0.25, developing=True)
    assert np.array_equal(p.poc, ref.poc) and np.array_equal(p.dev_poc, ref.dev_poc)
    # legacy reads open: without it, as the array call without open=
    legacy = vpoc.from_bars(no_open, session="globex", tick_size=0.25, distribute="legacy")
    ref = vpoc.from_bars(*(df[k].to_numpy() for k in BARS), offsets=s.offsets, tick_size=0.25, distribute="legacy")
    assert np.array_equal(legacy.volume, ref.volume)
    with pytest.raises(ValueError, match=r"no column for 'open' "):  # read_bars still needs it (Bars.open)
        vpoc.io.read_bars(no_open)


def test_trades_frame_to_from_bars_names_every_missing_column_and_the_function():
    t = vpoc.synth.es_trades(300, 1, seed=3).to_pandas()
    with pytest.raises(ValueError, match=r"no column for 'open', 'high', 'low', 'close' .*looks like trades.*"
                                         r"from_trades") as e:
        vpoc.from_bars(t, session="globex", tick_size=0.25)
    assert isinstance(e.value, vpoc.InputError) and e.value.argument == "columns"
    with pytest.raises(ValueError, match=r"no column for 'price' .*looks like bars.*from_bars"):
        vpoc.from_trades(_frame(1, 10), tick_size=0.25)


# ---------------------------------------------------------------- 10, 11: frames to write_bars, own index


def test_write_bars_and_trades_take_frames(tmp_path):
    df = _frame(n_sessions=1, bars=50)
    vpoc.io.write_bars(df, tmp_path / "b.csv")
    back = vpoc.io.read_bars(tmp_path / "b.csv")
    assert np.array_equal(back.timestamp, vpoc.io.read_bars(df).timestamp)
    assert np.array_equal(back.high, df["high"].to_numpy())
    t = vpoc.synth.es_trades(200, 1, seed=3).to_pandas()
    vpoc.io.write_trades(t, tmp_path / "t.csv")
    assert np.array_equal(vpoc.io.read_trades(tmp_path / "t.csv").price, t["price"].to_numpy())
    with pytest.raises(ValueError, match="no time zone"):  # naive: read_bars' own refusal
        vpoc.io.write_bars(df.assign(timestamp=df["timestamp"].dt.tz_localize(None)), tmp_path / "n.csv")


@NEEDS_CAL
def test_frame_indexed_by_its_own_column():
    df = _frame(n_sessions=2, bars=30)
    ref = vpoc.from_bars(df, session="globex", tick_size=0.25)
    for d in (df.set_index("timestamp", drop=False), df.set_index("volume", drop=False),
              df.set_index(["timestamp", "session_id"], drop=False)):
        assert np.array_equal(vpoc.from_bars(d, session="globex", tick_size=0.25).poc, ref.poc)
    bad = df.set_index("volume", drop=False)
    bad.index = bad.index + 1
    with pytest.raises(ValueError, match="the index level 'volume' and the column 'volume' differ"):
        vpoc.io.read_bars(bad)


# ---------------------------------------------------------------- 13: exact duplicate bars


@NEEDS_CAL
def test_exact_duplicate_bars_are_counted_in_a_warning():
    df = _frame(n_sessions=2, bars=30)
    dup = pd.concat([df, df.iloc[[3, 3, 7]]]).sort_values("timestamp", kind="stable").reset_index(drop=True)
    msg = "3 of 63 bars are exact duplicates of another bar"
    with pytest.warns(vpoc.io.DuplicateRowsWarning, match=msg):
        vpoc.io.read_bars(dup)
    with pytest.warns(vpoc.io.DuplicateRowsWarning, match=msg):
        vpoc.from_bars(dup, session="globex", tick_size=0.25)
    ns = np.asarray(pd.DatetimeIndex(dup["timestamp"]).as_unit("ns").asi8)
    by_hand = vpoc.io.Bars(ns, *(dup[k].to_numpy() for k in ("open", "high", "low", "close", "volume")))
    with pytest.warns(vpoc.io.DuplicateRowsWarning, match=msg):
        vpoc.from_bars(by_hand, session="globex", tick_size=0.25)
    # the same timestamp with other values is no duplicate; nor are the bars of read_bars twice over
    same_ts = dup.copy()
    again = same_ts.duplicated(keep="first")
    same_ts.loc[again, "volume"] += np.arange(1, int(again.sum()) + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vpoc.io.read_bars(same_ts)
        vpoc.from_bars(df, session="globex", tick_size=0.25)
        info = vpoc.io.inspect(dup)  # inspect reports them in its evidence
    assert info.duplicated_rows == 3
    assert vpoc.io.DuplicateRowsWarning.__mro__[1] is UserWarning


def test_duplicate_bars_counts_as_inspect():
    from vpoc._arrays import duplicate_bars

    rng = np.random.default_rng(5)
    for _ in range(50):
        n = int(rng.integers(0, 40))
        t = np.sort(rng.integers(0, 8, n)).astype(np.int64)
        cols = [rng.integers(0, 2, n).astype(np.float64) for _ in range(5)]
        table = np.stack([t.astype(np.float64)] + cols, axis=1) if n else np.zeros((0, 6))
        want = n - np.unique(table, axis=0).shape[0] if n else 0
        got, repeats = duplicate_bars(t, cols)
        assert got == want and repeats == (int(np.count_nonzero(np.diff(t) == 0)) if n else 0)


# ---------------------------------------------------------------- 15: an edited window in a state


@NEEDS_CAL
@pytest.mark.parametrize("win,new", [(25, 50), (1, 5), ("7min", "70min")])
def test_from_state_refuses_a_window_longer_than_its_carry(win, new):
    b = vpoc.synth.es_bars(n_sessions=2, bars_per_session=300, seed=1)
    lv = vpoc.Live(tick_size=0.25, session="globex", window=win, window_across_sessions=True)
    lv.update(*(getattr(b, k)[:310] for k in BARS), open=b.open[:310], timestamp=b.timestamp[:310])
    st = lv.state_dict(flat=True)
    vpoc.Live.from_state(st)  # as made: taken
    cfg = json.loads(st["config"])
    cfg["window"] = new
    st["config"] = json.dumps(cfg)
    with pytest.raises(ValueError, match=r"state\['carry'\] holds \d+ rows, but this Live's window .* reaches"):
        vpoc.Live.from_state(st)


# ---------------------------------------------------------------- 16: the nits


def test_nits():
    h, lo, c, v = np.array([10.5, 10.75]), np.array([10.0, 10.5]), np.array([10.25, 10.5]), np.array([1.0, 2.0])
    with pytest.raises(TypeError, match="from_bars: high is None"):
        vpoc.from_bars(None, lo, c, v, tick_size=0.25)
    with pytest.raises(TypeError, match="from_trades: price is None"):
        vpoc.from_trades(None, v, tick_size=0.25)
    with pytest.raises(TypeError, match=r"from_bars: tz= applies only when"):
        vpoc.from_bars(h, lo, c, v, tz="UTC", tick_size=0.25)
    with pytest.raises(TypeError, match=r"from_bars: tz= and label= apply only when"):
        vpoc.from_bars(h, lo, c, v, tz="UTC", label="open", tick_size=0.25)
    b = vpoc.synth.es_bars(n_sessions=1, bars_per_session=5)
    backwards = vpoc.io.Bars(b.timestamp[::-1], b.open, b.high, b.low, b.close, b.volume)
    with pytest.raises(ValueError, match=r"from_bars: the Bars's timestamp\[1\] is before timestamp\[0\]"):
        vpoc.from_bars(backwards, tick_size=0.25)
    lv = vpoc.Live(tick_size=0.25)
    assert lv.update([], [], [], [], timestamp=[])[3] == 0.0  # no rows: nothing changes
    t0 = 1_700_000_000_000_000_000
    lv.update(10.5, 10.0, 10.25, 1, timestamp=t0)
    lv.close()
    lv.update([10.5], [10.0], [10.25], [1], timestamp=[t0 + 1])
    assert pickle.loads(pickle.dumps(lv)).session_label == 1
    lv.close()
    lv.update(10.5, 10.0, 10.25, 1, timestamp=t0 + 2)
    assert list(lv.labels) == [0, 1] and lv.session_label == 2
    assert list(lv.profiles.session_labels) == [0, 1]



@pytest.mark.parametrize("window, match", [
    (pd.offsets.BDay(1), "window=<BusinessDay> is not a fixed duration"),
    (pd.offsets.MonthEnd(1), "window=<MonthEnd> is not a fixed duration"),
    (pd.NaT, "window must be a positive duration .* got NaT"),
])
def test_window_messages_name_window(window, match):
    p, v = np.arange(10.0) + 100.0, np.ones(10)
    with pytest.raises(ValueError, match=match):
        vpoc.from_trades(p, v, tick_size=0.25, developing=True, window=window)


@pytest.mark.parametrize("side", [False, True, np.bool_(True)])
def test_a_boolean_side_is_named(side):
    p, v = np.arange(10.0) + 100.0, np.ones(10)
    with pytest.raises(TypeError, match=r"side=.* is a boolean, not a side per row"):
        vpoc.from_trades(p, v, tick_size=0.25, side=side)


def test_synth_bars_get_their_own_sessions_in_from_bars_as_in_the_feature_tables():
    """from_bars(SynthBars) with no session rule uses the container's sessions, as session_features
    does (the Globex rule dropped rows of the synthetic clock, which has no DST or holidays)."""
    bars = vpoc.synth.es_bars(n_sessions=120, seed=4)
    prof = vpoc.from_bars(bars, tick_size=0.25)
    ft = vpoc.session_features(bars, tick_size=0.25)
    assert prof.n_sessions == len(ft) == 120 and prof.dropped_rows == 0
    assert prof.session_rule == "SynthBars sessions" and prof.trade_dates
    np.testing.assert_array_equal(prof.session_labels, bars.session_labels)
    one = vpoc.from_bars(bars.high[:1380], bars.low[:1380], bars.close[:1380], bars.volume[:1380], tick_size=0.25)
    assert prof.poc[0] == one.poc[0]


def test_levels_on_the_cpu_is_read_only():
    prof = vpoc.from_bars(*[np.array(x) for x in ([101.0, 102.0], [100.0, 101.0], [100.5, 101.5], [5.0, 7.0])],
                          tick_size=0.25)
    with pytest.raises(ValueError, match="read-only"):
        prof.levels[0, 0] = 0.0
