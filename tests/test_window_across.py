"""Rolling windows across sessions (``window_across_sessions=True``) against brute force on every window.

Contract: docs/contract.md "Rolling windows": row i's window is rows start[i] .. i of the call
(start = max(0, i - N + 1), or the first row with t > t_i - span); its levels equal vpoc's batch call
on those rows bit for bit, and the NumPy reference (tests/reference.py) where not fragile.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from _compare import check_windows as check
from _compare import dev_levels as dev
from reference import ref_bars, ref_trades
import _deps  # noqa: E402

vpoc = pytest.importorskip("vpoc")

VA_METHODS = ("cbot", "single", "greedy")
POC_TIES = ("center", "low", "high")
T0 = 1_709_650_800_000_000_000  # 2024-03-05 15:00 UTC, ns


def count_starts(n, window):
    return np.maximum(0, np.arange(n) - window + 1)


def time_starts(t, span):
    """Each row's window start by the definition, one row at a time: the call's first row j with t_j > t_i - span."""
    return np.array([next(j for j in range(i + 1) if int(t[j]) > int(t[i]) - span) for i in range(len(t))],
                    dtype=np.int64)


@st.composite
def layouts(draw, max_rows=12):
    sizes = draw(st.lists(st.integers(0, max_rows), min_size=1, max_size=6))  # 0: an empty session
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def session_prices(rng, offsets, far):
    """Prices per session around its own level: far apart (``far``) or overlapping."""
    n = int(offsets[-1])
    level = np.repeat(np.arange(offsets.size - 1) * (25.0 if far else 0.5), np.diff(offsets))
    return level + rng.integers(-8, 12, n) * 0.25


@settings(deadline=None, max_examples=80)
@given(layouts(), st.integers(1, 40), st.integers(0, 2**32 - 1), st.sampled_from(VA_METHODS),
       st.sampled_from(POC_TIES), st.sampled_from([1, 2]), st.booleans(), st.booleans(),
       st.sampled_from([0.7, 0.5, 1.0, 0.01]))
def test_trades_across_equals_every_window(offsets, window, seed, va_method, poc_tie, tpr, whole, far, value_area):
    rng = np.random.default_rng(seed)
    n = int(offsets[-1])
    price = session_prices(rng, offsets, far)
    volume = rng.integers(0, 4, n).astype(np.int32) if whole else rng.random(n).astype(np.float32)
    kw = dict(tick_size=0.25, ticks_per_row=tpr, va_method=va_method, poc_tie=poc_tie, value_area=value_area)
    note(repr(kw))
    prof = vpoc.from_trades(price, volume, offsets=offsets, developing=True, window=window,
                            window_across_sessions=True, **kw)
    check(prof, count_starts(n, window), lambda p, v: vpoc.from_trades(p, v, **kw),
          lambda p, v: ref_trades(p, v, **kw), [price, volume], whole, f"{kw} window={window}")
    flat = vpoc.from_trades(price, volume, offsets=offsets, developing=True, window=window, **kw)
    for k in ("poc", "vah", "val", "total_volume", "n_rows", "low_row", "volume"):  # per session: unchanged
        assert np.array_equal(np.asarray(getattr(prof, k)), np.asarray(getattr(flat, k)), equal_nan=True), k


@settings(deadline=None, max_examples=50)
@given(layouts(), st.integers(1, 30), st.integers(0, 2**32 - 1), st.sampled_from(("uniform", "close", "hlc3")),
       st.sampled_from(VA_METHODS), st.sampled_from(POC_TIES), st.sampled_from([1, 3]), st.booleans())
def test_bars_across_equals_every_window(offsets, window, seed, distribute, va_method, poc_tie, tpr, far):
    rng = np.random.default_rng(seed)
    n = int(offsets[-1])
    low = session_prices(rng, offsets, far)
    high = low + rng.integers(0, 5, n) * 0.25
    close = low + np.floor(rng.random(n) * ((high - low) / 0.25 + 1)) * 0.25
    volume = rng.integers(0, 50, n).astype(np.float64)
    kw = dict(tick_size=0.25, ticks_per_row=tpr, distribute=distribute, va_method=va_method, poc_tie=poc_tie)
    note(repr(kw))
    prof = vpoc.from_bars(high, low, close, volume, offsets=offsets, developing=True, window=window,
                          window_across_sessions=True, **kw)
    check(prof, count_starts(n, window), lambda h, lo, c, v: vpoc.from_bars(h, lo, c, v, **kw),
          lambda h, lo, c, v: ref_bars(h, lo, c, v, **kw), [high, low, close, volume], True, f"{kw} window={window}")


def test_touched_rows_across():
    rng = np.random.default_rng(5)
    offsets = np.array([0, 7, 7, 15, 22])
    price = session_prices(rng, offsets, False)
    volume = rng.integers(0, 5, 22).astype(np.float64)
    kw = dict(tick_size=0.25, va_rows="touched")
    prof = vpoc.from_trades(price, volume, offsets=offsets, developing=True, window=9, window_across_sessions=True, **kw)
    got = dev(prof)
    for i, a in enumerate(count_starts(22, 9).tolist()):
        b = vpoc.from_trades(price[a:i + 1], volume[a:i + 1], **kw)
        assert np.array_equal(got[:, i], [b.poc[0], b.vah[0], b.val[0]]), i


def test_one_session_changes_nothing_and_threads_agree():
    rng = np.random.default_rng(1)
    price = rng.integers(0, 30, 300) * 0.25
    volume = rng.integers(1, 9, 300).astype(np.float64)
    kw = dict(tick_size=0.25, developing=True, window=25)
    a = vpoc.from_trades(price, volume, **kw)
    b = vpoc.from_trades(price, volume, window_across_sessions=True, **kw)
    assert np.array_equal(dev(a), dev(b))
    off = np.array([0, 40, 41, 41, 150, 300])
    one = vpoc.from_trades(price, volume, offsets=off, window_across_sessions=True, threads=1, **kw)
    four = vpoc.from_trades(price, volume, offsets=off, window_across_sessions=True, threads=4, **kw)
    assert np.array_equal(dev(one), dev(four))


def test_window_over_all_rows_is_the_prefix_series_of_the_call():
    rng = np.random.default_rng(2)
    price = rng.integers(0, 30, 120) * 0.25
    volume = rng.integers(0, 9, 120).astype(np.float64)
    across = vpoc.from_trades(price, volume, offsets=[0, 30, 60, 61, 120], tick_size=0.25, developing=True,
                              window=500, window_across_sessions=True)
    prefix = vpoc.from_trades(price, volume, tick_size=0.25, developing=True)  # one session: every prefix
    assert np.array_equal(dev(across), dev(prefix))


@settings(deadline=None, max_examples=40)
@given(layouts(), st.sampled_from([1, 30, 90, 300, 3600]), st.integers(0, 2**32 - 1), st.sampled_from(VA_METHODS),
       st.sampled_from([[0, 1, 30], [0, 0, 5, 600], [60], [1, 3600]]))
def test_time_window_across_equals_every_window(offsets, span_s, seed, va_method, gaps):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    n = int(offsets[-1])
    t = T0 + np.cumsum(rng.choice(np.asarray(gaps, dtype=np.int64) * 1_000_000_000, n))
    price = session_prices(rng, offsets, False)
    volume = rng.integers(0, 4, n).astype(np.float64)
    kw = dict(tick_size=0.25, va_method=va_method)
    frame = pd.DataFrame({"timestamp": pd.to_datetime(t, utc=True), "price": price, "volume": volume})
    prof = vpoc.from_trades(frame, offsets=offsets, developing=True, window=f"{span_s}s",
                            window_across_sessions=True, **kw)
    check(prof, time_starts(t, span_s * 10**9), lambda p, v: vpoc.from_trades(p, v, **kw),
          lambda p, v: ref_trades(p, v, **kw), [price, volume], True, f"{kw} span={span_s}s")


def test_evenly_spaced_bars_time_window_is_the_count_window_across_sessions():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    n = 200
    t = pd.date_range("2024-03-05 14:00", periods=n, freq="1min", tz="UTC", unit="ns")
    low = 100 + rng.integers(0, 20, n) * 0.25
    f = pd.DataFrame({"timestamp": t, "open": low, "high": low + 0.5, "low": low, "close": low,
                      "volume": rng.integers(1, 50, n).astype(float)})
    off = [0, 50, 50, 120, 200]
    a = vpoc.from_bars(f, offsets=off, tick_size=0.25, developing=True, window="60min", window_across_sessions=True)
    b = vpoc.from_bars(f, offsets=off, tick_size=0.25, developing=True, window=60, window_across_sessions=True)
    assert np.array_equal(dev(a), dev(b))


@_deps.needs("pandas_market_calendars")
def test_session_rule_drops_rows_from_every_window():
    """Globex sessions drop the daily halt's rows: windows across sessions hold kept rows only."""
    pd = pytest.importorskip("pandas")
    n = 600
    rng = np.random.default_rng(4)
    t = pd.date_range("2024-03-05 18:00", periods=n, freq="7min", tz="UTC", unit="ns")
    low = 100 + rng.integers(0, 20, n) * 0.25
    f = pd.DataFrame({"timestamp": t, "open": low, "high": low + 0.5, "low": low, "close": low,
                      "volume": rng.integers(1, 50, n).astype(float)})
    s = vpoc.sessions.globex(np.asarray(f["timestamp"].astype("int64")), on_outside="drop")
    assert s.n_dropped > 0 and s.n_sessions > 1
    prof = vpoc.from_bars(f, tick_size=0.25, developing=True, window=40, session=s, window_across_sessions=True)
    idx = np.arange(n) if s.index is None else np.asarray(s.index)
    cols = [np.asarray(f[c])[idx] for c in ("high", "low", "close", "volume")]
    check(prof, count_starts(idx.size, 40), lambda h, lo, c, v: vpoc.from_bars(h, lo, c, v, tick_size=0.25),
          lambda h, lo, c, v: ref_bars(h, lo, c, v, tick_size=0.25), cols, True, "globex")
    prof_t = vpoc.from_bars(f, tick_size=0.25, developing=True, window="5h", session=s, window_across_sessions=True)
    ts = np.asarray(f["timestamp"].astype("int64"))[idx]
    check(prof_t, time_starts(ts, 5 * 3600 * 10**9), lambda h, lo, c, v: vpoc.from_bars(h, lo, c, v, tick_size=0.25),
          lambda h, lo, c, v: ref_bars(h, lo, c, v, tick_size=0.25), cols, True, "globex 5h")


