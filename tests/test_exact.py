"""Exact sums (docs/contract.md "Exact sums"): integer volumes total exactly, every row volume is a
function of the data alone (threads, session order, Live chunking, CPU or GPU give the same bits),
and the value area stops on its target within the 1e-9 tie band.

The row reference here is written from the contract with Python integers: a volume is
floor(v * 2**64) units of 2**-64; a bar's n ticks get q = V // n units each and the lowest V % n
ticks one unit more; a row is the sum of its ticks' units, rounded to float64 as
float(hi) + float(lo) * 2**-64."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vpoc

from reference import exact_rows as ref_rows
from reference import exact_session_units
from reference import units_to_double as to_double


def ref_session(kind, cols, tick, tpr):
    """Exact per-row units of one session: kind is 'trades' or a bar distribution."""
    return exact_session_units(kind, cols, tick, tpr)


def check_against_exact_reference(prof, kind, cols, offsets, tick, tpr):
    off = np.asarray(prof.offsets)
    vol = np.asarray(prof.volume)
    for s in range(len(offsets) - 1):
        a, b = offsets[s], offsets[s + 1]
        if a == b:
            assert prof.n_rows[s] == 0
            continue
        low, rows, total = ref_rows(ref_session(kind, [c[a:b] for c in cols], tick, tpr))
        assert prof.low_row[s] == low
        got = vol[off[s]:off[s + 1]]
        assert got.tobytes() == rows.tobytes(), (s, got.tolist(), rows.tolist())
        assert prof.total_volume[s] == to_double(total)


@st.composite
def bar_data(draw, integer=True):
    n = draw(st.integers(1, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    tick = draw(st.sampled_from([0.25, 0.1, 1.0, 0.03125]))
    close = 4000.0 + np.cumsum(rng.integers(-3, 4, n)) * tick
    high = close + rng.integers(0, 12, n) * tick
    low = close - rng.integers(0, 12, n) * tick
    big = draw(st.booleans())
    if integer:
        vol = rng.integers(0, 2**40 if big else 1000, n)
    else:
        vol = rng.random(n) * (1e6 if big else 30)
    cuts = np.sort(rng.integers(0, n + 1, draw(st.integers(0, 4))))
    offsets = np.concatenate([[0], cuts, [n]]).astype(np.int64)
    return tick, high, low, close, vol, offsets


@settings(max_examples=60, deadline=None)
@given(data=bar_data(integer=True), tpr=st.integers(1, 3),
       dist=st.sampled_from(["uniform", "close", "hlc3", "legacy"]),
       dtype=st.sampled_from(["int64", "int32", "float64"]))
def test_integer_volume_totals_are_exact(data, tpr, dist, dtype):
    tick, high, low, close, vol, offsets = data
    if dtype == "int32":
        vol = (vol % 2**31).astype(np.int32)
    vol = vol.astype(dtype)
    prof = vpoc.from_bars(high, low, close, vol, offsets=offsets, tick_size=tick, ticks_per_row=tpr,
                          distribute=dist)
    want = [int(np.sum(vol[offsets[s]:offsets[s + 1]].astype(np.int64))) for s in range(len(offsets) - 1)]
    assert [int(x) for x in prof.total_volume] == want
    assert all(float(x) == float(w) for x, w in zip(prof.total_volume, want))


@settings(max_examples=60, deadline=None)
@given(data=bar_data(integer=True), tpr=st.integers(1, 3),
       dist=st.sampled_from(["uniform", "close", "hlc3", "legacy"]), fractional=st.booleans())
def test_rows_equal_the_exact_integer_reference(data, tpr, dist, fractional):
    tick, high, low, close, vol, offsets = data
    if fractional:
        vol = vol.astype(np.float64) * 0.37 + 0.125
    prof = vpoc.from_bars(high, low, close, vol, offsets=offsets, tick_size=tick, ticks_per_row=tpr,
                          distribute=dist)
    check_against_exact_reference(prof, dist, [high, low, close, vol], offsets, tick, tpr)
    tr = vpoc.from_trades(close, vol, offsets=offsets, tick_size=tick, ticks_per_row=tpr)
    check_against_exact_reference(tr, "trades", [close, vol], offsets, tick, tpr)


def _fields(prof):
    names = ("offsets", "volume", "poc_row", "vah_row", "val_row", "low_row", "n_rows", "total_volume",
             "va_volume")
    return {k: np.asarray(getattr(prof, k)).tobytes() for k in names}


@settings(max_examples=40, deadline=None)
@given(data=bar_data(integer=True), dist=st.sampled_from(["uniform", "legacy", "close"]),
       fractional=st.booleans(), order_seed=st.integers(0, 1000))
def test_bits_do_not_depend_on_threads_or_session_order(data, dist, fractional, order_seed):
    tick, high, low, close, vol, offsets = data
    if fractional:
        vol = vol * 0.3 + 0.01
    kw = dict(tick_size=tick, distribute=dist)
    base = vpoc.from_bars(high, low, close, vol, offsets=offsets, threads=1, **kw)
    for t in (2, 3):
        assert _fields(vpoc.from_bars(high, low, close, vol, offsets=offsets, threads=t, **kw)) == _fields(base)
    # sessions in another order: each session's rows and levels are the same bits
    S = len(offsets) - 1
    perm = np.random.default_rng(order_seed).permutation(S)
    idx = np.concatenate([np.arange(offsets[s], offsets[s + 1]) for s in perm] + [np.array([], np.int64)])
    lens = np.diff(offsets)[perm]
    off2 = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    other = vpoc.from_bars(high[idx], low[idx], close[idx], vol[idx], offsets=off2, threads=2, **kw)
    for j, s in enumerate(perm):
        a, b = base.session(int(s)), other.session(j)
        assert np.asarray(a[1]).tobytes() == np.asarray(b[1]).tobytes()
        for k in ("poc_row", "vah_row", "val_row", "total_volume", "va_volume"):
            assert getattr(base, k)[s] == getattr(other, k)[j]


@settings(max_examples=25, deadline=None)
@given(data=bar_data(integer=True), dist=st.sampled_from(["uniform", "legacy", "hlc3"]),
       fractional=st.booleans(), seed=st.integers(0, 1000))
def test_live_histogram_equals_batch_for_any_chunking(data, dist, fractional, seed):
    tick, high, low, close, vol, _ = data
    if fractional:
        vol = vol * 0.7 + 0.5
    batch = vpoc.from_bars(high, low, close, vol, tick_size=tick, distribute=dist, developing=True)
    live = vpoc.Live(tick_size=tick, distribute=dist, session_features=False)
    rng = np.random.default_rng(seed)
    i, n = 0, len(high)
    ts = np.arange(n, dtype=np.int64) * 60 * 10**9 + 1_700_000_000 * 10**9
    while i < n:
        k = int(rng.integers(1, 6))
        j = min(n, i + k)
        live.update(high[i:j], low[i:j], close[i:j], vol[i:j], timestamp=ts[i:j])
        assert live.poc == batch.dev_poc[j - 1]
        i = j
    prices, volumes = batch.session(0)
    assert np.asarray(live.histogram()).tobytes() == np.asarray(volumes).tobytes()
    assert live.total_volume == batch.total_volume[0]
    assert (live.poc, live.vah, live.val) == (batch.poc[0], batch.vah[0], batch.val[0])


@pytest.mark.parametrize("volume", [530, 531])
def test_value_area_ending_exactly_on_its_target_stops_there(volume):
    # 10 ticks of volume/10 each; 7 rows hold exactly 70%: the running sum of float shares may land
    # one ulp short of the target, and the 1e-9 band stops it there all the same.
    prof = vpoc.from_bars([6002.25], [6000.0], [6001.0], np.array([volume]), tick_size=0.25)
    assert prof.n_rows[0] == 10
    assert prof.vah_row[0] - prof.val_row[0] + 1 == 7
    assert prof.total_volume[0] == volume


def _devices():
    out = ["cpu"]
    if vpoc.gpu_available():
        out.append("cuda")
    return out


@pytest.mark.parametrize("va_method", ["cbot", "single", "greedy"])
def test_value_area_one_with_zero_volume_edges(va_method):
    # bars at the edges carry zero volume: value_area=1.0 reaches its target before them
    high = np.array([100.0, 101.0, 102.0, 101.0, 100.0])
    low = np.array([100.0, 100.0, 101.0, 100.0, 96.0])
    close = np.array([100.0, 101.0, 102.0, 100.5, 96.0])
    vol = np.array([0, 7, 3, 5, 0], dtype=np.int64)
    got = [vpoc.from_bars(high, low, close, vol, tick_size=0.5, value_area=1.0, va_method=va_method,
                          device=d).cpu() for d in _devices()]
    for p in got:
        assert p.total_volume[0] == 15.0
        assert p.va_volume[0] == pytest.approx(15.0, rel=1e-12)
        assert _fields(p) == _fields(got[0])


@pytest.mark.gpu
@pytest.mark.skipif(not vpoc.gpu_available(), reason="needs a vpoc GPU build and a GPU")
@settings(max_examples=40, deadline=None)
@given(data=bar_data(integer=True), tpr=st.integers(1, 3),
       dist=st.sampled_from(["uniform", "close", "hlc3", "legacy"]), fractional=st.booleans(),
       va_method=st.sampled_from(["cbot", "single", "greedy"]))
def test_gpu_bits_equal_cpu(data, tpr, dist, fractional, va_method):
    tick, high, low, close, vol, offsets = data
    if fractional:
        vol = vol * 0.3 + 0.01
    kw = dict(offsets=offsets, tick_size=tick, ticks_per_row=tpr, distribute=dist, va_method=va_method,
              developing=True)
    cpu = vpoc.from_bars(high, low, close, vol, **kw)
    gpu = vpoc.from_bars(high, low, close, vol, device="cuda", **kw).cpu()
    assert _fields(gpu) == _fields(cpu)
    for k in ("dev_poc", "dev_vah", "dev_val"):
        assert np.asarray(getattr(gpu, k)).tobytes() == np.asarray(getattr(cpu, k)).tobytes()
    tc = vpoc.from_trades(close, vol, offsets=offsets, tick_size=tick, ticks_per_row=tpr)
    tg = vpoc.from_trades(close, vol, offsets=offsets, tick_size=tick, ticks_per_row=tpr, device="cuda").cpu()
    assert _fields(tg) == _fields(tc)
