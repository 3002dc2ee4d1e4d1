"""Session context: overnight high/low, prior-session high/low/close, value-area migration, day/open type codes.

Contract checked: docs/features.md "Session context": session_features(context_columns=True) and vpoc.tpo's
fields against a loop reference (zoneinfo clocks), hand-built migration and overnight cases, no lookahead, bad input.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo

import numpy as np
import pytest

import vpoc
from vpoc.features import CONTEXT_TABLE_COLUMNS, LEVEL_TABLE_COLUMNS
import _deps  # noqa: E402

TICK = 0.25
MIN = 60 * 10**9
CHICAGO = zoneinfo.ZoneInfo("America/Chicago")
UTC = dt.timezone.utc

# the code tables as docs/features.md writes them
MIGRATION = {"lower": 0, "overlapping_lower": 1, "inside": 2, "unchanged": 3, "outside": 4,
             "overlapping_higher": 5, "higher": 6}
DAY = {"": -1, "normal": 0, "normal_variation": 1, "trend": 2, "double_distribution": 3, "neutral": 4,
       "non_trend": 5}
OPEN = {"": -1, "open_drive": 0, "open_test_drive": 1, "open_rejection_reverse": 2, "open_auction": 3}


# ------------------------------------------------------------------------------ plain reference
def local(ts: int, tz=CHICAGO) -> dt.datetime:
    return (dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=int(ts) // 1000)).astimezone(tz)


def ref_migration(val, vah, pval, pvah) -> str:
    if val > pvah:
        return "higher"
    if vah < pval:
        return "lower"
    if val == pval and vah == pvah:
        return "unchanged"
    if val >= pval and vah <= pvah:
        return "inside"
    if val <= pval and vah >= pvah:
        return "outside"
    return "overlapping_higher" if val > pval else "overlapping_lower"


def ref_context(h, lo, c, ts, offsets, val_row, vah_row, trade_days=None, rth=dt.time(8, 30), tz=CHICAGO):
    """Per session: dict of prior_high/low/close, va_migration (name or None), overnight_high/low; None
    for an empty session. The prior session is the last earlier one with bars."""
    out, prev = [], None
    for s in range(len(offsets) - 1):
        a, b = int(offsets[s]), int(offsets[s + 1])
        if a == b:
            out.append(None)
            continue
        if trade_days is not None:
            day = dt.date(1970, 1, 1) + dt.timedelta(days=int(trade_days[s]))
        else:
            day = local(ts[b - 1], tz).date()
        open_at = dt.datetime.combine(day, rth)
        pre = [i for i in range(a, b) if local(ts[i], tz).replace(tzinfo=None) < open_at]
        r = dict(overnight_high=max(h[i] for i in pre) if pre else np.nan,
                 overnight_low=min(lo[i] for i in pre) if pre else np.nan)
        if prev is None:
            r.update(prior_high=np.nan, prior_low=np.nan, prior_close=np.nan, va_migration=None)
        else:
            pa, pb, ps = prev
            r.update(prior_high=max(h[pa:pb]), prior_low=min(lo[pa:pb]), prior_close=c[pb - 1],
                     va_migration=ref_migration(val_row[s], vah_row[s], val_row[ps], vah_row[ps]))
        out.append(r)
        prev = (a, b, s)
    return out


def random_bars(seed, *, allow_empty=True):
    """Minute bars of a few sessions from the evening before their trade date into its RTH (empty,
    one-bar, gappy and busy ones); (h, lo, o, c, v, ts, offsets, trade days)."""
    rng = np.random.default_rng(seed)
    S = int(rng.integers(2, 7))
    sizes = rng.choice([0, 1, 2, 9, 60, 200] if allow_empty else [1, 2, 9, 60, 200], S)
    base = np.datetime64("2024-02-26", "D").astype(np.int64) + int(rng.integers(0, 280))
    cols = {k: [] for k in ("h", "lo", "o", "c", "ts")}
    days, price = [], 18000
    for s, n in enumerate(sizes):
        day = base + 3 * s
        days.append(day)
        # the first bar between 15:00 CT the day before and 10:00 CT on the day (UTC-5 or -6)
        t = day * 1440 * MIN + (20 * 60 - 1440 + int(rng.integers(0, 19 * 60))) * MIN
        for _ in range(int(n)):
            cols["ts"].append(t)
            t += int(rng.choice([1, 1, 2, 5, 30, 95])) * MIN
            price += int(rng.integers(-4, 5))
            lo_t, hi_t = price - int(rng.integers(0, 4)), price + int(rng.integers(0, 4))
            cols["h"].append(hi_t * TICK)
            cols["lo"].append(lo_t * TICK)
            cols["o"].append(int(rng.integers(lo_t, hi_t + 1)) * TICK)
            cols["c"].append(int(rng.integers(lo_t, hi_t + 1)) * TICK)
    f = {k: np.array(v, dtype=np.int64 if k == "ts" else np.float64) for k, v in cols.items()}
    vol = rng.integers(1, 30, f["h"].size)
    return (f["h"], f["lo"], f["o"], f["c"], vol, f["ts"], np.r_[0, np.cumsum(sizes)].astype(np.int64),
            np.array(days, dtype=np.int64))


def check_table(table, want, tp):
    for s, w in enumerate(want):
        row = {k: float(table[k][s]) for k in CONTEXT_TABLE_COLUMNS if k in table}
        if w is None:
            assert all(np.isnan(x) for x in row.values()), f"session {s}: {row}"
            continue
        for k in ("prior_high", "prior_low", "prior_close", "overnight_high", "overnight_low"):
            np.testing.assert_array_equal(row[k], np.float32(w[k]), err_msg=f"session {s} {k}")
        mig = w["va_migration"]
        assert (np.isnan(row["va_migration"]) if mig is None else row["va_migration"] == MIGRATION[mig]), s
        assert row["day_type"] == DAY[str(tp.day_type[s])] and row["open_type"] == OPEN[str(tp.open_type[s])]


# ------------------------------------------------------------------------------ random sessions
def test_code_tables_are_the_documented_ones():
    assert vpoc.features.VA_MIGRATION_CODES == MIGRATION
    assert vpoc.features.VA_MIGRATIONS == tuple(sorted(MIGRATION, key=MIGRATION.get))
    assert vpoc.features.DAY_TYPE_CODES == DAY and vpoc.features.OPEN_TYPE_CODES == OPEN
    assert set(DAY) - {""} == set(vpoc.features.DAY_TYPES) and set(OPEN) - {""} == set(vpoc.features.OPEN_TYPES)


@pytest.mark.filterwarnings("ignore::vpoc.MissingDaysWarning")  # random sessions days apart (t5fix)
@pytest.mark.filterwarnings("ignore::vpoc.IncompleteSessionWarning")  # session_features reports them as tpo (t5fix)
@pytest.mark.parametrize("seed", range(20))
def test_random_sessions_match_reference(seed):
    h, lo, o, c, v, ts, offs, days = random_bars(seed)
    rng = np.random.default_rng(seed)
    kw = dict(open=o, timestamp=ts, offsets=offs, tick_size=TICK, lookbacks=(),
              va_method=str(rng.choice(["cbot", "single", "greedy"])), tpo_minutes=int(rng.choice([15, 30])))
    table = vpoc.session_features(h, lo, c, v, context_columns=True, **kw)
    plain = vpoc.session_features(h, lo, c, v, **kw)
    assert table.columns == plain.columns + CONTEXT_TABLE_COLUMNS
    np.testing.assert_array_equal(table.select(plain.columns).values, plain.values)
    prof = vpoc.from_bars(h, lo, c, v, offsets=offs, tick_size=TICK, va_method=kw["va_method"])
    want = ref_context(h, lo, c, ts, offs, prof.val_row, prof.vah_row)
    tp = vpoc.tpo(h, lo, c, v, open=o, timestamp=ts, offsets=offs, tick_size=TICK, incomplete="ignore",
                  period=f"{kw['tpo_minutes']}min", va_method=kw["va_method"])
    check_table(table, want, tp)
    # vpoc.tpo's own fields: the same rules, migration on the TPO value area
    tw = ref_context(h, lo, c, ts, offs, tp.val_row, tp.vah_row)
    for s, w in enumerate(tw):
        if w is None:
            assert tp.va_migration[s] == "" and np.isnan(tp.prior_high[s]) and np.isnan(tp.overnight_low[s])
            continue
        for k in ("prior_high", "prior_low", "prior_close", "overnight_high", "overnight_low"):
            np.testing.assert_array_equal(getattr(tp, k)[s], w[k], err_msg=f"session {s} {k}")
        assert tp.va_migration[s] == (w["va_migration"] or ""), s


@pytest.mark.filterwarnings("ignore::vpoc.IncompleteSessionWarning")  # session_features reports them as tpo (t5fix)
@pytest.mark.parametrize("seed", range(8))
def test_dated_sessions_take_the_overnight_before_their_trade_date_open(seed):
    """With trade dates (datetime64 session ids) the overnight is every bar before 08:30 on that date."""
    h, lo, o, c, v, ts, offs, days = random_bars(seed, allow_empty=False)
    ids = np.repeat(days.astype("datetime64[D]"), np.diff(offs))
    table = vpoc.session_features(h, lo, c, v, open=o, timestamp=ts, session_ids=ids, tick_size=TICK,
                                  lookbacks=(), context_columns=True)
    prof = vpoc.from_bars(h, lo, c, v, offsets=offs, tick_size=TICK)
    tp = vpoc.tpo(h, lo, c, v, open=o, timestamp=ts, session_ids=ids, tick_size=TICK, incomplete="ignore")
    check_table(table, ref_context(h, lo, c, ts, offs, prof.val_row, prof.vah_row, trade_days=days), tp)


@pytest.mark.filterwarnings("ignore::vpoc.MissingDaysWarning")  # random sessions days apart (t5fix)
@pytest.mark.filterwarnings("ignore::vpoc.IncompleteSessionWarning")  # session_features reports them as tpo (t5fix)
@pytest.mark.parametrize("seed", range(10))
def test_no_lookahead_changing_later_sessions_changes_no_earlier_row(seed):
    """Replacing every session from k on by other bars leaves rows 0..k-1 bit-equal (every column,
    the level, context and TPO groups included); the first session's prior columns are NaN."""
    h, lo, o, c, v, ts, offs, _ = random_bars(seed)
    k = int(np.random.default_rng(seed).integers(1, offs.size - 1))
    h2, lo2, o2, c2, v2, ts2, offs2, _ = random_bars(seed + 100)
    cut = int(offs[k])
    # the replacement's bars start after session k-1's last bar, moved by whole days (same clock)
    shift = ((int(ts[cut - 1]) if cut else 0) - int(ts2[0]) + 2 * 1440 * MIN) // (1440 * MIN) * 1440 * MIN \
        if ts2.size else 0
    cat = lambda a, b: np.concatenate([a[:cut], b])  # noqa: E731
    new = (cat(h, h2 + 7.5), cat(lo, lo2 + 7.5), cat(o, o2 + 7.5), cat(c, c2 + 7.5), cat(v, v2 * 3),
           cat(ts, ts2 + shift))
    new_offs = np.r_[offs[:k + 1], cut + offs2[1:]]
    kw = dict(tick_size=TICK, lookbacks=(2,), context_columns=True, level_columns=True, tpo_columns=True)
    a = vpoc.session_features(h, lo, c, v, open=o, timestamp=ts, offsets=offs, **kw)
    b = vpoc.session_features(*new[:2], new[3], new[4], open=new[2], timestamp=new[5], offsets=new_offs, **kw)
    assert a.columns == b.columns
    np.testing.assert_array_equal(a.values[:k], b.values[:k])
    first = int(np.flatnonzero(np.diff(offs) > 0)[0])
    for name in ("prior_high", "prior_low", "prior_close", "va_migration"):
        assert np.isnan(a[name][: first + 1]).all(), name


