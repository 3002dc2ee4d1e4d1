"""Hand-worked examples that check the NumPy reference itself (no vpoc needed).

Every expected number below was computed by hand from docs/contract.md, so a bug in
tests/reference.py makes these fail instead of silently blessing a wrong engine.
"""

import numpy as np
import pytest

from reference import NO_ROW, price_to_tick, profile_stats, ref_bars, ref_trades, tick_to_row


def trades_from_hist(hist, first_row=0, tick=1.0):
    """One trade per row carrying that row's volume (tick_size 1, ticks_per_row 1)."""
    rows = np.arange(len(hist)) + first_row
    return rows * tick, np.asarray(hist, dtype=np.float64)


# --------------------------------------------------------------------------------------
# value-area methods on a 5-row profile
# --------------------------------------------------------------------------------------
# rows 0..4 volumes [30, 5, 40, 10, 15]: total 100, target 70, POC row 2.
#   cbot:   U = r3+r4 = 25, D = r1+r0 = 35 -> D > U: take down -> running 75 -> stop.
#           VAL 0, VAH 2, va 75.
#   single: U = r3 = 10, D = r1 = 5 -> up (50); U = r4 = 15, D = 5 -> up (65);
#           up exhausted -> down r1 (70) -> stop. VAL 1, VAH 4, va 70.
#   greedy: order 40(r2), 30(r0) -> 70 -> stop. rows {0, 2}: VAL 0, VAH 2, va 70.
VA_CASES = {
    "cbot": (0, 2, 75.0),
    "single": (1, 4, 70.0),
    "greedy": (0, 2, 70.0),
}


@pytest.mark.parametrize("va_method", sorted(VA_CASES))
def test_five_row_profile(va_method):
    p, v = trades_from_hist([30, 5, 40, 10, 15])
    r = ref_trades(p, v, tick_size=1.0, va_method=va_method)
    val, vah, va = VA_CASES[va_method]
    assert r["poc_row"].tolist() == [2]
    assert r["val_row"].tolist() == [val]
    assert r["vah_row"].tolist() == [vah]
    assert r["va_volume"].tolist() == [va]
    assert r["total_volume"].tolist() == [100.0]
    assert r["low_row"].tolist() == [0] and r["n_rows"].tolist() == [5]
    assert r["volume"].tolist() == [30, 5, 40, 10, 15]
    assert r["offsets"].tolist() == [0, 5]


def test_five_row_profile_shifted_rows_and_prices():
    # same profile at rows 100..104 with tick 0.25, ticks_per_row 2 -> row_size 0.5
    rows = np.arange(100, 105)
    price = rows * 0.5  # tick = 2*row, lowest tick of each row
    r = ref_trades(price, [30, 5, 40, 10, 15], tick_size=0.25, ticks_per_row=2,
                   va_method="single")
    assert r["poc_row"].tolist() == [102]
    assert r["val_row"].tolist() == [101] and r["vah_row"].tolist() == [104]
    assert r["poc"].tolist() == [51.0] and r["val"].tolist() == [50.5]
    assert r["vah"].tolist() == [52.0]


def test_greedy_non_contiguous_and_poc_not_selected():
    # rows [10, 10, 1, 10]: all three 10s tied; center of [0, 3] = 1.5 -> rows 1 and 2
    # are closest but row 2 is not tied; row 1 (dist .5) wins -> POC 1.
    # greedy target 0.1 * 31 = 3.1: first row in order is row 0 (equal volumes: lower
    # row first) -> VA = {0}, which does not contain the POC.
    p, v = trades_from_hist([10, 10, 1, 10])
    r = ref_trades(p, v, tick_size=1.0, va_method="greedy", value_area=0.1)
    assert r["poc_row"].tolist() == [1]
    assert r["val_row"].tolist() == [0] and r["vah_row"].tolist() == [0]
    assert r["va_volume"].tolist() == [10.0]
    # target 0.5*31 = 15.5 -> rows 0, 1 -> VAL 0, VAH 1 ; 0.7*31=21.7 -> rows 0,1,3
    r = ref_trades(p, v, tick_size=1.0, va_method="greedy", value_area=0.7)
    assert (r["val_row"][0], r["vah_row"][0], r["va_volume"][0]) == (0, 3, 30.0)


