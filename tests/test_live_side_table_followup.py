"""``Live(side=True).session_table()`` carries the side columns of ``session_features(buy_volume=, sell_volume=)``.

Contract: for any chunking of the same bars, the Live table equals the batch table bit for bit (every column, the
side columns ``vpoc.features.SIDE_TABLE_COLUMNS`` last, the imbalance rules of the Live); the side columns equal a
plain loop (tests/test_side.py's ``ref_footprint``: delta, delta POC, stacked imbalance counts) with
``distribute="close"`` (a bar's volume on its close's row); a Live without side keeps the plain table.
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc
from test_live_side import chunks, random_bars, same, sessions_of
from test_side import _rows, ref_footprint

# features in New York hours on purpose (t8fix)
pytestmark = pytest.mark.filterwarnings("ignore::vpoc.sessions.SessionHoursWarning")

FOPTS = dict(composite_sessions=2, lookbacks=(1, 2), ib_minutes=120, tz="America/New_York")
SIDE = vpoc.features.SIDE_TABLE_COLUMNS


def _feed(live, rng, h, lo, c, o, v, bv, sv, ts, max_chunk=25, sided=True):
    for a, b in chunks(rng, h.size, max_chunk):
        kw = dict(buy_volume=bv[a:b], sell_volume=sv[a:b]) if sided else {}
        live.update(h[a:b], lo[a:b], c[a:b], v[a:b], open=o[a:b], timestamp=ts[a:b], **kw)
    live.close()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("distribute", ["close", "uniform", "legacy"])
def test_live_table_equals_batch_with_side_columns(seed, distribute):
    """Fails before the change: the Live table had no side columns (the batch table has four more)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 160))
    tick, tpr = 0.25, int(rng.integers(1, 3))
    h, lo, c, o, v, bv, sv, ts = random_bars(rng, n, tick, fractional=bool(seed % 2))
    starts, k = sessions_of(rng, ts)
    keep = np.flatnonzero(k >= 0)
    if keep.size == 0:
        pytest.skip("no row in a session")
    rules = dict(imbalance_ratio=2.0, stacked_imbalance_min=2)
    kw = dict(tick_size=tick, ticks_per_row=tpr, distribute=distribute)
    live = vpoc.Live(session_starts=starts, on_outside="drop", side=True, features=FOPTS, **kw, **rules)
    _feed(live, rng, h, lo, c, o, v, bv, sv, ts)
    table = live.session_table()
    cols = (h[keep], lo[keep], c[keep], v[keep])
    ids = k[keep]
    batch = vpoc.session_features(*cols, open=o[keep], timestamp=ts[keep], session_ids=ids, buy_volume=bv[keep],
                                  sell_volume=sv[keep], **kw, **FOPTS, **rules)
    assert table.columns == batch.columns and table.columns[-len(SIDE):] == SIDE
    assert table.values.shape == batch.values.shape
    for j, name in enumerate(table.columns):
        assert same(table.values[:, j], batch.values[:, j]), name
    np.testing.assert_array_equal(table.session_labels, live.labels)
    if distribute == "close" and seed % 2 == 0:  # one row per bar, whole volumes: the plain loop
        offs = np.r_[0, np.flatnonzero(np.diff(ids)) + 1, ids.size]
        ref = ref_footprint(_rows(c[keep], tick, tpr).tolist(), bv[keep].tolist(), sv[keep].tolist(),
                            offs.tolist(), ratio=2.0, stacked_min=2)
        want = dict(delta=ref["delta"], buy_total=ref["buy_total"], sell_total=ref["sell_total"],
                    delta_poc=np.asarray(ref["delta_poc"]) * tick * tpr,
                    stacked_imbalance_buy=ref["stacked_imbalance_buy"],
                    stacked_imbalance_sell=ref["stacked_imbalance_sell"])
        for name in SIDE:
            assert same(table[name], np.asarray(want[name], dtype=np.float32)), name
        sums = [float(bv[keep][a:b].sum() - sv[keep][a:b].sum()) for a, b in zip(offs[:-1], offs[1:])]
        assert same(table["delta"], np.asarray(sums, dtype=np.float32))


def test_live_without_side_keeps_the_plain_table():
    rng = np.random.default_rng(9)
    h, lo, c, o, v, bv, sv, ts = random_bars(rng, 90, 0.25, False)
    starts = ts[[0, 30, 60]]
    live = vpoc.Live(session_starts=starts, tick_size=0.25, features=FOPTS)
    _feed(live, rng, h, lo, c, o, v, bv, sv, ts, sided=False)
    table = live.session_table()
    plain = vpoc.session_features(h, lo, c, v, open=o, timestamp=ts, offsets=[0, 30, 60, 90], tick_size=0.25, **FOPTS)
    assert not set(SIDE) & set(table.columns)
    assert table.columns == plain.columns and same(table.values, plain.values)


def test_side_columns_through_state_and_across_the_flush():
    """Rows computed at different flushes, and after a state round trip, are the same table."""
    rng = np.random.default_rng(4)
    n = 150
    h, lo, c, o, v, bv, sv, ts = random_bars(rng, n, 0.25, False)
    starts = ts[[0, 40, 80, 120]]
    one = vpoc.Live(session_starts=starts, tick_size=0.25, side=True, features=FOPTS)
    two = vpoc.Live(session_starts=starts, tick_size=0.25, side=True, features=FOPTS)
    one.update(h[:100], lo[:100], c[:100], v[:100], open=o[:100], timestamp=ts[:100], buy_volume=bv[:100],
               sell_volume=sv[:100])
    two.update(h[:100], lo[:100], c[:100], v[:100], open=o[:100], timestamp=ts[:100], buy_volume=bv[:100],
               sell_volume=sv[:100])
    first = one.session_table()  # two sessions flushed here
    assert first.columns[-len(SIDE):] == SIDE and first.shape[0] == 2
    back = vpoc.Live.from_state(one.state_dict(flat=True))
    for x in (back, two):
        x.update(h[100:], lo[100:], c[100:], v[100:], open=o[100:], timestamp=ts[100:], buy_volume=bv[100:],
                 sell_volume=sv[100:])
        x.close()
    a, b = back.session_table(), two.session_table()
    assert a.columns == b.columns and same(a.values, b.values) and same(a.values[:2], first.values)
    batch = vpoc.session_features(h, lo, c, v, open=o, timestamp=ts, offsets=[0, 40, 80, 120, n], tick_size=0.25,
                                  buy_volume=bv, sell_volume=sv, **FOPTS)
    assert same(a.values, batch.values)
