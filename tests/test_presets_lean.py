"""preset='lean' (QuantConnect LEAN VolumeProfile) and its keywords poc_tie='mid_floor', price_label, va_target, CPU.

Contract checked: docs/presets.md against tests/preset_reference.py (NumPy rules + a Decimal transcription of LEAN) and LEAN's own vp_datatest.csv.
"""

from __future__ import annotations

import pickle
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import vpoc
from vpoc import _core
from preset_reference import lean_profile, peer_levels, touched_mask, touched_rows
from reference import NO_ROW

DATA = Path(__file__).parent / "data" / "lean_vp_datatest.csv"
RULES = dict(va_rows=("all", "touched"), va_compare=("tie_up", "zero_absent"), va_stop=("reaches", "exceeds"),
             tie_tol=(1e-9, 0.0), poc_tie=("center", "low", "high", "mid_n2", "mid_floor"),
             va_method=("cbot", "single"), va_target=("float", "decimal"), price_label=("product", "decimal"))


def golden():
    import csv
    with open(DATA) as f:
        rows = list(csv.DictReader(f))
    return rows


def test_reference_transcription_reproduces_lean_golden_data():
    """The Decimal transcription of LEAN's MarketProfile.cs over every bar so far gives all 21 rows
    of its own test data (POC, POCVolume, PH, PL, VAH, VAL exactly; VA, the target, to 0.01 as LEAN)."""
    rows = golden()
    out = lean_profile([r["Close"] for r in rows], [r["Volume"] for r in rows])
    for r, o in zip(rows, out):
        for col, key in (("POC", "poc"), ("POCVolume", "poc_volume"), ("PH", "ph"), ("PL", "pl"), ("VAH", "vah"),
                         ("VAL", "val")):
            assert o[key] == Decimal(r[col]), (r["Date"], col, o[key], r[col])
        assert abs(float(o["va"]) - float(r["VA"])) <= 0.01


def lean_call(closes, volumes, **kw):
    """vpoc on LEAN's 0.05 rows of closes given to 1e-6: tick 1e-6, 50,000 ticks a row. LEAN rounds a
    close up to its row (ceil); row_label='top' with ticks_per_row > 1 is not implemented (it needs
    the binning passes), so the closes are shifted up by 49,999 ticks and rows labelled low: the row
    floor((t + 49999) / 50000) = ceil(t / 50000), what 'top' does."""
    c = np.asarray(closes, dtype=np.float64) + 0.049999
    v = np.asarray(volumes, dtype=np.float64)
    return vpoc.from_bars(c, c, c, v, tick_size=1e-6, ticks_per_row=50000, preset="lean", row_label="low", **kw)


def test_lean_preset_reproduces_lean_golden_data():
    rows = golden()
    closes = [float(r["Close"]) for r in rows]
    vols = [float(r["Volume"]) for r in rows]
    dev = lean_call(closes, vols, developing=True)
    for k, col in (("dev_poc", "POC"), ("dev_vah", "VAH"), ("dev_val", "VAL")):
        np.testing.assert_array_equal(getattr(dev, k), [float(r[col]) for r in rows], err_msg=col)
    for i, r in enumerate(rows):  # the batch profile of every prefix: the other columns
        p = lean_call(closes[:i + 1], vols[:i + 1])
        assert p.poc[0] == float(r["POC"]) and p.vah[0] == float(r["VAH"]) and p.val[0] == float(r["VAL"])
        prices, hist = p.session(0)
        assert hist[p.poc_row[0] - p.low_row[0]] == float(r["POCVolume"])
        assert prices[-1] == float(r["PH"]) and prices[0] == float(r["PL"])
        assert abs(0.7 * p.total_volume[0] - float(r["VA"])) <= 0.01
    # the product labels miss LEAN's decimals on some rows; the rows themselves are equal
    prod = lean_call(closes, vols, developing=True, price_label="product")
    np.testing.assert_allclose(prod.dev_poc, dev.dev_poc, rtol=1e-15)


def bars_session(rng, n):
    """Closes on a 0.05 grid (rows of one tick), whole volumes with ties (multiples of 10) and zeros."""
    close = np.round(100 + rng.integers(-12, 12, size=n) * 0.05, 2)
    kind = rng.integers(0, 3)
    vol = (rng.integers(0, 4, size=n) * 10.0 if kind == 0 else rng.integers(0, 2, size=n).astype(float)
           if kind == 1 else rng.integers(0, 1000, size=n).astype(float))
    return close, vol


