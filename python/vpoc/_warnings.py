"""The warning classes vpoc emits when it leaves rows out or guesses a default.

Contract: every warning names the count, the share and the likely cause; filter by class
(``warnings.simplefilter("error", vpoc.DroppedRowsWarning)``) to make it an error.
"""

from __future__ import annotations

__all__ = ["DroppedRowsWarning", "GuessedDefaultWarning"]


class DroppedRowsWarning(UserWarning):
    """Rows were left out (outside every session, in a halt, on a holiday, a cut last line)."""


class GuessedDefaultWarning(UserWarning):
    """A setting the caller did not give was inferred from the data (session rule, bar interval)."""
