"""CPU trades binned from phase A's records (issue 25.3, cpu/scatter.hpp records_scatter).

Contract: runs of equal rows, alternation, runs crossing vector (8, 16) and block (1024) edges, mixed
whole / fractional blocks and volumes about 2**31 bin to the exact row sums of a plain reference
(np.bincount of integer-valued float64 sums below 2**53, or the contract's 64.64 units), 1 and 2 threads.
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc

from reference import exact_rows, exact_session_units

# (price, volume) dtypes: the records' variants (float32/float32, float64/any) and the slot path
PAIRS = [(np.float32, np.float32), (np.float64, np.float64), (np.float64, np.float32), (np.float64, np.int32),
         (np.float64, np.int64), (np.float32, np.int64), (np.float32, np.float64)]
TICK = 0.25
EDGES = [1, 7, 8, 9, 15, 16, 17, 1023, 1024, 1025]  # run lengths and sizes about the vector and block edges


def walk_rows(kind: str, n: int, rng) -> np.ndarray:
    """Row offsets (>= 0) of n trades: the slot walk the test exercises."""
    if kind == "one_row":
        return np.zeros(n, dtype=np.int64)
    if kind == "alternating":
        return np.arange(n, dtype=np.int64) % 2
    if kind == "long_runs":  # runs of 1 .. 5000 trades, across blocks
        lengths = rng.integers(1, 5000, n // 2 + 2)
        rows = np.repeat(rng.integers(0, 60, lengths.size), lengths)
        return rows[:n].astype(np.int64)
    if kind.startswith("edge"):  # a new row every L trades
        length = int(kind[4:])
        return (np.arange(n, dtype=np.int64) // length) % 7
    if kind == "walk":
        return np.cumsum(rng.integers(-1, 2, n)) + n
    raise ValueError(kind)


def check(price, vol, offsets, threads):
    """The profile of (price, vol) equals the exact reference, session by session."""
    prof = vpoc.from_trades(price, vol, offsets=offsets, tick_size=TICK, threads=threads)
    off = np.asarray(prof.offsets)
    got = np.asarray(prof.volume)
    offsets = np.asarray(offsets)
    whole = np.issubdtype(vol.dtype, np.integer) or bool(np.all(vol == np.floor(vol)))
    for s in range(offsets.size - 1):
        a, b = int(offsets[s]), int(offsets[s + 1])
        if a == b:
            assert prof.n_rows[s] == 0
            continue
        if whole:  # integer sums below 2**53: exact in float64 in any order
            t = np.rint(price[a:b].astype(np.float64) / TICK).astype(np.int64)
            lo = int(t.min())
            rows = np.bincount(t - lo, weights=vol[a:b].astype(np.float64))
            total = rows.sum()
        else:
            lo, rows, units = exact_rows(exact_session_units("trades", (price[a:b], vol[a:b]), TICK))
            total = None
        assert prof.low_row[s] == lo, s
        np.testing.assert_array_equal(got[off[s]:off[s + 1]], rows, err_msg=f"session {s}")
        if total is not None:
            assert prof.total_volume[s] == total


def trades(kind: str, n: int, pdt, vdt, seed: int, vol_kind: str = "small"):
    rng = np.random.default_rng(seed)
    price = (4000.0 + walk_rows(kind, n, rng) * TICK).astype(pdt)
    if vol_kind == "small":
        vol = rng.integers(0, 1000, n)
    elif vol_kind == "near_2_31":  # the records' limit: 2**31 - 1 fits a word, 2**31 takes fixed point
        vol = (2**31 - 1) - rng.integers(0, 3, n)
    else:
        raise ValueError(vol_kind)
    return price, vol.astype(vdt)


@pytest.mark.parametrize("pdt,vdt", PAIRS)
@pytest.mark.parametrize("kind", ["one_row", "alternating", "long_runs", "walk"] + [f"edge{k}" for k in (7, 8, 9, 16, 17, 1024, 1025)])
@pytest.mark.parametrize("threads", [1, 2])
def test_25_3_walks_bin_exactly(pdt, vdt, kind, threads):
    price, vol = trades(kind, 9000, pdt, vdt, seed=len(kind))
    # sessions that start and end inside blocks and vectors, one empty
    check(price, vol, [0, 1, 17, 1041, 1041, 5000, 9000], threads)


@pytest.mark.parametrize("pdt,vdt", PAIRS)
@pytest.mark.parametrize("n", EDGES + [3000])
def test_25_3_sizes_about_vector_and_block_edges(pdt, vdt, n):
    price, vol = trades("walk", n, pdt, vdt, seed=n)
    check(price, vol, [0, n], 1)


@pytest.mark.parametrize("pdt,vdt", [p for p in PAIRS if p[1] != np.int32] + [(np.float64, np.int32)])
@pytest.mark.parametrize("kind", ["one_row", "long_runs", "walk"])
def test_25_3_volumes_about_2_31(pdt, vdt, kind):
    # 2**31 - 1 (records, int64 rows) beside 2**31 and above (fixed point): float32 rounds them to 2**31
    price, vol = trades(kind, 4000, pdt, np.int64, seed=7, vol_kind="near_2_31")
    if vdt != np.int32:
        vol[2500] = 2**31  # one block past the records' words: the call rebins in fixed point
    check(price, vol.astype(vdt), [0, 2000, 4000], 1)
    # one session of 4000 volumes near 2**31 on one row: sums near 2**43, still exact
    check(np.full(4000, 4000.0, dtype=pdt), np.full(4000, 2**31 - 1, dtype=np.int64).astype(vdt), [0, 4000], 2)


@pytest.mark.parametrize("pdt,vdt", [p for p in PAIRS if np.issubdtype(p[1], np.floating)])
def test_25_3_mixed_whole_and_fractional_blocks(pdt, vdt):
    rng = np.random.default_rng(11)
    n = 5000
    price, vol = trades("long_runs", n, pdt, vdt, seed=11)
    vol = vol.astype(vdt)
    frac = rng.choice(np.arange(1100, 2000), 3, replace=False)  # block 1 only: blocks 0, 2-4 stay whole
    vol[frac] = vdt(0.375)
    vol[4097] = vdt(2.0**-20)
    check(price, vol, [0, 3000, n], 1)
    check(price, vol, [0, 3000, n], 2)


@pytest.mark.parametrize("pdt,vdt", PAIRS)
@pytest.mark.parametrize("bad", ["nan", "negative"])
@pytest.mark.parametrize("at", [5, 1030, 2047])
def test_25_3_bad_volume_refused(pdt, vdt, bad, at):
    price, vol = trades("walk", 3000, pdt, vdt, seed=3)
    if bad == "nan":
        if np.issubdtype(vdt, np.integer):
            pytest.skip("integers have no NaN")
        vol[at] = np.nan
    else:
        vol[at] = -1
    with pytest.raises(ValueError, match="volume") as e:
        vpoc.from_trades(price, vol, offsets=[0, 1000, 3000], tick_size=TICK, threads=1)
    assert str(at) in str(e.value)
