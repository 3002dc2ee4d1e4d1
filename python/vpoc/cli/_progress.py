"""Progress and summaries on stderr for ``vpoc profile`` / ``vpoc features``.

Contract: :class:`Progress` draws a tqdm bar of kept rows over input rows on stderr only when asked
or when stderr is a terminal and the run is long; :class:`Reporter` turns the library's warnings
into ``vpoc: warning: ...`` lines and adds one summary line of the rows left out (count, share of
rows and of volume, cause), or makes them an error under ``--strict``. Nothing goes to stdout.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings
from typing import Any, List, Optional, Sequence

from .._optional import hint
from .._warnings import DroppedRowsWarning
from ._common import UsageError, to_flags

__all__ = ["Progress", "Reporter", "file_size", "summary"]


class Progress:
    """A tqdm bar over input rows on stderr, or nothing.

    ``mode``: "always", "never" or "auto" (a bar only when stderr is a terminal and there are
    several inputs or an input of at least ``min_rows`` rows). The total is exact once every input
    is read; before that it is extrapolated from the bytes per row of the inputs read so far.
    """

    def __init__(self, mode: str, paths: Sequence[str], min_rows: int, desc: str) -> None:
        self.mode, self.paths, self.min_rows, self.desc = mode, list(paths), min_rows, desc
        self.sizes = [file_size(p) for p in self.paths]
        self.rows_read = 0
        self.note = ""
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
            self.note = f"file {fi + 1}/{len(self.paths)}"
            self.bar.set_postfix_str(self.note, refresh=False)
            self.bar.refresh()

    def update(self, kept: int, tally: Any = None) -> None:
        """``kept`` more rows profiled: the bar counts kept rows against all rows read, so it
        stops short of 100% by the share the session rule left out (shown beside it)."""
        if self.bar is None:
            return
        if tally is not None and tally.rows_dropped:
            self.bar.set_postfix_str(f"{self.note}, left out {tally.rows_dropped:,} rows", refresh=False)
        if kept:
            self.bar.update(kept)
        else:
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0



_CAUSE = {"globex": "in the daily 16:00-17:00 CT halt, on weekends or on exchange holidays",
          "rth": "outside the regular trading hours",
          "daily": "on days without a session"}
#: Words for the keys of vpoc.sessions' Sessions.dropped_by_cause.
_CAUSE_WORDS = {"halt": "in the daily halt", "weekend": "on weekends",
                "holiday-closed": "on days the exchange is closed", "early-close":
                "after an early close or holiday halt", "holiday": "on holidays",
                "outside RTH": "outside RTH", "outside window": "outside the session window"}
_MAX_WARNINGS = 10


def _pct(share: float) -> str:
    """A share as a percentage that never reads 0.0% for a non-zero share."""
    if 0 < share < 0.001:
        digits = 1 - math.floor(math.log10(share * 100))  # two significant digits
        return f"{share * 100:.{digits}f}%"
    return f"{share:.1%}"


def summary(tally: Any, args: argparse.Namespace) -> Optional[str]:
    """One line on the rows the session rule left out, or None when it kept every row."""
    if tally.rows_dropped <= 0:
        return None
    rows = tally.rows_dropped / max(tally.rows_in, 1)
    vol = (f"{_pct(tally.volume_dropped / tally.volume_in)} of the volume" if tally.volume_in > 0
           else "no volume")
    causes = {k: n for k, n in tally.by_cause.items() if n}
    if causes and sum(causes.values()) == tally.rows_dropped:
        why = ": " + ", ".join(f"{n:,} {_CAUSE_WORDS.get(k, k)}" for k, n in
                               sorted(causes.items(), key=lambda kv: -kv[1]))
    else:
        why = " " + _CAUSE.get(args.session, "outside every session")
    return (f"left out {tally.rows_dropped:,} of {tally.rows_in:,} rows ({_pct(rows)} of the rows, {vol})"
            f"{why} (--session {args.session}); kept {tally.rows_kept:,}")


class Reporter:
    """Collects the library's warnings during a command; on success prints them (as flags) and
    the summary line on stderr. ``check(tally)`` raises under ``--strict`` when rows were left out."""

    def __init__(self, command: str, args: argparse.Namespace) -> None:
        self.command, self.args = command, args
        self.tally: Any = None
        self._cm = warnings.catch_warnings(record=True)
        self.records: List[warnings.WarningMessage] = []

    def __enter__(self) -> "Reporter":
        self.records = self._cm.__enter__()  # the list the warnings are appended to
        warnings.simplefilter("always")
        return self

    def check(self, tally: Any) -> None:
        self.tally = tally
        line = summary(tally, self.args)
        if line is not None and self.args.strict:
            causes = [str(r.message).split(" Counts: ")[0] for r in self.records  # no library switches
                      if issubclass(r.category, DroppedRowsWarning)]
            why = f" ({to_flags(causes[-1])})" if causes else ""
            raise UsageError(f"--strict: {line}{why}")

    def __exit__(self, et: Any, ev: Any, tb: Any) -> bool:
        records = list(self.records)
        self._cm.__exit__(et, ev, tb)
        if et is not None:
            return False
        seen: List[str] = []
        for r in records:
            if not issubclass(r.category, UserWarning):  # not vpoc's: the usual display
                warnings.showwarning(r.message, r.category, r.filename, r.lineno)
                continue
            # the library's pointers to its own fields and switches mean nothing on a shell
            text = " ".join(to_flags(str(r.message).split(" Counts: ")[0]).split())
            if text not in seen:
                seen.append(text)
        for text in seen[:_MAX_WARNINGS]:
            print(f"vpoc: warning: {text}", file=sys.stderr)
        if len(seen) > _MAX_WARNINGS:
            print(f"vpoc: warning: ... and {len(seen) - _MAX_WARNINGS} more", file=sys.stderr)
        for note in ([] if self.tally is None else getattr(self.tally, "notes", [])):
            print(f"vpoc: {self.command}: {note}", file=sys.stderr)
        line = None if self.tally is None else summary(self.tally, self.args)
        if line is not None:
            print(f"vpoc: {self.command}: {line}", file=sys.stderr)
        return False
