"""vpoc.Live's inputs (issue 23 points 3, 4, 5 on the live path): the price grid, rows outside
every session, the IB of holiday-merged sessions and the guessed session rule.

Contract: Live refuses off-grid prices unless snap=True (then counts them), warns about dropped
rows as the batch does, and equals the batch features bit for bit on the users' file conventions.
"""

import sys
import warnings

import numpy as np
import pytest

import vpoc
sys.path.insert(0, "tests")
import _deps  # noqa: E402
from _user_file import user_bars  # noqa: E402

NEEDS_CAL = _deps.needs("pandas_market_calendars")
MIN = 60 * 10**9
HOUR = 60 * MIN


@pytest.fixture(scope="module")
def es():
    """Two weeks around MLK day (2025-01-20, booked to 2025-01-21), one Saturday stray print."""
    return user_bars(start="2025-01-02", end="2025-01-24")


def cols(d):
    return d["high"], d["low"], d["close"], d["volume"]


def one_by_one(live, d, ts):
    for i in range(ts.shape[0]):
        live.update(float(d["high"][i]), float(d["low"][i]), float(d["close"][i]), int(d["volume"][i]),
                    open=float(d["open"][i]), timestamp=int(ts[i]))


def off_grid(d, tick, rows=slice(None)):
    """Plain-NumPy count of the prices of the given rows not within 1e-6 ticks of the grid."""
    n = 0
    for k in ("high", "low", "close", "open"):
        q = d[k][rows] / tick
        n += int(np.sum(np.abs(q - np.round(q)) > 1e-6 + np.abs(q) * 2.0**-52))
    return n


# =============================================================================== 23.4 price grid


@NEEDS_CAL
def test_23_4_off_grid_prices_are_refused_and_nothing_changes(es):
    live = vpoc.Live(tick_size=0.3, session="globex", label="close", interval=60)
    ts = es["open_ns"] + MIN
    with pytest.raises(ValueError, match=r"tick_size=0\.3: .*not on its grid.*tick_size=0\.25"):
        live.update(*cols(es), open=es["open"], timestamp=ts)
    assert live.n_rows == live.n_dropped == 0 and live.session_label is None
    i = int(np.argmax(~es["stray"]))
    with pytest.raises(ValueError, match=r"tick_size=0\.3: .*snap=True"):
        live.update(float(es["high"][i]), float(es["low"][i]), float(es["close"][i]), 5,
                    open=float(es["open"][i]), timestamp=int(ts[i]))
    assert live.n_rows == live.n_dropped == 0 and live.snapped_prices == 0
    # the batch refuses the same prices
    with pytest.raises(ValueError, match=r"tick_size=0\.3"):
        vpoc.from_bars(*cols(es), open=es["open"], tick_size=0.3)


def test_23_4_one_off_grid_price_in_a_row_is_refused():
    live = vpoc.Live(tick_size=0.25, session_starts=[0])
    live.update(10.0, 9.0, 9.5, 1, timestamp=10)
    before = (live.n_rows, live.levels)
    with pytest.raises(ValueError, match=r"close\[0\]=9\.6"):
        live.update(10.0, 9.0, 9.6, 1, timestamp=20)
    assert (live.n_rows, live.levels) == before
    live.update(10.0, 9.0, 9.75, 1, timestamp=20)  # the feed goes on
    assert live.n_rows == 2


@NEEDS_CAL
def test_23_4_snap_true_rounds_and_counts(es):
    ts = es["open_ns"] + MIN
    kept = ~es["stray"]
    want = off_grid(es, 0.3, kept)
    assert want > 0
    a = vpoc.Live(tick_size=0.3, session="globex", label="close", interval=60, snap=True)
    a.update(*cols(es), open=es["open"], timestamp=ts)
    a.close()
    assert a.snapped_prices == want
    poc = a.profiles.poc
    assert np.allclose(poc / 0.3, np.round(poc / 0.3))
    b = vpoc.Live(tick_size=0.3, session="globex", label="close", interval=60, snap=True)
    one_by_one(b, es, ts)
    b.close()
    assert b.snapped_prices == want
    assert np.array_equal(a.profiles.poc, b.profiles.poc)
    assert b.state_dict()["config"]["snap"] is True
    assert vpoc.Live.from_state(b.state_dict(flat=True))._snap is True


