"""preset= and the peer-rule keywords (va_rows, va_compare, va_stop, tie_tol, poc_tie='mid_n2', row_label), CPU.

Contract checked: docs/presets.md against tests/preset_reference.py on random sessions and edge cases; defaults bit-equal; loud bad values.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import vpoc
from vpoc import _core
from preset_reference import peer_levels, touched_mask, touched_rows
from reference import NO_ROW, ref_bars, ref_trades

RULES = dict(va_rows=("all", "touched"), va_compare=("tie_up", "zero_absent"), va_stop=("reaches", "exceeds"),
             tie_tol=(1e-9, 0.0), poc_tie=("center", "low", "high", "mid_n2", "mid_floor"), va_method=("cbot", "single"))
FIELDS = ("poc", "vah", "val", "poc_row", "vah_row", "val_row", "low_row", "n_rows", "total_volume", "va_volume",
          "offsets", "volume")


def sessions(rng, tick):
    """Random sessions as CSR offsets: empty ones, one-row ones, gaps (prices far apart), volume
    ties (multiples of 10), zero volumes, dyadic fractions (exact float sums)."""
    lens = [int(x) for x in rng.choice([0, 1, 2, 5, 17, 40], size=int(rng.integers(1, 6)))]
    n = sum(lens)
    base = rng.integers(400, 420, size=n)
    gap = np.where(rng.random(n) < 0.15, rng.integers(-30, 30, size=n), 0)
    price = (base + gap) * tick
    kind = rng.integers(0, 4)
    if kind == 0:
        vol = rng.integers(0, 4, size=n) * 10.0
    elif kind == 1:
        vol = rng.integers(0, 1000, size=n).astype(float)
    elif kind == 2:
        vol = rng.integers(0, 2, size=n).astype(float)  # many zeros and ties
    else:
        vol = rng.integers(0, 64, size=n) / 8.0
    return price, vol, np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)


def draw_rules(rng):
    return {k: v[int(rng.integers(0, len(v)))] for k, v in RULES.items()}


def expected(prof, spans_of, offsets, rules, value_area):
    """The reference's levels of every session with the peer rules, on the engine's histogram and
    total (exact sums; the reference's own float sums are checked against them to 1e-12 in check)."""
    out = {k: [] for k in ("poc_row", "val_row", "vah_row", "va_volume")}
    for s in range(len(offsets) - 1):
        lo, n = int(prof.low_row[s]), int(prof.n_rows[s])
        hist = prof.volume[prof.offsets[s]:prof.offsets[s + 1]]
        touched = None
        if rules["va_rows"] == "touched" and n:
            touched = touched_mask(spans_of[offsets[s]:offsets[s + 1]], lo, n)
        lv = peer_levels(hist, lo, touched, value_area=value_area, va_method=rules["va_method"],
                         poc_tie=rules["poc_tie"], va_compare=rules["va_compare"], va_stop=rules["va_stop"],
                         tie_tol=rules["tie_tol"], total=prof.total_volume[s])
        for k in out:
            out[k].append(lv[k])
    return out


def check(prof, ref, exp, row_size):
    np.testing.assert_allclose(prof.volume, ref["volume"], rtol=1e-12, atol=0)
    np.testing.assert_array_equal(prof.offsets, ref["offsets"])
    np.testing.assert_array_equal(prof.low_row, ref["low_row"])
    for k in ("poc_row", "val_row", "vah_row"):
        np.testing.assert_array_equal(getattr(prof, k), np.array(exp[k], dtype=np.int64), err_msg=k)
    np.testing.assert_array_equal(prof.va_volume, np.array(exp["va_volume"]))
    rows = np.array(exp["poc_row"], dtype=np.int64)
    np.testing.assert_array_equal(prof.poc, np.where(rows == NO_ROW, np.nan, rows * row_size))


@pytest.mark.parametrize("seed", range(60))
def test_trades_rules_match_reference(seed):
    rng = np.random.default_rng(seed)
    tick = (0.25, 0.01, 1.0)[seed % 3]
    price, vol, off = sessions(rng, tick)
    rules = draw_rules(rng)
    va = float(rng.choice([0.7, 0.5, 1.0, 0.68]))
    prof = vpoc.from_trades(price, vol, offsets=off, tick_size=tick, value_area=va, **rules)
    ref = ref_trades(price, vol, off, tick_size=tick, value_area=va)
    spans = touched_rows("trades", {"price": price}, tick)
    check(prof, ref, expected(prof, spans, off, rules, va), tick)
    assert prof.rules == dict(rules, row_label="low", price_label="product", va_target="float", bins=None,
                              accumulate="exact", bin_report="center_edges", preset=None, assumed=())


@pytest.mark.parametrize("distribute", ["close", "hlc3", "uniform"])
@pytest.mark.parametrize("seed", range(30))
def test_bars_rules_match_reference(seed, distribute):
    rng = np.random.default_rng(1000 + seed)
    tick = 0.25
    close, vol, off = sessions(rng, tick)
    high = close + rng.integers(0, 4, size=close.size) * tick
    low = close - rng.integers(0, 4, size=close.size) * tick
    rules = draw_rules(rng)
    prof = vpoc.from_bars(high, low, close, vol, offsets=off, tick_size=tick, distribute=distribute, **rules)
    ref = ref_bars(high, low, close, vol, None, off, tick_size=tick, distribute=distribute)
    spans = touched_rows(distribute, {"high": high, "low": low, "close": close}, tick)
    check(prof, ref, expected(prof, spans, off, rules, 0.70), tick)


@pytest.mark.parametrize("seed", range(20))
def test_marketprofile_preset_is_its_rules(seed):
    rng = np.random.default_rng(2000 + seed)
    close, vol, off = sessions(rng, 0.25)
    a = vpoc.from_bars(close + 0.5, close - 0.5, close, vol, offsets=off, tick_size=0.25, preset="marketprofile")
    b = vpoc.from_bars(close + 0.5, close - 0.5, close, vol, offsets=off, tick_size=0.25, distribute="close",
                       va_method="single", poc_tie="mid_n2", va_rows="touched", va_compare="zero_absent",
                       va_stop="exceeds", tie_tol=0.0, row_label="top")
    for k in FIELDS:
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)
    assert a.rules["preset"] == "marketprofile" and a.rules["va_rows"] == "touched"
    assert b.rules["preset"] is None


