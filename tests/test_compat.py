"""Tests of vpoc.compat (the legacy analyzer's drop-in) against tests/legacy_reference.py and by hand.

Contract: random sessions (on- and off-grid prices, ties, gaps, empty and one-bar sessions) match the plain reference within 1e-9 relative; bad input raises naming the argument.
"""

from __future__ import annotations

import importlib
import math
import os

import numpy as np
import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st

import _deps

pd = _deps.require("pandas")  # vpoc.compat and its reference take DataFrames

import legacy_reference as ref  # noqa: E402

vpoc = pytest.importorskip("vpoc")
compat = pytest.importorskip("vpoc.compat")

RTOL = 1e-9
TICKS = (0.25, 0.5, 1.0, 0.1, 0.03125, 2.0)
GRIDS = ("on", "off", "mixed")


# ----------------------------------------------------------------------------- data
def make_bars(rng: np.random.Generator, n: int, tick: float, grid: str, volumes: str = "int",
              spread: int = 3, start: float = 4000.0) -> pd.DataFrame:
    """n OHLCV bars: a random walk on the tick grid, optionally jittered off it."""
    steps = rng.integers(-spread, spread + 1, size=n)
    close_t = np.round(start / tick) + np.cumsum(steps)
    open_t = close_t - rng.integers(-spread, spread + 1, size=n)
    high_t = np.maximum(open_t, close_t) + rng.integers(0, spread + 1, size=n)
    low_t = np.minimum(open_t, close_t) - rng.integers(0, spread + 1, size=n)
    o, h, l, c = (t * tick for t in (open_t, high_t, low_t, close_t))
    if grid != "on":
        jitter = rng.random(n) < (0.5 if grid == "mixed" else 1.0)
        o, h, l, c = (np.where(jitter, x + rng.uniform(-0.49, 0.49, n) * tick, x) for x in (o, h, l, c))
        h = np.maximum(h, np.maximum(o, c))
        l = np.minimum(l, np.minimum(o, c))
    if volumes == "int":
        v = rng.integers(0, 500, size=n)
        v[rng.random(n) < 0.1] = 0
    elif volumes == "ties":
        v = rng.choice(np.array([0, 10, 10, 20]), size=n)
    else:
        v = rng.exponential(100.0, size=n)
    return pd.DataFrame({"open": o, "high": h, "low": l, "close": c, "volume": v})


@st.composite
def sessions_case(draw, max_sessions=5, max_bars=25, allow_empty=False):
    """A frame of several sessions ('key' column, interleaved or not) and its build parameters."""
    seed = draw(st.integers(0, 2**32 - 1))
    tick = draw(st.sampled_from(TICKS))
    grid = draw(st.sampled_from(GRIDS))
    volumes = draw(st.sampled_from(("int", "ties", "float")))
    spread = draw(st.sampled_from((0, 1, 3, 6)))
    sizes = draw(st.lists(st.integers(0 if allow_empty else 1, max_bars), min_size=1,
                          max_size=max_sessions))
    rng = np.random.default_rng(seed)
    frames = []
    for k, n in enumerate(sizes):
        f = make_bars(rng, n, tick, grid, volumes, spread, start=float(rng.integers(-50, 5000)))
        f["key"] = 100 - 7 * k  # keys not in frame order
        frames.append(f)
    df = pd.concat(frames, ignore_index=True)
    if draw(st.booleans()):
        df = df.iloc[rng.permutation(len(df))].reset_index(drop=True)  # interleaved sessions
    note(f"seed={seed} tick={tick} grid={grid} volumes={volumes} spread={spread} sizes={sizes}")
    return df, tick


def sessions_of(df: pd.DataFrame, by: str = "key"):
    """(key, session frame) in groupby order: the reference's view of the sessions."""
    return list(df.groupby(by, sort=True))


# Percentages of a price difference ((close - open) / open * 100, ...) cancel: their error is
# relative to the prices, i.e. RTOL * 100 in absolute terms.
DIFFERENCE_PCT = ("close_change_pct", "close_to_vwap_pct")


def assert_close(actual, expected, what: str) -> None:
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(actual), f"{what}: {actual} != NaN"
        return
    atol = RTOL * 100 if what.endswith(DIFFERENCE_PCT) else 0.0
    assert actual == pytest.approx(expected, rel=RTOL, abs=atol), f"{what}: {actual} != {expected}"


