"""The aggressor-side columns of the bar table: each bar's delta, its session's running delta, the developing delta POC.

Contract: bar i's values use only bars <= i of its session (no lookahead). The running delta is from_bars'
``dev_delta``; the delta POC of bar i is that of the session's bars <= i, by vpoc._side_profiles.row_sides
(the rule of every from_* call) on the prefix's buy / sell rows as the engine's live sessions bin them:
vpoc.Live's own code and rule, so ``Live.bar_features_row()`` gives the same bits.
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .. import _core
from .._arrays import as_volume
from .._side_profiles import row_sides, side_rules
from ._inputs import _Data, _host
from ._params import _Rules

__all__ = ["_delta_columns", "_developing_delta_poc", "_side_inputs"]

# Prefix rows (each bar's buy / sell profile so far) gathered before one delta-POC engine pass.
_FLUSH_ROWS = 1 << 21


def _side_inputs(buy_volume: Any, sell_volume: Any, data: _Data) -> Dict[str, Any]:
    """``buy_volume=`` / ``sell_volume=`` as host arrays of the kept bars, each given one checked
    for its length against the input before the kept rows are taken; {} when neither is given
    (from_bars refuses one without the other, and checks the values)."""
    from ._inputs import _given_sides  # None: a Bars' / frame's own buy / sell columns

    buy_volume, sell_volume = _given_sides(buy_volume, sell_volume, data)
    if buy_volume is None and sell_volume is None:
        return {}
    side: Dict[str, Any] = dict(buy_volume=buy_volume, sell_volume=sell_volume)
    index = data.facts.get("input_index")
    n_in = data.high.shape[0] + int(data.facts.get("dropped_rows", 0))  # kept + left out
    for k, x in side.items():
        if x is not None:
            x = as_volume(_host(x), k)
            if x.shape[0] != n_in:
                raise ValueError(f"{k} has {x.shape[0]} rows but the bars have {n_in}")
            side[k] = x if index is None else x[index]
    return side


def _delta_columns(data: _Data, side: Dict[str, Any], prof: Any, rules: _Rules) -> Dict[str, np.ndarray]:
    """The side inputs of ``_bar_row`` over every bar: ``bar_delta`` (buy - sell volume),
    ``cum_delta`` (from_bars' dev_delta), ``delta_poc`` (developing, price)."""
    buy = np.asarray(side["buy_volume"], dtype=np.float64)
    sell = np.asarray(side["sell_volume"], dtype=np.float64)
    return dict(bar_delta=buy - sell, cum_delta=np.asarray(prof.dev_delta, dtype=np.float64),
                delta_poc=_developing_delta_poc(data, buy, sell, rules))


class _Prefixes:
    """Profile rows of session prefixes waiting for one delta-POC pass (filled by the loop of
    ``_developing_delta_poc``)."""

    def __init__(self, out: np.ndarray, rules: _Rules, opts: Any) -> None:
        self.out, self.rules, self.opts = out, rules, opts
        self.buy: List[np.ndarray] = []
        self.sell: List[np.ndarray] = []
        self.low: List[int] = []
        self.at: List[int] = []
        self.rows = 0

    def flush(self) -> None:
        if not self.at:
            return
        offsets = np.zeros(len(self.at) + 1, dtype=np.int64)
        np.cumsum([b.shape[0] for b in self.buy], out=offsets[1:])
        fields = row_sides(self.rules.row_size, offsets, self.low, np.concatenate(self.buy),
                           np.concatenate(self.sell), np.zeros(len(self.at)), side_rules(None, None), self.opts)
        self.out[np.asarray(self.at, dtype=np.int64)] = fields.field("delta_poc")
        self.buy, self.sell, self.low, self.at, self.rows = [], [], [], [], 0


def _developing_delta_poc(data: _Data, buy: np.ndarray, sell: np.ndarray, rules: _Rules) -> np.ndarray:
    """Per bar, the delta POC (row price) of its session's bars <= it: each prefix's buy and sell
    rows from two engine live sessions fed bar by bar (``_core.LiveSession``, exact fixed-point
    rows: those of from_bars on the prefix), then ``row_sides``' POC rule on them."""
    n = data.close.shape[0]
    out = np.full(n, np.nan)
    opts = _core.Options(tick_size=rules.tick_size, ticks_per_row=rules.ticks_per_row, value_area=rules.value_area,
                         va_method=rules.va_method, poc_tie=rules.poc_tie, distribute=rules.distribute)
    kw = dict(tick_size=opts.tick_size, ticks_per_row=opts.ticks_per_row, value_area=opts.value_area,
              va_method=opts.va_method, poc_tie=opts.poc_tie, max_rows=opts.max_rows)
    has_open = data.open is not None
    high, low, close = data.high.tolist(), data.low.tolist(), data.close.tolist()
    opn = data.open.tolist() if has_open else [None] * n  # type: ignore[union-attr]
    b, s = buy.tolist(), sell.tolist()
    offs = np.asarray(data.offsets, dtype=np.int64).reshape(-1).tolist()
    pending = _Prefixes(out, rules, opts)
    for k in range(len(offs) - 1):
        if offs[k] == offs[k + 1]:
            continue
        bc = _core.LiveSession(True, rules.distribute, has_open, **kw)
        sc = _core.LiveSession(True, rules.distribute, has_open, **kw)
        add_b, add_s, hist_b, hist_s = bc.append_bar, sc.append_bar, bc.histogram, sc.histogram
        for i in range(offs[k], offs[k + 1]):
            add_b(high[i], low[i], close[i], opn[i], b[i])
            add_s(high[i], low[i], close[i], opn[i], s[i])
            rows = np.array(hist_b())  # copies: a view follows later appends
            pending.buy.append(rows)
            pending.sell.append(np.array(hist_s()))
            pending.low.append(bc.low_row)
            pending.at.append(i)
            pending.rows += rows.shape[0]
            if pending.rows >= _FLUSH_ROWS:
                pending.flush()
    pending.flush()
    return out
