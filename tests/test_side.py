"""Aggressor-side profiles (issue 27 item 1): buy / sell volume per row, delta, delta POC, footprint
imbalances, stacked counts and dev_delta, from trades with a side and from bars with buy / sell columns.

Contract: on the CPU every field equals the plain-NumPy loop reference below exactly for integer volumes;
the buy / sell rows align with ``volume``. GPU calls and the torch code path: tests/test_side_devices.py.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from reference import poc_of_counts
import _deps  # noqa: E402

vpoc = pytest.importorskip("vpoc")

NO_ROW = vpoc.NO_ROW
ROW_FIELDS = ("buy_volume", "sell_volume", "imbalance_buy", "imbalance_sell")
SESSION_FIELDS = ("delta", "buy_total", "sell_total", "delta_poc", "delta_poc_row", "stacked_imbalance_buy",
                  "stacked_imbalance_sell")
ALL_FIELDS = ROW_FIELDS + SESSION_FIELDS + ("dev_delta",)


# --------------------------------------------------------------------------- the reference (loops)


def _rows(price, tick, tpr):
    return np.floor_divide(np.rint(np.asarray(price, dtype=np.float64) / tick).astype(np.int64), tpr)


def ref_footprint(rows, buy, sell, offsets, *, ratio=3.0, stacked_min=3, tie="center"):
    """Per session, from each input row's ladder row and its buy / sell volume (rows of one input
    may be spread over several ladder rows: then ``rows`` is a list of (row, buy, sell) per input)."""
    out = {k: [] for k in ALL_FIELDS if k != "dev_delta"}
    for s in range(len(offsets) - 1):
        a, b = offsets[s], offsets[s + 1]
        if a == b:
            out["delta"].append(0.0)
            out["buy_total"].append(0.0)
            out["sell_total"].append(0.0)
            out["delta_poc"].append(np.nan)
            out["delta_poc_row"].append(NO_ROW)
            out["stacked_imbalance_buy"].append(0)
            out["stacked_imbalance_sell"].append(0)
            continue
        lo, hi = int(min(rows[a:b])), int(max(rows[a:b]))
        n = hi - lo + 1
        bv, sv = [0] * n, [0] * n
        for i in range(a, b):
            bv[rows[i] - lo] += buy[i]
            sv[rows[i] - lo] += sell[i]
        out["buy_volume"] += bv
        out["sell_volume"] += sv
        out["delta"].append(float(sum(bv) - sum(sv)))
        out["buy_total"].append(float(sum(bv)))
        out["sell_total"].append(float(sum(sv)))
        if sum(bv) == 0 and sum(sv) == 0:  # no volume of a known side: no delta POC (issue 27 dpnan)
            out["delta_poc_row"].append(NO_ROW)
            out["delta_poc"].append(np.nan)
        else:
            p = poc_of_counts([abs(x - y) for x, y in zip(bv, sv)], tie)
            out["delta_poc_row"].append(lo + p)
            out["delta_poc"].append(float(lo + p))
        ib = [j > 0 and bv[j] > 0 and bv[j] >= ratio * sv[j - 1] for j in range(n)]
        isl = [j < n - 1 and sv[j] > 0 and sv[j] >= ratio * bv[j + 1] for j in range(n)]
        out["imbalance_buy"] += ib
        out["imbalance_sell"] += isl
        for name, flags in (("stacked_imbalance_buy", ib), ("stacked_imbalance_sell", isl)):
            count, run = 0, 0
            for f in flags + [False]:
                if f:
                    run += 1
                else:
                    count += run >= stacked_min
                    run = 0
            out[name].append(count)
    return out


def ref_dev_delta(buy, sell, offsets):
    out = []
    for s in range(len(offsets) - 1):
        run = 0
        for i in range(offsets[s], offsets[s + 1]):
            run += buy[i] - sell[i]
            out.append(float(run))
    return out


def check(prof, ref, row_size, dev=None):
    for name, want in ref.items():
        got = np.asarray(getattr(prof, name))
        if name == "delta_poc":
            want = np.asarray(want) * row_size
            np.testing.assert_array_equal(got, want, err_msg=name)
        else:
            np.testing.assert_array_equal(got, np.asarray(want, dtype=got.dtype), err_msg=name)
        assert got.shape[0] == (prof.volume.shape[0] if name in ROW_FIELDS else prof.n_sessions), name
    if dev is not None:
        np.testing.assert_array_equal(prof.dev_delta, np.asarray(dev, dtype=np.float64))


# --------------------------------------------------------------------------- random trades


def random_trades(seed, n_sessions=None):
    """Sessions with gaps, ties, unknown sides, zero volumes, empty and one-trade sessions."""
    rng = np.random.default_rng(seed)
    S = int(rng.integers(1, 9)) if n_sessions is None else n_sessions
    counts = rng.integers(0, 40, S)
    counts[rng.random(S) < 0.2] = 0
    counts[rng.random(S) < 0.2] = 1
    N = int(counts.sum())
    offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
    spread = int(rng.choice([2, 6, 30]))  # narrow: ties and stacked runs; wide: gaps
    price = (6000 + rng.integers(-spread, spread + 1, N)) * 0.25
    volume = rng.integers(0, 6, N) * rng.choice([1, 1, 1, 7], N)
    volume[rng.random(N) < 0.1] = 0
    side = rng.choice(np.array([1, -1, 0], dtype=np.int8), N, p=[0.45, 0.45, 0.1])
    return price, volume, side, offsets


@pytest.mark.parametrize("tie", ["center", "low", "high"])
@pytest.mark.parametrize("tpr", [1, 2])
@pytest.mark.parametrize("seed", range(12))
def test_trades_equal_reference(seed, tpr, tie):
    price, volume, side, offsets = random_trades(seed)
    ratio, k = (3.0, 3) if seed % 2 else (1.5, 2)
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, ticks_per_row=tpr, poc_tie=tie,
                            side=side, developing=True, imbalance_ratio=ratio, stacked_imbalance_min=k)
    rows = _rows(price, 0.25, tpr)
    buy, sell = volume * (side == 1), volume * (side == -1)
    check(prof, ref_footprint(rows, buy, sell, offsets, ratio=ratio, stacked_min=k, tie=tie), 0.25 * tpr,
          ref_dev_delta(buy, sell, offsets))
    # aligned with volume; unknown side counts in volume only
    assert prof.buy_volume.shape == prof.volume.shape == prof.sell_volume.shape
    assert np.all(prof.buy_volume + prof.sell_volume <= prof.volume)
    unknown = np.zeros(len(offsets) - 1)
    for s in range(len(offsets) - 1):
        unknown[s] = volume[offsets[s]:offsets[s + 1]][side[offsets[s]:offsets[s + 1]] == 0].sum()
    buy_t = np.add.reduceat(np.r_[prof.buy_volume, 0], prof.offsets[:-1])[:prof.n_sessions]
    buy_t[prof.n_rows == 0] = 0
    sell_t = np.add.reduceat(np.r_[prof.sell_volume, 0], prof.offsets[:-1])[:prof.n_sessions]
    sell_t[prof.n_rows == 0] = 0
    np.testing.assert_array_equal(buy_t + sell_t + unknown, prof.total_volume)
    np.testing.assert_array_equal(buy_t - sell_t, prof.delta)
    # the side does not change the profile itself
    plain = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, ticks_per_row=tpr, poc_tie=tie,
                             developing=True)
    for name in ("volume", "offsets", "poc", "vah", "val", "dev_poc", "total_volume"):
        np.testing.assert_array_equal(getattr(prof, name), getattr(plain, name))


def test_one_session_many_trades_stacked_runs():
    """A hand-built footprint: three buy imbalances in a row (one stacked run), a 9-vs-0 row."""
    # rows 0..5: buy 0 9 9 9 0 5 | sell 3 3 0 2 1 0
    price = np.array([1, 2, 3, 5, 0, 1, 3, 4], dtype=np.float64)
    volume = np.array([9, 9, 9, 5, 3, 3, 2, 1])
    side = np.array([1, 1, 1, 1, -1, -1, -1, -1])
    prof = vpoc.from_trades(price, volume, tick_size=1.0, side=side)
    np.testing.assert_array_equal(prof.buy_volume, [0, 9, 9, 9, 0, 5])
    np.testing.assert_array_equal(prof.sell_volume, [3, 3, 0, 2, 1, 0])
    # buy at r vs 3 x sell at r - 1: row 1 9 >= 9, row 2 9 >= 9, row 3 9 >= 0, row 5 5 >= 3
    np.testing.assert_array_equal(prof.imbalance_buy, [False, True, True, True, False, True])
    # sell at r vs 3 x buy at r + 1: only row 3 (2 >= 0); row 5 is the top (no row above)
    np.testing.assert_array_equal(prof.imbalance_sell, [False, False, False, True, False, False])
    assert prof.stacked_imbalance_buy.tolist() == [1]
    assert prof.stacked_imbalance_sell.tolist() == [0]
    assert prof.delta.tolist() == [32 - 9]
    assert prof.delta_poc_row.tolist() == [2] and prof.delta_poc.tolist() == [2.0]  # |buy - sell| 3 6 9 7 1 5
    with_two = vpoc.from_trades(price, volume, tick_size=1.0, side=side, stacked_imbalance_min=2)
    assert with_two.stacked_imbalance_buy.tolist() == [1]
    with_one = vpoc.from_trades(price, volume, tick_size=1.0, side=side, stacked_imbalance_min=1)
    assert with_one.stacked_imbalance_buy.tolist() == [2] and with_one.stacked_imbalance_sell.tolist() == [1]
    ref = ref_footprint(_rows(price, 1.0, 1), volume * (side == 1), volume * (side == -1), [0, 8])
    check(prof, ref, 1.0)


def test_zero_volume_rule_and_edges():
    """5 vs 0 counts; 0 vs 0 does not; a session's edge rows have no diagonal partner."""
    price = np.array([0.0, 1.0, 2.0])
    prof = vpoc.from_trades(price, np.array([5, 0, 5]), tick_size=1.0, side=np.array([1, 1, -1]))
    # row 0: lowest (no row below) -> no buy imbalance; row 1: 0 buy -> none; row 2: sell at the top
    np.testing.assert_array_equal(prof.imbalance_buy, [False, False, False])
    np.testing.assert_array_equal(prof.imbalance_sell, [False, False, False])
    prof = vpoc.from_trades(price, np.array([0, 5, 5]), tick_size=1.0, side=np.array([-1, 1, -1]))
    np.testing.assert_array_equal(prof.imbalance_buy, [False, True, False])  # 5 vs 0 below
    np.testing.assert_array_equal(prof.imbalance_sell, [False, False, False])  # top row
    prof = vpoc.from_trades(price, np.array([5, 0, 0]), tick_size=1.0, side=np.array([-1, 1, 1]))
    np.testing.assert_array_equal(prof.imbalance_sell, [True, False, False])  # 5 vs 0 above


