"""The caller's bar frame as engine inputs: OHLCV columns by name, sessions grouped like DataFrame.groupby.

Contract: prices come back float64 and volume integer or float (vpoc._arrays' checks); a Source
remembers the frame, its column labels and row order so engine errors can name the caller's row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, NamedTuple, Optional, Tuple

import numpy as np

from .._arrays import as_prices, as_volume
from .._optional import require

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
else:
    pd = require("pandas", "vpoc.compat")

__all__ = ["OHLCV", "Source", "grouped", "ohlcv", "one", "sessions", "values"]

OHLCV = ("open", "high", "low", "close", "volume")


def values(s: "pd.Series") -> np.ndarray:
    """A Series as a numpy array; nullable numeric columns with missing values become float64 NaN."""
    dtype = s.dtype
    if isinstance(dtype, pd.api.extensions.ExtensionDtype) and dtype.kind in "iuf":
        if s.hasnans:
            return s.to_numpy(dtype=np.float64, na_value=np.nan)  # the engine rejects the NaN
        return s.to_numpy(dtype=dtype.numpy_dtype)
    return s.to_numpy()


def _columns(df: Any, name: str) -> Dict[str, Any]:
    """open/high/low/close/volume of a DataFrame (names matched case-insensitively)."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame with open, high, low, close, volume columns, "
                        f"got {type(df).__name__}")
    found: Dict[str, Any] = {}
    for col in df.columns:
        key = col.lower() if isinstance(col, str) else None
        if key in OHLCV:
            if key in found:
                raise ValueError(f"{name} has two columns named {key!r} (ignoring case): "
                                 f"{found[key]!r} and {col!r}")
            found[key] = col
    missing = [k for k in OHLCV if k not in found]
    if missing:
        raise ValueError(f"{name} is missing column(s) {', '.join(missing)} "
                         "(needs open, high, low, close, volume; any case)")
    return found


class Source(NamedTuple):
    """Where engine inputs came from, to name the caller's column and row in error messages."""

    frame: str  # the argument's name, e.g. "df"
    columns: Dict[str, Any]  # open/high/low/close/volume -> the frame's column label
    perm: Optional[np.ndarray]  # engine row -> frame row (None: the same)


def ohlcv(df: Any, name: str) -> Tuple[Tuple[np.ndarray, ...], Source]:
    """(open, high, low, close) as float64 and volume as an integer or float array."""
    cols = _columns(df, name)
    out = []
    for key in OHLCV[:4]:
        label = f"{name}[{cols[key]!r}]"
        out.append(as_prices(values(df[cols[key]]), label).astype(np.float64, copy=False))
    out.append(as_volume(values(df[cols["volume"]]), f"{name}[{cols['volume']!r}]"))
    return tuple(out), Source(name, cols, None)


def one(bars: Tuple[np.ndarray, ...]) -> np.ndarray:
    """CSR offsets of a single session holding all bars."""
    return np.array([0, bars[0].size], dtype=np.int64)


def sessions(df: "pd.DataFrame", by: Any) -> Tuple[Optional[np.ndarray], np.ndarray, "pd.Index"]:
    """(row permutation or None, CSR offsets, session keys) grouping rows by ``by`` like
    DataFrame.groupby: sorted keys, rows of a session kept in frame order."""
    n = len(df)
    if isinstance(by, str):
        if by not in df.columns:
            raise ValueError(f"by={by!r} is not a column of df")
        keys: Any = df[by]
        label: Any = by
    else:
        if by is None or np.ndim(by) != 1:
            raise TypeError("by must be a column name or a 1-D array of session keys (one per row)")
        keys = by if isinstance(by, (pd.Series, pd.Index, np.ndarray)) else pd.Series(list(by))
        label = getattr(by, "name", None)
        if len(keys) != n:
            raise ValueError(f"by has {len(keys)} keys but df has {n} rows")
    try:
        codes, uniques = pd.factorize(keys, sort=True)
    except TypeError as e:
        raise TypeError(f"by: session keys must be mutually sortable ({e})") from None
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size and codes.min() < 0:
        raise ValueError(f"by has a missing session key (NaN/None/NaT) at row {int(np.argmin(codes))}")
    counts = np.bincount(codes, minlength=len(uniques)) if codes.size else np.zeros(0, np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    perm = None if np.all(codes[1:] >= codes[:-1]) else np.argsort(codes, kind="stable")
    return perm, offsets, pd.Index(uniques, name=label if label is not None else "session")


def grouped(df: Any, by: Any) -> Tuple[Tuple[np.ndarray, ...], np.ndarray, Source, "pd.Index"]:
    """The bars of ``df`` ordered session by session, their CSR offsets, source and session keys."""
    bars, source = ohlcv(df, "df")
    perm, offsets, index = sessions(df, by)
    if perm is not None:
        bars = tuple(a[perm] for a in bars)
        source = source._replace(perm=perm)
    return bars, offsets, source, index