def test_23_4_array_update_follows_check_grids_rule():
    """Up to 0.1% off the grid in an array update: check_grid's UserWarning, rounded and counted."""
    n = 4000
    h = np.full(n, 100.25)
    h[7] = 100.3
    live = vpoc.Live(tick_size=0.25, session_starts=[0])
    lo = np.full(n, 100.0)
    with pytest.warns(UserWarning, match="2 of 16000 prices"):
        live.update(h, lo, lo, np.ones(n), open=h, timestamp=np.arange(1, n + 1))
    assert live.snapped_prices == 2  # high[7] and open[7]
    with pytest.raises(TypeError):
        vpoc.Live(tick_size=0.25, snap="yes")


# =============================================================================== 23.3 dropped rows


@NEEDS_CAL
@pytest.mark.parametrize("case,ts_of,match", [
    ("closes read as opens", lambda d: d["open_ns"] + MIN, "look like bar closes: pass label='close'"),
    ("UTC read as Chicago", lambda d: d["open_ns"] + 6 * HOUR, "time zone"),
])
def test_23_3_dropped_rows_warn_like_the_batch(es, case, ts_of, match):
    ts = ts_of(es)
    S = vpoc.sessions.globex(ts, on_outside="drop")
    live = vpoc.Live(tick_size=0.25, session="globex")
    with pytest.warns(vpoc.DroppedRowsWarning, match=match) as rec:
        live.update(*cols(es), open=es["open"], timestamp=ts)
    assert len([w for w in rec if w.category is vpoc.DroppedRowsWarning]) == 1  # once per update
    assert live.n_dropped == S.dropped_rows > 0
    assert f"{S.dropped_rows:,} of {ts.shape[0]:,} rows" in str(rec[0].message)
    # one row at a time: at most once per finished session
    one = vpoc.Live(tick_size=0.25, session="globex")
    with pytest.warns(vpoc.DroppedRowsWarning, match=match) as rec:
        one_by_one(one, es, ts)
        one.close()
    assert 1 <= len(rec) <= len(one)
    assert one.n_dropped == S.dropped_rows


@NEEDS_CAL
def test_23_3_on_outside_drop_raise_and_the_threshold(es):
    ts = es["open_ns"] + 6 * HOUR
    quiet = vpoc.Live(tick_size=0.25, session="globex", on_outside="drop")
    quiet.update(*cols(es), open=es["open"], timestamp=ts)  # filterwarnings=error: no warning
    strict = vpoc.Live(tick_size=0.25, session="globex", on_outside="raise")
    with pytest.raises(ValueError, match="outside every session"):
        strict.update(*cols(es), open=es["open"], timestamp=ts)
    assert strict.n_rows == strict.n_dropped == 0
    with pytest.raises(ValueError, match="on_outside must be"):
        vpoc.Live(tick_size=0.25, on_outside="ignore")
    # the right stamps: one stray print in 21,380 rows (below 0.1%): no warning
    right = vpoc.Live(tick_size=0.25, session="globex")
    right.update(*cols(es), open=es["open"], timestamp=es["open_ns"])
    one_by_one(vpoc.Live(tick_size=0.25, session="globex"), es, es["open_ns"])
    assert right.n_dropped == int(es["stray"].sum()) == 1
    # rth leaves the overnight rows out by definition: no warning
    rth = vpoc.Live(tick_size=0.25, session="rth")
    rth.update(*cols(es), open=es["open"], timestamp=es["open_ns"])
    assert rth.n_dropped > ts.shape[0] // 2


@NEEDS_CAL
def test_23_3_a_warning_under_error_filters_changes_nothing(es):
    """With warnings as errors the warning is raised inside the update: all or nothing holds."""
    ts = es["open_ns"] + 6 * HOUR
    live = vpoc.Live(tick_size=0.25, session="globex")
    with warnings.catch_warnings():
        warnings.simplefilter("error", vpoc.DroppedRowsWarning)
        with pytest.raises(vpoc.DroppedRowsWarning):
            live.update(*cols(es), open=es["open"], timestamp=ts)
    assert live.n_rows == live.n_dropped == 0 and len(live) == 0


# =============================================================================== 23.5 IB


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


