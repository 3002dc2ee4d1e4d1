"""The CPU engine's aggressor-side fields (one binning pass: RowWindow planes, vpoc/side.hpp) against plain NumPy.

Contract: buy / sell rows, volume, delta, delta POC, imbalances, stacked runs and dev_delta of
``from_trades(side=)`` equal a NumPy reference (np.add.at over the ladder) bit for bit, and the masked engine
passes the GPU path still runs; bad sides raise naming the row, before a bad price (design side-single-pass §2).
"""

from __future__ import annotations

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")

from vpoc import _side_profiles as sp  # noqa: E402

TICK = 0.25
LETTERS = np.array([b"N", b"B", b"A"], dtype="S1")  # code 0, +1, -1 (index code % 3)


def trades(seed, fractional=False, wide=False):
    """Sessions with gaps, ties, unknown sides, zero volumes, empty and one-trade sessions; volumes dyadic
    (k / 8) when fractional, so that NumPy's float64 sums are exact too."""
    rng = np.random.default_rng(seed)
    S = int(rng.integers(1, 10))
    counts = rng.integers(0, 60, S)
    counts[rng.random(S) < 0.2] = 0
    counts[rng.random(S) < 0.2] = 1
    N = int(counts.sum())
    offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
    spread = int(rng.choice([1, 3, 8, 40] + ([5000] if wide else [])))
    price = (4000 + rng.integers(-spread, spread + 1, N)) * TICK
    volume = rng.integers(0, 9, N) * rng.choice([1, 1, 3, 50], N)
    volume = volume / 8.0 if fractional else volume.astype(np.int64)
    side = rng.choice(np.array([1, -1, 0], dtype=np.int8), N, p=[0.45, 0.45, 0.1])
    return price, volume, side, offsets


def poc_of(d, tie):
    """The engine's POC rule on one session's rows (core/levels.hpp poc_among, default tie_tol 1e-9)."""
    mx = d.max()
    cand = np.flatnonzero(np.abs(d - mx) <= 1e-9 * mx)
    if tie == "low":
        return int(cand[0])
    if tie == "high":
        return int(cand[-1])
    dist = np.abs(2 * cand - (len(d) - 1))  # center: closest to (first + last) / 2, the lower on equal
    return int(cand[np.argmin(dist)])


def runs(flags, k):
    out, n = 0, 0
    for f in flags:
        n = n + 1 if f else 0
        out += n == k
    return out


def reference(price, volume, side, offsets, tpr=1, tie="center", ratio=3.0, k=3):
    """Every side field by NumPy: rows floor(rint(p / tick) / tpr), each session from its lowest row to its
    highest; buy / sell / unknown by np.add.at."""
    rows = np.floor_divide(np.rint(price / TICK).astype(np.int64), tpr)
    v = volume.astype(np.float64)
    out = {key: [] for key in ("volume", "buy_volume", "sell_volume", "imbalance_buy", "imbalance_sell")}
    sess = {key: [] for key in ("delta", "buy_total", "sell_total", "delta_poc", "delta_poc_row",
                                "stacked_imbalance_buy", "stacked_imbalance_sell")}
    dev = np.zeros(len(price))
    for s in range(len(offsets) - 1):
        a, b = offsets[s], offsets[s + 1]
        if a == b:
            sess["delta"].append(0.0), sess["delta_poc"].append(np.nan), sess["delta_poc_row"].append(-2 ** 63)
            sess["buy_total"].append(0.0), sess["sell_total"].append(0.0)
            sess["stacked_imbalance_buy"].append(0), sess["stacked_imbalance_sell"].append(0)
            continue
        r, vs, cs = rows[a:b], v[a:b], side[a:b]
        lo, n = r.min(), r.max() - r.min() + 1
        vol, buy, sell = np.zeros(n), np.zeros(n), np.zeros(n)
        np.add.at(vol, r - lo, vs)
        np.add.at(buy, r - lo, np.where(cs == 1, vs, 0.0))
        np.add.at(sell, r - lo, np.where(cs == -1, vs, 0.0))
        ib = np.zeros(n, bool)
        isl = np.zeros(n, bool)
        ib[1:] = (buy[1:] > 0) & (buy[1:] >= sell[:-1] * ratio)
        isl[:-1] = (sell[:-1] > 0) & (sell[:-1] >= buy[1:] * ratio)
        d = np.abs(buy - sell)
        d[d < 2.0 ** -32] = 0.0
        p = lo + poc_of(d, tie)
        out["volume"].append(vol), out["buy_volume"].append(buy), out["sell_volume"].append(sell)
        out["imbalance_buy"].append(ib), out["imbalance_sell"].append(isl)
        sess["delta"].append(buy.sum() - sell.sum())
        sess["buy_total"].append(buy.sum()), sess["sell_total"].append(sell.sum())
        if buy.sum() == 0 and sell.sum() == 0:  # no volume of a known side: no delta POC (as an empty session)
            p, price_p = -2 ** 63, np.nan
        else:
            price_p = p * (TICK * tpr)
        sess["delta_poc_row"].append(p), sess["delta_poc"].append(price_p)
        sess["stacked_imbalance_buy"].append(runs(ib, k)), sess["stacked_imbalance_sell"].append(runs(isl, k))
        dev[a:b] = np.cumsum(vs * (cs == 1) - vs * (cs == -1))
    ref = {key: np.concatenate(x) if x else np.zeros(0, bool if key.startswith("imb") else float)
           for key, x in out.items()}
    ref.update({key: np.array(x) for key, x in sess.items()})
    ref["dev_delta"] = dev
    return ref


