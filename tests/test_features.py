"""vpoc.session_features / bar_features / FeatureTable against the plain reference (feature_reference).

Covers every column on random and synthetic data, no lookahead, hand-built rule cases, edge cases
(empty sessions, one bar, one price, zero volume, gaps), bad input and the table's export paths.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import _deps

pd = _deps.require("pandas")  # the reference (feature_reference) is written with pandas

import feature_reference as FR  # noqa: E402
import reference as R
import vpoc
from vpoc import features as F

TICK = 0.25
NS_MIN = 60 * 10**9


# ------------------------------------------------------------------------------- data
def make_bars(seed: int, sizes, *, tick: float = TICK, exact_uniform: bool = True,
              dates=("2024-03-07", "2024-03-08", "2024-03-11", "2024-03-12", "2024-11-01",
                     "2024-11-04", "2024-11-05", "2024-11-06")):
    """Random-walk bars on the tick grid. Volumes are whole multiples of each bar's tick count
    when exact_uniform (so every histogram is integer-valued: no float-order fragility).
    Timestamps: each session starts 22:00 UTC the evening before its date (dates span both 2024
    DST changes), bars at sorted random minutes of the next 23 hours."""
    rng = np.random.default_rng(seed)
    sizes = [int(x) for x in sizes]
    n = sum(sizes)
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    steps = rng.integers(-3, 4, n)
    jumps = rng.random(n) < 0.08
    steps[jumps] += rng.integers(-12, 13, int(jumps.sum()))  # gaps: empty rows in profiles
    close_t = 18000 + np.cumsum(steps)
    open_t = close_t - steps
    high_t = np.maximum(open_t, close_t) + rng.integers(0, 3, n)
    low_t = np.minimum(open_t, close_t) - rng.integers(0, 3, n)
    ticks = high_t - low_t + 1
    volume = rng.integers(0, 40, n) * (ticks if exact_uniform else 1)
    ts = np.zeros(n, dtype=np.int64)
    for s in range(len(sizes)):
        a, b = offsets[s], offsets[s + 1]
        week = (s // len(dates)) * 7 * 86400 * 10**9
        day = np.datetime64(dates[s % len(dates)], "ns").astype(np.int64) + week
        start = day - 2 * 3600 * 10**9
        ts[a:b] = start + np.sort(rng.integers(0, 1380, b - a)) * NS_MIN
    p = lambda t: t.astype(np.float64) * tick  # noqa: E731
    return dict(high=p(high_t), low=p(low_t), close=p(close_t), open=p(open_t), volume=volume,
                timestamp=ts, offsets=offsets)


def split(d, *, with_open=True, with_ts=True):
    args = (d["high"], d["low"], d["close"], d["volume"])
    kw = dict(offsets=d["offsets"])
    if with_open:
        kw["open"] = d["open"]
    if with_ts:
        kw["timestamp"] = d["timestamp"]
    return args, kw


def assert_matches(table: F.FeatureTable, want: dict, ctx: str = "") -> None:
    assert table.columns == tuple(want), f"columns differ{ctx}:\n{table.columns}\n{tuple(want)}"
    assert table.values.dtype == np.float32 and table.values.flags.c_contiguous
    for j, name in enumerate(table.columns):
        got = table.values[:, j].astype(np.float64)
        exp = np.asarray(want[name], dtype=np.float64)
        bad = np.flatnonzero(np.isnan(got) != np.isnan(exp))
        assert bad.size == 0, (f"{name}: NaN differs at row {bad[0]}: got {got[bad[0]]}, "
                               f"want {exp[bad[0]]}{ctx}")
        ok = ~np.isnan(exp)
        np.testing.assert_allclose(got[ok], exp[ok].astype(np.float32), rtol=2e-6, atol=1e-5,
                                   err_msg=f"column {name}{ctx}")


SMALL_RULES = dict(lookbacks=(1, 2, 3), composite_sessions=2)


# ------------------------------------------------------------------------------- vs the reference
@pytest.mark.filterwarnings("ignore::vpoc.MissingDaysWarning")  # random sessions days apart (t5fix)
def test_session_features_match_reference_default_rules():
    d = make_bars(1, [30, 0, 25, 40, 1, 35, 28, 0, 33, 26, 31, 29])
    args, kw = split(d)
    want = FR.ref_session_features(*args, **kw, tick_size=TICK, lookbacks=(2, 3, 5))
    got = F.session_features(*args, **kw, tick_size=TICK, lookbacks=(2, 3, 5))
    assert_matches(got, want)
    assert len(got.columns) == 14 + 3 * 10 + 3 + 3 + 3 + 6 + 5 + 4 + 1
    # the random data exercises every kind of value
    for name in ("naked_poc_above_dist", "hvn_above_dist", "lvn_below_dist", "ib_high", "tpo_poc",
                 "composite_poc", "vpoc_zscore_5d"):
        assert np.isfinite(got[name]).any(), name


@pytest.mark.filterwarnings("ignore::vpoc.MissingDaysWarning")  # random sessions days apart
def test_bar_features_match_reference_default_rules():
    d = make_bars(2, [14, 0, 12, 1, 16, 11, 13])
    args, kw = split(d)
    want = FR.ref_bar_features(*args, **kw, tick_size=TICK, composite_sessions=2)
    got = F.bar_features(*args, **kw, tick_size=TICK, composite_sessions=2)
    assert_matches(got, want)
    assert got.kind == "bar" and len(got) == d["close"].size
    np.testing.assert_array_equal(got.offsets, d["offsets"])


rule_sets = st.fixed_dictionaries(dict(
    ticks_per_row=st.sampled_from([1, 2, 3]),
    distribute=st.sampled_from(["uniform", "close", "hlc3"]),
    value_area=st.sampled_from([0.5, 0.7, 1.0]),
    va_method=st.sampled_from(["cbot", "single", "greedy"]),
    poc_tie=st.sampled_from(["center", "low", "high"]),
    composite_sessions=st.integers(1, 3),
    naked_max_age=st.sampled_from([None, 1, 2]),
    node_smoothing=st.sampled_from([1, 3, 5]),
    node_order=st.integers(1, 2),
    hvn_threshold=st.sampled_from([0.0, 0.3, 0.5, 1.0]),
    lvn_threshold=st.sampled_from([0.0, 0.5, 1.0]),
    tz=st.sampled_from(["America/Chicago", "Europe/London", "UTC"]),
    rth_start=st.sampled_from(["08:30", "00:00", "23:30"]),
    ib_minutes=st.sampled_from([30, 60, 300]),
))
session_only = st.fixed_dictionaries(dict(
    lookbacks=st.sampled_from([(), (1,), (2, 3), (1, 3, 4)]),
    shape_edge=st.sampled_from([0.2, 0.3, 0.5]),
    shape_b_peak=st.sampled_from([0.3, 0.6, 1.0]),
    shape_b_valley=st.sampled_from([0.5, 0.9]),
    tpo_minutes=st.sampled_from([15, 30, 120]),
))
layouts = st.lists(st.integers(0, 9), min_size=1, max_size=6)


@pytest.mark.filterwarnings("ignore::vpoc.sessions.SessionHoursWarning")  # random tz / rth_start (t8fix)
@settings()
@given(seed=st.integers(0, 2**32 - 1), sizes=layouts, rules=rule_sets, extra=session_only,
       with_open=st.booleans(), with_ts=st.booleans())
@pytest.mark.filterwarnings("ignore::vpoc.MissingDaysWarning")  # random sessions days apart (t5fix)
def test_session_features_random(seed, sizes, rules, extra, with_open, with_ts):
    d = make_bars(seed, sizes)
    args, kw = split(d, with_open=with_open, with_ts=with_ts)
    want = FR.ref_session_features(*args, **kw, tick_size=TICK, **rules, **extra)
    got = F.session_features(*args, **kw, tick_size=TICK, **rules, **extra)
    assert_matches(got, want, f" [sizes={sizes}]")


@pytest.mark.filterwarnings("ignore::vpoc.sessions.SessionHoursWarning")  # random tz / rth_start (t8fix)
@pytest.mark.filterwarnings("ignore::vpoc.MissingDaysWarning")  # random sessions days apart
@settings()
@given(seed=st.integers(0, 2**32 - 1), sizes=st.lists(st.integers(0, 7), min_size=1, max_size=5),
       rules=rule_sets, with_open=st.booleans(), with_ts=st.booleans())
def test_bar_features_random(seed, sizes, rules, with_open, with_ts):
    d = make_bars(seed, sizes)
    args, kw = split(d, with_open=with_open, with_ts=with_ts)
    want = FR.ref_bar_features(*args, **kw, tick_size=TICK, **rules)
    got = F.bar_features(*args, **kw, tick_size=TICK, **rules)
    assert_matches(got, want, f" [sizes={sizes}]")


def test_legacy_distribution_on_synthetic_es():
    """distribute='legacy' (float shares): the engine's profiles are not fragile here, so every
    column matches the reference; the 40 lookbacks also match a pandas rolling formulation."""
    bars = vpoc.synth.es_bars(9, bars_per_session=45, seed=3)
    kw = dict(open=bars.open, offsets=bars.offsets, distribute="legacy", tick_size=TICK,
              lookbacks=(2, 4), composite_sessions=3)
    prof = R.ref_bars(bars.high, bars.low, bars.close, bars.volume, open=bars.open,
                      offsets=bars.offsets, tick_size=TICK, distribute="legacy")
    assert not prof["fragile"].any()
    want = FR.ref_session_features(bars.high, bars.low, bars.close, bars.volume, **kw)
    got = F.session_features(bars.high, bars.low, bars.close, bars.volume, **kw)
    assert_matches(got, want)
    frame = got.to_pandas().astype(np.float64)
    legacy = FR.legacy_pandas(frame, (2, 4))
    for name in legacy.columns:
        np.testing.assert_allclose(frame[name].to_numpy(), legacy[name].to_numpy(), rtol=2e-6,
                                   atol=1e-5, err_msg=name)


def test_legacy_lookbacks_match_pandas_rolling_full_size():
    """The 40 default lookback features over 300 synthetic sessions against pandas shift/rolling
    (the legacy FeatureEngineer's formulation), computed from the table's own base columns."""
    bars = vpoc.synth.es_bars(300, bars_per_session=60, seed=5)
    got = F.session_features(bars, tick_size=TICK)
    frame = got.to_pandas().astype(np.float64)
    legacy = FR.legacy_pandas(frame, (5, 10, 20, 50))
    assert list(got.columns[:54]) == list(F.legacy_columns())
    for name in legacy.columns:
        a, b = frame[name].to_numpy(), legacy[name].to_numpy()
        assert np.array_equal(np.isnan(a), np.isnan(b)), name
        np.testing.assert_allclose(a, b, rtol=5e-6, atol=1e-4, err_msg=name)
    assert np.isnan(frame["vpoc_std_50d"].to_numpy()[:49]).all()
    assert np.isfinite(frame["vpoc_std_50d"].to_numpy()[49:]).all()


# ------------------------------------------------------------------------------- no lookahead
def _replace_after(d, cut: int, seed: int, n_extra: int):
    """d with every bar from index ``cut`` on replaced by new random bars (and n_extra more)."""
    fresh = make_bars(seed, [d["close"].size - cut + n_extra])
    out = {}
    for k in ("high", "low", "close", "open", "volume", "timestamp"):
        out[k] = np.concatenate([d[k][:cut], fresh[k]])
    out["timestamp"][cut:] = np.maximum(out["timestamp"][cut:], d["timestamp"][max(cut - 1, 0)])
    return out


@pytest.mark.filterwarnings("ignore::vpoc.MissingDaysWarning")  # random sessions days apart (t5fix)
def test_session_features_no_lookahead():
    d = make_bars(11, [20, 25, 0, 22, 18, 30, 21, 19])
    args, kw = split(d)
    rules = dict(tick_size=TICK, lookbacks=(2, 3), composite_sessions=2)
    base = F.session_features(*args, **kw, **rules)
    for s in (0, 2, 4, 6):
        cut = int(d["offsets"][s + 1])
        new = _replace_after(d, cut, seed=100 + s, n_extra=7)
        offs = np.concatenate([d["offsets"][:s + 2], d["offsets"][s + 2:] + 7])
        other = F.session_features(new["high"], new["low"], new["close"], new["volume"],
                                   open=new["open"], timestamp=new["timestamp"], offsets=offs,
                                   **rules)
        assert np.array_equal(base.values[:s + 1], other.values[:s + 1], equal_nan=True), s
        assert not np.array_equal(base.values[s + 1:], other.values[s + 1:], equal_nan=True)


@pytest.mark.filterwarnings("ignore::vpoc.MissingDaysWarning")  # random sessions days apart
def test_bar_features_no_lookahead():
    d = make_bars(12, [40, 35, 0, 45, 38])
    args, kw = split(d)
    rules = dict(tick_size=TICK, composite_sessions=2)
    base = F.bar_features(*args, **kw, **rules)
    for i in (0, 17, 39, 40, 60, 90, 140):
        new = _replace_after(d, i + 1, seed=200 + i, n_extra=5)
        offs = d["offsets"].copy()
        offs[-1] += 5
        other = F.bar_features(new["high"], new["low"], new["close"], new["volume"],
                               open=new["open"], timestamp=new["timestamp"], offsets=offs, **rules)
        assert np.array_equal(base.values[:i + 1], other.values[:i + 1], equal_nan=True), i
        assert not np.array_equal(base.values[i + 1:i + 6], other.values[i + 1:i + 6], equal_nan=True)


# ------------------------------------------------------------------------------- rules by hand
def _close_bars(hists, start_rows):
    """Bars that put hist[r] on row start + r (distribute='close'), one session per hist."""
    close, vol, offs = [], [], [0]
    for hist, start in zip(hists, start_rows):
        for r, v in enumerate(hist):
            close.append((start + r) * TICK)
            vol.append(v)
        offs.append(len(close))
    c = np.array(close)
    return c, c, c, np.array(vol, dtype=np.int64), np.array(offs)


def test_shape_nodes_by_hand():
    hists = [[1, 1, 1, 2, 5, 9, 5], [5, 9, 5, 2, 1, 1, 1], [1, 3, 6, 9, 6, 3, 1], [1, 8, 3, 1, 3, 9, 2]]
    h, l, c, v, offs = _close_bars(hists, [100, 200, 300, 400])
    t = F.session_features(h, l, c, v, offsets=offs, tick_size=TICK, distribute="close",
                           node_smoothing=1, node_order=1, lookbacks=())
    shapes = ["".join(s for s in F.SHAPES if t[f"shape_{s}"][i] == 1) for i in range(4)]
    assert shapes == ["P", "b", "D", "B"]
    np.testing.assert_array_equal(t["hvn_count"], [1, 1, 1, 2])
    np.testing.assert_array_equal(t["lvn_count"], [0, 0, 0, 1])  # row 3 (volume 1) of the B
    # the B session closes at its last row (406): HVNs at 401 and 405 are 5 and 1 ticks below
    assert t["hvn_below_dist"][3] == 1 and np.isnan(t["hvn_above_dist"][3])
    assert t["lvn_below_dist"][3] == 3
    # a valley that is not deep enough is not a B
    t2 = F.session_features(h, l, c, v, offsets=offs, tick_size=TICK, distribute="close",
                            node_smoothing=1, node_order=1, lookbacks=(), shape_b_valley=0.1)
    assert t2["shape_B"][3] == 0 and t2["shape_P"][3] == 1


def test_naked_pocs_by_hand():
    # session 0: POC row 101 (range 100..102); session 1: range 105..110, POC 107 (101 untouched);
    # session 2: range 100..103 touches 101; POC 102
    hists = [[1, 5, 1], [1, 1, 5, 1, 1, 1], [1, 1, 5, 1]]
    h, l, c, v, offs = _close_bars(hists, [100, 105, 100])
    t = F.session_features(h, l, c, v, offsets=offs, tick_size=TICK, distribute="close",
                           lookbacks=(), poc_tie="low")
    np.testing.assert_array_equal(t["vpoc"], [101 * TICK, 107 * TICK, 102 * TICK])
    np.testing.assert_array_equal(t["naked_poc_count"], [1, 2, 2])  # {101}, {101, 107}, {107, 102}
    # session 2 closes at row 103: naked 107 is 4 ticks above, its own POC 102 one tick below
    assert t["naked_poc_above_dist"][2] == 4 and t["naked_poc_below_dist"][2] == 1
    aged = F.session_features(h, l, c, v, offsets=offs, tick_size=TICK, distribute="close",
                              lookbacks=(), naked_max_age=1)
    np.testing.assert_array_equal(aged["naked_poc_count"], [1, 1, 1])
    bars = F.bar_features(h, l, c, v, offsets=offs, tick_size=TICK, distribute="close")
    np.testing.assert_array_equal(bars["naked_poc_count"], [0] * 3 + [1] * 6 + [2] * 4)


@pytest.mark.filterwarnings("ignore::vpoc.sessions.SessionHoursWarning")  # 13:30 UTC across DST on purpose (t8fix)
def test_initial_balance_tpo_across_dst():
    """IB and TPO periods follow Chicago wall time on both sides of the March 2024 change."""
    def session(date, minutes_ct, utc_offset_h):
        base = np.datetime64(date, "ns").astype(np.int64)
        return [base + (m + utc_offset_h * 60) * NS_MIN for m in minutes_ct]

    # 08:30 CT is 14:30 UTC before 2024-03-10 and 13:30 UTC after
    ct = [8 * 60 + 20, 8 * 60 + 30, 8 * 60 + 45, 9 * 60 + 29, 9 * 60 + 30, 10 * 60 + 5]
    ts = np.array(session("2024-03-08", ct, 6) + session("2024-03-11", ct, 5), dtype=np.int64)
    highs = np.array([10, 11, 12, 13, 20, 14] * 2, dtype=np.float64) + 100
    lows = highs - 1
    close = highs - 0.5
    vol = np.full(12, 5, dtype=np.int64)  # 1 per tick: integer histograms
    offs = [0, 6, 12]
    t = F.session_features(highs, lows, close, vol, timestamp=ts, offsets=offs, tick_size=TICK,
                           lookbacks=())
    np.testing.assert_array_equal(t["ib_high"], [113, 113])
    np.testing.assert_array_equal(t["ib_low"], [110, 110])
    np.testing.assert_array_equal(t["ib_range"], [3, 3])
    want = FR.ref_session_features(highs, lows, close, vol, timestamp=ts, offsets=offs,
                                   tick_size=TICK, lookbacks=())
    assert_matches(t, want)
    # a naive UTC clock would put the IB an hour later in March 8 (08:30 UTC-5 = 13:30 UTC)
    utc = F.session_features(highs, lows, close, vol, timestamp=ts, offsets=offs, tick_size=TICK,
                             lookbacks=(), tz="UTC", rth_start="13:30")
    assert utc["ib_high"][1] == 113 and utc["ib_high"][0] != 113


@pytest.mark.parametrize("tz", ["America/Chicago", "Europe/London", "Australia/Lord_Howe",
                                "Asia/Kolkata", dt.timezone(dt.timedelta(hours=-6))])
def test_utc_offsets_match_pandas(tz):
    rng = np.random.default_rng(0)
    lo = np.datetime64("1995-01-01", "ns").astype(np.int64)
    hi = np.datetime64("2040-01-01", "ns").astype(np.int64)
    ts = np.sort(rng.integers(lo, hi, 20000))
    # and instants a second around every 2024 transition of the zone
    got = F._utc_offset_ns(ts, F._tzinfo(tz))
    # a zoneinfo object, not the name: pandas < 3 maps names to pytz, whose rules stop in 2037
    tz = zoneinfo.ZoneInfo(tz) if isinstance(tz, str) else tz
    idx = pd.to_datetime(ts, unit="ns", utc=True).tz_convert(tz)
    want = idx.tz_localize(None).as_unit("ns").asi8 - ts
    np.testing.assert_array_equal(got, want)
    dense = np.arange(np.datetime64("2024-01-01", "ns").astype(np.int64),
                      np.datetime64("2025-01-01", "ns").astype(np.int64), 997 * 10**9)
    idx = pd.to_datetime(dense, unit="ns", utc=True).tz_convert(tz)
    np.testing.assert_array_equal(F._utc_offset_ns(dense, F._tzinfo(tz)),
                                  idx.tz_localize(None).as_unit("ns").asi8 - dense)


# ------------------------------------------------------------------------------- edge cases
def test_edge_sessions_against_reference():
    # empty first/middle/last sessions, one bar, one price, zero volume
    h = np.array([10.0, 10.0, 10.0, 11.0, 12.5, 12.0, 13.0, 13.0, 9.0])
    l = np.array([9.5, 10.0, 10.0, 10.0, 11.0, 11.5, 12.0, 13.0, 8.0])
    c = np.array([9.75, 10.0, 10.0, 10.5, 12.0, 11.5, 12.5, 13.0, 8.5])
    v = np.array([3, 4, 2, 0, 0, 0, 6, 6, 1])
    offs = np.array([0, 0, 1, 3, 3, 6, 8, 9, 9])
    for kw in (dict(lookbacks=(1, 2), composite_sessions=2), dict(lookbacks=(3,), poc_tie="high")):
        want = FR.ref_session_features(h, l, c, v, open=c, offsets=offs, tick_size=TICK, **kw)
        got = F.session_features(h, l, c, v, open=c, offsets=offs, tick_size=TICK, **kw)
        assert_matches(got, want)
        assert np.isnan(got.values[[0, 3, 7]]).all()  # empty sessions: all NaN
    one_price = got.values[2]
    assert np.isnan(got["close_va_position"][2]) and got["shape_D"][2] == 1 and one_price[1] == 6
    assert got["total_volume"][4] == 0 and got["vwap"][4] == c[5]  # zero volume: VWAP = close
    kw = dict(composite_sessions=2)
    assert_matches(F.bar_features(h, l, c, v, open=c, offsets=offs, tick_size=TICK, **kw),
                   FR.ref_bar_features(h, l, c, v, open=c, offsets=offs, tick_size=TICK, **kw))


def test_no_rows_and_no_sessions():
    e = np.zeros(0)
    for offs in ([0], [0, 0, 0]):
        t = F.session_features(e, e, e, e, offsets=offs, tick_size=TICK, timestamp=e.astype(np.int64))
        assert t.shape == (len(offs) - 1, 79) and np.isnan(t.values).all()
        b = F.bar_features(e, e, e, e, offsets=offs, tick_size=TICK, timestamp=e.astype(np.int64))
        assert b.shape == (0, 28)


def test_without_open_and_timestamp():
    d = make_bars(4, [12, 15, 9])
    t = F.session_features(d["high"], d["low"], d["close"], d["volume"], offsets=d["offsets"],
                           tick_size=TICK)
    assert "ib_high" not in t and "tpo_poc" not in t and len(t.columns) == 74
    for name in ("session_open", "range_pct", "close_change_pct"):
        assert np.isnan(t[name]).all()
    assert np.isfinite(t["vpoc"]).all()


def test_last_bar_developing_levels_are_the_session_levels():
    bars = vpoc.synth.es_bars(6, bars_per_session=120, seed=9)
    sess = F.session_features(bars, tick_size=TICK, lookbacks=())
    tab = F.bar_features(bars, tick_size=TICK)
    last = bars.offsets[1:] - 1
    close = bars.close[last]
    for k, name in (("poc", "vpoc"), ("vah", "value_area_high"), ("val", "value_area_low")):
        np.testing.assert_array_equal(tab[f"dev_{k}_dist"][last], (close - sess[name]) / TICK)
    np.testing.assert_array_equal(tab["naked_poc_count"][bars.offsets[1:-1]],
                                  sess["naked_poc_count"][:-1])


# ------------------------------------------------------------------------------- inputs
def test_synthbars_and_dataframe_inputs():
    bars = vpoc.synth.es_bars(8, bars_per_session=90, seed=2)
    rules = dict(tick_size=TICK, lookbacks=(2,), composite_sessions=2)
    a = F.session_features(bars.high, bars.low, bars.close, bars.volume, open=bars.open,
                           timestamp=bars.timestamp, offsets=bars.offsets, **rules)
    b = F.session_features(bars, **rules)
    df = bars.to_pandas()
    df["timestamp"] = df["timestamp"].dt.tz_convert("America/Chicago")  # tz-aware, converted back
    c = F.session_features(df, **rules)
    tables = [b, c]
    try:
        import polars as pl
    except ImportError:  # pragma: no cover - polars is optional
        pl = None
    if pl is not None:
        tables.append(F.session_features(pl.from_pandas(bars.to_pandas()), **rules))
    for t in tables:
        assert t.columns == a.columns
        assert np.array_equal(t.values, a.values, equal_nan=True)
    np.testing.assert_array_equal(b.session_labels, bars.session_labels)
    np.testing.assert_array_equal(c.session_labels, bars.session_labels)
    ids = F.session_features(bars.high, bars.low, bars.close, bars.volume, open=bars.open,
                             session_ids=bars.session_id, **rules)
    np.testing.assert_array_equal(ids.session_labels, bars.session_labels)
    dt64 = F.bar_features(bars, tick_size=TICK)
    ns = F.bar_features(bars.high, bars.low, bars.close, bars.volume, open=bars.open,
                        timestamp=bars.timestamp.astype("datetime64[ns]").astype("datetime64[s]"),
                        offsets=bars.offsets, tick_size=TICK)
    assert np.array_equal(dt64.values, ns.values, equal_nan=True)


def test_bad_input():
    d = make_bars(5, [6, 6])
    args, kw = split(d)
    bad = [
        (dict(lookbacks=[0]), ValueError, "lookbacks"),
        (dict(lookbacks=[3, 3]), ValueError, "lookbacks"),
        (dict(lookbacks="5"), TypeError, "lookbacks"),
        (dict(lookbacks=[2.5]), TypeError, "lookbacks"),
        (dict(composite_sessions=0), ValueError, "composite_sessions"),
        (dict(naked_max_age=0), ValueError, "naked_max_age"),
        (dict(node_smoothing=2), ValueError, "node_smoothing"),
        (dict(node_order=0), ValueError, "node_order"),
        (dict(hvn_threshold=1.5), ValueError, "hvn_threshold"),
        (dict(lvn_threshold="x"), TypeError, "lvn_threshold"),
        (dict(shape_edge=0.6), ValueError, "shape_edge"),
        (dict(shape_b_peak=0.0), ValueError, "shape_b_peak"),
        (dict(shape_b_valley=True), TypeError, "shape_b_valley"),
        (dict(tz="Mars/Olympus_Mons"), ValueError, "tz"),
        (dict(tz=5), TypeError, "tz"),
        (dict(rth_start="8h30"), ValueError, "rth_start"),
        (dict(rth_start=830), TypeError, "rth_start"),
        (dict(ib_minutes=0), ValueError, "ib_minutes"),
        (dict(tpo_minutes=0), ValueError, "tpo_minutes"),
        (dict(timestamp=d["timestamp"][:-1]), ValueError, "timestamp"),
        (dict(timestamp=d["timestamp"].astype(np.float64)), TypeError, "timestamp"),
        (dict(timestamp=np.full(12, np.datetime64("NaT", "ns"), dtype="datetime64[ns]")), ValueError, "NaT"),
        (dict(tick_size=0.0), ValueError, "tick_size"),
        (dict(distribute="middle"), ValueError, "distribute"),
        (dict(offsets=[0, 5, 4, 12]), ValueError, "offsets"),
    ]
    for change, exc, match in bad:
        call = {**kw, "tick_size": TICK, **change}
        with pytest.raises(exc, match=match):
            F.session_features(*args, **call)
    with pytest.raises(ValueError, match="high"):
        F.session_features(d["low"] - 1, d["low"], d["close"], d["volume"], tick_size=TICK)
    with pytest.raises(TypeError, match="low, close and volume"):
        F.session_features(d["high"], tick_size=TICK)
    bars = vpoc.synth.es_bars(2, bars_per_session=10)
    with pytest.raises(TypeError, match="do not pass low"):
        F.session_features(bars, bars.low, tick_size=TICK)
    with pytest.raises(ValueError, match="volume"):
        F.session_features(bars.to_pandas().drop(columns="volume"), tick_size=TICK)
    for change, exc, match in ((dict(node_order=-1), ValueError, "node_order"),
                               (dict(timestamp=d["timestamp"][:3]), ValueError, "timestamp")):
        with pytest.raises(exc, match=match):
            F.bar_features(*args, **{**kw, "tick_size": TICK, **change})


# ------------------------------------------------------------------------------- FeatureTable
def test_feature_table_exports_share_memory():
    torch = pytest.importorskip("torch")
    t = F.session_features(vpoc.synth.es_bars(12, bars_per_session=50, seed=1), tick_size=TICK,
                           lookbacks=(2,))
    assert t.values.dtype == np.float32 and t.values.flags.c_contiguous and t.values.flags.writeable
    assert len(t) == 12 and t.shape == (12, len(t.columns)) and t.kind == "session"
    assert np.shares_memory(t["vpoc"], t.values) and np.asarray(t) is t.values and t.numpy() is t.values
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert not np.shares_memory(np.array(t, copy=True), t.values)
    x = t.to_torch()
    assert x.dtype == torch.float32 and x.data_ptr() == t.values.ctypes.data
    y = torch.from_dlpack(t)
    assert y.data_ptr() == t.values.ctypes.data and tuple(y.shape) == t.shape
    assert t.__dlpack_device__() == (1, 0)
    df = t.to_pandas()
    assert list(df.columns) == list(t.columns) and df.index.name == "session"
    np.testing.assert_array_equal(df.index.to_numpy(), t.session_labels)
    sub = t.select(["vwap", "vpoc"])
    assert sub.columns == ("vwap", "vpoc") and np.array_equal(sub.values[:, 1], t["vpoc"])
    with pytest.raises(KeyError, match="nope"):
        t["nope"]
    with pytest.raises(TypeError, match="column name"):
        t[0]
    with pytest.raises(ValueError, match="float64"):
        t.__array__(np.float64, copy=False)
    b = F.bar_features(vpoc.synth.es_bars(3, bars_per_session=20, seed=1), tick_size=TICK)
    bdf = b.to_pandas()
    assert bdf.index.names == ["session", "bar"] and len(bdf) == 60
    np.testing.assert_array_equal(bdf.index.get_level_values("bar")[:21], list(range(20)) + [0])
    assert b.to_torch("cpu").data_ptr() == b.values.ctypes.data
    assert "FeatureTable(kind='bar'" in repr(b)


@pytest.mark.gpu
@pytest.mark.skipif(not vpoc.gpu_available(), reason="needs a GPU build of vpoc and a GPU")
@pytest.mark.filterwarnings("ignore::vpoc.MissingDaysWarning")  # sessions days apart (the H200 run of d453119)
def test_gpu_engine_gives_the_cpu_features():
    """device='cuda' runs the engine on the GPU; with whole-number volumes the profiles (and so
    every feature) equal the CPU's exactly, and to_torch() lands on the GPU."""
    torch = pytest.importorskip("torch")
    d = make_bars(21, [60, 0, 55, 70, 65, 58])
    args, kw = split(d)
    for fn in (F.session_features, F.bar_features):
        cpu = fn(*args, **kw, tick_size=TICK, distribute="close")
        gpu = fn(*args, **kw, tick_size=TICK, distribute="close", device="cuda")
        assert gpu.device.startswith("cuda")
        assert np.array_equal(cpu.values, gpu.values, equal_nan=True)
        assert gpu.to_torch().device.type == "cuda"
        assert gpu.to_torch("cpu").device == torch.device("cpu")