# ---- errors (docs/design/windows-across-sessions.md section 8) ----

def test_flag_must_be_a_bool():
    with pytest.raises(TypeError, match="window_across_sessions must be True or False"):
        vpoc.from_trades([1.0], [1.0], tick_size=0.25, developing=True, window=2, window_across_sessions=1)
    with pytest.raises(TypeError, match="window_across_sessions must be True or False"):
        vpoc.from_bars([1.0], [1.0], [1.0], [1.0], tick_size=0.25, developing=True, window=2,
                       window_across_sessions="yes")
    # None is no default here (the engine's Options takes it as one): refused as Live refuses it
    calls = (lambda **k: vpoc.from_trades([1.0], [1.0], developing=True, **k),
             lambda **k: vpoc.from_bars([1.0], [1.0], [1.0], [1.0], developing=True, **k),
             lambda **k: vpoc.Live(kind="trades", **k))
    for call in calls:
        with pytest.raises(TypeError, match=r"^window_across_sessions must be True or False, got None"):
            call(tick_size=0.25, window=2, window_across_sessions=None)


@pytest.mark.parametrize("kw", [dict(), dict(developing=True), dict(developing=True, va_rows="touched")])
def test_flag_needs_a_window(kw):
    msg = (r"window_across_sessions=True lets each row's window reach into earlier sessions: pass window=N or a "
           r"time window \(with developing=True\)")
    with pytest.raises(ValueError, match=msg) as e:
        vpoc.from_trades([1.0, 1.25], [1.0, 2.0], offsets=[0, 1, 2], tick_size=0.25, window_across_sessions=True, **kw)
    assert getattr(e.value, "argument", "window_across_sessions") in ("window_across_sessions", "window")
    with pytest.raises(ValueError, match="developing=True"):  # window=N without developing: window's own error
        vpoc.from_trades([1.0, 1.25], [1.0, 2.0], tick_size=0.25, window=3, window_across_sessions=True)


