"""Feature rules and names: the validated parameters of session_features / bar_features.

Contract: ``_rules`` checks every feature option and names the bad argument; the column-name
constants and ``legacy_columns`` are the public names of the legacy features.
"""

from __future__ import annotations

import datetime as _dt
import numbers
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence, Tuple

import numpy as np

from .._profiles import Profiles

__all__ = ["LEGACY_SESSION_COLUMNS", "LOOKBACK_FEATURES", "MAX_NODE_ROWS", "SHAPES", "legacy_columns",
           "_NS_PER_DAY", "_NS_PER_MINUTE", "_Rules", "_TIE_REL", "_engine_rules", "_int_param",
           "_lookbacks", "_real_param", "_rules", "_time_of_day_ns", "_tzinfo", "_check_rth_hours"]

#: The 14 per-session features of the legacy pipeline, in its order (GUIDE section 2).
LEGACY_SESSION_COLUMNS: Tuple[str, ...] = (
    "vpoc", "total_volume", "value_area_low", "value_area_high", "value_area_width",
    "price_range", "range_pct", "close_change_pct", "session_high", "session_low",
    "session_open", "session_close", "vwap", "close_to_vwap_pct",
)

#: The 10 legacy lookback features per lookback N (``{n}`` is N), in the legacy order.
LOOKBACK_FEATURES: Tuple[str, ...] = (
    "price_mom_{n}d", "volatility_{n}d", "volume_trend_{n}d", "vpoc_change_{n}d",
    "vpoc_pct_change_{n}d", "range_change_{n}d", "va_width_{n}d_ma", "va_width_change_{n}d",
    "vpoc_std_{n}d", "vpoc_zscore_{n}d",
)

#: Profile shape labels, as one-hot columns ``shape_P``, ``shape_b``, ``shape_D``, ``shape_B``.
SHAPES: Tuple[str, ...] = ("P", "b", "D", "B")

_TIE_REL = 1e-9  # the contract's relative tie band, used for every volume comparison here
_NS_PER_MINUTE = 60 * 10**9
_NS_PER_DAY = 1440 * _NS_PER_MINUTE


def legacy_columns(lookbacks: Sequence[int] = (5, 10, 20, 50)) -> Tuple[str, ...]:
    """The legacy feature names (14 session features, then 10 per lookback): 54 by default."""
    names = list(LEGACY_SESSION_COLUMNS)
    for n in _lookbacks(lookbacks):
        names.extend(f.format(n=n) for f in LOOKBACK_FEATURES)
    return tuple(names)


def _int_param(x: Any, name: str, minimum: int, maximum: Optional[int] = None,
               why: str = "") -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__}")
    if int(x) < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {int(x)}")
    if maximum is not None and int(x) > maximum:
        raise ValueError(f"{name} must be <= {maximum}{why}, got {int(x)}")
    return int(x)


def _real_param(x: Any, name: str, lo: float, hi: float, lo_open: bool = False) -> float:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    v = float(x)
    ok = (v > lo if lo_open else v >= lo) and v <= hi
    if not ok:
        raise ValueError(f"{name} must be in {'(' if lo_open else '['}{lo}, {hi}], got {v}")
    return v


def _lookbacks(lookbacks: Any) -> Tuple[int, ...]:
    if isinstance(lookbacks, (str, bytes)) or not isinstance(lookbacks, Iterable):
        raise TypeError(f"lookbacks must be a sequence of integers, got {type(lookbacks).__name__}")
    out = tuple(_int_param(n, f"lookbacks[{i}]", 1) for i, n in enumerate(lookbacks))
    if len(set(out)) != len(out):
        raise ValueError(f"lookbacks must be distinct, got {out}")
    return out


def _time_of_day_ns(x: Any, name: str) -> int:
    if isinstance(x, _dt.time):
        if x.tzinfo is not None:
            raise ValueError(f"{name} must be a local wall-clock time without tzinfo")
        return ((x.hour * 60 + x.minute) * 60 + x.second) * 10**9 + x.microsecond * 1000
    if isinstance(x, str):
        try:
            t = _dt.time.fromisoformat(x)
        except ValueError:
            raise ValueError(f"{name} must be 'HH:MM' (24 h local time), got {x!r}") from None
        return _time_of_day_ns(t, name)
    raise TypeError(f"{name} must be 'HH:MM' or a datetime.time, got {type(x).__name__}")


def _tzinfo(x: Any) -> _dt.tzinfo:
    if isinstance(x, _dt.tzinfo):
        return x
    if isinstance(x, str):
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            return ZoneInfo(x)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"tz must be an IANA time zone name such as 'America/Chicago', "
                             f"got {x!r}") from None
    raise TypeError(f"tz must be a time zone name or a datetime.tzinfo, got {type(x).__name__}")


#: Upper bound of ``node_smoothing`` and ``node_order`` (rows): the default ``max_rows``, the widest
#: profile the engine builds by default; a wider window reads nothing more.
MAX_NODE_ROWS = 1_000_000
_NODE_WHY = " (the default max_rows: a profile has no more rows to look at)"


