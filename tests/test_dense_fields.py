"""Profiles.dense(field=): the ragged side fields laid out [S, max(n_rows)] like volume, checked against a
plain NumPy layout of the ragged arrays; refusals name the field."""

import numpy as np
import pytest

import vpoc


def _reference(values, offsets, fill):
    n = np.diff(offsets)
    out = np.full((n.shape[0], int(n.max()) if n.shape[0] else 0), fill, dtype=np.float64)
    for s in range(n.shape[0]):
        out[s, :n[s]] = np.asarray(values[offsets[s]:offsets[s + 1]], dtype=np.float64)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_side_fields_dense_equal_the_ragged_rows(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    price = 4000.0 + np.cumsum(rng.integers(-2, 3, n)) * 0.25
    volume = rng.integers(1, 20, n).astype(np.int64)
    side = rng.choice(np.array([1, -1, 0], np.int8), n)
    offsets = np.array([0, 1, 1, 1200, n])  # a one-trade session and an empty one
    p = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, side=side)
    for field in vpoc.Profiles.DENSE_FIELDS:
        for fill in (0.0, np.nan):
            np.testing.assert_array_equal(p.dense(fill, field=field),
                                          _reference(getattr(p, field), p.offsets, fill), err_msg=field)
    np.testing.assert_array_equal(p.dense(), p.dense(field="volume"))
    # buy + sell never exceeds volume, row by row
    assert (p.dense(field="buy_volume") + p.dense(field="sell_volume") <= p.dense() + 1e-9).all()


def test_dense_refusals_name_the_field():
    p = vpoc.from_trades(np.array([100.0, 100.25]), np.array([1.0, 2.0]), tick_size=0.25)
    with pytest.raises(ValueError, match="field='buy_volume': this profile has no aggressor side"):
        p.dense(field="buy_volume")
    with pytest.raises(ValueError, match="field must be one of volume, buy_volume"):
        p.dense(field="delta")


def test_gpu_profile_dense_fields_equal_the_cpu():
    torch = pytest.importorskip("torch")
    if not (vpoc.gpu_available() and torch.cuda.is_available()):
        pytest.skip("needs a vpoc GPU build and a GPU")
    rng = np.random.default_rng(7)
    n = 5000
    price = (4000.0 + np.cumsum(rng.integers(-2, 3, n)) * 0.25).astype(np.float32)
    volume = rng.integers(1, 20, n).astype(np.float32)
    side = rng.choice(np.array([1, -1, 0], np.int8), n)
    offsets = np.array([0, 2000, n])
    c = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, side=side)
    g = vpoc.from_trades(torch.from_numpy(price).cuda(), torch.from_numpy(volume).cuda(), offsets=offsets,
                         tick_size=0.25, side=torch.from_numpy(side).cuda(), device="cuda")
    for field in vpoc.Profiles.DENSE_FIELDS:
        np.testing.assert_array_equal(g.dense(field=field), c.dense(field=field), err_msg=field)
