"""vpoc.Live with the aggressor side (issue 27 item 1): Live(side=True) against the batch and a plain loop.

Contract: for any chunking of the same trades / bars (one-row and array updates, sides as ints, letters
or bytes), after every update ``live.delta`` equals ``from_trades(..., side=, developing=True).dev_delta``
of the latest row (and the loop reference), ``side_profile()`` equals from_trades / from_bars on the
session's rows so far (and the loop reference of tests/test_side.py), ``bar_features_row()`` equals
``bar_features(..., buy_volume=, sell_volume=)``; finished sessions equal the batch; bad sides raise
naming the argument and change nothing; the state round-trips (nested, flat, JSON, pickle).
"""

import json
import pickle

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import vpoc
from test_live_atomic import same  # bit-equal, NaN equal to NaN
from test_side import _rows, ref_dev_delta, ref_footprint
from vpoc.live import BAR_COLUMNS, BAR_SIDE_COLUMNS

MIN = 60 * 10**9
T0 = int(np.datetime64("2024-03-08T20:00", "ns").astype(np.int64))  # crosses the March DST change
ROW_FIELDS = ("buy_volume", "sell_volume", "imbalance_buy", "imbalance_sell")
SESSION_FIELDS = ("delta", "delta_poc", "delta_poc_row", "stacked_imbalance_buy", "stacked_imbalance_sell")
CODES = np.array([1, -1, 0], dtype=np.int8)
LETTER = {1: "B", -1: "A", 0: "N"}


def chunks(rng, n, max_chunk):
    out, i = [], 0
    while i < n:
        k = 1 if rng.random() < 0.4 else int(rng.integers(1, max_chunk + 1))
        out.append((i, min(n, i + k)))
        i += k
    return out


def side_as(codes, how):
    """The same sides in another accepted spelling."""
    if how == "int8":
        return codes
    if how == "float":
        return codes.astype(np.float64)
    if how == "letters":
        return np.array([LETTER[int(c)] for c in codes])
    if how == "bytes":
        return np.array([LETTER[int(c)] for c in codes], dtype="S1")
    return [int(c) for c in codes]  # a list


def one_side(code, rng):
    return [int(code), LETTER[int(code)], LETTER[int(code)].encode(), np.int8(code), float(code)][
        int(rng.integers(0, 5))]


def random_trades(rng, n, fractional):
    spread = int(rng.choice([2, 5, 30]))  # narrow: ties and stacked runs; wide: gaps
    price = (6000 + rng.integers(-spread, spread + 1, n)) * 0.25
    vol = rng.random(n) * 9 if fractional else rng.integers(0, 7, n).astype(np.int64)
    vol[rng.random(n) < 0.1] = 0
    side = rng.choice(CODES, n, p=[0.45, 0.45, 0.1])
    ts = T0 + np.cumsum(rng.integers(1, 3, n)) * 7 * MIN
    return price, vol, side, ts.astype(np.int64)


def random_bars(rng, n, tick, fractional):
    close = 4000.0 + np.cumsum(rng.integers(-3, 4, n)) * tick
    high = close + rng.integers(0, 5, n) * tick
    low = close - rng.integers(0, 5, n) * tick
    opn = np.clip(close + rng.integers(-2, 3, n) * tick, low, high)
    if fractional:
        vol = rng.random(n) * 40
        buy = vol * rng.random(n)
        sell = (vol - buy) * rng.random(n)
    else:
        vol = rng.integers(0, 60, n).astype(np.int64)
        buy = (vol * rng.random(n)).astype(np.int64)
        sell = ((vol - buy) * rng.random(n)).astype(np.int64)
        full = rng.random(n) < 0.5
        sell[full] = vol[full] - buy[full]  # every contract classified
    ts = T0 + np.cumsum(rng.integers(1, 3, n)) * 17 * MIN
    return high, low, close, opn, vol, buy, sell, ts.astype(np.int64)


def sessions_of(rng, ts):
    """session_starts (some windows hold no row: empty sessions) and each row's session (-1: before
    the first start, dropped)."""
    starts = np.sort(rng.choice(ts, size=min(4, ts.size), replace=False))
    if ts.size > 3 and rng.random() < 0.5:  # a window with no row in it
        starts = np.sort(np.r_[starts, starts[-1] + 1])
    k = np.searchsorted(starts, ts, side="right") - 1
    return starts, k


