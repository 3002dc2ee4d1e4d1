"""Engine errors under ``session=`` (a vpoc.sessions object that keeps only some input rows) name the caller's row.

Contract: a bad value in an input row the session keeps raises the engine's error (same type, vpoc.InputError,
same wording and ``.argument``) about that input row: ``volume[5]``, ``.index == 5``, not its position among
the kept rows (``volume[2]``); the plain NumPy reference is the same call on the kept rows passed by hand,
whose error names the kept position, mapped through ``Sessions.index``.
"""

from __future__ import annotations

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
pytest.importorskip("pandas")  # vpoc.sessions builds its clock with pandas
from vpoc import sessions as vs  # noqa: E402
import _deps  # noqa: E402

N = 12
KEPT_FIRST = 3  # 12:00 UTC + 3 h = 09:00 Chicago (CST): rth keeps input rows 3..9
TICK = 0.25


def _sessions():
    ts = np.datetime64("2024-01-02T12:00", "ns") + np.arange(N) * np.timedelta64(1, "h")
    s = vs.rth(ts, calendar=None)
    assert s.n_input == N and s.index is not None and int(s.index[0]) == KEPT_FIRST and s.n_kept < N
    return s


def _trades():
    rng = np.random.default_rng(11)
    return 100.0 + rng.integers(0, 8, N) * TICK, rng.integers(1, 9, N).astype(np.float64)


def _bars():
    rng = np.random.default_rng(12)
    low = 100.0 + rng.integers(0, 8, N) * TICK
    high = low + rng.integers(1, 6, N) * TICK
    close = low.copy()
    opn = high.copy()
    return high, low, close, rng.integers(1, 9, N).astype(np.float64), opn


def _error(call):
    with pytest.raises(ValueError) as info:
        call()
    return info.value


def _check(got, kept_error, row, s):
    """``got`` (the session= call's error) is ``kept_error`` (the same call on the kept rows) said of
    input row ``row``: same type and .argument, .index the input row, every name[kept] renamed."""
    k = int(np.flatnonzero(np.asarray(s.index) == row)[0])  # the row's position among the kept rows
    assert k != row  # else the test proves nothing
    assert type(got) is type(kept_error) and isinstance(got, vpoc.InputError)
    assert got.argument == kept_error.argument and kept_error.index == k and got.index == row
    want = str(kept_error)
    for name in ("price", "volume", "high", "low", "close", "open"):
        want = want.replace(f"{name}[{k}]", f"{name}[{row}]")
    assert str(got) == want
    assert f"[{k}]" not in str(got)


@pytest.mark.parametrize("row", [KEPT_FIRST + 2, 9])
@pytest.mark.parametrize("bad", ["negative", "nan", "inf"])
def test_trade_volume_error_names_the_input_row(row, bad):
    """Fails before the change: the error named volume[2] for input row 5."""
    s = _sessions()
    price, vol = _trades()
    vol[row] = {"negative": -1.0, "nan": np.nan, "inf": np.inf}[bad]
    got = _error(lambda: vpoc.from_trades(price, vol, session=s, tick_size=TICK))
    assert f"volume[{row}]" in str(got)
    kept = _error(lambda: vpoc.from_trades(*s.take(price, vol), offsets=s.offsets, tick_size=TICK))
    _check(got, kept, row, s)


def test_trade_price_errors_name_the_input_row():
    s = _sessions()
    price, vol = _trades()
    price[KEPT_FIRST + 4] = np.nan
    got = _error(lambda: vpoc.from_trades(price, vol, session=s, tick_size=TICK))
    kept = _error(lambda: vpoc.from_trades(*s.take(price, vol), offsets=s.offsets, tick_size=TICK))
    _check(got, kept, KEPT_FIRST + 4, s)
    # the off-grid refusal names its first off-grid price by its input row too
    price, vol = _trades()
    price[KEPT_FIRST + 1] += 0.1
    got = _error(lambda: vpoc.from_trades(price, vol, session=s, tick_size=TICK))
    assert f"price[{KEPT_FIRST + 1}]={float(price[KEPT_FIRST + 1])!r}" in str(got) and "snap=True" in str(got)
    kept = _error(lambda: vpoc.from_trades(*s.take(price, vol), offsets=s.offsets, tick_size=TICK))
    _check(got, kept, KEPT_FIRST + 1, s)


