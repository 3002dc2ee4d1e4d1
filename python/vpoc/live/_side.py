"""The aggressor side in vpoc.Live: per-row buy / sell volume, delta, delta POC and imbalances of the session so far.

Contract: ``Live(side=True)`` takes a side with every row (trades: ``side=``, vpoc._side's codes; bars:
``buy_volume=`` / ``sell_volume=``, vpoc._side_profiles' checks); the session's own C++ core (a sided
``_core.LiveSession``) keeps each row's buy / sell volume, the exact buy / sell rows of the whole session and
the running delta (design side-single-pass.md §8), so every side field equals ``from_trades(..., side=...)`` /
``from_bars(..., buy_volume=, sell_volume=)`` on the same rows; the core's rollback covers them.
"""

from __future__ import annotations

import numbers
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .. import _core
from .._arrays import MAX_VOLUME, volume_too_large
from .._profiles import NO_ROW, Profiles
from .._side import aggressor_side
from .._side_profiles import HostSideFields, attach_sides, bar_side_volumes, row_sides, side_rules, trade_side
from .._validate import boolean as _bool
from ._common import _locked

__all__ = ["SIDE_DONE_KEYS", "_SideMixin"]

#: What a finished session of a Live with side=True keeps besides its profile (``state['done'][k]``).
SIDE_DONE_KEYS = ("buy_volume", "sell_volume", "delta", "buy_total", "sell_total")
_NEEDS = {True: "every update() needs buy_volume= and sell_volume= (each bar's buy- and sell-aggressor "
                "volume; the rest of its volume is of unknown side)",
          False: "every update() needs side= (+1 buyer-initiated, -1 seller-initiated, 0 unknown, or "
                 "'B' / 'A' / 'N')"}


def _one_float(x: Any, name: str) -> float:
    """A one-row buy / sell volume as a float: a real number (TypeError for a bool, a string,
    None), an integer range-checked as the exact integer (as ``volume`` is)."""
    if type(x) is float:
        return x
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be a number, got bool")
    if type(x) is int or isinstance(x, np.integer):
        if int(x) > MAX_VOLUME:
            raise volume_too_large(name, 0, int(x))
        return float(x)
    if not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(x).__name__}")
    return float(x)


def _one_array(x: Any) -> np.ndarray:
    """A checked one-row value as a one-element array of its own kind (int64 for integers, float64
    otherwise), so the side check compares it as the array path would."""
    if (type(x) is int or isinstance(x, np.integer)) and int(x) >= -2**63:
        return np.array([int(x)], dtype=np.int64)
    return np.array([float(x)])


