"""``vpoc.diff``: hand-built pairs of Profiles that differ by one rule (poc_tie on a tie, va_method cbot vs
single, value_area, ticks_per_row 1 vs 2, distribute, one more trade) name that rule and the rows that differ,
checked against plain NumPy; identical results differ nowhere; bad input raises naming the argument."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import _deps
import vpoc
from vpoc import NO_ROW
from vpoc._diff import DIFF_FIELDS

TICK = 0.25


def rows_profile(vols, offsets=None, **kw):
    """One trade per row 0, 1, ... with these volumes (sessions by ``offsets``)."""
    vols = np.asarray(vols, dtype=np.float64)
    price = np.arange(vols.shape[0], dtype=np.float64) * TICK
    if offsets is not None:  # restart the rows in each session
        offsets = np.asarray(offsets)
        price = (np.arange(vols.shape[0]) - np.repeat(offsets[:-1], np.diff(offsets))) * TICK
    return vpoc.from_trades(price, vols, offsets=offsets, tick_size=TICK, **kw)


def dense_rows(prof, s, m=1):
    """{absolute row on the ladder of m rows: volume} of session s, by a plain loop."""
    out = {}
    prices, vols = prof.session(s)
    for p, v in zip(prices.tolist(), vols.tolist()):
        r = int(round(p / prof.row_size)) // m
        out[r] = out.get(r, 0.0) + v
    return out


def ref_row_diff(a, b, s, ma=1, mb=1):
    """(count, lowest row) of rows whose volumes differ or that one profile lacks, by a plain loop over the
    union of rows."""
    x, y = dense_rows(a, s, ma), dense_rows(b, s, mb)
    bad = sorted(r for r in set(x) | set(y) if x.get(r) != y.get(r))
    return len(bad), (bad[0] if bad else NO_ROW)


def test_identical_results_differ_nowhere():
    a = rows_profile([1, 4, 2, 3, 3, 1], offsets=[0, 3, 3, 6])
    d = vpoc.diff(a, rows_profile([1, 4, 2, 3, 3, 1], offsets=[0, 3, 3, 6]))
    assert isinstance(d, vpoc.ProfilesDiff) and len(d) == 3
    assert not d.differs.any() and not d.histogram_differs.any()
    np.testing.assert_array_equal(d.rows_differ, [0, 0, 0])
    np.testing.assert_array_equal(d.first_row, [NO_ROW] * 3)
    np.testing.assert_array_equal(d.poc_delta[[0, 2]], [0.0, 0.0])
    assert np.isnan(d.poc_delta[1])  # the empty session has no levels
    assert list(d.rule) == ["", "", ""] and list(d.reason) == ["", "", ""]
    assert d.settings["tick_size"] == (TICK, TICK) and d.settings["va_method"] == (None, None)
    assert any("not recorded" in n for n in d.notes)  # Profiles keeps no value-area rules: said so
    assert "differ=0" in repr(d)


def test_poc_tie_low_vs_high_on_a_tie():
    vols = [5, 1, 1, 1, 5]  # rows 0 and 4 tie
    a, b = rows_profile(vols, poc_tie="low"), rows_profile(vols, poc_tie="high")
    assert (a.poc_row[0], b.poc_row[0]) == (0, 4)
    d = vpoc.diff(a, b)
    assert d.poc_differs[0] and d.differs[0]
    assert d.poc_delta[0] == 4 * TICK and d.poc_rows[0] == 4
    assert d.vah_delta[0] == b.vah[0] - a.vah[0] and d.val_rows[0] == b.val_row[0] - a.val_row[0]
    assert not d.histogram_differs[0] and d.rows_differ[0] == 0 and d.first_row[0] == NO_ROW
    assert not d.total_volume_differs[0] and d.total_volume_delta[0] == 0
    assert d.rule[0] == "poc_tie"
    # "center" also picks row 0 here (rows 0 and 4 are equally far from the middle: the lower one)
    assert "poc_tie: a fits 'center', 'low', b fits 'high'" in d.reason[0]
    assert "poc +1 (+4 rows)" in d.reason[0]


def test_va_method_cbot_vs_single():
    # POC row 2 (10), target 17.5: cbot compares rows 3+4 (8) with 1+0 (7) and goes up (VA 2..4);
    # single compares row 3 (4) with row 1 (5), goes down, then up (VA 1..3); greedy takes 10, 5, 4: 1..3
    vols = [2, 5, 10, 4, 4]
    a, b = rows_profile(vols, va_method="cbot"), rows_profile(vols, va_method="single")
    assert (a.val_row[0], a.vah_row[0], b.val_row[0], b.vah_row[0]) == (2, 4, 1, 3)
    d = vpoc.diff(a, b)
    assert not d.poc_differs[0] and d.vah_differs[0] and d.val_differs[0]
    assert (d.vah_rows[0], d.val_rows[0]) == (-1, -1)
    assert d.rule[0] == "va_method"
    assert "va_method: a fits 'cbot', b fits 'greedy', 'single'" in d.reason[0]


def test_value_area_fraction():
    # 0.70 of 22 needs 3 steps of cbot (VA 1..6); 0.5 stops after the first (VA 3..5): no rule at 0.70 gives
    # b's value area, the fraction it holds (15/22) with cbot does
    vols = [1, 2, 3, 10, 3, 2, 1]
    a, b = rows_profile(vols), rows_profile(vols, value_area=0.5)
    d = vpoc.diff(a, b)
    assert d.vah_differs[0] or d.val_differs[0]
    assert d.rule[0] == "value_area"
    assert "value_area: a fits 0.7, b fits 0.6818" in d.reason[0]
    # told the fractions to try, it names them
    d2 = vpoc.diff(a, b, value_area=[0.7, 0.5])
    assert d2.rule[0] == "value_area" and "b fits 0.5" in d2.reason[0]


@pytest.mark.parametrize("swap", [False, True])
def test_ticks_per_row_1_vs_2(swap):
    rng = np.random.default_rng(3)
    ticks = rng.integers(18000, 18030, 400)
    vol = rng.integers(1, 30, 400).astype(np.float64)
    off = [0, 150, 400]
    a = vpoc.from_trades(ticks * TICK, vol, offsets=off, tick_size=TICK)
    b = vpoc.from_trades(ticks * TICK, vol, offsets=off, tick_size=TICK, ticks_per_row=2)
    if swap:
        a, b = b, a
    d = vpoc.diff(a, b)
    assert d.settings["ticks_per_row"] == ((2, 1) if swap else (1, 2))
    assert d.compared_row_size == 2 * TICK
    assert any("compared on the coarser rows" in n for n in d.notes)
    # the finer histogram summed onto 2-tick rows is the coarser one: no row differs
    np.testing.assert_array_equal(d.rows_differ, [0, 0])
    assert not d.histogram_differs.any() and not d.total_volume_differs.any()
    for s in range(2):
        fine, coarse = (b, a) if swap else (a, b)
        assert dense_rows(fine, s, 2) == dense_rows(coarse, s)
        for x in ("poc", "vah", "val"):
            delta = float(getattr(b, x)[s]) - float(getattr(a, x)[s])
            assert getattr(d, f"{x}_delta")[s] == delta and getattr(d, f"{x}_rows")[s] == delta / TICK
            assert getattr(d, f"{x}_differs")[s] == (delta != 0)
        if d.differs[s]:
            assert d.rule[s] == "ticks_per_row" and d.reason[s].startswith(
                f"ticks_per_row {2 if swap else 1} vs {1 if swap else 2}")
    assert d.differs.any()


def test_distribute_uniform_vs_close_names_the_rows():
    bars = vpoc.synth.es_bars(n_sessions=3, bars_per_session=120, seed=4)
    args = (bars.high, bars.low, bars.close, bars.volume)
    a = vpoc.from_bars(*args, offsets=bars.offsets, tick_size=TICK, distribute="uniform")
    b = vpoc.from_bars(*args, offsets=bars.offsets, tick_size=TICK, distribute="close")
    d = vpoc.diff(a, b)
    assert d.histogram_differs.all() and not d.total_volume_differs.any()
    for s in range(3):
        count, first = ref_row_diff(a, b, s)
        assert d.rows_differ[s] == count > 0 and d.first_row[s] == first
        assert d.first_price[s] == first * TICK
        assert d.rule[s].startswith("histogram")
        assert "the same total volume on other rows (distribute" in d.reason[s]
    # recorded rules (a result carrying a ``rules`` dict, as TpoProfiles does) are named as such
    a.rules, b.rules = {"distribute": "uniform"}, {"distribute": "close"}
    d = vpoc.diff(a, b)
    assert d.settings["distribute"] == ("uniform", "close")
    assert all(r.startswith("distribute") for r in d.rule)


def test_one_more_trade():
    a = rows_profile([3, 1, 2, 2], offsets=[0, 2, 4])
    b = vpoc.from_trades(np.array([0, 1, 0, 1, 3]) * TICK, np.array([3, 1, 2, 2, 7.0]), offsets=[0, 2, 5],
                         tick_size=TICK)
    d = vpoc.diff(a, b)
    assert not d.differs[0] and d.differs[1]
    assert d.total_volume_differs[1] and d.total_volume_delta[1] == 7
    # row 3 has the new trade; row 2 is a zero row inside b's profile that a's does not reach
    assert d.rows_differ[1] == 2 and d.first_row[1] == 2 and d.first_price[1] == 2 * TICK
    assert ref_row_diff(a, b, 1) == (2, 2)
    assert d.poc_delta[1] == 3 * TICK
    assert d.rule[1] == "histogram" and "total volume +7" in d.reason[1]


def test_a_session_empty_on_one_side():
    a = rows_profile([1, 2, 2, 1], offsets=[0, 0, 4])
    b = rows_profile([1, 2, 2, 1], offsets=[0, 2, 4])
    d = vpoc.diff(a, b)
    assert d.differs[0] and d.poc_differs[0] and np.isnan(d.poc_delta[0])
    assert d.histogram_differs[0] and d.rows_differ[0] == 2 and d.first_row[0] == 0
    assert "poc: a's session is empty" in d.reason[0]
    assert d.differs[1]  # b's second session is rows 2, 3 (prices restart): other rows
    assert d.rows_differ[1] == ref_row_diff(a, b, 1)[0]


def test_levels_no_rule_reproduces_are_unexplained():
    vols = [2, 5, 10, 4, 4]
    a = rows_profile(vols)
    b = pickle.loads(pickle.dumps(a))  # host arrays of its own (as a result from another tool)
    b.poc_row[0], b.poc[0] = 4, 4 * TICK  # not a maximum: no poc_tie gives it
    d = vpoc.diff(a, b)
    assert d.poc_differs[0] and not d.histogram_differs[0]
    assert d.rule[0] == "unexplained"
    assert "reproduces b's levels" in d.reason[0]


def test_ladders_that_share_no_rows():
    ticks = np.array([0, 1, 2, 5, 6, 7, 7])
    a = vpoc.from_trades(ticks * TICK, np.ones(7), tick_size=TICK, ticks_per_row=2)
    b = vpoc.from_trades(ticks * TICK, np.ones(7), tick_size=TICK, ticks_per_row=3)
    d = vpoc.diff(a, b)
    assert d.compared_row_size is None and d.rows_differ[0] == -1 and d.first_row[0] == NO_ROW
    assert any("share no ladder" in n for n in d.notes)
    assert d.poc_rows[0] == d.poc_delta[0] / (2 * TICK)  # rows of the finer ladder
    assert d.rule[0] == "ticks_per_row" and "histograms not compared" in d.reason[0]  # the ladder alone
    c = vpoc.from_trades(ticks * TICK, np.r_[np.ones(6), 2.0], tick_size=TICK, ticks_per_row=3)
    d = vpoc.diff(a, c)
    assert d.rule[0] == "ticks_per_row+histogram" and "total volume +1" in d.reason[0]


def test_an_edge_row_of_zero_volume_counts():
    # the same volumes, but b's profile reaches one row higher with 0 there: its centre (for poc_tie) moves
    a = vpoc.from_trades(np.array([0, 1, 2]) * TICK, np.array([3.0, 1, 3]), tick_size=TICK)
    b = vpoc.from_trades(np.array([0, 1, 2, 3]) * TICK, np.array([3.0, 1, 3, 0]), tick_size=TICK)
    d = vpoc.diff(a, b)
    assert d.histogram_differs[0] and d.rows_differ[0] == 1 and d.first_row[0] == 3
    assert not d.total_volume_differs[0]
    assert (a.poc_row[0], b.poc_row[0]) == (0, 2) and d.poc_rows[0] == 2  # centre 1 vs 1.5: tied rows 0 and 2
    assert d.rule[0] == "histogram"


@_deps.needs("pandas", "pandas_market_calendars")
def test_to_pandas_and_to_dict():
    pd = _deps.require("pandas")
    bars = vpoc.synth.es_bars(n_sessions=3, seed=2)
    s = vpoc.sessions.rth(bars.timestamp)
    args = (bars.high, bars.low, bars.close, bars.volume)
    a = vpoc.from_bars(*args, session=s, tick_size=TICK)
    b = vpoc.from_bars(*args, session=s, tick_size=TICK, va_method="single")
    d = vpoc.diff(a, b)
    df = d.to_pandas()
    assert list(df.columns) == list(DIFF_FIELDS) == list(d.to_dict())
    assert df.index.equals(a.to_pandas().index) and df.index.name == "trade_date"
    assert df.loc["2019-01-02", "rule"] == d.rule[0]
    assert isinstance(df, pd.DataFrame) and len(df) == 3


@pytest.mark.parametrize("args, kw, exc, match", [
    (("A", None), {}, TypeError, "a must be a vpoc.Profiles"),
    ((None, "B"), {}, TypeError, "b must be a vpoc.Profiles"),
    ((None, None), dict(rtol=-1.0), ValueError, "rtol must be in"),
    ((None, None), dict(rtol="x"), TypeError, "rtol must be a real number"),
    ((None, None), dict(value_area=1.5), ValueError, "value_area must be in"),
    ((None, None), dict(value_area=[]), ValueError, "value_area must name"),
    ((None, None), dict(value_area="0.7"), TypeError, "value_area must be a real number"),
])
def test_bad_input(args, kw, exc, match):
    p = rows_profile([1, 2, 3])
    a, b = (p if x is None else x for x in args)
    with pytest.raises(exc, match=match):
        vpoc.diff(a, b, **kw)


def test_session_counts_must_match():
    with pytest.raises(ValueError, match="a has 1 sessions, b has 2"):
        vpoc.diff(rows_profile([1, 2]), rows_profile([1, 2], offsets=[0, 1, 2]))
