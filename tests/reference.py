"""Plain NumPy reference implementation of the vpoc contract (docs/contract.md).

This module deliberately does NOT import vpoc. It is written session by session with
straightforward loops so that it can be read against the contract line by line; only the
binning of one session is vectorised (np.bincount).

Public functions
----------------
ref_trades(price, volume, offsets=None, *, tick_size, ticks_per_row=1, value_area=0.70,
           va_method="cbot", poc_tie="center")
ref_bars(high, low, close, volume, open=None, offsets=None, *, tick_size, ticks_per_row=1,
         distribute="uniform", value_area=0.70, va_method="cbot", poc_tie="center")
profile_stats(hist, low_row, *, value_area, va_method, poc_tie, total=None)
exact_session_units(kind, cols, tick_size, ticks_per_row=1, open=None) -> {row: units of 2**-64}
exact_rows(shares) -> (low_row, float64 rows, total units); units(v); units_to_double(u)

Both ref_* return a dict with per-session numpy arrays ``poc, vah, val`` (float64),
``poc_row, vah_row, val_row, low_row, n_rows`` (int64), ``total_volume, va_volume``
(float64), the ragged histogram ``offsets`` (int64, S+1) / ``volume`` (float64), and
``fragile`` (bool per session, see profile_stats). The exact_* functions build the rows bit for
bit as the contract's "Exact sums" says (64.64 fixed point in Python integers).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

NO_ROW = -(2**63)
TIE_REL = 1e-9  # POC tie and cbot/single D-vs-U tie tolerance (relative)
PRICE_LIMIT = 2.0**52  # |p / tick_size| must be below this
# Relative distance to a decision boundary below which a float-summation-order
# difference could flip the decision (used only to flag 'fragile' sessions).
FRAGILE_REL = 1e-11

VA_METHODS = ("cbot", "single", "greedy")
POC_TIES = ("center", "low", "high")
DISTRIBUTES = ("close", "hlc3", "uniform", "legacy")


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------
def _f64(x) -> np.ndarray:
    """Widen any numeric input to a 1-D float64 array (float32/float16 widen exactly)."""
    a = np.asarray(x)
    if a.ndim != 1:
        raise ValueError("reference expects 1-D arrays")
    return a.astype(np.float64)


def _offsets(offsets, n: int) -> np.ndarray:
    if offsets is None:
        return np.array([0, n], dtype=np.int64)
    off = np.asarray(offsets, dtype=np.int64)
    assert off.ndim == 1 and off.size >= 1 and off[0] == 0 and off[-1] == n
    assert np.all(np.diff(off) >= 0)
    return off


def price_to_tick(p: np.ndarray, tick_size: float) -> np.ndarray:
    """t = rint(p / tick_size), computed in float64, as int64."""
    q = np.asarray(p, dtype=np.float64) / float(tick_size)
    if q.size and not np.all(np.abs(q) < PRICE_LIMIT):
        raise ValueError("|price / tick_size| must be < 2**52")
    return np.rint(q).astype(np.int64)


def tick_to_row(t: np.ndarray, ticks_per_row: int) -> np.ndarray:
    """r = floor(t / ticks_per_row) (floor division, also for negative ticks)."""
    return np.floor_divide(np.asarray(t, dtype=np.int64), np.int64(ticks_per_row))


def _check_params(tick_size, ticks_per_row, value_area, va_method, poc_tie):
    assert math.isfinite(tick_size) and tick_size > 0
    assert int(ticks_per_row) == ticks_per_row and ticks_per_row >= 1
    assert 0.0 < value_area <= 1.0
    assert va_method in VA_METHODS, va_method
    assert poc_tie in POC_TIES, poc_tie


# --------------------------------------------------------------------------------------
# POC and value area of one histogram
# --------------------------------------------------------------------------------------
def _row_sum(hist, rows) -> float:
    total = 0.0
    for i in rows:
        total += float(hist[i])
    return total


def _near(a: float, b: float, scale: float) -> bool:
    return abs(a - b) <= FRAGILE_REL * scale


def reached(running: float, target: float) -> bool:
    """The value-area stop rule: at or above the target, or within the 1e-9 relative tie band
    below it (docs/contract.md "Value area")."""
    return running >= target or target - running <= TIE_REL * target


def profile_stats(hist, low_row: int, *, value_area: float, va_method: str, poc_tie: str,
                  total: float | None = None) -> dict:
    """POC / value area of one session's row histogram (contract sections POC and
    Value area).

    ``hist[i]`` is the volume of absolute row ``low_row + i``. ``total`` defaults to the
    sum of ``hist`` (pass an engine's own total_volume to replay its decisions exactly).

    Returns poc_row, vah_row, val_row (absolute), va_volume, total_volume and
    ``fragile``: True when some decision (POC tie band, D-vs-U tie, running >= target,
    greedy order at the cut) lies within FRAGILE_REL of flipping, i.e. where a different
    but legitimate float summation order of the *histogram* could change the result.
    """
    hist = np.asarray(hist, dtype=np.float64)
    n = hist.size
    if n == 0:
        return dict(poc_row=NO_ROW, vah_row=NO_ROW, val_row=NO_ROW, va_volume=0.0,
                    total_volume=0.0, fragile=False)
    if total is None:
        total = float(np.sum(hist))
    total = float(total)
    fragile = False

    # ---- POC ------------------------------------------------------------------------
    vmax = float(hist.max())
    dist_to_max = np.abs(hist - vmax)
    tied = np.flatnonzero(dist_to_max <= TIE_REL * vmax)  # all rows when vmax == 0
    if vmax > 0 and np.any(np.abs(dist_to_max - TIE_REL * vmax) <= FRAGILE_REL * vmax):
        fragile = True
    if poc_tie == "low":
        p = int(tied[0])
    elif poc_tie == "high":
        p = int(tied[-1])
    elif poc_tie == "center":
        # centre of [low_row, high_row] in relative rows is (n - 1) / 2; compare doubled
        # distances (integers) and take the first (= lower) minimum.
        d2 = np.abs(2 * tied - (n - 1))
        p = int(tied[int(np.argmin(d2))])
    else:
        raise ValueError(poc_tie)

    # ---- value area -----------------------------------------------------------------
    target = value_area * total
    stop_at = target - TIE_REL * target  # where reached() flips
    scale = max(total, vmax)

    if va_method in ("cbot", "single"):
        step = 2 if va_method == "cbot" else 1
        lo = hi = p
        running = float(hist[p])
        # running == target exactly is fragile too unless every row is a whole number (then any
        # summation order gives the same sums)
        exact_rows = bool(np.all(hist == np.floor(hist)))
        if _near(running, stop_at, scale) and (running != stop_at or not exact_rows) and n > 1:
            fragile = True
        while not reached(running, target):
            up_rows = list(range(hi + 1, min(hi + step, n - 1) + 1))
            dn_rows = list(range(lo - 1, max(lo - step, 0) - 1, -1))
            if not up_rows and not dn_rows:
                break
            # U / D: sum of the (up to `step`) next rows above / below
            U = _row_sum(hist, up_rows)
            D = _row_sum(hist, dn_rows)
            if not up_rows:
                go_up = False
            elif not dn_rows:
                go_up = True
            else:
                diff = abs(D - U)
                band = TIE_REL * max(D, U)
                tie = diff <= band
                if D > U and abs(diff - band) <= FRAGILE_REL * scale:
                    fragile = True
                go_up = not (D > U and not tie)
            if go_up:
                running += U
                hi = up_rows[-1]
            else:
                running += D
                lo = dn_rows[-1]
            if _near(running, stop_at, scale) and (lo > 0 or hi < n - 1):
                fragile = True  # rows remain: stopping here or not could differ
        return dict(poc_row=low_row + p, vah_row=low_row + hi, val_row=low_row + lo,
                    va_volume=running, total_volume=total, fragile=fragile)

    if va_method == "greedy":
        idx = np.arange(n)
        # primary key: volume descending; secondary: row ascending (exact equality)
        order = np.lexsort((idx, -hist))
        running = 0.0
        m = 0
        for j in order:
            running += float(hist[j])
            m += 1
            if _near(running, stop_at, scale) and m < n:
                fragile = True  # rows remain: stopping here or not could differ
            if reached(running, target):
                break
        sel = order[:m]
        if m < n and _near(float(hist[order[m - 1]]), float(hist[order[m]]), vmax):
            fragile = True
        return dict(poc_row=low_row + p, vah_row=low_row + int(sel.max()),
                    val_row=low_row + int(sel.min()), va_volume=running,
                    total_volume=total, fragile=fragile)

    raise ValueError(va_method)


# --------------------------------------------------------------------------------------
# assembling per-session results
# --------------------------------------------------------------------------------------
def _assemble(session_hists, tick_size, ticks_per_row, value_area, va_method, poc_tie):
    """session_hists: list of (low_row, hist) or None for an empty session."""
    S = len(session_hists)
    row_size = float(tick_size) * int(ticks_per_row)
    out = {k: np.full(S, np.nan) for k in ("poc", "vah", "val")}
    for k in ("poc_row", "vah_row", "val_row", "low_row"):
        out[k] = np.full(S, NO_ROW, dtype=np.int64)
    out["n_rows"] = np.zeros(S, dtype=np.int64)
    out["total_volume"] = np.zeros(S)
    out["va_volume"] = np.zeros(S)
    out["fragile"] = np.zeros(S, dtype=bool)
    hists = []
    for s, item in enumerate(session_hists):
        if item is None:
            hists.append(np.zeros(0))
            continue
        low_row, hist = item
        st = profile_stats(hist, low_row, value_area=value_area, va_method=va_method,
                           poc_tie=poc_tie)
        out["low_row"][s] = low_row
        out["n_rows"][s] = hist.size
        for k in ("poc_row", "vah_row", "val_row"):
            out[k][s] = st[k]
        out["poc"][s] = float(st["poc_row"]) * row_size
        out["vah"][s] = float(st["vah_row"]) * row_size
        out["val"][s] = float(st["val_row"]) * row_size
        out["total_volume"][s] = st["total_volume"]
        out["va_volume"][s] = st["va_volume"]
        out["fragile"][s] = st["fragile"]
        hists.append(hist)
    out["offsets"] = np.concatenate([[0], np.cumsum([h.size for h in hists])]).astype(np.int64)
    out["volume"] = (np.concatenate(hists) if hists else np.zeros(0)).astype(np.float64)
    return out


def _bin(rows: np.ndarray, weights: np.ndarray):
    """Histogram of one session over every row from its lowest to highest touched row.
    np.bincount adds the weights in input order."""
    if rows.size == 0:
        return None
    lo = int(rows.min())
    hi = int(rows.max())
    hist = np.bincount(rows - lo, weights=weights, minlength=hi - lo + 1).astype(np.float64)
    assert hist.size == hi - lo + 1
    return lo, hist


# --------------------------------------------------------------------------------------
# trades
# --------------------------------------------------------------------------------------
def ref_trades(price, volume, offsets=None, *, tick_size, ticks_per_row=1, value_area=0.70,
               va_method="cbot", poc_tie="center"):
    _check_params(tick_size, ticks_per_row, value_area, va_method, poc_tie)
    p = _f64(price)
    v = _f64(volume)
    assert p.size == v.size
    off = _offsets(offsets, p.size)
    rows = tick_to_row(price_to_tick(p, tick_size), ticks_per_row)
    sessions = []
    for s in range(off.size - 1):
        a, b = int(off[s]), int(off[s + 1])
        sessions.append(_bin(rows[a:b], v[a:b]))
    return _assemble(sessions, tick_size, ticks_per_row, value_area, va_method, poc_tie)


# --------------------------------------------------------------------------------------
# bars
# --------------------------------------------------------------------------------------
def _legacy_session(h, l, c, v, o, tick_size):
    """Legacy weighting for one session. Returns (ticks, shares) of all contributions."""
    if o is None:
        mn = np.minimum(c, l)
        mx = np.maximum(c, h)
    else:
        mn = np.minimum(np.minimum(o, c), l)
        mx = np.maximum(np.maximum(o, c), h)
    lo = float(mn.min())
    hi = float(mx.max())
    base = math.floor(lo / tick_size)
    K = math.ceil(hi / tick_size) - base
    k = np.arange(K + 1)
    L = float(base) * tick_size + k.astype(np.float64) * tick_size  # exactly the contract
    level_ticks = base + k
    ticks = []
    shares = []
    for j in range(h.size):
        mask = (mn[j] <= L) & (L <= mx[j])
        if not mask.any():
            # off-grid bar inside one tick: everything to t(close)
            ticks.append(price_to_tick(c[j:j + 1], tick_size))
            shares.append(np.array([v[j]]))
            continue
        Lm = L[mask]
        w = 1.0 + 1.0 / (1.0 + np.abs(Lm - c[j]))
        wsum = 0.0
        for x in w:  # sequential sum
            wsum += float(x)
        ticks.append(level_ticks[mask])
        shares.append(v[j] * w / wsum)
    return np.concatenate(ticks).astype(np.int64), np.concatenate(shares)


def ref_bars(high, low, close, volume, open=None, offsets=None, *, tick_size,
             ticks_per_row=1, distribute="uniform", value_area=0.70, va_method="cbot",
             poc_tie="center"):
    _check_params(tick_size, ticks_per_row, value_area, va_method, poc_tie)
    assert distribute in DISTRIBUTES, distribute
    h, l, c, v = _f64(high), _f64(low), _f64(close), _f64(volume)
    o = None if open is None else _f64(open)
    n = h.size
    assert l.size == n and c.size == n and v.size == n and (o is None or o.size == n)
    assert np.all(h >= l)
    # every price has to be representable on the ladder
    for arr in (h, l, c) + (() if o is None else (o,)):
        price_to_tick(arr, tick_size)
    off = _offsets(offsets, n)

    sessions = []
    for s in range(off.size - 1):
        a, b = int(off[s]), int(off[s + 1])
        if a == b:
            sessions.append(None)
            continue
        hs, ls, cs, vs = h[a:b], l[a:b], c[a:b], v[a:b]
        if distribute == "close":
            ticks, shares = price_to_tick(cs, tick_size), vs
        elif distribute == "hlc3":
            ticks, shares = price_to_tick((hs + ls + cs) / 3.0, tick_size), vs
        elif distribute == "uniform":
            t_lo = price_to_tick(ls, tick_size)
            t_hi = price_to_tick(hs, tick_size)
            cnt = t_hi - t_lo + 1
            per_tick = vs / cnt  # v / n, then one share per tick
            ticks = np.concatenate([np.arange(t_lo[j], t_hi[j] + 1) for j in range(b - a)])
            shares = np.repeat(per_tick, cnt)
        else:  # legacy
            ticks, shares = _legacy_session(hs, ls, cs, vs, None if o is None else o[a:b],
                                            tick_size)
        sessions.append(_bin(tick_to_row(ticks, ticks_per_row), shares))
    return _assemble(sessions, tick_size, ticks_per_row, value_area, va_method, poc_tie)


# --------------------------------------------------------------------------------------
# exact 64.64 rows (contract "Exact sums"), with Python integers
# --------------------------------------------------------------------------------------
TWO64 = 2**64


def units(v) -> int:
    """floor(v * 2**64) as an exact integer: the units of 2**-64 of a volume v >= 0 (a float64 or an
    integer; a float is taken as its exact binary value, Fraction(v))."""
    if isinstance(v, (int, np.integer)):
        return int(v) * TWO64
    return math.floor(Fraction(float(v)) * TWO64)


def units_to_double(u: int) -> float:
    """A row's units as float64: float64(hi) + float64(lo) * 2**-64 (hi: whole part, lo: fraction)."""
    hi, lo = u >> 64, u & (TWO64 - 1)
    return float(hi) + float(lo) * 2.0**-64


def exact_rows(shares: dict) -> tuple:
    """{row: units} -> (low_row, float64 rows from the lowest to the highest touched row, total units)."""
    lo, hi = min(shares), max(shares)
    rows = np.array([units_to_double(shares.get(r, 0)) for r in range(lo, hi + 1)], dtype=np.float64)
    return lo, rows, sum(shares.values())


def _legacy_units(h, l, c, v, o, tick_size, add):
    """The legacy weighting of one session in units: level shares floor(v * w_k / sum(w) * 2**64),
    the heaviest level (the first largest w_k) the rest of the bar's units."""
    mn = [min(o[j], c[j], l[j]) if o is not None else min(c[j], l[j]) for j in range(len(h))]
    mx = [max(o[j], c[j], h[j]) if o is not None else max(c[j], h[j]) for j in range(len(h))]
    base = math.floor(min(mn) / tick_size)
    K = math.ceil(max(mx) / tick_size) - base
    levels = [float(base) * tick_size + float(k) * tick_size for k in range(K + 1)]
    for j in range(len(h)):
        ks = [k for k in range(K + 1) if mn[j] <= levels[k] <= mx[j]]
        vj = float(v[j])
        if not ks:  # no level inside the bar: everything on the close's tick
            add(int(price_to_tick(np.array([c[j]]), tick_size)[0]), units(v[j]))
            continue
        w = [1.0 + 1.0 / (1.0 + abs(levels[k] - float(c[j]))) for k in ks]
        wsum = 0.0
        for x in w:
            wsum += x
        heavy = max(range(len(ks)), key=lambda i: (w[i], -i))  # the first of the largest weights
        rest = units(v[j])
        for i, k in enumerate(ks):
            if i == heavy:
                continue
            u = units(vj * w[i] / wsum)
            rest -= u
            add(base + k, u)
        add(base + ks[heavy], rest)


def exact_session_units(kind: str, cols, tick_size: float, ticks_per_row: int = 1, open=None) -> dict:
    """{row: units} of one session under the contract's 64.64 construction.

    kind: "trades" (cols = price, volume) or a bar distribution "close" / "hlc3" / "uniform" /
    "legacy" (cols = high, low, close, volume; ``open`` only for "legacy"). "uniform": a bar's V
    units over its n ticks, q = V // n each and one more on the LOWEST V % n ticks."""
    ticks: dict = {}

    def add(t, u):
        ticks[int(t)] = ticks.get(int(t), 0) + int(u)

    if kind == "trades":
        p, v = cols
        for t, x in zip(price_to_tick(_f64(p), tick_size), v):
            add(t, units(x))
    else:
        h, l, c, v = (_f64(cols[0]), _f64(cols[1]), _f64(cols[2]), cols[3])
        if kind == "close":
            for t, x in zip(price_to_tick(c, tick_size), v):
                add(t, units(x))
        elif kind == "hlc3":
            for t, x in zip(price_to_tick((h + l + c) / 3.0, tick_size), v):
                add(t, units(x))
        elif kind == "uniform":
            for a, b, x in zip(price_to_tick(l, tick_size), price_to_tick(h, tick_size), v):
                n = int(b - a + 1)
                q, rem = divmod(units(x), n)
                for k in range(n):
                    add(int(a) + k, q + (1 if k < rem else 0))
        elif kind == "legacy":
            _legacy_units(h, l, c, v, None if open is None else _f64(open), tick_size, add)
        else:
            raise ValueError(kind)
    rows: dict = {}
    for t, u in ticks.items():
        r = int(t) // int(ticks_per_row)  # floor division, also for negative ticks
        rows[r] = rows.get(r, 0) + u
    return rows


def poc_of_counts(counts, tie: str) -> int:
    """The POC index of whole-number counts (exact ties): the lowest, the highest, or the one
    nearest the middle (the lower of two equally near) of the tied rows, as docs/contract.md says."""
    m = max(counts)
    tied = [i for i, c in enumerate(counts) if c == m]
    if tie == "low":
        return tied[0]
    if tie == "high":
        return tied[-1]
    n = len(counts)
    return min(tied, key=lambda i: (abs(2 * i - (n - 1)), i))
