"""Windows across sessions on a GPU: the same levels as the CPU, bit for bit, and the same errors.

Contract: docs/contract.md "Rolling windows" (window_across_sessions): the GPU kernel replays each
session's tail as the CPU pass does (core/window.hpp, core/window_reach.hpp), so dev_poc / dev_vah /
dev_val equal the CPU's for host and GPU inputs, any memory_budget (small ones split the sessions into
batches, and a batch's first session replays rows of the previous batch), count and time windows, bins=.
Skips without a vpoc GPU build and a GPU (the CPU series is checked against brute force in
tests/test_window_across.py).
"""

from __future__ import annotations

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")

pytestmark = pytest.mark.skipif(not vpoc.gpu_available(), reason="needs a vpoc GPU build and a GPU")

VA_METHODS = ("cbot", "single", "greedy")
T0 = 1_709_650_800_000_000_000  # 2024-03-05 15:00 UTC, ns


from _compare import dev_levels as dev  # noqa: E402
from test_window import gpu_case  # noqa: E402


def layout(rng, n_sessions=60, far=False):
    """Many short sessions (empty and one-row ones among them) at drifting or far-apart levels."""
    sizes = rng.integers(0, 120, n_sessions)
    sizes[::7] = 0
    sizes[3::11] = 1
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(off[-1])
    level = np.repeat(np.arange(n_sessions) * (40 if far else 1), sizes)
    t = 16000 + level + np.cumsum(rng.integers(-2, 3, n))
    vol = rng.integers(0, 9, n).astype(np.float64) + (rng.random(n) < 0.3) * 0.5
    return off, t, vol


def same(gpu, cpu):
    assert np.array_equal(dev(gpu), dev(cpu))
    for k in ("poc", "vah", "val", "offsets", "volume", "n_rows", "low_row"):
        assert np.array_equal(np.asarray(getattr(gpu, k)), np.asarray(getattr(cpu, k)), equal_nan=True), k


@pytest.mark.parametrize("where", ["host", "torch"])
@pytest.mark.parametrize("api", ["trades", "uniform", "close"])
@pytest.mark.parametrize("va_method", VA_METHODS)
@pytest.mark.parametrize("budget", [None, 1 << 20, 300_000])
@pytest.mark.parametrize("window", [1, 37, 400])
def test_count_window_across_on_a_gpu_equals_the_cpu(where, api, va_method, budget, window):
    rng = np.random.default_rng(window)
    off, t, vol = layout(rng, far=window == 37)
    kw = dict(offsets=off, tick_size=0.25, developing=True, window=window, window_across_sessions=True,
              va_method=va_method)
    fn, cols, gcols = gpu_case(rng, t, vol, api, where, kw)
    gkw = dict(kw) if budget is None else dict(kw, memory_budget=budget)
    same(fn(*gcols, device="cuda", **gkw).cpu(), fn(*cols, **kw))


@pytest.mark.parametrize("api", ["trades", "bars"])
@pytest.mark.parametrize("budget", [None, 1 << 20, 300_000])
@pytest.mark.parametrize("span", ["90s", "45min", "6h"])
# the drawn bars repeat timestamps (steps of 0 s) and now and then a whole bar: counted twice on both sides
@pytest.mark.filterwarnings("ignore::vpoc.DuplicateRowsWarning")
def test_time_window_across_on_a_gpu_equals_the_cpu(api, budget, span):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(7)
    off, t, vol = layout(rng)
    n = int(off[-1])
    ts = T0 + np.cumsum(rng.choice(np.array([0, 1, 30, 600], dtype=np.int64) * 10**9, n))
    if api == "trades":
        frame = pd.DataFrame({"timestamp": pd.to_datetime(ts, utc=True), "price": t * 0.25, "volume": vol})
        fn = vpoc.from_trades
    else:
        low = t * 0.25
        high = low + rng.integers(0, 6, n) * 0.25
        frame = pd.DataFrame({"timestamp": pd.to_datetime(ts, utc=True), "open": low, "high": high, "low": low,
                              "close": low, "volume": vol})
        fn = vpoc.from_bars
    kw = dict(offsets=off, tick_size=0.25, developing=True, window=span, window_across_sessions=True)
    gkw = dict(kw) if budget is None else dict(kw, memory_budget=budget)
    same(fn(frame, device="cuda", **gkw).cpu(), fn(frame, **kw))


@pytest.mark.parametrize("window", [1, 4, 30])
def test_bins_across_on_a_gpu_equals_the_cpu(window):
    rng = np.random.default_rng(window)
    off, t, vol = layout(rng, n_sessions=12)
    low = t * 0.25 + rng.random(t.size) * 0.1
    high = low + rng.exponential(0.7, t.size)
    kw = dict(offsets=off, tick_size=0.01, preset="wickra", bins=9, developing=True, window=window,
              window_across_sessions=True)
    cpu = vpoc.from_bars(high, low, (high + low) / 2, vol, **kw)
    gpu = vpoc.from_bars(high, low, (high + low) / 2, vol, device="cuda", **kw).cpu()
    assert np.array_equal(dev(gpu), dev(cpu))


