"""``preset=`` on ``session_features`` / ``vpoc.tpo``: which of the preset's rules the call applies, recorded and warned.

Contract (docs/presets.md): these functions apply a preset's initial-balance rules only; every other rule of the
preset that differs from what the call uses is named in a ``vpoc.PresetWarning`` and recorded in the result's rules.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, Optional

from .._presets import PRESETS, RULE_DEFAULTS, SESSION_DEFAULTS, SESSION_PRESETS, VALUE_AREA
from .._warnings import PresetWarning, user_stacklevel

__all__ = ["_preset_rules"]


def _preset_rules(preset: Optional[str], used: Dict[str, Any], what: str) -> Dict[str, Any]:
    """The record of ``preset`` on a call of ``what`` (``preset``, ``preset_applied``,
    ``preset_not_applied``: {} without a preset); warns (``PresetWarning``) naming each rule of the
    preset that differs from the value the call uses (``used``: the call's value_area, va_method,
    poc_tie, distribute; any other profile rule is today's default here). The preset's value is
    ``resolve_session``'s for the session rules, which the call applies (a keyword passed wins)."""
    if preset is None:
        return {}
    table = PRESETS[preset]
    applied = tuple(k for k in SESSION_DEFAULTS if SESSION_PRESETS[preset][k] != SESSION_DEFAULTS[k])
    preset_values = dict(table, value_area=VALUE_AREA[preset])
    call_values = dict(RULE_DEFAULTS, **used)
    missing = {k: (v, call_values.get(k)) for k, v in preset_values.items()
               if k in call_values and v != call_values[k]}
    record = dict(preset=preset, preset_applied=applied, preset_not_applied=tuple(missing))
    if missing:
        words = ", ".join(f"{k}={v!r} (this call: {c!r})" for k, (v, c) in missing.items())
        which = (f"applies only its initial balance rules ({', '.join(applied)})" if applied else
                 "applies none of its rules")
        warnings.warn(f"{what}: preset={preset!r} {which}; these rules of the preset are not applied here: "
                      f"{words}. The volume / TPO profile columns follow this call's keywords (docs/presets.md); "
                      f"use vpoc.from_bars(..., preset={preset!r}) for the preset's profile",
                      PresetWarning, stacklevel=user_stacklevel())
    return record