def check_side_profile(live, pre, ref=None, row_size=0.25):
    """live.side_profile() equals the batch profile ``pre`` of the session's rows (and the loop
    reference ``ref`` on them, for whole-number volumes)."""
    sp = live.side_profile()
    for name in ROW_FIELDS:
        assert same(sp[name], getattr(pre, name)), name
    for name in SESSION_FIELDS:
        assert same(sp[name], getattr(pre, name)[0]), (name, sp[name], getattr(pre, name))
    assert same(live.buy_histogram(), sp["buy_volume"]) and same(live.sell_histogram(), sp["sell_volume"])
    assert live.buy_histogram().shape == live.histogram().shape
    assert same(live.delta_poc, sp["delta_poc"]) and live.delta_poc_row == sp["delta_poc_row"]
    assert sp["dev_delta"] == live.delta
    if ref is not None:
        for name in ROW_FIELDS:
            assert same(sp[name], np.asarray(ref[name], dtype=sp[name].dtype)), name
        assert sp["delta"] == ref["delta"][0]
        assert sp["delta_poc_row"] == ref["delta_poc_row"][0]
        assert same(sp["delta_poc"], ref["delta_poc"][0] * row_size)  # NaN: no row of a known side
        assert sp["stacked_imbalance_buy"] == ref["stacked_imbalance_buy"][0]


# --------------------------------------------------------------------------- trades


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), fractional=st.booleans(), tpr=st.sampled_from([1, 2]),
       tie=st.sampled_from(["center", "low", "high"]), max_chunk=st.sampled_from([3, 30]),
       how=st.sampled_from(["int8", "float", "letters", "bytes", "list"]))
def test_trades_equal_batch_for_any_chunking(seed, fractional, tpr, tie, max_chunk, how):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 160))
    price, vol, side, ts = random_trades(rng, n, fractional)
    starts, k = sessions_of(rng, ts)
    keep = np.flatnonzero(k >= 0)
    kw = dict(tick_size=0.25, ticks_per_row=tpr, poc_tie=tie)
    note(f"n={n} kept={keep.size} {kw} {how}")
    live = vpoc.Live(kind="trades", session_starts=starts, on_outside="drop", side=True, **kw)
    offsets = np.searchsorted(k[keep], np.arange(starts.size + 1)).astype(np.int64)
    kp, kv, ks = price[keep], vol[keep], side[keep]
    ref = vpoc.from_trades(kp, kv, offsets=offsets, side=ks, developing=True, **kw)
    buy, sell = kv * (ks == 1), kv * (ks == -1)
    loop_dev = ref_dev_delta(buy.tolist(), sell.tolist(), offsets.tolist())
    pos = np.full(n, -1)
    pos[keep] = np.arange(keep.size)
    assert np.isnan(live.delta_poc) and live.delta == 0.0
    for a, b in chunks(rng, n, max_chunk):
        if b - a == 1 and rng.random() < 0.7:
            v = float(vol[a]) if fractional else int(vol[a])
            live.update(float(price[a]), v, side=one_side(side[a], rng), timestamp=int(ts[a]))
        else:
            live.update(price[a:b], vol[a:b], side=side_as(side[a:b], how), timestamp=ts[a:b])
        kept = pos[:b][pos[:b] >= 0]
        if kept.size == 0:
            assert live.delta == 0.0 and np.isnan(live.delta_poc)
            continue
        j = int(kept[-1])
        s = int(np.searchsorted(offsets, j, side="right") - 1)
        assert live.delta == ref.dev_delta[j] == loop_dev[j]
        lo = int(offsets[s])
        pre = vpoc.from_trades(kp[lo:j + 1], kv[lo:j + 1], side=ks[lo:j + 1], **kw)
        loop = None if fractional else ref_footprint(_rows(kp[lo:j + 1], 0.25, tpr), buy[lo:j + 1],
                                                     sell[lo:j + 1], [0, j + 1 - lo], tie=tie)
        check_side_profile(live, pre, loop, 0.25 * tpr)
    live.close()
    assert live.delta == 0.0 and np.isnan(live.delta_poc)
    done = vpoc.from_trades(kp, kv, offsets=offsets, side=ks, **kw)
    ne = np.flatnonzero(np.diff(offsets) > 0)  # Live never sees a session without rows
    prof = live.profiles
    assert prof.n_sessions == ne.size
    keep_rows = np.concatenate([np.arange(done.offsets[s], done.offsets[s + 1]) for s in ne]) if ne.size \
        else np.zeros(0, np.int64)
    for name in ROW_FIELDS + ("volume",):
        assert same(getattr(prof, name), np.asarray(getattr(done, name))[keep_rows]), name
    for name in SESSION_FIELDS:
        assert same(getattr(prof, name), np.asarray(getattr(done, name))[ne]), name