class _SideMixin:
    """The aggressor side of a Live (methods of ``Live``)."""

    def _side_setup(self, side: Any, imbalance_ratio: Any, stacked_imbalance_min: Any) -> None:
        self._sided = _bool(side, "side")
        self._side_rules = side_rules(imbalance_ratio, stacked_imbalance_min)
        if self._side_rules.given and not self._sided:
            raise TypeError("imbalance_ratio= / stacked_imbalance_min= apply to aggressor-side profiles: "
                            "make the Live with side=True")
        self._side_opts = _core.Options(distribute=self._distribute, **self._rules_kw)
        self._side_reset()

    def _side_reset(self) -> None:
        self._side_cache: Optional[Tuple[Any, int, Any]] = None  # (core, size, fields) of the latest read

    # ------------------------------------------------------------------ inputs

    def _side_args(self, side: Any, buy_volume: Any, sell_volume: Any) -> Any:
        """The update's side arguments as given (trades: side; bars: (buy_volume, sell_volume)) or
        None; TypeError when they do not fit this Live."""
        if not self._sided:
            if side is not None or buy_volume is not None or sell_volume is not None:
                raise TypeError("this Live takes no aggressor side: make it with Live(..., side=True) to "
                                "pass side= (trades) or buy_volume= and sell_volume= (bars)")
            return None
        if self._bars:
            if side is not None:
                raise TypeError("side= is for trades; bars take buy_volume= and sell_volume=")
            if buy_volume is None or sell_volume is None:
                raise TypeError(f"this Live has side=True: {_NEEDS[True]}")
            return buy_volume, sell_volume
        if buy_volume is not None or sell_volume is not None:
            raise TypeError("buy_volume= / sell_volume= are for bars; trades take side=")
        if side is None:
            raise TypeError(f"this Live has side=True: {_NEEDS[False]}")
        return side

    def _side_one(self, given: Any, volume_in: Any, high: float, volume: float) -> Optional[Tuple[float, float]]:
        """(buy, sell) volume of a one-row update, checked (nothing changes here)."""
        if given is None:
            return None
        if not self._bars:
            if type(given) is int and -1 <= given <= 1:
                code = given
            else:
                code = int(aggressor_side(np.asarray([given]), "side", where=lambda _: "Live.update")[0])
            return (volume if code == 1 else 0.0, volume if code == -1 else 0.0)
        fb, fs = _one_float(given[0], "buy_volume"), _one_float(given[1], "sell_volume")
        # a bar that surely keeps the rule (exact float64 sums, below 2**53) skips the array call;
        # any other (NaN, negative, over) goes through it, for its decision and its words
        if not (0.0 <= fb and 0.0 <= fs and fb + fs <= volume and fb + fs < MAX_VOLUME):
            bar_side_volumes(_one_array(given[0]), _one_array(given[1]), _one_array(volume_in), np.array([high]),
                             self._side_rules)
        return fb, fs

    def _side_many(self, given: Any, args: Any, volume: np.ndarray) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """(buy, sell) float64 volumes of an array update's rows, checked: vpoc._side_profiles'
        rules (bar columns against the volume, trade side codes); ``volume``: the rows' float64."""
        if given is None:
            return None
        if self._bars:
            b, s = bar_side_volumes(given[0], given[1], args[-1], args[0], self._side_rules)
            return np.asarray(b, dtype=np.float64), np.asarray(s, dtype=np.float64)
        codes = trade_side(given, volume, args[0], self._side_rules)
        return volume * (codes == 1), volume * (codes == -1)

    # ------------------------------------------------------------------ the core's side

    def _side_kw(self, sides: Optional[Tuple[Any, Any]], a: int = 0, b: Optional[int] = None) -> Dict[str, Any]:
        """The buy= / sell= arguments of a core append (rows [a, b) of an array update's sides)."""
        if sides is None:
            return {}
        if b is None:
            return dict(buy=sides[0], sell=sides[1])
        return dict(buy=sides[0][a:b], sell=sides[1][a:b])

    # The side's steps of an update, each after the core's: the sided core holds every side value, and its
    # rollback puts them back, so a step only drops the cached fields (an interrupt may land in any of them).
    def _side_start(self, has_open: bool) -> None:
        self._side_cache = None

    def _side_append_one(self, bs: Tuple[float, float]) -> None:
        self._side_cache = None

    def _side_append(self, a: int, b: int) -> None:
        self._side_cache = None

    def _side_finished(self) -> None:
        self._side_cache = None

    def _side_delta(self) -> float:
        """The current session's running buy - sell volume (0.0 before its first row)."""
        core = self._core  # type: ignore[attr-defined]
        return 0.0 if core is None else float(core.delta)

    def _last_side(self) -> Tuple[float, float]:
        """The latest row's buy and sell volume ((nan, nan) before the session's first row)."""
        core = self._core  # type: ignore[attr-defined]
        return (float("nan"), float("nan")) if core is None else core.last_side()

    def _side_columns(self) -> Tuple[np.ndarray, np.ndarray]:
        """The current session's rows' buy and sell volumes."""
        return self._core.column(5), self._core.column(6)  # type: ignore[attr-defined]

    def _side_profile_kw(self, buy: np.ndarray, sell: np.ndarray) -> Dict[str, Any]:
        """The side arguments of from_bars / from_trades for a session's rows."""
        if self._bars:
            return dict(buy_volume=buy, sell_volume=sell)
        return dict(side=np.where(buy > 0, 1, np.where(sell > 0, -1, 0)).astype(np.int8))

    # ------------------------------------------------------------------ reading: the session so far

    def _need_side(self) -> None:
        if not self._sided:
            raise TypeError("this Live takes no aggressor side (make it with Live(..., side=True))")

    @property
    def delta(self) -> float:
        """The current session's buy - sell volume so far (0.0 before its first row): the
        ``dev_delta`` of its latest row in ``from_trades(..., side=..., developing=True)``."""
        self._need_side()
        return self._side_delta()

    def _side_fields_now(self) -> Any:
        """The side fields of the session so far (the core's side_fields: cpu/side.cpp's side_levels on
        its buy / sell rows, the rule of every from_* call), computed once per change."""
        self._need_side()
        core = self._core  # type: ignore[attr-defined]
        size = 0 if core is None else int(core.size)
        hit = self._side_cache
        if hit is not None and hit[0] is core and hit[1] == size:
            return hit[2]
        if core is None:
            fields = row_sides(self._rules.row_size, [0, 0], [NO_ROW], np.zeros(0), np.zeros(0), [0.0], [0.0],
                               self._side_rules, self._side_opts)
        else:
            fields = HostSideFields(core.side_fields(self._side_rules.imbalance_ratio, self._side_rules.stacked_min),
                                    self._side_rules)
        self._side_cache = (core, size, fields)
        return fields

    @property
    @_locked
    def delta_poc(self) -> float:
        """Delta POC of the current session so far (row price; NaN before its first row): the row
        of the largest |buy - sell| by the POC rule, as ``from_trades(..., side=...)`` on its rows."""
        return float(self._side_fields_now().field("delta_poc")[0])

    @property
    @_locked
    def delta_poc_row(self) -> int:
        """Ladder row of ``delta_poc`` (NO_ROW before the session's first row)."""
        return int(self._side_fields_now().field("delta_poc_row")[0])

    @_locked
    def buy_histogram(self) -> np.ndarray:
        """The current session's buy volume per row, aligned with ``histogram()`` (of a Live without
        a window: the side rows are always the whole session's): a read-only array of the rows now."""
        return self._side_rows("buy_volume")

    @_locked
    def sell_histogram(self) -> np.ndarray:
        """The current session's sell volume per row, aligned with ``histogram()`` (read-only, as
        ``buy_histogram()``)."""
        return self._side_rows("sell_volume")

    def _side_rows(self, name: str) -> np.ndarray:
        out = np.array(self._side_fields_now().field(name))
        out.flags.writeable = False
        return out

    @_locked
    def side_profile(self) -> Dict[str, Any]:
        """Every side field of the current session so far, as ``from_trades(..., side=...,
        developing=True)`` / ``from_bars(..., buy_volume=, sell_volume=)`` gives it for the
        session's rows: ``buy_volume``, ``sell_volume``, ``imbalance_buy``, ``imbalance_sell``
        (arrays aligned with ``histogram()``, copies), ``delta`` (buy total - sell total),
        ``buy_total``, ``sell_total``, ``delta_poc`` (NaN while no row has a known side), ``delta_poc_row``, ``stacked_imbalance_buy``, ``stacked_imbalance_sell``,
        and ``dev_delta`` (the running delta of the latest row, ``live.delta``)."""
        f = self._side_fields_now()
        out: Dict[str, Any] = {k: np.array(f.field(k)) for k in ("imbalance_buy", "imbalance_sell")}
        out["buy_volume"] = np.array(f.field("buy_volume"))
        out["sell_volume"] = np.array(f.field("sell_volume"))
        out["delta"] = float(f.field("delta")[0])
        out["buy_total"] = float(f.field("buy_total")[0])
        out["sell_total"] = float(f.field("sell_total")[0])
        out["delta_poc"] = float(f.field("delta_poc")[0])
        for k in ("delta_poc_row", "stacked_imbalance_buy", "stacked_imbalance_sell"):
            out[k] = int(f.field(k)[0])
        out["dev_delta"] = self._side_delta()
        return out

    # ------------------------------------------------------------------ finished sessions

    def _side_attach(self, prof: Profiles, done: Optional[List[Dict[str, np.ndarray]]] = None) -> Profiles:
        """``prof`` (the finished sessions ``done``, default all of them) with their side fields,
        from the rows each session kept when it ended (computed there by from_bars / from_trades on
        its rows)."""
        if not self._sided:
            return prof
        if done is None:
            done = self._done  # type: ignore[attr-defined]
        cat = lambda k: np.concatenate([d[k] for d in done]) if done else np.zeros(0)  # noqa: E731
        fields = row_sides(prof.row_size, prof.offsets, prof.low_row, cat("buy_volume"), cat("sell_volume"),
                           cat("buy_total"), cat("sell_total"), self._side_rules, self._side_opts)
        return attach_sides(prof, fields)
