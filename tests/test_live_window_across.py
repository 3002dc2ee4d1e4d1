"""Live(window=..., window_across_sessions=True): after every update its levels equal the batch series across sessions.

Contract: for any chunking of the same rows, over several sessions (with close(), dropped rows, count and time
windows), Live's poc / vah / val and what update returns are ``from_*(..., developing=True, window=...,
window_across_sessions=True)`` at the last row so far (tests/test_window_across.py checks that series against
brute force); finished ``profiles`` equal a Live without the flag; a rolled-back update keeps the carry; a window
too wide or too heavy raises the batch's error and changes nothing; the state (with its carry) continues exactly
and a carry it could not hold is named.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

vpoc = pytest.importorskip("vpoc")

from test_live_timewin import _batch, feed  # noqa: E402
from test_live_window import assert_state_round_trip  # noqa: E402
from test_live_window import MIN, T0  # noqa: E402
from test_live_window import _rows as _session_rows  # noqa: E402
import _deps  # noqa: E402


def _rows(rng, n, bars, far):
    """test_live_window's rows; ``far``: each 40 minutes at its own level (windows across sessions are wide)."""
    cols, ts = _session_rows(rng, n, bars)
    if far:
        shift = (ts - T0) // (40 * MIN) * 10.0
        cols = [c + shift for c in cols[:-1]] + [cols[-1]]
    return cols, ts


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), bars=st.booleans(), window=st.sampled_from([1, 2, 7, 30, "5min", "45min",
                                                                                  "3h"]),
       va_method=st.sampled_from(["cbot", "single", "greedy"]), far=st.booleans(),
       max_chunk=st.sampled_from([1, 5, 60]))
def test_live_across_equals_batch_after_every_update(seed, bars, window, va_method, far, max_chunk):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 250))
    cols, ts = _rows(rng, n, bars, far)
    starts = np.unique(np.r_[ts[0], np.sort(rng.choice(ts, size=min(5, n), replace=False))])
    ids = np.searchsorted(starts, ts, side="right") - 1
    kw = dict(tick_size=0.25, va_method=va_method)
    note(f"n={n} window={window} {kw}")
    ref = _batch(cols, ts, ids, bars, window=window, window_across_sessions=True, **kw)
    live = vpoc.Live(kind="bars" if bars else "trades", session_starts=starts, window=window,
                     window_across_sessions=True, **kw)
    feed(live, ref, cols, ts, rng, max_chunk)
    flat = vpoc.Live(kind="bars" if bars else "trades", session_starts=starts, window=window, **kw)
    flat.update(*cols, timestamp=ts)
    for k in ("poc", "vah", "val", "total_volume", "n_rows", "low_row", "volume"):  # finished sessions: whole
        assert np.array_equal(np.asarray(getattr(live.profiles, k)), np.asarray(getattr(flat.profiles, k)),
                              equal_nan=True), k


@_deps.needs("pandas_market_calendars")
def test_close_keeps_the_carry_and_dropped_rows_are_in_no_window():
    rng = np.random.default_rng(3)
    cols, ts = _rows(rng, 120, False, False)
    live = vpoc.Live(kind="trades", tick_size=0.25, window=9, window_across_sessions=True)
    live.update(*[c[:50] for c in cols], timestamp=ts[:50])
    live.close()  # a session ends; the next rows' windows still reach back into it
    live.update(*[c[50:] for c in cols], timestamp=ts[50:])
    ref = vpoc.from_trades(*cols, offsets=[0, 50, 120], tick_size=0.25, developing=True, window=9,
                           window_across_sessions=True)
    assert (live.poc, live.vah, live.val) == (ref.dev_poc[-1], ref.dev_vah[-1], ref.dev_val[-1])
    assert live.session_rows == 70 and len(live) == 1
    # RTH sessions drop the overnight rows: the batch with the same rule drops them too
    pd = pytest.importorskip("pandas")
    t = pd.date_range("2024-03-04 13:00", periods=900, freq="3min", tz="UTC", unit="ns").asi8
    price = 100 + np.cumsum(rng.integers(-2, 3, 900)) * 0.25
    vol = rng.integers(1, 9, 900).astype(float)
    live = vpoc.Live(kind="trades", tick_size=0.25, session="rth", window=25, window_across_sessions=True,
                     on_outside="drop")
    live.update(price, vol, timestamp=t)
    s = vpoc.sessions.rth(t, on_outside="drop")
    ref = vpoc.from_trades(price, vol, session=s, tick_size=0.25, developing=True, window=25,
                           window_across_sessions=True)
    assert live.n_dropped > 0 and len(live) >= 1
    assert (live.poc, live.vah, live.val) == (ref.dev_poc[-1], ref.dev_vah[-1], ref.dev_val[-1])


