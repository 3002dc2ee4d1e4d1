"""``vpoc.diff`` of two ``TpoProfiles``: hand-built TPO sessions that differ by one rule (poc_tie on a tie, va_method,
period, ticks_per_row, one more period) name that rule and the count rows that differ, checked against TPO counts
built here by a plain loop over the periods; mixing a Profiles with a TpoProfiles raises naming them."""

from __future__ import annotations

import numpy as np
import pytest

import vpoc
from reference import poc_of_counts
from vpoc import NO_ROW
from vpoc._diff import DIFF_FIELDS, TPO_RULES

TICK = 0.25
MIN = 60 * 10**9
DAY = 86_400 * 10**9


def day_tpo(sessions, *, bar_minutes=30, **kw):
    """``vpoc.tpo`` of one bar every ``bar_minutes`` from 08:30 Chicago (CDT) on successive days, one session a
    day; ``sessions``: per session a list of bars (low, high) in ticks."""
    t0 = np.datetime64("2024-06-03", "ns").astype(np.int64) + (13 * 60 + 30) * MIN
    ts, lo, hi, offsets = [], [], [], [0]
    for d, bars in enumerate(sessions):
        ts += [t0 + d * DAY + k * bar_minutes * MIN for k in range(len(bars))]
        lo += [b[0] for b in bars]
        hi += [b[1] for b in bars]
        offsets.append(len(ts))
    kw.setdefault("incomplete", "ignore")
    return vpoc.tpo(np.array(hi, dtype=np.float64) * TICK, np.array(lo, dtype=np.float64) * TICK,
                    timestamp=np.array(ts, dtype=np.int64), offsets=offsets, tick_size=TICK, **kw)


def ref_counts(bars, *, per=1, tpr=1, m=1):
    """{row: TPO count} of one session by a plain loop: bars grouped ``per`` to a period (from the first), a
    period touching rows min(low) // tpr // m .. max(high) // tpr // m once each; rows between the lowest and
    the highest that no period touches count 0 (the profile spans them)."""
    out = {}
    for k in range(0, len(bars), per):
        group = bars[k:k + per]
        lo = min(b[0] for b in group) // tpr // m
        hi = max(b[1] for b in group) // tpr // m
        for r in range(lo, hi + 1):
            out[r] = out.get(r, 0) + 1
    return {r: out.get(r, 0) for r in range(min(out), max(out) + 1)} if out else out


def ref_rows_differ(x, y):
    bad = sorted(r for r in set(x) | set(y) if x.get(r) != y.get(r))
    return len(bad), (bad[0] if bad else NO_ROW)


def counts_of(tp, s):
    prices, counts, _ = tp.session(s)
    return {int(round(p / tp.row_size)): int(c) for p, c in zip(prices.tolist(), counts.tolist())}


# counts 2, 1, 1, 1, 2 on rows 0..4: rows 0 and 4 tie for the TPO POC
TIE = [(0, 4), (0, 0), (4, 4)]
# counts 2, 5, 10, 4, 4 on rows 0..4 (tests/test_diff.py's va_method case, as TPOs)
VA = [(0, 4), (0, 4), (1, 4), (1, 4), (1, 2)] + [(2, 2)] * 5


def test_identical_tpo_results_differ_nowhere():
    a, b = day_tpo([TIE, VA, []]), day_tpo([TIE, VA, []])
    d = vpoc.diff(a, b)
    assert isinstance(d, vpoc.ProfilesDiff) and len(d) == 3
    assert not d.differs.any() and list(d.rule) == ["", "", ""]
    np.testing.assert_array_equal(d.rows_differ, [0, 0, 0])
    assert tuple(d.settings) == TPO_RULES
    assert d.settings["period"] == ("30min", "30min") and d.settings["rth_start"] == ("08:30", "08:30")
    assert d.settings["va_method"] == ("cbot", "cbot") and d.settings["tz"] == ("America/Chicago",) * 2
    assert not any("not recorded" in n for n in d.notes)  # a TpoProfiles records every rule
    assert np.isnan(d.poc_delta[2])  # the empty session has no levels
    pd = pytest.importorskip("pandas")
    df = d.to_pandas()
    assert isinstance(df, pd.DataFrame) and list(df.columns) == list(DIFF_FIELDS)
    assert df.index.equals(a.to_pandas().index)


