"""Streaming input of ``vpoc profile`` / ``vpoc features``: read files one at a time, cut sessions.

Contract: :func:`chunks` yields whole sessions, file by file, in groups of about ``--chunk-rows``
rows; a session that continues into the next file is carried over, so results do not depend on
how the data is split into files. Input problems raise :class:`UsageError` naming the file.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Tuple

import numpy as np

from ._common import UsageError, fmt_ts

__all__ = ["Chunk", "Rows", "check_inputs", "chunks", "locate", "read_file", "session_fn",
           "split_sessions"]



@dataclass
class Rows:
    """Rows of one or more input files: int64 ns UTC ``timestamp``, value columns, source file."""

    timestamp: np.ndarray
    values: Dict[str, np.ndarray]
    source: np.ndarray  # int32 index into the list of inputs, per row

    def __len__(self) -> int:
        return int(self.timestamp.shape[0])

    def take(self, index: Optional[np.ndarray]) -> "Rows":
        if index is None:
            return self
        return Rows(self.timestamp[index], {k: v[index] for k, v in self.values.items()},
                     self.source[index])

    def slice(self, a: int, b: int) -> "Rows":
        return Rows(self.timestamp[a:b], {k: v[a:b] for k, v in self.values.items()},
                     self.source[a:b])

    @staticmethod
    def concat(a: Optional["Rows"], b: "Rows") -> "Rows":
        if a is None or len(a) == 0:
            return b
        if len(b) == 0:
            return a
        values = {}
        for k in b.values:
            x, y = a.values[k], b.values[k]
            dtype = np.result_type(x.dtype, y.dtype)
            values[k] = np.concatenate([x.astype(dtype, copy=False), y.astype(dtype, copy=False)])
        return Rows(np.concatenate([a.timestamp, b.timestamp]), values,
                     np.concatenate([a.source, b.source]))


_BAR_FIELDS = ("open", "high", "low", "close", "volume")
_TRADE_FIELDS = ("price", "volume")


@dataclass
class Chunk:
    """Whole sessions ready to profile: rows, CSR offsets into them, and their labels."""

    rows: Rows
    offsets: np.ndarray
    labels: np.ndarray
    n_input: int  # input rows (before session filtering) this chunk accounts for, for progress


def read_file(path: str, index: int, args: argparse.Namespace) -> Rows:
    from .. import io as vio  # lazily: vpoc.io needs pandas / pyarrow

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
    return Rows(ts, values, np.full(ts.shape[0], index, dtype=np.int32))


def session_fn(args: argparse.Namespace) -> Callable[[np.ndarray], Any]:
    from .. import sessions as vs  # lazily: needs the calendar packages

    if args.session == "globex":
        return vs.globex
    if args.session == "rth":
        return lambda ts: vs.rth(ts, start=args.rth_start, end=args.rth_end, tz=args.session_tz)
    return lambda ts: vs.daily(ts, tz=args.session_tz)


def split_sessions(rows: Rows, fn: Callable[[np.ndarray], Any]) -> Tuple[Rows, np.ndarray, np.ndarray]:
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


def chunks(paths: Sequence[str], args: argparse.Namespace,
            on_read: Callable[[int, int], None]) -> Iterator[Chunk]:
    """Whole sessions, file by file, in groups of about ``args.chunk_rows`` rows.

    The last session read so far is held back until the next file shows whether it continues;
    ``on_read(file_index, rows)`` is called after each file is read.
    """
    fn = session_fn(args)
    carry: Optional[Rows] = None
    prev_end: Optional[int] = None
    for fi, path in enumerate(paths):
        data = read_file(path, fi, args)
        on_read(fi, len(data))
        if len(data) and prev_end is not None and data.timestamp[0] < prev_end:
            raise UsageError(f"{path} starts at {fmt_ts(data.timestamp[0])}, before the end of "
                             f"{paths[fi - 1]} ({fmt_ts(prev_end)}); give the inputs in time order")
        if len(data):
            prev_end = int(data.timestamp[-1])
        rows, offsets, labels = split_sessions(Rows.concat(carry, data), fn)
        last = fi == len(paths) - 1
        S = labels.shape[0]
        done = S if last else max(S - 1, 0)  # the last session may continue in the next file
        carry = None if last or S == 0 else rows.slice(int(offsets[done]), len(rows))
        n_input = len(data)
        total_rows = int(offsets[done]) if done else 0
        s = 0
        accounted = 0
        if done == 0:
            yield Chunk(rows.slice(0, 0), np.zeros(1, dtype=np.int64), labels[:0], n_input)
            continue
        while s < done:
            e = int(np.searchsorted(offsets, offsets[s] + args.chunk_rows, side="right")) - 1
            e = min(max(e, s + 1), done)
            a, b = int(offsets[s]), int(offsets[e])
            share = n_input - accounted if e == done else (n_input * b) // max(total_rows, 1) - accounted
            accounted += share
            yield Chunk(rows.slice(a, b), offsets[s:e + 1] - a, labels[s:e], share)
            s = e


_INDEX_RE = re.compile(r"\[(\d+)\]|\b(?:bar|trade|row) (\d+)")


def locate(e: Exception, chunk: Chunk, paths: Sequence[str]) -> str:
    """The engine's message with the file and time of the row it names, for a shell user."""
    msg = str(e)
    m = _INDEX_RE.search(msg)
    if m is not None:
        i = int(m.group(1) or m.group(2))
        if 0 <= i < len(chunk.rows):
            return f"{paths[int(chunk.rows.source[i])]}: row at {fmt_ts(chunk.rows.timestamp[i])}: {msg}"
    files = sorted({paths[int(j)] for j in np.unique(chunk.rows.source)})
    return f"{', '.join(files) or paths[0]}: {msg}"



def check_inputs(paths: Sequence[str]) -> None:
    for p in paths:
        if not os.path.exists(p):
            raise UsageError(f"input not found: {p}")
        if os.path.isdir(p):
            raise UsageError(f"input is a directory, not a file: {p} (pass its files, e.g. {p}/*.csv)")
