"""``python -m vpoc``: the ``vpoc`` command line (see :mod:`vpoc.cli` for the commands).

Contract: exit 0 on success, 2 on bad arguments or input, 1 on runtime errors, 130 on Ctrl-C.
"""

from __future__ import annotations

import sys

from .cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
