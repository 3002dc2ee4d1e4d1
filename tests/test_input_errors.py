"""Re-addressed engine errors keep their structure: vpoc.InputError's .argument, .index, .reason.

Contract: Live, compat and the CLI say an engine error of the caller's row (and frame column)
from the error's fields, not from its text; the wording is the engine's (issue 24, point 3).
"""

from __future__ import annotations

import numpy as np
import pytest

import _deps
import vpoc
from vpoc._errors import input_error, readdressed, row_of

pd = _deps.module("pandas")

MIN = 60 * 10**9
DAY = 86_400 * 10**9
T0 = int(np.datetime64("2024-03-05T15:00", "ns").astype(np.int64))


def _bars(n):
    return (np.full(n, 101.0), np.full(n, 99.0), np.full(n, 100.0), np.full(n, 5.0))


# --------------------------------------------------------------------------- the helpers


def test_24_3_input_error_carries_its_fields():
    e = input_error("close[2]=7 is outside [low[2], high[2]] = [1, 2]", "close", 2,
                    "is outside [low[2], high[2]] = [1, 2]")
    assert isinstance(e, vpoc.InputError) and isinstance(e, ValueError)
    assert (e.argument, e.index, e.reason) == ("close", 2, "is outside [low[2], high[2]] = [1, 2]")
    bare = input_error("tick_size must be > 0")
    assert (bare.argument, bare.index, bare.reason) == (None, None, "tick_size must be > 0")
    assert row_of(e) == 2 and row_of(bare) is None and row_of(ValueError("close[2] is bad")) is None


def test_24_3_readdressed_uses_the_fields_not_the_text():
    # the engine's own error, re-addressed: every name[index] of the row, lead and reason alike
    with pytest.raises(vpoc.InputError) as info:
        vpoc.from_bars(np.array([1.0, 2.0]), np.array([1.0, 1.0]), np.array([1.0, 3.0]), np.ones(2),
                       tick_size=0.25)
    e = info.value
    assert (e.argument, e.index) == ("close", 1)
    r = readdressed(e, 9, ("high", "low", "close"), lambda name, row: f"{name}[{row}]")
    assert str(r) == "close[9]=3 is outside [low[9], high[9]] = [1, 2]"
    assert (r.argument, r.index, r.reason) == ("close", 9, "is outside [low[9], high[9]] = [1, 2]")
    # only the error's own row is re-addressed: another index in the text is left as it is
    odd = input_error("high[3] < low[3] (see high[4])", "high", 3, "< low[3] (see high[4])")
    r = readdressed(odd, 0, ("high", "low"), lambda name, row: f"{name.upper()} row {row}")
    assert str(r) == "HIGH row 0 < LOW row 0 (see high[4])" and r.index == 0
    # a replacement is never replaced again (a label may look like another name[i])
    r = readdressed(odd, 3, ("high", "low"), lambda name, row: "low[3]" if name == "high" else "L")
    assert str(r) == "low[3] < L (see high[4])"
    with pytest.raises(ValueError, match="names an input row"):
        readdressed(input_error("no row"), 1, ("high",), lambda name, row: name)


# --------------------------------------------------------------------------- vpoc.Live


@_deps.needs("pandas")
def test_24_3_live_error_names_the_row_of_the_update():
    # rows 2..4 open the next day's session: the engine sees them as rows 0..2 of a new session,
    # the error names their positions in the update (3), with the engine's wording
    live = vpoc.Live(tick_size=0.25, session="daily")
    ts = np.array([T0, T0 + MIN, T0 + DAY, T0 + DAY + MIN, T0 + DAY + 2 * MIN], dtype=np.int64)
    h, l, c, v = _bars(5)
    c[3] = 103.0
    with pytest.raises(vpoc.InputError) as info:
        live.update(h, l, c, v, timestamp=ts)
    e = info.value
    assert str(e) == "close[3]=103 is outside [low[3], high[3]] = [99, 101]"
    assert (e.argument, e.index, e.reason) == ("close", 3, "is outside [low[3], high[3]] = [99, 101]")
    c[3] = 100.0
    l[4] = 102.0
    with pytest.raises(vpoc.InputError) as info:
        live.update(h, l, c, v, timestamp=ts)
    e = info.value
    assert str(e) == "high[4] < low[4] (101 < 102)"
    assert (e.argument, e.index, e.reason) == ("high", 4, "< low[4] (101 < 102)")
    assert live.n_rows == 0  # refused whole


@_deps.needs("pandas")
def test_24_3_live_trades_error_in_the_next_session():
    # the update's first trade joins the current session, the next two open the next day's: the
    # bad trade is the engine's row 1 of the new session and position 2 of the update
    live = vpoc.Live(tick_size=0.25, kind="trades", session="daily")
    live.update(100.0, 1.0, timestamp=T0)
    price = np.array([100.0, 100.25, np.nan])
    ts = np.array([T0 + MIN, T0 + DAY, T0 + DAY + MIN], dtype=np.int64)
    with pytest.raises(vpoc.InputError) as info:
        live.update(price, np.ones(3), timestamp=ts)
    e = info.value
    assert str(e) == "price[2] is not finite (nan)"
    assert (e.argument, e.index, e.reason) == ("price", 2, "is not finite (nan)")


