"""bins=N / accumulate / bin_report and preset="wickra" (plus the platform presets) against a plain reference and wickra 2.0.0.

Contract: docs/presets.md; tests/bins_reference.py is the independent reference, wickra itself runs when installed.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import vpoc
from bins_reference import histogram, levels, session_rows, value_area

LEVEL_FIELDS = ("poc", "vah", "val", "poc_row", "vah_row", "val_row", "n_rows", "total_volume", "va_volume")



def left_sum(xs) -> float:
    """0.0 + x0 + x1 + ... in order (wickra's total; Python 3.12's sum() compensates, numpy's pairs)."""
    t = 0.0
    for x in xs:
        t += x
    return t

def random_bars(rng, n):
    """n bars of float prices (not on any grid), whole or fractional volumes with zeros and ties."""
    base = 100.0 + rng.normal(0.0, 2.0)
    low = base + rng.normal(0.0, 1.0, n).cumsum() * rng.choice([0.1, 1.0])
    high = low + np.where(rng.random(n) < 0.2, 0.0, rng.exponential(0.7, n))
    kind = rng.integers(0, 3)
    vol = (rng.integers(0, 6, n) * 10.0 if kind == 0 else rng.integers(0, 1000, n).astype(np.float64) if kind == 1
           else np.round(rng.exponential(50.0, n), 3))
    vol[rng.random(n) < 0.15] = 0.0
    close = low + (high - low) * rng.random(n)
    return high, low, np.minimum(np.maximum(close, low), high), vol


def random_sessions(rng):
    counts = rng.integers(0, 30, rng.integers(1, 6))
    parts = [random_bars(rng, int(c)) for c in counts]
    cat = [np.concatenate([p[k] for p in parts]) for k in range(4)]
    return (*cat, np.concatenate(([0], np.cumsum(counts))).astype(np.int64))


def check_sequential(prof, high, low, vol, off, n, pct, centers=False):
    for s, (b, e) in enumerate(session_rows(off)):
        if e == b:
            assert prof.n_rows[s] == 0 and np.isnan(prof.poc[s]) and np.isnan(prof.bin_low[s])
            continue
        bins, lo, w = histogram(high[b:e], low[b:e], vol[b:e], n)
        np.testing.assert_array_equal(prof.session(s)[1], bins)
        assert prof.bin_low[s] == lo and prof.bin_width[s] == w
        poc, a, z, acc = levels(bins, pct)
        assert (prof.poc_row[s], prof.val_row[s], prof.vah_row[s]) == (poc, a, z)
        assert prof.va_volume[s] == acc and prof.total_volume[s] == left_sum(bins)
        assert (prof.poc[s], prof.vah[s], prof.val[s]) == value_area(high[b:e], low[b:e], vol[b:e], n, pct, centers)


@pytest.mark.parametrize("seed", range(40))
def test_wickra_preset_matches_reference(seed):
    rng = np.random.default_rng(seed)
    high, low, close, vol, off = random_sessions(rng)
    n = int(rng.choice([1, 2, 3, 7, 24, 50]))
    pct = float(rng.choice([0.7, 0.5, 1.0, 0.68]))
    centers = bool(seed % 2)
    prof = vpoc.from_bars(high, low, close, vol, offsets=off, tick_size=0.01, preset="wickra", bins=n,
                          value_area=pct, bin_report="centers" if centers else None)
    check_sequential(prof, high, low, vol, off, n, pct, centers)
    assert prof.rules["bins"] == n and prof.rules["accumulate"] == "sequential"
    # trades: a trade is a bar whose high is its low
    t = vpoc.from_trades(low, vol, offsets=off, tick_size=0.01, preset="wickra", bins=n, value_area=pct)
    check_sequential(t, low, low, vol, off, n, pct)
    # threads do not change the bits
    again = vpoc.from_bars(high, low, close, vol, offsets=off, tick_size=0.01, preset="wickra", bins=n,
                           value_area=pct, bin_report="centers" if centers else None, threads=1)
    for k in LEVEL_FIELDS + ("volume",):
        np.testing.assert_array_equal(getattr(prof, k), getattr(again, k), err_msg=k)


@pytest.mark.parametrize("seed", range(20))
def test_exact_accumulation(seed):
    """accumulate='exact': every bin the exact sum of its shares (to float64's last bits), the total
    exact, the same bits in any row order; levels from the exact bins (vpoc's 1e-9 ties)."""
    rng = np.random.default_rng(100 + seed)
    high, low, close, vol, off = random_sessions(rng)
    vol = np.floor(vol)
    n = int(rng.choice([1, 3, 7, 24]))
    prof = vpoc.from_bars(high, low, close, vol, offsets=off, tick_size=0.01, bins=n, va_method="single",
                          poc_tie="low")
    assert prof.rules["accumulate"] == "exact" and prof.rules["preset"] is None
    for s, (b, e) in enumerate(session_rows(off)):
        if e == b:
            continue
        exact, lo, w = histogram(high[b:e], low[b:e], vol[b:e], n, exact=True)
        np.testing.assert_allclose(prof.session(s)[1], [float(x) for x in exact], rtol=1e-15, atol=1e-12)
        assert prof.total_volume[s] == float(vol[b:e].sum())
        poc, a, z, _ = levels(exact, 0.70)
        assert (prof.poc_row[s], prof.val_row[s], prof.vah_row[s]) == (poc, a, z)
        perm = b + rng.permutation(e - b)
        one = vpoc.from_bars(high[perm], low[perm], close[perm], vol[perm], tick_size=0.01, bins=n)
        np.testing.assert_array_equal(one.volume, prof.session(s)[1])


@pytest.mark.parametrize("window", [None, 1, 3, 8])
def test_developing_rebuilds_each_prefix(window):
    rng = np.random.default_rng(7)
    high, low, close, vol, off = random_sessions(rng)
    prof = vpoc.from_bars(high, low, close, vol, offsets=off, tick_size=0.01, preset="wickra", bins=10,
                          developing=True, window=window)
    for b, e in session_rows(off):
        for i in range(b, e):
            start = b if window is None else max(b, i - window + 1)
            want = value_area(high[start:i + 1], low[start:i + 1], vol[start:i + 1], 10)
            assert (prof.dev_poc[i], prof.dev_vah[i], prof.dev_val[i]) == want


@pytest.mark.parametrize("window", [None, 4])
def test_developing_exact_equals_batch_of_each_prefix(window):
    rng = np.random.default_rng(8)
    high, low, close, vol, off = random_sessions(rng)
    kw = dict(tick_size=0.01, bins=9, poc_tie="center", va_method="cbot")
    prof = vpoc.from_bars(high, low, close, vol, offsets=off, developing=True, window=window, **kw)
    for b, e in session_rows(off):
        for i in range(b, e):
            start = b if window is None else max(b, i - window + 1)
            one = vpoc.from_bars(high[start:i + 1], low[start:i + 1], close[start:i + 1], vol[start:i + 1], **kw)
            assert (prof.dev_poc[i], prof.dev_vah[i], prof.dev_val[i]) == (one.poc[0], one.vah[0], one.val[0])


def test_edges():
    one = vpoc.from_bars([10.0], [9.0], [9.5], [40.0], tick_size=0.01, preset="wickra", bins=4)
    np.testing.assert_array_equal(one.volume, [10.0, 10.0, 10.0, 10.0])
    assert (one.poc[0], one.val[0], one.vah[0]) == (9.125, 9.0, 9.75)  # 10 + 10 + 10 >= 28
    # one price: every volume in bin 0, every level at it (wickra's degenerate window)
    flat = vpoc.from_trades([5.0, 5.0, 5.0], [1.0, 0.0, 2.0], tick_size=0.01, preset="wickra", bins=3)
    np.testing.assert_array_equal(flat.volume, [3.0, 0.0, 0.0])
    assert (flat.poc[0], flat.vah[0], flat.val[0], flat.bin_width[0]) == (5.0, 5.0, 5.0, 0.0)
    # zero volumes set the range but hold nothing; gaps stay empty bins
    z = vpoc.from_bars([1.0, 4.0, 1.0], [0.0, 3.0, 0.0], [0.5, 3.5, 0.5], [0.0, 0.0, 8.0], tick_size=0.01,
                       preset="wickra", bins=4)
    np.testing.assert_array_equal(z.volume, [4.0, 4.0, 0.0, 0.0])  # the top edge 1.0 lies in bin 1
    assert (z.bin_low[0], z.bin_width[0], z.poc_row[0]) == (0.0, 1.0, 0)
    allzero = vpoc.from_bars([2.0], [1.0], [1.5], [0.0], tick_size=0.01, preset="wickra", bins=2)
    assert (allzero.poc_row[0], allzero.val_row[0], allzero.vah_row[0], allzero.total_volume[0]) == (0, 0, 0, 0.0)
    # N=1: the whole range is one bin
    n1 = vpoc.from_bars([3.0, 5.0], [1.0, 2.0], [2.0, 3.0], [5.0, 7.0], tick_size=0.01, preset="wickra", bins=1)
    assert (n1.poc[0], n1.val[0], n1.vah[0]) == (3.0, 1.0, 5.0)
    # ties: the first maximum; up on up == down
    tie = vpoc.from_trades([0.0, 1.0, 2.0, 3.0], [5.0, 9.0, 5.0, 9.0], tick_size=0.01, preset="wickra", bins=4,
                           value_area=0.5)
    assert (tie.poc_row[0], tie.val_row[0], tie.vah_row[0]) == (1, 1, 2)
    # an empty session between two
    e = vpoc.from_trades([1.0, 2.0], [1.0, 1.0], offsets=[0, 1, 1, 2], tick_size=0.01, bins=2)
    assert list(e.n_rows) == [2, 0, 2] and np.isnan(e.bin_low[1]) and e.low_row[0] == 0


def test_wickra_unit_test_values():
    """wickra's own unit tests (MIT OR Apache-2.0), volume_profile.rs / value_area.rs / composite_profile.rs."""
    ref = vpoc.from_bars([10.0, 14.0], [10.0, 10.0], [10.0, 12.0], [100.0, 80.0], tick_size=0.01, preset="wickra",
                         bins=4)
    np.testing.assert_array_equal(ref.volume, [120.0, 20.0, 20.0, 20.0])  # reference_distribution
    flat = vpoc.from_bars([50.0, 50.0], [50.0, 50.0], [50.0, 50.0], [10.0, 20.0], tick_size=0.01, preset="wickra",
                          bins=4)
    assert flat.volume[0] == 30.0 and flat.volume[1] == 0.0  # degenerate_single_price_window
    c = vpoc.from_bars([100.0] * 5, [100.0] * 5, [100.0] * 5, [5.0] * 5, tick_size=0.01, preset="wickra", bins=20)
    assert (c.poc[0], c.vah[0], c.val[0]) == (100.0, 100.0, 100.0)  # constant_single_print...
    h = [100.5] * 4 + [110.5]
    lo = [99.5] * 4 + [109.5]
    k = vpoc.from_bars(h, lo, [100.0] * 4 + [110.0], [1.0] * 4 + [1000.0], tick_size=0.01, preset="wickra", bins=50)
    assert 109.5 <= k.poc[0] <= 110.5  # concentrated_volume_locates_poc_at_high_volume_bar


@pytest.mark.parametrize("kw, exc, name", [
    (dict(bins=0), ValueError, "bins"), (dict(bins=1.5), TypeError, "bins"), (dict(bins="3"), TypeError, "bins"),
    (dict(bins=True), TypeError, "bins"), (dict(bins=3, accumulate="fast"), ValueError, "accumulate"),
    (dict(bins=3, accumulate=1), TypeError, "accumulate"), (dict(bins=3, bin_report="edges"), ValueError, "bin_report"),
    (dict(accumulate="sequential"), ValueError, "accumulate"), (dict(bin_report="centers"), ValueError, "bin_report"),
    (dict(bins=3, va_method="greedy"), ValueError, "bins"), (dict(bins=3, distribute="close"), ValueError, "bins"),
    (dict(bins=3, va_rows="touched"), ValueError, "bins"), (dict(bins=3, va_target="decimal"), ValueError, "va_target"),
    (dict(bins=3, price_label="decimal"), ValueError, "bins"), (dict(preset="wickra", distribute="hlc3"), ValueError,
                                                               "bins"),
    (dict(preset="tv"), ValueError, "preset"),
])
def test_bad_values_name_the_keyword(kw, exc, name):
    with pytest.raises(exc, match=name):
        vpoc.from_bars([2.0], [1.0], [1.5], [1.0], tick_size=0.01, **kw)


def test_bad_rows_and_live():
    with pytest.raises(ValueError, match=r"high\[1\]"):
        vpoc.from_bars([2.0, 1.0], [1.0, 1.5], [1.5, 1.2], [1.0, 1.0], tick_size=0.01, bins=3)
    with pytest.raises(ValueError, match=r"volume\[0\]"):
        vpoc.from_trades([2.0], [-1.0], tick_size=0.01, preset="wickra")
    with pytest.raises(ValueError, match="bins"):
        vpoc.Live(tick_size=0.25, preset="wickra")


def test_platform_presets_record_their_assumptions():
    p, v = np.array([1.0, 1.25, 1.5, 1.5]), np.array([3.0, 5.0, 4.0, 1.0])
    nt = vpoc.from_trades(p, v, tick_size=0.25, preset="ninjatrader")
    ref = vpoc.from_trades(p, v, tick_size=0.25, value_area=0.68, va_method="single")
    for k in LEVEL_FIELDS:
        np.testing.assert_array_equal(getattr(nt, k), getattr(ref, k), err_msg=k)
    assert "va_method" in nt.rules["assumed"] and nt.rules["preset"] == "ninjatrader"
    assert vpoc.from_trades(p, v, tick_size=0.25, preset="ninjatrader", value_area=0.7).va_volume[0] == \
        vpoc.from_trades(p, v, tick_size=0.25, va_method="single").va_volume[0]
    sc = vpoc.from_trades(p, v, tick_size=0.25, preset="sierra")
    assert sc.rules["va_method"] == "cbot" and "poc_tie" in sc.rules["assumed"]
    tv = vpoc.from_bars(p + 0.5, p, p, v, tick_size=0.25, preset="tradingview", bins=3)
    assert tv.rules["bins"] == 3 and tv.rules["accumulate"] == "exact" and tv.n_rows[0] == 3
    d = vpoc.diff(nt, sc)
    assert d.settings["preset"] == ("ninjatrader", "sierra") and "assumed" in d.settings


def test_dask_passes_bins():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    import vpoc.dask as vd
    ts = pd.date_range("2025-01-21 15:00", periods=6, freq="1min", tz="UTC")
    df = pd.DataFrame({"timestamp": ts, "high": [2.0, 3.0, 4.0, 3.0, 2.5, 2.0], "low": [1.0, 2.0, 3.0, 2.0, 1.5, 1.0],
                       "close": [1.5, 2.5, 3.5, 2.5, 2.0, 1.5], "volume": [5.0, 6.0, 7.0, 8.0, 0.0, 3.0]})
    out = vd.from_bars(dd.from_pandas(df, npartitions=1), tick_size=0.01, preset="wickra", bins=5,
                       session="daily").compute()
    want = value_area(df.high.values, df.low.values, df.volume.values, 5)
    assert (out.poc.iloc[0], out.vah.iloc[0], out.val.iloc[0]) == want


# ----------------------------------------------------------------------------- wickra 2.0.0 itself

def test_wickra_itself_on_random_windows():
    wk = pytest.importorskip("wickra")
    rng = np.random.default_rng(2027)
    checked = 0
    for trial in range(240):
        n = int(rng.integers(1, 40))
        h, lo, c, v = random_bars(rng, n)
        bins = int(rng.choice([1, 2, 5, 13, 24, 50, 97]))
        pct = float(rng.choice([0.7, 0.5, 1.0, 0.68, 0.3]))
        va = np.asarray(wk.ValueArea(period=n, bin_count=bins, value_area_pct=pct).batch(h, lo, v).tolist())[-1]
        cp = np.asarray(wk.CompositeProfile(period=n, bin_count=bins, value_area_pct=pct).batch(h, lo, v).tolist())[-1]
        vp = np.asarray(wk.VolumeProfile(period=n, bin_count=bins).batch(h, lo, v).tolist())[-1]
        a = vpoc.from_bars(h, lo, c, v, tick_size=0.01, preset="wickra", bins=bins, value_area=pct)
        b = vpoc.from_bars(h, lo, c, v, tick_size=0.01, preset="wickra", bins=bins, value_area=pct,
                           bin_report="centers")
        assert (a.poc[0], a.vah[0], a.val[0]) == tuple(va), (trial, va)
        assert (b.poc[0], b.vah[0], b.val[0]) == tuple(cp), (trial, cp)
        assert (a.bin_low[0], a.bin_low[0] + a.bin_width[0] * bins if a.bin_width[0] else a.bin_low[0]) == \
            (vp[0], vp[1]) or a.bin_width[0] == (vp[1] - vp[0]) / bins
        np.testing.assert_array_equal(a.volume, vp[2:], err_msg=str(trial))
        checked += 1
    assert checked >= 200


def test_wickra_itself_rolling_windows():
    """developing=True, window=period: every full window's levels are wickra's (one session, so
    wickra's sessionless window is the same rows)."""
    wk = pytest.importorskip("wickra")
    rng = np.random.default_rng(11)
    for period, bins in ((5, 10), (20, 50), (1, 3), (12, 7)):
        h, lo, c, v = random_bars(rng, 120)
        want = np.asarray(wk.ValueArea(period=period, bin_count=bins).batch(h, lo, v).tolist())
        prof = vpoc.from_bars(h, lo, c, v, tick_size=0.01, preset="wickra", bins=bins, developing=True,
                              window=period)
        got = np.stack([prof.dev_poc, prof.dev_vah, prof.dev_val], axis=1)
        np.testing.assert_array_equal(got[period - 1:], want[period - 1:])
        assert np.isnan(want[:period - 1]).all()


def test_diff_names_the_bin_rules():
    rng = np.random.default_rng(1)
    h = 100 + rng.random(50) * 3
    lo = h - rng.random(50)
    c, v, off = (h + lo) / 2, rng.integers(1, 100, 50).astype(float), [0, 25, 50]
    a = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.01, preset="wickra", bins=7)
    d = vpoc.diff(a, vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.01, preset="wickra", bins=9))
    assert list(d.rule) == ["bins", "bins"] and d.settings["bins"] == (7, 9)
    d = vpoc.diff(a, vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.01, preset="wickra", bins=7,
                                    accumulate="exact"))
    assert d.settings["accumulate"] == ("sequential", "exact")
    d = vpoc.diff(a, vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.01, preset="wickra", bins=7,
                                    va_method="cbot"))
    assert "va_method" in d.rule[1] and "(-1 rows)" in d.reason[1]  # counted in a's bins


def test_plot_bins():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    p = vpoc.from_bars([10.0, 14.0], [10.0, 10.0], [10.0, 12.0], [100.0, 80.0], tick_size=0.01, preset="wickra",
                       bins=4)
    ax = p.plot(0)
    heights = sorted({round(r.get_height(), 9) for r in ax.patches if r.get_width() > 0 and r.get_height() < 2})
    assert heights == [0.9]  # bar_fill (0.9) of one bin's width
    spans = [pt for pt in ax.patches if getattr(pt, "get_xy", None) and pt.get_height() >= 2]
    assert any(abs(pt.get_y() - 10.0) < 1e-12 and abs(pt.get_y() + pt.get_height() - 12.0) < 1e-12 for pt in spans)
