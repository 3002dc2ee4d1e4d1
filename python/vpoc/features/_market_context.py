"""Session context: overnight high/low, prior-session levels, value-area migration, type codes, level columns.

Contract (docs/features.md, "Session context" and "Level lists"): a session's values read that session and earlier
ones only; the first session's prior-session values are NaN; every code is an entry of an exported table.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import warnings

import numpy as np

from .._time import yyyymmdd_days
from .._warnings import MissingDaysWarning, user_stacklevel
from ._engine import _Context
from ._intraday import _Clock
from ._levels import _balanced_target
from ._params import _Rules
from ._profile_nodes import _node_levels, _Nodes
from ._segments import _segment_reduce
from ._tpo_types import DAY_TYPES, OPEN_TYPES

__all__ = ["CONTEXT_TABLE_COLUMNS", "DAY_TYPE_CODES", "LEVEL_TABLE_COLUMNS", "OPEN_TYPE_CODES",
           "MAX_PRIOR_DAYS", "VA_MIGRATIONS", "check_prior_gap", "VA_MIGRATION_CODES", "_context_columns", "_days_since_prior", "_context_names", "_level_columns",
           "_overnight", "_prior", "_va_migration"]

#: Value-area migration of a session against the prior one, in code order (code = index): from
#: entirely below the prior value area to entirely above it (docs/features.md).
VA_MIGRATIONS: Tuple[str, ...] = ("lower", "overlapping_lower", "inside", "unchanged", "outside",
                                  "overlapping_higher", "higher")
#: ``va_migration`` name -> the session table's code.
VA_MIGRATION_CODES: Dict[str, int] = {name: i for i, name in enumerate(VA_MIGRATIONS)}
#: ``day_type`` -> the session table's code: the index in ``DAY_TYPES``; -1 undecided ("").
DAY_TYPE_CODES: Dict[str, int] = {"": -1, **{name: i for i, name in enumerate(DAY_TYPES)}}
#: ``open_type`` -> the session table's code: the index in ``OPEN_TYPES``; -1 undecided ("").
OPEN_TYPE_CODES: Dict[str, int] = {"": -1, **{name: i for i, name in enumerate(OPEN_TYPES)}}

#: The session table's level columns (``session_features(..., level_columns=True)``), after
#: ``close_va_position``.
LEVEL_TABLE_COLUMNS: Tuple[str, ...] = ("hvn_above", "hvn_below", "lvn_above", "lvn_below", "balanced_target",
                                        "balanced_target_side")
#: The session table's context columns (``context_columns=True``), after the level columns; the
#: last five only with ``timestamp``.
CONTEXT_TABLE_COLUMNS: Tuple[str, ...] = ("prior_high", "prior_low", "prior_close", "va_migration",
                                          "overnight_high", "overnight_low", "day_type", "open_type",
                                          "days_since_prior")
#: A prior-session comparison bridging more than this many calendar days is warned about
#: (``MissingDaysWarning``): a week-end is 3, a long week-end 4.
MAX_PRIOR_DAYS = 4


def _context_names(clock: bool) -> Tuple[str, ...]:
    """The context columns present with (``clock``) or without timestamps."""
    return CONTEXT_TABLE_COLUMNS if clock else CONTEXT_TABLE_COLUMNS[:4]


def _va_migration(val: np.ndarray, vah: np.ndarray, prev_val: np.ndarray, prev_vah: np.ndarray) -> np.ndarray:
    """``VA_MIGRATIONS`` code of value area [val, vah] against the prior [prev_val, prev_vah] (int64
    ladder rows, compared exactly): higher / lower when they do not overlap; else by the signs of
    val - prev_val and vah - prev_vah: both 0 unchanged, both >= 0 ... see docs/features.md."""
    dl = np.sign(val - prev_val)
    dh = np.sign(vah - prev_vah)
    code = np.full(val.shape[0], VA_MIGRATION_CODES["outside"], dtype=np.int64)  # dl <= 0 <= dh
    code[(dl >= 0) & (dh <= 0)] = VA_MIGRATION_CODES["inside"]
    code[(dl == 0) & (dh == 0)] = VA_MIGRATION_CODES["unchanged"]
    code[(dl > 0) & (dh > 0)] = VA_MIGRATION_CODES["overlapping_higher"]
    code[(dl < 0) & (dh < 0)] = VA_MIGRATION_CODES["overlapping_lower"]
    code[val > prev_vah] = VA_MIGRATION_CODES["higher"]
    code[vah < prev_val] = VA_MIGRATION_CODES["lower"]
    return code


def _prior(prev: np.ndarray, *values: np.ndarray) -> Tuple[np.ndarray, ...]:
    """Each of ``values`` (per session) of the previous non-empty session ``prev`` (-1: none -> NaN)."""
    has = prev >= 0
    out = []
    for v in values:
        x = np.full(prev.shape[0], np.nan)
        x[has] = np.asarray(v, dtype=np.float64)[prev[has]]
        out.append(x)
    return tuple(out)


def _session_days(offsets: np.ndarray, clock: Optional[_Clock], trade_days: Optional[np.ndarray]) -> np.ndarray:
    """int64 [S] date of each session (days since the epoch): its trade date when the sessions carry
    dates, else the local date of its last bar (0 for an empty session)."""
    if trade_days is not None:
        return np.asarray(trade_days, dtype=np.int64)
    assert clock is not None, "undated sessions need their bars' clock"
    counts = np.diff(offsets)
    day = np.zeros(counts.shape[0], dtype=np.int64)
    ne = counts > 0
    day[ne] = clock.day[offsets[1:][ne] - 1]
    return day


def _days_since_prior(offsets: np.ndarray, clock: Optional[_Clock], trade_days: Optional[np.ndarray], prev: np.ndarray,
                      labels: Any, what: Optional[str],
                      reads: str = "prior_* / prev_*_dist / va_migration read that session. See days_since_prior"
                      ) -> np.ndarray:
    """float64 [S]: calendar days between each session's date (``_session_days``) and that of the prior
    non-empty session ``prev`` the prior-session columns read (NaN for the first non-empty session and
    empty ones); a ``MissingDaysWarning`` naming the sessions when one bridges more than
    ``MAX_PRIOR_DAYS`` days (``what``: the function named; None: no warning, the caller reports; ``reads``:
    which of its columns read the prior session). The one home of the rule (session_features, vpoc.tpo,
    bar_features, Live; ``clock`` may be None when ``trade_days`` is given)."""
    day = _session_days(offsets, clock, trade_days)
    has = (prev >= 0) & (np.diff(offsets) > 0)
    out = np.full(prev.shape[0], np.nan)
    out[has] = (day[has] - day[prev[has]]).astype(np.float64)
    far = np.flatnonzero(out > MAX_PRIOR_DAYS)
    if far.size and what is not None:
        lab = np.asarray(labels)

        def name(s: int) -> Any:
            x = lab[s]
            return x.item() if isinstance(x, np.generic) else x

        shown = ", ".join(f"{name(int(s))!r} after {name(int(prev[s]))!r} ({int(out[s])} days)" for s in far[:3])
        more = f" and {far.size - 3} more" if far.size > 3 else ""
        warnings.warn(f"{what}: {far.size} of {int(has.sum())} sessions are compared with a prior session more than "
                      f"{MAX_PRIOR_DAYS} calendar days earlier (days missing from the data): {shown}{more}; their "
                      f"{reads}; warnings.simplefilter('ignore', vpoc.MissingDaysWarning) silences this",
                      MissingDaysWarning, stacklevel=user_stacklevel())
    return out


def check_prior_gap(prior_label: int, label: int, what: str, reads: str) -> float:
    """Calendar days from the dated session ``prior_label`` to ``label`` (YYYYMMDD trade dates), with
    ``_days_since_prior``'s ``MissingDaysWarning`` when they are more than ``MAX_PRIOR_DAYS`` apart: the
    same rule for one new session at a time (``Live``, whose prior-session features read that session)."""
    labels = np.array([prior_label, label], dtype=np.int64)
    days = yyyymmdd_days(labels, "session labels")
    out = _days_since_prior(np.arange(3, dtype=np.int64), None, days, np.array([-1, 0]), labels, what, reads)
    return float(out[1])


def _overnight(high: np.ndarray, low: np.ndarray, offsets: np.ndarray, clock: _Clock,
               trade_days: Optional[np.ndarray], rules: _Rules) -> Tuple[np.ndarray, np.ndarray]:
    """(high, low) per session of its bars opening before ``rth_start`` (local, ``rules.tz``) on its
    trade date: the sessions' dates when they carry them, else the local date of each session's last
    bar. NaN when no bar opens before then (an RTH session)."""
    counts = np.diff(offsets)
    if trade_days is not None:
        day = np.asarray(trade_days, dtype=np.int64)
    else:
        day = np.zeros(counts.shape[0], dtype=np.int64)
        ne = counts > 0
        day[ne] = clock.day[offsets[1:][ne] - 1]
    td = np.repeat(day, counts)
    pre = (clock.day < td) | ((clock.day == td) & (clock.tod < rules.rth_start_ns))
    hi = _segment_reduce(np.maximum, np.where(pre, high, -np.inf), offsets, np.nan)
    lo = _segment_reduce(np.minimum, np.where(pre, low, np.inf), offsets, np.nan)
    hi[~np.isfinite(hi)] = np.nan
    lo[~np.isfinite(lo)] = np.nan
    return hi, lo


def _nearest_levels(offsets: np.ndarray, levels: np.ndarray, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Per session s: the smallest of its sorted ``levels`` >= x[s] and the largest <= x[s] (NaN
    where there is none or x[s] is NaN). One loop step per session."""
    S = x.shape[0]
    above = np.full(S, np.nan)
    below = np.full(S, np.nan)
    bounds = offsets.tolist()
    for s in range(S):
        a, b = bounds[s], bounds[s + 1]
        if a == b or not np.isfinite(x[s]):
            continue
        lv = levels[a:b]
        i = int(np.searchsorted(lv, x[s], side="left"))
        j = int(np.searchsorted(lv, x[s], side="right")) - 1
        if i < lv.shape[0]:
            above[s] = lv[i]
        if j >= 0:
            below[s] = lv[j]
    return above, below