def test_tpo_poc_tie_low_vs_high():
    a, b = day_tpo([TIE], poc_tie="low"), day_tpo([TIE], poc_tie="high")
    counts = [ref_counts(TIE)[r] for r in range(5)]
    assert counts == [2, 1, 1, 1, 2] == list(a.count)
    assert (a.poc_row[0], b.poc_row[0]) == (poc_of_counts(counts, "low"), poc_of_counts(counts, "high")) == (0, 4)
    d = vpoc.diff(a, b)
    assert d.poc_differs[0] and d.poc_delta[0] == 4 * TICK and d.poc_rows[0] == 4
    assert not d.histogram_differs[0] and d.rows_differ[0] == 0 and d.first_row[0] == NO_ROW
    assert not d.total_volume_differs[0]
    assert d.settings["poc_tie"] == ("low", "high")
    assert d.rule[0] == "poc_tie"
    assert "poc_tie: a fits 'low', b fits 'high'" in d.reason[0] and "poc +1 (+4 rows)" in d.reason[0]


def test_tpo_va_method_cbot_vs_single():
    a, b = day_tpo([VA], va_method="cbot"), day_tpo([VA], va_method="single")
    assert list(a.count) == [ref_counts(VA)[r] for r in range(5)] == [2, 5, 10, 4, 4]
    assert (a.val_row[0], a.vah_row[0], b.val_row[0], b.vah_row[0]) == (2, 4, 1, 3)
    d = vpoc.diff(a, b)
    assert not d.poc_differs[0] and d.vah_differs[0] and d.val_differs[0]
    assert (d.vah_rows[0], d.val_rows[0]) == (-1, -1)
    assert d.rule[0] == "va_method" and "va_method: a fits 'cbot', b fits 'single'" in d.reason[0]


def test_tpo_period_30_vs_60_names_the_period_and_the_rows():
    rng = np.random.default_rng(11)
    sessions = []
    for _ in range(3):
        lo = rng.integers(0, 12, 12)
        sessions.append([(int(x), int(x + h)) for x, h in zip(lo, rng.integers(0, 5, 12))])
    a, b = day_tpo(sessions, period="30min"), day_tpo(sessions, period="60min")
    d = vpoc.diff(a, b)
    assert d.settings["period"] == ("30min", "60min")
    for s, bars in enumerate(sessions):
        ca, cb = ref_counts(bars), ref_counts(bars, per=2)
        assert counts_of(a, s) == ca and counts_of(b, s) == cb
        count, first = ref_rows_differ(ca, cb)
        assert d.rows_differ[s] == count > 0 and d.first_row[s] == first and d.first_price[s] == first * TICK
        assert d.total_volume_delta[s] == sum(cb.values()) - sum(ca.values())
        assert d.rule[s].startswith("period") and "period '30min' vs '60min'" in d.reason[s]
        assert "TPO count rows differ" in d.reason[s] and "total TPO count" in d.reason[s]