def test_trades_ties_and_unknown_sides():
    """Equal |buy - sell| on several rows: poc_tie picks among them as the volume POC rule does;
    unknown sides count in the volume only."""
    price = np.array([100.0, 101.0, 102.0, 103.0, 104.0, 102.0])
    vol = np.array([5, 5, 9, 5, 2, 9])
    side = np.array([1, -1, 0, 1, 0, 0], dtype=np.int8)  # |delta| 5 at 100, 101, 103: a three-way tie
    for tie, want in (("low", 100.0), ("high", 103.0), ("center", 101.0)):
        live = vpoc.Live(kind="trades", tick_size=1.0, poc_tie=tie, side=True)
        live.update(price, vol, side=side, timestamp=T0 + np.arange(6) * MIN)
        ref = vpoc.from_trades(price, vol, side=side, tick_size=1.0, poc_tie=tie, developing=True)
        assert live.delta_poc == ref.delta_poc[0] == want
        assert live.delta == ref.dev_delta[-1] == 5.0
        sp = live.side_profile()
        assert same(sp["buy_volume"], [5, 0, 0, 5, 0]) and same(sp["sell_volume"], [0, 5, 0, 0, 0])
        assert live.total_volume == 35.0


def test_all_unknown_and_zero_volume_sessions():
    """No side known (or only zero volumes of a known side): delta 0 and no delta POC (NaN / NO_ROW, as the
    batch; before issue 27 dpnan every row tied at 0 and poc_tie picked 11.0); zero volumes still touch their rows."""
    price = np.array([10.0, 12.0, 11.0])
    for vol, side in ((np.array([3, 4, 5]), np.zeros(3, np.int8)), (np.zeros(3, np.int64), np.array([1, -1, 1]))):
        live = vpoc.Live(kind="trades", tick_size=1.0, side=True)
        live.update(price, vol, side=side, timestamp=T0 + np.arange(3) * MIN)
        ref = vpoc.from_trades(price, vol, side=side, tick_size=1.0)
        check_side_profile(live, ref, row_size=1.0)
        assert live.delta == 0.0 and np.isnan(live.delta_poc) and live.delta_poc_row == vpoc.NO_ROW


def test_empty_live_and_closed_session():
    live = vpoc.Live(kind="trades", tick_size=0.25, side=True)
    assert live.delta == 0.0 and np.isnan(live.delta_poc) and live.delta_poc_row == vpoc.NO_ROW
    sp = live.side_profile()
    assert sp["buy_volume"].shape == (0,) and sp["stacked_imbalance_buy"] == 0 and sp["delta"] == 0.0
    assert live.buy_histogram().shape == (0,)
    prof = live.profiles
    assert prof.n_sessions == 0 and prof.delta.shape == (0,) and prof.buy_volume.shape == (0,)
    live.update(100.0, 3, side="B", timestamp=T0)
    live.update(100.25, 1, side="A", timestamp=T0 + MIN)
    assert live.delta == 2.0 and live.delta_poc == 100.0
    live.close()
    assert live.delta == 0.0 and np.isnan(live.delta_poc)
    assert same(live.profiles.delta, [2.0]) and same(live.profiles.buy_volume, [3.0, 0.0])
    with pytest.raises(TypeError, match="no aggressor side"):
        vpoc.Live(kind="trades", tick_size=0.25).delta


# --------------------------------------------------------------------------- bars


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), distribute=st.sampled_from(["uniform", "close", "hlc3", "legacy"]),
       fractional=st.booleans(), tpr=st.sampled_from([1, 2]), tie=st.sampled_from(["center", "low", "high"]),
       tick=st.sampled_from([0.25, 0.1]), max_chunk=st.sampled_from([3, 30]))
