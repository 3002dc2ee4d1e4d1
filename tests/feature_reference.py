"""Plain reference for vpoc.features: every session and bar feature recomputed from first principles.

Does NOT import vpoc. Profiles come from tests/reference.py (ref_bars / profile_stats); everything
else is written session by session (and bar by bar) with loops, following docs/features.md.

Public functions
----------------
ref_session_features(high, low, close, volume, open=None, timestamp=None, offsets=None,
                     trade_dates=None, **rules)
    -> dict {column name: float64 [S]} in the documented column order
ref_bar_features(high, low, close, volume, open=None, timestamp=None, offsets=None, trade_dates=None,
                 **rules)
    -> dict {column name: float64 [N]} in the documented column order
legacy_pandas(per_session_frame, lookbacks) -> pandas.DataFrame of the 40 lookback features,
    written with pandas shift/rolling the way the legacy FeatureEngineer computed them.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

import reference as R

NAN = float("nan")
TIE = 1e-9
LEGACY = ("vpoc", "total_volume", "value_area_low", "value_area_high", "value_area_width",
          "price_range", "range_pct", "close_change_pct", "session_high", "session_low",
          "session_open", "session_close", "vwap", "close_to_vwap_pct")
LOOKBACK = ("price_mom_{n}d", "volatility_{n}d", "volume_trend_{n}d", "vpoc_change_{n}d",
            "vpoc_pct_change_{n}d", "range_change_{n}d", "va_width_{n}d_ma",
            "va_width_change_{n}d", "vpoc_std_{n}d", "vpoc_zscore_{n}d")

DEFAULTS = dict(tick_size=0.25, ticks_per_row=1, distribute="uniform", value_area=0.70,
                va_method="cbot", poc_tie="center", lookbacks=(5, 10, 20, 50),
                composite_sessions=5, naked_max_age=None, node_smoothing=3, node_order=3,
                hvn_threshold=0.5, lvn_threshold=0.5, shape_edge=0.3, shape_b_peak=0.6,
                shape_b_valley=0.5, tz="America/Chicago", rth_start="08:30", ib_minutes=60,
                tpo_minutes=30)


# ------------------------------------------------------------------------------- small helpers
def div(a, b):
    """a / b with NaN for b == 0 or NaN operands (the documented convention)."""
    if b == 0 or math.isnan(a) or math.isnan(b):
        return NAN
    return a / b


def pct(a, b):
    q = div(a, b)
    return NAN if math.isnan(q) else (q - 1.0) * 100.0


def row_of(p, tick_size, ticks_per_row):
    return int(math.floor(int(np.rint(p / tick_size)) / ticks_per_row))


def window_std(values):
    """Sample std (ddof=1); 0 when all values are equal; NaN with a NaN or fewer than 2."""
    if len(values) < 2 or any(math.isnan(v) for v in values):
        return NAN
    if all(v == values[0] for v in values):
        return 0.0
    m = sum(values) / len(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def window_mean(values):
    if any(math.isnan(v) for v in values):
        return NAN
    return sum(values) / len(values)


def nearest(levels, x):
    """(min level - x over levels >= x, min x - level over levels <= x), NaN when none."""
    up = [lv - x for lv in levels if lv >= x]
    dn = [x - lv for lv in levels if lv <= x]
    return (min(up) if up else NAN), (min(dn) if dn else NAN)


def hist_of(prof, s):
    a, b = int(prof["offsets"][s]), int(prof["offsets"][s + 1])
    return prof["volume"][a:b]


# ------------------------------------------------------------------------------- nodes and shape
def smoothed(hist, window):
    h = window // 2
    n = len(hist)
    out = []
    for i in range(n):
        total = 0.0
        for j in range(i - h, i + h + 1):
            if 0 <= j < n:
                total += float(hist[j])
        out.append(total)
    return out


def nodes(hist, rules):
    """(hvn relative rows, lvn relative rows, smoothed volumes) of one session's histogram:
    runs of equal smoothed volume (consecutive differences within the tie band) bounded by
    strictly lower (HVN) / higher (LVN) rows, no row within node_order of the run beyond it in
    the other direction, the threshold; the node is the run's lower-middle row."""
    s = smoothed(hist, rules["node_smoothing"])
    n = len(s)
    if n == 0:
        return [], [], s
    smax = max(s)
    tol = TIE * smax
    k = rules["node_order"]
    runs = []
    start = 0
    for i in range(1, n + 1):
        if i == n or abs(s[i] - s[i - 1]) > tol:
            runs.append((start, i - 1))
            start = i
    hvn, lvn = [], []
    for a, b in runs:
        if a - k < 0 or b + k > n - 1:
            continue
        c = (a + b) // 2
        v = s[c]
        is_h = v >= rules["hvn_threshold"] * smax - tol and v - s[a - 1] > tol and v - s[b + 1] > tol
        is_l = v <= rules["lvn_threshold"] * smax + tol and s[a - 1] - v > tol and s[b + 1] - v > tol
        around = [s[j] for j in range(a - k, a)] + [s[j] for j in range(b + 1, b + k + 1)]
        is_h = is_h and all(v - x >= -tol for x in around)
        is_l = is_l and all(x - v >= -tol for x in around)
        if is_h:
            hvn.append(c)
        if is_l:
            lvn.append(c)
    return hvn, lvn, s