def test_delta_poc_ties_follow_poc_tie():
    price = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    volume = np.array([4, 1, 4, 1, 4])
    side = np.array([1, 0, -1, 0, 1])  # |delta| 4 0 4 0 4: three tied rows
    for tie, row in (("low", 0), ("high", 4), ("center", 2)):
        prof = vpoc.from_trades(price, volume, tick_size=1.0, side=side, poc_tie=tie)
        assert prof.delta_poc_row.tolist() == [row]
    # no trade of a known side: no delta POC (NaN / NO_ROW, as an empty session; was the tie rule's row 2)
    prof = vpoc.from_trades(price, volume, tick_size=1.0, side=np.zeros(5, np.int8))
    assert prof.delta.tolist() == [0.0] and prof.delta_poc_row.tolist() == [NO_ROW]
    assert np.isnan(prof.delta_poc).all()
    # balanced (buy == sell on every row, sided volume): a real tie, all at 0, by the POC rule
    prof = vpoc.from_trades(np.repeat(price, 2), np.repeat(volume, 2), tick_size=1.0,
                            side=np.tile(np.array([1, -1], np.int8), 5))
    assert prof.delta.tolist() == [0.0] and prof.delta_poc_row.tolist() == [2]


@pytest.mark.parametrize("distribute", ["uniform", "close", "hlc3", "legacy"])
def test_zero_volume_rows_set_the_same_range(distribute):
    """The engine fact the side passes stand on: a zero volume still touches its rows."""
    rng = np.random.default_rng(5)
    n = 60
    low = (24000 + rng.integers(-20, 20, n)) * 0.25
    high = low + rng.integers(0, 8, n) * 0.25
    close = low + rng.integers(0, 2, n) * (high - low)
    vol = rng.integers(0, 50, n)
    offsets = np.array([0, 1, 1, 20, 60])
    full = vpoc.from_bars(high, low, close, vol, open=low, offsets=offsets, tick_size=0.25, distribute=distribute)
    for mask in (np.zeros(n, bool), rng.random(n) < 0.5):
        part = vpoc.from_bars(high, low, close, vol * mask, open=low, offsets=offsets, tick_size=0.25,
                              distribute=distribute)
        np.testing.assert_array_equal(part.low_row, full.low_row)
        np.testing.assert_array_equal(part.n_rows, full.n_rows)
    price = (24000 + rng.integers(-20, 20, n)) * 0.25
    t_full = vpoc.from_trades(price, vol, offsets=offsets, tick_size=0.25, ticks_per_row=3)
    t_zero = vpoc.from_trades(price, np.zeros(n), offsets=offsets, tick_size=0.25, ticks_per_row=3)
    np.testing.assert_array_equal(t_zero.low_row, t_full.low_row)
    np.testing.assert_array_equal(t_zero.n_rows, t_full.n_rows)