@pytest.mark.parametrize("seed", range(10))
def test_defaults_and_cbot_preset_are_bit_equal(seed):
    rng = np.random.default_rng(3000 + seed)
    close, vol, off = sessions(rng, 0.25)
    args = (close + 0.5, close - 0.25, close, vol)
    plain = vpoc.from_bars(*args, offsets=off, tick_size=0.25)
    assert plain.rules is None
    for kw in (dict(preset="cbot"), dict(va_rows="all", va_compare="tie_up", va_stop="reaches", tie_tol=1e-9,
                                         row_label="low", poc_tie="center", va_method="cbot", distribute="uniform")):
        other = vpoc.from_bars(*args, offsets=off, tick_size=0.25, **kw)
        for k in FIELDS:
            np.testing.assert_array_equal(getattr(plain, k), getattr(other, k), err_msg=k)
    assert vpoc.from_bars(*args, offsets=off, tick_size=0.25, preset="cbot").rules["va_method"] == "cbot"


def test_explicit_keyword_beats_the_preset():
    p = np.array([100.0, 100.25, 100.5, 100.75])
    v = np.array([5.0, 10.0, 10.0, 5.0])
    prof = vpoc.from_trades(p, v, tick_size=0.25, preset="marketprofile", va_method="cbot", poc_tie="low")
    assert prof.rules["va_method"] == "cbot" and prof.rules["poc_tie"] == "low"
    assert prof.rules["va_compare"] == "zero_absent"
    assert prof.poc_row[0] == 401


def test_mid_n2_and_center_differ_on_an_even_tie():
    # two tied maxima at rows 1 and 2 of 4: centre (1.5) takes the lower, n / 2 = 2 the upper
    p = np.array([100.0, 100.25, 100.5, 100.75])
    v = np.array([1.0, 9.0, 9.0, 1.0])
    assert vpoc.from_trades(p, v, tick_size=0.25).poc_row[0] == 401
    assert vpoc.from_trades(p, v, tick_size=0.25, poc_tie="mid_n2").poc_row[0] == 402


