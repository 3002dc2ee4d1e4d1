"""Load OHLCV bars and trades from legacy ``;`` text, CSV, Parquet and pandas/polars DataFrames.

Contract: timestamps become int64 ns UTC (naive data needs ``tz=``); a malformed row raises
ValueError naming the file and line (text files) or row (Parquet, DataFrames); nothing is dropped.

Formats
-------
* legacy text (``.txt``; also a ``.csv`` or unknown suffix whose first line matches):
  ``YYYYMMDD HHMMSS;open;high;low;close;volume``, no header, local wall-clock times.
* CSV (``.csv``, ``.tsv``): a header line; the separator is sniffed from it (``sep=``).
* Parquet (``.parquet``, ``.pq``; needs pyarrow).
* pandas / polars DataFrames (polars needs pyarrow), pyarrow Tables.
Text files may be compressed (``.gz``, ``.bz2``, ``.xz``). Column names are matched
case-insensitively, ignoring spaces and punctuation (``Open``/``OPEN``/``open``;
``timestamp``/``datetime``/``ts``, separate ``date`` + ``time`` columns, ``time`` or ``date``
alone, or a DatetimeIndex); ``columns=`` maps vpoc's names to yours.

Line numbers count every line of the file from 1 (the header is line 1 of a CSV); rows of
Parquet files and DataFrames are numbered from 0 by position. Blank lines in text files are
ignored. Only pandas (and pyarrow/polars for those formats) is needed, imported on first use.
"""

from __future__ import annotations

import io
import os
from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np

from .._optional import require
from ._columns import _extract
from ._containers import Bars, Trades
from ._options import BAR_FIELDS, TRADE_FIELDS, _iso, _Options, _Where
from ._parquet import _read_parquet
from ._source import TextSource, is_file_object
from ._text import _infer_format, _read_csv, _read_legacy

__all__ = ["read_bars", "read_trades"]


# --------------------------------------------------------------------------- public readers


def read_bars(path_or_df: Any, *, tz: Any = None, format: Optional[str] = None,
              columns: Optional[Mapping[str, Any]] = None, sep: Optional[str] = None,
              time_format: Optional[str] = None, time_unit: Optional[str] = None,
              ambiguous: str = "raise", nonexistent: str = "raise",
              strict_ohlc: bool = False) -> Bars:
    """Read OHLCV bars from a file, a list of files (concatenated), or a DataFrame.

    ``path_or_df``: a path (format from its suffix, see the module docs), a list of paths (each
    file's rows must follow the previous file's in time), a pandas or polars DataFrame, or a
    pyarrow Table. ``format``: "legacy", "csv" or "parquet" overrides the suffix.
    ``tz``: time zone of naive timestamps (e.g. "America/Chicago"; required for them, and for
    the legacy format, which stores local wall-clock times); timestamps with a UTC offset or
    time zone are converted from their own. ``columns``: ``{"open": "Eröffnung", ...}`` maps
    vpoc's field names (timestamp, open, high, low, close, volume) to the source's columns;
    ``"timestamp"`` may map to a ``(date_column, time_column)`` pair.
    ``sep``: CSV separator (default: sniffed from the header among , ; tab |).
    ``time_format``: strftime format of text timestamps (default: ISO 8601, or
    ``YYYYMMDD HHMMSS`` when the first value looks like it). ``time_unit``: "s", "ms", "us" or
    "ns" for numeric epoch timestamps (required for them; they are UTC).
    ``ambiguous`` (local times repeated when DST ends): "raise" (default), "infer" (from the
    order of the rows), "earliest" or "latest". ``nonexistent`` (local times skipped when DST
    starts): "raise" (default), "shift_forward" or "shift_backward".
    ``strict_ohlc``: also require ``low <= open, close <= high``.
    Always checked, naming the file and line/row of the first offending row: well-formed
    fields, finite prices, ``high >= low``, finite volume ``>= 0``, non-decreasing timestamps.
    """
    opts = _Options.make(tz, format, columns, sep, time_format, time_unit, ambiguous,
                         nonexistent, strict_ohlc, BAR_FIELDS)
    cols, source = _read(path_or_df, opts)
    return Bars(timestamp=cols["timestamp"], open=cols["open"], high=cols["high"],
                low=cols["low"], close=cols["close"], volume=cols["volume"], source=source)


