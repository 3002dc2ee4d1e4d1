"""features._naked (O(m log m) sweep) against the former O(m**2) implementation, bit for bit.

``_naked_reference`` is the former library code, verbatim (only renamed). The comparisons cover
the real pipeline (random bars with empty sessions, ties of POC prices, naked_max_age None and
small, bar_close given and not) and synthetic contexts the engine would not produce (POCs
outside their session's range, wide sessions trading through many POCs, -0.0 / 0.0 ties).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Dict, Optional

import numpy as np
import pytest

from vpoc import features as F
from vpoc.features import _lookback as lookback
from vpoc.features import _naked_pocs as naked_pocs
from vpoc.features import _nearest, _price_rows


def _naked_reference(ctx, bar_close: Optional[np.ndarray]) -> Dict[str, np.ndarray]:
    rules = ctx.rules
    m = ctx.ne.shape[0]
    res = {k: np.full(m, np.nan) for k in ("count", "above", "below")}
    if bar_close is not None:
        n = bar_close.shape[0]
        res.update({k: np.full(n, np.nan) for k in ("bar_count", "bar_above", "bar_below")})
        if m:  # the first non-empty session: nothing is known before it
            first = int(ctx.ne[0])
            res["bar_count"][ctx.data.offsets[first]:ctx.data.offsets[first + 1]] = 0.0
    if m == 0:
        return res
    p_row = np.asarray(ctx.prof.poc_row)[ctx.ne]
    price = np.asarray(ctx.prof.poc)[ctx.ne]
    lo = _price_rows(ctx.s_low[ctx.ne], rules)
    hi = _price_rows(ctx.s_high[ctx.ne], rules)
    # first later session touching each POC (m when none)
    touch = np.full(m, m, dtype=np.int64)
    ks = np.arange(m)
    block = max(1, 4_000_000 // max(m, 1))
    for j0 in range(0, m, block):
        j = ks[j0:j0 + block]
        hit = (lo[None, :] <= p_row[j, None]) & (p_row[j, None] <= hi[None, :]) & (ks[None, :] > j[:, None])
        any_hit = hit.any(axis=1)
        touch[j0:j0 + block] = np.where(any_hit, hit.argmax(axis=1), m)
    order = np.argsort(price, kind="stable")
    price_sorted = price[order]
    j_sorted = ks[order]
    touch_sorted = touch[order]
    offs = ctx.data.offsets
    for e in range(m):
        active = (j_sorted <= e) & (touch_sorted > e)
        if rules.naked_max_age is not None:
            active &= e - j_sorted < rules.naked_max_age
        levels = price_sorted[active]
        res["count"][e] = float(levels.shape[0])
        s = int(ctx.ne[e])
        up, dn = _nearest(levels, ctx.s_close[s:s + 1])
        res["above"][e], res["below"][e] = up[0], dn[0]
        if bar_close is not None and e + 1 < m:
            s1 = int(ctx.ne[e + 1])
            a, b = int(offs[s1]), int(offs[s1 + 1])
            res["bar_count"][a:b] = float(levels.shape[0])
            res["bar_above"][a:b], res["bar_below"][a:b] = _nearest(levels, bar_close[a:b])
    return res


def _same(got: Dict[str, np.ndarray], want: Dict[str, np.ndarray], what: str) -> None:
    assert sorted(got) == sorted(want), what
    for k in want:
        assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape, (what, k)
        assert got[k].tobytes() == want[k].tobytes(), (what, k, got[k], want[k])


def _compare(ctx, bar_close, what: str) -> None:
    _same(F._naked(ctx, None), _naked_reference(ctx, None), what)
    if bar_close is not None:
        _same(F._naked(ctx, bar_close), _naked_reference(ctx, bar_close), what + " bars")


def _pipeline_ctx(high, low, close, volume, offsets, tick, tpr, age):
    rules = F._rules(tick, tpr, "uniform", 0.7, "cbot", "low", (), 2, age, 3, 3, 0.5, 0.5, 0.15,
                     0.3, 0.5, "UTC", "09:30", 60, 30)
    data = F._data(high, low, close, volume, None, None, offsets, None, None)
    prof, _ = F._profiles(data, rules, "cpu", 1, developing=False)
    return F._context(data, F._engine_rules(rules, prof), prof, 1), data.close


def _random_bars(rng, S):
    sizes = rng.integers(0, 5, S) * (rng.random(S) > 0.25)  # about a quarter empty
    n = int(sizes.sum())
    offsets = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    spread = int(rng.choice([2, 6, 30]))
    base = 400 + rng.integers(0, spread, n)
    width = rng.integers(0, int(rng.choice([1, 3, 12])) + 1, n)
    width[rng.random(n) < 0.05] += 40  # now and then a session trading through many POCs
    low = base.astype(np.float64) * 0.25
    high = (base + width).astype(np.float64) * 0.25
    close = (base + rng.integers(0, width + 1)).astype(np.float64) * 0.25
    volume = rng.integers(0, 4, n).astype(np.float64) * (width + 1)
    return high, low, close, volume, offsets


@pytest.mark.parametrize("block", [None, 1, 5, 64])
def test_naked_matches_reference_pipeline(block, monkeypatch):
    if block is not None:  # sweeps in blocks of this many sessions / queries
        monkeypatch.setattr(naked_pocs, "_SWEEP_BLOCK", block)
    rng = np.random.default_rng(20240611 + (block or 0))
    cases = 0
    for trial in range(300):
        S = int(rng.choice([0, 1, 2, 3, 8, 40, 150]))
        high, low, close, volume, offsets = _random_bars(rng, S)
        if offsets[-1] == 0:
            continue
        tpr = int(rng.choice([1, 1, 2, 4]))
        age = [None, 1, 2, 3, 7, 1000][trial % 6]
        ctx, bar_close = _pipeline_ctx(high, low, close, volume, offsets, 0.25, tpr, age)
        _compare(ctx, bar_close, f"pipeline trial {trial}")
        cases += 1
    assert cases > 200


def _synthetic_ctx(rng, S, age):
    """A context with arbitrary values: POC rows unrelated to the session's range, duplicate
    prices, -0.0 and 0.0, empty sessions, a close anywhere (NaN too)."""
    counts = rng.integers(0, 4, S) * (rng.random(S) > 0.3)
    offsets = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    ne = np.flatnonzero(counts > 0)
    k_of = np.full(S, -1, dtype=np.int64)
    k_of[ne] = np.arange(ne.shape[0])
    span = int(rng.choice([3, 10, 60]))
    poc_row = rng.integers(-span // 2, span, S).astype(np.int64)
    poc = poc_row.astype(np.float64) * 0.5
    poc[rng.random(S) < 0.2] = -0.0
    poc[rng.random(S) < 0.03] = np.nan
    lo_row = rng.integers(-span, span, S)
    hi_row = lo_row + rng.integers(-1, span + 1, S)  # sometimes hi < lo: touches nothing
    s_low = lo_row * 0.5
    s_high = hi_row * 0.5
    s_close = rng.integers(-span, span + 1, S) * 0.25
    s_close[rng.random(S) < 0.05] = np.nan
    s_close[rng.random(S) < 0.1] = -0.0
    for arr in (s_low, s_high, s_close, poc):
        arr[counts == 0] = np.nan
    rules = SimpleNamespace(tick_size=0.5, ticks_per_row=1, naked_max_age=age)
    n = int(offsets[-1])
    bar_close = rng.integers(-span, span + 1, n) * 0.25
    bar_close[rng.random(n) < 0.05] = np.nan
    bar_close[rng.random(n) < 0.1] = -0.0
    ctx = SimpleNamespace(rules=rules, ne=ne, S=S, counts=np.diff(offsets), k_of=k_of,
                          data=SimpleNamespace(offsets=offsets),
                          prof=SimpleNamespace(poc_row=poc_row, poc=poc),
                          s_low=s_low, s_high=s_high, s_close=s_close)
    return ctx, bar_close


@pytest.mark.parametrize("block", [None, 1, 3, 100])
def test_naked_matches_reference_synthetic(block, monkeypatch):
    if block is not None:
        monkeypatch.setattr(naked_pocs, "_SWEEP_BLOCK", block)
    rng = np.random.default_rng(7 + (block or 0))
    for trial in range(400):
        S = int(rng.choice([0, 1, 2, 5, 20, 70, 200, 700]))
        age = [None, 1, 2, 5, 2**62][trial % 5]
        ctx, bar_close = _synthetic_ctx(rng, S, age)
        _compare(ctx, bar_close, f"synthetic trial {trial}")


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 4095, 4096, 4097, 70_000])
def test_sorted_set(n):
    rng = np.random.default_rng(n)
    s = F._SortedSet(n)
    members = np.zeros(n, dtype=bool)
    for step in range(3000):
        i = int(rng.integers(0, n))
        if rng.random() < 0.55:
            s.add(i)
            members[i] = True
        else:
            s.discard(i)
            members[i] = False
        q = int(rng.integers(0, n + 1))  # next: 0..n
        idx = np.flatnonzero(members)
        after = idx[idx >= q]
        assert s.next(q) == (int(after[0]) if after.size else -1)
        q = int(rng.integers(-1, n))  # prev: -1..n-1
        before = idx[idx <= q]
        assert s.prev(q) == (int(before[-1]) if before.size else -1)


def _rolling_std_reference(x, p):  # the former one-shot _rolling_std
    out = np.full(x.shape[0], np.nan)
    w = F._rolling(x, p)
    if w is not None and p >= 2:
        sd = w.std(axis=1, ddof=1)
        sd[np.max(w, axis=1) == np.min(w, axis=1)] = 0.0
        out[p - 1:] = sd
    return out


@pytest.mark.parametrize("block", [None, 1, 2, 7, 50, 333])
def test_rolling_std_blocks_bit_identical(block, monkeypatch):
    if block is not None:
        monkeypatch.setattr(lookback, "_STD_BLOCK", block)
    rng = np.random.default_rng(3 + (block or 0))
    for n in (0, 1, 2, 3, 5, 17, 100, 1001, 5000):
        x = np.round(rng.normal(1000.0, 30.0, n), int(rng.integers(0, 4)))
        x[rng.random(n) < 0.02] = np.nan
        if n > 10:
            x[3:9] = x[3]  # a constant window: 0
        for p in (1, 2, 3, 5, 20, 50):
            got, want = F._rolling_std(x, p), _rolling_std_reference(x, p)
            assert got.tobytes() == want.tobytes(), (n, p)
