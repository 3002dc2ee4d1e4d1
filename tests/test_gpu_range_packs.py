"""The GPU trades range pass reads prices in 16-byte packs where a session's slice is aligned, one price
a load in the unaligned head and the tail (gpu/histogram.cu trade_range_kernel): every split gives the CPU's result.

Contract: float32 / float64 prices as torch views at every misalignment (0-3 elements), sessions of 0-4099
trades, a bad price (NaN, off the grid) in the head, a pack or the tail of a session: the GPU names the same
first bad row as the CPU, and valid inputs give the CPU's profile bit for bit (whole volumes). Each checked
call follows a good call of its shape, so it speculates (the path whose range pass reads packs: the first
off-grid row is its own; a NaN makes it run again on the waiting path, which names the row). GPU only.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from _gpu import torch_cuda

vpoc = pytest.importorskip("vpoc")
if not (hasattr(vpoc, "gpu_available") and vpoc.gpu_available()):
    pytest.skip("needs a vpoc GPU build and a GPU", allow_module_level=True)
torch = torch_cuda()
if torch is None:
    pytest.skip("needs PyTorch with a GPU (misaligned device views)", allow_module_level=True)

TICK = 0.25
FIELDS = ("poc", "vah", "val", "poc_row", "vah_row", "val_row", "low_row", "n_rows", "total_volume",
          "va_volume", "offsets", "volume")


def trades(seed, dtype):
    rng = np.random.default_rng(seed)
    sizes = rng.choice([0, 1, 2, 3, 5, 7, 17, 64, 1000, 4099], size=int(rng.integers(3, 12)))
    n = int(sizes.sum())
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    price = ((4000 + np.cumsum(rng.integers(-3, 4, n))) * TICK).astype(dtype)
    volume = rng.integers(1, 30, n).astype(np.float64)
    return price, volume, offsets


def on_device(price, shift):
    """``price`` in GPU memory starting ``shift`` elements past a 256-byte aligned allocation."""
    t = torch.zeros(len(price) + 8, dtype=torch.float32 if price.dtype == np.float32 else torch.float64,
                    device="cuda")
    v = t[shift:shift + len(price)]
    v.copy_(torch.from_numpy(price))
    assert v.data_ptr() % 16 == (shift * price.itemsize) % 16
    return v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shift", range(4))
@pytest.mark.parametrize("seed", range(3))
def test_valid_prices_at_every_alignment_equal_the_cpu(dtype, shift, seed):
    price, volume, offsets = trades(seed, dtype)
    cpu = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK)
    dev = (on_device(price, shift), torch.from_numpy(volume).cuda())
    vpoc.from_trades(*dev, offsets=offsets, tick_size=TICK, device="cuda")  # a shape's first call waits
    g = vpoc.from_trades(*dev, offsets=offsets, tick_size=TICK, device="cuda").cpu()  # then it speculates: packs
    for f in FIELDS:
        a, b = np.asarray(getattr(g, f)), np.asarray(getattr(cpu, f))
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), f


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shift", range(4))
@pytest.mark.parametrize("where", ["head", "pack", "tail"])
@pytest.mark.parametrize("bad", ["nan", "off_grid"])
def test_first_bad_price_named_as_the_cpu_names_it(dtype, shift, where, bad):
    price, volume, offsets = trades(7, dtype)
    # a good call of the shape first: the checked call then takes the speculative path, whose range pass
    # reads the packs (a shape's first call waits, with volumes checked in the scalar loop)
    vpoc.from_trades(on_device(price, shift), torch.from_numpy(volume).cuda(), offsets=offsets, tick_size=TICK,
                     device="cuda")
    sizes = np.diff(offsets)
    s = int(np.argmax(sizes))  # the longest session: it has a head, packs and a tail at any alignment
    a, e = int(offsets[s]), int(offsets[s + 1])
    assert e - a >= 64
    i = {"head": a, "pack": a + (e - a) // 2, "tail": e - 1}[where]
    price = price.copy()
    price[i] = np.nan if bad == "nan" else price[i] + dtype(0.1)
    price[min(i + 5, len(price) - 1)] = np.nan if bad == "nan" else price[i]  # a later bad row too: the first is named
    token = f"price[{i}]"
    dev = (on_device(price, shift), torch.from_numpy(volume).cuda())
    if bad == "nan":
        with pytest.raises(ValueError) as cpu_err:
            vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK)
        with pytest.raises(ValueError) as gpu_err:
            vpoc.from_trades(*dev, offsets=offsets, tick_size=TICK, device="cuda")
        assert token in str(cpu_err.value), cpu_err.value
        assert token in str(gpu_err.value), (gpu_err.value, cpu_err.value)
        return
    # a few prices off the grid: snapped, with a warning naming the first (both engines)
    with pytest.warns(UserWarning, match=re.escape(token)):
        cpu = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK)
    with pytest.warns(UserWarning, match=re.escape(token)):
        g = vpoc.from_trades(*dev, offsets=offsets, tick_size=TICK, device="cuda").cpu()
    for f in FIELDS:
        assert np.array_equal(np.asarray(getattr(g, f)), np.asarray(getattr(cpu, f)), equal_nan=True), f
