"""Developing series on the GPU's block-per-session kernel (issue 26.4, core/developing_chunk.hpp) == the CPU bit for bit.

Skipped unless vpoc.gpu_available(). Sessions of many chunks (32 bars each), every rule the chunked kernel takes,
fractional volumes near the target, a batch whose widest session sends it to the one-thread kernel, float32 prices.
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc

if not vpoc.gpu_available():
    pytest.skip(f"no GPU: vpoc.gpu_available() is False (backends={vpoc.backends()})", allow_module_level=True)

DEV = ("dev_poc", "dev_vah", "dev_val")


def same_series(a, b, ctx=""):
    b = b.cpu() if hasattr(b, "cpu") else b
    for k in DEV:
        np.testing.assert_array_equal(np.asarray(getattr(a, k)), np.asarray(getattr(b, k)), err_msg=f"{k} {ctx}")


def both_bars(bars, **kw):
    args = (bars.high, bars.low, bars.close, bars.volume)
    cpu = vpoc.from_bars(*args, open=bars.open, developing=True, **kw)
    gpu = vpoc.from_bars(*args, open=bars.open, developing=True, device="cuda", **kw)
    same_series(cpu, gpu, str(kw))


RULES = dict(va_compare=("tie_up", "zero_absent"), va_stop=("reaches", "exceeds"), tie_tol=(1e-9, 0.0, 1e-3),
             poc_tie=("center", "low", "high", "mid_n2", "mid_floor"), va_method=("cbot", "single"),
             ticks_per_row=(1, 2, 3), value_area=(0.7, 0.5, 1.0))


@pytest.mark.parametrize("distribute", ["uniform", "close", "hlc3"])
@pytest.mark.parametrize("seed", range(6))
def test_chunked_bars_random_rules(distribute, seed):
    """390-bar sessions (13 chunks): random rules, the chunked kernel with and without Generic."""
    rng = np.random.default_rng(2600 + seed)
    bars = vpoc.synth.es_bars(n_sessions=9, bars_per_session=390, seed=seed)
    rules = {k: v[int(rng.integers(0, len(v)))] for k, v in RULES.items()}
    both_bars(bars, offsets=bars.offsets, tick_size=0.25, distribute=distribute, **rules)
    both_bars(bars, offsets=bars.offsets, tick_size=0.25, distribute=distribute)  # default rules


@pytest.mark.parametrize("seed", range(4))
def test_chunked_decimal_target_whole_volumes(seed):
    bars = vpoc.synth.es_bars(n_sessions=5, bars_per_session=200, seed=40 + seed)
    vol = np.floor(np.asarray(bars.volume, dtype=np.float64))
    for dist in ("close", "hlc3"):
        kw = dict(offsets=bars.offsets, tick_size=0.25, distribute=dist, va_target="decimal", poc_tie="mid_floor",
                  developing=True)
        a = vpoc.from_bars(bars.high, bars.low, bars.close, vol, **kw)
        b = vpoc.from_bars(bars.high, bars.low, bars.close, vol, device="cuda", **kw)
        same_series(a, b, dist)


def test_chunked_fractional_and_tiny_volumes():
    """Fractional volumes (float order matters in each walk), 2**-32-scale ones (one unit shows in a row's
    double), and all-zero sessions, in one batch."""
    rng = np.random.default_rng(5)
    bars = vpoc.synth.es_bars(n_sessions=6, bars_per_session=300, seed=6)
    n = len(bars.volume)
    vol = rng.random(n) * 1000.0
    s = np.searchsorted(bars.offsets, np.arange(n), side="right") - 1
    vol[s == 1] = rng.integers(1, 8, size=int((s == 1).sum())) * 2.0**-32
    vol[s == 2] = 0.0
    for method in ("cbot", "single"):
        kw = dict(offsets=bars.offsets, tick_size=0.25, distribute="uniform", va_method=method, developing=True)
        a = vpoc.from_bars(bars.high, bars.low, bars.close, vol, **kw)
        b = vpoc.from_bars(bars.high, bars.low, bars.close, vol, device="cuda", **kw)
        same_series(a, b, method)


@pytest.mark.parametrize("price_dtype", [np.float32, np.float64])
def test_chunked_long_trade_session(price_dtype):
    """One session of 50,000 trades (1,563 chunks) and two short ones; int32 volumes."""
    t = vpoc.synth.es_trades(50_000, 1, seed=9)
    price = np.asarray(t.price).astype(price_dtype)
    vol = np.asarray(t.volume).astype(np.int32)
    off = np.array([0, 3, 49_990, 50_000], dtype=np.int64)
    for method in ("cbot", "single"):
        kw = dict(offsets=off, tick_size=0.25, va_method=method, developing=True)
        same_series(vpoc.from_trades(price, vol, **kw), vpoc.from_trades(price, vol, device="cuda", **kw), method)


def test_wide_session_takes_the_one_thread_kernel():
    """A session of ~4,000 rows makes the batch's widest too wide for the chunked kernel's shared memory:
    the whole batch runs on the one-thread kernel, still equal; with a small budget the batches split
    and the narrow ones go back to the chunked kernel."""
    rng = np.random.default_rng(11)
    lens = [300, 2000, 50, 300]
    off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    n = int(off[-1])
    price = 5000.0 + rng.integers(0, 40, size=n) * 0.25
    price[off[1]:off[2]] = 5000.0 + np.arange(lens[1]) * 0.5  # 4,000 rows
    vol = rng.integers(1, 50, size=n).astype(np.float64)
    for budget in (256 << 20, 1 << 20):
        kw = dict(offsets=off, tick_size=0.25, developing=True)
        same_series(vpoc.from_trades(price, vol, **kw),
                    vpoc.from_trades(price, vol, device="cuda", memory_budget=budget, **kw), str(budget))


@pytest.mark.parametrize("va_rows", [None, "all"])
@pytest.mark.parametrize("preset", ["cbot", "marketprofile", "lean"])
def test_chunked_presets(preset, va_rows):
    """Every preset's rules; va_rows='all' sends the peer presets' rules (zero_absent, exceeds, tie_tol 0, mid_n2 /
    mid_floor, decimal target and labels) through the chunked kernel instead of the window kernel."""
    bars = vpoc.synth.es_bars(n_sessions=4, bars_per_session=250, seed=12)
    vol = np.floor(np.asarray(bars.volume, dtype=np.float64))
    kw = dict(offsets=bars.offsets, tick_size=0.25, preset=preset, va_rows=va_rows, developing=True)
    a = vpoc.from_bars(bars.high, bars.low, bars.close, vol, open=bars.open, **kw)
    same_series(a, vpoc.from_bars(bars.high, bars.low, bars.close, vol, open=bars.open, device="cuda", **kw), preset)
