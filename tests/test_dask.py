"""``vpoc.dask``: per-session profiles of partitioned dask DataFrames on a 2-process LocalCluster.

Every result is compared with the single-process engine on the whole frame (bit-identical: each
session is binned whole, in input order) and with plain pandas group-bys for count/start/end/volume.
"""

from __future__ import annotations

import logging
from typing import Any, List

import numpy as np
import pytest

import _deps

pd = _deps.require("pandas")
dd = _deps.require("dask.dataframe")
distributed = _deps.require("distributed")

import dask  # noqa: E402

import vpoc  # noqa: E402
import vpoc.dask as vd  # noqa: E402
from vpoc import cli  # noqa: E402

TIMEOUT = 120  # seconds for one computation on the cluster


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    c = distributed.Client(cluster, timeout=60)
    try:
        yield c
    finally:
        c.close(timeout=30)
        cluster.close(timeout=30)


def compute(client: Any, obj: Any) -> pd.DataFrame:
    return client.compute(obj).result(timeout=TIMEOUT)


def single_process(df: pd.DataFrame, labels_col: str, *, trades: bool = False, **kw) -> pd.DataFrame:
    """vpoc on the whole frame in this process, sessions = runs of ``labels_col``, plus the
    count/start/end of each session from pandas."""
    labels = df[labels_col].to_numpy()
    starts = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
    offsets = np.append(starts, len(df)).astype(np.int64)
    if trades:
        prof = vpoc.from_trades(df.price.to_numpy(), df.volume.to_numpy(), offsets=offsets, **kw)
    else:
        prof = vpoc.from_bars(df.high.to_numpy(), df.low.to_numpy(), df.close.to_numpy(),
                              df.volume.to_numpy(), open=df.open.to_numpy(), offsets=offsets, **kw)
    out = prof.to_pandas()
    out.index = pd.Index(labels[starts], name="session")
    g = df.groupby(labels_col, sort=True)
    out["count"] = g.size().to_numpy()
    out["start"] = g.timestamp.min().to_numpy()
    out["end"] = g.timestamp.max().to_numpy()
    out["vol_pandas"] = g.volume.sum().to_numpy().astype(np.float64)
    return out


def check(got: pd.DataFrame, exp: pd.DataFrame, *, times: bool = True) -> None:
    assert list(got.columns) == list(cli.PROFILE_COLUMNS[1:]) and got.index.name == "session"
    np.testing.assert_array_equal(got.index.to_numpy(), exp.index.to_numpy())
    for k in ("poc", "vah", "val", "total_volume", "va_volume", "poc_row", "vah_row", "val_row",
              "low_row", "n_rows", "count"):
        np.testing.assert_array_equal(got[k].to_numpy(), exp[k].to_numpy(), err_msg=k)
    np.testing.assert_array_equal(got.low.to_numpy(), exp.low_row.to_numpy() * 0.25)
    np.testing.assert_array_equal(got.high.to_numpy(), (exp.low_row + exp.n_rows - 1).to_numpy() * 0.25)
    np.testing.assert_allclose(got.total_volume.to_numpy(), exp.vol_pandas.to_numpy(), rtol=1e-12)
    if times:
        np.testing.assert_array_equal(got.start.to_numpy(), pd.to_datetime(exp.start, utc=True).to_numpy())
        np.testing.assert_array_equal(got.end.to_numpy(), pd.to_datetime(exp.end, utc=True).to_numpy())
    else:
        assert got.start.isna().all() and got.end.isna().all()


def check_meta(result: Any, got: pd.DataFrame) -> None:
    meta = result._meta
    assert list(meta.columns) == list(got.columns) and meta.index.name == got.index.name
    assert meta.dtypes.to_dict() == got.dtypes.to_dict()
    assert meta.index.dtype == got.index.dtype


def bars(n_sessions: int, per: int, seed: int) -> pd.DataFrame:
    return vpoc.synth.es_bars(n_sessions, per, seed=seed).to_pandas()  # January 2019: no holidays


@_deps.needs("pandas_market_calendars")  # the default session rule: CME Globex
@pytest.mark.parametrize("npartitions", [1, 4, 7, 25])
def test_bars_straddling_partitions(client, npartitions):
    """9 sessions of 100 bars: 7 partitions split sessions; 25 make sessions span 3+ partitions."""
    df = bars(9, 100, seed=3)
    ddf = dd.from_pandas(df, npartitions=npartitions, sort=False)
    sizes = ddf.map_partitions(len).compute(scheduler="sync").tolist()
    bounds = np.cumsum(sizes)[:-1]
    if npartitions > 1:  # the case under test: a partition boundary inside a session
        assert np.any(bounds % 100 != 0)
    if npartitions == 25:
        assert max(sizes) < 50  # every session spans at least three partitions
    res = vd.from_bars(ddf, tick_size=0.25)  # session="globex" from the timestamps
    got = compute(client, res)
    check(got, single_process(df, "session_id", tick_size=0.25))
    check_meta(res, got)
    assert res.npartitions == ddf.npartitions