def test_side_spellings_agree():
    price, volume, side, offsets = random_trades(3)
    letters = np.array(["A", "N", "B"])[side + 1]
    base = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, side=side, developing=True)
    for spelled in (letters, letters.astype("S1"), list(letters), side.astype(np.float64), side.astype(np.int64),
                    side.tolist()):
        prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, side=spelled, developing=True)
        for name in ALL_FIELDS:
            np.testing.assert_array_equal(getattr(prof, name), getattr(base, name), err_msg=name)


def test_float_volumes():
    """Non-integer volumes: delta is buy total - sell total; dev_delta is the float64 sum in input order."""
    rng = np.random.default_rng(11)
    price, _, side, offsets = random_trades(11, n_sessions=6)
    volume = rng.random(price.shape[0]) * 10 + 0.001
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, side=side, developing=True)
    buy, sell = volume * (side == 1), volume * (side == -1)
    want = []
    for s in range(len(offsets) - 1):
        run = 0.0
        for i in range(offsets[s], offsets[s + 1]):
            run = run + (buy[i] - sell[i])
            want.append(run)
    np.testing.assert_array_equal(prof.dev_delta, want)
    b = vpoc.from_trades(price, buy, offsets=offsets, tick_size=0.25)
    s_ = vpoc.from_trades(price, sell, offsets=offsets, tick_size=0.25)
    np.testing.assert_array_equal(prof.buy_volume, b.volume)
    np.testing.assert_array_equal(prof.sell_volume, s_.volume)
    np.testing.assert_array_equal(prof.delta, b.total_volume - s_.total_volume)
    ref = ref_footprint(_rows(price, 0.25, 1), buy, sell, offsets)
    for name in ("imbalance_buy", "imbalance_sell", "stacked_imbalance_buy", "stacked_imbalance_sell"):
        np.testing.assert_array_equal(getattr(prof, name), ref[name], err_msg=name)
    np.testing.assert_allclose(prof.buy_volume, ref["buy_volume"], rtol=1e-12)


