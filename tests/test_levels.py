"""vpoc.levels (HVN / LVN price lists, balanced target, opening range) and the session table's level columns.

Contract checked: docs/features.md "Level lists": the node rule (a plain loop written here), the balanced target,
the ragged layout, the opening range carried from vpoc.tpo, the level columns without lookahead, every loud input.
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc
from vpoc.features import LEVEL_FIELDS, LEVEL_TABLE_COLUMNS
from reference import poc_of_counts
import _deps

TICK = 0.25
MIN = 60 * 10**9


# ------------------------------------------------------------------------------ plain reference
def ref_histogram(prices, volumes, tick, tpr):
    """(low row, [volume per row]) of one session: row = floor(round(p / tick) / tpr), zero-filled."""
    rows = [int(round(p / tick)) // tpr for p in prices]
    lo, hi = min(rows), max(rows)
    h = [0] * (hi - lo + 1)
    for r, v in zip(rows, volumes):
        h[r - lo] += int(v)
    return lo, h


def ref_nodes(h, smoothing, order, hth, lth):
    """(HVN indices, LVN indices, smoothed volumes) of one histogram, written from the rule's words:
    a centred moving sum (rows outside count 0), runs of equal smoothed rows, a run's middle row (the
    lower of two); strictly lower (higher) neighbours, none higher (lower) within ``order`` rows that
    all lie inside the profile, and the threshold against the session's largest smoothed volume."""
    n = len(h)
    half = smoothing // 2
    sm = [sum(h[j] for j in range(i - half, i + half + 1) if 0 <= j < n) for i in range(n)]
    top = max(sm)
    tol = 1e-9 * top
    hvn, lvn = [], []
    i = 0
    while i < n:
        j = i
        while j + 1 < n and abs(sm[j + 1] - sm[j]) <= tol:
            j += 1
        a, b = i, j
        i = j + 1
        if a - order < 0 or b + order > n - 1:
            continue
        c = (a + b) // 2
        v = sm[c]
        side = list(range(a - order, a)) + list(range(b + 1, b + order + 1))
        if (v >= hth * top - tol and v - sm[a - 1] > tol and v - sm[b + 1] > tol
                and all(v - sm[k] >= -tol for k in side)):
            hvn.append(c)
        if (v <= lth * top + tol and sm[a - 1] - v > tol and sm[b + 1] - v > tol
                and all(sm[k] - v >= -tol for k in side)):
            lvn.append(c)
    return hvn, lvn, sm


def ref_balanced(lo, h, poc):
    """(target row or None, side): the longer side of the profile mirrored about the POC."""
    up, down = len(h) - 1 - poc, poc
    if up > down:
        return lo + poc - up, -1
    if down > up:
        return lo + poc + down, 1
    return None, 0


def random_trades(seed):
    """Integer-volume trades in sessions of every kind: empty, one trade, one price, gappy (rows of
    zero volume), flat runs (ties of equal volumes) and busy ones; returns (prices, volumes, offsets)."""
    rng = np.random.default_rng(seed)
    S = int(rng.integers(1, 7))
    ps, vs, sizes = [], [], []
    for _ in range(S):
        kind = rng.choice(["empty", "one", "flat", "gappy", "busy", "busy"])
        n = {"empty": 0, "one": 1}.get(kind, int(rng.integers(2, 120)))
        base = int(rng.integers(-50, 50)) + 20000
        if kind == "flat":
            t = np.repeat(base + np.arange(int(rng.integers(1, 9))), 3)[:n] if n else []
            v = np.full(len(t), int(rng.integers(1, 4)))
        elif kind == "gappy":
            t = base + rng.choice([0, 1, 2, 15, 16, 40], n)
            v = rng.integers(1, 5, n)
        else:
            t = base + np.cumsum(rng.integers(-2, 3, n)) if n else np.zeros(0, dtype=np.int64)
            v = rng.choice([1, 1, 2, 5, 10], n)
        ps.extend(np.asarray(t, dtype=np.float64) * TICK)
        vs.extend(np.asarray(v, dtype=np.int64))
        sizes.append(len(t))
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    return np.array(ps, dtype=np.float64), np.array(vs, dtype=np.int64), offsets


