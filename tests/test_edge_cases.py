"""Edge cases of the engine with hand-computed expectations, result accessors, threading
and the accepted input kinds."""

from __future__ import annotations

import numpy as np
import pytest

from _compare import assert_matches_reference, assert_profiles_identical, check_structure
from reference import NO_ROW, ref_bars, ref_trades

vpoc = pytest.importorskip("vpoc")

VA_METHODS = ("cbot", "single", "greedy")
POC_TIES = ("center", "low", "high")
DISTRIBUTES = ("close", "hlc3", "uniform", "legacy")


def trades_hist(hist, first_row=0, tick=1.0):
    """One trade per row of `hist` (tick_size `tick`, ticks_per_row 1)."""
    rows = np.arange(len(hist)) + first_row
    return rows * tick, np.asarray(hist, dtype=np.float64)


def one(prof, k):
    a = np.asarray(getattr(prof, k))
    assert a.shape == (1,)
    return a[0].item()


def test_no_row_constant():
    assert vpoc.NO_ROW == -(2**63) == NO_ROW


# --------------------------------------------------------------------------------------
# empty sessions
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("offsets", [
    [0, 0, 3, 5],        # empty at start
    [0, 3, 3, 5],        # empty in the middle
    [0, 3, 5, 5],        # empty at the end
    [0, 0, 0, 5, 5, 5],  # several
    [0, 5],
])
@pytest.mark.parametrize("api", ["trades", "bars"])
def test_empty_sessions(offsets, api):
    price = np.array([1.0, 2.0, 2.0, 7.0, 7.25])
    vol = np.array([3, 4, 5, 6, 7])
    off = np.array(offsets, dtype=np.int64)
    if api == "trades":
        prof = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25)
        ref = ref_trades(price, vol, off, tick_size=0.25)
    else:
        prof = vpoc.from_bars(price + 0.5, price, price, vol, offsets=off, tick_size=0.25,
                              distribute="close")
        ref = ref_bars(price + 0.5, price, price, vol, None, off, tick_size=0.25,
                       distribute="close")
    assert_matches_reference(prof, ref, exact=True, value_area=0.7, va_method="cbot",
                             poc_tie="center")
    empty = np.diff(off) == 0
    assert np.all(np.asarray(prof.n_rows)[empty] == 0)
    assert np.all(np.asarray(prof.poc_row)[empty] == vpoc.NO_ROW)
    assert np.all(np.isnan(np.asarray(prof.poc)[empty]))


@pytest.mark.parametrize("api", ["trades", "bars"])
def test_zero_rows(api):
    e = np.zeros(0)
    if api == "trades":
        one_session = vpoc.from_trades(e, e, tick_size=0.25)
        no_session = vpoc.from_trades(e, e, offsets=np.array([0]), tick_size=0.25)
        two_empty = vpoc.from_trades(e, e, offsets=np.array([0, 0, 0]), tick_size=0.25)
        ids_empty = vpoc.from_trades(e, e, session_ids=np.zeros(0, np.int64), tick_size=0.25)
    else:
        one_session = vpoc.from_bars(e, e, e, e, tick_size=0.25)
        no_session = vpoc.from_bars(e, e, e, e, offsets=np.array([0]), tick_size=0.25)
        two_empty = vpoc.from_bars(e, e, e, e, offsets=np.array([0, 0, 0]), tick_size=0.25)
        ids_empty = vpoc.from_bars(e, e, e, e, session_ids=np.zeros(0, np.int64),
                                   tick_size=0.25)
    check_structure(one_session, 1)
    assert one(one_session, "n_rows") == 0 and np.isnan(one(one_session, "poc"))
    assert one(one_session, "poc_row") == vpoc.NO_ROW
    check_structure(no_session, 0)
    assert np.asarray(no_session.offsets).tolist() == [0]
    assert no_session.dense().shape == (0, 0)
    check_structure(two_empty, 2)
    assert two_empty.dense().shape == (2, 0)
    # session_ids with N = 0: every run of equal ids is a session -> none
    check_structure(ids_empty, 0)


# --------------------------------------------------------------------------------------
# tiny profiles
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("va_method", VA_METHODS)
@pytest.mark.parametrize("poc_tie", POC_TIES)
def test_one_row(va_method, poc_tie):
    prof = vpoc.from_trades([4000.25], [7], tick_size=0.25, va_method=va_method,
                            poc_tie=poc_tie)
    assert one(prof, "n_rows") == 1
    assert one(prof, "poc_row") == one(prof, "vah_row") == one(prof, "val_row") == 16001
    assert one(prof, "low_row") == 16001
    assert one(prof, "poc") == one(prof, "vah") == one(prof, "val") == 4000.25
    assert one(prof, "total_volume") == one(prof, "va_volume") == 7.0


@pytest.mark.parametrize("va_method", VA_METHODS)
def test_all_trades_at_one_price(va_method):
    price = np.full(1000, -12.5)
    vol = np.arange(1000) % 7
    prof = vpoc.from_trades(price, vol, tick_size=0.5, ticks_per_row=2, va_method=va_method)
    assert one(prof, "n_rows") == 1
    assert one(prof, "poc_row") == -13  # tick -25 -> floor(-25 / 2)
    assert one(prof, "poc") == -13.0
    assert np.asarray(prof.volume).tolist() == [float(vol.sum())]