def test_rollback_after_a_roll_keeps_the_carry():
    rng = np.random.default_rng(4)
    cols, ts = _rows(rng, 80, False, False)
    starts = [ts[0], ts[40]]
    live = vpoc.Live(kind="trades", tick_size=0.25, window=6, window_across_sessions=True, session_starts=starts)
    live.update(*[c[:40] for c in cols], timestamp=ts[:40])
    bad = [c[40:60].copy() for c in cols]
    bad[1][15] = -1.0  # a bad volume in the new session: the whole update (and the roll) rolls back
    with pytest.raises(ValueError, match="volume"):
        live.update(*bad, timestamp=ts[40:60])
    assert len(live) == 0 and live.session_rows == 40
    live.update(*[c[40:] for c in cols], timestamp=ts[40:])
    ref = vpoc.from_trades(*cols, offsets=[0, 40, 80], tick_size=0.25, developing=True, window=6,
                           window_across_sessions=True)
    assert (live.poc, live.vah, live.val) == (ref.dev_poc[-1], ref.dev_vah[-1], ref.dev_val[-1])


def test_too_wide_and_too_heavy_windows_raise_and_change_nothing():
    live = vpoc.Live(kind="trades", tick_size=0.25, window=4, window_across_sessions=True, max_rows=300,
                     session_starts=[T0, T0 + 10 * MIN])
    live.update(np.full(5, 100.0), np.ones(5), timestamp=T0 + np.arange(5) * MIN)
    before = live.levels
    with pytest.raises(ValueError, match=r"the window of row 0 of the live session .* spans 401 rows, more than "
                                         r"max_rows=300; raise max_rows or shorten window"):
        live.update(200.0, 1.0, timestamp=T0 + 10 * MIN)
    assert live.levels == before and len(live) == 0 and live.session_rows == 5
    with pytest.raises(ValueError, match="spans 401 rows"):  # the batch refuses the same window
        vpoc.from_trades(np.r_[np.full(5, 100.0), 200.0], np.ones(6), offsets=[0, 5, 6], tick_size=0.25,
                         developing=True, window=4, window_across_sessions=True, max_rows=300)
    big = float(2**52 + 2**51)
    heavy = vpoc.Live(kind="trades", tick_size=0.25, window=2, window_across_sessions=True,
                      session_starts=[T0, T0 + MIN])
    heavy.update(100.0, big, timestamp=T0)
    with pytest.raises(ValueError, match=r"volume of the window of row 0 of the live session sums past 2\*\*53"):
        heavy.update(100.25, big, timestamp=T0 + MIN)
    assert heavy.poc == 100.0 and len(heavy) == 0
    heavy.update(100.25, 1.0, timestamp=T0 + MIN)  # a lighter row goes on
    assert heavy.poc == 100.0 and len(heavy) == 1


