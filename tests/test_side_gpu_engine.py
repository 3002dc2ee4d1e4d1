"""The aggressor side inside the GPU engine (one binning pass, three planes a row, gpu/side.cu): every side
field of a GPU call equals the CPU call's bit for bit. Skipped without a GPU build and a GPU.

Contract: docs/design/side-single-pass.md §4 (GPU) and docs/contract.md "Aggressor side": random sided trades
with ties, unknown sides, zero and fractional volumes, empty and one-trade sessions; host, torch (int8 and
other dtypes) sides; the waiting and the speculative path (a shape seen before), one group and several
(small memory_budget); bad side codes found by the GPU range pass, worded as vpoc._side words them and
reported before a bad price at an earlier row; developing dev_delta.
"""

from __future__ import annotations


import numpy as np
import pytest

from _gpu import speculation, torch_cuda
from test_side import ALL_FIELDS, random_trades

vpoc = pytest.importorskip("vpoc")
if not (hasattr(vpoc, "gpu_available") and vpoc.gpu_available()):
    pytest.skip("needs a vpoc GPU build and a GPU", allow_module_level=True)

from vpoc import _core  # noqa: E402
from vpoc import _side_profiles as sp  # noqa: E402

FIELDS = ALL_FIELDS + ("volume", "total_volume", "poc", "vah", "val", "low_row", "n_rows", "offsets")


needs_torch = pytest.mark.skipif(torch_cuda() is None, reason="needs PyTorch with a GPU")


def _same(gpu, cpu, names=FIELDS):
    for name in names:
        x, y = getattr(gpu, name), getattr(cpu, name)
        assert (x is None) == (y is None), name
        if x is not None:
            a, b = sp.host_array(x), sp.host_array(y)
            assert a.dtype == b.dtype, (name, a.dtype, b.dtype)
            np.testing.assert_array_equal(a, b, err_msg=name)


def _engine_made(prof):
    """The side fields came from the GPU engine (Result.side_fields), not the masked passes."""
    assert isinstance(prof.__dict__.get("_side"), sp.DeviceSideFields)


def wide_trades(seed, n=20000, S=7, frac=False, unknown=0.1):
    """Longer sessions (privatized shared rows, several copies), a narrow or a wide walk."""
    rng = np.random.default_rng(seed)
    spread = int(rng.choice([1, 3, 40]))
    t = 24000 + np.cumsum(rng.integers(-spread, spread + 1, n))
    price = t * 0.25
    volume = rng.integers(0, 50, n).astype(np.float64)
    if frac:
        volume += rng.integers(0, 8, n) * 0.125
    side = rng.choice(np.array([1, -1, 0], dtype=np.int8), n, p=[(1 - unknown) / 2, (1 - unknown) / 2, unknown])
    offsets = np.r_[0, np.sort(rng.integers(0, n, S - 1)), n].astype(np.int64)
    offsets[2] = offsets[1]  # an empty session
    return price, volume, side, offsets


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("kind", ["int", "float", "frac"])
def test_host_inputs_equal_cpu(seed, kind):
    price, volume, side, offsets = random_trades(seed)
    if kind == "float":
        volume = volume.astype(np.float32)
    if kind == "frac":
        volume = volume + 0.375
    for tie in ("center", "low", "high"):
        kw = dict(offsets=offsets, tick_size=0.25, side=side, poc_tie=tie, imbalance_ratio=1.5 + seed % 3,
                  stacked_imbalance_min=1 + seed % 3)
        gpu = vpoc.from_trades(price, volume, device="cuda", **kw)
        _engine_made(gpu)
        _same(gpu, vpoc.from_trades(price, volume, **kw))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("frac", [False, True])
@pytest.mark.parametrize("tpr", [1, 3])
def test_wide_sessions_equal_cpu(seed, frac, tpr):
    price, volume, side, offsets = wide_trades(seed, frac=frac)
    kw = dict(offsets=offsets, tick_size=0.25, ticks_per_row=tpr, side=side)
    _same(vpoc.from_trades(price, volume, device="cuda", **kw), vpoc.from_trades(price, volume, **kw))


@pytest.mark.parametrize("unknown", [0.0, 1.0])
def test_all_known_and_all_unknown(unknown):
    price, volume, side, offsets = wide_trades(3, unknown=unknown)
    kw = dict(offsets=offsets, tick_size=0.25, side=side)
    gpu = vpoc.from_trades(price, volume, device="cuda", **kw)
    _same(gpu, vpoc.from_trades(price, volume, **kw))
    if unknown == 0.0:  # every trade classified: volume = buy + sell exactly (whole volumes)
        np.testing.assert_array_equal(sp.host_array(gpu.buy_volume) + sp.host_array(gpu.sell_volume),
                                      sp.host_array(gpu.volume))
    else:
        assert not sp.host_array(gpu.buy_volume).any() and not sp.host_array(gpu.delta).any()


