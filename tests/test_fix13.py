"""Error naming leftovers (fix13): each test failed on main before its fix.

Contract: a too-wide or too-heavy window, a partition's timestamp error in vpoc.dask and the order-flow
path's too-wide session are named as the plain call names them (input row, session label, .index, .session).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import vpoc
import _deps

TICK = 0.25


def _raised(fn, *a, **kw):
    with pytest.raises(vpoc.InputError) as e:
        fn(*a, **kw)
    return e.value


# ---- 1. window_too_wide: .index, .session and the session's label, as session_too_wide -------------

def test_too_wide_window_names_its_session_by_label_with_index_and_session():
    price = np.r_[np.full(5, 100.0), np.full(5, 200.0)]
    kw = dict(session_ids=[20240102] * 5 + [20240103] * 5, tick_size=TICK, developing=True, window=4,
              window_across_sessions=True, max_rows=300)
    e = _raised(vpoc.from_trades, price, np.ones(10), **kw)
    assert str(e) == ("the window of row 5 in session 20240103 (4 rows, reaching back 1 session) spans 401 rows, "
                      "more than max_rows=300; raise max_rows or shorten window")
    assert (e.index, e.session) == (5, 1)
    e = _raised(vpoc.from_bars, price, price, price, np.ones(10), **kw)
    assert str(e).startswith("the window of bar 5 in session 20240103 (4 bars, reaching back 1 session) spans 401")
    assert (e.index, e.session) == (5, 1)


@_deps.needs("pandas_market_calendars")  # the default calendar
def test_too_wide_window_under_a_session_rule_names_the_input_row():
    pytest.importorskip("pandas")
    b = vpoc.synth.es_bars(3)
    df = b.to_pandas()
    sess = vpoc.sessions.rth(np.asarray(b.timestamp))
    kept, off = np.asarray(sess.index), np.asarray(sess.offsets)
    df.iloc[kept[off[2]:], [df.columns.get_loc(c) for c in ("open", "high", "low", "close")]] += 500.0
    labels = vpoc.from_bars(df, session="rth", tick_size=TICK).session_labels
    e = _raised(vpoc.from_bars, df, session="rth", tick_size=TICK, developing=True, window=3,
                window_across_sessions=True, max_rows=1000)
    row = int(kept[off[2]])  # the first kept bar of the last session: its window reaches back
    assert row != off[2]
    assert str(e).startswith(f"the window of bar {row} in session {labels[2]} (3 bars, reaching back 1 session) "
                             "spans "), str(e)
    assert (e.index, e.session) == (row, 2)


def test_too_heavy_window_names_its_row_and_session():
    big = float(2**52 + 2**51)
    kw = dict(session_ids=[20240102, 20240103], tick_size=TICK, developing=True, window=2,
              window_across_sessions=True)
    e = _raised(vpoc.from_trades, np.array([100.0, 100.25]), [big, big], **kw)
    assert str(e).startswith("volume of the window of row 1 in session 20240103 sums past 2**53"), str(e)
    assert (e.index, e.session) == (1, 1)
    e = _raised(vpoc.from_bars, [10.0, 10.5], [9.0, 9.5], [9.5, 10.0], [big, big], bins=4,
                **{**kw, "tick_size": 0.01})
    assert str(e).startswith("volume of the window of bar 1 in session 20240103 sums past 2**53"), str(e)
    assert (e.index, e.session) == (1, 1)


# ---- 4. the order-flow (side) path's too-wide session, as the plain call's ------------------------

@pytest.mark.parametrize("distribute", ["uniform", "legacy"])
def test_side_too_wide_session_is_the_plain_calls_error(distribute):
    from vpoc import _core

    h = np.array([100.0, 101.0, 130.0, 131.0, 160.0, 161.0])
    low, close, v = h - 1, h - 0.5, np.ones(6)
    off = np.array([0, 2, 8], dtype=np.int64)
    h, low, close, v = (np.r_[10.0, 10.0, x] for x in (h, low, close, v))
    plain = _raised(vpoc.from_bars, h, low, close, v, offsets=off, tick_size=TICK, max_rows=150,
                    distribute=distribute)
    opts = _core.Options(tick_size=TICK, max_rows=150, distribute=distribute)
    side = _raised(_core.developing_delta_poc, h, low, close, None, v, v / 2, v / 2, off, opts)
    assert str(side) == str(plain) and "session 1 spans 249 rows" in str(plain)  # the whole session's span
    assert (side.index, side.session) == (plain.index, plain.session) == (6, 1)
    # a bad bar after the crossing is the session's error, as in the plain call
    low[7] = h[7] + 1
    plain = _raised(vpoc.from_bars, h, low, close, v, offsets=off, tick_size=TICK, max_rows=150,
                    distribute=distribute)
    side = _raised(_core.developing_delta_poc, h, low, close, None, v, v / 2, v / 2, off, opts)
    assert str(side) == str(plain) and (side.argument, side.index) == ("high", 7)


# ---- 2. vpoc.dask: an error while a partition's timestamps are converted names the frame's row ----

def _bars_frame():
    return vpoc.synth.es_bars(3).to_pandas().reset_index(drop=True)


@_deps.needs("pandas", "dask.dataframe")
@pytest.mark.parametrize("case", ["ms_out_of_range", "nat", "close_minus_interval", "unsorted"])
def test_dask_timestamp_errors_name_the_frame_row(case):
    import dask.dataframe as dd
    import pandas as pd
    import vpoc.dask

    df, row, kw = _bars_frame(), 1500, {}
    assert row > len(df) // 3  # not in the first partition: its row within the partition differs
    if case == "ms_out_of_range":
        df["ts"] = df["timestamp"].astype("int64") // 10**6
        df.loc[row, "ts"] = 2**62
        df = df.drop(columns=["timestamp"])
        kw, name = dict(timestamp="ts", time_unit="ms"), "timestamp column 'ts'"
    elif case == "nat":
        df.loc[row, "timestamp"] = pd.NaT
        name = "timestamp column 'timestamp'"
    elif case == "close_minus_interval":
        df["timestamp"] = df["timestamp"].where(df.index != row, pd.Timestamp("1677-09-21 00:12:44", tz="UTC"))
        kw, name = dict(label="close", interval="1min"), "timestamp column 'timestamp'"
    else:
        df.loc[row, "timestamp"] = df.loc[row - 100, "timestamp"]
        name = "ts"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(vpoc.InputError) as e:
            vpoc.dask.from_bars(dd.from_pandas(df, npartitions=3), tick_size=TICK, **kw).compute()
    assert (e.value.argument, e.value.index) == (name, row)
    assert str(e.value).startswith(f"{name}[{row}]") or f"ts[{row}] = " in str(e.value), str(e.value)
    # the plain call on the frame names the same row
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=rf"\b(row |\[){row}\b"):
            if "ts" in df:
                vpoc.from_bars(df, columns={"timestamp": "ts"}, tick_size=TICK, time_unit="ms")
            else:
                vpoc.from_bars(df, tick_size=TICK, **kw)
