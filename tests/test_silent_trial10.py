"""The ninth new-user trial's leftovers that the tenth stop fixed (each test failed before its fix).

Contract: a session too wide for max_rows is named by its label and the input row that takes it past
(with session= leaving rows out, the caller's row, as the other row errors); vpoc.dask says a coarse price
grid once a compute, at the user's line; ISO date strings as session_ids are trade dates, other strings refused.
"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import vpoc
from vpoc._errors import input_error, readdressed
import _deps

TICK = 0.25


def _wide_trades():
    """Synthetic ES trades of 3 sessions (20190102..20190104) and the rth Sessions of them."""
    t = vpoc.synth.es_trades(20000, n_sessions=3)
    return t, t.to_pandas()


@_deps.needs("pandas", "pandas_market_calendars")
def test_too_wide_with_session_names_the_input_row_and_the_trade_date():
    t, df = _wide_trades()
    kept = np.asarray(vpoc.sessions.rth(np.asarray(t.timestamp)).index)
    with pytest.raises(vpoc.InputError) as e:
        vpoc.from_trades(df, session="rth", tick_size=TICK, max_rows=20)
    row = e.value.index
    assert row is not None and row in kept and row >= kept[0] > 0, (row, kept[:3])
    msg = str(e.value)
    assert msg.startswith("session 20190102 spans "), msg
    assert f"from row {row} on" in msg, msg
    assert e.value.session == 0
    # the row named is the first input row that takes the session past max_rows
    p = np.asarray(t.price)[kept[kept <= row]]
    ticks = np.rint(p / TICK).astype(np.int64)
    assert ticks.max() - ticks.min() >= 20
    p = p[:-1]
    ticks = np.rint(p / TICK).astype(np.int64)
    assert ticks.max() - ticks.min() < 20


@_deps.needs("pandas", "pandas_market_calendars")
def test_too_wide_bars_with_session_name_the_input_bar():
    b = vpoc.synth.es_bars(n_sessions=3)
    df = b.to_pandas()
    kept = np.asarray(vpoc.sessions.rth(np.asarray(b.timestamp)).index)
    with pytest.raises(vpoc.InputError) as e:
        vpoc.from_bars(df, session="rth", tick_size=TICK, max_rows=20)
    bar = e.value.index
    assert bar in kept and bar >= kept[0] > 0
    assert str(e.value).startswith("session 20190102 spans ") and f"from bar {bar} on" in str(e.value)


def test_too_wide_with_session_ids_names_the_label():
    p = np.r_[np.full(10, 4000.0), 4000.0 + np.arange(10) * TICK * 10]
    ids = np.repeat([20240102, 20240103], 10)
    with pytest.raises(vpoc.InputError) as e:
        vpoc.from_trades(p, np.ones(20), session_ids=ids, tick_size=TICK, max_rows=20)
    assert str(e.value).startswith("session 20240103 spans 91 rows, more than max_rows=20 from row 12 on")
    assert (e.value.index, e.value.session) == (12, 1)
    with pytest.raises(vpoc.InputError) as e:  # offsets: no labels, the session's position
        vpoc.from_trades(p, np.ones(20), offsets=[0, 10, 20], tick_size=TICK, max_rows=20)
    assert str(e.value).startswith("session 1 spans 91 rows")
    with pytest.raises(vpoc.InputError) as e:  # through the general path (a preset) too
        vpoc.from_trades(p, np.ones(20), session_ids=ids, tick_size=TICK, max_rows=20, device="auto")
    assert str(e.value).startswith("session 20240103 spans ")


def test_readdressed_maps_the_row_words_whole():
    e = input_error("session 0 spans 9 rows, more than max_rows=5 from row 3 on (not row 35, bar 3x)", None, 3)
    e.session = 0
    r = readdressed(e, 40, ("price",), lambda name, row: f"{name}[{row}]")
    assert str(r) == "session 0 spans 9 rows, more than max_rows=5 from row 40 on (not row 35, bar 3x)"
    assert (r.index, r.session) == (40, 0)


def test_cli_too_wide_names_the_session_label(tmp_path):
    pytest.importorskip("pandas")
    b = vpoc.synth.es_bars(3, 50, seed=1)
    df = b.to_pandas()
    last = int(df.index[df["session_id"] == df["session_id"].max()][10])
    df.loc[last, "high"] = df.loc[last, "high"] + 500.0
    # the label of the daily session (America/Chicago dates) holding that bar: not its globex session_id
    daily = vpoc.sessions.daily(np.asarray(b.timestamp), tz="America/Chicago")
    assert daily.index is None
    label = int(np.asarray(daily.labels)[np.searchsorted(np.asarray(daily.offsets), last, side="right") - 1])
    assert label != int(df.loc[last, "session_id"])
    path = tmp_path / "bars.csv"
    df[["timestamp", "open", "high", "low", "close", "volume"]].to_csv(path, index=False)
    out = subprocess.run([sys.executable, "-m", "vpoc", "profile", str(path), "--tick-size", "0.25",
                          "--max-rows", "1000", "--session", "daily", "--tz", "America/Chicago"],
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 2, out.stderr
    # the session's label (a daily session's date in America/Chicago), not its place in the chunk
    assert re.search(rf": session {label} spans \d+ rows, more than --max-rows 1000 from bar {last} on", out.stderr), \
        out.stderr


def test_dask_says_a_coarse_grid_once_at_the_users_line():
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    import vpoc.dask

    df = vpoc.synth.es_bars(n_sessions=3).to_pandas()
    for c in ("open", "high", "low", "close"):
        df[c] = df[c] * 100  # prices in cents, tick in points: 100 ticks between neighbouring prices
    ddf = dd.from_pandas(df, npartitions=3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        q = vpoc.dask.from_bars(ddf, tick_size=TICK, session_column="session_id")
        out = q.compute()
    coarse = [x for x in w if issubclass(x.category, vpoc.CoarseGridWarning)]
    assert len(out) == 3
    assert len(coarse) == 1, [(x.filename, str(x.message)[:40]) for x in coarse]
    assert coarse[0].filename == __file__
    assert "a grid 100 times coarser than tick_size=0.25" in str(coarse[0].message)
    assert "tick_size=25.0" in str(coarse[0].message)
    # the same collection computed again says it again (once)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        again = q.compute()
    assert [str(x.message) for x in w if issubclass(x.category, vpoc.CoarseGridWarning)] == [str(coarse[0].message)]
    pd.testing.assert_frame_equal(again, out)


def _labels(ids):
    p = 4000 + np.arange(6) * TICK
    return np.asarray(vpoc.from_trades(p, np.ones(6), session_ids=ids, tick_size=TICK).to_pandas().index).tolist()


@_deps.needs("pandas")
@pytest.mark.parametrize("make", [list, tuple, np.array, lambda d: np.array(d, dtype="S")])
def test_iso_date_strings_as_session_ids_are_yyyymmdd_labels(make):
    days = ["2024-03-08"] * 3 + ["2024-03-11"] * 3
    assert _labels(make(days)) == [20240308, 20240311]


def test_pandas_str_series_as_session_ids():
    pd = pytest.importorskip("pandas")
    days = ["2024-03-08"] * 3 + ["2024-03-11"] * 3
    assert _labels(pd.Series(days)) == [20240308, 20240311]
    assert _labels(pd.Series(days, dtype=object)) == [20240308, 20240311]
    with pytest.raises(ValueError, match=r"session_ids\[5\] = (nan|None) is not an ISO date"):  # pandas 3 / 2
        _labels(pd.Series(days[:5] + [None]))


@pytest.mark.parametrize("ids, i, shown", [
    (["20240308"] * 6, 0, "'20240308'"),
    (["ESH4"] * 3 + ["ESM4"] * 3, 0, "'ESH4'"),
    (["2024-03-08"] * 5 + ["2024-02-30"], 5, "'2024-02-30'"),
    (["2024-03-08"] * 5 + [None], 5, "None"),
    (["03/08/2024"] * 6, 0, "'03/08/2024'"),
])
def test_other_strings_as_session_ids_are_refused_naming_the_row(ids, i, shown):
    with pytest.raises(vpoc.InputError) as e:
        _labels(ids)
    assert str(e.value).startswith(f"session_ids[{i}] = {shown} is not an ISO date (YYYY-MM-DD)"), str(e.value)
    assert "pandas.factorize(session_ids)[0]" in str(e.value)
    assert (e.value.argument, e.value.index) == ("session_ids", i)


def test_iso_date_strings_in_session_features():
    pytest.importorskip("pandas")
    b = vpoc.synth.es_bars(n_sessions=2)
    days = np.array([f"{x // 10000:04d}-{x // 100 % 100:02d}-{x % 100:02d}" for x in np.asarray(b.session_id)])
    t = vpoc.session_features(np.asarray(b.high), np.asarray(b.low), np.asarray(b.close), np.asarray(b.volume),
                              session_ids=list(days), tick_size=TICK)
    ref = vpoc.session_features(np.asarray(b.high), np.asarray(b.low), np.asarray(b.close), np.asarray(b.volume),
                                session_ids=days.astype("datetime64[D]"), tick_size=TICK)
    a, r = t.to_pandas(), ref.to_pandas()
    assert len(a) == len(r) == 2
    assert a.equals(r)


@_deps.needs("pandas")
def test_the_session_index_is_the_same_whatever_form_the_dates_came_in():
    """ISO strings, date objects, datetime64 of any unit: the same dates give the same session index
    (one unit), so tables made from them compare equal (pandas 2 and 3)."""
    import datetime as dt

    b = vpoc.synth.es_bars(n_sessions=2)
    ymd = np.asarray(b.session_id)
    days = np.array([f"{x // 10000:04d}-{x // 100 % 100:02d}-{x % 100:02d}" for x in ymd])
    forms = [list(days), [dt.date.fromisoformat(d) for d in days], days.astype("datetime64[D]"),
             days.astype("datetime64[ns]"), days.astype("datetime64[s]")]
    idx = [vpoc.session_features(np.asarray(b.high), np.asarray(b.low), np.asarray(b.close), np.asarray(b.volume),
                                 session_ids=f, tick_size=TICK).to_pandas().index for f in forms]
    for i in idx[1:]:
        assert i.dtype == idx[0].dtype and i.equals(idx[0])