@pytest.mark.parametrize("seed", range(40))
def test_lean_preset_matches_lean_transcription_on_random_sessions(seed):
    """Every bar: vpoc's developing POC / VAH / VAL with preset='lean' (every bar so far) equal the
    transcription's, except after a bar where LEAN's loop makes no progress (row above 0, none below)."""
    rng = np.random.default_rng(seed)
    close, vol = bars_session(rng, int(rng.integers(1, 30)))
    dev = vpoc.from_bars(close, close, close, vol, tick_size=0.05, preset="lean", developing=True)
    for i in range(close.size):
        try:
            o = lean_profile(close[:i + 1], vol[:i + 1])[-1]
        except RuntimeError:
            continue
        assert (dev.dev_poc[i], dev.dev_val[i], dev.dev_vah[i]) == (float(o["poc"]), float(o["val"]),
                                                                    float(o["vah"])), i


def draw(rng):
    return {k: v[int(rng.integers(0, len(v)))] for k, v in RULES.items()}


@pytest.mark.parametrize("seed", range(40))
def test_rules_with_mid_floor_and_decimal_target_match_reference(seed):
    """Trades in random sessions (empty, one row, gaps, whole volumes with ties and zeros) with every
    combination of the rule keywords: levels equal the reference's, prices by price_label."""
    rng = np.random.default_rng(1000 + seed)
    lens = [int(x) for x in rng.choice([0, 1, 2, 5, 17, 40], size=int(rng.integers(1, 6)))]
    n = sum(lens)
    tick = (0.05, 0.01, 0.25)[seed % 3]
    price = (rng.integers(400, 420, size=n) + np.where(rng.random(n) < 0.15, rng.integers(-30, 30, size=n), 0)) * tick
    vol = (rng.integers(0, 4, size=n) * 10.0) if seed % 2 else rng.integers(0, 1000, size=n).astype(float)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    rules = draw(rng)
    va = (0.7, 0.68, 0.5, 1.0)[seed % 4]
    prof = vpoc.from_trades(price, vol, offsets=offsets, tick_size=tick, value_area=va, **rules)
    spans = touched_rows("trades", {"price": price}, tick)
    for s in range(len(lens)):
        lo, nr = int(prof.low_row[s]), int(prof.n_rows[s])
        hist = prof.volume[prof.offsets[s]:prof.offsets[s + 1]]
        touched = touched_mask(spans[offsets[s]:offsets[s + 1]], lo, nr) if rules["va_rows"] == "touched" and nr else None
        ref = peer_levels(hist, lo, touched, value_area=va, va_method=rules["va_method"], poc_tie=rules["poc_tie"],
                          va_compare=rules["va_compare"], va_stop=rules["va_stop"], tie_tol=rules["tie_tol"],
                          total=prof.total_volume[s], va_target=rules["va_target"])
        for k in ("poc_row", "val_row", "vah_row"):
            assert prof.__getattr__(k)[s] == ref[k], (s, k, rules)
        assert prof.va_volume[s] == ref["va_volume"]
        r = ref["poc_row"]
        if r == NO_ROW:
            assert np.isnan(prof.poc[s])
        elif rules["price_label"] == "decimal":
            assert prof.poc[s] == float(Fraction(r) * Fraction(repr(tick)))
        else:
            assert prof.poc[s] == r * tick


@pytest.mark.parametrize("seed", range(12))
def test_developing_and_window_with_the_new_rules_equal_batch_on_prefixes(seed):
    """developing=True (core/developing.hpp for va_rows='all', core/window.hpp for 'touched') and
    window=3: every row's levels equal the batch profile of its prefix / window."""
    rng = np.random.default_rng(2000 + seed)
    n = 18
    price = (400 + rng.integers(0, 8, size=n) + np.where(rng.random(n) < 0.2, 6, 0)) * 0.05
    vol = rng.integers(0, 4, size=n) * 10.0
    rules = draw(rng)
    for window in (None, 3):
        dev = vpoc.from_trades(price, vol, tick_size=0.05, developing=True, window=window, **rules)
        for i in range(n):
            a = 0 if window is None else max(0, i + 1 - window)
            one = vpoc.from_trades(price[a:i + 1], vol[a:i + 1], tick_size=0.05, **rules)
            got = (dev.dev_poc[i], dev.dev_val[i], dev.dev_vah[i])
            np.testing.assert_array_equal(got, (one.poc[0], one.val[0], one.vah[0]), err_msg=f"{i} {rules}")