# ------------------------------------------------------------------------------ hand-built sessions
def ranges_table(ranges, **kw):
    """One uniform bar per session over rows [lo, hi] (ticks), volume = its rows: with value_area=1.0
    each value area is exactly that range; no timestamps (the four context columns without a clock)."""
    lo_t = np.array([r[0] for r in ranges], dtype=np.float64)
    hi_t = np.array([r[1] for r in ranges], dtype=np.float64)
    vol = (hi_t - lo_t + 1).astype(np.int64)
    return vpoc.session_features(hi_t * TICK, lo_t * TICK, hi_t * TICK, vol, offsets=np.arange(len(ranges) + 1),
                                 tick_size=TICK, value_area=1.0, lookbacks=(), context_columns=True, **kw)


@pytest.mark.parametrize("name, today", [
    ("higher", (112, 120)), ("lower", (90, 98)), ("overlapping_higher", (105, 115)),
    ("overlapping_lower", (95, 105)), ("inside", (102, 108)), ("outside", (95, 115)), ("unchanged", (100, 110)),
    ("overlapping_higher", (110, 120)),  # touching the prior VAH: overlapping, not higher
    ("overlapping_lower", (90, 100)),
    ("outside", (100, 115)),  # the same low, wider above: contains the prior value area
    ("inside", (100, 105)),  # the same low, narrower: inside it
])
def test_value_area_migration(name, today):
    t = ranges_table([(100, 110), today])
    assert np.isnan(t["va_migration"][0])
    assert t["va_migration"][1] == vpoc.features.VA_MIGRATION_CODES[name] == MIGRATION[name]
    assert t.columns[-4:] == CONTEXT_TABLE_COLUMNS[:4]
    np.testing.assert_array_equal(t["value_area_low"], [100 * TICK, today[0] * TICK])  # the premise


