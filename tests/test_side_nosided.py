"""Sessions with no sided volume (issue 27, brief dpnan): delta_poc NaN / NO_ROW on every path, and the
per-session buy_total / sell_total, against a plain NumPy reference.

Contract: a session whose buy and sell totals are both 0 (every trade / bar of unknown side, or only zero
volumes of a known side) has delta_poc NaN and delta_poc_row NO_ROW, as an empty session; a balanced
session (sided volume, |buy - sell| 0 on every row) keeps the POC tie rule. buy_total / sell_total are the
exact totals (NumPy sums of the buy / sell rows for whole volumes), delta their difference.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import _deps  # noqa: F401
from _gpu import needs_gpu, torch_cuda  # noqa: F401  (the GPU helpers: skipped here without a device)
from reference import poc_of_counts

vpoc = pytest.importorskip("vpoc")

from vpoc import _side_profiles as sp  # noqa: E402

NO_ROW = vpoc.NO_ROW
TICK = 0.25
SESSION = ("delta", "buy_total", "sell_total", "delta_poc", "delta_poc_row")
MIN = 60 * 10**9
T0 = int(np.datetime64("2024-03-04T14:00", "ns").astype(np.int64))


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f"
                                              else a == b))


# --------------------------------------------------------------------------- the reference (loops)


def reference(rows, buy, sell, offsets, tie="center", row_size=TICK):
    """Per session: buy / sell rows by np.add.at from each input's ladder row, the totals, delta, and the delta
    POC (the POC rule on |buy - sell|; none when both totals are 0 or the session is empty)."""
    out = {k: [] for k in SESSION}
    planes = {"buy_volume": [], "sell_volume": []}
    for s in range(len(offsets) - 1):
        a, b = int(offsets[s]), int(offsets[s + 1])
        if a == b:
            for k, x in zip(SESSION, (0.0, 0.0, 0.0, np.nan, NO_ROW)):
                out[k].append(x)
            continue
        r = np.asarray(rows[a:b])
        lo, n = int(r.min()), int(r.max() - r.min() + 1)
        bv, sv = np.zeros(n), np.zeros(n)
        np.add.at(bv, r - lo, np.asarray(buy[a:b], dtype=np.float64))
        np.add.at(sv, r - lo, np.asarray(sell[a:b], dtype=np.float64))
        planes["buy_volume"].append(bv)
        planes["sell_volume"].append(sv)
        out["buy_total"].append(bv.sum())
        out["sell_total"].append(sv.sum())
        out["delta"].append(bv.sum() - sv.sum())
        if bv.sum() == 0 and sv.sum() == 0:
            out["delta_poc_row"].append(NO_ROW)
            out["delta_poc"].append(np.nan)
        else:
            p = lo + poc_of_counts(list(np.abs(bv - sv)), tie)
            out["delta_poc_row"].append(p)
            out["delta_poc"].append(p * row_size)
    ref = {k: np.array(v) for k, v in out.items()}
    for k, v in planes.items():
        ref[k] = np.concatenate(v) if v else np.zeros(0)
    return ref


def check(prof, ref, names=SESSION + ("buy_volume", "sell_volume")):
    for name in names:
        got = sp.host_array(getattr(prof, name))
        assert same(got, np.asarray(ref[name], dtype=got.dtype)), (name, got, ref[name])


def _rows(price, tpr=1):
    return np.floor_divide(np.rint(np.asarray(price) / TICK).astype(np.int64), tpr)


def mixed_trades(seed):
    """Sessions of every kind, shuffled: sided, all unknown, empty, zero volumes of a known side, balanced."""
    rng = np.random.default_rng(seed)
    kinds = ["sided", "unknown", "empty", "zero", "balanced", "sided", "unknown"]
    rng.shuffle(kinds)
    price, volume, side, offsets = [], [], [], [0]
    for kind in kinds:
        m = 0 if kind == "empty" else int(rng.integers(1, 30))
        p = 1000.0 + rng.integers(-10, 11, m) * TICK
        v = rng.integers(1, 20, m)
        if kind == "sided":
            s = rng.choice(np.array([-1, 0, 1], np.int8), m)
        elif kind == "unknown":
            s = np.zeros(m, np.int8)
        elif kind == "zero":
            s, v = rng.choice(np.array([-1, 1], np.int8), m), np.zeros(m, np.int64)
        elif kind == "balanced":  # every trade twice, once bought, once sold
            p, v = np.repeat(p, 2), np.repeat(v, 2)
            s = np.tile(np.array([1, -1], np.int8), m)
        else:
            s = np.zeros(0, np.int8)
        price.append(p), volume.append(v), side.append(s)
        offsets.append(offsets[-1] + p.shape[0])
    return (np.concatenate(price), np.concatenate(volume).astype(np.int64), np.concatenate(side).astype(np.int8),
            np.array(offsets), kinds)


# --------------------------------------------------------------------------- trades


def test_all_unknown_session_has_no_delta_poc():
    """trial 3 #9: side all 0 gave delta_poc 100.5, the tie rule's middle row; now NaN / NO_ROW."""
    price = np.array([100.0, 100.25, 100.5, 100.75, 101.0])
    prof = vpoc.from_trades(price, np.array([3, 1, 4, 1, 5]), tick_size=TICK, side=np.zeros(5, int), developing=True)
    assert np.isnan(prof.delta_poc[0]) and prof.delta_poc_row[0] == NO_ROW
    assert prof.delta[0] == 0.0 and prof.buy_total[0] == 0.0 and prof.sell_total[0] == 0.0
    assert prof.dev_delta.tolist() == [0.0] * 5 and not prof.imbalance_buy.any()
    assert prof.poc[0] == 101.0  # the volume levels are untouched


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threads", [1, 2])
def test_mixed_sessions_equal_reference(seed, threads):
    price, volume, side, offsets, kinds = mixed_trades(seed)
    tie = ("center", "low", "high")[seed % 3]
    tpr = 1 + seed % 2
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, ticks_per_row=tpr, side=side,
                            poc_tie=tie, threads=threads, developing=True)
    ref = reference(_rows(price, tpr), volume * (side == 1), volume * (side == -1), offsets, tie, TICK * tpr)
    check(prof, ref)
    n = np.diff(prof.offsets)  # the totals are the NumPy sums of the buy / sell planes (whole volumes: exact)
    for name, col in (("buy_total", "buy_volume"), ("sell_total", "sell_volume")):
        plane = np.array([getattr(prof, col)[a:a + k].sum() for a, k in zip(prof.offsets[:-1], n)])
        np.testing.assert_array_equal(getattr(prof, name), plane, err_msg=name)
    np.testing.assert_array_equal(prof.delta, prof.buy_total - prof.sell_total)
    for k, kind in enumerate(kinds):  # the rule, said per kind
        if kind in ("unknown", "empty", "zero"):
            assert np.isnan(prof.delta_poc[k]) and prof.delta_poc_row[k] == NO_ROW, kind
        else:
            assert not np.isnan(prof.delta_poc[k]), kind