def shape(hist, poc_rel, hvn, s, rules):
    n = len(hist)
    if len(hvn) >= 2:
        ranked = sorted(hvn, key=lambda i: (-s[i], i))
        r1, r2 = ranked[0], ranked[1]
        s1, s2 = s[r1], s[r2]
        a, b = min(r1, r2), max(r1, r2)
        valley = min(s[a:b + 1])
        tol = TIE * s1
        if s2 >= rules["shape_b_peak"] * s1 - tol and valley <= rules["shape_b_valley"] * s2 + tol:
            return "B"
    pos = 0.5 if n == 1 else poc_rel / (n - 1)
    if pos >= 1.0 - rules["shape_edge"]:
        return "P"
    if pos <= rules["shape_edge"]:
        return "b"
    return "D"


# ------------------------------------------------------------------------------- time
def local_clock(timestamp, tz, rth_start, ib_minutes, tpo_minutes, offsets=None, trade_dates=None):
    """Per bar: local minute of day (float), in-IB flag, TPO period number (pandas tz_convert).

    With ``trade_dates`` (a datetime.date per session) a session's IB is [D rth_start,
    D rth_start + ib_minutes) local wall-clock time on its trade date D; without, every bar whose
    local time of day is in [rth_start, rth_start + ib_minutes) (modulo a day) is in the IB."""
    ts = np.asarray(timestamp, dtype=np.int64)
    local = pd.to_datetime(ts, unit="ns", utc=True).tz_convert(tz).tz_localize(None)
    wall = np.asarray(local.asi8 if local.unit == "ns" else local.as_unit("ns").asi8, dtype=np.int64)
    hh, mm = (int(x) for x in rth_start.split(":"))
    rth_ns = (hh * 60 + mm) * 60 * 10**9
    day = 1440 * 60 * 10**9
    ib_ns = ib_minutes * 60 * 10**9
    off = [0, len(wall)] if offsets is None else [int(x) for x in offsets]
    out_min, out_ib, out_period = [], [], []
    for s in range(len(off) - 1):
        if trade_dates is not None:
            d = trade_dates[s]
            start = pd.Timestamp(d.year, d.month, d.day).value + rth_ns  # naive wall clock, ns
        for w in wall[off[s]:off[s + 1]].tolist():
            tod = w % day
            out_min.append(tod / (60 * 10**9))
            if trade_dates is None:
                out_ib.append((tod - rth_ns) % day < ib_ns)
            else:
                out_ib.append(start <= w < start + ib_ns)
            out_period.append((w - rth_ns) // (tpo_minutes * 60 * 10**9))
    return out_min, out_ib, out_period


# ------------------------------------------------------------------------------- per-session state
def _sessions(high, low, close, volume, open, timestamp, offsets, rules):
    h, l, c, v = (np.asarray(x, dtype=np.float64) for x in (high, low, close, volume))
    o = None if open is None else np.asarray(open, dtype=np.float64)
    n = h.size
    off = np.array([0, n]) if offsets is None else np.asarray(offsets, dtype=np.int64)
    S = off.size - 1
    tick, tpr = rules["tick_size"], rules["ticks_per_row"]
    row_size = tick * tpr
    prof = R.ref_bars(h, l, c, v, open=o, offsets=off, tick_size=tick, ticks_per_row=tpr,
                      distribute=rules["distribute"], value_area=rules["value_area"],
                      va_method=rules["va_method"], poc_tie=rules["poc_tie"])
    sess = []
    for s in range(S):
        a, b = int(off[s]), int(off[s + 1])
        if a == b:
            sess.append(None)
            continue
        hist = hist_of(prof, s)
        hvn, lvn, sm = nodes(hist, rules)
        low_row = int(prof["low_row"][s])
        vol = float(sum(v[a:b]))
        vwap = (sum(c[a:b] * v[a:b]) / vol) if vol > 0 else c[b - 1]
        sess.append(dict(
            s=s, a=a, b=b, hist=hist, low_row=low_row,
            poc=float(prof["poc"][s]), vah=float(prof["vah"][s]), val=float(prof["val"][s]),
            poc_row=int(prof["poc_row"][s]),
            open=NAN if o is None else float(o[a]), close=float(c[b - 1]),
            high=float(max(h[a:b])), low=float(min(l[a:b])), volume=vol, vwap=float(vwap),
            hvn=[(low_row + i) * row_size for i in hvn], lvn=[(low_row + i) * row_size for i in lvn],
            shape=shape(hist, int(prof["poc_row"][s]) - low_row, hvn, sm, rules),
        ))
    nonempty = [x for x in sess if x is not None]
    # composites ending at each non-empty session
    N = rules["composite_sessions"]
    for k, x in enumerate(nonempty):
        x["k"] = k
        if k < N - 1:
            x["comp"] = (NAN, NAN, NAN)
            continue
        acc = {}
        for y in nonempty[k - N + 1:k + 1]:
            for i, vol in enumerate(y["hist"]):
                acc[y["low_row"] + i] = acc.get(y["low_row"] + i, 0.0) + float(vol)
        lo, hi = min(acc), max(acc)
        comp_hist = np.array([acc.get(r, 0.0) for r in range(lo, hi + 1)])
        st = R.profile_stats(comp_hist, lo, value_area=rules["value_area"],
                             va_method=rules["va_method"], poc_tie=rules["poc_tie"])
        x["comp"] = (st["poc_row"] * row_size, st["vah_row"] * row_size, st["val_row"] * row_size)
    # naked POCs at the end of each non-empty session
    for e, x in enumerate(nonempty):
        levels = []
        for j in range(e + 1):
            if rules["naked_max_age"] is not None and e - j >= rules["naked_max_age"]:
                continue
            pr = nonempty[j]["poc_row"]
            touched = False
            for y in nonempty[j + 1:e + 1]:
                if row_of(y["low"], tick, tpr) <= pr <= row_of(y["high"], tick, tpr):
                    touched = True
            if not touched:
                levels.append(nonempty[j]["poc"])
        x["naked"] = levels
    # previous non-empty session
    prev = None
    for x in sess:
        if x is None:
            continue
        x["prev"] = prev
        prev = x
    return sess, nonempty, prof, (h, l, c, v, o, off)


def _resolve(rules):
    out = dict(DEFAULTS)
    out.update(rules)
    return out


# ------------------------------------------------------------------------------- session features
def ref_session_features(high, low, close, volume, open=None, timestamp=None, offsets=None,
                         trade_dates=None, **rules):
    rules = _resolve(rules)
    tick, tpr = rules["tick_size"], rules["ticks_per_row"]
    sess, nonempty, prof, (h, l, c, v, o, off) = _sessions(high, low, close, volume, open,
                                                           timestamp, offsets, rules)
    S = len(sess)
    cols = {}

    def col(name):
        cols[name] = np.full(S, NAN)
        return cols[name]

    base = {}
    for x in nonempty:
        rng = x["high"] - x["low"]
        base[x["s"]] = {
            "vpoc": x["poc"], "total_volume": x["volume"], "value_area_low": x["val"],
            "value_area_high": x["vah"], "value_area_width": x["vah"] - x["val"],
            "price_range": rng, "range_pct": div(rng, x["open"]) * 100.0,
            "close_change_pct": div(x["close"] - x["open"], x["open"]) * 100.0,
            "session_high": x["high"], "session_low": x["low"], "session_open": x["open"],
            "session_close": x["close"], "vwap": x["vwap"],
            "close_to_vwap_pct": div(x["close"] - x["vwap"], x["vwap"]) * 100.0,
        }
    for name in LEGACY:
        arr = col(name)
        for s, d in base.items():
            arr[s] = d[name]
    seq = [base[x["s"]] for x in nonempty]
    for p in rules["lookbacks"]:
        arrs = {t: col(t.format(n=p)) for t in LOOKBACK}
        for k, x in enumerate(nonempty):
            s = x["s"]
            cur = seq[k]
            if k >= p:
                old = seq[k - p]
                arrs["price_mom_{n}d"][s] = pct(cur["session_close"], old["session_close"])
                arrs["volume_trend_{n}d"][s] = pct(cur["total_volume"], old["total_volume"])
                arrs["vpoc_change_{n}d"][s] = cur["vpoc"] - old["vpoc"]
                arrs["vpoc_pct_change_{n}d"][s] = pct(cur["vpoc"], old["vpoc"])
                arrs["range_change_{n}d"][s] = pct(cur["range_pct"], old["range_pct"])
            if k >= p - 1:
                win = seq[k - p + 1:k + 1]
                arrs["volatility_{n}d"][s] = window_std([w["close_change_pct"] for w in win])
                ma = window_mean([w["value_area_width"] for w in win])
                arrs["va_width_{n}d_ma"][s] = ma
                arrs["va_width_change_{n}d"][s] = div(cur["value_area_width"], ma)
                vp = [w["vpoc"] for w in win]
                sd = window_std(vp)
                arrs["vpoc_std_{n}d"][s] = sd
                arrs["vpoc_zscore_{n}d"][s] = div(cur["vpoc"] - window_mean(vp), sd)
    for name in ("poc", "vah", "val"):
        arr = col(f"prev_{name}_dist")
        for x in nonempty:
            if x["prev"] is not None:
                arr[x["s"]] = (x["close"] - x["prev"][name]) / tick
    for i, name in enumerate(("poc", "vah", "val")):
        arr = col(f"composite_{name}")
        for x in nonempty:
            arr[x["s"]] = x["comp"][i]
    cnt, up, dn = col("naked_poc_count"), col("naked_poc_above_dist"), col("naked_poc_below_dist")
    for x in nonempty:
        cnt[x["s"]] = len(x["naked"])
        a, b = nearest(x["naked"], x["close"])
        up[x["s"]], dn[x["s"]] = a / tick, b / tick
    for kind in ("hvn", "lvn"):
        arr = col(f"{kind}_count")
        for x in nonempty:
            arr[x["s"]] = len(x[kind])
    for kind in ("hvn", "lvn"):
        up, dn = col(f"{kind}_above_dist"), col(f"{kind}_below_dist")
        for x in nonempty:
            a, b = nearest(x[kind], x["close"])
            up[x["s"]], dn[x["s"]] = a / tick, b / tick
    if timestamp is not None:
        _, ib, period = local_clock(timestamp, rules["tz"], rules["rth_start"],
                                    rules["ib_minutes"], rules["tpo_minutes"], off, trade_dates)
        ibh, ibl, ibr = col("ib_high"), col("ib_low"), col("ib_range")
        tpoc, single = col("tpo_poc"), col("single_prints")
        row_size = tick * tpr
        for x in nonempty:
            a, b = x["a"], x["b"]
            hi = [h[i] for i in range(a, b) if ib[i]]
            lo = [l[i] for i in range(a, b) if ib[i]]
            if hi:
                ibh[x["s"]], ibl[x["s"]] = max(hi), min(lo)
                ibr[x["s"]] = max(hi) - min(lo)
            ranges = {}
            for i in range(a, b):
                lr, hr = row_of(l[i], tick, tpr), row_of(h[i], tick, tpr)
                plo, phi = ranges.get(period[i], (lr, hr))
                ranges[period[i]] = (min(plo, lr), max(phi, hr))
            counts = {}
            for plo, phi in ranges.values():
                for r in range(plo, phi + 1):
                    counts[r] = counts.get(r, 0) + 1
            lo_r, hi_r = min(counts), max(counts)
            tpo_hist = np.array([float(counts.get(r, 0)) for r in range(lo_r, hi_r + 1)])
            st = R.profile_stats(tpo_hist, lo_r, value_area=rules["value_area"],
                                 va_method=rules["va_method"], poc_tie=rules["poc_tie"])
            tpoc[x["s"]] = st["poc_row"] * row_size
            single[x["s"]] = float(np.sum(tpo_hist == 1.0))
    for label in ("P", "b", "D", "B"):
        arr = col(f"shape_{label}")
        for x in nonempty:
            arr[x["s"]] = 1.0 if x["shape"] == label else 0.0
    arr = col("close_va_position")
    for x in nonempty:
        arr[x["s"]] = div(x["close"] - x["val"], x["vah"] - x["val"])
    assert all(a.shape == (S,) for a in cols.values())
    return cols


# ------------------------------------------------------------------------------- bar features
def ref_bar_features(high, low, close, volume, open=None, timestamp=None, offsets=None,
                     trade_dates=None, **rules):
    rules = _resolve(rules)
    tick, tpr = rules["tick_size"], rules["ticks_per_row"]
    sess, nonempty, prof, (h, l, c, v, o, off) = _sessions(high, low, close, volume, open,
                                                           timestamp, offsets, rules)
    n = h.size
    names = ["bar_index", "cum_volume", "cum_volume_vs_prev", "close_change_pct",
             "close_to_vwap_pct", "dev_poc_dist", "dev_vah_dist", "dev_val_dist",
             "dev_va_position", "dev_high_dist", "dev_low_dist", "prev_poc_dist", "prev_vah_dist",
             "prev_val_dist", "composite_poc_dist", "composite_vah_dist", "composite_val_dist",
             "naked_poc_count", "naked_poc_above_dist", "naked_poc_below_dist",
             "prev_hvn_above_dist", "prev_hvn_below_dist", "prev_lvn_above_dist",
             "prev_lvn_below_dist"]
    if timestamp is not None:
        names += ["minute_of_day", "minutes_elapsed", "ib_high_dist", "ib_low_dist"]
        minute, ib, _ = local_clock(timestamp, rules["tz"], rules["rth_start"],
                                    rules["ib_minutes"], rules["tpo_minutes"], off, trade_dates)
        ts = np.asarray(timestamp, dtype=np.int64)
    cols = {k: np.full(n, NAN) for k in names}
    for x in nonempty:
        a, b = x["a"], x["b"]
        prev = x["prev"]
        k = x["k"]
        comp = nonempty[k - 1]["comp"] if k >= 1 else (NAN, NAN, NAN)
        naked = nonempty[k - 1]["naked"] if k >= 1 else []
        cum_v = 0.0
        cum_pv = 0.0
        hi = -math.inf
        lo = math.inf
        ib_hi = -math.inf
        ib_lo = math.inf
        for i in range(a, b):
            ci = c[i]
            cum_v += v[i]
            cum_pv += ci * v[i]
            hi = max(hi, h[i])
            lo = min(lo, l[i])
            cols["bar_index"][i] = i - a
            cols["cum_volume"][i] = cum_v
            cols["cum_volume_vs_prev"][i] = NAN if prev is None else div(cum_v, prev["volume"])
            sopen = NAN if o is None else o[a]
            cols["close_change_pct"][i] = div(ci - sopen, sopen) * 100.0
            vwap = div(cum_pv, cum_v) if cum_v > 0 else ci
            cols["close_to_vwap_pct"][i] = div(ci - vwap, vwap) * 100.0
            # developing levels: the profile of the session's bars a..i, brute force
            pre = R.ref_bars(h[a:i + 1], l[a:i + 1], c[a:i + 1], v[a:i + 1],
                             open=None if o is None else o[a:i + 1], tick_size=tick,
                             ticks_per_row=tpr, distribute=rules["distribute"],
                             value_area=rules["value_area"], va_method=rules["va_method"],
                             poc_tie=rules["poc_tie"])
            dpoc, dvah, dval = float(pre["poc"][0]), float(pre["vah"][0]), float(pre["val"][0])
            cols["dev_poc_dist"][i] = (ci - dpoc) / tick
            cols["dev_vah_dist"][i] = (ci - dvah) / tick
            cols["dev_val_dist"][i] = (ci - dval) / tick
            cols["dev_va_position"][i] = div(ci - dval, dvah - dval)
            cols["dev_high_dist"][i] = (hi - ci) / tick
            cols["dev_low_dist"][i] = (ci - lo) / tick
            for name in ("poc", "vah", "val"):
                cols[f"prev_{name}_dist"][i] = NAN if prev is None else (ci - prev[name]) / tick
            for j, name in enumerate(("poc", "vah", "val")):
                cols[f"composite_{name}_dist"][i] = (ci - comp[j]) / tick
            cols["naked_poc_count"][i] = len(naked)
            up, dn = nearest(naked, ci)
            cols["naked_poc_above_dist"][i], cols["naked_poc_below_dist"][i] = up / tick, dn / tick
            for kind in ("hvn", "lvn"):
                up, dn = nearest([] if prev is None else prev[kind], ci)
                cols[f"prev_{kind}_above_dist"][i] = up / tick
                cols[f"prev_{kind}_below_dist"][i] = dn / tick
            if timestamp is not None:
                cols["minute_of_day"][i] = minute[i]
                cols["minutes_elapsed"][i] = (int(ts[i]) - int(ts[a])) / (60 * 10**9)
                if ib[i]:
                    ib_hi = max(ib_hi, h[i])
                    ib_lo = min(ib_lo, l[i])
                cols["ib_high_dist"][i] = (ib_hi - ci) / tick if ib_hi > -math.inf else NAN
                cols["ib_low_dist"][i] = (ci - ib_lo) / tick if ib_lo < math.inf else NAN
    return cols


# ------------------------------------------------------------------------------- legacy (pandas)
def legacy_pandas(frame: pd.DataFrame, lookbacks) -> pd.DataFrame:
    """The legacy lookback features of ``frame`` (one row per session with vpoc, total_volume,
    value_area_low/high, range_pct, close_change_pct, session_close), in pandas, with the legacy
    FeatureEngineer's semantics: pct_change(n) = x / x.shift(n) - 1, rolling(n) std (ddof=1)
    and mean, zero denominators -> NaN (the legacy code replaced inf by NaN)."""
    out = {}

    def pchg(x, n):
        return (x / x.shift(n) - 1.0) * 100.0

    width = frame["value_area_high"] - frame["value_area_low"]
    for n in lookbacks:
        ma = width.rolling(n).mean()
        std = frame["vpoc"].rolling(n).std()
        out[f"price_mom_{n}d"] = pchg(frame["session_close"], n)
        out[f"volatility_{n}d"] = frame["close_change_pct"].rolling(n).std()
        out[f"volume_trend_{n}d"] = pchg(frame["total_volume"], n)
        out[f"vpoc_change_{n}d"] = frame["vpoc"].diff(n)
        out[f"vpoc_pct_change_{n}d"] = pchg(frame["vpoc"], n)
        out[f"range_change_{n}d"] = pchg(frame["range_pct"], n)
        out[f"va_width_{n}d_ma"] = ma
        out[f"va_width_change_{n}d"] = width / ma.replace(0, np.nan)
        out[f"vpoc_std_{n}d"] = std
        out[f"vpoc_zscore_{n}d"] = (frame["vpoc"] - frame["vpoc"].rolling(n).mean()) / std.replace(0, np.nan)
    res = pd.DataFrame(out, index=frame.index)
    return res.replace([np.inf, -np.inf], np.nan)