@pytest.mark.parametrize("va_method", VA_METHODS)
def test_gaps_are_zero_rows(va_method):
    prof = vpoc.from_trades([10.0, 10.0, 14.0, 17.0], [5, 1, 2, 3], tick_size=1.0,
                            va_method=va_method)
    assert one(prof, "low_row") == 10 and one(prof, "n_rows") == 8
    assert np.asarray(prof.volume).tolist() == [6, 0, 0, 0, 2, 0, 0, 3]
    assert one(prof, "poc_row") == 10
    # total 11, target 7.7: cbot 6 + (0+0) up ... ; check against the reference
    ref = ref_trades([10.0, 10.0, 14.0, 17.0], [5, 1, 2, 3], tick_size=1.0,
                     va_method=va_method)
    assert_matches_reference(prof, ref, exact=True, value_area=0.7, va_method=va_method,
                             poc_tie="center")


# hand-worked: rows 0..4 volumes [30, 5, 40, 10, 15]
@pytest.mark.parametrize("va_method, expected", [
    ("cbot", (0, 2, 75.0)), ("single", (1, 4, 70.0)), ("greedy", (0, 2, 70.0))])
def test_value_area_methods_by_hand(va_method, expected):
    prof = vpoc.from_trades(*trades_hist([30, 5, 40, 10, 15], first_row=-2), tick_size=1.0,
                            va_method=va_method)
    val, vah, va = expected
    assert one(prof, "poc_row") == 0
    assert (one(prof, "val_row"), one(prof, "vah_row")) == (val - 2, vah - 2)
    assert one(prof, "va_volume") == va and one(prof, "total_volume") == 100.0


@pytest.mark.parametrize("hist, expected", [
    ([10, 2, 10, 1, 10, 3], {"center": 2, "low": 0, "high": 4}),
    ([7, 10, 1, 10, 7], {"center": 1, "low": 1, "high": 3}),   # equal distance -> lower
    ([100.0, 100.0 * (1 - 5e-10)], {"center": 0, "low": 0, "high": 1}),  # 1e-9 tie
    ([100.0 * (1 - 2e-9), 100.0], {"center": 1, "low": 1, "high": 1}),  # not a tie
    ([0, 0, 0, 0, 0], {"center": 2, "low": 0, "high": 4}),              # zero volume
])
@pytest.mark.parametrize("poc_tie", POC_TIES)
def test_poc_ties(hist, expected, poc_tie):
    prof = vpoc.from_trades(*trades_hist(hist, first_row=5), tick_size=1.0, poc_tie=poc_tie)
    assert one(prof, "poc_row") == expected[poc_tie] + 5


def test_poc_tie_center_with_ticks_per_row():
    # trades on ticks 0..7, tpr 2 -> rows 0..3 with volumes [4, 1, 1, 4]: tied rows 0, 3,
    # centre 1.5 -> equally close -> lower (0)
    price = np.arange(8) * 0.25
    vol = [2, 2, 1, 0, 0, 1, 2, 2]
    prof = vpoc.from_trades(price, vol, tick_size=0.25, ticks_per_row=2)
    assert np.asarray(prof.volume).tolist() == [4, 1, 1, 4]
    assert one(prof, "poc_row") == 0 and one(prof, "poc") == 0.0
    prof = vpoc.from_trades(price, vol, tick_size=0.25, ticks_per_row=2, poc_tie="high")
    assert one(prof, "poc_row") == 3 and one(prof, "poc") == 1.5


def test_value_area_ties_go_up():
    # cbot: [10, 10, 50, 10, 10] total 90 target 63; D == U == 20 -> up -> 70
    prof = vpoc.from_trades(*trades_hist([10, 10, 50, 10, 10]), tick_size=1.0)
    assert (one(prof, "val_row"), one(prof, "vah_row"), one(prof, "va_volume")) == (2, 4, 70.0)
    # single: [5, 10, 50, 10, 5] target 56; D == U == 10 -> up -> 60
    prof = vpoc.from_trades(*trades_hist([5, 10, 50, 10, 5]), tick_size=1.0,
                            va_method="single")
    assert (one(prof, "val_row"), one(prof, "vah_row"), one(prof, "va_volume")) == (2, 3, 60.0)
    # near tie (1e-10 relative) still goes up; 1e-8 relative goes down
    for rel, expected in ((1e-10, (2, 4)), (1e-8, (0, 2))):
        dn = 20.0 * (1 + rel)
        prof = vpoc.from_trades(*trades_hist([dn / 2, dn / 2, 50, 10, 10]), tick_size=1.0)
        assert (one(prof, "val_row"), one(prof, "vah_row")) == expected, rel
    # greedy: equal volumes -> lower row first
    prof = vpoc.from_trades(*trades_hist([1, 6, 2, 6, 1]), tick_size=1.0, va_method="greedy",
                            value_area=0.3)
    assert (one(prof, "val_row"), one(prof, "vah_row"), one(prof, "va_volume")) == (1, 1, 6.0)


def test_cbot_edge_pairs_and_exhausted_side():
    h = [20, 30, 1, 1, 1, 1]
    for va, expected in ((0.7, (0, 1, 50.0)), (0.95, (0, 3, 52.0)), (1.0, (0, 5, 54.0))):
        prof = vpoc.from_trades(*trades_hist(h), tick_size=1.0, value_area=va)
        got = (one(prof, "val_row"), one(prof, "vah_row"), one(prof, "va_volume"))
        assert got == expected, va


@pytest.mark.parametrize("va_method", VA_METHODS)
def test_zero_volume_session_with_rows(va_method):
    prof = vpoc.from_trades([1.0, 2.0, 3.0, 9.0], [0, 0, 0, 5], offsets=[0, 3, 4],
                            tick_size=1.0, va_method=va_method)
    assert np.asarray(prof.n_rows).tolist() == [3, 1]
    assert np.asarray(prof.total_volume).tolist() == [0.0, 5.0]
    assert np.asarray(prof.va_volume).tolist() == [0.0, 5.0]
    assert np.asarray(prof.poc_row).tolist() == [2, 9]  # all tied -> centre
    exp_va = 1 if va_method == "greedy" else 2  # greedy: lowest row first, running 0 >= 0
    assert np.asarray(prof.val_row).tolist() == [exp_va, 9]
    assert np.asarray(prof.vah_row).tolist() == [exp_va, 9]


