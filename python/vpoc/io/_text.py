"""Legacy ``;`` text and CSV files (optionally .gz/.bz2/.xz) read into validated columns for vpoc.io.

Contract: every malformed line raises ValueError naming the file and line; the format is told from the
suffix or, for .csv and unknown suffixes, from the first line; files are parsed in pieces of
``_ROWS`` rows (Ctrl-C is answered between pieces), and the unterminated last line follows
``unterminated=``: "drop" (default; DroppedRowsWarning naming it), "raise" or "keep".
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import signal
import threading
import warnings
from dataclasses import replace
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .._warnings import DroppedRowsWarning, user_stacklevel
from ._columns import BAR_SIDE_ALIASES, SIDE_ALIASES, VOLUMES, _combine, _extract_part, _names, _norm, _resolve
from ._options import (_ALIASES, _COMPRESSION, _DATE_NAMES, _LEGACY_LINE, _LEGACY_TIME_FORMAT,
                       _LEGACY_TIME_RE, _PARSER_LINE_RE, _TIME_NAMES, _TRADE_VOLUME_ALIASES,
                       BAR_FIELDS, _Options, _Where)
from ._source import TextSource

__all__: list = []

_ROWS = 100_000  # rows parsed at a time: each piece takes a small fraction of a second
_DBN_MAGIC = (b"DBN", b"\x28\xb5\x2f\xfd")  # a DBN file, or a zstd frame (vpoc reads zstd DBN only)
_LEGACY_WHAT = "';'-separated fields (YYYYMMDD HHMMSS;o;h;l;c;v)"


def _split_compression(path: str) -> Tuple[str, str]:
    lower = path.lower()
    for ext in _COMPRESSION:
        if lower.endswith(ext):
            return path[: -len(ext)], ext
    return path, ""


def _infer_format(source: TextSource) -> str:
    base, _ = _split_compression(source.name)
    suffix = os.path.splitext(base)[1].lower()
    if suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix == ".txt":
        return "legacy"
    if source.data is not None and source.data.startswith(b"PAR1"):
        return "parquet"
    if source.head().startswith(_DBN_MAGIC):  # Databento DBN, plain or zstd-compressed
        return "dbn"
    looks_legacy = bool(_LEGACY_LINE.match(source.first_line()))
    if suffix in (".csv", ".tsv"):
        return "legacy" if looks_legacy else "csv"
    if looks_legacy:
        return "legacy"
    raise ValueError(f"cannot tell the format of {source.name!r} from its suffix {suffix!r}; pass "
                     "format='legacy', 'csv', 'parquet' or 'dbn'")


# --------------------------------------------------------------------------- file readers


def _parser_error(path: str, err: Exception, what: str) -> ValueError:
    m = _PARSER_LINE_RE.search(str(err))
    if m:
        expected, line, saw = m.groups()
        return ValueError(f"{path} line {line}: expected {expected} {what}, found {saw}")
    return ValueError(f"{path}: cannot parse the file: {err}")


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


class _NotNumeric(ValueError):
    """A field of a numeric column is not a number: the file is read again as text."""


def _parts(source: TextSource, kw: Dict[str, Any], dtype: Any, first_line: int, opts: _Options,
           mapping: Optional[Dict[str, Any]], what: str, check: Any = None) -> Tuple[list, Any]:
    """Each piece of the file converted (``_extract_part``) with its _Where; and the stream (its
    ``tail`` is the unterminated last line). ``dtype=str`` reads every field as text (blank lines
    dropped); otherwise a piece whose volume is not numeric raises _NotNumeric."""
    import pandas as pd

    parts: List[Tuple[Dict[str, np.ndarray], _Where]] = []
    line = first_line
    with source.open() as stream, _note_interrupts(stream):
        try:
            reader = pd.read_csv(io.BufferedReader(stream, 1 << 18), dtype=dtype, chunksize=_ROWS,
                                 **kw)
        except pd.errors.EmptyDataError:
            return parts, stream
        except BaseException as e:
            _reraise_cause(e, stream)
            raise
        while True:
            try:
                df = next(reader)
            except StopIteration:
                break
            except BaseException as e:
                _reraise_cause(e, stream)
                if not isinstance(e, (pd.errors.ParserError, ValueError)):
                    raise
                if isinstance(e, pd.errors.ParserError):
                    raise _parser_error(source.name, e, what) from None
                if dtype is str:  # a field of a float column is not a number
                    raise
                raise _NotNumeric(str(e)) from None
            n = len(df)
            if dtype is str:
                df, where = _drop_blank_lines(df, line, source.name)
                if check is not None:
                    check(df, where)
            else:
                if df[mapping["volume"] if mapping else "volume"].dtype.kind not in "iuf":
                    raise _NotNumeric("volume is not numeric")
                where = _Where(source.name, first_line=line)
            line += n
            parts.append((_extract_part(df, where, opts, mapping), where))
            if len(parts) == 1 and opts.time_format is None and opts.time_unit is None:
                opts = replace(opts, time_format=_text_format(df, mapping))
    return parts, stream


@contextlib.contextmanager
def _note_interrupts(stream: Any) -> Iterator[None]:
    """While a file is parsed, a Ctrl-C is also noted on ``stream.error``: the interpreter can raise
    it where the stream cannot catch it (at the entry of its read method), and pandas < 3 then
    reports only "Calling read(nbytes) on source failed", without the KeyboardInterrupt as cause.
    Only in the main thread and over Python's own SIGINT handler (a user's handler is left alone)."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        stream.error = KeyboardInterrupt()
        raise stream.error

    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _reraise_cause(err: BaseException, stream: Any) -> None:
    """pandas wraps an exception raised while it reads the stream in a ParserError ("Calling
    read(nbytes) on source failed"): raise the original (Ctrl-C, bad UTF-8, a truncated .gz)."""
    if stream.error is not None:
        raise stream.error from None
    cause: Any = err
    while cause is not None:
        if not isinstance(cause, Exception):  # KeyboardInterrupt, SystemExit
            raise cause from None
        cause = cause.__cause__ or cause.__context__


