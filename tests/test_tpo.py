"""vpoc.tpo: TPO profiles against a plain reference written here (loops over bars, zoneinfo clocks).

Contract checked: docs/features.md "TPO profiles": counts, letters, POC and value area on the counts
(docs/contract.md's rules, walked here), single prints, poor high/low, excess, IB and extension, opening range,
equality with session_features' tpo_poc / single_prints / IB, and every loud input.
"""

from __future__ import annotations

import datetime as dt
import warnings
import zoneinfo

import numpy as np
import pytest

import vpoc
from vpoc import IncompleteSessionWarning
from reference import poc_of_counts
import _deps

TICK = 0.25
MIN = 60 * 10**9
DAY = 1440 * MIN
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
UTC = dt.timezone.utc


# ------------------------------------------------------------------------------ plain reference
def wall_ns(ts: int, tz) -> int:
    """Local wall-clock time of UTC ns ``ts`` in ``tz``, as ns since 1970-01-01 00:00 local."""
    t = dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=ts // 1000)
    w = t.astimezone(tz).replace(tzinfo=None)
    d = w - dt.datetime(1970, 1, 1)
    return (d.days * 86400 + d.seconds) * 10**9 + d.microseconds * 1000 + ts % 1000


def row_of(p: float, tick: float, tpr: int) -> int:
    return int(round(p / tick)) // tpr


def ref_va(counts, poc, value_area, method):
    """(val index, vah index, TPOs inside) by docs/contract.md's walk on integer counts."""
    n = len(counts)
    target = value_area * sum(counts)

    def reached(run):
        return run >= target or target - run <= 1e-9 * target

    if method == "greedy":
        run, sel = 0, []
        for i in sorted(range(n), key=lambda i: (-counts[i], i)):
            sel.append(i)
            run += counts[i]
            if reached(run):
                break
        return min(sel), max(sel), run
    step = 2 if method == "cbot" else 1
    lo = hi = poc
    run = counts[poc]
    while not reached(run) and (lo > 0 or hi < n - 1):
        up = counts[hi + 1:hi + 1 + step]
        dn = counts[max(lo - step, 0):lo]
        if up and (not dn or not sum(dn) > sum(up)):
            hi += len(up)
            run += sum(up)
        else:
            lo -= len(dn)
            run += sum(dn)
    return lo, hi, run


