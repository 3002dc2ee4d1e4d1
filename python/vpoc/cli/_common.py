"""What every ``vpoc`` command shares: exit codes, the usage error, defaults and message helpers.

Contract: exit 0 on success, 2 on bad arguments or bad input (:class:`UsageError`), 1 on runtime
errors, 130 on Ctrl-C; each error is one ``vpoc: error: ...`` line on stderr.
"""

from __future__ import annotations

import re
import shlex
import sys

import numpy as np

__all__ = ["DEFAULT_CHUNK_ROWS", "DEFAULT_PROGRESS_MIN_ROWS", "EXIT_INTERRUPTED", "EXIT_OK",
           "EXIT_RUNTIME", "EXIT_USAGE", "FLAGS", "OUTPUT_SUFFIXES", "SESSION_KINDS", "UsageError",
           "error", "fmt_ts", "to_flags"]

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


#: The library's keyword arguments and the ``vpoc`` flags that set them.
FLAGS = {
    "tick_size": "--tick-size", "ticks_per_row": "--ticks-per-row", "value_area": "--value-area",
    "va_method": "--va", "poc_tie": "--poc-tie", "max_rows": "--max-rows", "device": "--device",
    "memory_budget": "--memory-budget", "threads": "--threads", "distribute": "--distribute",
    "tz": "--tz", "format": "--format", "time_unit": "--time-unit", "time_format": "--time-format",
    "columns": "--columns", "sep": "--sep", "ambiguous": "--ambiguous",
    "nonexistent": "--nonexistent", "label": "--label", "interval": "--interval",
    "calendar": "--calendar", "holidays": "--holidays", "roll": "--roll", "adjust": "--adjust",
    "snap": "--snap", "unterminated": "--unterminated", "instrument": "--instrument",
}
_VALUE = r"""(?:\{[^{}]*\}|'[^']*'|"[^"]*"|None|True|False|[\w.:+-]+)"""
_KW_RE = re.compile(r"(?<![\w.-])(?:(pass |use |or )?(on_outside|outside)=|(" + "|".join(FLAGS) + r")=)(" + _VALUE + r")?")
_WARN_OR_DROP_RE = re.compile(r"(?:pass )?on_outside='warn' or (?:on_outside=)?'drop'")
_FILTER_RE = re.compile(r"filter vpoc(?:\.\w+)*\.\w+Warning")
_PAIR_RE = re.compile(r"""['"]?(\w+)['"]?\s*:\s*(\([^)]*\)|'[^']*'|"[^"]*"|[^,}]+)""")


def _flag_value(name: str, value: str) -> str:
    if name == "columns" and value.startswith("{"):
        pairs = []
        for key, col in _PAIR_RE.findall(value):
            col = col.strip()
            if col.startswith("("):
                col = "+".join(c.strip().strip("'\"") for c in col[1:-1].split(",") if c.strip())
            pairs.append(f"{key}={col.strip(chr(39) + chr(34))}")
        return ",".join(pairs) or "NAME=COLUMN"
    value = value.strip("'\"")
    if value == "None":
        return "none"
    return shlex.quote(value)  # as a shell takes it: '%m/%d/%Y %H:%M:%S'


def to_flags(message: str) -> str:
    """The library's ``name=value`` hints in ``message`` spelled as the ``vpoc`` flags that exist:
    ``pass columns={'timestamp': name}`` -> ``pass --columns timestamp=name``, ``time_unit='s'`` ->
    ``--time-unit s``, ``outside='drop'`` / ``on_outside=`` -> ``--strict`` (left out or given),
    ``use read_trades / from_trades`` -> ``use --kind trades`` (and bars)."""
    # the session rule's "pass on_outside='warn' or 'drop'": both are what leaving out --strict does
    message = _WARN_OR_DROP_RE.sub("leave out --strict", str(message))
    # vpoc.io's "this looks like trades: use read_trades / from_trades": the CLI's way is --kind
    message = message.replace("use read_trades / from_trades", "use --kind trades").replace(
        "use read_bars / from_bars", "use --kind bars")
    # advice only Python can follow: a warning class to filter (no flag does it), the too-wide words
    message = _FILTER_RE.sub("this warning can be ignored (the profile is computed as asked)", message)
    message = message.replace("use a larger tick_size or ticks_per_row (or raise max_rows)",
                              "use a larger --tick-size or --ticks-per-row (or raise --max-rows)")
    # DBN: "pass instrument=<instrument_id or symbol> to read one", "...; pass instrument=None"
    message = message.replace("instrument=<", "--instrument <").replace("pass instrument=None",
                                                                          "leave out --instrument")

    def sub(m: "re.Match[str]") -> str:
        value = m.group(4)
        if m.group(2):  # the session rule's outside= / on_outside=
            if value is None or value.strip("'\"") == "raise":
                return f"{m.group(1) or ''}--strict"
            return "leave out --strict"
        name = m.group(3)
        if name == "snap" and (value or "True") == "True":
            return "--snap"
        flag = FLAGS[name]
        if value is None:
            return flag
        return f"{flag} {_flag_value(name, value)}"
    return _KW_RE.sub(sub, str(message))