def ref_profile(frame: pd.DataFrame, tick: float, sub_tick_bars: str = "drop"):
    return ref.profile(frame["open"], frame["high"], frame["low"], frame["close"], frame["volume"], tick,
                       sub_tick_bars)


# ----------------------------------------------------------------------------- by hand
def one_bar(o, h, l, c, v=10):
    return pd.DataFrame({"open": [o], "high": [h], "low": [l], "close": [c], "volume": [v]})


def test_profile_by_hand():
    # levels 99.5, 100, 100.5; weights 1 + 1/1.5, 2, 1 + 1/1.5 -> shares 5/16, 6/16, 5/16 of 10
    bar = one_bar(100.0, 100.5, 99.5, 100.0)
    expected = pd.DataFrame({"price_level": [99.5, 100.0, 100.5], "volume": [3.125, 3.75, 3.125],
                             "volume_smooth": [6.875 / 3, 10.0 / 3, 6.875 / 3]})
    got = compat.VolumeProfileAnalyzer(0.5).calculate_volume_profile(bar)
    pd.testing.assert_frame_equal(got, expected, rtol=1e-15)
    levels, vol, smooth = ref_profile(bar, 0.5)
    np.testing.assert_allclose(np.c_[levels, vol, smooth], expected.to_numpy(), rtol=1e-15)
    assert compat.calculate_volume_profile(bar, 0.5) == pytest.approx({99.5: 3.125, 100.0: 3.75, 100.5: 3.125})


def test_levels_cover_the_whole_legacy_range_with_zeros():
    # lo = 100.1 -> first level floor(100.1/0.25)*0.25 = 100.0, hi = 101.6 -> last 101.75; the engine
    # touches only 100.25..101.5, the legacy range also has the untouched 100.0 and 101.75
    df = pd.DataFrame({"open": [100.3, 101.2], "high": [100.6, 101.6], "low": [100.1, 101.0],
                       "close": [100.5, 101.4], "volume": [7, 5]})
    got = compat.calculate_volume_profile(df)
    assert list(got) == [100.0 + 0.25 * k for k in range(8)]
    assert got[100.0] == 0.0 and got[101.75] == 0.0 and got[100.75] == 0.0  # edges and the gap
    assert sum(got.values()) == pytest.approx(12.0, rel=1e-15)


def test_sub_tick_bars_drop_or_close():
    # no level lies in [100.1, 100.2]: the legacy drops the bar, "close" puts it on rint(100.2/0.25)
    bar = one_bar(100.1, 100.2, 100.1, 100.2, v=9)
    assert compat.calculate_volume_profile(bar) == {100.0: 0.0, 100.25: 0.0}
    assert compat.calculate_volume_profile(bar, sub_tick_bars="close") == {100.0: 0.0, 100.25: 9.0}
    for mode in ("drop", "close"):
        levels, vol, _ = ref_profile(bar, 0.25, mode)
        assert dict(zip(levels.tolist(), vol.tolist())) == compat.calculate_volume_profile(
            bar, sub_tick_bars=mode)


def frame(levels, volumes, smooth=False):
    d = {"price_level": np.asarray(levels, dtype=float), "volume": np.asarray(volumes, dtype=float)}
    if smooth:
        d["volume_smooth"] = ref.smooth3(d["volume"])
    return pd.DataFrame(d)


@pytest.mark.parametrize("tops, expected", [
    ({3: 9, 10: 10, 11: 9}, 10.0),          # quantile 9.05: one level above it -> the argmax
    ({3: 10, 10: 10, 11: 10}, 8.0),         # three levels at the quantile: mean 8 (a level of volume 1)
    ({2: 10, 3: 10, 10: 10, 11: 10}, 6.0),  # mean 6.5: 6 and 7 equally near -> the first
])
def test_analyzer_vpoc_by_hand(tops, expected):
    vol = np.ones(20)
    for k, x in tops.items():
        vol[k] = x
    analyzer = compat.VolumeProfileAnalyzer()
    assert analyzer.find_vpoc(frame(range(20), vol), use_smoothing=False) == expected
    assert ref.analyzer_vpoc(np.arange(20.0), vol) == expected


