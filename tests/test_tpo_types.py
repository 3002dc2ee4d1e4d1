"""vpoc.tpo's Dalton day types and open types on hand-built RTH sessions, one named after each type.

Contract checked: docs/features.md "Day types and open types": each rule and threshold (type_rules), undecided
sessions (""), mirrored opens, earlier sessions only for non_trend, and bad type_rules naming the key.
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc

TICK = 0.25
MIN = 60 * 10**9


# ------------------------------------------------------------------------------ day and open types
def rth_session(bars, day):
    """Bars (minutes after 08:30 CT, low, high, open, close; prices in ticks) of one RTH session on
    ``day`` (CDT, UTC-5): arrays in price units and int64 ns opens."""
    t0 = np.datetime64(day, "ns").astype(np.int64) + (13 * 60 + 30) * MIN
    m, lo, hi, op, cl = (np.array(x) for x in zip(*bars))
    f = lambda x: x.astype(np.float64) * TICK  # noqa: E731
    return f(hi), f(lo), f(op), f(cl), t0 + m.astype(np.int64) * MIN


def periods(brackets):
    """One bar per 30-minute period from 08:30: (low, high) -> opens at the low, closes at the high."""
    return [(30 * k, lo, hi, lo, hi) for k, (lo, hi) in enumerate(brackets)]


def tpo_of(*sessions, **kw):
    """vpoc.tpo of RTH sessions (lists of rth_session bars) on consecutive June 2024 weekdays."""
    parts = [rth_session(bars, f"2024-06-{3 + i:02d}") for i, bars in enumerate(sessions)]
    h, lo, o, c, ts = (np.concatenate(x) for x in zip(*parts))
    offs = np.r_[0, np.cumsum([p[0].size for p in parts])]
    return vpoc.tpo(h, lo, c, open=o, timestamp=ts, offsets=offs, tick_size=TICK, incomplete="ignore", **kw)


DAY_TYPE_SESSIONS = {
    # IB 100-120 (A, B), C inside, D 2 ticks above: extension 0.1 of the IB
    "normal": [(100, 120), (102, 118), (105, 115), (108, 122)],
    # IB 100-120, then 10 ticks above: extension 0.5
    "normal_variation": [(100, 120), (102, 118), (110, 125), (115, 130)],
    # narrow IB 100-110, then overlapping periods up to 130: extension 2.0, no thin run inside
    "trend": [(100, 110), (102, 108), (106, 114), (110, 118), (114, 122), (118, 126), (122, 130)],
    # IB 100-110 with C inside, D alone 111-125 (single prints), E-G 118-128: extension 1.8
    "double_distribution": [(100, 110), (101, 109), (102, 108), (111, 125), (118, 128), (119, 127),
                            (120, 128)],
    # IB 100-110, C below it, D above it
    "neutral": [(100, 110), (102, 108), (95, 104), (106, 114)],
}


@pytest.mark.parametrize("name", list(DAY_TYPE_SESSIONS))
def test_day_type(name):
    r = tpo_of(periods(DAY_TYPE_SESSIONS[name]))
    assert r.day_type[0] == name
    assert name in vpoc.features.DAY_TYPES


def test_day_type_non_trend_against_earlier_sessions():
    wide = periods([(100, 140), (105, 135), (110, 130)])
    narrow = periods([(100, 105), (101, 104), (101, 104)])
    r = tpo_of(wide, narrow, wide)
    assert list(r.day_type) == ["", "non_trend", "normal"]  # the first has no earlier IB to compare
    assert list(tpo_of(narrow, wide).day_type) == ["", "normal"]
    lenient = tpo_of(wide, narrow, type_rules=dict(nontrend_ib=0.1))  # 5 > 0.1 x 40
    assert list(lenient.day_type) == ["", "normal"]
    # lookback: only the last `lookback` earlier IBs count (here the narrow one)
    r = tpo_of(wide, narrow, narrow, type_rules=dict(lookback=1))
    assert list(r.day_type) == ["", "non_trend", "normal"]


def test_day_type_thresholds_and_undecided_sessions():
    r = tpo_of(periods(DAY_TYPE_SESSIONS["normal"]), type_rules=dict(normal_ext=0.05))
    assert r.day_type[0] == "normal_variation"
    r = tpo_of(periods(DAY_TYPE_SESSIONS["double_distribution"]), type_rules=dict(dd_rows=20))
    assert r.day_type[0] == "trend"
    r = tpo_of(periods([(100, 110), (102, 108)]))  # nothing after the IB
    assert r.day_type[0] == "" and r.open_type[0] == ""
    r = tpo_of(periods([(100, 100), (100, 100), (100, 103)]))  # an IB of zero range
    assert r.day_type[0] == "" and r.open_type[0] == ""


OPEN_TYPE_SESSIONS = {
    # opens at 100 and never trades below 98 (2 ticks) in the IB
    "open_drive": [(0, 100, 104, 100, 104), (5, 103, 108, 104, 107), (30, 105, 112, 107, 111),
                   (60, 108, 115, 111, 114)],
    # tests 3 ticks up, then drives down through the open; the IB closes 1 tick off its low
    "open_test_drive": [(0, 99, 103, 100, 102), (5, 95, 101, 101, 96), (10, 88, 96, 96, 89),
                        (15, 80, 90, 89, 82), (55, 80, 84, 82, 81), (60, 78, 85, 81, 84)],
    # goes 10 ticks up first, then reverses through the open; the IB closes below it
    "open_rejection_reverse": [(0, 100, 106, 100, 106), (5, 104, 110, 106, 105), (10, 95, 105, 105, 96),
                               (15, 90, 97, 96, 94), (60, 92, 96, 94, 95)],
    # trades both sides and closes the IB back at the open
    "open_auction": [(0, 100, 106, 100, 105), (5, 94, 105, 105, 95), (10, 95, 101, 95, 100),
                     (60, 98, 102, 100, 101)],
}


@pytest.mark.parametrize("name", list(OPEN_TYPE_SESSIONS))
def test_open_type(name):
    bars = OPEN_TYPE_SESSIONS[name]
    r = tpo_of(bars)
    assert r.open_type[0] == name and name in vpoc.features.OPEN_TYPES
    # mirrored prices give the same type
    mirror = [(m, 200 - hi, 200 - lo, 200 - o, 200 - c) for m, lo, hi, o, c in bars]
    assert tpo_of(mirror).open_type[0] == name


def test_open_type_rules():
    otd = OPEN_TYPE_SESSIONS["open_test_drive"]
    assert tpo_of(otd, type_rules=dict(test_max=0.1)).open_type[0] == "open_rejection_reverse"
    assert tpo_of(otd, type_rules=dict(open_tolerance=12)).open_type[0] == "open_drive"
    # without open prices (or closes) there is no open type
    h, lo, o, c, ts = rth_session(otd, "2024-06-03")
    r = vpoc.tpo(h, lo, c, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, incomplete="ignore")
    assert r.open_type[0] == "" and r.day_type[0] != ""
    r = vpoc.tpo(h, lo, open=o, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, incomplete="ignore")
    assert r.open_type[0] == ""


@pytest.mark.parametrize("rules, exc, match", [
    (dict(normal=0.2), ValueError, r"type_rules\['normal'\]: unknown"),
    (dict(normal_ext=-1), ValueError, r"type_rules\['normal_ext'\]"),
    (dict(test_max=2.0), ValueError, r"type_rules\['test_max'\]"),
    (dict(lookback=0), ValueError, r"type_rules\['lookback'\]"),
    (dict(dd_rows=1.5), ValueError, r"type_rules\['dd_rows'\]"),
    (dict(close_edge="a"), TypeError, r"type_rules\['close_edge'\]"),
    (dict(normal_ext=2.0), ValueError, "variation_ext"),
    ([("normal_ext", 1)], TypeError, "type_rules"),
])
def test_bad_type_rules(rules, exc, match):
    with pytest.raises(exc, match=match):
        tpo_of(periods(DAY_TYPE_SESSIONS["normal"]), type_rules=rules)


def test_types_compare_whole_ticks_with_a_decimal_tick():
    """A move of exactly open_tolerance ticks, or an extension of exactly normal_ext IB ranges, is
    judged the same at every price level of a decimal tick (0.1): prices are compared in ticks."""
    minute = 60 * 10**9
    t0 = np.datetime64("2024-06-03", "ns").astype(np.int64) + (13 * 60 + 30) * minute

    def open_type(tick, o):
        px = lambda k: float(np.round(round(o / tick + k) * tick, 9))  # noqa: E731 (grid prices)
        bars = [(0, px(-2), px(4), o, px(4)), (5, px(3), px(8), px(4), px(8)),
                (30, px(6), px(12), px(8), px(12)), (60, px(10), px(16), px(12), px(15))]
        m, lo, hi, op, cl = (np.array(x) for x in zip(*bars))
        return vpoc.tpo(hi, lo, cl, open=op, timestamp=t0 + m * minute, offsets=[0, 4], tick_size=tick,
                        incomplete="ignore").open_type[0]

    assert {open_type(0.1, 6000.0 + k / 10) for k in range(12)} == {open_type(0.25, 6000.25)}

    def extension(base):
        px = lambda k: float(np.round((base + k) * 0.1, 9))  # noqa: E731
        lo = np.array([px(0), px(2), px(4)])
        hi = np.array([px(10), px(8), px(12)])  # IB 10 ticks, then 2 ticks above it
        r = vpoc.tpo(hi, lo, timestamp=t0 + np.arange(3) * 30 * minute, offsets=[0, 3], tick_size=0.1,
                     incomplete="ignore")
        return r.ib_ext_up[0], r.day_type[0]

    got = {extension(base) for base in range(60000, 60030)}
    assert len(got) == 1 and next(iter(got))[0] == 0.2