@pytest.mark.parametrize("tie,row", [("low", 0), ("high", 4), ("center", 2)])
def test_balanced_session_keeps_the_tie_rule(tie, row):
    """Sided volume, |buy - sell| 0 on every row: a real tie, picked by poc_tie (not NaN)."""
    price = np.repeat(np.arange(5.0), 2)
    side = np.tile(np.array([1, -1], np.int8), 5)
    prof = vpoc.from_trades(price, np.repeat([2, 7, 1, 3, 5], 2), tick_size=1.0, side=side, poc_tie=tie)
    assert prof.delta[0] == 0.0 and prof.buy_total[0] == prof.sell_total[0] == 18.0
    assert prof.delta_poc_row.tolist() == [row] and prof.delta_poc.tolist() == [float(row)]


def test_masked_library_path_equals_engine():
    """The masked passes (SideFields: the rows pass of the GPU / library path, in numpy here) give the engine's
    NaN / NO_ROW and totals on the same mixed sessions."""
    price, volume, side, offsets, _ = mixed_trades(3)
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, side=side)
    plain = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK)
    opts = vpoc._core.Options(tick_size=TICK)
    rules = sp.side_rules(None, None)
    codes = sp.trade_side(side, volume, price, rules)
    masked = sp._engine_trade_sides(plain, codes, rules, volume, price, offsets, None, opts, None, None)
    assert type(masked.__dict__["_side"]).__name__ == "HostSideFields"  # the rows' fields by _core.side_levels
    for name in sp.SIDE_FIELDS:
        if name != "dev_delta":
            assert same(sp.host_array(getattr(masked, name)), getattr(prof, name)), name


