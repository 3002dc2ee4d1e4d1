"""Aggressor-side inputs with ``session=`` (a vpoc.sessions object that keeps only some input rows).

Contract: a bad side value or buy / sell column is named by its row in the caller's input, not by its
position among the kept rows; the side fields equal those of the kept rows passed by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
pytest.importorskip("pandas")  # vpoc.sessions builds its clock with pandas
from vpoc import sessions as vs  # noqa: E402

N = 12
KEPT_FIRST = 3  # 12:00 UTC + 3 h = 09:00 Chicago (CST): rth keeps input rows 3..9


def _sessions():
    ts = np.datetime64("2024-01-02T12:00", "ns") + np.arange(N) * np.timedelta64(1, "h")
    s = vs.rth(ts, calendar=None)
    assert s.n_input == N and s.index is not None and int(s.index[0]) == KEPT_FIRST
    return s


def _bars():
    rng = np.random.default_rng(5)
    low = 100.0 + rng.integers(0, 8, N) * 0.25
    high = low + rng.integers(0, 6, N) * 0.25
    vol = rng.integers(4, 20, N).astype(np.int64)
    buy = vol // 2
    sell = vol - buy - 1
    return high, low, low, vol, buy, sell


@pytest.mark.parametrize("row", [KEPT_FIRST + 2, 9])
@pytest.mark.parametrize("bad", ["negative_buy", "nan_sell", "over"])
def test_bar_side_error_names_the_input_row(row, bad):
    """Fails before the fix: a negative / NaN side column reached the engine's pass over the kept rows,
    whose error named the kept position (buy_volume[2] for input row 5)."""
    s = _sessions()
    high, low, close, vol, buy, sell = _bars()
    buy, sell = buy.astype(np.float64), sell.astype(np.float64)
    if bad == "negative_buy":
        buy[row], name = -1.0, r"buy_volume\[%d\]" % row
    elif bad == "nan_sell":
        sell[row], name = np.nan, r"sell_volume\[%d\]" % row
    else:
        buy[row], name = float(vol[row]), r"buy_volume\[%d\] \+ sell_volume\[%d\]" % (row, row)
    with pytest.raises(ValueError, match=name):
        vpoc.from_bars(high, low, close, vol.astype(np.float64), session=s, tick_size=0.25, buy_volume=buy,
                       sell_volume=sell)


def test_trade_side_error_names_the_input_row():
    s = _sessions()
    price = 100.0 + np.arange(N) * 0.25
    side = np.ones(N, dtype=np.int8)
    side[KEPT_FIRST + 2] = 5
    with pytest.raises(ValueError, match=r"side\[%d\]" % (KEPT_FIRST + 2)):
        vpoc.from_trades(price, np.ones(N), session=s, tick_size=0.25, side=side)
    letters = np.array(["B"] * N)
    letters[8] = "X"
    with pytest.raises(ValueError, match=r"side\[8\]"):
        vpoc.from_trades(price, np.ones(N), session=s, tick_size=0.25, side=letters)


def test_side_fields_with_session_equal_the_kept_rows_by_hand():
    s = _sessions()
    high, low, close, vol, buy, sell = _bars()
    got = vpoc.from_bars(high, low, close, vol, session=s, tick_size=0.25, buy_volume=buy, sell_volume=sell)
    k = s.index
    want = vpoc.from_bars(high[k], low[k], close[k], vol[k], offsets=s.offsets, tick_size=0.25,
                          buy_volume=buy[k], sell_volume=sell[k])
    for name in ("buy_volume", "sell_volume", "delta", "delta_poc"):
        np.testing.assert_array_equal(np.asarray(getattr(got, name)), np.asarray(getattr(want, name)))
    # a bad value in a row the session drops is still a bad input column, named by its input row
    buy2 = buy.astype(np.float64)
    buy2[0] = -3.0
    with pytest.raises(ValueError, match=r"buy_volume\[0\]"):
        vpoc.from_bars(high, low, close, vol, session=s, tick_size=0.25, buy_volume=buy2, sell_volume=sell)
