"""Profiles as the legacy shapes: the DataFrame[price_level, volume, volume_smooth] and the {price: volume} dict.

Contract: profile_frame builds the frame calculate_volume_profile returns; profile_arrays and
dict_arrays read either shape back as validated float64 arrays (finite prices, finite volumes >= 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Tuple

import numpy as np

from .._arrays import as_prices
from .._optional import require
from ._inputs import values
from ._ragged import smooth

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
else:
    pd = require("pandas", "vpoc.compat")

__all__ = ["dict_arrays", "profile_arrays", "profile_frame"]


def profile_frame(price: np.ndarray, volume: np.ndarray) -> "pd.DataFrame":
    """One session's profile frame, ``volume_smooth`` the 3-level moving average."""
    offsets = np.array([0, price.size], dtype=np.int64)
    return pd.DataFrame({"price_level": price, "volume": volume,
                         "volume_smooth": smooth(volume, offsets)})


def profile_arrays(volume_profile: "pd.DataFrame", column: str) -> Tuple[np.ndarray, np.ndarray]:
    """(price_level, chosen volume column) of a profile frame as validated float64 arrays."""
    for col in ("price_level", column):
        if col not in volume_profile.columns:
            raise ValueError(f"volume_profile has no {col!r} column (expected price_level, volume, "
                             "volume_smooth as returned by calculate_volume_profile)")
    price = as_prices(values(volume_profile["price_level"]), "volume_profile['price_level']")
    vol = as_prices(values(volume_profile[column]), f"volume_profile[{column!r}]")
    price = price.astype(np.float64, copy=False)
    vol = vol.astype(np.float64, copy=False)
    _check(price, vol, lambda i: f"volume_profile['price_level'][{i}] is not finite",
           lambda i: f"volume_profile[{column!r}][{i}]")
    return price, vol


def dict_arrays(volume_profile: Mapping[Any, Any]) -> Tuple[np.ndarray, np.ndarray]:
    """(prices ascending, volumes) of a {price_level: volume} dict, validated."""
    try:
        price = np.array(list(volume_profile.keys()), dtype=np.float64)
        vol = np.array(list(volume_profile.values()), dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"volume_profile must map numeric price levels to numeric volumes ({e})") from None
    if price.ndim != 1 or vol.ndim != 1:
        raise TypeError("volume_profile must map numeric price levels to numeric volumes")
    _check(price, vol, lambda i: f"volume_profile has a non-finite price level {price[i]}",
           lambda i: f"volume_profile[{price[i]}]")
    order = np.argsort(price, kind="stable")
    return price[order], vol[order]


def _check(price: np.ndarray, vol: np.ndarray, bad_price: Callable[[int], str],
           volume_at: Callable[[int], str]) -> None:
    """Both shapes' rule: every price finite (ValueError ``bad_price(i)`` of the first that is not),
    every volume finite and >= 0 (ValueError naming ``volume_at(i)`` of the first that is not)."""
    bad = ~np.isfinite(price)
    if bad.any():
        raise ValueError(bad_price(int(np.argmax(bad))))
    bad = ~(np.isfinite(vol) & (vol >= 0))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{volume_at(i)}={vol[i]} must be finite and >= 0")
