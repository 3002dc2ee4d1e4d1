"""GPU sided bars and library columns: the masked buy / sell engine passes, then the C++ side epilogue on the
device (``_core.side_levels`` with device rows: gpu/side.cu side_levels_kernel), equal the CPU call bit for bit.

Contract: docs/design/side-single-pass.md §6 / §9 and docs/contract.md "Aggressor side": every distribute,
ties (balanced sessions), unknown-only and empty sessions, one-bar sessions, whole and fractional volumes,
several poc_tie / imbalance rules, host and torch inputs, developing; field types as documented (buy / sell
rows and the delta POC DeviceArrays, the rest in the inputs' library). Skipped without a GPU build and a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from _gpu import torch_cuda
from test_side import random_trades

vpoc = pytest.importorskip("vpoc")
if not (hasattr(vpoc, "gpu_available") and vpoc.gpu_available()):
    pytest.skip("needs a vpoc GPU build and a GPU", allow_module_level=True)

from test_side_gpu_engine import _same  # noqa: E402  (every field, dtype and value, of a GPU and a CPU call)
from vpoc import _core  # noqa: E402
from vpoc import _side_profiles as sp  # noqa: E402
needs_torch = pytest.mark.skipif(torch_cuda() is None, reason="needs PyTorch with a GPU")


def sided_bars(seed, frac=False):
    """Sessions: empty, one bar, random sided, unknown only (buy = sell = 0), balanced (buy = sell: ties in
    |buy - sell|), sided only in its second half; a narrow walk (stacked runs) or a wide one (gaps)."""
    rng = np.random.default_rng(seed)
    sizes = [0, 1, int(rng.integers(20, 60)), int(rng.integers(5, 30)), int(rng.integers(5, 30)), 0,
             int(rng.integers(10, 40))]
    n = sum(sizes)
    step = int(rng.choice([1, 4]))
    low = (24000 + np.cumsum(rng.integers(-step, step + 1, n))) * 0.25
    high = low + rng.integers(0, 7, n) * 0.25
    close = low + rng.integers(0, 2, n) * (high - low)
    volume = rng.integers(0, 300, n).astype(np.float64)
    if frac:
        volume += rng.integers(0, 8, n) * 0.125
    buy = np.floor(volume * rng.random(n))
    sell = np.floor((volume - buy) * rng.random(n))
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    a, b = offsets[3], offsets[4]
    buy[a:b] = sell[a:b] = 0  # unknown only: NaN / NO_ROW delta POC
    a, b = offsets[4], offsets[5]
    buy[a:b] = sell[a:b] = np.floor(volume[a:b] / 2)  # balanced: |buy - sell| = 0 on every row (a tie)
    a, b = offsets[6], offsets[7]
    m = (a + b) // 2
    buy[a:m] = sell[a:m] = 0
    if not frac:
        buy, sell, volume = buy.astype(np.int64), sell.astype(np.int64), volume.astype(np.int64)
    return high, low, close, volume, buy, sell, offsets


@pytest.mark.parametrize("distribute", ["uniform", "close", "hlc3", "legacy"])
@pytest.mark.parametrize("frac", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_bars_host_inputs_equal_cpu(distribute, frac, seed):
    high, low, close, volume, buy, sell, offsets = sided_bars(seed, frac)
    for tie, ratio, k in (("center", 3.0, 3), ("low", 1.5, 1), ("high", 2.0, 2)):
        kw = dict(offsets=offsets, tick_size=0.25, distribute=distribute, open=low, buy_volume=buy, sell_volume=sell,
                  poc_tie=tie, imbalance_ratio=ratio, stacked_imbalance_min=k, developing=True)
        gpu = vpoc.from_bars(high, low, close, volume, device="cuda", **kw)
        cpu = vpoc.from_bars(high, low, close, volume, **kw)
        _same(gpu, cpu)
        assert isinstance(gpu.buy_volume, _core.DeviceArray) and isinstance(gpu.delta_poc, _core.DeviceArray)
        assert isinstance(gpu.delta, np.ndarray) and gpu.imbalance_buy.dtype == np.bool_  # the inputs' library
        assert np.isnan(sp.host_array(gpu.delta_poc)[[0, 3]]).all()  # empty, unknown only


def test_bars_several_groups_and_tpr():
    """A small memory_budget (the passes in several groups) and ticks_per_row 2: still the CPU's bits."""
    high, low, close, volume, buy, sell, offsets = sided_bars(5)
    kw = dict(offsets=offsets, tick_size=0.25, ticks_per_row=2, buy_volume=buy, sell_volume=sell)
    _same(vpoc.from_bars(high, low, close, volume, device="cuda", memory_budget=1 << 16, **kw),
          vpoc.from_bars(high, low, close, volume, **kw))