def test_bars_session_column_and_options(client):
    df = bars(6, 80, seed=5)
    ddf = dd.from_pandas(df, npartitions=5, sort=False)
    kw = dict(tick_size=0.25, ticks_per_row=2, distribute="legacy", va_method="greedy", poc_tie="low",
              value_area=0.6)
    res = vd.from_bars(ddf, session_column="session_id", timestamp=None, **kw)
    got = compute(client, res)
    exp = single_process(df, "session_id", **kw)
    for k in ("poc", "vah", "val", "total_volume", "va_volume", "poc_row", "vah_row", "val_row",
              "low_row", "n_rows", "count"):
        np.testing.assert_array_equal(got[k].to_numpy(), exp[k].to_numpy(), err_msg=k)
    np.testing.assert_array_equal(got.low.to_numpy(), exp.low_row.to_numpy() * 0.5)
    assert got.start.isna().all() and got.end.isna().all()
    check_meta(res, got)
    # without open the legacy rule spreads over min/max(close, low/high): a different result
    res2 = vd.from_bars(ddf, session_column="session_id", timestamp=None, open=None, **kw)
    got2 = compute(client, res2)
    prof = vpoc.from_bars(df.high, df.low, df.close, df.volume, session_ids=df.session_id, **kw)
    np.testing.assert_array_equal(got2.total_volume.to_numpy(), prof.total_volume)
    np.testing.assert_array_equal(got2.poc_row.to_numpy(), prof.poc_row)


@_deps.needs("pandas_market_calendars")  # the default session rule: CME Globex
def test_timestamp_index_and_naive_times(client):
    df = bars(5, 120, seed=7)
    by_index = dd.from_pandas(df.set_index("timestamp"), npartitions=6, sort=True)
    assert by_index.known_divisions
    got = compute(client, vd.from_bars(by_index, tick_size=0.25))
    exp = single_process(df, "session_id", tick_size=0.25)
    check(got, exp)
    naive = df.assign(timestamp=df.timestamp.dt.tz_convert("America/Chicago").dt.tz_localize(None))
    nd = dd.from_pandas(naive, npartitions=3, sort=False)
    check(compute(client, vd.from_bars(nd, tick_size=0.25, tz="America/Chicago")), exp)
    ints = df.assign(timestamp=pd.DatetimeIndex(df.timestamp).as_unit("ns").asi8)
    check(compute(client, vd.from_bars(dd.from_pandas(ints, npartitions=4, sort=False), tick_size=0.25)), exp)
    with pytest.raises(ValueError, match="timezone-naive"):
        compute(client, vd.from_bars(nd, tick_size=0.25))


@_deps.needs("pandas_market_calendars")  # the default session rule: CME Globex
def test_empty_partitions_and_rth_rule(client):
    df = bars(4, 1380, seed=9)
    chicago = df.timestamp.dt.tz_convert("America/Chicago")
    minute = chicago.dt.hour * 60 + chicago.dt.minute
    pieces = [df.iloc[:1000], df.iloc[:0], df.iloc[1000:3000], df.iloc[:0], df.iloc[:0], df.iloc[3000:]]
    ddf = dd.from_delayed([dask.delayed(p.copy)() for p in pieces], meta=df.iloc[:0], verify_meta=True)
    got = compute(client, vd.from_bars(ddf, tick_size=0.25))
    check(got, single_process(df, "session_id", tick_size=0.25))
    # RTH: 08:30-15:15 Chicago, rows outside are dropped; partitions in the overnight part hold
    # no RTH rows at all
    res = vd.from_bars(ddf, tick_size=0.25, session="rth")
    got = compute(client, res)
    rth = df[(minute >= 510) & (minute < 915)].copy()
    rth["day"] = (chicago.dt.year * 10000 + chicago.dt.month * 100 + chicago.dt.day)[rth.index]
    check(got, single_process(rth.reset_index(drop=True), "day", tick_size=0.25))
    check_meta(res, got)
    assert (got["count"] == 405).all()
    # a rule's options go through session_kwargs: calendar days in Chicago
    got = compute(client, vd.from_bars(ddf, tick_size=0.25, session="daily",
                                       session_kwargs={"tz": "America/Chicago"}))
    daily = df.assign(day=chicago.dt.year * 10000 + chicago.dt.month * 100 + chicago.dt.day)
    check(got, single_process(daily, "day", tick_size=0.25))


