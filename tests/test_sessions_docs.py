"""The code examples of README.md and the docs run as written on a synthetic file with the users' conventions.

Contract: every ```python block of README.md, docs/sessions.md, docs/features.md and docs/inspect.md
(doctest prompts stripped; GPU blocks skipped) runs in a directory holding the files they name.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import pytest

import _deps

_deps.require("pandas")
_deps.require("pandas_market_calendars")

from _user_file import write_user_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "docs/sessions.md", "docs/features.md", "docs/inspect.md")


def _blocks(doc: str):
    text = (ROOT / doc).read_text(encoding="utf-8")
    for i, b in enumerate(re.findall(r"```python\n(.*?)```", text, re.S)):
        if ">>> " in b:  # doctest style: the prompts' lines only
            b = "\n".join(ln[4:] for ln in b.splitlines() if ln.startswith((">>> ", "... ")))
        yield i, b


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("docs")
    short = dict(start="2025-01-05", end="2025-02-07", seed=1)
    write_user_file(d / "ES 03-25.Last.txt")             # docs/inspect.md's worked example
    write_user_file(d / "ES 06-25.Last.txt", start="2025-02-16", end="2025-04-18", seed=2,
                    price=6100.0)
    write_user_file(d / "ES_1min.txt", **short)           # rows outside sessions (strays, halts)
    write_user_file(d / "es.csv", fmt="csv", **short)
    return d


@pytest.mark.parametrize("doc", DOCS)
def test_23_trial6_doc_examples_run_as_written(doc, files, monkeypatch) -> None:
    monkeypatch.chdir(files)
    if doc in ("README.md", "docs/features.md"):  # their feature blocks use torch (to_torch), README plots
        pytest.importorskip("torch")
        pytest.importorskip("matplotlib")
    import vpoc

    g = {"__name__": "__doc_example__", "vpoc": vpoc}
    ran = 0
    for i, code in _blocks(doc):
        if "cuda" in code:  # the GPU block needs a GPU build
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # examples may warn (guessed interval, strays)
            exec(compile(code, f"{doc}[python block {i}]", "exec"), g)
        ran += 1
    assert ran >= 1
    if doc == "docs/features.md":  # the example's comment says what comes back: the 2 strays
        assert (g["sess"].session_rule, g["sess"].dropped_rows) == ("globex", 2)
    if doc == "docs/inspect.md":  # trial8 #5: globex(c) drops and reports the strays; session_ids keeps them
        s, f, f_all = g["s"], g["f"], g["f_all"]  # (this synthetic file also has early-close prints)
        assert s.dropped_by_cause["weekend"] == 2 and f.dropped_rows == s.dropped_rows > 0
        assert f_all.dropped_rows == 0 and len(g["c"].close) - len(s.take(g["c"].close)) == s.dropped_rows


def test_23_trial6_sessions_doc_first_block_is_the_recommended_path() -> None:
    first = next(_blocks("docs/sessions.md"))[1]
    assert "inspect(" in first and "**info.read_kwargs" in first and "session=s" in first
    assert 'tz="America/Chicago"' not in first and "offsets=s.offsets" not in first.split("rth")[0]
    real = re.search(r"## Real data.*?```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert real is not None and 'tz="America/Chicago"' not in real.group(1)


def _run_blocks(doc: str, g: dict) -> int:
    ran = 0
    for i, code in _blocks(doc):
        exec(compile(code, f"{doc}[python block {i}]", "exec"), g)
        ran += 1
    return ran


def test_t8_6_diff_live_presets_examples_run(tmp_path, monkeypatch) -> None:
    """trial8 #6: diff.md runs as written; live.md and presets.md with only the names their 'given' lines
    describe (feed, df); live.md imports numpy itself (it used np without importing it)."""
    import types

    import numpy as np

    import vpoc

    monkeypatch.chdir(tmp_path)
    g = {"__name__": "__doc_example__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vpoc.GuessedDefaultWarning)
        assert _run_blocks("docs/diff.md", g) == 1
    assert g["d"].differs.any()  # the last diff: TPO profiles of 30- vs 60-minute periods
    b = vpoc.synth.es_bars(n_sessions=3)
    feed = [types.SimpleNamespace(open=b.open[i:i + 700], high=b.high[i:i + 700], low=b.low[i:i + 700],
                                  close=b.close[i:i + 700], volume=b.volume[i:i + 700],
                                  ts_ns=b.timestamp[i:i + 700]) for i in range(0, len(b.close), 700)]
    g = {"__name__": "__doc_example__", "feed": feed}  # no np, no vpoc: the blocks import them
    assert _run_blocks("docs/live.md", g) == 2
    assert len(g["live"].profiles.poc) == 2
    df = b.to_pandas()
    step = 0.05 * (np.arange(len(df)) % 5)  # a 0.05 grid, not only the 0.25 one
    for col in ("open", "high", "low", "close"):
        df[col] = df[col] + step
    g = {"__name__": "__doc_example__", "df": df}
    with pytest.warns(vpoc.GuessedDefaultWarning):  # as the doc's given line says
        assert _run_blocks("docs/presets.md", g) >= 1
    assert g["prof"].rules["va_stop"] == "exceeds"
