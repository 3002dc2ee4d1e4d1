"""A sided ``_core.LiveSession`` (design side-single-pass.md §8): the side rows, delta and fields of the C++ Live.

Contract: after any chunking of appends, ``side_fields()`` equals test_side.py's NumPy reference of the
rows so far (``ref_footprint``), ``delta`` the float64 sum in input order of buy - sell, and a bad append
raises ValueError naming the side's argument and row and changes nothing.
"""

import numpy as np
import pytest

from vpoc import _core

from test_side import NO_ROW, _rows, ref_footprint

FIELDS = ("buy_volume", "sell_volume", "imbalance_buy", "imbalance_sell", "delta", "delta_poc", "delta_poc_row",
          "stacked_imbalance_buy", "stacked_imbalance_sell")


def new(bars=False, tick=0.25, tpr=1, tie="center", distribute="close", has_open=False, **kw):
    return _core.LiveSession(bars, distribute, has_open, tick, tpr, 0.7, "cbot", tie, 100_000, sided=True, **kw)


def append_trades(core, price, volume, codes, chunks):
    buy = volume * (codes == 1)
    sell = volume * (codes == -1)
    for a, b in zip(chunks[:-1], chunks[1:]):
        if b - a == 1 and a % 2:  # one-row appends too
            core.append_trade(float(price[a]), float(volume[a]), None, float(buy[a]), float(sell[a]))
        else:
            core.append(price[a:b], None, None, None, None, volume[a:b], None, buy[a:b], sell[a:b])


def chunking(rng, n):
    cuts = np.unique(np.r_[0, rng.integers(0, n + 1, rng.integers(0, 6)), n])
    return [int(x) for x in cuts]


def ref_of(price, volume, codes, tick, tpr, ratio=3.0, stacked_min=3, tie="center"):
    buy = np.where(codes == 1, volume, 0)
    sell = np.where(codes == -1, volume, 0)
    ref = ref_footprint(_rows(price, tick, tpr), buy.tolist(), sell.tolist(), [0, len(price)], ratio=ratio,
                        stacked_min=stacked_min, tie=tie)
    ref["delta_poc"] = [x * tick * tpr for x in ref["delta_poc"]]
    return ref


def check_fields(core, ref, ratio=3.0, stacked_min=3):
    got = core.side_fields(ratio, stacked_min)
    assert got["dev_delta"] is None
    for k in FIELDS:
        g = np.asarray(got[k])
        np.testing.assert_array_equal(g, np.asarray(ref[k], dtype=g.dtype), err_msg=k)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("tpr, tie", [(1, "center"), (2, "low"), (3, "high")])
def test_trades_equal_the_numpy_reference_for_any_chunking(seed, tpr, tie):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    tick = 0.25
    price = 100.0 + tick * rng.integers(-8, 9, n)
    volume = rng.integers(0, 6, n).astype(np.float64)  # zero volumes, ties in |buy - sell|
    codes = rng.choice(np.array([-1, 0, 1], dtype=np.int8), n, p=rng.dirichlet([1, 1, 1]))
    core = new(tpr=tpr, tie=tie)
    append_trades(core, price, volume, codes, chunking(rng, n))
    ratio, k = float(rng.choice([1.0, 1.5, 3.0])), int(rng.integers(1, 4))
    check_fields(core, ref_of(price, volume, codes, tick, tpr, ratio, k, tie), ratio, k)
    d = volume * (codes == 1) - volume * (codes == -1)
    assert core.delta == np.add.accumulate(np.r_[0.0, d])[-1]  # input order, from 0.0
    np.testing.assert_array_equal(core.column(5), volume * (codes == 1))
    np.testing.assert_array_equal(core.column(6), volume * (codes == -1))
    assert core.last_side() == (float(volume[-1] * (codes[-1] == 1)), float(volume[-1] * (codes[-1] == -1)))


def test_fractional_volumes_delta_in_input_order():
    rng = np.random.default_rng(3)
    n = 500
    price = 50.0 + 0.5 * rng.integers(0, 5, n)
    volume = rng.random(n) * 10
    codes = rng.choice(np.array([-1, 0, 1], dtype=np.int8), n)
    a, b = new(tick=0.5), new(tick=0.5)
    append_trades(a, price, volume, codes, [0, n])
    append_trades(b, price, volume, codes, chunking(rng, n))
    d = volume * (codes == 1) - volume * (codes == -1)
    assert a.delta == b.delta == np.add.accumulate(np.r_[0.0, d])[-1]
    fa, fb = a.side_fields(3.0, 3), b.side_fields(3.0, 3)
    for k in FIELDS:
        assert np.asarray(fa[k]).tobytes() == np.asarray(fb[k]).tobytes(), k


