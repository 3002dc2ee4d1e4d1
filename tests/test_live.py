"""vpoc.Live against the batch API: after every update the live levels and bar-feature rows equal
the batch developing series and bar_features rows bit for bit; finished sessions equal from_bars /
from_trades and session_features on the same rows; bad updates raise and change nothing; a
pickled or state_dict()-restored feed continues exactly."""

import pickle

import numpy as np
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

import _deps
import vpoc
from vpoc.live import BAR_COLUMNS

NEEDS_SESSIONS = _deps.needs("pandas")  # Live(session=...) assigns sessions with vpoc.sessions

DISTRIBUTES = ("uniform", "close", "hlc3", "legacy")
VA_METHODS = ("cbot", "single", "greedy")
MIN = 60 * 10**9


def same(a, b):
    """Bit-equal, NaN equal to NaN."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def random_bars(rng, n, tick, fractional, start_ns, step_ns):
    # prices on the tick grid (the batch functions refuse off-grid prices unless snap=True);
    # fractional: float volumes
    close = 4000.0 + np.cumsum(rng.integers(-3, 4, n)) * tick
    high = close + rng.integers(0, 5, n) * tick
    low = close - rng.integers(0, 5, n) * tick
    opn = np.clip(close + rng.integers(-2, 3, n) * tick, low, high)
    vol = rng.random(n) * 20 if fractional else rng.integers(0, 40, n).astype(np.int64)
    gaps = rng.integers(1, 3, n) * step_ns
    ts = start_ns + np.cumsum(gaps) - gaps[0]
    return high, low, close, opn, vol, ts.astype(np.int64)


def chunks(rng, n, max_chunk):
    """Random split of range(n) into consecutive chunks (many of one row)."""
    out, i = [], 0
    while i < n:
        k = 1 if rng.random() < 0.5 else int(rng.integers(1, max_chunk + 1))
        out.append((i, min(n, i + k)))
        i += k
    return out


def feed(live, cols, ts, rng, max_chunk, check=None):
    """Feeds cols/ts through live in random chunks; check(i_last) after each chunk."""
    bars = len(cols) == 5
    for a, b in chunks(rng, len(ts), max_chunk):
        if b - a == 1 and rng.random() < 0.7:
            args = [c[a] for c in cols]
            if bars:
                live.update(args[0], args[1], args[2], args[4], open=args[3], timestamp=int(ts[a]))
            else:
                live.update(args[0], args[1], timestamp=int(ts[a]))
        else:
            if bars:
                live.update(cols[0][a:b], cols[1][a:b], cols[2][a:b], cols[4][a:b],
                            open=cols[3][a:b], timestamp=ts[a:b])
            else:
                live.update(cols[0][a:b], cols[1][a:b], timestamp=ts[a:b])
        if check is not None:
            check(b - 1)


# 2024-03-08 (Friday) 20:00 UTC: the next 3 days cross the US DST change of 2024-03-10
DST_START = np.datetime64("2024-03-08T20:00", "ns").astype(np.int64)


@NEEDS_SESSIONS
@given(seed=st.integers(0, 2**32 - 1), distribute=st.sampled_from(DISTRIBUTES),
       va_method=st.sampled_from(VA_METHODS), ticks_per_row=st.sampled_from([1, 2, 3]),
       tick=st.sampled_from([0.25, 0.1]), fractional=st.booleans(),
       poc_tie=st.sampled_from(["center", "low", "high"]), max_chunk=st.sampled_from([3, 40]),
       sessions=st.sampled_from(["custom", "daily", "starts"]))
@pytest.mark.filterwarnings("ignore::vpoc.sessions.SessionHoursWarning")  # features in New York hours (t8fix)
def test_bars_equal_batch_after_every_update(seed, distribute, va_method, ticks_per_row, tick,
                                             fractional, poc_tie, max_chunk, sessions):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    h, lo, c, o, v, ts = random_bars(rng, n, tick, fractional, DST_START, 17 * MIN)
    kw = dict(tick_size=tick, ticks_per_row=ticks_per_row, distribute=distribute,
              va_method=va_method, poc_tie=poc_tie)
    fopts = dict(composite_sessions=2, lookbacks=(1, 2), ib_minutes=120, tz="America/New_York")
    if sessions == "starts":
        starts = np.sort(rng.choice(ts, size=min(4, n), replace=False))
        sess = dict(session_starts=starts)
        k = np.searchsorted(starts, ts, side="right") - 1
        keep = np.flatnonzero(k >= 0)
        ids = k[keep]
    else:
        opts = (dict(start="18:00", end="16:00", tz="America/New_York") if sessions == "custom"
                else dict(tz="America/New_York"))
        sess = dict(session=sessions, session_options=opts)
        S = getattr(vpoc.sessions, sessions)(ts, **opts, on_outside="drop")
        keep = np.arange(n) if S.index is None else S.index
        ids = S.session_ids
    note(f"n={n} kept={keep.size} {kw} {sess}")
    live = vpoc.Live(**kw, **sess, features=fopts, on_outside="drop")
    pos = np.full(n, -1)
    pos[keep] = np.arange(keep.size)
    if keep.size:
        args = (h[keep], lo[keep], c[keep], v[keep])
        ref = vpoc.from_bars(*args, open=o[keep], session_ids=ids, developing=True, **kw)
        bf = vpoc.bar_features(*args, open=o[keep], timestamp=ts[keep], session_ids=ids, **kw,
                               **{k: x for k, x in fopts.items() if k != "lookbacks"})
        assert bf.columns == BAR_COLUMNS

    def check(i):
        kept_before = np.flatnonzero(pos[:i + 1] >= 0)
        if kept_before.size == 0:
            assert np.isnan(live.poc)
            return
        j = pos[kept_before[-1]]
        assert live.poc == ref.dev_poc[j] and live.vah == ref.dev_vah[j] and live.val == ref.dev_val[j]
        assert same(live.bar_features_row(), bf.values[j])

    feed(live, (h, lo, c, o, v), ts, rng, max_chunk, check)
    assert live.n_dropped == n - keep.size
    live.close()
    if keep.size == 0:
        assert len(live) == 0
        return
    prof = live.profiles
    ref_done = vpoc.from_bars(*args, open=o[keep], session_ids=ids, **kw)
    for name in ("poc", "vah", "val", "poc_row", "low_row", "n_rows", "offsets", "volume",
                 "total_volume", "va_volume"):
        assert np.array_equal(getattr(prof, name), getattr(ref_done, name)), name
    assert np.array_equal(prof.session_labels, np.unique(ids))
    sf = vpoc.session_features(*args, open=o[keep], timestamp=ts[keep], session_ids=ids, **kw,
                               **fopts)
    table = live.session_table()
    assert table.columns == sf.columns
    assert same(table.values, sf.values)


@NEEDS_SESSIONS
@given(seed=st.integers(0, 2**32 - 1), va_method=st.sampled_from(VA_METHODS),
       ticks_per_row=st.sampled_from([1, 4]), max_chunk=st.sampled_from([2, 50]))
def test_trades_equal_batch_after_every_update(seed, va_method, ticks_per_row, max_chunk):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 500))
    price = 100.0 + np.cumsum(rng.integers(-2, 3, n)) * 0.1
    vol = rng.integers(1, 10, n).astype(np.float64)
    ts = DST_START + np.cumsum(rng.integers(1, 600, n)) * 10**9
    kw = dict(tick_size=0.1, ticks_per_row=ticks_per_row, va_method=va_method)
    live = vpoc.Live(kind="trades", session="daily", session_options=dict(tz="America/Chicago"), **kw)
    S = vpoc.sessions.daily(ts, tz="America/Chicago", on_outside="drop")
    ref = vpoc.from_trades(price, vol, offsets=S.offsets, developing=True, **kw)

    def check(i):
        assert (live.poc, live.vah, live.val) == (ref.dev_poc[i], ref.dev_vah[i], ref.dev_val[i])

    feed(live, (price, vol), ts, rng, max_chunk, check)
    live.close()
    done = vpoc.from_trades(price, vol, offsets=S.offsets, **kw)
    for name in ("poc", "vah", "val", "volume", "offsets", "total_volume"):
        assert np.array_equal(getattr(live.profiles, name), getattr(done, name)), name
    with pytest.raises(TypeError, match="bar features need bars"):
        live.bar_features_row()


def test_globex_calendar_sessions_and_dropped_rows():
    """The default CME calendar (holidays, early closes) assigns rows as vpoc.sessions.globex."""
    _deps.require("pandas_market_calendars")
    # 2023-11-21 .. 2023-11-28: Thanksgiving halt and the Black Friday early close
    ts = np.arange(np.datetime64("2023-11-21T20:00", "ns").astype(np.int64),
                   np.datetime64("2023-11-28T02:00", "ns").astype(np.int64), 7 * MIN)
    rng = np.random.default_rng(5)
    h, lo, c, o, v, _ = random_bars(rng, ts.size, 0.25, False, 0, MIN)
    S = vpoc.sessions.globex(ts, on_outside="drop")
    live = vpoc.Live(tick_size=0.25, session="globex", on_outside="drop")
    feed(live, (h, lo, c, o, v), ts, rng, 30)
    live.close()
    assert live.n_dropped == S.n_dropped > 0
    assert np.array_equal(live.labels, S.labels)
    kh, kl, kc, ko, kv = S.take(h, lo, c, o, v)
    ref = vpoc.from_bars(kh, kl, kc, kv, open=ko, offsets=S.offsets, tick_size=0.25)
    assert np.array_equal(live.profiles.poc, ref.poc)
    assert np.array_equal(live.profiles.volume, ref.volume)


def _es(n_sessions=3, bars=200, seed=2):
    b = vpoc.synth.es_bars(n_sessions=n_sessions, bars_per_session=bars, seed=seed)
    return b, (b.high, b.low, b.close, b.open, b.volume), b.timestamp


@NEEDS_SESSIONS
@pytest.mark.parametrize("how", ["pickle", "state_dict"])
def test_restart_mid_session_continues_exactly(how):
    b, cols, ts = _es()
    kw = dict(tick_size=0.25, distribute="legacy", va_method="greedy",
              session="globex", session_options=dict(calendar=None))
    a = vpoc.Live(**kw)
    cut = int(b.offsets[1]) + 57  # inside the second session
    for i in range(cut):
        a.update(b.high[i], b.low[i], b.close[i], b.volume[i], open=b.open[i], timestamp=int(ts[i]))
    if how == "pickle":
        r = pickle.loads(pickle.dumps(a))
    else:
        r = vpoc.Live.from_state(a.state_dict())
    assert r.levels == a.levels and same(r.bar_features_row(), a.bar_features_row())
    assert same(r.histogram(), a.histogram())
    for i in range(cut, len(ts)):
        x = a.update(b.high[i], b.low[i], b.close[i], b.volume[i], open=b.open[i], timestamp=int(ts[i]))
        y = r.update(b.high[i], b.low[i], b.close[i], b.volume[i], open=b.open[i], timestamp=int(ts[i]))
        assert x == y
        assert same(a.bar_features_row(), r.bar_features_row())
    a.close()
    r.close()
    assert same(a.session_table().values, r.session_table().values)
    assert np.array_equal(a.profiles.volume, r.profiles.volume)


def _snapshot(live):
    return pickle.dumps(live.state_dict()), live.levels, live.n_dropped, live.n_rows


@NEEDS_SESSIONS
@pytest.mark.parametrize("bad, match", [
    (dict(high=np.nan), "high\\[I\\] is not finite"),
    (dict(low=np.inf), "low\\[I\\] is not finite"),
    (dict(high=4000.0, low=4001.0), "high\\[I\\] < low\\[I\\]"),
    (dict(volume=-1.0), "volume\\[I\\] must be finite and >= 0"),
    (dict(volume=np.nan), "volume\\[I\\] must be finite and >= 0"),
    (dict(close=1.0), "close\\[I\\]=1 is outside"),
    (dict(timestamp=-1), "is before (the previous row's|timestamp)"),
])
@pytest.mark.parametrize("chunked", [False, True])
def test_bad_update_raises_and_changes_nothing(bad, match, chunked):
    match = match.replace("I", "1" if chunked else "0")  # the bad row's position in the update
    b, cols, ts = _es(n_sessions=2, bars=60)
    live = vpoc.Live(tick_size=0.25, session="globex", session_options=dict(calendar=None))
    half = 90  # inside the second session
    for i in range(half):
        live.update(b.high[i], b.low[i], b.close[i], b.volume[i], open=b.open[i], timestamp=int(ts[i]))
    before = _snapshot(live)
    row = dict(high=b.high[half], low=b.low[half], close=b.close[half], volume=float(b.volume[half]),
               open=b.open[half], timestamp=int(ts[half]))
    row.update(bad)
    if row["timestamp"] == -1:
        row["timestamp"] = int(ts[half - 1]) - 1
    if chunked:  # a good row first: the whole update must be refused
        g = half
        args = [np.array([x[g], row[k]]) for x, k in ((b.high, "high"), (b.low, "low"),
                                                        (b.close, "close"), (b.volume, "volume"))]
        args[3] = args[3].astype(np.float64)
        t = np.array([int(ts[g - 1]), row["timestamp"]], dtype=np.int64)
        with pytest.raises(ValueError, match=match):
            live.update(*args, open=np.array([b.open[g], row["open"]]), timestamp=t)
    else:
        with pytest.raises(ValueError, match=match):
            live.update(row["high"], row["low"], row["close"], row["volume"], open=row["open"],
                        timestamp=row["timestamp"])
    assert _snapshot(live) == before
    for i in range(half, len(ts)):  # and the feed goes on as if nothing happened
        live.update(b.high[i], b.low[i], b.close[i], b.volume[i], open=b.open[i], timestamp=int(ts[i]))
    live.close()
    ref = vpoc.from_bars(b.high, b.low, b.close, b.volume, open=b.open, offsets=b.offsets, tick_size=0.25)
    assert np.array_equal(live.profiles.poc, ref.poc)


@NEEDS_SESSIONS
def test_bad_rows_at_a_session_start_change_nothing():
    b, cols, ts = _es(n_sessions=2, bars=30)
    live = vpoc.Live(tick_size=0.25, session="globex", session_options=dict(calendar=None))
    with pytest.raises(ValueError, match="high\\[0\\] is not finite"):
        live.update(np.nan, 1.0, 1.0, 1.0, timestamp=int(ts[0]))
    assert live.session_label is None and live.n_rows == 0
    for i in range(30):
        live.update(b.high[i], b.low[i], b.close[i], b.volume[i], open=b.open[i], timestamp=int(ts[i]))
    before = _snapshot(live)
    with pytest.raises(ValueError, match="close\\[0\\] is not finite"):  # first row of session 2
        live.update(b.high[30], b.low[30], np.nan, 1.0, open=b.open[30], timestamp=int(ts[30]))
    assert _snapshot(live) == before and len(live) == 0
    with pytest.raises(ValueError, match="open must be given with every bar"):
        live.update(b.high[30], b.low[30], b.close[30], 1.0, timestamp=int(ts[30]))
    assert _snapshot(live) == before


def test_row_of_an_older_session_raises():
    live = vpoc.Live(tick_size=0.5, session_starts=np.array([0, 100, 200]))
    live.update(10.0, 9.0, 9.5, 1.0, timestamp=150)
    with pytest.raises(ValueError, match="before the previous row's"):
        live.update(10.0, 9.0, 9.5, 1.0, timestamp=50)
    live.update(np.array([10.0]), np.array([9.0]), np.array([9.5]), np.array([1.0]),
                timestamp=np.array([250]))
    assert live.session_label == 2 and len(live) == 1


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="tick_size"):
        vpoc.Live(tick_size=-1.0)
    with pytest.raises(ValueError, match="va_method"):
        vpoc.Live(tick_size=0.25, va_method="widest")
    with pytest.raises(ValueError, match="kind"):
        vpoc.Live(tick_size=0.25, kind="quotes")
    with pytest.raises(ValueError, match="session must be one of"):
        vpoc.Live(tick_size=0.25, session="asia")
    with pytest.raises(ValueError, match="unknown key"):
        vpoc.Live(tick_size=0.25, session="daily", session_options=dict(zone="UTC"))
    with pytest.raises(ValueError, match="either session or session_starts"):
        vpoc.Live(tick_size=0.25, session="daily", session_starts=[0])
    with pytest.raises(ValueError, match="unknown option"):
        vpoc.Live(tick_size=0.25, features=dict(lookback=3))
    live = vpoc.Live(tick_size=0.25)
    with pytest.raises(TypeError, match="timestamp"):
        live.update(1.0, 1.0, 1.0, 1.0)
    with pytest.raises(TypeError, match="takes high, low, close, volume"):
        live.update(1.0, 1.0, 1.0, timestamp=0)
    with pytest.raises(ValueError, match="rows but high has"):
        live.update(np.ones(3), np.ones(2), np.ones(3), np.ones(3), timestamp=np.arange(3))
    with pytest.raises(ValueError, match="state must be a dict"):
        vpoc.Live.from_state({"version": -1})


def test_histogram_is_a_view_of_the_current_profile():
    b, cols, ts = _es(n_sessions=1, bars=120)
    live = vpoc.Live(tick_size=0.25, ticks_per_row=2)
    assert live.histogram().shape == (0,) and np.isnan(live.poc)
    for i in range(120):
        live.update(b.high[i], b.low[i], b.close[i], b.volume[i], open=b.open[i], timestamp=int(ts[i]))
        if i % 17 == 0 or i == 119:
            hist = live.histogram()
            assert not hist.flags.writeable and hist.base is not None
            ref = vpoc.from_bars(b.high[:i + 1], b.low[:i + 1], b.close[:i + 1], b.volume[:i + 1],
                                 tick_size=0.25, ticks_per_row=2)
            assert live.low_row == ref.low_row[0]
            # the developing profile sums each bar's shares in float64; the batch engine sums
            # whole volumes exactly first: equal to rounding
            np.testing.assert_allclose(hist, ref.volume, rtol=1e-12, atol=0)
            assert np.array_equal(live.row_prices, ref.session(0)[0])
            assert live.total_volume == ref.total_volume[0]
    again = live.histogram()
    assert np.shares_memory(again, live.histogram())


def test_histogram_with_whole_volumes_on_one_row_is_exact():
    b, cols, ts = _es(n_sessions=1, bars=90, seed=4)
    live = vpoc.Live(tick_size=0.25, distribute="close")
    live.update(b.high, b.low, b.close, b.volume, open=b.open, timestamp=ts)
    ref = vpoc.from_bars(b.high, b.low, b.close, b.volume, tick_size=0.25, distribute="close")
    assert np.array_equal(live.histogram(), ref.volume)
    assert live.total_volume == ref.total_volume[0] and live.va_volume == ref.va_volume[0]


@NEEDS_SESSIONS
def test_time_units():
    b, cols, ts = _es(n_sessions=2, bars=50)
    kw = dict(tick_size=0.25, session="globex", session_options=dict(calendar=None))
    ref = vpoc.Live(**kw)
    sec = vpoc.Live(**kw, time_unit="s")
    for i in range(100):
        x = ref.update(b.high[i], b.low[i], b.close[i], b.volume[i], timestamp=int(ts[i]))
        y = sec.update(b.high[i], b.low[i], b.close[i], b.volume[i], timestamp=int(ts[i]) // 10**9)
        assert x == y and same(ref.bar_features_row(), sec.bar_features_row())
    with pytest.raises(ValueError, match="looks like microseconds"):
        vpoc.Live(**kw).update(b.high[0], b.low[0], b.close[0], b.volume[0], timestamp=int(ts[0]) // 1000)
    with pytest.raises(ValueError, match="looks like milliseconds"):
        vpoc.Live(**kw).update(b.high[:3], b.low[:3], b.close[:3], b.volume[:3], timestamp=ts[:3] // 10**6)
    with pytest.raises(ValueError, match="time_unit"):
        vpoc.Live(**kw, time_unit="minutes")
    dt = vpoc.Live(**kw)  # datetime64 and pandas timestamps carry their unit
    pd = pytest.importorskip("pandas")
    dt.update(b.high[0], b.low[0], b.close[0], b.volume[0], timestamp=np.datetime64(int(ts[0]), "ns"))
    dt.update(b.high[1], b.low[1], b.close[1], b.volume[1], timestamp=pd.Timestamp(int(ts[1]), tz="UTC"))
    assert dt.session_rows == 2
