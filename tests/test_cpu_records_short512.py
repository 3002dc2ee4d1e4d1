"""Float32 trades' short AVX-512 phase A (cpu/records_f32_512.hpp, issue 25 round 3) against the NumPy reference.

Contract: the blocks it takes (whole volumes below 2**31) and the edges where it hands a block to the
long loop (ticks about +-2**23, half-tick prices, fractional / -0.0 / huge volumes in and after a block's
first vector, bad prices and volumes) give the reference's rows, totals and errors, 1 and 2 threads.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import vpoc

from _compare import assert_exact_trade_rows, assert_matches_reference
from reference import ref_trades

TICK = 0.25
AT = [0, 3, 15, 16, 20, 1023, 1024, 1030, 2999]  # about the first vector and the block (1024) edges


def walk(n: int, seed: int, base: float = 4000.0, tick: float = TICK) -> tuple:
    rng = np.random.default_rng(seed)
    price = (base + (np.cumsum(rng.integers(-1, 2, n)) % 300) * tick).astype(np.float32)
    return price, rng.integers(1, 10, n).astype(np.float32)


def profile(price, vol, offsets, threads, tick=TICK):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # off-grid prices are rounded (snap), with a warning
        return vpoc.from_trades(price, vol, offsets=offsets, tick_size=tick, threads=threads, snap=True)


def same_as_reference(price, vol, offsets, threads, tick=TICK):
    prof = profile(price, vol, offsets, threads, tick)
    ref = ref_trades(price, vol, offsets, tick_size=tick)
    assert_matches_reference(prof, ref, exact=True, value_area=0.70, va_method="cbot", poc_tie="center")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_25r3_ticks_about_2_23(threads, sign):
    # tick 1: float32 prices whose ticks reach 2**23 - 1 and the half ticks below it (rounded half
    # to even), blocks that the short loop takes and the ones it hands over (2**23 - 0.5)
    n = 3000
    top = np.float32(2**23 - 1)
    price = (sign * (top - (np.arange(n) % 40))).astype(np.float32)
    same_as_reference(price, np.ones(n, np.float32), [0, 1100, n], threads, tick=1.0)
    for at in (5, 20, 1030):
        p = price.copy()
        p[at] = np.float32(sign * (2**23 - 0.5))  # rounds to 2**23 (even)
        p[at + 1] = np.float32(sign * (2**23 - 1.5))  # rounds to 2**23 - 2
        same_as_reference(p, np.ones(n, np.float32), [0, 1100, n], threads, tick=1.0)


@pytest.mark.parametrize("threads", [1, 2])
def test_25r3_half_tick_prices_round_half_even(threads):
    price, vol = walk(3000, 1)
    for k, at in enumerate(AT):  # 16000.5 -> 16000, 16001.5 -> 16002 ticks
        price[at] = np.float32(4000.125 if k % 2 else 4000.375)
    same_as_reference(price, vol, [0, 17, 1500, 3000], threads)


def exact_check(price, vol, offsets, threads):
    """Row sums equal the contract's exact 64.64 sums of the reference, session by session."""
    assert_exact_trade_rows(profile(price, vol, offsets, threads), price, vol, offsets, TICK)


@pytest.mark.parametrize("value", [0.5, 2.0**-20, -0.0, 0.0, 2.0**31, 3e9, 2.0**31 - 128, 16777216.0])
@pytest.mark.parametrize("at", AT)
def test_25r3_one_odd_volume(value, at):
    price, vol = walk(3000, at)
    vol[at] = np.float32(value)
    exact_check(price, vol, [0, 1100, 3000], 1)
    if at == 20:
        exact_check(price, vol, [0, 1100, 3000], 2)


def test_25r3_fractional_blocks_then_whole():
    # every block fractional from its first vector, then whole ones: both loops, one call
    price, vol = walk(6000, 5)
    vol[:2048] += np.float32(0.25)
    vol[4100] = np.float32(1.5)  # one block fractional past its first vector
    exact_check(price, vol, [0, 3000, 6000], 1)
    exact_check(price, vol, [0, 3000, 6000], 2)


@pytest.mark.parametrize("column, bad", [("volume", np.nan), ("volume", -1.0), ("volume", np.inf), ("volume", -0.5),
                                         ("price", np.nan), ("price", np.inf), ("price", -np.inf)])
@pytest.mark.parametrize("at", [3, 20, 1030])
def test_25r3_bad_row_named(column, bad, at):
    price, vol = walk(3000, 2 if column == "volume" else 3)
    (vol if column == "volume" else price)[at] = np.float32(bad)
    with pytest.raises(ValueError, match=column) as e:
        profile(price, vol, [0, 1000, 3000], 1)
    assert str(at) in str(e.value)
