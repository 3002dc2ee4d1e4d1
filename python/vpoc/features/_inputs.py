"""Inputs of the feature tables: arrays, SynthBars or DataFrames to validated host arrays (``_Data``).

Contract: ``_data`` returns float64 prices/volumes, int64 ns UTC timestamps and the CSR session
layout, or raises ValueError/TypeError naming the argument; nothing is dropped here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np

from .._api import _sessions
from .._arrays import as_prices, as_volume, gpu_location, unmasked
from .._time import check_time_unit, datetime64_ns, epoch_ns
from ..synth import SynthBars

__all__ = ["_DOC_COMMON", "_Data", "_data", "_host", "_timestamps_ns", "_unpack_frame"]


def _host(x: Any) -> Any:
    """GPU arrays copied to the host (features are computed in NumPy)."""
    if x is None or gpu_location(x) is None:
        return x
    return x.cpu() if hasattr(x, "cpu") else x.get()


def _timestamps_ns(x: Any, n: int, time_unit: Optional[str]) -> np.ndarray:
    """Timestamps as int64 ns since the epoch, UTC: integers (in ``time_unit``, None: ns, checked
    for plausibility), datetime64 (naive = UTC) or pandas datetimes (tz-aware converted to UTC)."""
    if type(x).__module__.split(".")[0] == "pandas" and hasattr(x, "dtype") \
            and str(getattr(x, "dtype", "")).startswith("datetime64"):
        import pandas as pd

        idx = pd.DatetimeIndex(x)
        if idx.tz is not None:
            idx = idx.tz_convert("UTC").tz_localize(None)
        arr = idx.to_numpy(dtype="datetime64[ns]")
    else:
        arr = np.asarray(unmasked(_host(x), "timestamp"))
    if arr.ndim != 1:
        raise ValueError(f"timestamp must be 1-D, got shape {arr.shape}")
    if arr.dtype.kind == "M":
        out = datetime64_ns(arr, "timestamp")
    elif arr.dtype.kind in "iu":
        out = epoch_ns(arr, "timestamp", time_unit)
    else:
        raise TypeError("timestamp must be integer epoch times (ns, or time_unit=), datetime64 or "
                        f"pandas datetimes, got dtype {arr.dtype}")
    if out.shape[0] != n:
        raise ValueError(f"timestamp has length {out.shape[0]} but the data has {n} rows")
    return np.ascontiguousarray(out)


def _unpack_frame(high: Any, low: Any, close: Any, volume: Any, open: Any, timestamp: Any,
                  offsets: Any, session_ids: Any) -> Tuple[Any, ...]:
    """A SynthBars or a pandas/polars DataFrame given as ``high``: its columns as the arrays."""
    labels = None
    is_frame = type(high).__module__.split(".")[0] in ("pandas", "polars") and hasattr(high, "columns")
    if isinstance(high, SynthBars) or is_frame:
        if low is not None or close is not None or volume is not None:
            raise TypeError("when the first argument is a SynthBars/DataFrame, do not pass low, "
                            "close or volume")
        frame = high
        if isinstance(frame, SynthBars):
            get = lambda k: getattr(frame, k)  # noqa: E731
            has = lambda k: True  # noqa: E731
            if offsets is None and session_ids is None:
                offsets, labels = frame.offsets, frame.session_labels
        else:
            cols = {str(c) for c in frame.columns}
            missing = [k for k in ("high", "low", "close", "volume") if k not in cols]
            if missing:
                raise ValueError(f"the DataFrame has no column(s) {missing}; it needs high, low, "
                                 "close, volume (open, timestamp, session_id optional)")
            get = lambda k: frame[k].to_numpy() if k != "timestamp" else frame[k]  # noqa: E731
            has = lambda k: k in cols  # noqa: E731
            if offsets is None and session_ids is None and has("session_id"):
                session_ids = get("session_id")
        high, low, close, volume = get("high"), get("low"), get("close"), get("volume")
        if open is None and has("open"):
            open = get("open")
        if timestamp is None and has("timestamp"):
            timestamp = get("timestamp")
    elif low is None or close is None or volume is None:
        raise TypeError("high, low, close and volume are required (or pass a SynthBars/DataFrame "
                        "as the first argument)")
    return high, low, close, volume, open, timestamp, offsets, session_ids, labels


@dataclass
class _Data:
    """Validated host inputs and the session layout."""

    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    volume: np.ndarray  # float64
    open: Optional[np.ndarray]
    ts: Optional[np.ndarray]  # int64 ns UTC
    offsets: np.ndarray  # bars, int64 [S+1]
    labels: np.ndarray  # [S]
    engine_inputs: Tuple[Any, ...]


def _data(high: Any, low: Any, close: Any, volume: Any, open: Any, timestamp: Any, offsets: Any,
          session_ids: Any, time_unit: Optional[str] = None) -> _Data:
    high, low, close, volume, open, timestamp, offsets, session_ids, labels = _unpack_frame(
        high, low, close, volume, open, timestamp, offsets, session_ids)
    h = as_prices(_host(high), "high")
    n = h.shape[0]
    offs, id_labels = _sessions(_host(offsets), _host(session_ids), n)
    if id_labels is not None:
        labels = id_labels
    o = None if open is None else as_prices(_host(open), "open")
    lo, c = as_prices(_host(low), "low"), as_prices(_host(close), "close")
    v = as_volume(_host(volume), "volume")
    check_time_unit(time_unit)
    ts = None if timestamp is None else _timestamps_ns(timestamp, n, time_unit)
    S = int(offs.shape[0]) - 1 if offs.ndim == 1 else 0
    if labels is None:
        labels = np.arange(max(S, 0), dtype=np.int64)
    f64 = lambda a: np.asarray(a, dtype=np.float64)  # noqa: E731
    return _Data(high=f64(h), low=f64(lo), close=f64(c), volume=f64(v),
                 open=None if o is None else f64(o), ts=ts, offsets=offs,
                 labels=np.asarray(labels), engine_inputs=(h, lo, c, v, o))



_DOC_COMMON = """
    high, low, close, volume : 1-D array-likes [N] (any numeric dtype; torch/cupy GPU arrays are
        copied to the host), or a ``vpoc.synth.SynthBars`` / pandas DataFrame (columns high, low,
        close, volume, optional open, timestamp, session_id) as the first argument alone.
    open : [N], optional. Bar opens: the session open (NaN without it) and ``distribute="legacy"``.
    timestamp : [N], optional. Bar open times: integer epoch times (UTC; ns unless ``time_unit``),
        datetime64 (naive = UTC) or pandas datetimes. Adds the time-based columns.
    time_unit : unit of integer timestamps, "s", "ms", "us" or "ns" (None: ns). Integers that are
        1990..2100 times only in another unit raise ValueError naming it.
    offsets, session_ids, tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie,
    device, threads : as in ``vpoc.from_bars`` (one engine call computes every profile).
    composite_sessions : sessions in a composite profile (default 5).
    naked_max_age : only POCs of the last this many sessions can be naked (None: all).
    node_smoothing : odd window, in rows, of the moving sum used for HVN/LVN detection (3).
    node_order : an HVN/LVN is the extreme of ``node_order`` rows on each side (3). Both are at
        most ``MAX_NODE_ROWS`` (1_000_000, the default max_rows; ValueError above); the cost of
        either does not grow with its value.
    hvn_threshold, lvn_threshold : an HVN's smoothed volume is >= hvn_threshold x the session's
        largest; an LVN's <= lvn_threshold x it (0.5 and 0.5).
    tz, rth_start, ib_minutes : the exchange time zone ("America/Chicago"), the regular session's
        open in it ("08:30") and the initial balance length in minutes (60).
"""
