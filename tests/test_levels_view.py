"""``Profiles.levels``: POC, VAH, VAL as one [S, 3] array (a zero-copy strided DeviceArray on a GPU, a
new array on the CPU), and DeviceArray's 2-D export (DLPack shape/strides, CAI strides, NumPy copies)."""

from __future__ import annotations

import gc
import pickle

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
from vpoc import _core  # noqa: E402

from test_device_array import KDLCPU, KDLCUDA, managed  # noqa: E402


def random_bars(seed, sessions=7):
    """Random bars in `sessions` sessions, one of them empty, one of a single bar at one price."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 40, sessions)
    sizes[2], sizes[4] = 0, 1
    n = int(sizes.sum())
    low = np.round(rng.uniform(4000, 4010, n) * 4) / 4
    high = low + rng.integers(0, 12, n) * 0.25
    high[int(sizes[:4].sum())] = low[int(sizes[:4].sum())]  # the one-bar session: one price
    close = np.minimum(high, low + rng.integers(0, 12, n) * 0.25)
    volume = rng.integers(0, 500, n).astype(np.float64)
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return high, low, close, volume, off


def expected_levels(prof):
    return np.stack([np.asarray(prof.poc), np.asarray(prof.vah), np.asarray(prof.val)], axis=1)


@pytest.mark.parametrize("seed", range(5))
def test_cpu_levels_are_poc_vah_val(seed):
    h, lo, c, v, off = random_bars(seed)
    prof = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.25)
    lv = prof.levels
    assert lv.shape == (prof.n_sessions, 3) and lv.dtype == np.float64
    np.testing.assert_array_equal(lv, expected_levels(prof))  # NaN rows (the empty session) equal too
    assert np.isnan(lv[2]).all() and not np.isnan(lv[0]).any()
    assert prof.levels is lv  # made once


def test_levels_of_no_session_and_after_pickle_and_cpu():
    e = np.zeros(0)
    prof = vpoc.from_bars(e, e, e, e, offsets=np.array([0]), tick_size=0.25)
    assert prof.levels.shape == (0, 3)
    h, lo, c, v, off = random_bars(11)
    prof = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.25)
    for other in (pickle.loads(pickle.dumps(prof)), prof.cpu()):
        np.testing.assert_array_equal(other.levels, expected_levels(prof))


def test_live_results_have_levels():
    h, lo, c, v, off = random_bars(3)
    live = vpoc.Live(tick_size=0.25)
    t0 = np.datetime64("2025-01-06T15:00", "ns")
    for s in range(len(off) - 1):
        a, b = off[s], off[s + 1]
        if b > a:
            ts = t0 + np.timedelta64(s, "D") + np.arange(b - a) * np.timedelta64(1, "m")
            live.update(h[a:b], lo[a:b], c[a:b], v[a:b], timestamp=ts)
            live.close()
    prof = live.profiles
    assert prof.n_sessions == 6
    np.testing.assert_array_equal(prof.levels, expected_levels(prof))


# ---- DeviceArray in 2-D, on host memory ----

@pytest.mark.parametrize("stride", [None, 4, 9])
def test_two_d_device_array_surface(stride):
    src = np.arange(12.0).reshape(4, 3)
    arr = _core._host_device_array(src) if stride is None else _core._host_device_array(src, col_stride=stride)
    assert arr.shape == (4, 3) and arr.ndim == 2 and arr.size == 12 and len(arr) == 4
    assert arr.nbytes == 96 and "shape=(4, 3)" in repr(arr)
    np.testing.assert_array_equal(arr.numpy(), src)
    view = np.asarray(arr)
    np.testing.assert_array_equal(view, src)
    assert view.strides == (8, 8 * (4 if stride is None else stride))
    assert np.shares_memory(view, np.asarray(arr)) or view.ctypes.data == arr.data_ptr
    np.testing.assert_array_equal(np.from_dlpack(arr), src)


@pytest.mark.parametrize("versioned", [False, True])
def test_two_d_capsule_abi(versioned):
    arr = _core._host_device_array(np.arange(10, dtype=np.int64).reshape(5, 2), col_stride=7)
    cap = arr.__dlpack__(max_version=(1, 0)) if versioned else arr.__dlpack__()
    t = managed(cap).dl_tensor
    assert t.ndim == 2 and (t.shape[0], t.shape[1]) == (5, 2) and (t.strides[0], t.strides[1]) == (1, 7)
    assert t.data == arr.data_ptr and (t.device.device_type, t.device.device_id) == (KDLCPU, 0)


def test_two_d_torch_shares_memory_and_outlives():
    torch = pytest.importorskip("torch")
    src = np.random.default_rng(1).normal(size=(6, 3))
    arr = _core._host_device_array(src, col_stride=8)
    t = torch.from_dlpack(arr)
    assert tuple(t.shape) == (6, 3) and t.stride() == (1, 8) and t.data_ptr() == arr.data_ptr
    del arr
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), src)


def test_two_d_cuda_array_interface_and_empty():
    arr = _core._host_device_array(np.ones((3, 3)), device_type=KDLCUDA, col_stride=5)
    cai = arr.__cuda_array_interface__
    assert cai["shape"] == (3, 3) and cai["strides"] == (8, 40) and cai["version"] == 3
    empty = _core._host_device_array(np.zeros((0, 3)))
    assert empty.shape == (0, 3) and empty.numpy().shape == (0, 3)
    assert managed(empty.__dlpack__()).dl_tensor.data is None
    with pytest.raises(ValueError, match="col_stride"):
        _core._host_device_array(np.ones((4, 2)), col_stride=3)  # columns would overlap


def test_dir_lists_the_columns_made_on_first_use():
    h, lo, c, v, off = random_bars(5)
    names = dir(vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.25))
    for name in ("poc", "vah", "val", "levels", "volume", "offsets", "dev_poc", "buy_volume", "session"):
        assert name in names, name