def test_negative_prices_and_rounding():
    # rint half to even: 0.125/0.25 = .5 -> 0, 0.375 -> 2, -0.125 -> 0, -0.375 -> -2
    prof = vpoc.from_trades([0.125, 0.375, -0.125, -0.375], [1, 2, 4, 8], tick_size=0.25,
                            snap=True)  # half-tick prices on purpose
    assert one(prof, "low_row") == -2
    assert np.asarray(prof.volume).tolist() == [8, 0, 5, 0, 2]
    # floor division of negative ticks into rows of 2 ticks
    price = np.array([-1.5, -1.0, -0.5, 0.0, 0.5])  # ticks -3..1 at 0.5
    prof = vpoc.from_trades(price, [1, 2, 3, 4, 5], tick_size=0.5, ticks_per_row=2,
                            va_method="single")
    assert one(prof, "low_row") == -2 and one(prof, "n_rows") == 3
    assert np.asarray(prof.volume).tolist() == [1, 5, 9]
    assert (one(prof, "poc_row"), one(prof, "val_row"), one(prof, "vah_row")) == (0, -1, 0)
    assert (one(prof, "poc"), one(prof, "val")) == (0.0, -1.0)
    assert prof.row_size == 1.0 and prof.tick_size == 0.5 and prof.ticks_per_row == 2


@pytest.mark.parametrize("tpr", [1, 2, 3, 4, 7])
def test_ticks_per_row(tpr):
    rng = np.random.default_rng(tpr)
    price = rng.integers(-50, 50, 300) * 0.25
    vol = rng.integers(0, 9, 300)
    off = np.array([0, 100, 100, 250, 300])
    for va_method in VA_METHODS:
        prof = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, ticks_per_row=tpr,
                                va_method=va_method)
        ref = ref_trades(price, vol, off, tick_size=0.25, ticks_per_row=tpr,
                         va_method=va_method)
        assert_matches_reference(prof, ref, exact=True, value_area=0.7, va_method=va_method,
                                 poc_tie="center")


@pytest.mark.parametrize("va_method", VA_METHODS)
def test_value_area_one(va_method):
    price = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    vol = [0, 3, 0, 9, 1, 0]
    prof = vpoc.from_trades(price, vol, tick_size=1.0, value_area=1.0, va_method=va_method)
    assert one(prof, "va_volume") == one(prof, "total_volume") == 13.0
    # every row with volume is inside [val, vah]
    assert one(prof, "val_row") <= 2 and one(prof, "vah_row") >= 5
    ref = ref_trades(price, vol, tick_size=1.0, value_area=1.0, va_method=va_method)
    assert_matches_reference(prof, ref, exact=True, value_area=1.0, va_method=va_method,
                             poc_tie="center")


# --------------------------------------------------------------------------------------
# bars by hand
# --------------------------------------------------------------------------------------
def test_bars_uniform_by_hand():
    prof = vpoc.from_bars([1.5], [1.0], [1.25], [30], tick_size=0.25, distribute="uniform")
    assert one(prof, "low_row") == 4 and np.asarray(prof.volume).tolist() == [10, 10, 10]
    prof = vpoc.from_bars([1.5], [1.0], [1.25], [30], tick_size=0.25, ticks_per_row=2)
    assert one(prof, "low_row") == 2 and np.asarray(prof.volume).tolist() == [20, 10]
    # a zero-volume bar still touches its rows
    prof = vpoc.from_bars([3.0, 9.0], [1.0, 8.0], [2.0, 8.0], [1, 0], tick_size=1.0)
    assert one(prof, "n_rows") == 9
    np.testing.assert_allclose(prof.volume, [1 / 3] * 3 + [0.0] * 6, rtol=1e-15, atol=0)


def test_bars_close_and_hlc3_by_hand():
    hi, lo, cl = [1.5, 2.0], [1.0, 1.0], [1.0, 2.0]
    prof = vpoc.from_bars(hi, lo, cl, [3, 4], tick_size=0.25, distribute="close")
    assert one(prof, "low_row") == 4 and np.asarray(prof.volume).tolist() == [3, 0, 0, 0, 4]
    prof = vpoc.from_bars(hi, lo, cl, [3, 4], tick_size=0.25, distribute="hlc3")
    assert one(prof, "low_row") == 5 and np.asarray(prof.volume).tolist() == [3, 0, 4]


def test_bars_legacy_by_hand():
    prof = vpoc.from_bars([1.25], [1.0], [1.25], [10], open=[1.0], tick_size=0.25,
                          distribute="legacy")
    assert one(prof, "low_row") == 4
    np.testing.assert_allclose(prof.volume, [90 / 19, 100 / 19], rtol=1e-15, atol=0)
    # open below the low: rejected (vpoc.compat widens such legacy bars to [min(o,c,l), max(o,c,h)])
    with pytest.raises(ValueError, match=r"open\[0\]=0.5 is outside \[low\[0\], high\[0\]\] = \[1, 1.25\]"):
        vpoc.from_bars([1.25], [1.0], [1.0], [1], open=[0.5], tick_size=0.25, distribute="legacy")
    prof = vpoc.from_bars([1.25], [0.5], [1.0], [1], open=[0.5], tick_size=0.25,
                          distribute="legacy")
    w = np.array([1 + 1 / 1.5, 1.8, 2.0, 1.8])
    assert one(prof, "low_row") == 2
    np.testing.assert_allclose(prof.volume, w / w.sum(), rtol=1e-15, atol=0)
    # off-grid bar inside one tick -> all on t(close) = rint(1.2 / .25) = 5
    prof = vpoc.from_bars([1.24], [1.05], [1.2], [7], tick_size=0.25, distribute="legacy", snap=True)
    assert one(prof, "low_row") == 5 and np.asarray(prof.volume).tolist() == [7.0]
    prof = vpoc.from_bars([1.24, 1.5], [1.05, 1.0], [1.2, 1.5], [7, 1], tick_size=0.25,
                          distribute="legacy", snap=True)
    L = np.array([1.0, 1.25, 1.5])
    w = 1 + 1 / (1 + np.abs(L - 1.5))
    exp = w / w.sum()
    exp[1] += 7
    np.testing.assert_allclose(prof.volume, exp, rtol=1e-14, atol=0)


