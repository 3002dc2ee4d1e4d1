"""``preset=``: the rule keywords of a reference tool, filled in where the caller passed none.

Contract: docs/presets.md; a keyword passed explicitly wins over the preset; a bad preset is a ValueError naming it.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from decimal import Decimal

import numpy as np

__all__ = ["PRESETS", "RULE_DEFAULTS", "RULE_KEYWORDS", "SESSION_PRESETS", "resolve", "resolve_session",
           "check_whole_volume", "value_area_of", "BIN_KEYWORDS", "ASSUMED", "SIDE_RULE_KEYWORDS", "with_side_rules"]

#: Today's rules (docs/contract.md): what every rule keyword is when neither the caller nor a
#: preset sets it.
RULE_DEFAULTS: Dict[str, Any] = {
    "distribute": "uniform", "va_method": "cbot", "poc_tie": "center", "va_rows": "all",
    "va_compare": "tie_up", "va_stop": "reaches", "tie_tol": 1e-9, "row_label": "low",
    "price_label": "product", "va_target": "float", "bins": None, "accumulate": "exact",
    "bin_report": "center_edges",
}
#: The keywords a preset sets (distribute: bars only; trades put each volume at its price).
RULE_KEYWORDS = tuple(RULE_DEFAULTS)
#: The peer-rule keywords the engine's Options take (docs/presets.md, section 3).
PEER_KEYWORDS = ("va_rows", "va_compare", "va_stop", "tie_tol", "row_label", "price_label", "va_target")
#: bins=N and its two rules (docs/presets.md): wickra's equal-width bins instead of the tick ladder;
#: from_* only (vpoc.Live refuses a preset that sets bins).
BIN_KEYWORDS = ("bins", "accumulate", "bin_report")

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
        "price_label": "product", "va_target": "float",
    },
    # QuantConnect LEAN VolumeProfile (Indicators/MarketProfile.cs): py-market-profile's value-area
    # rules, POC ties nearest floor((n - 1) / 2) of the printed rows (C# integer division), row
    # prices and the 70% target in C# decimal (docs/design/presets.md, sections 1 and 4); LEAN's
    # period= is developing=True, window=period (None: every bar so far, as its test data)
    "lean": {
        "distribute": "close", "va_method": "single", "poc_tie": "mid_floor", "va_rows": "touched",
        "va_compare": "zero_absent", "va_stop": "exceeds", "tie_tol": 0.0, "row_label": "top",
        "price_label": "decimal", "va_target": "decimal",
    },
    # wickra 2.0.0 ValueArea(period, bin_count=50): 50 equal-width bins over the session's range, each
    # bar's volume split over the bins it touches, float64 sums in input order, first maximum, one
    # bin a step with ties up, stop at acc >= target, POC at its bin's centre, VAH / VAL at edges
    # (docs/design/presets.md, section 1; kingchenc/wickra crates/wickra-core/src/indicators/value_area.rs)
    "wickra": {
        "distribute": "uniform", "va_method": "single", "poc_tie": "low", "va_rows": "all",
        "va_compare": "tie_up", "va_stop": "reaches", "tie_tol": 0.0, "row_label": "low",
        "price_label": "product", "va_target": "float", "bins": 50, "accumulate": "sequential",
        "bin_report": "center_edges",
    },
    # The closed platforms (docs/presets.md says which rule each documents and which is assumed).
    # TradingView Volume Profile: "Ticks Per Row" is ticks_per_row; "Number Of Rows" is bins= (wickra's
    # equal-width rule, assumed); value area one row a step, ties up, POC nearest the centre (assumed).
    "tradingview": dict(RULE_DEFAULTS, va_method="single"),
    # Sierra Chart Volume by Price: trade volume at the trade price, rows of tick x VAP multiplier
    # (ticks_per_row), labelled by the low; CBOT value area, POC nearest the centre (assumed).
    "sierra": dict(RULE_DEFAULTS),
    # NinjaTrader 8 Order Flow Volume Profile: value area 68% (documented default); one row a step,
    # ties up, POC nearest the centre, rows labelled by the low (assumed).
    "ninjatrader": dict(RULE_DEFAULTS, va_method="single"),
}

#: The value_area a preset uses when the caller passes none (others: 0.70).
PRESET_VALUE_AREA: Dict[str, float] = {"ninjatrader": 0.68}
#: Per preset, the rule keywords its platform does not document: vpoc's assumption (docs/presets.md),
#: recorded in ``Profiles.rules["assumed"]`` and listed by vpoc.diff.
ASSUMED: Dict[str, Tuple[str, ...]] = {
    "tradingview": ("distribute", "va_method", "poc_tie", "va_compare", "va_stop", "tie_tol", "row_label",
                    "bins", "accumulate", "bin_report"),
    "sierra": ("va_method", "poc_tie", "va_compare", "va_stop", "tie_tol", "value_area"),
    "ninjatrader": ("distribute", "va_method", "poc_tie", "va_compare", "va_stop", "tie_tol", "row_label"),
}


#: The value_area of a call that passes none, per preset (None: no preset): PRESET_VALUE_AREA's, else
#: 0.70. A subscript (no function call) once resolve() has accepted the preset.
VALUE_AREA: Dict[Optional[str], float] = {None: 0.70}


def value_area_of(preset: Optional[str], value_area: Optional[float]) -> float:
    """The call's value_area: the caller's, else the preset's (VALUE_AREA)."""
    if value_area is not None:
        return value_area
    return VALUE_AREA.get(preset, VALUE_AREA[None]) if isinstance(preset, str) else VALUE_AREA[None]


