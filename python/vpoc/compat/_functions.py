"""The legacy module functions: calculate_volume_profile, find_vpoc and find_value_area on {price: volume} dicts.

Contract: dicts follow the legacy module (lowest maximal price; greedy value area, fraction 0-1;
0.0 results when empty); a DataFrame goes to the VolumeProfileAnalyzer method, as the legacy did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from .._optional import require
from ._analyzer import VolumeProfileAnalyzer, profiles
from ._decisions import first_max, greedy
from ._inputs import ohlcv, one
from ._options import TIE_REL, fraction, tie
from ._profile_frames import dict_arrays
from ._ragged import ratio

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
else:
    pd = require("pandas", "vpoc.compat")

__all__ = ["calculate_volume_profile", "find_value_area", "find_vpoc"]


def calculate_volume_profile(session_data: "pd.DataFrame", price_precision: float = 0.25,
                             device_ids: Optional[Sequence[int]] = None, chunk_size: int = 3500, *,
                             device: Any = "cuda", sub_tick_bars: str = "drop") -> Dict[float, float]:
    """One session's profile as the legacy dict {price_level: volume}, ascending, every level of
    the session's range (zero ones too), for any session length (no chunked path)."""
    analyzer = VolumeProfileAnalyzer(price_precision, device, device_ids, chunk_size,
                                     sub_tick_bars=sub_tick_bars)
    bars, source = ohlcv(session_data, "session_data")
    _, price, volume = profiles(analyzer, bars, one(bars), source)
    return dict(zip(price.tolist(), volume.tolist()))


def _not_a_profile(volume_profile: Any) -> TypeError:
    return TypeError(f"volume_profile must be a dict {{price_level: volume}} or a DataFrame, "
                     f"got {type(volume_profile).__name__}")


def find_vpoc(volume_profile: Any, *, tie_rel: float = TIE_REL) -> float:
    """Legacy ``find_vpoc``: for a dict, the lowest price level of maximal volume (0.0 when empty);
    a DataFrame goes to ``VolumeProfileAnalyzer().find_vpoc`` (smoothed, clustered), as before."""
    if isinstance(volume_profile, pd.DataFrame):
        return VolumeProfileAnalyzer(tie_rel=tie_rel).find_vpoc(volume_profile)
    if not isinstance(volume_profile, Mapping):
        raise _not_a_profile(volume_profile)
    tie_rel = tie(tie_rel)
    price, vol = dict_arrays(volume_profile)
    if price.size == 0:
        return 0.0
    idx = first_max(vol, np.array([0, price.size], dtype=np.int64), tie_rel)
    return float(price[idx[0]])


def find_value_area(volume_profile: Any, value_area_pct: float = 0.7, *,
                    tie_rel: float = TIE_REL) -> Tuple[float, float, float]:
    """Legacy ``find_value_area``: for a dict, levels by volume (highest first, equal volumes lower
    price first) until ``value_area_pct`` of the total -> (lowest, highest, fraction 0-1 inside);
    (0.0, 0.0, 0.0) when empty, NaN fraction for a zero total. A DataFrame goes to
    ``VolumeProfileAnalyzer().find_value_area`` (percentage 0-100), as before."""
    if isinstance(volume_profile, pd.DataFrame):
        return VolumeProfileAnalyzer(tie_rel=tie_rel).find_value_area(volume_profile, value_area_pct)
    if not isinstance(volume_profile, Mapping):
        raise _not_a_profile(volume_profile)
    share = fraction(value_area_pct, "value_area_pct")
    tie_rel = tie(tie_rel)
    price, vol = dict_arrays(volume_profile)
    if price.size == 0:
        return 0.0, 0.0, 0.0
    low, high, cur, total = greedy(vol, np.array([0, price.size], dtype=np.int64), share, tie_rel)
    return float(price[low[0]]), float(price[high[0]]), float(ratio(cur, total, 1.0)[0])