# --------------------------------------------------------------------------------------
# conservation
# --------------------------------------------------------------------------------------
def _random_bars(rng, n, tick=0.25):
    low = np.round(rng.normal(4000, 20, n) / tick) * tick
    high = low + rng.integers(0, 12, n) * tick
    close = low + rng.integers(0, 2, n) * (high - low)
    open_ = low + rng.uniform(0, 1, n) * (high - low)
    return high, low, close, open_


@pytest.mark.parametrize("distribute", ("trades",) + DISTRIBUTES)
@pytest.mark.parametrize("integer", [True, False])
def test_volume_conservation(distribute, integer):
    rng = np.random.default_rng(7)
    n = 5000
    off = np.concatenate([[0], np.sort(rng.integers(0, n, 40)), [n]]).astype(np.int64)
    vol = rng.integers(0, 500, n) if integer else rng.exponential(100.0, n)
    if distribute == "trades":
        prof = vpoc.from_trades(np.round(rng.normal(100, 5, n), 2), vol, offsets=off,
                                tick_size=0.01, ticks_per_row=3)
    else:
        h, l, c, o = _random_bars(rng, n)
        prof = vpoc.from_bars(h, l, c, vol, open=o, offsets=off, tick_size=0.25,
                              distribute=distribute, ticks_per_row=2, snap=True)  # off-grid opens
    check_structure(prof, off.size - 1)
    expected = np.add.reduceat(np.append(vol.astype(np.float64), 0.0), off[:-1])
    expected[np.diff(off) == 0] = 0
    tv = np.asarray(prof.total_volume)
    vol_out = np.asarray(prof.volume)
    o2 = np.asarray(prof.offsets)
    per_session = np.array([vol_out[o2[s]:o2[s + 1]].sum() for s in range(off.size - 1)])
    if integer and distribute in ("trades", "close", "hlc3"):
        np.testing.assert_array_equal(tv, expected)
        np.testing.assert_array_equal(per_session, expected)
    else:
        np.testing.assert_allclose(tv, expected, rtol=1e-12, atol=0)
        np.testing.assert_allclose(per_session, expected, rtol=1e-12, atol=0)
    va = np.asarray(prof.va_volume)
    assert np.all(va <= tv * (1 + 1e-12))
    assert np.all(va >= 0.7 * tv * (1 - 1e-12))


# --------------------------------------------------------------------------------------
# accessors
# --------------------------------------------------------------------------------------
def _sample_profiles():
    price = np.array([10.0, 11.0, 13.0, 2.0, -1.0, -1.5, -0.5])
    vol = np.array([1, 2, 3, 4, 5, 6, 7])
    off = np.array([0, 0, 3, 4, 4, 7])
    return vpoc.from_trades(price, vol, offsets=off, tick_size=0.5), off


def test_dense():
    prof, off = _sample_profiles()
    n_rows = np.asarray(prof.n_rows)
    assert n_rows.tolist() == [0, 7, 1, 0, 3]
    for fill in (0.0, -1.0, np.nan):
        d = prof.dense(fill=fill)
        assert isinstance(d, np.ndarray) and d.dtype == np.float64
        assert d.shape == (5, 7)
        vol = np.asarray(prof.volume)
        o = np.asarray(prof.offsets)
        for s in range(5):
            np.testing.assert_array_equal(d[s, :n_rows[s]], vol[o[s]:o[s + 1]])
            np.testing.assert_array_equal(d[s, n_rows[s]:], np.full(7 - n_rows[s], fill))
    d = prof.dense()
    # session 1: rows 20..26 (prices 10, 11, 13 at tick .5)
    assert d[1].tolist() == [1, 0, 2, 0, 0, 0, 3]
    assert d[4].tolist() == [6, 5, 7, 0, 0, 0, 0]
    assert np.all(d[[0, 3]] == 0)


def test_dense_all_empty_and_default_fill():
    prof = vpoc.from_trades(np.zeros(0), np.zeros(0), offsets=[0, 0, 0, 0], tick_size=1.0)
    assert prof.dense().shape == (3, 0)
    prof = vpoc.from_trades([1.0], [2.0], offsets=[0, 0, 1], tick_size=1.0)
    assert prof.dense().tolist() == [[0.0], [2.0]]


def test_session_accessor():
    prof, _ = _sample_profiles()
    prices, vols = prof.session(1)
    assert prices.dtype == np.float64 and vols.dtype == np.float64
    np.testing.assert_array_equal(prices, np.arange(20, 27) * 0.5)
    np.testing.assert_array_equal(vols, [1, 0, 2, 0, 0, 0, 3])
    prices, vols = prof.session(4)
    np.testing.assert_array_equal(prices, [-1.5, -1.0, -0.5])
    np.testing.assert_array_equal(vols, [6, 5, 7])
    prices, vols = prof.session(0)
    assert prices.shape == (0,) and vols.shape == (0,)
    with pytest.raises(IndexError):
        prof.session(5)