@pytest.mark.filterwarnings("ignore::vpoc.sessions.SessionHoursWarning")  # features in New York hours (t8fix)
def test_bars_equal_batch_for_any_chunking(seed, distribute, fractional, tpr, tie, tick, max_chunk):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 120))
    h, lo, c, o, v, bv, sv, ts = random_bars(rng, n, tick, fractional)
    starts, k = sessions_of(rng, ts)
    keep = np.flatnonzero(k >= 0)
    kw = dict(tick_size=tick, ticks_per_row=tpr, distribute=distribute, poc_tie=tie)
    fopts = dict(composite_sessions=2, lookbacks=(1, 2), ib_minutes=120, tz="America/New_York")
    note(f"n={n} kept={keep.size} {kw}")
    live = vpoc.Live(session_starts=starts, on_outside="drop", side=True, features=fopts, **kw)
    pos = np.full(n, -1)
    pos[keep] = np.arange(keep.size)
    ids = k[keep]
    cols = (h[keep], lo[keep], c[keep], v[keep])
    kb, ks = bv[keep], sv[keep]
    if keep.size:
        ref = vpoc.from_bars(*cols, open=o[keep], session_ids=ids, developing=True, buy_volume=kb,
                             sell_volume=ks, **kw)
        bf = vpoc.bar_features(*cols, open=o[keep], timestamp=ts[keep], session_ids=ids, buy_volume=kb,
                               sell_volume=ks, **kw, **{x: y for x, y in fopts.items() if x != "lookbacks"})
        assert bf.columns == BAR_COLUMNS + BAR_SIDE_COLUMNS
        offs = np.r_[0, np.flatnonzero(np.diff(ids)) + 1, ids.size]
    for a, b in chunks(rng, n, max_chunk):
        if b - a == 1 and rng.random() < 0.7:
            num = float if fractional else int
            live.update(h[a], lo[a], c[a], num(v[a]), open=o[a], buy_volume=num(bv[a]), sell_volume=num(sv[a]),
                        timestamp=int(ts[a]))
        else:
            live.update(h[a:b], lo[a:b], c[a:b], v[a:b], open=o[a:b], buy_volume=bv[a:b], sell_volume=sv[a:b],
                        timestamp=ts[a:b])
        kept = pos[:b][pos[:b] >= 0]
        if kept.size == 0:
            continue
        j = int(kept[-1])
        assert live.delta == ref.dev_delta[j]
        assert same(live.bar_features_row(), bf.values[j])
        s0 = int(offs[np.searchsorted(offs, j, side="right") - 1])
        pre = vpoc.from_bars(*(x[s0:j + 1] for x in cols), open=o[keep][s0:j + 1], buy_volume=kb[s0:j + 1],
                             sell_volume=ks[s0:j + 1], **kw)
        check_side_profile(live, pre)
    live.close()
    if keep.size == 0:
        return
    done = vpoc.from_bars(*cols, open=o[keep], session_ids=ids, buy_volume=kb, sell_volume=ks, **kw)
    for name in ROW_FIELDS + SESSION_FIELDS + ("volume", "poc"):
        assert same(getattr(live.profiles, name), getattr(done, name)), name
    sf = vpoc.session_features(*cols, open=o[keep], timestamp=ts[keep], session_ids=ids, buy_volume=kb,
                               sell_volume=ks, **kw, **fopts)
    table = live.session_table()
    side_cols = vpoc.features.SIDE_TABLE_COLUMNS
    assert table.columns == sf.columns and table.columns[-len(side_cols):] == side_cols
    assert same(table.values, sf.values)  # every column, the side ones too (tests/test_live_side_table_followup.py)


# --------------------------------------------------------------------------- bad input


def _bars_live():
    live = vpoc.Live(tick_size=0.25, side=True)
    live.update(np.array([101.0, 102.0]), np.array([100.0, 101.0]), np.array([100.5, 101.0]),
                np.array([10, 20]), buy_volume=np.array([4, 5]), sell_volume=np.array([6, 15]),
                timestamp=T0 + np.arange(2) * MIN)
    return live


def _trades_live():
    live = vpoc.Live(kind="trades", tick_size=0.25, side=True)
    live.update(np.array([100.0, 100.25]), np.array([3, 4]), side=[1, -1], timestamp=T0 + np.arange(2) * MIN)
    return live


def _state(live):
    return pickle.dumps(live.state_dict()), live.levels, live.delta, live.side_profile()["delta_poc"]


