"""GPU arrays of producers other than torch / CuPy (DLPack only, __cuda_array_interface__ only) copied to the host
where vpoc needs a few values there: the off-grid report and its tick suggestion, offsets, timestamps (review P2-5)."""

import re

import numpy as np
import pytest

import vpoc
from vpoc import _core

from test_gpu_input import CAI, OnlyCAI, OnlyDLPack, _cuda_torch
import _deps


def test_cpu_build_refuses_the_copy_clearly():
    if vpoc.gpu_available():
        pytest.skip("a CPU-only build's answer (this build has a GPU backend)")
    with pytest.raises(ValueError, match="no GPU backend"):
        _core.gpu_rows_to_host(CAI(), 0, 3, "price")


def test_host_data_and_torch_are_not_copied_here():
    with pytest.raises(TypeError, match="price"):
        _core.gpu_rows_to_host(np.arange(4.0), 0, 3, "price")
    torch = pytest.importorskip("torch")
    if vpoc.gpu_available() and torch.cuda.is_available():
        with pytest.raises(TypeError, match=re.escape("price: a torch tensor is copied by torch")):
            _core.gpu_rows_to_host(torch.arange(4.0, device="cuda"), 0, 3, "price")


@pytest.mark.parametrize("wrap", [OnlyDLPack, OnlyCAI])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_rows_equal_numpy_slices(wrap, dtype):
    torch = _cuda_torch()
    a = (np.arange(1000) * 3 - 700).astype(dtype)
    t = torch.from_numpy(a).cuda()
    for start, stop in ((0, 1000), (0, 1), (17, 300), (999, 1000), (5, 5), (900, 1 << 40), (2000, 3000),
                        (-10, 1000), (-3, -1), (-5000, 4)):
        got = _core.gpu_rows_to_host(wrap(t), start, stop, "price")
        assert got.dtype == a.dtype, (start, stop)
        np.testing.assert_array_equal(got, a[start:stop])


def _off_grid_prices():
    rng = np.random.default_rng(11)
    return 6000.0 + rng.integers(0, 400, 5000) * 0.1  # on 0.1, mostly off 0.25


@pytest.mark.parametrize("wrap", [OnlyDLPack, OnlyCAI])
def test_off_grid_report_names_the_row_and_suggests_the_tick(wrap):
    """Before: AttributeError / TypeError from the report's own host copies; now the torch path's message."""
    torch = _cuda_torch()
    price = _off_grid_prices()
    volume = np.ones(price.shape[0])
    p, v = torch.from_numpy(price).cuda(), torch.from_numpy(volume).cuda()
    with pytest.raises(ValueError) as want:
        vpoc.from_trades(p, v, tick_size=0.25, device="cuda")
    assert "tick_size=0.1" in str(want.value)
    with pytest.raises(ValueError) as got:
        vpoc.from_trades(wrap(p), wrap(v), tick_size=0.25, device="cuda")
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("wrap", [OnlyDLPack, OnlyCAI])
def test_offsets_on_the_gpu_through_other_producers(wrap):
    torch = _cuda_torch()
    rng = np.random.default_rng(4)
    price = 4000.0 + rng.integers(-40, 40, 3000) * 0.25
    volume = rng.integers(1, 50, 3000).astype(np.int64)
    offsets = np.array([0, 1000, 1000, 3000], np.int64)
    want = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25)
    g = vpoc.from_trades(torch.from_numpy(price).cuda(), torch.from_numpy(volume).cuda(),
                         offsets=wrap(torch.from_numpy(offsets).cuda()), tick_size=0.25, device="cuda")
    for k in ("poc", "vah", "val", "total_volume", "n_rows"):
        np.testing.assert_array_equal(np.asarray(getattr(g, k)), np.asarray(getattr(want, k)), err_msg=k)


@_deps.needs("pandas_market_calendars")
@pytest.mark.parametrize("wrap", [OnlyDLPack, OnlyCAI])
def test_timestamps_on_the_gpu_through_other_producers(wrap):
    torch = _cuda_torch()
    ts = np.datetime64("2026-03-02T15:00", "ns").astype(np.int64) + np.arange(0, 48 * 3600, 600) * 10**9
    want = vpoc.sessions.globex(ts, on_outside="drop")  # 48 h: the daily halts' rows are left out (counted)
    assert want.dropped_rows > 0
    for x in (wrap(torch.from_numpy(ts).cuda()), torch.from_numpy(ts).cuda()):
        got = vpoc.sessions.globex(x, on_outside="drop")
        np.testing.assert_array_equal(np.asarray(got.offsets), np.asarray(want.offsets))
        assert got.dropped_rows == want.dropped_rows