def test_session_accessor_ticks_per_row():
    prof = vpoc.from_trades([-1.25, 0.0, 0.75], [1, 2, 3], tick_size=0.25, ticks_per_row=2)
    prices, vols = prof.session(0)
    # ticks -5, 0, 3 -> rows -3, 0, 1 -> row prices -1.5 .. 0.5 step 0.5
    np.testing.assert_array_equal(prices, [-1.5, -1.0, -0.5, 0.0, 0.5])
    np.testing.assert_array_equal(vols, [1, 0, 0, 2, 3])


def test_to_pandas():
    pd = pytest.importorskip("pandas")
    prof, _ = _sample_profiles()
    df = prof.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert len(df) == prof.n_sessions == 5
    assert "poc" in df.columns
    for k in ("poc", "vah", "val", "poc_row", "vah_row", "val_row", "total_volume",
              "va_volume", "n_rows", "low_row"):
        if k in df.columns:
            np.testing.assert_array_equal(df[k].to_numpy(), np.asarray(getattr(prof, k)),
                                          err_msg=k)


def test_session_labels_from_ids():
    ids = np.array([20240102, 20240102, 20240103, 20240105, 20240105, 20240105])
    prof = vpoc.from_trades(np.arange(6.0), np.ones(6), session_ids=ids, tick_size=1.0)
    assert prof.n_sessions == 3
    assert np.asarray(prof.session_labels).tolist() == [20240102, 20240103, 20240105]
    assert np.asarray(prof.n_rows).tolist() == [2, 1, 3]
    prof = vpoc.from_trades(np.arange(6.0), np.ones(6), offsets=[0, 2, 6], tick_size=1.0)
    assert prof.session_labels is None


# --------------------------------------------------------------------------------------
# threads
# --------------------------------------------------------------------------------------
def _thread_case(kind):
    rng = np.random.default_rng(11)
    if kind == "many_sessions":
        n = 60_000
        off = np.concatenate([[0], np.sort(rng.integers(0, n, 299)), [n]]).astype(np.int64)
    else:  # one big session (parallelism inside a session)
        n = 200_000
        off = np.array([0, n], dtype=np.int64)
    return rng, n, off


@pytest.mark.parametrize("kind", ["many_sessions", "one_session"])
@pytest.mark.parametrize("distribute", ("trades", "uniform", "legacy", "hlc3"))
def test_threads_bit_identical(kind, distribute):
    rng, n, off = _thread_case(kind)
    vol = rng.exponential(10.0, n)  # float volumes: summation order would show
    kw = dict(offsets=off, tick_size=0.25, ticks_per_row=2, snap=True)  # off-grid prices on purpose
    if distribute == "trades":
        price = np.round(rng.normal(4000, 30, n) * 4) / 4 + rng.uniform(-0.1, 0.1, n)
        run = lambda t: vpoc.from_trades(price, vol, threads=t, **kw)  # noqa: E731
    else:
        if distribute == "legacy" and kind == "one_session":
            n = 20_000  # the legacy weights are O(levels) per bar
            vol, off = vol[:n], np.array([0, n], dtype=np.int64)
            kw["offsets"] = off
        h, l, c, o = _random_bars(rng, n)
        run = lambda t: vpoc.from_bars(h, l, c, vol, open=o, distribute=distribute,  # noqa
                                       threads=t, **kw)
    base = run(1)
    check_structure(base, off.size - 1)
    for t in (2, 7, None):
        assert_profiles_identical(base, run(t), ctx=f"threads={t}")


def test_integer_uniform_bars_independent_of_threads_and_neighbours():
    """Whole volumes spread over ticks are summed exactly per tick count and folded into rows
    once: a session's rows must not depend on which sessions its worker binned before (a wide
    first session leaves a window that later ones never have to move) nor on the thread count."""
    rng = np.random.default_rng(3)
    n_s, per = 40, 600
    n = n_s * per
    close = 4000 + np.cumsum(rng.integers(-4, 5, n)) * 0.25
    high = close + rng.integers(0, 12, n) * 0.25
    low = close - rng.integers(0, 12, n) * 0.25
    vol = rng.integers(1, 3000, n)
    off = np.arange(0, n + 1, per, dtype=np.int64)
    kw = dict(tick_size=0.25, distribute="uniform")
    base = vpoc.from_bars(high, low, close, vol, offsets=off, threads=1, **kw)
    for t in (2, 5):
        assert_profiles_identical(base, vpoc.from_bars(high, low, close, vol, offsets=off, threads=t, **kw),
                                  ctx=f"threads={t}")
    for s in range(n_s):
        a, b = off[s], off[s + 1]
        one = vpoc.from_bars(high[a:b], low[a:b], close[a:b], vol[a:b], **kw)
        assert np.array_equal(one.volume, base.volume[base.offsets[s]:base.offsets[s + 1]]), s


# --------------------------------------------------------------------------------------
# input kinds
# --------------------------------------------------------------------------------------
def _base_inputs():
    rng = np.random.default_rng(3)
    n = 64
    price = rng.integers(-20, 20, n) * 0.25 + 100.0
    vol = rng.integers(0, 100, n).astype(np.float64)
    off = np.array([0, 10, 10, 40, 64])
    return price, vol, off


def _assert_same(a, b):
    for k in ("poc_row", "vah_row", "val_row", "low_row", "n_rows", "offsets", "volume",
              "total_volume", "va_volume", "poc", "vah", "val"):
        np.testing.assert_array_equal(np.asarray(getattr(a, k)), np.asarray(getattr(b, k)),
                                      err_msg=k)


def test_list_inputs():
    price, vol, off = _base_inputs()
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25)
    b = vpoc.from_trades(price.tolist(), vol.tolist(), offsets=off.tolist(), tick_size=0.25)
    _assert_same(a, b)
    h, l, c, o = price + 0.5, price, price + 0.25, price
    a = vpoc.from_bars(h, l, c, vol, open=o, offsets=off, tick_size=0.25)
    b = vpoc.from_bars(h.tolist(), l.tolist(), c.tolist(), vol.tolist(), open=o.tolist(),
                       offsets=off.tolist(), tick_size=0.25)
    _assert_same(a, b)