def _text_format(df: Any, mapping: Optional[Dict[str, Any]]) -> Optional[str]:
    """The time format the first row's text implies (the whole file is read with it)."""
    tcol = mapping["timestamp"] if mapping else "timestamp"
    if tcol is None or not len(df):
        return None
    if isinstance(tcol, tuple):
        first = f"{str(df[tcol[0]].iloc[0]).strip()} {str(df[tcol[1]].iloc[0]).strip()}"
    else:
        first = str(df[tcol].iloc[0]).strip()
    return _LEGACY_TIME_FORMAT if re.match(_LEGACY_TIME_RE, first) else "ISO8601"


def _read_pieces(source: TextSource, kw: Dict[str, Any], fast: Any, first_line: int,
                 opts: _Options, mapping: Optional[Dict[str, Any]], names: Sequence[str], what: str,
                 check: Any = None) -> Tuple[Dict[str, np.ndarray], _Where]:
    import pandas as pd

    popts = replace(opts, defer_tz=True)
    try:
        parts, stream = _parts(source, kw, fast, first_line, popts, mapping, what)
    except _NotNumeric:  # a field is not a number: read again as text to name the line
        parts, stream = _parts(source, kw, str, first_line, popts, mapping, what, check)
    tail = _tail(stream, source, kw, popts, mapping, names, sum(len(p[0]["timestamp"])
                                                               for p in parts), check)
    if tail is not None:
        parts.append(tail)
    if not parts:
        empty = pd.DataFrame({n: pd.Series([], dtype=str) for n in names})
        parts.append((_extract_part(empty, _Where(source.name, first_line), popts, mapping),
                      _Where(source.name, first_line)))
    if all(w.lines is None for _, w in parts):
        where = _Where(source.name, first_line=first_line)
    else:
        where = _Where(source.name, lines=np.concatenate([
            w.lines if w.lines is not None else
            np.arange(len(p["timestamp"]), dtype=np.int64) + w.first_line for p, w in parts]))
    return _combine([p for p, _ in parts], where, opts), where