@pytest.mark.parametrize("far", [1e7, 1e12])
def test_a_price_gap_to_rows_in_no_window_lays_out_no_scratch_over_it(far):
    # session B two days after A, far away: a time window holds none of A's carried rows, so B's
    # scratch is B's own (before: the carried rows' range too, ~4e12 rows at 1e12: MemoryError)
    day = 1440 * MIN
    ts = np.r_[T0 + np.arange(5) * MIN, T0 + 2 * day + np.arange(3) * MIN]
    price = np.r_[np.full(5, 100.0), far, far + 0.25, far]
    live = vpoc.Live(kind="trades", tick_size=0.25, window="60min", window_across_sessions=True,
                     session_starts=[T0, T0 + 2 * day])
    live.update(price[:5], np.ones(5), timestamp=ts[:5])
    live.update(price[5:], np.ones(3), timestamp=ts[5:])
    assert live.levels[:3] == (far, far + 0.25, far) and live.session_rows == 3
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"timestamp": pd.to_datetime(ts, utc=True), "price": price, "volume": np.ones(8)})
    batch = vpoc.from_trades(frame, offsets=[0, 5, 8], tick_size=0.25, developing=True, window="60min",
                             window_across_sessions=True)
    assert (live.poc, live.vah, live.val) == (batch.dev_poc[-1], batch.dev_vah[-1], batch.dev_val[-1])
    # a count window does hold them: the first new row's window is too wide, measured alone
    live = vpoc.Live(kind="trades", tick_size=0.25, window=3, window_across_sessions=True,
                     session_starts=[T0, T0 + 2 * day])
    live.update(price[:5], np.ones(5), timestamp=ts[:5])
    before = live.levels
    rows = int(far / 0.25) - 400 + 1
    with pytest.raises(ValueError, match=rf"the window of row 0 of the live session \(with 2 rows carried from earlier "
                                         rf"sessions\) spans {rows} rows, more than max_rows=1000000"):
        live.update(price[5:], np.ones(3), timestamp=ts[5:])
    with pytest.raises(ValueError, match=rf"the window of row 5 in session 1 \(3 rows, reaching back 1 session\) spans {rows} rows"):
        vpoc.from_trades(price, np.ones(8), offsets=[0, 5, 8], tick_size=0.25, developing=True, window=3,
                         window_across_sessions=True)
    assert live.levels == before and len(live) == 0 and live.session_rows == 5
    live.update(100.25, 2.0, timestamp=ts[5])  # rows near the carried ones go on
    ref = vpoc.from_trades(np.r_[price[:5], 100.25], np.r_[np.ones(5), 2.0], offsets=[0, 5, 6], tick_size=0.25,
                           developing=True, window=3, window_across_sessions=True)
    assert (live.poc, live.vah, live.val) == (ref.dev_poc[-1], ref.dev_vah[-1], ref.dev_val[-1])


_CORE_KW = dict(tick_size=0.25, ticks_per_row=1, value_area=0.7, va_method="cbot", poc_tie="center",
                max_rows=1_000_000)


