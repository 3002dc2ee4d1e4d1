"""Load OHLCV bars and trades from legacy ``;`` text, CSV, Parquet and pandas/polars DataFrames.

Contract: timestamps become int64 ns UTC (naive data needs ``tz=``), bar timestamps the bar OPEN;
a malformed row raises ValueError naming the file and line (text) or row (Parquet, DataFrames);
the one row ever left out (an unterminated last line, see below) is announced by a warning.

Formats
-------
* legacy text (``.txt``; also a ``.csv`` or unknown suffix whose first line matches):
  ``YYYYMMDD HHMMSS;open;high;low;close;volume``, no header, local wall-clock times.
* CSV (``.csv``, ``.tsv``): a header line; the separator is sniffed from it (``sep=``).
* Parquet (``.parquet``, ``.pq``; needs pyarrow).
* Databento DBN (``.dbn``, ``.dbn.zst``; needs databento-dbn, and pyarrow for .zst: the
  ``databento`` extra): trades, tbbo and mbp-1 to read_trades (with the aggressor ``side``),
  ohlcv-1s / -1m / -1h / -1d to read_bars; ``instrument=`` picks one instrument of several, and
  the files' instrument definitions give ``symbol`` and ``tick_size`` (rules in vpoc.io._dbn).
* pandas / polars DataFrames (polars needs pyarrow), pyarrow Tables.
* an open file object (binary or text, read whole into memory; the format from ``format=``, its
  name, or its first line; compression from its first bytes).
Text files may be compressed (``.gz``, ``.bz2``, ``.xz``). Column names are matched
case-insensitively, ignoring spaces and punctuation (``Open``/``OPEN``/``open``;
``timestamp``/``datetime``/``ts``/``ts_event``, separate ``date`` + ``time`` columns (``Date``,
``Time``), ``time`` or ``date`` alone, or a DatetimeIndex; ``Last`` is the close of bars and the
price of trades, ``Vol``/``Volume``/``V`` the volume; trades also take ``size``/``qty``);
``columns=`` maps vpoc's names to yours. Integers in a ``ts_event`` column (Databento) are UTC
nanoseconds without ``time_unit=``. A column named twice in a CSV header (``close,close``, or
``Close,close``) is refused naming it. Trades take an optional ``side`` (or ``aggressor_side``)
column: the aggressor side, +1 / -1 / 0 or Databento's 'B' (buy aggressor) / 'A' (sell aggressor)
/ 'N' (none), anything else is a ValueError naming the column and row; ``Trades.side`` is None
without one, and ``columns={"side": None}`` ignores it. In a list of files, those without a side
column read as side 0 (unknown) when another file has one, with a GuessedDefaultWarning naming
each such file and its rows (bars: the same for buy / sell volume columns). Bars take optional ``buy_volume`` /
``sell_volume`` columns (also ``AskVolume`` / ``BidVolume``, the NinjaTrader / Sierra Chart
names; both or neither, ValueError naming the missing one): ``Bars.buy_volume`` / ``sell_volume``,
read as 0 in a file without them when another file has them.

Bar labels
----------
``read_bars(..., label="close")`` says the source stamps each bar at its close; the reader
subtracts the bar interval (``interval=``, or the modal spacing, announced by a
GuessedDefaultWarning) with vpoc._time.bar_opens, so ``Bars.timestamp`` is always the bar's open;
``Bars.label`` and ``Bars.interval`` (seconds) record the conversion. write_bars writes those
open times.

Text files: rules
-----------------
* Paths must name regular files: a FIFO, character or block device, socket or directory raises
  ValueError before anything opens it (reading it could block forever). To read one, pass an open
  file object, e.g. ``read_bars(open("/dev/stdin", "rb"), format="legacy", tz="UTC")``.
* The last line of a file must end with a newline. A last line without one may be a line cut
  short by a writer still at work (``...;21`` where the writer is putting ``...;218``): it can't
  be told apart from a complete one, so ``unterminated=`` decides. "drop" (default) leaves it
  out with a DroppedRowsWarning naming the file, line and text; "raise" refuses the file with a
  ValueError naming them; "keep" reads it, but only when it has as many fields as the other
  lines and every field parses (otherwise ValueError).
* Every error names the file and line: fields that don't parse, a wrong field count, bytes that
  are not UTF-8, a truncated or corrupt .gz/.bz2/.xz stream, dates that don't exist (month 00 or
  13, day 00, February 30, ...), YYYYMMDD years outside 1678..2261 and any time outside the int64
  nanosecond range (1677-09-21 .. 2262-04-11).
* Files are parsed in pieces of 100,000 rows; Ctrl-C (SIGINT) interrupts a read between pieces,
  within about a second even for files of hundreds of MB.

Line numbers count every line of the file from 1 (the header is line 1 of a CSV); rows of
Parquet files and DataFrames are numbered from 0 by position. Blank lines in text files are
ignored. Only pandas (and pyarrow/polars for those formats) is needed, imported on first use.
"""

