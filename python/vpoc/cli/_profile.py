"""``vpoc profile`` and ``vpoc features``: per-session profiles / feature tables of bar or trade files.

Contract: files are streamed one at a time in the order given (they must be in time order) and
split into sessions with :mod:`vpoc.sessions`; the output (CSV on stdout, or a .csv / .parquet
file written atomically) has one row per session: the columns :data:`vpoc._stream.PROFILE_COLUMNS`
then :data:`SESSION_COLUMNS` (the session rule's trade date, ``partial`` and ``merged_days``), then,
when the files carry the aggressor side (a trades' side column, bars' buy / sell volume columns,
read by vpoc.io), the side columns ``Profiles.to_pandas()`` gives (delta, delta_poc, ...).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import numpy as np

from .. import _api
from .._errors import InputError, input_rows
from .._files import atomic_write
from .._optional import require
from .._stream import PROFILE_COLUMNS, empty_profile_table, profile_table
from .._time import yyyymmdd_days
from ._common import EXIT_OK, FLAGS, OUTPUT_SUFFIXES, UsageError, to_flags
from ._input import (Chunk, Rows, Tally, check_inputs, check_session_tz, chunks, kind_from_schema, locate, read_kwargs,
                     session_fn, session_tz, with_sides)
from ._progress import Progress, Reporter

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["OUTPUT_COLUMNS", "SESSION_COLUMNS", "cmd_features", "cmd_profile", "session_columns", "side_columns"]

#: Columns ``vpoc profile`` adds after :data:`vpoc._stream.PROFILE_COLUMNS`, from the session rule
#: (vpoc.sessions.Sessions): the trade date of the label (a date), ``partial`` (the data covers
#: only part of the session) and ``merged_days`` (calendar days booked to the session, 2+ where a
#: holiday's trading is merged into the next trade date).
SESSION_COLUMNS = ("trade_date", "partial", "merged_days")
OUTPUT_COLUMNS = tuple(PROFILE_COLUMNS) + SESSION_COLUMNS


def session_columns(df: "pd.DataFrame", labels: np.ndarray, partial: Optional[np.ndarray],
                    merged_days: Optional[np.ndarray]) -> "pd.DataFrame":
    """``df`` (one row per session, labels ``YYYYMMDD``) with :data:`SESSION_COLUMNS` appended."""
    import pandas as pd

    labels = np.asarray(labels, dtype=np.int64)
    S = labels.shape[0]
    df = df.copy()
    df["trade_date"] = pd.to_datetime(pd.Series(labels.astype(str), dtype=object),
                                      format="%Y%m%d").to_numpy() if S else \
        np.zeros(0, dtype="datetime64[ns]")
    df["partial"] = np.zeros(S, dtype=bool) if partial is None else np.asarray(partial, dtype=bool)
    df["merged_days"] = (np.ones(S, dtype=np.int64) if merged_days is None
                         else np.asarray(merged_days, dtype=np.int64))
    return df


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
    opts = dict(tick_size=args.tick_size, ticks_per_row=args.ticks_per_row,
                value_area=args.value_area, va_method=args.va, poc_tie=args.poc_tie,
                device=args.device, threads=args.threads, max_rows=args.max_rows,
                memory_budget=args.memory_budget)
    if args.snap:
        opts["snap"] = True
    return opts


_ENGINE = ("tick_size", "ticks_per_row", "value_area", "va_method", "poc_tie", "max_rows", "device",
           "memory_budget", "threads", "distribute", "snap")
# Fallback for errors that name no argument (see _option_error): every engine option's name in
# the text as its flag. Today these are the TypeErrors of the option checks, the device checks
# made in Python and "tick_size * ticks_per_row must be finite" (an InputError about two).
_ENGINE_WORDS = re.compile(r"\b(" + "|".join(_ENGINE) + r")\b")


def _option_error(e: Exception) -> str:
    """The message of an engine option's error with the ``vpoc`` flags for the library's
    keywords: a vpoc.InputError about one option (.argument; its message opens with that name)
    opens with the option's flag instead."""
    msg = to_flags(str(e))
    argument = getattr(e, "argument", None) if isinstance(e, InputError) else None
    if argument in _ENGINE and msg.startswith(argument):
        return FLAGS[argument] + msg[len(argument):]
    return _ENGINE_WORDS.sub(lambda m: FLAGS[m.group(1)], msg)