def test_dev_delta_is_the_prefix_delta():
    """dev_delta[i] == the delta of from_trades on the session's rows up to and including i."""
    price, volume, side, offsets = random_trades(7, n_sessions=4)
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, side=side, developing=True)
    for s in range(len(offsets) - 1):
        for i in range(offsets[s], offsets[s + 1]):
            a = offsets[s]
            pre = vpoc.from_trades(price[a:i + 1], volume[a:i + 1], tick_size=0.25, side=side[a:i + 1])
            assert prof.dev_delta[i] == pre.delta[0]
    assert vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, side=side).dev_delta is None


def test_no_side_fields_are_absent():
    price, volume, _, offsets = random_trades(1)
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, developing=True)
    for name in ALL_FIELDS:
        assert getattr(prof, name) is None, name
    pd = pytest.importorskip("pandas")
    assert "delta" not in prof.to_pandas().columns
    sided = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, side=np.ones(len(price)))
    df = sided.to_pandas()
    assert isinstance(df, pd.DataFrame)
    for name in SESSION_FIELDS:
        np.testing.assert_array_equal(df[name].to_numpy(), getattr(sided, name))
    assert sided.dev_delta is None


def test_pickle_cpu_and_session_view():
    price, volume, side, offsets = random_trades(2, n_sessions=5)
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25, side=side, developing=True)
    back = pickle.loads(pickle.dumps(prof))
    for name in ALL_FIELDS:
        np.testing.assert_array_equal(getattr(back, name), getattr(prof, name), err_msg=name)
    plain = pickle.loads(pickle.dumps(vpoc.from_trades(price, volume, offsets=offsets, tick_size=0.25)))
    assert plain.delta is None and plain.buy_volume is None
    i = int(np.argmax(prof.n_rows))
    one = prof[i] if hasattr(prof, "__getitem__") else vpoc._profiles.SessionProfile(prof, i)
    a, b = prof.offsets[i], prof.offsets[i + 1]
    np.testing.assert_array_equal(one.buy_volume, prof.buy_volume[a:b])
    assert one.delta == prof.delta[i]