def recorded_rules(rules: Optional[dict], preset: Optional[str], value_area: Optional[float]) -> Optional[dict]:
    """``rules`` (from ``resolve``) with the value_area a preset set when the caller passed none
    ("ninjatrader": 0.68), so that Profiles.rules records it and vpoc.diff names it (from_* and Live)."""
    if rules is not None and value_area is None and preset in PRESET_VALUE_AREA:
        return dict(rules, value_area=PRESET_VALUE_AREA[preset])
    return rules


#: The footprint imbalance rule of an aggressor-side result, recorded in ``Profiles.rules`` (vpoc.diff names it).
SIDE_RULE_KEYWORDS = ("imbalance_ratio", "stacked_imbalance_min")


def with_side_rules(rules: Optional[dict], ratio: float, stacked_min: int) -> dict:
    """``rules`` (None: the plain call's, which record nothing else) with the imbalance rule of a sided
    result, so that two saved results say which rule made their imbalances and stacked counts."""
    return dict(rules or {}, imbalance_ratio=float(ratio), stacked_imbalance_min=int(stacked_min))


#: The session-feature rules a preset sets (vpoc.features.session_features / vpoc.tpo; docs/presets.md):
#: the initial balance's end and anchor and the opening range's length (None: one TPO period).
SESSION_DEFAULTS: Dict[str, Any] = {"ib_end": "exclusive", "ib_anchor": "rth", "opening_minutes": None}
SESSION_PRESETS: Dict[str, Dict[str, Any]] = {
    "cbot": dict(SESSION_DEFAULTS),
    # py-market-profile 0.2.0: ds.loc[:first + 1 hour] (first bar's stamp, end included), 10 minutes
    "marketprofile": {"ib_end": "inclusive", "ib_anchor": "first_bar", "opening_minutes": 10},
    "lean": dict(SESSION_DEFAULTS),  # LEAN's VolumeProfile has no initial balance
    "wickra": dict(SESSION_DEFAULTS),  # wickra has no sessions, so no initial balance
    "tradingview": dict(SESSION_DEFAULTS),
    "sierra": dict(SESSION_DEFAULTS),
    "ninjatrader": dict(SESSION_DEFAULTS),
}