def test_time_window_needs_ordered_sessions():
    from vpoc import _timewin

    t = T0 + np.array([0, 60, 120, 0, 60, 120], dtype=np.int64) * 10**9
    msg = (r"window_across_sessions=True with a time window needs timestamps in order across sessions: row 3 "
           r"\(first row of session 1\) is earlier than row 2")
    with pytest.raises(ValueError, match=msg):
        _timewin.window_starts(90 * 10**9, t, None, [0, 3, 6], None, 6, True)
    assert _timewin.window_starts(90 * 10**9, t, None, [0, 3, 6], None, 6).tolist() == [0, 0, 1, 3, 3, 4]
    with pytest.raises(ValueError, match=r"in order within each session; row 4 is earlier than row 3"):
        _timewin.window_starts(90 * 10**9, t[[0, 1, 2, 4, 3, 5]] + np.r_[0, 0, 0, 10**12, 10**12, 10**12], None,
                               [0, 3, 6], None, 6, True)
    # (vpoc.io refuses an unordered frame before any window is read: the starts check their order themselves)


@pytest.mark.parametrize("starts, match", [
    ([0, 1, 0, 3], r"window starts must be non-decreasing: row 2 starts at 0 < 1 \(row 1\)"),
    ([0, 0, 3, 3], r"window start of row 2 must lie in \[0, 2\] \(window_across_sessions\), got 3"),
    ([0, -1, 1, 1], r"window start of row 1 must lie in \[0, 1\] \(window_across_sessions\), got -1")])