def test_decimal_target_differs_from_float_where_the_float_target_is_low():
    """Total 90, value area 0.7: fl(0.7 * 90) = 62.99999999999999 < 63. The value area reaches 63
    exactly after one step down: 'float' + 'exceeds' stops there, 'decimal' (63 is not above 63) goes
    on, as LEAN's exact decimal does."""
    c = np.array([1.0, 2.0, 3.0, 4.0])
    v = np.array([20.0, 43.0, 5.0, 22.0])
    assert 0.7 * 90 < 63
    dec = vpoc.from_bars(c, c, c, v, tick_size=1.0, preset="lean")
    flt = vpoc.from_bars(c, c, c, v, tick_size=1.0, preset="lean", va_target="float")
    assert (flt.val[0], flt.vah[0], flt.va_volume[0]) == (1.0, 2.0, 63.0)
    assert (dec.val[0], dec.vah[0], dec.va_volume[0]) == (1.0, 3.0, 68.0)
    o = lean_profile(c, v)[-1]
    assert (float(o["val"]), float(o["vah"])) == (1.0, 3.0)


def test_mid_floor_hand_values_and_differs_from_mid_n2():
    c = np.array([1.0, 2.0, 3.0, 4.0])  # 4 rows, rows 0 and 2 tied: mid_floor target 1 (row 0), mid_n2 2
    v = np.array([5.0, 1.0, 5.0, 1.0])
    a = vpoc.from_trades(c, v, tick_size=1.0, poc_tie="mid_floor")
    b = vpoc.from_trades(c, v, tick_size=1.0, poc_tie="mid_n2")
    assert (a.poc[0], b.poc[0]) == (1.0, 3.0)


def test_price_label_decimal_session_prices_and_default_unchanged():
    c = np.array([130.2, 130.25, 130.3])
    v = np.array([1.0, 2.0, 3.0])
    d = vpoc.from_trades(c, v, tick_size=0.05, price_label="decimal")
    p = vpoc.from_trades(c, v, tick_size=0.05)
    np.testing.assert_array_equal(d.session(0)[0], [130.2, 130.25, 130.3])
    assert p.session(0)[0][0] == 2604 * 0.05 != 130.2  # the product label misses the decimal
    assert d.poc[0] == 130.3 and p.rules is None


def test_lean_preset_rules_recorded_and_explicit_keyword_wins():
    c = np.array([1.0, 2.0])
    p = vpoc.from_bars(c, c, c, np.array([1.0, 1.0]), tick_size=1.0, preset="lean", poc_tie="high")
    assert p.rules["preset"] == "lean" and p.rules["poc_tie"] == "high" and p.rules["va_target"] == "decimal"
    assert p.rules["price_label"] == "decimal" and p.poc[0] == 2.0


def test_options_repr_pickle_and_old_states():
    o = _core.Options(tick_size=0.05, poc_tie="mid_floor", price_label="decimal", va_target="decimal")
    assert "price_label='decimal'" in repr(o) and "va_target='decimal'" in repr(o)
    q = pickle.loads(pickle.dumps(o))
    assert (q.poc_tie, q.price_label, q.va_target) == ("mid_floor", "decimal", "decimal")
    st = o.__getstate__()
    assert len(st) == 22
    old = _core.Options.__new__(_core.Options)
    old.__setstate__(st[:16])  # pickled before price_label / va_target: their defaults
    assert (old.price_label, old.va_target, old.poc_tie) == ("product", "float", "mid_floor")
    old18 = _core.Options.__new__(_core.Options)
    old18.__setstate__(st[:18])  # pickled before bins / accumulate / bin_report
    assert (old18.bins, old18.accumulate, old18.bin_report) == (None, "exact", "center_edges")
    old21 = _core.Options.__new__(_core.Options)
    old21.__setstate__(st[:21])  # pickled before window_across_sessions
    assert old21.window_across_sessions is False
    bad = _core.Options.__new__(_core.Options)
    with pytest.raises(ValueError, match="22 entries"):
        bad.__setstate__(st[:17])


