"""``FeatureTable.snapped_prices``: the prices off the ``tick_size`` grid that ``session_features`` rounded.

Contract: the count is that of a plain NumPy count of the off-grid prices (high, low, close, and open with
``distribute="legacy"`` only), equal to ``from_bars``' ``snapped_prices`` on the same bars, with ``snap=True`` and
with the warning of a few; 0 when none was rounded; kept by ``select``; shown by ``repr`` only when not 0; under
``session=`` only the kept rows count.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import vpoc
# TICK 0.25, one minute in ns, 08:30 CDT; the plain off-grid count and the nudge of prices by 0.16 tick
from test_tpo_snap import MIN, T0, TICK, nudge, off_grid
from test_session_features_snap_followup import bars

KW = dict(tick_size=TICK, lookbacks=(1,), composite_sessions=1)


def test_snap_true_counts_what_it_rounded():
    """Fails before the change: the count check_grid returned was thrown away (no snapped_prices)."""
    hi, lo, close, opn, vol, offsets, ts = bars(90)
    lo2 = nudge(lo, np.arange(0, 90, 3), -0.04)
    room = np.flatnonzero(hi - close >= TICK)[:7]
    close2 = nudge(close, room)
    got = vpoc.session_features(hi, lo2, close2, vol, offsets=offsets, timestamp=ts, snap=True, **KW)
    want = off_grid(hi, lo2, close2)
    assert want == 30 + room.size
    fb = vpoc.from_bars(hi, lo2, close2, vol, offsets=offsets, tick_size=TICK, snap=True)
    assert got.snapped_prices == fb.snapped_prices == want
    assert f"snapped_prices={want}" in repr(got)
    sub = got.select(["vpoc", "session_low"])
    assert sub.snapped_prices == want and f"snapped_prices={want}" in repr(sub)


def test_a_few_rounded_with_the_warning_are_counted():
    hi, lo, close, opn, vol, offsets, ts = bars(900, seed=2)
    hi2 = nudge(hi, [17, 400])
    with pytest.warns(UserWarning, match=r"2 of 2700 prices"):
        got = vpoc.session_features(hi2, lo, close, vol, offsets=offsets, timestamp=ts, **KW)
    assert got.snapped_prices == off_grid(hi2, lo, close) == 2


def test_on_the_grid_is_zero_and_not_in_the_repr():
    hi, lo, close, opn, vol, offsets, ts = bars(60, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for snap in (False, True):
            t = vpoc.session_features(hi, lo, close, vol, offsets=offsets, timestamp=ts, snap=snap, **KW)
            assert t.snapped_prices == 0 and "snapped_prices" not in repr(t)
    bare = vpoc.features.FeatureTable(np.zeros((1, 1), np.float32), ["a"], session_labels=np.zeros(1),
                                      offsets=[0, 1])
    assert bare.snapped_prices == 0 and "snapped_prices" not in repr(bare)


def test_open_counts_with_legacy_only():
    hi, lo, close, opn, vol, offsets, ts = bars(60, seed=1)
    room = np.flatnonzero(hi - opn >= TICK)[:5]
    opn2 = nudge(opn, room)
    plain = vpoc.session_features(hi, lo, close, vol, open=opn2, offsets=offsets, snap=True, **KW)
    assert plain.snapped_prices == 0  # "uniform" reads no open
    legacy = vpoc.session_features(hi, lo, close, vol, open=opn2, offsets=offsets, distribute="legacy", snap=True,
                                   **KW)
    assert legacy.snapped_prices == off_grid(opn2) == room.size


def test_only_the_kept_rows_count_under_session():
    pytest.importorskip("pandas")
    from vpoc import sessions as vs

    hi, lo, close, opn, vol, offsets, ts = bars(300, seed=3)
    ts = T0 - 3 * 60 * MIN + np.arange(300, dtype=np.int64) * 5 * MIN  # starts before the RTH open
    s = vs.rth(ts, calendar=None)
    kept = np.asarray(s.index)
    left_out = np.setdiff1d(np.arange(300), kept)
    assert left_out.size > 0
    hi2 = nudge(hi, np.r_[left_out[:10], kept[::4]])
    got = vpoc.session_features(hi2, lo, close, vol, session=s, timestamp=ts, snap=True, **KW)
    assert got.snapped_prices == off_grid(hi2[kept], lo[kept], close[kept]) == kept[::4].size


def test_bar_features_counts_what_from_bars_rounded():
    """bar_features' table carries the count of the profile pass (was always 0: a silent rounding)."""
    hi, lo, close, opn, vol, offsets, ts = bars(1500)
    lo2 = nudge(lo, np.array([7, 800]), -0.04)  # 2 of 4500 prices: a few, rounded with the warning
    with pytest.warns(UserWarning):
        got = vpoc.bar_features(hi, lo2, close, vol, offsets=offsets, timestamp=ts, tick_size=TICK)
    assert got.snapped_prices == off_grid(hi, lo2, close) == 2
    plain = vpoc.bar_features(hi, lo, close, vol, offsets=offsets, timestamp=ts, tick_size=TICK)
    assert plain.snapped_prices == 0
