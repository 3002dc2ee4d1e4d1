"""Live(window="60min"): after every update its levels equal the batch time-window series.

Contract: for any chunking (one-row updates included) Live's poc / vah / val are
``from_*(frame, developing=True, window=span)`` at the last row so far (tests/test_timewin.py checks that
series against brute force); a rollback, the state round trip and pickle continue exactly.
"""

from __future__ import annotations

import datetime as dt
import warnings

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

vpoc = pytest.importorskip("vpoc")
pd = pytest.importorskip("pandas")

from test_live_window import MIN, T0, _rows as window_rows, assert_state_round_trip  # noqa: E402

# random bars repeat one another at times (gap 0): counted twice by Live and the batch alike, each
# warning vpoc.DuplicateRowsWarning (tests/test_silent_trial2.py checks that warning)
pytestmark = pytest.mark.filterwarnings("ignore::vpoc.DuplicateRowsWarning")

SPANS = ["1ns", "1min", "5min", "17min", "2h", dt.timedelta(minutes=9), np.timedelta64(3, "m")]


def _rows(rng, n, bars, gaps=(0, 1, 2, 3)):
    return window_rows(rng, n, bars, gaps)  # 0: duplicate timestamps


def _batch(cols, ts, ids, bars, **kw):
    names = ["high", "low", "close", "volume"] if bars else ["price", "volume"]
    frame = pd.DataFrame({"timestamp": pd.to_datetime(ts, utc=True), **dict(zip(names, cols))})
    if bars:
        frame["open"] = frame["close"]  # read by 'legacy' only, which windows refuse
    with warnings.catch_warnings():  # random bars repeat one another at times: counted twice, as Live does
        warnings.simplefilter("ignore", vpoc.io.DuplicateRowsWarning)
        return (vpoc.from_bars if bars else vpoc.from_trades)(frame, session_ids=ids, developing=True, **kw)


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), bars=st.booleans(), k=st.integers(0, len(SPANS) - 1),
       va_method=st.sampled_from(["cbot", "single", "greedy"]), max_chunk=st.sampled_from([1, 5, 60]))
def test_live_time_window_equals_batch_after_every_update(seed, bars, k, va_method, max_chunk):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    cols, ts = _rows(rng, n, bars)
    starts = np.unique(np.sort(rng.choice(ts, size=min(3, n), replace=False)))
    starts[0] = ts[0]
    ids = np.searchsorted(starts, ts, side="right") - 1
    kw = dict(tick_size=0.25, va_method=va_method)
    note(f"n={n} window={SPANS[k]!r} {kw}")
    ref = _batch(cols, ts, ids, bars, window=SPANS[k], **kw)
    live = vpoc.Live(kind="bars" if bars else "trades", session_starts=starts, window=SPANS[k], **kw)
    feed(live, ref, cols, ts, rng, max_chunk)


def feed(live, ref, cols, ts, rng, max_chunk):
    """Updates ``live`` in random chunks (a one-row update of scalars half the time: its own path);
    after each, its levels and what update returned are ref's series at the last row."""
    n = ts.size
    i = 0
    while i < n:
        j = min(n, i + int(rng.integers(1, max_chunk + 1)))
        if j == i + 1 and rng.random() < 0.5:
            got = live.update(*[float(c[i]) for c in cols], timestamp=int(ts[i]))
        else:
            got = live.update(*[c[i:j] for c in cols], timestamp=ts[i:j])
        assert (live.poc, live.vah, live.val) == (ref.dev_poc[j - 1], ref.dev_vah[j - 1], ref.dev_val[j - 1]), j - 1
        assert got[:3] == (live.poc, live.vah, live.val)
        i = j


class _Boom(Exception):
    pass


def test_a_rolled_back_update_keeps_the_window(monkeypatch):
    """An update that fails after the engine took its rows is undone: the session is rebuilt from
    its rows and their window starts; a bad row is refused before anything changes."""
    rng = np.random.default_rng(11)
    cols, ts = _rows(rng, 400, bars=True)
    ids = np.zeros(400, dtype=np.int64)
    ref = _batch(cols, ts, ids, True, tick_size=0.25, window="20min")
    live = vpoc.Live(tick_size=0.25, window="20min", session_starts=np.array([ts[0]]))
    live.update(*[c[:150] for c in cols], timestamp=ts[:150])
    bad = [c[150:300].copy() for c in cols]
    bad[0][-1] = np.nan
    with pytest.raises(ValueError):
        live.update(*bad, timestamp=ts[150:300])
    assert (live.poc, live.vah, live.val) == (ref.dev_poc[149], ref.dev_vah[149], ref.dev_val[149])

    def boom(*a, **k):
        raise _Boom()

    for one in (False, True):  # after the engine's append: the whole update rolled back
        with monkeypatch.context() as m:
            m.setattr(live, "_advance_one" if one else "_advance_many", boom)
            with pytest.raises(_Boom):
                if one:
                    live.update(*[float(c[150]) for c in cols], timestamp=int(ts[150]))
                else:
                    live.update(*[c[150:170] for c in cols], timestamp=ts[150:170])
        assert live.session_rows == 150
        assert (live.poc, live.vah, live.val) == (ref.dev_poc[149], ref.dev_vah[149], ref.dev_val[149])
    for i in range(150, 400, 9):
        live.update(*[c[i:i + 9] for c in cols], timestamp=ts[i:i + 9])
        j = min(400, i + 9) - 1
        assert (live.poc, live.vah, live.val) == (ref.dev_poc[j], ref.dev_vah[j], ref.dev_val[j]), j


@pytest.mark.parametrize("window", ["25min", dt.timedelta(minutes=25)])
def test_state_round_trip_continues_the_time_window(window):
    rng = np.random.default_rng(4)
    cols, ts = _rows(rng, 300, bars=True)
    assert_state_round_trip(dict(tick_size=0.25, window=window, session_starts=np.array([ts[0], ts[150]])), cols, ts)


def test_time_window_histogram_and_totals_are_the_windows():
    price = np.array([100.0, 110.0, 110.25, 110.5, 110.25])
    volume = np.array([1000.0, 1.0, 2.0, 1.0, 1.0])
    live = vpoc.Live(kind="trades", tick_size=0.25, window="3min", session_starts=np.array([T0]))
    live.update(price, volume, timestamp=T0 + np.arange(5) * MIN)  # rows 2..4: (t - 3min, t]
    assert live.total_volume == 4.0
    assert live.poc == 110.25 and live.histogram().sum() == 4.0


@pytest.mark.parametrize("window", ["0min", "-1h", "abc", "60", np.timedelta64(0, "s")])
def test_bad_time_window(window):
    with pytest.raises(ValueError, match="window"):
        vpoc.Live(tick_size=0.25, window=window)


def test_engine_checks_live_window_starts():
    from vpoc import _core

    core = _core.LiveSession(False, "uniform", False, tick_size=0.25, ticks_per_row=1, value_area=0.7,
                             va_method="cbot", poc_tie="center", max_rows=1000, time_window=True)
    with pytest.raises(ValueError, match="window"):  # a time-window session needs starts
        core.append_trade(1.0, 1.0)
    core.append_trade(1.0, 1.0, 0)
    with pytest.raises(ValueError, match=r"window start of row 1 must lie in \[0, 1\]"):
        core.append(np.array([1.0]), None, None, None, None, np.array([1.0]), np.array([2]))
    assert core.size == 1