@_deps.needs("pandas")
def test_trades_container_side_is_the_default():
    price, volume, side, _ = random_trades(4, n_sessions=1)
    n = len(price)
    ts = np.datetime64("2025-01-21T15:00", "ns").astype(np.int64) + np.arange(n, dtype=np.int64) * 10**9
    tr = vpoc.io.Trades(ts, price, volume, side=np.array(["A", "N", "B"])[side + 1])
    prof = vpoc.from_trades(tr, session="daily", tick_size=0.25, developing=True)
    ref = vpoc.from_trades(price, volume, tick_size=0.25, side=side, developing=True)
    for name in ALL_FIELDS:
        np.testing.assert_array_equal(getattr(prof, name), getattr(ref, name), err_msg=name)
    flipped = vpoc.from_trades(tr, session="daily", tick_size=0.25, side=-side)  # side= wins
    np.testing.assert_array_equal(flipped.buy_volume, prof.sell_volume)
    bare = vpoc.from_trades(vpoc.io.Trades(ts, price, volume), session="daily", tick_size=0.25)
    assert bare.buy_volume is None and bare.delta is None


@_deps.needs("pandas_market_calendars")
def test_sessions_take_the_side_rows():
    """session= keeps some rows: the side of the kept rows goes with them."""
    rng = np.random.default_rng(9)
    n = 400
    t0 = np.datetime64("2025-01-21T20:00", "ns").astype(np.int64)
    ts = t0 + np.sort(rng.integers(0, 8 * 3600, n)).astype(np.int64) * 10**9  # crosses the 16:00 CT halt
    price = (24000 + rng.integers(-10, 10, n)) * 0.25
    volume = rng.integers(1, 9, n)
    side = rng.choice([1, -1, 0], n)
    sess = vpoc.sessions.globex(ts, on_outside="drop")  # the halt's rows are left out, on purpose
    prof = vpoc.from_trades(price, volume, session=sess, tick_size=0.25, side=side, developing=True)
    kept = sess.index if sess.index is not None else np.arange(n)
    ref = vpoc.from_trades(price[kept], volume[kept], offsets=sess.offsets, tick_size=0.25, side=side[kept],
                           developing=True)
    assert sess.n_dropped > 0
    for name in ALL_FIELDS:
        np.testing.assert_array_equal(getattr(prof, name), getattr(ref, name), err_msg=name)


# --------------------------------------------------------------------------- bars


def random_bars(seed):
    rng = np.random.default_rng(seed)
    n = 120
    low = (24000 + np.cumsum(rng.integers(-3, 4, n))) * 0.25
    high = low + rng.integers(0, 7, n) * 0.25
    close = low + rng.integers(0, 2, n) * (high - low)
    volume = rng.integers(0, 300, n)
    buy = (volume * rng.random(n)).astype(np.int64)
    sell = ((volume - buy) * rng.random(n)).astype(np.int64)
    full = rng.random(n) < 0.5
    sell[full] = volume[full] - buy[full]  # every contract classified (bid + ask = volume)
    offsets = np.array([0, 0, 1, 40, 40, 120])
    return high, low, close, volume, buy, sell, offsets