def test_odd_tick_and_one_row_sessions():
    """Tick 0.1 x 3 ticks a row (row prices not exact in binary): delta_poc_row is the rows pass's row."""
    rng = np.random.default_rng(5)
    n = 3000
    price = np.round((1000 + np.cumsum(rng.integers(-2, 3, n))) * 0.1, 1)
    volume = rng.integers(1, 9, n)
    side = rng.choice(np.array([1, -1, 0], dtype=np.int8), n)
    offsets = np.array([0, 1, 1, 2, 1500, n])
    kw = dict(offsets=offsets, tick_size=0.1, ticks_per_row=3, side=side)
    _same(vpoc.from_trades(price, volume, device="cuda", **kw), vpoc.from_trades(price, volume, **kw))


def test_no_trades():
    e = np.zeros(0)
    kw = dict(tick_size=0.25, side=np.zeros(0, np.int8))
    _same(vpoc.from_trades(e, e, device="cuda", **kw), vpoc.from_trades(e, e, **kw))
    kw["offsets"] = np.array([0, 0, 0])
    _same(vpoc.from_trades(e, e, device="cuda", **kw), vpoc.from_trades(e, e, **kw))


@pytest.mark.parametrize("frac", [False, True])
def test_developing_dev_delta(frac):
    price, volume, side, offsets = wide_trades(11, n=4000, frac=frac)
    kw = dict(offsets=offsets, tick_size=0.25, side=side, developing=True)
    _same(vpoc.from_trades(price, volume, device="cuda", **kw), vpoc.from_trades(price, volume, **kw),
          FIELDS + ("dev_poc", "dev_vah", "dev_val"))


@pytest.mark.parametrize("budget", [1 << 16, 1 << 20])
def test_several_groups(budget):
    """Host inputs streamed in several groups (the output rows regrow: three planes copied)."""
    price, volume, side, offsets = wide_trades(2, n=30000, S=40)
    kw = dict(offsets=offsets, tick_size=0.25, side=side)
    _same(vpoc.from_trades(price, volume, device="cuda", memory_budget=budget, **kw),
          vpoc.from_trades(price, volume, **kw))


@needs_torch
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("frac", [False, True])
def test_torch_sides_equal_cpu(seed, frac):
    """Device inputs; dev_delta by the engine's segmented scan (whole volumes) or the masked fallback."""
    torch = torch_cuda()
    price, volume, side, offsets = wide_trades(seed, n=5000, frac=frac)
    kw = dict(offsets=offsets, tick_size=0.25, developing=True)
    cpu = vpoc.from_trades(price, volume, side=side, **kw)
    t = lambda a: torch.as_tensor(a, device="cuda")  # noqa: E731
    for s in (t(side), side, t(side.astype(np.int64)), t(side.astype(np.float32))):
        gpu = vpoc.from_trades(t(price), t(volume), side=s, device="cuda", **kw)
        _engine_made(gpu)
        _same(gpu, cpu, FIELDS + ("dev_poc",))
        assert isinstance(gpu.delta, torch.Tensor) and gpu.delta.is_cuda
        assert gpu.imbalance_buy.dtype == torch.bool and gpu.stacked_imbalance_buy.dtype == torch.int64
        assert isinstance(gpu.buy_volume, _core.DeviceArray)
        assert isinstance(gpu.dev_delta, torch.Tensor) and gpu.dev_delta.is_cuda
        assert (gpu.__dict__["_side"].cols["dev_delta"] is None) == frac  # the engine's scan: whole volumes


@needs_torch
def test_speculative_repeated_shapes():
    """A shape seen before bins without reading its layout back; sided and plain calls of one shape keep
    apart (shape_key); integer then fractional volumes; rows outgrowing the hint rerun."""
    torch = torch_cuda()
    t = lambda a: torch.as_tensor(a, device="cuda")  # noqa: E731
    with speculation(True):
        for seed in range(4):
            price, volume, side, offsets = wide_trades(seed, n=8000, S=5)
            for vol in (volume, volume + 0.5):
                kw = dict(offsets=offsets, tick_size=0.25)
                before = vpoc.memory_stats("cuda")["speculative_calls"]
                for _ in range(3):
                    plain = vpoc.from_trades(t(price), t(vol), device="cuda", **kw)
                    gpu = vpoc.from_trades(t(price), t(vol), side=t(side), device="cuda", **kw)
                    _same(gpu, vpoc.from_trades(price, vol, side=side, **kw))
                    _same(plain, vpoc.from_trades(price, vol, **kw), ("volume", "poc", "vah", "val"))
                assert vpoc.memory_stats("cuda")["speculative_calls"] > before
        # a wider walk of the same shape: the hint is too small, the call reruns
        price, volume, side, offsets = wide_trades(0, n=8000, S=5)
        wide = price + np.arange(price.shape[0]) * 0.25
        _same(vpoc.from_trades(t(wide), t(volume), side=t(side), offsets=offsets, tick_size=0.25, device="cuda"),
              vpoc.from_trades(wide, volume, side=side, offsets=offsets, tick_size=0.25))