def check(prof, ref, names=None):
    for name in names or ref:
        got = np.asarray(getattr(prof, name))
        np.testing.assert_array_equal(got, ref[name], err_msg=name)
        if name.startswith("imbalance"):
            assert got.dtype == np.bool_, name
        elif name.startswith(("stacked", "delta_poc_row")):
            assert got.dtype == np.int64, name


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("vdtype", ["int64", "int32", "float64", "float32", "fraction"])
@pytest.mark.parametrize("seed", range(8))
def test_engine_equals_numpy(seed, vdtype, threads):
    price, volume, side, offsets = trades(seed, fractional=vdtype == "fraction", wide=seed % 4 == 3)
    if vdtype != "fraction":
        volume = volume.astype(vdtype)
    tie = ("center", "low", "high")[seed % 3]
    ratio, k = (3.0, 3) if seed % 2 else (1.5, 2)
    pdt = np.float32 if seed % 2 else np.float64
    prof = vpoc.from_trades(price.astype(pdt), volume, offsets=offsets, tick_size=TICK, poc_tie=tie, side=side,
                            developing=True, threads=threads, imbalance_ratio=ratio, stacked_imbalance_min=k)
    assert type(prof.__dict__["_side"]).__name__ == "HostSideFields"  # the engine's own side pass
    check(prof, reference(price, volume, side, offsets, tie=tie, ratio=ratio, k=k))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("tpr", [1, 3])
def test_letters_rows_and_no_developing(seed, tpr):
    price, volume, side, offsets = trades(100 + seed)
    letters = LETTERS[side % 3]
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, ticks_per_row=tpr, side=letters)
    ref = reference(price, volume, side, offsets, tpr=tpr)
    check(prof, ref, [n for n in ref if n != "dev_delta"])
    assert prof.dev_delta is None


def test_large_and_fractional_volumes_take_fixed_point():
    """Whole volumes >= 2**31 and fractions: the 64.64 windows (planes too); delta of rounded totals."""
    rng = np.random.default_rng(7)
    N = 300
    price = (100 + rng.integers(0, 12, N)) * TICK
    side = rng.choice(np.array([1, -1, 0], dtype=np.int8), N)
    offsets = np.array([0, 120, 120, N])
    for volume in (rng.integers(0, 2 ** 40, N).astype(np.int64), rng.integers(0, 2 ** 40, N) / 64.0):
        prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, side=side, developing=True)
        check(prof, reference(price, volume, side, offsets))
    # one fraction whose float64 sums are not exact: the masked passes' bits still (rounded totals)
    volume = rng.random(N) * 1000.0
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, side=side, developing=True)
    old = _masked_passes(price, volume, side, offsets, developing=True)
    for name in sp.SIDE_FIELDS:
        np.testing.assert_array_equal(np.asarray(getattr(prof, name)), sp.host_array(old.field(name)), err_msg=name)


def _masked_passes(price, volume, side, offsets, **kw):
    """The side fields by today's GPU path (masked engine passes in numpy), on the CPU."""
    plain = vpoc.from_trades(price, volume, offsets=offsets, **{"tick_size": TICK, **kw})
    opts = vpoc._core.Options(**{"tick_size": TICK, **kw})
    rules = sp.side_rules(None, None)
    return sp._engine_trade_sides(plain, side, rules, volume, price, offsets, None, opts, None, None).__dict__["_side"]


@pytest.mark.parametrize("kw", [dict(tick_size=0.1), dict(tick_size=0.1, ticks_per_row=3),
                                dict(max_rows=2 ** 29), dict(poc_tie="mid_n2"), dict(ticks_per_row=2)])
def test_equals_masked_passes_on_other_paths(kw):
    """Inexact ticks, wide rows and huge max_rows take the engine's per-trade loop with planes; odd row
    sizes (0.1 x 3) keep the delta POC's row round trip; every field equals the masked engine passes."""
    for seed in range(4):
        price, volume, side, offsets = trades(200 + seed)
        price = np.round(price / 0.25) * kw.get("tick_size", TICK)
        args = {"tick_size": TICK, **kw}
        prof = vpoc.from_trades(price, volume, offsets=offsets, side=side, developing=True, **args)
        old = _masked_passes(price, volume, side, offsets, **{**args, "developing": True})
        for name in sp.SIDE_FIELDS:
            np.testing.assert_array_equal(np.asarray(getattr(prof, name)), sp.host_array(old.field(name)),
                                          err_msg=f"{name} {kw}")


