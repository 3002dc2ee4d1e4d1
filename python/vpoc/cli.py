"""The ``vpoc`` command line: ``profile``, ``features``, ``info``, ``bench`` and ``demo``.

Contract: exit 0 on success, 2 on bad arguments or bad input, 1 on runtime errors, 130 on Ctrl-C;
each error is one ``vpoc: error: ...`` line on stderr (a traceback only with ``--traceback``).

``vpoc profile IN... --tick-size 0.25 --out OUT.parquet`` reads bar (or ``--kind trades``) files
with ``vpoc.io``, splits them into sessions with ``vpoc.sessions`` (``--session globex|rth|daily``)
and writes one row per session (the columns of :func:`profile_table`). Files are streamed one at a
time in the order given (they must be in time order); a session that continues into the next file
is carried over, so results do not depend on how the data is split into files. A progress bar
(tqdm, on stderr) is shown when stderr is a terminal and the run is long (``--progress``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from . import _api, synth
from ._files import atomic_write
from ._optional import hint, require
from ._version import __version__

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["PROFILE_COLUMNS", "build_parser", "empty_profile_table", "main", "parse_size", "profile_table"]

#: Exit codes (argparse's convention for usage errors).
EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

#: Columns of ``vpoc profile`` output and of ``vpoc.dask`` results, in order (``session`` is the
#: index in ``vpoc.dask`` results and the first column in files).
PROFILE_COLUMNS: Tuple[str, ...] = (
    "session", "start", "end", "count", "poc", "vah", "val", "low", "high",
    "total_volume", "va_volume", "poc_row", "vah_row", "val_row", "low_row", "n_rows",
)
_PER_SESSION = ("poc", "vah", "val", "total_volume", "va_volume",
                "poc_row", "vah_row", "val_row", "low_row", "n_rows")

SESSION_KINDS = ("globex", "rth", "daily")
OUTPUT_SUFFIXES = (".parquet", ".pq", ".csv")
DEFAULT_CHUNK_ROWS = 250_000
DEFAULT_PROGRESS_MIN_ROWS = 100_000
_SIZE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20,
               "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
               "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}


class UsageError(Exception):
    """A problem the user can fix (bad argument, unreadable or invalid input): exit code 2."""


# --------------------------------------------------------------------------- helpers


def parse_size(text: str) -> int:
    """Bytes from ``"268435456"``, ``"256M"``, ``"1.5GiB"`` (binary units K/M/G/T, case-insensitive)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", str(text))
    unit = m.group(2).upper() if m else ""
    if m is None or unit not in _SIZE_UNITS:
        raise ValueError(f"expected a size such as 268435456, 256M or 2G, got {text!r}")
    value = int(float(m.group(1)) * _SIZE_UNITS[unit])
    if value < 1:
        raise ValueError(f"expected a size of at least 1 byte, got {text!r}")
    return value