def test_pandas_series_inputs():
    pd = pytest.importorskip("pandas")
    price, vol, off = _base_inputs()
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25)
    idx = np.arange(100, 100 + price.size)  # a non-default index must not matter
    b = vpoc.from_trades(pd.Series(price, index=idx), pd.Series(vol, index=idx),
                         offsets=pd.Series(off), tick_size=0.25)
    _assert_same(a, b)
    ids = np.repeat([1, 3, 4], [10, 30, 24])
    c = vpoc.from_trades(pd.Series(price), pd.Series(vol), session_ids=pd.Series(ids),
                         tick_size=0.25)
    d = vpoc.from_trades(price, vol, offsets=[0, 10, 40, 64], tick_size=0.25)
    _assert_same(c, d)
    df = pd.DataFrame({"h": price + 0.5, "l": price, "c": price, "v": vol})
    e = vpoc.from_bars(df["h"], df["l"], df["c"], df["v"], offsets=off, tick_size=0.25)
    f = vpoc.from_bars(price + 0.5, price, price, vol, offsets=off, tick_size=0.25)
    _assert_same(e, f)


def test_torch_cpu_inputs():
    torch = pytest.importorskip("torch")
    price, vol, off = _base_inputs()
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25)
    b = vpoc.from_trades(torch.from_numpy(price), torch.from_numpy(vol),
                         offsets=torch.from_numpy(off), tick_size=0.25)
    _assert_same(a, b)
    c = vpoc.from_trades(torch.from_numpy(price).float(), torch.from_numpy(vol).int(),
                         offsets=off, tick_size=0.25)
    d = vpoc.from_trades(price.astype(np.float32), vol.astype(np.int32), offsets=off,
                         tick_size=0.25)
    _assert_same(c, d)
    g = torch.from_numpy(vol).requires_grad_(True)
    _assert_same(a, vpoc.from_trades(price, g, offsets=off, tick_size=0.25))


def test_non_contiguous_inputs():
    price, vol, off = _base_inputs()
    big_p = np.repeat(price, 3)
    big_v = np.repeat(vol, 3)
    sp, sv = big_p[::3], big_v[1::3]
    assert not sp.flags.c_contiguous
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25)
    _assert_same(a, vpoc.from_trades(sp, sv, offsets=off, tick_size=0.25))
    rev = vpoc.from_trades(price[::-1][::-1], vol[::-1][::-1], offsets=off, tick_size=0.25)
    _assert_same(a, rev)
    # a column of a 2-D array (strided)
    m = np.stack([price, vol], axis=1)
    _assert_same(a, vpoc.from_trades(m[:, 0], m[:, 1], offsets=off, tick_size=0.25))
    # bars
    h = np.stack([price + 0.5, price], axis=1)
    b1 = vpoc.from_bars(h[:, 0], h[:, 1], price, vol, offsets=off, tick_size=0.25)
    b2 = vpoc.from_bars(price + 0.5, price.copy(), price, vol, offsets=off, tick_size=0.25)
    _assert_same(b1, b2)


@pytest.mark.parametrize("pdtype, vdtype", [
    ("float16", "int8"), ("int8", "uint16"), ("float16", "float16"), ("int16", "uint8"),
    ("uint16", "uint32"), ("float32", "int32"), ("int64", "uint64"), ("int32", "float32"),
])
def test_small_and_unusual_dtypes(pdtype, vdtype):
    rng = np.random.default_rng(5)
    n = 50
    price = (rng.integers(0, 40, n) * 0.5).astype(pdtype)  # exact in float16 too
    if np.dtype(pdtype).kind in "iu":
        price = rng.integers(0, 40, n).astype(pdtype)
    vol = rng.integers(0, 100, n).astype(vdtype)
    off = np.array([0, 20, 50])
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.5)
    b = vpoc.from_trades(price.astype(np.float64), vol.astype(np.float64), offsets=off,
                         tick_size=0.5)
    _assert_same(a, b)
    ref = ref_trades(price, vol, off, tick_size=0.5)
    assert_matches_reference(a, ref, exact=True, value_area=0.7, va_method="cbot",
                             poc_tie="center")
    hb = vpoc.from_bars(price, price, price, vol, offsets=off, tick_size=0.5,
                        distribute="uniform")
    assert_matches_reference(hb, ref, exact=True, value_area=0.7, va_method="cbot",
                             poc_tie="center")


def test_float32_prices_are_widened_exactly():
    # 0.1 in float32 is 0.100000001490116...; as float64 / 0.1 that is 1.0000000149 -> tick 1
    # but 4000.1 float32 = 4000.10009765625 -> / 0.01 = 400010.0097 -> tick 400010
    p32 = np.array([4000.1, 4000.13, 0.1], dtype=np.float32)
    prof = vpoc.from_trades(p32, [1, 1, 1], offsets=[0, 2, 3], tick_size=0.01)
    ref = ref_trades(p32, [1, 1, 1], [0, 2, 3], tick_size=0.01)
    assert_matches_reference(prof, ref, exact=True, value_area=0.7, va_method="cbot",
                             poc_tie="center")
    # a float32 price that sits exactly half way between two ticks once widened
    p = np.array([0.375], dtype=np.float32)  # 1.5 ticks of .25 -> rint -> 2
    assert one(vpoc.from_trades(p, [1], tick_size=0.25, snap=True), "poc_row") == 2


