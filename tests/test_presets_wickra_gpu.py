"""GPU == CPU bit for bit for bins=N (preset="wickra", accumulate 'exact' / 'sequential', both reports).

Skipped unless vpoc.gpu_available() (a GPU build on a machine with a GPU), as tests/test_presets_gpu.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc

if not vpoc.gpu_available():
    pytest.skip(f"no GPU: vpoc.gpu_available() is False (backends={vpoc.backends()})", allow_module_level=True)

from test_presets_wickra import LEVEL_FIELDS, random_sessions  # noqa: E402

FIELDS = LEVEL_FIELDS + ("offsets", "volume", "low_row", "bin_low", "bin_width")


def same(a, b):
    assert b.device.startswith("cuda")
    b = b.cpu()
    for k in FIELDS:
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)


@pytest.mark.parametrize("seed", range(40))
def test_bins_cpu_equals_gpu(seed):
    rng = np.random.default_rng(seed)
    high, low, close, vol, off = random_sessions(rng)
    kw = dict(offsets=off, tick_size=0.01, bins=int(rng.choice([1, 3, 24, 50, 500])),
              value_area=float(rng.choice([0.7, 0.5, 1.0])))
    for extra in (dict(preset="wickra"), dict(preset="wickra", bin_report="centers"), dict(), dict(va_method="single")):
        a = vpoc.from_bars(high, low, close, vol, **kw, **extra)
        same(a, vpoc.from_bars(high, low, close, vol, device="cuda", **kw, **extra))
        t = vpoc.from_trades(low, vol, **kw, **extra)
        same(t, vpoc.from_trades(low, vol, device="cuda", **kw, **extra))


def test_bins_gpu_many_sessions_and_dtypes():
    rng = np.random.default_rng(3)
    parts = [random_sessions(rng) for _ in range(200)]
    high, low, close, vol = (np.concatenate([p[k] for p in parts]) for k in range(4))
    starts = np.cumsum([0] + [int(p[4][-1]) for p in parts])
    off = np.concatenate([[0]] + [p[4][1:] + starts[k] for k, p in enumerate(parts)]).astype(np.int64)
    for dt in (np.float32, np.float64):
        h, lo, c = (x.astype(dt) for x in (high, low, close))
        for v in (vol, np.floor(vol).astype(np.int64), vol.astype(np.float32)):
            a = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.01, preset="wickra", bins=37)
            same(a, vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.01, preset="wickra", bins=37, device="cuda"))


def test_bins_gpu_device_inputs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    high, low, close, vol, off = random_sessions(rng)
    a = vpoc.from_bars(high, low, close, vol, offsets=off, tick_size=0.01, preset="wickra", bins=20)
    g = [torch.tensor(x, device="cuda") for x in (high, low, close, vol)]
    same(a, vpoc.from_bars(*g, offsets=off, tick_size=0.01, preset="wickra", bins=20, device="cuda"))


@pytest.mark.parametrize("window", [None, 1, 7])
@pytest.mark.parametrize("accumulate", ["sequential", "exact"])
def test_bins_gpu_developing(window, accumulate):
    rng = np.random.default_rng(9)
    high, low, close, vol, off = random_sessions(rng)
    kw = dict(offsets=off, tick_size=0.01, bins=24, accumulate=accumulate, developing=True, window=window,
              va_method="single", poc_tie="low")
    a = vpoc.from_bars(high, low, close, vol, **kw)
    with pytest.raises(ValueError, match="memory_budget"):  # not even one row's rebuild fits
        vpoc.from_bars(high, low, close, vol, device="cuda", memory_budget=1, **kw)
    for budget in (6000, 1 << 28):  # a row or two per batch (inputs ~5 KB), all rows in one
        b = vpoc.from_bars(high, low, close, vol, device="cuda", memory_budget=budget, **kw).cpu()
        for k in ("dev_poc", "dev_vah", "dev_val") + LEVEL_FIELDS:
            np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)


def test_bins_gpu_bad_rows():
    with pytest.raises(ValueError, match=r"high\[1\]"):
        vpoc.from_bars([2.0, 1.0], [1.0, 1.5], [1.5, 1.2], [1.0, 1.0], tick_size=0.01, bins=3, device="cuda")
    with pytest.raises(ValueError, match=r"volume\[0\]"):
        vpoc.from_trades([2.0], [-1.0], tick_size=0.01, preset="wickra", device="cuda")
