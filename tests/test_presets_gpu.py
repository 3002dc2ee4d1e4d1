"""GPU == CPU bit for bit for preset= and the peer-rule keywords (va_rows='touched' pass, compare / stop / tie rules).

Skipped unless vpoc.gpu_available() (a GPU build on a machine with a GPU), as tests/test_gpu.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc

if not vpoc.gpu_available():
    pytest.skip(f"no GPU: vpoc.gpu_available() is False (backends={vpoc.backends()})", allow_module_level=True)

from test_presets import FIELDS, RULES, draw_rules, sessions  # noqa: E402


def same(a, b):
    b = b.cpu()
    for k in FIELDS:
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)


@pytest.mark.parametrize("seed", range(40))
def test_trades_rules_cpu_equals_gpu(seed):
    rng = np.random.default_rng(seed)
    price, vol, off = sessions(rng, 0.25)
    rules = draw_rules(rng)
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, **rules)
    same(a, vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, device="cuda", **rules))


@pytest.mark.parametrize("distribute", ["close", "hlc3", "uniform"])
@pytest.mark.parametrize("seed", range(20))
def test_bars_rules_cpu_equals_gpu(seed, distribute):
    rng = np.random.default_rng(500 + seed)
    close, vol, off = sessions(rng, 0.25)
    high = close + rng.integers(0, 4, size=close.size) * 0.25
    low = close - rng.integers(0, 4, size=close.size) * 0.25
    rules = draw_rules(rng)
    kw = dict(offsets=off, tick_size=0.25, distribute=distribute, **rules)
    same(vpoc.from_bars(high, low, close, vol, **kw), vpoc.from_bars(high, low, close, vol, device="cuda", **kw))


@pytest.mark.parametrize("budget", [1 << 20, 256 << 20])
def test_touched_pass_in_pieces(budget):
    """Many sessions and one wider than a small budget's slot: the touched pass runs in pieces."""
    rng = np.random.default_rng(7)
    lens = [0, 1, 3, 20000, 5, 0, 700] * 3
    off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    n = int(off[-1])
    price = (400 + rng.integers(0, 200, size=n) * np.where(rng.random(n) < 0.3, 3, 1)) * 0.25
    vol = rng.integers(0, 3, size=n) * 10.0
    kw = dict(offsets=off, tick_size=0.25, preset="marketprofile")
    same(vpoc.from_trades(price, vol, **kw), vpoc.from_trades(price, vol, device="cuda", memory_budget=budget, **kw))


def test_touched_on_device_inputs():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs PyTorch with a GPU")
    rng = np.random.default_rng(8)
    price, vol, off = sessions(rng, 0.25)
    kw = dict(offsets=off, tick_size=0.25, preset="marketprofile")
    a = vpoc.from_trades(price, vol, **kw)
    same(a, vpoc.from_trades(torch.as_tensor(price, device="cuda"), torch.as_tensor(vol, device="cuda"), device="cuda",
                             **kw))


@pytest.mark.parametrize("seed", range(6))
def test_developing_rules_cpu_equals_gpu(seed):
    rng = np.random.default_rng(900 + seed)
    price, vol, off = sessions(rng, 0.25)
    rules = draw_rules(rng)  # va_rows='touched' included: the developing series runs as one window
    for window in (None, 4):
        kw = dict(offsets=off, tick_size=0.25, developing=True, window=window, **rules)
        a = vpoc.from_trades(price, vol, **kw)
        b = vpoc.from_trades(price, vol, device="cuda", **kw).cpu()
        for k in ("dev_poc", "dev_val", "dev_vah"):
            np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)


def test_every_rule_value_is_drawn():
    assert all(len(v) >= 2 for v in RULES.values())


@pytest.mark.parametrize("seed", range(20))
def test_lean_rules_cpu_equals_gpu(seed):
    """poc_tie='mid_floor', price_label, va_target (whole volumes): batch and developing (with and
    without a window), trades and preset='lean' bars."""
    from test_presets_lean import RULES as LEAN_RULES
    rng = np.random.default_rng(3000 + seed)
    price, vol, off = sessions(rng, 0.05)
    vol = np.floor(vol)  # va_target='decimal' needs whole volumes
    rules = {k: v[int(rng.integers(0, len(v)))] for k, v in LEAN_RULES.items()}
    kw = dict(offsets=off, tick_size=0.05, **rules)
    same(vpoc.from_trades(price, vol, **kw), vpoc.from_trades(price, vol, device="cuda", **kw))
    for window in (None, 3):
        d = dict(kw, developing=True, window=window)
        a = vpoc.from_trades(price, vol, **d)
        b = vpoc.from_trades(price, vol, device="cuda", **d).cpu()
        for k in ("dev_poc", "dev_val", "dev_vah"):
            np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)
    lk = dict(offsets=off, tick_size=0.05, preset="lean")
    same(vpoc.from_bars(price, price, price, vol, **lk), vpoc.from_bars(price, price, price, vol, device="cuda", **lk))
    dk = dict(lk, developing=True)
    a = vpoc.from_bars(price, price, price, vol, **dk)
    b = vpoc.from_bars(price, price, price, vol, device="cuda", **dk).cpu()
    np.testing.assert_array_equal(a.dev_poc, b.dev_poc)
    np.testing.assert_array_equal(a.dev_vah, b.dev_vah)


def test_touched_pass_within_memory_budget():
    """The touched pass's flag per output row lives in the workspace: a budget too small for it is a
    ValueError naming memory_budget and va_rows (as va_method='greedy' is), not a larger workspace."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs PyTorch with a GPU")
    n = 200_000
    price = torch.as_tensor(1000.0 + np.arange(n) * 0.25, device="cuda")  # 200,000 rows in one session
    vol = torch.ones(n, dtype=torch.float64, device="cuda")
    with pytest.raises(ValueError, match=r"memory_budget=150000 .*va_rows='touched'"):
        vpoc.from_trades(price, vol, tick_size=0.25, va_rows="touched", device="cuda", memory_budget=150_000)
    ok = vpoc.from_trades(price, vol, tick_size=0.25, va_rows="touched", device="cuda", memory_budget=1 << 20)
    same(vpoc.from_trades(price.cpu().numpy(), vol.cpu().numpy(), tick_size=0.25, va_rows="touched"), ok)
