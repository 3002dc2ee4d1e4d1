"""Structured input errors made or re-addressed in Python: vpoc.InputError with .argument, .index, .reason.

Contract: an error re-addressed here keeps the engine's wording; only the input it names changes,
taken from the error's fields (argument, row), never read back from its text.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterable, Iterator, Optional

from ._core import InputError

__all__ = ["ROW_NAMES", "InputError", "input_error", "input_rows", "readdressed", "row_of"]

#: The names the engine gives a row's inputs in its messages (name[i]: "close[3]=5 is outside [low[3],
#: high[3]]"), and the side columns' (vpoc._side_profiles names them so).
ROW_NAMES = ("price", "volume", "high", "low", "close", "open", "side", "buy_volume", "sell_volume")


def input_error(message: str, argument: Optional[str] = None, index: Optional[int] = None,
                reason: Optional[str] = None) -> InputError:
    """A vpoc.InputError as the engine makes one: ``str(e) == message``, ``.argument``,
    ``.index`` (None: no row) and ``.reason`` (``message`` when not given)."""
    e = InputError(message)
    e.argument = argument
    e.index = None if index is None else int(index)
    e.reason = message if reason is None else reason
    return e


def row_of(e: BaseException) -> Optional[int]:
    """The input row ``e`` is about: its ``.index`` when it is a vpoc.InputError naming one,
    else None (a message without that structure, e.g. a check made in Python)."""
    if isinstance(e, InputError):
        index = getattr(e, "index", None)
        if index is not None:
            return int(index)
    return None


def _replace_names(text: str, spelled: dict) -> str:
    """``text`` with each occurrence of a key of ``spelled`` (not preceded by a word character)
    replaced by its value, in one left-to-right pass (a replacement is never replaced again)."""
    out, pos = [], 0
    while True:
        best = -1
        key = ""
        for k in spelled:
            j = text.find(k, pos)
            while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
                j = text.find(k, j + 1)
            if j >= 0 and (best < 0 or j < best or (j == best and len(k) > len(key))):
                best, key = j, k
        if best < 0:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos:best])
        out.append(spelled[key])
        pos = best + len(key)


def readdressed(e: InputError, row: int, names: Iterable[str], label: Callable[[str, int], str],
                argument: Optional[str] = None) -> InputError:
    """``e`` (a vpoc.InputError about input row ``e.index``; see :func:`row_of`) said of the
    caller's row ``row``: every ``name[e.index]`` in its message and reason, for each engine
    argument in ``names`` (the row's problem may name another array of the same row: "close[3]=5
    is outside [low[3], high[3]] = ..."), becomes ``label(name, row)``. The new error's
    ``.argument`` is ``argument`` (default: ``e.argument``) and its ``.index`` is ``row``."""
    index = row_of(e)
    if index is None:
        raise ValueError("readdressed needs a vpoc.InputError that names an input row")
    spelled = {f"{name}[{index}]": label(name, int(row)) for name in names}
    return input_error(_replace_names(str(e), spelled), e.argument if argument is None else argument,
                       int(row), _replace_names(str(e.reason), spelled))


@contextlib.contextmanager
def input_rows(rows: Any, names: Iterable[str] = ROW_NAMES) -> Iterator[None]:
    """Around work on some of the caller's rows (``rows[i]``: the caller's input row of position
    ``i``, e.g. the rows a vpoc.sessions.Sessions keeps, its ``.index``): a vpoc.InputError about
    position ``i`` (its ``.index``) is raised again about the input row ``rows[i]``: the same type,
    wording and ``.argument``, ``.index`` and every ``name[i]`` of its message (``names``) the input
    row (:func:`readdressed`: from the error's fields, not its text). Errors about no one row, about
    a position outside ``rows``, other exceptions, and every error when ``rows`` is None (the
    positions are the caller's rows) pass as they are. Nested, each maps its own positions."""
    if rows is None:
        yield
        return
    names = tuple(names)
    try:
        yield
    except InputError as e:
        i = row_of(e)
        if i is None or not 0 <= i < len(rows):
            raise
        raise readdressed(e, int(rows[i]), names, lambda name, row: f"{name}[{row}]") from None
