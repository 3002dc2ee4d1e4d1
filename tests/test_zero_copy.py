"""Zero copy: results are views of engine-owned memory, exported through DLPack without
copies, and inputs are read in place when they already have an engine dtype."""

from __future__ import annotations

import gc

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
from vpoc import _arrays  # noqa: E402

RESULT_FIELDS = ("poc", "vah", "val", "poc_row", "vah_row", "val_row", "low_row", "n_rows",
                 "total_volume", "va_volume", "offsets", "volume")


def make_profiles(**kw):
    rng = np.random.default_rng(1)
    n = 500
    price = np.round(rng.normal(100, 3, n) * 4) / 4
    vol = rng.integers(1, 20, n).astype(np.float64)
    off = np.array([0, 100, 100, 300, 500])
    return vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, **kw)


@pytest.mark.parametrize("field", RESULT_FIELDS)
def test_result_arrays_are_views(field):
    prof = make_profiles()
    a = getattr(prof, field)
    assert isinstance(a, np.ndarray)
    assert a.flags.owndata is False, f"{field} owns its data (a copy was made)"
    assert a.ndim == 1 and a.flags.c_contiguous
    b = getattr(prof, field)
    assert np.shares_memory(a, b), f"two reads of {field} do not share memory"
    assert a.ctypes.data == b.ctypes.data


def test_fields_do_not_alias_each_other():
    prof = make_profiles()
    arrays = [getattr(prof, k) for k in RESULT_FIELDS]
    for i in range(len(arrays)):
        for j in range(i + 1, len(arrays)):
            if arrays[i].size and arrays[j].size:
                assert not np.shares_memory(arrays[i], arrays[j]), (
                    RESULT_FIELDS[i], RESULT_FIELDS[j])


@pytest.mark.parametrize("field", ["poc", "poc_row", "volume", "offsets"])
def test_numpy_from_dlpack_shares_memory(field):
    prof = make_profiles()
    a = getattr(prof, field)
    d = np.from_dlpack(a)
    assert np.shares_memory(d, a)
    assert d.ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(d, a)
    dev = a.__dlpack_device__()
    assert int(dev[0]) == 1  # kDLCPU


def test_torch_from_dlpack_shares_memory():
    torch = pytest.importorskip("torch")
    prof = make_profiles()
    t = torch.from_dlpack(prof.volume)
    assert t.data_ptr() == prof.volume.ctypes.data
    assert t.dtype == torch.float64 and t.shape == prof.volume.shape
    t2 = torch.from_dlpack(prof.poc_row)
    assert t2.dtype == torch.int64 and t2.data_ptr() == prof.poc_row.ctypes.data
    if hasattr(prof, "to_torch"):
        tt = prof.to_torch()
        assert tt["volume"].data_ptr() == prof.volume.ctypes.data


def test_torch_tensor_outlives_profiles_object():
    torch = pytest.importorskip("torch")
    prof = make_profiles()
    expected = prof.volume.copy()
    t = torch.from_dlpack(prof.volume)
    del prof
    gc.collect()
    junk = [np.full(200_000, -1.0) for _ in range(10)]
    np.testing.assert_array_equal(t.numpy(), expected)
    del junk


def test_empty_results_export():
    prof = vpoc.from_trades(np.zeros(0), np.zeros(0), offsets=[0], tick_size=1.0)
    for k in RESULT_FIELDS:
        a = getattr(prof, k)
        assert a.shape == ((1,) if k == "offsets" else (0,)), k
        assert np.from_dlpack(a).shape == a.shape


def test_arrays_outlive_profiles_object():
    prof = make_profiles()
    keep = {k: getattr(prof, k) for k in RESULT_FIELDS}
    snapshot = {k: v.copy() for k, v in keep.items()}
    dense = prof.dense()
    del prof
    gc.collect()
    # allocate and fill a lot of memory to overwrite anything that was freed
    junk = [np.full(200_000, 12345.0) for _ in range(20)]
    junk2 = make_profiles(ticks_per_row=2)
    gc.collect()
    for k in RESULT_FIELDS:
        np.testing.assert_array_equal(keep[k], snapshot[k], err_msg=k)
    o = snapshot["offsets"]
    assert np.array_equal(dense[1, :snapshot["n_rows"][1]], snapshot["volume"][o[1]:o[2]])
    del junk, junk2


def test_session_volumes_are_views():
    prof = make_profiles()
    _, vols = prof.session(2)
    assert np.shares_memory(vols, prof.volume)


# --------------------------------------------------------------------------------------
# input normaliser
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
def test_as_array_no_copy_for_contiguous(dtype):
    x = np.arange(100).astype(dtype)
    y = _arrays.as_array(x, "price")
    assert isinstance(y, np.ndarray)
    assert np.shares_memory(x, y) and y.ctypes.data == x.ctypes.data
    assert y.dtype == x.dtype and y.ndim == 1 and y.flags.c_contiguous
    # a contiguous slice (offset start) is still read in place
    z = _arrays.as_array(x[10:50], "price")
    assert np.shares_memory(x, z) and z.ctypes.data == x[10:].ctypes.data


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
def test_as_array_copies_non_contiguous(dtype):
    x = np.arange(100).astype(dtype)
    s = x[::2]
    y = _arrays.as_array(s, "volume")
    assert y.flags.c_contiguous and y.ndim == 1
    assert not np.shares_memory(x, y)
    np.testing.assert_array_equal(y, s)


def test_as_array_pandas_series_no_copy():
    pd = pytest.importorskip("pandas")
    x = np.arange(50, dtype=np.float64)
    s = pd.Series(x, copy=False)
    y = _arrays.as_array(s, "price")
    assert np.shares_memory(x, y)


def test_as_array_torch_cpu_no_copy():
    torch = pytest.importorskip("torch")
    t = torch.arange(50, dtype=torch.float64)
    y = _arrays.as_array(t, "price")
    assert y.ctypes.data == t.data_ptr()


def test_as_array_rejects():
    with pytest.raises(TypeError, match="price"):
        _arrays.as_array(np.array(["a", "b"]), "price")
    with pytest.raises(ValueError, match="price"):
        _arrays.as_array(np.zeros((2, 2)), "price")


def test_engine_does_not_modify_inputs():
    rng = np.random.default_rng(2)
    price = rng.normal(100, 3, 300)
    vol = rng.uniform(0, 10, 300)
    p0, v0 = price.copy(), vol.copy()
    vpoc.from_trades(price, vol, tick_size=0.25, snap=True)  # off-grid prices on purpose
    vpoc.from_bars(price + 1, price, price, vol, open=price, tick_size=0.25,
                   distribute="legacy", snap=True)
    np.testing.assert_array_equal(price, p0)
    np.testing.assert_array_equal(vol, v0)