@pytest.mark.parametrize("side, err, match", [
    (2, ValueError, r"^Live.update: side = 2; give"),
    ("X", ValueError, r"^Live.update: side = 'X'"),
    (b"Q", ValueError, r"^Live.update: side = b'Q'"),
    (0.5, ValueError, r"^Live.update: side = 0\.5"),
    (True, TypeError, "side is boolean"),
    ([1, 1], ValueError, "side must be 1-D"),
    (None, TypeError, "needs side="),
])
def test_bad_one_row_side(side, err, match):
    live = _trades_live()
    before = _state(live)
    with pytest.raises(err, match=match):
        live.update(100.5, 2, side=side, timestamp=T0 + 5 * MIN)
    assert _state(live) == before


@pytest.mark.parametrize("side, err, match", [
    ([1, 2, 0], ValueError, r"side\[1\]: side = 2"),
    (["B", "A", "S"], ValueError, r"side\[2\]: side = 'S'"),
    ([1, -1], ValueError, "side has length 2 but there are 3 trades"),
    (np.array([True, False, True]), TypeError, "side is boolean"),
    (np.array([1.0, np.nan, 0.0]), ValueError, r"side\[1\]"),
])
def test_bad_array_side(side, err, match):
    live = _trades_live()
    before = _state(live)
    with pytest.raises(err, match=match):
        live.update(np.array([100.5, 100.75, 101.0]), np.array([1, 2, 3]), side=side,
                    timestamp=T0 + np.arange(5, 8) * MIN)
    assert _state(live) == before


@pytest.mark.parametrize("one", [True, False])
@pytest.mark.parametrize("buy, sell, err, match", [
    (6, 5, ValueError, r"buy_volume\[I\] \+ sell_volume\[I\] = 6 \+ 5 is more than volume\[I\] = 10"),
    (-1.0, 2.0, ValueError, r"buy_volume\[I\].* must be finite and >= 0"),
    (1.0, np.nan, ValueError, r"sell_volume\[I\].* must be finite and >= 0"),
    (1e-12, 0.0, ValueError, r"buy_volume\[I\]=.* is below 2\*\*-32"),
    (None, 2, TypeError, "needs buy_volume= and sell_volume="),
    ("3", 2, TypeError, "buy_volume"),
])
def test_bad_bar_sides(one, buy, sell, err, match):
    live = _bars_live()
    before = _state(live)
    match = match.replace("I", "0" if one else "1")
    with pytest.raises(err, match=match):
        if one:
            live.update(102.0, 101.0, 101.5, 10, buy_volume=buy, sell_volume=sell, timestamp=T0 + 5 * MIN)
        else:  # a good bar first: the whole update is refused
            arr = lambda x: None if x is None else np.array([1, x], dtype=object if isinstance(x, str)  # noqa
                                                            else np.float64 if isinstance(x, float) else np.int64)
            live.update(np.array([102.0, 102.0]), np.array([101.0, 101.0]), np.array([101.5, 101.5]),
                        np.array([10, 10]), buy_volume=arr(buy), sell_volume=arr(sell),
                        timestamp=T0 + np.arange(5, 7) * MIN)
    assert _state(live) == before


def test_side_arguments_that_do_not_fit():
    with pytest.raises(TypeError, match=r"make it with Live\(\.\.\., side=True\)"):
        vpoc.Live(kind="trades", tick_size=0.25).update(100.0, 1, side=1, timestamp=T0)
    with pytest.raises(TypeError, match="imbalance_ratio= / stacked_imbalance_min="):
        vpoc.Live(tick_size=0.25, imbalance_ratio=2.0)
    with pytest.raises(ValueError, match="imbalance_ratio must be a finite number >= 1"):
        vpoc.Live(tick_size=0.25, side=True, imbalance_ratio=0.5)
    with pytest.raises(TypeError, match="side must be"):
        vpoc.Live(tick_size=0.25, side="yes")
    with pytest.raises(TypeError, match="side= is for trades"):
        _bars_live().update(102.0, 101.0, 101.5, 10, side=1, timestamp=T0 + 5 * MIN)
    with pytest.raises(TypeError, match="are for bars"):
        _trades_live().update(100.0, 1, buy_volume=1, sell_volume=0, timestamp=T0 + 5 * MIN)
    with pytest.raises(ValueError, match="buy_volume has length 1 but there are 2 rows"):
        _bars_live().update(np.array([102.0, 102.0]), np.array([101.0, 101.0]), np.array([101.5, 101.5]),
                            np.array([10, 10]), buy_volume=[1], sell_volume=[1, 2],
                            timestamp=T0 + np.arange(5, 7) * MIN)


