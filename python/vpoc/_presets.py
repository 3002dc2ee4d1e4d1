"""``preset=``: the rule keywords of a reference tool, filled in where the caller passed none.

Contract: docs/presets.md; a keyword passed explicitly wins over the preset; a bad preset is a ValueError naming it.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

__all__ = ["PRESETS", "RULE_DEFAULTS", "RULE_KEYWORDS", "resolve"]

#: Today's rules (docs/contract.md): what every rule keyword is when neither the caller nor a
#: preset sets it.
RULE_DEFAULTS: Dict[str, Any] = {
    "distribute": "uniform", "va_method": "cbot", "poc_tie": "center", "va_rows": "all",
    "va_compare": "tie_up", "va_stop": "reaches", "tie_tol": 1e-9, "row_label": "low",
}
#: The keywords a preset sets (distribute: bars only; trades put each volume at its price).
RULE_KEYWORDS = tuple(RULE_DEFAULTS)
#: The peer-rule keywords the engine's Options take (docs/presets.md, section 3).
PEER_KEYWORDS = ("va_rows", "va_compare", "va_stop", "tie_tol", "row_label")

# The rule keywords that are not peer rules (from_* took them before presets existed).
_OWN_KEYWORDS = ("distribute", "va_method", "poc_tie")

PRESETS: Dict[str, Dict[str, Any]] = {
    # vpoc's own rules: CBOT two-row value area, 1e-9 ties (docs/contract.md)
    "cbot": dict(RULE_DEFAULTS),
    # py-market-profile 0.2.0 MarketProfile(mode="vol"): each bar's volume at its close's row,
    # rows labelled by their top, value area one printed row a step over printed rows only, an
    # empty (0) row above counts as absent, stop only past the target, exact comparisons, POC
    # ties nearest n / 2 of the printed rows (docs/design/presets.md, section 1)
    "marketprofile": {
        "distribute": "close", "va_method": "single", "poc_tie": "mid_n2", "va_rows": "touched",
        "va_compare": "zero_absent", "va_stop": "exceeds", "tie_tol": 0.0, "row_label": "top",
    },
}


def resolve(preset: Optional[str], given: Dict[str, Any], bars: bool) -> Tuple[Dict[str, Any], Optional[dict]]:
    """(keywords, rules): the rule keywords of a call, each the caller's value when given (not
    None), else the preset's, else today's default; ``rules`` (recorded as ``Profiles.rules``)
    lists them with the preset, or is None for a call that sets no preset and no peer rule (its
    rules are RULE_DEFAULTS: the plain call records nothing)."""
    if preset is None:
        for k in PEER_KEYWORDS:  # a loop of subscripts: the plain call makes no function call here
            if given[k] is not None:
                break
        else:  # no preset, no peer rule: the engine's defaults for those (Options), nothing recorded
            plain = {}
            for k in _OWN_KEYWORDS:
                if k in given:
                    v = given[k]
                    plain[k] = RULE_DEFAULTS[k] if v is None else v
            return plain, None
    else:
        if not isinstance(preset, str):
            raise TypeError(f"preset must be a string or None, got {type(preset).__name__}")
        if preset not in PRESETS:
            raise ValueError(f"preset must be one of {', '.join(repr(p) for p in PRESETS)} or None; "
                             f"got {preset!r}")
    table = PRESETS[preset] if preset is not None else RULE_DEFAULTS
    out = {k: (given[k] if given.get(k) is not None else table[k]) for k in RULE_KEYWORDS}
    if not bars:
        del out["distribute"]
    return out, dict(out, preset=preset)
