"""Plain NumPy reference of the peer rules (docs/presets.md): touched rows, POC ties, VA compare / stop, tie_tol, va_target.

Does NOT import vpoc. Written as py-market-profile works: the touched rows compressed into a list, indices into it;
lean_profile transcribes QuantConnect LEAN's MarketProfile.cs in Python Decimal (its C# decimal).
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

from reference import NO_ROW, price_to_tick, tick_to_row


def touched_rows(kind: str, cols: dict, tick_size: float, ticks_per_row: int = 1) -> list:
    """Per input row, the (lowest, highest) ladder row it puts a share on: trades and
    distribute='close' the row of the price / close, 'hlc3' of (high + low + close) / 3,
    'uniform' every row from the low's to the high's."""
    def rows(p):
        return tick_to_row(price_to_tick(np.asarray(p, dtype=np.float64), tick_size), ticks_per_row)
    if kind == "trades":
        r = rows(cols["price"])
        return list(zip(r, r))
    h, l, c = (np.asarray(cols[k], dtype=np.float64) for k in ("high", "low", "close"))
    if kind == "close":
        r = rows(c)
        return list(zip(r, r))
    if kind == "hlc3":
        r = rows((h + l + c) / 3.0)
        return list(zip(r, r))
    assert kind == "uniform", kind
    return list(zip(rows(l), rows(h)))


def touched_mask(spans: list, low_row: int, n: int) -> np.ndarray:
    """[n] bool: rows low_row .. low_row + n - 1 that one of ``spans`` covers."""
    m = np.zeros(n, dtype=bool)
    for a, b in spans:
        m[int(a) - low_row:int(b) - low_row + 1] = True
    return m


def _reached(running: float, target, tol: float, stop: str) -> bool:
    if isinstance(target, Fraction):  # va_target='decimal': exact
        return Fraction(running) > target if stop == "exceeds" else Fraction(running) >= target
    if stop == "exceeds":
        return running > target and not (running - target <= tol * target)
    return running >= target or target - running <= tol * target


def peer_levels(hist, low_row: int, touched, *, value_area: float, va_method: str, poc_tie: str,
                va_compare: str, va_stop: str, tie_tol: float, total: float | None = None,
                va_target: str = "float") -> dict:
    """POC / VAL / VAH rows (absolute) and va_volume of one session. ``touched``: [n] bool, or
    None for va_rows='all' (every row exists). The rows that exist are compressed into w; the
    POC and the expansion work on indices into w (ranks), as the peers do."""
    hist = np.asarray(hist, dtype=np.float64)
    n = hist.size
    if n == 0:
        return dict(poc_row=NO_ROW, val_row=NO_ROW, vah_row=NO_ROW, va_volume=0.0)
    idx = np.arange(n) if touched is None else np.flatnonzero(touched)
    w = [float(x) for x in hist[idx]]
    m = len(w)
    mx = max(hist)  # volumes >= 0: the maximum of every row is the touched rows' maximum
    cands = [j for j in range(m) if abs(w[j] - mx) <= tie_tol * mx]
    if poc_tie == "low":
        poc = cands[0]
    elif poc_tie == "high":
        poc = cands[-1]
    else:
        # 'mid_n2': py-market-profile's n / 2; 'mid_floor': LEAN's (n - 1) // 2
        t2 = {"center": m - 1, "mid_n2": m, "mid_floor": 2 * ((m - 1) // 2)}[poc_tie]
        poc = min(cands, key=lambda j: (abs(2 * j - t2), j))
    total = float(np.sum(hist)) if total is None else float(total)
    target = value_area * total if va_target == "float" else Fraction(repr(value_area)) * Fraction(total)
    step = 2 if va_method == "cbot" else 1
    lo = hi = poc
    running = w[poc]
    while not _reached(running, target, tie_tol, va_stop):
        ups = w[hi + 1:hi + 1 + step]
        dns = w[max(lo - step, 0):lo][::-1]  # nearest first: the engine's order of addition
        if not ups and not dns:
            break
        up = 0.0
        for x in ups:
            up += x
        dn = 0.0
        for x in dns:
            dn += x
        more_below = dn > up and not (abs(dn - up) <= tie_tol * max(dn, up))
        if va_compare == "zero_absent":
            down = bool(dns) and (not ups or up == 0.0 or more_below)
        else:
            down = not ups or (bool(dns) and more_below)
        if down:
            running += dn
            lo -= len(dns)
        else:
            running += up
            hi += len(ups)
    return dict(poc_row=low_row + int(idx[poc]), val_row=low_row + int(idx[lo]), vah_row=low_row + int(idx[hi]),
                va_volume=running)


def peer_undefined(hist, touched, levels: dict, low_row: int, *, value_area: float) -> bool:
    """Whether py-market-profile 0.2.0 raises on this session (TypeError: ``+= None``): its
    loop asks for the row below when the one above is absent or 0 and none is left below, or
    runs out of rows before passing the target. Read from the finished value area: at the stop
    it would still want to go on, or it went up past a zero row with nothing below."""
    hist = np.asarray(hist, dtype=np.float64)
    idx = np.flatnonzero(touched)
    w = hist[idx]
    ranks = {int(r): k for k, r in enumerate(idx)}
    lo, hi = ranks[levels["val_row"] - low_row], ranks[levels["vah_row"] - low_row]
    poc = ranks[levels["poc_row"] - low_row]
    target = value_area * float(np.sum(hist))
    running = float(w[poc])
    a = b = poc
    while running <= target:  # py-market-profile's own loop, transcribed, with None checks
        low = w[a - 1] if a > 0 else None
        high = w[b + 1] if b + 1 < len(w) else None
        if not high or (low and low > high):
            if low is None:
                return True
            running += low
            a -= 1
        else:
            running += high
            b += 1
    assert (a, b) == (lo, hi), ((a, b), (lo, hi))
    return False


def lean_profile(closes, volumes, *, roundoff: str = "0.05", value_area: str = "0.70", period: int | None = None) -> list:
    """QuantConnect LEAN ``VolumeProfile`` (Indicators/MarketProfile.cs, Apache-2.0), transcribed in
    Decimal: after each bar, dict(poc, poc_volume, ph, pl, va, vah, val) as LEAN reports them (va:
    ValueAreaVolume, the target). ``period`` None: every bar so far (no removal). LEAN loops forever
    when the row above is 0 and none is left below; that raises RuntimeError here."""
    inv = 1 / Decimal(roundoff)
    pct = Decimal(value_area)

    def rnd(a: Decimal) -> Decimal:
        return Decimal(math.ceil(a * inv)) / inv

    vpp: dict = {}
    window: list = []
    total = Decimal(0)
    out = []
    for c, v in zip(closes, volumes):
        c, v = Decimal(repr(float(c))), Decimal(repr(float(v)))
        key = rnd(c)
        vpp[key] = vpp.get(key, Decimal(0)) + v
        window.append((c, v))
        total += v
        if period is not None and len(window) > period:
            oc, ov = window.pop(0)
            total -= ov
            k = rnd(oc)
            if k in vpp:
                vpp[k] -= ov
                if vpp[k] == 0:
                    del vpp[k]
        keys = sorted(vpp)
        vals = [vpp[k] for k in keys]
        mx = 0
        for i in range(len(vals)):
            if vals[i] > vals[mx]:
                mx = i
            elif vals[i] == vals[mx]:
                mid = len(vals) - 1
                if abs(mid // 2 - i) < abs(mid // 2 - mx):
                    mx = i
        target = total * pct
        cur = vals[mx]
        lo = hi = mx
        steps = 0
        while cur <= target:
            steps += 1
            if steps > 10 * len(vals) + 10:
                raise RuntimeError("LEAN's value-area loop makes no progress")
            nlo, nhi = max(lo - 1, 0), min(hi + 1, len(vals) - 1)
            low = vals[nlo] if nlo != lo else Decimal(0)
            high = vals[nhi] if nhi != hi else Decimal(0)
            if high == 0 or (low != 0 and low > high):
                cur += low
                lo = nlo
            elif low == 0 or (high != 0 and high >= low):
                cur += high
                hi = nhi
            else:
                break
        out.append(dict(poc=keys[mx], poc_volume=vals[mx], ph=keys[-1], pl=keys[0], va=target, vah=keys[hi],
                        val=keys[lo]))
    return out
