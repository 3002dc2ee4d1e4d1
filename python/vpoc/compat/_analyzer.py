"""VolumeProfileAnalyzer: the legacy analyzer's class on vpoc's engine (smoothed, clustered VPOC; stepwise value area).

Contract: the rules of the vpoc.compat docstring, every session of a call computed by one engine call;
``profiles`` and ``analyze`` are the same computations for many sessions, used by the module functions.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._optional import require
from .._validate import boolean, integer
from ._decisions import cluster_vpoc, expand, first_max
from ._inputs import Source, ohlcv, one
from ._legacy_profiles import legacy_profiles
from ._options import SUB_TICK_BARS, TIE_REL, fraction, gpu_ids, legacy_device, option, precision, tie
from ._profile_frames import profile_arrays, profile_frame
from ._ragged import ratio, reduce, smooth

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
else:
    pd = require("pandas", "vpoc.compat")

__all__ = ["ANALYZE_KEYS", "VolumeProfileAnalyzer", "analyze", "profiles"]

#: Scalar keys of ``analyze_session`` (it also returns "volume_profile"); columns of ``analyze_sessions``.
ANALYZE_KEYS: Tuple[str, ...] = (
    "vpoc", "value_area_low", "value_area_high", "value_area_width", "value_area_pct", "total_volume",
)


class VolumeProfileAnalyzer:
    """The legacy analyzer's API on vpoc's engine (see the module docstring for the exact rules).

    ``price_precision``: level spacing (None: 0.25). ``device``: "cuda" (default; the GPU when this
    vpoc build has one and a GPU is present, else the CPU), "cuda:N", "cpu" or "auto".
    ``device_ids`` and ``chunk_size`` are validated and ignored (single-path results).
    ``sub_tick_bars``: "drop" (legacy) or "close", for bars whose range holds no level.
    ``tie_rel``: relative tolerance under which values compare equal (0: exact comparisons).
    ``quantile`` / ``min_levels``: find_vpoc's top-volume quantile and the cluster size it needs.
    """

    def __init__(self, price_precision: Optional[float] = None, device: Any = "cuda",
                 device_ids: Optional[Sequence[int]] = None, chunk_size: int = 3500, *,
                 sub_tick_bars: str = "drop", tie_rel: float = TIE_REL, quantile: float = 0.95,
                 min_levels: int = 3) -> None:
        self.price_precision: float = precision(price_precision)
        self.device: str = legacy_device(device)
        self.device_ids: List[int] = gpu_ids(device_ids)
        self.chunk_size: int = integer(chunk_size, "chunk_size", 1)
        self.sub_tick_bars: str = option(sub_tick_bars, "sub_tick_bars", SUB_TICK_BARS)
        self.tie_rel: float = tie(tie_rel)
        self.quantile: float = fraction(quantile, "quantile")
        self.min_levels: int = integer(min_levels, "min_levels", 1)

    def __repr__(self) -> str:
        return (f"VolumeProfileAnalyzer(price_precision={self.price_precision}, device={self.device!r}, "
                f"sub_tick_bars={self.sub_tick_bars!r}, tie_rel={self.tie_rel})")

    def calculate_volume_profile(self, session_df: "pd.DataFrame") -> "pd.DataFrame":
        """One session's profile: DataFrame[price_level, volume, volume_smooth] (float64), one row
        per level from floor(lo/p)*p to ceil(hi/p)*p, zero-volume levels included; empty for an
        empty session."""
        bars, source = ohlcv(session_df, "session_df")
        _, price, volume = profiles(self, bars, one(bars), source)
        return profile_frame(price, volume)

    # -- decisions on one profile frame
    def _column(self, volume_profile: Any, use_smoothing: Any) -> str:
        if not isinstance(volume_profile, pd.DataFrame):
            raise TypeError("volume_profile must be a DataFrame from calculate_volume_profile, "
                            f"got {type(volume_profile).__name__}")
        smooth_it = boolean(use_smoothing, "use_smoothing") and "volume_smooth" in volume_profile.columns
        return "volume_smooth" if smooth_it else "volume"

    def find_vpoc(self, volume_profile: "pd.DataFrame", use_smoothing: bool = True) -> float:
        """VPOC of a profile frame: among the levels whose volume (``volume_smooth`` when
        ``use_smoothing`` and present) is >= its ``quantile``, with at least ``min_levels`` of them,
        the level nearest their volume-weighted mean price; else the first maximal level. NaN when
        the frame is empty."""
        column = self._column(volume_profile, use_smoothing)
        price, vol = profile_arrays(volume_profile, column)
        if price.size == 0:
            return math.nan
        offsets = np.array([0, price.size], dtype=np.int64)
        idx = cluster_vpoc(price, vol, offsets, self.quantile, self.min_levels, self.tie_rel)
        return float(price[idx[0]])

    def find_value_area(self, volume_profile: "pd.DataFrame", value_area_pct: float = 0.7,
                        use_smoothing: bool = True) -> Tuple[float, float, float]:
        """(value_area_low, value_area_high, percentage 0-100 of the volume inside): from the first
        maximal level, add the larger neighbour one level at a time (ties up) until
        ``value_area_pct`` of the total. (NaN, NaN, NaN) for an empty frame; NaN percentage for a
        zero total."""
        share = fraction(value_area_pct, "value_area_pct")
        column = self._column(volume_profile, use_smoothing)
        price, vol = profile_arrays(volume_profile, column)
        if price.size == 0:
            return math.nan, math.nan, math.nan
        offsets = np.array([0, price.size], dtype=np.int64)
        start = first_max(vol, offsets, self.tie_rel)
        lo, hi, cur, total = expand(vol, offsets, start, share, self.tie_rel)
        pct = ratio(cur, total, 100.0)
        return float(price[lo[0]]), float(price[hi[0]]), float(pct[0])

    def analyze_session(self, session_df: "pd.DataFrame") -> Dict[str, Any]:
        """The legacy per-session dict: vpoc, value_area_low, value_area_high, value_area_width,
        value_area_pct (0-100), volume_profile (the calculate_volume_profile frame) and
        total_volume (sum of the volume column, float)."""
        bars, source = ohlcv(session_df, "session_df")
        result, price, volume = analyze(self, bars, one(bars), source, 0.7, True)
        out: Dict[str, Any] = {key: float(result[key][0]) for key in ANALYZE_KEYS}
        return {"vpoc": out["vpoc"], "value_area_low": out["value_area_low"],
                "value_area_high": out["value_area_high"], "value_area_width": out["value_area_width"],
                "value_area_pct": out["value_area_pct"], "volume_profile": profile_frame(price, volume),
                "total_volume": out["total_volume"]}


def profiles(analyzer: VolumeProfileAnalyzer, bars: Tuple[np.ndarray, ...], offsets: np.ndarray,
             source: Source) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, price_level, volume) of every session's legacy profile with the analyzer's options."""
    return legacy_profiles(*bars, offsets, analyzer.price_precision, analyzer.device,
                           analyzer.sub_tick_bars, source)