from __future__ import annotations

import io
import os
import warnings
from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np

from .._arrays import warn_duplicate_bars
from .._optional import require
from .._side import warn_unsided
from .._time import bar_opens, check_label, infer_interval_ns, interval_ns
from .._warnings import DuplicateRowsWarning, GuessedDefaultWarning, user_stacklevel
from ._columns import _extract
from ._containers import Bars, Trades
from ._dbn import read_dbn
from ._dbn_file import is_dbn_name
from ._options import BAR_FIELDS, TRADE_FIELDS, _iso, _Options, _Where, no_open
from ._parquet import _read_parquet
from ._source import TextSource, is_file_object
from ._text import _infer_format, _read_csv, _read_legacy

__all__ = ["read_bars", "read_trades"]


# --------------------------------------------------------------------------- public readers


def read_bars(path_or_df: Any, *, tz: Any = None, format: Optional[str] = None,
              columns: Optional[Mapping[str, Any]] = None, sep: Optional[str] = None,
              time_format: Optional[str] = None, time_unit: Optional[str] = None,
              ambiguous: str = "raise", nonexistent: str = "raise",
              strict_ohlc: bool = False, label: str = "open", interval: Any = None,
              unterminated: str = "drop", instrument: Any = None) -> Bars:
    """Read OHLCV bars from a file, a list of files (concatenated), or a DataFrame.

    ``path_or_df``: a path (format from its suffix, see the module docs), a list of paths (each
    file's rows must follow the previous file's in time), a pandas or polars DataFrame, or a
    pyarrow Table. ``format``: "legacy", "csv", "parquet" or "dbn" overrides the suffix.
    ``tz``: time zone of naive timestamps (e.g. "America/Chicago"; required for them, and for
    the legacy format, which stores local wall-clock times); timestamps with a UTC offset or
    time zone are converted from their own. ``columns``: ``{"open": "Eröffnung", ...}`` maps
    vpoc's field names (timestamp, open, high, low, close, volume) to the source's columns;
    ``"timestamp"`` may map to a ``(date_column, time_column)`` pair; ``{"open": None}``: bars
    without open prices (``Bars.open`` is None; what ``from_bars`` does with a frame without one).
    The optional ``buy_volume`` / ``sell_volume`` fields (each bar's buy- and sell-aggressor
    volume, both or neither) are read from columns named so, or AskVolume / BidVolume
    (NinjaTrader / Sierra Chart exports), or mapped by ``columns=``; ``{"buy_volume": None,
    "sell_volume": None}`` ignores them. Checked as volumes, and ``buy + sell <= volume``.
    ``sep``: CSV separator (default: sniffed from the header among , ; tab |).
    ``time_format``: strftime format of text timestamps (default: ISO 8601, or
    ``YYYYMMDD HHMMSS`` when the first value looks like it). ``time_unit``: "s", "ms", "us" or
    "ns" for numeric epoch timestamps (required for them; they are UTC).
    ``ambiguous`` (local times repeated when DST ends): "raise" (default), "infer" (from the
    order of the rows), "earliest" or "latest". ``nonexistent`` (local times skipped when DST
    starts): "raise" (default), "shift_forward" or "shift_backward".
    ``strict_ohlc``: also require ``low <= open, close <= high``.
    ``label``: how the source stamps its bars, "open" (default) or "close"; ``interval``: the bar
    interval (seconds, a timedelta or "1min"; with label="close" and None it is inferred as the
    modal spacing, announced by a GuessedDefaultWarning). The returned ``Bars.timestamp`` is
    always the bar's OPEN time (a close stamp minus the interval, vpoc._time.bar_opens);
    ``Bars.label`` / ``Bars.interval`` (seconds) record what was used.
    ``unterminated``: the last line of a text file when no newline ends it, which may be cut
    short by a writer still at work: "drop" (default, with a DroppedRowsWarning naming it),
    "raise", or "keep" (only when it has every field and parses). In a DBN file the same holds
    for a last record cut short ("keep" cannot apply: ValueError).
    ``instrument``: DBN files only: the instrument_id (int) or symbol (str) to read when the
    files hold several (see the module docs). DBN bars are stamped at their open with the
    schema's interval: ``label`` must be "open" and ``interval``, if given, the schema's.
    ``Bars.symbol`` / ``Bars.tick_size`` come from DBN instrument definitions (None otherwise).
    Always checked, naming the file and line/row of the first offending row: well-formed
    fields, finite prices, ``high >= low``, finite volume ``>= 0``, non-decreasing timestamps.
    """
    check_label(label)
    interval_ns(interval)
    opts = _Options.make(tz, format, columns, sep, time_format, time_unit, ambiguous,
                         nonexistent, strict_ohlc, BAR_FIELDS, unterminated, instrument)
    cols, source, meta = _read(path_or_df, opts)
    if "interval" in meta:  # DBN bars: stamped at their open, interval from the schema
        ts, step = cols["timestamp"], _dbn_interval(meta.pop("interval"), label, interval, source)
    else:
        ts, step = _opens(cols["timestamp"], label, interval, source)
    opens = None if no_open(opts) else cols["open"]  # columns={"open": None}: bars without open prices
    warn_duplicate_bars(ts, [cols[k] for k in ("open", "high", "low", "close", "volume", "buy_volume",
                                               "sell_volume")
                             if k in cols and (k != "open" or opens is not None)], source)
    return Bars(timestamp=ts, open=opens, high=cols["high"], low=cols["low"],
                close=cols["close"], volume=cols["volume"], source=source, label=label,
                interval=None if step is None else step / 1e9, buy_volume=cols.get("buy_volume"),
                sell_volume=cols.get("sell_volume"), **meta)