@pytest.mark.parametrize("distribute", ["uniform", "close", "hlc3", "legacy"])
def test_bars_buy_sell_columns(distribute):
    high, low, close, volume, buy, sell, offsets = random_bars(2)
    kw = dict(offsets=offsets, tick_size=0.25, distribute=distribute, open=low)
    prof = vpoc.from_bars(high, low, close, volume, buy_volume=buy, sell_volume=sell, developing=True, **kw)
    b = vpoc.from_bars(high, low, close, buy, **kw)
    s = vpoc.from_bars(high, low, close, sell, **kw)
    np.testing.assert_array_equal(prof.buy_volume, b.volume)  # buy profile = engine(bars, buy_volume)
    np.testing.assert_array_equal(prof.sell_volume, s.volume)
    np.testing.assert_array_equal(prof.delta, b.total_volume - s.total_volume)
    np.testing.assert_array_equal(prof.dev_delta, ref_dev_delta(buy, sell, offsets))
    assert np.all(prof.buy_volume + prof.sell_volume <= prof.volume * (1 + 1e-12))
    # imbalances / stacked / delta POC from those rows, by the loop reference on rows
    rows, bv, sv, offs = [], [], [], [0]
    for i in range(prof.n_sessions):
        a, e = prof.offsets[i], prof.offsets[i + 1]
        rows += list(range(prof.low_row[i], prof.low_row[i] + (e - a)))
        bv += list(prof.buy_volume[a:e])
        sv += list(prof.sell_volume[a:e])
        offs.append(offs[-1] + (e - a))
    ref = ref_footprint(rows, bv, sv, offs)
    for name in ("imbalance_buy", "imbalance_sell", "stacked_imbalance_buy", "stacked_imbalance_sell"):
        np.testing.assert_array_equal(getattr(prof, name), ref[name], err_msg=name)
    if distribute in ("close", "hlc3"):  # whole volumes on one row: exact ties, the reference's POC
        np.testing.assert_array_equal(prof.delta_poc_row, ref["delta_poc_row"])
    plain = vpoc.from_bars(high, low, close, volume, developing=True, **kw)
    for name in ("volume", "poc", "vah", "val", "dev_poc"):
        np.testing.assert_array_equal(getattr(prof, name), getattr(plain, name))


def test_bars_close_equal_trades():
    """Bars with distribute='close' are trades at their close with two sides."""
    high, low, close, volume, buy, sell, offsets = random_bars(4)
    prof = vpoc.from_bars(high, low, close, volume, buy_volume=buy, sell_volume=sell, offsets=offsets,
                          tick_size=0.25, distribute="close")
    rows = _rows(close, 0.25, 1)
    check(prof, ref_footprint(rows, buy, sell, offsets), 0.25)


# --------------------------------------------------------------------------- bad input


