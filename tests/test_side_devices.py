"""Aggressor-side profiles on other arrays and devices: the torch code path of the side fields (run on CPU
tensors here), and GPU calls equal to the CPU bit for bit (skipped without a GPU build and device).

Contract: every side field of a GPU call, with host, torch or device side inputs, equals the CPU call's
exactly; side values on the device are checked there and worded as vpoc._side words them.
"""

from __future__ import annotations


import numpy as np
import pytest

from _gpu import needs_gpu, torch_cuda
from test_side import ALL_FIELDS, random_bars, random_trades

vpoc = pytest.importorskip("vpoc")

from vpoc import _side_profiles as sp  # noqa: E402


# --------------------------------------------------------------------------- the library path (torch on the CPU)


def test_masked_path_and_torch_rows_equal_numpy():
    """The masked engine passes the GPU path runs (buy / sell passes, then the C++ side epilogue
    _core.side_levels), the epilogue on torch CPU tensors, and dev_delta in numpy and in torch: the same
    values as the CPU call's one C++ side pass (cpu/side.cpp)."""
    torch = pytest.importorskip("torch")
    price, volume, side, offsets = random_trades(6, n_sessions=7)
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, side=side, developing=True)
    plain = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, developing=True)
    opts = vpoc._core.Options(tick_size=0.25, developing=True)
    codes = sp.trade_side(side, volume, price, sp.side_rules(None, None))
    ref = sp._engine_trade_sides(plain, codes, sp.side_rules(None, None), volume, price, offsets, None, opts, None,
                                 None).__dict__["_side"]
    t = torch.as_tensor
    got = vpoc._core.side_levels(t(prof.offsets), t(prof.low_row), t(prof.buy_volume), t(prof.sell_volume),
                                 prof.row_size, opts, 3.0, 3, buy_total=t(prof.buy_total), sell_total=t(prof.sell_total))
    for name in ALL_FIELDS:
        np.testing.assert_array_equal(sp.host_array(ref.field(name)), getattr(prof, name), err_msg=name)
        if name in got:
            np.testing.assert_array_equal(got[name], getattr(prof, name), err_msg=name)
    for vol in (volume, volume + 0.5):
        buy, sell = vol * (side == 1), vol * (side == -1)
        want = sp._dev_delta(sp._Lib(), buy, sell, offsets)
        lib = sp._Lib(torch.zeros(1))
        got = sp._dev_delta(lib, torch.as_tensor(buy), torch.as_tensor(sell), offsets)
        assert isinstance(got, torch.Tensor)
        np.testing.assert_array_equal(got.numpy(), want)


# --------------------------------------------------------------------------- GPU (skipped without one)




def _same(a, b, names=ALL_FIELDS):
    for name in names:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_array_equal(sp.host_array(x), sp.host_array(y), err_msg=name)


@needs_gpu
@pytest.mark.parametrize("seed", range(6))
def test_gpu_host_inputs_bit_equal(seed):
    price, volume, side, offsets = random_trades(seed)
    kw = dict(offsets=offsets, tick_size=0.25, side=side, developing=True)
    _same(vpoc.from_trades(price, volume, device="cuda", **kw), vpoc.from_trades(price, volume, **kw))
    fvol = volume + 0.25
    _same(vpoc.from_trades(price, fvol, device="cuda", **kw), vpoc.from_trades(price, fvol, **kw))


@needs_gpu
@pytest.mark.parametrize("distribute", ["uniform", "close", "legacy"])
def test_gpu_bars_bit_equal(distribute):
    high, low, close, volume, buy, sell, offsets = random_bars(3)
    kw = dict(offsets=offsets, tick_size=0.25, distribute=distribute, buy_volume=buy, sell_volume=sell,
              developing=True)
    _same(vpoc.from_bars(high, low, close, volume, device="cuda", **kw), vpoc.from_bars(high, low, close, volume, **kw))


@needs_gpu
@pytest.mark.skipif(torch_cuda() is None, reason="needs PyTorch with a GPU")
@pytest.mark.parametrize("seed", range(4))
def test_gpu_torch_inputs_bit_equal(seed):
    torch = torch_cuda()
    price, volume, side, offsets = random_trades(seed)
    kw = dict(offsets=offsets, tick_size=0.25, developing=True)
    cpu = vpoc.from_trades(price, volume, side=side, **kw)
    t = lambda a: torch.as_tensor(a, device="cuda")  # noqa: E731
    for s in (t(side), side, t(side.astype(np.float32))):
        gpu = vpoc.from_trades(t(price), t(volume), side=s, device="cuda", **kw)
        _same(gpu, cpu)
        assert isinstance(gpu.delta, torch.Tensor) and gpu.delta.is_cuda  # derived on the device
    high, low, close, vol, buy, sell, offs = random_bars(seed)
    bkw = dict(offsets=offs, tick_size=0.25, developing=True)
    _same(vpoc.from_bars(t(high), t(low), t(close), t(vol), buy_volume=t(buy), sell_volume=t(sell), device="cuda",
                         **bkw),
          vpoc.from_bars(high, low, close, vol, buy_volume=buy, sell_volume=sell, **bkw))
    with pytest.raises(ValueError, match=r"side\[1\]"):
        vpoc.from_trades(t(price[:3]), t(volume[:3]), side=t(np.array([1, 5, 0])), tick_size=0.25, device="cuda")
    with pytest.raises(TypeError, match="boolean"):
        vpoc.from_trades(t(price[:3]), t(volume[:3]), side=t(np.array([True, False, True])), tick_size=0.25,
                         device="cuda")