def _size_arg(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def _nonneg_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


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


# --------------------------------------------------------------------------- streaming input


@dataclass
class _Rows:
    """Rows of one or more input files: int64 ns UTC ``timestamp``, value columns, source file."""

    timestamp: np.ndarray
    values: Dict[str, np.ndarray]
    source: np.ndarray  # int32 index into the list of inputs, per row

    def __len__(self) -> int:
        return int(self.timestamp.shape[0])

    def take(self, index: Optional[np.ndarray]) -> "_Rows":
        if index is None:
            return self
        return _Rows(self.timestamp[index], {k: v[index] for k, v in self.values.items()},
                     self.source[index])

    def slice(self, a: int, b: int) -> "_Rows":
        return _Rows(self.timestamp[a:b], {k: v[a:b] for k, v in self.values.items()},
                     self.source[a:b])

    @staticmethod
    def concat(a: Optional["_Rows"], b: "_Rows") -> "_Rows":
        if a is None or len(a) == 0:
            return b
        if len(b) == 0:
            return a
        values = {}
        for k in b.values:
            x, y = a.values[k], b.values[k]
            dtype = np.result_type(x.dtype, y.dtype)
            values[k] = np.concatenate([x.astype(dtype, copy=False), y.astype(dtype, copy=False)])
        return _Rows(np.concatenate([a.timestamp, b.timestamp]), values,
                     np.concatenate([a.source, b.source]))


_BAR_FIELDS = ("open", "high", "low", "close", "volume")
_TRADE_FIELDS = ("price", "volume")


@dataclass
class _Chunk:
    """Whole sessions ready to profile: rows, CSR offsets into them, and their labels."""

    rows: _Rows
    offsets: np.ndarray
    labels: np.ndarray
    n_input: int  # input rows (before session filtering) this chunk accounts for, for progress


def _read(path: str, index: int, args: argparse.Namespace) -> _Rows:
    from . import io as vio  # lazily: vpoc.io needs pandas / pyarrow

    reader = vio.read_trades if args.kind == "trades" else vio.read_bars
    try:
        data = reader(path, tz=args.tz, format=args.format, time_unit=args.time_unit)
    except (OSError, ValueError, TypeError, KeyError) as e:
        detail = e.strerror if isinstance(e, OSError) and e.strerror else str(e).strip() or type(e).__name__
        detail = re.sub(r"time_unit=('\w+')?", lambda m: "--time-unit" + (
            " " + m.group(1).strip("'") if m.group(1) else ""), detail)  # the library's words, as flags
        raise UsageError(detail if path in detail else f"{path}: {detail}") from e
    fields = _TRADE_FIELDS if args.kind == "trades" else _BAR_FIELDS
    ts = np.asarray(data.timestamp)
    ts = np.ascontiguousarray(ts.astype("datetime64[ns]").view(np.int64) if ts.dtype.kind == "M"
                              else ts.astype(np.int64, copy=False))
    values = {k: np.asarray(getattr(data, k)) for k in fields}
    return _Rows(ts, values, np.full(ts.shape[0], index, dtype=np.int32))


def _fmt_ts(ns: int) -> str:
    return str(np.datetime64(int(ns), "ns").astype("datetime64[s]")).replace("T", " ") + " UTC"


def _session_fn(args: argparse.Namespace) -> Callable[[np.ndarray], Any]:
    from . import sessions as vs  # lazily: needs the calendar packages

    if args.session == "globex":
        return vs.globex
    if args.session == "rth":
        return lambda ts: vs.rth(ts, start=args.rth_start, end=args.rth_end, tz=args.session_tz)
    return lambda ts: vs.daily(ts, tz=args.session_tz)


def _split_sessions(rows: _Rows, fn: Callable[[np.ndarray], Any]) -> Tuple[_Rows, np.ndarray, np.ndarray]:
    """The rows kept by the session rule, CSR offsets of its non-empty sessions, their labels."""
    try:
        sess = fn(rows.timestamp)
    except (ValueError, TypeError) as e:
        raise UsageError(f"sessions: {e}") from e
    kept = rows.take(None if sess.index is None else np.asarray(sess.index, dtype=np.int64))
    offsets = np.asarray(sess.offsets, dtype=np.int64)
    labels = np.asarray(sess.labels)
    nonempty = np.diff(offsets) > 0
    if not nonempty.all():  # sessions without rows are not reported
        offsets = np.concatenate([offsets[:1], offsets[1:][nonempty]])
        labels = labels[nonempty]
    return kept, offsets, labels


def _chunks(paths: Sequence[str], args: argparse.Namespace,
            on_read: Callable[[int, int], None]) -> Iterator[_Chunk]:
    """Whole sessions, file by file, in groups of about ``args.chunk_rows`` rows.

    The last session read so far is held back until the next file shows whether it continues;
    ``on_read(file_index, rows)`` is called after each file is read.
    """
    fn = _session_fn(args)
    carry: Optional[_Rows] = None
    prev_end: Optional[int] = None
    for fi, path in enumerate(paths):
        data = _read(path, fi, args)
        on_read(fi, len(data))
        if len(data) and prev_end is not None and data.timestamp[0] < prev_end:
            raise UsageError(f"{path} starts at {_fmt_ts(data.timestamp[0])}, before the end of "
                             f"{paths[fi - 1]} ({_fmt_ts(prev_end)}); give the inputs in time order")
        if len(data):
            prev_end = int(data.timestamp[-1])
        rows, offsets, labels = _split_sessions(_Rows.concat(carry, data), fn)
        last = fi == len(paths) - 1
        S = labels.shape[0]
        done = S if last else max(S - 1, 0)  # the last session may continue in the next file
        carry = None if last or S == 0 else rows.slice(int(offsets[done]), len(rows))
        n_input = len(data)
        total_rows = int(offsets[done]) if done else 0
        s = 0
        accounted = 0
        if done == 0:
            yield _Chunk(rows.slice(0, 0), np.zeros(1, dtype=np.int64), labels[:0], n_input)
            continue
        while s < done:
            e = int(np.searchsorted(offsets, offsets[s] + args.chunk_rows, side="right")) - 1
            e = min(max(e, s + 1), done)
            a, b = int(offsets[s]), int(offsets[e])
            share = n_input - accounted if e == done else (n_input * b) // max(total_rows, 1) - accounted
            accounted += share
            yield _Chunk(rows.slice(a, b), offsets[s:e + 1] - a, labels[s:e], share)
            s = e


_INDEX_RE = re.compile(r"\[(\d+)\]|\b(?:bar|trade|row) (\d+)")


def _locate(e: Exception, chunk: _Chunk, paths: Sequence[str]) -> str:
    """The engine's message with the file and time of the row it names, for a shell user."""
    msg = str(e)
    m = _INDEX_RE.search(msg)
    if m is not None:
        i = int(m.group(1) or m.group(2))
        if 0 <= i < len(chunk.rows):
            return f"{paths[int(chunk.rows.source[i])]}: row at {_fmt_ts(chunk.rows.timestamp[i])}: {msg}"
    files = sorted({paths[int(j)] for j in np.unique(chunk.rows.source)})
    return f"{', '.join(files) or paths[0]}: {msg}"


class _Progress:
    """A tqdm bar over input rows on stderr, or nothing.

    ``mode``: "always", "never" or "auto" (a bar only when stderr is a terminal and there are
    several inputs or an input of at least ``min_rows`` rows). The total is exact once every input
    is read; before that it is extrapolated from the bytes per row of the inputs read so far.
    """

    def __init__(self, mode: str, paths: Sequence[str], min_rows: int, desc: str) -> None:
        self.mode, self.paths, self.min_rows, self.desc = mode, list(paths), min_rows, desc
        self.sizes = [_file_size(p) for p in self.paths]
        self.rows_read = 0
        self.bar: Any = None
        self.tty = sys.stderr.isatty()

    def _want(self, rows: int) -> bool:
        if self.mode == "always":
            return True
        if self.mode == "never" or not self.tty:
            return False
        return len(self.paths) > 1 or rows >= self.min_rows

    def on_read(self, fi: int, rows: int) -> None:
        self.rows_read += rows
        read_bytes = sum(self.sizes[:fi + 1])
        rest = sum(self.sizes[fi + 1:])
        estimate = self.rows_read + (int(rest * self.rows_read / read_bytes) if read_bytes else 0)
        if self.bar is None and self._want(rows):
            try:
                from tqdm import tqdm
            except ImportError:
                if self.mode == "always":
                    raise UsageError(f"--progress always needs tqdm: {hint('tqdm', 'cli')}") from None
                self.mode = "never"
                return
            try:  # a terminal that reports no size gets 80x24, else tqdm prints nothing
                sized = os.get_terminal_size(sys.stderr.fileno()).columns > 0
            except OSError:
                sized = False
            self.bar = tqdm(total=estimate, desc=self.desc, unit="rows", unit_scale=True,
                            file=sys.stderr, dynamic_ncols=sized, ncols=None if sized else 80,
                            nrows=None if sized else 24, mininterval=0.2)
        if self.bar is not None:
            self.bar.total = max(estimate, self.bar.n)
            self.bar.set_postfix_str(f"file {fi + 1}/{len(self.paths)}", refresh=False)
            self.bar.refresh()

    def update(self, rows: int) -> None:
        if self.bar is not None and rows:
            self.bar.update(rows)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _check_inputs(paths: Sequence[str]) -> None:
    for p in paths:
        if not os.path.exists(p):
            raise UsageError(f"input not found: {p}")
        if os.path.isdir(p):
            raise UsageError(f"input is a directory, not a file: {p} (pass its files, e.g. {p}/*.csv)")


def _check_output(out: Optional[str]) -> None:
    if out is None or out == "-":
        return
    if os.path.isdir(out):
        raise UsageError(f"--out is a directory: {out}")
    if not out.lower().endswith(OUTPUT_SUFFIXES):
        raise UsageError(f"--out must end with {', '.join(OUTPUT_SUFFIXES)} (or be - for CSV on "
                         f"stdout), got {out!r}")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise UsageError(f"--out: directory does not exist: {parent}")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"--out: directory is not writable: {parent}")


