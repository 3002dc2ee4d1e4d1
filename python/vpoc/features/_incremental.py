"""Feature rows one session or one bar at a time (for ``vpoc.Live``), through the tables' own functions.

Contract: each function gives exactly what ``session_features`` / ``bar_features`` compute for the same
rows and sessions; nothing here holds a rule of its own (the rules live in the table modules).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._profiles import Profiles
from ._bars import _bar_row
from ._engine import _composites, _context
from ._inputs import _Data
from ._intraday import _clock, _ib_window
from ._params import _check_rth_hours, _Rules, _rules
from ._profile_nodes import _node_levels, _nodes
from ._segments import _nearest, _price_rows, _segment_reduce
from ._session import _session_columns

__all__ = ["FEATURE_DEFAULTS", "bar_row", "composite_levels", "feature_rules", "ib_window",
           "last_session_row", "nearest", "node_levels", "price_rows", "session_volume"]

#: The feature options of ``session_features`` / ``bar_features`` and their defaults.
FEATURE_DEFAULTS: Dict[str, Any] = dict(
    composite_sessions=5, naked_max_age=None, node_smoothing=3, node_order=3, hvn_threshold=0.5,
    lvn_threshold=0.5, tz="America/Chicago", rth_start="08:30", ib_minutes=60,
    lookbacks=(5, 10, 20, 50), shape_edge=0.3, shape_b_peak=0.6, shape_b_valley=0.5,
    tpo_minutes=30)

#: One bar's feature row by the table's rule: see ``_bars._bar_row``.
bar_row = _bar_row
#: The IB window rule of the tables on one bar (ints) or many (arrays): see ``_intraday._ib_window``.
ib_window = _ib_window
#: Distances from x to the nearest sorted levels above and below (one float or an array).
nearest = _nearest
#: The ladder row of each price: floor(rint(p / tick_size) / ticks_per_row).
price_rows = _price_rows


def feature_rules(tick_size: float, ticks_per_row: int, distribute: str, value_area: float,
                  va_method: str, poc_tie: str, options: Dict[str, Any]) -> _Rules:
    """The validated feature rules (``FEATURE_DEFAULTS`` updated by ``options``); the ladder and
    value-area rules as the engine validated them."""
    fo = {**FEATURE_DEFAULTS, **options}
    rules = _rules(tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie,
                   fo["lookbacks"], fo["composite_sessions"], fo["naked_max_age"],
                   fo["node_smoothing"], fo["node_order"], fo["hvn_threshold"], fo["lvn_threshold"],
                   fo["shape_edge"], fo["shape_b_peak"], fo["shape_b_valley"], fo["tz"],
                   fo["rth_start"], fo["ib_minutes"], fo["tpo_minutes"])
    _check_rth_hours(rules)  # the IB columns read the clock in tz: sessions.rth's hours rule
    return rules


def composite_levels(prof: Profiles, rules: _Rules) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """POC, VAH, VAL of the composite ending at each of ``prof``'s (non-empty, consecutive)
    sessions, as the tables compute them (NaN for the first composite_sessions - 1)."""
    S = int(prof.n_sessions)
    ctx = SimpleNamespace(rules=rules, prof=prof, ne=np.arange(S), threads=None)
    return _composites(ctx)  # type: ignore[arg-type]


def node_levels(prof: Profiles, rules: _Rules) -> Tuple[List[float], List[float]]:
    """Sorted HVN and LVN prices of the one session in ``prof``."""
    nodes = _nodes(SimpleNamespace(rules=rules, prof=prof))  # type: ignore[arg-type]
    return (_node_levels(nodes, nodes.hvn)[1].tolist(), _node_levels(nodes, nodes.lvn)[1].tolist())


def session_volume(volume: np.ndarray) -> float:
    """One session's total volume, summed as the tables sum it (the previous-session total)."""
    return float(_segment_reduce(np.add, volume, np.array([0, volume.shape[0]]), np.nan)[0])


def last_session_row(tail: Sequence[Dict[str, Any]], prof: Profiles, labels: np.ndarray,
                     trade_days: Optional[np.ndarray], comp_tail: Sequence[Tuple[float, float, float]],
                     naked_last: Tuple[float, float, float], rules: _Rules
                     ) -> Tuple[np.ndarray, Tuple[str, ...]]:
    """``session_features``' row (values, column names) of the last of the sessions whose bars
    are ``tail`` (dicts of high, low, close, open or None, volume, ts; as many as its lookbacks
    need), with their profiles ``prof``, labels, trade days (or None), composites and the naked
    POCs (count, above, below) as they were when it ended."""
    m = len(tail)
    counts = [t["close"].shape[0] for t in tail]
    offs = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(counts, out=offs[1:])
    cat = lambda k: np.concatenate([t[k] for t in tail])  # noqa: E731
    data = _Data(high=cat("high"), low=cat("low"), close=cat("close"), volume=cat("volume"),
                 open=None if tail[-1]["open"] is None else cat("open"), ts=cat("ts"),
                 offsets=offs, labels=labels, engine_inputs=(), trade_days=trade_days)
    ctx = _context(data, rules, prof, None)
    nodes = _nodes(ctx)
    clock = _clock(data.ts, rules)  # type: ignore[arg-type]
    comp = tuple(np.array([c[i] for c in comp_tail]) for i in range(3))
    naked = {k: np.full(m, np.nan) for k in ("count", "above", "below")}
    naked["count"][-1], naked["above"][-1], naked["below"][-1] = naked_last
    cols = _session_columns(ctx, nodes, comp, naked, clock)  # type: ignore[arg-type]
    values, names = cols.matrix()
    return values[-1].copy(), tuple(names)
