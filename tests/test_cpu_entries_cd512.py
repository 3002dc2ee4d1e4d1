"""Float32 and float64 trades as entries (cpu/records_cd512.hpp, issue 25 rounds 4, 6): each 16 trades' equal rows merged, vs NumPy.

Contract: rows repeating inside a vector (in runs and scattered), all 16 lanes on one row, all distinct, a row
in more than 8 lanes, sums near 2**32, block / vector / session edges (tails of n % 16 trades), blocks that
hand over to the records (volumes >= 2**28, fractional ones) and bad rows give the reference's results, 1 and 2 threads.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import vpoc

from _compare import assert_exact_trade_rows, assert_matches_reference
from reference import ref_trades

TICK = 0.25
BIG = 2.0**28  # entries take whole volumes below it (16 of them sum below 2**32)


# float32 prices and volumes (entries_f32_cd512), float64 ones (entries_f64_cd512)
DTYPES = [np.float32, np.float64]


def walk(n: int, seed: int, dt=np.float32) -> tuple:
    rng = np.random.default_rng(seed)
    price = (4000.0 + (np.cumsum(rng.integers(-1, 2, n)) % 300) * TICK).astype(dt)
    return price, rng.integers(1, 10, n).astype(dt)


def profile(price, vol, offsets, threads):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return vpoc.from_trades(price, vol, offsets=offsets, tick_size=TICK, threads=threads)


def exact_check(price, vol, offsets, threads):
    """Row sums equal the contract's exact sums of the reference, session by session."""
    assert_exact_trade_rows(profile(price, vol, offsets, threads), price, vol, offsets, TICK)


def same_as_reference(price, vol, offsets, threads):
    ref = ref_trades(price, vol, offsets, tick_size=TICK)
    assert_matches_reference(profile(price, vol, offsets, threads), ref, exact=True, value_area=0.70,
                             va_method="cbot", poc_tie="center")


# sessions that start and end inside vectors and blocks: tails of every n % 16, blocks below 16 trades
EDGES = [0, 15, 31, 48, 1072, 2096, 2113, 3137, 4161, 4177, 5000]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_25r4_walk(threads, seed, dt):
    price, vol = walk(5000, seed, dt)
    same_as_reference(price, vol, EDGES, threads)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("rows", [1, 2, 3, 5, 16, 40])
def test_25r4_scattered_rows(threads, rows, dt):
    # each trade on one of a few rows at random: equal rows apart inside the vector, groups of every
    # size up to 16 (rows=1: all 16 lanes one row; 2: a row in more than 8 lanes in most vectors)
    rng = np.random.default_rng(rows)
    n = 5000
    price = (4000.0 + rng.integers(0, rows, n) * TICK).astype(dt)
    vol = rng.integers(0, 1000, n).astype(dt)
    exact_check(price, vol, EDGES, threads)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("threads", [1, 2])