@needs_torch
@pytest.mark.parametrize("distribute", ["uniform", "close", "hlc3", "legacy"])
@pytest.mark.parametrize("seed", range(2))
def test_bars_torch_inputs_equal_cpu(distribute, seed):
    torch = torch_cuda()
    high, low, close, volume, buy, sell, offsets = sided_bars(seed, frac=seed % 2 == 1)
    t = lambda a: torch.as_tensor(a, device="cuda")  # noqa: E731
    kw = dict(offsets=offsets, tick_size=0.25, distribute=distribute, developing=True)
    gpu = vpoc.from_bars(t(high), t(low), t(close), t(volume), buy_volume=t(buy), sell_volume=t(sell), device="cuda",
                         **kw)
    _same(gpu, vpoc.from_bars(high, low, close, volume, buy_volume=buy, sell_volume=sell, **kw))
    assert isinstance(gpu.delta, torch.Tensor) and gpu.delta.is_cuda  # zero-copy from the device epilogue
    assert gpu.imbalance_buy.dtype == torch.bool and gpu.imbalance_buy.is_cuda
    assert gpu.stacked_imbalance_sell.dtype == torch.int64 and gpu.stacked_imbalance_sell.is_cuda
    assert isinstance(gpu.buy_volume, _core.DeviceArray) and isinstance(gpu.delta_poc_row, _core.DeviceArray)
    assert isinstance(gpu.dev_delta, torch.Tensor) and gpu.dev_delta.is_cuda


@needs_torch
def test_bars_on_a_torch_stream():
    """torch inputs made on a side stream: the passes and the epilogue run on it (no race with the producer)."""
    torch = torch_cuda()
    high, low, close, volume, buy, sell, offsets = sided_bars(9)
    kw = dict(offsets=offsets, tick_size=0.25)
    want = vpoc.from_bars(high, low, close, volume, buy_volume=buy, sell_volume=sell, **kw)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = lambda a: torch.as_tensor(a, device="cuda") * 1  # noqa: E731  (made on s)
        gpu = vpoc.from_bars(t(high), t(low), t(close), t(volume), buy_volume=t(buy), sell_volume=t(sell),
                             device="cuda", **kw)
        _same(gpu, want)


@pytest.mark.parametrize("seed", range(4))
def test_side_levels_on_device_rows_equal_the_engine(seed):
    """_core.side_levels on the DeviceArrays of a GPU sided trades call (its own buy / sell rows and totals):
    the fields the GPU engine's one pass made, and the host epilogue's on host copies."""
    price, volume, side, offsets = random_trades(seed)
    volume = volume + (seed % 2) * 0.375
    kw = dict(offsets=offsets, tick_size=0.25, side=side, poc_tie=("center", "low", "high")[seed % 3])
    prof = vpoc.from_trades(price, volume, device="cuda", **kw)
    r = prof.__dict__["_result"]
    opts = _core.Options(tick_size=0.25, poc_tie=kw["poc_tie"])
    args = (r.offsets, r.low_row, prof.buy_volume, prof.sell_volume, prof.row_size, opts, 3.0, 3)
    cols = prof.__dict__["_side"].cols
    got = _core.side_levels(*args, buy_total=cols["buy_total"], sell_total=cols["sell_total"],
                            placement=_core.Placement(device=0))
    host = _core.side_levels(*(sp.host_array(a) for a in args[:4]), *args[4:],
                             buy_total=sp.host_array(cols["buy_total"]), sell_total=sp.host_array(cols["sell_total"]))
    assert sorted(got) == sorted(host)
    for name, x in got.items():
        assert isinstance(x, _core.DeviceArray), name
        a = sp.host_array(x)
        if name.startswith("imbalance_"):
            a = a.view(np.bool_)
        want = sp.host_array(getattr(prof, name))
        assert a.tobytes() == want.tobytes() and a.tobytes() == host[name].tobytes(), name
    torch = torch_cuda()
    if torch is not None:  # torch tensors (read by the binding, after torch's current stream) give the same
        t = lambda a: torch.as_tensor(sp.host_array(a), device="cuda")  # noqa: E731
        tg = _core.side_levels(*(t(a) for a in args[:4]), *args[4:], buy_total=t(cols["buy_total"]),
                               sell_total=t(cols["sell_total"]), placement=_core.Placement(device=0))
        for name, x in tg.items():
            assert sp.host_array(x).tobytes() == sp.host_array(got[name]).tobytes(), name
    with pytest.raises(TypeError, match="low_row"):
        _core.side_levels(r.offsets, sp.host_array(r.low_row), *args[2:], buy_total=cols["buy_total"],
                          sell_total=cols["sell_total"], placement=_core.Placement(device=0))


