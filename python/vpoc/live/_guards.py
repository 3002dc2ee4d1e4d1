"""Refusals of vpoc.Live: bar-only arguments of a trades Live, rows of a session close() ended, too-wide sessions.

Contract: each refusal is a ValueError naming the argument (or the row's position in the update) and is
made before anything changes; a too-wide session is said in the batch engine's own words (its first row).
"""

from __future__ import annotations

import warnings
from typing import Any, List, Optional, Sequence

import numpy as np

from .._api import from_bars, from_trades
from .._arrays import derived_prices
from .._errors import InputError, input_error, readdressed, row_of, session_named
from .._time import iso_utc

__all__ = ["check_bar_only", "closed_session_error", "session_too_wide", "state_part_error"]


def check_bar_only(kind: str, label: str, distribute: Any, default_distribute: Any, session_features: Any,
                   features: Any) -> None:
    """Refuses the arguments of ``Live(...)`` that only bars use when ``kind`` is "trades" (a trade is one
    price at one time: nothing to distribute, no bar features), naming the argument; ``distribute`` equal to
    ``default_distribute`` (what the Live records without it, read back by ``from_state``) passes."""
    if kind == "bars":
        return
    if label == "close":
        raise ValueError("label='close' is for bars (a trade's timestamp is its time); "
                         "use label='open' with kind='trades'")
    if distribute is not None and distribute != default_distribute:
        raise ValueError(f"distribute={distribute!r} is for bars (how a bar's volume spreads over its range); "
                         "a trade's volume sits at its price: leave distribute out with kind='trades'")
    if isinstance(session_features, (bool, np.bool_)) and session_features:
        raise ValueError("session_features=True is for bars: session features are computed from bars "
                         "(kind='bars'); leave session_features out with kind='trades'")
    if features:
        raise ValueError(f"features={dict(features)!r} is for bars: bar and session features are computed "
                         "from bars (kind='bars'); leave features out with kind='trades'")


def closed_session_error(label: int, ts: int, position: Optional[int]) -> InputError:
    """The error of a row (timestamp ``ts``; ``position`` in the update, None for a one-row update) of
    session ``label``, which close() ended: its profile was emitted (``profiles``), so the row is refused
    rather than start a second session of the same label."""
    where = "timestamp" if position is None else f"timestamp[{position}]"
    return input_error(f"{where} ({iso_utc(ts)}) belongs to session {label}, which close() ended: its profile "
                       "is already in profiles, and a closed session takes no more rows (rows of a later "
                       "session are taken); nothing was changed", "timestamp", position)


def session_too_wide(e: BaseException, bars: bool, core: Any, cols: Sequence[np.ndarray], o: Optional[np.ndarray],
                     a: int, b: int, label: Any, kw: dict, distribute: str) -> BaseException:
    """The live engine's error ``e`` about appending rows [a, b) of ``cols`` (high, low, close, volume or
    price, volume; ``o`` open or None) to the session ``core`` (None: a new session) said as the batch
    says it when ``e`` names no row (a session wider than max_rows): the batch engine's error on the
    session's rows and these (``from_bars`` / ``from_trades`` with ``kw``), whose first row past
    max_rows (one of these) is given as its position among rows [a, b) (``.index``) and its session by
    ``label``. Any other error, or one the batch does not make about these rows, is returned as it is."""
    if not isinstance(e, InputError) or row_of(e) is not None:
        return e
    keys = (0, 1, 2, 4) if bars else (0, 4)
    held: List[np.ndarray] = [core.column(k) for k in keys] if core is not None else \
        [np.zeros(0) for _ in keys]
    n_held = int(held[0].shape[0])
    rows = [np.concatenate([h, np.asarray(c[a:b], np.float64)]) for h, c in zip(held, cols)]
    if o is not None:
        o = np.concatenate([core.column(3) if core is not None else np.zeros(0), o[a:b]])
    try:
        with warnings.catch_warnings(), derived_prices():
            warnings.simplefilter("ignore")
            if bars:
                from_bars(*rows, open=o, distribute=distribute, **kw)
            else:
                from_trades(*rows, **kw)
    except InputError as batch:
        i = row_of(batch)
        if i is None or getattr(batch, "session", None) is None or not n_held <= i < n_held + b - a:
            return e
        moved = readdressed(batch, i - n_held, (), lambda name, row: f"{name}[{row}]")
        return session_named(moved, label) if label is not None else moved
    return e


def state_part_error(e: BaseException, where: str) -> ValueError:
    """``e``, an error about the rows of a part of a saved state (``where``: "state['current']"), said of
    that part: its message after ``where: ``; a vpoc.InputError keeps its ``.argument``, ``.index`` (the
    row within the part: the session's row for state['current']), ``.reason`` and ``.session``."""
    if isinstance(e, InputError):
        return input_error(f"{where}: {e}", e.argument, row_of(e), e.reason, getattr(e, "session", None))
    return ValueError(f"{where}: {e}")
