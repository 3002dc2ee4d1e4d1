"""Property tests: vpoc.from_trades / vpoc.from_bars against the NumPy reference.

Hypothesis draws the structure (sessions incl. empty ones, price grid, on/off-grid
prices, dtypes, integer or float volumes, value_area); the values come from a NumPy
generator seeded by hypothesis so that examples stay cheap. Every example is checked for
every va_method x poc_tie combination.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st

from _compare import assert_matches_reference
from reference import ref_bars, ref_trades

vpoc = pytest.importorskip("vpoc")

VA_METHODS = ("cbot", "single", "greedy")
POC_TIES = ("center", "low", "high")
COMBOS = list(itertools.product(VA_METHODS, POC_TIES))
TICKS_PER_ROW = (1, 2, 4)

TICK_SIZES = (0.25, 1.0, 0.5, 0.01, 0.1, 0.2, 3.0, 0.03125)
VALUE_AREAS = st.one_of(st.sampled_from([0.70, 1.0, 0.5, 0.01, 0.999]),
                        st.floats(min_value=1e-6, max_value=1.0, exclude_min=True))


# --------------------------------------------------------------------------------------
# data generation
# --------------------------------------------------------------------------------------
@st.composite
def session_layout(draw, allow_empty=True):
    """(offsets or None, N). None means 'no sessions given' (one session)."""
    if draw(st.integers(0, 5)) == 0:
        n = draw(st.integers(0, 12))
        return None, n
    sizes = draw(st.lists(st.integers(0 if allow_empty else 1, 10), min_size=0, max_size=6))
    if not allow_empty and not sizes:
        sizes = [1]
    off = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64)
    return off, int(off[-1])


@st.composite
def price_setup(draw):
    tick = draw(st.sampled_from(TICK_SIZES))
    dtype = draw(st.sampled_from(["float64", "float32", "int64", "int32"]))
    grid = draw(st.sampled_from(["on", "off", "half"]))
    base = draw(st.sampled_from([0, 0, 17, -23, 4000, -4000, 123456]))
    spread = draw(st.sampled_from([0, 1, 3, 8, 20]))
    return dict(tick=tick, dtype=dtype, grid=grid, base=base, spread=spread)


def make_prices(rng, n, ps):
    """Float64 prices (later cast to ps['dtype'])."""
    t = ps["base"] + rng.integers(-ps["spread"], ps["spread"] + 1, size=n)
    if ps["dtype"].startswith("int"):
        # integer prices: integer number of price units around base * tick
        return np.rint(t * ps["tick"]) + rng.integers(-2, 3, size=n)
    if ps["grid"] == "on":
        return t * ps["tick"]
    if ps["grid"] == "half":
        return (t + 0.5) * ps["tick"]
    return (t + rng.uniform(-0.5, 0.5, size=n)) * ps["tick"]


@st.composite
def volume_setup(draw):
    kind = draw(st.sampled_from(["int", "int", "float", "zero", "near"]))
    if kind == "near":
        dtype = "float64"
    elif kind == "float":
        dtype = draw(st.sampled_from(["float64", "float32"]))
    else:
        dtype = draw(st.sampled_from(["int64", "int32", "float64", "float32"]))
    return dict(kind=kind, dtype=dtype, zeros=draw(st.booleans()))


def make_volume(rng, n, vs):
    if vs["kind"] == "zero":
        v = np.zeros(n)
    elif vs["kind"] == "int":
        v = rng.integers(0, 1000, size=n).astype(np.float64)
        if rng.random() < 0.3:  # many exact ties
            v = rng.integers(0, 3, size=n).astype(np.float64) * 5
    elif vs["kind"] == "near":
        # near-equal volumes around the 1e-9 relative POC / D-vs-U tie band
        v = rng.integers(1, 4, size=n).astype(np.float64) * 1000.0
        v *= 1.0 + rng.choice([0.0, 3e-10, -3e-10, 3e-9, -3e-9, 1e-7], size=n)
    else:
        v = rng.uniform(0, 1000, size=n)
        if rng.random() < 0.2:
            v = v * 1e-6
    if vs["zeros"] and n:
        v[rng.random(n) < 0.3] = 0
    return v.astype(vs["dtype"])


def is_integral(v) -> bool:
    w = np.asarray(v, dtype=np.float64)
    return bool(np.all(w == np.floor(w)) and (w.sum() < 2**53 if w.size else True))


def _call_kwargs(off):
    return {} if off is None else {"offsets": off}


# --------------------------------------------------------------------------------------
# trades
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("ticks_per_row", TICKS_PER_ROW)
@given(layout=session_layout(), ps=price_setup(), vs=volume_setup(), value_area=VALUE_AREAS,
       seed=st.integers(0, 2**32 - 1))
def test_trades_vs_reference(ticks_per_row, layout, ps, vs, value_area, seed):
    off, n = layout
    rng = np.random.default_rng(seed)
    price = make_prices(rng, n, ps).astype(ps["dtype"])
    volume = make_volume(rng, n, vs)
    exact = is_integral(volume)
    note(f"price={price.tolist()}\nvolume={volume.tolist()}\noffsets={off}")
    for va_method, poc_tie in COMBOS:
        kw = dict(tick_size=ps["tick"], ticks_per_row=ticks_per_row, value_area=value_area,
                  va_method=va_method, poc_tie=poc_tie)
        ref = ref_trades(price, volume, off, **kw)
        prof = vpoc.from_trades(price, volume, **_call_kwargs(off), **kw, snap=True)  # grid may be off
        assert_matches_reference(prof, ref, exact=exact, value_area=value_area,
                                 va_method=va_method, poc_tie=poc_tie,
                                 ctx=f"trades {va_method}/{poc_tie} tpr={ticks_per_row}")


# --------------------------------------------------------------------------------------
# bars
# --------------------------------------------------------------------------------------
def make_bars(rng, n, ps, outside: bool):
    low = make_prices(rng, n, ps)
    width_ticks = rng.integers(0, 7, size=n)
    if ps["dtype"].startswith("int"):
        high = low + np.rint(width_ticks * max(ps["tick"], 1.0))
        frac_c = rng.integers(0, 2, size=n)
        frac_o = rng.integers(0, 2, size=n)
        close = np.where(frac_c == 1, high, low)
        open_ = np.where(frac_o == 1, low, high)
    else:
        high = low + width_ticks * ps["tick"] + (
            rng.uniform(0, ps["tick"], size=n) if ps["grid"] == "off" else 0.0)
        if ps["grid"] == "off":  # some bars inside one tick (legacy: no level in range)
            tiny = rng.random(n) < 0.3
            high = np.where(tiny, low + rng.uniform(0, 0.45, size=n) * ps["tick"], high)
        close = low + rng.uniform(0, 1, size=n) * (high - low)
        open_ = low + rng.uniform(0, 1, size=n) * (high - low)
        if ps["grid"] != "off":  # snap close/open to the grid within the bar
            close = np.clip(np.round(close / ps["tick"]) * ps["tick"], low, high)
            open_ = np.clip(np.round(open_ / ps["tick"]) * ps["tick"], low, high)
    if outside and n:
        # bars whose close or open lies outside [low, high]: rejected (see test_bars_vs_reference)
        k = rng.random(n) < 0.3
        close = np.where(k, close + rng.integers(-3, 4, size=n) * ps["tick"], close)
        open_ = np.where(rng.random(n) < 0.3, open_ - 2 * ps["tick"], open_)
    dt = ps["dtype"]
    return high.astype(dt), low.astype(dt), close.astype(dt), open_.astype(dt)


@pytest.mark.parametrize("ticks_per_row", TICKS_PER_ROW)
@pytest.mark.parametrize("distribute", ["close", "hlc3", "uniform", "legacy"])
@given(layout=session_layout(), ps=price_setup(), vs=volume_setup(), value_area=VALUE_AREAS,
       with_open=st.booleans(), outside=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_bars_vs_reference(distribute, ticks_per_row, layout, ps, vs, value_area, with_open,
                           outside, seed):
    off, n = layout
    rng = np.random.default_rng(seed)
    high, low, close, open_ = make_bars(rng, n, ps, outside)
    assume(np.all(high.astype(np.float64) >= low.astype(np.float64)))
    volume = make_volume(rng, n, vs)
    exact = is_integral(volume) and distribute in ("close", "hlc3")
    o = open_ if with_open else None
    note(f"high={high.tolist()}\nlow={low.tolist()}\nclose={close.tolist()}\n"
         f"open={None if o is None else o.tolist()}\nvolume={volume.tolist()}\noffsets={off}")
    h64, l64 = high.astype(np.float64), low.astype(np.float64)
    out = [(name, np.flatnonzero((x.astype(np.float64) < l64) | (x.astype(np.float64) > h64)))
           for name, x in (("close", close), ("open", o)) if x is not None]
    first = min((int(i[0]), name) for name, i in out if i.size) if any(i.size for _, i in out) else None
    if first is not None:  # a close/open outside [low, high] is a ValueError naming the first one
        i, name = first
        with pytest.raises(ValueError, match=rf"{name}\[{i}\]=.* is outside \[low\[{i}\], high"):
            vpoc.from_bars(high, low, close, volume, open=o, **_call_kwargs(off),
                           tick_size=ps["tick"], distribute=distribute, snap=True)
        return
    for va_method, poc_tie in COMBOS:
        kw = dict(tick_size=ps["tick"], ticks_per_row=ticks_per_row, value_area=value_area,
                  va_method=va_method, poc_tie=poc_tie, distribute=distribute)
        ref = ref_bars(high, low, close, volume, o, off, **kw)
        prof = vpoc.from_bars(high, low, close, volume, open=o, **_call_kwargs(off), **kw,
                              snap=True)  # the grid may be off: the engine's rounding is tested
        assert_matches_reference(prof, ref, exact=exact, value_area=value_area,
                                 va_method=va_method, poc_tie=poc_tie,
                                 ctx=f"bars {distribute} {va_method}/{poc_tie} "
                                     f"tpr={ticks_per_row}")


# --------------------------------------------------------------------------------------
# session specifications are interchangeable
# --------------------------------------------------------------------------------------
@st.composite
def nonempty_sessions(draw):
    sizes = draw(st.lists(st.integers(1, 8), min_size=1, max_size=6))
    gaps = draw(st.lists(st.integers(1, 10**6), min_size=len(sizes), max_size=len(sizes)))
    start = draw(st.integers(-10**9, 10**9))
    labels = start + np.cumsum(gaps)
    return np.asarray(sizes), labels.astype(np.int64)


@given(sess=nonempty_sessions(), seed=st.integers(0, 2**32 - 1),
       va_method=st.sampled_from(VA_METHODS), poc_tie=st.sampled_from(POC_TIES),
       distribute=st.sampled_from(["trades", "close", "hlc3", "uniform", "legacy"]),
       datetime_ids=st.booleans())
def test_session_ids_equal_offsets(sess, seed, va_method, poc_tie, distribute, datetime_ids):
    sizes, labels = sess
    rng = np.random.default_rng(seed)
    n = int(sizes.sum())
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    ids = np.repeat(labels, sizes)
    expected = labels
    if datetime_ids:  # dates (midnight, here in seconds): labelled by their YYYYMMDD (docs/contract.md)
        days = (10_000 + np.cumsum(np.minimum(np.diff(labels, prepend=labels[0] - 1), 400))).astype("datetime64[D]")
        ids = np.repeat(days, sizes).astype("datetime64[s]")
        expected = np.array([int(str(d).replace("-", "")) for d in days], dtype=np.int64)
    kw = dict(tick_size=0.25, va_method=va_method, poc_tie=poc_tie)
    low = np.round(rng.uniform(4000, 4010, n) * 4) / 4
    high = low + rng.integers(0, 6, n) * 0.25
    close = low + rng.integers(0, 2, n) * (high - low)
    vol = rng.uniform(0, 100, n)
    if distribute == "trades":
        a = vpoc.from_trades(low, vol, offsets=off, **kw)
        b = vpoc.from_trades(low, vol, session_ids=ids, **kw)
    else:
        a = vpoc.from_bars(high, low, close, vol, offsets=off, distribute=distribute, **kw)
        b = vpoc.from_bars(high, low, close, vol, session_ids=ids, distribute=distribute, **kw)
    for k in ("poc", "vah", "val", "poc_row", "vah_row", "val_row", "low_row", "n_rows",
              "total_volume", "va_volume", "offsets", "volume"):
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k, strict=True)
    assert a.session_labels is None
    got_labels = np.asarray(b.session_labels)
    assert got_labels.shape == (len(sizes),)
    np.testing.assert_array_equal(got_labels, expected, strict=True)


@given(n=st.integers(0, 30), seed=st.integers(0, 2**32 - 1),
       va_method=st.sampled_from(VA_METHODS))
def test_no_sessions_given_is_one_session(n, seed, va_method):
    rng = np.random.default_rng(seed)
    price = rng.integers(-40, 40, n) * 0.25
    vol = rng.integers(0, 50, n)
    a = vpoc.from_trades(price, vol, tick_size=0.25, va_method=va_method)
    b = vpoc.from_trades(price, vol, offsets=np.array([0, n]), tick_size=0.25,
                         va_method=va_method)
    c = vpoc.from_trades(price, vol, session_ids=np.zeros(n, np.int64), tick_size=0.25,
                         va_method=va_method) if n else None
    assert a.n_sessions == 1
    ref = ref_trades(price, vol, tick_size=0.25, va_method=va_method)
    assert_matches_reference(a, ref, exact=True, value_area=0.7, va_method=va_method,
                             poc_tie="center")
    for other in (b, c):
        if other is None:
            continue
        for k in ("poc_row", "vah_row", "val_row", "low_row", "n_rows", "volume",
                  "va_volume", "total_volume"):
            np.testing.assert_array_equal(getattr(a, k), getattr(other, k), err_msg=k)


# --------------------------------------------------------------------------------------
# larger inputs (engine paths for big sessions / many sessions / runs of equal prices)
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["many", "one_big", "runs"])
@pytest.mark.parametrize("integer", [True, False])
def test_large_trades_vs_reference(layout, integer):
    rng = np.random.default_rng(42)
    n = 60_000
    price = np.round(rng.normal(4000, 15, n) * 4) / 4
    if layout == "runs":  # long runs of one price, as in real tick data
        price = np.repeat(price[: n // 50], 50)
    off = (np.array([0, n]) if layout == "one_big" else
           np.concatenate([[0], np.sort(rng.integers(0, n, 40)), [n]]))
    vol = rng.integers(0, 30, n) if integer else rng.exponential(5.0, n)
    for va_method, poc_tie in COMBOS:
        for tpr in (1, 3):
            kw = dict(tick_size=0.25, ticks_per_row=tpr, va_method=va_method, poc_tie=poc_tie)
            ref = ref_trades(price, vol, off, **kw)
            prof = vpoc.from_trades(price, vol, offsets=off, **kw)
            assert_matches_reference(prof, ref, exact=integer, value_area=0.7,
                                     va_method=va_method, poc_tie=poc_tie,
                                     ctx=f"{layout} {va_method}/{poc_tie} tpr={tpr}")


@pytest.mark.parametrize("distribute", ["close", "hlc3", "uniform", "legacy"])
def test_large_bars_vs_reference(distribute):
    rng = np.random.default_rng(43)
    n = 8_000
    low = np.round(rng.normal(4000, 10, n) * 4) / 4 + (rng.random(n) < 0.2) * 0.1
    high = low + rng.integers(0, 16, n) * 0.25
    close = low + rng.random(n) * (high - low)
    open_ = low + rng.random(n) * (high - low)
    vol = rng.integers(0, 500, n)
    off = np.concatenate([[0], np.sort(rng.integers(0, n, 12)), [n]])
    for va_method in VA_METHODS:
        kw = dict(tick_size=0.25, ticks_per_row=2, va_method=va_method,
                  distribute=distribute)
        ref = ref_bars(high, low, close, vol, open_, off, **kw)
        prof = vpoc.from_bars(high, low, close, vol, open=open_, offsets=off, **kw, snap=True)
        assert_matches_reference(prof, ref, exact=distribute in ("close", "hlc3"),
                                 value_area=0.7, va_method=va_method, poc_tie="center",
                                 ctx=f"{distribute} {va_method}")
