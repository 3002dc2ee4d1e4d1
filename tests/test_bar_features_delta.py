"""bar_features' aggressor-side columns (issue 27 item 1) against a plain NumPy reference, brute force over prefixes.

Contract: with ``buy_volume=`` / ``sell_volume=`` the bar table gains ``bar_delta``, ``cum_delta``,
``cum_delta_ratio`` and ``dev_delta_poc_dist`` last; bar i's values equal a loop that re-bins the
session's bars <= i from scratch (the contract's exact 64.64 construction of tests/reference.py) and
applies the POC rule to |buy - sell| per row; nothing after bar i changes them; every other column
is the plain table's, bit for bit.
"""

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import _deps
import vpoc
from reference import exact_rows, exact_session_units, profile_stats, units, units_to_double
from vpoc.live import BAR_COLUMNS, BAR_SIDE_COLUMNS

NAN = float("nan")
MIN = 60 * 10**9
T0 = int(np.datetime64("2024-03-04T14:00", "ns").astype(np.int64))


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def ref_delta_columns(high, low, close, open, volume, buy, sell, offsets, *, tick, tpr, distribute, tie):
    """The four columns by brute force: every prefix re-binned in exact units, in float64."""
    n = len(close)
    out = {k: np.full(n, NAN) for k in BAR_SIDE_COLUMNS}
    for s in range(len(offsets) - 1):
        a, b = int(offsets[s]), int(offsets[s + 1])
        cum_d, cum_v = 0.0, 0.0
        for i in range(a, b):
            d = float(buy[i]) - float(sell[i])
            cum_d += d
            cum_v += float(volume[i])
            out["bar_delta"][i] = d
            out["cum_delta"][i] = cum_d
            q = cum_d / cum_v if cum_v != 0 else NAN
            out["cum_delta_ratio"][i] = q if np.isfinite(q) else NAN
            sl = slice(a, i + 1)
            o = None if (open is None or distribute != "legacy") else open[sl]
            rows = []
            for x in (buy, sell):
                u = exact_session_units(distribute, (high[sl], low[sl], close[sl], x[sl]), tick, tpr, open=o)
                rows.append(exact_rows(u)[:2])
            (lo, rb), (lo_s, rs) = rows
            assert lo == lo_s and rb.shape == rs.shape  # the same prices touch the same rows
            if not (rb.any() or rs.any()):  # no volume of a known side so far: no delta POC (issue 27 dpnan)
                out["dev_delta_poc_dist"][i] = NAN
                out["cum_delta_ratio"][i] = NAN  # nor a flow ratio: 0 would read as balanced (trial 7)
                continue
            dd = np.abs(rb - rs)
            dd = dd * (dd >= 2.0**-32)
            dd = np.array([units_to_double(units(x)) for x in dd])  # the engine's units of each row
            row = profile_stats(dd, lo, value_area=1.0, va_method="single", poc_tie=tie)["poc_row"]
            out["dev_delta_poc_dist"][i] = (float(close[i]) - float(row) * (tick * tpr)) / tick
    return out


def random_bars(rng, offsets, tick, fractional):
    n = int(offsets[-1])
    close = 4000.0 + np.cumsum(rng.integers(-3, 4, n)) * tick
    high = close + rng.integers(0, 5, n) * tick
    low = close - rng.integers(0, 5, n) * tick
    opn = np.clip(close + rng.integers(-2, 3, n) * tick, low, high)
    if fractional:
        vol = rng.random(n) * 40
        buy = vol * rng.random(n)
        sell = (vol - buy) * rng.random(n)
    else:
        vol = rng.integers(0, 30, n).astype(np.int64)
        buy = (vol * rng.random(n)).astype(np.int64)
        sell = ((vol - buy) * rng.random(n)).astype(np.int64)
        full = rng.random(n) < 0.5
        sell[full] = vol[full] - buy[full]
    zero = rng.random(n) < 0.1
    vol[zero] = buy[zero] = sell[zero] = 0
    return high, low, close, opn, vol, buy, sell


def random_offsets(rng):
    counts = rng.integers(0, 25, int(rng.integers(1, 6)))
    counts[rng.random(counts.size) < 0.2] = 0  # empty sessions
    counts[rng.random(counts.size) < 0.2] = 1  # one-bar sessions
    return np.r_[0, np.cumsum(counts)].astype(np.int64)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), distribute=st.sampled_from(["uniform", "close", "hlc3", "legacy"]),
       tpr=st.sampled_from([1, 2, 3]), tie=st.sampled_from(["center", "low", "high"]),
       tick=st.sampled_from([0.25, 0.1]), fractional=st.booleans(), clock=st.booleans())
def test_delta_columns_equal_the_prefix_reference(seed, distribute, tpr, tie, tick, fractional, clock):
    rng = np.random.default_rng(seed)
    offsets = random_offsets(rng)
    h, lo, c, o, v, buy, sell = random_bars(rng, offsets, tick, fractional)
    n = c.shape[0]
    kw = dict(offsets=offsets, open=o, tick_size=tick, ticks_per_row=tpr, distribute=distribute, poc_tie=tie)
    if clock:
        kw["timestamp"] = T0 + np.arange(n, dtype=np.int64) * MIN
    note(f"offsets={offsets.tolist()} {distribute} tpr={tpr} {tie} tick={tick} fractional={fractional}")
    table = vpoc.bar_features(h, lo, c, v, buy_volume=buy, sell_volume=sell, **kw)
    plain = vpoc.bar_features(h, lo, c, v, **kw)
    base = BAR_COLUMNS if clock else BAR_COLUMNS[:24]
    assert table.columns == base + BAR_SIDE_COLUMNS and plain.columns == base
    assert same(table.values[:, :len(base)], plain.values)
    ref = ref_delta_columns(h, lo, c, o, v, buy, sell, offsets, tick=tick, tpr=tpr, distribute=distribute, tie=tie)
    for name in BAR_SIDE_COLUMNS:
        got = table.values[:, table.columns.index(name)]
        assert same(got, ref[name].astype(np.float32)), name
    # the running delta is from_bars' dev_delta; its last bar the session's delta (whole volumes)
    prof = vpoc.from_bars(h, lo, c, v, buy_volume=buy, sell_volume=sell, developing=True,
                          **{k: x for k, x in kw.items() if k != "timestamp"})
    assert same(table.values[:, table.columns.index("cum_delta")], prof.dev_delta.astype(np.float32))


