"""The GPU range pass of trades takes each thread's lowest and highest valid price per session and
applies the ladder to those two only (a price's row is monotone in the price).

Contract: on the GPU, trades give the CPU engine's bits (host and torch inputs, float32 / float64,
a power-of-two tick and one that is not, negative prices, prices past the pass's fast range test
but still valid) and the CPU's exception for the first bad row, whichever column makes it bad.
Skipped without a GPU build and a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
if not (hasattr(vpoc, "gpu_available") and vpoc.gpu_available()):
    pytest.skip("needs a vpoc GPU build and a GPU", allow_module_level=True)

from _compare import assert_profiles_identical  # noqa: E402


def both(price, volume, offsets, tick, **kw):
    cpu = vpoc.from_trades(price, volume, offsets=offsets, tick_size=tick, **kw)
    gpu = vpoc.from_trades(price, volume, offsets=offsets, tick_size=tick, device="cuda", **kw)
    return cpu, gpu.cpu()


def same_error(price, volume, offsets, tick):
    with pytest.raises(Exception) as cpu:
        vpoc.from_trades(price, volume, offsets=offsets, tick_size=tick)
    with pytest.raises(Exception) as gpu:
        vpoc.from_trades(price, volume, offsets=offsets, tick_size=tick, device="cuda")
    assert type(gpu.value) is type(cpu.value)
    assert str(gpu.value) == str(cpu.value)
    return cpu.value


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tick", [0.25, 0.1, 1.0 / 3.0])
@pytest.mark.parametrize("seed", range(3))
def test_random_trades_equal_the_cpu(dtype, tick, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200_000))
    S = int(rng.integers(1, 40))
    t = int(rng.integers(-5000, 5000)) + np.cumsum(rng.integers(-3, 4, n))  # negative prices too
    price = (t * tick).astype(dtype)
    volume = rng.integers(0, 50, n).astype(np.float64)
    cuts = np.sort(rng.integers(0, n + 1, S - 1))
    offsets = np.concatenate([[0], cuts, [n]]).astype(np.int64)  # empty sessions and ties included
    cpu, gpu = both(price, volume, offsets, tick)
    assert_profiles_identical(gpu, cpu, f"{dtype.__name__} tick {tick} seed {seed}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_prices_past_the_fast_range_test_but_valid(dtype, sign):
    # tick 0.25: valid while |p / 0.25| < 2**52; the fast test stops 2**-20 short of that
    big = dtype(sign * 2.0**50 * (1.0 - 2.0**-22))
    assert abs(float(big) / 0.25) < 2.0**52
    price = np.array([big, big, 100.0, 100.25, big], dtype=dtype)
    volume = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    offsets = np.array([0, 2, 4, 5], dtype=np.int64)
    cpu, gpu = both(price, volume, offsets, 0.25)
    assert_profiles_identical(gpu, cpu, f"{dtype.__name__} {sign}")
    assert np.asarray(gpu.total_volume).tolist() == [3.0, 7.0, 5.0]


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "far", "negative volume", "nan volume"])
@pytest.mark.parametrize("where", [0, 777, 99_999])
def test_first_bad_row_is_the_cpus(bad, where):
    rng = np.random.default_rng(where)
    n = 100_000
    price = (16000 + np.cumsum(rng.integers(-1, 2, n))) * 0.25
    volume = rng.integers(1, 9, n).astype(np.float64)
    offsets = np.array([0, n // 3, n], dtype=np.int64)
    if bad.endswith("volume"):
        volume[where] = -1.0 if bad.startswith("negative") else np.nan
    else:
        price[where] = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf, "far": 2.0**60}[bad]
    # a later row bad the other way: the first one is reported
    if where + 5 < n:
        volume[where + 5] = -2.0
    err = same_error(price, volume, offsets, 0.25)
    assert str(where) in str(err)


def test_torch_inputs_equal_the_cpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():  # pragma: no cover - depends on the machine
        pytest.skip("needs PyTorch with a GPU")
    rng = np.random.default_rng(7)
    n = 300_000
    price = ((16000 + np.cumsum(rng.integers(-2, 3, n))) * 0.25).astype(np.float32)
    volume = rng.integers(0, 30, n).astype(np.float32)
    offsets = np.linspace(0, n, 12).astype(np.int64)
    cpu = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25)
    for _ in range(3):  # the first call waits for its layout; later ones bin before reading it
        gpu = vpoc.from_trades(torch.from_numpy(price).cuda(), torch.from_numpy(volume).cuda(), offsets=offsets,
                               tick_size=0.25, device="cuda")
        assert_profiles_identical(gpu.cpu(), cpu, "torch")
