"""A session wider than max_rows is refused with the same words whatever an earlier call left behind.

Contract: "session s spans N rows, more than max_rows=M from row|bar i on" with N the session's exact span
(NumPy reference below: the ladder's rows of each trade / bar) and i the first input row that takes the
running span past max_rows (a fat-finger print is named); a bad value anywhere in that session is named
instead; a fresh process (cold row windows) and one whose windows a larger call grew (warm) say the same.
"""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

import vpoc

TICK = 0.25


def rows_of(p, tpr=1):
    return np.floor_divide(np.rint(np.asarray(p, np.float64) / TICK).astype(np.int64), tpr)


def expected(lo_rows, hi_rows, max_rows):
    """(span, first row past max_rows) of one session whose rows touch lo_rows[i] .. hi_rows[i]."""
    lo = np.minimum.accumulate(lo_rows)
    hi = np.maximum.accumulate(hi_rows)
    first = int(np.argmax(hi - lo >= max_rows))
    return int(hi[-1] - lo[-1] + 1), first


def case(kind, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(600, 3000))
    p = (16000 + np.arange(n) // 2 + np.cumsum(rng.integers(-3, 4, n))) * TICK  # drifts past max_rows=200
    if seed % 2:  # a fat finger
        p[int(rng.integers(0, n))] += 3000 * TICK
    return n, p, rng.integers(1, 9, n).astype(np.float64)


def call(kind, n, p, v, max_rows, offsets=None):
    off = [0, n] if offsets is None else offsets
    if kind == "trades":
        return vpoc.from_trades(p, v, offsets=off, tick_size=TICK, max_rows=max_rows)
    return vpoc.from_bars(p + TICK, p, p, v, offsets=off, tick_size=TICK, max_rows=max_rows, distribute=kind)


def words(kind, n, p, v, max_rows):
    with pytest.raises(ValueError) as e:
        call(kind, n, p, v, max_rows)
    return str(e.value)


@pytest.mark.parametrize("kind", ["trades", "close", "hlc3", "uniform"])
@pytest.mark.parametrize("seed", range(4))
def test_span_and_first_row_match_numpy_cold_and_warm(kind, seed):
    n, p, v = case(kind, seed)
    max_rows = 200
    if kind == "trades":
        lo_r = hi_r = rows_of(p)
    elif kind == "close":
        lo_r = hi_r = rows_of(p)
    elif kind == "hlc3":
        lo_r = hi_r = rows_of((p + TICK + p + p) / 3.0)
    else:
        lo_r, hi_r = rows_of(p), rows_of(p + TICK)
    span, first = expected(lo_r, hi_r, max_rows)
    what = "row" if kind == "trades" else "bar"
    want = f"session 0 spans {span} rows, more than max_rows={max_rows} from {what} {first} on"
    got_cold = words(kind, n, p, v, max_rows)
    assert want in got_cold, got_cold
    call(kind, n, p, v, 10**6)  # grows this process's row windows past the session
    assert words(kind, n, p, v, max_rows) == got_cold


def test_fresh_process_says_the_same():
    """Cold windows in a new process, then warm ones: the same message (it once named the row where the
    window happened to fill: 1023 cold, none warm)."""
    code = r"""
import numpy as np, vpoc
n = 5000
p = 4000 + np.arange(n) * 0.25
out = []
for big in (False, True):
    if big:
        vpoc.from_trades(4000 + np.arange(20000) * 0.25, np.ones(20000), offsets=[0, 20000], tick_size=0.25,
                         max_rows=100000)
    try:
        vpoc.from_trades(p, np.ones(n), offsets=[0, n], tick_size=0.25, max_rows=500)
    except ValueError as e:
        out.append(str(e))
print(out[0] == out[1], out[0])
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    same, msg = r.stdout.split(" ", 1)
    assert same == "True", r.stdout
    assert "session 0 spans 5000 rows, more than max_rows=500 from row 500 on" in msg


@pytest.mark.parametrize("warm", [False, True])
def test_bad_value_in_the_session_is_named_first(warm):
    """A NaN past the point where the window fills is still the error (as when the window held the whole
    session); an earlier session wider than max_rows wins over a later session's bad value."""
    n = 5000
    p = 4000 + np.arange(n) * 0.25
    if warm:
        call("trades", 20000, 4000 + np.arange(20000) * 0.25, np.ones(20000), 100000)
    q = p.copy()
    q[4000] = np.nan
    with pytest.raises(ValueError, match=re.escape("price[4000]")):
        call("trades", n, q, np.ones(n), 500)
    q = p.copy()
    q[4900] = np.nan
    with pytest.raises(ValueError, match="session 0 spans 2500 rows"):
        call("trades", n, q, np.ones(n), 500, offsets=[0, 2500, n])


def test_legacy_bars_name_the_fat_finger_bar():
    n = 100
    c = np.full(n, 4000.0)
    h, lo = c + 1.0, c - 1.0
    h[37] = 1e12
    with pytest.raises(ValueError) as e:
        vpoc.from_bars(h, lo, c, np.ones(n), open=c, offsets=[0, n], tick_size=0.25, distribute="legacy")
    assert "session 0 spans" in str(e.value) and "from bar 37 on" in str(e.value), str(e.value)


def _gpu():
    if not (hasattr(vpoc, "gpu_available") and vpoc.gpu_available()):
        pytest.skip("needs a vpoc GPU build and a GPU")


@pytest.mark.parametrize("where, token", [
    ("later_session", "session 0 spans 2500 rows, more than max_rows=500"),  # the wide session ends first
    ("same_session", "price[1000]"),  # a session's own bad value before its width
    ("earlier_session", "price[100]"),  # a bad value in a session before the wide one
])
@pytest.mark.parametrize("speculate", [False, True])
def test_gpu_orders_a_wide_session_and_a_bad_value_as_the_cpu(where, token, speculate):
    """GPU == CPU on which failure is named when a call holds a session wider than max_rows and a bad value."""
    _gpu()
    from _gpu import speculation

    n = 5000
    p = 4000 + np.arange(n) * 0.25
    p[:2500] = 4000 + np.arange(2500) * 0.25  # session 0 spans 2500 rows
    p[2500:] = 4000 + (np.arange(2500) % 100) * 0.25  # session 1 within max_rows
    offsets = [0, 2500, n] if where != "earlier_session" else [0, 200, 2700, n]
    if where == "earlier_session":
        p[:200] = 4000.0
        p[200:2700] = 4000 + np.arange(2500) * 0.25
        p[2700:] = 4000.0
    i = {"later_session": 4900, "same_session": 1000, "earlier_session": 100}[where]
    p[i] = np.nan
    if where == "earlier_session":
        token = "price[100]"
    with pytest.raises(ValueError) as cpu:
        vpoc.from_trades(p, np.ones(n), offsets=offsets, tick_size=TICK, max_rows=500)
    assert token in str(cpu.value), cpu.value
    with speculation(speculate):
        with pytest.raises(ValueError) as gpu:
            vpoc.from_trades(p, np.ones(n), offsets=offsets, tick_size=TICK, max_rows=500, device="cuda")
    assert token in str(gpu.value), (gpu.value, cpu.value)


def test_legacy_session_of_exactly_max_rows_touched_rows_is_accepted_cold_and_warm():
    """Legacy bars whose off-grid extremes widen the level ladder by a row each side but touch exactly
    max_rows rows: accepted in a fresh process (cold windows) and after a larger call (warm), 10 rows
    (the ladder's up-front reservation is a hint, not a limit)."""
    code = r"""
import warnings, numpy as np, vpoc
warnings.simplefilter("ignore", vpoc.CoarseGridWarning)
n = 2000
c = np.full(n, 105.0); h = np.full(n, 110.0); l = np.full(n, 101.0)
l[5] = 100.5; h[7] = 110.5
def go():
    p = vpoc.from_bars(h, l, c, np.ones(n), offsets=[0, n], tick_size=1.0, max_rows=10, distribute="legacy",
                       snap=True)
    return int(p.n_rows[0])
cold = go()
vpoc.from_bars(np.array([4000.0]), np.array([0.0]), np.array([2000.0]), np.ones(1), offsets=[0, 1], tick_size=1.0,
               max_rows=10**6, distribute="legacy")
print(cold, go())
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["10", "10"], r.stdout


@pytest.mark.parametrize("kind", ["trades", "bars"])
def test_volume_sum_past_2_53_names_the_session_by_its_label(kind):
    """A session whose volumes sum past 2**53 is named as the too-wide session is: by its label where the
    call has labels (.session: its position), by its position otherwise."""
    p = np.full(4, 4000.0)
    v = np.full(4, 2.0**52)  # session 1: three of them, past 2**53

    def call(**kw):
        if kind == "trades":
            return vpoc.from_trades(p, v, tick_size=0.25, **kw)
        return vpoc.from_bars(p, p, p, v, tick_size=0.25, **kw)

    with pytest.raises(vpoc.InputError, match=r"volume of session 20240102 sums past 2\*\*53") as e:
        call(session_ids=[20240101, 20240102, 20240102, 20240102])
    assert e.value.session == 1
    with pytest.raises(vpoc.InputError, match=r"volume of session 1 sums past 2\*\*53") as e:
        call(offsets=[0, 1, 4])
    assert e.value.session == 1