def check_against_reference(lv, prices, volumes, offsets, *, tpr, smoothing, order, hth, lth, tie):
    rs = TICK * tpr
    S = offsets.size - 1
    assert lv.n_sessions == len(lv) == S
    for kind in ("hvn", "lvn"):
        offs = getattr(lv, f"{kind}_offsets")
        assert offs.dtype == np.int64 and offs[0] == 0 and offs.shape == (S + 1,)
        assert offs[-1] == getattr(lv, kind).shape[0] == getattr(lv, f"{kind}_row").shape[0] \
            == getattr(lv, f"{kind}_volume").shape[0]
    for s in range(S):
        a, b = int(offsets[s]), int(offsets[s + 1])
        got = lv.session(s)
        if a == b:
            for kind in ("hvn", "lvn"):
                assert got[kind].size == 0 and getattr(lv, f"{kind}_count")[s] == 0
            assert np.isnan(lv.balanced_target[s]) and lv.balanced_target_side[s] == 0
            assert lv.balanced_target_row[s] == vpoc.NO_ROW
            continue
        lo, h = ref_histogram(prices[a:b], volumes[a:b], TICK, tpr)
        hv, lvn_, sm = ref_nodes(h, smoothing, order, hth, lth)
        for kind, idx in (("hvn", hv), ("lvn", lvn_)):
            offs = getattr(lv, f"{kind}_offsets")
            sl = slice(offs[s], offs[s + 1])
            np.testing.assert_array_equal(getattr(lv, f"{kind}_row")[sl], [lo + i for i in idx],
                                          err_msg=f"session {s} {kind}")
            np.testing.assert_array_equal(getattr(lv, kind)[sl], [(lo + i) * rs for i in idx])
            np.testing.assert_array_equal(got[kind], [(lo + i) * rs for i in idx])
            np.testing.assert_array_equal(getattr(lv, f"{kind}_volume")[sl], [float(sm[i]) for i in idx])
            assert getattr(lv, f"{kind}_count")[s] == len(idx)
        row, side = ref_balanced(lo, h, poc_of_counts(h, tie))
        assert lv.balanced_target_side[s] == side == got["balanced_target_side"], f"session {s}"
        if row is None:
            assert np.isnan(lv.balanced_target[s]) and lv.balanced_target_row[s] == vpoc.NO_ROW
        else:
            assert lv.balanced_target_row[s] == row and lv.balanced_target[s] == row * rs


# ------------------------------------------------------------------------------ random sessions
@pytest.mark.parametrize("seed", range(40))
def test_random_sessions_match_reference(seed):
    rng = np.random.default_rng(500 + seed)
    p, v, offs = random_trades(seed)
    opts = dict(tpr=int(rng.choice([1, 1, 2, 3])), smoothing=int(rng.choice([1, 3, 5])),
                order=int(rng.choice([1, 2, 3, 6])), hth=float(rng.choice([0.0, 0.3, 0.5, 1.0])),
                lth=float(rng.choice([0.0, 0.5, 0.8, 1.0])), tie=str(rng.choice(["center", "low", "high"])))
    prof = vpoc.from_trades(p, v, offsets=offs, tick_size=TICK, ticks_per_row=opts["tpr"], poc_tie=opts["tie"])
    lv = vpoc.levels(prof, node_smoothing=opts["smoothing"], node_order=opts["order"],
                     hvn_threshold=opts["hth"], lvn_threshold=opts["lth"])
    check_against_reference(lv, p, v, offs, **opts)
    assert lv.rules == dict(node_smoothing=opts["smoothing"], node_order=opts["order"],
                            hvn_threshold=opts["hth"], lvn_threshold=opts["lth"])
    assert lv.or_high is None and lv.or_low is None and lv.session(0)["or_high"] is None


@pytest.mark.parametrize("seed", range(10))
def test_defaults_and_float_volumes(seed):
    """Default rules (3, 3, 0.5, 0.5); float volumes (halves: exact) give the same nodes as their doubles."""
    p, v, offs = random_trades(seed)
    lv = vpoc.levels(vpoc.from_trades(p, v, offsets=offs, tick_size=TICK))
    check_against_reference(lv, p, v, offs, tpr=1, smoothing=3, order=3, hth=0.5, lth=0.5, tie="center")
    half = vpoc.levels(vpoc.from_trades(p, v / 2.0, offsets=offs, tick_size=TICK))
    for kind in ("hvn", "lvn"):
        np.testing.assert_array_equal(getattr(half, kind), getattr(lv, kind))
        np.testing.assert_array_equal(getattr(half, f"{kind}_volume"), getattr(lv, f"{kind}_volume") / 2.0)


