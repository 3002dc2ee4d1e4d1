"""The off-grid price report of ``from_trades`` / ``from_bars`` under ``session=`` names the caller's input row.

Contract: with ``session=`` leaving rows out, the warning (a few prices off the ``tick_size`` grid, rounded) and the
refusal (many) give as their example ``name[row]=value`` with ``row`` the caller's input row, and the refusal's
``vpoc.InputError.index`` is that row; the plain reference is the same call on the kept rows passed by hand
(``offsets=``), whose report names the kept position, mapped through ``Sessions.index``; counts, shares and the
advice are the same. Calls that keep every row are unchanged.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
pytest.importorskip("pandas")  # vpoc.sessions builds its clock with pandas
from vpoc import sessions as vs  # noqa: E402
import _deps  # noqa: E402

TICK = 0.25
DAYS = 3
N = DAYS * 1440  # one row a minute from midnight UTC: rth keeps 14:30..21:00 UTC (CST) of each day
TS = np.datetime64("2024-01-02T00:00", "ns") + np.arange(N) * np.timedelta64(1, "m")


def _sessions():
    s = vs.rth(TS, calendar=None)
    assert s.n_kept > 1000 and s.n_dropped > 0 and int(s.index[0]) > 0
    return s


def _trades(seed=0):
    rng = np.random.default_rng(seed)
    return 4000.0 + rng.integers(0, 40, N) * TICK, rng.integers(1, 9, N).astype(np.float64)


def _bars(seed=1):
    rng = np.random.default_rng(seed)
    low = 4000.0 + rng.integers(0, 40, N) * TICK
    high = low + rng.integers(1, 6, N) * TICK
    close = low + np.minimum(rng.integers(0, 4, N) * TICK, high - low)
    return high, low, close, rng.integers(1, 9, N).astype(np.float64)


def _kept_rows(s, picks):
    """Input rows of the kept positions ``picks`` (positions != rows: the test proves something)."""
    rows = np.asarray(s.index)[np.asarray(picks)]
    assert np.all(rows != np.asarray(picks))
    return rows


def _one_warning(call):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = call()
    grid = [w for w in rec if "grid" in str(w.message)]
    assert len(grid) == 1 and issubclass(grid[0].category, UserWarning)
    return out, grid[0]


def _said_of(text, kept_pos, row, names):
    for name in names:
        text = text.replace(f"{name}[{kept_pos}]", f"{name}[{row}]")
    return text


def _calls(kind, s, cols):
    """(the session= call, the same call on the kept rows by hand, the price names)."""
    if kind == "trades":
        price, vol = cols
        return (lambda **k: vpoc.from_trades(price, vol, session=s, tick_size=TICK, **k),
                lambda **k: vpoc.from_trades(*s.take(price, vol), offsets=s.offsets, tick_size=TICK, **k),
                ("price",))
    high, low, close, vol = cols
    return (lambda **k: vpoc.from_bars(high, low, close, vol, session=s, tick_size=TICK, **k),
            lambda **k: vpoc.from_bars(*s.take(high, low, close, vol), offsets=s.offsets, tick_size=TICK, **k),
            ("high", "low", "close", "open"))


def _nudged(kind, rows, seed):
    cols = _trades(seed) if kind == "trades" else _bars(seed)
    cols[0][rows] += 0.04  # 0.16 tick off the grid (price, or the bar's high: still above its close)
    return cols


@pytest.mark.parametrize("kind", ["trades", "bars"])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_few_off_grid_prices_warn_naming_the_input_row(kind, seed):
    """Fails before the change: the warning named the kept position (price[431] for input row 2301)."""
    s = _sessions()
    pos = int(np.random.default_rng(seed).integers(1, s.n_kept))
    row = int(_kept_rows(s, [pos])[0])
    call, by_hand, names = _calls(kind, s, _nudged(kind, [row], seed))
    got, w = _one_warning(call)
    assert w.filename == __file__  # at the caller's line, as before
    name = names[0]
    value = float((_trades(seed) if kind == "trades" else _bars(seed))[0][row] + 0.04)
    assert f"e.g. {name}[{row}]={value!r}" in str(w.message) and f"[{pos}]" not in str(w.message)
    want, w_kept = _one_warning(by_hand)
    assert f"e.g. {name}[{pos}]=" in str(w_kept.message)
    assert str(w.message) == _said_of(str(w_kept.message), pos, row, names)
    assert got.snapped_prices == want.snapped_prices == 1
    np.testing.assert_array_equal(got.poc, want.poc)


@pytest.mark.parametrize("kind", ["trades", "bars"])
def test_many_off_grid_prices_are_refused_naming_the_input_row(kind):
    s = _sessions()
    picks = np.arange(7, s.n_kept, 97)  # about 1% of the kept rows: refused
    rows = _kept_rows(s, picks)
    call, by_hand, names = _calls(kind, s, _nudged(kind, rows, 3))
    with pytest.raises(ValueError) as info:
        call()
    got = info.value
    with pytest.raises(ValueError) as info:
        by_hand()
    kept = info.value
    assert isinstance(got, vpoc.InputError) and type(got) is type(kept)
    pos = int(kept.index)
    row = int(np.asarray(s.index)[pos])
    assert pos == int(picks[0]) and got.index == row and got.argument == kept.argument == names[0]
    assert str(got) == _said_of(str(kept), pos, row, names) and f"e.g. {names[0]}[{row}]=" in str(got)
    assert f"{picks.size} of " in str(got) and "snap=True" in str(got)
    assert got.reason == kept.reason  # the count and share: about no row
    quiet = call(snap=True)  # the advice works; snap=True says nothing
    assert quiet.snapped_prices == picks.size


@_deps.needs("pandas_market_calendars")
def test_frames_and_rules_name_the_input_row():
    """A frame with session='rth' (the rule applied to its timestamps here) or a Sessions the same way."""
    pd = pytest.importorskip("pandas")
    s = _sessions()
    pos = 500
    row = int(_kept_rows(s, [pos])[0])
    price, vol = _nudged("trades", [row], 0)
    df = pd.DataFrame({"timestamp": TS, "price": price, "volume": vol})
    for call in (lambda: vpoc.from_trades(df, session="rth", tz="UTC", tick_size=TICK),
                 lambda: vpoc.from_trades(df, session=s, tz="UTC", tick_size=TICK)):
        _, w = _one_warning(call)
        assert f"e.g. price[{row}]=" in str(w.message), str(w.message)


def test_every_row_kept_is_unchanged():
    """offsets= (no row left out): the report names the caller's row as given."""
    price, vol = _trades(0)
    price[2301] += 0.04
    _, w = _one_warning(lambda: vpoc.from_trades(price, vol, offsets=[0, N], tick_size=TICK))
    assert f"e.g. price[2301]={float(price[2301])!r}" in str(w.message)
    price[np.arange(0, N, 50)] += 0.04
    with pytest.raises(vpoc.InputError) as info:
        vpoc.from_trades(price, vol, offsets=[0, N], tick_size=TICK)
    assert info.value.index == 0 and "e.g. price[0]=" in str(info.value)