@pytest.mark.parametrize("seed", range(3))
def test_side_levels_delta_equals_numpy(seed):
    """_core.side_levels with buy_total / sell_total: delta is their difference (core/side.hpp delta, the
    masked passes' and Live's rule), against NumPy on totals with zeros, signed zeros, the smallest volume,
    fractions and huge values; the other fields as without totals; bad totals name the argument."""
    rng = np.random.default_rng(seed)
    S = 50
    pick = np.array([0.0, -0.0, 2.0 ** -32, 0.1, 1.0, 1e15, 2.0 ** 53])
    bt, st = pick[rng.integers(0, 7, S)], pick[rng.integers(0, 7, S)]
    offsets = np.zeros(S + 1, np.int64)  # sessions without rows: only delta carries information
    opts = vpoc._core.Options(tick_size=TICK)
    got = vpoc._core.side_levels(offsets, np.zeros(S, np.int64), np.zeros(0), np.zeros(0), TICK, opts, 3.0, 3,
                                 buy_total=bt, sell_total=st)
    assert got["delta"].dtype == np.float64 and got["delta"].tobytes() == (bt - st).tobytes()
    assert np.isnan(got["delta_poc"]).all() and (got["delta_poc_row"] == NO_ROW).all()
    plain = vpoc._core.side_levels(offsets, np.zeros(S, np.int64), np.zeros(0), np.zeros(0), TICK, opts, 3.0, 3)
    assert "delta" not in plain and sorted(plain) == sorted(k for k in got if k != "delta")
    with pytest.raises(TypeError, match="sell_total"):
        vpoc._core.side_levels(offsets, np.zeros(S, np.int64), np.zeros(0), np.zeros(0), TICK, opts, 3.0, 3,
                               buy_total=bt)
    with pytest.raises(ValueError, match="one value per session"):
        vpoc._core.side_levels(offsets, np.zeros(S, np.int64), np.zeros(0), np.zeros(0), TICK, opts, 3.0, 3,
                               buy_total=bt[:-1], sell_total=st[:-1])


def test_side_levels_device_rows_need_a_gpu_array():
    """placement= on a GPU: host rows are refused, naming the column (a CPU build: no backend)."""
    opts = vpoc._core.Options(tick_size=TICK)
    z = np.zeros(1)
    args = (np.array([0, 1]), np.array([4]), z, z, TICK, opts, 3.0, 3)
    with pytest.raises((TypeError, ValueError), match="row_offsets|no GPU backend"):
        vpoc._core.side_levels(*args, buy_total=z, sell_total=z, placement=vpoc._core.Placement(device=0))
    with pytest.raises(TypeError, match="buy_total and sell_total"):
        vpoc._core.side_levels(*args, placement=vpoc._core.Placement(device=0))


def test_side_levels_device_rows_checked_before_any_gpu_work():
    """Device rows' shapes and dtypes are checked before the GPU is touched, naming the column: host copies
    labelled as GPU memory (_host_device_array, never read) with one bad column each."""
    dev = vpoc._core._host_device_array
    gpu = lambda a: dev(np.asarray(a), device_type=2)  # noqa: E731
    opts = vpoc._core.Options(tick_size=TICK)
    off, low, rows, tot = gpu([0, 2, 3]), gpu([4, 9]), gpu([1.0, 2.0, 3.0]), gpu([3.0, 3.0])
    place = vpoc._core.Placement(device=0)
    cases = [("low_row", dict(low=gpu([4, 9, 1]))), ("sell", dict(sell=gpu([1.0, 2.0]))),
             ("buy", dict(buy=gpu([1, 2, 3]))), ("sell_total", dict(st=gpu([3.0]))),
             ("row_offsets", dict(off=gpu([0.0, 2.0, 3.0]))), ("row_offsets", dict(off=gpu(np.zeros(0, np.int64)))),
             ("buy_total", dict(bt=np.array([3.0, 3.0])))]  # host memory
    for name, bad in cases:
        a = {**dict(off=off, low=low, buy=rows, sell=rows, bt=tot, st=tot), **bad}
        with pytest.raises((TypeError, ValueError), match=name):
            vpoc._core.side_levels(a["off"], a["low"], a["buy"], a["sell"], TICK, opts, 3.0, 3, buy_total=a["bt"],
                                   sell_total=a["st"], placement=place)


