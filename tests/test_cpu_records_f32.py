"""Float32 prices with int32, int64 and float64 volumes binned from phase A's records (AVX-512 variant of
cpu/slots_avx2.cpp slots_f32_512, issue 25 follow-up): the same exact sums as the NumPy reference.

Contract: walks, sizes about the 16-lane vectors and 1024-trade blocks (body and scalar tail), volumes
about 2**31 (int64 rows vs fixed point) and about 2**53 (the contract's limit), fractional float64
volumes and bad volumes in the vector body and in the tail bin exactly or are refused naming the index.
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc

from test_cpu_records import TICK, check, trades

VOLUMES = [np.int32, np.int64, np.float64]
SIZES = [1, 15, 16, 17, 31, 1023, 1024, 1025, 1039, 2500]


@pytest.mark.parametrize("vdt", VOLUMES)
@pytest.mark.parametrize("kind", ["one_row", "alternating", "long_runs", "walk", "edge16", "edge17"])
@pytest.mark.parametrize("threads", [1, 2])
def test_f32_records_walks(vdt, kind, threads):
    price, vol = trades(kind, 6000, np.float32, vdt, seed=3 + len(kind))
    check(price, vol, [0, 5, 1040, 1040, 3001, 6000], threads)


@pytest.mark.parametrize("vdt", VOLUMES)
@pytest.mark.parametrize("n", SIZES)
def test_f32_records_sizes(vdt, n):
    price, vol = trades("walk", n, np.float32, vdt, seed=n)
    check(price, vol, [0, n], 1)


@pytest.mark.parametrize("vdt", [np.int64, np.float64])
@pytest.mark.parametrize("at", [3, 1024 + 9, 1024 + 1020])  # a vector's lane, another block's, a block's tail
def test_f32_records_large_volumes(vdt, at):
    """One volume of 2**31 (past the records' words: the call rebins in fixed point), then one of
    2**53 (the largest valid one; every other volume 0 in its session so that the sum stays valid)."""
    price, vol = trades("walk", 3000, np.float32, vdt, seed=at)
    vol[at] = 2**31
    check(price, vol, [0, 1024, 3000], 1)
    big = np.zeros(3000, dtype=vdt)
    big[at] = 2**53
    check(price, big, [0, 1024, 3000], 2)


@pytest.mark.parametrize("at", [3, 1024 + 9, 1024 + 1020, 2999])
def test_f32_records_fractional_float64_volumes(at):
    price, vol = trades("long_runs", 3000, np.float32, np.float64, seed=at)
    vol[at] = 0.375
    vol[(at + 700) % 3000] = 2.0**-20
    check(price, vol, [0, 1024, 3000], 1)


@pytest.mark.parametrize("vdt", VOLUMES)
@pytest.mark.parametrize("bad", ["negative", "over_2_53", "nan"])
@pytest.mark.parametrize("at", [4, 1024 + 17, 1024 + 1020, 2999])
def test_f32_records_bad_volume_refused(vdt, bad, at):
    price, vol = trades("walk", 3000, np.float32, vdt, seed=5)
    if bad == "nan":
        if vdt != np.float64:
            pytest.skip("integers have no NaN")
        vol[at] = np.nan
    elif bad == "over_2_53":
        if vdt == np.int32:
            pytest.skip("int32 stays below 2**53")
        vol[at] = 2**53 + 2 if vdt == np.float64 else 2**53 + 1
    else:
        vol[at] = -1
    with pytest.raises(ValueError, match="volume") as e:
        vpoc.from_trades(price, vol, offsets=[0, 1024, 3000], tick_size=TICK, threads=1)
    assert str(at) in str(e.value)


def test_f32_records_reference_sees_one_unit():
    """The comparison this file relies on can fail: one volume off by one in the tail of a block is
    caught (so a variant that lost or doubled a lane's or the tail's volume would be)."""
    price, vol = trades("walk", 1039, np.float32, np.int64, seed=1)
    prof = vpoc.from_trades(price, vol, offsets=[0, 1039], tick_size=TICK, threads=1)
    t = np.rint(price.astype(np.float64) / TICK).astype(np.int64)
    wrong = vol.astype(np.float64).copy()
    wrong[1030] += 1
    rows = np.bincount(t - t.min(), weights=wrong)
    with pytest.raises(AssertionError):
        np.testing.assert_array_equal(np.asarray(prof.volume), rows)
    np.testing.assert_array_equal(np.asarray(prof.volume), np.bincount(t - t.min(), weights=vol.astype(np.float64)))
