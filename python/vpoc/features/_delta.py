"""The aggressor-side columns of the bar table: each bar's delta, its session's running delta, the developing delta POC.

Contract: bar i's values use only bars <= i of its session (no lookahead). The running delta is from_bars'
``dev_delta``; the delta POC of bar i is that of the session's bars <= i (the rule of every from_* call)
on the prefix's buy / sell rows as a sided live session bins them: vpoc.Live's own C++ code and rule
(``_core.developing_delta_poc``), so ``Live.bar_features_row()`` gives the same bits.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from .. import _core
from .._arrays import as_volume
from .._validate import check_dropped
from ..io import Bars
from ._inputs import _Data, _host
from ._params import _Rules

__all__ = ["_delta_columns", "_developing_delta_poc", "_side_inputs"]


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
            side[k] = x
    if index is not None:  # the rows left out (from_bars checks the kept ones); a frame's as from_bars(df) names them
        check_dropped(side, index, n_in, "buy_volume / sell_volume",
                      frame=data.table is not None and not isinstance(data.table, Bars))
    return {k: (x if x is None or index is None else x[index]) for k, x in side.items()}


def _delta_columns(data: _Data, side: Dict[str, Any], prof: Any, rules: _Rules,
                   threads: Optional[int] = None) -> Dict[str, np.ndarray]:
    """The side inputs of ``_bar_row`` over every bar: ``bar_delta`` (buy - sell volume),
    ``cum_delta`` (from_bars' dev_delta), ``delta_poc`` (developing, price)."""
    buy = np.asarray(side["buy_volume"], dtype=np.float64)
    sell = np.asarray(side["sell_volume"], dtype=np.float64)
    return dict(bar_delta=buy - sell, cum_delta=np.asarray(prof.dev_delta, dtype=np.float64),
                delta_poc=_developing_delta_poc(data, buy, sell, rules, threads))


def _developing_delta_poc(data: _Data, buy: np.ndarray, sell: np.ndarray, rules: _Rules,
                          threads: Optional[int] = None) -> np.ndarray:
    """Per bar, the delta POC (row price) of its session's bars <= it: one C++ call
    (``_core.developing_delta_poc``) that runs each session's bars through the sided live session's
    side rows (exact fixed-point rows: those of from_bars on the prefix) and, after each bar, the
    delta POC rule of every from_* call (cpu/side.cpp), as ``vpoc.Live`` does after each update; NaN while
    the session's bars so far hold no volume of a known side (no delta POC)."""
    opts = _core.Options(tick_size=rules.tick_size, ticks_per_row=rules.ticks_per_row, value_area=rules.value_area,
                         va_method=rules.va_method, poc_tie=rules.poc_tie, distribute=rules.distribute,
                         threads=threads)
    return _core.developing_delta_poc(data.high, data.low, data.close, data.open, data.volume, buy, sell,
                                      np.asarray(data.offsets, dtype=np.int64).reshape(-1), opts)