def _write(df: "pd.DataFrame", out: Optional[str]) -> None:
    """CSV on stdout, or a .csv / .parquet file written whole (vpoc._files.atomic_write: a
    fresh temporary file, then renamed; the old file stays as it was when writing fails)."""
    if out is None or out == "-":
        df.to_csv(sys.stdout, index=False)
        sys.stdout.flush()
        return
    with atomic_write(out) as fh:
        if out.lower().endswith(".csv"):
            df.to_csv(fh, index=False)
        else:
            df.to_parquet(fh, index=False)


def _engine_options(args: argparse.Namespace) -> Dict[str, Any]:
    return dict(tick_size=args.tick_size, ticks_per_row=args.ticks_per_row,
                value_area=args.value_area, va_method=args.va, poc_tie=args.poc_tie,
                device=args.device, threads=args.threads, max_rows=args.max_rows,
                memory_budget=args.memory_budget)


_FLAGS = {"tick_size": "--tick-size", "ticks_per_row": "--ticks-per-row", "value_area": "--value-area",
          "va_method": "--va", "poc_tie": "--poc-tie", "max_rows": "--max-rows", "device": "--device",
          "memory_budget": "--memory-budget", "threads": "--threads", "distribute": "--distribute"}
_FLAG_RE = re.compile(r"\b(" + "|".join(_FLAGS) + r")\b")