@pytest.mark.parametrize("kw,exc,name", [
    (dict(price_label="cents"), ValueError, "price_label"),
    (dict(price_label=1), TypeError, "price_label"),
    (dict(va_target="exact"), ValueError, "va_target"),
    (dict(va_target=0.7), TypeError, "va_target"),
    (dict(poc_tie="middle"), ValueError, "mid_floor"),
    (dict(va_target="decimal", value_area=1 / 3), ValueError, "va_target"),
    (dict(price_label="decimal", tick_size=1 / 3), ValueError, "price_label"),
    (dict(preset="leann"), ValueError, "lean"),
])
def test_bad_values_name_the_keyword(kw, exc, name):
    args = dict(tick_size=0.25)
    args.update(kw)
    c = np.array([1.0])
    with pytest.raises(exc, match=name):
        vpoc.from_trades(c, c, **args)


def test_decimal_target_needs_whole_volumes():
    c = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="va_target"):
        vpoc.from_trades(c, np.array([1.0, 0.5, 2.0]), tick_size=1.0, va_target="decimal")
    with pytest.raises(ValueError, match="va_target"):
        vpoc.from_bars(c, c, c, np.array([1.0, 1.0, 2.0]), tick_size=1.0, va_target="decimal", distribute="uniform")
    with pytest.raises(ValueError, match="va_target"):
        vpoc.from_bars(c, c, c, np.array([1.0, 1.5, 2.0]), tick_size=1.0, preset="lean")
    p = vpoc.from_bars(c + 0.5, c - 0.5, c, np.array([1.0, 1.0, 2.0]), tick_size=0.5, va_target="float",
                       preset="lean")  # float target: fractions allowed
    assert p.rules["va_target"] == "float"
    live = vpoc.Live(tick_size=1.0, preset="lean")
    with pytest.raises(ValueError, match="va_target"):
        live.update(1.0, 1.0, 1.0, 0.5, timestamp=0)


def test_live_lean_preset_equals_batch():
    rng = np.random.default_rng(7)
    close, vol = bars_session(rng, 25)
    live = vpoc.Live(tick_size=0.05, preset="lean")
    got = []
    for i in range(close.size):
        live.update(close[i], close[i], close[i], vol[i], timestamp=1_700_000_000_000_000_000 + i * 60_000_000_000)
        got.append((live.poc, live.val, live.vah))
    dev = vpoc.from_bars(close, close, close, vol, tick_size=0.05, preset="lean", developing=True)
    assert got == list(zip(dev.dev_poc, dev.dev_val, dev.dev_vah))
    np.testing.assert_array_equal(live.row_prices, dev.session(0)[0])


def test_dask_lean_preset_equals_one_call():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    import vpoc.dask as vd
    rng = np.random.default_rng(41)
    n = 400
    c = np.round((2000 + rng.integers(0, 30, size=n)) * 0.05, 2)
    df = pd.DataFrame({"high": c, "low": c, "close": c, "volume": rng.integers(0, 4, size=n) * 10.0,
                       "session_id": np.repeat(np.arange(8), n // 8)})
    ddf = dd.from_pandas(df, npartitions=3, sort=False)
    got = vd.from_bars(ddf, tick_size=0.05, session_column="session_id", timestamp=None,
                       preset="lean").compute(scheduler="sync")
    exp = vpoc.from_bars(df.high.to_numpy(), df.low.to_numpy(), df.close.to_numpy(), df.volume.to_numpy(),
                         session_ids=df.session_id.to_numpy(), tick_size=0.05, preset="lean")
    for k in ("poc", "val", "vah", "va_volume"):
        np.testing.assert_array_equal(got[k].to_numpy(), getattr(exp, k), err_msg=k)
    lows = [exp.session(i)[0][0] for i in range(exp.n_sessions)]  # decimal labels, as the levels
    np.testing.assert_array_equal(got["low"].to_numpy(), lows)
    with pytest.raises(ValueError, match="price_label"):
        vd.from_bars(ddf, tick_size=0.05, session_column="session_id", timestamp=None, price_label="x")
