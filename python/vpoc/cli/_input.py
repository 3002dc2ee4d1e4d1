"""Streaming input of ``vpoc profile`` / ``vpoc features``: read files one at a time, cut sessions.

Contract: :func:`chunks` yields whole sessions, file by file, in groups of about ``--chunk-rows``
rows; a session that continues into the next file is carried over, so results do not depend on
how the data is split into files. Input problems raise :class:`UsageError` naming the file.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .._errors import row_of
from .._side import warn_unsided
from .._stream import concat_rows
from ._common import UsageError, fmt_ts, to_flags

__all__ = ["EXCHANGE_TZ", "SIDE_COLUMNS", "Chunk", "Rows", "Tally", "check_inputs", "check_session_tz", "chunks", "kind_from_schema", "locate", "read_contracts",
           "read_file", "read_kwargs", "roll_notes", "session_fn", "session_kwargs", "session_tz", "split_sessions", "with_sides"]



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

    concat = staticmethod(concat_rows)


_BAR_FIELDS = ("open", "high", "low", "close", "volume")
_TRADE_FIELDS = ("price", "volume")
# The side columns a file may add (vpoc.io: a trades' side, bars' buy / sell volume), and their
# value where a file has none (side unknown), as vpoc.io reads a list of files.
SIDE_COLUMNS = {"side": np.int8, "buy_volume": np.int64, "sell_volume": np.int64}


@dataclass
class Chunk:
    """Whole sessions ready to profile: rows, CSR offsets into them, and their labels."""

    rows: Rows
    offsets: np.ndarray
    labels: np.ndarray
    n_input: int  # input rows (before session filtering) this chunk accounts for, for progress
    partial: Optional[np.ndarray] = None  # Sessions.partial of these sessions (bool per session)
    merged_days: Optional[np.ndarray] = None  # Sessions.merged_days of these sessions


@dataclass
class Tally:
    """Rows and volume read and kept by the session rule, and the library's warnings (for the
    stderr summary line and ``--strict``)."""

    rows_in: int = 0
    rows_kept: int = 0
    volume_in: float = 0.0
    volume_kept: float = 0.0
    by_cause: Dict[str, int] = field(default_factory=dict)  # Sessions.dropped_by_cause, summed
    notes: List[str] = field(default_factory=list)  # stderr lines of the input (the roll ledger)

    @property
    def rows_dropped(self) -> int:
        return self.rows_in - self.rows_kept

    @property
    def volume_dropped(self) -> float:
        return self.volume_in - self.volume_kept


def read_kwargs(args: argparse.Namespace) -> Dict[str, Any]:
    """The keyword arguments of vpoc.io.read_bars / read_trades the flags ask for (flags left at
    their default are not passed, so the reader's own defaults apply)."""
    kw: Dict[str, Any] = dict(tz=args.tz, format=args.format, time_unit=args.time_unit)
    for name in ("time_format", "columns", "sep", "ambiguous", "nonexistent", "label", "interval",
                 "unterminated", "instrument"):
        value = getattr(args, name, None)
        if value is not None:
            kw[name] = value
    if getattr(args, "strict", False) and "unterminated" not in kw:
        kw["unterminated"] = "raise"  # --strict: no row left out, a cut last line neither
    if args.kind == "trades" and ("label" in kw or "interval" in kw):
        raise UsageError("--label / --interval describe bars; trades (--kind trades) are instants")
    return kw


def _reader_error(e: BaseException, where: str) -> UsageError:
    detail = e.strerror if isinstance(e, OSError) and e.strerror else str(e).strip() or type(e).__name__
    detail = to_flags(detail)  # the library's words, as flags
    if getattr(e, "dbn_kind", None) is not None:  # a DBN file of the other kind: the flag that reads it
        detail += f"; pass --kind {e.dbn_kind}"  # type: ignore[attr-defined]
    return UsageError(detail if where in detail else f"{where}: {detail}")


def _rows(data: Any, index: int, kind: str) -> Rows:
    fields = _TRADE_FIELDS if kind == "trades" else _BAR_FIELDS
    ts = np.asarray(data.timestamp)
    ts = np.ascontiguousarray(ts.astype("datetime64[ns]").view(np.int64) if ts.dtype.kind == "M"
                              else ts.astype(np.int64, copy=False))
    values = {k: np.asarray(getattr(data, k)) for k in fields}
    values.update((k, np.asarray(getattr(data, k))) for k in SIDE_COLUMNS if getattr(data, k, None) is not None)
    return Rows(ts, values, np.full(ts.shape[0], index, dtype=np.int32))


def with_sides(parts: Sequence[Rows]) -> List[Rows]:
    """``parts`` with the same side columns: one a part lacks while another has it is 0 (unknown) on
    its rows, as vpoc.io reads a list of files where some have no side."""
    keys = [k for k in SIDE_COLUMNS if any(p is not None and k in p.values for p in parts)]
    out = []
    for p in parts:
        if p is not None and any(k not in p.values for k in keys):
            p = Rows(p.timestamp, {**p.values, **{k: np.zeros(len(p), SIDE_COLUMNS[k]) for k in keys
                                                   if k not in p.values}}, p.source)
        out.append(p)
    return out


def kind_from_schema(args: argparse.Namespace, command: str) -> None:
    """``--kind trades`` for DBN inputs whose schema is trades / tbbo / mbp-1 when --kind was left at
    bars (the file says what it holds), with a stderr note; ``vpoc features`` (bars only) refuses them."""
    from .. import io as vio

    if args.kind != "bars" or args.format not in (None, "dbn"):
        return
    trades = [p for p in args.inputs if (args.format == "dbn" or p.lower().endswith((".dbn", ".dbn.zst")))
              and vio.dbn_kind(p) == "trades"]
    if not trades:
        return
    if command == "features":
        raise UsageError(f"{trades[0]}: a DBN file of trades (its schema); vpoc features needs bars "
                         "(an ohlcv-* file)")
    if len(trades) == len(args.inputs):
        print(f"vpoc: {command}: {trades[0]}{' ...' if len(trades) > 1 else ''}: the DBN schema says trades: read "
              "as --kind trades", file=sys.stderr)
        args.kind = "trades"


def read_file(path: str, index: int, args: argparse.Namespace) -> Rows:
    from .. import io as vio  # lazily: vpoc.io needs pandas / pyarrow

    reader = vio.read_trades if args.kind == "trades" else vio.read_bars
    try:
        data = reader(path, **read_kwargs(args))
    except (OSError, ValueError, TypeError, KeyError) as e:
        raise _reader_error(e, path) from e
    return _rows(data, index, args.kind)


def read_contracts(paths: Sequence[str], args: argparse.Namespace,
                   tally: Optional[Tally] = None) -> Rows:
    """One continuous series from one file per contract (vpoc.io.read_contracts, --roll/--adjust);
    ``tally.notes`` gets the roll ledger and the overlapping rows the rule left out (for stderr)."""
    from .. import io as vio

    if args.kind == "trades":
        raise UsageError("--roll joins bar files; trades (--kind trades) are not supported")
    fn = getattr(vio, "read_contracts", None)
    if fn is None:
        raise UsageError("--roll needs vpoc.io.read_contracts, which this vpoc does not have")
    try:
        data = fn(list(paths), roll=args.roll or "volume", adjust=args.adjust or "none",
                  **read_kwargs(args))
    except (OSError, ValueError, TypeError, KeyError) as e:
        raise _reader_error(e, ", ".join(paths)) from e
    if tally is not None:
        tally.notes.extend(roll_notes(data))
    return _rows(data, 0, args.kind)


def roll_notes(data: Any) -> List[str]:
    """stderr lines for a vpoc.io.read_contracts result: each roll (date, from, to, price offset)
    and the rows of the other contracts the roll rule left out, per contract."""
    rolls = getattr(data, "rolls", None)
    n = 0 if rolls is None else len(rolls)
    out = [f"rolls (--roll {getattr(data, 'roll', '?')}, --adjust {getattr(data, 'adjust', '?')}): {n}"
           + (": date, from, to, offset (to_close - from_close)" if n else "")]
    for r in ([] if rolls is None else rolls.to_dict("records")):
        out.append(f"  roll {r['date']} {r['from']} -> {r['to']} offset {float(r['offset']):g}")
    dropped = int(getattr(data, "dropped_rows", 0) or 0)
    by = {k: int(v) for k, v in (getattr(data, "dropped_by_contract", None) or {}).items() if v}
    detail = f" ({', '.join(f'{k}: {v:,}' for k, v in by.items())})" if by else ""
    out.append(f"overlapping rows of the contracts not chosen, left out by the roll rule: "
               f"{dropped:,}{detail}")
    return out


EXCHANGE_TZ = "America/Chicago"


def session_tz(args: argparse.Namespace) -> str:
    return args.session_tz or EXCHANGE_TZ


def check_session_tz(args: argparse.Namespace) -> None:
    """Refuse ``--session rth`` whose ``--session-tz`` puts the window outside the exchange's regular
    hours (vpoc.sessions.check_hours: 08:30-15:15 America/Chicago on winter and summer dates):
    ``--session-tz UTC`` on a UTC file is the usual mix-up with ``--tz`` (RTH would be the
    European morning)."""
    if args.session != "rth" or args.session_tz is None:
        return
    from .. import sessions as vs

    try:
        vs.check_hours(args.rth_start, args.rth_end, args.session_tz, on_mismatch="raise")
    except ValueError as e:
        what = str(e).split(" The session time zone")[0]
        raise UsageError(
            f"--session rth --session-tz {args.session_tz}: {what} --session-tz is the zone of "
            f"--rth-start/--rth-end, not of the file (that is --tz): leave it out for CME RTH, or "
            f"give --rth-start/--rth-end in {EXCHANGE_TZ} time") from e


def session_kwargs(args: argparse.Namespace) -> Dict[str, Any]:
    """The keyword arguments of the vpoc.sessions rule the flags ask for."""
    from .. import sessions as vs

    fn = getattr(vs, args.session)
    params = inspect.signature(fn).parameters
    kw: Dict[str, Any] = {}
    if args.session in ("globex", "rth"):
        if args.calendar is not None:  # a name, or "none": the clock alone
            kw["calendar"] = None if args.calendar.lower() == "none" else args.calendar
        if args.holidays is not None:
            hp = params.get("holidays")
            words = hp is not None and isinstance(hp.default, str)  # holidays="merge"|"own"
            kw["holidays"] = args.holidays if words else args.holidays == "merge"
    if args.session == "rth":
        kw.update(start=args.rth_start, end=args.rth_end, tz=session_tz(args))
    elif args.session == "daily":
        kw["tz"] = session_tz(args)
    if args.strict:
        kw["on_outside" if "on_outside" in params else "outside"] = "raise"
    return kw


def session_fn(args: argparse.Namespace) -> Callable[..., Any]:
    """``f(ts, volume=None) -> Sessions`` with the flags' options (``volume`` lets the rule name
    the share of volume it leaves out)."""
    from .. import sessions as vs  # lazily: needs the calendar packages

    fn = getattr(vs, args.session)
    kw = session_kwargs(args)
    takes_volume = "volume" in inspect.signature(fn).parameters

    def call(ts: np.ndarray, volume: Optional[np.ndarray] = None) -> Any:
        if takes_volume and volume is not None:
            return fn(ts, volume=volume, **kw)
        return fn(ts, **kw)
    return call


def split_sessions(rows: Rows, fn: Callable[[np.ndarray], Any], tally: Optional[Tally] = None,
                   flags: Optional[Dict[str, np.ndarray]] = None) -> Tuple[Rows, np.ndarray, np.ndarray]:
    """The rows kept by the session rule, CSR offsets of its non-empty sessions, their labels;
    ``tally`` counts the rows and volume that came in and were kept; ``flags`` (a dict) gets the
    sessions' ``partial`` and ``merged_days`` (of the non-empty sessions)."""
    try:
        sess = fn(rows.timestamp, rows.values.get("volume"))
    except (ValueError, TypeError) as e:
        raise UsageError(to_flags(f"sessions: {e}")) from e
    kept = rows.take(None if sess.index is None else np.asarray(sess.index, dtype=np.int64))
    if tally is not None:
        vol = rows.values.get("volume")
        tally.rows_in += len(rows)
        tally.rows_kept += len(kept)
        for cause, n in (getattr(sess, "dropped_by_cause", None) or {}).items():
            tally.by_cause[cause] = tally.by_cause.get(cause, 0) + int(n)
        if vol is not None:
            tally.volume_in += float(np.sum(vol, dtype=np.float64))
            tally.volume_kept += float(np.sum(kept.values["volume"], dtype=np.float64))
    offsets = np.asarray(sess.offsets, dtype=np.int64)
    labels = np.asarray(sess.labels)
    nonempty = np.diff(offsets) > 0
    if flags is not None:
        S = labels.shape[0]
        part = getattr(sess, "partial", None)
        merged = getattr(sess, "merged_days", None)
        flags["partial"] = (np.zeros(S, dtype=bool) if part is None
                            else np.asarray(part, dtype=bool))[nonempty]
        flags["merged_days"] = (nonempty.astype(np.int64) if merged is None
                                else np.asarray(merged, dtype=np.int64))[nonempty]
    if not nonempty.all():  # sessions without rows are not reported
        offsets = np.concatenate([offsets[:1], offsets[1:][nonempty]])
        labels = labels[nonempty]
    return kept, offsets, labels


def chunks(paths: Sequence[str], args: argparse.Namespace,
           on_read: Callable[[int, int], None], tally: Optional[Tally] = None) -> Iterator[Chunk]:
    """Whole sessions, file by file, in groups of about ``args.chunk_rows`` rows.

    The last session read so far is held back until the next file shows whether it continues;
    ``on_read(file_index, rows)`` is called after each file is read. With ``--roll`` the files
    are one per contract and are read together (vpoc.io.read_contracts). Rows carried from one
    file to the next were kept before: ``tally`` counts each input row once.
    """
    fn = session_fn(args)
    carry: Optional[Rows] = None
    prev_end: Optional[int] = None
    contracts = args.roll is not None or args.adjust is not None
    files: List[Tuple[str, int, float, bool]] = []  # (path, rows, volume, has a side column)
    for fi, path in enumerate(paths[:1] if contracts else paths):
        data = read_contracts(paths, args, tally) if contracts else read_file(path, fi, args)
        on_read(len(paths) - 1 if contracts else fi, len(data))
        files.append((path, len(data), float(np.sum(data.values["volume"], dtype=np.float64)),
                      any(k in data.values for k in SIDE_COLUMNS)))
        if fi == len(paths) - 1 or contracts:
            warn_unsided(files, args.kind == "trades")  # as vpoc.io says of a list of files
        if len(data) and prev_end is not None and data.timestamp[0] < prev_end:
            raise UsageError(f"{path} starts at {fmt_ts(data.timestamp[0])}, before the end of "
                             f"{paths[fi - 1]} ({fmt_ts(prev_end)}); give the inputs in time order "
                             "(or, for one file per contract, --roll volume)")
        if len(data):
            prev_end = int(data.timestamp[-1])
        carried = 0 if carry is None else len(carry)
        if tally is not None and carried:  # carried rows were counted when they came in
            tally.rows_in -= carried
            tally.rows_kept -= carried
            if "volume" in carry.values:
                v = float(np.sum(carry.values["volume"], dtype=np.float64))
                tally.volume_in -= v
                tally.volume_kept -= v
        flags: Dict[str, np.ndarray] = {}
        carry, data = with_sides([carry, data])
        rows, offsets, labels = split_sessions(Rows.concat(carry, data), fn, tally, flags)
        last = contracts or fi == len(paths) - 1
        S = labels.shape[0]
        done = S if last else max(S - 1, 0)  # the last session may continue in the next file
        carry = None if last or S == 0 else rows.slice(int(offsets[done]), len(rows))
        n_input = len(data)
        total_rows = int(offsets[done]) if done else 0
        s = 0
        accounted = 0
        if done == 0:
            yield Chunk(rows.slice(0, 0), np.zeros(1, dtype=np.int64), labels[:0], n_input,
                        flags["partial"][:0], flags["merged_days"][:0])
            continue
        while s < done:
            e = int(np.searchsorted(offsets, offsets[s] + args.chunk_rows, side="right")) - 1
            e = min(max(e, s + 1), done)
            a, b = int(offsets[s]), int(offsets[e])
            share = n_input - accounted if e == done else (n_input * b) // max(total_rows, 1) - accounted
            accounted += share
            yield Chunk(rows.slice(a, b), offsets[s:e + 1] - a, labels[s:e], share,
                        flags["partial"][s:e], flags["merged_days"][s:e])
            s = e


# Fallback for errors that carry no row (see locate): the index a message names as "[i]" or
# "bar|trade|row i". Today this is check_grid's refusal (a ValueError made in Python: "e.g.
# close[3]=100.1"; the engine's "session s spans N rows ... from bar i on" carries its row).
_INDEX_RE = re.compile(r"\[(\d+)\]|\b(?:bar|trade|row) (\d+)")


def locate(e: Exception, chunk: Chunk, paths: Sequence[str]) -> str:
    """The engine's message with the file and time of the row it names, for a shell user: the
    row is the error's own (a vpoc.InputError's .index, a row of ``chunk``); only an error that
    carries none is searched for one."""
    msg = str(e)
    i = row_of(e)
    if i is None:
        m = _INDEX_RE.search(msg)
        i = None if m is None else int(m.group(1) or m.group(2))
    if i is not None and 0 <= i < len(chunk.rows):
        return f"{paths[int(chunk.rows.source[i])]}: row at {fmt_ts(chunk.rows.timestamp[i])}: {msg}"
    files = sorted({paths[int(j)] for j in np.unique(chunk.rows.source)})
    return f"{', '.join(files) or paths[0]}: {msg}"


def check_inputs(paths: Sequence[str]) -> None:
    for p in paths:
        if not os.path.exists(p):
            raise UsageError(f"input not found: {p}")
        if os.path.isdir(p):
            raise UsageError(f"input is a directory, not a file: {p} (pass its files, e.g. {p}/*.csv)")
