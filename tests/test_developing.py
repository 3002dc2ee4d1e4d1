"""Developing (no-lookahead) series: ``developing=True`` against brute force on every prefix.

The brute force is the plain NumPy reference (tests/reference.py) run on each session's rows
offsets[s]..i for every row i. Prefixes whose reference decision sits within rounding of a
boundary ('fragile': fractional shares summed in another order) are held to nothing stricter
than the engine's own final-row consistency; with whole volumes on one row each, every prefix
must match exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

import _deps
from reference import ref_bars, ref_trades

vpoc = pytest.importorskip("vpoc")

VA_METHODS = ("cbot", "single", "greedy")
POC_TIES = ("center", "low", "high")
DISTRIBUTES = ("uniform", "close", "hlc3", "legacy")


def brute_force(ref, arrays, offsets, **kw):
    """[3, N] (poc, vah, val) and [N] fragile flags from the reference on every prefix."""
    n = int(offsets[-1])
    out = np.full((3, n), np.nan)
    fragile = np.zeros(n, dtype=bool)
    for s in range(offsets.size - 1):
        for i in range(int(offsets[s]), int(offsets[s + 1])):
            r = ref(*[None if a is None else a[offsets[s]:i + 1] for a in arrays], **kw)
            out[:, i] = (r["poc"][0], r["vah"][0], r["val"][0])
            fragile[i] = bool(r["fragile"][0])
    return out, fragile


def dev(prof):
    return np.vstack([prof.dev_poc, prof.dev_vah, prof.dev_val])


def check(prof, expected, fragile, exact, ctx):
    got = dev(prof)
    assert got.dtype == np.float64 and got.shape == expected.shape, ctx
    ok = np.ones(fragile.shape, bool) if exact else ~fragile
    bad = np.where((got[:, ok] != expected[:, ok]).any(axis=0))[0]
    assert bad.size == 0, (f"{ctx}: first differing row {np.where(ok)[0][bad[0]]}: got "
                           f"{got[:, ok][:, bad[0]]}, brute force {expected[:, ok][:, bad[0]]}")


@st.composite
def layouts(draw, max_rows=24):
    sizes = draw(st.lists(st.integers(0, max_rows), min_size=1, max_size=3))
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


@st.composite
def bars_case(draw):
    offsets = draw(layouts())
    seed = draw(st.integers(0, 2**32 - 1))
    tick = draw(st.sampled_from([0.25, 0.25, 0.1, 1.0]))
    grid = draw(st.sampled_from(["on", "off"]))
    whole = draw(st.booleans())
    rng = np.random.default_rng(seed)
    n = int(offsets[-1])
    low = rng.integers(-6, 10, n) * tick
    if grid == "off":
        low = low + rng.random(n) * tick
    high = low + rng.integers(0, 5, n) * tick
    close = low + (high - low) * rng.random(n)
    open_ = low + (high - low) * rng.random(n) if draw(st.booleans()) else None
    volume = rng.integers(0, 6, n).astype(np.int64) if whole else rng.random(n) * 7
    return dict(offsets=offsets, high=high, low=low, close=close, open=open_, volume=volume,
                tick=tick, whole=whole,
                distribute=draw(st.sampled_from(DISTRIBUTES)),
                va_method=draw(st.sampled_from(VA_METHODS)),
                poc_tie=draw(st.sampled_from(POC_TIES)),
                ticks_per_row=draw(st.sampled_from([1, 1, 2, 3])),
                value_area=draw(st.sampled_from([0.7, 0.7, 0.5, 1.0, 0.01])))


@given(bars_case())
def test_bars_developing_equals_brute_force(case):
    kw = dict(tick_size=case["tick"], ticks_per_row=case["ticks_per_row"],
              distribute=case["distribute"], value_area=case["value_area"],
              va_method=case["va_method"], poc_tie=case["poc_tie"])
    note(repr(kw))
    # closes are drawn anywhere in [low, high]: off the grid on purpose, rounded by the rule
    snap = dict(snap=True)
    arrays = [case["high"], case["low"], case["close"], case["volume"], case["open"]]
    prof = vpoc.from_bars(*arrays[:4], open=case["open"], offsets=case["offsets"], developing=True,
                          **kw, **snap)
    expected, fragile = brute_force(lambda h, l, c, v, o, **k: ref_bars(h, l, c, v, o, **k),
                                    arrays, case["offsets"], **kw)
    exact = case["whole"] and case["distribute"] in ("close", "hlc3")
    check(prof, expected, fragile, exact, repr(kw))


@given(layouts(max_rows=40), st.integers(0, 2**32 - 1), st.sampled_from(VA_METHODS),
       st.sampled_from(POC_TIES), st.sampled_from([1, 2]), st.booleans())
def test_trades_developing_equals_brute_force(offsets, seed, va_method, poc_tie, tpr, whole):
    rng = np.random.default_rng(seed)
    n = int(offsets[-1])
    price = rng.integers(-8, 12, n) * 0.25
    volume = rng.integers(0, 4, n).astype(np.int32) if whole else rng.random(n).astype(np.float32)
    kw = dict(tick_size=0.25, ticks_per_row=tpr, va_method=va_method, poc_tie=poc_tie)
    prof = vpoc.from_trades(price, volume, offsets=offsets, developing=True, **kw)
    expected, fragile = brute_force(lambda p, v, **k: ref_trades(p, v, **k), [price, volume], offsets, **kw)
    check(prof, expected, fragile, whole, repr(kw))


def test_last_row_is_the_session():
    """The developing value at a session's last row is that session's POC / VAH / VAL."""
    bars = vpoc.synth.es_bars(n_sessions=6, bars_per_session=400, seed=3)
    for va in VA_METHODS:
        prof = vpoc.from_bars(bars.high, bars.low, bars.close, bars.volume, open=bars.open,
                              offsets=bars.offsets, tick_size=0.25, va_method=va, developing=True)
        last = bars.offsets[1:] - 1
        np.testing.assert_array_equal(prof.dev_poc[last], prof.poc)
        np.testing.assert_array_equal(prof.dev_vah[last], prof.vah)
        np.testing.assert_array_equal(prof.dev_val[last], prof.val)
        # inside the value area, and on the ladder
        assert np.all(prof.dev_val <= prof.dev_poc) or va == "greedy"
        assert np.all(prof.dev_poc <= prof.dev_vah) or va == "greedy"
        assert np.all(prof.dev_val <= prof.dev_vah)


def test_no_lookahead():
    """Changing every row after i leaves the developing series of rows <= i unchanged."""
    bars = vpoc.synth.es_bars(n_sessions=3, bars_per_session=200, seed=5)
    rng = np.random.default_rng(0)
    for i in (0, 57, 199, 250, 597):
        h, l, c, v = (x.copy() for x in (bars.high, bars.low, bars.close, bars.volume))
        k = slice(i + 1, None)
        shift = rng.integers(-40, 40, h.size - i - 1) * 0.25
        h[k] += shift + 2.0
        l[k] += shift
        c[k] = l[k]
        v[k] = rng.integers(0, 10_000, h.size - i - 1)
        for va in VA_METHODS:
            for dist in DISTRIBUTES:
                kw = dict(offsets=bars.offsets, tick_size=0.25, va_method=va, distribute=dist,
                          developing=True)
                a = vpoc.from_bars(bars.high, bars.low, bars.close, bars.volume, **kw)
                b = vpoc.from_bars(h, l, c, v, **kw)
                np.testing.assert_array_equal(dev(a)[:, :i + 1], dev(b)[:, :i + 1],
                                              err_msg=f"row {i}, {va}, {dist}")
                assert not np.array_equal(dev(a), dev(b))


def test_many_ties_and_zero_volume():
    """More tied rows than the incremental tracker holds, and all-zero profiles."""
    price = np.repeat(np.arange(20) * 0.25, 2)[np.random.default_rng(1).permutation(40)]
    for volume in (np.ones(40), np.zeros(40), np.r_[np.zeros(20), np.ones(20)]):
        for va in VA_METHODS:
            for tie in POC_TIES:
                kw = dict(tick_size=0.25, va_method=va, poc_tie=tie)
                prof = vpoc.from_trades(price, volume, developing=True, **kw)
                off = np.array([0, 40])
                expected, _ = brute_force(lambda p, v, **k: ref_trades(p, v, **k), [price, volume], off, **kw)
                np.testing.assert_array_equal(dev(prof), expected, err_msg=f"{va} {tie} {volume[:3]}")


def test_legacy_inexact_tick_rebuilds_the_ladder():
    """With tick 0.1 a new session low moves the legacy ladder; earlier bars are re-spread."""
    rng = np.random.default_rng(7)
    n = 60
    low = 100.0 - np.cumsum(rng.random(n)) * 0.37
    high = low + rng.integers(0, 4, n) * 0.1 + 0.05
    close = (low + high) / 2
    volume = rng.integers(1, 9, n)
    off = np.array([0, n])
    kw = dict(tick_size=0.1, distribute="legacy", va_method="single", poc_tie="low")
    # off-grid prices on purpose (the legacy ladder weighs raw prices): snap=True lets them in
    prof = vpoc.from_bars(high, low, close, volume, developing=True, snap=True, **kw)
    expected, fragile = brute_force(lambda h, l, c, v, o, **k: ref_bars(h, l, c, v, o, **k),
                                    [high, low, close, volume, None], off, **kw)
    check(prof, expected, fragile, False, "legacy 0.1")
    assert fragile.mean() < 0.5


def test_threads_and_empty_sessions():
    bars = vpoc.synth.es_bars(n_sessions=5, bars_per_session=300, seed=9)
    off = np.r_[0, 0, bars.offsets[1:3], bars.offsets[2], bars.offsets[3:]].astype(np.int64)
    kw = dict(offsets=off, tick_size=0.25, developing=True)
    a = vpoc.from_bars(bars.high, bars.low, bars.close, bars.volume, threads=1, **kw)
    b = vpoc.from_bars(bars.high, bars.low, bars.close, bars.volume, threads=3, **kw)
    assert dev(a).tobytes() == dev(b).tobytes()
    assert not np.isnan(dev(a)).any()
    empty = vpoc.from_bars([], [], [], [], tick_size=0.25, developing=True)
    assert empty.dev_poc.shape == (0,)


def test_absent_unless_asked_and_bad_flag():
    prof = vpoc.from_trades([1.0, 2.0], [1, 1], tick_size=0.25)
    assert prof.dev_poc is None and prof.dev_vah is None and prof.dev_val is None
    with pytest.raises(TypeError, match="developing"):
        vpoc.from_trades([1.0], [1], tick_size=0.25, developing="yes")
    with pytest.raises(TypeError, match="developing"):
        vpoc.from_bars([1.0], [1.0], [1.0], [1], tick_size=0.25, developing=1)


def test_to_pandas_has_no_developing_columns():
    _deps.require("pandas")
    prof = vpoc.from_trades([1.0, 2.0], [1, 1], tick_size=0.25)
    assert "dev_poc" not in prof.to_pandas().columns


def test_zero_copy_views():
    prof = vpoc.from_trades(np.arange(10) * 0.25, np.ones(10), tick_size=0.25, developing=True)
    assert prof.dev_poc.base is not None and not prof.dev_poc.flags.owndata
    torch = pytest.importorskip("torch")
    t = prof.to_torch()
    assert t["dev_poc"].data_ptr() == prof.dev_poc.ctypes.data
    np.testing.assert_array_equal(t["dev_vah"].numpy(), prof.dev_vah)