def _check_options(args: argparse.Namespace) -> None:
    """The engine's checks of the options, on no data, before any file is read."""
    empty = np.zeros(0)
    try:
        if args.kind == "trades":
            _api.from_trades(empty, empty, **_engine_options(args))
        else:
            _api.from_bars(empty, empty, empty, empty, distribute=args.distribute, **_engine_options(args))
    except (ValueError, TypeError) as e:
        raise UsageError(_FLAG_RE.sub(lambda m: _FLAGS[m.group(1)], str(e))) from e
    try:
        _session_fn(args)(np.zeros(0, dtype=np.int64))
    except (ValueError, TypeError) as e:
        raise UsageError(f"--session {args.session}: {e}") from e


def _profile_chunk(chunk: _Chunk, args: argparse.Namespace) -> Any:
    v = chunk.rows.values
    opts = _engine_options(args)
    if args.kind == "trades":
        return _api.from_trades(v["price"], v["volume"], offsets=chunk.offsets, **opts)
    return _api.from_bars(v["high"], v["low"], v["close"], v["volume"], open=v["open"],
                          offsets=chunk.offsets, distribute=args.distribute, **opts)


# --------------------------------------------------------------------------- commands


def _require_packages(args: argparse.Namespace, command: str) -> None:
    """The optional packages ``command`` needs with these options, checked before any work: a
    missing one is one error line naming the extra (exit 1), not a failure halfway through."""
    require("pandas", f"vpoc {command}", "cli")
    if args.session in ("globex", "rth"):  # their trading calendar
        require("pandas_market_calendars", f"vpoc {command} --session {args.session}", "cli",
                alternative="or use --session daily")
    parquet = (".parquet", ".pq")
    for path in [*args.inputs, args.out or ""]:
        if path.lower().endswith(parquet):
            require("pyarrow", f"vpoc {command} with Parquet files ({path})", "cli")


def _cmd_profile(args: argparse.Namespace) -> int:
    _check_inputs(args.inputs)
    _check_output(args.out)
    _require_packages(args, "profile")
    _check_options(args)
    import pandas as pd
    progress = _Progress(args.progress, args.inputs, args.progress_min_rows, "vpoc profile")
    tables: List["pd.DataFrame"] = []
    try:
        for chunk in _chunks(args.inputs, args, progress.on_read):
            if chunk.labels.shape[0]:
                try:
                    prof = _profile_chunk(chunk, args)
                except (ValueError, TypeError) as e:
                    raise UsageError(_locate(e, chunk, args.inputs)) from e
                tables.append(profile_table(prof, chunk.labels, chunk.offsets, chunk.rows.timestamp))
            progress.update(chunk.n_input)
    finally:
        progress.close()
    df = pd.concat(tables, ignore_index=True) if tables else empty_profile_table()
    _write(df, args.out)
    return EXIT_OK