def ref_tpo(high, low, ts, offsets, *, tick=TICK, tpr=1, period=30, tz="America/Chicago",
            rth="08:30", ib_minutes=60, or_minutes=None, value_area=0.7, va_method="cbot",
            poc_tie="center", trade_days=None):
    """Per session: a dict of every TpoProfiles field, from loops over the bars."""
    zone = zoneinfo.ZoneInfo(tz) if isinstance(tz, str) else tz
    hh, mm = (int(x) for x in rth.split(":"))
    rth_ns = (hh * 60 + mm) * MIN
    per_ns = period * MIN
    or_minutes = period if or_minutes is None else or_minutes
    out = []
    for s in range(len(offsets) - 1):
        a, b = int(offsets[s]), int(offsets[s + 1])
        if a == b:
            out.append(None)
            continue
        walls = [wall_ns(int(ts[i]), zone) for i in range(a, b)]
        brackets = {}
        first_bar = {}
        for j, i in enumerate(range(a, b)):
            p = (walls[j] - rth_ns) // per_ns
            lo, hi = row_of(low[i], tick, tpr), row_of(high[i], tick, tpr)
            plo, phi = brackets.get(p, (lo, hi))
            brackets[p] = (min(plo, lo), max(phi, hi))
            first_bar.setdefault(p, j)
        p0 = min(brackets)
        lo_r = min(v[0] for v in brackets.values())
        hi_r = max(v[1] for v in brackets.values())
        counts = [0] * (hi_r - lo_r + 1)
        letters = [""] * len(counts)
        for p in sorted(brackets):
            plo, phi = brackets[p]
            for r in range(plo, phi + 1):
                counts[r - lo_r] += 1
                letters[r - lo_r] += LETTERS[(p - p0) % 52]
        poc = poc_of_counts(counts, poc_tie)
        val, vah, va_tpo = ref_va(counts, poc, value_area, va_method)
        rs = tick * tpr
        n = len(counts)
        excess_high = next((k for k in range(n) if counts[n - 1 - k] != 1), n)
        excess_low = next((k for k in range(n) if counts[k] != 1), n)

        def since_start(w):  # ns from the IB / opening range window's start
            if trade_days is None:
                return (w % DAY - rth_ns) % DAY
            return w - (int(trade_days[s]) * DAY + rth_ns)

        def window(minutes):
            return [0 <= since_start(w) < minutes * MIN for w in walls]

        ib = window(ib_minutes)
        orw = window(or_minutes)
        hs, ls = [high[i] for i in range(a, b)], [low[i] for i in range(a, b)]
        ib_h = max([h for h, f in zip(hs, ib) if f], default=np.nan)
        ib_l = min([x for x, f in zip(ls, ib) if f], default=np.nan)
        last_ib = max([j for j, f in enumerate(ib) if f], default=None)
        post = [] if last_ib is None else list(range(last_ib + 1, b - a))
        # a whole IB: a bar in its first period (min(period, ib_minutes)) and a bar after it
        first_ib = min([since_start(w) for w, f in zip(walls, ib) if f], default=None)
        complete = bool(post) and first_ib < min(period, ib_minutes) * MIN
        ext_up = ext_dn = np.nan
        if complete:
            rng = ib_h - ib_l
            up = max(0.0, max(hs[j] for j in post) - ib_h)
            dn = max(0.0, ib_l - min(ls[j] for j in post))
            ext_up = up / rng if rng else np.nan
            ext_dn = dn / rng if rng else np.nan
        starts = {p: int(ts[a + j]) - (walls[j] - rth_ns) % per_ns for p, j in first_bar.items()}
        out.append(dict(
            count=counts, letters=letters, low_row=lo_r, n_rows=n, poc_row=lo_r + poc,
            val_row=lo_r + val, vah_row=lo_r + vah, poc=(lo_r + poc) * rs, val=(lo_r + val) * rs,
            vah=(lo_r + vah) * rs, total_tpo=sum(counts), va_tpo=va_tpo, n_periods=len(brackets),
            empty_periods=max(brackets) - p0 + 1 - len(brackets), first_period_start=starts[p0],
            period_index=[p - p0 for p in sorted(brackets)],
            period_start=[starts[p] for p in sorted(brackets)],
            period_low_row=[brackets[p][0] for p in sorted(brackets)],
            period_high_row=[brackets[p][1] for p in sorted(brackets)],
            single_prints=sum(c == 1 for c in counts), poor_high=counts[-1] >= 2, poor_low=counts[0] >= 2,
            excess_high=excess_high, excess_low=excess_low, session_high=max(hs), session_low=min(ls),
            or_high=max([h for h, f in zip(hs, orw) if f], default=np.nan),
            or_low=min([x for x, f in zip(ls, orw) if f], default=np.nan),
            ib_high=ib_h, ib_low=ib_l, ib_range=ib_h - ib_l, ib_complete=complete,
            ib_ext_up=ext_up, ib_ext_down=ext_dn))
    return out


def assert_matches(got: vpoc.TpoProfiles, want: list) -> None:
    assert got.n_sessions == len(want)
    for s, w in enumerate(want):
        a, b = got.offsets[s], got.offsets[s + 1]
        pa, pb = got.period_offsets[s], got.period_offsets[s + 1]
        if w is None:
            assert b == a and pb == pa and got.n_rows[s] == 0 and np.isnan(got.poc[s])
            assert got.low_row[s] == vpoc.NO_ROW and got.n_periods[s] == 0
            assert not got.ib_complete[s] and np.isnan(got.ib_high[s]) and np.isnan(got.or_high[s])
            continue
        np.testing.assert_array_equal(got.count[a:b], w["count"], err_msg=f"session {s}")
        assert list(got.letters[a:b]) == w["letters"], f"session {s}"
        for k in ("period_index", "period_start", "period_low_row", "period_high_row"):
            np.testing.assert_array_equal(getattr(got, k)[pa:pb], w[k], err_msg=f"session {s} {k}")
        assert "".join(got.period_letter[pa:pb]) == "".join(LETTERS[k % 52] for k in w["period_index"])
        for k, v in w.items():
            if k in ("count", "letters", "period_index", "period_start", "period_low_row", "period_high_row"):
                continue
            g = getattr(got, k)[s]
            if isinstance(v, float) and np.isnan(v):
                assert np.isnan(g), f"session {s} {k}: {g} != NaN"
            else:
                assert g == v, f"session {s} {k}: {g} != {v}"