# --------------------------------------------------------------------------------------
# POC tie rules
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "hist, expected",
    [
        # tied rows 0, 2, 4; centre 2.5 -> distances 2.5, .5, 1.5 -> row 2
        ([10, 2, 10, 1, 10, 3], {"center": 2, "low": 0, "high": 4}),
        # tied rows 1 and 3, centre 2 equally close -> lower (1)
        ([7, 10, 1, 10, 7], {"center": 1, "low": 1, "high": 3}),
        # 1e-9 relative tie: 100 and 100*(1 - 5e-10) tie; centre .5 -> lower
        ([100.0, 100.0 * (1 - 5e-10)], {"center": 0, "low": 0, "high": 1}),
        # 2e-9 apart: not tied, the strict max wins for every rule
        ([100.0 * (1 - 2e-9), 100.0], {"center": 1, "low": 1, "high": 1}),
        # all zero: every row tied, centre of [0, 3] = 1.5 -> rows 1 and 2 -> lower
        ([0, 0, 0, 0], {"center": 1, "low": 0, "high": 3}),
        # single row
        ([5], {"center": 0, "low": 0, "high": 0}),
    ],
)
@pytest.mark.parametrize("poc_tie", ["center", "low", "high"])
def test_poc_tie_rules(hist, expected, poc_tie):
    p, v = trades_from_hist(hist, first_row=-3)
    r = ref_trades(p, v, tick_size=1.0, poc_tie=poc_tie)
    assert r["poc_row"].tolist() == [expected[poc_tie] - 3]
    assert r["poc"].tolist() == [float(expected[poc_tie] - 3)]


def test_poc_tie_center_uses_touched_range_not_volume_range():
    # rows -2..2 touched, the outer ones with zero volume; tied rows -1 and 1 (volume 4),
    # centre 0 is equally close to both -> lower (-1)
    p = np.array([-2.0, -1.0, 1.0, 2.0])
    v = np.array([0.0, 4.0, 4.0, 0.0])
    r = ref_trades(p, v, tick_size=1.0)
    assert r["n_rows"].tolist() == [5] and r["low_row"].tolist() == [-2]
    assert r["volume"].tolist() == [0, 4, 0, 4, 0]
    assert r["poc_row"].tolist() == [-1]
    # extending the touched range upward moves the centre to 0.5 -> row 1 is closer
    r = ref_trades(np.append(p, 3.0), np.append(v, 0.0), tick_size=1.0)
    assert r["poc_row"].tolist() == [1]


# --------------------------------------------------------------------------------------
# value-area ties
# --------------------------------------------------------------------------------------
def test_cbot_tie_goes_up():
    # [10, 10, 50, 10, 10]: total 90, target 63; U = 20 == D = 20 -> up -> running 70.
    r = ref_trades(*trades_from_hist([10, 10, 50, 10, 10]), tick_size=1.0)
    assert (r["val_row"][0], r["vah_row"][0], r["va_volume"][0]) == (2, 4, 70.0)


def test_cbot_near_tie_goes_up_but_real_difference_goes_down():
    # D exceeds U by 1e-10 relative -> still a tie -> up
    up = 20.0
    dn = 20.0 * (1 + 1e-10)
    r = ref_trades(*trades_from_hist([dn / 2, dn / 2, 50, up / 2, up / 2]), tick_size=1.0)
    assert (r["val_row"][0], r["vah_row"][0]) == (2, 4)
    dn = 20.0 * (1 + 1e-8)
    r = ref_trades(*trades_from_hist([dn / 2, dn / 2, 50, up / 2, up / 2]), tick_size=1.0)
    assert (r["val_row"][0], r["vah_row"][0]) == (0, 2)


