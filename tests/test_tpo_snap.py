"""``vpoc.tpo(snap=)``: prices off the ``tick_size`` grid are refused (many), rounded with a warning (a few) or rounded
silently (``snap=True``) as ``from_bars`` does, and counted in ``snapped_prices``; the advice of the error and the
warning (pass snap=True) is one ``tpo`` takes. Counts checked against a plain NumPy count of the off-grid prices and
against ``from_bars``' own count; the TPO profile of snapped prices equals that of the prices rounded by hand."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import vpoc

TICK = 0.25
MIN = 60 * 10**9
T0 = np.datetime64("2024-06-03", "ns").astype(np.int64) + (13 * 60 + 30) * MIN  # 08:30 CDT


def bars(n, seed=0):
    rng = np.random.default_rng(seed)
    lo = (400 + np.cumsum(rng.integers(-2, 3, n))) * TICK
    hi = lo + rng.integers(0, 4, n) * TICK
    close = lo + np.minimum(rng.integers(0, 4, n) * TICK, hi - lo)
    ts = T0 + np.arange(n, dtype=np.int64) * MIN
    return hi.astype(np.float64), lo.astype(np.float64), close.astype(np.float64), ts


def off_grid(*arrays):
    """A plain count of prices more than 1e-6 ticks off the grid."""
    return sum(int((np.abs(x / TICK - np.rint(x / TICK)) > 1e-6).sum()) for x in arrays)


def nudge(x, rows, by=0.04):
    x = x.copy()
    x[rows] += by  # 0.16 tick: rounds back to the same tick
    return x


def test_many_off_grid_prices_are_refused_with_advice_tpo_takes():
    hi, lo, close, ts = bars(60)
    lo2 = nudge(lo, np.arange(0, 60, 3), -0.04)
    kw = dict(timestamp=ts, offsets=[0, 60], tick_size=TICK, incomplete="ignore")
    with pytest.raises(ValueError, match=r"20 of 120 prices .* snap=True to round every price"):
        vpoc.tpo(hi, lo2, **kw)  # high and low only: the stand-in close is not counted
    tp = vpoc.tpo(hi, lo2, snap=True, **kw)  # the advice works (fails before: no snap= argument)
    assert tp.snapped_prices == off_grid(hi, lo2) == 20 and "snapped_prices=20" in repr(tp)
    want = vpoc.tpo(hi, lo, **kw)  # the prices rounded by hand
    for name in ("count", "poc", "vah", "val", "single_prints", "period_low_row", "period_high_row"):
        np.testing.assert_array_equal(getattr(tp, name), getattr(want, name), err_msg=name)
    assert want.snapped_prices == 0
    # with a close: from_bars' own count of the same bars
    room = np.flatnonzero(hi - close >= TICK)[:9]  # closes below their high: nudged up, still inside the bar
    close2 = nudge(close, room)
    tp = vpoc.tpo(hi, lo2, close2, snap=True, **kw)
    fb = vpoc.from_bars(hi, lo2, close2, np.ones(60), offsets=[0, 60], tick_size=TICK, snap=True)
    assert tp.snapped_prices == fb.snapped_prices == off_grid(hi, lo2, close2) == 20 + room.shape[0]


def test_a_few_off_grid_prices_warn_and_are_counted():
    hi, lo, close, ts = bars(600, seed=1)
    hi2 = nudge(hi, [17])
    kw = dict(timestamp=ts, offsets=[0, 600], tick_size=TICK, incomplete="ignore")
    with pytest.warns(UserWarning, match=r"1 of 1200 prices .* pass snap=True to round them without this") as rec:
        tp = vpoc.tpo(hi2, lo, **kw)
    assert [w.filename for w in rec if "grid" in str(w.message)] == [__file__]  # the caller's line
    assert tp.snapped_prices == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tp2 = vpoc.tpo(hi2, lo, snap=True, **kw)
    assert tp2.snapped_prices == 1
    np.testing.assert_array_equal(tp.count, tp2.count)
    np.testing.assert_array_equal(tp.count, vpoc.tpo(hi, lo, **kw).count)


def test_on_grid_prices_snap_nothing():
    hi, lo, close, ts = bars(40, seed=2)
    tp = vpoc.tpo(hi, lo, close, timestamp=ts, offsets=[0, 40], tick_size=TICK, incomplete="ignore", snap=True)
    assert tp.snapped_prices == 0 and "snapped" not in repr(tp)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_bad_snap_names_the_argument(bad):
    hi, lo, close, ts = bars(5)
    with pytest.raises(TypeError, match="snap"):
        vpoc.tpo(hi, lo, timestamp=ts, offsets=[0, 5], tick_size=TICK, incomplete="ignore", snap=bad)