# ------------------------------------------------------------------------------ random sessions
def random_sessions(seed: int, *, allow_empty: bool = True):
    """Minute-stamped bars in a few sessions (empty, one-bar, one-price, gappy and busy ones) on the
    0.25 grid, around the 08:30 CT open; returns (high, low, ts, offsets, trade days)."""
    rng = np.random.default_rng(seed)
    S = int(rng.integers(1, 6))
    sizes = rng.choice([0, 1, 2, 7, 40, 150] if allow_empty else [1, 2, 7, 40, 150], S)
    base = np.datetime64("2024-03-06", "D").astype(np.int64) + int(rng.integers(0, 300))
    hs, ls, tss, days = [], [], [], []
    price = 20000
    for s, n in enumerate(sizes):
        day = base + 2 * s
        days.append(day)
        t = day * DAY + (14 * 60 + 30 + int(rng.integers(-150, 60))) * MIN  # about 08:30 CT
        flat = rng.random() < 0.2
        for _ in range(int(n)):
            tss.append(t)
            t += int(rng.choice([1, 1, 1, 1, 2, 3, 47])) * MIN
            if flat:
                lo_t, hi_t = price, price
            else:
                price += int(rng.integers(-3, 4))
                lo_t = price - int(rng.integers(0, 3))
                hi_t = price + int(rng.integers(0, 3))
            hs.append(hi_t * TICK)
            ls.append(lo_t * TICK)
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    return (np.array(hs, dtype=np.float64), np.array(ls, dtype=np.float64), np.array(tss, dtype=np.int64),
            offsets, np.array(days, dtype=np.int64))


@pytest.mark.filterwarnings("ignore::vpoc.MissingDaysWarning")  # random sessions days apart (t5fix)
@pytest.mark.parametrize("seed", range(40))
def test_random_sessions_match_reference(seed):
    rng = np.random.default_rng(1000 + seed)
    h, lo, ts, offs, _ = random_sessions(seed)
    opts = dict(period=int(rng.choice([5, 15, 30, 60])), ticks_per_row=int(rng.choice([1, 1, 2, 4])),
                va_method=str(rng.choice(["cbot", "single", "greedy"])),
                poc_tie=str(rng.choice(["center", "low", "high"])),
                value_area=float(rng.choice([0.7, 0.5, 1.0, 0.05])), ib_minutes=int(rng.choice([30, 60, 90])),
                or_minutes=int(rng.choice([5, 30])))
    got = vpoc.tpo(h, lo, timestamp=ts, offsets=offs, tick_size=TICK, period=f"{opts['period']}min",
                   ticks_per_row=opts["ticks_per_row"], va_method=opts["va_method"], poc_tie=opts["poc_tie"],
                   value_area=opts["value_area"], ib_minutes=opts["ib_minutes"],
                   opening_minutes=opts["or_minutes"], incomplete="ignore")
    want = ref_tpo(h, lo, ts, offs, tpr=opts["ticks_per_row"], period=opts["period"],
                   ib_minutes=opts["ib_minutes"], or_minutes=opts["or_minutes"],
                   value_area=opts["value_area"], va_method=opts["va_method"], poc_tie=opts["poc_tie"])
    assert_matches(got, want)


