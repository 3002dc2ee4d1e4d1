"""from_bars' side fields on the CPU in one C++ call (``_core.bar_sides``, design side-single-pass.md §6).

Contract: every side field equals the masked engine passes' (the engine's profile of the buy / sell column,
the path GPU calls and non-numpy inputs still take) bit for bit, and test_side.py's NumPy reference for
``distribute='close'``; errors name ``buy_volume[i]`` / ``sell_volume[i]`` as before, buy first.
"""

import numpy as np
import pytest

import vpoc
from vpoc import _core

from test_side import NO_ROW, _rows, ref_dev_delta, ref_footprint

FIELDS = ("buy_volume", "sell_volume", "imbalance_buy", "imbalance_sell", "delta", "delta_poc", "delta_poc_row",
          "stacked_imbalance_buy", "stacked_imbalance_sell")


def bars(seed, n=150, tick=0.25):
    rng = np.random.default_rng(seed)
    low = (400 + np.cumsum(rng.integers(-3, 4, n))) * tick
    high = low + rng.integers(0, 7, n) * tick
    close = low + rng.integers(0, 7, n) * tick
    close = np.minimum(close, high)
    opn = np.minimum(low + rng.integers(0, 3, n) * tick, high)
    volume = rng.integers(0, 300, n)
    buy = (volume * rng.random(n)).astype(np.int64)
    sell = ((volume - buy) * rng.random(n)).astype(np.int64)
    full = rng.random(n) < 0.3
    sell[full] = volume[full] - buy[full]
    cuts = np.sort(rng.integers(0, n + 1, 4))
    offsets = np.r_[0, cuts[0], cuts[0], cuts[1:], n]  # an empty session, maybe more
    return high, low, close, opn, volume, buy, sell, offsets


def fields(prof):
    return {k: np.asarray(getattr(prof, k)) for k in FIELDS + ("dev_delta",)}


def same(a, b):
    for k in a:
        assert (a[k] is None) == (b[k] is None), k
        if a[k] is not None:
            assert a[k].dtype == b[k].dtype and a[k].tobytes() == b[k].tobytes(), k


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("distribute", ["uniform", "close", "hlc3", "legacy"])
@pytest.mark.parametrize("tick, tpr", [(0.25, 1), (0.1, 3)])
def test_equal_to_the_masked_engine_passes(seed, distribute, tick, tpr):
    high, low, close, opn, volume, buy, sell, offsets = bars(seed, tick=tick)
    kw = dict(offsets=offsets, tick_size=tick, ticks_per_row=tpr, distribute=distribute, open=opn, snap=True)
    dtype = [np.int64, np.int32, np.float32, np.float64, np.uint16][seed % 5]
    b, s = buy.astype(dtype), sell.astype(dtype)
    if seed == 3:  # fractional columns: 64.64 rows
        b, s = buy * 0.375, sell * 0.5
    got = vpoc.from_bars(high, low, close, volume, buy_volume=b, sell_volume=s, developing=True, **kw)
    # the masked passes of before: list prices keep the engine-pass path
    old = vpoc.from_bars(list(high), list(low), list(close), volume, buy_volume=b, sell_volume=s, developing=True,
                         **{**kw, "open": list(opn)})
    same(fields(got), fields(old))
    bp = vpoc.from_bars(high, low, close, b, **kw)
    sp = vpoc.from_bars(high, low, close, s, **kw)
    np.testing.assert_array_equal(got.buy_volume, bp.volume)
    np.testing.assert_array_equal(got.sell_volume, sp.volume)
    np.testing.assert_array_equal(got.delta, bp.total_volume - sp.total_volume)
    np.testing.assert_array_equal(got.dev_delta, ref_dev_delta(b.tolist(), s.tolist(), offsets))


def test_close_equals_the_numpy_reference_with_edges():
    high, low, close, opn, volume, buy, sell, offsets = bars(9)
    # one price, all-unknown, all-buy sessions beside random ones
    n = len(high)
    high[:5] = low[:5] = close[:5] = 100.0
    buy[5:10], sell[5:10] = 0, 0
    buy[10:15], sell[10:15] = volume[10:15], 0
    offsets = np.array([0, 0, 1, 5, 10, 15, 15, n])
    prof = vpoc.from_bars(high, low, close, volume, buy_volume=buy, sell_volume=sell, offsets=offsets,
                          tick_size=0.25, distribute="close", imbalance_ratio=1.5, stacked_imbalance_min=2)
    ref = ref_footprint(_rows(close, 0.25, 1), buy.tolist(), sell.tolist(), offsets, ratio=1.5, stacked_min=2)
    for k in FIELDS:
        want = np.asarray(ref[k]) * (0.25 if k == "delta_poc" else 1)
        got = np.asarray(getattr(prof, k))
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=k)
    assert prof.delta_poc_row[0] == NO_ROW and np.isnan(prof.delta_poc[0])