@pytest.mark.parametrize("vol, pct, expected", [
    ([1, 2, 6, 3, 3, 1], 0.7, (2.0, 4.0, 75.0)),     # 6 -> up 3 (3 > 2) -> up 3: 12 >= 11.2
    ([0, 3, 6, 3, 0], 0.9, (1.0, 3.0, 100.0)),       # 3 vs 3: ties go up, then down
    ([5, 1, 1], 1.0, (0.0, 2.0, 100.0)),             # POC at the bottom edge: only up
    ([0, 0, 0, 0], 0.7, (0.0, 0.0, math.nan)),       # zero total: the first level, NaN percentage
])
def test_analyzer_value_area_by_hand(vol, pct, expected):
    got = compat.VolumeProfileAnalyzer().find_value_area(frame(range(len(vol)), vol), pct,
                                                         use_smoothing=False)
    want = ref.analyzer_value_area(np.arange(len(vol), dtype=float), vol, pct)
    for a, b, e in zip(got, want, expected):
        assert (a == e) or (math.isnan(a) and math.isnan(e)), (got, expected)
        assert (b == e) or (math.isnan(b) and math.isnan(e)), (want, expected)


def test_analyzer_uses_the_smoothed_column_by_default():
    vol = [0, 10, 0, 6, 6, 6, 0]  # raw maximum at level 1; smoothed (10/3, 10/3, 16/3, 4, 6, 4, 2) at 4
    f = frame(range(7), vol, smooth=True)
    analyzer = compat.VolumeProfileAnalyzer()
    assert analyzer.find_value_area(f, 0.2, use_smoothing=False) == (1.0, 1.0, 1000 / 28)
    assert analyzer.find_value_area(f, 0.2) == (4.0, 4.0, pytest.approx(600 / 28, rel=1e-15))
    assert analyzer.find_value_area(f.drop(columns="volume_smooth"), 0.2)[:2] == (1.0, 1.0)


def test_dict_functions_by_hand():
    d = {3.0: 7.0, 1.0: 5.0, 2.0: 7.0, 4.0: 1.0}  # not in price order
    assert compat.find_vpoc(d) == 2.0  # lowest price of the tied maxima
    assert compat.find_value_area(d, 0.7) == (2.0, 3.0, 0.7)  # 7 + 7 = 14 of 20
    assert compat.find_value_area(d, 0.8) == (1.0, 3.0, 0.95)  # 7 + 7 + 5
    assert compat.find_vpoc({}) == 0.0 and compat.find_value_area({}) == (0.0, 0.0, 0.0)
    assert ref.dict_vpoc(d) == 2.0 and ref.dict_value_area(d, 0.8) == (1.0, 3.0, 0.95)
    val, vah, frac = compat.find_value_area({1.0: 0.0, 2.0: 0.0})
    assert (val, vah) == (1.0, 1.0) and math.isnan(frac)


def test_module_functions_take_frames_like_the_legacy():
    f = frame(range(7), [0, 10, 0, 6, 6, 6, 0], smooth=True)
    analyzer = compat.VolumeProfileAnalyzer()
    assert compat.find_vpoc(f) == analyzer.find_vpoc(f)
    assert compat.find_value_area(f, 0.2) == analyzer.find_value_area(f, 0.2)  # percentage 0-100
    assert compat.find_value_area(f, 0.2)[2] > 1


def test_tie_rel_zero_is_the_exact_legacy_comparison():
    vol = np.array([1.0, 5.0, 5.0 * (1 + 1e-12), 1.0])  # a near-tie at 1e-12
    f = frame(range(4), vol)
    exact = compat.VolumeProfileAnalyzer(tie_rel=0.0)
    assert exact.find_value_area(f, 0.01, use_smoothing=False)[:2] == (2.0, 2.0)
    assert compat.VolumeProfileAnalyzer().find_value_area(f, 0.01, use_smoothing=False)[:2] == (1.0, 1.0)
    d = dict(zip([0.0, 1.0, 2.0, 3.0], vol))
    assert compat.find_vpoc(d, tie_rel=0.0) == 2.0 and compat.find_vpoc(d) == 1.0
    assert ref.dict_vpoc(d, tie_rel=0.0) == 2.0 and ref.dict_vpoc(d) == 1.0


