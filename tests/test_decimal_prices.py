"""Reference tests on prices as files hold them: decimals read from text ("6012.75", "0.6", "4.35").

Contract: the CPU engine equals the contract's exact construction (tests/reference.py) bit for bit on decimal
prices: tick mapping t = rint(p / tick_size) for trades and bars, and the legacy level ladder.

Prices built as ``t * tick`` (what the older reference tests use) are not what a file holds: 0.6 read
from text is not 6 * 0.1, and 1.15 / 0.1 is 11.499999999999998 while 1.15 * 10 is 11.5. Issue 28.7:
- the legacy ladder (distribute="legacy") includes a level lying exactly on a bar's high when the
  high is written as a decimal (levels floor(lo / tick) * tick + k * tick, compared as float64);
- the tick of a decimal price is rint(p / tick_size) (the division, not p * (1 / tick_size)).
"""

from __future__ import annotations

import inspect
import io
import math
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vpoc
import _deps

_deps.require("pandas")  # legacy_reference (the legacy analyzer) is written with pandas
import legacy_reference as legacy  # noqa: E402
from reference import exact_rows, exact_session_units, price_to_tick

__all__: list = []

TICKS = ["0.1", "0.05", "0.01", "0.2", "0.3", "0.25", "0.02", "0.5"]


def _snap():
    """snap=True where from_bars / from_trades take it (off-grid prices raise without it)."""
    return {"snap": True} if "snap" in inspect.signature(vpoc.from_bars).parameters else {}


def decimal(k: int, tick: str) -> float:
    """Price k * tick written as the shortest decimal a file would hold, read back as float64."""
    return float(str(Decimal(k) * Decimal(tick)))


def _text_column(values) -> np.ndarray:
    """Prices through text, as a reader gets them: formatted as decimals, parsed by np.loadtxt."""
    return np.loadtxt(io.StringIO("\n".join(values)), dtype=np.float64, ndmin=1)


def _levels(lo: float, hi: float, tick: float):
    base = math.floor(lo / tick)
    K = math.ceil(hi / tick) - base
    return base, [float(base) * tick + float(k) * tick for k in range(K + 1)]


def _check(prof, s, kind, cols, tick, tpr=1, open=None):
    low, rows, total = exact_rows(exact_session_units(kind, cols, tick, tpr, open=open))
    got = np.asarray(prof.session(s)[1])
    assert prof.low_row[s] == low, (kind, prof.low_row[s], low)
    assert got.tobytes() == rows.tobytes(), (kind, got.tolist(), rows.tolist())


