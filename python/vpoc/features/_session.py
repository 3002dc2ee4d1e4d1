"""The session table: ``session_features`` [S, F], one row per session.

Contract: row s uses only sessions <= s; an empty session's row is all NaN; columns in the order of
``_session_column_names`` (docs/features.md, Session table).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from .._arrays import check_grid
from .._presets import resolve_session
from .._errors import input_rows
from .._validate import boolean
from .._warnings import user_stacklevel
from ._delta import _side_inputs
from ._engine import _composites, _Context, _context, _profiles
from ._inputs import _DOC_COMMON, _data
from ._lookback import _lookback_columns
from ._intraday import _Clock, _clock, _ib_mask, _tpo
from ._naked_pocs import _naked
from ._profile_nodes import _node_levels, _Nodes, _nodes, _shapes
from ._preset_rules import _preset_rules
from ._params import (LEGACY_SESSION_COLUMNS, SHAPES, _check_rth_hours, _engine_rules, _Rules, _rules,
                      legacy_columns)
from ._segments import _nearest_grouped, _ratio, _segment_count, _segment_reduce
from ._table import FeatureTable, _Columns
from ._tpo import TPO_TABLE_COLUMNS, _report, _session_tpo, _table_columns
from ._market_context import LEVEL_TABLE_COLUMNS, _context_columns, _context_names, _days_since_prior, _level_columns
from ._tpo_types import _type_rules

__all__ = ["SIDE_TABLE_COLUMNS", "_scatter", "_session_column_names", "_session_columns", "session_features"]

#: The opt-in aggressor-side columns (``buy_volume=`` / ``sell_volume=``), last in the table.
SIDE_TABLE_COLUMNS = ("delta", "buy_total", "sell_total", "delta_poc", "stacked_imbalance_buy", "stacked_imbalance_sell")


def _session_column_names(rules: _Rules, clock: Optional[_Clock], tpo_columns: bool = False,
                          level_columns: bool = False, context_columns: bool = False,
                          side_columns: bool = False) -> Tuple[str, ...]:
    """The columns of ``_session_columns``, in its order."""
    names = list(legacy_columns(rules.lookbacks))
    names += [f"prev_{k}_dist" for k in ("poc", "vah", "val")]
    names += [f"composite_{k}" for k in ("poc", "vah", "val")]
    names += ["naked_poc_count", "naked_poc_above_dist", "naked_poc_below_dist", "hvn_count",
              "lvn_count", "hvn_above_dist", "hvn_below_dist", "lvn_above_dist", "lvn_below_dist"]
    if clock is not None:
        names += ["ib_high", "ib_low", "ib_range", "tpo_poc", "single_prints"]
        if tpo_columns:
            names += [name for name, _ in TPO_TABLE_COLUMNS]
    names += [f"shape_{label}" for label in SHAPES]
    names.append("close_va_position")
    if level_columns:
        names += LEVEL_TABLE_COLUMNS
    if context_columns:
        names += _context_names(clock is not None)
    if side_columns:
        names += SIDE_TABLE_COLUMNS
    return tuple(names)


def _scatter(values: np.ndarray, where: np.ndarray, size: int) -> np.ndarray:
    out = np.full(size, np.nan)
    out[where] = values
    return out


def _session_columns(ctx: _Context, nodes: _Nodes,
                     comp: Tuple[np.ndarray, np.ndarray, np.ndarray],
                     naked: Dict[str, np.ndarray], clock: Optional[_Clock],
                     tpo_columns: bool = False, level_columns: bool = False,
                     context_columns: bool = False, types: Optional[Dict[str, float]] = None,
                     side_columns: Optional[bool] = None, days: Optional[np.ndarray] = None) -> _Columns:
    """The session table's columns; the optional groups with ``tpo_columns``, ``level_columns``,
    ``context_columns`` (day and open types by ``types``, default ``TPO_TYPE_RULES``) and
    ``side_columns`` (the profiles' aggressor-side fields; None: when the profiles have them, as
    vpoc.Live's finished sessions of a ``Live(side=True)`` do); ``days``: ``days_since_prior`` when
    computed (and reported) already."""
    rules, prof = ctx.rules, ctx.prof
    if side_columns is None:
        side_columns = getattr(prof, "buy_volume", None) is not None
    S, ne = ctx.S, ctx.ne
    tick = rules.tick_size
    cols = _Columns(S, _session_column_names(rules, clock, tpo_columns, level_columns, context_columns,
                                             side_columns))
    tpo_cols = None
    poc, vah, val = (np.asarray(getattr(prof, k), dtype=np.float64) for k in ("poc", "vah", "val"))
    empty = ctx.counts == 0

    def nan_empty(x: np.ndarray) -> np.ndarray:
        x = np.array(x, dtype=np.float64)
        x[empty] = np.nan
        return x

    # ---- the 14 legacy session features
    price_range = ctx.s_high - ctx.s_low
    range_pct = _ratio(price_range, ctx.s_open) * 100.0
    close_change_pct = _ratio(ctx.s_close - ctx.s_open, ctx.s_open) * 100.0
    width = vah - val
    base = {
        "vpoc": poc, "total_volume": ctx.total_volume, "value_area_low": val,
        "value_area_high": vah, "value_area_width": width, "price_range": price_range,
        "range_pct": range_pct, "close_change_pct": close_change_pct,
        "session_high": ctx.s_high, "session_low": ctx.s_low, "session_open": ctx.s_open,
        "session_close": ctx.s_close, "vwap": ctx.vwap,
        "close_to_vwap_pct": _ratio(ctx.s_close - ctx.vwap, ctx.vwap) * 100.0,
    }
    for name in LEGACY_SESSION_COLUMNS:
        cols[name] = nan_empty(base[name])
    # ---- the legacy lookback features, over the sequence of non-empty sessions
    series = dict(close=ctx.s_close[ne], close_change_pct=close_change_pct[ne],
                  volume=ctx.total_volume[ne], poc=poc[ne], range_pct=range_pct[ne], width=width[ne])
    del base, price_range, range_pct, close_change_pct, width  # peak memory
    _lookback_columns(rules.lookbacks, series, lambda name, x: cols.__setitem__(name, _scatter(x, ne, S)))
    del series
    # ---- previous session, composite, naked POCs
    prev = ctx.prev
    has_prev = prev >= 0
    for name, level in (("poc", poc), ("vah", vah), ("val", val)):
        d = np.full(S, np.nan)
        d[has_prev] = (ctx.s_close[has_prev] - level[prev[has_prev]]) / tick
        cols[f"prev_{name}_dist"] = nan_empty(d)
    for name, level in zip(("poc", "vah", "val"), comp):
        cols[f"composite_{name}"] = _scatter(level, ne, S)
    cols["naked_poc_count"] = _scatter(naked["count"], ne, S)
    cols["naked_poc_above_dist"] = _scatter(naked["above"] / tick, ne, S)
    cols["naked_poc_below_dist"] = _scatter(naked["below"] / tick, ne, S)
    # ---- HVN / LVN
    close_q = np.where(empty, np.nan, ctx.s_close)
    q_offs = np.r_[0, np.cumsum(~empty)].astype(np.int64)
    for kind, flag in (("hvn", nodes.hvn), ("lvn", nodes.lvn)):
        cols[f"{kind}_count"] = nan_empty(_segment_count(flag, nodes.hoff))
    for kind, flag in (("hvn", nodes.hvn), ("lvn", nodes.lvn)):
        l_offs, levels = _node_levels(nodes, flag)
        up, dn = _nearest_grouped(l_offs, levels, q_offs, close_q[~empty],
                                  np.where(empty, -1, np.arange(S)))
        cols[f"{kind}_above_dist"] = _scatter(up / tick, ~empty, S)
        cols[f"{kind}_below_dist"] = _scatter(dn / tick, ~empty, S)
    # ---- initial balance and TPO (only with timestamps)
    if clock is not None:
        d = ctx.data
        ib = _ib_mask(clock, d.offsets, getattr(d, "trade_days", None), rules, d.ts)
        ib_high = _segment_reduce(np.maximum, np.where(ib, d.high, -np.inf), d.offsets, np.nan)
        ib_low = _segment_reduce(np.minimum, np.where(ib, d.low, np.inf), d.offsets, np.nan)
        ib_high[~np.isfinite(ib_high)] = np.nan
        ib_low[~np.isfinite(ib_low)] = np.nan
        tpo_poc, singles = _tpo(ctx, clock)
        cols["ib_high"] = ib_high
        cols["ib_low"] = ib_low
        cols["ib_range"] = ib_high - ib_low
        cols["tpo_poc"] = tpo_poc
        cols["single_prints"] = nan_empty(singles)
        if tpo_columns or context_columns:
            tpo_cols = _session_tpo(ctx, clock, _type_rules(types) if context_columns else None)
            _report(ctx.data, tpo_cols, rules, "warn", "session_features")  # as vpoc.tpo's
        if tpo_columns:
            for name, values in _table_columns(ctx, clock, tpo_cols).items():
                cols[name] = values
    # ---- shape and close in value area
    code = _shapes(ctx, nodes)
    for i, label in enumerate(SHAPES):
        cols[f"shape_{label}"] = np.where(code < 0, np.nan, (code == i).astype(np.float64))
    cols["close_va_position"] = nan_empty(_ratio(ctx.s_close - val, vah - val))
    # ---- level lists and session context (opt-in)
    if level_columns:
        for name, values in _level_columns(ctx, nodes).items():
            cols[name] = values
    if context_columns:
        for name, values in _context_columns(ctx, clock, tpo_cols, days).items():
            cols[name] = values
    if side_columns:  # the session's own buy / sell volume only (no lookahead)
        for name in SIDE_TABLE_COLUMNS:
            cols[name] = nan_empty(getattr(prof, name))
    return cols



_DOC_SESSION = """
    Parameters
    ----------""" + _DOC_COMMON + """\
    lookbacks : the legacy lookback windows, in sessions (default 5, 10, 20, 50).
    shape_edge : POC position (0 = low row, 1 = high row) <= shape_edge is "b", >= 1 - shape_edge
        is "P", else "D" (0.3).
    shape_b_peak, shape_b_valley : "B" when the second-largest HVN is >= shape_b_peak x the
        largest and the least smoothed volume between them is <= shape_b_valley x the second
        (0.6 and 0.5).
    tpo_minutes : the TPO period in minutes, aligned to rth_start (30).
    tpo_columns : with ``timestamp``, also the further TPO columns of ``vpoc.tpo`` (TPO value area,
        poor high/low, excess, empty periods, opening range, IB completeness and range extension;
        ``TPO_TABLE_COLUMNS``, docs/features.md) after ``single_prints`` (False).
    level_columns : also the level columns (``LEVEL_TABLE_COLUMNS``: nearest HVN / LVN prices at or
        above / below the close, balanced target and its side) after ``close_va_position`` (False).
    context_columns : also the session context (``CONTEXT_TABLE_COLUMNS``: prior session high, low,
        close, value-area migration code; with ``timestamp`` overnight high / low, the day / open
        type codes and ``days_since_prior``) after those (False). With ``timestamp`` a prior session
        more than 4 calendar days back is reported (``vpoc.MissingDaysWarning``).
    type_rules : the day and open type thresholds (``TPO_TYPE_RULES`` keys) of the ``day_type`` /
        ``open_type`` columns; only with ``context_columns=True`` and ``timestamp`` (None: defaults).
    buy_volume, sell_volume : [N], optional, both or neither: each bar's buy- and sell-aggressor
        volume (as ``vpoc.from_bars``); adds ``SIDE_TABLE_COLUMNS`` (delta, delta POC, stacked
        imbalance counts) last. ``imbalance_ratio`` (3.0) and ``stacked_imbalance_min`` (3): the
        footprint imbalance rule (docs/features.md, Footprint imbalances).
    snap : as in ``vpoc.from_bars`` (docs/contract.md): the prices (high, low, close, and open with
        ``distribute="legacy"``) must lie on the ``tick_size`` grid; more than 0.1% off it raises
        ValueError, a few are rounded to the nearest tick with a warning; ``snap=True`` rounds every
        one without a word (False). Rounded means binned: the profile and what is made of it (levels,
        nodes, composites, TPO rows, side columns) put each price on its nearest tick; the columns
        that read the prices themselves (session high / low / open / close, VWAP, initial balance)
        read them as given. The table's ``snapped_prices`` counts the prices rounded (0: none).
    ib_end, ib_anchor, opening_minutes : the initial balance window ends before ("exclusive",
        default) or at ("inclusive") ``ib_minutes`` after its start, the trade date's ``rth_start``
        ("rth", default) or the session's first bar's stamp ("first_bar"); the opening range
        (``or_high`` / ``or_low``, ``tpo_columns=True``) is the same window of ``opening_minutes``
        (None: ``tpo_minutes``). ``preset="marketprofile"`` sets py-market-profile 0.2.0's
        ("inclusive", "first_bar", 10); a keyword passed wins (docs/presets.md). The bar table and
        ``vpoc.Live`` keep the defaults.
"""


def session_features(high: Any, low: Any = None, close: Any = None, volume: Any = None, *,
                     open: Any = None, timestamp: Any = None, offsets: Any = None,
                     session_ids: Any = None, session: Any = None,
                     sessions: Any = None, label: str = "open", interval: Any = None,
                     tick_size: float, ticks_per_row: int = 1,
                     distribute: str = "uniform", value_area: float = 0.70,
                     va_method: str = "cbot", poc_tie: str = "center",
                     lookbacks: Sequence[int] = (5, 10, 20, 50), composite_sessions: int = 5,
                     naked_max_age: Optional[int] = None, node_smoothing: int = 3,
                     node_order: int = 3, hvn_threshold: float = 0.5, lvn_threshold: float = 0.5,
                     shape_edge: float = 0.3, shape_b_peak: float = 0.6,
                     shape_b_valley: float = 0.5, tz: Union[str, _dt.tzinfo] = "America/Chicago",
                     rth_start: Union[str, _dt.time] = "08:30", ib_minutes: int = 60,
                     tpo_minutes: int = 30, tpo_columns: bool = False, level_columns: bool = False,
                     context_columns: bool = False, type_rules: Optional[Dict[str, Any]] = None,
                     buy_volume: Any = None, sell_volume: Any = None, imbalance_ratio: Optional[float] = None,
                     stacked_imbalance_min: Optional[int] = None, device: Any = "cpu",
                     threads: Optional[int] = None, time_unit: Optional[str] = None,
                     snap: bool = False, preset: Optional[str] = None, ib_end: Optional[str] = None,
                     ib_anchor: Optional[str] = None, opening_minutes: Optional[int] = None) -> FeatureTable:
    """One row per session [S, F] (float32): the 54 legacy features (14 session + 10 per
    lookback), previous-session and composite levels, naked POCs, HVN/LVN, initial balance and
    TPO (with ``timestamp``), profile shape and the close's place in the value area.

    Row s uses only sessions <= s; an empty session's row is all NaN. Every column is defined in
    docs/features.md.
    """
    srk = resolve_session(preset, dict(ib_end=ib_end, ib_anchor=ib_anchor, opening_minutes=opening_minutes))
    rules = _rules(tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie, lookbacks,
                   composite_sessions, naked_max_age, node_smoothing, node_order, hvn_threshold,
                   lvn_threshold, shape_edge, shape_b_peak, shape_b_valley, tz, rth_start,
                   ib_minutes, tpo_minutes, srk["ib_end"], srk["ib_anchor"], srk["opening_minutes"])
    prec = _preset_rules(preset, dict(value_area=rules.value_area, va_method=rules.va_method,
                                      poc_tie=rules.poc_tie, distribute=rules.distribute), "session_features")
    tpo_columns = boolean(tpo_columns, "tpo_columns")
    level_columns = boolean(level_columns, "level_columns")
    context_columns = boolean(context_columns, "context_columns")
    snap = boolean(snap, "snap")
    _type_rules(type_rules)  # bad keys or values raise before any work
    data = _data(high, low, close, volume, open, timestamp, offsets, session_ids, time_unit,
                 session=session, sessions=sessions, label=label, interval=interval, what='session_features')
    if data.ts is not None:  # the IB / opening range read the clock in tz: sessions.rth's hours rule
        _check_rth_hours(rules)
    side = _side_inputs(buy_volume, sell_volume, data)  # the kept rows, as the other columns
    side.update((k, v) for k, v in (("imbalance_ratio", imbalance_ratio),
                                    ("stacked_imbalance_min", stacked_imbalance_min)) if v is not None)
    side_columns = bool(side)  # from_bars refuses the imbalance rules without both columns
    # the tick grid of the prices (from_bars' rule: high, low, close, and open with "legacy"), reported
    # here once, so that its advice (snap=True) is this call's; the engine then rounds them (reported)
    h, lo, c, _, o = data.engine_inputs
    grid = {"high": h, "low": lo, "close": c}
    if o is not None and rules.distribute == "legacy":
        grid["open"] = o
    with input_rows(data.facts.get("input_index")):  # its refusal names the caller's row
        snapped = check_grid(grid, rules.tick_size, snap=snap, stacklevel=user_stacklevel(), threads=threads or 0)
    prof, where = _profiles(data, rules, device, threads, developing=False, snap=True, **side)
    rules = _engine_rules(rules, prof)
    ctx = _context(data, rules, prof, threads)
    nodes = _nodes(ctx)
    clock = None if data.ts is None else _clock(data.ts, rules)
    if type_rules is not None and (clock is None or not context_columns):
        raise ValueError("type_rules sets the day_type / open_type columns, which need context_columns=True "
                         "and timestamp=; leave it out otherwise")
    # the prior-session columns (prev_*_dist always, prior_* with context_columns) bridging missing days:
    # reported once per call (MissingDaysWarning), the count in days_since_prior (context_columns)
    days = None if clock is None else _days_since_prior(data.offsets, clock, data.trade_days, ctx.prev, data.labels,
                                                        "session_features")
    cols = _session_columns(ctx, nodes, _composites(ctx), _naked(ctx, None), clock, tpo_columns,
                            level_columns, context_columns, type_rules, side_columns, days)
    del ctx, nodes, prof  # the profiles are not needed for the matrix (peak memory)
    values, names = cols.matrix()
    return FeatureTable(values, names, session_labels=data.labels,
                        offsets=np.arange(values.shape[0] + 1, dtype=np.int64), kind="session",
                        device=where, snapped_prices=int(snapped), rules=prec or None, **data.facts)


session_features.__doc__ = (session_features.__doc__ or "") + _DOC_SESSION