@pytest.mark.parametrize("swap", [False, True])
def test_tpo_ticks_per_row_1_vs_2_counts_periods_on_the_coarser_rows(swap):
    """Fails before the change: the 1-tick TPO counts summed onto 2-tick rows count a period touching both
    ticks of a row twice, and every session's rows 'differed'."""
    rng = np.random.default_rng(2)
    sessions = []
    for _ in range(4):
        lo = rng.integers(0, 20, 10)
        sessions.append([(int(x), int(x + h)) for x, h in zip(lo, rng.integers(0, 6, 10))])
    a, b = day_tpo(sessions), day_tpo(sessions, ticks_per_row=2)
    if swap:
        a, b = b, a
    d = vpoc.diff(a, b)
    assert d.compared_row_size == 2 * TICK
    assert any("periods counted on them" in n for n in d.notes)
    for s, bars in enumerate(sessions):
        assert ref_counts(bars, m=2) == counts_of(b if not swap else a, s) == ref_counts(bars, tpr=2)
    np.testing.assert_array_equal(d.rows_differ, [0] * 4)
    assert not d.histogram_differs.any()
    for s in range(4):
        for x in ("poc", "vah", "val"):
            delta = float(getattr(b, x)[s]) - float(getattr(a, x)[s])
            assert getattr(d, f"{x}_delta")[s] == delta and getattr(d, f"{x}_differs")[s] == (delta != 0)
        # the total TPO count differs with the ladder (fewer rows), the histogram on the coarser rows does not
        if d.poc_differs[s] or d.vah_differs[s] or d.val_differs[s]:
            assert d.rule[s].startswith("ticks_per_row") and "histogram" not in d.rule[s]
        assert d.total_volume_differs[s] == (sum(ref_counts(sessions[s]).values())
                                             != sum(ref_counts(sessions[s], m=2).values()))


def test_one_more_period_is_histogram():
    bars = [(0, 3), (2, 5), (1, 2)]
    a, b = day_tpo([bars, bars]), day_tpo([bars, bars + [(6, 7)]])
    d = vpoc.diff(a, b)
    assert not d.differs[0] and d.differs[1]
    assert d.total_volume_delta[1] == 2 and d.rows_differ[1] == ref_rows_differ(ref_counts(bars),
                                                                                ref_counts(bars + [(6, 7)]))[0]
    assert d.first_row[1] == 6 and d.rule[1].startswith("histogram")
    assert "total TPO count +2" in d.reason[1]


def test_random_tpo_levels_match_a_plain_reference():
    rng = np.random.default_rng(7)
    sessions = []
    for _ in range(6):
        n = int(rng.integers(1, 14))
        lo = rng.integers(0, 10, n)
        sessions.append([(int(x), int(x + h)) for x, h in zip(lo, rng.integers(0, 4, n))])
    a, b = day_tpo(sessions, poc_tie="low"), day_tpo(sessions, poc_tie="high")
    d = vpoc.diff(a, b)
    for s, bars in enumerate(sessions):
        c = ref_counts(bars)
        rows = list(range(min(c), max(c) + 1))
        counts = [c.get(r, 0) for r in rows]
        pa, pb = rows[poc_of_counts(counts, "low")], rows[poc_of_counts(counts, "high")]
        assert (a.poc_row[s], b.poc_row[s]) == (pa, pb)
        assert d.poc_rows[s] == pb - pa and d.poc_differs[s] == (pa != pb)
        assert d.rows_differ[s] == 0
        if pa != pb:
            assert "poc_tie" in d.rule[s]


def test_a_profiles_and_a_tpo_profiles_do_not_compare():
    tp = day_tpo([TIE], volume=None)
    prof = vpoc.from_trades(np.arange(5) * TICK, np.ones(5), tick_size=TICK)
    with pytest.raises(TypeError, match="a is a vpoc.TpoProfiles and b a vpoc.Profiles"):
        vpoc.diff(tp, prof)
    with pytest.raises(TypeError, match="b is a vpoc.TpoProfiles and a a vpoc.Profiles"):
        vpoc.diff(prof, tp)
    with pytest.raises(TypeError, match="a must be a vpoc.Profiles or a vpoc.TpoProfiles"):
        vpoc.diff("x", tp)
    with pytest.raises(ValueError, match="a has 1 sessions, b has 2"):
        vpoc.diff(tp, day_tpo([TIE, TIE]))