def test_prior_session_skips_empty_sessions_and_empty_rows_are_nan():
    h = np.array([10.0, 12.0, 11.0, 20.0, 21.0])
    lo = h - 1.0
    c = np.array([9.5, 11.5, 10.25, 19.5, 20.0])
    t = vpoc.session_features(h, lo, c, np.ones(5), offsets=[0, 3, 3, 5], tick_size=TICK, lookbacks=(),
                              context_columns=True, level_columns=True)
    assert t.columns[-10:] == LEVEL_TABLE_COLUMNS + CONTEXT_TABLE_COLUMNS[:4]
    assert np.isnan(t.values[1]).all()  # the empty session
    assert np.isnan([t["prior_high"][0], t["prior_low"][0], t["prior_close"][0]]).all()
    assert (t["prior_high"][2], t["prior_low"][2], t["prior_close"][2]) == (12.0, 9.0, 10.25)


def globex_day():
    """Bars of the Globex session of 2024-06-04 (CDT = UTC-5): 17:00 the day before, 03:00, 08:29 (the
    overnight), then 08:30 and 10:00 (RTH)."""
    at = [("2024-06-03T22:00"), ("2024-06-04T08:00"), ("2024-06-04T13:29"), ("2024-06-04T13:30"),
          ("2024-06-04T15:00")]
    ts = np.array([np.datetime64(x, "ns").astype(np.int64) for x in at])
    h = np.array([101, 105, 103, 110, 108], dtype=np.float64)
    lo = np.array([99, 100, 98, 95, 104], dtype=np.float64)
    return h, lo, ts