@pytest.mark.parametrize("codes", [[0, 0, 0], [1, 1, 1], [-1, -1, -1]], ids=["all_unknown", "all_buy", "all_sell"])
def test_one_price_and_one_side(codes):
    codes = np.array(codes, dtype=np.int8)
    price, volume = np.full(3, 10.0), np.array([1.0, 2.0, 3.0])
    core = new()
    append_trades(core, price, volume, codes, [0, 3])
    check_fields(core, ref_of(price, volume, codes, 0.25, 1))


def test_empty_and_one_row():
    core = new()
    f = core.side_fields(3.0, 3)
    assert core.delta == 0.0 and core.size == 0
    assert f["buy_volume"].shape == (0,) and f["delta"].tolist() == [0.0]
    assert np.isnan(f["delta_poc"][0]) and f["delta_poc_row"][0] == NO_ROW
    assert f["stacked_imbalance_buy"][0] == 0 and f["stacked_imbalance_sell"][0] == 0
    assert all(np.isnan(core.last_side()))
    core.append_trade(10.25, 4.0, None, 0.0, 4.0)
    check_fields(core, ref_of(np.array([10.25]), np.array([4.0]), np.array([-1], np.int8), 0.25, 1))
    core.clear()
    assert core.delta == 0.0 and core.side_fields(3.0, 3)["buy_volume"].shape == (0,)


def test_bars_close_equal_the_reference_and_uniform_equal_from_bars():
    import vpoc

    rng = np.random.default_rng(11)
    n = 60
    close = 100.0 + 0.25 * np.cumsum(rng.integers(-2, 3, n))
    high, low = close + 0.25 * rng.integers(0, 3, n), close - 0.25 * rng.integers(0, 3, n)
    volume = rng.integers(0, 20, n).astype(np.float64)
    buy = np.floor(volume * rng.random(n))
    sell = np.floor((volume - buy) * rng.random(n))
    core = new(bars=True)
    cuts = chunking(rng, n)
    for a, b in zip(cuts[:-1], cuts[1:]):
        core.append(None, high[a:b], low[a:b], close[a:b], None, volume[a:b], None, buy[a:b], sell[a:b])
    ref = ref_footprint(_rows(close, 0.25, 1), buy.tolist(), sell.tolist(), [0, n])
    ref["delta_poc"] = [x * 0.25 for x in ref["delta_poc"]]
    check_fields(core, ref)
    assert core.delta == np.add.accumulate(np.r_[0.0, buy - sell])[-1]
    uni = new(bars=True, distribute="uniform")
    for i in range(n):
        uni.append_bar(float(high[i]), float(low[i]), float(close[i]), None, float(volume[i]), None, float(buy[i]),
                       float(sell[i]))
    prof = vpoc.from_bars(high, low, close, volume, tick_size=0.25, distribute="uniform", buy_volume=buy,
                          sell_volume=sell)
    f = uni.side_fields(3.0, 3)
    for k in FIELDS:
        assert np.asarray(f[k]).tobytes() == np.asarray(getattr(prof, k)).tobytes(), k


