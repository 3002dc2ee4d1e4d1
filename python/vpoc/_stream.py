"""The per-session result table shared by ``vpoc profile`` and :mod:`vpoc.dask`.

Contract: :func:`profile_table` gives one row per session with the columns :data:`PROFILE_COLUMNS`;
:func:`empty_profile_table` the same columns and dtypes with zero rows. Needs pandas.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, TypeVar

import numpy as np

from . import _api
from ._presets import row_prices

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["PROFILE_COLUMNS", "concat_columns", "concat_rows", "empty_profile_table", "profile_table"]

_R = TypeVar("_R")

#: Columns of ``vpoc profile`` output and of ``vpoc.dask`` results, in order (``session`` is the
#: index in ``vpoc.dask`` results and the first column in files).
PROFILE_COLUMNS: Tuple[str, ...] = (
    "session", "start", "end", "count", "poc", "vah", "val", "low", "high",
    "total_volume", "va_volume", "poc_row", "vah_row", "val_row", "low_row", "n_rows",
)
_PER_SESSION = ("poc", "vah", "val", "total_volume", "va_volume",
                "poc_row", "vah_row", "val_row", "low_row", "n_rows")


def _utc(ns: np.ndarray) -> np.ndarray:
    """int64 ns since the epoch (``NO_ROW`` / int64 min = missing) as datetime64[ns] (NaT)."""
    return np.asarray(ns, dtype=np.int64).view("datetime64[ns]")


def profile_table(prof: Any, labels: Any, offsets: Optional[np.ndarray] = None,
                  timestamp: Optional[np.ndarray] = None) -> "pd.DataFrame":
    """One row per session with the columns :data:`PROFILE_COLUMNS` (``session`` as a column).

    ``prof``: a :class:`vpoc.Profiles` (GPU results are copied to the host); ``labels``: the S
    session labels; ``offsets``: the CSR input-row offsets [S+1] the profiles were computed from.
    ``count``: the session's input rows (bars or trades; 0 without ``offsets``); ``start`` /
    ``end``: the times of its first and last row from ``timestamp`` [N] (int64 ns UTC), NaT for
    empty sessions or without timestamps; ``low`` / ``high``: the prices of its lowest / highest
    profile row (NaN for empty sessions); the other columns are the ``Profiles`` fields
    (``n_rows`` counts price rows).
    """
    import pandas as pd

    prof = prof.cpu()
    S = prof.n_sessions
    labels = np.asarray(labels)
    if labels.shape != (S,):
        raise ValueError(f"labels must have one entry per session ({S}), got shape {labels.shape}")
    if offsets is None:
        counts = np.zeros(S, dtype=np.int64)
        first = last = np.full(S, -1, dtype=np.int64)
    else:
        offsets = np.asarray(offsets, dtype=np.int64)
        if offsets.shape != (S + 1,):
            raise ValueError(f"offsets must have S+1 = {S + 1} entries, got shape {offsets.shape}")
        counts = np.diff(offsets)
        first, last = offsets[:-1], offsets[1:] - 1
    nat = np.iinfo(np.int64).min
    start = np.full(S, nat, dtype=np.int64)
    end = np.full(S, nat, dtype=np.int64)
    if timestamp is not None and offsets is not None:
        ts = np.asarray(timestamp, dtype=np.int64)
        if ts.shape[0] != offsets[-1]:
            raise ValueError(f"timestamp has {ts.shape[0]} rows but offsets end at {offsets[-1]}")
        has = counts > 0
        start[has] = ts[first[has]]
        end[has] = ts[last[has]]
    n_rows = np.asarray(prof.n_rows)
    low_row = np.asarray(prof.low_row)
    empty = n_rows == 0
    rules = prof.rules
    if prof.bin_low is not None:  # bins=N: the session's range is its ladder, [bin_low, bin_low + N * bin_width]
        low = np.where(empty, np.nan, np.asarray(prof.bin_low))
        high = np.where(empty, np.nan, np.asarray(prof.bin_low) + np.asarray(prof.bin_width) * n_rows)
    elif rules is not None and rules.get("price_label") == "decimal":  # the levels' labels (docs/presets.md)
        lr = np.where(empty, 0, low_row)
        low = np.where(empty, np.nan, row_prices(lr, prof.tick_size, prof.ticks_per_row, rules))
        high = np.where(empty, np.nan, row_prices(lr + np.maximum(n_rows - 1, 0), prof.tick_size, prof.ticks_per_row,
                                                  rules))
    else:
        low = np.where(empty, np.nan, low_row.astype(np.float64) * prof.row_size)
        high = np.where(empty, np.nan, (low_row + np.maximum(n_rows - 1, 0)).astype(np.float64) * prof.row_size)
    cols: Dict[str, Any] = {
        "session": labels,
        "start": pd.DatetimeIndex(_utc(start)).tz_localize("UTC"),
        "end": pd.DatetimeIndex(_utc(end)).tz_localize("UTC"),
        "count": counts.astype(np.int64),
        "low": low,
        "high": high,
    }
    for name in _PER_SESSION:
        cols[name] = np.array(getattr(prof, name), copy=True)
    return pd.DataFrame({name: cols[name] for name in PROFILE_COLUMNS})


def empty_profile_table(label_dtype: Any = np.int64) -> "pd.DataFrame":
    """:func:`profile_table` of no sessions (the right columns and dtypes, zero rows)."""
    none = _api.from_trades(np.zeros(0), np.zeros(0), offsets=np.zeros(1, dtype=np.int64), tick_size=1.0)
    return profile_table(none, np.zeros(0, dtype=label_dtype), np.zeros(1, dtype=np.int64))



def concat_columns(a: Dict[str, np.ndarray], b: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Columns of ``b``, each appended to the same column of ``a`` in their common dtype: how the
    CLI and vpoc.dask carry a session's rows from one piece of input into the next."""
    out = {}
    for k in b:
        dtype = np.result_type(a[k].dtype, b[k].dtype)
        out[k] = np.concatenate([a[k].astype(dtype, copy=False), b[k].astype(dtype, copy=False)])
    return out


def concat_rows(a: Optional[_R], b: _R) -> _R:
    """``a``'s rows then ``b``'s, for a dataclass of per-row arrays (the CLI's Rows, vpoc.dask's
    partition pieces): each array field concatenated, a dict field by :func:`concat_columns`, a
    field None in ``b`` None; when either side has no rows the other as it is."""
    if a is None or len(a) == 0:  # type: ignore[arg-type]
        return b
    if len(b) == 0:  # type: ignore[arg-type]
        return a
    joined = {}
    for f in dataclasses.fields(b):  # type: ignore[arg-type]
        x, y = getattr(a, f.name), getattr(b, f.name)
        joined[f.name] = (None if y is None else concat_columns(x, y) if isinstance(y, dict)
                          else np.concatenate([x, y]))
    return type(b)(**joined)
