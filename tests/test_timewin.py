"""Time windows (``developing=True, window="60min"``) against brute force on every window.

Contract: docs/contract.md "Rolling windows": row i's window is its session's rows j <= i with
t_j > t_i - span (pandas' rolling: (t - span, t]); its levels equal vpoc's batch call on those rows.
"""

from __future__ import annotations

import datetime as dt
import warnings

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from _compare import check_windows as check
from _compare import dev_levels as dev
from reference import ref_bars, ref_trades

vpoc = pytest.importorskip("vpoc")
pd = pytest.importorskip("pandas")

from vpoc import _timewin  # noqa: E402
import _deps  # noqa: E402

T0 = int(pd.Timestamp("2024-03-05 15:00", tz="UTC").value)  # ns; every test stays within one day
SPANS = ["1ns", "1s", "90s", "5min", "60min", dt.timedelta(minutes=7), np.timedelta64(30, "s"),
         pd.Timedelta("2min"), pd.offsets.Minute(3)]


def span_ns(span):
    return _timewin.window_arg(span)[1]


def brute_starts(t, offsets, span):
    """Each row's window start by the definition, one row at a time (plain Python integers)."""
    out = []
    for s in range(len(offsets) - 1):
        a, b = int(offsets[s]), int(offsets[s + 1])
        for i in range(a, b):
            inside = [j for j in range(a, i + 1) if int(t[j]) > int(t[i]) - span]
            assert inside == list(range(inside[0], i + 1))  # a time-ordered session: one run of rows
            out.append(inside[0])
    return np.array(out, dtype=np.int64)


def times(rng, n, gaps):
    """n sorted ns timestamps: gaps drawn from `gaps` seconds (0: duplicate timestamps)."""
    return T0 + np.cumsum(rng.choice(np.asarray(gaps, dtype=np.int64) * 1_000_000_000, n))


@st.composite
def layouts(draw, max_rows=25):
    sizes = draw(st.lists(st.integers(0, max_rows), min_size=1, max_size=3))  # 0: an empty session
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


@settings(deadline=None, max_examples=60)
@given(layouts(), st.sampled_from(range(len(SPANS))), st.integers(0, 2**32 - 1),
       st.sampled_from(("cbot", "single", "greedy")), st.sampled_from([[0, 1, 30], [0, 0, 5, 600], [60], [1, 3600]]),
       st.booleans())
def test_trades_time_window_equals_every_window(offsets, k, seed, va_method, gaps, whole):
    rng = np.random.default_rng(seed)
    n = int(offsets[-1])
    t = times(rng, n, gaps)
    price = rng.integers(-8, 12, n) * 0.25
    volume = rng.integers(0, 4, n).astype(np.float64) if whole else rng.random(n)
    kw = dict(tick_size=0.25, va_method=va_method)
    note(f"{kw} span={SPANS[k]!r} gaps={gaps}")
    frame = pd.DataFrame({"timestamp": pd.to_datetime(t, utc=True), "price": price, "volume": volume})
    prof = vpoc.from_trades(frame, offsets=offsets, developing=True, window=SPANS[k], **kw)
    starts = brute_starts(t, offsets, span_ns(SPANS[k]))
    assert np.array_equal(_timewin.window_starts(span_ns(SPANS[k]), t, None, offsets, None, n), starts)
    check(prof, starts, lambda p, v: vpoc.from_trades(p, v, **kw), lambda p, v: ref_trades(p, v, **kw),
          [price, volume], whole, f"{kw} window={SPANS[k]!r}")


@settings(deadline=None, max_examples=40)
@given(layouts(), st.sampled_from(range(len(SPANS))), st.integers(0, 2**32 - 1),
       st.sampled_from(("uniform", "close", "hlc3")), st.sampled_from(("cbot", "greedy")),
       st.sampled_from([[0, 60, 60, 120], [60], [0, 1, 900]]))
