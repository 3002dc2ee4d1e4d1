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

import datetime as _dt
import os
import re
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from .._arrays import as_array, unmasked
from .._files import atomic_write
from .._optional import require
from .._time import zone as _zone
from .._time import (TIME_UNITS, check_plausible, check_time_unit, datetime64_ns, epoch_ns,
                    ns_range_error)

__all__ = [
    "Bars",
    "Trades",
    "read_bars",
    "read_trades",
    "write_bars",
    "write_trades",
]

PathLike = Union[str, "os.PathLike[str]"]
Int64Array = npt.NDArray[np.int64]
Float64Array = npt.NDArray[np.float64]

BAR_FIELDS: Tuple[str, ...] = ("timestamp", "open", "high", "low", "close", "volume")
TRADE_FIELDS: Tuple[str, ...] = ("timestamp", "price", "volume")

# Accepted column names per field, normalised (lower case, letters and digits only), in order
# of preference. The field's own name always wins; several other matches are ambiguous.
_ALIASES: Dict[str, Tuple[str, ...]] = {
    "timestamp": ("timestamp", "datetime", "ts", "timestamputc", "datetimeutc"),
    "open": ("open", "o", "openprice"),
    "high": ("high", "h", "highprice"),
    "low": ("low", "l", "lowprice"),
    "close": ("close", "c", "closeprice", "last"),
    "volume": ("volume", "vol", "v"),
    "price": ("price", "p", "px", "tradeprice", "last"),
}
_TRADE_VOLUME_ALIASES = ("volume", "vol", "v", "size", "qty", "quantity", "tradesize")
_DATE_NAMES = ("date", "day", "tradedate")
_TIME_NAMES = ("time", "timeofday")

_FORMATS = ("legacy", "csv", "parquet")
_COMPRESSION = (".gz", ".bz2", ".xz")
_LEGACY_LINE = re.compile(r"^\s*\d{8} \d{6};")
_LEGACY_TIME_FORMAT = "%Y%m%d %H%M%S"
_LEGACY_TIME_RE = r"^\s*\d{8} \d{6}\s*$"
_TZ_SUFFIX_RE = r"(?:[zZ]|[+-]\d{2}:?\d{2})\s*$"
_PARSER_LINE_RE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_AMBIGUOUS = ("raise", "infer", "earliest", "latest")
_NONEXISTENT = ("raise", "shift_forward", "shift_backward")


# --------------------------------------------------------------------------- containers


def _as_ns(x: Any, name: str) -> Int64Array:
    arr = np.asarray(unmasked(x, name))
    if arr.dtype.kind == "M":
        arr = datetime64_ns(arr, name)
    arr = as_array(arr, name)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be int64 nanoseconds since the epoch (UTC) or datetime64, "
                        f"got dtype {arr.dtype}")
    return epoch_ns(arr, name, hint=f"give datetime64 values, e.g. "
                    f"np.asarray({name}, dtype='datetime64[{{unit}}]')")


def _as_f64(x: Any, name: str) -> Float64Array:
    return np.ascontiguousarray(as_array(x, name), dtype=np.float64)


def _as_vol(x: Any, name: str) -> npt.NDArray[Any]:
    arr = as_array(x, name)
    if arr.dtype.kind in "iu":
        if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            raise ValueError(f"{name} values must fit in int64")
        return np.ascontiguousarray(arr, dtype=np.int64)
    return np.ascontiguousarray(arr, dtype=np.float64)


def _same_length(obj: Any, fields: Sequence[str]) -> None:
    n = len(getattr(obj, fields[0]))
    for f in fields[1:]:
        if len(getattr(obj, f)) != n:
            raise ValueError(f"{f} has length {len(getattr(obj, f))} but {fields[0]} has {n}")


def _frame(ts: Int64Array, cols: Dict[str, np.ndarray], index: bool) -> Any:
    pd = require("pandas", "to_pandas()")

    t = pd.DatetimeIndex(ts.view("datetime64[ns]")).tz_localize("UTC")
    if index:
        return pd.DataFrame(cols, index=pd.Index(t, name="timestamp"))
    return pd.DataFrame({"timestamp": t, **cols})


def _span(ts: Int64Array) -> str:
    return f"{_iso(ts[0])} .. {_iso(ts[-1])}, " if ts.shape[0] else ""