@needs_torch
@pytest.mark.parametrize("bad", ["past_end", "decreasing", "negative"])
def test_side_levels_on_device_rows_with_bad_offsets_stay_in_bounds(bad):
    """_core.side_levels on device rows whose row offsets are wrong (private API, never the engine's own):
    the sessions they break are taken as empty (NaN delta POC, no stacked run), nothing is read or written
    past the rows (compute-sanitizer memcheck runs this file), the other sessions keep their fields."""
    torch = torch_cuda()
    price, volume, side, offsets = random_trades(1)
    prof = vpoc.from_trades(price, volume, device="cuda", offsets=offsets, tick_size=0.25, side=side)
    r = prof.__dict__["_result"]
    off = sp.host_array(r.offsets).astype(np.int64)
    S, R = len(off) - 1, int(off[-1])
    assert S >= 2 and R > 0
    wrong = off.copy()
    s = S - 1  # the session the bad offsets break
    if bad == "past_end":
        wrong[-1] = R + 4096
    elif bad == "decreasing":
        wrong[-1] = max(int(off[-2]) - 7, -1) if off[-2] > 0 else -7
    else:
        wrong[-2], s = -4096, S - 2  # sessions S-2 (starts below 0) and S-1 (offsets run down) break
    opts = _core.Options(tick_size=0.25)
    cols = prof.__dict__["_side"].cols
    t = lambda a: torch.as_tensor(sp.host_array(a), device="cuda")  # noqa: E731
    got = _core.side_levels(t(wrong), r.low_row, prof.buy_volume, prof.sell_volume, prof.row_size, opts, 3.0, 3,
                            buy_total=cols["buy_total"], sell_total=cols["sell_total"],
                            placement=_core.Placement(device=0))
    torch.cuda.synchronize()
    poc = sp.host_array(got["delta_poc"])
    assert np.isnan(poc[s]) and sp.host_array(got["stacked_imbalance_buy"])[s] == 0
    good = _core.side_levels(r.offsets, r.low_row, prof.buy_volume, prof.sell_volume, prof.row_size, opts, 3.0, 3,
                             buy_total=cols["buy_total"], sell_total=cols["sell_total"],
                             placement=_core.Placement(device=0))
    keep = slice(0, S - 2)
    np.testing.assert_array_equal(poc[keep], sp.host_array(good["delta_poc"])[keep])


@pytest.mark.parametrize("seed", range(3))
def test_masked_trades_on_the_gpu_equal_the_engine(seed):
    """The masked path for trades (buy / sell engine passes on the GPU, then the device epilogue) gives the
    GPU engine's one-pass fields, host and (with torch) GPU inputs; the epilogue's columns are DeviceArrays."""
    price, volume, side, offsets = random_trades(seed)
    kw = dict(offsets=offsets, tick_size=0.25)
    opts = _core.Options(tick_size=0.25)
    rules = sp.side_rules(None, None)
    one = vpoc.from_trades(price, volume, side=side, device="cuda", **kw)
    plain = vpoc.from_trades(price, volume, device="cuda", **kw)
    codes = sp.trade_side(side, volume, price, rules)
    masked = sp._engine_trade_sides(plain, codes, rules, volume, price, offsets, None, opts, 1 << 28, None)
    f = masked.__dict__["_side"]
    assert isinstance(f, sp.DeviceSideFields) and isinstance(f.cols["delta_poc"], _core.DeviceArray)
    _same(masked, one, sp.SIDE_FIELDS[:-1])
    torch = torch_cuda()
    if torch is not None:
        t = lambda a: torch.as_tensor(a, device="cuda")  # noqa: E731
        tplain = vpoc.from_trades(t(price), t(volume), device="cuda", **kw)
        tmasked = sp._engine_trade_sides(tplain, t(codes), rules, t(volume), t(price), offsets, None, opts, 1 << 28,
                                         None)
        _same(tmasked, one, sp.SIDE_FIELDS[:-1])
        assert isinstance(tmasked.delta, torch.Tensor) and tmasked.delta.is_cuda
