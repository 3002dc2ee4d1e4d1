"""write_bars / write_trades: legacy text, CSV and Parquet files, replaced atomically.

Contract: a file is replaced whole or not at all (vpoc._files.atomic_write); timestamps are written as
the bars' open times (``Bars.timestamp``), in ``tz`` or UTC; prices with the shortest round-trip text.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Optional

import numpy as np
import numpy.typing as npt

from .._files import atomic_write
from .._optional import require
from .._time import zone as _zone
from ._containers import Bars, Trades
from ._options import (_FORMATS, _LEGACY_TIME_FORMAT, BAR_FIELDS, TRADE_FIELDS, Int64Array,
                       PathLike, _first, _iso)
from ._text import _split_compression

__all__ = ["write_bars", "write_trades"]


# --------------------------------------------------------------------------- public writers


def write_bars(bars: Any, path: PathLike, *, format: Optional[str] = None, tz: Any = None,
               columns: Optional[Mapping[str, Any]] = None) -> None:
    """Write bars (``Bars``, anything with timestamp/open/high/low/close/volume arrays, or a pandas /
    polars DataFrame, read by ``read_bars(df, columns=columns)`` first: its timestamps must carry a
    zone). Bars without open prices (``Bars.open`` None; a frame without an open column with
    ``columns={"open": None}``) are written without an open column ("csv" / "parquet"; the legacy
    format has one: ValueError) and read back with ``read_bars(path, columns={"open": None})``.
    Bars with ``buy_volume`` / ``sell_volume`` (a frame's columns of those names) write them as two
    more columns ("csv" / "parquet"; the legacy format has none: ValueError), read back by read_bars.

    The timestamps written are ``bars.timestamp``: the bars' OPEN times (read_bars(...,
    label="close") has already turned close stamps into opens), so the file reads back with the
    default ``label="open"``.

    ``format`` (default from the suffix): "legacy" (``YYYYMMDD HHMMSS;o;h;l;c;v`` in local
    time of ``tz``, which is required; timestamps must be whole seconds), "csv" (ISO 8601
    timestamps with their UTC offset, in ``tz`` or UTC) or "parquet" (timestamp[ns] in ``tz``
    or UTC). Prices are written with the shortest text that reads back to the same float64.
    Legacy files written across a DST fall-back repeat an hour: read them with
    ``ambiguous="infer"``. Text files are compressed when ``path`` ends with .gz, .bz2 or .xz.

    The file is replaced whole or not at all: the data goes to a fresh temporary file in the same
    directory (unpredictable name, created exclusively), which is fsynced and renamed onto
    ``path``; a failed write (disk full, ``ulimit -f``, an exception) leaves the old file as it was
    and no temporary file behind. The new file keeps the old one's permission bits; a symlink at
    ``path`` is replaced by the file, not written through.
    """
    if _is_frame(bars):  # read as read_bars reads it: the columns' names, time zone and checks
        from ._read import read_bars

        bars = read_bars(bars, columns=columns)
    elif columns is not None:
        raise TypeError("write_bars: columns= applies when bars is a DataFrame (read by read_bars)")
    if not isinstance(bars, Bars):
        try:
            bars = Bars(**{f: getattr(bars, f) for f in BAR_FIELDS},
                        buy_volume=getattr(bars, "buy_volume", None), sell_volume=getattr(bars, "sell_volume", None))
        except AttributeError as e:
            raise TypeError(f"bars must be vpoc.io.Bars or have {', '.join(BAR_FIELDS)} "
                            f"attributes ({e})") from None
    fmt = _write_format(path, format)
    cols = {f: getattr(bars, f) for f in bars._fields[1:]}
    if fmt == "legacy" and bars.open is None:
        raise ValueError("write_bars: these bars have no open prices (Bars.open is None), and the legacy "
                         "format (YYYYMMDD HHMMSS;o;h;l;c;v) has an open field; write 'csv' or 'parquet' "
                         "(read back with read_bars(path, columns={'open': None}))")
    if fmt == "legacy" and bars.buy_volume is not None:
        raise ValueError("write_bars: these bars have buy_volume / sell_volume, and the legacy format "
                         "(YYYYMMDD HHMMSS;o;h;l;c;v) has no field for them; write 'csv' or 'parquet'")
    if fmt == "legacy":
        _write_legacy(bars.timestamp, cols, path, tz)
    else:
        _write_table(bars.timestamp, cols, path, fmt, tz)


def _is_frame(obj: Any) -> bool:
    """A pandas / polars DataFrame or a pyarrow Table (what read_bars / read_trades read)."""
    module = type(obj).__module__
    return (hasattr(obj, "columns") and module.split(".")[0] in ("pandas", "polars")) or \
        (module.startswith("pyarrow") and hasattr(obj, "schema"))


def write_trades(trades: Any, path: PathLike, *, format: Optional[str] = None,
                 tz: Any = None) -> None:
    """Write trades (``Trades``, anything with timestamp/price/volume arrays, and optionally
    ``side``, or a DataFrame read by ``read_trades(df)``) as "csv" or "parquet" (default from the suffix); a ``side`` column (int8 +1/-1/0)
    is written when the trades have one; timestamps, compression and the atomic replacement of
    ``path`` as in :func:`write_bars`."""
    if _is_frame(trades):
        from ._read import read_trades

        trades = read_trades(trades)
    if not isinstance(trades, Trades):
        try:
            trades = Trades(**{f: getattr(trades, f) for f in TRADE_FIELDS},
                            side=getattr(trades, "side", None))
        except AttributeError as e:
            raise TypeError(f"trades must be vpoc.io.Trades or have {', '.join(TRADE_FIELDS)} "
                            f"attributes ({e})") from None
    fmt = _write_format(path, format)
    if fmt == "legacy":
        raise ValueError("format='legacy' holds bars, not trades; use 'csv' or 'parquet'")
    cols = {"price": trades.price, "volume": trades.volume}
    if trades.side is not None:
        cols["side"] = trades.side
    _write_table(trades.timestamp, cols, path, fmt, tz)


def _write_format(path: Any, format: Optional[str]) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path, got {type(path).__name__}")
    if format is not None:
        if format not in _FORMATS:
            raise ValueError(f"format must be one of {', '.join(map(repr, _FORMATS))} or None, "
                             f"got {format!r}")
        return format
    base, _ = _split_compression(os.fspath(path))
    suffix = os.path.splitext(base)[1].lower()
    fmt = {".txt": "legacy", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}.get(suffix)
    if fmt is None:
        raise ValueError(f"cannot tell the format from the suffix {suffix!r} of {path!r}; pass "
                         "format='legacy', 'csv' or 'parquet'")
    return fmt


# --------------------------------------------------------------------------- writers


def _write_legacy(ts: Int64Array, cols: Dict[str, np.ndarray], path: PathLike, tz: Any) -> None:
    pd = require("pandas", "vpoc.io.write_bars / write_trades", "io")

    if tz is None:
        raise ValueError("tz is required for the legacy format (it stores local wall-clock "
                         "times), e.g. tz='America/Chicago'")
    zone = _zone(tz)
    i = _first(ts % 1_000_000_000 != 0)
    if i is not None:
        raise ValueError(f"timestamp[{i}] = {_iso(ts[i])} has fractions of a second, which the "
                         "legacy format (YYYYMMDD HHMMSS) cannot hold")
    local = pd.DatetimeIndex(ts.view("datetime64[ns]")).tz_localize("UTC").tz_convert(zone)
    df = pd.DataFrame({"timestamp": local.strftime(_LEGACY_TIME_FORMAT), **cols})
    with atomic_write(path) as fh:
        df.to_csv(fh, sep=";", header=False, index=False, lineterminator="\n",
                  compression=_compression(path))


def _write_table(ts: Int64Array, cols: Dict[str, np.ndarray], path: PathLike, fmt: str,
                 tz: Any) -> None:
    zone = _zone(tz) if tz is not None else "UTC"
    if fmt == "parquet":
        pa = require("pyarrow", f"writing Parquet ({os.fspath(path)})", "io")
        pq = require("pyarrow.parquet", f"writing Parquet ({os.fspath(path)})", "io")
        arrays = {"timestamp": pa.array(ts, type=pa.timestamp("ns", tz=str(zone)))}
        arrays.update({k: pa.array(v) for k, v in cols.items()})
        table = pa.table(arrays)
        with atomic_write(path) as fh:
            pq.write_table(table, fh)
        return
    pd = require("pandas", "vpoc.io.write_bars / write_trades", "io")
    df = pd.DataFrame({"timestamp": _iso_strings(ts, zone), **cols})
    with atomic_write(path) as fh:
        df.to_csv(fh, index=False, lineterminator="\n", compression=_compression(path))


def _compression(path: PathLike) -> Optional[str]:
    """The compression of a text file written to ``path``: from its suffix (.gz, .bz2, .xz, the
    ones the readers open), else none."""
    return {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}.get(_split_compression(os.fspath(path))[1])


def _iso_strings(ts: Int64Array, zone: Any) -> npt.NDArray[Any]:
    """ISO 8601 text of UTC ns timestamps in ``zone`` with their offset, e.g.
    ``2025-03-09T17:00:00-05:00`` (fractions of a second only when present)."""
    import pandas as pd

    local = pd.DatetimeIndex(ts.view("datetime64[ns]")).tz_localize("UTC").tz_convert(zone)
    wall = np.asarray(local.tz_localize(None).as_unit("ns").asi8, dtype=np.int64)
    unit = "s"
    for name, step in (("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1)):
        if not np.any(ts % step):
            unit = name
            break
    body = np.datetime_as_string(wall.view("datetime64[ns]"), unit=unit)
    offset_s = (wall - ts) // 10**9
    uniq, inverse = np.unique(offset_s, return_inverse=True)
    if np.any(uniq % 60) and str(zone) != "UTC":  # historical offsets with seconds: write UTC
        return _iso_strings(ts, "UTC")
    text = [f"{'-' if o < 0 else '+'}{abs(o) // 3600:02d}:{abs(o) % 3600 // 60:02d}"
            for o in uniq.tolist()]
    return np.char.add(body, np.asarray(text, dtype=str)[inverse.reshape(-1)])