def test_all_sessions_unsided_masked_path():
    """Every session without a known side: the rows pass gets no row at all."""
    price = np.array([10.0, 10.25, 11.0])
    plain = vpoc.from_trades(price, np.array([1, 2, 3]), offsets=[0, 2, 2, 3], tick_size=TICK)
    rules = sp.side_rules(None, None)
    masked = sp._engine_trade_sides(plain, np.zeros(3, np.int8), rules, np.array([1, 2, 3]), price, [0, 2, 2, 3],
                                    None, vpoc._core.Options(tick_size=TICK), None, None)
    assert np.isnan(masked.delta_poc).all() and masked.delta_poc_row.tolist() == [NO_ROW] * 3


# --------------------------------------------------------------------------- bars


def mixed_bars(seed):
    """Bars in sessions: sided, buy = sell = 0 (columns all 0), sided only in the middle, balanced."""
    rng = np.random.default_rng(seed)
    n_per = [int(x) for x in rng.integers(3, 25, 4)]
    n = sum(n_per)
    close = 4000.0 + np.cumsum(rng.integers(-3, 4, n)) * TICK
    high = close + rng.integers(0, 4, n) * TICK
    low = close - rng.integers(0, 4, n) * TICK
    vol = rng.integers(1, 30, n).astype(np.int64)
    buy = (vol * rng.random(n)).astype(np.int64)
    sell = ((vol - buy) * rng.random(n)).astype(np.int64)
    offsets = np.r_[0, np.cumsum(n_per)]
    a, b = offsets[1], offsets[2]
    buy[a:b] = sell[a:b] = 0  # session 1: no side known
    c, d = offsets[2], offsets[3]
    m = (c + d) // 2
    buy[c:m] = sell[c:m] = 0  # session 2: sided from its middle bar on
    buy[m], sell[m] = max(buy[m], 1), 0
    e, f = offsets[3], offsets[4]
    buy[e:f] = sell[e:f] = vol[e:f] // 2  # session 3: balanced
    return high, low, close, vol, buy, sell, offsets


@pytest.mark.parametrize("distribute", ["close", "uniform", "hlc3", "legacy"])
@pytest.mark.parametrize("seed", range(3))
def test_bars_with_zero_side_columns(seed, distribute, monkeypatch):
    high, low, close, vol, buy, sell, offsets = mixed_bars(seed)
    kw = dict(offsets=offsets, tick_size=TICK, distribute=distribute)
    prof = vpoc.from_bars(high, low, close, vol, buy_volume=buy, sell_volume=sell, **kw)
    assert np.isnan(prof.delta_poc[1]) and prof.delta_poc_row[1] == NO_ROW
    assert not np.isnan(prof.delta_poc[[0, 2, 3]]).any()
    # whole volumes: the exact totals are the columns' sums; the rows (each rounded once when a bar is
    # spread) add up to them within float rounding, exactly for distribute="close"
    np.testing.assert_array_equal(prof.buy_total, np.add.reduceat(buy, offsets[:-1]).astype(np.float64))
    np.testing.assert_array_equal(prof.sell_total, np.add.reduceat(sell, offsets[:-1]).astype(np.float64))
    for name, col in (("buy_total", "buy_volume"), ("sell_total", "sell_volume")):
        plane = np.add.reduceat(getattr(prof, col), prof.offsets[:-1])
        tol = 0 if distribute == "close" else 1e-12
        np.testing.assert_allclose(getattr(prof, name), plane, rtol=tol, atol=0, err_msg=name)
    np.testing.assert_array_equal(prof.delta, prof.buy_total - prof.sell_total)
    # the masked path (engine passes + the C++ epilogue _core.side_levels, as for columns _core.bar_sides does not take)
    monkeypatch.setattr(sp, "_host_bars", lambda *a: False)
    other = vpoc.from_bars(high, low, close, vol, buy_volume=buy, sell_volume=sell, **kw)
    monkeypatch.undo()
    for name in sp.SIDE_FIELDS:
        if name != "dev_delta":
            assert same(getattr(other, name), getattr(prof, name)), name
    if distribute == "close":  # one row per bar: the loop reference
        check(prof, reference(_rows(close), buy, sell, offsets))