@dataclass(frozen=True)
class _Rules:
    """Every feature rule, validated (docs/features.md describes each)."""

    tick_size: float
    ticks_per_row: int
    distribute: str
    value_area: float
    va_method: str
    poc_tie: str
    lookbacks: Tuple[int, ...]
    composite_sessions: int
    naked_max_age: Optional[int]
    node_smoothing: int
    node_order: int
    hvn_threshold: float
    lvn_threshold: float
    shape_edge: float
    shape_b_peak: float
    shape_b_valley: float
    tz: _dt.tzinfo
    rth_start_ns: int
    ib_minutes: int
    tpo_minutes: int
    ib_end: str = "exclusive"   # "inclusive": the bar stamped at the IB's end belongs to it
    ib_anchor: str = "rth"      # "first_bar": the IB starts at the session's first bar's stamp
    opening_minutes: Optional[int] = None  # the opening range's length (None: one TPO period)

    @property
    def row_size(self) -> float:
        return self.tick_size * self.ticks_per_row


def _rules(tick_size: Any, ticks_per_row: Any, distribute: Any, value_area: Any, va_method: Any,
           poc_tie: Any, lookbacks: Any, composite_sessions: Any, naked_max_age: Any,
           node_smoothing: Any, node_order: Any, hvn_threshold: Any, lvn_threshold: Any,
           shape_edge: Any, shape_b_peak: Any, shape_b_valley: Any, tz: Any, rth_start: Any,
           ib_minutes: Any, tpo_minutes: Any, ib_end: Any = "exclusive", ib_anchor: Any = "rth",
           opening_minutes: Any = None) -> _Rules:
    # tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie are validated by the engine
    smoothing = _int_param(node_smoothing, "node_smoothing", 1, MAX_NODE_ROWS, _NODE_WHY)
    if smoothing % 2 == 0:
        raise ValueError(f"node_smoothing must be odd (a centred window), got {smoothing}")
    return _Rules(
        tick_size=tick_size, ticks_per_row=ticks_per_row, distribute=distribute,
        value_area=value_area, va_method=va_method, poc_tie=poc_tie,
        lookbacks=_lookbacks(lookbacks),
        composite_sessions=_int_param(composite_sessions, "composite_sessions", 1),
        naked_max_age=None if naked_max_age is None else _int_param(naked_max_age, "naked_max_age", 1),
        node_smoothing=smoothing,
        node_order=_int_param(node_order, "node_order", 1, MAX_NODE_ROWS, _NODE_WHY),
        hvn_threshold=_real_param(hvn_threshold, "hvn_threshold", 0.0, 1.0),
        lvn_threshold=_real_param(lvn_threshold, "lvn_threshold", 0.0, 1.0),
        shape_edge=_real_param(shape_edge, "shape_edge", 0.0, 0.5, lo_open=True),
        shape_b_peak=_real_param(shape_b_peak, "shape_b_peak", 0.0, 1.0, lo_open=True),
        shape_b_valley=_real_param(shape_b_valley, "shape_b_valley", 0.0, 1.0, lo_open=True),
        tz=_tzinfo(tz),
        rth_start_ns=_time_of_day_ns(rth_start, "rth_start"),
        ib_minutes=_int_param(ib_minutes, "ib_minutes", 1, 1440, " (a day)"),
        tpo_minutes=_int_param(tpo_minutes, "tpo_minutes", 1, 1440, " (a day)"),
        ib_end=_choice(ib_end, "ib_end", ("exclusive", "inclusive")),
        ib_anchor=_choice(ib_anchor, "ib_anchor", ("rth", "first_bar")),
        opening_minutes=None if opening_minutes is None else _int_param(opening_minutes, "opening_minutes", 1, 1440,
                                                                        " (a day)"),
    )


def _choice(x: Any, name: str, allowed: Tuple[str, ...]) -> str:
    """x, one of ``allowed`` (ValueError naming ``name`` otherwise; TypeError for a non-string)."""
    if not isinstance(x, str):
        raise TypeError(f"{name} must be a string, one of {', '.join(map(repr, allowed))}; got {type(x).__name__}")
    if x not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {x!r}")
    return x



def _check_rth_hours(rules: _Rules) -> bool:
    """vpoc.sessions.rth's rule on the initial balance window ``[rth_start, rth_start + ib_minutes)``
    in ``tz`` (vpoc.sessions.check_hours): outside the ES regular hours (e.g. tz="UTC": 08:30 UTC is
    02:30 Chicago) it warns with vpoc.sessions.SessionHoursWarning, pointing at the caller's line.
    Called by the tables that read the clock (timestamps given) and by Live's feature rules."""
    from .._warnings import user_stacklevel
    from ..sessions import check_hours

    start = rules.rth_start_ns // 10**9
    end = start + rules.ib_minutes * 60
    hhmm = lambda s: f"{s // 3600:02d}:{s // 60 % 60:02d}" + (f":{s % 60:02d}" if s % 60 else "")  # noqa: E731
    return check_hours(hhmm(start), "24:00" if end >= 86_400 else hhmm(end), rules.tz,
                       stacklevel=user_stacklevel() + 1)  # check_hours warns, one frame down


def _engine_rules(rules: _Rules, prof: Profiles) -> _Rules:
    """The rules with the engine-validated ladder (tick_size/ticks_per_row as floats/ints)."""
    return _Rules(**{**rules.__dict__, "tick_size": float(prof.tick_size),
                     "ticks_per_row": int(prof.ticks_per_row)})
