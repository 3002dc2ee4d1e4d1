"""The int64 window's drain (cpu/drain.cpp: AVX-512, eight rows a turn, a scalar tail) and the uninitialised output rows.

Contract: every session's rows and total equal the contract's exact sums whatever its row count (1 .. 40: each
remainder of the eight-row turns, windows drained and reused session after session), for int and whole float
volumes (int64 rows), 1 and 2 threads; empty sessions between them leave no row; a session whose first blocks are
run-free and later ones run on one price (runs_likely asked again after a wait) sums the same. Performance work: these
pass on main too (nothing there to fix); they hold the new code to the contract's sums.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import vpoc

from reference import exact_rows, exact_session_units

TICK = 0.25


def profile(price, vol, offsets, threads):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return vpoc.from_trades(price, vol, offsets=offsets, tick_size=TICK, threads=threads)


def assert_exact(prof, price, vol, offsets):
    """Each session's lowest row and rows are the contract's exact sums (an empty one: no row)."""
    got, off = np.asarray(prof.volume), np.asarray(prof.offsets)
    for s in range(len(offsets) - 1):
        a, b = offsets[s], offsets[s + 1]
        if a == b:
            assert off[s + 1] == off[s], s
            continue
        lo, rows, _ = exact_rows(exact_session_units("trades", (price[a:b], vol[a:b]), TICK))
        assert prof.low_row[s] == lo, s
        np.testing.assert_array_equal(got[off[s]:off[s + 1]], rows, err_msg=f"session {s}")


def sessions_of_widths(widths, per_row, seed, price_dtype, volume_dtype):
    """One session per width w: trades on w consecutive rows (each row at least once), at a drifting base."""
    rng = np.random.default_rng(seed)
    prices, vols, offsets = [], [], [0]
    for k, w in enumerate(widths):
        n = w * per_row if w else 0
        rows = np.concatenate([np.arange(w), rng.integers(0, max(w, 1), max(n - w, 0))]) if w else np.zeros(0, int)
        rng.shuffle(rows)
        prices.append(1000.0 + (37 * k % 200) + rows * TICK)
        vols.append(rng.integers(1, 2**31 - 1 if np.dtype(volume_dtype).kind == "i" else 2**24, len(rows)))
        offsets.append(offsets[-1] + len(rows))
    price = np.concatenate(prices).astype(price_dtype)
    vol = np.concatenate(vols).astype(volume_dtype)
    return price, vol, np.asarray(offsets, np.int64)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("price_dtype,volume_dtype", [(np.float32, np.float32), (np.float64, np.int64),
                                                      (np.float32, np.int32), (np.float64, np.float64)])
def test_every_row_count_drains_exactly(threads, price_dtype, volume_dtype):
    widths = list(range(1, 41)) + [0, 0, 7, 0, 16, 17, 8, 9, 1, 0]
    price, vol, offsets = sessions_of_widths(widths, 3, 25, price_dtype, volume_dtype)
    prof = profile(price, vol, offsets, threads)
    np.testing.assert_array_equal(np.asarray(prof.n_rows), widths)
    assert len(np.asarray(prof.volume)) == sum(widths)
    assert_exact(prof, price, vol, offsets)
    for s in range(len(widths)):  # totals: the exact sums, rounded once
        a, b = offsets[s], offsets[s + 1]
        assert prof.total_volume[s] == float(sum(int(x) for x in vol[a:b])), s


@pytest.mark.parametrize("threads", [1, 2])
def test_runs_after_run_free_blocks(threads):
    """Blocks 0..k moving on every trade, then trades in long runs on one price, then moving again."""
    rng = np.random.default_rng(3)
    parts = []
    for moves, n in ((1.0, 6 * 1024 + 5), (0.05, 20 * 1024), (0.9, 3 * 1024 + 100), (0.02, 9 * 1024)):
        step = np.where(rng.random(n) < moves, np.where(rng.random(n) < 0.5, -1, 1), 0)
        parts.append(step)
    walk = np.cumsum(np.concatenate(parts))
    price = (4000.0 + (walk % 300) * TICK).astype(np.float32)
    vol = rng.integers(1, 10, len(price)).astype(np.float32)
    n = len(price)
    offsets = np.array([0, n // 3, n // 3, n - 4000, n], np.int64)
    assert_exact(profile(price, vol, offsets, threads), price, vol, offsets)