def test_engine_checks_starts_over_the_call(starts, match):
    from vpoc import _core

    opts = _core.Options(tick_size=0.25, developing=True, window_across_sessions=True)
    with pytest.raises(ValueError, match=match):
        _core.profile_trades(np.ones(4), np.ones(4), np.array([0, 2, 4]), None, opts, None,
                             np.array(starts, dtype=np.int64))
    # a start in the previous session is fine across sessions
    r = _core.profile_trades(np.ones(4), np.ones(4), np.array([0, 2, 4]), None, opts, None,
                             np.array([0, 0, 1, 2], dtype=np.int64))
    assert np.asarray(r.dev_poc).size == 4


def test_too_wide_window_names_the_row():
    price = np.r_[np.full(5, 100.0), np.full(5, 200.0)]
    msg = (r"the window of row 5 in session 1 \(4 rows, reaching back 1 session\) spans 401 rows, more than max_rows=300; "
           r"raise max_rows or shorten window")
    with pytest.raises(ValueError, match=msg):
        vpoc.from_trades(price, np.ones(10), offsets=[0, 5, 10], tick_size=0.25, developing=True, window=4,
                         window_across_sessions=True, max_rows=300)
    ok = vpoc.from_trades(price, np.ones(10), offsets=[0, 5, 10], tick_size=0.25, developing=True, window=4,
                          window_across_sessions=True, max_rows=401)
    assert ok.dev_poc[5] == 100.0  # rows 2, 3, 4 at 100 outweigh row 5
    with pytest.raises(ValueError, match=r"the window of bar 5 in session 1 \(4 bars, reaching back 1 session\) spans 401 rows"):
        vpoc.from_bars(price, price, price, np.ones(10), offsets=[0, 5, 10], tick_size=0.25, developing=True,
                       window=4, window_across_sessions=True, max_rows=300)