# ----------------------------------------------------------------------------- against the reference
@given(sessions_case(max_sessions=1, max_bars=40), st.sampled_from(("drop", "close")))
def test_profile_matches_reference(case, mode):
    df, tick = case
    got = compat.VolumeProfileAnalyzer(tick, sub_tick_bars=mode).calculate_volume_profile(df)
    levels, vol, smooth = ref_profile(df, tick, mode)
    np.testing.assert_array_equal(got["price_level"].to_numpy(), levels)
    np.testing.assert_allclose(got["volume"].to_numpy(), vol, rtol=RTOL, atol=0)
    np.testing.assert_allclose(got["volume_smooth"].to_numpy(), smooth, rtol=RTOL, atol=0)
    d = compat.calculate_volume_profile(df, tick, sub_tick_bars=mode)
    assert list(d) == levels.tolist()
    np.testing.assert_allclose(list(d.values()), vol, rtol=RTOL, atol=0)


@given(sessions_case(max_sessions=3, max_bars=30), st.integers(0, 2**32 - 1))
def test_open_close_outside_low_high_match_the_legacy(case, seed):
    """vpoc.from_bars rejects such bars; the legacy spread them over [min(o,c,l), max(o,c,h)] and
    compat does the same (it widens the bar before the engine)."""
    df, tick = case
    rng = np.random.default_rng(seed)
    n = len(df)
    df = df.copy()
    below, above = rng.random(n) < 0.3, rng.random(n) < 0.3
    df.loc[below, "open"] = df.loc[below, "low"] - rng.integers(1, 4, int(below.sum())) * tick
    df.loc[above, "close"] = df.loc[above, "high"] + rng.uniform(0.1, 3, int(above.sum())) * tick
    analyzer = compat.VolumeProfileAnalyzer(tick)
    for key, frame in sessions_of(df):
        got = analyzer.calculate_volume_profile(frame)
        levels, vol, smooth = ref_profile(frame, tick)
        np.testing.assert_array_equal(got["price_level"].to_numpy(), levels)
        np.testing.assert_allclose(got["volume"].to_numpy(), vol, rtol=RTOL, atol=0)
        np.testing.assert_allclose(got["volume_smooth"].to_numpy(), smooth, rtol=RTOL, atol=0)
    if (below | above).any():
        with pytest.raises(ValueError, match=r"(open|close)\[\d+\]=.* is outside"):
            vpoc.from_bars(df["high"], df["low"], df["close"], df["volume"], open=df["open"],
                           tick_size=tick, distribute="legacy", snap=True)  # the closes are off the grid


# vpoc sums volumes of 0 or 2**-32 .. 2**53 (docs/contract.md "Exact sums"; smaller ones raise)
volume_lists = st.lists(st.one_of(st.sampled_from([0.0, 1.0, 2.0, 5.0]),
                                  st.floats(2**-32, 1e6, allow_nan=False)), min_size=1, max_size=40)


@given(volume_lists, st.sampled_from([0.7, 0.5, 1.0, 0.05]), st.sampled_from([1e-9, 0.0]),
       st.booleans())
def test_decisions_match_reference_on_the_same_profile(vol, pct, tie, smooth):
    # exact comparisons (tie_rel=0) of a running sum with the whole total depend on summation order
    assume(not (tie == 0.0 and pct == 1.0))
    vol = np.asarray(vol)
    levels = 4000.0 + 0.25 * np.arange(vol.size)
    f = frame(levels, vol, smooth=True)
    col = ref.smooth3(vol) if smooth else vol
    analyzer = compat.VolumeProfileAnalyzer(tie_rel=tie)
    assert analyzer.find_vpoc(f, smooth) == ref.analyzer_vpoc(levels, col, tie_rel=tie)
    got = analyzer.find_value_area(f, pct, smooth)
    want = ref.analyzer_value_area(levels, col, pct, tie_rel=tie)
    assert got[:2] == want[:2]
    assert_close(got[2], want[2], "value_area_pct")
    d = dict(zip(levels.tolist(), vol.tolist()))
    assert compat.find_vpoc(d, tie_rel=tie) == ref.dict_vpoc(d, tie)
    got = compat.find_value_area(d, pct, tie_rel=tie)
    want = ref.dict_value_area(d, pct, tie)
    assert got[:2] == want[:2]
    assert_close(got[2], want[2], "fraction")