def test_carried_rows_stay_out_of_the_side():
    """window_across_sessions: carried rows are in the windows only; the side is the session's own rows."""
    price = np.array([10.0, 10.25, 10.5, 10.0])
    vol = np.array([1.0, 2.0, 3.0, 4.0])
    first = new(window=3)
    first.append(price, None, None, None, None, vol, None, vol, np.zeros(4))
    second = new(window=3)
    second.carry(first, True)
    assert second.carried == 2
    second.append(price[:2], None, None, None, None, vol[:2], None, np.zeros(2), vol[:2])
    plain = new()
    plain.append(price[:2], None, None, None, None, vol[:2], None, np.zeros(2), vol[:2])
    a, b = second.side_fields(3.0, 3), plain.side_fields(3.0, 3)
    for k in FIELDS:
        assert np.asarray(a[k]).tobytes() == np.asarray(b[k]).tobytes(), k
    assert second.delta == -3.0
    np.testing.assert_array_equal(second.column(6), vol[:2])
    assert second.carry_column(5).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("bars, args, match", [
    (False, dict(buy=None, sell=None), "this live session is sided"),
    (False, dict(buy=[1.0], sell=None), "this live session is sided"),
    (False, dict(buy=[1.0], sell=[1.0]), r"side\[0\]: the buy / sell volume of a trade"),
    (False, dict(buy=[0.5], sell=[0.0]), r"side\[0\]"),
    (True, dict(buy=[1e-12], sell=[0.0]), r"buy_volume\[0\]=.* is below 2\*\*-32"),
    (True, dict(buy=[0.0], sell=[np.nan]), r"sell_volume\[0\] must be finite and >= 0"),
    (True, dict(buy=[-1.0], sell=[0.0]), r"buy_volume\[0\] must be finite and >= 0"),
    (True, dict(buy=[3.0], sell=[3.0]), r"buy_volume\[0\] \+ sell_volume\[0\] = 3 \+ 3 is more than volume\[0\] = 5"),
    (True, dict(buy=[1.0, 1.0], sell=[0.0]), "buy must be 1-D with 1 rows like volume"),
])
def test_bad_side_values_change_nothing(bars, args, match):
    core = new(bars=bars)
    if bars:
        core.append_bar(10.5, 10.0, 10.25, None, 4.0, None, 1.0, 2.0)
    else:
        core.append_trade(10.25, 4.0, None, 4.0, 0.0)
    before = (core.size, core.delta, {k: np.asarray(v).tobytes() for k, v in core.side_fields(3.0, 3).items()
                                      if v is not None})
    kw = {k: None if v is None else np.asarray(v, dtype=np.float64) for k, v in args.items()}
    with pytest.raises(ValueError, match=match):
        if bars:
            core.append(None, [10.5], [10.0], [10.25], None, [5.0], None, **kw)
        else:
            core.append([10.5], None, None, None, None, [1.0], None, **kw)
    after = (core.size, core.delta, {k: np.asarray(v).tobytes() for k, v in core.side_fields(3.0, 3).items()
                                     if v is not None})
    assert after == before


def test_side_error_names_the_argument_and_row():
    import vpoc

    core = new(bars=True)
    with pytest.raises(vpoc.InputError) as e:
        core.append(None, [10.5, 10.5], [10.0, 10.0], [10.25, 10.25], None, [5.0, 5.0], None, [1.0, 1e-12],
                    [0.0, 0.0])
    assert e.value.argument == "buy_volume" and e.value.index == 1


def test_not_sided_refuses_sides_and_side_reads():
    core = _core.LiveSession(False, "close", False, 0.25, 1, 0.7, "cbot", "center", 100_000)
    assert not core.sided
    with pytest.raises(ValueError, match="not sided"):
        core.append([10.0], None, None, None, None, [1.0], None, [1.0], [0.0])
    for read in (lambda: core.delta, lambda: core.side_fields(3.0, 3), core.last_side):
        with pytest.raises(ValueError, match="not sided"):
            read()
    with pytest.raises(ValueError, match="column must be 0..4"):
        core.column(5)


def test_developing_delta_poc_equals_the_live_session_after_each_bar():
    """The batch developing delta POC (bar_features) is the sided live session's after each bar."""
    rng = np.random.default_rng(5)
    n = 300
    close = 100.0 + 0.25 * np.cumsum(rng.integers(-2, 3, n))
    high, low = close + 0.25 * rng.integers(0, 4, n), close - 0.25 * rng.integers(0, 4, n)
    opn = np.clip(close + 0.25 * rng.integers(-2, 3, n), low, high)
    volume = rng.integers(0, 30, n).astype(np.float64)
    buy = np.floor(volume * rng.random(n))
    sell = np.floor((volume - buy) * rng.random(n))
    offsets = np.array([0, 0, 1, 120, 120, n], dtype=np.int64)  # empty, one-bar and long sessions
    for distribute in ("close", "hlc3", "uniform", "legacy"):
        opts = _core.Options(tick_size=0.25, distribute=distribute, poc_tie="low")
        got = _core.developing_delta_poc(high, low, close, opn, volume, buy, sell, offsets, opts)
        for s in range(len(offsets) - 1):
            core = _core.LiveSession(True, distribute, True, 0.25, 1, 0.7, "cbot", "low", 100_000, sided=True)
            for i in range(offsets[s], offsets[s + 1]):
                core.append_bar(float(high[i]), float(low[i]), float(close[i]), float(opn[i]), float(volume[i]), None,
                                float(buy[i]), float(sell[i]))
                assert got[i] == core.side_fields(3.0, 3)["delta_poc"][0], (distribute, i)