# ------------------------------------------------------------------------------ hand-built sessions
def profile_of(volumes, low_row=100, tick=1.0):
    """A one-session profile with these row volumes from ``low_row`` up (one trade per non-zero row)."""
    rows = [low_row + i for i, x in enumerate(volumes) if x]
    vols = [x for x in volumes if x]
    return vpoc.from_trades(np.array(rows, dtype=np.float64) * tick, np.array(vols, dtype=np.int64),
                            offsets=[0, len(rows)], tick_size=tick)


def test_double_distribution_has_two_hvns_and_the_valley_between():
    #        100 .. 104 (peak 102)    valley 106  108 .. 112 (peak 110)
    vols = [1, 4, 9, 4, 2, 1, 1, 1, 2, 5, 8, 5, 1]
    lv = vpoc.levels(profile_of(vols), node_smoothing=1, node_order=2)
    assert lv.hvn.tolist() == [102.0, 110.0]  # 8 >= 0.5 x 9, both peaks
    assert lv.lvn.tolist() == [106.0]  # the run 105-107 (1, 1, 1): its middle row
    assert lv.hvn_volume.tolist() == [9.0, 8.0] and lv.lvn_volume.tolist() == [1.0]
    assert lv.hvn_row.tolist() == [102, 110] and lv.lvn_row.tolist() == [106]
    # a higher threshold keeps only the main peak; smoothing merges the valley run's rows into one dip
    assert vpoc.levels(profile_of(vols), node_smoothing=1, node_order=2, hvn_threshold=0.95).hvn.tolist() == [102.0]
    s3 = vpoc.levels(profile_of(vols), node_smoothing=3, node_order=2)
    assert s3.hvn.tolist() == [102.0, 110.0] and s3.lvn.tolist() == [106.0]


def test_a_zero_volume_gap_is_an_lvn_and_edges_are_never_nodes():
    vols = [5, 6, 7, 6, 0, 0, 0, 6, 7, 6, 5]  # rows 104-106 untraded
    lv = vpoc.levels(profile_of(vols), node_smoothing=1, node_order=2)
    assert lv.lvn.tolist() == [105.0] and lv.hvn.tolist() == [102.0, 108.0]
    rising = vpoc.levels(profile_of([1, 2, 3, 4, 5, 6]), node_smoothing=1, node_order=1)
    assert rising.hvn.size == 0 and rising.lvn.size == 0  # the maximum sits at the edge


def test_ties_within_the_band_form_one_node():
    vols = [1, 2, 5, 5, 5, 5, 2, 1]  # a flat top of four rows: one HVN at the lower middle row (103)
    lv = vpoc.levels(profile_of(vols), node_smoothing=1, node_order=1)
    assert lv.hvn.tolist() == [103.0] and lv.lvn.size == 0


@pytest.mark.parametrize("name, vols, side, target", [
    ("p_shape", [1, 1, 1, 1, 2, 9], 1, 110.0),  # POC 105 at the top, 5 rows below it: target 5 rows above
    ("b_shape", [9, 2, 1, 1, 1, 1], -1, 95.0),  # POC 100 at the bottom, 5 rows above it: 5 rows below
    ("longer_below", [1, 1, 2, 3, 9, 2], 1, 108.0),  # POC 104: 4 rows below, 1 above: 104 + 4
    ("longer_above", [1, 2, 3, 9, 2, 1, 1, 1], -1, 99.0),  # POC 103: 4 rows above, 3 below: 103 - 4
    ("symmetric", [1, 2, 9, 2, 1], 0, None),  # as many rows on each side of the POC: no target
    ("one_row", [4], 0, None),
])
def test_balanced_target_hand_built(name, vols, side, target):
    lv = vpoc.levels(profile_of(vols))
    assert lv.balanced_target_side[0] == side, name
    if target is None:
        assert np.isnan(lv.balanced_target[0]) and lv.balanced_target_row[0] == vpoc.NO_ROW
    else:
        assert lv.balanced_target[0] == target and lv.balanced_target_row[0] == int(target)


def test_balanced_target_on_a_coarser_ladder():
    ticks = vpoc.levels(vpoc.from_trades(np.array([10.0, 10.5, 10.5, 10.5]), np.ones(4), offsets=[0, 4],
                                         tick_size=0.25, ticks_per_row=2))  # rows of 0.5: 20, 21 (POC)
    assert ticks.balanced_target[0] == 11.0 and ticks.balanced_target_row[0] == 22