def test_edge_sessions():
    """No trades; one trade; only unknown sides; every side one way; zero volumes."""
    empty = vpoc.from_trades(np.zeros(0), np.zeros(0), offsets=[0, 0], tick_size=TICK, side=np.zeros(0, np.int8),
                             developing=True)
    assert empty.buy_volume.shape == (0,) and empty.dev_delta.shape == (0,)
    assert np.isnan(empty.delta_poc[0]) and empty.delta[0] == 0.0
    cases = [([10.0], [5], [1]), ([10.0, 10.25], [2, 3], [0, 0]), ([10.0, 10.5, 10.0], [1, 2, 3], [-1, -1, -1]),
             ([10.0, 11.0], [0, 0], [1, -1])]
    for price, volume, side in cases:
        price, volume, side = np.array(price), np.array(volume, np.int64), np.array(side, np.int8)
        offsets = np.array([0, len(price)])
        prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, side=side, developing=True)
        check(prof, reference(price, volume, side, offsets))


def test_bad_side_named_and_first():
    price = np.arange(10) * TICK + 100
    volume = np.ones(10, np.int64)
    side = np.ones(10, np.int8)
    side[6] = 2
    with pytest.raises(ValueError, match=r"side\[6\]: side = 2"):
        vpoc.from_trades(price, volume, tick_size=TICK, side=side)
    letters = LETTERS[side % 3]
    letters[4] = b"X"
    with pytest.raises(ValueError, match=r"side\[4\]: side = b'X'"):
        vpoc.from_trades(price, volume, tick_size=TICK, side=letters)
    # (a) the side is checked before the engine: a bad side wins over a bad price at an earlier row
    bad_price = price.copy()
    bad_price[1] = np.nan
    with pytest.raises(ValueError, match=r"side\[6\]"):
        vpoc.from_trades(bad_price, volume, tick_size=TICK, side=side)
    with pytest.raises(ValueError, match="side has length 9 but there are 10 trades"):
        vpoc.from_trades(price, volume, tick_size=TICK, side=np.ones(9, np.int8))
    with pytest.raises(TypeError, match="boolean"):
        vpoc.from_trades(price, volume, tick_size=TICK, side=np.ones(10, bool))


def test_bad_side_on_a_dropped_row_raises():
    """(b) with session=, the caller's whole side column is checked, dropped rows included."""
    pytest.importorskip("pandas")
    from vpoc import sessions as vs

    n = 12
    ts = np.datetime64("2024-01-02T12:00", "ns") + np.arange(n) * np.timedelta64(1, "h")
    s = vs.rth(ts, calendar=None)
    side = np.ones(n, np.int8)
    side[0] = 7  # input row 0 is outside RTH: dropped
    with pytest.raises(ValueError, match=r"side\[0\]"):
        vpoc.from_trades(100.0 + np.arange(n) * TICK, np.ones(n), session=s, tick_size=TICK, side=side)


@pytest.mark.parametrize("bad, what", [
    (lambda o: np.concatenate([[1], o[1:]]), r"offsets\[0\] must be 0"),
    (lambda o: np.concatenate([o[:2], [o[1] - 1], o[3:]]), "non-decreasing"),
    (lambda o: np.concatenate([o[:-1], [o[-1] + 5]]), "must equal the number of rows"),
])
def test_side_levels_checks_host_row_offsets(bad, what):
    """_core.side_levels on host rows refuses row offsets that do not run 0 .. R without decreasing (core's
    validate_offsets) before reading a row: bad ones would read and write past the rows."""
    price, volume, side, offsets = trades(0)
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, side=side)
    off = np.asarray(prof.offsets, np.int64)
    assert len(off) > 3 and off[2] > off[1]  # the cases above change something
    opts = vpoc._core.Options(tick_size=TICK)
    with pytest.raises(ValueError, match=what) as e:
        vpoc._core.side_levels(np.ascontiguousarray(bad(off), np.int64), prof.low_row, prof.buy_volume,
                               prof.sell_volume, prof.row_size, opts, 3.0, 3)
    # named as the argument it is, without the advice about vpoc.sessions' offsets (review8 #5)
    assert getattr(e.value, "argument", None) == "row_offsets" and "session=s" not in str(e.value), str(e.value)


def test_side_levels_of_rows_equal_the_engine():
    """_core.side_levels (Live, bar_features) on the engine's own buy / sell rows gives its fields."""
    price, volume, side, offsets = trades(11)
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, side=side, poc_tie="high")
    opts = vpoc._core.Options(tick_size=TICK, poc_tie="high")
    got = vpoc._core.side_levels(prof.offsets, prof.low_row, prof.buy_volume, prof.sell_volume, prof.row_size, opts,
                                 3.0, 3)
    for name, value in got.items():
        np.testing.assert_array_equal(value, np.asarray(getattr(prof, name)), err_msg=name)
