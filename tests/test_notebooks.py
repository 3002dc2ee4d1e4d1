"""The notebooks in ``notebooks/`` execute top to bottom on the CPU (nbclient, kernel ``python3``,
matplotlib's Agg backend) without errors or stderr output, and print what they claim; each
notebook also checks its own numbers with ``assert`` cells (NumPy cross-checks)."""

from __future__ import annotations

from pathlib import Path

import pytest

import _deps

nbformat = _deps.require("nbformat")
nbclient = _deps.require("nbclient")
_deps.require("ipykernel")
_deps.require("matplotlib")
vpoc = pytest.importorskip("vpoc")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

#: Per notebook: text its outputs must contain (proves the cells ran, not only that nothing failed).
EXPECTED = {
    "quickstart.ipynb": ["20 sessions, 27,600 bars", "identical to np.bincount",
                         "of the volume in the value area", "trading dates:"],
    "features_to_torch.ipynb": ["SessionFeatureDataset(items=119", "epoch 4:",
                                "batch: (64, 30,"],
    "tpo_and_migration.ipynb": ["10 RTH sessions, 140 periods", "TPO counts identical to a plain loop",
                                "letters drawn: 123 (2019-01-03 has 123 TPOs, 2 single prints)",
                                "value-area migration: VAL higher", "ProfilesDiff(n_sessions=10"],
}

#: Per notebook: the optional packages it imports beyond nbclient, ipykernel and matplotlib (it is
#: skipped, with the reason, when one is missing); the TPO notebook needs only the test extras.
REQUIRES = {
    "quickstart.ipynb": ("torch", "pandas", "pandas_market_calendars"),
    "features_to_torch.ipynb": ("torch", "pandas"),
    "tpo_and_migration.ipynb": ("pandas", "pandas_market_calendars"),
}


def _pending(name: str) -> list:
    """Public names the notebook ``name`` uses that this vpoc does not have yet."""
    import importlib

    missing = [n for n in ("session_features", "bar_features", "tpo", "plot_tpo", "plot_migration", "diff")
               if not hasattr(vpoc, n)]
    if not hasattr(vpoc.Profiles, "plot"):
        missing.append("Profiles.plot")
    torch_mods = ("vpoc.torch",) if "torch" in REQUIRES[name] else ()
    for mod in torch_mods + ("vpoc.io", "vpoc.sessions"):
        try:
            importlib.import_module(mod)
        except ImportError:
            missing.append(mod)
    return missing


def _kernel_available() -> bool:
    from jupyter_client.kernelspec import KernelSpecManager

    return "python3" in KernelSpecManager().find_kernel_specs()


def test_every_notebook_is_listed():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(EXPECTED) == sorted(REQUIRES)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_is_stored_without_outputs(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_executes(name, monkeypatch):
    if not _kernel_available():
        pytest.skip("no 'python3' Jupyter kernel (pip install ipykernel)")
    if _deps.missing(*REQUIRES[name]):
        pytest.skip(_deps.reason(*_deps.missing(*REQUIRES[name])))
    if _pending(name):
        pytest.skip(f"not in this vpoc yet: {', '.join(_pending(name))}")
    monkeypatch.setenv("MPLBACKEND", "Agg")  # inherited by the kernel process
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=300,
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError with the cell and traceback on any error
    stdout, stderr = [], []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                (stderr if out.name == "stderr" else stdout).append(out.text)
    assert not stderr, f"{name} wrote to stderr (warnings?):\n{''.join(stderr)}"
    text = "".join(stdout)
    for expected in EXPECTED[name]:
        assert expected in text, f"{name}: {expected!r} not in its output:\n{text}"
