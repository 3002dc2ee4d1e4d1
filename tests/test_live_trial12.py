# Trial 12 findings 1, 3, 4 on vpoc.Live: rows of a session close() ended, the too-wide row, bar-only arguments of trades.
# Contract: each test failed on main before the fix (guards marked as such pass on both); docs/live.md states the rules.
import numpy as np
import pytest

import _deps
import vpoc

T = int(np.datetime64("2024-01-02T15:00", "ns").astype(np.int64))  # 09:00 CT, trade date 2024-01-02
MIN = 60 * 10**9


@pytest.fixture(scope="module")
def bars():
    b = vpoc.synth.es_bars(n_sessions=2, bars_per_session=20)
    return [np.asarray(x) for x in (b.high, b.low, b.close, b.volume, b.open, b.timestamp)]


def _feed(live, b, lo, hi, one=False):
    h, l, c, v, o, ts = b
    if one:
        return live.update(float(h[lo]), float(l[lo]), float(c[lo]), float(v[lo]), open=float(o[lo]),
                           timestamp=int(ts[lo]))
    return live.update(h[lo:hi], l[lo:hi], c[lo:hi], v[lo:hi], open=o[lo:hi], timestamp=ts[lo:hi])


def _same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], dict):
            _same(a[k], b[k])
        elif isinstance(a[k], np.ndarray):
            np.testing.assert_array_equal(a[k], b[k])
        else:
            assert a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]), k


# ---------------------------------------------------------------- 1: rows of a session close() ended


@_deps.needs("pandas", "pandas_market_calendars")  # session rules with the default CME calendar
@pytest.mark.parametrize("one", [False, True])
def test_close_then_same_globex_session_refused(bars, one):
    live = vpoc.Live(tick_size=0.25, session="globex")
    _feed(live, bars, 0, 10)
    live.close()
    before = live.state_dict(flat=True)
    where = r"timestamp \(" if one else r"timestamp\[0\] \("
    with pytest.raises(ValueError, match=where + r"2019-01-01T23:10:00Z\) belongs to session 20190102, which "
                                         r"close\(\) ended") as e:
        _feed(live, bars, 10, 15, one)
    assert e.value.argument == "timestamp" and e.value.index == (None if one else 0)
    _same(before, live.state_dict(flat=True))  # nothing changed
    assert list(live.profiles.session_labels) == [20190102] and live.session_label is None
    # the next trade date is taken (guard: also on main)
    _feed(live, bars, 20, 40)
    live.close()
    assert list(live.profiles.session_labels) == [20190102, 20190103]


@_deps.needs("pandas", "pandas_market_calendars")  # session rules with the default CME calendar
@pytest.mark.parametrize("rule", [dict(session="rth"), "starts"])
def test_close_then_same_session_refused_other_rules(rule):
    if rule == "starts":
        rule = dict(session_starts=np.array([T - 60 * MIN, T + 600 * MIN]))
    live = vpoc.Live(tick_size=0.25, kind="trades", **rule)
    live.update(np.full(3, 5000.0), np.ones(3), timestamp=T + MIN * np.arange(3))
    live.close()
    label = live.labels[-1]
    with pytest.raises(ValueError, match=rf"timestamp\[0\] .* belongs to session {label}, which close\(\) ended"):
        live.update(np.full(2, 5000.0), np.ones(2), timestamp=T + MIN * (5 + np.arange(2)))
    with pytest.raises(ValueError, match=rf"belongs to session {label}, which close\(\) ended"):
        live.update(5000.0, 1.0, timestamp=T + 5 * MIN)
    assert live.n_rows == 3 and len(live) == 1 and live.session_label is None


@_deps.needs("pandas", "pandas_market_calendars")  # session rules with the default CME calendar
def test_close_then_same_session_refused_after_from_state(bars):
    live = vpoc.Live(tick_size=0.25, session="globex")
    _feed(live, bars, 0, 10)
    live.close()
    again = vpoc.Live.from_state(live.state_dict(flat=True))
    with pytest.raises(ValueError, match="which close\\(\\) ended"):
        _feed(again, bars, 10, 15)