@_deps.needs("pandas_market_calendars")  # the default session rule: CME Globex
def test_trades(client):
    t = vpoc.synth.es_trades(40_000, 5, seed=4)
    df = t.to_pandas()
    ddf = dd.from_pandas(df, npartitions=9, sort=False)
    res = vd.from_trades(ddf, tick_size=0.25, va_method="single")
    got = compute(client, res)
    check(got, single_process(df, "session_id", trades=True, tick_size=0.25, va_method="single"))
    check_meta(res, got)
    got = compute(client, vd.from_trades(ddf, tick_size=0.25, session_column="session_id", threads=2))
    check(got, single_process(df, "session_id", trades=True, tick_size=0.25))


def test_custom_rule_and_datetime_labels(client):
    df = bars(3, 200, seed=1)
    hourly = df.timestamp.dt.floor("h").dt.tz_localize(None).to_numpy()

    def hours(ts: np.ndarray) -> Any:
        from types import SimpleNamespace
        lab = ts // 3_600_000_000_000
        starts = np.flatnonzero(np.r_[True, lab[1:] != lab[:-1]])
        return SimpleNamespace(offsets=np.append(starts, len(ts)), labels=lab[starts], index=None)

    ddf = dd.from_pandas(df, npartitions=4, sort=False)
    got = compute(client, vd.from_bars(ddf, tick_size=0.25, session=hours))
    exp = single_process(df.assign(h=hourly.astype("datetime64[ns]").view(np.int64) // 3_600_000_000_000), "h",
                         tick_size=0.25)
    check(got, exp)
    dl = dd.from_pandas(df.assign(h=df.timestamp.dt.floor("h").dt.tz_localize(None)), npartitions=4, sort=False)
    res = vd.from_bars(dl, tick_size=0.25, session_column="h")
    got = compute(client, res)
    check_meta(res, got)
    assert got.index.dtype.kind == "M"
    np.testing.assert_array_equal(got.poc.to_numpy(), exp.poc.to_numpy())
    np.testing.assert_array_equal(got.index.to_numpy(), np.unique(hourly))


@_deps.needs("pandas_market_calendars")  # the default session rule: CME Globex
def test_bad_input(client):
    df = bars(3, 50, seed=2)
    ddf = dd.from_pandas(df, npartitions=2, sort=False)
    with pytest.raises(TypeError, match="ddf"):
        vd.from_bars(df, tick_size=0.25)
    with pytest.raises(ValueError, match="'hi'"):
        vd.from_bars(ddf, tick_size=0.25, high="hi")
    with pytest.raises(ValueError, match="not both"):
        vd.from_bars(ddf, tick_size=0.25, session_column="session_id", session="globex")
    with pytest.raises(ValueError, match="session must be"):
        vd.from_bars(ddf, tick_size=0.25, session="weekly")
    with pytest.raises(ValueError, match="session_kwargs"):
        vd.from_bars(ddf, tick_size=0.25, session_column="session_id", session_kwargs={"tz": "UTC"})
    with pytest.raises(ValueError, match="session_column='nope'"):
        vd.from_bars(ddf, tick_size=0.25, session_column="nope")
    with pytest.raises(ValueError, match="timestamp='when'"):
        vd.from_bars(ddf, tick_size=0.25, timestamp="when")
    with pytest.raises(ValueError, match="needs timestamps"):
        vd.from_bars(ddf, tick_size=0.25, timestamp=None)
    with pytest.raises(ValueError, match="tick_size"):
        vd.from_bars(ddf, tick_size=-0.25)
    with pytest.raises(ValueError, match="distribute"):
        vd.from_bars(ddf, tick_size=0.25, distribute="spread")
    with pytest.raises(ValueError, match="va_method"):
        vd.from_trades(dd.from_pandas(pd.DataFrame({"timestamp": df.timestamp, "price": df.close,
                                                    "volume": df.volume}), npartitions=2), tick_size=0.25,
                       va_method="x")
    with pytest.raises(TypeError, match="session column"):
        vd.from_bars(ddf.assign(s=ddf.session_id.astype(str)), tick_size=0.25, session_column="s")
    # labels that go back: inside a partition, and across partitions
    shuffled = df.assign(session_id=df.session_id.to_numpy()[::-1])
    with pytest.raises(ValueError, match="must not decrease"):
        compute(client, vd.from_bars(dd.from_pandas(shuffled, npartitions=1), tick_size=0.25,
                                     session_column="session_id"))
    with pytest.raises(ValueError, match="must not decrease"):
        compute(client, vd.from_bars(dd.from_pandas(shuffled, npartitions=3, sort=False),
                                     tick_size=0.25, session_column="session_id"))
    bad = df.copy()
    bad.loc[70, "high"] = bad.loc[70, "low"] - 1
    with pytest.raises(ValueError, match="high"):
        compute(client, vd.from_bars(dd.from_pandas(bad, npartitions=2, sort=False), tick_size=0.25))


@_deps.needs("pandas_market_calendars")  # the default session rule: CME Globex
def test_result_is_lazy_and_reusable(client):
    df = bars(4, 60, seed=6)
    ddf = dd.from_pandas(df, npartitions=3, sort=False)
    res = vd.from_bars(ddf, tick_size=0.25)
    parts: List[pd.DataFrame] = [compute(client, res.get_partition(i)) for i in range(res.npartitions)]
    whole = compute(client, res)
    pd.testing.assert_frame_equal(pd.concat(parts), whole)
    assert sum(len(p) for p in parts) == 4  # each session exactly once


def test_23_8_session_is_the_rule_and_old_spellings_are_deprecated(client):
    """session= is the session rule as in the CLI and Live; sessions= and session=<column> still
    work, with a DeprecationWarning, and give the same result."""
    df = bars(3, 120, seed=3)
    ddf = dd.from_pandas(df, npartitions=3, sort=False)
    exp = compute(client, vd.from_bars(ddf, tick_size=0.25, session="daily"))
    with pytest.warns(DeprecationWarning, match="sessions= is deprecated; use session="):
        old = vd.from_bars(ddf, tick_size=0.25, sessions="daily")
    pd.testing.assert_frame_equal(compute(client, old), exp)
    by_col = compute(client, vd.from_bars(ddf, tick_size=0.25, session_column="session_id"))
    check(by_col, single_process(df, "session_id", tick_size=0.25))
    with pytest.warns(DeprecationWarning, match="session_column='session_id'"):
        old = vd.from_bars(ddf, tick_size=0.25, session="session_id")
    pd.testing.assert_frame_equal(compute(client, old), by_col)
    with pytest.warns(DeprecationWarning, match="sessions= is deprecated"):
        old = vd.from_trades(dd.from_pandas(df.rename(columns={"close": "price"}), npartitions=2,
                                            sort=False), tick_size=0.25, sessions="globex")
    with pytest.raises(ValueError, match="not both"), pytest.warns(DeprecationWarning):
        vd.from_bars(ddf, tick_size=0.25, session="globex", sessions="daily")
    with pytest.raises(TypeError, match="session must be"):
        vd.from_bars(ddf, tick_size=0.25, session=3)


@_deps.needs("pandas_market_calendars")  # the default session rule: CME Globex
def test_23_1_dask_label_close_and_interval(client):
    """Close-stamped bars with label='close', interval='1min' give the open-stamped result."""
    df = bars(3, 1380, seed=8)
    closed = df.assign(timestamp=df.timestamp + pd.Timedelta(minutes=1))
    exp = compute(client, vd.from_bars(dd.from_pandas(df, npartitions=4, sort=False), tick_size=0.25))
    ddf = dd.from_pandas(closed, npartitions=4, sort=False)
    got = compute(client, vd.from_bars(ddf, tick_size=0.25, label="close", interval="1min"))
    pd.testing.assert_frame_equal(got, exp)
    got = compute(client, vd.from_bars(ddf, tick_size=0.25, label="close", interval=60))
    pd.testing.assert_frame_equal(got, exp)
    # read as opens, the close stamps move the last bar of each session past 16:00 CT (dropped)
    shifted = compute(client, vd.from_bars(ddf, tick_size=0.25))
    assert (shifted["count"].to_numpy() != exp["count"].to_numpy()).any()
    with pytest.raises(ValueError, match="needs interval="):
        vd.from_bars(ddf, tick_size=0.25, label="close")
    with pytest.raises(ValueError, match="label"):
        vd.from_bars(ddf, tick_size=0.25, label="mid", interval=60)
    with pytest.raises(ValueError, match="interval"):
        vd.from_bars(ddf, tick_size=0.25, label="close", interval="soon")