def _plant(bad, row, high, low, close, vol, opn):
    """Makes bar `row` bad in the way `bad` names (in place), for the engine to refuse."""
    if bad == "volume":
        vol[row] = -2.0
    elif bad == "volume_nan":
        vol[row] = np.nan
    elif bad == "high_below_low":
        low[row] = close[row] = high[row] + TICK
    elif bad == "close_outside":
        close[row] = high[row] + TICK  # "close[i]=... is outside [low[i], high[i]]": three names
    elif bad == "open_nan":
        opn[row] = np.nan
    else:
        high[row] = np.inf


@pytest.mark.parametrize("bad", ["volume", "high_below_low", "close_outside", "open_nan", "high_inf"])
def test_bar_errors_name_the_input_row(bad):
    """Every bar column: the engine's message names the input row in each array it cites."""
    s = _sessions()
    high, low, close, vol, opn = _bars()
    row = KEPT_FIRST + 3
    _plant(bad, row, high, low, close, vol, opn)
    kw = dict(tick_size=TICK, distribute="legacy")
    got = _error(lambda: vpoc.from_bars(high, low, close, vol, open=opn, session=s, **kw))
    kept_cols = s.take(high, low, close, vol, opn)
    kept = _error(lambda: vpoc.from_bars(*kept_cols[:4], open=kept_cols[4], offsets=s.offsets, **kw))
    _check(got, kept, row, s)


@_deps.needs("pandas_market_calendars")
def test_session_rule_names_and_frames():
    """session='rth' (a rule applied here) and a DataFrame (its row) the same way (the frame reader
    checks volumes itself: an off-grid price is the engine's error)."""
    pd = pytest.importorskip("pandas")
    ts = np.datetime64("2024-01-02T12:00", "ns") + np.arange(N) * np.timedelta64(1, "h")
    price, vol = _trades()
    price[KEPT_FIRST + 2] += 0.1
    df = pd.DataFrame({"timestamp": ts, "price": price, "volume": vol})
    s = vs.rth(ts, calendar=None)
    for call in (lambda: vpoc.from_trades(price, vol, session=s, tick_size=TICK),
                 lambda: vpoc.from_trades(df, session="rth", tz="UTC", tick_size=TICK),
                 lambda: vpoc.from_trades(df, session=s, tz="UTC", tick_size=TICK)):
        e = _error(call)
        assert isinstance(e, vpoc.InputError) and e.index == KEPT_FIRST + 2 and e.argument == "price"
        assert f"e.g. price[{KEPT_FIRST + 2}]=" in str(e)


def test_kept_rows_given_by_hand_and_errors_about_no_row_are_unchanged():
    """Arrays of the kept rows only (n == s.n_kept) are the caller's rows: positions stay; an error
    about no one row (a bad option) passes as it is."""
    s = _sessions()
    price, vol = (x[: s.n_kept].copy() for x in _trades())
    vol[2] = -1.0
    e = _error(lambda: vpoc.from_trades(price, vol, session=s, tick_size=TICK))
    assert e.index == 2 and str(e).startswith("volume[2] ")
    price, vol = _trades()
    with pytest.raises(ValueError, match="ticks_per_row") as info:
        vpoc.from_trades(price, vol, session=s, tick_size=TICK, ticks_per_row=0)
    assert getattr(info.value, "index", None) is None


def test_good_input_is_unchanged():
    s = _sessions()
    price, vol = _trades()
    got = vpoc.from_trades(price, vol, session=s, tick_size=TICK)
    want = vpoc.from_trades(*s.take(price, vol), offsets=s.offsets, tick_size=TICK)
    for name in ("poc", "vah", "val", "volume", "total_volume"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