def test_single_tie_goes_up():
    # [5, 10, 50, 10, 5]: total 80, target 56; U = D = 10 -> up -> 60 -> stop
    r = ref_trades(*trades_from_hist([5, 10, 50, 10, 5]), tick_size=1.0, va_method="single")
    assert (r["val_row"][0], r["vah_row"][0], r["va_volume"][0]) == (2, 3, 60.0)


def test_cbot_partial_pair_at_edge_and_exhausted_side():
    # POC at row 1 of [20, 30, 1, 1, 1, 1]: D has only row 0 (20), U = r2+r3 = 2
    # target .7*54 = 37.8 -> down (50) -> stop.
    r = ref_trades(*trades_from_hist([20, 30, 1, 1, 1, 1]), tick_size=1.0)
    assert (r["val_row"][0], r["poc_row"][0], r["vah_row"][0]) == (0, 1, 1)
    assert r["va_volume"][0] == 50.0
    # target .95*54 = 51.3: down (50); below exhausted -> up r2+r3 (52) -> stop
    r = ref_trades(*trades_from_hist([20, 30, 1, 1, 1, 1]), tick_size=1.0, value_area=0.95)
    assert (r["val_row"][0], r["vah_row"][0], r["va_volume"][0]) == (0, 3, 52.0)
    # target 54: ... -> up r4+r5 (54)
    r = ref_trades(*trades_from_hist([20, 30, 1, 1, 1, 1]), tick_size=1.0, value_area=1.0)
    assert (r["val_row"][0], r["vah_row"][0], r["va_volume"][0]) == (0, 5, 54.0)


def test_value_area_one_stops_as_soon_as_reached():
    # value_area=1.0: target == total. Zero rows at the edges are not taken once running
    # reaches the target.
    r = ref_trades(*trades_from_hist([0, 0, 4, 6, 0]), tick_size=1.0, value_area=1.0,
                   va_method="single")
    # POC row 3 (6); U = r4 = 0, D = r2 = 4 -> down (10 >= 10) stop
    assert (r["val_row"][0], r["poc_row"][0], r["vah_row"][0]) == (2, 3, 3)


def test_zero_volume_session_with_rows():
    r = ref_trades([1.0, 2.0, 3.0], [0, 0, 0], tick_size=1.0, va_method="cbot")
    assert r["n_rows"].tolist() == [3]
    assert r["poc_row"].tolist() == [2]  # centre of [1, 3]
    assert r["val_row"].tolist() == [2] and r["vah_row"].tolist() == [2]
    assert r["total_volume"].tolist() == [0.0] and r["va_volume"].tolist() == [0.0]
    g = ref_trades([1.0, 2.0, 3.0], [0, 0, 0], tick_size=1.0, va_method="greedy")
    assert g["poc_row"].tolist() == [2]
    assert g["val_row"].tolist() == [1] and g["vah_row"].tolist() == [1]  # lowest row first


# --------------------------------------------------------------------------------------
# ladder
# --------------------------------------------------------------------------------------
def test_rint_half_to_even():
    p = np.array([0.125, 0.375, -0.125, -0.375, 0.625, 1.0])
    assert price_to_tick(p, 0.25).tolist() == [0, 2, 0, -2, 2, 4]


def test_floor_division_negative_ticks():
    t = np.array([-5, -4, -3, -2, -1, 0, 1, 2, 3])
    assert tick_to_row(t, 2).tolist() == [-3, -2, -2, -1, -1, 0, 0, 1, 1]
    assert tick_to_row(t, 4).tolist() == [-2, -1, -1, -1, -1, 0, 0, 0, 0]


def test_negative_prices():
    r = ref_trades([-0.25, -0.5, -0.5, 0.25], [1, 2, 3, 4], tick_size=0.25)
    # ticks -1, -2, -2, 1 -> rows -2..1
    assert r["low_row"].tolist() == [-2] and r["n_rows"].tolist() == [4]
    assert r["volume"].tolist() == [5, 1, 0, 4]
    assert r["poc_row"].tolist() == [-2] and r["poc"].tolist() == [-0.5]