def _check_options(args: argparse.Namespace) -> None:
    """The engine's and the session rule's checks of the options, on no data, before any file
    is read."""
    empty = np.zeros(0)
    try:
        if args.kind == "trades":
            _api.from_trades(empty, empty, **_engine_options(args))
        else:
            _api.from_bars(empty, empty, empty, empty, distribute=args.distribute, **_engine_options(args))
    except (ValueError, TypeError) as e:
        raise UsageError(_option_error(e)) from e
    read_kwargs(args)
    check_session_tz(args)
    try:
        session_fn(args)(np.zeros(0, dtype=np.int64))
    except (ValueError, TypeError) as e:
        raise UsageError(to_flags(f"--session {args.session}: {e}")) from e


def _profile_chunk(chunk: Chunk, args: argparse.Namespace) -> Any:
    with input_rows(None, labels=chunk.labels):  # a session's error names its label, not its place in the chunk
        return _chunk_profiles(chunk, args)


def _chunk_profiles(chunk: Chunk, args: argparse.Namespace) -> Any:
    v = chunk.rows.values
    opts = _engine_options(args)
    if args.kind == "trades":
        return _api.from_trades(v["price"], v["volume"], offsets=chunk.offsets, side=v.get("side"), **opts)
    return _api.from_bars(v["high"], v["low"], v["close"], v["volume"], open=v["open"],
                          offsets=chunk.offsets, distribute=args.distribute, buy_volume=v.get("buy_volume"),
                          sell_volume=v.get("sell_volume"), **opts)


def side_columns(df: "pd.DataFrame", prof: Any) -> "pd.DataFrame":
    """``df`` (profile_table's rows of ``prof``) with the per-session columns ``Profiles.to_pandas()``
    has beyond it: the aggressor-side ones (delta, buy / sell totals, delta_poc, delta_poc_row, stacked imbalances) of a
    sided result, nothing for a plain one (the one home of those columns: Profiles.to_pandas)."""
    full = prof.to_pandas()
    extra = [c for c in full.columns if c not in df.columns]
    if not extra:
        return df
    df = df.copy()
    for c in extra:
        df[c] = full[c].to_numpy()
    return df


# --------------------------------------------------------------------------- commands


def _require_packages(args: argparse.Namespace, command: str) -> None:
    """The optional packages ``command`` needs with these options, checked before any work: a
    missing one is one error line naming the extra (exit 1), not a failure halfway through."""
    require("pandas", f"vpoc {command}", "cli")
    if args.session in ("globex", "rth") and (args.calendar or "").lower() != "none":  # calendars
        require("pandas_market_calendars", f"vpoc {command} --session {args.session}", "cli",
                alternative="or use --calendar none (no holidays) or --session daily")
    parquet = (".parquet", ".pq")
    for path in [*args.inputs, args.out or ""]:
        if path.lower().endswith(parquet):
            require("pyarrow", f"vpoc {command} with Parquet files ({path})", "cli")