def test_no_lookahead():
    """Rows 0..i do not change by a bit when every bar after i (its session's and later ones) is
    replaced and more bars are added."""
    rng = np.random.default_rng(11)
    offsets = np.array([0, 30, 31, 70], dtype=np.int64)
    cols = random_bars(rng, offsets, 0.25, False)
    kw = dict(tick_size=0.25, distribute="uniform")
    full = vpoc.bar_features(*cols[:3], cols[4], open=cols[3], offsets=offsets, buy_volume=cols[5],
                             sell_volume=cols[6], **kw).values
    for i in (0, 12, 29, 30, 45):
        other = random_bars(np.random.default_rng(100 + i), np.array([0, 90]), 0.25, False)
        mixed = [np.r_[x[:i + 1], y[i + 1:]] for x, y in zip(cols, other)]
        nxt = int(offsets[np.searchsorted(offsets, i, side="right")])  # i's session now runs longer
        offs = np.r_[offsets[offsets <= i], nxt + 5, 90]
        got = vpoc.bar_features(*mixed[:3], mixed[4], open=mixed[3], offsets=offs, buy_volume=mixed[5],
                                sell_volume=mixed[6], **kw).values
        assert same(got[:i + 1], full[:i + 1]), i


def test_one_function_for_live_and_table():
    """Live(side=True).bar_features_row() equals the table's row after every bar (the ES synthetic
    feed, one bar at a time)."""
    b = vpoc.synth.es_bars(n_sessions=2, bars_per_session=90, seed=4)
    rng = np.random.default_rng(4)
    vol = np.asarray(b.volume)
    buy = (vol * rng.random(vol.size)).astype(np.int64)
    sell = ((vol - buy) * rng.random(vol.size)).astype(np.int64)
    starts = np.asarray(b.timestamp)[np.asarray(b.offsets)[:-1]]
    live = vpoc.Live(tick_size=0.25, session_starts=starts, side=True)
    table = vpoc.bar_features(b.high, b.low, b.close, vol, open=b.open, timestamp=b.timestamp,
                              offsets=b.offsets, tick_size=0.25, buy_volume=buy, sell_volume=sell)
    for i in range(vol.size):
        live.update(float(b.high[i]), float(b.low[i]), float(b.close[i]), int(vol[i]), open=float(b.open[i]),
                    buy_volume=int(buy[i]), sell_volume=int(sell[i]), timestamp=int(b.timestamp[i]))
        assert same(live.bar_features_row(), table.values[i]), i


@_deps.needs("pandas_market_calendars")
@_deps.needs("pandas")
def test_rows_outside_sessions_are_left_out_with_their_sides():
    """With session="rth" the overnight bars are left out: their buy / sell values go with them."""
    ts = np.datetime64("2024-03-05T12:00", "ns").astype(np.int64) + np.arange(600, dtype=np.int64) * MIN
    rng = np.random.default_rng(3)
    cols = random_bars(rng, np.array([0, 600]), 0.25, False)
    kw = dict(tick_size=0.25, distribute="close")
    table = vpoc.bar_features(*cols[:3], cols[4], open=cols[3], timestamp=ts, session="rth", buy_volume=cols[5],
                              sell_volume=cols[6], **kw)
    S = vpoc.sessions.rth(ts, on_outside="drop")
    kept = [np.asarray(x)[S.index] for x in cols]
    ref = vpoc.bar_features(*kept[:3], kept[4], open=kept[3], timestamp=ts[S.index], offsets=S.offsets,
                            buy_volume=kept[5], sell_volume=kept[6], **kw)
    assert table.dropped_rows > 0 and same(table.values, ref.values)


def test_bad_side_columns():
    h, lo, c = np.array([2.0, 3.0]), np.array([1.0, 2.0]), np.array([1.5, 2.5])
    v = np.array([10, 10])
    kw = dict(tick_size=0.5)
    with pytest.raises(TypeError, match="buy_volume= and sell_volume= together"):
        vpoc.bar_features(h, lo, c, v, buy_volume=[1, 2], **kw)
    with pytest.raises(ValueError, match="sell_volume has 3 rows but the bars have 2"):
        vpoc.bar_features(h, lo, c, v, buy_volume=[1, 2], sell_volume=[1, 2, 3], **kw)
    with pytest.raises(ValueError, match=r"buy_volume\[1\] \+ sell_volume\[1\] = 6 \+ 5 is more than volume\[1\]"):
        vpoc.bar_features(h, lo, c, v, buy_volume=[1, 6], sell_volume=[1, 5], **kw)
    with pytest.raises(ValueError, match=r"sell_volume\[0\].*finite and >= 0"):
        vpoc.bar_features(h, lo, c, v, buy_volume=[1.0, 2.0], sell_volume=[np.nan, 1.0], **kw)
    with pytest.raises(TypeError, match="buy_volume"):
        vpoc.bar_features(h, lo, c, v, buy_volume=["a", "b"], sell_volume=[1, 1], **kw)