def read_bars_unwarned(*args: Any, **kw: Any) -> Bars:
    """read_bars without its DuplicateRowsWarning: for vpoc.io.inspect, which reports duplicated
    rows in its evidence (``Inspection.duplicated_rows``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DuplicateRowsWarning)
        return read_bars(*args, **kw)


def _dbn_interval(schema_s: Optional[int], label: str, interval: Any,
                  source: str) -> Optional[int]:
    """The interval (ns) of DBN bars: the schema's; ``label`` must be "open" (Databento stamps
    bars at their start) and ``interval``, if given, the same."""
    if label != "open":
        raise ValueError(f"{source}: label={label!r}, but DBN OHLCV bars are stamped at the start "
                         "of their interval (ts_event); leave label='open'")
    given = interval_ns(interval)
    schema = None if schema_s is None else schema_s * 10**9
    if given is not None and schema is not None and given != schema:
        raise ValueError(f"{source}: interval={interval!r}, but the DBN schema's bars are "
                         f"{schema_s} s apart")
    return schema if schema is not None else given


def _opens(ts: np.ndarray, label: str, interval: Any, source: str) -> Tuple[np.ndarray, Any]:
    """Bar open times of ``ts`` stamped at ``label`` (vpoc._time.bar_opens), the interval used
    (ns or None); an inferred interval is announced (GuessedDefaultWarning)."""
    if label == "close" and interval is None and ts.shape[0]:
        step = infer_interval_ns(ts, f"{source}: timestamp")
        gaps = np.diff(np.unique(ts))
        share = float(np.mean(gaps == step)) if gaps.size else 1.0
        warnings.warn(f"{source}: bars are stamped at their close; the bar interval was inferred "
                      f"as {step / 1e9:g} s (the spacing of {share:.1%} of consecutive bars) and "
                      f"subtracted to give open times; pass interval= to set it",
                      GuessedDefaultWarning, stacklevel=user_stacklevel())
        return bar_opens(ts, "close", np.timedelta64(step, "ns"))
    if label == "close" and not ts.shape[0]:
        return ts, interval_ns(interval)
    return bar_opens(ts, label, interval)


def read_trades(path_or_df: Any, *, tz: Any = None, format: Optional[str] = None,
                columns: Optional[Mapping[str, Any]] = None, sep: Optional[str] = None,
                time_format: Optional[str] = None, time_unit: Optional[str] = None,
                ambiguous: str = "raise", nonexistent: str = "raise",
                unterminated: str = "drop", instrument: Any = None) -> Trades:
    """Read trades (timestamp, price, volume[, side]) from CSV, Parquet, DBN, a list of files or
    a DataFrame.

    Options as in :func:`read_bars`; field names are timestamp, price (also ``last``, ``px``)
    and volume (also ``size``, ``qty``, ``quantity``), and the optional ``side`` (the aggressor
    side: ``Trades.side`` int8 +1 buyer-initiated, -1 seller-initiated, 0 unknown; None when
    the source has no side). The legacy bar format does not apply. DBN files (trades, tbbo,
    mbp-1) always carry the side: Databento's 'B' (buy aggressor) is +1, 'A' (sell aggressor)
    -1, 'N' 0 (https://databento.com/docs/schemas/trades); ``instrument=`` as in read_bars.
    Checked: finite prices, finite volume ``>= 0``, valid sides, and non-decreasing timestamps,
    except in DBN files: Databento writes trades in ``ts_recv`` order, in which ``ts_event`` (the
    timestamp read) may step back, so they are sorted by ``ts_event`` (a stable sort: equal times
    keep the file order), announced by a ``vpoc.io.ReorderedRecordsWarning`` counting the trades
    moved and the largest step back; a DBN file (or list of files) whose ``ts_recv`` steps back is
    refused (rules in vpoc.io._dbn, "Order").
    """
    opts = _Options.make(tz, format, columns, sep, time_format, time_unit, ambiguous,
                         nonexistent, False, TRADE_FIELDS, unterminated, instrument)
    if opts.format == "legacy":
        raise ValueError("format='legacy' holds bars, not trades; use read_bars")
    cols, source, meta = _read(path_or_df, opts)
    return Trades(timestamp=cols["timestamp"], price=cols["price"], volume=cols["volume"],
                  source=source, side=cols.get("side"), **meta)


def _read(obj: Any, opts: _Options) -> Tuple[Dict[str, np.ndarray], str, Dict[str, Any]]:
    """(columns, source name, the source's own Bars / Trades attributes: DBN's symbol, ...)."""
    if isinstance(obj, (list, tuple)):
        if not obj:
            raise ValueError("path_or_df is an empty list; give at least one file")
        for k, item in enumerate(obj):
            if not isinstance(item, (str, os.PathLike)):
                raise TypeError(f"path_or_df[{k}] must be a path, got {type(item).__name__}")
        dbn = [opts.format == "dbn" or is_dbn_name(item) for item in obj]
        if any(dbn):
            if not all(dbn):
                k = dbn.index(False)
                raise ValueError(f"path_or_df[{k}] ({os.fspath(obj[k])}) is not a DBN file but "
                                 f"path_or_df[{dbn.index(True)}] is; read DBN files on their own")
            return read_dbn(list(obj), opts)
        _no_instrument(opts)
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
        if any("side" in p[0] for p in parts):  # a file without a side column: side unknown (0)
            merged["side"] = np.concatenate([
                p[0]["side"] if "side" in p[0] else np.zeros(len(p[0]["timestamp"]), np.int8)
                for p in parts])
        _warn_unsided(parts, "side" if "price" in opts.fields else "buy_volume")
        for f in ("buy_volume", "sell_volume"):  # bars: a file without them: side unknown (0, 0)
            if any(f in p[0] for p in parts):
                got = [p[0][f] if f in p[0] else np.zeros(len(p[0]["timestamp"]), np.int64)
                       for p in parts]
                kind = np.int64 if all(g.dtype.kind in "iu" for g in got) else np.float64
                merged[f] = np.concatenate([g.astype(kind, copy=False) for g in got])
        names = [str(os.fspath(p)) for p in obj]
        source = names[0] if len(names) == 1 else f"{names[0]} .. {names[-1]} ({len(names)} files)"
        return merged, source, {}
    if isinstance(obj, (str, os.PathLike)) or is_file_object(obj):
        if opts.format == "dbn" or is_dbn_name(obj):
            return read_dbn([obj], opts)
        source = TextSource(obj)  # a path must name a regular file (a FIFO could block)
        if opts.format is None and _infer_format(source) == "dbn":
            return read_dbn([source], opts)
        _no_instrument(opts)
        cols, where = _read_one(source, opts)
        return cols, where.source, {}
    _no_instrument(opts)
    cols, where = _read_one(obj, opts)
    return cols, where.source, {}


def _warn_unsided(parts: Any, field: str) -> None:
    """vpoc._side.warn_unsided on the files of a list (``field``: side, or the bars' buy_volume)."""
    warn_unsided([(where.source, len(cols["timestamp"]), float(np.sum(cols["volume"], dtype=np.float64)),
                   field in cols) for cols, where in parts], field == "side")


def _no_instrument(opts: _Options) -> None:
    if opts.instrument is not None:
        raise ValueError(f"instrument={opts.instrument!r} applies to DBN files (which may hold "
                         "several instruments); pass instrument=None")


def _read_one(obj: Any, opts: _Options) -> Tuple[Dict[str, np.ndarray], _Where]:
    """One source that is not DBN: a TextSource, a path, or a table."""
    pd = require("pandas", "vpoc.io.read_bars / read_trades", "io")

    if isinstance(obj, (str, os.PathLike, TextSource)) or is_file_object(obj):
        source = obj if isinstance(obj, TextSource) else TextSource(obj)
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