@dataclass(frozen=True, repr=False, eq=False)
class Bars:
    """OHLCV bars with int64 ns UTC timestamps, as read by :func:`read_bars`.

    Attributes: ``timestamp`` (int64, ns since the epoch, UTC), ``open``, ``high``, ``low``,
    ``close`` (float64), ``volume`` (int64 when the source holds integers, else float64),
    ``source`` (the file(s) read, or ``"<DataFrame>"``). Arrays are converted on construction
    (lengths must agree); values are validated by the readers, not here.
    """

    timestamp: Int64Array
    open: Float64Array
    high: Float64Array
    low: Float64Array
    close: Float64Array
    volume: npt.NDArray[Any]
    source: str = "<arrays>"

    def __post_init__(self) -> None:
        object.__setattr__(self, "timestamp", _as_ns(self.timestamp, "timestamp"))
        for f in ("open", "high", "low", "close"):
            object.__setattr__(self, f, _as_f64(getattr(self, f), f))
        object.__setattr__(self, "volume", _as_vol(self.volume, "volume"))
        if not isinstance(self.source, str):
            raise TypeError(f"source must be a string, got {type(self.source).__name__}")
        _same_length(self, BAR_FIELDS)

    def __len__(self) -> int:
        return int(self.timestamp.shape[0])

    def __repr__(self) -> str:
        return f"Bars({len(self)} rows, {_span(self.timestamp)}source={self.source!r})"

    @property
    def ts(self) -> Int64Array:
        """Alias of ``timestamp``."""
        return self.timestamp

    def to_pandas(self, index: bool = False) -> Any:
        """A DataFrame with ``timestamp`` (datetime64[ns, UTC]; the index when ``index``),
        ``open``, ``high``, ``low``, ``close``, ``volume``."""
        return _frame(self.timestamp, {f: getattr(self, f) for f in BAR_FIELDS[1:]}, index)


@dataclass(frozen=True, repr=False, eq=False)
class Trades:
    """Trades with int64 ns UTC timestamps, as read by :func:`read_trades`.

    Attributes: ``timestamp`` (int64, ns since the epoch, UTC), ``price`` (float64),
    ``volume`` (int64 when the source holds integers, else float64), ``source``.
    """

    timestamp: Int64Array
    price: Float64Array
    volume: npt.NDArray[Any]
    source: str = "<arrays>"

    def __post_init__(self) -> None:
        object.__setattr__(self, "timestamp", _as_ns(self.timestamp, "timestamp"))
        object.__setattr__(self, "price", _as_f64(self.price, "price"))
        object.__setattr__(self, "volume", _as_vol(self.volume, "volume"))
        if not isinstance(self.source, str):
            raise TypeError(f"source must be a string, got {type(self.source).__name__}")
        _same_length(self, TRADE_FIELDS)

    def __len__(self) -> int:
        return int(self.timestamp.shape[0])

    def __repr__(self) -> str:
        return f"Trades({len(self)} rows, {_span(self.timestamp)}source={self.source!r})"

    @property
    def ts(self) -> Int64Array:
        """Alias of ``timestamp``."""
        return self.timestamp

    def to_pandas(self, index: bool = False) -> Any:
        """A DataFrame with ``timestamp`` (datetime64[ns, UTC]; the index when ``index``),
        ``price``, ``volume``."""
        return _frame(self.timestamp, {"price": self.price, "volume": self.volume}, index)


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


# --------------------------------------------------------------------------- public writers


