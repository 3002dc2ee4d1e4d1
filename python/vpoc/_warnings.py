"""The warning classes vpoc emits when it leaves rows out or guesses a default.

Contract: every warning names the count, the share and the likely cause; filter by class
(``warnings.simplefilter("error", vpoc.DroppedRowsWarning)``) to make it an error.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import warnings
from typing import Any, Iterator, List, Tuple

__all__ = ["CoarseGridWarning", "DroppedRowsWarning", "DuplicateRowsWarning", "GuessedDefaultWarning",
           "MissingDaysWarning", "PresetWarning", "collected", "collecting_row", "data_warning", "user_location", "user_stacklevel"]


class CoarseGridWarning(UserWarning):
    """Every price lies on a grid several ticks wide (>= 4 ``tick_size``, >= 16 distinct prices): prices
    in cents with a tick in points, or a ``tick_size`` finer than the data's; the message names the
    factor k and ``tick_size=k*tick_size``."""


class DroppedRowsWarning(UserWarning):
    """Rows were left out (outside every session, in a halt, on a holiday, a cut last line)."""


class DuplicateRowsWarning(UserWarning):
    """Rows that are exact copies of another row (bars with the same timestamp and values) were kept
    and are counted twice."""


class GuessedDefaultWarning(UserWarning):
    """A setting the caller did not give was inferred from the data (session rule, bar interval)."""


class MissingDaysWarning(UserWarning):
    """A session's prior-session columns (``prior_*``, ``prev_*_dist``, ``va_migration``) compare it with a
    session more than 4 calendar days earlier (a week-end is 3): days are missing from the data."""


class PresetWarning(UserWarning):
    """A ``preset=`` was given to a function that applies only some of its rules (``session_features``,
    ``vpoc.tpo``: the initial balance ones); the message names the rules it does not apply."""


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` issued by the caller of this function point
    at the first frame outside the vpoc package (the user's line), however deep inside vpoc the
    warning is raised. Call it in the function that calls ``warnings.warn``."""
    level = 1
    frame = sys._getframe(1)  # the function that will call warnings.warn (stacklevel=1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def user_location() -> Tuple[str, int, str]:
    """(file, line, module name) of the first frame outside the vpoc package: the user's line that
    called into vpoc, where a warning said later for that call (:func:`collected`) points."""
    frame = sys._getframe(1)
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
    return frame.f_code.co_filename, frame.f_lineno, str(frame.f_globals.get("__name__", "__main__"))


# The list a collected() block keeps data warnings in (None: they are issued), and its caller's rows.
_SINK: "contextvars.ContextVar[Any]" = contextvars.ContextVar("vpoc_warning_sink", default=None)
_ROWS: "contextvars.ContextVar[Any]" = contextvars.ContextVar("vpoc_warning_rows", default=None)


@contextlib.contextmanager
def collected(rows: Any = None) -> Iterator[List[Tuple[type, str, bool]]]:
    """Within it (this thread or task only: a context variable, not the process' warning filters),
    the data warnings of vpoc's calls (:func:`data_warning`: the coarse price grid, rounded off-grid
    prices) are kept in the list it yields as (category, message, local), not issued: for a caller that
    makes many calls of one request (vpoc.dask's partitions) and says each warning itself. ``local``:
    the message counts the call's own rows (say which rows); ``rows``: the collecting caller's row
    of each input row of the calls (None: the same), which a message's example row names
    (:func:`collecting_row`)."""
    sink: List[Tuple[type, str, bool]] = []
    token, token_rows = _SINK.set(sink), _ROWS.set(rows)
    try:
        yield sink
    finally:
        _ROWS.reset(token_rows)
        _SINK.reset(token)


def collecting_row(row: int) -> int:
    """Input row ``row`` of a call as the caller collecting its warnings knows it (:func:`collected`'s
    ``rows``), e.g. the row of the whole dask frame; ``row`` itself outside such a block."""
    rows = _ROWS.get()
    return int(row) if rows is None or _SINK.get() is None else int(rows[int(row)])


def data_warning(message: str, category: type, stacklevel: int, local: bool = False) -> None:
    """``warnings.warn(message, category, stacklevel)`` as said by the caller of this function, or,
    within :func:`collected`, kept for the collecting caller to say (``local``: the message counts
    this call's rows only)."""
    sink = _SINK.get()
    if sink is not None:
        sink.append((category, message, local))
        return
    warnings.warn(message, category, stacklevel=stacklevel + 1)