@_deps.needs("pandas")
@pytest.mark.filterwarnings("ignore::vpoc.sessions.SessionHoursWarning")  # London 14:00 on purpose (t8fix)
@pytest.mark.parametrize("seed", range(8))
def test_dated_sessions_take_the_ib_on_their_trade_date(seed):
    """datetime64 session ids are trade dates: the IB and opening range lie on that date only."""
    h, lo, ts, offs, days = random_sessions(seed, allow_empty=False)
    ids = np.repeat(days.astype("datetime64[D]"), np.diff(offs))
    got = vpoc.tpo(h, lo, timestamp=ts, session_ids=ids, tick_size=TICK, incomplete="ignore",
                   tz="Europe/London", rth_start="14:00")
    assert_matches(got, ref_tpo(h, lo, ts, offs, tz="Europe/London", rth="14:00", trade_days=days))
    assert got.trade_dates and list(got.to_pandas().index.date) == [
        dt.date(1970, 1, 1) + dt.timedelta(days=int(d)) for d in days]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("poc_tie", ["center", "low", "high"])
def test_tpo_poc_and_single_prints_equal_session_features(seed, poc_tie):
    """The TPO POC, single prints and IB of vpoc.tpo are the session table's columns."""
    h, lo, ts, offs, _ = random_sessions(seed)
    close, vol = lo.copy(), np.ones(h.shape[0], dtype=np.int64)
    table = vpoc.session_features(h, lo, close, vol, timestamp=ts, offsets=offs, tick_size=TICK,
                                  lookbacks=(), poc_tie=poc_tie, tpo_minutes=15, ticks_per_row=2)
    got = vpoc.tpo(h, lo, close, vol, timestamp=ts, offsets=offs, tick_size=TICK, poc_tie=poc_tie,
                   period="15min", ticks_per_row=2, incomplete="ignore")
    ne = got.n_rows > 0
    for name, mine in (("tpo_poc", got.poc), ("single_prints", got.single_prints), ("ib_high", got.ib_high),
                       ("ib_low", got.ib_low), ("ib_range", got.ib_range)):
        want = np.asarray(table[name], dtype=np.float64)
        np.testing.assert_array_equal(want[ne], np.asarray(mine, dtype=np.float32)[ne], err_msg=name)
    assert got.volume_profile is not None
    np.testing.assert_array_equal(got.volume_profile.poc, vpoc.from_bars(
        h, lo, close, vol, offsets=offs, tick_size=TICK, ticks_per_row=2, poc_tie=poc_tie).poc)


@pytest.mark.filterwarnings("ignore::vpoc.IncompleteSessionWarning")  # session_features reports them as tpo (t5fix)
@pytest.mark.parametrize("seed", range(10))
def test_session_table_tpo_columns(seed):
    """session_features(tpo_columns=True) adds vpoc.tpo's columns after single_prints (period and
    opening range = tpo_minutes); the default table is unchanged; no row reads a later session."""
    h, lo, ts, offs, _ = random_sessions(seed)
    close, vol = h.copy(), np.full(h.shape[0], 3, dtype=np.int64)
    kw = dict(timestamp=ts, offsets=offs, tick_size=TICK, lookbacks=(5,), tpo_minutes=15, va_method="single")
    plain = vpoc.session_features(h, lo, close, vol, **kw)
    table = vpoc.session_features(h, lo, close, vol, tpo_columns=True, **kw)
    extra = [name for name, _ in vpoc.features.TPO_TABLE_COLUMNS]
    at = plain.columns.index("single_prints") + 1
    assert table.columns == plain.columns[:at] + tuple(extra) + plain.columns[at:]
    np.testing.assert_array_equal(table.select(plain.columns).values, plain.values)
    got = vpoc.tpo(h, lo, timestamp=ts, offsets=offs, tick_size=TICK, period="15min", va_method="single",
                   incomplete="ignore")
    empty = got.n_rows == 0
    for name, field in vpoc.features.TPO_TABLE_COLUMNS:
        want = np.asarray(getattr(got, field), dtype=np.float64).astype(np.float32)
        want[empty] = np.nan
        np.testing.assert_array_equal(table[name], want, err_msg=name)
    # no lookahead: the sessions before the last are the same rows without it (and with more bars)
    if offs.size > 2:
        cut = int(offs[-2])
        head = vpoc.session_features(h[:cut], lo[:cut], close[:cut], vol[:cut], tpo_columns=True,
                                     **dict(kw, timestamp=ts[:cut], offsets=offs[:-1]))
        np.testing.assert_array_equal(head.values, table.values[:-1])
    with pytest.raises(TypeError, match="tpo_columns"):
        vpoc.session_features(h, lo, close, vol, tpo_columns="yes", **kw)


