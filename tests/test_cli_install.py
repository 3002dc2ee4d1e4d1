"""The install path a new user takes: the README's first command and quickstart, the declared floors.

Contract: the README's first command installs what ``vpoc profile`` / ``vpoc inspect`` need (the
``cli`` extra), its quickstart runs as written with no warning, and pyproject's minimum versions of
numpy, pandas, pyarrow and pandas_market_calendars are exactly the ones CI's oldest-versions step
installs (.ci/oldest.txt) and runs the whole suite on (23.10).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import _deps

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FLOORED = ("numpy", "pandas", "pyarrow", "pandas_market_calendars", "databento_dbn")


def _blocks(lang: str) -> list:
    return re.findall(r"```" + lang + r"\n(.*?)```", README, flags=re.S)


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _floors(reqs: list) -> dict:
    out: dict = {}
    for req in reqs:
        m = re.match(r"\s*([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*>=\s*([0-9][0-9.]*)", req)
        if m:
            out.setdefault(m.group(1).lower().replace("-", "_"), set()).add(m.group(2))
    return out


def test_23_10_first_readme_command_installs_the_cli_extra():
    first = _blocks("bash")[0].strip().splitlines()[0]
    assert first.startswith('pip install ".[cli]"'), first
    cli = _floors(_pyproject()["project"]["optional-dependencies"]["cli"])
    assert {"pandas", "pyarrow", "pandas_market_calendars", "tqdm"} <= set(cli), cli
    assert "import torch" not in _blocks("python")[0]  # the quickstart needs no torch


def test_23_10_floors_are_the_versions_ci_tests():
    project = _pyproject()["project"]
    reqs = list(project["dependencies"]) + [r for extra in project["optional-dependencies"].values()
                                            for r in extra]
    floors = _floors(reqs)
    pins = {}
    for line in (ROOT / ".ci" / "oldest.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name.strip().lower()] = version.strip()
    assert set(pins) == set(FLOORED), pins
    for name in FLOORED:
        assert name in floors, name
        for floor in floors[name]:  # one floor per package, and the pin is that release
            assert len(floors[name]) == 1, (name, floors[name])
            assert pins[name] == floor or pins[name].startswith(floor + "."), (name, floor, pins[name])
    run = (ROOT / ".ci" / "run").read_text()
    assert "oldest.txt" in run and "python3.11" in run


@_deps.needs("pandas", "pandas_market_calendars")
def test_23_10_readme_quickstart_runs_as_written(tmp_path):
    code = _blocks("python")[0]
    assert "vpoc.io.inspect" in code and "read_kwargs" in code and "label" in code
    r = subprocess.run([sys.executable, "-W", "error", "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert "trade_date" in r.stdout and "Inspection of 'es.csv'" in r.stdout
    assert r.stderr == ""