def _tail(stream: Any, source: TextSource, kw: Dict[str, Any], opts: _Options,
          mapping: Optional[Dict[str, Any]], names: Sequence[str], rows: int,
          check: Any) -> Optional[Tuple[Dict[str, np.ndarray], _Where]]:
    """The unterminated last line per ``opts.unterminated``: None (no such line, or dropped with
    a DroppedRowsWarning), a ValueError ("raise"), or its converted row ("keep")."""
    import pandas as pd

    tail, line = stream.tail, stream.tail_line
    if not tail.strip() or (kw.get("header") == 0 and line == 1):
        return None  # nothing but blanks, or a CSV header with no rows
    where = f"{source.name} line {line}"
    try:
        text = tail.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{where}: byte {tail[e.start]:#04x} is not UTF-8 ({e.reason})") from None
    shown = text if len(text) <= 80 else text[:77] + "..."
    why = ("has no newline at its end: it may be a line cut short by a writer still at work "
           "(e.g. a volume of 21 where the writer was putting 218)")
    if opts.unterminated == "raise":
        raise ValueError(f"{where}: the last line {shown!r} {why}; pass unterminated='drop' to "
                         "leave it out, or unterminated='keep' when the file is complete")
    if opts.unterminated == "drop":
        share = 100.0 / (rows + 1)
        warnings.warn(f"{where}: left out the last line {shown!r} (1 of {rows + 1} rows, "
                      f"{share:.3g}%), which {why}; pass unterminated='keep' when the file is "
                      "complete, or unterminated='raise' to refuse such files",
                      DroppedRowsWarning, stacklevel=user_stacklevel())
        return None
    fields = next(csv.reader([text], delimiter=kw["sep"]))
    if len(fields) != len(names):
        raise ValueError(f"{where}: the last line (no newline at its end) has {len(fields)} "
                         f"fields, expected {len(names)}: {shown!r}")
    kw1 = {**kw, "header": None, "names": list(names)}
    df = pd.read_csv(io.BytesIO(tail + b"\n"), dtype=str, **kw1)
    w = _Where(source.name, lines=np.array([line], dtype=np.int64))
    if check is not None:
        check(df, w)
    return _extract_part(df, w, opts, mapping), w


def _check_legacy_fields(df: Any, where: _Where) -> None:
    for f in BAR_FIELDS:
        empty = (df[f].fillna("").str.strip() == "").to_numpy(dtype=bool)
        if empty.any():
            i = int(np.argmax(empty))
            raise ValueError(f"{where(i)}: field {f!r} is empty or missing (expected "
                             "'YYYYMMDD HHMMSS;open;high;low;close;volume')")


def _read_legacy(source: TextSource, opts: _Options) -> Tuple[Dict[str, np.ndarray], _Where]:
    import pandas as pd

    names = list(BAR_FIELDS)
    kw: Dict[str, Any] = dict(sep=";", header=None, names=names, index_col=False,
                              skip_blank_lines=False, keep_default_na=False, engine="c",
                              compression=None, encoding="utf-8", **_exact_floats(pd))
    if opts.tz is None:
        raise ValueError(f"{source.name}: the legacy format stores local wall-clock times; pass "
                         "tz= (e.g. tz='America/Chicago')")
    fast = {"timestamp": str, **{f: np.float64 for f in BAR_FIELDS[1:5]}}
    time_format = opts.time_format or _LEGACY_TIME_FORMAT
    legacy_opts = replace(opts, time_format=time_format, columns={})
    return _read_pieces(source, kw, fast, 1, legacy_opts, None, names, _LEGACY_WHAT,
                        _check_legacy_fields)


def _sniff_sep(header: str) -> str:
    counts = {c: header.count(c) for c in (",", ";", "\t", "|")}
    best = max(counts, key=lambda c: counts[c])
    return best if counts[best] else ","


def _check_duplicates(raw: Sequence[str], opts: _Options, path: str) -> None:
    """A field's column named twice in the header (``close,close``, or ``Close,close`` after case
    and punctuation are ignored) is refused: pandas would rename one and vpoc take the other."""
    known = {a for f in opts.fields for a in _ALIASES.get(f, ())} | set(_TRADE_VOLUME_ALIASES) \
        | set(_DATE_NAMES) | set(_TIME_NAMES) | (set(SIDE_ALIASES) if "price" in opts.fields
                                                 else {a for v in BAR_SIDE_ALIASES.values() for a in v})
    known |= {_norm(n) for v in opts.columns.values() if v is not None for n in _names(v)}
    seen: Dict[str, str] = {}
    for name in raw:
        key = _norm(name)
        if key in known and key in seen:
            same = "" if seen[key] == name else f" (as {seen[key]!r}, ignoring case and punctuation)"
            raise ValueError(f"{path} line 1: column {name!r} appears twice in the header{same}; "
                             "rename or remove one of them")
        seen.setdefault(key, name)


def _read_csv(source: TextSource, opts: _Options) -> Tuple[Dict[str, np.ndarray], _Where]:
    import pandas as pd

    first = source.first_line()
    sep = opts.sep or _sniff_sep(first)
    kw: Dict[str, Any] = dict(sep=sep, header=0, index_col=False, skip_blank_lines=False,
                              keep_default_na=False, engine="c", compression=None,
                              encoding="utf-8", **_exact_floats(pd))
    try:
        header = list(pd.read_csv(io.StringIO(first + "\n"), nrows=0, **{**kw, "encoding": None})
                      .columns)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{source.name} line 1: the CSV file is empty (no header line)") from None
    _check_duplicates(next(csv.reader([first.rstrip("\r")], delimiter=sep)), opts, source.name)
    mapping = _resolve(header, opts, source.name)
    if mapping["timestamp"] is None:
        raise ValueError(f"{source.name} line 1: no timestamp column (timestamp, datetime, ts, "
                         "ts_event, date + time) in the header; pass columns={'timestamp': name}")
    text_cols = set(_names(mapping["timestamp"]))
    numeric = {c: np.float64 for f, c in mapping.items()
               if f not in ("timestamp", "side") + VOLUMES and c is not None}
    dtypes = {c: (np.float64 if c in numeric else str) for c in header}
    for f in VOLUMES:  # integers stay integers
        if mapping.get(f) is not None:
            dtypes.pop(mapping[f], None)
    for c in text_cols:
        dtypes[c] = str
    return _read_pieces(source, kw, dtypes, 2, opts, mapping, header,
                        f"{sep!r}-separated fields (one per header column)")