@given(sessions_case(), st.sampled_from(("drop", "close")), st.booleans())
def test_analyze_sessions_matches_reference(case, mode, smooth):
    df, tick = case
    got = compat.analyze_sessions(df, "key", price_precision=tick, sub_tick_bars=mode,
                                  use_smoothing=smooth)
    groups = sessions_of(df)
    assert list(got.index) == [k for k, _ in groups] and got.index.name == "key"
    assert list(got.columns) == list(compat.ANALYZE_KEYS)
    for key, g in groups:
        want = ref.analyze_session(g["open"], g["high"], g["low"], g["close"], g["volume"], tick,
                                   use_smoothing=smooth, sub_tick_bars=mode)
        for name in compat.ANALYZE_KEYS:
            assert_close(float(got.loc[key, name]), want[name], f"session {key} {name}")


@given(sessions_case(), st.sampled_from(("drop", "close")), st.sampled_from([0.7, 0.3, 1.0]))
def test_session_features_match_reference(case, mode, pct):
    df, tick = case
    got = compat.session_features(df, "key", price_precision=tick, sub_tick_bars=mode,
                                  value_area_pct=pct)
    assert list(got.columns) == list(compat.LEGACY_FEATURES)
    for key, g in sessions_of(df):
        want = ref.session_features(g["open"], g["high"], g["low"], g["close"], g["volume"], tick,
                                    pct, mode)
        for name in compat.LEGACY_FEATURES:
            assert_close(float(got.loc[key, name]), want[name], f"session {key} {name}")


@given(sessions_case(max_sessions=1, max_bars=30))
def test_analyze_session_and_module_pipeline_match_reference(case):
    df, tick = case
    analyzer = compat.VolumeProfileAnalyzer(tick)
    got = analyzer.analyze_session(df)
    assert list(got) == ["vpoc", "value_area_low", "value_area_high", "value_area_width",
                         "value_area_pct", "volume_profile", "total_volume"]
    want = ref.analyze_session(df["open"], df["high"], df["low"], df["close"], df["volume"], tick)
    for name in compat.ANALYZE_KEYS:
        assert_close(got[name], want[name], name)
    pd.testing.assert_frame_equal(got["volume_profile"], analyzer.calculate_volume_profile(df))
    # the legacy feature code: calculate_volume_profile -> find_vpoc -> find_value_area on the dict
    d = compat.calculate_volume_profile(df, tick)
    feats = ref.session_features(df["open"], df["high"], df["low"], df["close"], df["volume"], tick)
    assert compat.find_vpoc(d) == feats["vpoc"]
    assert compat.find_value_area(d)[:2] == (feats["value_area_low"], feats["value_area_high"])


def test_es_sessions_match_reference_for_any_chunk_size_and_device_ids():
    bars = vpoc.synth.es_bars(n_sessions=3, seed=7)  # 1380 bars: the legacy's chunked path
    df = bars.to_pandas()
    base = compat.session_features(df, "session_id")
    for kwargs in (dict(chunk_size=100), dict(device_ids=[0, 1]), dict(chunk_size=1, device_ids=[3])):
        pd.testing.assert_frame_equal(compat.session_features(df, "session_id", **kwargs), base)
    analyzed = compat.analyze_sessions(df, "session_id")
    for key, g in df.groupby("session_id"):
        want = ref.session_features(g["open"], g["high"], g["low"], g["close"], g["volume"])
        for name in compat.LEGACY_FEATURES:
            assert_close(float(base.loc[key, name]), want[name], f"{key} {name}")
        want = ref.analyze_session(g["open"], g["high"], g["low"], g["close"], g["volume"], 0.25)
        for name in compat.ANALYZE_KEYS:
            assert_close(float(analyzed.loc[key, name]), want[name], f"{key} {name}")
        d = compat.calculate_volume_profile(g, chunk_size=10, device_ids=[0, 1])
        assert d == compat.calculate_volume_profile(g)