@NEEDS_CAL
def test_23_5_ib_of_holiday_merged_sessions_equals_the_batch():
    """UTC close-stamped ES around MLK (2025-01-20 -> 21) and Presidents Day (02-17 -> 18): the
    IB is the trade date's own 08:30 CT hour, in session_table() and bar_features_row(), bit for
    bit the batch's; checked against a plain-NumPy IB too."""
    d = user_bars(start="2025-01-15", end="2025-02-19")
    ts = d["open_ns"] + MIN
    kw = dict(tick_size=0.25, label="close", interval=60)
    live = vpoc.Live(**kw, session="globex", on_outside="drop")  # the Saturday stray print
    rows = []
    for i in range(ts.shape[0]):
        before = live.n_rows
        live.update(float(d["high"][i]), float(d["low"][i]), float(d["close"][i]),
                    int(d["volume"][i]), open=float(d["open"][i]), timestamp=int(ts[i]))
        if live.n_rows > before:
            rows.append(live.bar_features_row())
    live.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vpoc.DroppedRowsWarning)
        args = (d["high"], d["low"], d["close"], d["volume"])
        sf = vpoc.session_features(*args, open=d["open"], timestamp=ts, session="globex", **kw)
        bf = vpoc.bar_features(*args, open=d["open"], timestamp=ts, session="globex", **kw)
    st = live.session_table()
    assert np.array_equal(st.session_labels, sf.session_labels)
    assert st.columns == sf.columns and _same(st.values, sf.values)
    assert _same(np.stack(rows), bf.values)
    # plain NumPy: the IB of 20250121 / 20250218 is 08:30-09:29 CT on that date (CST: 14:30 UTC)
    tab = st.to_pandas()
    for day, utc in ((20250121, "2025-01-21T14:30"), (20250218, "2025-02-18T14:30")):
        t0 = np.datetime64(utc, "ns").astype(np.int64)
        sel = (d["open_ns"] >= t0) & (d["open_ns"] < t0 + HOUR)
        assert sel.sum() == 60
        row = tab.loc[tab.index[list(st.session_labels).index(day)]]
        assert row["ib_high"] == d["high"][sel].max() and row["ib_low"] == d["low"][sel].min()


# =============================================================================== 23.3 guessed rule


def test_23_3_one_session_over_several_days_is_reported(es):
    """Live(session=None): one session for everything (kept: other code relies on it), but a feed
    spanning more than a day gets one GuessedDefaultWarning naming how to choose."""
    ts = es["open_ns"]
    live = vpoc.Live(tick_size=0.25)
    with pytest.warns(vpoc.GuessedDefaultWarning, match="session='globex'") as rec:
        live.update(*cols(es), open=es["open"], timestamp=ts)
        live.update(*cols(es), open=es["open"], timestamp=ts + 100 * 24 * HOUR)  # not again
    assert len(rec) == 1 and live.n_rows == 2 * ts.shape[0] and len(live) == 0
    one = vpoc.Live(tick_size=0.25)
    with pytest.warns(vpoc.GuessedDefaultWarning, match=r"span 1\.\d days"):
        one_by_one(one, es, ts[:1500])
    # under an error filter the warning is raised inside the update: nothing changes
    err = vpoc.Live(tick_size=0.25)
    with warnings.catch_warnings():
        warnings.simplefilter("error", vpoc.GuessedDefaultWarning)
        with pytest.raises(vpoc.GuessedDefaultWarning):
            err.update(*cols(es), open=es["open"], timestamp=ts)
    assert err.n_rows == 0
    # less than a day, or one session asked for: no warning (filterwarnings=error)
    vpoc.Live(tick_size=0.25).update(*[c[:1000] for c in cols(es)], open=es["open"][:1000],
                                     timestamp=ts[:1000])
    vpoc.Live(tick_size=0.25, session_starts=ts[:1]).update(*cols(es), open=es["open"], timestamp=ts)


def test_23_4_trades_off_grid_and_engine_errors_first():
    live = vpoc.Live(tick_size=0.25, kind="trades", session_starts=[0])
    with pytest.raises(ValueError, match=r"tick_size=0\.25: 1 of 1 prices .*price\[0\]=100\.1"):
        live.update(100.1, 1, timestamp=5)
    with pytest.raises(ValueError, match=r"high\[0\] .*low|low\[0\]|high < low|below"):
        vpoc.Live(tick_size=0.25, session_starts=[0]).update(9.1, 10.0, 9.5, 1, timestamp=5)
    live.update(100.25, 1, timestamp=5)
    assert live.n_rows == 1 and live.snapped_prices == 0
    s = vpoc.Live(tick_size=0.25, kind="trades", session_starts=[0], snap=True)
    s.update(100.1, 1, timestamp=5)
    assert s.snapped_prices == 1 and s.poc == 100.0
