"""Uniform bars through the AVX-512 phase A and its phase B operands (cpu/bars_uniform512.hpp, issue 25 round 6), vs NumPy.

Contract: every session's rows equal the contract's exact construction (reference.exact_session_units) bit for bit, for
every price / volume dtype, with and without opens, on sessions whose lengths leave every tail of a vector of eight
and of a block of 512, general splits (volumes of 2**31 and more, fractional volumes, bars over 64 ticks), windows
growing mid-session; a bad bar anywhere in a vector is refused naming that bar. (On CPUs without AVX-512 the same
cases run the portable path: the contract is the same.)
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc

from reference import exact_rows, exact_session_units

TICK = 0.25
LENGTHS = (0, 1, 7, 8, 9, 15, 511, 512, 513, 1030)


def bars(n: int, rng: np.random.Generator, width: int = 4, jump_at: int | None = None):
    close = 4000.0 + np.cumsum(rng.integers(-2, 3, n)) * TICK
    if jump_at is not None:  # the rest of the session 5000 ticks up: the window grows mid-session
        close[jump_at:] += 5000 * TICK
    low = close - rng.integers(0, width, n) * TICK
    high = close + rng.integers(0, width, n) * TICK
    opn = low + np.floor((high - low) / TICK * rng.random(n)) * TICK
    return high, low, close, opn


def volumes(n: int, dtype: str, kind: str, rng: np.random.Generator) -> np.ndarray:
    v = rng.integers(0, 500, n)
    if kind == "big" and dtype in ("i8", "f8") and n:  # no table split: a whole volume of 2**31 or more
        v[rng.integers(0, n, max(1, n // 7))] = 2**31 + 12345
    v = v.astype(dtype)
    if kind == "fraction" and dtype in ("f8", "f4"):
        v = (v + rng.random(n)).astype(dtype)
    return v


def check_exact(got, h, lo, c, v, offsets):
    rows, off = np.asarray(got.volume), np.asarray(got.offsets)
    for s in range(len(offsets) - 1):
        a, b = offsets[s], offsets[s + 1]
        if a == b:
            assert off[s + 1] == off[s], s
            continue
        low, want, _ = exact_rows(exact_session_units("uniform", (h[a:b], lo[a:b], c[a:b], v[a:b]), TICK))
        assert got.low_row[s] == low, s
        np.testing.assert_array_equal(rows[off[s]:off[s + 1]], want, strict=True)


@pytest.mark.parametrize("pdt", ["f8", "f4"])
@pytest.mark.parametrize("vdt", ["i8", "i4", "f8", "f4"])
@pytest.mark.parametrize("kind", ["plain", "big", "fraction", "wide", "grows"])
def test_uniform512_exact_rows(pdt, vdt, kind):
    rng = np.random.default_rng(["plain", "big", "fraction", "wide", "grows"].index(kind) * 100 + len(vdt + pdt))
    lengths = np.array(LENGTHS)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    n = int(offsets[-1])
    h, lo, c, opn = bars(n, rng, width=40 if kind == "wide" else 4)  # wide: bars of up to 79 ticks
    if kind == "grows":
        h, lo, c, opn = bars(n, rng, jump_at=int(offsets[-2]) + 700)
    v = volumes(n, vdt, kind, rng)
    H, L, C, O = (x.astype(pdt) for x in (h, lo, c, opn))
    for threads in (1, 2):
        for o in (None, O):
            got = vpoc.from_bars(H, L, C, v, open=o, offsets=offsets, tick_size=TICK, distribute="uniform",
                                 threads=threads)
            check_exact(got, H, L, C, v, offsets)


@pytest.mark.parametrize("at", [0, 3, 7, 8, 517, 1029])
@pytest.mark.parametrize("bad", ["nan_high", "low_above_close", "open_below_low", "negative_volume"])
def test_uniform512_bad_bar_named(at, bad):
    rng = np.random.default_rng(at)
    n = 1030
    h, lo, c, opn = bars(n, rng)
    v = rng.integers(1, 500, n).astype(np.int64)
    if bad == "nan_high":
        h[at] = np.nan
    elif bad == "low_above_close":
        lo[at] = c[at] + TICK
    elif bad == "open_below_low":
        opn[at] = lo[at] - TICK
    else:
        v[at] = -1
    with pytest.raises(ValueError, match=rf"\[{at}\]"):
        vpoc.from_bars(h, lo, c, v, open=opn, offsets=np.array([0, n]), tick_size=TICK, distribute="uniform")
