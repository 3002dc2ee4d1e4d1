"""vpoc.compat's options: their defaults and the checks of the legacy arguments.

Contract: each check returns the value converted or raises TypeError/ValueError naming the argument;
scalar type checks are vpoc._validate's (same wording); device_ids and chunk_size never change a result.
"""

from __future__ import annotations

import math
from typing import Any, List, Sequence, Tuple

import numpy as np

from .._api import gpu_available
from .._validate import integer, real, string

__all__ = [
    "DEFAULT_PRICE_PRECISION",
    "SUB_TICK_BARS",
    "TIE_REL",
    "fraction",
    "gpu_ids",
    "legacy_device",
    "option",
    "precision",
    "tie",
]

#: Level spacing used when ``price_precision`` is None (the legacy ``settings.PRICE_PRECISION``).
DEFAULT_PRICE_PRECISION: float = 0.25
#: Values within this relative distance compare equal in every decision (see the module docstring).
TIE_REL: float = 1e-9
#: What to do with a bar whose [min(o,c,l), max(o,c,h)] holds no level: legacy "drop" or "close".
SUB_TICK_BARS: Tuple[str, ...] = ("drop", "close")

_DEVICES = "'cuda', 'cuda:N', 'cpu' or 'auto'"


def precision(x: Any, name: str = "price_precision") -> float:
    """``price_precision``: None means DEFAULT_PRICE_PRECISION, else a finite number > 0."""
    if x is None:
        return DEFAULT_PRICE_PRECISION
    p = real(x, name)
    if not (math.isfinite(p) and p > 0):
        raise ValueError(f"{name} must be a finite number > 0 (or None for {DEFAULT_PRICE_PRECISION}), got {p}")
    return p


def fraction(x: Any, name: str) -> float:
    """A fraction in (0, 1] (value_area_pct, quantile)."""
    f = real(x, name)
    if not 0.0 < f <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {f}")
    return f


def tie(x: Any) -> float:
    """``tie_rel`` in [0, 1e-3]."""
    t = real(x, "tie_rel")
    if not 0.0 <= t <= 1e-3:
        raise ValueError(f"tie_rel must be in [0, 1e-3], got {t}")
    return t


def option(x: Any, name: str, allowed: Sequence[str]) -> str:
    """A string that is one of ``allowed``."""
    x = string(x, name)
    if x not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {x!r}")
    return x


def gpu_ids(x: Any) -> List[int]:
    """Validated and kept for introspection only: the result never depends on it."""
    if x is None:
        return []
    if isinstance(x, (str, bytes)) or not (isinstance(x, Sequence) or isinstance(x, np.ndarray)):
        raise TypeError(f"device_ids must be None or a sequence of GPU indices, got {type(x).__name__}")
    return [integer(i, f"device_ids[{k}]", 0) for k, i in enumerate(list(x))]


def legacy_device(x: Any) -> str:
    """The vpoc device for a legacy device name: a GPU only when one is built and present."""
    name = str(x)  # also accepts torch.device
    if name in ("cpu", "auto"):
        return name
    if name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit()):
        return name if gpu_available() else "cpu"
    raise ValueError(f"device must be {_DEVICES}, got {name!r}")