def test_touched_rows_skip_the_gap_and_zero_rows_stay():
    # rows 400, 401 (volume 0, printed), 405 (gap 402-404 untouched), 406
    p = np.array([100.0, 100.25, 101.25, 101.5])
    v = np.array([10.0, 0.0, 30.0, 10.0])
    prof = vpoc.from_trades(p, v, tick_size=0.25, va_method="single", va_rows="touched", value_area=0.9)
    np.testing.assert_array_equal(prof.volume, [10, 0, 0, 0, 0, 30, 10])  # histogram unchanged
    assert prof.poc_row[0] == 405 and prof.vah_row[0] == 406
    # from 405 + 406 (40 of 50) the next touched row below is 401 (0), then 400
    assert prof.val_row[0] == 400 and prof.va_volume[0] == 50.0
    allrows = vpoc.from_trades(p, v, tick_size=0.25, va_method="single", value_area=0.9)
    assert allrows.val_row[0] == 400 and allrows.va_volume[0] == 50.0


def test_exceeds_and_zero_absent_on_a_hand_session():
    # rows 400..404 volumes 10, 20, 40, 0, 30; total 100, target 70
    p = 100.0 + 0.25 * np.arange(5)
    v = np.array([10.0, 20.0, 40.0, 0.0, 30.0])
    kw = dict(tick_size=0.25, va_method="single")
    # 40; up 0 vs down 20 -> down (60); up 0 vs 10 -> down (70): reached
    a = vpoc.from_trades(p, v, **kw)
    assert (a.val_row[0], a.vah_row[0], a.va_volume[0]) == (400, 402, 70.0)
    # exceeds: 70 is not past 70: on, only up is left (0, then 30). py-market-profile raises here
    # (row above 0, none below), both compare rules take the only side left
    for compare in ("tie_up", "zero_absent"):
        b = vpoc.from_trades(p, v, va_stop="exceeds", tie_tol=0.0, va_compare=compare, **kw)
        assert (b.val_row[0], b.vah_row[0], b.va_volume[0]) == (400, 404, 100.0)


def test_zero_absent_goes_down_past_an_empty_row_above():
    # rows 400..404 volumes 10, 0, 40, 0, 10; total 60, target 42
    p = 100.0 + 0.25 * np.arange(5)
    v = np.array([10.0, 0.0, 40.0, 0.0, 10.0])
    up = vpoc.from_trades(p, v, tick_size=0.25, va_method="single")  # 0 vs 0: up; then 10 vs 0: up
    assert (up.val_row[0], up.vah_row[0], up.va_volume[0]) == (402, 404, 50.0)
    dn = vpoc.from_trades(p, v, tick_size=0.25, va_method="single", va_compare="zero_absent")
    assert (dn.val_row[0], dn.vah_row[0], dn.va_volume[0]) == (400, 402, 50.0)


def test_empty_and_one_row_sessions():
    p = np.array([100.0, 100.5])
    v = np.array([0.0, 7.0])
    prof = vpoc.from_trades(p, v, offsets=[0, 0, 1, 2], tick_size=0.25, preset="marketprofile")
    assert prof.n_rows.tolist() == [0, 1, 1]
    assert prof.poc_row[0] == NO_ROW and np.isnan(prof.poc[0])
    assert prof.poc_row.tolist()[1:] == [400, 402] and prof.va_volume.tolist()[1:] == [0.0, 7.0]


@pytest.mark.parametrize("va_rows", ["all", "touched"])
@pytest.mark.parametrize("seed", range(8))
def test_developing_and_window_follow_the_rules(seed, va_rows):
    """Developing and rolling levels with the peer rules equal the batch levels of each prefix /
    window (va_rows='touched': the developing series runs as one window over the session)."""
    rng = np.random.default_rng(4000 + seed)
    n = 25
    p = (400 + rng.integers(0, 8, size=n) * rng.integers(1, 4, size=n)) * 0.25  # gaps
    v = rng.integers(0, 4, size=n) * 10.0
    rules = dict(va_method="single", poc_tie="mid_n2", va_compare="zero_absent", va_stop="exceeds", tie_tol=0.0,
                 va_rows=va_rows)
    for window in (None, 5):
        prof = vpoc.from_trades(p, v, tick_size=0.25, developing=True, window=window, **rules)
        for i in range(n):
            a = 0 if window is None else max(0, i + 1 - window)
            one = vpoc.from_trades(p[a:i + 1], v[a:i + 1], tick_size=0.25, **rules)
            assert (prof.dev_poc[i], prof.dev_val[i], prof.dev_vah[i]) == (one.poc[0], one.val[0], one.vah[0]), i