def _cmd_features(args: argparse.Namespace) -> int:
    from .features import session_features

    if args.kind != "bars":
        raise UsageError("vpoc features needs bars (--kind bars)")
    _check_inputs(args.inputs)
    _check_output(args.out)
    _require_packages(args, "features")
    _check_options(args)
    progress = _Progress(args.progress, args.inputs, args.progress_min_rows, "vpoc features")
    parts: List[_Chunk] = []
    try:
        for chunk in _chunks(args.inputs, args, progress.on_read):
            parts.append(chunk)
            progress.update(chunk.n_input)
    finally:
        progress.close()
    parts = [c for c in parts if c.labels.shape[0]]
    if not parts:
        raise UsageError(f"no sessions in {', '.join(args.inputs)} (session rule {args.session!r})")
    rows = _Rows(np.concatenate([c.rows.timestamp for c in parts]),
                 {k: np.concatenate([c.rows.values[k] for c in parts]) for k in parts[0].rows.values},
                 np.concatenate([c.rows.source for c in parts]))
    bases = np.cumsum([0] + [len(c.rows) for c in parts[:-1]])
    offs = np.concatenate([np.zeros(1, dtype=np.int64)] + [c.offsets[1:] + b for c, b in zip(parts, bases)])
    labels = np.concatenate([c.labels for c in parts])
    v = rows.values
    chunk = _Chunk(rows, offs, labels, 0)
    try:
        table = session_features(v["high"], v["low"], v["close"], v["volume"], open=v["open"],
                                 timestamp=rows.timestamp, offsets=offs, tick_size=args.tick_size,
                                 ticks_per_row=args.ticks_per_row, distribute=args.distribute,
                                 value_area=args.value_area, va_method=args.va,
                                 poc_tie=args.poc_tie, tz=args.session_tz, rth_start=args.rth_start,
                                 device=args.device, threads=args.threads)
    except (ValueError, TypeError) as e:
        raise UsageError(_locate(e, chunk, args.inputs)) from e
    df = table.to_pandas().reset_index(drop=True)  # its index is 0..S-1: use the session labels
    df.insert(0, "session", labels)
    _write(df, args.out)
    return EXIT_OK


def _package_version(name: str) -> Optional[str]:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _gib(n: Optional[int]) -> str:
    return "unknown" if n is None else f"{n / (1 << 30):.1f} GiB"


def _host_memory() -> Tuple[Optional[int], Optional[int]]:
    """(total, available) bytes of host memory, None where the OS does not say."""
    total = avail = None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
    except OSError:
        pass
    return total, avail


def _gpu_devices() -> List[Dict[str, Any]]:
    """vpoc's GPUs with name and memory (memory through torch when it is installed)."""
    from . import _core

    if _core.gpu_backend() == "none":
        return []
    count = int(_core.gpu_device_count())
    out: List[Dict[str, Any]] = [{"device": f"cuda:{i}", "name": None, "total_bytes": None,
                                  "free_bytes": None} for i in range(count)]
    try:
        import torch

        if torch.cuda.is_available() and torch.cuda.device_count() == count:
            for i, d in enumerate(out):
                d["name"] = torch.cuda.get_device_name(i)
                free, total = torch.cuda.mem_get_info(i)
                d["total_bytes"], d["free_bytes"] = int(total), int(free)
    except ImportError:
        pass
    return out