@_deps.needs("pandas")
def test_synth_globex_sessions_and_exports():
    bars = vpoc.synth.es_bars(3, seed=4)
    got = vpoc.tpo(bars, tick_size=TICK)
    days = [(dt.date(d // 10000, d // 100 % 100, d % 100) - dt.date(1970, 1, 1)).days
            for d in bars.session_labels.tolist()]
    want = ref_tpo(bars.high, bars.low, bars.timestamp, bars.offsets, trade_days=days)
    assert_matches(got, want)
    assert (got.n_periods == 46).all() and (got.empty_periods == 0).all()
    df = got.to_pandas()
    assert list(df.columns) == list(vpoc.features.TPO_SESSION_FIELDS) and df.index.name == "trade_date"
    d = got.to_dict()
    assert d["count"] is got.count and d["letters"].shape == got.count.shape
    rows = got.rows_frame()
    assert rows["count"].sum() == got.total_tpo.sum() and list(rows["letters"]) == list(got.letters)
    prices, counts, letters = got.session(-1)
    np.testing.assert_array_equal(prices, (got.low_row[2] + np.arange(got.n_rows[2])) * TICK)
    assert list(letters) == list(got.letters[got.offsets[2]:])
    assert "TpoProfiles(n_sessions=3" in repr(got)
    assert got.first_period_start[0] == bars.timestamp[0]  # 17:00 CT: period A starts at the first bar


# ------------------------------------------------------------------------------ hand-built sessions
def rth_bars(brackets, day="2024-06-03", start="08:30", period=30):
    """One bar per period from ``start`` (Chicago, CDT = UTC-5): brackets are (low, high) in ticks,
    None for a period without bars."""
    hh, mm = (int(x) for x in start.split(":"))
    t0 = np.datetime64(day, "ns").astype(np.int64) + ((hh + 5) * 60 + mm) * MIN
    ts, lo, hi = [], [], []
    for k, br in enumerate(brackets):
        if br is None:
            continue
        ts.append(t0 + k * period * MIN)
        lo.append(br[0] * TICK)
        hi.append(br[1] * TICK)
    return np.array(hi), np.array(lo), np.array(ts, dtype=np.int64)


def one(brackets, **kw):
    h, lo, ts = rth_bars(brackets)
    kw.setdefault("incomplete", "ignore")
    return vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, **kw)


def test_hand_built_single_prints_excess_and_poor_extremes():
    # A: 100-104, B: 100-102, C: 100-101, D: 106-108 (rows 105 untouched: a zero row)
    r = one([(100, 104), (100, 102), (100, 101), (106, 108)])
    assert list(r.count) == [3, 3, 2, 1, 1, 0, 1, 1, 1]
    assert list(r.letters) == ["ABC", "ABC", "AB", "A", "A", "", "D", "D", "D"]
    assert r.single_prints[0] == 5 and r.excess_high[0] == 3 and r.excess_low[0] == 0
    assert r.poor_low[0] and not r.poor_high[0]
    assert r.poc_row[0] == 101  # 100 and 101 tie at 3; centre of 100..108 is 104: 101 is closer
    r = one([(100, 104), (100, 102), (100, 101), (106, 108)], poc_tie="low")
    assert r.poc_row[0] == 100


def test_hand_built_poor_high_and_buying_tail():
    # a poor high (two periods print the top row) and a three-row single-print tail at the bottom
    r = one([(110, 112), (107, 112), (107, 110), (104, 109)])
    assert r.count[-1] == 2 and r.poor_high[0] and not r.poor_low[0]
    assert r.excess_low[0] == 3 and r.excess_high[0] == 0
    assert list(r.letters[:3]) == ["D", "D", "D"]


def test_one_period_session_is_all_single_prints():
    r = one([(100, 103)])
    assert r.excess_high[0] == r.excess_low[0] == r.single_prints[0] == r.n_rows[0] == 4
    assert not r.poor_high[0] and not r.poor_low[0] and r.n_periods[0] == 1
    flat = one([(100, 100), (100, 100), (100, 100)])
    assert list(flat.count) == [3] and flat.poor_high[0] and flat.poor_low[0] and flat.excess_high[0] == 0
    assert flat.poc[0] == flat.vah[0] == flat.val[0] == 25.0


def test_initial_balance_extension_and_opening_range():
    # IB = A and B (08:30-09:30): 100..106, range 6 ticks = 1.5; C goes 3 ticks above, D 12 below
    r = one([(102, 106), (100, 104), (103, 109), (88, 101)])
    assert r.ib_high[0] == 106 * TICK and r.ib_low[0] == 100 * TICK and r.ib_complete[0]
    assert r.ib_ext_up[0] == 0.5 and r.ib_ext_down[0] == 2.0
    assert r.or_high[0] == 106 * TICK and r.or_low[0] == 102 * TICK  # period A
    wide = one([(102, 106), (100, 104), (103, 109), (88, 101)], opening_minutes=60)
    assert wide.or_high[0] == 106 * TICK and wide.or_low[0] == 100 * TICK


def test_gap_periods_keep_their_letters_and_are_reported():
    h, lo, ts = rth_bars([(100, 101), None, None, (100, 102), (99, 100)])
    with pytest.warns(IncompleteSessionWarning, match="periods without bars"):
        r = vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK)
    assert r.empty_periods[0] == 2 and r.n_periods[0] == 3
    assert "".join(r.period_letter) == "ADE" and list(r.period_index) == [0, 3, 4]
    with pytest.raises(ValueError, match="timestamp.*periods without bars"):
        vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, incomplete="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, incomplete="ignore")