def test_imbalance_rules_follow_the_live():
    """imbalance_ratio / stacked_imbalance_min of the Live give those of the batch call."""
    price = np.repeat(np.arange(100.0, 106.0), 2)
    side = np.tile(np.array([1, -1], dtype=np.int8), 6)
    vol = np.array([1, 1, 4, 1, 5, 2, 9, 1, 4, 1, 2, 3])
    for ratio, k in ((3.0, 3), (1.5, 2), (2.0, 1)):
        live = vpoc.Live(kind="trades", tick_size=1.0, side=True, imbalance_ratio=ratio, stacked_imbalance_min=k)
        live.update(price, vol, side=side, timestamp=T0 + np.arange(12) * MIN)
        live.close()
        ref = vpoc.from_trades(price, vol, side=side, tick_size=1.0, imbalance_ratio=ratio, stacked_imbalance_min=k)
        for name in ROW_FIELDS + SESSION_FIELDS:
            assert same(getattr(live.profiles, name), getattr(ref, name)), name


# --------------------------------------------------------------------------- state


@pytest.mark.parametrize("how", ["nested", "flat", "json", "npz", "pickle"])
@pytest.mark.parametrize("kind", ["trades", "bars"])
def test_state_round_trip_continues_exactly(how, kind, tmp_path):
    rng = np.random.default_rng(7)
    n = 120
    if kind == "trades":
        price, vol, side, ts = random_trades(rng, n, False)
        rows = lambda a, b: dict(args=(price[a:b], vol[a:b]), side=side[a:b], timestamp=ts[a:b])  # noqa: E731
        live = vpoc.Live(kind="trades", tick_size=0.25, session_starts=ts[[0, 50]], side=True)
    else:
        h, lo, c, o, v, bv, sv, ts = random_bars(rng, n, 0.25, True)
        rows = lambda a, b: dict(args=(h[a:b], lo[a:b], c[a:b], v[a:b]), open=o[a:b],  # noqa: E731
                                 buy_volume=bv[a:b], sell_volume=sv[a:b], timestamp=ts[a:b])
        live = vpoc.Live(tick_size=0.25, session_starts=ts[[0, 50]], side=True,
                         features=dict(lookbacks=(1,), composite_sessions=1))
    upd = lambda lv, a, b: lv.update(*rows(a, b).pop("args"), **{k: x for k, x in rows(a, b).items()  # noqa
                                                                 if k != "args"})
    upd(live, 0, 80)
    if how == "nested":
        back = vpoc.Live.from_state(live.state_dict())
    elif how == "flat":
        back = vpoc.Live.from_state(live.state_dict(flat=True))
    elif how == "json":
        text = json.dumps({k: np.asarray(x).tolist() for k, x in live.state_dict(flat=True).items()})
        back = vpoc.Live.from_state(json.loads(text))
    elif how == "npz":
        np.savez(tmp_path / "s.npz", **live.state_dict(flat=True))
        back = vpoc.Live.from_state(dict(np.load(tmp_path / "s.npz")))
    else:
        back = pickle.loads(pickle.dumps(live))
    for x in (live, back):
        upd(x, 80, 81)
    assert back.delta == live.delta and same(back.delta_poc, live.delta_poc)
    for k, x in live.side_profile().items():
        assert same(back.side_profile()[k], x), k
    for x in (live, back):
        upd(x, 81, n)
        x.close()
    for name in ROW_FIELDS + SESSION_FIELDS + ("volume",):
        assert same(getattr(back.profiles, name), getattr(live.profiles, name)), name
    if kind == "bars":
        assert same(back.session_table().values, live.session_table().values)