def test_bad_side():
    p, v = np.array([1.0, 2.0, 3.0]), np.array([1, 2, 3])
    with pytest.raises(ValueError, match=r"side\[1\]"):
        vpoc.from_trades(p, v, tick_size=1.0, side=[1, 2, 0])
    with pytest.raises(ValueError, match=r"side\[2\]"):
        vpoc.from_trades(p, v, tick_size=1.0, side=["B", "A", "X"])
    with pytest.raises(ValueError, match="side has length 2"):
        vpoc.from_trades(p, v, tick_size=1.0, side=[1, -1])
    with pytest.raises(TypeError, match="side is boolean"):
        vpoc.from_trades(p, v, tick_size=1.0, side=np.array([True, False, True]))
    with pytest.raises(ValueError, match="side"):
        vpoc.from_trades(p, v, tick_size=1.0, side=np.array([1.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match="1-D"):
        vpoc.from_trades(p, v, tick_size=1.0, side=np.ones((3, 1)))


def test_bad_imbalance_parameters():
    p, v, s = np.array([1.0, 2.0]), np.array([1, 2]), np.array([1, -1])
    for bad in (0.5, float("nan"), float("inf"), -3.0):
        with pytest.raises(ValueError, match="imbalance_ratio"):
            vpoc.from_trades(p, v, tick_size=1.0, side=s, imbalance_ratio=bad)
    with pytest.raises(TypeError, match="imbalance_ratio"):
        vpoc.from_trades(p, v, tick_size=1.0, side=s, imbalance_ratio="3")
    with pytest.raises(ValueError, match="stacked_imbalance_min"):
        vpoc.from_trades(p, v, tick_size=1.0, side=s, stacked_imbalance_min=0)
    with pytest.raises(TypeError, match="stacked_imbalance_min"):
        vpoc.from_trades(p, v, tick_size=1.0, side=s, stacked_imbalance_min=2.5)
    with pytest.raises(TypeError, match="imbalance_ratio"):
        vpoc.from_trades(p, v, tick_size=1.0, imbalance_ratio=2.0)  # no side to apply it to
    with pytest.raises(TypeError, match="imbalance_ratio"):
        vpoc.from_bars(p, p, p, v, tick_size=1.0, stacked_imbalance_min=2)


def test_bad_bar_columns():
    h = np.array([2.0, 3.0, 4.0])
    v = np.array([10, 10, 10])
    with pytest.raises(TypeError, match="together"):
        vpoc.from_bars(h, h, h, v, tick_size=1.0, buy_volume=v)
    with pytest.raises(ValueError, match=r"buy_volume\[1\] \+ sell_volume\[1\]"):
        vpoc.from_bars(h, h, h, v, tick_size=1.0, buy_volume=[5, 6, 5], sell_volume=[5, 5, 5])
    with pytest.raises(ValueError, match=r"buy_volume\[2\]"):
        vpoc.from_bars(h, h, h, v, tick_size=1.0, buy_volume=[5, 5, -1], sell_volume=[5, 5, 5])
    with pytest.raises(ValueError, match=r"sell_volume\[0\]"):
        vpoc.from_bars(h, h, h, v.astype(float), tick_size=1.0, buy_volume=[5, 5, 1], sell_volume=[np.nan, 5, 5])
    with pytest.raises(ValueError, match="sell_volume has length 2"):
        vpoc.from_bars(h, h, h, v, tick_size=1.0, buy_volume=[5, 5, 5], sell_volume=[5, 5])
    with pytest.raises(TypeError, match="buy_volume"):
        vpoc.from_bars(h, h, h, v, tick_size=1.0, buy_volume=["a", "b", "c"], sell_volume=[5, 5, 5])
    # float columns: buy + sell within 1e-9 of volume is accepted (0.1 + 0.2 > 0.3 in float64)
    vpoc.from_bars(h, h, h, np.array([0.3, 1, 1]), tick_size=1.0, buy_volume=[0.1, 0, 0], sell_volume=[0.2, 0, 0])


# --------------------------------------------------------------------------- the session table (opt-in columns)


def test_session_features_side_columns():
    high, low, close, volume, buy, sell, offsets = random_bars(5)
    kw = dict(offsets=offsets, tick_size=0.25)
    base = vpoc.session_features(high, low, close, volume, **kw)
    table = vpoc.session_features(high, low, close, volume, buy_volume=buy, sell_volume=sell,
                                  stacked_imbalance_min=2, **kw)
    side_cols = vpoc.features.SIDE_TABLE_COLUMNS
    assert tuple(table.columns) == tuple(base.columns) + side_cols  # default columns unchanged, side last
    np.testing.assert_array_equal(table.values[:, :len(base.columns)], base.values)
    prof = vpoc.from_bars(high, low, close, volume, buy_volume=buy, sell_volume=sell, stacked_imbalance_min=2, **kw)
    empty = prof.n_rows == 0
    for j, name in enumerate(side_cols):
        want = np.asarray(getattr(prof, name), dtype=np.float64)
        want[empty] = np.nan  # an empty session's row is all NaN
        np.testing.assert_array_equal(table.values[:, len(base.columns) + j], want.astype(np.float32), err_msg=name)
    with pytest.raises(TypeError, match="together"):
        vpoc.session_features(high, low, close, volume, buy_volume=buy, **kw)
    with pytest.raises(TypeError, match="imbalance_ratio"):
        vpoc.session_features(high, low, close, volume, imbalance_ratio=2.0, **kw)


@_deps.needs("pandas_market_calendars")
def test_session_features_side_columns_kept_rows():
    """session= leaves rows out: the buy / sell columns lose the same rows."""
    rng = np.random.default_rng(3)
    n = 600
    t0 = np.datetime64("2025-01-21T20:00", "ns").astype(np.int64)
    ts = t0 + np.arange(n, dtype=np.int64) * 60 * 10**9  # crosses the 16:00-17:00 CT halt
    low = (24000 + np.cumsum(rng.integers(-2, 3, n))) * 0.25
    high = low + rng.integers(0, 4, n) * 0.25
    volume = rng.integers(1, 50, n)
    buy = volume // 2
    sell = volume - buy - (rng.random(n) < 0.3)
    sess = vpoc.sessions.globex(ts, on_outside="drop")
    table = vpoc.session_features(high, low, low, volume, timestamp=ts, session=sess, tick_size=0.25,
                                  buy_volume=buy, sell_volume=sell)
    k = sess.index
    assert k is not None and sess.n_dropped > 0
    prof = vpoc.from_bars(high[k], low[k], low[k], volume[k], offsets=sess.offsets, tick_size=0.25,
                          buy_volume=buy[k], sell_volume=sell[k])
    got = table.values[:, list(table.columns).index("delta")]
    np.testing.assert_array_equal(got, np.where(prof.n_rows > 0, prof.delta, np.nan).astype(np.float32))
    # a buy / sell column of another length than the input is refused before the kept rows are
    # taken from it (longer: it was cut silently; shorter: an IndexError)
    for m in (n + 5, n - 3):
        with pytest.raises(ValueError, match=f"buy_volume has {m} rows but the bars have {n}"):
            vpoc.session_features(high, low, low, volume, timestamp=ts, session=sess, tick_size=0.25,
                                  buy_volume=np.resize(buy, m), sell_volume=np.resize(sell, m))


def test_side_with_scalar_prices_names_the_price():
    with pytest.raises(ValueError, match="price must be a 1-D array"):
        vpoc.from_trades(100.0, 1.0, tick_size=0.25, side=[1])
    with pytest.raises(ValueError, match="high must be a 1-D array"):
        vpoc.from_bars(100.0, 100.0, 100.0, 1.0, tick_size=0.25, buy_volume=[1], sell_volume=[0])


# --------------------------------------------------------------------------- more call shapes


def test_empty_inputs_and_sessions():
    prof = vpoc.from_trades([], [], tick_size=0.25, side=[], developing=True)
    assert prof.buy_volume.shape == (0,) and prof.dev_delta.shape == (0,)
    assert prof.delta.tolist() == [0.0] and np.isnan(prof.delta_poc[0]) and prof.delta_poc_row[0] == NO_ROW
    assert prof.stacked_imbalance_buy.tolist() == [0] and prof.imbalance_sell.shape == (0,)
    prof = vpoc.from_trades(np.zeros(0), np.zeros(0), offsets=[0, 0, 0], tick_size=0.25, side=np.zeros(0))
    assert prof.delta.tolist() == [0.0, 0.0] and prof.stacked_imbalance_sell.tolist() == [0, 0]


def test_session_ids_and_threads():
    price, volume, side, offsets = random_trades(8, n_sessions=6)
    counts = np.diff(offsets)
    ids = np.repeat(np.arange(len(counts)) * 10 + 3, counts)
    by_ids = vpoc.from_trades(price, volume, session_ids=ids, tick_size=0.25, side=side, developing=True, threads=2)
    keep = counts > 0  # session_ids make no empty sessions
    ref = vpoc.from_trades(price, volume, offsets=np.r_[0, np.cumsum(counts[keep])], tick_size=0.25, side=side,
                           developing=True, threads=1)
    for name in ALL_FIELDS:
        np.testing.assert_array_equal(getattr(by_ids, name), getattr(ref, name), err_msg=name)


def test_off_grid_prices_are_reported_once():
    price = np.r_[np.arange(2000) * 0.25, 100.1]
    with pytest.warns(UserWarning, match="not on its grid") as record:
        prof = vpoc.from_trades(price, np.ones(2001, int), tick_size=0.25, side=np.ones(2001))
        prof.delta_poc  # the lazy pass too
    assert len(record) == 1 and prof.snapped_prices == 1
    np.testing.assert_array_equal(prof.buy_volume, prof.volume)


def test_dataframe_side_column():
    pd = pytest.importorskip("pandas")
    ts = pd.date_range("2025-01-21 15:00", periods=5, freq="s", tz="UTC")
    df = pd.DataFrame({"timestamp": ts, "price": [1.0, 2, 3, 2, 1], "volume": [1, 2, 3, 4, 5],
                       "side": ["B", "A", "N", "B", "A"]})
    prof = vpoc.from_trades(df, tick_size=1.0, session="daily")
    np.testing.assert_array_equal(prof.buy_volume, [1, 4, 0])
    np.testing.assert_array_equal(prof.sell_volume, [5, 2, 0])
    assert prof.delta.tolist() == [-2.0]
    with pytest.raises(ValueError, match="side"):
        vpoc.from_trades(df.assign(side=["B", "A", "X", "B", "A"]), tick_size=1.0, session="daily")