# ----------------------------------------------------------------------------- edge cases
def test_empty_session():
    empty = one_bar(1.0, 1.0, 1.0, 1.0).iloc[:0]
    analyzer = compat.VolumeProfileAnalyzer()
    prof = analyzer.calculate_volume_profile(empty)
    assert list(prof.columns) == ["price_level", "volume", "volume_smooth"] and len(prof) == 0
    assert math.isnan(analyzer.find_vpoc(prof))
    assert all(math.isnan(x) for x in analyzer.find_value_area(prof))
    res = analyzer.analyze_session(empty)
    assert res["total_volume"] == 0.0 and len(res["volume_profile"]) == 0
    assert all(math.isnan(res[k]) for k in ANALYZE_NAN)
    assert compat.calculate_volume_profile(empty) == {}
    for fn in (compat.analyze_sessions, compat.session_features):
        out = fn(empty.assign(key=[]), "key")
        assert len(out) == 0 and len(out.columns) in (6, 14)


ANALYZE_NAN = ("vpoc", "value_area_low", "value_area_high", "value_area_width", "value_area_pct")


@pytest.mark.parametrize("price", [4321.25, 4321.1])
def test_one_bar_one_price(price):
    bar = one_bar(price, price, price, price, v=42)
    on_grid = price == 4321.25
    d = compat.calculate_volume_profile(bar)
    assert d == ({4321.25: 42.0} if on_grid else {4321.0: 0.0, 4321.25: 0.0})
    res = compat.VolumeProfileAnalyzer().analyze_session(bar)
    assert res["vpoc"] == (4321.25 if on_grid else 4321.0)
    assert res["total_volume"] == 42.0
    if on_grid:
        assert (res["value_area_low"], res["value_area_high"], res["value_area_pct"]) == (4321.25, 4321.25, 100.0)
    else:
        assert math.isnan(res["value_area_pct"])  # the legacy dropped the bar: zero profile


def test_zero_volume_session_falls_back_instead_of_dividing_by_zero():
    df = make_bars(np.random.default_rng(3), 12, 0.25, "on", spread=4)
    df["volume"] = 0
    res = compat.VolumeProfileAnalyzer().analyze_session(df)
    low = res["volume_profile"]["price_level"].iloc[0]
    assert res["vpoc"] == low and res["value_area_low"] == res["value_area_high"] == low
    feats = compat.session_features(df.assign(key=1), "key").iloc[0]
    assert feats["vpoc"] == low and feats["vwap"] == df["close"].iloc[-1]
    want = ref.session_features(df["open"], df["high"], df["low"], df["close"], df["volume"])
    assert feats["value_area_low"] == want["value_area_low"]


def test_symmetric_ties_resolve_like_the_reference():
    # one bar closing mid-range: symmetric levels carry exactly equal volume
    bar = one_bar(100.0, 101.0, 99.0, 100.0, v=100)
    d = compat.calculate_volume_profile(bar)
    assert d[99.75] == d[100.25] and d[99.0] == d[101.0]
    assert compat.find_value_area(d, 0.2) == ref.dict_value_area(d, 0.2)
    assert compat.find_value_area(d, 0.2)[:2] == (99.75, 100.0)  # 13.3% + 11.9%: the lower twin first
    res = compat.VolumeProfileAnalyzer().analyze_session(bar)
    want = ref.analyze_session(bar["open"], bar["high"], bar["low"], bar["close"], bar["volume"], 0.25)
    assert (res["value_area_low"], res["value_area_high"]) == (want["value_area_low"], want["value_area_high"])


def test_columns_any_case_extension_dtypes_and_float32():
    df = make_bars(np.random.default_rng(5), 30, 0.25, "on")
    want = compat.calculate_volume_profile(df)
    upper = df.rename(columns=str.upper).assign(extra="x")
    assert compat.calculate_volume_profile(upper) == want
    typed = df.astype({"volume": "Int64", "close": "Float64"})
    assert compat.calculate_volume_profile(typed) == want
    f32 = df.astype({c: np.float32 for c in ("open", "high", "low", "close")})
    assert compat.calculate_volume_profile(f32) == want  # quarter prices are exact in float32


def test_groupby_semantics_of_by():
    df = make_bars(np.random.default_rng(11), 60, 0.25, "mixed")
    keys = np.array(["b", "a", "c"])[np.random.default_rng(1).integers(0, 3, 60)]
    got = compat.analyze_sessions(df, pd.Series(keys, name="day"))
    assert list(got.index) == ["a", "b", "c"] and got.index.name == "day"
    analyzer = compat.VolumeProfileAnalyzer()
    for key, g in df.groupby(keys):
        res = analyzer.analyze_session(g)
        for name in compat.ANALYZE_KEYS:
            assert_close(float(got.loc[key, name]), res[name], f"{key} {name}")
    by_column = compat.session_features(df.assign(day=keys), "day")
    by_array = compat.session_features(df, keys)
    pd.testing.assert_frame_equal(by_column, by_array.rename_axis("day"))
    dates = pd.to_datetime("2024-01-02") + pd.to_timedelta(np.repeat([0, 1], 30), unit="D")
    assert list(compat.session_features(df, dates.date).index) == sorted(set(dates.date))