@pytest.mark.parametrize("far", [1e7, 1e12])
def test_too_wide_window_over_a_price_gap_allocates_nothing(far):
    # sessions far apart: the scratch of the hull (~4e13 rows at 1e12) is never allocated; the first
    # window of session 1 is measured alone (without the check: MemoryError, or ~1.3 GB at 1e7)
    price = np.array([100.0, 100.25, far, far + 0.25])
    rows = int(round(far / 0.25)) - 401 + 1  # rows 401 (100.25) .. far / 0.25
    msg = (rf"the window of {{what}} 2 in session 1 \(2 {{what}}s, reaching back 1 session\) spans {rows} rows, more "
           r"than max_rows=1000000; raise max_rows or shorten window")
    for threads in (1, 2):
        with pytest.raises(ValueError, match=msg.format(what="row")):
            vpoc.from_trades(price, np.ones(4), offsets=[0, 2, 4], tick_size=0.25, developing=True, window=2,
                             window_across_sessions=True, threads=threads)
        with pytest.raises(ValueError, match=msg.format(what="bar")):
            vpoc.from_bars(price, price, price, np.ones(4), offsets=[0, 2, 4], tick_size=0.25, developing=True,
                           window=2, window_across_sessions=True, threads=threads)
    # an earlier session's own too-wide window still comes first (the smallest row)
    price = np.r_[100.0, 200.0, far, far]
    with pytest.raises(ValueError, match=r"the window of row 1 in session 1 \(2 rows, reaching back 1 session\) spans "
                                         r"401 rows"):
        vpoc.from_trades(price, np.ones(4), offsets=[0, 1, 2, 4], tick_size=0.25, developing=True, window=2,
                         window_across_sessions=True, max_rows=300)
    # window=1: no window reaches back, the same call is fine
    ok = vpoc.from_trades(np.array([100.0, 100.25, far, far + 0.25]), np.ones(4), offsets=[0, 2, 4], tick_size=0.25,
                          developing=True, window=1, window_across_sessions=True)
    assert ok.dev_poc.tolist() == [100.0, 100.25, far, far + 0.25]


def test_window_sum_past_2_53_is_refused():
    big = float(2**52 + 2**51)  # each session alone sums below 2**53; a window of both does not
    price = np.array([100.0, 100.25])
    msg = r"volume of the window of (row|bar) 1 in session 1 sums past 2\*\*53 \(9007199254740992\).*scale volume down"
    with pytest.raises(ValueError, match=msg):
        vpoc.from_trades(price, [big, big], offsets=[0, 1, 2], tick_size=0.25, developing=True, window=2,
                         window_across_sessions=True)
    ok = vpoc.from_trades(price, [big, big], offsets=[0, 1, 2], tick_size=0.25, developing=True, window=1,
                          window_across_sessions=True)
    assert ok.dev_poc.tolist() == [100.0, 100.25]
    with pytest.raises(ValueError, match=msg):
        vpoc.from_bars(price, price, price, [big, big], offsets=[0, 1, 2], tick_size=0.25, developing=True,
                       window=2, window_across_sessions=True)


def test_options_round_trip():
    import pickle

    from vpoc import _core

    o = _core.Options(tick_size=0.25, developing=True, window=5, window_across_sessions=True)
    assert o.window_across_sessions is True
    back = pickle.loads(pickle.dumps(o))
    assert back.window_across_sessions is True and repr(back) == repr(o)
    assert "window_across_sessions=True" in repr(o)
    assert _core.Options(tick_size=0.25).window_across_sessions is False


