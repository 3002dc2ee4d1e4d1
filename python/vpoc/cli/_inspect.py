"""``vpoc inspect FILE``: what a file's timestamps, bars and prices look like, and how to read it.

Contract: prints ``repr(vpoc.io.inspect(FILE, **read flags))`` (time zone, open/close stamps, bar
interval, tick size, with the evidence) and then the ``vpoc profile`` command line that reads the
file with those conventions (``Inspection.cli_args``). Exit 0, or 2 when the file cannot be read.
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any, List

from .._optional import require
from ._common import EXIT_OK, UsageError, to_flags
from ._input import check_inputs, read_kwargs

__all__ = ["cmd_inspect", "suggested_command"]


def suggested_command(path: str, result: Any) -> str:
    """``vpoc profile PATH <cli_args>`` (with ``--tick-size`` from the result when the args lack it)."""
    args: List[str] = [str(a) for a in (getattr(result, "cli_args", None) or [])]
    if getattr(result, "tz_choices", None) and "--tz" not in args:  # naive stamps: the zone is the user's choice
        args = ["--tz", "ZONE"] + args
    tick = getattr(result, "tick_size", None)
    if "--tick-size" not in args and tick is not None:
        args += ["--tick-size", f"{tick:g}"]
    return " ".join(["vpoc", "profile", shlex.quote(path), *(a if a == "ZONE" else shlex.quote(a) for a in args)])


def cmd_inspect(args: argparse.Namespace) -> int:
    path = args.inputs[0]
    check_inputs([path])
    require("pandas", "vpoc inspect", "cli")
    if path.lower().endswith((".parquet", ".pq")):
        require("pyarrow", f"vpoc inspect with Parquet files ({path})", "cli")
    from .. import io as vio

    fn = getattr(vio, "inspect", None)
    if fn is None:
        raise UsageError("this vpoc has no vpoc.io.inspect")
    if args.roll is not None or args.adjust is not None:
        raise UsageError("vpoc inspect reads one file; --roll / --adjust apply to vpoc profile")
    kw = {k: v for k, v in read_kwargs(args).items() if v is not None}
    try:
        result = fn(path, **kw)
    except (OSError, ValueError, TypeError, KeyError) as e:
        detail = e.strerror if isinstance(e, OSError) and e.strerror else str(e).strip() or type(e).__name__
        detail = to_flags(detail)
        raise UsageError(detail if path in detail else f"{path}: {detail}") from e
    print(repr(result))
    print()
    choices = getattr(result, "tz_choices", None)
    print("read it with:" if not choices else
          f"read it with (ZONE: the zone of the naive timestamps, which the data cannot tell; one of "
          f"{', '.join(choices)}):")
    print(f"  {suggested_command(path, result)}")
    return EXIT_OK
