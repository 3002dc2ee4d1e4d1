"""Optional dependencies: import one on first use, or raise an ImportError that says what to install.

vpoc needs only NumPy; pandas, pyarrow, polars, pandas_market_calendars, dask, torch, matplotlib,
tqdm and databento_dbn are imported where a feature needs them. When one is missing the user gets
``ModuleNotFoundError: <feature> needs <package>: pip install "vpoc[<extra>]"`` (an ImportError
whose ``name`` is the missing package), not a bare "No module named ..." from deep inside vpoc.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Dict

__all__ = ["EXTRAS", "hint", "require"]

#: The pyproject extra that installs each optional top-level package.
EXTRAS: Dict[str, str] = {
    "pandas": "pandas",
    "pyarrow": "io",
    "polars": "io",
    "pandas_market_calendars": "sessions",
    "dask": "dask",
    "distributed": "dask",
    "torch": "torch",
    "matplotlib": "plot",
    "tqdm": "cli",
    "databento_dbn": "databento",
}


def hint(package: str, extra: str = "") -> str:
    """``pip install "vpoc[extra]"`` (default: the extra that holds ``package``)."""
    extra = extra or EXTRAS.get(package, "")
    return f'pip install "vpoc[{extra}]"' if extra else f"pip install {package}"


def require(module: str, feature: str, extra: str = "", alternative: str = "") -> ModuleType:
    """``importlib.import_module(module)``; when its top-level package is not installed, raise
    ModuleNotFoundError("<feature> needs <package>: pip install "vpoc[<extra>]"[, <alternative>]").

    ``extra`` overrides the extra named (default: :data:`EXTRAS` of the package);
    ``alternative`` (e.g. "or pass calendar=None") is appended after a comma. Errors raised
    while importing an installed package (a broken install, a missing dependency *of* that
    package) propagate unchanged.
    """
    package = module.partition(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and e.name.partition(".")[0] != package:
            raise
        tail = f", {alternative}" if alternative else ""
        raise ModuleNotFoundError(f"{feature} needs {package}: {hint(package, extra)}{tail}",
                                  name=package) from e
