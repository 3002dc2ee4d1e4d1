"""vpoc.torch.as_tensor: the same zero-copy tensor as torch.from_dlpack (memory, dtype, shape, strides,
device), on the host through vpoc's capsule and on a GPU ordered on torch's current stream."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import vpoc  # noqa: E402
from vpoc import _core  # noqa: E402
from vpoc.torch import as_tensor  # noqa: E402

from _gpu import gpu_ok, torch_cuda  # noqa: E402


def same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and a.device == b.device
    assert a.data_ptr() == b.data_ptr()  # the same memory: neither copied
    assert torch.equal(a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_host_device_array_is_the_same_view_as_from_dlpack(dtype):
    src = np.arange(12, dtype=dtype) * 3
    x = _core._host_device_array(src)
    with warnings.catch_warnings(record=True) as w_ours:
        warnings.simplefilter("always")
        ours = as_tensor(x)
    with warnings.catch_warnings(record=True) as w_torch:
        warnings.simplefilter("always")
        theirs = torch.from_dlpack(x)
    same(ours, theirs)
    np.testing.assert_array_equal(ours.numpy(), src)
    assert [str(m.message) for m in w_ours] == [str(m.message) for m in w_torch]


def test_older_torch_gets_the_legacy_capsule(monkeypatch):
    """torch before DLPack 1.0 (no _to_dlpack_versioned) reads only the legacy capsule: as_tensor asks for it."""
    asked = []
    real = torch.utils.dlpack.from_dlpack

    def spy(capsule):
        asked.append(repr(capsule))
        return real(capsule)

    monkeypatch.setattr(torch.utils.dlpack, "from_dlpack", spy)
    src = np.arange(6.0)
    as_tensor(_core._host_device_array(src))
    monkeypatch.delattr(torch._C, "_to_dlpack_versioned")
    np.testing.assert_array_equal(as_tensor(_core._host_device_array(src)).numpy(), src)
    assert '"dltensor_versioned"' in asked[0] and '"dltensor"' in asked[1], asked


def test_other_producers_go_through_torch():
    a = np.arange(5.0)
    same(as_tensor(a), torch.from_dlpack(a))
    p = vpoc.from_bars(np.array([2.0, 3.0]), np.array([1.0, 2.0]), np.array([1.5, 2.5]), np.array([1.0, 2.0]),
                       offsets=np.array([0, 2]), tick_size=0.25)
    np.testing.assert_array_equal(as_tensor(p.levels).numpy(), p.levels)


@pytest.mark.parametrize("bad", [None, [1.0, 2.0], "levels", 3.0])
def test_not_a_dlpack_producer_is_refused_naming_x(bad):
    with pytest.raises(TypeError, match=r"as_tensor: x must be a vpoc\.DeviceArray"):
        as_tensor(bad)


gpu = pytest.mark.skipif(torch_cuda() is None or not gpu_ok(), reason="needs torch with CUDA and a vpoc GPU build")


def bars(seed=3, sessions=16, n=390):
    rng = np.random.default_rng(seed)
    close = 4000 + np.cumsum(rng.integers(-2, 3, sessions * n)) * 0.25
    low = close - rng.integers(0, 4, close.size) * 0.25
    high = close + rng.integers(0, 4, close.size) * 0.25
    vol = rng.integers(1, 500, close.size).astype(np.float64)
    return (high, low, close, vol), np.arange(0, close.size + 1, n, dtype=np.int64)


@gpu
@pytest.mark.parametrize("on_side_stream", [False, True])
def test_gpu_levels_match_from_dlpack_and_the_cpu(on_side_stream):
    d, off = bars()
    want = vpoc.from_bars(*d, offsets=off, tick_size=0.25).levels
    D = [torch.from_numpy(x).cuda() for x in d]
    stream = torch.cuda.Stream() if on_side_stream else torch.cuda.current_stream()
    with torch.cuda.stream(stream):
        for _ in range(3):
            prof = vpoc.from_bars(*D, offsets=off, tick_size=0.25, device="cuda")
            ours = as_tensor(prof.levels) * 1.0  # torch work on the current stream, right after the import
            theirs = torch.from_dlpack(prof.levels)
            same(as_tensor(prof.levels), theirs)
            np.testing.assert_array_equal(ours.cpu().numpy(), want)
