"""Trial 12 findings 2, 6, 7, 8: Live's count of rounded prices on its finished sessions, where and how
its warnings speak (the off-grid rounding, rows of a trades feed outside every session), a float32 tick_size.

Contract: Live.profiles / session_table() carry the batch's snapped_prices on the same rows; Live's
warnings point at the caller's line and use the batch's words; a float32 tick_size is named, not converted.
"""

import re
import warnings

import numpy as np
import pytest

import _deps

pd = pytest.importorskip("pandas")  # the session rules and Live's clock read timestamps with pandas

import vpoc  # noqa: E402

T = np.datetime64("2024-01-02T15:00", "ns").astype(np.int64)
MIN = 60 * 10**9


def _batch_trades(p, v, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return vpoc.from_trades(p, v, tick_size=0.25, **kw)


# ---------------------------------------------------------------- 2: profiles.snapped_prices


def test_live_profiles_snapped_prices_array_update():
    p = np.array([5000.0] * 999 + [5000.1])
    vol = np.ones(1000)
    live = vpoc.Live(tick_size=0.25, kind="trades")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        live.update(p, vol, timestamp=T + np.arange(1000))
    live.close()
    want = _batch_trades(p, vol).snapped_prices
    assert want == 1
    assert live.snapped_prices == 1
    assert live.profiles.snapped_prices == want


def test_live_profiles_snapped_prices_one_row_at_a_time():
    """snap=True fed one row at a time: finished sessions only (the current one's are not in profiles)."""
    s1 = np.array([5000.0, 5000.1, 5000.25, 5000.3, 5000.5])
    s2 = np.array([5001.0, 5001.05, 5001.25])
    live = vpoc.Live(tick_size=0.25, kind="trades", snap=True)
    for k, x in enumerate(s1):
        live.update(float(x), 2.0, timestamp=int(T + k))
    live.close()
    for k, x in enumerate(s2):
        live.update(float(x), 1.0, timestamp=int(T + 100 + k))
    one = _batch_trades(s1, np.full(5, 2.0), snap=True).snapped_prices
    assert one == 2
    assert live.profiles.snapped_prices == one and live.snapped_prices == 3
    live.close()
    both = _batch_trades(np.r_[s1, s2], np.r_[np.full(5, 2.0), np.ones(3)], offsets=[0, 5, 8], snap=True)
    assert live.profiles.snapped_prices == both.snapped_prices == 3


def test_live_profiles_snapped_prices_split_by_session_in_one_update():
    """One array update spanning sessions: profiles counts the finished sessions' rows only, a
    rolled-back update changes nothing."""
    day = 1440 * MIN
    starts = [T, T + day, T + 2 * day]
    p = np.array([5000.0, 5000.1, 5000.25, 5001.0, 5001.1, 5001.2, 5002.0, 5002.1])
    ts = np.array([T, T + MIN, T + 2 * MIN, T + day, T + day + MIN, T + day + 2 * MIN, T + 2 * day, T + 2 * day + MIN])
    v = np.ones(8)
    live = vpoc.Live(tick_size=0.25, kind="trades", snap=True, session_starts=starts)
    with pytest.raises(ValueError):  # a bad row after a finished session: all or nothing
        live.update(np.r_[p[:4], np.nan], np.ones(5), timestamp=ts[:5])
    assert live.profiles.n_sessions == 0 and live.snapped_prices == 0
    live.update(p, v, timestamp=ts)
    batch = _batch_trades(p[:6], v[:6], offsets=[0, 3, 6], snap=True)
    assert batch.snapped_prices == 3
    assert live.profiles.n_sessions == 2
    assert live.profiles.snapped_prices == batch.snapped_prices
    assert live.snapped_prices == 4  # the current session's 5002.1 too


def test_live_session_table_snapped_prices():
    bars = vpoc.synth.es_bars(n_sessions=2, bars_per_session=30)
    h, lo, c, v, ts = (np.asarray(x) for x in (bars.high, bars.low, bars.close, bars.volume, bars.timestamp))
    h = h.copy()
    h[5] += 0.1  # off the grid: rounded (snap=True) and counted
    ids = np.asarray(bars.session_id)
    live = vpoc.Live(tick_size=0.25, snap=True, session_features=True, session_starts=ts[np.r_[True, ids[1:] != ids[:-1]]])
    live.update(h, lo, c, v, timestamp=ts)
    live.close()
    sf = vpoc.session_features(h, lo, c, v, timestamp=ts, session_ids=ids, tick_size=0.25, snap=True)
    assert sf.snapped_prices == 1
    assert live.profiles.snapped_prices == 1
    assert live.session_table().snapped_prices == sf.snapped_prices


# ---------------------------------------------------------------- 6: where the rounding warning points


def test_live_off_grid_warning_points_at_caller_and_names_live_count():
    p = np.array([5000.0] * 999 + [5000.1])
    live = vpoc.Live(tick_size=0.25, kind="trades")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        live.update(p, np.ones(1000), timestamp=T + np.arange(1000))
    got = [x for x in w if "not on its grid" in str(x.message)]
    assert len(got) == 1
    assert got[0].filename == __file__
    msg = str(got[0].message)
    assert "live.snapped_prices" in msg and "the result's" not in msg


# ---------------------------------------------------------------- 7: trades outside every session

_TS7 = pd.to_datetime(["2024-03-05 17:00", "2024-03-06 10:00", "2024-03-06 16:00",
                       "2024-03-06 17:00"]).tz_localize("America/Chicago")
_P7 = [5000.0, 5000.25, 5000.5, 5000.75]


def _batch_hint() -> str:
    """The batch's words for the row at 16:00 (sessions.globex, then from_trades)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = vpoc.sessions.globex(_TS7)
        vpoc.from_trades(np.array(_P7), np.ones(4), tick_size=0.25, session=s)
    msg = " ".join(str(x.message) for x in w if issubclass(x.category, vpoc.DroppedRowsWarning))
    m = re.search(r"fall in (.*?)\. Counts", msg)
    assert m, msg
    return m.group(1)


@_deps.needs("pandas_market_calendars")  # the default calendar
def test_live_trades_outside_warning_uses_batch_words():
    live = vpoc.Live(tick_size=0.25, kind="trades", session="globex")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for t_, pr in zip(_TS7, _P7):
            live.update(pr, 1.0, timestamp=t_)
    msgs = [str(x.message) for x in w if issubclass(x.category, vpoc.DroppedRowsWarning)]
    assert len(msgs) == 1, msgs
    assert "bar label" not in msgs[0] and "settlement" not in msgs[0]
    assert _batch_hint() in msgs[0]


@_deps.needs("pandas_market_calendars")  # the default calendar
def test_live_trades_outside_error_names_no_bar_label():
    live = vpoc.Live(tick_size=0.25, kind="trades", session="globex", on_outside="raise")
    for t_, pr in zip(_TS7[:2], _P7[:2]):
        live.update(pr, 1.0, timestamp=t_)
    with pytest.raises(ValueError) as e:
        live.update(_P7[2], 1.0, timestamp=_TS7[2])
    msg = str(e.value)
    assert "bar close" not in msg and "label=" not in msg
    assert "daily halt" in msg


# ---------------------------------------------------------------- 8: a float32 tick_size


@pytest.mark.parametrize("tick", [np.float32(0.1), float(np.float32(0.1))])
def test_float32_tick_size_named(tick):
    with pytest.raises(ValueError) as e:
        vpoc.from_trades(np.arange(45000, 45020) * 0.1, np.ones(20), tick_size=tick)
    msg = str(e.value)
    assert "float32" in msg and "tick_size=0.1" in msg
    assert msg.startswith("tick_size=0.10000000149011612")  # not silently converted
    with pytest.raises(ValueError) as e:  # a wrong tick that is no float32 gets no such hint
        vpoc.from_trades(np.arange(45000, 45020) * 0.1, np.ones(20), tick_size=0.25)
    assert "float32" not in str(e.value)


def test_float32_tick_size_named_by_live():
    live = vpoc.Live(tick_size=np.float32(0.1), kind="trades")
    with pytest.raises(ValueError, match="float32"):
        live.update(4500.0, 1.0, timestamp=int(T))
    with pytest.raises(ValueError, match="float32"):
        live.update(np.arange(45000, 45020) * 0.1, np.ones(20), timestamp=T + np.arange(20))

