"""The bar table: ``bar_features`` [N, F], one row per bar.

Contract: bar row i uses only bars <= i of its session and the sessions before it (no lookahead);
developing levels come from one ``from_bars(..., developing=True)`` call (with ``buy_volume=`` /
``sell_volume=`` also the running delta; the developing delta POC from ``_delta``).
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any, Dict, Iterator, Optional, Tuple, Union

import numpy as np

from ._delta import _delta_columns, _side_inputs
from ._engine import _composites, _Context, _context, _profiles
from ._inputs import _DOC_COMMON, _data
from ._intraday import _Clock, _clock, _ib_mask
from ._market_context import _days_since_prior
from ._naked_pocs import _naked
from ._profile_nodes import _node_levels, _Nodes, _nodes
from ._params import _NS_PER_MINUTE, _check_rth_hours, _engine_rules, _rules
from ._segments import _nearest_grouped, _ratio, _segment_accumulate
from ._table import FeatureTable, _Columns

__all__ = ["_bar_columns", "_bar_row", "bar_features"]

_NAN = float("nan")


def _bar_row(q: Any, tick: float) -> Iterator[Tuple[str, Any]]:
    """The bar table's columns in order, as (name, values): the one rule for both the table
    (``q``'s attributes are arrays over every bar, each read once, when its column is due: peak
    memory) and ``vpoc.Live.bar_features_row()`` (floats of the latest bar). ``q`` gives close,
    bar_index, cum_volume, cum_pv (running sum of close x volume), prev_total (the previous
    session's volume), s_open, dev (developing POC, VAH, VAL), run_high, run_low, prev and comp
    (POC, VAH, VAL levels of the previous session and composite), naked (count, above, below),
    hvn and lvn (above, below: distances in price), and, when ``q.has_clock``, tod (ns since
    local midnight), minutes_elapsed and ib_high / ib_low (+-inf: no IB bar yet); when
    ``q.has_side`` (buy / sell volumes given), bar_delta (the bar's buy - sell volume), cum_delta
    (the session's so far) and delta_poc (the developing delta POC, a price)."""
    close = q.close
    scalar = isinstance(close, float)
    yield "bar_index", q.bar_index
    cum_vol = q.cum_volume
    yield "cum_volume", cum_vol
    yield "cum_volume_vs_prev", _ratio(cum_vol, q.prev_total)
    s_open = q.s_open
    yield "close_change_pct", _ratio(close - s_open, s_open) * 100.0
    del s_open
    cum_pv = q.cum_pv
    if scalar:
        vwap = _ratio(cum_pv, cum_vol) if cum_vol > 0 else close
    else:
        vwap = np.where(cum_vol > 0, _ratio(cum_pv, cum_vol), close)
    del cum_pv, cum_vol
    yield "close_to_vwap_pct", _ratio(close - vwap, vwap) * 100.0
    del vwap
    poc, vah, val = q.dev
    for k, level in (("poc", poc), ("vah", vah), ("val", val)):
        yield f"dev_{k}_dist", (close - level) / tick
    yield "dev_va_position", _ratio(close - val, vah - val)
    del poc, vah, val
    yield "dev_high_dist", (q.run_high - close) / tick
    yield "dev_low_dist", (close - q.run_low) / tick
    # ---- levels of earlier sessions
    for k, level in zip(("poc", "vah", "val"), q.prev):
        yield f"prev_{k}_dist", (close - level) / tick
    for k, level in zip(("poc", "vah", "val"), q.comp):
        yield f"composite_{k}_dist", (close - level) / tick
    count, above, below = q.naked
    yield "naked_poc_count", count
    yield "naked_poc_above_dist", above / tick
    yield "naked_poc_below_dist", below / tick
    del count, above, below
    for kind in ("hvn", "lvn"):
        up, dn = getattr(q, kind)
        yield f"prev_{kind}_above_dist", up / tick
        yield f"prev_{kind}_below_dist", dn / tick
    # ---- clock
    if q.has_clock:
        yield "minute_of_day", q.tod / _NS_PER_MINUTE
        yield "minutes_elapsed", q.minutes_elapsed
        ib_hi, ib_lo = q.ib_high, q.ib_low
        if scalar:
            ib_hi = ib_hi if math.isfinite(ib_hi) else _NAN
            ib_lo = ib_lo if math.isfinite(ib_lo) else _NAN
        else:
            ib_hi[~np.isfinite(ib_hi)] = np.nan
            ib_lo[~np.isfinite(ib_lo)] = np.nan
        yield "ib_high_dist", (ib_hi - close) / tick
        yield "ib_low_dist", (close - ib_lo) / tick
    # ---- aggressor side
    if q.has_side:
        yield "bar_delta", q.bar_delta
        cum_delta = q.cum_delta
        yield "cum_delta", cum_delta
        ratio, dpoc = _ratio(cum_delta, q.cum_volume), q.delta_poc
        # NaN, as the delta POC, while the session so far has no volume of a known side: 0 would read as balanced
        yield "cum_delta_ratio", (ratio if dpoc == dpoc else _NAN) if scalar else np.where(np.isnan(dpoc), np.nan, ratio)
        del cum_delta, ratio
        yield "dev_delta_poc_dist", (close - dpoc) / tick


class _TableBars:
    """``_bar_row``'s inputs over every bar of a table, each computed when it is read."""

    def __init__(self, ctx: _Context, nodes: _Nodes, comp: Tuple[np.ndarray, np.ndarray, np.ndarray],
                 naked: Dict[str, np.ndarray], clock: Optional[_Clock],
                 side: Optional[Dict[str, np.ndarray]] = None) -> None:
        d = ctx.data
        self.ctx, self.nodes, self.comp_levels, self.naked_d, self.clock = ctx, nodes, comp, naked, clock
        self.n = n = d.close.shape[0]
        self.close = d.close
        self.offs = d.offsets
        self.sid = np.repeat(np.arange(ctx.S, dtype=np.int64), ctx.counts)
        self.start = np.repeat(self.offs[:-1], ctx.counts)
        self.prev_s = ctx.prev[self.sid] if n else np.zeros(0, dtype=np.int64)
        self.has_prev = self.prev_s >= 0
        self.has_clock = clock is not None
        self.ib: Optional[np.ndarray] = None
        self.has_side = side is not None
        if side is not None:  # bar_delta, cum_delta, delta_poc (_delta._delta_columns)
            self.__dict__.update(side)

    @property
    def bar_index(self) -> np.ndarray:
        return np.arange(self.n, dtype=np.int64) - self.start

    @property
    def cum_volume(self) -> np.ndarray:
        return _segment_accumulate(np.add, self.ctx.data.volume, self.offs)

    @property
    def cum_pv(self) -> np.ndarray:
        return _segment_accumulate(np.add, self.close * self.ctx.data.volume, self.offs)

    @property
    def prev_total(self) -> np.ndarray:
        out = np.full(self.n, np.nan)
        out[self.has_prev] = self.ctx.total_volume[self.prev_s[self.has_prev]]
        return out

    @property
    def s_open(self) -> np.ndarray:
        return self.ctx.s_open[self.sid] if self.n else np.zeros(0)

    @property
    def dev(self) -> Tuple[np.ndarray, ...]:
        prof = self.ctx.prof
        return tuple(np.asarray(getattr(prof, f"dev_{k}"), dtype=np.float64) for k in ("poc", "vah", "val"))

    @property
    def run_high(self) -> np.ndarray:
        return _segment_accumulate(np.maximum, self.ctx.data.high, self.offs)

    @property
    def run_low(self) -> np.ndarray:
        return _segment_accumulate(np.minimum, self.ctx.data.low, self.offs)

    @property
    def prev(self) -> Iterator[np.ndarray]:
        for k in ("poc", "vah", "val"):
            level = np.full(self.n, np.nan)
            level[self.has_prev] = np.asarray(getattr(self.ctx.prof, k))[self.prev_s[self.has_prev]]
            yield level

    @property
    def comp(self) -> Iterator[np.ndarray]:
        kb = self.ctx.k_of[self.sid] - 1 if self.n else np.zeros(0, dtype=np.int64)  # composite ending before
        for arr in self.comp_levels:
            level = np.full(self.n, np.nan)
            level[kb >= 0] = arr[kb[kb >= 0]]
            yield level

    @property
    def naked(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.naked_d["bar_count"], self.naked_d["bar_above"], self.naked_d["bar_below"]

    def _near(self, flag: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        l_offs, levels = _node_levels(self.nodes, flag)
        return _nearest_grouped(l_offs, levels, self.offs, self.close, self.ctx.prev)

    @property
    def hvn(self) -> Tuple[np.ndarray, np.ndarray]:
        return self._near(self.nodes.hvn)

    @property
    def lvn(self) -> Tuple[np.ndarray, np.ndarray]:
        return self._near(self.nodes.lvn)

    @property
    def tod(self) -> np.ndarray:
        return self.clock.tod  # type: ignore[union-attr]

    @property
    def minutes_elapsed(self) -> np.ndarray:
        ts = self.ctx.data.ts
        first_ts = ts[self.start] if self.n else np.zeros(0, dtype=np.int64)  # type: ignore[index]
        return _elapsed_minutes(ts, first_ts)  # type: ignore[arg-type]

    def _ib(self, ufunc: np.ufunc, x: np.ndarray, fill: float) -> np.ndarray:
        if self.ib is None:  # one mask for both
            self.ib = _ib_mask(self.clock, self.offs, self.ctx.data.trade_days,  # type: ignore[arg-type]
                               self.ctx.rules)
        return _segment_accumulate(ufunc, np.where(self.ib, x, fill), self.offs)

    @property
    def ib_high(self) -> np.ndarray:
        return self._ib(np.maximum, self.ctx.data.high, -np.inf)

    @property
    def ib_low(self) -> np.ndarray:
        return self._ib(np.minimum, self.ctx.data.low, np.inf)


def _bar_columns(ctx: _Context, nodes: _Nodes, comp: Tuple[np.ndarray, np.ndarray, np.ndarray],
                 naked: Dict[str, np.ndarray], clock: Optional[_Clock],
                 side: Optional[Dict[str, np.ndarray]] = None) -> _Columns:
    cols = _Columns(ctx.data.close.shape[0])
    for name, values in _bar_row(_TableBars(ctx, nodes, comp, naked, clock, side), ctx.rules.tick_size):
        cols[name] = values
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
    ----------""" + _DOC_COMMON + """\
    buy_volume, sell_volume : [N], optional, both or neither: each bar's buy- and sell-aggressor
        volume (as ``vpoc.from_bars``); adds the columns ``bar_delta``, ``cum_delta``,
        ``cum_delta_ratio`` and ``dev_delta_poc_dist`` last (no lookahead; docs/features.md).
"""



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
                 time_unit: Optional[str] = None, buy_volume: Any = None,
                 sell_volume: Any = None) -> FeatureTable:
    """One row per bar [N, F] (float32): the developing POC/VAH/VAL (``from_bars(...,
    developing=True)``), developing VWAP, range and volume, and levels of earlier sessions
    (previous session, composite, naked POCs, HVN/LVN), as distances from the bar's close;
    with ``buy_volume`` / ``sell_volume`` also the bar's and the session's delta and the
    developing delta POC.

    Row i uses only bars <= i of its session and the sessions before it (no lookahead). Every
    column is defined in docs/features.md.
    """
    rules = _rules(tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie, (),
                   composite_sessions, naked_max_age, node_smoothing, node_order, hvn_threshold,
                   lvn_threshold, 0.3, 0.6, 0.5, tz, rth_start, ib_minutes, 30)
    data = _data(high, low, close, volume, open, timestamp, offsets, session_ids, time_unit,
                 session=session, sessions=sessions, label=label, interval=interval, what='bar_features')
    if data.ts is not None:  # the IB columns read the clock in tz: sessions.rth's hours rule
        _check_rth_hours(rules)
    side = _side_inputs(buy_volume, sell_volume, data)
    prof, where = _profiles(data, rules, device, threads, developing=True, **side)
    rules = _engine_rules(rules, prof)
    ctx = _context(data, rules, prof, threads)
    nodes = _nodes(ctx)
    clock = None if data.ts is None else _clock(data.ts, rules)
    if clock is not None:  # prev_*_dist / cum_volume_vs_prev bridging missing days: reported, as session_features does
        _days_since_prior(data.offsets, clock, data.trade_days, ctx.prev, data.labels, "bar_features",
                          "prev_*_dist / cum_volume_vs_prev read that session")
    delta = _delta_columns(data, side, prof, rules, threads) if side else None
    cols = _bar_columns(ctx, nodes, _composites(ctx), _naked(ctx, data.close), clock, delta)
    snapped = int(getattr(prof, "snapped_prices", 0) or 0)  # off-grid prices the engine rounded (reported)
    del ctx, nodes, prof  # the profiles are not needed for the matrix (peak memory)
    values, names = cols.matrix()
    facts = dict(data.facts)
    facts.setdefault("snapped_prices", snapped)
    return FeatureTable(values, names, session_labels=data.labels, offsets=data.offsets,
                        kind="bar", device=where, **facts)



bar_features.__doc__ = (bar_features.__doc__ or "") + _DOC_BAR
