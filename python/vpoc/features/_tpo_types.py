"""Dalton day types and open types of TPO sessions, each rule a key of ``type_rules``.

Contract (docs/features.md, "Day types and open types"): a session's types read its own bars and, for
``non_trend``, earlier sessions only; "" where a rule cannot decide; bad ``type_rules`` raise naming the key.
"""

from __future__ import annotations

import numbers
from typing import Any, Dict, Optional, Tuple

import numpy as np

__all__ = ["DAY_TYPES", "OPEN_TYPES", "TYPE_RULES", "_day_types", "_open_types", "_type_rules"]

#: The default thresholds of the day and open types (docs/features.md).
TYPE_RULES: Dict[str, float] = dict(
    normal_ext=0.2, variation_ext=1.0, nontrend_ib=0.5, lookback=10, dd_rows=2, dd_share=0.2,
    open_tolerance=2, test_max=0.25, close_edge=0.25,
)
#: The day types ``day_type`` takes ("" besides).
DAY_TYPES: Tuple[str, ...] = ("normal", "normal_variation", "trend", "double_distribution", "neutral",
                              "non_trend")
#: The open types ``open_type`` takes ("" besides).
OPEN_TYPES: Tuple[str, ...] = ("open_drive", "open_test_drive", "open_rejection_reverse", "open_auction")

_INTEGER_RULES = ("lookback", "dd_rows", "open_tolerance")


def _type_rules(given: Optional[Dict[str, Any]]) -> Dict[str, float]:
    """``TYPE_RULES`` updated by ``given``: ValueError / TypeError naming ``type_rules[key]``."""
    if given is None:
        return dict(TYPE_RULES)
    if not isinstance(given, dict):
        raise TypeError(f"type_rules must be a dict of thresholds (keys {sorted(TYPE_RULES)}), "
                        f"got {type(given).__name__}")
    out = dict(TYPE_RULES)
    for key, value in given.items():
        name = f"type_rules[{key!r}]"
        if key not in TYPE_RULES:
            raise ValueError(f"{name}: unknown rule; the keys are {sorted(TYPE_RULES)}")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a number, got {type(value).__name__}")
        if key in _INTEGER_RULES:
            if not isinstance(value, numbers.Integral) or int(value) < (0 if key == "open_tolerance" else 1):
                raise ValueError(f"{name} must be an integer >= {0 if key == 'open_tolerance' else 1}, "
                                 f"got {value!r}")
            out[key] = int(value)
            continue
        v = float(value)
        if not (np.isfinite(v) and v >= 0.0) or (key in ("dd_share", "test_max", "close_edge") and v > 1.0):
            top = "1" if key in ("dd_share", "test_max", "close_edge") else "inf"
            raise ValueError(f"{name} must be in [0, {top}], got {value!r}")
        out[key] = v
    if out["variation_ext"] < out["normal_ext"]:
        raise ValueError(f"type_rules['variation_ext'] ({out['variation_ext']}) must be >= "
                         f"type_rules['normal_ext'] ({out['normal_ext']})")
    return out


def _thin_run(count: np.ndarray, rows: int, share: float) -> bool:
    """Whether ``count`` (one session's TPO counts, low row first) has ``rows`` or more consecutive
    rows of count <= 1 with at least ``share`` of the TPOs below them and as much above them."""
    n = count.shape[0]
    total = float(count.sum())
    thin = np.r_[False, count <= 1, False]
    edges = np.flatnonzero(np.diff(thin.astype(np.int8)))
    starts, ends = edges[0::2], edges[1::2]  # runs [start, end) of thin rows
    below = np.r_[0, np.cumsum(count)]
    for a, b in zip(starts.tolist(), ends.tolist()):
        if b - a < rows or a == 0 or b == n:
            continue
        if below[a] >= share * total and total - below[b] >= share * total:
            return True
    return False


def _day_types(cols: Dict[str, np.ndarray], rules: Dict[str, float]) -> np.ndarray:
    """``day_type`` of every session from the result's columns (docs/features.md)."""
    S = cols["n_rows"].shape[0]
    out = np.full(S, "", dtype="U19")
    up, down, rng = cols["ib_ext_up"], cols["ib_ext_down"], cols["ib_range"]
    ok = cols["ib_complete"] & (rng > 0)
    history = []  # ib_range of the earlier sessions with a complete IB
    count, offs = cols["count"], cols["offsets"]
    for s in range(S):
        if not ok[s]:
            if cols["ib_complete"][s]:
                history.append(float(rng[s]))
            continue
        u, d = float(up[s]), float(down[s])
        if u > 0 and d > 0:
            out[s] = "neutral"
        elif u == 0 and d == 0:
            past = history[-int(rules["lookback"]):]
            if past:
                out[s] = "non_trend" if rng[s] <= rules["nontrend_ib"] * float(np.mean(past)) else "normal"
        else:
            e = max(u, d)
            if e <= rules["normal_ext"]:
                out[s] = "normal"
            elif e <= rules["variation_ext"]:
                out[s] = "normal_variation"
            elif _thin_run(count[offs[s]:offs[s + 1]], int(rules["dd_rows"]), rules["dd_share"]):
                out[s] = "double_distribution"
            else:
                out[s] = "trend"
        history.append(float(rng[s]))
    return out


def _open_type(o: float, high: np.ndarray, low: np.ndarray, close: float, tol: float,
               rules: Dict[str, float]) -> str:
    """The open type of one session's IB bars (time order) opening at ``o``."""
    ib_high, ib_low = float(high.max()), float(low.min())
    rng = ib_high - ib_low
    above, below = ib_high > o + tol, ib_low < o - tol
    if above and not below:
        return "open_drive"
    if below and not above:
        return "open_drive"
    if not above and not below:
        return "open_auction"
    first_up = int(np.argmax(high > o + tol))
    first_down = int(np.argmax(low < o - tol))
    if first_up == first_down:
        return "open_auction"
    if first_up < first_down:  # tested up first, then down
        test = float(high[:first_down].max()) - o
        beyond, edge = close < o - tol, close - ib_low
    else:
        test = o - float(low[:first_up].min())
        beyond, edge = close > o + tol, ib_high - close
    if not beyond:
        return "open_auction"
    if test <= rules["test_max"] * rng and edge <= rules["close_edge"] * rng:
        return "open_test_drive"
    return "open_rejection_reverse"


def _open_types(high: np.ndarray, low: np.ndarray, open_: Optional[np.ndarray], close: np.ndarray,
                ib: np.ndarray, offsets: np.ndarray, decide: np.ndarray, tick_size: float,
                rules: Dict[str, float]) -> np.ndarray:
    """``open_type`` of every session (docs/features.md); ``ib`` the IB mask of the bars; only the
    sessions where ``decide`` (a complete IB of non-zero range) get one."""
    S = offsets.shape[0] - 1
    out = np.full(S, "", dtype="U22")
    if open_ is None:
        return out
    # in whole ticks (prices on the grid): a decimal tick's float differences would put a move of
    # exactly open_tolerance ticks on either side of the rule
    tol = float(rules["open_tolerance"])
    ticks = lambda x: np.rint(np.asarray(x, dtype=np.float64) / tick_size)  # noqa: E731
    for s in range(S):
        if not decide[s]:
            continue
        a, b = int(offsets[s]), int(offsets[s + 1])
        idx = a + np.flatnonzero(ib[a:b])
        out[s] = _open_type(float(ticks(open_[idx[0]])), ticks(high[idx]), ticks(low[idx]),
                            float(ticks(close[idx[-1]])), tol, rules)
    return out