def test_bars_all_side_columns_zero():
    high, low, close, vol, _, _, offsets = mixed_bars(7)
    z = np.zeros_like(vol)
    prof = vpoc.from_bars(high, low, close, vol, offsets=offsets, tick_size=TICK, buy_volume=z, sell_volume=z)
    assert np.isnan(prof.delta_poc).all() and (prof.delta_poc_row == NO_ROW).all()
    assert (prof.buy_total == 0).all() and (prof.sell_total == 0).all() and (prof.delta == 0).all()


# --------------------------------------------------------------------------- totals in the outputs


def test_totals_in_tables_and_pickles():
    pd = pytest.importorskip("pandas")
    price, volume, side, offsets, _ = mixed_trades(1)
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, side=side)
    df = prof.to_pandas()
    assert isinstance(df, pd.DataFrame)
    cols = list(df.columns)
    assert cols[cols.index("delta"):cols.index("delta") + 3] == ["delta", "buy_total", "sell_total"]
    np.testing.assert_array_equal(df["buy_total"].to_numpy(), prof.buy_total)
    assert "buy_total" not in vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK).to_pandas().columns
    back = pickle.loads(pickle.dumps(prof))
    for name in SESSION:
        assert same(getattr(back, name), getattr(prof, name)), name
    labelled = vpoc.from_trades(price, volume, session_ids=np.repeat(np.arange(len(offsets) - 1), np.diff(offsets)),
                                tick_size=TICK, side=side)
    k = int(labelled.session_labels[-1])
    one = labelled.loc[k]
    assert (one.buy_total, one.sell_total, one.delta) == (labelled.buy_total[-1], labelled.sell_total[-1],
                                                          labelled.delta[-1])
    assert ("buy_total", "sell_total") == vpoc.features.SIDE_TABLE_COLUMNS[1:3]


def test_session_features_totals_and_nan():
    pytest.importorskip("pandas")
    high, low, close, vol, buy, sell, offsets = mixed_bars(2)
    ids = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    t = vpoc.session_features(high, low, close, vol, session_ids=ids, tick_size=TICK, lookbacks=(1,),
                              buy_volume=buy, sell_volume=sell)
    prof = vpoc.from_bars(high, low, close, vol, session_ids=ids, tick_size=TICK, buy_volume=buy, sell_volume=sell)
    for name in ("buy_total", "sell_total", "delta", "delta_poc"):
        assert same(t[name], np.asarray(getattr(prof, name), dtype=t[name].dtype)), name
    assert np.isnan(t["delta_poc"][1])


# --------------------------------------------------------------------------- developing: bar_features


def test_bar_features_dev_delta_poc_dist_nan_until_sided():
    """dev_delta_poc_dist is NaN while the session so far has no sided volume, then the prefix's delta POC."""
    high, low, close, vol, buy, sell, offsets = mixed_bars(4)
    ids = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    ts = T0 + np.arange(ids.size) * MIN
    bf = vpoc.bar_features(high, low, close, vol, timestamp=ts, session_ids=ids, tick_size=TICK,
                           buy_volume=buy, sell_volume=sell)
    dist = np.asarray(bf["dev_delta_poc_dist"], dtype=np.float64)
    want = np.full(ids.size, np.nan)
    for s in range(len(offsets) - 1):
        for i in range(offsets[s], offsets[s + 1]):
            sl = slice(offsets[s], i + 1)
            pre = vpoc.from_bars(high[sl], low[sl], close[sl], vol[sl], tick_size=TICK, buy_volume=buy[sl],
                                 sell_volume=sell[sl])
            want[i] = (close[i] - pre.delta_poc[0]) / TICK
            sided = buy[sl].any() or sell[sl].any()
            assert np.isnan(want[i]) == (not sided)
    assert same(dist, want.astype(dist.dtype))
    a, b = offsets[1], offsets[2]
    assert np.isnan(dist[a:b]).all()


# --------------------------------------------------------------------------- Live