def test_ticks_per_row_two_with_negative_ticks():
    # tick 0.5, ticks -3..1 -> rows -2, -1, -1, 0, 0 ; row_size 1.0
    price = np.array([-1.5, -1.0, -0.5, 0.0, 0.5])
    r = ref_trades(price, [1, 2, 3, 4, 5], tick_size=0.5, ticks_per_row=2,
                   va_method="single")
    assert r["low_row"].tolist() == [-2] and r["n_rows"].tolist() == [3]
    assert r["volume"].tolist() == [1, 5, 9]
    assert r["poc_row"].tolist() == [0] and r["poc"].tolist() == [0.0]
    # total 15, target 10.5: POC 9; single -> U none, D = 5 -> 14 -> stop
    assert r["val_row"].tolist() == [-1] and r["val"].tolist() == [-1.0]


def test_sessions_and_empty_sessions():
    price = [1.0, 2.0, 2.0, 5.0]
    vol = [1, 1, 1, 7]
    r = ref_trades(price, vol, offsets=[0, 0, 3, 3, 4, 4], tick_size=1.0)
    assert r["n_rows"].tolist() == [0, 2, 0, 1, 0]
    assert r["offsets"].tolist() == [0, 0, 2, 2, 3, 3]
    assert r["volume"].tolist() == [1, 2, 7]
    assert r["poc_row"].tolist() == [NO_ROW, 2, NO_ROW, 5, NO_ROW]
    assert r["low_row"].tolist() == [NO_ROW, 1, NO_ROW, 5, NO_ROW]
    assert np.isnan(r["poc"][[0, 2, 4]]).all() and np.isnan(r["vah"][0])
    assert r["total_volume"].tolist() == [0, 3, 0, 7, 0]
    # N = 0 with no offsets: one empty session
    r = ref_trades([], [], tick_size=1.0)
    assert r["n_rows"].tolist() == [0] and r["offsets"].tolist() == [0, 0]
    # N = 0, offsets [0]: no sessions
    r = ref_trades([], [], offsets=[0], tick_size=1.0)
    assert r["poc"].shape == (0,) and r["offsets"].tolist() == [0]


def test_price_limit():
    ref_trades([2.0**52 - 1], [1], tick_size=1.0)
    with pytest.raises(ValueError):
        ref_trades([2.0**52], [1], tick_size=1.0)


# --------------------------------------------------------------------------------------
# bars
# --------------------------------------------------------------------------------------
def test_uniform_split_over_three_ticks():
    # low 1.0 high 1.5, tick .25 -> ticks 4, 5, 6, 30 / 3 = 10 each
    r = ref_bars([1.5], [1.0], [1.25], [30], tick_size=0.25, distribute="uniform")
    assert r["low_row"].tolist() == [4] and r["volume"].tolist() == [10, 10, 10]
    assert r["poc_row"].tolist() == [5]  # all tied, centre
    r = ref_bars([1.5], [1.0], [1.25], [30], tick_size=0.25, ticks_per_row=2,
                 distribute="uniform")
    assert r["low_row"].tolist() == [2] and r["volume"].tolist() == [20, 10]
    assert r["poc"].tolist() == [1.0]


def test_uniform_fraction_and_zero_volume_bar_touches_rows():
    r = ref_bars([3.0, 9.0], [1.0, 8.0], [2.0, 8.0], [1, 0], tick_size=1.0,
                 distribute="uniform")
    assert r["n_rows"].tolist() == [9] and r["low_row"].tolist() == [1]
    np.testing.assert_array_equal(r["volume"], [1 / 3] * 3 + [0.0] * 6)


def test_close_and_hlc3():
    hi, lo, cl = [1.5, 2.0], [1.0, 1.0], [1.0, 2.0]
    r = ref_bars(hi, lo, cl, [3, 4], tick_size=0.25, distribute="close")
    # closes at ticks 4 and 8
    assert r["low_row"].tolist() == [4] and r["volume"].tolist() == [3, 0, 0, 0, 4]
    r = ref_bars(hi, lo, cl, [3, 4], tick_size=0.25, distribute="hlc3")
    # (1.5+1+1)/3 = 1.1667 -> 4.667 -> 5 ; (2+1+2)/3 = 1.6667 -> 6.667 -> 7
    assert r["low_row"].tolist() == [5] and r["volume"].tolist() == [3, 0, 4]


