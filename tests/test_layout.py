"""tools/check_layout.py finds each kind of layout violation planted in a temporary package, and nothing else.

Contract: runs the checker on trees written here (never on python/vpoc itself), so the checker is proven to
catch oversized modules, private names crossing subpackages and module-level import cycles.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

TOOL = Path(__file__).resolve().parent.parent / "tools" / "check_layout.py"


def _load():
    spec = importlib.util.spec_from_file_location("check_layout", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_layout"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


check_layout = _load()


def write(root: Path, files: Dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


CLEAN = {
    "vpoc/__init__.py": "from . import features, live\nfrom ._api import from_bars\n",
    "vpoc/_api.py": "from ._validate import real\n\ndef from_bars(): pass\n\ndef _sessions(): pass\n",
    "vpoc/_validate.py": "def real(x, name): return float(x)\n",
    "vpoc/_core.pyi": "def f() -> None: ...\n" * 700,  # a stub: exempt from the size rule
    "vpoc/features/__init__.py": "from ._table import table\n\n__all__ = ['table']\n",
    "vpoc/features/_grouping.py": "def _days(): pass\n\ndef days(): pass\n",
    # inside one subpackage private modules and names are fine; top-level private modules from anywhere
    "vpoc/features/_table.py": ("from ._grouping import _days\nfrom .. import _validate\n"
                                "from .._api import from_bars\n\ndef table(): return _days()\n"),
    "vpoc/live/__init__.py": "from ._state import State\n",
    "vpoc/live/_state.py": ("from typing import TYPE_CHECKING\nfrom .._validate import real\n"
                            "from ..features import table\nfrom . import _util\n"
                            "if TYPE_CHECKING:\n    from . import _user\n\nclass State: pass\n"),
    "vpoc/live/_util.py": "x = 1\n",
    # cycles that do not run at import time: inside a function, under TYPE_CHECKING
    "vpoc/live/_user.py": "from ._state import State\n",
    "vpoc/lazy_a.py": "from . import lazy_b\n",
    "vpoc/lazy_b.py": "def f():\n    from . import lazy_a\n    return lazy_a\n",
    "vpoc/long_ok.py": "x = 1\n" * 600,
}


def found(root: Path) -> Set[Tuple[str, str]]:
    """(rule, module file relative to the package's parent) of each violation."""
    return {(v.rule, str(Path(v.path).resolve().relative_to(root.resolve())))
            for v in check_layout.check(root / "vpoc")}


def test_clean_tree_passes(tmp_path, capsys):
    root = write(tmp_path, CLEAN)
    assert check_layout.check(root / "vpoc") == []
    assert check_layout.main([str(root / "vpoc")]) == 0
    assert capsys.readouterr().out == ""


def test_module_over_600_lines(tmp_path):
    root = write(tmp_path, {**CLEAN, "vpoc/features/_big.py": "x = 1\n" * 601})
    assert found(root) == {("size", "vpoc/features/_big.py")}
    (v,) = check_layout.check(root / "vpoc")
    assert "601 lines" in v.message and v.line == 601


@pytest.mark.parametrize("rel, text, needle", [
    # a private module of another subpackage
    ("vpoc/live/_bad.py", "from ..features._grouping import days\n", "private module vpoc.features._grouping"),
    ("vpoc/live/_bad.py", "import vpoc.features._grouping\n", "private module vpoc.features._grouping"),
    ("vpoc/live/_bad.py", "from ..features import _grouping\n", "private module vpoc.features._grouping"),
    ("vpoc/live/_bad.py", "def f():\n    from ..features._grouping import _days\n",
     "private module vpoc.features._grouping"),
    ("vpoc/bad.py", "from .features._grouping import days\n", "private module vpoc.features._grouping"),
    # a private name of a module of another package, top-level private modules included
    ("vpoc/live/_bad.py", "from .._api import _sessions\n", "private name _sessions from vpoc._api"),
    ("vpoc/live/_bad.py", "from vpoc._api import _sessions\n", "private name _sessions from vpoc._api"),
    ("vpoc/live/_bad.py", "from ..features import _days\n", "private name _days from vpoc.features"),
    ("vpoc/_bad.py", "from .live._state import _helper\n", "private module vpoc.live._state"),
    # the same coupling through an attribute of an imported module
    ("vpoc/live/_bad.py", "from .. import _api\n\ndef f():\n    return _api._sessions()\n",
     "private name _api._sessions"),
    ("vpoc/live/_bad.py", "from .. import features as F\nx = F._rules\n", "private name F._rules"),
])
def test_private_name_across_subpackages(tmp_path, rel, text, needle):
    root = write(tmp_path, {**CLEAN, rel: text})
    violations = check_layout.check(root / "vpoc")
    assert {(v.rule, v.path.endswith(rel)) for v in violations} == {("private", True)}, violations
    assert any(needle in v.message for v in violations), violations


@pytest.mark.parametrize("files, members", [
    ({"vpoc/cyc_a.py": "from . import cyc_b\n", "vpoc/cyc_b.py": "from .cyc_a import x\nx = 1\n"},
     "vpoc.cyc_a -> vpoc.cyc_b -> vpoc.cyc_a"),
    # across subpackages, one edge inside a try block
    ({"vpoc/live/_util.py": "try:\n    from ..features._grouping import days\nexcept ImportError:\n    pass\n",
      "vpoc/features/_grouping.py": "from ..live import _util\n\ndef _days(): pass\n\ndef days(): pass\n"},
     "vpoc.features._grouping -> vpoc.live._util -> vpoc.features._grouping"),
    # four modules, one edge through a package __init__ (a name imported from vpoc.live)
    ({"vpoc/live/_util.py": "from .. import cyc_c\n", "vpoc/cyc_c.py": "from .live import State\n"},
     "vpoc.cyc_c -> vpoc.live -> vpoc.live._state -> vpoc.live._util -> vpoc.cyc_c"),
    # a larger group: one cycle is shown, the other members named
    ({"vpoc/live/_util.py": "from .. import cyc_c\n", "vpoc/cyc_c.py": "from .live import State\n",
      "vpoc/live/_user.py": "from ._state import State\n", "vpoc/live/__init__.py": "from ._state import State\n"
      "from ._user import State as S2\n"},
     "vpoc.cyc_c -> vpoc.live -> vpoc.live._state -> vpoc.live._util -> vpoc.cyc_c "
     "(the same cycle group also holds vpoc.live._user)"),
    # a module importing itself
    ({"vpoc/selfish.py": "import vpoc.selfish\n"}, "vpoc.selfish -> vpoc.selfish"),
])
def test_import_cycle_at_module_level(tmp_path, files, members):
    root = write(tmp_path, {**CLEAN, **files})
    violations = [v for v in check_layout.check(root / "vpoc") if v.rule == "cycle"]
    assert [v.message.partition(": ")[2] for v in violations] == [members]


def test_command_line_lists_each_violation_and_exits_1(tmp_path):
    root = write(tmp_path, {**CLEAN, "vpoc/features/_big.py": "x = 1\n" * 700,
                            "vpoc/live/_bad.py": "from .._api import _sessions\n",
                            "vpoc/cyc_a.py": "import vpoc.cyc_b\n", "vpoc/cyc_b.py": "import vpoc.cyc_a\n"})
    run = subprocess.run([sys.executable, str(TOOL), str(root / "vpoc")], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    lines: List[str] = run.stdout.splitlines()
    assert [line.split(" ")[1] for line in lines] == ["[cycle]", "[size]", "[private]"], lines
    assert "1 size, 1 private, 1 cycle" in run.stderr
    bad = subprocess.run([sys.executable, str(TOOL), str(tmp_path)], capture_output=True, text=True)
    assert bad.returncode == 2 and "not a package folder" in bad.stderr