# --------------------------------------------------------------------------- vpoc.compat


def _frame(n=6):
    h, l, c, v = _bars(n)
    return pd.DataFrame({"open": c.copy(), "high": h, "low": l, "close": c, "volume": v.astype(np.int64)})


@_deps.needs("pandas")
def test_24_3_compat_error_names_the_frame_row():
    from vpoc import compat

    df = _frame()
    df.loc[4, "high"] = np.inf  # key 2's third row: the engine's row 5 (sessions sorted by key)
    with pytest.raises(vpoc.InputError) as info:
        compat.analyze_sessions(df, [2, 1, 2, 1, 2, 1])
    e = info.value
    assert str(e) == "df['high'] row 4 is not finite (inf)"
    assert (e.argument, e.index, e.reason) == ("df['high']", 4, "is not finite (inf)")


@_deps.needs("pandas")
def test_24_3_compat_error_renames_the_other_column_of_the_row():
    from vpoc import compat

    df = _frame().rename(columns={"high": "High", "low": "Low"})
    df.loc[3, "Low"] = 102.0  # high < low: the engine's row 1 of key 1
    with pytest.raises(vpoc.InputError) as info:
        compat.analyze_sessions(df, [2, 1, 2, 1, 2, 1])
    e = info.value
    assert str(e) == "df['High'] row 3 < df['Low'] row 3 (101 < 102)"
    assert (e.argument, e.index, e.reason) == ("df['High']", 3, "< df['Low'] row 3 (101 < 102)")
    df = _frame()
    df.loc[2, "volume"] = -5
    with pytest.raises(vpoc.InputError) as info:
        compat.VolumeProfileAnalyzer().analyze_session(df)
    e = info.value
    assert (e.argument, e.index) == ("session_df['volume']", 2)
    assert str(e) == "session_df['volume'] row 2 " + e.reason


# --------------------------------------------------------------------------- the CLI


def _csv(path, ts, h, l, c, v):
    stamp = pd.to_datetime(ts, utc=True).strftime("%Y-%m-%d %H:%M:%S")
    pd.DataFrame({"timestamp": stamp, "open": c, "high": h, "low": l, "close": c, "volume": v}).to_csv(path, index=False)
    return str(path)


@_deps.needs("pandas")
def test_24_3_cli_error_names_the_file_and_time_of_the_engine_row(tmp_path):
    from vpoc import cli

    # a.csv's last session is held back until b.csv shows whether it continues, so the engine
    # sees a.csv's 3 rows then b.csv's: b.csv's third row is the engine's row 5
    h, l, c, v = _bars(3)
    a = _csv(tmp_path / "a.csv", T0 + np.arange(3) * MIN, h, l, c, v)
    c = c.copy()
    c[2] = 103.0
    b = _csv(tmp_path / "b.csv", T0 + DAY + np.arange(3) * MIN, h, l, c, v)
    with pytest.raises(cli.UsageError) as info:
        cli.main(["--traceback", "profile", a, b, "--tick-size", "0.25", "--session", "daily",
                  "--tz", "UTC"])
    cause = info.value.__cause__
    assert isinstance(cause, vpoc.InputError) and (cause.argument, cause.index) == ("close", 5)
    assert str(info.value) == (f"{b}: row at 2024-03-06 15:02:00 UTC: close[5]=103 is outside "
                               "[low[5], high[5]] = [99, 101]")


@_deps.needs("pandas")
def test_24_3_cli_locate_takes_the_row_from_the_error():
    from vpoc.cli._input import Chunk, Rows, locate

    ts = T0 + np.arange(4, dtype=np.int64) * MIN
    rows = Rows(ts, {"close": np.zeros(4)}, np.array([0, 0, 1, 1], dtype=np.int32))
    chunk = Chunk(rows, np.array([0, 4], dtype=np.int64), np.array([20240305]), 4)
    # the row is the error's .index; its text need not spell it
    e = input_error("close is outside its bar", "close", 2, "is outside its bar")
    assert locate(e, chunk, ["x.csv", "y.csv"]) == "y.csv: row at 2024-03-05 15:02:00 UTC: close is outside its bar"
    # an error without one (check_grid's refusal, made in Python) is still placed by its text
    assert locate(ValueError("e.g. close[1]=1.1"), chunk, ["x.csv", "y.csv"]).startswith(
        "x.csv: row at 2024-03-05 15:01:00 UTC: ")
    assert locate(ValueError("no row"), chunk, ["x.csv", "y.csv"]) == "x.csv, y.csv: no row"


@_deps.needs("pandas_market_calendars")
@_deps.needs("pandas")
def test_24_3_cli_option_error_opens_with_the_flag_of_its_argument(tmp_path):
    from vpoc import cli

    path = _csv(tmp_path / "a.csv", T0 + np.arange(3) * MIN, *_bars(3))
    with pytest.raises(cli.UsageError) as info:
        cli.main(["--traceback", "profile", path, "--tick-size", "-1"])
    assert info.value.__cause__.argument == "tick_size"
    assert str(info.value) == "--tick-size must be a finite number > 0, got -1"
