"""Uniform bars into two interleaved difference arrays (cpu/row_window.hpp kDiffLanes, issue 25 round 5), vs NumPy.

Contract: windows up to kDiffLanesRows (2**16) rows keep two lanes, wider ones one (lane 1 folded into lane 0 when a
session's window grows past it mid-session): every case gives the contract's exact rows (reference.exact_session_units)
bit for bit, and the float reference's rows and levels (within its rounding).
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc

from _compare import assert_matches_reference
from reference import exact_rows, exact_session_units, ref_bars

TICK = 0.25


def bars(n: int, seed: int, jumps=()):
    rng = np.random.default_rng(seed)
    close = 4000.0 + np.cumsum(rng.integers(-2, 3, n)) * TICK
    for at, ticks in jumps:  # the rest of the session far away: the window grows there
        close[at:] += ticks * TICK
    low = close - rng.integers(0, 4, n) * TICK
    high = close + rng.integers(0, 4, n) * TICK
    return high, low, close, rng.integers(1, 500, n).astype(np.int64)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("jumps", [(), ((700, 3000),), ((700, 40_000), (1500, 30_000)), ((300, 70_000),),
                                   ((1100, -90_000),)],
                         ids=["narrow", "grows", "grows-past-2**16", "past-2**16-at-once", "down-past-2**16"])
def test_25r5_diff_lanes(threads, jumps):
    h, lo, c, v = bars(2000, len(jumps), jumps)
    offsets = np.array([0, 511, 512, 1999, 2000])
    for vol in (v, v.astype(np.float64) + 0.25):  # whole volumes (the split table) and fractional ones
        got = vpoc.from_bars(h, lo, c, vol, offsets=offsets, tick_size=TICK, distribute="uniform", threads=threads,
                             max_rows=10**6)
        ref = ref_bars(h, lo, c, vol, offsets=offsets, tick_size=TICK, distribute="uniform")
        assert_matches_reference(got, ref, exact=False, value_area=0.70, va_method="cbot", poc_tie="center")
        rows, off = np.asarray(got.volume), np.asarray(got.offsets)
        for s in range(len(offsets) - 1):
            a, b = offsets[s], offsets[s + 1]
            low, want, _ = exact_rows(exact_session_units("uniform", (h[a:b], lo[a:b], c[a:b], vol[a:b]), TICK))
            assert got.low_row[s] == low, s
            np.testing.assert_array_equal(rows[off[s]:off[s + 1]], want, strict=True)
