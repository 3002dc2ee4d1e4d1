"""Scalar argument checks shared by every entry point (from_*, Live, compat, cli).

Contract: each returns the value converted (float, int, bool, str) or raises TypeError/ValueError
naming the argument and what was expected; no module re-words these messages.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = ["INT64_MAX", "real", "integer", "threads", "boolean", "string"]

INT64_MAX = 2**63 - 1


def real(x: Any, name: str) -> float:
    """``x`` as a float: TypeError unless it is a real number (bool excluded)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    return float(x)


def integer(x: Any, name: str, minimum: int, maximum: int = INT64_MAX) -> int:
    """``x`` as a Python int in [minimum, maximum]: TypeError for a non-integer (bool, str, None,
    float), ValueError naming ``name`` and the range otherwise (never a pybind11 overload dump)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer in [{minimum}, {maximum}], got {type(x).__name__} "
                        f"{x!r:.40}")
    value = int(x)
    if not minimum <= value <= maximum:
        if maximum == INT64_MAX:
            raise ValueError(f"{name} must be >= {minimum} (and at most 2**63 - 1), got {value}")
        raise ValueError(f"{name} must be in [{minimum}, {maximum}], got {value}")
    return value


def threads(x: Any) -> int:
    """``threads=``: None (all cores) as 0, else an int in [1, 1024]."""
    if x is None:
        return 0
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise TypeError(f"threads must be None (all cores) or an integer in [1, 1024], got "
                        f"{type(x).__name__} {x!r:.40}")
    if not 1 <= int(x) <= 1024:
        raise ValueError(f"threads must be in [1, 1024] (or None: all cores), got {int(x)}")
    return int(x)


def boolean(x: Any, name: str) -> bool:
    """``x`` as a bool: TypeError unless it is True/False (numpy bools included)."""
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(x).__name__}")
    return bool(x)


def string(x: Any, name: str) -> str:
    """``x`` itself: TypeError unless it is a str."""
    if not isinstance(x, str):
        raise TypeError(f"{name} must be a string, got {type(x).__name__}")
    return x
