"""The ``vpoc`` command line: ``profile``, ``features``, ``info``, ``doctor``, ``bench`` and ``demo``.

Contract: exit 0 on success, 2 on bad arguments or bad input, 1 on runtime errors, 130 on Ctrl-C,
143 on SIGTERM (the output file is left as it was, no temporary file remains);
each error is one ``vpoc: error: ...`` line on stderr (a traceback only with ``--traceback``).

``vpoc profile IN... --tick-size 0.25 --out OUT.parquet`` reads bar (or ``--kind trades``) files
with ``vpoc.io``, splits them into sessions with ``vpoc.sessions`` (``--session globex|rth|daily``)
and writes one row per session (the columns of :func:`profile_table`). Files are streamed one at a
time in the order given (they must be in time order); a session that continues into the next file
is carried over, so results do not depend on how the data is split into files. A progress bar
(tqdm, on stderr) is shown when stderr is a terminal and the run is long (``--progress``).

Modules: ``_args`` (the parser), ``_input`` (streaming files into sessions), ``_profile``
(profile / features), ``_progress`` (stderr bar and summaries), ``_info`` (info / doctor / bench /
demo), ``_common`` (exit codes, errors).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Any, Iterator, List, Optional

from .. import _api  # noqa: F401 - tests patch vpoc.cli._api.from_bars
from .._stream import PROFILE_COLUMNS, empty_profile_table, profile_table
from ._args import build_parser, parse_size
from ._profile import OUTPUT_COLUMNS, SESSION_COLUMNS
from ._common import EXIT_INTERRUPTED, EXIT_RUNTIME, EXIT_USAGE, UsageError, error

#: Exit status after SIGTERM (the shell's 128 + signal number).
EXIT_TERMINATED = 128 + int(signal.SIGTERM)


class Terminated(BaseException):
    """SIGTERM as an exception (like KeyboardInterrupt for SIGINT), so that ``finally`` blocks and
    the atomic writer's cleanup run: a terminated job leaves no temporary file behind."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` while the command runs (main thread, default handler
    only: an embedding program's own handler is left alone)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

__all__ = ["EXIT_TERMINATED", "OUTPUT_COLUMNS", "PROFILE_COLUMNS", "SESSION_COLUMNS", "Terminated", "UsageError", "build_parser", "empty_profile_table", "main",
           "parse_size", "profile_table"]


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line; returns the exit code (the ``vpoc`` console script exits with it)."""
    parser = build_parser()
    args = parser.parse_args(argv)  # usage errors exit 2 here (argparse)
    try:
        with _sigterm_raises():
            return int(args.run(args))
    except KeyboardInterrupt:
        error("interrupted")
        return EXIT_INTERRUPTED
    except Terminated:
        error("terminated (SIGTERM); no output written")
        return EXIT_TERMINATED
    except BrokenPipeError:  # e.g. `vpoc profile ... | head`: stop quietly
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_RUNTIME
    except (UsageError, ValueError, TypeError) as e:
        if args.traceback:
            raise
        error(str(e))
        return EXIT_USAGE
    except ImportError as e:  # an optional package is missing: the message names the extra
        if args.traceback:
            raise
        error(str(e))
        return EXIT_RUNTIME
    except MemoryError as e:
        if args.traceback:
            raise
        error(f"out of memory: {e} (try a smaller --memory-budget on a GPU, or fewer/smaller inputs)")
        return EXIT_RUNTIME
    except Exception as e:  # noqa: BLE001 - the shell user gets one line, not a traceback
        if args.traceback:
            raise
        error(f"{type(e).__name__}: {e} (run with --traceback for details)")
        return EXIT_RUNTIME
