"""The aggressor side of trades as int8: +1 buyer-initiated, -1 seller-initiated, 0 unknown.

Contract: ``aggressor_side`` reads integers in {-1, 0, +1} (as numbers or text) or the letters Databento
writes ('B' buy aggressor, 'A' sell aggressor, 'N' none); anything else raises ValueError naming the
argument and the first offending row's value and position. The one home of this rule (readers,
containers, engine calls).

Databento's convention (https://databento.com/docs/schemas/trades, field ``side``: "Ask for a sell
aggressor in a trade, Bid for a buy aggressor in a trade, or None where no side is specified"): 'B'
is a buyer lifting the offer (+1), 'A' a seller hitting the bid (-1).
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import numpy as np

from ._arrays import unmasked
from ._warnings import GuessedDefaultWarning, user_stacklevel

__all__ = ["SIDE_LETTERS", "aggressor_side", "warn_unsided"]

#: Databento's side letters and their aggressor side.
SIDE_LETTERS: Dict[str, int] = {"B": 1, "A": -1, "N": 0}
_TEXT: Dict[str, int] = {**SIDE_LETTERS, "1": 1, "+1": 1, "-1": -1, "0": 0}
_WHAT = "+1 (buyer-initiated), -1 (seller-initiated), 0 (unknown) or 'B' / 'A' / 'N'"


def _at(where: Optional[Callable[[int], str]], name: str, i: int) -> str:
    return where(i) if where is not None else f"{name}[{i}]"


_TABLE = np.full(256, 2, dtype=np.int8)  # code of each byte; 2: not a side
for _k, _v in _TEXT.items():
    if len(_k) == 1:
        _TABLE[ord(_k)] = _v


def _letters(codes: np.ndarray, arr: np.ndarray, name: str,
             where: Optional[Callable[[int], str]]) -> np.ndarray:
    """One-character sides by table look-up (arr: the values, for the error)."""
    out = _TABLE[codes]
    bad = np.flatnonzero(out == 2)
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{_at(where, name, i)}: {name} = {_plain(arr[i])!r}; give {_WHAT}")
    return np.ascontiguousarray(out)


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def aggressor_side(values: Any, name: str = "side",
                   where: Optional[Callable[[int], str]] = None) -> np.ndarray:
    """``values`` as a contiguous int8 array of +1 / -1 / 0.

    Accepted: integers (or floats with those exact values) -1, 0, +1; text or bytes 'B', 'A', 'N'
    (Databento), '+1', '1', '-1', '0', or the text of a number with one of those exact values
    ('1.0', '-1.0', '0.0': a float column written out) (surrounding blanks ignored). Booleans are refused
    (TypeError), as is anything else (ValueError naming ``name`` and the first bad value; ``where(i)``,
    when given, names position i, e.g. a file's line). 1-D only.
    """
    if isinstance(values, (bool, np.bool_)):
        raise TypeError(f"{name}={values!r} is a boolean, not a side per row; give {_WHAT}")
    arr = np.asarray(unmasked(values, name))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} is boolean; give {_WHAT}")
    if arr.dtype.kind in "iuf":
        ok = (arr == 1) | (arr == -1) | (arr == 0)
        if not ok.all():
            i = int(np.argmax(~ok))
            raise ValueError(f"{_at(where, name, i)}: {name} = {arr[i].item()!r}; give {_WHAT}")
        return np.ascontiguousarray(arr, dtype=np.int8)
    if arr.dtype.kind not in "USO":
        raise TypeError(f"{name} has dtype {arr.dtype}; give {_WHAT}")
    if arr.size == 0:
        return np.zeros(0, dtype=np.int8)
    if arr.dtype.kind == "S" and arr.dtype.itemsize == 1:  # one byte a row (Databento): a table
        return _letters(arr.view(np.uint8), arr, name, where)
    try:
        text = arr.astype(str)  # bytes are decoded as ASCII; other objects by their str()
    except (UnicodeDecodeError, ValueError, TypeError):
        text = np.asarray([repr(v) for v in arr.tolist()])
    if text.dtype.itemsize == 4:  # one character a row
        return _letters(np.minimum(text.view(np.uint32), 255).astype(np.uint8), arr, name, where)
    uniq, inverse = np.unique(text, return_inverse=True)
    codes = np.array([_text_code(u) for u in uniq.tolist()], dtype=np.int8)
    out = codes[inverse.reshape(-1)]
    bad = np.flatnonzero(out == 2)
    if bad.size:  # the first offending row (not the first of the sorted distinct values)
        i = int(bad[0])
        raise ValueError(f"{_at(where, name, i)}: {name} = {_plain(arr[i])!r}; give {_WHAT}")
    return np.ascontiguousarray(out)


def _text_code(u: str) -> int:
    """The side of one text value (2: not a side): a letter or integer of ``_TEXT``, or the text of a
    number with one of the exact values -1, 0, +1 (``'1.0'``, ``'-1.0'``, ``'0.0'``: how a float side
    column is written), the rule the numeric path applies; anything else (``'0.5'``, ``'nan'``) is 2."""
    u = u.strip()
    code = _TEXT.get(u)
    if code is not None:
        return code
    try:
        x = float(u)
    except ValueError:
        return 2
    return int(x) if x in (-1.0, 0.0, 1.0) else 2


def warn_unsided(files: Sequence[Tuple[str, int, float, bool]], trades: bool) -> None:
    """A GuessedDefaultWarning naming each of several files ``(name, rows, volume, has side)`` that has
    no side column (trades' side, bars' buy / sell volumes) while another has one: its rows are read as
    side unknown (0), which is otherwise silent (a session's delta then covers part of its volume).
    The one home of that message (vpoc.io's list of files, the CLI's files read one at a time)."""
    if not any(f[3] for f in files) or all(f[3] for f in files):
        return
    missing = [f for f in files if not f[3]]
    rows, total = sum(f[1] for f in missing), sum(f[1] for f in files)
    lost, vol = sum(f[2] for f in missing), sum(f[2] for f in files)
    what = "aggressor side column" if trades else "buy / sell volume columns"
    warnings.warn(f"{len(missing)} of {len(files)} files have no {what} while another has one: "
                  + ", ".join(f"{name} ({n:,} rows)" for name, n, _, _ in missing)
                  + f"; their {rows:,} of {total:,} rows ({100.0 * rows / max(total, 1):.3g}%; volume {lost:g} of "
                  f"{vol:g}) are read as side unknown (0: in no delta, buy or sell total)",
                  GuessedDefaultWarning, stacklevel=user_stacklevel())
