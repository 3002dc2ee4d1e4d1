"""Integer epoch timestamps in s/ms/us/ns: ``time_unit=`` everywhere timestamps enter, and a clear
error (naming the likely unit) instead of a silent 1970 session when the unit is wrong.

Inputs come from pandas (``date_range(...).asi8`` is microseconds under pandas 3) and synth bars;
expected results are the same call on nanosecond input.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

import _deps
import vpoc
from vpoc import _time, cli
from vpoc import io as vio
from vpoc import sessions as vs

pd = _deps.module("pandas")  # the tests that use it are marked _deps.needs("pandas")

BARS = vpoc.synth.es_bars(3, 60, seed=5)  # three January 2019 sessions of one-minute bars
NS = np.asarray(BARS.timestamp, dtype=np.int64)
SCALE = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
WORDS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds"}


def in_unit(unit: str) -> np.ndarray:
    assert np.all(NS % SCALE[unit] == 0)  # whole minutes: exact in every unit
    return NS // SCALE[unit]


def same_sessions(a: vs.Sessions, b: vs.Sessions) -> None:
    for k in ("offsets", "labels", "start_ns", "end_ns"):
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)


RULES = {
    "globex": lambda ts, **kw: vs.globex(ts, **kw),
    "globex_clock": lambda ts, **kw: vs.globex(ts, calendar=None, **kw),
    "rth": lambda ts, **kw: vs.rth(ts, start="17:00", end="19:00", calendar=None, **kw),
    "daily": lambda ts, **kw: vs.daily(ts, "America/Chicago", **kw),
    "custom": lambda ts, **kw: vs.custom(ts, "17:00", "16:00", "America/Chicago", **kw),
}


@_deps.needs("pandas")
@pytest.mark.parametrize("rule", [pytest.param(r, marks=_deps.needs("pandas_market_calendars"))
                                  if r == "globex" else r for r in sorted(RULES)])
@pytest.mark.parametrize("unit", ["s", "ms", "us"])
def test_sessions_wrong_unit_raises_and_time_unit_reads_it(rule, unit):
    fn = RULES[rule]
    expected = fn(NS)
    assert expected.n_sessions >= 3
    with pytest.raises(ValueError, match=rf"ts looks like {WORDS[unit]} since the epoch, not "
                                         rf"nanoseconds .*pass time_unit='{unit}'"):
        fn(in_unit(unit))
    same_sessions(fn(in_unit(unit), time_unit=unit), expected)
    # datetime64 of any unit carries its own unit: it just works (time_unit is for integers)
    same_sessions(fn(NS.astype("datetime64[ns]").astype(f"datetime64[{unit}]")), expected)


@_deps.needs("pandas")
def test_pandas_date_range_asi8_units():
    for unit in ("s", "ms", "us", "ns"):
        idx = pd.date_range("2024-03-04 14:30", periods=300, freq="min", tz="UTC", unit=unit)
        ints = idx.asi8
        expected = vs.daily(idx)
        if unit != "ns":
            with pytest.raises(ValueError, match=f"time_unit='{unit}'"):
                vs.daily(ints)
        same_sessions(vs.daily(ints, time_unit=unit), expected)
        assert expected.n_sessions == 1 and expected.labels[0] == 20240304
    # pandas 3's default unit for date_range is microseconds: asi8 is not nanoseconds
    idx = pd.date_range("2024-03-04", periods=3, freq="h", tz="UTC")
    if idx.unit == "us":
        with pytest.raises(ValueError, match="microseconds"):
            vs.daily(idx.asi8)


@_deps.needs("pandas", "pandas_market_calendars")
def test_datetime64_us_array_just_works():
    us = NS.view("datetime64[ns]").astype("datetime64[us]")
    same_sessions(vs.globex(us), vs.globex(NS))
    a = vpoc.session_features(BARS, timestamp=us, tick_size=0.25)
    b = vpoc.session_features(BARS, timestamp=NS, tick_size=0.25)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("unit", ["s", "ms", "us"])
@pytest.mark.parametrize("fn", [vpoc.session_features, vpoc.bar_features])
def test_features_time_unit(fn, unit):
    expected = fn(BARS, timestamp=NS, tick_size=0.25)
    assert "minute_of_day" in expected or fn is vpoc.session_features
    with pytest.raises(ValueError, match=rf"timestamp looks like {WORDS[unit]}.*time_unit='{unit}'"):
        fn(BARS, timestamp=in_unit(unit), tick_size=0.25)
    got = fn(BARS, timestamp=in_unit(unit), time_unit=unit, tick_size=0.25)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@_deps.needs("pandas")
@pytest.mark.parametrize("unit", ["s", "ms", "us"])
@pytest.mark.parametrize("fn", [vpoc.session_features, vpoc.bar_features])
def test_features_time_unit_dataframe(fn, unit):
    expected = fn(BARS, timestamp=NS, tick_size=0.25)
    # a DataFrame whose timestamp column holds integers
    df = BARS.to_pandas()
    df["timestamp"] = in_unit(unit)
    got = fn(df, time_unit=unit, tick_size=0.25, offsets=BARS.offsets)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_bad_time_unit_values():
    for bad in ("sec", "US", 1000, ""):
        with pytest.raises(ValueError, match="time_unit must be one of 's', 'ms', 'us', 'ns' or None"):
            vs.daily(NS, time_unit=bad)
        with pytest.raises(ValueError, match="time_unit must be one of"):
            vpoc.session_features(BARS, timestamp=NS, time_unit=bad, tick_size=0.25)
    with pytest.raises(ValueError, match=r"ts\[0\] = .* s is out of the int64 nanosecond range"):
        vs.daily(np.array([2**62], dtype=np.int64), time_unit="s")
    # an explicit unit that contradicts the values is caught too (seconds read as nanoseconds)
    with pytest.raises(ValueError, match="looks like seconds"):
        vs.daily(in_unit("s"), time_unit="ns")


@_deps.needs("pandas")
def test_plausibility_rules():
    # the four units' 1990..2100 spans do not overlap: at most one unit fits a range
    for unit, scale in SCALE.items():
        lo, hi = _time._LO_NS // scale, _time._HI_NS // scale
        assert _time.likely_unit(lo, hi) == unit
    assert _time.likely_unit(0, 10) is None  # small test integers are not epochs in any unit
    assert _time.likely_unit(-5, 10**18) is None
    # small integer timestamps (tests, toy data) keep working as nanoseconds
    assert vs.daily(np.arange(5, dtype=np.int64)).n_sessions == 1
    np.testing.assert_array_equal(_time.epoch_ns(np.array([1, 2], np.int32), "x", "ms"),
                                  [1_000_000, 2_000_000])
    assert _time.epoch_ns(np.zeros(0, np.int64), "x", "s").dtype == np.int64


@_deps.needs("pandas")
def test_io_arrays_and_files(tmp_path):
    n = NS.shape[0]
    cols = [BARS.open, BARS.high, BARS.low, BARS.close, BARS.volume]
    with pytest.raises(ValueError, match=r"timestamp looks like microseconds.*datetime64\[us\]"):
        vio.Bars(in_unit("us"), *cols)
    bars = vio.Bars(NS.astype("datetime64[ns]").astype("datetime64[us]"), *cols)
    np.testing.assert_array_equal(bars.timestamp, NS)
    path = tmp_path / "bars.csv"
    df = pd.DataFrame({"timestamp": in_unit("ms"), "open": cols[0], "high": cols[1], "low": cols[2],
                       "close": cols[3], "volume": cols[4]})
    df.to_csv(path, index=False)
    np.testing.assert_array_equal(vio.read_bars(path, time_unit="ms").timestamp, NS)
    with pytest.raises(ValueError, match=r"bars.csv: timestamp looks like milliseconds.*time_unit='ms'"):
        vio.read_bars(path, time_unit="us")
    with pytest.raises(ValueError, match="looks like milliseconds since the epoch: pass time_unit='ms'"):
        vio.read_bars(path)
    assert n == len(bars)


@_deps.needs("pandas", "pandas_market_calendars")
def test_cli_time_unit(tmp_path, capsys):
    path = tmp_path / "bars.csv"
    df = BARS.to_pandas()
    df["timestamp"] = in_unit("ms")
    df.drop(columns=[c for c in df.columns if c not in ("timestamp", "open", "high", "low", "close",
                                                         "volume")]).to_csv(path, index=False)
    out_ms, out_ns = tmp_path / "ms.csv", tmp_path / "ns.csv"
    assert cli.main(["profile", str(path), "--time-unit", "ms", "--tick-size", "0.25",
                     "-o", str(out_ms), "--progress", "never"]) == 0
    df["timestamp"] = NS
    df.to_csv(tmp_path / "bars_ns.csv", index=False)
    assert cli.main(["profile", str(tmp_path / "bars_ns.csv"), "--time-unit", "ns",
                     "--tick-size", "0.25", "-o", str(out_ns), "--progress", "never"]) == 0
    a, b = pd.read_csv(out_ms), pd.read_csv(out_ns)
    assert len(a) == 3
    pd.testing.assert_frame_equal(a, b)
    capsys.readouterr()
    assert cli.main(["profile", str(path), "--tick-size", "0.25", "--progress", "never"]) == 2
    assert "--time-unit" in capsys.readouterr().err
    assert cli.main(["profile", str(path), "--time-unit", "us", "--tick-size", "0.25",
                     "--progress", "never"]) == 2
    err = capsys.readouterr().err
    assert "looks like milliseconds" in err and "--time-unit ms" in err


@_deps.needs("pandas", "pandas_market_calendars")
def test_dask_time_unit():
    dd = _deps.require("dask.dataframe")
    from vpoc import dask as vd

    df = BARS.to_pandas()
    expected = vd.from_bars(dd.from_pandas(df, npartitions=2, sort=False), tick_size=0.25,
                            threads=1).compute(scheduler="sync")
    df["timestamp"] = in_unit("us")
    ddf = dd.from_pandas(df, npartitions=2, sort=False)
    with pytest.raises(ValueError, match="looks like microseconds.*time_unit='us'"):
        vd.from_bars(ddf, tick_size=0.25).compute(scheduler="sync")
    got = vd.from_bars(ddf, tick_size=0.25, time_unit="us").compute(scheduler="sync")
    pd.testing.assert_frame_equal(got, expected)
    with pytest.raises(ValueError, match="time_unit must be one of"):
        vd.from_bars(ddf, tick_size=0.25, time_unit="minutes")


def test_naive_python_datetime_objects_unchanged():
    # object arrays of datetimes are not integers: still a TypeError naming the accepted types
    with pytest.raises(TypeError, match="ts must be integer epoch times"):
        vs.daily(np.array([dt.datetime(2024, 1, 2)], dtype=object))
