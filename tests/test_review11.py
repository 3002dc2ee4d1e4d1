"""The review of the tenth stop's merge (dask11): each test failed on main before its fix.

Contract: ISO date strings with a time of day finer than a microsecond are refused, not read as
midnight; vpoc.dask says its warnings each compute and names the user's frame row and the session's place.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import vpoc
import _deps

TICK = 0.25


def _labels(ids):
    p = 4000 + np.arange(len(ids)) * TICK
    return np.asarray(vpoc.from_trades(p, np.ones(len(ids)), session_ids=ids, tick_size=TICK).session_labels).tolist()


@pytest.mark.parametrize("text", ["2024-03-08T00:00:00.0000001", "2024-03-08 00:00:00.000000001",
                                  "2024-03-08T00:00:00.1234567"])
def test_iso_date_strings_with_a_sub_microsecond_time_of_day_are_refused(text):
    ids = ["2024-03-07"] * 3 + [text] * 3
    with pytest.raises(vpoc.InputError) as e:
        _labels(ids)
    assert str(e.value).startswith(f"session_ids[3] = {text} has a time of day"), str(e.value)
    assert (e.value.argument, e.value.index) == ("session_ids", 3)
    # a fraction that is zero past the microseconds is still midnight: a date
    assert _labels(["2024-03-08T00:00:00.000000000"] * 3 + ["2024-03-11 00:00:00.0000000"] * 3) == [20240308, 20240311]


def _frame(n_sessions=3, minutes=None, seed=None):
    b = vpoc.synth.es_bars(n_sessions) if minutes is None else vpoc.synth.es_bars(n_sessions, minutes, seed=seed)
    return b.to_pandas().reset_index(drop=True)


def _plain(df, **kw):
    return vpoc.from_bars(df["high"].to_numpy(), df["low"].to_numpy(), df["close"].to_numpy(), df["volume"].to_numpy(),
                          session_ids=df["session_id"].to_numpy(), tick_size=TICK, **kw)


@_deps.needs("pandas", "dask.dataframe")
def test_dask_errors_name_the_frame_row_and_the_sessions_place():
    import dask.dataframe as dd
    import vpoc.dask

    df = _frame(3, 50, seed=1)
    row = int(df.index[df["session_id"] == df["session_id"].max()][10])
    df.loc[row, "high"] += 500.0
    with pytest.raises(vpoc.InputError) as plain:
        _plain(df, max_rows=1000)
    with pytest.raises(vpoc.InputError) as e:
        vpoc.dask.from_bars(dd.from_pandas(df, npartitions=3), tick_size=TICK, session_column="session_id",
                            max_rows=1000).compute()
    assert (e.value.index, e.value.session) == (plain.value.index, plain.value.session) == (row, 2)
    assert str(e.value) == str(plain.value)
    assert f"session {df['session_id'].max()} spans " in str(e.value) and f"from bar {row} on" in str(e.value)


@_deps.needs("pandas", "dask.dataframe")
def test_dask_errors_name_the_frame_row_with_a_session_rule():
    import dask.dataframe as dd
    import vpoc.dask

    df = _frame(3)  # rth drops the overnight bars: the rows the engine sees are not the frame's
    kept = np.asarray(vpoc.sessions.rth(np.asarray(vpoc.synth.es_bars(3).timestamp)).index)
    row = int(kept[-30])
    df.loc[row, "high"] += 500.0
    with pytest.raises(vpoc.InputError) as plain:
        vpoc.from_bars(df, session="rth", tick_size=TICK, max_rows=1000)
    with pytest.raises(vpoc.InputError) as e:
        vpoc.dask.from_bars(dd.from_pandas(df, npartitions=4), session="rth", tick_size=TICK, max_rows=1000).compute()
    assert (e.value.index, e.value.session) == (plain.value.index, plain.value.session) == (row, 2)
    assert str(e.value) == str(plain.value)


def _off_grid_frame():
    df = _frame(3)
    rows = []
    for lab in df["session_id"].unique():
        i = int(df.index[df["session_id"] == lab][5])
        df.loc[i, "high"] += 0.01
        rows.append(i)
    return df, rows


@_deps.needs("pandas", "dask.dataframe")
def test_dask_says_the_off_grid_rounding_each_compute_naming_the_frame_rows():
    import dask.dataframe as dd
    import vpoc.dask

    df, rows = _off_grid_frame()
    q = vpoc.dask.from_bars(dd.from_pandas(df, npartitions=3), tick_size=TICK, session_column="session_id")
    said = []
    for _ in range(2):  # the same collection computed twice: said each time
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = q.compute()
        said.append(sorted(str(x.message) for x in w if "not on its grid" in str(x.message)))
        assert all(x.filename == __file__ for x in w)
    assert said[0] == said[1] and said[0], said
    # each names the sessions it counts (the rows of the whole frame) and an example of the frame's rows
    assert sum(int(re.search(r": (\d+) of \d+ prices", m).group(1)) for m in said[0]) == len(rows) == 3
    examples = sorted(int(re.search(r"e\.g\. high\[(\d+)\]", m).group(1)) for m in said[0])
    assert set(examples) <= set(rows) and examples[0] == rows[0], (examples, rows)
    for m in said[0]:
        a, b = map(int, re.search(r"\(rows (\d+) to (\d+) of ddf\)", m).groups())
        assert m.startswith("vpoc.dask, session") and a <= int(re.search(r"high\[(\d+)\]", m).group(1)) <= b


@_deps.needs("pandas", "dask.dataframe")
def test_dask_says_a_partitions_warnings_when_it_then_raises():
    import dask.dataframe as dd
    import vpoc.dask

    df, rows = _off_grid_frame()
    df["volume"] = df["volume"] + 0.5  # va_target="decimal" refuses fractional volumes after the engine call
    with pytest.raises(ValueError) as plain, pytest.warns(UserWarning, match="not on its grid") as w_plain:
        _plain(df, va_target="decimal", distribute="close")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(ValueError) as e:
            vpoc.dask.from_bars(dd.from_pandas(df, npartitions=1), tick_size=TICK, session_column="session_id",
                                va_target="decimal", distribute="close").compute()
    assert str(e.value) == str(plain.value)
    grid = [str(x.message) for x in w if "not on its grid" in str(x.message)]
    assert len(grid) == 1 and f"e.g. high[{rows[0]}]" in grid[0], grid
    assert len(w_plain) >= 1
