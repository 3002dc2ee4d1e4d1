"""Legacy ``;`` text and CSV files (optionally .gz/.bz2/.xz) read into validated columns for vpoc.io.

Contract: every malformed line raises ValueError naming the file and line; the format is told from the
suffix or, for .csv and unknown suffixes, from the first line.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Dict, Tuple

import numpy as np

from ._columns import _extract, _names, _resolve
from ._options import (_COMPRESSION, _LEGACY_LINE, _LEGACY_TIME_FORMAT, _PARSER_LINE_RE, BAR_FIELDS,
                       _Options, _Where)

__all__: list = []


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