def test_bars_time_window_equals_every_window(offsets, k, seed, distribute, va_method, gaps):
    rng = np.random.default_rng(seed)
    n = int(offsets[-1])
    t = times(rng, n, gaps)
    low = rng.integers(0, 12, n) * 0.25
    high = low + rng.integers(0, 5, n) * 0.25
    close = low + np.floor(rng.random(n) * ((high - low) / 0.25 + 1)) * 0.25
    volume = rng.integers(0, 50, n).astype(np.float64)
    kw = dict(tick_size=0.25, distribute=distribute, va_method=va_method)
    note(f"{kw} span={SPANS[k]!r}")
    frame = pd.DataFrame({"timestamp": pd.to_datetime(t, utc=True), "open": close, "high": high, "low": low,
                          "close": close, "volume": volume})
    ids = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))  # session_ids= (no empty sessions)
    prof = vpoc.from_bars(frame, session_ids=ids, developing=True, window=SPANS[k], **kw)
    off = np.concatenate([[0], np.flatnonzero(np.diff(ids)) + 1, [n]]) if n else np.zeros(1, np.int64)
    starts = brute_starts(t, off, span_ns(SPANS[k]))
    check(prof, starts, lambda h, lo, c, v: vpoc.from_bars(h, lo, c, v, **kw),
          lambda h, lo, c, v: ref_bars(h, lo, c, v, **kw), [high, low, close, volume], True,
          f"{kw} window={SPANS[k]!r}")


def bars_frame(n=240, seed=3, step="1min", tz="UTC", unit="ns"):
    rng = np.random.default_rng(seed)
    t = pd.date_range("2024-03-05 09:00", periods=n, freq=step, tz=tz, unit=unit)
    low = 100 + np.cumsum(rng.integers(-2, 3, n)) * 0.25
    high = low + rng.integers(0, 4, n) * 0.25
    return pd.DataFrame({"timestamp": t, "open": low, "high": high, "low": low, "close": high,
                         "volume": rng.integers(1, 90, n).astype(np.float64)})


def test_evenly_spaced_bars_time_window_is_the_count_window():
    """1-minute bars without gaps: '5min' holds the last 5 bars (the bar 5 minutes back has left)."""
    f = bars_frame()
    kw = dict(tick_size=0.25, developing=True, session_ids=np.zeros(len(f), np.int64))
    by_time = vpoc.from_bars(f, window="5min", **kw)
    by_rows = vpoc.from_bars(f, window=5, **kw)
    assert np.array_equal(dev(by_time), dev(by_rows))
    # a window of one bar's length or less: each bar alone
    alone = vpoc.from_bars(f, window=1, **kw)
    for w in ("1min", "30s", "1ns"):
        assert np.array_equal(dev(vpoc.from_bars(f, window=w, **kw)), dev(alone)), w


def test_left_edge_is_open_and_duplicates_stay_together():
    t = T0 + np.array([0, 0, 60, 60, 120, 180, 180], dtype=np.int64) * 1_000_000_000
    got = _timewin.window_starts(60 * 10**9, t, None, None, None, t.size)
    # row 2 (t=60): rows at t=0 are exactly 60 s back: outside (t - span, t]
    assert got.tolist() == [0, 0, 2, 2, 4, 5, 5]
    assert got.tolist() == brute_starts(t, [0, t.size], 60 * 10**9).tolist()


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_datetime_units_round_the_span_up_to_whole_units(unit):
    rng = np.random.default_rng(7)
    t_ns = T0 + np.cumsum(rng.integers(0, 4, 200)) * 1_000_000_000  # whole seconds: exact in every unit
    for span in (1, 1500, 10**9, 10**9 + 1, 2500 * 10**6, 61 * 10**9):
        want = brute_starts(t_ns, [0, 100, 200], span)
        t = t_ns.astype("datetime64[ns]").astype(f"datetime64[{unit}]")
        assert np.array_equal(_timewin.window_starts(span, t, None, [0, 100, 200], None, 200), want), (unit, span)


@_deps.needs("pandas_market_calendars")
def test_microsecond_and_tz_aware_frames_give_the_same_series():
    kw = dict(tick_size=0.25, developing=True, window="17min", session="globex")
    ns = vpoc.from_bars(bars_frame(step="3min"), **kw)
    us = vpoc.from_bars(bars_frame(step="3min", unit="us"), **kw)
    chicago = bars_frame(step="3min")
    chicago["timestamp"] = chicago["timestamp"].dt.tz_convert("America/Chicago")
    local = vpoc.from_bars(chicago, **kw)
    assert np.array_equal(dev(ns), dev(us)) and np.array_equal(dev(ns), dev(local))
    assert np.asarray(ns.dev_poc).size == 240