def _level_columns(ctx: _Context, nodes: _Nodes) -> Dict[str, np.ndarray]:
    """``LEVEL_TABLE_COLUMNS``: the nearest HVN / LVN price at or above / at or below the session's
    close, the balanced target (price; NaN when none) and its side; NaN for an empty session."""
    prof = ctx.prof
    empty = ctx.counts == 0
    close = np.where(empty, np.nan, ctx.s_close)
    out: Dict[str, np.ndarray] = {}
    for kind in ("hvn", "lvn"):
        offs, levels = _node_levels(nodes, getattr(nodes, kind))
        out[f"{kind}_above"], out[f"{kind}_below"] = _nearest_levels(offs, levels, close)
    row, side = _balanced_target(np.asarray(prof.poc_row), np.asarray(prof.low_row), np.asarray(prof.n_rows))
    price = np.full(ctx.S, np.nan)
    price[side != 0] = row[side != 0].astype(np.float64) * ctx.rules.row_size
    out["balanced_target"] = price
    out["balanced_target_side"] = np.where(empty, np.nan, side.astype(np.float64))
    return out


def _codes(values: np.ndarray, table: Dict[str, int]) -> np.ndarray:
    return np.array([table[str(v)] for v in values.tolist()], dtype=np.float64)


def _context_columns(ctx: _Context, clock: Optional[_Clock], tpo_cols: Optional[Dict[str, Any]],
                     days: Optional[np.ndarray] = None) -> Dict[str, np.ndarray]:
    """``CONTEXT_TABLE_COLUMNS`` (the first four without ``clock``): the prior non-empty session's
    high, low and close, the value-area migration code against it (NaN for the first), the overnight
    high / low, the day / open type codes of ``tpo_cols`` (``vpoc.tpo``'s columns with types) and
    ``days_since_prior`` (``days`` when computed already); NaN for an empty session."""
    prof = ctx.prof
    empty = ctx.counts == 0
    out: Dict[str, np.ndarray] = {}
    out["prior_high"], out["prior_low"], out["prior_close"] = _prior(ctx.prev, ctx.s_high, ctx.s_low, ctx.s_close)
    has = (ctx.prev >= 0) & ~empty
    mig = np.full(ctx.S, np.nan)
    if has.any():
        val, vah = np.asarray(prof.val_row), np.asarray(prof.vah_row)
        p = ctx.prev[has]
        mig[has] = _va_migration(val[has], vah[has], val[p], vah[p])
    out["va_migration"] = mig
    if clock is not None:
        d = ctx.data
        out["overnight_high"], out["overnight_low"] = _overnight(d.high, d.low, d.offsets, clock, d.trade_days,
                                                                 ctx.rules)
        if tpo_cols is None:  # pragma: no cover (the caller passes them with a clock)
            raise AssertionError("the day and open types need vpoc.tpo's columns")
        out["day_type"] = _codes(tpo_cols["day_type"], DAY_TYPE_CODES)
        out["open_type"] = _codes(tpo_cols["open_type"], OPEN_TYPE_CODES)
        out["days_since_prior"] = days if days is not None else _days_since_prior(
            d.offsets, clock, d.trade_days, ctx.prev, d.labels, "session_features")
    for name in out:
        out[name][empty] = np.nan
    return out
