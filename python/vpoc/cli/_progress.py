"""Progress and summaries on stderr for ``vpoc profile`` / ``vpoc features``.

Contract: :class:`Progress` draws a tqdm bar over input rows on stderr only when asked or when
stderr is a terminal and the run is long; it never writes to stdout.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Sequence

from .._optional import hint
from ._common import UsageError

__all__ = ["Progress", "file_size"]


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


def file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0

