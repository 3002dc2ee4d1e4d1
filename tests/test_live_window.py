"""Live(window=N): after every update its levels equal the batch rolling-window series.

Contract: for any chunking of the same rows, Live(window=N)'s poc / vah / val (and what update returns)
are ``from_*(..., developing=True, window=N)`` at the last row so far, whose own correctness against
brute force is tests/test_window.py; the profiles of finished sessions stay whole sessions; the state
round trip continues exactly; bar features are refused; a bad window names the argument.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

vpoc = pytest.importorskip("vpoc")

MIN = 60_000_000_000
T0 = 1_700_000_000 * 10**9  # 2023-11-14, ns


def _rows(rng, n, bars, gaps=None):
    """n random rows (trades: price, volume; bars: high, low, close, volume) and their timestamps,
    1-3 minutes apart, or ``gaps`` minutes apart drawn from that list (0: duplicate timestamps)."""
    t = 16000 + np.cumsum(rng.integers(-3, 4, n))
    vol = rng.integers(0, 9, n).astype(np.float64) + (rng.random(n) < 0.2) * 0.5
    step = rng.integers(1, 4, n) if gaps is None else rng.choice(np.asarray(gaps), n)
    ts = T0 + np.cumsum(step) * MIN
    if not bars:
        return [t * 0.25, vol], ts
    low = t * 0.25
    high = low + rng.integers(0, 6, n) * 0.25
    close = np.minimum(low + rng.integers(0, 6, n) * 0.25, high)
    return [high, low, close, vol], ts


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), bars=st.booleans(), window=st.integers(1, 30),
       va_method=st.sampled_from(["cbot", "single", "greedy"]), poc_tie=st.sampled_from(["center", "low", "high"]),
       distribute=st.sampled_from(["uniform", "close", "hlc3"]), max_chunk=st.sampled_from([1, 5, 60]))
def test_live_window_equals_batch_after_every_update(seed, bars, window, va_method, poc_tie, distribute, max_chunk):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 250))
    cols, ts = _rows(rng, n, bars)
    starts = np.sort(rng.choice(ts, size=min(3, n), replace=False))
    starts[0] = ts[0]
    ids = np.searchsorted(starts, ts, side="right") - 1
    kw = dict(tick_size=0.25, va_method=va_method, poc_tie=poc_tie)
    if bars:
        kw["distribute"] = distribute
    note(f"n={n} window={window} {kw}")
    fn = vpoc.from_bars if bars else vpoc.from_trades
    ref = fn(*cols, session_ids=ids, developing=True, window=window, **kw)
    live = vpoc.Live(kind="bars" if bars else "trades", session_starts=starts, window=window, **kw)
    i = 0
    while i < n:
        j = min(n, i + int(rng.integers(1, max_chunk + 1)))
        got = live.update(*[c[i:j] for c in cols], timestamp=ts[i:j])
        assert (live.poc, live.vah, live.val) == (ref.dev_poc[j - 1], ref.dev_vah[j - 1], ref.dev_val[j - 1]), j - 1
        assert got[:3] == (live.poc, live.vah, live.val)
        i = j
    live.close()
    whole = fn(*cols, session_ids=ids, **kw)  # finished sessions: the whole session, not a window
    assert np.array_equal(live.profiles.poc, whole.poc) and np.array_equal(live.profiles.val, whole.val)


def test_window_histogram_and_totals_are_the_windows():
    price = np.array([100.0, 110.0, 110.25, 110.5, 110.25])
    volume = np.array([1000.0, 1.0, 2.0, 1.0, 1.0])
    live = vpoc.Live(kind="trades", tick_size=0.25, window=3, session_starts=np.array([T0]))
    live.update(price, volume, timestamp=T0 + np.arange(5) * MIN)
    assert live.total_volume == 4.0  # rows 2..4
    assert live.poc == 110.25 and live.histogram().sum() == 4.0
    assert live.low_row * 0.25 == 110.25


def assert_state_round_trip(kw, cols, ts):
    """A Live of keywords ``kw`` fed rows [0, 100), saved (state_dict, pickle) and restored, then fed
    the rest in chunks of 7 beside the original: every update answers the same."""
    a = vpoc.Live(**kw)
    a.update(*[c[:100] for c in cols], timestamp=ts[:100])
    for b in (vpoc.Live.from_state(a.state_dict()), pickle.loads(pickle.dumps(a))):
        assert b.levels == a.levels
        for i in range(100, 300, 7):
            assert b.update(*[c[i:i + 7] for c in cols], timestamp=ts[i:i + 7]) == \
                a.update(*[c[i:i + 7] for c in cols], timestamp=ts[i:i + 7])
        a = vpoc.Live(**kw)
        a.update(*[c[:100] for c in cols], timestamp=ts[:100])


def test_state_round_trip_continues_the_window():
    rng = np.random.default_rng(4)
    cols, ts = _rows(rng, 300, bars=True)
    assert_state_round_trip(dict(tick_size=0.25, window=25, session_starts=np.array([ts[0], ts[150]])), cols, ts)


def test_bar_features_are_refused_with_a_window():
    live = vpoc.Live(tick_size=0.25, window=5, session_starts=np.array([T0]))
    live.update(10.0, 9.0, 9.5, 1.0, timestamp=T0)
    with pytest.raises(ValueError, match="window"):
        live.bar_features_row()


@pytest.mark.parametrize("window, err", [(0, ValueError), (-1, ValueError), (2.5, TypeError), (True, TypeError)])
def test_bad_window(window, err):
    with pytest.raises(err, match="window"):
        vpoc.Live(tick_size=0.25, window=window)