def test_price_limit_and_max_rows_boundary():
    prof = vpoc.from_trades([2.0**52 - 1], [1], tick_size=1.0)
    assert one(prof, "poc_row") == 2**52 - 1
    # exactly max_rows rows is fine
    prof = vpoc.from_trades([0.0, 9.0], [1, 1], tick_size=1.0, max_rows=10)
    assert one(prof, "n_rows") == 10
    prof = vpoc.from_bars([9.0], [0.0], [0.0], [1], tick_size=1.0, max_rows=10)
    assert one(prof, "n_rows") == 10
    prof = vpoc.from_trades([0.0, 19.0], [1, 1], tick_size=1.0, ticks_per_row=2, max_rows=10)
    assert one(prof, "n_rows") == 10


# --------------------------------------------------------------------------------------
# tick rounding is exactly rint(p / tick_size) in float64 (adversarial prices)
# --------------------------------------------------------------------------------------
def _adversarial_prices(rng, tick, n=20_000, max_k=10**6):
    k = rng.integers(-max_k, max_k, n).astype(np.float64)
    on = k * tick
    half = (k + 0.5) * tick
    out = [on, half, np.nextafter(on, np.inf), np.nextafter(on, -np.inf),
           np.nextafter(half, np.inf), np.nextafter(half, -np.inf),
           (k + rng.uniform(-0.5, 0.5, n)) * tick]
    # prices whose quotient is within a few ulps of a .5 boundary
    q = k + 0.5
    for ulps in (1, 2, 3):
        out.append(np.nextafter(q, np.inf) * tick)
        out.append(q * tick * (1 + ulps * 2.0**-52))
        out.append(q * tick * (1 - ulps * 2.0**-52))
    p = np.concatenate(out)
    return p[np.isfinite(p) & (np.abs(p / tick) < 2.0**52)]


@pytest.mark.filterwarnings("ignore::vpoc.CoarseGridWarning")  # float32 at 2**36 ticks: a coarse grid (t8fix)
@pytest.mark.parametrize("tick", [0.25, 0.1, 0.01, 0.03, 1 / 3, 7.3, 1e-7, 1e-4, 12.5, 0.2,
                                  0.05, 0.005, 3.0, 2.0**-10, 0.3])
@pytest.mark.parametrize("magnitude", [10**6, 2**36])
def test_tick_rounding_is_rint(tick, magnitude):
    rng = np.random.default_rng(int(tick * 1e9) % 2**32 + magnitude % 1000)
    # sorted: one trade per session, neighbouring sessions at neighbouring prices
    p = np.sort(_adversarial_prices(rng, tick, max_k=magnitude))
    n = p.size
    off = np.arange(n + 1, dtype=np.int64)  # one trade per session: poc_row is its row
    expected = np.rint(p / tick).astype(np.int64)
    prof = vpoc.from_trades(p, np.ones(n), offsets=off, tick_size=tick, snap=True)  # off-grid on purpose
    got = np.asarray(prof.poc_row)
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, (
        f"{bad.size} prices map to the wrong tick, e.g. price={p[bad[0]]!r} "
        f"tick_size={tick!r}: got {got[bad[0]]}, rint(p / tick_size) = {expected[bad[0]]}")
    prof = vpoc.from_trades(p, np.ones(n), offsets=off, tick_size=tick, ticks_per_row=3, snap=True)
    np.testing.assert_array_equal(prof.poc_row, np.floor_divide(expected, 3))
    # float32 prices are widened exactly before dividing
    p32 = p.astype(np.float32)
    prof = vpoc.from_trades(p32, np.ones(n), offsets=off, tick_size=tick, snap=True)
    np.testing.assert_array_equal(prof.poc_row,
                                  np.rint(p32.astype(np.float64) / tick).astype(np.int64))


@pytest.mark.parametrize("tick", [0.1, 1 / 3, 0.25])
@pytest.mark.parametrize("sign", [1, -1])
def test_tick_rounding_near_the_limit(tick, sign):
    # prices about 2**51 ticks from zero (ulp of p / tick = 0.5: halves still exist), in one
    # narrow session; integer volumes make the histogram exact
    rng = np.random.default_rng(17)
    k = 2.0**51 - 3000 + rng.integers(0, 2000, 500)
    p = sign * np.concatenate([k * tick, (k + 0.5) * tick, np.nextafter((k + 0.5) * tick, 0)])
    vol = rng.integers(1, 1000, p.size)
    prof = vpoc.from_trades(p, vol, tick_size=tick)
    ref = ref_trades(p, vol, tick_size=tick)
    assert_matches_reference(prof, ref, exact=True, value_area=0.7, va_method="cbot",
                             poc_tie="center")


@pytest.mark.parametrize("tick", [0.25, 0.1, 0.01, 1 / 3, 7.3])
def test_bar_tick_rounding_is_rint(tick):
    rng = np.random.default_rng(99)
    p = _adversarial_prices(rng, tick, n=3000)
    rng.shuffle(p)
    m = p.size // 3 * 3
    a, b, c = p[:m].reshape(3, -1)
    low, high = np.minimum(a, b), np.maximum(a, b)
    high = np.minimum(high, low + 40 * tick)  # keep the uniform spans small
    close = np.clip(c, low, high)
    n = low.size
    off = np.arange(n + 1)
    t = lambda x: np.rint(x / tick).astype(np.int64)  # noqa: E731
    prof = vpoc.from_bars(high, low, close, np.ones(n), offsets=off, tick_size=tick,
                          distribute="close", snap=True)  # off-grid on purpose
    np.testing.assert_array_equal(prof.poc_row, t(close))
    prof = vpoc.from_bars(high, low, close, np.ones(n), offsets=off, tick_size=tick,
                          distribute="hlc3", snap=True)
    np.testing.assert_array_equal(prof.poc_row, t((high + low + close) / 3.0))
    prof = vpoc.from_bars(high, low, close, np.ones(n), offsets=off, tick_size=tick,
                          distribute="uniform", snap=True)
    np.testing.assert_array_equal(prof.low_row, t(low))
    np.testing.assert_array_equal(prof.n_rows, t(high) - t(low) + 1)