def _level_on_high_cases(tick_s: str):
    """One-bar sessions (low, high, close) of decimal prices where a legacy level is exactly the high."""
    tick = float(tick_s)
    out = []
    for lo_k in range(0, 400, 3):
        for w in range(0, 9):
            lo, hi = decimal(lo_k, tick_s), decimal(lo_k + w, tick_s)
            _, L = _levels(lo, hi, tick)
            if hi in L:
                out.append((lo, hi, decimal(lo_k + w // 2, tick_s)))
    return out


@pytest.mark.parametrize("tick_s", TICKS)
def test_28_7_legacy_level_exactly_on_a_decimal_high_gets_its_share(tick_s):
    tick = float(tick_s)
    cases = _level_on_high_cases(tick_s)
    assert len(cases) > 50
    lo, hi, close = (np.array(x) for x in zip(*cases))
    vol = np.full(lo.size, 1000, dtype=np.int64)
    offsets = np.arange(lo.size + 1, dtype=np.int64)
    prof = vpoc.from_bars(hi, lo, close, vol, offsets=offsets, tick_size=tick, distribute="legacy")
    for s in range(lo.size):
        base, L = _levels(lo[s], hi[s], tick)
        k = L.index(hi[s])
        row = base + k - int(prof.low_row[s])
        got = np.asarray(prof.session(s)[1])
        assert 0 <= row < got.size and got[row] > 0, (tick_s, lo[s], hi[s], got.tolist())
        _check(prof, s, "legacy", [hi[s:s + 1], lo[s:s + 1], close[s:s + 1], vol[s:s + 1]], tick)
        # the legacy analyzer itself (literal loops) puts volume on that level too
        levels, lv, _ = legacy.profile(close[s:s + 1], hi[s:s + 1], lo[s:s + 1], close[s:s + 1], vol[s:s + 1],
                                       tick)
        assert lv[list(levels).index(hi[s])] > 0


def test_28_7_legacy_decimal_high_by_hand():
    # "0.6" read from text is not 6 * 0.1; the session's ladder is 0.1 + k * 0.1 and 0.1 + 0.5 == 0.6.
    hi = _text_column(["0.6"])
    lo = _text_column(["0.1"])
    close = _text_column(["0.3"])
    assert hi[0] != 6 * 0.1 and 1.0 * 0.1 + 5.0 * 0.1 == hi[0]  # level 5 of the ladder is the high
    assert math.floor(hi[0] / 0.1) == 5  # 5.999999999999999: the level is found above floor(high / tick)
    prof = vpoc.from_bars(hi, lo, close, [600], tick_size=0.1, distribute="legacy")
    assert prof.low_row[0] == 1 and prof.n_rows[0] == 6
    assert np.all(np.asarray(prof.volume) > 0)  # 0.1 .. 0.6, the level on the high included
    _check(prof, 0, "legacy", [hi, lo, close, np.array([600])], 0.1)


@st.composite
def _decimal_sessions(draw):
    tick_s = draw(st.sampled_from(TICKS))
    n = draw(st.integers(1, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    start = int(draw(st.sampled_from([0, 40, 1000, 60000, 120251])))  # 6012.75 at tick 0.05
    c = start + np.cumsum(rng.integers(-3, 4, n))
    h = c + rng.integers(0, 6, n)
    lo = c - rng.integers(0, 6, n)
    o = np.clip(c + rng.integers(-4, 5, n), lo, h)
    text = [[str(Decimal(int(k)) * Decimal(tick_s)) for k in col] for col in (h, lo, c, o)]
    cols = [_text_column(t) for t in text]
    vol = rng.integers(0, 500, n).astype(np.int64)
    if draw(st.booleans()):
        vol = vol * 0.37 + 2.0**-20
    cuts = np.sort(rng.integers(0, n + 1, draw(st.integers(0, 3))))
    offsets = np.concatenate([[0], cuts, [n]]).astype(np.int64)
    return float(tick_s), cols, vol, offsets


@settings(max_examples=60)
@given(data=_decimal_sessions(), with_open=st.booleans(), tpr=st.integers(1, 3))
def test_28_7_legacy_on_decimal_prices_equals_the_exact_reference(data, with_open, tpr):
    tick, (h, lo, c, o), vol, offsets = data
    prof = vpoc.from_bars(h, lo, c, vol, open=o if with_open else None, offsets=offsets, tick_size=tick,
                          ticks_per_row=tpr, distribute="legacy")
    for s in range(offsets.size - 1):
        a, b = offsets[s], offsets[s + 1]
        if a == b:
            continue
        _check(prof, s, "legacy", [h[a:b], lo[a:b], c[a:b], vol[a:b]], tick, tpr,
               open=o[a:b] if with_open else None)


@settings(max_examples=60)
@given(data=_decimal_sessions(), dist=st.sampled_from(["uniform", "close", "hlc3"]), tpr=st.integers(1, 3))
def test_28_7_bars_and_trades_on_decimal_prices_equal_the_exact_reference(data, dist, tpr):
    tick, (h, lo, c, _), vol, offsets = data
    prof = vpoc.from_bars(h, lo, c, vol, offsets=offsets, tick_size=tick, ticks_per_row=tpr, distribute=dist)
    tr = vpoc.from_trades(c, vol, offsets=offsets, tick_size=tick, ticks_per_row=tpr)
    for s in range(offsets.size - 1):
        a, b = offsets[s], offsets[s + 1]
        if a == b:
            continue
        _check(prof, s, dist, [h[a:b], lo[a:b], c[a:b], vol[a:b]], tick, tpr)
        _check(tr, s, "trades", [c[a:b], vol[a:b]], tick, tpr)


# Decimal prices half a tick off the grid, where p / tick and p * (1 / tick) round apart:
# 1.15 / 0.1 = 11.499999999999998 -> 11, but 1.15 * 10 = 11.5 -> 12.
HALF_TICKS = [("0.1", ["1.15", "0.45", "2.05", "4.35", "8.15", "1.05", "0.25", "16.45", "6012.75"]),
              ("0.01", ["0.115", "1.005", "4.355", "0.285", "6012.755"]),
              ("0.05", ["4.325", "1.175", "0.025", "6012.775"]),
              ("0.25", ["6012.125", "6012.375", "0.125", "100.625"])]


@pytest.mark.parametrize("tick_s,text", HALF_TICKS)
def test_28_7_tick_of_a_decimal_price_is_rint_of_the_quotient(tick_s, text):
    tick = float(tick_s)
    p = _text_column(text)
    want = np.rint(p / tick)
    if tick_s == "0.1":  # the case the quotient decides: the product rounds the other way
        assert np.rint(p[0] * (1.0 / tick)) != want[0]
    vol = np.arange(1, p.size + 1, dtype=np.int64) * 10
    offsets = np.arange(p.size + 1, dtype=np.int64)  # one trade (bar) per session: its row is its tick
    snap = _snap()
    tr = vpoc.from_trades(p, vol, offsets=offsets, tick_size=tick, **snap)
    assert np.asarray(tr.low_row).tolist() == price_to_tick(p, tick).tolist() == want.astype(np.int64).tolist()
    for dist in ("close", "uniform", "legacy"):
        prof = vpoc.from_bars(p, p, p, vol, offsets=offsets, tick_size=tick, distribute=dist, **snap)
        if dist != "legacy":  # legacy: a bar inside one tick goes to t(close) as well
            assert np.asarray(prof.low_row).tolist() == want.astype(np.int64).tolist(), dist
        for s in range(p.size):
            _check(prof, s, dist, [p[s:s + 1], p[s:s + 1], p[s:s + 1], vol[s:s + 1]], tick)
    # bars spanning the half ticks: uniform ticks from t(low) to t(high)
    hi = p + 3 * tick
    prof = vpoc.from_bars(hi, p, p, vol, offsets=offsets, tick_size=tick, distribute="uniform", **snap)
    for s in range(p.size):
        _check(prof, s, "uniform", [hi[s:s + 1], p[s:s + 1], p[s:s + 1], vol[s:s + 1]], tick)
