"""The aggressor side in vpoc.Live: per-row buy / sell volume, delta, delta POC and imbalances of the session so far.

Contract: ``Live(side=True)`` takes a side with every row (trades: ``side=``, vpoc._side's codes; bars:
``buy_volume=`` / ``sell_volume=``, vpoc._side_profiles' checks); two more engine sessions hold the buy and
the sell volume of the same rows (the masked passes of from_trades / from_bars), so every side field
equals ``from_trades(..., side=...)`` / ``from_bars(..., buy_volume=, sell_volume=)`` on the same rows.
"""

from __future__ import annotations

import numbers
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .. import _core
from .._arrays import MAX_VOLUME, volume_too_large
from .._errors import readdressed, row_of
from .._profiles import NO_ROW, Profiles
from .._side import aggressor_side
from .._side_profiles import attach_sides, bar_side_volumes, row_sides, side_rules, trade_side
from .._validate import boolean as _bool
from ._common import _NAN, _locked

__all__ = ["SIDE_DONE_KEYS", "_SideMixin"]

#: What a finished session of a Live with side=True keeps besides its profile (``state['done'][k]``).
SIDE_DONE_KEYS = ("buy_volume", "sell_volume", "delta")
_NEEDS = {True: "every update() needs buy_volume= and sell_volume= (each bar's buy- and sell-aggressor "
                "volume; the rest of its volume is of unknown side)",
          False: "every update() needs side= (+1 buyer-initiated, -1 seller-initiated, 0 unknown, or "
                 "'B' / 'A' / 'N')"}