def test_carry_between_mismatched_sessions_is_refused():
    import subprocess
    import sys

    # a time-window session fed a window=N session's rows read its empty starts (segfault, exit 139)
    code = ("from vpoc import _core\n"
            f"kw = {_CORE_KW!r}\n"
            "f = _core.LiveSession(False, 'uniform', False, window=3, **kw)\n"
            "f.append_trade(100.0, 1.0)\n"
            "s = _core.LiveSession(False, 'uniform', False, time_window=True, **kw)\n"
            "try:\n    s.carry(f, True)\nexcept ValueError as e:\n    print(e, s.carried, s.size)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-500:]
    assert run.stdout.strip() == ("carry: from_session differs from this session in its window (a time window or "
                                  "window=N) 0 0")
    from vpoc import _core

    f = _core.LiveSession(False, "uniform", False, window=3, **_CORE_KW)
    f.append_trade(100.0, 1.0)
    fb = _core.LiveSession(True, "uniform", True, window=3, **_CORE_KW)
    fb.append_bar(100.5, 100.0, 100.25, 100.25, 1.0)
    cases = [(_core.LiveSession(True, "uniform", False, window=3, **_CORE_KW), f, "kind"),  # trade columns in bars
             (_core.LiveSession(True, "uniform", False, window=3, **_CORE_KW), fb, "open column"),
             (_core.LiveSession(True, "close", True, window=3, **_CORE_KW), fb, "distribute"),
             (_core.LiveSession(False, "uniform", False, window=4, **_CORE_KW), f, "options"),
             (_core.LiveSession(False, "uniform", False, window=3, **dict(_CORE_KW, tick_size=0.5)), f, "options")]
    for s, src, what in cases:
        with pytest.raises(ValueError, match=f"carry: from_session differs from this session in its {what}") as e:
            s.carry(src, True)
        assert e.value.argument == "from_session" and s.carried == 0 and s.size == 0
    ok = _core.LiveSession(False, "uniform", False, window=3, **_CORE_KW)
    ok.carry(f, True)
    assert ok.carried == 1


def test_carry_both_ways_on_two_threads_does_not_deadlock():
    # b.carry(a), then a.carry(b), while a third thread's append holds b's lock (GIL released): both
    # wait for b; with locks taken in argument order the first then waits for a, held by the second
    import threading

    from vpoc import _core

    a = _core.LiveSession(False, "uniform", False, window=3, **_CORE_KW)
    b = _core.LiveSession(False, "uniform", False, window=3, **_CORE_KW)
    price = 100 + (np.arange(2_000_000) % 7) * 0.25

    def call(fn, *args):
        try:
            fn(*args)
        except Exception:  # a carry onto a session that is not empty any more
            pass

    for _ in range(8):
        a.clear()
        b.clear()
        hold = threading.Thread(target=call, args=(b.append, price, None, None, None, None, np.ones(price.size)))
        hold.start()
        time.sleep(0.05)
        two = threading.Thread(target=call, args=(b.carry, a, True), daemon=True)
        two.start()  # waits for b first, holding nothing (argument order)
        time.sleep(0.02)
        one = threading.Thread(target=call, args=(a.carry, b, True), daemon=True)
        one.start()  # holds a (argument order), waits for b; b's waiters are woken in turn
        hold.join()
        one.join(30)
        two.join(30)
        assert not one.is_alive() and not two.is_alive(), "a.carry(b) and b.carry(a) deadlocked"


def test_flag_is_checked():
    with pytest.raises(TypeError, match="window_across_sessions must be True or False"):
        vpoc.Live(kind="trades", tick_size=0.25, window=3, window_across_sessions=1)
    with pytest.raises(ValueError, match="window_across_sessions=True lets each row's window reach"):
        vpoc.Live(kind="trades", tick_size=0.25, window_across_sessions=True)


@pytest.mark.parametrize("window", [6, 40, "20min", "3h"])
@pytest.mark.parametrize("roll", [30, 99, 100])
def test_state_round_trip_continues_across(window, roll):
    """Saved mid-session, with the session one row old, or right at a roll: nested, flat and pickled
    states continue exactly (the carry is in the state)."""
    rng = np.random.default_rng(roll)
    cols, ts = _rows(rng, 300, True, False)
    kw = dict(tick_size=0.25, window=window, window_across_sessions=True,
              session_starts=np.array([ts[0], ts[roll], ts[180]]))
    assert_state_round_trip(kw, cols, ts)
    a = vpoc.Live(**kw)
    a.update(*[c[:100] for c in cols], timestamp=ts[:100])
    b = vpoc.Live.from_state(a.state_dict(flat=True))
    for i in range(100, 300, 11):
        assert b.update(*[c[i:i + 11] for c in cols], timestamp=ts[i:i + 11]) == \
            a.update(*[c[i:i + 11] for c in cols], timestamp=ts[i:i + 11])


def test_state_after_close_keeps_the_carry_and_is_checked():
    rng = np.random.default_rng(9)
    cols, ts = _rows(rng, 200, False, False)
    kw = dict(kind="trades", tick_size=0.25, window=8, window_across_sessions=True)
    a = vpoc.Live(**kw)
    a.update(*[c[:100] for c in cols], timestamp=ts[:100])
    a.close()
    st = a.state_dict()
    assert st["current"] is None and st["carry"]["ts"].shape == (7,)
    b = vpoc.Live.from_state(st)
    a.update(*[c[100:] for c in cols], timestamp=ts[100:])
    b.update(*[c[100:] for c in cols], timestamp=ts[100:])
    assert b.levels == a.levels
    ref = vpoc.from_trades(*cols, offsets=[0, 100, 200], tick_size=0.25, developing=True, window=8,
                           window_across_sessions=True)
    assert b.poc == ref.dev_poc[-1]
    # a carry longer than any later window reaches, a missing or an unexpected carry: named
    bad = dict(st, carry={k: (np.r_[v[:1], v] if isinstance(v, np.ndarray) else v)  # prev_ts: a number
                          for k, v in st["carry"].items()})
    with pytest.raises(ValueError, match=r"state\['carry'\] holds 8 rows, but a later row's window reaches only"):
        vpoc.Live.from_state(bad)
    with pytest.raises(ValueError, match=r"missing \['carry'\]"):
        vpoc.Live.from_state({k: v for k, v in st.items() if k != "carry"})
    plain = vpoc.Live(kind="trades", tick_size=0.25, window=8)
    plain.update(1.0, 1.0, timestamp=T0)
    with pytest.raises(ValueError, match="carry"):
        vpoc.Live.from_state(dict(plain.state_dict(), carry=None))
    late = dict(st, carry=dict(st["carry"], ts=st["carry"]["ts"] + 10**15))
    with pytest.raises(ValueError, match=r"last_ts.*carry"):
        vpoc.Live.from_state(late)
