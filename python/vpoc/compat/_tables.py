"""Many sessions at once: analyze_sessions (the analyzer per session) and session_features (the legacy 14 features).

Contract: one engine call for all sessions of the frame, grouped like DataFrame.groupby(by);
one row per session indexed by its key, columns ANALYZE_KEYS / LEGACY_FEATURES in that order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple

import numpy as np

from .._optional import require
from .._validate import boolean
from ._analyzer import ANALYZE_KEYS, VolumeProfileAnalyzer, analyze, profiles
from ._decisions import first_max, greedy
from ._inputs import grouped
from ._options import TIE_REL, fraction
from ._ragged import ratio, reduce

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
else:
    pd = require("pandas", "vpoc.compat")

__all__ = ["LEGACY_FEATURES", "analyze_sessions", "session_features"]

#: The legacy feature table's 14 per-session features (columns of ``session_features``).
LEGACY_FEATURES: Tuple[str, ...] = (
    "vpoc", "total_volume", "value_area_low", "value_area_high", "value_area_width", "price_range",
    "range_pct", "close_change_pct", "session_high", "session_low", "session_open", "session_close",
    "vwap", "close_to_vwap_pct",
)

_FLOOR = 0.0001  # the legacy features' guard against dividing by a zero open / vwap / range


def analyze_sessions(df: "pd.DataFrame", by: Any, *, price_precision: Optional[float] = None,
                     device: Any = "cuda", device_ids: Optional[Sequence[int]] = None,
                     chunk_size: int = 3500, value_area_pct: float = 0.7, use_smoothing: bool = True,
                     sub_tick_bars: str = "drop", tie_rel: float = TIE_REL) -> "pd.DataFrame":
    """``VolumeProfileAnalyzer.analyze_session`` for every session of ``df`` from one engine call.

    ``by``: a column name or an array of session keys (one per row); rows are grouped like
    ``df.groupby(by)`` (sorted keys, frame order inside a session; missing keys raise). To group by
    calendar date as the legacy feature code did, pass e.g. ``by=df.index.date``. Returns one row per
    session, indexed by key, with columns ``ANALYZE_KEYS`` (the histograms: calculate_volume_profile
    or vpoc.from_bars(..., distribute="legacy")).
    """
    analyzer = VolumeProfileAnalyzer(price_precision, device, device_ids, chunk_size,
                                     sub_tick_bars=sub_tick_bars, tie_rel=tie_rel)
    share = fraction(value_area_pct, "value_area_pct")
    smoothing = boolean(use_smoothing, "use_smoothing")
    bars, offsets, source, index = grouped(df, by)
    if bars[0].size == 0:
        return pd.DataFrame({k: np.zeros(0) for k in ANALYZE_KEYS}, index=index)
    result, _, _ = analyze(analyzer, bars, offsets, source, share, smoothing)
    return pd.DataFrame(result, index=index)[list(ANALYZE_KEYS)]


def session_features(df: "pd.DataFrame", by: Any, *, price_precision: float = 0.25,
                     device: Any = "cuda", device_ids: Optional[Sequence[int]] = None,
                     chunk_size: int = 3500, value_area_pct: float = 0.7, sub_tick_bars: str = "drop",
                     tie_rel: float = TIE_REL) -> "pd.DataFrame":
    """The legacy feature table's 14 session features (``LEGACY_FEATURES``) from one engine call.

    Per session (grouped by ``by`` as in analyze_sessions): vpoc = find_vpoc(dict) (raw volume);
    value_area_low/high = find_value_area(dict) (greedy); session_high/low = max(high)/min(low);
    session_open/close = first open/last close; total_volume = sum(volume);
    price_range = max(high - low, 1e-4); range_pct = price_range / max(open, 1e-4) * 100;
    close_change_pct = (close - open) / max(open, 1e-4) * 100; vwap = sum(close*volume)/total_volume
    (the close when total_volume is 0); close_to_vwap_pct = (close - vwap) / max(vwap, 1e-4) * 100.
    """
    analyzer = VolumeProfileAnalyzer(price_precision, device, device_ids, chunk_size,
                                     sub_tick_bars=sub_tick_bars, tie_rel=tie_rel)
    share = fraction(value_area_pct, "value_area_pct")
    bars, offsets, source, index = grouped(df, by)
    if bars[0].size == 0:
        return pd.DataFrame({k: np.zeros(0) for k in LEGACY_FEATURES}, index=index)
    o, h, l, c, v = bars
    off, price, volume = profiles(analyzer, bars, offsets, source)
    base = off[:-1]
    vpoc = price[base + first_max(volume, off, analyzer.tie_rel)]
    low, high, _, _ = greedy(volume, off, share, analyzer.tie_rel)
    val, vah = price[base + low], price[base + high]
    session_high = reduce(np.maximum, h, offsets, np.nan)
    session_low = reduce(np.minimum, l, offsets, np.nan)
    first, last = offsets[:-1], offsets[1:] - 1
    session_open, session_close = o[first], c[last]
    total = reduce(np.add, v, offsets, 0).astype(np.float64)
    weighted = reduce(np.add, c * v.astype(np.float64), offsets, 0.0)
    vwap = np.where(total > 0, ratio(weighted, total, 1.0), session_close)
    price_range = np.maximum(session_high - session_low, _FLOOR)
    features = {
        "vpoc": vpoc,
        "total_volume": total,
        "value_area_low": val,
        "value_area_high": vah,
        "value_area_width": vah - val,
        "price_range": price_range,
        "range_pct": price_range / np.maximum(session_open, _FLOOR) * 100,
        "close_change_pct": (session_close - session_open) / np.maximum(session_open, _FLOOR) * 100,
        "session_high": session_high,
        "session_low": session_low,
        "session_open": session_open,
        "session_close": session_close,
        "vwap": vwap,
        "close_to_vwap_pct": (session_close - vwap) / np.maximum(vwap, _FLOOR) * 100,
    }
    return pd.DataFrame(features, index=index)[list(LEGACY_FEATURES)]
