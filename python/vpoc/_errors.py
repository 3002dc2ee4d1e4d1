"""Structured input errors made or re-addressed in Python: vpoc.InputError with .argument, .index, .reason, .session.

Contract: an error re-addressed here keeps the engine's wording; only the input it names changes,
taken from the error's fields (argument, row, session), never read back from its text.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterable, Iterator, Optional

import numpy as np

from ._core import InputError

__all__ = ["ROW_NAMES", "ROW_WORDS", "InputError", "input_error", "input_rows", "labelled", "readdressed",
           "row_of", "session_named"]

#: The names the engine gives a row's inputs in its messages (name[i]: "close[3]=5 is outside [low[3],
#: high[3]]"), and the side columns' (vpoc._side_profiles names them so).
ROW_NAMES = ("price", "volume", "high", "low", "close", "open", "side", "buy_volume", "sell_volume")
#: The words the engine says a row with where it names no input ("session 0 spans 77 rows, more than
#: max_rows=20 from row 351 on": "row i" for trades, "bar i" for bars).
ROW_WORDS = ("row", "bar")


def input_error(message: str, argument: Optional[str] = None, index: Optional[int] = None,
                reason: Optional[str] = None, session: Optional[int] = None) -> InputError:
    """A vpoc.InputError as the engine makes one: ``str(e) == message``, ``.argument``,
    ``.index`` (None: no row), ``.reason`` (``message`` when not given) and ``.session`` (the
    session's position in the call it is about; None: none)."""
    e = InputError(message)
    e.argument = argument
    e.index = None if index is None else int(index)
    e.reason = message if reason is None else reason
    e.session = None if session is None else int(session)
    return e


def row_of(e: BaseException) -> Optional[int]:
    """The input row ``e`` is about: its ``.index`` when it is a vpoc.InputError naming one,
    else None (a message without that structure, e.g. a check made in Python)."""
    if isinstance(e, InputError):
        index = getattr(e, "index", None)
        if index is not None:
            return int(index)
    return None


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _replace_names(text: str, spelled: dict) -> str:
    """``text`` with each occurrence of a key of ``spelled`` (not preceded by a word character, nor
    followed by one when the key ends in one: "row 3" is not in "row 35") replaced by its value, in
    one left-to-right pass (a replacement is never replaced again)."""
    out, pos = [], 0
    while True:
        best = -1
        key = ""
        for k in spelled:
            j = text.find(k, pos)
            while j >= 0 and ((j > 0 and _word(text[j - 1])) or
                              (_word(k[-1]) and j + len(k) < len(text) and _word(text[j + len(k)]))):
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
    is outside [low[3], high[3]] = ..."), becomes ``label(name, row)``, and every "row e.index" /
    "bar e.index" (ROW_WORDS: the engine's words for the row where it names no input) "row row".
    The new error's ``.argument`` is ``argument`` (default: ``e.argument``), its ``.index`` is ``row``
    and its ``.session`` ``e.session``."""
    index = row_of(e)
    if index is None:
        raise ValueError("readdressed needs a vpoc.InputError that names an input row")
    spelled = {f"{name}[{index}]": label(name, int(row)) for name in names}
    spelled.update({f"{word} {index}": f"{word} {int(row)}" for word in ROW_WORDS})
    return input_error(_replace_names(str(e), spelled), e.argument if argument is None else argument,
                       int(row), _replace_names(str(e.reason), spelled), getattr(e, "session", None))


def session_named(e: InputError, label: Any) -> InputError:
    """``e`` (a vpoc.InputError about session ``e.session``, its position in the call) with that
    session named by its label: every "session e.session" of its message and reason becomes
    "session label" (the trade date or id the caller knows it by, as the result's index shows it);
    the same ``.argument``, ``.index`` and ``.session``."""
    s = getattr(e, "session", None)
    if s is None:
        raise ValueError("session_named needs a vpoc.InputError that names a session")
    spelled = {f"session {int(s)}": f"session {label}"}
    return input_error(_replace_names(str(e), spelled), e.argument, row_of(e),
                       _replace_names(str(e.reason), spelled), int(s))


def _label_text(label: Any) -> Any:
    """A session label as a message says it: 20240102, not np.int64(20240102); a date as 2024-01-02."""
    if isinstance(label, np.datetime64):
        day = label.astype("datetime64[D]")
        return str(day if day == label else label)
    return label.item() if isinstance(label, np.generic) else label


@contextlib.contextmanager
def input_rows(rows: Any, names: Iterable[str] = ROW_NAMES, labels: Any = None,
               first_session: int = 0) -> Iterator[None]:
    """Around work on some of the caller's rows (``rows[i]``: the caller's input row of position
    ``i``, e.g. the rows a vpoc.sessions.Sessions keeps, its ``.index``): a vpoc.InputError about
    position ``i`` (its ``.index``) is raised again about the input row ``rows[i]``: the same type,
    wording and ``.argument``, ``.index`` and every ``name[i]`` of its message (``names``) the input
    row (:func:`readdressed`: from the error's fields, not its text). ``labels``: the label of each
    session of the work (a sequence, or a function of no argument giving one, called only on an
    error; None: not known): an error about session ``s`` (its ``.session``) names it ``labels[s]``
    (:func:`session_named`). Errors about no one row or session, about a position outside ``rows``
    or ``labels``, other exceptions, and every error when ``rows`` and ``labels`` are None pass as
    they are. Nested, each maps its own positions. ``first_session``: the position of the work's first
    session among the caller's (vpoc.dask's partition among the whole result's): an error's ``.session``
    is said of the caller's sessions."""
    if rows is None and labels is None and not first_session:
        yield
        return
    names = tuple(names)
    try:
        yield
    except InputError as e:
        out = e
        i = row_of(e)
        if rows is not None and i is not None and 0 <= i < len(rows):
            out = readdressed(e, int(rows[i]), names, lambda name, row: f"{name}[{row}]")
        out = labelled(out, labels)
        s = getattr(out, "session", None)
        if first_session and s is not None:
            out = input_error(str(out), out.argument, row_of(out), out.reason, int(s) + int(first_session))
        if out is e:
            raise
        raise out from None


def labelled(e: InputError, labels: Any) -> InputError:
    """``e`` with its session (``.session``) named by its label (:func:`session_named`) when
    ``labels`` (as :func:`input_rows` takes them) knows it; else ``e`` itself."""
    s = getattr(e, "session", None)
    if labels is None or s is None:
        return e
    known = labels() if callable(labels) else labels
    if known is None or not 0 <= s < len(known):
        return e
    return session_named(e, _label_text(known[s]))