# ------------------------------------------------------------------------------ opening range (tpo=)
def rth_day(day, k0=0):
    """Half-hour RTH bars on ``day`` (CDT): brackets in ticks; bar opens every 30 minutes from 08:30."""
    brackets = [(100 + k0, 110 + k0), (104 + k0, 112 + k0), (96 + k0, 106 + k0), (101 + k0, 103 + k0)]
    t0 = np.datetime64(day, "ns").astype(np.int64) + (13 * 60 + 30) * MIN
    lo = np.array([b[0] for b in brackets], dtype=np.float64) * TICK
    hi = np.array([b[1] for b in brackets], dtype=np.float64) * TICK
    return hi, lo, t0 + np.arange(4, dtype=np.int64) * 30 * MIN


@_deps.needs("pandas")
def test_opening_range_is_carried_from_tpo():
    parts = [rth_day("2024-06-03"), rth_day("2024-06-04", 20)]
    h, lo, ts = (np.concatenate(x) for x in zip(*parts))
    ids = np.repeat(np.array(["2024-06-03", "2024-06-04"], dtype="datetime64[D]"), 4)
    vol = np.full(8, 4, dtype=np.int64)
    prof = vpoc.from_bars(h, lo, lo, vol, session_ids=ids, tick_size=TICK)
    tp = vpoc.tpo(h, lo, lo, vol, timestamp=ts, session_ids=ids, tick_size=TICK, incomplete="ignore")
    lv = vpoc.levels(prof, tpo=tp)
    np.testing.assert_array_equal(lv.or_high, [110 * TICK, 130 * TICK])  # period A of each day
    np.testing.assert_array_equal(lv.or_low, [100 * TICK, 120 * TICK])
    assert lv.session(1)["or_high"] == 130 * TICK and lv.session(-1)["or_low"] == 120 * TICK
    df = lv.to_pandas()
    assert list(df.columns) == list(LEVEL_FIELDS) and df.index.equals(prof.to_pandas().index)
    assert "opening_range=True" in repr(lv)
    assert set(lv.to_dict()) >= set(LEVEL_FIELDS) | {"hvn", "hvn_offsets", "lvn_row", "lvn_volume"}
    with pytest.raises(ValueError, match="tpo"):  # other sessions
        vpoc.levels(prof, tpo=vpoc.tpo(h[:4], lo[:4], timestamp=ts[:4], offsets=[0, 4], tick_size=TICK,
                                       incomplete="ignore"))
    other = vpoc.tpo(h, lo, timestamp=ts, session_ids=ids + np.timedelta64(7, "D"), tick_size=TICK, incomplete="ignore")
    with pytest.raises(ValueError, match="tpo's session labels"):
        vpoc.levels(prof, tpo=other)
    with pytest.raises(TypeError, match="tpo must be"):
        vpoc.levels(prof, tpo=prof)


@_deps.needs("pandas")
def test_exports_and_frames():
    p, v, offs = random_trades(3)
    prof = vpoc.from_trades(p, v, offsets=offs, tick_size=TICK)
    lv = vpoc.levels(prof, node_smoothing=1, node_order=1)
    assert vpoc.Levels is vpoc.features.Levels and vpoc.levels is vpoc.features.levels
    df = lv.to_pandas()
    assert list(df.columns) == [f for f in LEVEL_FIELDS if not f.startswith("or_")]
    assert len(df) == prof.n_sessions and df.index.name == "session"
    nodes = lv.nodes_frame()
    assert len(nodes) == lv.hvn.size + lv.lvn.size
    assert list(nodes.columns) == ["session", "kind", "price", "row", "smoothed_volume"]
    np.testing.assert_array_equal(nodes.loc[nodes.kind == "lvn", "price"], lv.lvn)
    np.testing.assert_array_equal(np.bincount(nodes.loc[nodes.kind == "hvn", "session"],
                                              minlength=lv.n_sessions), lv.hvn_count)
    assert lv.labels is prof.session_labels and lv.profile is prof and lv.row_size == TICK
    with pytest.raises(IndexError, match="out of range"):
        lv.session(lv.n_sessions)