def test_options_repr_pickle_and_old_state():
    o = _core.Options(tick_size=0.25, va_rows="touched", va_compare="zero_absent", va_stop="exceeds", tie_tol=0.0,
                      poc_tie="mid_n2", va_method="single", row_label="top")
    q = pickle.loads(pickle.dumps(o))
    assert repr(q) == repr(o)
    assert "va_rows='touched'" in repr(o) and "tie_tol=0.0" in repr(o) and "row_label='top'" in repr(o)
    assert (q.va_rows, q.va_compare, q.va_stop, q.tie_tol, q.row_label) == ("touched", "zero_absent", "exceeds", 0.0,
                                                                           "top")
    old = _core.Options.__new__(_core.Options)
    old.__setstate__((0.25, 1, 0.7, "cbot", "center", 1000000, None, False, "uniform", False, None))
    assert (old.va_rows, old.va_compare, old.va_stop, old.tie_tol, old.row_label) == ("all", "tie_up", "reaches",
                                                                                     1e-9, "low")


def test_profiles_rules_pickle():
    prof = vpoc.from_trades(np.array([100.0]), np.array([1.0]), tick_size=0.25, preset="marketprofile")
    assert pickle.loads(pickle.dumps(prof)).rules == prof.rules


@pytest.mark.parametrize("kw, exc, name", [
    (dict(va_rows="printed"), ValueError, "va_rows"),
    (dict(va_compare="up"), ValueError, "va_compare"),
    (dict(va_stop="above"), ValueError, "va_stop"),
    (dict(tie_tol=-1e-9), ValueError, "tie_tol"),
    (dict(tie_tol=float("nan")), ValueError, "tie_tol"),
    (dict(tie_tol=0.5), ValueError, "tie_tol"),
    (dict(tie_tol="0"), TypeError, "tie_tol"),
    (dict(poc_tie="mid"), ValueError, "poc_tie"),
    (dict(row_label="high"), ValueError, "row_label"),
    (dict(row_label="top", ticks_per_row=2), ValueError, "row_label"),
    (dict(va_rows=1), TypeError, "va_rows"),
    (dict(preset="tv"), ValueError, "preset"),
    (dict(preset=1), TypeError, "preset"),
    (dict(va_rows="touched", va_method="greedy"), ValueError, "va_rows"),
])
def test_bad_values_name_the_keyword(kw, exc, name):
    with pytest.raises(exc, match=name):
        vpoc.from_trades(np.array([100.0]), np.array([1.0]), tick_size=0.25, **kw)


def test_touched_refuses_legacy():
    c = np.array([100.0])
    with pytest.raises(ValueError, match="va_rows"):
        vpoc.from_bars(c, c, c, np.array([1.0]), tick_size=0.25, distribute="legacy", va_rows="touched")


def test_row_label_top_with_one_tick_per_row_is_low():
    p = np.array([100.0, 100.25, 100.25])
    v = np.array([1.0, 2.0, 3.0])
    a = vpoc.from_trades(p, v, tick_size=0.25, row_label="top")
    b = vpoc.from_trades(p, v, tick_size=0.25)
    for k in FIELDS:
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k))


