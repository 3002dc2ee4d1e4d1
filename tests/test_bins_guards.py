"""bins=N where it meets the rest of the library: exact sums past 2**53, keywords that read the tick
ladder, tables and level lists that read rows as prices, GPU edge cases (review of the wickra merge).

Contract: each case either gives the documented numbers (checked against plain NumPy) or raises a
ValueError naming the argument; the GPU cases skip without a GPU build and a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc

pd = pytest.importorskip("pandas")


def test_exact_sums_past_2_53_are_refused_not_wrapped():
    # 2048 volumes of 2**53 sum to 2**64: a 64.64 sum that wrapped read 0 before
    for n in (2, 2048, 2049):
        p = np.linspace(100.0, 101.0, n)
        with pytest.raises(ValueError, match="2\\*\\*53|overflow|past"):
            vpoc.from_trades(p, np.full(n, 2.0**53), tick_size=0.25, bins=2)
    # at the limit: one volume of 2**53 is fine and exact
    prof = vpoc.from_trades(np.array([100.0]), np.array([2.0**53]), tick_size=0.25, bins=2)
    assert prof.total_volume[0] == 2.0**53


@pytest.mark.parametrize("kw, word", [(dict(ticks_per_row=4), "ticks_per_row"), (dict(snap=True), "snap"),
                                      (dict(max_rows=10), "max_rows")])
def test_keywords_that_read_the_tick_ladder_are_refused(kw, word):
    p = np.array([100.0, 100.5, 101.0])
    with pytest.raises(ValueError, match=word) as e:
        vpoc.from_trades(p, np.ones(3), tick_size=0.25, bins=50, **kw)
    assert "bins" in str(e.value)


def test_side_with_bins_is_refused():
    p = np.array([100.0, 100.5, 101.0])
    with pytest.raises(ValueError, match="bins"):
        vpoc.from_trades(p, np.ones(3), tick_size=0.25, bins=5, side=np.array([1, -1, 0], dtype=np.int8))
    with pytest.raises(ValueError, match="bins"):
        vpoc.from_bars(p + 0.5, p, p, np.ones(3), tick_size=0.25, bins=5, buy_volume=np.ones(3) * 0.5,
                       sell_volume=np.ones(3) * 0.25)


def test_level_lists_refuse_bins_and_the_table_reports_the_ladder():
    rng = np.random.default_rng(3)
    p = 100.0 + rng.integers(0, 40, 300) * 0.25
    off = np.array([0, 0, 120, 300])  # an empty session first
    prof = vpoc.from_trades(p, rng.integers(1, 9, 300).astype(float), offsets=off, tick_size=0.25, bins=10)
    with pytest.raises(ValueError, match="bins"):
        vpoc.levels(prof)
    from vpoc._stream import profile_table

    t = profile_table(prof, np.arange(3), off)
    assert np.isnan(t["low"][0]) and np.isnan(t["high"][0])
    for s, (a, b) in enumerate([(0, 120), (120, 300)], start=1):
        assert t["low"][s] == p[a:b].min()
        assert t["high"][s] == prof.bin_low[s] + prof.bin_width[s] * 10  # the ladder's top edge
        assert t["high"][s] == pytest.approx(p[a:b].max(), rel=1e-12)
    df = prof.to_pandas()
    np.testing.assert_array_equal(df["bin_low"].to_numpy(), prof.bin_low)
    np.testing.assert_array_equal(df["bin_width"].to_numpy(), prof.bin_width)


gpu = pytest.mark.skipif(not vpoc.gpu_available(), reason="needs a vpoc GPU build and a GPU")


@gpu
@pytest.mark.parametrize("accumulate", ["exact", "sequential"])
def test_gpu_empty_sessions_before_others(accumulate):
    rng = np.random.default_rng(5)
    p = 100.0 + rng.integers(0, 400, 1000) * 0.25
    v = rng.integers(1, 50, 1000).astype(float) + 0.5
    off = np.array([0, 0, 0, 100, 100, 600, 1000])
    kw = dict(offsets=off, tick_size=0.25, bins=500, accumulate=accumulate)
    a = vpoc.from_trades(p, v, **kw)
    for _ in range(3):  # a write past the exact sums' buffer showed as run-to-run differences
        b = vpoc.from_trades(p, v, device="cuda", **kw).cpu()
        for k in ("offsets", "volume", "poc", "vah", "val", "total_volume", "va_volume", "bin_low", "bin_width"):
            np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)


@gpu
def test_gpu_memory_budget_is_honoured():
    p = np.linspace(100.0, 200.0, 10_000)
    with pytest.raises(ValueError, match="memory_budget"):
        vpoc.from_trades(p, np.ones(10_000), offsets=np.array([0, 5000, 10_000]), tick_size=0.25, bins=20_000,
                         device="cuda", memory_budget=64 << 10)
    with pytest.raises(ValueError, match="memory_budget"):
        vpoc.from_trades(p, np.ones(10_000), tick_size=0.25, bins=20_000, developing=True, device="cuda",
                         memory_budget=200 << 10)
