"""Where vpoc's warnings point (stack): each one names the user's line, through every public entry point.

Contract: a warning's filename is this test file (the caller's), whether its code is reached from
vpoc.from_bars / from_trades, vpoc.io.read_bars / read_trades (a path, a list or a frame), vpoc.io.inspect,
vpoc.io.read_contracts or vpoc.dask.from_bars / from_trades.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import _deps

pd = pytest.importorskip("pandas")

import vpoc  # noqa: E402
import vpoc.io as vio  # noqa: E402

HERE = __file__


@contextlib.contextmanager
def _here(category, match):
    """Within it, the vpoc call (made in the test function itself: no frame of this file between it
    and vpoc, so a stacklevel one too high points into pytest) issues a ``category`` warning whose
    message has ``match``, and each such warning's filename is this file."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        yield
    hits = [(w.filename, str(w.message)) for w in got if issubclass(w.category, category) and match in str(w.message)]
    assert hits, f"no {category.__name__} matching {match!r}: {[str(w.message) for w in got]}"
    for filename, message in hits:
        assert filename == HERE, f"{category.__name__} points at {filename}, not the caller: {message[:80]}"


def _bars_frame(n=300):
    ts = pd.date_range("2024-03-04 15:00", periods=n, freq="1min", tz="UTC")
    c = 5000 + np.cumsum(np.random.default_rng(0).integers(-2, 3, n)) * 0.25
    return pd.DataFrame({"timestamp": ts, "open": c, "high": c + 0.5, "low": c - 0.5, "close": c,
                         "volume": 10.0})


# vpoc/_frames.py: the bar interval taken for label='close', the Globex sessions built by default


@_deps.needs("pandas_market_calendars")  # the default calendar
def test_from_bars_close_label_interval_points_at_caller():
    df = _bars_frame()
    with _here(vpoc.GuessedDefaultWarning, "label='close' without interval="):
        vpoc.from_bars(df, tick_size=0.25, label="close", session="globex")


@_deps.needs("pandas_market_calendars")  # the default calendar
def test_from_bars_arrays_close_label_interval_points_at_caller():
    df = _bars_frame()
    cols = [df[k].to_numpy() for k in ("high", "low", "close", "volume")]
    with _here(vpoc.GuessedDefaultWarning, "label='close' without interval="):
        vpoc.from_bars(*cols, timestamp=df["timestamp"], tick_size=0.25, label="close", session="globex")
    with _here(vpoc.GuessedDefaultWarning, "from_bars: no sessions"):
        vpoc.from_bars(*cols, timestamp=df["timestamp"], tick_size=0.25)


@_deps.needs("pandas_market_calendars")  # the default calendar
def test_default_globex_sessions_point_at_caller():
    df = _bars_frame()
    bars = vio.read_bars(df)
    trades = pd.DataFrame({"timestamp": df["timestamp"], "price": df["close"], "volume": 1.0})
    with _here(vpoc.GuessedDefaultWarning, "from_bars: no sessions"):
        vpoc.from_bars(df, tick_size=0.25)
    with _here(vpoc.GuessedDefaultWarning, "from_bars: no sessions"):
        vpoc.from_bars(bars, tick_size=0.25)
    with _here(vpoc.GuessedDefaultWarning, "from_trades: no sessions"):
        vpoc.from_trades(trades, tick_size=0.25)


# vpoc/io/_read.py: the bar interval inferred for label='close' (_opens), through every reader that reaches it

INFERRED = "bars are stamped at their close; the bar interval was inferred"


def test_close_label_interval_read_bars(tmp_path):
    df = _bars_frame()
    path = tmp_path / "ESH4.csv"
    df.to_csv(path, index=False)
    with _here(vpoc.GuessedDefaultWarning, INFERRED):
        vio.read_bars(df, label="close")
    with _here(vpoc.GuessedDefaultWarning, INFERRED):
        vio.read_bars(str(path), label="close")
    with _here(vpoc.GuessedDefaultWarning, INFERRED):
        vio.read_bars([str(path)], label="close")


def test_close_label_interval_read_contracts(tmp_path):
    pytest.importorskip("pandas_market_calendars")
    path = tmp_path / "ESH4.csv"
    _bars_frame().to_csv(path, index=False)
    with _here(vpoc.GuessedDefaultWarning, INFERRED):
        vio.read_contracts([str(path)], label="close")
    with _here(vpoc.GuessedDefaultWarning, INFERRED):
        vio.read_contracts({"ESH4": _bars_frame()}, label="close")


