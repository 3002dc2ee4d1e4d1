"""``vpoc.diff`` of two ``TpoProfiles``: the TPO profile seen as a histogram, and its IB / opening range windows.

Contract (docs/diff.md, "Two TpoProfiles"): the TPO counts are the histogram, every rule is read from ``rules``;
a session whose ``ib_*`` / ``or_*`` columns differ differs, named by the window rules that differ.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from .features import TpoProfiles

__all__ = ["_TpoView", "_WINDOW_RULES", "_windows"]

#: The rules of the initial balance / opening range windows (TPO_RULES' last four): named when the
#: ``ib_*`` / ``or_*`` columns differ.
_WINDOW_RULES: Tuple[str, ...] = ("ib_minutes", "opening_minutes", "ib_end", "ib_anchor")
#: The TpoProfiles columns of those windows that diff compares (NaN equal to NaN).
_WINDOW_COLUMNS: Tuple[str, ...] = ("ib_high", "ib_low", "or_high", "or_low")


class _TpoView:
    """A ``TpoProfiles`` seen as the histogram ``diff`` compares: its TPO counts as the row
    "volumes" (``count``, ``total_tpo``, ``va_tpo``) on its ladder, its TPO POC / value area as the
    levels, and every rule it records (``TPO_RULES``)."""

    kind = "tpo"

    def __init__(self, tp: TpoProfiles) -> None:
        self.source = tp
        for name in ("offsets", "low_row", "n_rows", "poc", "vah", "val", "poc_row", "vah_row", "val_row",
                     "tick_size", "ticks_per_row", "row_size", "session_labels", "trade_dates"):
            setattr(self, name, getattr(tp, name))
        self.n_sessions = tp.n_sessions
        self.volume = np.asarray(tp.count, dtype=np.float64)
        self.total_volume = np.asarray(tp.total_tpo, dtype=np.float64)
        self.va_volume = np.asarray(tp.va_tpo, dtype=np.float64)
        r = tp.rules
        start = int(r["rth_start_ns"]) // 10**9
        self.rules = dict(value_area=float(r["value_area"]), va_method=r["va_method"], poc_tie=r["poc_tie"],
                          period=f"{int(r['period'])}min", tz=str(r["tz"]),
                          rth_start=f"{start // 3600:02d}:{start // 60 % 60:02d}"
                                    + (f":{start % 60:02d}" if start % 60 else ""),
                          **{k: r[k] for k in _WINDOW_RULES + ("preset",) if k in r})

    def coarse(self, m: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(offsets, low rows, counts) of the TPO profile on the ladder of rows ``m`` times its own,
        rebuilt from its periods: a period spans coarse rows lo // m .. hi // m and counts once on
        each (TPO counts do not add up over rows as volumes do: a period touching two fine rows of
        one coarse row is one TPO there)."""
        tp = self.source
        n = np.asarray(tp.n_rows, dtype=np.int64)
        low = np.asarray(tp.low_row, dtype=np.int64)
        S = n.shape[0]
        clow = np.where(n > 0, np.floor_divide(low, m), 0)
        cn = np.where(n > 0, np.floor_divide(low + n - 1, m) - clow + 1, 0)
        offs = np.concatenate(([0], np.cumsum(cn))).astype(np.int64)
        sess = np.repeat(np.arange(S, dtype=np.int64), np.diff(np.asarray(tp.period_offsets, dtype=np.int64)))
        base = offs[:-1][sess] - clow[sess]
        lo = base + np.floor_divide(np.asarray(tp.period_low_row, dtype=np.int64), m)
        hi = base + np.floor_divide(np.asarray(tp.period_high_row, dtype=np.int64), m)
        step = np.bincount(lo, minlength=int(offs[-1]) + 1) - np.bincount(hi + 1, minlength=int(offs[-1]) + 1)
        return offs, clow, np.cumsum(step)[:-1].astype(np.float64)


def _windows(ta: TpoProfiles, tb: TpoProfiles, ra: Dict[str, Any], rb: Dict[str, Any], cols: Dict[str, Any],
             rule: np.ndarray, reason: np.ndarray) -> None:
    """Two TpoProfiles: sessions whose initial balance / opening range (``_WINDOW_COLUMNS``) differ
    differ too; their rule adds the window rules (``_WINDOW_RULES``) that differ ("ib window" when
    none does: other bars), their reason the values."""
    named = [k for k in _WINDOW_RULES if ra.get(k) != rb.get(k)]
    if ra.get("preset") != rb.get("preset") and named:
        named.append("preset")
    words = [f"{k}: {ra.get(k)!r} vs {rb.get(k)!r}" for k in named]
    for s in range(rule.shape[0]):
        diffs = []
        for c in _WINDOW_COLUMNS:
            x, y = float(getattr(ta, c)[s]), float(getattr(tb, c)[s])
            if not (x == y or (np.isnan(x) and np.isnan(y))):
                diffs.append(f"{c} {x:g} vs {y:g}")
        if not diffs:
            continue
        cols["differs"][s] = True
        extra = "+".join(named) if named else "ib window"
        old = str(rule[s])
        rule[s] = extra if old in ("", "unexplained") else " or ".join(f"{alt}+{extra}" for alt in old.split(" or "))
        reason[s] = "; ".join([x for x in (str(reason[s]),) if x] + diffs + words)