# --------------------------------------------------------------------------------------
# integer volumes beyond int64 / float64 accumulation
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
@pytest.mark.parametrize("api", ["trades", "close", "hlc3", "uniform"])
def test_huge_integer_volumes_do_not_overflow(dtype, api):
    # Integer volumes are summed exactly up to 2**53 (docs/contract.md "Exact sums"): 2**52 +
    # (2**52 - 8) + 3 is exact, where an int32 accumulator would wrap and float32 would round.
    p = np.array([1.0, 1.0, 2.0])
    v = np.array([2**52, 2**52 - 8, 3], dtype=dtype)
    if api == "trades":
        call = lambda: vpoc.from_trades(p, v, tick_size=1.0)  # noqa: E731
    else:
        call = lambda: vpoc.from_bars(p, p, p, v, tick_size=1.0, distribute=api)  # noqa: E731
    prof = call()
    assert np.asarray(prof.volume).tolist() == [2.0**53 - 8, 3.0]
    assert one(prof, "total_volume") == 2.0**53 - 5
    assert one(prof, "poc_row") == 1
    assert np.all(np.asarray(prof.volume) >= 0)
    # past 2**53 the total could not be exact: a clear error naming the session
    v[2] = 9  # 2**53 + 1
    with pytest.raises(ValueError, match=r"volume of session 0 sums past 2\*\*53"):
        call()
    # and one volume past 2**53 names its index
    v[:] = [2**62, 1, 1]
    with pytest.raises(ValueError, match=r"volume\[0\]=(4.6\d+e\+18|4611686018427387904) is above 2\*\*53"):
        call()


def test_int32_volumes_sum_beyond_int32():
    v = np.full(4, 2**31 - 1, dtype=np.int32)
    prof = vpoc.from_trades(np.ones(4), v, tick_size=1.0)
    assert np.asarray(prof.volume).tolist() == [4.0 * (2**31 - 1)]


def test_bars_mixed_price_dtypes():
    rng = np.random.default_rng(1)
    n = 200
    low = np.round(rng.normal(100, 2, n), 3)
    high = low + rng.uniform(0, 1, n)
    h32 = high.astype(np.float32)
    ok = h32.astype(np.float64) >= low
    h32, low = h32[ok], low[ok]
    n = int(ok.sum())
    close = low + (h32.astype(np.float64) - low) * rng.random(n)
    open32 = close.astype(np.float32)
    vol = rng.integers(0, 100, n)
    off = [0, 50, n]
    for dist in DISTRIBUTES:
        prof = vpoc.from_bars(h32, low, close, vol, open=open32, offsets=off, tick_size=0.01,
                              distribute=dist, snap=True)  # off-grid prices on purpose
        ref = ref_bars(h32, low, close, vol, open32, off, tick_size=0.01, distribute=dist)
        assert_matches_reference(prof, ref, exact=dist in ("close", "hlc3"), value_area=0.7,
                                 va_method="cbot", poc_tie="center", ctx=dist)


# --------------------------------------------------------------------------------------
# found by tests/test_fuzz.py
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", [">", "<"])
@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "i4"])
def test_byte_order_does_not_change_results(order, dtype):
    """Big-endian float64 volumes were read as float32 (silent precision loss)."""
    rng = np.random.default_rng(3)
    price = 4000 + rng.integers(0, 20, 50) * 0.25
    vol = rng.random(50) * 1000 + 1 if dtype[0] == "f" else rng.integers(1, 1000, 50)
    a = vpoc.from_trades(price.astype(order + "f8"), vol.astype(order + dtype), tick_size=0.25)
    b = vpoc.from_trades(price, vol.astype(dtype), tick_size=0.25)
    np.testing.assert_array_equal(a.volume, b.volume, strict=True)
    np.testing.assert_array_equal(a.total_volume, b.total_volume, strict=True)
    np.testing.assert_allclose(a.total_volume, vol.astype(dtype).astype(np.float64).sum(), rtol=1e-12)


def test_long_double_volume_is_read_as_float64():
    vol = np.array([1.486011545317524, 2.0], dtype=np.longdouble)
    prof = vpoc.from_trades([1.0, 1.0], vol, tick_size=0.25)
    assert prof.total_volume[0] == np.float64(vol[0]) + 2.0


def test_infinite_row_size_is_rejected():
    """tick_size * ticks_per_row past float64 made every row price NaN."""
    with pytest.raises(ValueError, match=r"tick_size \* ticks_per_row must be finite"):
        vpoc.from_trades([4000.0], [1.0], tick_size=1e300, ticks_per_row=2**40)
    with pytest.raises(ValueError, match=r"tick_size \* ticks_per_row must be finite"):
        vpoc.from_bars([1.0], [1.0], [1.0], [1.0], tick_size=1e300, ticks_per_row=2**40)


@pytest.mark.parametrize("at", [0, 7, 15, 16, 17, 31, 38])
def test_a_bar_spanning_both_slot_clamps_is_refused(at):
    """One uniform bar from -1e12 to +1e12 (its low and high slots clamp to -2e9 and +2e9, 4e9 apart:
    the scalar tail once took their difference in int, undefined behaviour under UBSan) is refused,
    wherever it sits in a block."""
    n = 39
    low = np.full(n, 4000.0)
    high = low + 1.0
    low[at], high[at] = -1e12, 1e12
    with pytest.raises(ValueError):
        vpoc.from_bars(high, low, low, np.full(n, 5.0), tick_size=0.25, distribute="uniform")