def test_live_trades_equal_batch():
    price, volume, side, offsets, kinds = mixed_trades(5)
    keep = [k for k, kind in enumerate(kinds) if kind != "empty"]  # Live has no empty session
    starts = T0 + np.arange(len(keep)) * 10**13  # 2.8 hours apart: every session's trades fit
    live = vpoc.Live(kind="trades", tick_size=TICK, side=True, session_starts=starts)
    pieces = []
    for j, k in enumerate(keep):
        a, b = offsets[k], offsets[k + 1]
        ts = starts[j] + np.arange(b - a) * MIN
        for i in range(a, b):  # one trade at a time: the session so far equals the batch on its rows
            live.update(price[i:i + 1], volume[i:i + 1], side=side[i:i + 1], timestamp=ts[i - a:i - a + 1])
            pre = vpoc.from_trades(price[a:i + 1], volume[a:i + 1], side=side[a:i + 1], tick_size=TICK)
            sp_ = live.side_profile()
            for name in SESSION:
                assert same(sp_[name], getattr(pre, name)[0]), (kinds[k], name)
            assert same(live.delta_poc, pre.delta_poc[0]) and live.delta_poc_row == pre.delta_poc_row[0]
        pieces.append((a, b))
    live.close()
    idx = np.concatenate([np.arange(a, b) for a, b in pieces])
    offs = np.r_[0, np.cumsum([b - a for a, b in pieces])]
    batch = vpoc.from_trades(price[idx], volume[idx], side=side[idx], offsets=offs, tick_size=TICK)
    for name in sp.SIDE_FIELDS:
        if name != "dev_delta":
            assert same(getattr(live.profiles, name), getattr(batch, name)), name
    # state round trip, and a state from before the totals were kept (derived from the rows)
    st = live.state_dict()
    back = vpoc.Live.from_state(st)
    assert same(back.profiles.buy_total, batch.buy_total)
    for d in st["done"]:
        del d["buy_total"], d["sell_total"]
    old = vpoc.Live.from_state(st)
    assert same(old.profiles.buy_total, batch.buy_total) and same(old.profiles.sell_total, batch.sell_total)
    flat = live.state_dict(flat=True)
    assert same(vpoc.Live.from_state(flat).profiles.sell_total, batch.sell_total)
    del flat["done_buy_total"]
    with pytest.raises(ValueError, match="done_sell_total"):
        vpoc.Live.from_state(flat)


def test_live_state_bad_totals():
    live = vpoc.Live(kind="trades", tick_size=TICK, side=True, session_starts=[T0, T0 + 10**12])
    live.update(np.array([10.0, 10.25, 10.5]), np.array([3, 4, 1]), side=np.array([1, -1, 1], np.int8),
                timestamp=np.array([T0, T0 + MIN, T0 + 10**12]))
    st = live.state_dict()
    st["done"][0]["buy_total"] = np.array([5.0])
    with pytest.raises(ValueError, match="buy_total"):
        vpoc.Live.from_state(st)
    st = live.state_dict()
    del st["done"][0]["sell_total"]
    with pytest.raises(ValueError, match="sell_total"):
        vpoc.Live.from_state(st)


# --------------------------------------------------------------------------- GPU (skipped without one)




@needs_gpu
@pytest.mark.parametrize("seed", range(4))
def test_gpu_trades_bit_equal(seed):
    price, volume, side, offsets, _ = mixed_trades(seed)
    kw = dict(offsets=offsets, tick_size=TICK, side=side, developing=True)
    cpu, gpu = vpoc.from_trades(price, volume, **kw), vpoc.from_trades(price, volume, device="cuda", **kw)
    for name in sp.SIDE_FIELDS:
        assert same(sp.host_array(getattr(gpu, name)), getattr(cpu, name)), name


@needs_gpu
@pytest.mark.parametrize("distribute", ["uniform", "close", "legacy"])
def test_gpu_bars_bit_equal(distribute):
    high, low, close, vol, buy, sell, offsets = mixed_bars(1)
    kw = dict(offsets=offsets, tick_size=TICK, distribute=distribute, buy_volume=buy, sell_volume=sell,
              developing=True)
    cpu, gpu = vpoc.from_bars(high, low, close, vol, **kw), vpoc.from_bars(high, low, close, vol, device="cuda", **kw)
    for name in sp.SIDE_FIELDS:
        assert same(sp.host_array(getattr(gpu, name)), getattr(cpu, name)), name
