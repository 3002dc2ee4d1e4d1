"""Without an optional package, vpoc says which extra to install (vpoc._optional.require).

Each test hides the package (``sys.modules[name] = None`` makes ``import name`` fail as if it were
not installed), so the messages are checked in every environment, with or without the package.
"""

from __future__ import annotations

import importlib
import re
import sys

import numpy as np
import pytest

import _deps
import vpoc
from vpoc import _optional, io as vio, sessions as vs

TS = np.datetime64("2025-03-10T15:00", "ns").astype(np.int64) + np.arange(5, dtype=np.int64) * 60 * 10**9


def hide(monkeypatch, *names: str) -> None:
    """``import name`` raises ModuleNotFoundError for each name until the test ends."""
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def raises_hint(feature: str, package: str, extra: str, alternative: str = ""):
    tail = f", {alternative}" if alternative else ""
    text = f'{feature} needs {package}: pip install "vpoc[{extra}]"{tail}'
    return pytest.raises(ModuleNotFoundError, match="^" + re.escape(text) + "$")


def test_require_names_the_extra_and_the_package(monkeypatch):
    hide(monkeypatch, "polars")
    with raises_hint("reading a polars frame", "polars", "io") as e:
        _optional.require("polars", "reading a polars frame")
    assert isinstance(e.value, ImportError) and e.value.name == "polars"
    with raises_hint("it", "polars", "test", "or not"):
        _optional.require("polars", "it", "test", alternative="or not")
    assert _optional.require("numpy", "x") is np


def test_require_passes_on_errors_of_an_installed_package(tmp_path, monkeypatch):
    """A missing dependency *of* an installed package is its own error, not "install vpoc[...]"."""
    (tmp_path / "vpoc_fake_pkg").mkdir()
    (tmp_path / "vpoc_fake_pkg" / "__init__.py").write_text("import vpoc_no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="vpoc_no_such_dependency") as e:
        _optional.require("vpoc_fake_pkg", "x")
    assert e.value.name == "vpoc_no_such_dependency" and "pip install" not in str(e.value)


def test_io_without_pandas(tmp_path, monkeypatch):
    path = tmp_path / "bars.csv"
    path.write_text("timestamp,open,high,low,close,volume\n2025-03-10T15:00:00Z,1,2,1,2,3\n")
    bars = vio.Bars(TS, *([np.ones(5)] * 5))
    hide(monkeypatch, "pandas")
    with raises_hint("vpoc.io.read_bars / read_trades", "pandas", "io"):
        vio.read_bars(path)
    with raises_hint("vpoc.io.read_bars / read_trades", "pandas", "io"):
        vio.read_trades(path)
    with raises_hint("vpoc.io.write_bars / write_trades", "pandas", "io"):
        vio.write_bars(bars, tmp_path / "out.csv")
    with raises_hint("to_pandas()", "pandas", "pandas"):
        bars.to_pandas()
    with raises_hint("to_pandas()", "pandas", "pandas"):
        vpoc.synth.es_bars(1, 3).to_pandas()


def test_parquet_without_pyarrow(tmp_path, monkeypatch):
    bars = vio.Bars(TS, *([np.ones(5)] * 5))
    hide(monkeypatch, "pyarrow", "pyarrow.parquet")
    out = tmp_path / "bars.parquet"
    with raises_hint(f"writing Parquet ({out})", "pyarrow", "io"):
        vio.write_bars(bars, out)


@_deps.needs("pandas")  # reading needs pandas first (its own message: test_io_without_pandas)
def test_reading_parquet_without_pyarrow(tmp_path, monkeypatch):
    hide(monkeypatch, "pyarrow", "pyarrow.parquet")
    path = tmp_path / "bars.parquet"
    path.write_bytes(b"PAR1")
    with raises_hint(f"reading Parquet ({path})", "pyarrow", "io"):
        vio.read_bars(path)


def test_sessions_without_pandas(monkeypatch):
    hide(monkeypatch, "pandas")
    with raises_hint("vpoc.sessions.daily(tz='UTC', weekdays_only=False)", "pandas", "sessions"):
        vs.daily(TS)
    with raises_hint("vpoc.sessions.globex(calendar=None)", "pandas", "sessions"):
        vs.globex(TS, calendar=None)
    # bad arguments are still reported as such, before the missing package
    with pytest.raises(ValueError, match="closed must be"):
        vs.daily(TS, closed="both")
    # Live fails when it is made, not at its first row
    with raises_hint("vpoc.sessions.daily(tz='UTC', weekdays_only=False)", "pandas", "sessions"):
        vpoc.Live(tick_size=0.25, session="daily")


def test_calendars_without_pandas_market_calendars(monkeypatch):
    hide(monkeypatch, "pandas_market_calendars")
    alternative = "or pass calendar=None (no holidays or early closes)"
    with raises_hint("calendar='CME Globex Equity'", "pandas_market_calendars", "sessions",
                     alternative):
        vs.globex(TS)
    with raises_hint("calendar='CME Globex Equity'", "pandas_market_calendars", "sessions",
                     alternative):
        vs.rth(TS)
    with raises_hint("calendar='CME Globex Equity'", "pandas_market_calendars", "sessions",
                     alternative):
        vpoc.Live(tick_size=0.25, session="globex")


def test_results_without_pandas_torch_matplotlib(monkeypatch):
    prof = vpoc.from_trades([1.0, 2.0, 2.0], [1, 2, 3], offsets=[0, 3], tick_size=0.25)
    table = vpoc.session_features([2.0, 3.0], [1.0, 2.0], [1.5, 2.5], [1, 1], offsets=[0, 2],
                                  tick_size=0.25)
    hide(monkeypatch, "pandas", "torch", "matplotlib", "matplotlib.pyplot")
    with raises_hint("Profiles.to_pandas()", "pandas", "pandas"):
        prof.to_pandas()
    with raises_hint("FeatureTable.to_pandas()", "pandas", "pandas"):
        table.to_pandas()
    with raises_hint("FeatureTable.to_torch()", "torch", "torch"):
        table.to_torch()
    with raises_hint("Profiles.plot()", "matplotlib", "plot"):
        prof.plot(0)


def test_modules_without_their_package(monkeypatch):
    import vpoc.dask

    for name, package, extra in [("vpoc.torch", "torch", "torch"), ("vpoc.compat", "pandas", "pandas")]:
        hide(monkeypatch, package)
        monkeypatch.delitem(sys.modules, name, raising=False)  # import it afresh
        with raises_hint(name, package, extra):
            importlib.import_module(name)
    hide(monkeypatch, "dask", "dask.dataframe")
    with raises_hint("vpoc.dask", "dask", "dask"):
        vpoc.dask.from_bars(None, tick_size=0.25)