def analyze(analyzer: VolumeProfileAnalyzer, bars: Tuple[np.ndarray, ...], offsets: np.ndarray,
            source: Source, value_area_pct: float,
            use_smoothing: bool) -> Tuple[Dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """analyze_session's scalar results for every session (arrays), plus the profiles."""
    off, price, volume = profiles(analyzer, bars, offsets, source)
    vol = smooth(volume, off) if use_smoothing else volume
    ne = np.diff(off) > 0
    base = off[:-1]
    tie_rel = analyzer.tie_rel

    def at(idx: np.ndarray) -> np.ndarray:
        return np.where(ne, price[np.where(ne, base + idx, 0)] if price.size else 0.0, np.nan)

    vpoc = at(cluster_vpoc(price, vol, off, analyzer.quantile, analyzer.min_levels, tie_rel))
    lo, hi, cur, total = expand(vol, off, first_max(vol, off, tie_rel), value_area_pct, tie_rel)
    val, vah = at(lo), at(hi)
    return {
        "vpoc": vpoc,
        "value_area_low": val,
        "value_area_high": vah,
        "value_area_width": vah - val,
        "value_area_pct": np.where(ne, ratio(cur, total, 100.0), np.nan),
        "total_volume": reduce(np.add, bars[4], offsets, 0).astype(np.float64),
    }, price, volume
