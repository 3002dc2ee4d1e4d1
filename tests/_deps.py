"""Optional test dependencies: tests that need one skip, with a reason, when it is missing.

vpoc needs only NumPy; the suite needs pytest and hypothesis. Everything else (pandas, polars,
pyarrow, pandas_market_calendars, dask, torch, matplotlib, tqdm, the notebook runners) is
optional, so ``python -m pytest`` runs anywhere and skips what it cannot check:

* a whole file:   ``pl = _deps.require("polars")`` at module level (``pytest.importorskip``);
* one test:       ``@_deps.needs("pandas", "pandas_market_calendars")`` (a ``skipif`` marker),
                  or ``pd = _deps.require("pandas")`` inside the test;
* an import that only some tests use: ``pd = _deps.module("pandas")`` (None when missing) at
  module level, with those tests marked ``needs``.

The skip reason names the package and the extra that installs it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Dict, Optional

import pytest

from vpoc._optional import EXTRAS as _LIBRARY_EXTRAS

#: pyproject extra that installs each optional package: the library's table, plus the packages
#: only the tests use ("test" holds them all).
EXTRAS: Dict[str, str] = {**_LIBRARY_EXTRAS, "nbclient": "test", "nbformat": "test", "ipykernel": "test"}

_cache: Dict[str, Optional[ModuleType]] = {}


def reason(*names: str) -> str:
    """``needs pandas, polars (pip install "vpoc[pandas]" "vpoc[io]")``."""
    how: list = []
    for name in names:
        package = name.partition(".")[0]
        extra = EXTRAS.get(package)
        item = f'"vpoc[{extra}]"' if extra else package
        if item not in how:
            how.append(item)
    return f"needs {', '.join(names)} (pip install {' '.join(how)})"


def module(name: str) -> Optional[ModuleType]:
    """The module ``name`` (e.g. "dask.dataframe"), or None when it (or its package) is missing."""
    if name not in _cache:
        try:
            _cache[name] = importlib.import_module(name)
        except ModuleNotFoundError:
            _cache[name] = None
    return _cache[name]


def missing(*names: str) -> list:
    return [n for n in names if module(n) is None]


def needs(*names: str) -> pytest.MarkDecorator:
    """A marker: skip the test (or every test of a class / parametrization) unless all of
    ``names`` import."""
    gone = missing(*names)
    return pytest.mark.skipif(bool(gone), reason=reason(*gone) if gone else "")


def require(name: str) -> ModuleType:
    """``pytest.importorskip(name)`` with a reason naming the extra: at module level it skips
    the whole file, inside a test that test."""
    __tracebackhide__ = True  # the skip is reported at the caller's line
    return pytest.importorskip(name, reason=reason(name))