def test_one_engine_call_for_all_sessions(monkeypatch):
    calls = []
    engine = importlib.import_module("vpoc.compat._legacy_profiles")  # the module that calls from_bars
    real = engine.from_bars

    def counting(*args, **kwargs):
        calls.append(kwargs["offsets"].size - 1)
        assert kwargs["distribute"] == "legacy"
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "from_bars", counting)
    df = vpoc.synth.es_bars(n_sessions=4, bars_per_session=50, seed=2).to_pandas()
    compat.analyze_sessions(df, "session_id")
    compat.session_features(df, "session_id")
    assert calls == [4, 4]


# ----------------------------------------------------------------------------- device and options
def test_cuda_device_works_without_gpu_and_sets_no_environment():
    before = dict(os.environ)
    analyzer = compat.VolumeProfileAnalyzer(device="cuda", device_ids=[0, 1], chunk_size=5)
    assert analyzer.device == ("cuda" if vpoc.gpu_available() else "cpu")
    assert analyzer.device_ids == [0, 1] and analyzer.chunk_size == 5
    assert analyzer.price_precision == compat.DEFAULT_PRICE_PRECISION == 0.25
    df = make_bars(np.random.default_rng(2), 40, 0.25, "off")
    on_cpu = compat.VolumeProfileAnalyzer(device="cpu").calculate_volume_profile(df)
    pd.testing.assert_frame_equal(analyzer.calculate_volume_profile(df), on_cpu, rtol=RTOL)
    assert compat.VolumeProfileAnalyzer(device="auto").calculate_volume_profile(df)["volume"].sum() == \
        pytest.approx(on_cpu["volume"].sum(), rel=RTOL)
    assert dict(os.environ) == before


def test_torch_device_object_is_accepted():
    torch = pytest.importorskip("torch")
    assert compat.VolumeProfileAnalyzer(device=torch.device("cpu")).device == "cpu"


# ----------------------------------------------------------------------------- bad input
GOOD = one_bar(100.0, 100.5, 99.5, 100.0)


@pytest.mark.parametrize("kwargs, exc, words", [
    (dict(price_precision=0), ValueError, "price_precision"),
    (dict(price_precision=-0.25), ValueError, "price_precision"),
    (dict(price_precision=float("nan")), ValueError, "price_precision"),
    (dict(price_precision="0.25"), TypeError, "price_precision"),
    (dict(price_precision=True), TypeError, "price_precision"),
    (dict(device="tpu"), ValueError, "device"),
    (dict(device_ids="0"), TypeError, "device_ids"),
    (dict(device_ids=[-1]), ValueError, "device_ids[0]"),
    (dict(device_ids=[0, 1.5]), TypeError, "device_ids[1]"),
    (dict(chunk_size=0), ValueError, "chunk_size"),
    (dict(chunk_size=2.5), TypeError, "chunk_size"),
    (dict(sub_tick_bars="spread"), ValueError, "sub_tick_bars"),
    (dict(tie_rel=-1e-9), ValueError, "tie_rel"),
    (dict(tie_rel=0.5), ValueError, "tie_rel"),
    (dict(quantile=0.0), ValueError, "quantile"),
    (dict(min_levels=0), ValueError, "min_levels"),
])
def test_bad_analyzer_arguments(kwargs, exc, words):
    with pytest.raises(exc, match=words.replace("[", r"\[").replace("]", r"\]")):
        compat.VolumeProfileAnalyzer(**kwargs)


def with_(col, row, value):
    """Six good bars with one bad value."""
    df = make_bars(np.random.default_rng(0), 6, 0.25, "on")
    df[col] = df[col].astype(np.float64)
    df.loc[row, col] = value
    return df