def test_bad_states_name_the_field():
    live = _bars_live()
    live.close()
    live.update(103.0, 102.0, 102.5, 8, buy_volume=3, sell_volume=4, timestamp=T0 + 9 * MIN)
    st = live.state_dict()
    bad = pickle.loads(pickle.dumps(st))
    bad["done"][0]["buy_volume"][0] = -1.0
    with pytest.raises(ValueError, match=r"state\['done'\]\[0\]\['buy_volume'\]\[0\] = -1.0 must be >= 0"):
        vpoc.Live.from_state(bad)
    bad = pickle.loads(pickle.dumps(st))
    bad["done"][0]["delta"][0] += 1.0
    with pytest.raises(ValueError, match=r"state\['done'\]\[0\]\['delta'\] = .* is not buy - sell"):
        vpoc.Live.from_state(bad)
    bad = pickle.loads(pickle.dumps(st))
    bad["current"]["buy"][0] = 9.0
    with pytest.raises(ValueError, match=r"state\['current'\]: buy_volume\[0\] \+ sell_volume\[0\]"):
        vpoc.Live.from_state(bad)
    bad = pickle.loads(pickle.dumps(st))
    del bad["current"]["sell"]
    with pytest.raises(ValueError, match=r"state\['current'\] is missing \['sell'\]"):
        vpoc.Live.from_state(bad)
    flat = dict(live.state_dict(flat=True))
    del flat["done_delta"]
    with pytest.raises(ValueError, match="done_delta"):
        vpoc.Live.from_state(flat)
    t = _trades_live()
    st = t.state_dict()
    st["current"]["sell"][0] = 3.0  # a trade on both sides
    with pytest.raises(ValueError, match=r"state\['current'\]\['buy'\]\[0\] = 3.0, sell\[0\] = 3.0"):
        vpoc.Live.from_state(st)


def test_a_live_without_side_keeps_its_state_layout():
    live = vpoc.Live(tick_size=0.25)
    live.update(101.0, 100.0, 100.5, 10, timestamp=T0)
    st = live.state_dict(flat=True)
    assert not any(k.startswith(("done_buy", "done_sell", "done_delta", "current_buy", "current_sell")) for k in st)
    assert "side" not in live.state_dict()["config"]
    assert vpoc.Live.from_state(st).levels == live.levels


# --------------------------------------------------------------------------- all or nothing


def test_injected_interrupts_with_sides_equal_the_uninterrupted_run(monkeypatch):
    """KeyboardInterrupt / MemoryError injected inside the update's steps, the side steps included:
    each interrupted update leaves the Live (its delta and side rows too) as it was, and the
    retried feed equals the uninterrupted one bit for bit."""
    import vpoc.live._live as vlive
    from test_live_atomic import STEPS, Injector, new_live, one_bar_sessions, plan

    cols, starts = one_bar_sessions(600, seed=5)
    h, lo, c, o, v, ts = cols
    rng = np.random.default_rng(6)
    buy = (v * rng.random(v.size)).astype(np.int64)
    sell = ((v - buy) * rng.random(v.size)).astype(np.int64)
    starts = starts[::2]  # two-bar sessions
    steps = plan(len(ts), seed=7)

    def apply(live, a, b, one):
        if one:
            return live.update(float(h[a]), float(lo[a]), float(c[a]), int(v[a]), open=float(o[a]),
                               buy_volume=int(buy[a]), sell_volume=int(sell[a]), timestamp=int(ts[a]))
        return live.update(h[a:b], lo[a:b], c[a:b], v[a:b], open=o[a:b], buy_volume=buy[a:b],
                           sell_volume=sell[a:b], timestamp=ts[a:b])

    def seen(live):
        return (live.levels, live.delta, len(live), live.n_rows,
                tuple(np.asarray(x).tobytes() for x in live.side_profile().values()))

    ref = new_live(starts, side=True)
    ref_out = [(apply(ref, a, b, one), seen(ref), ref.bar_features_row() if ref.session_rows else None)
               for a, b, one in steps]
    ref.close()
    inj = Injector(seed=8, rate=0.03)
    for name in STEPS + ("_side_append", "_side_append_one", "_side_finished", "_side_start"):
        monkeypatch.setattr(vlive.Live, name, inj.wrap(getattr(vlive.Live, name)))
    monkeypatch.setattr(vlive, "from_bars", inj.wrap(vlive.from_bars))
    live = new_live(starts, side=True)
    interrupted = 0
    for k, (a, b, one) in enumerate(steps):
        while True:
            before = seen(live)
            inj.on = True
            try:
                apply(live, a, b, one)
                inj.on = False
                break
            except (KeyboardInterrupt, MemoryError):
                inj.on = False
                interrupted += 1
                assert seen(live) == before, (k, a, b, one)
        assert seen(live) == ref_out[k][1]
        if ref_out[k][2] is not None:
            assert same(live.bar_features_row(), ref_out[k][2])
    inj.on = False
    live.close()
    assert interrupted >= 50, interrupted
    for name in ROW_FIELDS + SESSION_FIELDS + ("volume", "poc"):
        assert same(getattr(live.profiles, name), getattr(ref.profiles, name)), name