@_deps.needs("pandas", "pandas_market_calendars")  # session rules with the default CME calendar
def test_close_then_later_session_guard(bars):
    """Guard (passes on main): after close(), an update wholly in a later session, or one that starts with
    rows in no session, is taken; the finished sessions equal from_bars on their rows."""
    h, l, c, v, o, ts = bars
    live = vpoc.Live(tick_size=0.25, session="globex", on_outside="drop")
    _feed(live, bars, 0, 10)
    live.close()
    halt = np.array([ts[20] - 30 * MIN])  # the daily halt before the next session: dropped
    live.update(np.r_[h[19], h[20:30]], np.r_[l[19], l[20:30]], np.r_[c[19], c[20:30]], np.r_[v[19], v[20:30]],
                open=np.r_[o[19], o[20:30]], timestamp=np.r_[halt, ts[20:30]])
    live.close()
    assert list(live.labels) == [20190102, 20190103] and live.n_dropped == 1
    b = vpoc.from_bars(h[20:30], l[20:30], c[20:30], v[20:30], open=o[20:30], tick_size=0.25)
    assert live.profiles.total_volume[1] == b.total_volume[0] and live.profiles.poc[1] == b.poc[0]


def test_close_without_session_rule_starts_next_guard():
    """Guard (passes on main): without a session rule close() is the only boundary: the next rows start
    session 1, whatever their time."""
    live = vpoc.Live(tick_size=0.25, kind="trades")
    live.update(np.full(3, 5000.0), np.ones(3), timestamp=T + np.arange(3))
    live.close()
    live.update(5000.25, 2.0, timestamp=T + 5)
    live.update(np.full(2, 5000.0), np.ones(2), timestamp=T + 6 + np.arange(2))
    live.close()
    assert list(live.labels) == [0, 1] and list(live.profiles.total_volume) == [3.0, 4.0]


# ---------------------------------------------------------------- 3: the too-wide row


def test_max_rows_names_update_row_trades():
    live = vpoc.Live(tick_size=0.25, kind="trades", max_rows=3)
    live.update(np.full(5, 5000.0), np.ones(5), timestamp=T + np.arange(5))
    before = live.state_dict(flat=True)
    p = np.array([5000.0, 5001.0, 5000.0, 5000.0])
    with pytest.raises(ValueError) as e:
        live.update(p, np.ones(4), timestamp=T + 10 + np.arange(4))
    with pytest.raises(ValueError) as batch:  # the batch's words on the session's rows: row 6 of 9
        vpoc.from_trades(np.r_[np.full(5, 5000.0), p], np.ones(9), tick_size=0.25, max_rows=3)
    assert "from row 6 on" in str(batch.value)
    assert str(e.value) == str(batch.value).replace("row 6", "row 1")
    assert e.value.index == 1
    _same(before, live.state_dict(flat=True))
    with pytest.raises(ValueError, match="session 0 spans 41 rows, more than max_rows=3 from row 0 on"):
        live.update(5010.0, 1.0, timestamp=T + 20)  # one row: row 0
    _same(before, live.state_dict(flat=True))


@_deps.needs("pandas", "pandas_market_calendars")  # session rules with the default CME calendar
def test_max_rows_names_update_row_bars():
    live = vpoc.Live(tick_size=0.25, max_rows=3, session="globex")
    live.update(5000.0, 5000.0, 5000.0, 1.0, timestamp=T)
    hi = np.array([5000.25, 5000.5, 5010.0, 5000.0])
    with pytest.raises(ValueError, match="session 20240102 spans 41 rows, more than max_rows=3 from bar 2 on") as e:
        live.update(hi, np.full(4, 5000.0), np.full(4, 5000.0), np.ones(4), timestamp=T + MIN * (1 + np.arange(4)))
    assert e.value.index == 2
    with pytest.raises(ValueError, match="session 20240102 spans 41 rows, more than max_rows=3 from bar 0 on"):
        live.update(5010.0, 5000.0, 5000.0, 1.0, timestamp=T + MIN)
    assert live.n_rows == 1 and live.session_rows == 1