def test_legacy_two_levels_by_hand():
    # o=1.0 h=1.25 l=1.0 c=1.25, tick .25: mn 1.0, mx 1.25, base 4, K 1, L = [1.0, 1.25]
    # w = [1 + 1/1.25, 1 + 1/1] = [1.8, 2]  -> shares 10*1.8/3.8 = 90/19, 10*2/3.8 = 100/19
    r = ref_bars([1.25], [1.0], [1.25], [10], open=[1.0], tick_size=0.25,
                 distribute="legacy")
    assert r["low_row"].tolist() == [4]
    np.testing.assert_allclose(r["volume"], [90 / 19, 100 / 19], rtol=1e-15)
    assert r["poc_row"].tolist() == [5]


def test_legacy_open_extends_range():
    # open 0.5 below low 1.0: levels 0.5 .. 1.25 (ticks 2..5), close 1.0
    # w = 1 + 1/(1+|L-1|) for L = .5, .75, 1, 1.25 -> 1+1/1.5, 1+1/1.25, 2, 1+1/1.25
    r = ref_bars([1.25], [1.0], [1.0], [1], open=[0.5], tick_size=0.25, distribute="legacy")
    w = np.array([1 + 1 / 1.5, 1.8, 2.0, 1.8])
    assert r["low_row"].tolist() == [2]
    np.testing.assert_allclose(r["volume"], w / w.sum(), rtol=1e-15)
    # without open only 1.0..1.25
    r = ref_bars([1.25], [1.0], [1.0], [1], tick_size=0.25, distribute="legacy")
    np.testing.assert_allclose(r["volume"], [2 / 3.8, 1.8 / 3.8], rtol=1e-15)


def test_legacy_off_grid_fallback():
    # bar A 1.05..1.24 (close 1.2) holds no level (levels 1.0, 1.25 for the session
    # if alone) -> all on t(close) = rint(4.8) = 5 (not t(low) = 4).
    r = ref_bars([1.24], [1.05], [1.2], [7], tick_size=0.25, distribute="legacy")
    assert r["low_row"].tolist() == [5] and r["volume"].tolist() == [7]
    # with bar B 1.0..1.5 close 1.5 in the same session: levels 1.0..1.5; A still holds
    # none; B gets weights 1+1/(1+|L-1.5|)
    r = ref_bars([1.24, 1.5], [1.05, 1.0], [1.2, 1.5], [7, 1], tick_size=0.25,
                 distribute="legacy")
    L = np.array([1.0, 1.25, 1.5])
    w = 1 + 1 / (1 + np.abs(L - 1.5))
    exp = w / w.sum()
    exp[1] += 7
    np.testing.assert_allclose(r["volume"], exp, rtol=1e-15)


def test_legacy_ticks_per_row_and_negative():
    # prices -0.5..0 tick .25, ticks -2..0, rows with tpr 2: -1, -1, 0
    r = ref_bars([0.0], [-0.5], [0.0], [1.0], tick_size=0.25, ticks_per_row=2,
                 distribute="legacy")
    L = np.array([-0.5, -0.25, 0.0])
    w = 1 + 1 / (1 + np.abs(L))
    w /= w.sum()
    assert r["low_row"].tolist() == [-1]
    np.testing.assert_allclose(r["volume"], [w[0] + w[1], w[2]], rtol=1e-15)


def test_profile_stats_direct_and_total_override():
    st = profile_stats([1.0, 3.0, 1.0], 10, value_area=0.7, va_method="cbot",
                       poc_tie="center")
    assert (st["poc_row"], st["val_row"], st["vah_row"]) == (11, 11, 12)
    # a larger external total moves the target
    st = profile_stats([1.0, 3.0, 1.0], 10, value_area=0.7, va_method="cbot",
                       poc_tie="center", total=100.0)
    assert (st["val_row"], st["vah_row"], st["va_volume"]) == (10, 12, 5.0)
