"""A session rule by name with keyword options, as one window definition (for feeds read row by row).

Contract: ``rule_definition`` builds the definition ``globex`` / ``rth`` / ``daily`` / ``custom`` use,
with their defaults; unknown or missing options raise ValueError naming ``what``.
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np

from ._calendar import DEFAULT_CALENDAR, DEFAULT_TRADE_DATES
from ._clock import _localize_wall
from ._rules import _custom, _daily, _Definition, _globex, _rth

__all__ = ["RULES", "localize_wall", "rule_definition"]

#: Rule names ``rule_definition`` takes.
RULES = ("globex", "rth", "daily", "custom")
_BUILDERS = {"globex": (_globex, dict(calendar=DEFAULT_CALENDAR, holidays=True,
                                      trade_dates=DEFAULT_TRADE_DATES)),
             "rth": (_rth, dict(start="08:30", end="15:15", tz="America/Chicago",
                                calendar=DEFAULT_CALENDAR, holidays=True,
                                trade_dates=DEFAULT_TRADE_DATES)),
             "daily": (_daily, dict(tz="UTC", weekdays_only=False)),
             "custom": (_custom, dict(weekdays_only=False))}


def rule_definition(rule: str, options: Dict[str, Any], what: str = "session_options") -> _Definition:
    """The window definition of ``rule`` (one of ``RULES``) with ``options`` (its keyword
    arguments: calendar, holidays, trade_dates, start, end, tz, weekdays_only). Its
    ``windows(d0, d1)`` gives the sorted windows (opens, closes, labels: UTC ns, YYYYMMDD) for the
    local dates d0..d1 of its ``zone``; ``definition`` names it, ``gap_by_definition`` says whether
    rows between windows are out on purpose."""
    build, defaults = _BUILDERS[rule]
    unknown = set(options) - set(defaults) - ({"start", "end", "tz"} if rule == "custom" else set())
    if unknown:
        raise ValueError(f"{what} has unknown key(s) {sorted(unknown)} for {rule!r}")
    args = {**defaults, **options}
    if rule == "custom" and not {"start", "end", "tz"} <= set(args):
        raise ValueError(f"session='custom' needs {what} start, end and tz")
    return build(**args)


def localize_wall(wall_ns: np.ndarray, zone: Any) -> np.ndarray:
    """Local wall-clock nanoseconds in ``zone`` -> UTC ns; nonexistent times shift forward,
    ambiguous ones take the first occurrence (DST)."""
    return _localize_wall(wall_ns, zone)