def _side_error(e: ValueError, name: str, positions: np.ndarray) -> ValueError:
    """The engine's error about a volume it was given, said of ``name`` at the row's position in
    the update (the main pass has checked every other column of the row)."""
    i = row_of(e)
    if i is None:
        return ValueError(f"{name}: {e}")
    return readdressed(e, int(positions[i]), ("volume",), lambda _, r: f"{name}[{r}]", name)  # type: ignore[arg-type]


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
        self._buy_core: Optional[Any] = None  # engine sessions of the buy / sell volume of the rows
        self._sell_core: Optional[Any] = None
        self._delta = 0.0  # the current session's running buy - sell (the batch dev_delta)
        self._last_side: Tuple[float, float] = (_NAN, _NAN)  # the latest row's buy, sell volume
        self._side_cache: Optional[Tuple[Any, int, Any]] = None

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
                code = int(aggressor_side(np.asarray([given]), "side", where=lambda _: "side")[0])
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

    # ------------------------------------------------------------------ engine sessions

    def _side_start(self, has_open: bool) -> None:
        if self._sided:
            self._buy_core = _core.LiveSession(self._bars, self._distribute, has_open, **self._rules_kw)
            self._sell_core = _core.LiveSession(self._bars, self._distribute, has_open, **self._rules_kw)

    def _side_append_one(self, high: float, low: Any, close: Any, open: Any, bs: Tuple[float, float]) -> None:
        for core, v, name in ((self._buy_core, bs[0], "buy_volume"), (self._sell_core, bs[1], "sell_volume")):
            try:
                if self._bars:
                    core.append_bar(high, low, close, open, v)
                else:
                    core.append_trade(high, v)
            except ValueError as e:
                raise _side_error(e, name, np.zeros(1, dtype=np.int64)) from None
        self._delta = self._delta + (bs[0] - bs[1])  # in input order, as the batch's float64 sum
        self._last_side = bs

    def _side_append(self, cols: List[np.ndarray], o: Optional[np.ndarray], sides: Tuple[np.ndarray, np.ndarray],
                     a: int, b: int, positions: Optional[np.ndarray]) -> None:
        pos = np.arange(a, b) if positions is None else positions[a:b]
        for core, v, name in ((self._buy_core, sides[0], "buy_volume"), (self._sell_core, sides[1], "sell_volume")):
            try:
                if self._bars:
                    core.append(None, cols[0][a:b], cols[1][a:b], cols[2][a:b], None if o is None else o[a:b],
                                v[a:b])
                else:
                    core.append(cols[0][a:b], None, None, None, None, v[a:b])
            except ValueError as e:
                raise _side_error(e, name, pos) from None
        d = sides[0][a:b] - sides[1][a:b]
        self._delta = float(np.add.accumulate(np.r_[self._delta, d])[-1])  # sequential: the batch's sum
        self._last_side = (float(sides[0][b - 1]), float(sides[1][b - 1]))

    def _side_finished(self) -> None:
        """The session ended: empty engine sessions (replaced, never cleared: a rollback finds the
        old ones as they were) and a zero delta."""
        if self._sided:
            self._side_start(bool(self._has_open))
            self._delta = 0.0
            self._last_side = (_NAN, _NAN)

    def _side_snap(self) -> Tuple[Any, ...]:
        return self._buy_core, self._sell_core, self._delta, self._last_side

    def _side_put_back(self, snap: Tuple[Any, ...], n: int) -> None:
        """The side state of ``snap``: engine sessions that grew since are rebuilt from their
        first n rows (the main session's, in step with them)."""
        bc, sc, delta, last = snap
        if bc is not None and bc.size != n:
            bc = self._rebuilt(bc, n)  # type: ignore[attr-defined]
        if sc is not None and sc.size != n:
            sc = self._rebuilt(sc, n)  # type: ignore[attr-defined]
        vars(self).update(_buy_core=bc, _sell_core=sc, _delta=delta, _last_side=last)

    def _side_columns(self) -> Tuple[np.ndarray, np.ndarray]:
        """The current session's rows' buy and sell volumes."""
        return self._buy_core.column(4), self._sell_core.column(4)  # type: ignore[union-attr]

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
        return self._delta

    def _side_fields_now(self) -> Any:
        """The side fields of the session so far (vpoc._side_profiles.row_sides on the engine
        sessions' rows), computed once per change."""
        self._need_side()
        bc, sc = self._buy_core, self._sell_core
        size = 0 if bc is None else int(bc.size)
        hit = self._side_cache
        if hit is not None and hit[0] is bc and hit[1] == size:
            return hit[2]
        if size == 0 or int(bc.n_rows) == 0:  # type: ignore[union-attr]
            fields = row_sides(self._rules.row_size, [0, 0], [NO_ROW], np.zeros(0), np.zeros(0), [0.0],
                               self._side_rules, self._side_opts)
        else:
            lo, n = int(bc.low_row), int(bc.n_rows)  # type: ignore[union-attr]
            if (int(sc.low_row), int(sc.n_rows)) != (lo, n):  # type: ignore[union-attr]
                raise RuntimeError("vpoc.Live: the buy and sell sessions span other rows; please report "
                                   "this")  # pragma: no cover
            fields = row_sides(self._rules.row_size, [0, n], [lo], np.array(bc.histogram()),  # type: ignore
                               np.array(sc.histogram()),  # type: ignore[union-attr]
                               [float(bc.total_volume) - float(sc.total_volume)], self._side_rules,  # type: ignore
                               self._side_opts)
        self._side_cache = (bc, size, fields)
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
        """The current session's buy volume per row, aligned with ``histogram()``: a read-only view
        that follows later updates until the row range grows (take it again after an update)."""
        self._need_side()
        return np.zeros(0) if self._buy_core is None else self._buy_core.histogram()

    @_locked
    def sell_histogram(self) -> np.ndarray:
        """The current session's sell volume per row, aligned with ``histogram()`` (a view, as
        ``buy_histogram()``)."""
        self._need_side()
        return np.zeros(0) if self._sell_core is None else self._sell_core.histogram()

    @_locked
    def side_profile(self) -> Dict[str, Any]:
        """Every side field of the current session so far, as ``from_trades(..., side=...,
        developing=True)`` / ``from_bars(..., buy_volume=, sell_volume=)`` gives it for the
        session's rows: ``buy_volume``, ``sell_volume``, ``imbalance_buy``, ``imbalance_sell``
        (arrays aligned with ``histogram()``, copies), ``delta`` (buy total - sell total),
        ``delta_poc``, ``delta_poc_row``, ``stacked_imbalance_buy``, ``stacked_imbalance_sell``,
        and ``dev_delta`` (the running delta of the latest row, ``live.delta``)."""
        f = self._side_fields_now()
        out: Dict[str, Any] = {k: np.array(f.field(k)) for k in ("imbalance_buy", "imbalance_sell")}
        out["buy_volume"] = np.array(f.field("buy_volume"))
        out["sell_volume"] = np.array(f.field("sell_volume"))
        out["delta"] = float(f.field("delta")[0])
        out["delta_poc"] = float(f.field("delta_poc")[0])
        for k in ("delta_poc_row", "stacked_imbalance_buy", "stacked_imbalance_sell"):
            out[k] = int(f.field(k)[0])
        out["dev_delta"] = self._delta
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
                           cat("delta"), self._side_rules, self._side_opts)
        return attach_sides(prof, fields)
