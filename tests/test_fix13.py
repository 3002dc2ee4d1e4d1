"""Error naming leftovers (fix13): each test failed on main before its fix.

Contract: a too-wide or too-heavy window, a partition's timestamp error in vpoc.dask and the order-flow
path's too-wide session are named as the plain call names them (input row, session label, .index, .session).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import vpoc
import _deps

TICK = 0.25


def _raised(fn, *a, **kw):
    with pytest.raises(vpoc.InputError) as e:
        fn(*a, **kw)
    return e.value


# ---- 1. window_too_wide: .index, .session and the session's label, as session_too_wide -------------

def test_too_wide_window_names_its_session_by_label_with_index_and_session():
    price = np.r_[np.full(5, 100.0), np.full(5, 200.0)]
    kw = dict(session_ids=[20240102] * 5 + [20240103] * 5, tick_size=TICK, developing=True, window=4,
              window_across_sessions=True, max_rows=300)
    e = _raised(vpoc.from_trades, price, np.ones(10), **kw)
    assert str(e) == ("the window of row 5 in session 20240103 (4 rows, reaching back 1 session) spans 401 rows, "
                      "more than max_rows=300; raise max_rows or shorten window")
    assert (e.index, e.session) == (5, 1)
    e = _raised(vpoc.from_bars, price, price, price, np.ones(10), **kw)
    assert str(e).startswith("the window of bar 5 in session 20240103 (4 bars, reaching back 1 session) spans 401")
    assert (e.index, e.session) == (5, 1)


def test_too_wide_window_under_a_session_rule_names_the_input_row():
    pytest.importorskip("pandas")
    b = vpoc.synth.es_bars(3)
    df = b.to_pandas()
    sess = vpoc.sessions.rth(np.asarray(b.timestamp))
    kept, off = np.asarray(sess.index), np.asarray(sess.offsets)
    df.iloc[kept[off[2]:], [df.columns.get_loc(c) for c in ("open", "high", "low", "close")]] += 500.0
    labels = vpoc.from_bars(df, session="rth", tick_size=TICK).session_labels
    e = _raised(vpoc.from_bars, df, session="rth", tick_size=TICK, developing=True, window=3,
                window_across_sessions=True, max_rows=1000)
    row = int(kept[off[2]])  # the first kept bar of the last session: its window reaches back
    assert row != off[2]
    assert str(e).startswith(f"the window of bar {row} in session {labels[2]} (3 bars, reaching back 1 session) "
                             "spans "), str(e)
    assert (e.index, e.session) == (row, 2)


def test_too_heavy_window_names_its_row_and_session():
    big = float(2**52 + 2**51)
    kw = dict(session_ids=[20240102, 20240103], tick_size=TICK, developing=True, window=2,
              window_across_sessions=True)
    e = _raised(vpoc.from_trades, np.array([100.0, 100.25]), [big, big], **kw)
    assert str(e).startswith("volume of the window of row 1 in session 20240103 sums past 2**53"), str(e)
    assert (e.index, e.session) == (1, 1)
    e = _raised(vpoc.from_bars, [10.0, 10.5], [9.0, 9.5], [9.5, 10.0], [big, big], bins=4,
                **{**kw, "tick_size": 0.01})
    assert str(e).startswith("volume of the window of bar 1 in session 20240103 sums past 2**53"), str(e)
    assert (e.index, e.session) == (1, 1)


# ---- 4. the order-flow (side) path's too-wide session, as the plain call's ------------------------

@pytest.mark.parametrize("distribute", ["uniform", "legacy"])
def test_side_too_wide_session_is_the_plain_calls_error(distribute):
    from vpoc import _core

    h = np.array([100.0, 101.0, 130.0, 131.0, 160.0, 161.0])
    low, close, v = h - 1, h - 0.5, np.ones(6)
    off = np.array([0, 2, 8], dtype=np.int64)
    h, low, close, v = (np.r_[10.0, 10.0, x] for x in (h, low, close, v))
    plain = _raised(vpoc.from_bars, h, low, close, v, offsets=off, tick_size=TICK, max_rows=150,
                    distribute=distribute)
    opts = _core.Options(tick_size=TICK, max_rows=150, distribute=distribute)
    side = _raised(_core.developing_delta_poc, h, low, close, None, v, v / 2, v / 2, off, opts)
    assert str(side) == str(plain) and "session 1 spans 249 rows" in str(plain)  # the whole session's span
    assert (side.index, side.session) == (plain.index, plain.session) == (6, 1)
    # a bad bar after the crossing is the session's error, as in the plain call
    low[7] = h[7] + 1
    plain = _raised(vpoc.from_bars, h, low, close, v, offsets=off, tick_size=TICK, max_rows=150,
                    distribute=distribute)
    side = _raised(_core.developing_delta_poc, h, low, close, None, v, v / 2, v / 2, off, opts)
    assert str(side) == str(plain) and (side.argument, side.index) == ("high", 7)