def _cmd_info(args: argparse.Namespace) -> int:
    from . import _core

    total, avail = _host_memory()
    info: Dict[str, Any] = {
        "vpoc": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "backends": _api.backends(),
        "gpu_backend": _core.gpu_backend(),
        "cpu": {"device": "cpu", "cores": os.cpu_count(), "total_bytes": total, "available_bytes": avail},
        "gpus": _gpu_devices(),
        "packages": {name: _package_version(name) for name in
                     ("numpy", "pandas", "pyarrow", "tqdm", "torch", "dask", "distributed")},
    }
    if args.json:
        print(json.dumps(info, indent=2))
        return EXIT_OK
    print(f"vpoc {info['vpoc']} (python {info['python']}, {info['platform']})")
    print(f"backends: {', '.join(info['backends'])} (GPU backend: {info['gpu_backend']})")
    print("devices:")
    cpu = info["cpu"]
    print(f"  cpu      {cpu['cores']} cores, memory {_gib(total)} total, {_gib(avail)} available")
    for d in info["gpus"]:
        print(f"  {d['device']:<8} {d['name'] or 'GPU'}, memory {_gib(d['total_bytes'])} total, "
              f"{_gib(d['free_bytes'])} free")
    if info["gpu_backend"] != "none" and not info["gpus"]:
        print("  (no GPU visible to this process)")
    print("packages: " + ", ".join(f"{k} {v or '-'}" for k, v in info["packages"].items()))
    return EXIT_OK


def _cmd_doctor(args: argparse.Namespace) -> int:
    from . import _doctor

    return _doctor.main(json_output=args.json, gpu=not args.no_gpu_tests)


