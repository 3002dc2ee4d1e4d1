"""Plain NumPy/pandas re-implementation of the legacy analyzer's math (GUIDE §2), for tests of vpoc.compat.

Contract: one session at a time, literal loops as the legacy code ran them, float64; never imports vpoc.

The rules (levels, weights, smoothing, the analyzer's clustered VPOC and one-level-at-a-time value
area, the module functions' argmax and greedy value area, the 14 session features) are those of the
legacy module github.com/lrud/futures_vpoc_backtest src/core/vpoc.py and
src/ml/feature_engineering.py, with vpoc.compat's documented choices: values within ``tie_rel``
relative compare equal (``tie_rel=0``: the legacy's exact comparisons), ``sub_tick_bars`` for bars
whose range holds no level, NaN for empty sessions / zero totals.

Functions
---------
profile(open, high, low, close, volume, tick, sub_tick_bars="drop") -> (levels, volume, volume_smooth)
smooth3(volume) -> volume_smooth
analyzer_vpoc(levels, volume, quantile=0.95, min_levels=3, tie_rel=1e-9) -> price
analyzer_value_area(levels, volume, value_area_pct=0.7, tie_rel=1e-9) -> (val, vah, pct 0-100)
dict_vpoc(profile_dict, tie_rel=1e-9) -> price
dict_value_area(profile_dict, value_area_pct=0.7, tie_rel=1e-9) -> (val, vah, fraction)
analyze_session(open, high, low, close, volume, tick, ...) -> dict (scalar keys of analyze_session)
session_features(open, high, low, close, volume, tick=0.25, ...) -> dict (the 14 legacy features)
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

TIE_REL = 1e-9
FLOOR = 0.0001


def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def profile(open, high, low, close, volume, tick, sub_tick_bars="drop"):
    """Levels floor(lo/tick)*tick + k*tick .. ceil(hi/tick)*tick and the legacy weighting."""
    o, h, l, c, v = _f64(open), _f64(high), _f64(low), _f64(close), _f64(volume)
    if c.size == 0:
        empty = np.zeros(0)
        return empty, empty.copy(), empty.copy()
    bar_min = np.minimum(np.minimum(o, c), l)
    bar_max = np.maximum(np.maximum(o, c), h)
    base = math.floor(float(bar_min.min()) / tick)
    K = math.ceil(float(bar_max.max()) / tick) - base
    levels = float(base) * tick + np.arange(K + 1, dtype=np.float64) * tick
    vol = np.zeros(K + 1)
    for i in range(c.size):
        mask = (levels >= bar_min[i]) & (levels <= bar_max[i])
        if mask.any():
            weights = 1.0 + 1.0 / (1.0 + np.abs(levels[mask] - c[i]))
            vol[mask] += v[i] * weights / weights.sum()
        elif sub_tick_bars == "close":
            vol[int(np.rint(c[i] / tick)) - base] += v[i]
        else:
            assert sub_tick_bars == "drop", sub_tick_bars
    return levels, vol, smooth3(vol)


def smooth3(vol):
    """(v[k-1] + v[k] + v[k+1]) / 3 with zeros beyond both ends."""
    vol = _f64(vol)
    out = np.zeros_like(vol)
    for k in range(vol.size):
        left = vol[k - 1] if k > 0 else 0.0
        right = vol[k + 1] if k + 1 < vol.size else 0.0
        out[k] = (left + vol[k] + right) / 3.0
    return out


def _first_max(vol, tie_rel):
    vmax = max(vol)
    for k, x in enumerate(vol):
        if x >= vmax - tie_rel * vmax:
            return k
    raise AssertionError("unreachable")


def analyzer_vpoc(levels, vol, quantile=0.95, min_levels=3, tie_rel=TIE_REL):
    levels, vol = _f64(levels), _f64(vol)
    if vol.size == 0:
        return math.nan
    simple = levels[_first_max(vol, tie_rel)]
    threshold = float(pd.Series(vol).quantile(quantile))  # pandas' default: linear
    members = [k for k in range(vol.size) if vol[k] >= threshold - tie_rel * abs(threshold)]
    weights = vol[members]
    if len(members) < min_levels or weights.sum() == 0:
        return float(simple)
    mean = float(np.average(levels[members], weights=weights))
    dist = np.abs(levels - mean)
    best = dist.min()
    for k in range(vol.size):
        if dist[k] <= best + tie_rel * abs(mean):
            return float(levels[k])
    raise AssertionError("unreachable")


def analyzer_value_area(levels, vol, value_area_pct=0.7, tie_rel=TIE_REL):
    levels, vol = _f64(levels), _f64(vol)
    n = vol.size
    if n == 0:
        return math.nan, math.nan, math.nan
    poc = _first_max(vol, tie_rel)
    total = float(vol.sum())
    target = total * value_area_pct
    current = vol[poc]
    upper = lower = poc
    while not current >= target - tie_rel * target and (upper < n - 1 or lower > 0):
        up = vol[upper + 1] if upper < n - 1 else 0.0
        down = vol[lower - 1] if lower > 0 else 0.0
        if up >= down - tie_rel * max(up, down) and upper < n - 1:
            upper += 1
            current += up
        elif lower > 0:
            lower -= 1
            current += down
        else:
            break
    pct = current / total * 100 if total > 0 else math.nan
    return float(levels[lower]), float(levels[upper]), float(pct)


def dict_vpoc(profile_dict, tie_rel=TIE_REL):
    if not profile_dict:
        return 0.0
    items = sorted(profile_dict.items())  # ascending price: the lowest wins ties
    vmax = max(v for _, v in items)
    for price, v in items:
        if v >= vmax - tie_rel * vmax:
            return float(price)
    raise AssertionError("unreachable")


def dict_value_area(profile_dict, value_area_pct=0.7, tie_rel=TIE_REL):
    if not profile_dict:
        return 0.0, 0.0, 0.0
    ascending = sorted(profile_dict.items())
    vmax = max(v for _, v in ascending)

    def rank(item):  # volume at a resolution of tie_rel x the largest volume (exact for tie_rel=0)
        if tie_rel == 0 or vmax == 0:
            return item[1]
        return float(np.rint(item[1] / vmax / tie_rel))

    by_volume = sorted(ascending, key=rank, reverse=True)  # stable: lower price first
    total = sum(v for _, v in ascending)
    target = total * value_area_pct
    cumulative = 0.0
    included = []
    for price, v in by_volume:
        cumulative += v
        included.append(price)
        if cumulative >= target - tie_rel * target:
            break
    fraction = cumulative / total if total > 0 else math.nan
    return float(min(included)), float(max(included)), float(fraction)


def analyze_session(open, high, low, close, volume, tick, value_area_pct=0.7, use_smoothing=True,
                    sub_tick_bars="drop", tie_rel=TIE_REL):
    levels, vol, smooth = profile(open, high, low, close, volume, tick, sub_tick_bars)
    col = smooth if use_smoothing else vol
    vpoc = analyzer_vpoc(levels, col, tie_rel=tie_rel)
    val, vah, pct = analyzer_value_area(levels, col, value_area_pct, tie_rel=tie_rel)
    return {"vpoc": vpoc, "value_area_low": val, "value_area_high": vah, "value_area_width": vah - val,
            "value_area_pct": pct, "total_volume": float(np.sum(_f64(volume)))}


def session_features(open, high, low, close, volume, tick=0.25, value_area_pct=0.7,
                     sub_tick_bars="drop", tie_rel=TIE_REL):
    o, h, l, c, v = _f64(open), _f64(high), _f64(low), _f64(close), _f64(volume)
    levels, vol, _ = profile(o, h, l, c, v, tick, sub_tick_bars)
    as_dict = {float(p): float(x) for p, x in zip(levels, vol)}
    vpoc = dict_vpoc(as_dict, tie_rel)
    val, vah, _ = dict_value_area(as_dict, value_area_pct, tie_rel)
    session_high, session_low = float(h.max()), float(l.min())
    session_open, session_close = float(o[0]), float(c[-1])
    total = float(v.sum())
    vwap = float((c * v).sum() / total) if total > 0 else session_close
    price_range = max(session_high - session_low, FLOOR)
    return {
        "vpoc": vpoc,
        "total_volume": total,
        "value_area_low": val,
        "value_area_high": vah,
        "value_area_width": vah - val,
        "price_range": price_range,
        "range_pct": price_range / max(session_open, FLOOR) * 100,
        "close_change_pct": (session_close - session_open) / max(session_open, FLOOR) * 100,
        "session_high": session_high,
        "session_low": session_low,
        "session_open": session_open,
        "session_close": session_close,
        "vwap": vwap,
        "close_to_vwap_pct": (session_close - vwap) / max(vwap, FLOOR) * 100,
    }
