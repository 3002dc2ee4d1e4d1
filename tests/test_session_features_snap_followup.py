"""``session_features(snap=)``: prices off the ``tick_size`` grid are refused (many), rounded with a warning (a few) or
rounded silently (``snap=True``) as ``from_bars`` does, so the advice of the error (pass snap=True) is one
session_features takes; buy / sell columns go through the one helper bar_features uses (``_side_inputs``).

Contract: with snap=True the profile columns (levels, nodes, composites, TPO rows, side columns) of off-grid prices
equal those of the prices rounded by hand (plain NumPy rounding), and the columns that read the prices themselves
(session high / low, VWAP, initial balance) read them as given, as the default does with a few off-grid prices
(snap=True is that table without the warning); the error counts the off-grid prices as a plain NumPy count does,
over high, low, close (and open with ``distribute="legacy"`` only); the check is made once (one warning).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import vpoc
# TICK 0.25, one minute in ns, 08:30 CDT; the plain off-grid count and the nudge of prices by 0.16 tick
from test_tpo_snap import MIN, T0, TICK, nudge, off_grid


def bars(n, seed=0, sessions=3):
    rng = np.random.default_rng(seed)
    lo = (400 + np.cumsum(rng.integers(-2, 3, n))) * TICK
    hi = lo + rng.integers(0, 4, n) * TICK
    close = lo + np.minimum(rng.integers(0, 4, n) * TICK, hi - lo)
    opn = lo + np.minimum(rng.integers(0, 4, n) * TICK, hi - lo)
    vol = rng.integers(1, 50, n).astype(np.float64)
    offsets = np.linspace(0, n, sessions + 1).astype(np.int64)
    ts = T0 + np.arange(n, dtype=np.int64) * MIN
    return hi, lo, close, opn, vol, offsets, ts


# The columns made from the profile (the engine's rows of the prices) alone, not from the prices themselves.
PROFILE_COLUMNS = ("vpoc", "total_volume", "value_area_low", "value_area_high", "value_area_width", "composite_poc",
                   "composite_vah", "composite_val", "naked_poc_count", "hvn_count", "lvn_count", "tpo_poc",
                   "single_prints", "shape_P", "shape_b", "shape_D", "shape_B") + vpoc.features.SIDE_TABLE_COLUMNS


def profile_columns_equal(got, want):
    for name in PROFILE_COLUMNS:
        if name in want.columns:
            assert same(got[name], want[name]), name


def per_session(ufunc, x, offsets):
    return np.array([ufunc.reduce(x[a:b]) for a, b in zip(offsets[:-1], offsets[1:])], dtype=np.float32)


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def test_many_off_grid_prices_are_refused_with_advice_session_features_takes():
    """Fails before the change: session_features had no snap= (the advice of from_bars' error was
    one it did not take)."""
    hi, lo, close, opn, vol, offsets, ts = bars(90)
    lo2 = nudge(lo, np.arange(0, 90, 3), -0.04)
    kw = dict(offsets=offsets, timestamp=ts, tick_size=TICK, lookbacks=(1, 2), composite_sessions=2)
    with pytest.raises(ValueError, match=r"30 of 270 prices .* snap=True to round every price") as info:
        vpoc.session_features(hi, lo2, close, vol, **kw)
    assert isinstance(info.value, vpoc.InputError) and info.value.argument == "low" and info.value.index == 0
    assert off_grid(hi, lo2, close) == 30
    got = vpoc.session_features(hi, lo2, close, vol, snap=True, **kw)  # the advice works
    rounded = np.rint(lo2 / TICK) * TICK  # by hand
    np.testing.assert_array_equal(rounded, lo)
    want = vpoc.session_features(hi, rounded, close, vol, **kw)
    assert got.columns == want.columns
    profile_columns_equal(got, want)
    assert same(got["session_low"], per_session(np.minimum, lo2, offsets))  # the lows as given
    assert same(want["session_low"], per_session(np.minimum, lo, offsets))


def test_open_counts_with_legacy_only():
    hi, lo, close, opn, vol, offsets, ts = bars(60, seed=1)
    room = np.flatnonzero(hi - opn >= TICK)[:20]
    opn2 = nudge(opn, room)
    kw = dict(offsets=offsets, timestamp=ts, tick_size=TICK, lookbacks=(1,), composite_sessions=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = vpoc.session_features(hi, lo, close, vol, open=opn2, **kw)  # "uniform" reads no open
    assert np.isfinite(plain["session_open"]).any()
    with pytest.raises(ValueError, match=rf"{room.size} of 240 prices"):
        vpoc.session_features(hi, lo, close, vol, open=opn2, distribute="legacy", **kw)
    got = vpoc.session_features(hi, lo, close, vol, open=opn2, distribute="legacy", snap=True, **kw)
    fb = vpoc.from_bars(hi, lo, close, vol, open=opn2, offsets=offsets, tick_size=TICK, distribute="legacy",
                        snap=True)
    assert fb.snapped_prices == room.size == off_grid(opn2)
    np.testing.assert_array_equal(got["vpoc"], fb.poc.astype(np.float32))


def test_a_few_off_grid_prices_warn_once_at_the_callers_line():
    hi, lo, close, opn, vol, offsets, ts = bars(900, seed=2)
    hi2 = nudge(hi, [17])
    kw = dict(offsets=offsets, timestamp=ts, tick_size=TICK, lookbacks=(1,), composite_sessions=1)
    with pytest.warns(UserWarning, match=r"1 of 2700 prices .* pass snap=True") as rec:
        got = vpoc.session_features(hi2, lo, close, vol, **kw)
    grid = [w for w in rec if "grid" in str(w.message)]
    assert len(grid) == 1 and grid[0].filename == __file__  # once, at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = vpoc.session_features(hi2, lo, close, vol, snap=True, **kw)
        want = vpoc.session_features(hi, lo, close, vol, **kw)
    assert got.columns == quiet.columns and same(got.values, quiet.values)  # the same table, without a word
    profile_columns_equal(got, want)
    assert same(got["session_high"], per_session(np.maximum, hi2, offsets))


def test_snap_with_side_columns_and_sessions():
    """With buy / sell columns and a session rule that leaves rows out: the side columns of snapped prices are
    those of the prices rounded by hand."""
    pytest.importorskip("pandas")
    from vpoc import sessions as vs

    hi, lo, close, opn, vol, offsets, ts = bars(300, seed=3)
    ts = T0 - 3 * 60 * MIN + np.arange(300, dtype=np.int64) * 5 * MIN  # starts before the RTH open
    s = vs.rth(ts, calendar=None)
    assert s.n_dropped > 0
    buy = np.floor(vol / 2)
    sell = vol - buy - 1
    hi2 = nudge(hi, np.arange(0, 300, 2))
    kw = dict(session=s, timestamp=ts, tick_size=TICK, lookbacks=(1,), composite_sessions=1, buy_volume=buy,
              sell_volume=sell)
    got = vpoc.session_features(hi2, lo, close, vol, snap=True, **kw)
    want = vpoc.session_features(hi, lo, close, vol, **kw)
    side_cols = vpoc.features.SIDE_TABLE_COLUMNS
    assert got.columns == want.columns and got.columns[-len(side_cols):] == side_cols
    profile_columns_equal(got, want)
    kept = np.asarray(s.index)
    assert same(got["session_high"], per_session(np.maximum, hi2[kept], s.offsets))
    with pytest.raises(ValueError, match=r"buy_volume has 299 rows but the bars have 300"):
        vpoc.session_features(hi, lo, close, vol, **{**kw, "buy_volume": buy[:-1]})
    with pytest.raises(TypeError, match="imbalance_ratio"):
        vpoc.session_features(hi, lo, close, vol, session=s, timestamp=ts, tick_size=TICK, imbalance_ratio=2.0)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_bad_snap_names_the_argument(bad):
    hi, lo, close, opn, vol, offsets, ts = bars(6)
    with pytest.raises(TypeError, match="snap"):
        vpoc.session_features(hi, lo, close, vol, offsets=offsets, tick_size=TICK, snap=bad)
