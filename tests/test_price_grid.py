"""Price-grid check of from_bars / from_trades (issue 23 point 4): prices off the tick_size grid
are refused (more than 0.1%), counted and reported (fewer), or rounded on request (snap=True).

Contract: the count equals a plain-Python count of |p / tick - round(p / tick)| > 1e-6 (plus the
float32 rounding for float32 prices); the error names tick_size, the share, an example price and
its index, and the grid the data suggests.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from _compare import assert_profiles_identical

vpoc = pytest.importorskip("vpoc")
from vpoc import _arrays, _core  # noqa: E402


def es_prices(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    return 6100.0 + rng.integers(-200, 200, n) * 0.25


def plain_count(prices, tick, eps=2.0**-52):
    """Off-grid prices counted one by one in Python floats."""
    out = 0
    for p in np.asarray(prices, dtype=np.float64).tolist():
        t = p / tick
        if abs(t - round(t)) > 1e-6 + abs(t) * eps:
            out += 1
    return out


def test_23_4_wrong_tick_raises_naming_the_grid():
    p = es_prices()
    v = np.ones(p.size)
    with pytest.raises(ValueError) as info:
        vpoc.from_trades(p, v, tick_size=0.3)
    msg = str(info.value)
    share = 100 * plain_count(p, 0.3) / p.size
    assert "tick_size=0.3" in msg and f"({share:.3g}%)" in msg
    i = next(k for k, x in enumerate(p) if plain_count([x], 0.3))
    assert f"price[{i}]={float(p[i])!r}" in msg
    assert "suggests tick_size=0.25" in msg and "snap=True" in msg
    # bars: every price column counts; the example is the first off-grid one
    with pytest.raises(ValueError, match=r"tick_size=0.3: .*suggests tick_size=0.25"):
        vpoc.from_bars(p + 0.5, p, p, v, tick_size=0.3)
    # snap=True keeps the old rounding: the same result as prices rounded by hand to 0.3
    prof = vpoc.from_trades(p, v, tick_size=0.3, snap=True)
    assert prof.snapped_prices == plain_count(p, 0.3)
    snapped = np.rint(p / 0.3) * 0.3
    ref = vpoc.from_trades(snapped, v, tick_size=0.3, snap=True)
    assert_profiles_identical(prof, ref)


def test_few_bad_prints_offer_snap_on_the_given_grid():
    """0.18% of ES prices on a 0.05 grid (bad prints): the error still suggests 0.05 (its 99.9% rule) but
    also offers snap=True on the given 0.25 grid, naming the count; a finer grid that most prices need
    (30% off 0.25) gets no such offer, nor does a grid the given one is no multiple of (0.3)."""
    p = es_prices(8280, seed=3)
    bad = np.arange(5, 8280, 552)[:15]
    p[bad] += 0.1  # 15 prints off the 0.25 grid, on the 0.05 one
    with pytest.raises(ValueError) as info:
        vpoc.from_trades(p, np.ones(p.size), tick_size=0.25)
    msg = str(info.value)
    assert "suggests tick_size=0.05" in msg
    assert "99.8% of the prices on tick_size=0.25, the other 15 may be bad prints" in msg
    assert "snap=True keeps tick_size=0.25" in msg
    q = es_prices(2000, seed=4)
    q[::3] += 0.1  # a third off the 0.25 grid: the data's grid is 0.05
    with pytest.raises(ValueError) as info:
        vpoc.from_trades(q, np.ones(q.size), tick_size=0.25)
    assert "suggests tick_size=0.05" in str(info.value) and "bad prints" not in str(info.value)
    with pytest.raises(ValueError) as info:
        vpoc.from_trades(es_prices(), np.ones(2000), tick_size=0.3)
    assert "bad prints" not in str(info.value)


@pytest.mark.parametrize("data_tick, name", [(1 / 32, "1/32"), (0.01, "0.01"), (0.1, "0.1"),
                                             (0.005, "0.005")])
def test_23_4_suggested_grid_is_the_largest_common_tick(data_tick, name):
    rng = np.random.default_rng(1)
    p = np.round(100 + rng.integers(0, 5000, 3000) * data_tick, 10)
    with pytest.raises(ValueError, match=rf"suggests tick_size={name}\b"):
        vpoc.from_trades(p, np.ones(p.size), tick_size=0.25)


def test_23_4_no_common_grid():
    p = 6100 + np.random.default_rng(2).random(500)  # averaged prices
    with pytest.raises(ValueError, match="no common tick .* holds 99.9%"):
        vpoc.from_trades(p, np.ones(p.size), tick_size=0.25)


def test_23_4_threshold_warns_counts_or_raises():
    p = es_prices(2000)
    v = np.ones(p.size)
    clean = vpoc.from_trades(p, v, tick_size=0.25)
    assert clean.snapped_prices == 0
    q = p.copy()
    q[[5, 17]] += 0.1  # 2 of 2000 = 0.1%: counted and reported, not refused
    with pytest.warns(UserWarning, match=r"tick_size=0.25: 2 of 2000 prices \(0.1%\).*price\[5\]"):
        prof = vpoc.from_trades(q, v, tick_size=0.25)
    assert prof.snapped_prices == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = vpoc.from_trades(q, v, tick_size=0.25, snap=True)
    assert quiet.snapped_prices == 2
    assert_profiles_identical(prof, quiet)
    q[99] += 0.1  # 3 of 2000 = 0.15%: refused
    with pytest.raises(ValueError, match=r"3 of 2000 prices \(0.15%\)"):
        vpoc.from_trades(q, v, tick_size=0.25)


def test_23_4_float32_and_decimal_grids_are_on_grid():
    rng = np.random.default_rng(3)
    for tick, base in ((0.01, 75.0), (0.1, 6000.0), (0.25, 6000.0), (1 / 64, 110.0), (0.001, 1.5)):
        p = np.round(base + rng.integers(0, 3000, 4000) * tick, 6)
        for dtype in (np.float64, np.float32):
            x = p.astype(dtype)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                prof = vpoc.from_trades(x, np.ones(x.size), tick_size=tick)
            assert prof.snapped_prices == 0, (tick, dtype)
    # a float32 price a whole tenth of a tick off is still off
    x = np.full(10, 75.005, dtype=np.float32)
    with pytest.raises(ValueError, match="tick_size=0.01"):
        vpoc.from_trades(x, np.ones(10), tick_size=0.01)


def test_23_4_bars_open_is_checked_only_for_legacy():
    p = es_prices(500)
    o = p + 0.1  # off the grid, inside [low, high]
    v = np.ones(p.size)
    for dist in ("close", "hlc3", "uniform"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert vpoc.from_bars(p + 0.25, p, p, v, open=o, tick_size=0.25, distribute=dist).snapped_prices == 0
    with pytest.raises(ValueError, match=r"open\[0\]"):
        vpoc.from_bars(p + 0.25, p, p, v, open=o, tick_size=0.25, distribute="legacy")
    prof = vpoc.from_bars(p + 0.25, p, p, v, open=o, tick_size=0.25, distribute="legacy", snap=True)
    assert prof.snapped_prices == 500


def test_23_4_nan_and_inf_keep_the_engine_message():
    p = es_prices(50)
    for bad in (np.nan, np.inf):
        q = p.copy()
        q[7] = bad
        with pytest.raises(ValueError, match=r"price\[7\] is not finite"):
            vpoc.from_trades(q, np.ones(q.size), tick_size=0.25)


def test_23_4_check_grid_chunks_and_first_index():
    n = 3 * 4096 + 11  # several of the count's 4096-row blocks, the last one partial
    p = np.full(n, 6000.25)
    p[[n - 3, n - 1]] = 6000.3
    assert _arrays.check_grid(p, 0.25, snap=True) == 2
    with pytest.warns(UserWarning, match=rf"price\[{n - 3}\]=6000.3"):
        assert _arrays.check_grid(p, 0.25) == 2
    assert _arrays.check_grid({"high": p[:10], "low": p[:10]}, 0.25) == 0
    assert _arrays.check_grid(p, 0.0) == 0  # a bad tick_size is the engine's error
    # a random mix against the plain count, float64 and float32
    rng = np.random.default_rng(5)
    x = np.round(6000 + rng.integers(0, 100, 5000) * 0.25 + (rng.random(5000) < 0.4) * 0.1, 6)
    for dtype, eps in ((np.float64, 2.0**-52), (np.float32, 2.0**-23)):
        xs = x.astype(dtype)
        assert _arrays.check_grid(xs, 0.25, snap=True) == plain_count(xs, 0.25, eps)


def _cuda_torch():
    torch = pytest.importorskip("torch")
    if not (vpoc.gpu_available() and torch.cuda.is_available()):
        pytest.skip("needs a vpoc GPU build and a GPU")
    return torch


def test_23_4_device_path_counts_like_the_host():
    # GPU arrays are counted by the engine's range pass with the host's rule: same count, same
    # first index (past several tiles and groups), float64 and float32, a power-of-two tick and not
    torch = _cuda_torch()
    rng = np.random.default_rng(6)
    x = np.round(6000 + rng.integers(0, 100, 7000) * 0.25 + (rng.random(7000) < 0.3) * 0.1, 6)
    for dtype in (np.float64, np.float32):
        t = torch.as_tensor(x.astype(dtype), device="cuda")
        got = vpoc.from_trades(t, torch.ones(7000, device="cuda"), tick_size=0.25, device="cuda", snap=True)
        assert got.snapped_prices == _arrays._host_off(x.astype(dtype), 0.25)[0] > 0
    t = torch.as_tensor(np.full(5, 6000.25), device="cuda")
    assert vpoc.from_trades(t, torch.ones(5, device="cuda"), tick_size=0.25, device="cuda").snapped_prices == 0
    n = (1 << 20) + 1234
    y = np.round(6000 + rng.integers(0, 100, n) * 0.1, 6)
    y[-5:] += 0.03
    t = torch.as_tensor(y, device="cuda")
    with pytest.warns(UserWarning, match=rf"5 of {n} prices .* e\.g\. price\[{n - 5}\]"):
        got = vpoc.from_trades(t, torch.ones(n, device="cuda"), tick_size=0.1, device="cuda")
    assert got.snapped_prices == 5 == _arrays._host_off(y, 0.1)[0]


def test_23_4_device_bars_of_one_call_are_counted_together():
    # a bar's high, low, close on the GPU: one count over all of them; the error names the
    # first off-grid price (its column found from the engine's row) as on the host
    torch = _cuda_torch()
    on = torch.tensor([6000.0, 6000.25, 6000.5], device="cuda", dtype=torch.float64)
    off = torch.tensor([6000.0, 6000.1, 6000.5], device="cuda", dtype=torch.float64)
    vol = torch.ones(3, device="cuda")
    assert vpoc.from_bars(on + 0.5, on, on + 0.25, vol, tick_size=0.25, device="cuda").snapped_prices == 0
    with pytest.raises(ValueError, match=r"1 of 9 prices .* e\.g\. low\[1\]=6000\.1") as e:
        vpoc.from_bars(on + 0.5, off, on + 0.25, vol, tick_size=0.25, device="cuda")
    assert (e.value.argument, e.value.index) == ("low", 1)
    host = vpoc.from_bars((on + 0.5).cpu().numpy(), off.cpu().numpy(), (on + 0.25).cpu().numpy(),
                          np.ones(3), tick_size=0.25, snap=True)
    dev = vpoc.from_bars(on + 0.5, off, on + 0.25, vol, tick_size=0.25, device="cuda", snap=True)
    assert dev.snapped_prices == host.snapped_prices == 1


def test_23_4_device_nan_and_one_32nd_ticks():
    # NaN is the engine's own error, never a grid count; 1/32 and 0.25 grids of float32 and
    # float64 GPU prices are on the grid
    torch = _cuda_torch()
    rng = np.random.default_rng(8)
    for dtype in (torch.float32, torch.float64):
        on = torch.as_tensor(rng.integers(-4000, 40000, 5000) * 0.25, dtype=dtype, device="cuda")
        vol = torch.ones(5000, device="cuda")
        for tick in (0.25, 1 / 32):
            assert vpoc.from_trades(on, vol, tick_size=tick, device="cuda").snapped_prices == 0
        bad = on.clone()
        bad[17:27] += 0.1
        with pytest.raises(ValueError, match=r"10 of 5000 prices .* e\.g\. price\[17\]"):
            vpoc.from_trades(bad, vol, tick_size=0.25, device="cuda")
        nan = on.clone()
        nan[3] = float("nan")
        with pytest.raises(ValueError, match=r"price\[3\] is not finite"):
            vpoc.from_trades(nan, vol, tick_size=0.25, device="cuda")


def test_23_4_check_grid_reads_array_likes_and_off_grid_at():
    # the host check outside from_* (Live) takes any array-like; off_grid_at tests one price of a
    # host or GPU array (a CPU torch tensor here) by the engine's rule
    torch = pytest.importorskip("torch")
    on = [6000.0, 6000.25, 6000.5]
    assert _arrays.check_grid({"high": on, "low": on, "close": on}, 0.25) == 0
    with pytest.raises(ValueError, match=r"1 of 9 prices .* e\.g\. low\[1\]=6000\.1"):
        _arrays.check_grid({"high": on, "low": [6000.0, 6000.1, 6000.5], "close": on}, 0.25)
    t = torch.tensor([6000.0, 6000.1], dtype=torch.float32)
    assert not _arrays.off_grid_at(t, 0, 0.25) and _arrays.off_grid_at(t, 1, 0.25)


def test_24_grid_refusal_of_list_inputs_names_the_price():
    # the refusal's report reads inputs that are not numpy arrays (a list here) the way the
    # engine read them (a fuzz case: a list low off the grid beside numpy high / close)
    with pytest.raises(vpoc.InputError, match=r"1 of 15 prices .* e\.g\. low\[4\]=3999\.9") as e:
        vpoc.from_bars(np.full(5, 4000.5), [4000.0] * 4 + [3999.9], np.full(5, 4000.0), np.zeros(5), tick_size=0.25)
    assert (e.value.argument, e.value.index) == ("low", 4)
    with pytest.warns(UserWarning, match=r"1 of 3000 prices .* e\.g\. price\[2999\]"):
        got = vpoc.from_trades(list(np.r_[np.full(2999, 6000.25), 6000.3]) * 1, [1] * 3000, tick_size=0.25)
    assert got.snapped_prices == 1


@pytest.mark.parametrize("tick", [0.25, 1 / 32, 0.5, 2.0, 0.1, 0.05, 0.01])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_24_engine_grid_count_equals_the_plain_rule(tick, dtype):
    # the engine's count (a one-multiply prefilter, exact in the prices' dtype for a power-of-two
    # tick, then the exact test) against the rule applied price by price in Python floats, on
    # prices at the tolerance's edge, far out, tiny, NaN / inf, in several 4096-row blocks
    rng = np.random.default_rng(int(tick * 1000) + (dtype == np.float32))
    k = rng.integers(-200000, 200000, 20000).astype(np.float64)
    near = (1e-6 * np.array([0.5, 0.999999, 1.000001, 2.0, 1e3]))
    parts = [k * tick, (k[:5000] + rng.choice(near, 5000) * rng.choice([-1, 1], 5000)) * tick,
             (k[:3000] + rng.random(3000)) * tick, rng.choice([0.0, 1e-300, 5e-324, -0.0], 50),
             np.array([np.nan, np.inf, -np.inf, 1e15, -3e14, 2.0**60])]
    x = np.concatenate(parts)
    rng.shuffle(x)
    x = x.astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        eps = 2.0**-23 if dtype == np.float32 else 2.0**-52
        want = plain_count(x[np.isfinite(x)], tick, eps)
    got, first = _core.count_off_grid(x, tick, 1)
    assert got == want
    assert got > 0 and plain_count(x[first:first + 1], tick, eps) == 1 and plain_count(x[:first], tick, eps) == 0
    assert _core.count_off_grid(x, tick, 0) == (got, first)  # every core: the same count and first


def _engine_grid_inputs(rng, tick, dtype, n):
    k = rng.integers(3000, 5000, n).astype(np.float64)
    x = k * tick
    bad = rng.choice(n, 7, replace=False)  # off the grid, spread over blocks and sessions
    x[bad] += tick * np.array([0.5, 0.25, 0.3, 1e-3, 0.49, 0.125, 0.7])[: bad.size]
    return x.astype(dtype)


@pytest.mark.parametrize("tick,tpr", [(0.25, 1), (0.25, 4), (0.1, 1), (1 / 32, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2])
def test_25_engine_folds_the_grid_count_into_binning(tick, tpr, dtype, threads):
    # the binning's own pass proves blocks on the grid (power-of-two tick) and counts the others
    # exactly: the count and the first index equal the plain rule, on every path (blocked trades,
    # the per-row loop, bars of each distribution), any thread count
    rng = np.random.default_rng(int(tick * 997) + tpr + (dtype == np.float32))
    n = 30000
    eps = 2.0**-23 if dtype == np.float32 else 2.0**-52
    offsets = np.array([0, 1, 4000, 4000, 12000, 29999, n], dtype=np.int64)
    opts = _core.Options(tick_size=tick, ticks_per_row=tpr, snap=True, threads=threads)
    price = _engine_grid_inputs(rng, tick, dtype, n)
    vol = rng.integers(1, 9, n).astype(np.float32)
    r = _core.profile_trades(price, vol, offsets, None, opts)
    assert r.off_grid == plain_count(price, tick, eps) == 7
    k, i = r.first_off_grid
    assert k == 0 and plain_count(price[i:i + 1], tick, eps) == 1 and plain_count(price[:i], tick, eps) == 0
    close = _engine_grid_inputs(rng, tick, dtype, n)
    high = np.maximum(close, close + tick * 2).astype(dtype)
    low = np.minimum(close, close - tick * 3).astype(dtype)
    for dist in ("close", "hlc3", "uniform", "legacy"):
        o = _core.Options(tick_size=tick, ticks_per_row=tpr, snap=True, threads=threads, distribute=dist)
        r = _core.profile_bars(high, low, close, vol, None, offsets, None, o)
        want = sum(plain_count(a, tick, eps) for a in (high, low, close))
        assert r.off_grid == want >= 7, dist
        k, i = r.first_off_grid
        a = (high, low, close)[k]
        assert plain_count(a[i:i + 1], tick, eps) == 1 and plain_count(a[:i], tick, eps) == 0
        assert all(plain_count(b, tick, eps) == 0 for b in (high, low, close)[:k])