def write_bars(bars: Any, path: PathLike, *, format: Optional[str] = None, tz: Any = None) -> None:
    """Write bars (``Bars`` or anything with timestamp/open/high/low/close/volume arrays).

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
    if not isinstance(bars, Bars):
        try:
            bars = Bars(**{f: getattr(bars, f) for f in BAR_FIELDS})
        except AttributeError as e:
            raise TypeError(f"bars must be vpoc.io.Bars or have {', '.join(BAR_FIELDS)} "
                            f"attributes ({e})") from None
    fmt = _write_format(path, format)
    cols = {f: getattr(bars, f) for f in BAR_FIELDS[1:]}
    if fmt == "legacy":
        _write_legacy(bars.timestamp, cols, path, tz)
    else:
        _write_table(bars.timestamp, cols, path, fmt, tz)


def write_trades(trades: Any, path: PathLike, *, format: Optional[str] = None,
                 tz: Any = None) -> None:
    """Write trades (``Trades`` or anything with timestamp/price/volume arrays) as "csv" or
    "parquet" (default from the suffix); timestamps, compression and the atomic replacement of
    ``path`` as in :func:`write_bars`."""
    if not isinstance(trades, Trades):
        try:
            trades = Trades(**{f: getattr(trades, f) for f in TRADE_FIELDS})
        except AttributeError as e:
            raise TypeError(f"trades must be vpoc.io.Trades or have {', '.join(TRADE_FIELDS)} "
                            f"attributes ({e})") from None
    fmt = _write_format(path, format)
    if fmt == "legacy":
        raise ValueError("format='legacy' holds bars, not trades; use 'csv' or 'parquet'")
    _write_table(trades.timestamp, {"price": trades.price, "volume": trades.volume}, path, fmt, tz)


# --------------------------------------------------------------------------- options


@dataclass(frozen=True)
class _Options:
    tz: Any
    format: Optional[str]
    columns: Dict[str, Any]
    sep: Optional[str]
    time_format: Optional[str]
    time_unit: Optional[str]
    ambiguous: str
    nonexistent: str
    strict_ohlc: bool
    fields: Tuple[str, ...]

    @staticmethod
    def make(tz: Any, format: Any, columns: Any, sep: Any, time_format: Any, time_unit: Any,
             ambiguous: Any, nonexistent: Any, strict_ohlc: Any,
             fields: Tuple[str, ...]) -> "_Options":
        if format is not None and format not in _FORMATS:
            raise ValueError(f"format must be one of {', '.join(map(repr, _FORMATS))} or None, "
                             f"got {format!r}")
        if sep is not None and (not isinstance(sep, str) or len(sep) != 1):
            raise ValueError(f"sep must be a single character or None, got {sep!r}")
        if time_format is not None and not isinstance(time_format, str):
            raise TypeError(f"time_format must be a strftime string or None, got "
                            f"{type(time_format).__name__}")
        check_time_unit(time_unit)
        if ambiguous not in _AMBIGUOUS:
            raise ValueError(f"ambiguous must be one of {', '.join(map(repr, _AMBIGUOUS))}, "
                             f"got {ambiguous!r}")
        if nonexistent not in _NONEXISTENT:
            raise ValueError(f"nonexistent must be one of {', '.join(map(repr, _NONEXISTENT))}, "
                             f"got {nonexistent!r}")
        if not isinstance(strict_ohlc, (bool, np.bool_)):
            raise TypeError(f"strict_ohlc must be True or False, got {strict_ohlc!r}")
        return _Options(tz=None if tz is None else _zone(tz), format=format,
                        columns=_check_columns(columns, fields), sep=sep,
                        time_format=time_format, time_unit=time_unit, ambiguous=ambiguous,
                        nonexistent=nonexistent, strict_ohlc=bool(strict_ohlc), fields=fields)


def _check_columns(columns: Any, fields: Tuple[str, ...]) -> Dict[str, Any]:
    if columns is None:
        return {}
    if not isinstance(columns, Mapping):
        raise TypeError(f"columns must be a mapping {{field: column name}}, got "
                        f"{type(columns).__name__}")
    out = {}
    for key, value in columns.items():
        if key not in fields:
            hint = ""
            if isinstance(value, str) and value in fields:
                hint = f" (did you mean {{{value!r}: {key!r}}}? keys are vpoc's field names)"
            raise ValueError(f"columns: unknown field {key!r}; fields are "
                             f"{', '.join(fields)}{hint}")
        pair = isinstance(value, tuple) and len(value) == 2 and key == "timestamp"
        if not (isinstance(value, str) or pair):
            raise TypeError(f"columns[{key!r}] must be a column name"
                            f"{' or a (date, time) pair' if key == 'timestamp' else ''}, "
                            f"got {value!r}")
        out[key] = value
    return out


# --------------------------------------------------------------------------- dispatch


class _Where:
    """Names row i of a source in error messages: ``file line N`` or ``source row i``."""

    def __init__(self, source: str, first_line: Optional[int] = None,
                 lines: Optional[np.ndarray] = None) -> None:
        self.source = source
        self.first_line = first_line
        self.lines = lines

    def __call__(self, i: int) -> str:
        if self.lines is not None:
            return f"{self.source} line {int(self.lines[i])}"
        if self.first_line is not None:
            return f"{self.source} line {i + self.first_line}"
        return f"{self.source} row {i}"


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

    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        if not os.path.exists(path):
            raise FileNotFoundError(f"path_or_df: no such file: {path!r}")
        fmt = opts.format or _infer_format(path)
        if fmt == "legacy":
            if opts.columns:
                raise ValueError("columns= does not apply to the legacy format (it has no header)")
            return _read_legacy(path, opts)
        if fmt == "csv":
            return _read_csv(path, opts)
        return _read_parquet(path, opts)
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


def _split_compression(path: str) -> Tuple[str, str]:
    lower = path.lower()
    for ext in _COMPRESSION:
        if lower.endswith(ext):
            return path[: -len(ext)], ext
    return path, ""


def _first_line(path: str) -> str:
    import bz2
    import gzip
    import lzma

    _, comp = _split_compression(path)
    openers: Dict[str, Callable[..., Any]] = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
    opener = openers.get(comp, open)
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        return fh.readline()


def _infer_format(path: str) -> str:
    base, _ = _split_compression(path)
    suffix = os.path.splitext(base)[1].lower()
    if suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix == ".txt":
        return "legacy"
    looks_legacy = bool(_LEGACY_LINE.match(_first_line(path)))
    if suffix in (".csv", ".tsv"):
        return "legacy" if looks_legacy else "csv"
    if looks_legacy:
        return "legacy"
    raise ValueError(f"cannot tell the format of {path!r} from its suffix {suffix!r}; pass "
                     "format='legacy', 'csv' or 'parquet'")


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


# --------------------------------------------------------------------------- file readers


def _parser_error(path: str, err: Exception, what: str) -> ValueError:
    m = _PARSER_LINE_RE.search(str(err))
    if m:
        expected, line, saw = m.groups()
        return ValueError(f"{path} line {line}: expected {expected} {what}, found {saw}")
    return ValueError(f"{path}: cannot parse the file: {err}")


def _read_text(path: str, kw: Dict[str, Any], what: str) -> Any:
    """Every field of a text file as a string (to find which line holds a bad value)."""
    import pandas as pd

    try:
        return pd.read_csv(path, dtype=str, **kw)
    except pd.errors.ParserError as e:
        raise _parser_error(path, e, what) from None


def _drop_blank_lines(df: Any, first_line: int, path: str) -> Tuple[Any, _Where]:
    """Rows of a text file read as strings, without blank lines, and their line numbers."""
    blank = np.ones(len(df), dtype=bool)
    for c in df.columns:
        blank &= (df[c].fillna("").str.strip() == "").to_numpy(dtype=bool)
    lines = np.arange(len(df), dtype=np.int64) + first_line
    if blank.any():
        df = df.loc[~blank].reset_index(drop=True)
        lines = lines[~blank]
    return df, _Where(path, lines=lines)


def _exact_floats(pd: Any) -> Dict[str, str]:
    """read_csv arguments that parse every float exactly (the nearest double): pandas < 3.1 rounds
    in its default parser and needs float_precision='round_trip', which 3.1 makes the default
    and deprecates."""
    major, minor = (int(x) for x in re.findall(r"\d+", pd.__version__)[:2])
    return {"float_precision": "round_trip"} if (major, minor) < (3, 1) else {}


def _read_legacy(path: str, opts: _Options) -> Tuple[Dict[str, np.ndarray], _Where]:
    import pandas as pd

    names = list(BAR_FIELDS)
    kw: Dict[str, Any] = dict(sep=";", header=None, names=names, index_col=False,
                              skip_blank_lines=False, keep_default_na=False, engine="c",
                              low_memory=False, compression="infer", **_exact_floats(pd))
    if opts.tz is None:
        raise ValueError(f"{path}: the legacy format stores local wall-clock times; pass tz= "
                         "(e.g. tz='America/Chicago')")
    fast = {"timestamp": str, **{f: np.float64 for f in BAR_FIELDS[1:5]}}
    try:
        df = pd.read_csv(path, dtype=fast, **kw)
        if df["volume"].dtype.kind not in "iuf":
            raise ValueError("volume is not numeric")
        where = _Where(path, first_line=1)
    except pd.errors.EmptyDataError:
        df, where = pd.DataFrame({f: pd.Series([], dtype=str) for f in names}), _Where(path, 1)
    except pd.errors.ParserError as e:
        raise _parser_error(path, e, "';'-separated fields (YYYYMMDD HHMMSS;o;h;l;c;v)") from None
    except ValueError:  # a field is not a number: re-read as text to name the line
        df, where = _drop_blank_lines(_read_text(path, kw, "';'-separated fields"), 1, path)
        for f in names:
            empty = (df[f].fillna("").str.strip() == "").to_numpy(dtype=bool)
            if empty.any():
                i = int(np.argmax(empty))
                raise ValueError(f"{where(i)}: field {f!r} is empty or missing (expected "
                                 "'YYYYMMDD HHMMSS;open;high;low;close;volume')")
    time_format = opts.time_format or _LEGACY_TIME_FORMAT
    legacy_opts = _Options(**{**opts.__dict__, "time_format": time_format, "columns": {}})
    return _extract(df, where, legacy_opts), where


def _sniff_sep(header: str) -> str:
    counts = {c: header.count(c) for c in (",", ";", "\t", "|")}
    best = max(counts, key=lambda c: counts[c])
    return best if counts[best] else ","


def _read_csv(path: str, opts: _Options) -> Tuple[Dict[str, np.ndarray], _Where]:
    import pandas as pd

    sep = opts.sep or _sniff_sep(_first_line(path))
    kw: Dict[str, Any] = dict(sep=sep, header=0, index_col=False, skip_blank_lines=False,
                              keep_default_na=False, engine="c", low_memory=False,
                              compression="infer", **_exact_floats(pd))
    try:
        header = list(pd.read_csv(path, nrows=0, **kw).columns)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path} line 1: the CSV file is empty (no header line)") from None
    mapping = _resolve(header, opts, path)
    if mapping["timestamp"] is None:
        raise ValueError(f"{path} line 1: no timestamp column (timestamp, datetime, ts, date + "
                         "time) in the header; pass columns={'timestamp': name}")
    text_cols = set(_names(mapping["timestamp"]))
    numeric = {c: np.float64 for f, c in mapping.items() if f not in ("timestamp", "volume")}
    dtypes = {c: (np.float64 if c in numeric else str) for c in header}
    dtypes.pop(mapping["volume"], None)  # integers stay integers
    for c in text_cols:
        dtypes[c] = str
    try:
        df = pd.read_csv(path, dtype=dtypes, **kw)
        if df[mapping["volume"]].dtype.kind not in "iuf":
            raise ValueError("volume is not numeric")
        where = _Where(path, first_line=2)
    except pd.errors.ParserError as e:
        raise _parser_error(path, e, f"{sep!r}-separated fields (one per header column)") from None
    except ValueError:  # a field is not a number: re-read as text to name the line
        df, where = _drop_blank_lines(_read_text(path, kw, f"{sep!r}-separated fields"), 2, path)
    return _extract(df, where, opts, mapping), where


def _read_parquet(path: str, opts: _Options) -> Tuple[Dict[str, np.ndarray], _Where]:
    import pandas as pd

    pq = require("pyarrow.parquet", f"reading Parquet ({path})", "io")
    try:
        schema = pq.read_schema(path)
    except Exception as e:  # pyarrow raises ArrowInvalid / OSError for non-Parquet files
        raise ValueError(f"{path}: not a readable Parquet file ({e})") from None
    meta = schema.pandas_metadata or {}
    index_cols = [c for c in meta.get("index_columns", []) if isinstance(c, str)]
    names = [n for n in schema.names if n not in index_cols or not n.startswith("__")]
    mapping = _resolve(names, opts, path)
    wanted = {n for v in mapping.values() if v is not None for n in _names(v)}
    if mapping["timestamp"] is None:  # an unnamed DatetimeIndex stored by pandas
        wanted.update(index_cols)
    df = pq.read_table(path, columns=[n for n in schema.names if n in wanted]).to_pandas()
    if isinstance(df.index, pd.MultiIndex) or df.index.name is not None:
        df = df.reset_index()
    where = _Where(path)
    return _extract(df, where, opts, mapping), where


# --------------------------------------------------------------------------- column handling


def _norm(name: Any) -> str:
    return re.sub(r"[^0-9a-z]", "", str(name).lower())


def _names(value: Any) -> Tuple[str, ...]:
    return tuple(value) if isinstance(value, tuple) else (value,)


def _resolve(names: Sequence[Any], opts: _Options, source: str) -> Dict[str, Any]:
    """Map each field to a source column (or ``(date, time)`` for the timestamp)."""
    by_norm: Dict[str, List[Any]] = {}
    for n in names:
        by_norm.setdefault(_norm(n), []).append(n)
    out: Dict[str, Any] = {}
    listing = ", ".join(repr(str(n)) for n in names)
    for field in opts.fields:
        if field in opts.columns:
            want = opts.columns[field]
            for w in _names(want):
                if w not in names:
                    raise ValueError(f"{source}: columns[{field!r}] = {w!r} is not a column "
                                     f"(columns: {listing})")
            out[field] = want
            continue
        aliases = _ALIASES[field] if not (field == "volume" and "price" in opts.fields) \
            else _TRADE_VOLUME_ALIASES
        hits = [n for a in aliases for n in by_norm.get(a, [])]
        own = by_norm.get(field, [])
        if len(own) == 1:
            out[field] = own[0]
            continue
        if len(own) > 1 or len(hits) > 1:
            dup = own if len(own) > 1 else hits
            raise ValueError(f"{source}: several columns could be {field!r} "
                             f"({', '.join(repr(str(d)) for d in dup)}); pass columns={{"
                             f"{field!r}: name}}")
        if hits:
            out[field] = hits[0]
            continue
        if field == "timestamp":
            dates = [n for a in _DATE_NAMES for n in by_norm.get(a, [])]
            times = [n for a in _TIME_NAMES for n in by_norm.get(a, [])]
            if len(dates) == 1 and len(times) == 1:
                out[field] = (dates[0], times[0])
                continue
            if len(dates) + len(times) == 1:
                out[field] = (dates + times)[0]
                continue
            out[field] = None  # the DataFrame's DatetimeIndex, if it has one
            continue
        raise ValueError(f"{source}: no column for {field!r} (columns: {listing}); pass "
                         f"columns={{{field!r}: name}}")
    return out


def _extract(df: Any, where: _Where, opts: _Options,
             mapping: Optional[Dict[str, Any]] = None) -> Dict[str, np.ndarray]:
    """Converted, validated arrays of one source."""
    import pandas as pd

    if mapping is None:
        if isinstance(df.index, pd.MultiIndex) or df.index.name is not None:
            df = df.reset_index()
        mapping = _resolve(list(df.columns), opts, where.source)
    tcol = mapping["timestamp"]
    if tcol is None:
        if not isinstance(df.index, pd.DatetimeIndex):
            raise ValueError(f"{where.source}: no timestamp column (timestamp, datetime, ts, date "
                             "+ time) and no DatetimeIndex; pass columns={'timestamp': name}")
        raw: Any = pd.Series(df.index, index=pd.RangeIndex(len(df)))
    elif isinstance(tcol, tuple):
        d, t = (df[c].astype(str).str.strip() for c in tcol)
        raw = (d + " " + t).reset_index(drop=True)
    else:
        raw = df[tcol].reset_index(drop=True)
    out: Dict[str, np.ndarray] = {"timestamp": _timestamps(raw, where, opts)}
    for field in opts.fields[1:]:
        out[field] = _numbers(df[mapping[field]].reset_index(drop=True), field, where,
                              field == "volume")
    _validate(out, where, opts)
    return out


def _first(mask: np.ndarray) -> Optional[int]:
    return int(np.argmax(mask)) if mask.any() else None


def _numbers(col: Any, field: str, where: _Where, volume: bool) -> np.ndarray:
    import pandas as pd

    dtype = col.dtype
    if pd.api.types.is_bool_dtype(dtype):
        raise TypeError(f"{where.source}: column {col.name!r} ({field}) is boolean, "
                        "expected numbers")
    if pd.api.types.is_numeric_dtype(dtype):
        na = col.isna().to_numpy(dtype=bool)
        i = _first(na)
        if i is not None and dtype.kind in "iub":  # a nullable integer column with a missing value
            raise ValueError(f"{where(i)}: {field} is missing")
        if dtype.kind in "iu" and i is None:
            if dtype.kind == "u" and len(col) and int(col.max()) > np.iinfo(np.int64).max:
                i = _first((col > np.iinfo(np.int64).max).to_numpy(dtype=bool))
                raise ValueError(f"{where(i)}: {field} = {col.iloc[i]} does not fit in int64")
            return col.to_numpy(dtype=np.int64) if volume else col.to_numpy(dtype=np.float64)
        return col.to_numpy(dtype=np.float64, na_value=np.nan)
    if pd.api.types.is_string_dtype(dtype) or dtype == object:
        text = col.astype(str).str.strip() if dtype == object else col.str.strip()
        num = pd.to_numeric(text.where(text != "", "?"), errors="coerce")
        nan_text = text.str.lower().isin(("nan", "-nan", "+nan"))  # NaN: reported by _validate
        bad = (num.isna() & ~nan_text).to_numpy(dtype=bool)
        i = _first(bad)
        if i is not None:
            raise ValueError(f"{where(i)}: {field} = {col.iloc[i]!r} is not a number")
        if num.dtype.kind in "iu" and volume:
            return num.to_numpy(dtype=np.int64)
        return num.to_numpy(dtype=np.float64)
    raise TypeError(f"{where.source}: column {col.name!r} ({field}) has dtype {dtype}, "
                    "expected numbers")


def _validate(out: Dict[str, np.ndarray], where: _Where, opts: _Options) -> None:
    prices = [f for f in opts.fields[1:] if f != "volume"]
    for f in prices:
        i = _first(~np.isfinite(out[f]))
        if i is not None:
            raise ValueError(f"{where(i)}: {f} is {out[f][i]} (prices must be finite)")
    if "high" in out:
        h, lo = out["high"], out["low"]
        i = _first(h < lo)
        if i is not None:
            raise ValueError(f"{where(i)}: high ({h[i].item()!r}) < low ({lo[i].item()!r})")
        if opts.strict_ohlc:
            for f in ("open", "close"):
                x = out[f]
                i = _first((x < lo) | (x > h))
                if i is not None:
                    raise ValueError(f"{where(i)}: {f} ({x[i].item()!r}) is outside [low, high] = "
                                     f"[{lo[i].item()!r}, {h[i].item()!r}] (strict_ohlc=True)")
    v = out["volume"]
    bad = (v < 0) if v.dtype.kind in "iu" else ~(np.isfinite(v) & (v >= 0))
    i = _first(bad)
    if i is not None:
        raise ValueError(f"{where(i)}: volume is {v[i].item()!r} (must be finite and >= 0)")
    t = out["timestamp"]
    if t.shape[0] > 1:
        i = _first(t[1:] < t[:-1])
        if i is not None:
            raise ValueError(f"{where(i + 1)}: timestamp {_iso(t[i + 1])} is before the previous "
                             f"row's {_iso(t[i])} (rows must be in time order)")


# --------------------------------------------------------------------------- timestamps


def _iso(ns: Any) -> str:
    ns = int(ns)
    return str(np.datetime64(ns // 1_000_000_000, "s") if ns % 1_000_000_000 == 0
               else np.datetime64(ns, "ns")) + "Z"


def _timestamps(raw: Any, where: _Where, opts: _Options) -> Int64Array:
    """A column of timestamps (any supported representation) -> int64 ns UTC."""
    import pandas as pd

    dtype = raw.dtype
    if len(raw) == 0:  # nothing to convert, whatever the (inferred) dtype of an empty column
        return np.zeros(0, dtype=np.int64)
    if isinstance(dtype, pd.DatetimeTZDtype):
        return _utc_ns(raw, where)
    if dtype.kind == "M":
        return _localize(raw, where, opts)
    if pd.api.types.is_bool_dtype(dtype):
        raise TypeError(f"{where.source}: the timestamp column is boolean")
    if pd.api.types.is_integer_dtype(dtype):
        return _epoch(raw, where, opts)
    if pd.api.types.is_numeric_dtype(dtype):
        raise TypeError(f"{where.source}: the timestamp column holds floats; give integer epoch "
                        "times (with time_unit=), datetimes or text")
    if pd.api.types.is_string_dtype(dtype) and dtype != object:
        return _parse_text(raw, where, opts)
    if dtype == object:
        kinds = {type(x) for x in raw
                 if x is not None and not (isinstance(x, float) and np.isnan(x))}
        if kinds and all(issubclass(k, str) for k in kinds):
            return _parse_text(raw.astype(object), where, opts)
        return _parse_objects(raw, where, opts)
    raise TypeError(f"{where.source}: the timestamp column has dtype {dtype}; expected "
                    "datetimes, text or integer epoch times")


def _nat_check(values: Any, raw: Any, where: _Where, what: str) -> None:
    na = np.asarray(values.isna(), dtype=bool)
    i = _first(na)
    if i is not None:
        raise ValueError(f"{where(i)}: {what} {raw.iloc[i]!r}")


def _utc_ns(values: Any, where: _Where) -> Int64Array:
    import pandas as pd

    idx = pd.DatetimeIndex(values)
    _nat_check(idx, pd.Series(idx), where, "timestamp is missing:")
    return np.asarray(idx.tz_convert("UTC").as_unit("ns").asi8, dtype=np.int64)


def _epoch(raw: Any, where: _Where, opts: _Options) -> Int64Array:
    if opts.time_unit is None:
        raise TypeError(f"{where.source}: the timestamp column holds integers; pass time_unit="
                        "'s', 'ms', 'us' or 'ns' (epoch times are UTC)")
    na = raw.isna().to_numpy(dtype=bool)
    i = _first(na)
    if i is not None:
        raise ValueError(f"{where(i)}: timestamp is missing")
    vals = raw.to_numpy(dtype=np.int64)
    bad = ns_range_error(vals, opts.time_unit)
    if bad is not None:
        raise ValueError(f"{where(bad[0])}: timestamp {vals[bad[0]]} {bad[1]}")
    try:
        check_plausible(vals, "timestamp", opts.time_unit, hint="read it with time_unit='{unit}'")
    except ValueError as e:
        raise ValueError(f"{where.source}: {e}") from None
    return vals * TIME_UNITS[opts.time_unit]


def _parse_text(raw: Any, where: _Where, opts: _Options) -> Int64Array:
    import pandas as pd

    text = raw.astype(str).str.strip() if raw.dtype == object else raw.str.strip()
    missing = (raw.isna() | (text == "")).to_numpy(dtype=bool)
    i = _first(missing)
    if i is not None:
        raise ValueError(f"{where(i)}: timestamp is empty or missing")
    if opts.time_unit is not None:  # integer epoch times stored as text
        i = _first(~text.str.fullmatch(r"[+-]?\d{1,19}").to_numpy(dtype=bool))
        if i is not None:
            raise ValueError(f"{where(i)}: timestamp {raw.iloc[i]!r} is not an integer epoch "
                             f"time ({opts.time_unit})")
        num = pd.to_numeric(text, errors="coerce")
        if num.dtype.kind != "i":
            i = _first((num.abs() > np.iinfo(np.int64).max).to_numpy(dtype=bool)) or 0
            raise ValueError(f"{where(i)}: timestamp {raw.iloc[i]!r} does not fit in int64")
        return _epoch(num, where, opts)
    fmt = opts.time_format
    if fmt is None:
        legacy = bool(len(text)) and bool(re.match(_LEGACY_TIME_RE, text.iloc[0]))
        fmt = _LEGACY_TIME_FORMAT if legacy else "ISO8601"
    expect = "ISO 8601" if fmt == "ISO8601" else repr(fmt)
    what = f"timestamp does not match {expect} (pass time_format=):"
    if fmt == _LEGACY_TIME_FORMAT:
        wall, bad = _parse_legacy_times(text)
        i = _first(bad)
        if i is not None:
            raise ValueError(f"{where(i)}: {what} {raw.iloc[i]!r}")
        return _localize(wall.view("datetime64[ns]"), where, opts)
    try:
        with warnings.catch_warnings():  # pandas < 3 warns (FutureWarning) where 3 raises
            warnings.simplefilter("error", FutureWarning)
            parsed = pd.to_datetime(text, format=fmt, errors="coerce")
    except (ValueError, FutureWarning) as e:  # mixed UTC offsets, or offsets on some rows only
        if fmt != "ISO8601":
            raise ValueError(f"{where.source}: cannot parse timestamps with format {fmt!r}: "
                             f"{e}") from None
        _check_offsets_not_mixed(text, where)
        parsed = pd.to_datetime(text, format=fmt, errors="coerce", utc=True)
    else:
        if fmt == "ISO8601" and isinstance(parsed.dtype, pd.DatetimeTZDtype):
            # pandas < 3 reads naive stamps among aware ones as UTC (unparsed ones are named below)
            _check_offsets_not_mixed(text, where, np.asarray(parsed.notna(), dtype=bool))
    bad = np.asarray(parsed.isna(), dtype=bool)
    i = _first(bad)
    if i is not None:
        digits = text.iloc[i].lstrip("-").isdigit()
        hint = " (integer epoch times need time_unit=)" if digits else ""
        raise ValueError(f"{where(i)}: {what} {raw.iloc[i]!r}{hint}")
    if isinstance(parsed.dtype, pd.DatetimeTZDtype):
        return _utc_ns(parsed, where)
    return _localize(parsed, where, opts)


def _check_offsets_not_mixed(text: Any, where: _Where,
                             rows: Optional[npt.NDArray[np.bool_]] = None) -> None:
    """ISO 8601 stamps either all carry a UTC offset or none does (never guessed per row);
    ``rows`` limits the check to those rows (the first row is always checked against)."""
    has_tz = text.str.contains(_TZ_SUFFIX_RE, regex=True).to_numpy(dtype=bool)
    differs = has_tz != has_tz[0] if len(has_tz) else has_tz
    if rows is not None:
        differs &= rows
    if differs.any():
        i = int(np.argmax(differs))
        state = "has a UTC offset" if has_tz[i] else "has no UTC offset"
        raise ValueError(f"{where(i)}: timestamp {text.iloc[i]!r} {state} but {where(0)} "
                         f"{'does not' if has_tz[i] else 'does'}; mixing them is not allowed")


def _parse_legacy_times(text: Any) -> Tuple[Int64Array, npt.NDArray[np.bool_]]:
    """Strict ``YYYYMMDD HHMMSS`` parser: (wall-clock ns since the epoch, bad-row mask)."""
    n = len(text)
    try:
        import pyarrow as pa

        raw = pa.array(text, type=pa.large_string()).cast(pa.large_binary())
        b = np.asarray(raw.to_numpy(zero_copy_only=False), dtype="S16")
    except ImportError:  # pragma: no cover - pandas without pyarrow
        b = np.asarray([s.encode("utf-8") for s in text], dtype="S16")
    chars = b.view(np.uint8).reshape(n, 16)  # UTF-8 bytes; anything non-ASCII is not a digit
    bad = (chars[:, 8] != ord(" ")) | (chars[:, 15] != 0)  # exactly 15 characters
    cols = {}
    for k in (*range(8), *range(9, 15)):
        c = chars[:, k].astype(np.int64) - ord("0")
        bad |= (c < 0) | (c > 9)
        cols[k] = c

    def num(a: int, b: int) -> Int64Array:
        out = np.zeros(n, dtype=np.int64)
        for k in range(a, b):
            out = out * 10 + cols[k]
        return out

    y, mo, d = num(0, 4), num(4, 6), num(6, 8)
    hh, mi, ss = num(9, 11), num(11, 13), num(13, 15)
    bad |= (mo < 1) | (mo > 12) | (d < 1) | (hh > 23) | (mi > 59) | (ss > 59)
    month = ((y - 1970) * 12 + np.clip(mo, 1, 12) - 1).astype("datetime64[M]")
    day = month.astype("datetime64[D]") + (np.maximum(d, 1) - 1).astype("timedelta64[D]")
    bad |= day.astype("datetime64[M]") != month  # e.g. February 30
    ns = (day.astype(np.int64) * 86_400 + (hh * 60 + mi) * 60 + ss) * 1_000_000_000
    return ns, bad


def _parse_objects(raw: Any, where: _Where, opts: _Options) -> Int64Array:
    """A column of Python datetime-like objects (naive or aware, not mixed)."""
    import pandas as pd

    missing = raw.isna().to_numpy(dtype=bool)
    i = _first(missing)
    if i is not None:
        raise ValueError(f"{where(i)}: timestamp is missing")
    aware = np.array([getattr(x, "tzinfo", None) is not None for x in raw], dtype=bool)
    if aware.size and (aware != aware[0]).any():
        i = int(np.argmax(aware != aware[0]))
        raise ValueError(f"{where(i)}: timestamp {raw.iloc[i]!r} mixes naive and aware datetimes "
                         f"with {where(0)}")
    try:
        parsed = pd.to_datetime(raw, utc=bool(aware.size and aware[0]))
    except (TypeError, ValueError) as e:
        raise TypeError(f"{where.source}: the timestamp column holds {type(raw.iloc[0]).__name__} "
                        f"objects that are not datetimes ({e})") from None
    if isinstance(parsed.dtype, pd.DatetimeTZDtype):
        return _utc_ns(parsed, where)
    return _localize(parsed, where, opts)


def _localize(values: Any, where: _Where, opts: _Options) -> Int64Array:
    """Naive wall-clock datetimes in ``opts.tz`` -> int64 ns UTC, DST per ambiguous/nonexistent."""
    import pandas as pd

    idx = pd.DatetimeIndex(values).as_unit("ns")
    _nat_check(idx, pd.Series(idx), where, "timestamp is missing:")
    if len(idx) == 0:
        return np.zeros(0, dtype=np.int64)
    if opts.tz is None:
        raise ValueError(f"{where.source}: timestamps have no time zone; pass tz= with the zone "
                         "they are in (e.g. tz='America/Chicago' for exchange time, tz='UTC')")
    probe = idx.tz_localize(opts.tz, ambiguous="NaT", nonexistent="NaT")
    bad = np.asarray(probe.isna(), dtype=bool)
    if not bad.any():
        return np.asarray(probe.asi8, dtype=np.int64)
    shifted = idx.tz_localize(opts.tz, ambiguous="NaT", nonexistent="shift_forward")
    gap = bad & ~np.asarray(shifted.isna(), dtype=bool)
    fold = bad & ~gap
    zone = str(opts.tz)
    if gap.any() and opts.nonexistent == "raise":
        i = _first(gap)
        raise ValueError(f"{where(i)}: {idx[i]} does not exist in {zone} (skipped when DST "
                         "starts); pass nonexistent='shift_forward' or 'shift_backward'")
    if fold.any() and opts.ambiguous == "raise":
        i = _first(fold)
        raise ValueError(f"{where(i)}: {idx[i]} is ambiguous in {zone} (repeated when DST "
                         "ends); pass ambiguous='infer', 'earliest' or 'latest'")
    amb: Any = "raise"
    if opts.ambiguous == "infer":
        amb = "infer"
    elif opts.ambiguous in ("earliest", "latest"):
        amb = np.full(idx.shape[0], opts.ambiguous == "earliest", dtype=bool)
    try:
        loc = idx.tz_localize(opts.tz, ambiguous=amb, nonexistent=opts.nonexistent)
    except ValueError as e:  # pandas raises a ValueError when ambiguous='infer' cannot decide
        i = _first(fold) or 0
        raise ValueError(f"{where(i)}: cannot infer which {idx[i]} in {zone} is meant "
                         f"({e}); pass ambiguous='earliest' or 'latest'") from None
    return np.asarray(loc.as_unit("ns").asi8, dtype=np.int64)


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
