"""The legacy lookback features (momentum, volatility, trends, VPOC z-scores) over non-empty sessions.

Contract: lags and trailing windows run over the sequence of non-empty sessions with pandas
``shift``/``rolling(N)`` semantics (NaN until N values, NaN windows stay NaN); row s reads sessions <= s.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import numpy as np

from ._params import LOOKBACK_FEATURES
from ._segments import _ratio

__all__ = ["_lag", "_lookback_columns", "_rolling", "_rolling_mean", "_rolling_std"]


def _lag(x: np.ndarray, p: int) -> np.ndarray:
    out = np.full(x.shape[0], np.nan)
    if x.shape[0] > p:
        out[p:] = x[:-p]
    return out


def _rolling(x: np.ndarray, p: int) -> Optional[np.ndarray]:
    """Trailing windows [m - p + 1, p] (None when there are fewer than p values)."""
    if x.shape[0] < p:
        return None
    return np.lib.stride_tricks.sliding_window_view(x, p)


def _rolling_mean(x: np.ndarray, p: int) -> np.ndarray:
    out = np.full(x.shape[0], np.nan)
    w = _rolling(x, p)
    if w is not None:
        out[p - 1:] = w.mean(axis=1)
    return out


_STD_BLOCK = 1 << 21  # values per block of _rolling_std


def _rolling_std(x: np.ndarray, p: int) -> np.ndarray:
    """Sample standard deviation (ddof=1) of trailing windows; 0 when a window's values are
    all equal; NaN for p < 2 or windows holding a NaN."""
    out = np.full(x.shape[0], np.nan)
    w = _rolling(x, p)
    if w is not None and p >= 2:
        # in blocks of windows (std's temporaries are a copy of the block, not of all m x p
        # values); a window's result does not depend on the block (no block of one window but
        # where there is only one)
        rows = w.shape[0]
        step = max(2, _STD_BLOCK // p)
        a = 0
        while a < rows:
            b = rows if rows - a < 2 * step else a + step
            blk = w[a:b]
            sd = blk.std(axis=1, ddof=1)
            sd[np.max(blk, axis=1) == np.min(blk, axis=1)] = 0.0
            out[p - 1 + a:p - 1 + b] = sd
            a = b
    return out



def _lookback_columns(lookbacks: Any, series: Dict[str, np.ndarray],
                      emit: Callable[[str, np.ndarray], None]) -> None:
    """The 10 legacy lookback columns per N in ``lookbacks``, in the legacy order, each passed to
    ``emit(name, values over the non-empty sessions)`` as soon as it is computed (peak memory).
    ``series``: per non-empty session ``close``, ``close_change_pct``, ``volume``, ``poc``,
    ``range_pct`` and ``width`` (value area width)."""
    c_close, c_cc, c_vol = series["close"], series["close_change_pct"], series["volume"]
    c_poc, c_range, c_width = series["poc"], series["range_pct"], series["width"]
    for p in lookbacks:
        ma = _rolling_mean(c_width, p)
        sd = _rolling_std(c_poc, p)
        feats: Dict[str, Callable[[], np.ndarray]] = {  # computed one at a time (peak memory)
            "price_mom_{n}d": lambda: (_ratio(c_close, _lag(c_close, p)) - 1.0) * 100.0,
            "volatility_{n}d": lambda: _rolling_std(c_cc, p),
            "volume_trend_{n}d": lambda: (_ratio(c_vol, _lag(c_vol, p)) - 1.0) * 100.0,
            "vpoc_change_{n}d": lambda: c_poc - _lag(c_poc, p),
            "vpoc_pct_change_{n}d": lambda: (_ratio(c_poc, _lag(c_poc, p)) - 1.0) * 100.0,
            "range_change_{n}d": lambda: (_ratio(c_range, _lag(c_range, p)) - 1.0) * 100.0,
            "va_width_{n}d_ma": lambda: ma,
            "va_width_change_{n}d": lambda: _ratio(c_width, ma),
            "vpoc_std_{n}d": lambda: sd,
            "vpoc_zscore_{n}d": lambda: _ratio(c_poc - _rolling_mean(c_poc, p), sd),
        }
        for template in LOOKBACK_FEATURES:
            emit(template.format(n=p), feats[template]())
        del ma, sd, feats
