"""Trade volumes judged whole in the engine's vectorised volume pass (issue 25.1).

Contract: whether a block of volumes takes the whole-number path or the fixed-point one, the row
sums equal a plain exact reference (np.bincount in float64 of integer-valued sums below 2**53).
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc


def reference_rows(price: np.ndarray, volume: np.ndarray, tick: float):
    t = np.rint(price.astype(np.float64) / tick).astype(np.int64)
    lo = t.min()
    return lo, np.bincount(t - lo, weights=volume.astype(np.float64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["small_whole", "big_float32_whole", "fractional_mix", "odd_above_2_52"])
def test_25_1_whole_and_fractional_volume_blocks_sum_exactly(dtype, kind):
    rng = np.random.default_rng(3)
    n = 20000  # several of the engine's blocks
    price = (4000.0 + rng.integers(0, 40, n) * 0.25).astype(dtype)
    if kind == "small_whole":
        vol = rng.integers(0, 1000, n).astype(dtype)
    elif kind == "big_float32_whole":  # whole floats from 2**23 up (every float32 there is whole)
        vol = (2.0**23 + rng.integers(0, 1000, n) * 2.0).astype(dtype)
    elif kind == "fractional_mix":  # mostly whole, one fractional volume in a few blocks
        vol = rng.integers(1, 100, n).astype(dtype)
        vol[rng.choice(n, 5, replace=False)] = dtype(0.5)
    else:  # doubles above 2**52 that are odd (read as not whole: the fixed-point path), one session
        if dtype == np.float32:
            pytest.skip("float32 has no odd whole numbers above 2**52")
        n = 3
        price = price[:n]
        vol = np.array([2.0**52 + 1, 0.0, 1.0], dtype=dtype)
    prof = vpoc.from_trades(price, vol, tick_size=0.25, threads=1)
    lo, rows = reference_rows(price, vol, 0.25)
    assert prof.low_row[0] == lo
    np.testing.assert_array_equal(prof.volume, rows)
    assert prof.total_volume[0] == rows.sum()