def test_session_shorter_than_ib_is_reported():
    h, lo, ts = rth_bars([(100, 101), (100, 102)])  # only the IB: nothing after it
    with pytest.warns(IncompleteSessionWarning, match="no initial balance or no bar after it"):
        r = vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK)
    assert not r.ib_complete[0] and np.isnan(r.ib_ext_up[0]) and r.ib_high[0] == 102 * TICK
    with pytest.raises(ValueError, match="initial balance"):
        vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, incomplete="raise")


def test_letters_wrap_after_z():
    h, lo, ts = rth_bars([(100, 100)] * 60, start="00:00", period=5)
    r = vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, period="5min", incomplete="ignore")
    assert r.letters[0] == LETTERS + LETTERS[:8] and r.count[0] == 60


def test_dst_fall_back_hour_shares_its_periods():
    """The repeated 01:00-02:00 CT hour of 2024-11-03 falls in the same wall-clock periods."""
    t0 = np.datetime64("2024-11-03T05:00", "ns").astype(np.int64)  # 00:00 CDT
    ts = t0 + np.arange(0, 240, 10, dtype=np.int64) * MIN  # 00:00 CDT .. 02:50 CST
    lo = (100 + np.arange(ts.size) % 5).astype(np.float64) * TICK
    got = vpoc.tpo(lo + TICK, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, incomplete="ignore")
    assert_matches(got, ref_tpo(lo + TICK, lo, ts, [0, ts.size]))
    assert got.n_periods[0] == 6  # 00:00, 00:30 CDT; 01:00, 01:30 twice; 02:00, 02:30 CST
    assert got.empty_periods[0] == 0


# ------------------------------------------------------------------------------ loud inputs
@pytest.mark.parametrize("period, exc, match", [
    ("30 parsecs", ValueError, "period"), ("90s", ValueError, "whole number of minutes"),
    ("2d", ValueError, "longer than a day"), (0, ValueError, "period"), (-5, ValueError, "period"),
    (True, TypeError, "period"), (None, TypeError, "period"), ([30], TypeError, "period"),
])
def test_bad_period(period, exc, match):
    h, lo, ts = rth_bars([(100, 101), (100, 102), (100, 103)])
    with pytest.raises(exc, match=match):
        vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, period=period)