@pytest.mark.parametrize("seed", range(4))
def test_live_follows_the_rules(seed):
    """vpoc.Live with the peer rules gives the developing levels of from_trades with them, after
    every row; its state round trip keeps them."""
    rng = np.random.default_rng(5000 + seed)
    n = 60
    p = (400 + rng.integers(0, 8, size=n)) * 0.25
    v = rng.integers(0, 4, size=n) * 10.0
    rules = dict(va_compare="zero_absent", va_stop="exceeds", tie_tol=0.0, va_rows=("all", "touched")[seed % 2])
    p = p + (seed % 2) * rng.integers(0, 3, size=n) * 2.0  # gaps, which touched rows skip
    ref = vpoc.from_trades(p, v, tick_size=0.25, developing=True, va_method="single", poc_tie="mid_n2", **rules)
    live = vpoc.Live(kind="trades", tick_size=0.25, va_method="single", poc_tie="mid_n2", **rules)
    ts = 1_700_000_000 * 10**9 + np.arange(n) * 10**9
    for i in range(n):
        if i == n // 2:
            live = vpoc.Live.from_state(live.state_dict())
        live.update(p[i:i + 1], v[i:i + 1], timestamp=ts[i:i + 1])
        assert (live.poc, live.val, live.vah) == (ref.dev_poc[i], ref.dev_val[i], ref.dev_vah[i]), i
    live.close()
    done = live.profiles
    one = vpoc.from_trades(p, v, tick_size=0.25, va_method="single", poc_tie="mid_n2", **rules)
    assert (done.poc_row[0], done.val_row[0], done.vah_row[0]) == (one.poc_row[0], one.val_row[0], one.vah_row[0])
    assert done.rules["va_compare"] == "zero_absent" and done.rules["preset"] is None
    with pytest.raises(ValueError, match="va_rows"):
        vpoc.Live(kind="trades", tick_size=0.25, va_rows="touched", va_method="greedy")
    with pytest.raises(ValueError, match="preset"):
        vpoc.Live(kind="trades", tick_size=0.25, preset="wickra")


def test_live_marketprofile_preset_equals_batch():
    rng = np.random.default_rng(77)
    n = 80
    c = (400 + rng.integers(0, 12, size=n) * rng.integers(1, 3, size=n)) * 0.25
    v = rng.integers(0, 4, size=n) * 10.0
    ts = 1_700_000_000 * 10**9 + np.arange(n) * 60 * 10**9
    ref = vpoc.from_bars(c + 0.5, c - 0.5, c, v, tick_size=0.25, developing=True, preset="marketprofile")
    live = vpoc.Live(tick_size=0.25, preset="marketprofile")
    for i in range(0, n, 7):
        live.update(c[i:i + 7] + 0.5, c[i:i + 7] - 0.5, c[i:i + 7], v[i:i + 7], timestamp=ts[i:i + 7])
        j = min(i + 7, n) - 1
        assert (live.poc, live.val, live.vah) == (ref.dev_poc[j], ref.dev_val[j], ref.dev_vah[j]), i
    live = pickle.loads(pickle.dumps(live))
    live.close()
    assert live.profiles.rules == ref.rules
    assert (live.profiles.poc[0], live.profiles.val[0], live.profiles.vah[0]) == (ref.poc[0], ref.val[0], ref.vah[0])
    with pytest.raises(ValueError, match="va_stop"):
        vpoc.Live(kind="trades", tick_size=0.25, va_stop="x")


def test_dask_preset_equals_one_call():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    import vpoc.dask as vd
    rng = np.random.default_rng(31)
    n = 400
    c = (400 + rng.integers(0, 30, size=n)) * 0.25
    df = pd.DataFrame({"high": c + 0.5, "low": c - 0.5, "close": c, "volume": rng.integers(0, 4, size=n) * 10.0,
                       "session_id": np.repeat(np.arange(8), n // 8)})
    ddf = dd.from_pandas(df, npartitions=3, sort=False)
    got = vd.from_bars(ddf, tick_size=0.25, session_column="session_id", timestamp=None, preset="marketprofile",
                       va_method="cbot").compute(scheduler="sync")
    exp = vpoc.from_bars(df.high.to_numpy(), df.low.to_numpy(), df.close.to_numpy(), df.volume.to_numpy(),
                         session_ids=df.session_id.to_numpy(), tick_size=0.25, preset="marketprofile",
                         va_method="cbot")
    for k in ("poc_row", "val_row", "vah_row", "va_volume"):
        np.testing.assert_array_equal(got[k].to_numpy(), getattr(exp, k), err_msg=k)
    with pytest.raises(ValueError, match="va_stop"):
        vd.from_bars(ddf, tick_size=0.25, session_column="session_id", timestamp=None, va_stop="x")