def resolve_session(preset: Optional[str], given: Dict[str, Any]) -> Dict[str, Any]:
    """The session-feature rules of a call: each the caller's value when given (not None), else the
    preset's, else SESSION_DEFAULTS; a bad preset is a ValueError naming it."""
    if preset is not None:
        if not isinstance(preset, str):
            raise TypeError(f"preset must be a string or None, got {type(preset).__name__}")
        if preset not in SESSION_PRESETS:
            raise ValueError(f"preset must be one of {', '.join(repr(p) for p in SESSION_PRESETS)} or None; "
                             f"got {preset!r}")
    table = SESSION_DEFAULTS if preset is None else SESSION_PRESETS[preset]
    return {k: (given[k] if given.get(k) is not None else table[k]) for k in SESSION_DEFAULTS}


def resolve(preset: Optional[str], given: Dict[str, Any], bars: bool) -> Tuple[Dict[str, Any], Optional[dict]]:
    """(keywords, rules): the rule keywords of a call, each the caller's value when given (not
    None), else the preset's, else today's default; ``rules`` (recorded as ``Profiles.rules``)
    lists them with the preset, or is None for a call that sets no preset and no peer rule (its
    rules are RULE_DEFAULTS: the plain call records nothing)."""
    if preset is None:
        for k in PEER_KEYWORDS + BIN_KEYWORDS:  # subscripts only: the plain call makes no function call here
            if k in given and given[k] is not None:
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
    out = {k: (given[k] if given.get(k) is not None else table.get(k, RULE_DEFAULTS[k])) for k in RULE_KEYWORDS}
    if out["va_target"] == "decimal" and bars and out["distribute"] not in ("close", "hlc3"):
        raise ValueError(f"va_target='decimal' compares whole-number row volumes exactly; distribute="
                         f"{out['distribute']!r} splits a bar's volume into fractions: use distribute='close' "
                         f"or 'hlc3' (or va_target='float')")
    if not bars:
        del out["distribute"]
    return out, dict(out, preset=preset, assumed=ASSUMED.get(preset, ()))


def row_prices(rows: np.ndarray, tick_size: float, ticks_per_row: int, rules: Optional[dict]) -> np.ndarray:
    """Prices of rows (int64): ``rows * row_size``, or with price_label='decimal' the float64 nearest
    the decimal ``rows * tick_size * ticks_per_row`` (tick_size read as its shortest decimal), as
    the engine's POC / VAH / VAL (core/ladder.hpp RowPrice)."""
    if rules is None or rules.get("price_label") != "decimal":
        return rows.astype(np.float64) * (tick_size * ticks_per_row)
    num, den = Decimal(repr(float(tick_size))).as_integer_ratio()
    return (rows * (num * int(ticks_per_row))).astype(np.float64) / float(den)


def check_whole_volume(volume: Any, rows: Any = None) -> None:
    """va_target='decimal': the input volumes (host arrays; a GPU array is left to ``rows``) and the
    histogram's row volumes ``rows`` must be whole numbers, so that every running sum the value area
    compares is exact (docs/presets.md); ValueError naming va_target otherwise."""
    for what, v in (("volume", volume), ("row volume", rows)):
        if v is None or hasattr(v, "__cuda_array_interface__") or getattr(v, "is_cuda", False):
            continue
        a = np.asarray(v, dtype=np.float64).ravel()
        bad = np.flatnonzero(a != np.floor(a))
        if bad.size:
            raise ValueError(f"va_target='decimal' needs whole-number volumes (its exact comparison holds for "
                             f"sums of whole rows); {what}[{int(bad[0])}] = {a[bad[0]]!r} is not whole "
                             f"({bad.size} such); use va_target='float'")

VALUE_AREA.update({p: PRESET_VALUE_AREA.get(p, VALUE_AREA[None]) for p in PRESETS})