@pytest.mark.filterwarnings("ignore::vpoc.sessions.SessionHoursWarning")  # the open moved to 03:00 on purpose (t8fix)
@pytest.mark.filterwarnings("ignore::vpoc.IncompleteSessionWarning")  # session_features reports them as tpo (t5fix)
@_deps.needs("pandas_market_calendars")
def test_overnight_high_low_hand_built():
    h, lo, ts = globex_day()
    c, v = lo.copy(), np.ones(5, dtype=np.int64)
    for kw in (dict(session="globex"), dict(offsets=[0, 5])):  # dated, and the last bar's local date
        t = vpoc.session_features(h, lo, c, v, open=lo, timestamp=ts, tick_size=TICK, lookbacks=(),
                                  context_columns=True, **kw)
        assert (t["overnight_high"][0], t["overnight_low"][0]) == (105.0, 98.0), kw
        tp = vpoc.tpo(h, lo, c, timestamp=ts, tick_size=TICK, incomplete="ignore", **kw)
        assert (tp.overnight_high[0], tp.overnight_low[0]) == (105.0, 98.0)
    rth = vpoc.session_features(h[3:], lo[3:], c[3:], v[3:], timestamp=ts[3:], offsets=[0, 2], tick_size=TICK,
                                lookbacks=(), context_columns=True)
    assert np.isnan(rth["overnight_high"][0]) and np.isnan(rth["overnight_low"][0])  # an RTH session
    late = vpoc.session_features(h, lo, c, v, timestamp=ts, offsets=[0, 5], tick_size=TICK, lookbacks=(),
                                 context_columns=True, rth_start="03:00")  # the open moved to 03:00
    assert (late["overnight_high"][0], late["overnight_low"][0]) == (101.0, 99.0)


