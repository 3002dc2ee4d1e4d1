"""What every ``vpoc`` command shares: exit codes, the usage error, defaults and message helpers.

Contract: exit 0 on success, 2 on bad arguments or bad input (:class:`UsageError`), 1 on runtime
errors, 130 on Ctrl-C; each error is one ``vpoc: error: ...`` line on stderr.
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["DEFAULT_CHUNK_ROWS", "DEFAULT_PROGRESS_MIN_ROWS", "EXIT_INTERRUPTED", "EXIT_OK",
           "EXIT_RUNTIME", "EXIT_USAGE", "OUTPUT_SUFFIXES", "SESSION_KINDS", "UsageError",
           "error", "fmt_ts"]

#: Exit codes (argparse's convention for usage errors).
EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

SESSION_KINDS = ("globex", "rth", "daily")
OUTPUT_SUFFIXES = (".parquet", ".pq", ".csv")
DEFAULT_CHUNK_ROWS = 250_000
DEFAULT_PROGRESS_MIN_ROWS = 100_000


class UsageError(Exception):
    """A problem the user can fix (bad argument, unreadable or invalid input): exit code 2."""


def fmt_ts(ns: int) -> str:
    """int64 ns UTC as ``YYYY-MM-DD HH:MM:SS UTC``."""
    return str(np.datetime64(int(ns), "ns").astype("datetime64[s]")).replace("T", " ") + " UTC"


def error(msg: str) -> None:
    """One ``vpoc: error: ...`` line on stderr (whitespace collapsed)."""
    print(f"vpoc: error: {' '.join(str(msg).split())}", file=sys.stderr)