def _best_of(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm-up (thread pool, page faults, GPU workspace)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _cmd_bench(args: argparse.Namespace) -> int:
    sessions = args.sessions if args.sessions is not None else (1014 if args.full else 100)
    trades = args.trades if args.trades is not None else (50_000_000 if args.full else 2_000_000)
    t0 = time.perf_counter()
    bars = synth.es_bars(sessions, args.bars, seed=0)
    ticks = synth.es_trades(trades, max(sessions, 1), seed=0)
    t_data = time.perf_counter() - t0
    common = dict(tick_size=synth.ES_TICK_SIZE, device=args.device, threads=args.threads,
                  memory_budget=args.memory_budget)
    workloads: List[Tuple[str, int, Callable[[], Any]]] = [
        ("bars_uniform", len(bars), lambda: _api.from_bars(
            bars.high, bars.low, bars.close, bars.volume, offsets=bars.offsets,
            distribute="uniform", **common)),
        ("bars_close", len(bars), lambda: _api.from_bars(
            bars.high, bars.low, bars.close, bars.volume, offsets=bars.offsets,
            distribute="close", **common)),
        ("trades", len(ticks), lambda: _api.from_trades(ticks.price, ticks.volume,
                                                        offsets=ticks.offsets, **common)),
    ]
    results = []
    for name, n, fn in workloads:
        best = _best_of(fn, args.repeat)
        results.append({"workload": name, "rows": n, "sessions": int(sessions) if name != "trades"
                        else int(ticks.n_sessions), "best_s": best,
                        "rows_per_s": n / best if best > 0 else float("inf")})
    on_cpu = args.device == "cpu"
    report = {"vpoc": __version__, "device": args.device,
              "threads": (args.threads or os.cpu_count()) if on_cpu else None,
              "repeat": args.repeat, "data_s": t_data, "results": results}
    if args.json:
        print(json.dumps(report, indent=2))
        return EXIT_OK
    where = f"cpu, {report['threads']} threads" if on_cpu else f"{args.device}, host inputs: copies included"
    print(f"vpoc {__version__} bench ({where}; best of {args.repeat} after a warm-up; synthetic ES "
          f"data made in {t_data:.2f} s)")
    print(f"{'workload':<14} {'rows':>12} {'sessions':>9} {'best ms':>10} {'M rows/s':>10}")
    for r in results:
        print(f"{r['workload']:<14} {r['rows']:>12,} {r['sessions']:>9} {r['best_s'] * 1e3:>10.2f} "
              f"{r['rows_per_s'] / 1e6:>10.1f}")
    return EXIT_OK


def _cmd_demo(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    bars = synth.es_bars(n_sessions=args.sessions, bars_per_session=args.bars, seed=args.seed)
    t_data = time.perf_counter() - t0
    t0 = time.perf_counter()
    prof = _api.from_bars(bars.high, bars.low, bars.close, bars.volume, open=bars.open,
                          offsets=bars.offsets, tick_size=0.25, distribute=args.distribute,
                          va_method=args.va, device=args.device, threads=args.threads,
                          memory_budget=args.memory_budget)
    t_run = time.perf_counter() - t0
    prof = prof.cpu()
    print(f"vpoc {__version__} demo: {prof.n_sessions} synthetic ES sessions, {len(bars):,} one-minute "
          f"bars ({t_data:.2f} s to generate)")
    print(f"backend: {args.device} (compiled: {', '.join(_api.backends())}); distribute="
          f"{args.distribute!r}, va_method={args.va!r}, tick_size=0.25")
    print(f"profiles: {prof.volume.shape[0]:,} price rows in {t_run * 1e3:.1f} ms "
          f"({len(bars) / max(t_run, 1e-9) / 1e6:.1f} M bars/s)")
    labels = bars.session_labels
    print(f"{'session':>10} {'POC':>10} {'VAH':>10} {'VAL':>10} {'volume':>12}")
    for s in range(min(args.show, prof.n_sessions)):
        print(f"{labels[s]:>10} {prof.poc[s]:>10.2f} {prof.vah[s]:>10.2f} {prof.val[s]:>10.2f} "
              f"{prof.total_volume[s]:>12,.0f}")
    return EXIT_OK


# --------------------------------------------------------------------------- parser


def _add_device(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="cpu",
                   help="cpu (default), cuda, cuda:N or auto (a GPU when one is built and present)")
    p.add_argument("--memory-budget", type=_size_arg, default=_api.DEFAULT_MEMORY_BUDGET,
                   metavar="SIZE", help="GPU scratch + staging cap, e.g. 256M (default) or 2G")
    p.add_argument("--threads", type=_positive_int, default=None,
                   help="CPU worker threads (default: all cores; results do not depend on it)")


def _add_profile_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="IN",
                   help="input files in time order: legacy 'YYYYMMDD HHMMSS;o;h;l;c;v' text, .csv or .parquet")
    p.add_argument("--out", "-o", default=None, metavar="OUT",
                   help=f"output file ({', '.join(OUTPUT_SUFFIXES)}); default or '-': CSV on stdout")
    p.add_argument("--kind", choices=("bars", "trades"), default="bars",
                   help="inputs are OHLCV bars (default) or trades (timestamp, price, volume)")
    p.add_argument("--format", default=None, help="input format when the file name does not say "
                   "(legacy, csv, parquet; passed to vpoc.io)")
    p.add_argument("--tz", default=None, help="time zone of timezone-naive timestamps, e.g. America/Chicago")
    p.add_argument("--time-unit", choices=("s", "ms", "us", "ns"), default=None,
                   help="unit of integer epoch timestamps in the input (UTC); required for them")
    p.add_argument("--tick-size", type=float, required=True, help="price tick, e.g. 0.25 for ES")
    p.add_argument("--ticks-per-row", type=_positive_int, default=1, help="ticks per profile row (default 1)")
    p.add_argument("--session", choices=SESSION_KINDS, default="globex",
                   help="globex: CME 17:00-16:00 Chicago, labelled by trading date (default); rth: "
                        "--rth-start..--rth-end only; daily: calendar days in --session-tz")
    p.add_argument("--session-tz", default="America/Chicago", help="time zone of rth/daily sessions")
    p.add_argument("--rth-start", default="08:30", help="regular session start (default 08:30)")
    p.add_argument("--rth-end", default="15:15", help="regular session end (default 15:15)")
    p.add_argument("--distribute", choices=("uniform", "close", "hlc3", "legacy"), default="uniform",
                   help="how a bar's volume goes on the ladder (default uniform over its ticks)")
    p.add_argument("--va", choices=("cbot", "single", "greedy"), default="cbot",
                   help="value-area method (default cbot: two rows at a time)")
    p.add_argument("--value-area", type=float, default=0.70, help="value-area fraction (default 0.70)")
    p.add_argument("--poc-tie", choices=("center", "low", "high"), default="center",
                   help="which of several equal-volume rows is the POC (default center)")
    p.add_argument("--max-rows", type=_positive_int, default=1_000_000,
                   help="reject a session wider than this many rows (default 1000000)")
    _add_device(p)
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="progress bar on stderr: auto (default) shows it when stderr is a terminal "
                        "and there are several inputs or one of at least --progress-min-rows rows")
    p.add_argument("--progress-min-rows", type=_nonneg_int, default=DEFAULT_PROGRESS_MIN_ROWS,
                   help=f"rows that make a single input long enough for a bar (default {DEFAULT_PROGRESS_MIN_ROWS})")
    p.add_argument("--chunk-rows", type=_positive_int, default=DEFAULT_CHUNK_ROWS,
                   help=f"rows of whole sessions profiled per engine call (default {DEFAULT_CHUNK_ROWS})")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vpoc", description="Volume profiles (POC, value area) for futures sessions.",
        epilog="exit codes: 0 ok, 2 bad arguments or input, 1 runtime error, 130 interrupted")
    parser.add_argument("--version", action="version", version=f"vpoc {__version__}")
    parser.add_argument("--traceback", action="store_true", help="show Python tracebacks of errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    prof = sub.add_parser("profile", help="per-session volume profiles of bar or trade files",
                          description="One row per session: " + ", ".join(PROFILE_COLUMNS) + ".")
    _add_profile_options(prof)
    prof.set_defaults(run=_cmd_profile)

    feat = sub.add_parser("features", help="per-session feature table (vpoc.session_features)")
    _add_profile_options(feat)
    feat.set_defaults(run=_cmd_features)

    info = sub.add_parser("info", help="version, backends, devices and their memory")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.set_defaults(run=_cmd_info)

    doctor = sub.add_parser("doctor", help="check this install: build, runtime, driver, torch, GPUs; "
                            "GPU-vs-CPU, DLPack and allocation self-tests",
                            description="Prints the build and what it runs on, then runs small GPU "
                            "self-tests. Exit 0: all checks passed; 1: a check failed (each FAIL line "
                            "says what to do).")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.add_argument("--no-gpu-tests", action="store_true",
                        help="report only; skip the GPU-vs-CPU, DLPack and allocation checks")
    doctor.set_defaults(run=_cmd_doctor)

    bench = sub.add_parser("bench", help="quick benchmark on synthetic ES data")
    bench.add_argument("--full", action="store_true",
                       help="the reference sizes: 1014 sessions x 1380 bars, 50 M trades")
    bench.add_argument("--sessions", type=_nonneg_int, default=None, help="sessions (default 100, --full 1014)")
    bench.add_argument("--bars", type=_nonneg_int, default=1380, help="bars per session (default 1380)")
    bench.add_argument("--trades", type=_nonneg_int, default=None,
                       help="trades (default 2000000, --full 50000000)")
    bench.add_argument("--repeat", type=_positive_int, default=3, help="timed runs per workload (best is shown)")
    bench.add_argument("--json", action="store_true", help="machine-readable output")
    _add_device(bench)
    bench.set_defaults(run=_cmd_bench)

    demo = sub.add_parser("demo", help="profile 1014 synthetic ES sessions and print a summary")
    demo.add_argument("--sessions", type=_nonneg_int, default=1014)
    demo.add_argument("--bars", type=_nonneg_int, default=1380, help="one-minute bars per session")
    demo.add_argument("--distribute", default="uniform", choices=("uniform", "close", "hlc3", "legacy"))
    demo.add_argument("--va", default="cbot", choices=("cbot", "single", "greedy"))
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--show", type=_nonneg_int, default=5, help="sessions to print")
    _add_device(demo)
    demo.set_defaults(run=_cmd_demo)
    return parser


def _error(msg: str) -> None:
    print(f"vpoc: error: {' '.join(str(msg).split())}", file=sys.stderr)


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line; returns the exit code (the ``vpoc`` console script exits with it)."""
    parser = build_parser()
    args = parser.parse_args(argv)  # usage errors exit 2 here (argparse)
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `vpoc profile ... | head`: stop quietly
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_RUNTIME
    except (UsageError, ValueError, TypeError) as e:
        if args.traceback:
            raise
        _error(str(e))
        return EXIT_USAGE
    except ImportError as e:  # an optional package is missing: the message names the extra
        if args.traceback:
            raise
        _error(str(e))
        return EXIT_RUNTIME
    except MemoryError as e:
        if args.traceback:
            raise
        _error(f"out of memory: {e} (try a smaller --memory-budget on a GPU, or fewer/smaller inputs)")
        return EXIT_RUNTIME
    except Exception as e:  # noqa: BLE001 - the shell user gets one line, not a traceback
        if args.traceback:
            raise
        _error(f"{type(e).__name__}: {e} (run with --traceback for details)")
        return EXIT_RUNTIME