# ---- bins= (wickra's N equal-width bins): each window rebuilt from the call's rows ----

def bins_bars(rng, offsets):
    n = int(offsets[-1])
    level = np.repeat(rng.normal(0.0, 3.0, offsets.size - 1), np.diff(offsets))
    low = 100.0 + level + rng.normal(0.0, 1.0, n)
    high = low + np.where(rng.random(n) < 0.2, 0.0, rng.exponential(0.7, n))
    vol = rng.integers(0, 1000, n).astype(np.float64)
    vol[rng.random(n) < 0.15] = 0.0
    return high, low, (high + low) / 2, vol


@pytest.mark.parametrize("window", [1, 4, 30])
@pytest.mark.parametrize("preset", [None, "wickra"])
def test_bins_window_across_equals_each_window(window, preset):
    rng = np.random.default_rng(window)
    off = np.array([0, 9, 9, 20, 21, 35])
    h, lo, c, v = bins_bars(rng, off)
    kw = dict(tick_size=0.01, bins=9, preset=preset) if preset else dict(tick_size=0.01, bins=9, va_method="cbot")
    prof = vpoc.from_bars(h, lo, c, v, offsets=off, developing=True, window=window, window_across_sessions=True, **kw)
    for i, a in enumerate(count_starts(35, window).tolist()):
        one = vpoc.from_bars(h[a:i + 1], lo[a:i + 1], c[a:i + 1], v[a:i + 1], **kw)
        assert (prof.dev_poc[i], prof.dev_vah[i], prof.dev_val[i]) == (one.poc[0], one.vah[0], one.val[0]), i


def test_bins_across_is_wickra_on_multi_day_data():
    """wickra has no sessions: its rolling ValueArea over several days is the window across sessions."""
    wk = pytest.importorskip("wickra")
    rng = np.random.default_rng(11)
    off = np.array([0, 30, 31, 70, 120])
    h, lo, c, v = bins_bars(rng, off)
    for period, bins in ((5, 10), (20, 50), (45, 7)):
        want = np.asarray(wk.ValueArea(period=period, bin_count=bins).batch(h, lo, v).tolist())
        prof = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.01, preset="wickra", bins=bins, developing=True,
                              window=period, window_across_sessions=True)
        got = np.stack([prof.dev_poc, prof.dev_vah, prof.dev_val], axis=1)
        np.testing.assert_array_equal(got[period - 1:], want[period - 1:])


def test_bins_window_sum_past_2_53_is_refused():
    big = float(2**52 + 2**51)
    with pytest.raises(ValueError, match=r"volume of the window of bar 1 in session 1 sums past 2\*\*53"):
        vpoc.from_bars([10.0, 10.5], [9.0, 9.5], [9.5, 10.0], [big, big], offsets=[0, 1, 2], tick_size=0.01, bins=4,
                       developing=True, window=2, window_across_sessions=True)
    ok = vpoc.from_bars([10.0, 10.5], [9.0, 9.5], [9.5, 10.0], [big, big], offsets=[0, 1, 2], tick_size=0.01, bins=4,
                        developing=True, window=2)
    assert np.isfinite(ok.dev_poc).all()


@pytest.mark.parametrize("bins", [None, 4])
def test_a_session_sum_fails_before_any_window_with_or_without_bins(bins):
    # the window of row 1 (rows 0..1) and session 2 (rows 2, 3) both sum past 2**53: the session's
    # error, as the GPU (and the CPU without bins) give it, whatever the rows' order
    big = float(2**52 + 2**51)
    high = np.array([10.0, 10.5, 11.0, 11.5])
    with pytest.raises(ValueError, match=r"^volume of session 2 sums past 2\*\*53"):
        vpoc.from_bars(high, high - 0.5, high - 0.25, np.full(4, big), offsets=[0, 1, 2, 4], tick_size=0.01,
                       developing=True, window=2, window_across_sessions=True, bins=bins)

