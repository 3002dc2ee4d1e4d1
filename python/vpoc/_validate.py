"""Scalar argument checks shared by every entry point (from_*, Live, compat, cli).

Contract: each returns the value converted (float, int, bool, str) or raises TypeError/ValueError
naming the argument and what was expected; the wording lives once, in the C++ bindings (checks.hpp),
which also check every engine call's options.
"""

from __future__ import annotations

from typing import Any

from . import _core

__all__ = ["INT64_MAX", "real", "integer", "threads", "boolean", "string"]

INT64_MAX = 2**63 - 1


def real(x: Any, name: str) -> float:
    """``x`` as a float: TypeError unless it is a real number (bool excluded)."""
    return _core.check_real(x, name)


def integer(x: Any, name: str, minimum: int, maximum: int = INT64_MAX) -> int:
    """``x`` as a Python int in [minimum, maximum]: TypeError for a non-integer (bool, str, None,
    float), ValueError naming ``name`` and the range otherwise (never a pybind11 overload dump)."""
    return _core.check_int(x, name, minimum, maximum)


def threads(x: Any) -> int:
    """``threads=``: None (all cores) as 0, else an int in [1, 1024]."""
    return _core.check_threads(x)


def boolean(x: Any, name: str) -> bool:
    """``x`` as a bool: TypeError unless it is True/False (numpy bools included)."""
    return _core.check_bool(x, name)


def string(x: Any, name: str) -> str:
    """``x`` itself: TypeError unless it is a str."""
    return _core.check_str(x, name)