def test_gpu_errors_are_the_cpus():
    price = np.r_[np.full(5, 100.0), np.full(5, 200.0)]
    kw = dict(offsets=[0, 5, 10], tick_size=0.25, developing=True, window=4, window_across_sessions=True,
              max_rows=300)
    with pytest.raises(ValueError) as cpu:
        vpoc.from_trades(price, np.ones(10), **kw)
    with pytest.raises(ValueError) as gpu:
        vpoc.from_trades(price, np.ones(10), device="cuda", **kw)
    assert str(gpu.value) == str(cpu.value) and "the window of row 5 in session 1 (4 rows, reaching back 1 session)" in str(cpu.value)
    big = float(2**52 + 2**51)
    kw = dict(offsets=[0, 1, 2], tick_size=0.25, developing=True, window=2, window_across_sessions=True)
    with pytest.raises(ValueError) as cpu:
        vpoc.from_trades([100.0, 100.25], [big, big], **kw)
    with pytest.raises(ValueError) as gpu:
        vpoc.from_trades([100.0, 100.25], [big, big], device="cuda", **kw)
    assert str(gpu.value) == str(cpu.value) and "volume of the window of row 1 in session 1" in str(cpu.value)
    with pytest.raises(ValueError) as bins:
        vpoc.from_bars([10.0, 10.5], [9.0, 9.5], [9.5, 10.0], [big, big], bins=4, device="cuda",
                       **{**kw, "tick_size": 0.01})
    assert "volume of the window of bar 1 in session 1" in str(bins.value)
    high = np.array([10.0, 10.5, 11.0, 11.5])  # the window of row 1 and session 2 too heavy: the session first
    kw = dict(offsets=[0, 1, 2, 4], tick_size=0.01, developing=True, window=2, window_across_sessions=True)
    for b in (None, 4):
        with pytest.raises(ValueError) as cpu:
            vpoc.from_bars(high, high - 0.5, high - 0.25, np.full(4, big), bins=b, **kw)
        with pytest.raises(ValueError) as gpu:
            vpoc.from_bars(high, high - 0.5, high - 0.25, np.full(4, big), bins=b, device="cuda", **kw)
        assert str(gpu.value) == str(cpu.value) and str(cpu.value).startswith("volume of session 2 sums past")


@pytest.mark.parametrize("where", ["host", "torch"])
@pytest.mark.parametrize("api", ["trades", "uniform"])
@pytest.mark.parametrize("far", [1e7, 1e12])
def test_a_window_over_a_price_gap_is_too_wide_as_on_the_cpu(where, api, far):
    # 30 sessions near 100, then one far away: its scratch would span the gap (~4e12 rows at 1e12:
    # memory_budget's error before) and its first window is too wide; measured alone on the host
    rng = np.random.default_rng(3)
    sizes = np.r_[rng.integers(1, 20, 30), 8]
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    t = np.r_[400 + rng.integers(0, 4, off[-2]), int(far / 0.25) + rng.integers(0, 4, 8)].astype(np.float64)
    kw = dict(offsets=off, tick_size=0.25, developing=True, window=3, window_across_sessions=True)
    fn, cols, gcols = gpu_case(rng, t, np.ones(t.size), api, where, kw)
    with pytest.raises(ValueError) as cpu:
        fn(*cols, **kw)
    what = "row" if api == "trades" else "bar"
    assert f"the window of {what} {off[-2]} in session 30 (3 {what}s, reaching back 1 session) spans" in str(cpu.value)
    assert (cpu.value.index, cpu.value.session) == (off[-2], 30)
    for budget in (None, 300_000):
        gkw = dict(kw) if budget is None else dict(kw, memory_budget=budget)
        with pytest.raises(ValueError) as gpu:
            fn(*gcols, device="cuda", **gkw)
        assert str(gpu.value) == str(cpu.value)
    # a too-wide window of an earlier batch's session still comes first (its row is smaller)
    t2 = t.copy()
    t2[off[5]:off[6]] += 2000  # session 5 moved: its first window (and 6's) spans ~2000 rows
    kw["max_rows"] = 1000
    fn, cols, gcols = gpu_case(np.random.default_rng(3), t2, np.ones(t.size), api, where, kw)
    with pytest.raises(ValueError) as cpu:
        fn(*cols, **kw)
    assert f"the window of {what} {off[5]} in session 5 " in str(cpu.value)
    with pytest.raises(ValueError) as gpu:
        fn(*gcols, device="cuda", **kw)
    assert str(gpu.value) == str(cpu.value)


def test_a_tail_too_long_for_the_budget_names_memory_budget():
    # 60 sessions of 20 rows, then one of 1500; window=1001. At memory_budget=300_000 a host slot
    # holds ~2,290 trade rows (gpu/engine.cu layout_workspace: 7,424 bytes fixed for 61 sessions,
    # half of the rest to the series, 32 bytes per row per slot): every session fits with its tail
    # (<= 20 + 1000 rows) but the last (1500 + 1000 rows), which alone fits (window=1 runs)
    sizes = np.r_[np.full(60, 20), 1500]
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(off[-1])
    price = 100 + (np.arange(n) % 8) * 0.25  # rows 400..407: every window's scratch is 8 rows
    kw = dict(offsets=off, tick_size=0.25, developing=True, window_across_sessions=True, device="cuda",
              memory_budget=300_000)
    msg = (r"memory_budget=300000 is too small for window_across_sessions on session 60 \(its windows reach 8 rows "
           r"over sessions 10\.\.60 and 2500 input rows\); raise memory_budget, shorten window or pass the inputs "
           r"as GPU arrays")
    with pytest.raises(ValueError, match=msg) as e:
        vpoc.from_trades(price, np.ones(n), window=1001, **kw)
    assert getattr(e.value, "argument", "memory_budget") == "memory_budget"
    for window in (1, 1001):
        cpu = vpoc.from_trades(price, np.ones(n), offsets=off, tick_size=0.25, developing=True, window=window,
                               window_across_sessions=True)
        if window == 1:
            same(vpoc.from_trades(price, np.ones(n), window=1, **kw).cpu(), cpu)
        else:  # a larger budget runs the same call
            same(vpoc.from_trades(price, np.ones(n), window=1001, **dict(kw, memory_budget=1 << 20)).cpu(), cpu)