@_deps.needs("pandas", "pandas_market_calendars")  # session rules with the default CME calendar
def test_max_rows_position_counts_dropped_rows():
    """The position is the row's in the update: rows dropped (in no session) before it count."""
    live = vpoc.Live(tick_size=0.25, kind="trades", max_rows=3, session="globex", on_outside="drop")
    halt = int(np.datetime64("2024-01-02T22:30", "ns").astype(np.int64))  # 16:30 CT: the daily halt
    ts = np.r_[halt, halt + MIN, T + 480 * MIN + np.arange(3)]  # then 17:00 CT on: trade date 2024-01-03
    with pytest.raises(ValueError, match="session 20240103 spans 5 rows, more than max_rows=3 from row 3 on") as e:
        live.update(np.array([5000.0, 5000.0, 5000.0, 5001.0, 5000.0]), np.ones(5), timestamp=ts)
    assert e.value.index == 3 and live.n_rows == 0 and live.n_dropped == 0


def _too_wide_state(kind):
    """A saved state whose current session spans 41 rows, its config's max_rows cut to 3 (a state edited, or
    saved by a Live with a larger max_rows); the update that makes the same session too wide, and its words."""
    kw = dict(kind="trades") if kind == "trades" else dict(session="globex")
    p = np.array([5000.0, 5000.0, 5001.0, 5000.0, 5010.0])
    live = vpoc.Live(tick_size=0.25, max_rows=100, **kw)
    args = (p, np.ones(5)) if kind == "trades" else (p, p, p, np.ones(5))
    ts = T + (np.arange(5) if kind == "trades" else MIN * np.arange(5))
    live.update(*args, timestamp=ts)
    st = live.state_dict()
    st["config"]["max_rows"] = 3
    fresh = vpoc.Live(tick_size=0.25, max_rows=3, **kw)
    with pytest.raises(ValueError) as e:
        fresh.update(*args, timestamp=ts)
    return st, e.value


@pytest.mark.parametrize("kind", ["trades", pytest.param("bars", marks=_deps.needs("pandas", "pandas_market_calendars"))])
def test_from_state_too_wide_in_update_words(kind):
    """Live.from_state refusing a saved session wider than max_rows names the row within the session as
    Live.update and the batch do ('session L spans N rows, more than max_rows=M from row K on', .index K)."""
    st, upd = _too_wide_state(kind)
    word = "row" if kind == "trades" else "bar"
    label = 0 if kind == "trades" else 20240102
    flat = vpoc.Live.from_state(st | {"config": dict(st["config"], max_rows=100)}).state_dict(flat=True)
    assert '"max_rows": 100' in flat["config"]  # the flat form (config as JSON): its max_rows cut too
    flat["config"] = flat["config"].replace('"max_rows": 100', '"max_rows": 3')
    for state in (st, flat):
        with pytest.raises(ValueError) as e:
            vpoc.Live.from_state(state)
        assert str(e.value) == f"state['current']: {upd}"
        assert f"session {label} spans 41 rows, more than max_rows=3 from {word} 2 on" in str(e.value)
        assert e.value.index == upd.index == 2


# ---------------------------------------------------------------- 4: bar-only arguments of a trades Live


@pytest.mark.parametrize("kw, name", [(dict(distribute="hlc3"), "distribute"),
                                      (dict(session_features=True), "session_features"),
                                      (dict(features=dict(lookbacks=(1, 5))), "features")])
def test_trades_refuse_bar_only_arguments(kw, name):
    with pytest.raises(ValueError, match=rf"{name}=.* is for bars"):
        vpoc.Live(tick_size=0.25, kind="trades", **kw)


@pytest.mark.parametrize("kw", [{}, dict(distribute="uniform"), dict(session_features=False), dict(features={}),
                                dict(preset="sierra"), dict(preset="cbot")])
def test_trades_defaults_and_states_guard(kw):
    """Guard (passes on main): a trades Live's recorded config (its default distribute, a preset's) comes
    back through from_state."""
    live = vpoc.Live(tick_size=0.25, kind="trades", **kw)
    live.update(5000.0, 1.0, timestamp=T)
    again = vpoc.Live.from_state(live.state_dict(flat=True))
    assert again.levels == live.levels
