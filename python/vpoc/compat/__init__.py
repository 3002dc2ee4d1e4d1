"""vpoc.compat: drop-in replacement for the legacy per-session analyzer (``VolumeProfileAnalyzer``).

Contract: the legacy API and math (GUIDE §2), computed by vpoc's engine in float64; every deviation is listed below.

Migration of a training script (two lines)::

    # from src.core.vpoc import VolumeProfileAnalyzer, calculate_volume_profile, find_vpoc, find_value_area
    from vpoc.compat import VolumeProfileAnalyzer, calculate_volume_profile, find_vpoc, find_value_area

The legacy module is ``src/core/vpoc.py`` of github.com/lrud/futures_vpoc_backtest (commit 3e8febb)
and its feature table ``FeatureEngineer.generate_session_features`` in ``src/ml/feature_engineering.py``.
What is kept (semantics, not code):

* Profile: levels ``L_k = floor(lo/p)*p + k*p`` up to ``ceil(hi/p)*p`` (``p = price_precision``, lo/hi the
  session's min(open, close, low) / max(open, close, high)), every level of that range reported (zero
  ones too); a bar spreads its volume over the levels in [min(o,c,l), max(o,c,h)] with weights
  ``1 + 1/(1 + |L_k - close|)`` normalised to sum 1 (vpoc's ``distribute="legacy"``);
  ``volume_smooth`` is the 3-level moving average with zero padding.
* ``VolumeProfileAnalyzer.find_vpoc``: levels whose (smoothed) volume is >= its 95% quantile (linear,
  pandas' default); with at least 3 of them, the level nearest their volume-weighted mean price (first
  on ties), else the first level of maximal volume. ``find_value_area``: from the first maximal level,
  one level at a time towards the larger neighbour (ties up) until the target; percentage 0-100.
* Module ``find_vpoc(dict)``: lowest price of maximal volume, 0.0 for an empty dict;
  ``find_value_area(dict)``: levels by volume (highest first, equal volumes lower price first) until the
  target, (lowest, highest, fraction 0-1); (0.0, 0.0, 0.0) for an empty dict. DataFrames given to the
  module functions go to the analyzer methods, as in the legacy module.

Deviations (the legacy defects, and what had no defined result):

* float64 accumulation everywhere (the legacy summed in float32).
* ``chunk_size``, ``device_ids`` and multi-GPU requests are accepted and give the single-path result
  (the legacy chunked path dropped zero-volume levels and its multi-GPU path lost volume).
* ``device`` only selects where the engine runs: "cuda"/"cuda:N" use the GPU when this vpoc build has
  one and a GPU is present, else the CPU, silently; no environment variable is set, nothing is logged.
* Comparisons treat values within ``tie_rel`` (default 1e-9) relative as equal (maximum, quantile
  membership, nearest level, up/down choice, target reached; the greedy value area ranks volumes at a
  resolution of tie_rel x the session's largest volume, rint(v / vmax / tie_rel)), so float summation
  order (threads, GPU atomics) cannot flip a decision. ``tie_rel=0`` gives the legacy's exact
  comparisons.
* A bar whose open or close lies outside [low, high] (which ``vpoc.from_bars`` rejects) is widened to
  [min(open, close, low), max(open, close, high)] before the engine: the legacy's levels and weights.
* A bar whose range holds no level (prices off the grid inside one level) added nothing in the legacy
  code; ``sub_tick_bars="drop"`` (default) keeps that, ``"close"`` puts its volume on the level nearest
  its close (the engine's rule), so no volume is lost.
* Undefined legacy cases: an empty session gives NaN results (the legacy raised); a session whose
  top-quantile levels all have zero volume falls back to the first maximal level (the legacy raised
  ZeroDivisionError); a zero total gives a NaN percentage/fraction (the legacy divided 0 by 0).
* ``price_precision=None`` means 0.25 (the legacy settings default); 0, negative or non-finite values
  raise ValueError instead of silently becoming 0.25.

The package has one module per job: ``_options`` (defaults and argument checks), ``_inputs`` (the
bar frame and its sessions), ``_ragged`` (per-session numpy reductions), ``_decisions`` (VPOC and
value-area rules), ``_legacy_profiles`` (the engine call), ``_profile_frames`` (profile frames and
dicts), ``_analyzer`` (VolumeProfileAnalyzer), ``_functions`` (the legacy module functions) and
``_tables`` (analyze_sessions, session_features).
"""

from __future__ import annotations

from .._optional import require

# before any submodule: a re-import without pandas raises this hint even when they are cached
require("pandas", "vpoc.compat")

from ._analyzer import ANALYZE_KEYS, VolumeProfileAnalyzer  # noqa: E402
from ._functions import calculate_volume_profile, find_value_area, find_vpoc  # noqa: E402
from ._options import DEFAULT_PRICE_PRECISION, SUB_TICK_BARS, TIE_REL  # noqa: E402
from ._tables import LEGACY_FEATURES, analyze_sessions, session_features  # noqa: E402

__all__ = [
    "ANALYZE_KEYS",
    "DEFAULT_PRICE_PRECISION",
    "LEGACY_FEATURES",
    "SUB_TICK_BARS",
    "TIE_REL",
    "VolumeProfileAnalyzer",
    "analyze_sessions",
    "calculate_volume_profile",
    "find_value_area",
    "find_vpoc",
    "session_features",
]
