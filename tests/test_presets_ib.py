"""Initial balance / opening range rules ib_end, ib_anchor, opening_minutes and preset= on vpoc.tpo and session_features.

Contract checked: docs/presets.md against a plain NumPy reference (loops over bars) on random sessions, py-market-profile's golden google.csv and, when installed, py-market-profile 0.2.0 itself.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import vpoc
from vpoc.features import session_features
import _deps

# the IB tests' clock is UTC on purpose (t8fix)
pytestmark = pytest.mark.filterwarnings("ignore::vpoc.sessions.SessionHoursWarning")

GOLDEN = Path(__file__).parent / "data" / "marketprofile_google.csv"
MIN = 60 * 10**9
DAY = 1440 * MIN
RTH = (8 * 60 + 30) * MIN  # rth_start "08:30", tz "UTC"


def ref_window(ts, offsets, minutes, end, anchor):
    """Per bar: in its session's window of `minutes` (plain loops; sessions without trade dates:
    'rth' is every bar whose time of day lies in the window after 08:30 UTC, modulo a day)."""
    out = np.zeros(ts.size, dtype=bool)
    length = minutes * MIN
    for s in range(len(offsets) - 1):
        for i in range(offsets[s], offsets[s + 1]):
            since = int(ts[i] - ts[offsets[s]]) if anchor == "first_bar" else (int(ts[i]) % DAY - RTH) % DAY
            out[i] = 0 <= since <= length if end == "inclusive" else 0 <= since < length
    return out


def ref_range(mask, high, low, offsets):
    hi = np.full(len(offsets) - 1, np.nan)
    lo = np.full(len(offsets) - 1, np.nan)
    for s in range(len(offsets) - 1):
        m = mask[offsets[s]:offsets[s + 1]]
        if m.any():
            hi[s] = high[offsets[s]:offsets[s + 1]][m].max()
            lo[s] = low[offsets[s]:offsets[s + 1]][m].min()
    return hi, lo


def random_bars(rng):
    """Sessions of bars at 5-minute steps (so bars land exactly on +10 / +60 minutes), starting at
    08:30 UTC or a few steps off it, with gaps; an empty session sometimes."""
    lens = [int(x) for x in rng.choice([0, 1, 3, 14, 30], size=int(rng.integers(1, 5)))]
    ts, day = [], 19000
    for n in lens:
        start = day * DAY + RTH + int(rng.integers(-3, 4)) * 5 * MIN
        steps = np.cumsum(rng.choice([1, 1, 1, 2, 3], size=n)) - 1
        ts.extend(start + steps * 5 * MIN)
        day += 1
    n = len(ts)
    low = np.round(100 + rng.integers(0, 40, size=n) * 0.25, 2)
    high = low + rng.integers(0, 5, size=n) * 0.25
    return np.array(ts, dtype=np.int64), high, low, np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)


@_deps.needs("pandas")
@pytest.mark.filterwarnings("ignore::vpoc.IncompleteSessionWarning")  # session_features reports them as tpo (t5fix)
@pytest.mark.parametrize("seed", range(30))
def test_ib_and_opening_range_match_reference(seed):
    rng = np.random.default_rng(seed)
    ts, high, low, off = random_bars(rng)
    end = ("exclusive", "inclusive")[seed % 2]
    anchor = ("rth", "first_bar")[(seed // 2) % 2]
    om = (None, 10, 45)[seed % 3]
    kw = dict(timestamp=ts.astype("datetime64[ns]"), offsets=off, tick_size=0.25, tz="UTC", rth_start="08:30",
              ib_end=end, ib_anchor=anchor)
    t = vpoc.tpo(high, low, opening_minutes=om, incomplete="ignore", **kw)
    ib_hi, ib_lo = ref_range(ref_window(ts, off, 60, end, anchor), high, low, off)
    or_hi, or_lo = ref_range(ref_window(ts, off, 30 if om is None else om, end, anchor), high, low, off)
    np.testing.assert_array_equal(t.ib_high, ib_hi)
    np.testing.assert_array_equal(t.ib_low, ib_lo)
    np.testing.assert_array_equal(t.or_high, or_hi)
    np.testing.assert_array_equal(t.or_low, or_lo)
    close = (high + low) / 2
    close = np.round(close * 4) / 4
    f = session_features(high, low, close, np.ones(high.size), opening_minutes=om, tpo_columns=True, lookbacks=(2,),
                         **kw).to_pandas()
    for col, exp in (("ib_high", ib_hi), ("ib_low", ib_lo), ("or_high", or_hi), ("or_low", or_lo)):
        np.testing.assert_array_equal(f[col].to_numpy(), exp.astype(np.float32), err_msg=col)


@pytest.mark.filterwarnings("ignore::vpoc.PresetWarning")  # the profile rules of the preset are not applied here (t5fix)
def test_inclusive_end_takes_the_bar_at_the_end():
    ts = (19000 * DAY + RTH + np.array([0, 30, 60, 90]) * MIN).astype(np.int64)
    high = np.array([10.0, 11.0, 15.0, 20.0])
    low = np.array([9.0, 8.0, 7.0, 1.0])
    kw = dict(timestamp=ts.astype("datetime64[ns]"), offsets=np.array([0, 4]), tick_size=1.0, tz="UTC",
              incomplete="ignore")
    assert vpoc.tpo(high, low, **kw).ib_high[0] == 11.0
    assert vpoc.tpo(high, low, ib_end="inclusive", **kw).ib_high[0] == 15.0
    # bars at 09:00, 09:30, 10:00, 10:30: 'rth' [08:30, 09:30) holds the first only; anchored at
    # the first bar and inclusive (py-market-profile) [09:00, 10:00] holds three
    late = ts + 30 * MIN
    kw["timestamp"] = late.astype("datetime64[ns]")
    assert vpoc.tpo(high, low, **kw).ib_high[0] == 10.0
    assert vpoc.tpo(high, low, preset="marketprofile", **kw).ib_high[0] == 15.0
    assert vpoc.tpo(high, low, preset="marketprofile", **kw).or_high[0] == 10.0  # 10 minutes: the first bar


def _golden():
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(GOLDEN, parse_dates=["Timestamp"])
    ts = df.Timestamp.to_numpy().astype("datetime64[ns]")
    return df, ts


@pytest.mark.filterwarnings("ignore::vpoc.PresetWarning")  # the profile rules of the preset are not applied here (t5fix)
@pytest.mark.filterwarnings("ignore::vpoc.IncompleteSessionWarning")  # session_features reports them as tpo (t5fix)
def test_golden_google_ib_and_opening_range():
    """py-market-profile's own expected IB 927.74 - 935.53 and opening range 927.74 - 927.74
    (tests/market_profile_test.py, the whole file as one slice) with preset='marketprofile'."""
    df, ts = _golden()
    kw = dict(timestamp=ts, offsets=np.array([0, len(df)]), tick_size=0.0001, tz="UTC")
    args = (df.High.to_numpy(), df.Low.to_numpy(), df.Close.to_numpy(), df.Volume.to_numpy().astype(float))
    t = vpoc.tpo(*args, preset="marketprofile", incomplete="ignore", **kw)
    assert (t.ib_low[0], t.ib_high[0], t.or_low[0], t.or_high[0]) == (927.74, 935.53, 927.74, 927.74)
    f = session_features(*args, preset="marketprofile", tpo_columns=True, lookbacks=(2,), **kw).to_pandas()
    got = [f[k].iloc[0] for k in ("ib_low", "ib_high", "or_low", "or_high")]
    assert got == [np.float32(x) for x in (927.74, 935.53, 927.74, 927.74)]
    plain = vpoc.tpo(*args, incomplete="ignore", **kw)  # 08:30 UTC on each day: another window
    assert (plain.ib_low[0], plain.ib_high[0]) != (927.74, 935.53)


@pytest.mark.filterwarnings("ignore::vpoc.PresetWarning")  # the profile rules of the preset are not applied here (t5fix)
def test_peer_ib_and_opening_range_on_random_sessions():
    """py-market-profile 0.2.0's initial_balance() / open_range() of each session slice equal
    preset='marketprofile' (skips without market_profile / pandas / scipy)."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("scipy")
    mp = pytest.importorskip("market_profile")
    rng = np.random.default_rng(11)
    for _ in range(25):
        ts, high, low, off = random_bars(rng)
        t = vpoc.tpo(high, low, timestamp=ts.astype("datetime64[ns]"), offsets=off, tick_size=0.25, tz="UTC",
                     preset="marketprofile", incomplete="ignore")
        for s in range(len(off) - 1):
            a, b = off[s], off[s + 1]
            if a == b:
                assert np.isnan(t.ib_high[s])
                continue
            idx = pd.DatetimeIndex(ts[a:b])
            df = pd.DataFrame({"Open": low[a:b], "High": high[a:b], "Low": low[a:b], "Close": low[a:b],
                               "Volume": np.ones(b - a)}, index=idx)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sl = mp.MarketProfile(df, tick_size=0.25)[idx[0]:idx[-1]]
                ib, orr = sl.initial_balance(), sl.open_range()
            assert (t.ib_low[s], t.ib_high[s]) == (float(ib[0]), float(ib[1]))
            assert (t.or_low[s], t.or_high[s]) == (float(orr[0]), float(orr[1]))