@_deps.needs("pandas")
def test_tpo_prior_close_needs_closes():
    h, lo, ts = globex_day()
    two = lambda x: np.concatenate([x, x + (1440 * MIN if x is ts else 1.0)])  # noqa: E731
    hh, ll, tt = two(h), two(lo), two(ts)
    without = vpoc.tpo(hh, ll, timestamp=tt, offsets=[0, 5, 10], tick_size=TICK, incomplete="ignore")
    assert np.isnan(without.prior_close).all() and without.prior_high[1] == 110.0
    with_close = vpoc.tpo(hh, ll, ll, timestamp=tt, offsets=[0, 5, 10], tick_size=TICK, incomplete="ignore")
    assert with_close.prior_close[1] == 104.0 and np.isnan(with_close.prior_close[0])
    assert list(without.to_pandas().columns[-6:]) == ["overnight_high", "overnight_low", "prior_high",
                                                      "prior_low", "prior_close", "va_migration"]


@pytest.mark.filterwarnings("ignore::vpoc.MissingDaysWarning")  # random sessions days apart (t5fix)
@pytest.mark.filterwarnings("ignore::vpoc.IncompleteSessionWarning")  # session_features reports them as tpo (t5fix)
def test_type_rules_reach_the_type_codes():
    h, lo, o, c, v, ts, offs, _ = random_bars(3, allow_empty=False)
    rules = dict(normal_ext=0.5, variation_ext=3.0, open_tolerance=0)
    t = vpoc.session_features(h, lo, c, v, open=o, timestamp=ts, offsets=offs, tick_size=TICK, lookbacks=(),
                              context_columns=True, type_rules=rules)
    tp = vpoc.tpo(h, lo, c, v, open=o, timestamp=ts, offsets=offs, tick_size=TICK, incomplete="ignore",
                  type_rules=rules)
    np.testing.assert_array_equal(t["day_type"], [DAY[x] for x in tp.day_type.tolist()])
    np.testing.assert_array_equal(t["open_type"], [OPEN[x] for x in tp.open_type.tolist()])
    no_open = vpoc.session_features(h, lo, c, v, timestamp=ts, offsets=offs, tick_size=TICK, lookbacks=(),
                                    context_columns=True)
    assert (no_open["open_type"] == -1).all()  # no open prices: undecided


# ------------------------------------------------------------------------------ bad input
def test_bad_inputs_name_the_argument():
    h, lo, ts = globex_day()
    kw = dict(timestamp=ts, offsets=[0, 5], tick_size=TICK, lookbacks=())
    with pytest.raises(TypeError, match="context_columns"):
        vpoc.session_features(h, lo, lo, np.ones(5), context_columns="yes", **kw)
    with pytest.raises(ValueError, match="type_rules"):  # without the context columns it would do nothing
        vpoc.session_features(h, lo, lo, np.ones(5), type_rules=dict(normal_ext=0.3), **kw)
    with pytest.raises(ValueError, match="type_rules"):  # no timestamps: no type columns
        vpoc.session_features(h, lo, lo, np.ones(5), offsets=[0, 5], tick_size=TICK, context_columns=True,
                              type_rules=dict(normal_ext=0.3))
    with pytest.raises(ValueError, match=r"type_rules\['bogus'\]"):
        vpoc.session_features(h, lo, lo, np.ones(5), context_columns=True, type_rules=dict(bogus=1), **kw)
    with pytest.raises(TypeError, match="type_rules must be a dict"):
        vpoc.session_features(h, lo, lo, np.ones(5), context_columns=True, type_rules=[1], **kw)
