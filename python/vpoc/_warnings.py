"""The warning classes vpoc emits when it leaves rows out or guesses a default.

Contract: every warning names the count, the share and the likely cause; filter by class
(``warnings.simplefilter("error", vpoc.DroppedRowsWarning)``) to make it an error.
"""

from __future__ import annotations

import os
import sys

__all__ = ["CoarseGridWarning", "DroppedRowsWarning", "DuplicateRowsWarning", "GuessedDefaultWarning",
           "MissingDaysWarning", "PresetWarning", "user_stacklevel"]


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