def read_trades(path_or_df: Any, *, tz: Any = None, format: Optional[str] = None,
                columns: Optional[Mapping[str, Any]] = None, sep: Optional[str] = None,
                time_format: Optional[str] = None, time_unit: Optional[str] = None,
                ambiguous: str = "raise", nonexistent: str = "raise") -> Trades:
    """Read trades (timestamp, price, volume) from CSV, Parquet, a list of files or a DataFrame.

    Options as in :func:`read_bars`; field names are timestamp, price (also ``last``, ``px``)
    and volume (also ``size``, ``qty``, ``quantity``). The legacy bar format does not apply.
    Checked: finite prices, finite volume ``>= 0``, non-decreasing timestamps.
    """
    opts = _Options.make(tz, format, columns, sep, time_format, time_unit, ambiguous,
                         nonexistent, False, TRADE_FIELDS)
    if opts.format == "legacy":
        raise ValueError("format='legacy' holds bars, not trades; use read_bars")
    cols, source = _read(path_or_df, opts)
    return Trades(timestamp=cols["timestamp"], price=cols["price"], volume=cols["volume"],
                  source=source)


def _read(obj: Any, opts: _Options) -> Tuple[Dict[str, np.ndarray], str]:
    if isinstance(obj, (list, tuple)):
        if not obj:
            raise ValueError("path_or_df is an empty list; give at least one file")
        for k, item in enumerate(obj):
            if not isinstance(item, (str, os.PathLike)):
                raise TypeError(f"path_or_df[{k}] must be a path, got {type(item).__name__}")
        parts = [_read_one(item, opts) for item in obj]
        for k in range(1, len(parts)):
            prev, (cols, where) = parts[k - 1], parts[k]
            prev_ts = prev[0]["timestamp"]
            if prev_ts.size and cols["timestamp"].size and cols["timestamp"][0] < prev_ts[-1]:
                raise ValueError(
                    f"{where(0)}: timestamp {_iso(cols['timestamp'][0])} is before the last row "
                    f"of {prev[1].source} ({_iso(prev_ts[-1])}); give the files in time order")
        merged = {f: np.concatenate([p[0][f] for p in parts]) for f in opts.fields
                  if f != "volume"}
        vols = [p[0]["volume"] for p in parts]
        kind = np.int64 if all(v.dtype.kind in "iu" for v in vols) else np.float64
        merged["volume"] = np.concatenate([v.astype(kind, copy=False) for v in vols])
        names = [str(os.fspath(p)) for p in obj]
        source = names[0] if len(names) == 1 else f"{names[0]} .. {names[-1]} ({len(names)} files)"
        return merged, source
    cols, where = _read_one(obj, opts)
    return cols, where.source


def _read_one(obj: Any, opts: _Options) -> Tuple[Dict[str, np.ndarray], _Where]:
    pd = require("pandas", "vpoc.io.read_bars / read_trades", "io")

    if isinstance(obj, (str, os.PathLike)) or is_file_object(obj):
        source = TextSource(obj)  # a path must name a regular file (a FIFO could block)
        fmt = opts.format or _infer_format(source)
        if fmt == "legacy":
            if opts.columns:
                raise ValueError("columns= does not apply to the legacy format (it has no header)")
            return _read_legacy(source, opts)
        if fmt == "csv":
            return _read_csv(source, opts)
        if source.data is not None:
            return _read_parquet(io.BytesIO(source.data), opts, source.name)
        return _read_parquet(source.name, opts)
    if opts.format is not None:
        raise ValueError(f"format={opts.format!r} applies to files; got a "
                         f"{type(obj).__name__}, pass format=None")
    module = type(obj).__module__
    if isinstance(obj, pd.DataFrame):
        df = obj
    elif module.startswith("polars"):
        df = (obj.collect() if hasattr(obj, "collect") else obj).to_pandas()
    elif module.startswith("pyarrow") and hasattr(obj, "to_pandas") and hasattr(obj, "schema"):
        df = obj.to_pandas()
    else:
        raise TypeError("path_or_df must be a path, a list of paths, a pandas or polars "
                        f"DataFrame or a pyarrow Table, got {type(obj).__name__}")
    where = _Where("<DataFrame>")
    return _extract(df, where, opts), where