def cmd_profile(args: argparse.Namespace) -> int:
    check_inputs(args.inputs)
    kind_from_schema(args, "profile")
    _check_output(args.out)
    _require_packages(args, "profile")
    _check_options(args)
    import pandas as pd
    progress = Progress(args.progress, args.inputs, args.progress_min_rows, "vpoc profile")
    tables: List["pd.DataFrame"] = []
    tally = Tally()
    with Reporter("profile", args) as report:
        try:
            for chunk in chunks(args.inputs, args, progress.on_read, tally):
                if chunk.labels.shape[0]:
                    try:
                        prof = _profile_chunk(chunk, args)
                    except (ValueError, TypeError) as e:
                        raise UsageError(to_flags(locate(e, chunk, _names(args)))) from e
                    table = profile_table(prof, chunk.labels, chunk.offsets, chunk.rows.timestamp)
                    table = session_columns(table, chunk.labels, chunk.partial, chunk.merged_days)
                    tables.append(side_columns(table, prof))
                progress.update(len(chunk.rows), tally)
        finally:
            progress.close()
        report.check(tally)
        df = (pd.concat(tables, ignore_index=True) if tables
              else session_columns(empty_profile_table(), np.zeros(0, dtype=np.int64), None, None))
        _write(df, args.out)
    return EXIT_OK


def _names(args: argparse.Namespace) -> List[str]:
    """Input names for messages (one name for the joined contract files of --roll)."""
    if args.roll is not None or args.adjust is not None:
        return [", ".join(args.inputs)]
    return list(args.inputs)


def cmd_features(args: argparse.Namespace) -> int:
    if args.kind != "bars":
        raise UsageError("vpoc features needs bars (--kind bars)")
    check_inputs(args.inputs)
    kind_from_schema(args, "features")
    _check_output(args.out)
    _require_packages(args, "features")
    _check_options(args)
    progress = Progress(args.progress, args.inputs, args.progress_min_rows, "vpoc features")
    parts: List[Chunk] = []
    tally = Tally()
    with Reporter("features", args) as report:
        try:
            for chunk in chunks(args.inputs, args, progress.on_read, tally):
                parts.append(chunk)
                progress.update(len(chunk.rows), tally)
        finally:
            progress.close()
        report.check(tally)
        _features(parts, args)
    return EXIT_OK


def _dated_ids(labels: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each row's session as its trade date (datetime64[D]): dated sessions, so session_features
    takes the initial balance on the trade date as with ``session="globex"`` (never from the
    holiday morning a merged Globex session holds), not from any 08:30 bar as offsets= would."""
    days = yyyymmdd_days(labels, "session labels").astype("datetime64[D]")
    return np.repeat(days, np.diff(offsets))


def _features(parts: List[Chunk], args: argparse.Namespace) -> None:
    from ..features import session_features

    parts = [c for c in parts if c.labels.shape[0]]
    if not parts:
        raise UsageError(f"no sessions in {', '.join(args.inputs)} (session rule {args.session!r})")
    rows_of = with_sides([c.rows for c in parts])  # a file without the side columns: unknown (0)
    rows = Rows(np.concatenate([r.timestamp for r in rows_of]),
                {k: np.concatenate([r.values[k] for r in rows_of]) for k in rows_of[0].values},
                np.concatenate([r.source for r in rows_of]))
    bases = np.cumsum([0] + [len(c.rows) for c in parts[:-1]])
    offs = np.concatenate([np.zeros(1, dtype=np.int64)] + [c.offsets[1:] + b for c, b in zip(parts, bases)])
    labels = np.concatenate([c.labels for c in parts])
    v = rows.values
    chunk = Chunk(rows, offs, labels, 0)
    try:
        table = session_features(v["high"], v["low"], v["close"], v["volume"], open=v["open"],
                                 timestamp=rows.timestamp, session_ids=_dated_ids(labels, offs),
                                 tick_size=args.tick_size,
                                 ticks_per_row=args.ticks_per_row, distribute=args.distribute,
                                 value_area=args.value_area, va_method=args.va,
                                 poc_tie=args.poc_tie, tz=session_tz(args), rth_start=args.rth_start,
                                 device=args.device, threads=args.threads, buy_volume=v.get("buy_volume"),
                                 sell_volume=v.get("sell_volume"))
    except (ValueError, TypeError) as e:
        raise UsageError(to_flags(locate(e, chunk, _names(args)))) from e
    df = table.to_pandas().reset_index(drop=True)  # its index is 0..S-1: use the session labels
    df.insert(0, "session", labels)
    _write(df, args.out)