@_deps.needs("pandas_market_calendars")
def test_session_rule_windows_follow_the_kept_rows():
    """Globex sessions drop the daily halt's rows and cut sessions: windows hold kept rows of one session."""
    f = bars_frame(n=600, step="7min")
    s = vpoc.sessions.globex(np.asarray(f["timestamp"].astype("int64")), on_outside="drop")
    assert s.n_dropped > 0 and s.n_sessions > 1
    prof = vpoc.from_bars(f, tick_size=0.25, developing=True, window="45min", session=s)
    t = np.asarray(f["timestamp"].astype("int64"))
    idx = np.arange(len(f)) if s.index is None else np.asarray(s.index)
    starts = brute_starts(t[idx], np.asarray(s.offsets), 45 * 60 * 10**9)
    cols = [np.asarray(f[c])[idx] for c in ("high", "low", "close", "volume")]
    check(prof, starts, lambda h, lo, c, v: vpoc.from_bars(h, lo, c, v, tick_size=0.25),
          lambda h, lo, c, v: ref_bars(h, lo, c, v, tick_size=0.25), cols, True, "globex")


def test_one_row_and_empty_frames():
    f = bars_frame(n=1)
    one = vpoc.from_bars(f, tick_size=0.25, developing=True, window="1h", session_ids=[0])
    assert one.dev_poc[0] == one.poc[0]
    empty = vpoc.from_bars(bars_frame(n=0), tick_size=0.25, developing=True, window="1h", offsets=[0])
    assert np.asarray(empty.dev_poc).size == 0