@pytest.mark.filterwarnings("ignore::vpoc.PresetWarning")  # the profile rules of the preset are not applied here (t5fix)
def test_preset_sets_and_keyword_wins_and_rules_recorded():
    ts = (19000 * DAY + RTH + np.array([0, 30, 60, 90]) * MIN).astype(np.int64)
    high = np.array([10.0, 11.0, 15.0, 20.0])
    kw = dict(timestamp=ts.astype("datetime64[ns]"), offsets=np.array([0, 4]), tick_size=1.0, tz="UTC",
              incomplete="ignore")
    t = vpoc.tpo(high, high - 1, preset="marketprofile", ib_end="exclusive", **kw)
    assert t.ib_high[0] == 11.0
    assert (t.rules["ib_end"], t.rules["ib_anchor"], t.rules["opening_minutes"]) == ("exclusive", "first_bar", 10)
    for p in ("cbot", "lean"):
        assert vpoc.tpo(high, high - 1, preset=p, **kw).ib_high[0] == 11.0


@pytest.mark.parametrize("kw,exc,name", [
    (dict(ib_end="closed"), ValueError, "ib_end"),
    (dict(ib_end=1), TypeError, "ib_end"),
    (dict(ib_anchor="open"), ValueError, "ib_anchor"),
    (dict(ib_anchor=None, preset="tv"), ValueError, "preset"),
    (dict(preset=3), TypeError, "preset"),
    (dict(opening_minutes=0), ValueError, "opening_minutes"),
])
def test_bad_values_name_the_keyword(kw, exc, name):
    ts = (19000 * DAY + RTH + np.arange(3) * MIN).astype("datetime64[ns]")
    h = np.array([2.0, 3.0, 4.0])
    with pytest.raises(exc, match=name):
        vpoc.tpo(h, h - 1, timestamp=ts, offsets=np.array([0, 3]), tick_size=1.0, incomplete="ignore", **kw)
    with pytest.raises(exc, match=name):
        session_features(h, h - 1, h, h, timestamp=ts, offsets=np.array([0, 3]), tick_size=1.0, **kw)
