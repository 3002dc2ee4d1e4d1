"""``vpoc.diff`` of two aggressor-side ``Profiles``: delta, buy / sell volume per row, delta POC, imbalances.

Contract (docs/diff.md, "Aggressor side"): when both results are sided every side field is compared per session
(``side_differs``), named "side" (the buy / sell volumes differ) or by the imbalance rule that differs; when only one
is, its sessions with volume of a known side differ ("side") and ``notes`` say the fields were not compared.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ._presets import SIDE_RULE_KEYWORDS

__all__ = ["SIDE_RULES", "side_diff"]

#: The imbalance rule a sided ``Profiles.rules`` records (vpoc._presets.with_side_rules).
SIDE_RULES: Tuple[str, ...] = SIDE_RULE_KEYWORDS
_TOTALS = ("delta", "buy_total", "sell_total")  # compared within rtol, as total_volume
_ROWS = ("buy_volume", "sell_volume")  # per row, as the histogram
_DERIVED = ("imbalance_buy", "imbalance_sell")  # per row, exact (booleans / 0-1 flags)
_COUNTS = ("stacked_imbalance_buy", "stacked_imbalance_sell")

RowsFn = Callable[[Tuple[np.ndarray, ...], Tuple[np.ndarray, ...], float], Tuple[np.ndarray, np.ndarray]]


def _sided(p: Any) -> bool:
    return getattr(p, "delta", None) is not None


def _ragged(p: Any, field: str) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = np.asarray(p.n_rows, dtype=np.int64)
    return (np.asarray(p.offsets, dtype=np.int64), np.where(n > 0, np.asarray(p.low_row, dtype=np.int64), 0),
            np.asarray(getattr(p, field), dtype=np.float64))


def _close(x: np.ndarray, y: np.ndarray, tol: float) -> np.ndarray:
    return (np.isnan(x) & np.isnan(y)) | (np.abs(x - y) <= tol * np.maximum(np.abs(x), np.abs(y)))


def side_diff(pa: Any, pb: Any, ra: Dict[str, Any], rb: Dict[str, Any], tol: float, rows: Optional[RowsFn],
              notes: List[str]) -> Tuple[np.ndarray, List[str], List[str]]:
    """(side_differs per session, the rule names per session joined by "+" ("" where none), the words per
    session); ``rows``: diff's row-by-row compare when the two ladders are the same (None: per row fields not
    compared, said in ``notes``). Neither side sided: nothing differs, nothing said."""
    S = int(pa.n_sessions)
    none = np.zeros(S, dtype=bool)
    names, words = [""] * S, [""] * S
    sa, sb = _sided(pa), _sided(pb)
    if not sa and not sb:
        return none, names, words
    if sa != sb:
        who, other = ("a", "b") if sa else ("b", "a")
        p = pa if sa else pb
        known = (np.asarray(p.buy_total, dtype=np.float64) + np.asarray(p.sell_total, dtype=np.float64)) > 0
        notes.append(f"only {who} has the aggressor side: its delta, buy / sell volume per row, delta POC, imbalances "
                     f"and stacked counts are not compared ({other} has none); sessions where {who} has volume of a "
                     "known side differ ('side')")
        delta = np.asarray(p.delta, dtype=np.float64)
        for s in np.flatnonzero(known).tolist():
            names[s], words[s] = "side", f"side: {who} has the aggressor side (delta {delta[s]:+g}), {other} has none"
        return known, names, words
    notes.append("both have the aggressor side: delta, buy / sell totals and volume per row, delta POC, imbalances "
                 "and stacked counts compared (side_differs; rule 'side' when the buy / sell volumes differ)")
    flow = np.zeros(S, dtype=bool)  # the buy / sell volumes themselves differ
    found: List[List[str]] = [[] for _ in range(S)]
    for f in _TOTALS:
        x, y = np.asarray(getattr(pa, f), dtype=np.float64), np.asarray(getattr(pb, f), dtype=np.float64)
        bad = ~_close(x, y, tol)
        flow |= bad
        for s in np.flatnonzero(bad).tolist():
            found[s].append(f"{f} {x[s]:g} vs {y[s]:g}")
    if rows is not None:
        for f in _ROWS:
            count, _ = rows(_ragged(pa, f), _ragged(pb, f), tol)
            flow |= count > 0
            for s in np.flatnonzero(count > 0).tolist():
                found[s].append(f"{f} differs on {int(count[s])} rows")
    else:
        notes.append("the ladders differ: buy / sell volume and imbalances per row not compared (the side's "
                     "session fields are)")
    pos = ~_close(np.asarray(pa.delta_poc, dtype=np.float64), np.asarray(pb.delta_poc, dtype=np.float64), 1e-12)
    imb = np.zeros(S, dtype=bool)
    if rows is not None:
        for f in _DERIVED:
            count, _ = rows(_ragged(pa, f), _ragged(pb, f), 0.0)
            imb |= count > 0
            for s in np.flatnonzero(count > 0).tolist():
                found[s].append(f"{f} differs on {int(count[s])} rows")
    for f in _COUNTS:
        x, y = np.asarray(getattr(pa, f), dtype=np.int64), np.asarray(getattr(pb, f), dtype=np.int64)
        for s in np.flatnonzero(x != y).tolist():
            imb[s] = True
            found[s].append(f"{f} {x[s]} vs {y[s]}")
    dpa, dpb = np.asarray(pa.delta_poc, dtype=np.float64), np.asarray(pb.delta_poc, dtype=np.float64)
    for s in np.flatnonzero(pos).tolist():
        found[s].append(f"delta_poc {dpa[s]:g} vs {dpb[s]:g}")
    diff = flow | pos | imb
    recorded = [k for k in SIDE_RULES if k in ra and k in rb]
    if len(recorded) < len(SIDE_RULES):
        notes.append("the imbalance rule (imbalance_ratio, stacked_imbalance_min) is not recorded on both results: "
                      "a difference in imbalances or stacked counts alone is named 'side'")
    changed = [k for k in recorded if ra[k] != rb[k]]
    tie = "poc_tie" in ra and "poc_tie" in rb and ra["poc_tie"] != rb["poc_tie"]  # moves the delta POC too
    for s in np.flatnonzero(diff).tolist():
        # on other ladders (rows None) the delta POC and imbalances differ with the ladder, which diff names
        level = rows is not None and ((pos[s] and not tie) or (imb[s] and not changed))
        rule = ["side"] if flow[s] or level else []
        if pos[s] and tie and not flow[s]:
            rule.append("poc_tie")
        if imb[s] and changed and rows is not None:
            rule += changed
            found[s] += [f"{k}: {ra[k]!r} vs {rb[k]!r}" for k in changed]
        names[s], words[s] = "+".join(rule), "; ".join(found[s])
    return diff, names, words