def test_direct_call_and_layout():
    high, low, close, opn, volume, buy, sell, offsets = bars(4)
    opts = _core.Options(tick_size=0.25, distribute="uniform")
    got = _core.bar_sides(high, low, close, None, buy, sell, offsets, opts, 3.0, 3)
    prof = vpoc.from_bars(high, low, close, volume, offsets=offsets, tick_size=0.25, distribute="uniform")
    np.testing.assert_array_equal(got["row_offsets"], prof.offsets)
    ne = np.diff(prof.offsets) > 0
    np.testing.assert_array_equal(got["low_row"][ne], prof.low_row[ne])
    assert np.all(got["low_row"][~ne] == NO_ROW) and got["dev_delta"] is None
    empty = _core.bar_sides(high[:0], low[:0], close[:0], None, buy[:0], sell[:0], np.array([0, 0]), opts, 3.0, 3)
    assert empty["buy_volume"].shape == (0,) and empty["delta"].tolist() == [0.0]


@pytest.mark.parametrize("args, err, match", [
    (dict(buy=[1.0, 2.0]), ValueError, "buy_volume must be 1-D with 3 rows like high"),
    (dict(offsets=[0, 2]), ValueError, r"offsets\[-1\] must equal the number of rows N=3, got 2"),
    (dict(offsets=[1, 2, 3]), ValueError, r"offsets\[0\] must be 0"),
    (dict(offsets=[0, 2, 1, 3]), ValueError, "offsets must be non-decreasing"),
    (dict(offsets=np.zeros(0, np.int64)), ValueError, "offsets must have at least one element"),
    (dict(low=[1.0]), ValueError, "low must be 1-D with 3 rows like high"),
])
def test_direct_call_bad_inputs(args, err, match):
    h = np.array([2.0, 3.0, 4.0])
    kw = dict(high=h, low=h, close=h, open=None, buy=np.array([1.0, 1.0, 1.0]), sell=np.zeros(3),
              offsets=np.array([0, 3]), options=_core.Options(tick_size=1.0), imbalance_ratio=3.0, stacked_min=3)
    kw.update({k: np.asarray(v) for k, v in args.items()})
    with pytest.raises(err, match=match):
        _core.bar_sides(**kw)


@pytest.mark.parametrize("which", ["buy", "sell", "both"])
def test_tiny_side_volume_is_named_as_before(which):
    """A side volume below 2**-32 (which bar_side_volumes lets through): the engine's words, named as the
    column, the buy column's error first; session= re-addresses the row to the caller's."""
    h = np.array([2.0, 3.0, 4.0, 5.0])
    v = np.array([10.0, 10.0, 10.0, 10.0])
    b, s = np.array([1.0, 1.0, 1.0, 1.0]), np.array([1.0, 1.0, 1.0, 1.0])
    if which in ("buy", "both"):
        b[3] = 1e-12
    if which in ("sell", "both"):
        s[1] = 1e-12
    msgs = []
    for prices in (h, list(h)):  # the C++ call, the masked passes
        with pytest.raises(vpoc.InputError) as e:
            vpoc.from_bars(prices, prices, prices, v, tick_size=1.0, buy_volume=b, sell_volume=s,
                           session_ids=np.array([1, 1, 2, 2]))
        msgs.append((str(e.value), e.value.argument, e.value.index))
    assert msgs[0] == msgs[1]
    assert msgs[0][1] == ("sell_volume" if which == "sell" else "buy_volume")
    assert "is below 2**-32" in msgs[0][0]


def test_more_threads_same_bits():
    high, low, close, opn, volume, buy, sell, offsets = bars(6, n=400)
    kw = dict(offsets=offsets, tick_size=0.25, buy_volume=buy, sell_volume=sell)
    one = fields(vpoc.from_bars(high, low, close, volume, threads=1, **kw))
    two = fields(vpoc.from_bars(high, low, close, volume, threads=2, **kw))
    same(one, two)