@pytest.mark.parametrize("df, exc, words", [
    ([1, 2, 3], TypeError, "session_df must be a pandas DataFrame"),
    (GOOD.drop(columns="volume"), ValueError, "missing column.*volume"),
    (GOOD.assign(Close=1.0), ValueError, "two columns named 'close'"),
    (GOOD.assign(volume=["x"]), TypeError, r"session_df\['volume'\]"),
    (with_("close", 3, np.nan), ValueError, r"session_df\['close'\] row 3 is not finite"),
    (with_("volume", 2, -5.0), ValueError, r"session_df\['volume'\] row 2"),
    (with_("low", 1, 1e6), ValueError, r"row 1"),
])
def test_bad_session_frames(df, exc, words):
    with pytest.raises(exc, match=words):
        compat.VolumeProfileAnalyzer().analyze_session(df)


def test_bad_profiles_and_fractions():
    analyzer = compat.VolumeProfileAnalyzer()
    f = frame([1.0, 2.0], [1.0, 2.0])
    with pytest.raises(TypeError, match="volume_profile must be a DataFrame"):
        analyzer.find_vpoc({1.0: 2.0})
    with pytest.raises(ValueError, match="no 'price_level' column"):
        analyzer.find_vpoc(f.drop(columns="price_level"))
    with pytest.raises(ValueError, match=r"volume_profile\['volume'\]\[1\]"):
        analyzer.find_vpoc(frame([1.0, 2.0], [1.0, -2.0]))
    with pytest.raises(TypeError, match="use_smoothing"):
        analyzer.find_vpoc(f, use_smoothing="yes")
    for pct in (0.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="value_area_pct"):
            analyzer.find_value_area(f, pct)
        with pytest.raises(ValueError, match="value_area_pct"):
            compat.find_value_area({1.0: 1.0}, pct)
    with pytest.raises(TypeError, match="dict"):
        compat.find_vpoc([1.0, 2.0])
    with pytest.raises(TypeError, match="numeric"):
        compat.find_value_area({"a": 1.0})
    with pytest.raises(ValueError, match="must be finite and >= 0"):
        compat.find_vpoc({1.0: float("nan")})
    with pytest.raises(ValueError, match="non-finite price level"):
        compat.find_vpoc({float("inf"): 1.0})


def test_bad_by():
    df = make_bars(np.random.default_rng(0), 6, 0.25, "on")
    with pytest.raises(ValueError, match="by='day' is not a column"):
        compat.analyze_sessions(df, "day")
    with pytest.raises(ValueError, match="by has 5 keys but df has 6 rows"):
        compat.analyze_sessions(df, [1, 1, 1, 2, 2])
    with pytest.raises(ValueError, match="missing session key .* row 2"):
        compat.session_features(df, [1.0, 1.0, np.nan, 2.0, 2.0, 2.0])
    with pytest.raises(TypeError, match="by must be a column name"):
        compat.analyze_sessions(df, None)
    with pytest.raises(TypeError, match="df must be a pandas DataFrame"):
        compat.session_features(df.to_numpy(), [0] * 6)
    with pytest.raises(ValueError, match=r"df\['high'\] row 4"):  # the frame's row, not the engine's
        bad = df.copy()
        bad.loc[4, "high"] = np.inf
        compat.analyze_sessions(bad, [2, 1, 2, 1, 2, 1])


@pytest.mark.gpu
@pytest.mark.skipif(not vpoc.gpu_available(), reason="needs a vpoc GPU build and a GPU")
def test_gpu_results_equal_cpu_results():
    df = vpoc.synth.es_bars(n_sessions=6, bars_per_session=300, seed=4).to_pandas()
    df.loc[::7, "close"] += 0.1  # off-grid closes: fractional shares summed by GPU atomics
    df["high"] = df[["high", "close"]].max(axis=1)
    for fn in (compat.analyze_sessions, compat.session_features):
        gpu = fn(df, "session_id", device="cuda")
        cpu = fn(df, "session_id", device="cpu")
        pd.testing.assert_frame_equal(gpu, cpu, rtol=RTOL)
    analyzer = compat.VolumeProfileAnalyzer(device="cuda:0")
    assert analyzer.device == "cuda:0"
    g = df[df["session_id"] == df["session_id"].iloc[0]]
    pd.testing.assert_frame_equal(analyzer.calculate_volume_profile(g),
                                  compat.VolumeProfileAnalyzer(device="cpu").calculate_volume_profile(g),
                                  rtol=RTOL)
