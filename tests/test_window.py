"""Rolling windows (``developing=True, window=N``) against brute force on every window.

Contract: for every input row i of session s, dev_poc / dev_vah / dev_val are the levels of the
profile of rows max(offsets[s], i - N + 1) .. i: equal bit for bit to vpoc's own batch call on those
rows, and to the plain NumPy reference (tests/reference.py) wherever that reference's float sums are
not within rounding of a decision ('fragile'), exactly with whole volumes on one row each.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from reference import ref_bars, ref_trades

vpoc = pytest.importorskip("vpoc")

VA_METHODS = ("cbot", "single", "greedy")
POC_TIES = ("center", "low", "high")


def windows(arrays, offsets, window):
    """(i, the window's slices of arrays) for every input row i."""
    for s in range(offsets.size - 1):
        a0, b0 = int(offsets[s]), int(offsets[s + 1])
        for i in range(a0, b0):
            a = max(a0, i - window + 1)
            yield i, [None if x is None else x[a:i + 1] for x in arrays]


def dev(prof):
    return np.vstack([np.asarray(prof.dev_poc), np.asarray(prof.dev_vah), np.asarray(prof.dev_val)])


def check(prof, batch, arrays, offsets, window, ref, exact, ctx):
    """prof's series against vpoc's batch call and the NumPy reference on every window."""
    got = dev(prof)
    n = int(offsets[-1])
    assert got.shape == (3, n), ctx
    for i, cols in windows(arrays, offsets, window):
        b = batch(*cols)
        want = np.array([b.poc[0], b.vah[0], b.val[0]])
        assert np.array_equal(got[:, i], want), f"{ctx}: row {i}: window {got[:, i]}, batch of its rows {want}"
        r = ref(*cols)
        if exact or not r["fragile"][0]:
            assert np.array_equal(got[:, i], [r["poc"][0], r["vah"][0], r["val"][0]]), (
                f"{ctx}: row {i}: window {got[:, i]}, reference {(r['poc'][0], r['vah'][0], r['val'][0])}")


@st.composite
def layouts(draw, max_rows=30):
    sizes = draw(st.lists(st.integers(0, max_rows), min_size=1, max_size=3))
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


@settings(deadline=None)
@given(layouts(), st.integers(1, 12), st.integers(0, 2**32 - 1), st.sampled_from(VA_METHODS),
       st.sampled_from(POC_TIES), st.sampled_from([1, 2]), st.booleans(),
       st.sampled_from([0.7, 0.5, 1.0, 0.01]))
def test_trades_window_equals_every_window(offsets, window, seed, va_method, poc_tie, tpr, whole, value_area):
    rng = np.random.default_rng(seed)
    n = int(offsets[-1])
    price = rng.integers(-8, 12, n) * 0.25
    volume = rng.integers(0, 4, n).astype(np.int32) if whole else rng.random(n).astype(np.float32)
    kw = dict(tick_size=0.25, ticks_per_row=tpr, va_method=va_method, poc_tie=poc_tie, value_area=value_area)
    note(repr(kw))
    prof = vpoc.from_trades(price, volume, offsets=offsets, developing=True, window=window, **kw)
    check(prof, lambda p, v: vpoc.from_trades(p, v, **kw), [price, volume], offsets, window,
          lambda p, v: ref_trades(p, v, **kw), whole, f"{kw} window={window}")


@settings(deadline=None)
@given(layouts(), st.integers(1, 10), st.integers(0, 2**32 - 1), st.sampled_from(("uniform", "close", "hlc3")),
       st.sampled_from(VA_METHODS), st.sampled_from(POC_TIES), st.sampled_from([1, 3]), st.booleans())
def test_bars_window_equals_every_window(offsets, window, seed, distribute, va_method, poc_tie, tpr, whole):
    rng = np.random.default_rng(seed)
    n = int(offsets[-1])
    tick = 0.25
    low = rng.integers(-6, 10, n) * tick
    high = low + rng.integers(0, 5, n) * tick
    close = low + rng.integers(0, 5, n) * tick
    close = np.minimum(close, high)
    volume = rng.integers(0, 6, n).astype(np.int64) if whole else rng.random(n) * 7
    kw = dict(tick_size=tick, ticks_per_row=tpr, distribute=distribute, va_method=va_method, poc_tie=poc_tie)
    note(repr(kw))
    prof = vpoc.from_bars(high, low, close, volume, offsets=offsets, developing=True, window=window, **kw)
    check(prof, lambda h, lo, c, v: vpoc.from_bars(h, lo, c, v, **kw), [high, low, close, volume], offsets,
          window, lambda h, lo, c, v: ref_bars(h, lo, c, v, **kw), whole and distribute != "uniform",
          f"{kw} window={window}")


def test_window_longer_than_the_session_is_the_prefix_series():
    rng = np.random.default_rng(3)
    price = rng.integers(0, 20, 300) * 0.25
    volume = rng.integers(1, 9, 300).astype(np.int64)
    off = np.array([0, 120, 120, 300], np.int64)
    prefix = vpoc.from_trades(price, volume, offsets=off, tick_size=0.25, developing=True)
    for w in (180, 1000):
        win = vpoc.from_trades(price, volume, offsets=off, tick_size=0.25, developing=True, window=w)
        assert np.array_equal(dev(win), dev(prefix))


def test_window_of_one_row_is_each_row_alone():
    price = np.array([10.0, 10.25, 10.25, 9.5, 11.0])
    volume = np.array([3, 0, 5, 2, 7], np.int64)
    prof = vpoc.from_trades(price, volume, tick_size=0.25, developing=True, window=1)
    # one trade: its own row is POC, VAH and VAL
    assert np.array_equal(prof.dev_poc, price) and np.array_equal(prof.dev_vah, price)
    assert np.array_equal(prof.dev_val, price)


def test_window_forgets_rows_that_left_it():
    # a heavy print early, then light trades far above: once it leaves the 3-trade window, the POC moves
    price = np.array([100.0, 110.0, 110.25, 110.5, 110.25])
    volume = np.array([1000, 1, 2, 1, 1], np.int64)
    prof = vpoc.from_trades(price, volume, tick_size=0.25, developing=True, window=3)
    assert prof.dev_poc[2] == 100.0   # rows 0..2: the 1000 lot
    assert prof.dev_poc[3] == 110.25  # rows 1..3: it has left
    # rows 1..3 (1, 2, 1 lots at 110, 110.25, 110.5): cbot takes the tie upwards, 3 of 4 >= 70%
    assert (prof.dev_val[3], prof.dev_vah[3]) == (110.25, 110.5)
    # rows 2..4: 3 lots at 110.25 alone reach 70% of 4
    assert (prof.dev_poc[4], prof.dev_val[4], prof.dev_vah[4]) == (110.25, 110.25, 110.25)


def test_threads_do_not_change_windows():
    rng = np.random.default_rng(5)
    n = 5000
    price = (4000 + np.cumsum(rng.integers(-2, 3, n))) * 0.25
    volume = rng.random(n) * 10
    off = np.linspace(0, n, 40).astype(np.int64)
    one = vpoc.from_trades(price, volume, offsets=off, tick_size=0.25, developing=True, window=50, threads=1)
    many = vpoc.from_trades(price, volume, offsets=off, tick_size=0.25, developing=True, window=50, threads=4)
    assert np.array_equal(dev(one), dev(many))


@pytest.mark.parametrize("window, err, match", [
    (0, ValueError, "window"), (-3, ValueError, "window"), (1.5, TypeError, "window"),
    (True, TypeError, "window"), ("60", ValueError, "window")])
def test_bad_window(window, err, match):
    with pytest.raises(err, match=match):
        vpoc.from_trades([1.0, 1.25], [1, 2], tick_size=0.25, developing=True, window=window)


def test_window_needs_developing_and_no_legacy():
    with pytest.raises(ValueError, match="developing=True"):
        vpoc.from_trades([1.0, 1.25], [1, 2], tick_size=0.25, window=5)
    with pytest.raises(ValueError, match="legacy"):
        vpoc.from_bars([2.0], [1.0], [1.5], [3], tick_size=0.25, distribute="legacy", developing=True, window=5)


@pytest.mark.parametrize("where", ["host", "torch"])
@pytest.mark.parametrize("api", ["trades", "uniform", "close"])
@pytest.mark.parametrize("va_method", VA_METHODS)
def test_window_on_a_gpu_equals_the_cpu(where, api, va_method):
    if not vpoc.gpu_available():
        pytest.skip("needs a vpoc GPU build and a GPU")
    rng = np.random.default_rng(11)
    n = 6000
    t = 16000 + np.cumsum(rng.integers(-2, 3, n))
    vol = rng.integers(0, 9, n).astype(np.float64) + (rng.random(n) < 0.3) * 0.5
    off = np.array([0, 17, 17, 2500, 2501, n], np.int64)
    kw = dict(offsets=off, tick_size=0.25, developing=True, window=37, va_method=va_method)
    fn, cols, gcols = gpu_case(rng, t, vol, api, where, kw)
    cpu = fn(*cols, **kw)
    gpu = fn(*gcols, device="cuda", **kw).cpu()
    assert np.array_equal(dev(gpu), dev(cpu))
    for k in ("poc", "vah", "val", "offsets", "volume"):
        assert np.array_equal(np.asarray(getattr(gpu, k)), np.asarray(getattr(cpu, k)), equal_nan=True), k


def gpu_case(rng, t, vol, api, where, kw):
    """(from_trades or from_bars, host columns, the same columns where the GPU call reads them) of
    ticks t and volumes vol: trades, or bars distributed by api (set in kw); where "torch": torch
    tensors on the GPU (skips without them)."""
    n = t.size
    if api == "trades":
        cols = [t * 0.25, vol]
    else:
        low = t * 0.25
        cols = [low + rng.integers(0, 6, n) * 0.25, low, low, vol]
        cols[2] = np.minimum(low + rng.integers(0, 6, n) * 0.25, cols[0])
        kw["distribute"] = api
    gcols = cols
    if where == "torch":
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("needs PyTorch with a GPU")
        gcols = [torch.from_numpy(np.ascontiguousarray(c)).cuda() for c in cols]
    return (vpoc.from_trades if api == "trades" else vpoc.from_bars), cols, gcols


def test_options_round_trip_with_window():
    import pickle

    from vpoc import _core

    o = _core.Options(tick_size=0.25, developing=True, window=7)
    assert o.window == 7 and "window=7" in repr(o)
    assert pickle.loads(pickle.dumps(o)).window == 7
    assert _core.Options(tick_size=0.25).window is None