@needs_torch
@pytest.mark.parametrize("spec", [False, True])
def test_bad_side_codes_on_the_device(spec):
    """int8 GPU sides are checked by the range pass: the first bad code is a ValueError naming side[i] and
    its value (vpoc._side's words), before a bad price at an earlier row; other dtypes as before."""
    torch = torch_cuda()
    t = lambda a: torch.as_tensor(a, device="cuda")  # noqa: E731
    price, volume, side, offsets = wide_trades(1, n=3000, S=3)
    with speculation(spec):
        for _ in range(2):  # the second call of the shape speculates
            vpoc.from_trades(t(price), t(volume), side=t(side), offsets=offsets, tick_size=0.25, device="cuda")
        for bad_value in (5, 2, -2, 127, -128):
            s = side.copy()
            s[1234] = bad_value
            s[2000] = 3
            with pytest.raises(ValueError, match=r"side\[1234\]") as e:
                vpoc.from_trades(t(price), t(volume), side=t(s), offsets=offsets, tick_size=0.25, device="cuda")
            assert str(bad_value) in str(e.value)
            p = price.copy()
            p[10] = np.nan  # an earlier bad price: the side is reported first (as the CPU's order)
            with pytest.raises(ValueError, match=r"side\[1234\]"):
                vpoc.from_trades(t(p), t(volume), side=t(s), offsets=offsets, tick_size=0.25, device="cuda")
            with pytest.raises(ValueError, match=r"side\[1234\]"):  # the CPU call says the same
                vpoc.from_trades(p, volume, side=s, offsets=offsets, tick_size=0.25)
        # a good side and a bad price: the price's error, as the CPU's
        p = price.copy()
        p[10] = np.nan
        with pytest.raises(ValueError, match=r"price\[10\]"):
            vpoc.from_trades(t(p), t(volume), side=t(side), offsets=offsets, tick_size=0.25, device="cuda")
        # several groups of device inputs: a later group's bad side before an earlier group's bad price
        s = side.copy()
        s[2900] = 9
        with pytest.raises(ValueError, match=r"side\[2900\]"):
            vpoc.from_trades(t(p), t(volume), side=t(s), offsets=np.linspace(0, 3000, 301).astype(np.int64),
                             tick_size=0.25, device="cuda", memory_budget=1 << 14)
        with pytest.raises(TypeError, match="boolean"):
            vpoc.from_trades(t(price[:3]), t(volume[:3]), side=t(np.array([True, False, True])), tick_size=0.25,
                             device="cuda")
        with pytest.raises(ValueError, match=r"side\[1\]"):  # int64 on the device: checked before the engine
            vpoc.from_trades(t(price[:3]), t(volume[:3]), side=t(np.array([1, 5, 0])), tick_size=0.25, device="cuda")


@needs_torch
def test_bad_side_on_a_dropped_row():
    """session= keeps some rows: the whole int8 GPU side column is checked first, a dropped row's bad code
    too, named by its input row (design §2 b; the host twin is test_side_sessions')."""
    from vpoc import sessions as vs

    torch = torch_cuda()
    t = lambda a: torch.as_tensor(a, device="cuda")  # noqa: E731
    n = 12
    ts = np.datetime64("2024-01-02T12:00", "ns") + np.arange(n) * np.timedelta64(1, "h")
    s = vs.rth(ts, calendar=None)  # keeps input rows 3..9
    price = 100.0 + np.arange(n) * 0.25
    for row in (0, 5):
        side = np.ones(n, dtype=np.int8)
        side[row] = 7
        with pytest.raises(ValueError, match=r"side\[%d\]" % row):
            vpoc.from_trades(t(price), t(np.ones(n)), session=s, tick_size=0.25, side=t(side), device="cuda")


@needs_torch
def test_strided_and_one_session_device_sides():
    """A strided int8 view (made contiguous for the engine) and one long session (dev_delta's scan over
    many chunks of one block)."""
    torch = torch_cuda()
    t = lambda a: torch.as_tensor(a, device="cuda")  # noqa: E731
    price, volume, side, _ = wide_trades(6, n=20000)
    twice = np.repeat(side, 2)
    kw = dict(tick_size=0.25, developing=True)
    gpu = vpoc.from_trades(t(price), t(volume), side=t(twice)[::2], device="cuda", **kw)
    _same(gpu, vpoc.from_trades(price, volume, side=side, **kw), FIELDS + ("dev_poc",))