def _unitless_timedelta64():
    """numpy.timedelta64(2) with no unit, made when the test runs (numpy 2.x warns that the generic
    unit is deprecated: at collection that warning is an error under -W error)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return np.timedelta64(2)


@pytest.mark.parametrize("window", ["0min", "-5min", "abc", "60", "1M", "", np.timedelta64(-1, "s"),
                                    dt.timedelta(0), pd.Timedelta("-1min"), np.timedelta64("NaT", "ns"),
                                    _unitless_timedelta64, dt.timedelta(days=300_000), "300000D"])
def test_bad_time_window_names_window(window):
    if callable(window):
        window = window()
    with pytest.raises(ValueError, match="window"):
        vpoc.from_bars(bars_frame(n=5), tick_size=0.25, developing=True, window=window, session_ids=[0] * 5)


def test_time_window_needs_timestamps_and_developing():
    with pytest.raises(ValueError, match="window.*timestamps|timestamps.*window"):
        vpoc.from_trades([1.0, 1.25], [1, 2], tick_size=0.25, developing=True, window="60min")
    with pytest.raises(ValueError, match="window.*timestamps|timestamps.*window"):
        vpoc.from_bars([2.0], [1.0], [1.5], [3], tick_size=0.25, developing=True, window=dt.timedelta(hours=1))
    f = bars_frame(n=5)
    with pytest.raises(ValueError, match="developing=True"):
        vpoc.from_bars(f, tick_size=0.25, window="60min", session_ids=[0] * 5)
    with pytest.raises(ValueError, match="window.*legacy|legacy.*window"):
        vpoc.from_bars(f, tick_size=0.25, developing=True, window="60min", distribute="legacy", session_ids=[0] * 5)
    with pytest.raises(ValueError, match="window"):
        vpoc.from_bars(f, tick_size=0.25, developing=True, window="60min", bins=10, session_ids=[0] * 5)


def test_unordered_timestamps_within_a_session_name_window():
    """(vpoc.io refuses unordered frames first; the starts check their order themselves too.)"""
    t = T0 + np.array([0, 60, 120, 0, 60, 120], dtype=np.int64) * 10**9
    with pytest.raises(ValueError, match="window.*in order.*row 3"):
        _timewin.window_starts(300 * 10**9, t, None, None, None, 6)
    # across sessions the order is free: each session's rows are in order
    got = _timewin.window_starts(90 * 10**9, t, None, [0, 3, 6], None, 6)
    assert got.tolist() == [0, 0, 1, 3, 3, 4]


@pytest.mark.parametrize("starts, match", [
    ([0, 1, 0, 3], "non-decreasing"), ([0, 0, 3, 3], r"\[0, 2\]"), ([0, 0, 1], "length"),
    ([1, 1, 1, 1], r"\[0, 0\]")])
def test_engine_checks_window_starts(starts, match):
    from vpoc import _core

    opts = _core.Options(tick_size=0.25, developing=True)
    with pytest.raises(ValueError, match=match) as e:
        _core.profile_trades(np.ones(4), np.ones(4), None, None, opts, None, np.array(starts, dtype=np.int64))
    assert "window" in str(e.value)
    with pytest.raises(ValueError, match="window"):  # a session's first row must start its own window
        _core.profile_trades(np.ones(4), np.ones(4), np.array([0, 2, 4]), None, opts, None,
                             np.array([0, 0, 1, 2], dtype=np.int64))
    with pytest.raises(ValueError, match="window.*not both|not both.*window"):
        _core.profile_trades(np.ones(4), np.ones(4), None, None, _core.Options(tick_size=0.25, developing=True,
                             window=2), None, np.zeros(4, dtype=np.int64))


def test_frame_offsets_are_used():
    """offsets= with a DataFrame sets the sessions (it was ignored before time windows needed it)."""
    f = bars_frame(n=6)
    prof = vpoc.from_bars(f, tick_size=0.25, offsets=[0, 2, 6])
    assert prof.n_sessions == 2


@pytest.mark.parametrize("api", ["trades", "bars"])
@pytest.mark.parametrize("budget", [None, 1 << 20, 300_000])
def test_time_window_on_a_gpu_equals_the_cpu(api, budget):
    """CPU == GPU bit for bit; small memory_budgets cut the sessions into several batches (each
    uploads its own rows' window starts); one session is empty."""
    if not vpoc.gpu_available():
        pytest.skip("needs a vpoc GPU build and a GPU")
    f = bars_frame(n=3000, step="2min")
    off = np.r_[0, 97, 97, np.arange(194, 3000, 97), 3000].astype(np.int64)
    for va_method in ("cbot", "greedy"):
        kw = dict(tick_size=0.25, developing=True, window="33min", offsets=off, va_method=va_method)
        gkw = dict(kw, device="cuda") if budget is None else dict(kw, device="cuda", memory_budget=budget)
        if api == "trades":
            t = f.rename(columns={"close": "price"})[["timestamp", "price", "volume"]]
            cpu, gpu = vpoc.from_trades(t, **kw), vpoc.from_trades(t, **gkw)
        else:
            cpu, gpu = vpoc.from_bars(f, **kw), vpoc.from_bars(f, **gkw)
        assert gpu.device.startswith("cuda")
        gpu = gpu.cpu()
        assert np.array_equal(dev(gpu), dev(cpu)), (va_method, budget)
        for k in ("poc", "vah", "val", "volume"):
            assert np.array_equal(np.asarray(getattr(gpu, k)), np.asarray(getattr(cpu, k)), equal_nan=True), k


def test_live_refuses_a_window_longer_than_int64_time():
    with pytest.raises(ValueError, match="window"):
        vpoc.Live(tick_size=0.25, window=dt.timedelta(days=300_000))


def test_long_spans_before_1970_do_not_wrap():
    """t - span clipped to int64 (not wrapped) in the batch starts and in Live's appended starts alike."""
    t = np.array([-2**62 - 5, -2**62 + 10, -2**62 + 3_000, 0, 10**15], dtype=np.int64)
    span = (1 << 62) - 1
    want = brute_starts(t, np.array([0, 5]), span)
    np.testing.assert_array_equal(_timewin.window_starts(span, t, None, np.array([0, 5]), None, 5), want)
    for k in range(5):  # rows 0..k-1 already in the session, the rest appended
        np.testing.assert_array_equal(_timewin.appended_starts(span, t[:k].tolist(), t[k:]), want[k:])


def test_nat_timestamps_name_window():
    ts = np.array(["NaT", "2024-01-02T15:00", "2024-01-02T15:01"], "datetime64[s]")
    with pytest.raises(ValueError, match="window.*NaT"):
        _timewin.window_starts(60 * 10**9, ts, None, np.array([0, 3]), None, 3)