# ------------------------------------------------------------------------------ the session table
def table_bars(seed):
    """Bars in a few sessions (empty and one-bar ones too), integer volumes; (h, lo, c, v, o, offsets)."""
    rng = np.random.default_rng(seed)
    sizes = rng.choice([0, 1, 3, 20, 60], int(rng.integers(2, 7)))
    n = int(sizes.sum())
    mid = 16000 + np.cumsum(rng.integers(-3, 4, n))
    lo_t = mid - rng.integers(0, 4, n)
    hi_t = mid + rng.integers(0, 4, n)
    c_t = np.minimum(np.maximum(mid + rng.integers(-2, 3, n), lo_t), hi_t)
    f = lambda x: x.astype(np.float64) * TICK  # noqa: E731
    return f(hi_t), f(lo_t), f(c_t), rng.integers(1, 20, n), f(c_t), np.r_[0, np.cumsum(sizes)].astype(np.int64)


@pytest.mark.parametrize("seed", range(12))
def test_table_level_columns(seed):
    """level_columns=True appends LEVEL_TABLE_COLUMNS after close_va_position; they equal vpoc.levels
    on the same profiles (nearest node to the close by a loop here); the default table is unchanged."""
    h, lo, c, v, o, offs = table_bars(seed)
    kw = dict(open=o, offsets=offs, tick_size=TICK, lookbacks=(3,), node_smoothing=1, node_order=2)
    plain = vpoc.session_features(h, lo, c, v, **kw)
    table = vpoc.session_features(h, lo, c, v, level_columns=True, **kw)
    assert table.columns == plain.columns + LEVEL_TABLE_COLUMNS
    np.testing.assert_array_equal(table.select(plain.columns).values, plain.values)
    lv = vpoc.levels(vpoc.from_bars(h, lo, c, v, offsets=offs, tick_size=TICK), node_smoothing=1, node_order=2)
    for kind in ("hvn", "lvn"):  # the table's counts are the lists' lengths (one node rule)
        want = getattr(lv, f"{kind}_count").astype(np.float32)
        want[np.diff(offs) == 0] = np.nan
        np.testing.assert_array_equal(table[f"{kind}_count"], want)
    for s in range(offs.size - 1):
        row = {name: float(table[name][s]) for name in LEVEL_TABLE_COLUMNS}
        if offs[s] == offs[s + 1]:
            assert all(np.isnan(x) for x in row.values())
            continue
        close = c[offs[s + 1] - 1]
        got = lv.session(s)
        for kind in ("hvn", "lvn"):
            above = [x for x in got[kind] if x >= close]
            below = [x for x in got[kind] if x <= close]
            want_a = min(above) if above else np.nan
            want_b = max(below) if below else np.nan
            np.testing.assert_array_equal([row[f"{kind}_above"], row[f"{kind}_below"]],
                                          np.array([want_a, want_b], dtype=np.float32), err_msg=f"{s} {kind}")
        assert row["balanced_target_side"] == lv.balanced_target_side[s]
        np.testing.assert_array_equal(row["balanced_target"], np.float32(lv.balanced_target[s]))
    # no lookahead: the table of the first sessions is the first rows of the whole table
    if offs.size > 2:
        cut = int(offs[-2])
        head = vpoc.session_features(h[:cut], lo[:cut], c[:cut], v[:cut], level_columns=True,
                                     **dict(kw, open=o[:cut], offsets=offs[:-1]))
        np.testing.assert_array_equal(head.values, table.values[:-1])


# ------------------------------------------------------------------------------ bad input
def test_bad_inputs_name_the_argument():
    prof = profile_of([1, 2, 3])
    with pytest.raises(TypeError, match="prof must be a vpoc.Profiles"):
        vpoc.levels(np.zeros(3))
    with pytest.raises(ValueError, match="node_smoothing must be odd"):
        vpoc.levels(prof, node_smoothing=2)
    with pytest.raises(ValueError, match="node_order must be >= 1"):
        vpoc.levels(prof, node_order=0)
    with pytest.raises(TypeError, match="node_order must be an integer"):
        vpoc.levels(prof, node_order=1.5)
    with pytest.raises(TypeError, match="node_smoothing must be an integer"):
        vpoc.levels(prof, node_smoothing=True)
    with pytest.raises(ValueError, match="hvn_threshold"):
        vpoc.levels(prof, hvn_threshold=1.5)
    with pytest.raises(TypeError, match="lvn_threshold"):
        vpoc.levels(prof, lvn_threshold="0.5")
    with pytest.raises(ValueError, match="node_order must be <= 1000000"):
        vpoc.levels(prof, node_order=10**7)
    with pytest.raises(TypeError, match="level_columns"):
        vpoc.session_features(np.ones(2), np.ones(2), np.ones(2), np.ones(2), tick_size=TICK, level_columns="yes")