def test_25r4_all_distinct_and_runs(threads, dt):
    n = 4200
    up = (4000.0 + np.arange(n) * TICK).astype(dt)  # every lane its own row
    down = (5000.0 - (np.arange(n) // 16) * TICK).astype(dt)  # a vector a row
    sawtooth = (4000.0 + (np.arange(n) % 7) * TICK).astype(dt)  # rows repeat across lanes
    vol = np.random.default_rng(9).integers(1, 100, n).astype(dt)
    for price in (up, down, sawtooth):
        exact_check(price, vol, [0, 1024, 1040, n], threads)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("rows", [1, 2])
def test_25r4_sums_near_2_32(threads, rows, dt):
    # volumes just below 2**28: 16 on one row sum to 2**32 - 16 (32-bit sums, exact); then 2**28
    # itself in a vector, in a tail, in a later block: those blocks take the records
    n = 3100
    price = (4000.0 + (np.arange(n) % rows) * TICK).astype(dt)
    top = dt(BIG - 16 if dt == np.float32 else BIG - 1)  # the largest float32 / float64 whole volume below 2**28
    vol = np.full(n, top, dt)
    exact_check(price, vol, [0, 1030, n], threads)
    for at in (0, 17, 1029, 2050, n - 1):
        v = vol.copy()
        v[at] = dt(BIG)
        exact_check(price, v, [0, 1030, n], threads)
    for big in (BIG, 2.0**30, 2.0**31 - 128):  # every volume at or above 2**28: 16 would wrap 32 bits
        exact_check(price, np.full(n, dt(big)), [0, 1030, n], threads)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("value", [0.5, -0.0, 3e9, 2.0**31, 2.0**-20, 2.0**28 - 0.5])
@pytest.mark.parametrize("at", [0, 5, 16, 1023, 1030, 3099])
def test_25r4_odd_volume_hands_over(value, at, dt):
    # one volume the entries do not take, in the first vector, inside a block, in a tail
    price, vol = walk(3100, at, dt)
    vol[at] = dt(value)
    exact_check(price, vol, [0, 1030, 3100], 1)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("threads", [1, 2])
def test_25r4_window_grows(threads, dt):
    # a jump far off the window inside a block: the window grows and the block's phase A runs again
    price, vol = walk(5000, 4, dt)
    price[1500:] += dt(700 * TICK)
    price[3333:3340] -= dt(2000 * TICK)
    same_as_reference(price, vol, [0, 2500, 5000], threads)


@pytest.mark.parametrize("column, bad", [("volume", np.nan), ("volume", -1.0), ("volume", np.inf),
                                         ("price", np.nan), ("price", np.inf), ("price", -np.inf)])
@pytest.mark.parametrize("at", [3, 20, 1030, 2999])
@pytest.mark.parametrize("dt", DTYPES)
def test_25r4_bad_row_named(column, bad, at, dt):
    price, vol = walk(3000, 7, dt)
    (vol if column == "volume" else price)[at] = dt(bad)
    with pytest.raises(ValueError, match=column) as e:
        profile(price, vol, [0, 1000, 3000], 1)
    assert str(at) in str(e.value)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", ["grow", "fraction", "big", "grow_then_fraction"])
def test_25r5_pending_entries(threads, case, dt):
    # a block's entries are added during the next block's phase A (issue 25 round 5): sessions of many
    # blocks whose next block grows the window (phase A runs twice), hands over to the records
    # (a fraction: the call then bins in fixed point; a volume >= 2**28), at its first trade or later
    price, vol = walk(9000, 11, dt)
    if case in ("grow", "grow_then_fraction"):
        for at in (1024, 3072 + 5, 6150):
            price[at:] += dt(400 * TICK)
    if case in ("fraction", "grow_then_fraction"):
        vol[4096] = dt(2.5)
    if case == "big":
        vol[2048 + 17] = dt(BIG)
        vol[7168] = dt(3e8)
    same_as_reference(price, vol, [0, 4000, 4096, 9000], threads)
    exact_check(price, vol, [0, 9000], threads)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("base", [0.0, 2.0**30 - 100, -(2.0**30) - 100, 2.0**30 - 3000, 2.0**31 - 300, 2.0**40])
def test_25r6_f64_ticks_about_2_30(threads, base):
    # entries_f64_cd512 converts ticks to int32 and takes blocks whose ticks (and origin) lie within
    # +-2**30: walks that cross 2**30, start beyond it (the records take those blocks), negative ones,
    # and half-tick prices (ties: round half to even, off the grid) among them
    price, vol = walk(5000, 3, np.float64)
    price = price - 4000.0 + base * TICK
    price[[100, 1500, 1501, 4000]] += TICK / 2
    price[200] += 0.1
    exact_check(price, vol, [0, 2500, 5000], threads)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("value, at", [(None, 0), (2**28 - 1, 5), (2**28, 0), (2**28, 17), (2**28, 1030),
                                       (2**28, 3099), (2**31, 2000), (2**40, 3099), (0, 16)])
def test_25r6_f64_int64_volumes(threads, value, at):
    # float64 prices with int64 volumes as entries (below 2**28 unsigned); a volume at or above it in
    # the first vector, a later one, a tail: those blocks take the records (2**31 up: fixed-point rows)
    price, vol = walk(3100, 5, np.float64)
    vol = vol.astype(np.int64)
    if value is not None:
        vol[at] = value
    exact_check(price, vol, [0, 1030, 3100], threads)
    same_as_reference(price, vol, [0, 1030, 3100], threads)


@pytest.mark.parametrize("at", [0, 20, 1030, 3099])
def test_25r6_f64_int64_negative_volume_named(at):
    price, vol = walk(3100, 6, np.float64)
    vol = vol.astype(np.int64)
    vol[at] = -1
    with pytest.raises(ValueError, match="volume") as e:
        profile(price, vol, [0, 1030, 3100], 1)
    assert str(at) in str(e.value)
