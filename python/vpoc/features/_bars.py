"""The bar table: ``bar_features`` [N, F], one row per bar.

Contract: bar row i uses only bars <= i of its session and the sessions before it (no lookahead);
developing levels come from one ``from_bars(..., developing=True)`` call.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np

from ._engine import _composites, _Context, _context, _profiles
from ._inputs import _DOC_COMMON, _data
from ._intraday import _Clock, _clock, _ib_mask
from ._naked_pocs import _naked
from ._profile_nodes import _node_levels, _Nodes, _nodes
from ._params import _NS_PER_MINUTE, _engine_rules, _rules
from ._segments import _nearest_grouped, _ratio, _segment_accumulate
from ._table import FeatureTable, _Columns

__all__ = ["_bar_columns", "bar_features"]


def _bar_columns(ctx: _Context, nodes: _Nodes, comp: Tuple[np.ndarray, np.ndarray, np.ndarray],
                 naked: Dict[str, np.ndarray], clock: Optional[_Clock]) -> _Columns:
    rules, prof, d = ctx.rules, ctx.prof, ctx.data
    tick = rules.tick_size
    n, S = d.close.shape[0], ctx.S
    offs = d.offsets
    sid = np.repeat(np.arange(S, dtype=np.int64), ctx.counts)
    start = np.repeat(offs[:-1], ctx.counts)
    close = d.close
    cols = _Columns(n)
    cols["bar_index"] = np.arange(n, dtype=np.int64) - start
    cum_vol = _segment_accumulate(np.add, d.volume, offs)
    cum_pv = _segment_accumulate(np.add, close * d.volume, offs)
    prev = ctx.prev[sid] if n else np.zeros(0, dtype=np.int64)
    has_prev = prev >= 0
    prev_total = np.full(n, np.nan)
    prev_total[has_prev] = ctx.total_volume[prev[has_prev]]
    cols["cum_volume"] = cum_vol
    cols["cum_volume_vs_prev"] = _ratio(cum_vol, prev_total)
    s_open = ctx.s_open[sid] if n else np.zeros(0)
    cols["close_change_pct"] = _ratio(close - s_open, s_open) * 100.0
    vwap = np.where(cum_vol > 0, _ratio(cum_pv, cum_vol), close)
    cols["close_to_vwap_pct"] = _ratio(close - vwap, vwap) * 100.0
    dev = {k: np.asarray(getattr(prof, f"dev_{k}"), dtype=np.float64) for k in ("poc", "vah", "val")}
    for k in ("poc", "vah", "val"):
        cols[f"dev_{k}_dist"] = (close - dev[k]) / tick
    cols["dev_va_position"] = _ratio(close - dev["val"], dev["vah"] - dev["val"])
    cols["dev_high_dist"] = (_segment_accumulate(np.maximum, d.high, offs) - close) / tick
    cols["dev_low_dist"] = (close - _segment_accumulate(np.minimum, d.low, offs)) / tick
    # ---- levels of earlier sessions
    for k in ("poc", "vah", "val"):
        level = np.full(n, np.nan)
        level[has_prev] = np.asarray(getattr(prof, k))[prev[has_prev]]
        cols[f"prev_{k}_dist"] = (close - level) / tick
    kb = ctx.k_of[sid] - 1 if n else np.zeros(0, dtype=np.int64)  # composite ending before
    for k, arr in zip(("poc", "vah", "val"), comp):
        level = np.full(n, np.nan)
        level[kb >= 0] = arr[kb[kb >= 0]]
        cols[f"composite_{k}_dist"] = (close - level) / tick
    cols["naked_poc_count"] = naked["bar_count"]
    cols["naked_poc_above_dist"] = naked["bar_above"] / tick
    cols["naked_poc_below_dist"] = naked["bar_below"] / tick
    for kind, flag in (("hvn", nodes.hvn), ("lvn", nodes.lvn)):
        l_offs, levels = _node_levels(nodes, flag)
        up, dn = _nearest_grouped(l_offs, levels, offs, close, ctx.prev)
        cols[f"prev_{kind}_above_dist"] = up / tick
        cols[f"prev_{kind}_below_dist"] = dn / tick
    # ---- clock
    if clock is not None:
        cols["minute_of_day"] = clock.tod / _NS_PER_MINUTE
        first_ts = d.ts[start] if n else np.zeros(0, dtype=np.int64)  # type: ignore[index]
        cols["minutes_elapsed"] = _elapsed_minutes(d.ts, first_ts)  # type: ignore[arg-type]
        ib = _ib_mask(clock, offs, d.trade_days, rules)
        ib_hi = _segment_accumulate(np.maximum, np.where(ib, d.high, -np.inf), offs)
        ib_lo = _segment_accumulate(np.minimum, np.where(ib, d.low, np.inf), offs)
        ib_hi[~np.isfinite(ib_hi)] = np.nan
        ib_lo[~np.isfinite(ib_lo)] = np.nan
        cols["ib_high_dist"] = (ib_hi - close) / tick
        cols["ib_low_dist"] = (close - ib_lo) / tick
    return cols



def _elapsed_minutes(ts: np.ndarray, first: np.ndarray) -> np.ndarray:
    """(ts - first) / 1 minute, float64; exact where the int64 difference fits (any session
    shorter than 292 years), else from whole minutes and remainders (never wrapping)."""
    big = (first < 0) & (ts > np.iinfo(np.int64).max + first)
    if not big.any():
        return (ts - first) / _NS_PER_MINUTE
    out = np.empty(ts.shape[0], dtype=np.float64)
    ok = ~big
    out[ok] = (ts[ok] - first[ok]) / _NS_PER_MINUTE
    (qa, ra), (qb, rb) = np.divmod(ts[big], _NS_PER_MINUTE), np.divmod(first[big], _NS_PER_MINUTE)
    out[big] = (qa - qb) + (ra - rb) / _NS_PER_MINUTE
    return out


_DOC_BAR = """
    Parameters
    ----------""" + _DOC_COMMON



def bar_features(high: Any, low: Any = None, close: Any = None, volume: Any = None, *,
                 open: Any = None, timestamp: Any = None, offsets: Any = None,
                 session_ids: Any = None, session: Any = None,
                 sessions: Any = None, label: str = "open", interval: Any = None,
                 tick_size: float, ticks_per_row: int = 1,
                 distribute: str = "uniform", value_area: float = 0.70, va_method: str = "cbot",
                 poc_tie: str = "center", composite_sessions: int = 5,
                 naked_max_age: Optional[int] = None, node_smoothing: int = 3,
                 node_order: int = 3, hvn_threshold: float = 0.5, lvn_threshold: float = 0.5,
                 tz: Union[str, _dt.tzinfo] = "America/Chicago",
                 rth_start: Union[str, _dt.time] = "08:30", ib_minutes: int = 60,
                 device: Any = "cpu", threads: Optional[int] = None,
                 time_unit: Optional[str] = None) -> FeatureTable:
    """One row per bar [N, F] (float32): the developing POC/VAH/VAL (``from_bars(...,
    developing=True)``), developing VWAP, range and volume, and levels of earlier sessions
    (previous session, composite, naked POCs, HVN/LVN), as distances from the bar's close.

    Row i uses only bars <= i of its session and the sessions before it (no lookahead). Every
    column is defined in docs/features.md.
    """
    rules = _rules(tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie, (),
                   composite_sessions, naked_max_age, node_smoothing, node_order, hvn_threshold,
                   lvn_threshold, 0.3, 0.6, 0.5, tz, rth_start, ib_minutes, 30)
    data = _data(high, low, close, volume, open, timestamp, offsets, session_ids, time_unit,
                 session=session, sessions=sessions, label=label, interval=interval, what='bar_features')
    prof, where = _profiles(data, rules, device, threads, developing=True)
    rules = _engine_rules(rules, prof)
    ctx = _context(data, rules, prof, threads)
    nodes = _nodes(ctx)
    clock = None if data.ts is None else _clock(data.ts, rules)
    cols = _bar_columns(ctx, nodes, _composites(ctx), _naked(ctx, data.close), clock)
    del ctx, nodes, prof  # the profiles are not needed for the matrix (peak memory)
    values, names = cols.matrix()
    return FeatureTable(values, names, session_labels=data.labels, offsets=data.offsets,
                        kind="bar", device=where, **data.facts)



bar_features.__doc__ = (bar_features.__doc__ or "") + _DOC_BAR
