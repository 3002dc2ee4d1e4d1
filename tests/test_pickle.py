"""Profiles and FeatureTable pickle (multiprocessing, Dask): the round trip keeps every array, the
labels and the developing series; GPU profiles arrive on the host."""

from __future__ import annotations

import multiprocessing as mp
import pickle

import numpy as np
import pytest

import _deps
import vpoc
from _compare import assert_profiles_identical

BARS = vpoc.synth.es_bars(4, 90, seed=11)
FIELDS = ("offsets", "volume", "poc", "vah", "val", "poc_row", "vah_row", "val_row", "low_row",
          "n_rows", "total_volume", "va_volume")


def profile(developing: bool = False, device: str = "cpu", ids: bool = False) -> vpoc.Profiles:
    where = dict(session_ids=BARS.session_id) if ids else dict(offsets=BARS.offsets)
    return vpoc.from_bars(BARS.high, BARS.low, BARS.close, BARS.volume, tick_size=0.25,
                          developing=developing, device=device, **where)


def same(a: vpoc.Profiles, b: vpoc.Profiles) -> None:
    a, b = a.cpu(), b.cpu()
    assert (a.n_sessions, a.tick_size, a.ticks_per_row, a.row_size) == \
        (b.n_sessions, b.tick_size, b.ticks_per_row, b.row_size)
    assert_profiles_identical(a, b)
    for k in FIELDS:
        np.testing.assert_array_equal(np.asarray(getattr(a, k)), np.asarray(getattr(b, k)), strict=True)
    for k in ("dev_poc", "dev_vah", "dev_val"):
        x, y = getattr(a, k), getattr(b, k)
        assert (x is None) == (y is None), k
        if x is not None:
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y), strict=True)
    if a.session_labels is None:
        assert b.session_labels is None
    else:
        np.testing.assert_array_equal(a.session_labels, b.session_labels, strict=True)


@pytest.mark.parametrize("developing", [False, True])
@pytest.mark.parametrize("ids", [False, True])
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_profiles_round_trip(developing, ids, protocol):
    p = profile(developing, ids=ids)
    q = pickle.loads(pickle.dumps(p, protocol=protocol))
    assert isinstance(q, vpoc.Profiles) and q.device == "cpu"
    same(p, q)
    assert (q.dev_poc is not None) == developing
    # the copy owns its memory: usable after the original is gone, and methods work
    del p
    np.testing.assert_allclose(q.dense().sum(axis=1), q.total_volume, rtol=1e-12)
    # and pickles again
    same(q, pickle.loads(pickle.dumps(q)))


@_deps.needs("pandas")
@pytest.mark.parametrize("developing", [False, True])
def test_unpickled_profiles_to_pandas(developing):
    q = pickle.loads(pickle.dumps(profile(developing, ids=True)))
    assert q.to_pandas().shape[0] == q.n_sessions


def test_empty_profiles_round_trip():
    p = vpoc.from_trades(np.zeros(0), np.zeros(0), tick_size=0.25, offsets=[0, 0, 0])
    q = pickle.loads(pickle.dumps(p))
    same(p, q)
    assert q.n_sessions == 2 and np.all(q.n_rows == 0)


def test_feature_table_round_trip():
    for t in (vpoc.session_features(BARS, tick_size=0.25), vpoc.bar_features(BARS, tick_size=0.25)):
        u = pickle.loads(pickle.dumps(t))
        assert u.columns == t.columns and u.kind == t.kind and u.device == t.device
        np.testing.assert_array_equal(u.numpy(), t.numpy(), strict=True)
        np.testing.assert_array_equal(u.offsets, t.offsets)
        np.testing.assert_array_equal(u.session_labels, t.session_labels)


def _work(seed: int):
    """Runs in a worker process: profiles and features of one synthetic chunk."""
    b = vpoc.synth.es_bars(3, 60, seed=seed)
    p = vpoc.from_bars(b.high, b.low, b.close, b.volume, offsets=b.offsets, tick_size=0.25,
                       developing=True)
    return p, vpoc.session_features(b, tick_size=0.25)


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_multiprocessing_pool(method):
    if method not in mp.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    with mp.get_context(method).Pool(2) as pool:
        results = pool.map(_work, [1, 2, 3])
    for seed, (p, t) in zip([1, 2, 3], results):
        ep, et = _work(seed)
        same(p, ep)
        np.testing.assert_array_equal(t.numpy(), et.numpy(), strict=True)


@pytest.mark.gpu
@pytest.mark.skipif(not vpoc.gpu_available(), reason="needs a vpoc GPU build and a GPU")
def test_gpu_profiles_pickle_to_host():
    g = profile(developing=True, device="cuda")
    assert g.device.startswith("cuda")
    q = pickle.loads(pickle.dumps(g))
    assert q.device == "cpu" and isinstance(q.poc, np.ndarray)
    same(g, q)
    same(profile(developing=True), q)