# vpoc/io/_text.py: an unterminated last line left out


def _cut_file(tmp_path, df, name):
    path = tmp_path / name
    path.write_text(df.to_csv(index=False).rstrip("\n"))
    return str(path)


CUT = "left out the last line"


def test_unterminated_bars_line_read_bars(tmp_path):
    path = _cut_file(tmp_path, _bars_frame(), "ESH4.csv")
    with _here(vpoc.DroppedRowsWarning, CUT):
        vio.read_bars(path)


def test_unterminated_bars_line_read_bars_list(tmp_path):
    path = _cut_file(tmp_path, _bars_frame(), "ESH4.csv")
    with _here(vpoc.DroppedRowsWarning, CUT):
        vio.read_bars([path])


def test_unterminated_bars_line_inspect(tmp_path):
    path = _cut_file(tmp_path, _bars_frame(), "ESH4.csv")
    with _here(vpoc.DroppedRowsWarning, CUT):
        vio.inspect(path)


def test_unterminated_bars_line_read_contracts(tmp_path):
    pytest.importorskip("pandas_market_calendars")
    path = _cut_file(tmp_path, _bars_frame(), "ESH4.csv")
    with _here(vpoc.DroppedRowsWarning, CUT):
        vio.read_contracts([path])


def _trades_file(tmp_path):
    df = _bars_frame()
    return _cut_file(tmp_path, pd.DataFrame({"timestamp": df["timestamp"], "price": df["close"], "volume": 1.0}),
                     "trades.csv")


def test_unterminated_trades_line_read_trades(tmp_path):
    path = _trades_file(tmp_path)
    with _here(vpoc.DroppedRowsWarning, CUT):
        vio.read_trades(path)
    with _here(vpoc.DroppedRowsWarning, CUT):
        vio.read_trades([path])


def test_unterminated_trades_line_inspect(tmp_path):
    path = _trades_file(tmp_path)
    with _here(vpoc.DroppedRowsWarning, CUT):
        vio.inspect(path)


# vpoc/io/contracts.py: a contract ending before its roll, no shared trade date, a gap in the chosen one


@pytest.fixture(scope="module")
def base():
    pytest.importorskip("pandas_market_calendars")
    from _user_file import user_bars

    return user_bars(start="2025-02-16", end="2025-03-20", strays=False)


def _frame(d, sel, shift):
    return pd.DataFrame({
        "timestamp": pd.DatetimeIndex(d["open_ns"][sel]).tz_localize("UTC"),
        "open": d["open"][sel] + shift, "high": d["high"][sel] + shift,
        "low": d["low"][sel] + shift, "close": d["close"][sel] + shift,
        "volume": d["volume"][sel].astype(np.int64)})


def test_contract_ends_before_roll_points_at_caller(base):
    td = base["trade_date"]
    frames = {"ESH5": _frame(base, td <= 20250305, 0.0), "ESM5": _frame(base, td >= 20250307, 100.0)}
    with _here(UserWarning, "ends on trade date 20250305"):
        vio.read_contracts(frames, roll="calendar", adjust="spread")
    with _here(UserWarning, "share no trade date"):
        vio.read_contracts(frames, roll="calendar", adjust="spread")


def test_contract_missing_date_points_at_caller(base):
    td = base["trade_date"]
    frames = {"ESH5": _frame(base, td != 20250304, 0.0), "ESM5": _frame(base, td >= 20250303, 100.0)}
    with _here(vpoc.DroppedRowsWarning, "the chosen contract has no rows"):
        vio.read_contracts(frames, roll="calendar")


# vpoc/dask.py: the deprecated session spellings


@pytest.mark.parametrize("kind", ["bars", "trades"])
def test_dask_deprecations_point_at_caller(kind):
    dd = pytest.importorskip("dask.dataframe")
    import vpoc.dask as vd

    df = _bars_frame()
    df["session_id"] = 1
    if kind == "trades":
        df = df.rename(columns={"close": "price"})[["timestamp", "price", "volume", "session_id"]]
    ddf = dd.from_pandas(df, npartitions=2, sort=False)
    fn = vd.from_bars if kind == "bars" else vd.from_trades
    with _here(DeprecationWarning, "sessions= is deprecated"):
        fn(ddf, tick_size=0.25, sessions="daily")
    with _here(DeprecationWarning, "naming a column of labels is deprecated"):
        fn(ddf, tick_size=0.25, session="session_id")