def test_bad_inputs_name_the_argument():
    h, lo, ts = rth_bars([(100, 101), (100, 102), (100, 103)])
    with pytest.raises(ValueError, match="timestamp is required"):
        vpoc.tpo(h, lo, tick_size=TICK)
    with pytest.raises(ValueError, match="timestamp must be sorted"):
        vpoc.tpo(h, lo, timestamp=ts[::-1].copy(), offsets=[0, ts.size], tick_size=TICK)
    with pytest.raises(ValueError, match="incomplete"):
        vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, incomplete="loud")
    with pytest.raises(ValueError, match="opening_minutes"):
        vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, opening_minutes=0)
    with pytest.raises(TypeError, match="opening_minutes"):
        vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, opening_minutes=1.5)
    with pytest.raises(ValueError, match="ib_minutes"):
        vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, ib_minutes=0)
    with pytest.raises(ValueError, match="rth_start"):
        vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, rth_start="8h30")
    with pytest.raises(ValueError, match="tz"):
        vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, tz="Mars/Olympus")
    with pytest.raises(TypeError, match="high and low"):
        vpoc.tpo(h, tick_size=TICK, timestamp=ts)
    with pytest.raises(ValueError, match="tick_size"):
        vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=-1.0)
    with pytest.raises(ValueError, match="va_method"):
        vpoc.tpo(h, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK, va_method="widest")
    with pytest.raises(ValueError, match=r"high\[0\] < low\[0\]"):
        vpoc.tpo(lo, h, timestamp=ts, offsets=[0, ts.size], tick_size=TICK)
    bad = h.copy()
    bad[2] = np.nan
    with pytest.raises(ValueError, match=r"high\[2\] is not finite"):
        vpoc.tpo(bad, lo, timestamp=ts, offsets=[0, ts.size], tick_size=TICK)
    with pytest.raises(ValueError, match="tick_size"):  # most prices off the grid
        vpoc.tpo(h + 0.1, lo + 0.1, timestamp=ts, offsets=[0, ts.size], tick_size=TICK)


def test_bars_longer_than_the_period():
    h, lo, ts = rth_bars([(100, 101), (100, 102), (100, 103)], period=60)
    closes = ts + 60 * MIN
    with pytest.raises(ValueError, match="shorter than the bars"):
        vpoc.tpo(h, lo, timestamp=closes, offsets=[0, ts.size], label="close", interval="1h", tick_size=TICK)
    r = vpoc.tpo(h, lo, timestamp=closes, offsets=[0, ts.size], label="close", interval="1h", tick_size=TICK,
                 period="1h", incomplete="ignore")
    assert list(r.period_index) == [0, 1, 2]


def test_default_sessions_are_announced():
    bars = vpoc.synth.es_bars(2, seed=1)
    pytest.importorskip("pandas_market_calendars")
    with pytest.warns(vpoc.GuessedDefaultWarning, match="Globex"):
        vpoc.tpo(bars.high, bars.low, timestamp=bars.timestamp, tick_size=TICK, incomplete="ignore")


def test_tpo_volume_profile_by_close_needs_the_close():
    # distribute rules that read the close must not read the low in its place
    ts = np.array(["2024-06-03T13:30", "2024-06-03T14:00"], dtype="datetime64[ns]").astype(np.int64)
    h, lo, v = np.array([101.0, 102.0]), np.array([100.0, 100.5]), np.array([5, 7])
    for dist in ("close", "hlc3", "legacy"):
        with pytest.raises(ValueError, match="close is missing"):
            vpoc.tpo(h, lo, volume=v, timestamp=ts, offsets=[0, 2], tick_size=0.25, distribute=dist,
                     incomplete="ignore")
    tp = vpoc.tpo(h, lo, volume=v, timestamp=ts, offsets=[0, 2], tick_size=0.25, incomplete="ignore")
    assert float(tp.volume_profile.total_volume[0]) == 12.0  # uniform reads high and low only

