"""Checks the Python package's layout rules (issue 24): module size, private coupling, import cycles.

Contract: exit 0 when python/vpoc keeps every rule, else exit 1 with one ``path:line: [rule] message`` per violation.
Usage:
    python tools/check_layout.py                  # checks python/vpoc of this repository
    python tools/check_layout.py ROOT [--max-lines N]   # checks the package folder ROOT (its name is the package)

Plain Python (stdlib ``ast`` only; nothing is imported or executed). The rules:
- [size] a ``.py`` module longer than --max-lines (600) lines. Stubs (``.pyi``, e.g. the generated
  ``_core.pyi``) are not modules and are exempt.
- [private] a private name (one starting with "_", dunders excepted) crossing a package boundary:
  * a private module of a subpackage (``vpoc.features._grouping``) imported from outside that subpackage
    (``vpoc.live``; ``vpoc.features._table`` may);
  * a private name imported from a module of another package (``from .._api import _sessions`` in
    ``vpoc.live._x``; ``from ._grouping import _days`` inside ``vpoc.features`` may);
  * a private name read as an attribute of a module bound by an import from another package
    (``from .. import _api`` then ``_api._sessions``): the same coupling spelled differently.
  Top-level private modules (``vpoc._validate``, ``vpoc._time``, ``vpoc._arrays``, ``vpoc._core``, ...)
  are the shared internals: any module may import them, but only their public names.
- [cycle] an import cycle among the package's modules, counting module-level imports only (imports
  inside functions and under ``if TYPE_CHECKING:`` do not run at import time). An import of
  ``pkg.a.b`` counts as an edge to ``pkg.a.b`` only (the parent packages' ``__init__`` are not counted:
  Python has them in sys.modules already); ``from pkg.a import name`` is an edge to ``pkg.a.name``
  when that is a module, else to ``pkg.a``.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

__all__ = ["Violation", "check", "main"]

MAX_LINES = 600
REPO = Path(__file__).resolve().parent.parent
DEFAULT_ROOT = REPO / "python" / "vpoc"
EXTENSION_SUFFIXES = (".so", ".pyd")


@dataclass(frozen=True, order=True)
class Violation:
    path: str
    line: int
    rule: str  # "size", "private" or "cycle"
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.rule}] {self.message}"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass
class _Module:
    name: str  # dotted, e.g. "vpoc.features._table"
    path: Path
    is_package: bool  # an __init__.py
    tree: Optional[ast.Module]

    @property
    def package(self) -> str:
        """The package this module is an immediate member of (a package's __init__: itself)."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def _discover(root: Path) -> Tuple[Dict[str, _Module], Set[str]]:
    """(the .py modules by dotted name, every importable module name including stubs/extensions)."""
    top = root.name
    modules: Dict[str, _Module] = {}
    names: Set[str] = {top}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(root)
        stem = path.name.split(".")[0]
        if path.suffix not in (".py", ".pyi") and not path.name.endswith(EXTENSION_SUFFIXES):
            continue
        parts = [top, *rel.parent.parts] + ([] if stem == "__init__" else [stem])
        dotted = ".".join(parts)
        names.add(dotted)
        if path.suffix == ".py":
            source = path.read_text(encoding="utf-8")
            try:
                tree: Optional[ast.Module] = ast.parse(source, filename=str(path))
            except SyntaxError:
                tree = None
            modules[dotted] = _Module(dotted, path, stem == "__init__", tree)
    return modules, names


def _resolve(module: _Module, node: ast.ImportFrom) -> Optional[str]:
    """The absolute module a ``from X import ...`` names (None when it leaves the package)."""
    if node.level == 0:
        return node.module
    base = module.package.split(".")
    if node.level - 1 >= len(base):
        return None
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _in_package(name: Optional[str], top: str) -> bool:
    return name is not None and (name == top or name.startswith(top + "."))


def _owner_of_private_module(target: str) -> Optional[str]:
    """The package owning the first private component of ``target`` when it lies below a subpackage
    (``vpoc.features._grouping`` -> ``vpoc.features``); None for public paths and top-level ``vpoc._x``."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            return None if i <= 1 else ".".join(parts[:i])
    return None


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level_imports(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Import statements that run when the module is imported (not in def/lambda, not under TYPE_CHECKING)."""
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            yield stmt
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        elif isinstance(stmt, ast.If):
            if not _type_checking(stmt.test):
                yield from _module_level_imports(stmt.body)
            yield from _module_level_imports(stmt.orelse)
        else:  # class bodies, try/except/finally, with, for and while blocks run at import time
            for field in ("body", "orelse", "finalbody"):
                yield from _module_level_imports(getattr(stmt, field, None) or [])
            for handler in getattr(stmt, "handlers", None) or []:
                yield from _module_level_imports(handler.body)


def _check_private(mod: _Module, modules: Dict[str, _Module], names: Set[str], top: str,
                   rel: str) -> List[Violation]:
    out: List[Violation] = []
    assert mod.tree is not None
    aliases: Dict[str, str] = {}  # local name -> vpoc module bound by an import

    def module_rule(target: str, line: int) -> bool:
        """Report ``target`` when it is a private module of another subpackage; True if reported."""
        owner = _owner_of_private_module(target)
        if owner is not None and owner != mod.package:
            out.append(Violation(rel, line, "private",
                                 f"{mod.name} imports private module {target} of another package ({owner})"))
            return True
        return False

    def is_package(dotted: str) -> bool:
        m = modules.get(dotted)
        return m.is_package if m is not None else False

    def name_rule(source: str, name: str, line: int) -> None:
        owner = source if is_package(source) else source.rpartition(".")[0]
        if owner != mod.package:
            out.append(Violation(rel, line, "private",
                                 f"{mod.name} imports private name {name} from {source} "
                                 f"(package {owner}, not {mod.package})"))

    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _in_package(alias.name, top):
                    module_rule(alias.name, node.lineno)
                    if alias.asname:
                        aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(mod, node)
            if not _in_package(source, top):
                continue
            assert source is not None
            reported = module_rule(source, node.lineno)  # its names are then reported with it
            for alias in node.names:
                if alias.name == "*":
                    continue
                full = f"{source}.{alias.name}"
                if full in names:  # a submodule
                    module_rule(full, node.lineno)
                    aliases[alias.asname or alias.name] = full
                elif _private(alias.name) and not reported:
                    name_rule(source, alias.name, node.lineno)
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name):
            target = aliases.get(node.value.id)
            if target is None:
                continue
            full = f"{target}.{node.attr}"
            if full in names:
                module_rule(full, node.lineno)
            else:
                owner = target if is_package(target) else target.rpartition(".")[0]
                if owner != mod.package:
                    out.append(Violation(rel, node.lineno, "private",
                                         f"{mod.name} uses private name {node.value.id}.{node.attr} of "
                                         f"{target} (package {owner}, not {mod.package})"))
    return out


def _edges(mod: _Module, modules: Dict[str, _Module], names: Set[str], top: str) -> List[Tuple[str, int]]:
    """(imported module, line) for each module-level import of a module of the package."""
    assert mod.tree is not None
    out: List[Tuple[str, int]] = []

    def existing(dotted: str) -> Optional[str]:
        """The nearest .py module at or above ``dotted``; None for a stub/extension (no edges of ours)."""
        while dotted and dotted not in modules:
            if dotted in names:
                return None
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    for node in _module_level_imports(mod.tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _in_package(alias.name, top):
                    target = existing(alias.name)
                    if target:
                        out.append((target, node.lineno))
        else:
            source = _resolve(mod, node)
            if not _in_package(source, top):
                continue
            assert source is not None
            plain = False
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in modules:
                    out.append((full, node.lineno))
                elif full not in names:  # a name defined in source (stubs/extensions have no edges)
                    plain = True
            if plain:
                target = existing(source)
                if target:
                    out.append((target, node.lineno))
    return out


def _cycles(graph: Dict[str, List[Tuple[str, int]]]) -> List[Tuple[List[str], List[str]]]:
    """Strongly connected components with a cycle (Tarjan): (one shortest cycle through the
    component's first module, the component's modules)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    components: List[List[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # recursion depth is bounded by the number of modules
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w, _ in graph.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or any(w == v for w, _ in graph.get(v, [])):
                components.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    paths = []
    for comp in components:
        members = set(comp)
        start = comp[0]
        # shortest path start -> ... -> start inside the component (BFS)
        prev: Dict[str, str] = {}
        frontier = [start]
        found = None
        seen = {start}
        while frontier and found is None:
            nxt = []
            for v in frontier:
                for w, _ in sorted(graph.get(v, [])):
                    if w == start:
                        found = v
                        break
                    if w in members and w not in seen:
                        seen.add(w)
                        prev[w] = v
                        nxt.append(w)
                if found is not None:
                    break
            frontier = nxt
        path = [start]
        v = found if found is not None else start
        back = []
        while v != start:
            back.append(v)
            v = prev[v]
        path += reversed(back)
        path.append(start)
        paths.append((path, comp))
    return sorted(paths)


def check(root: Path, max_lines: int = MAX_LINES) -> List[Violation]:
    """Every violation of the layout rules in the package folder ``root``."""
    root = Path(root).resolve()
    top = root.name
    modules, names = _discover(root)

    def rel(mod: _Module) -> str:
        try:
            return str(mod.path.relative_to(REPO))
        except ValueError:
            return str(mod.path)

    out: List[Violation] = []
    graph: Dict[str, List[Tuple[str, int]]] = {}
    for name, mod in sorted(modules.items()):
        n_lines = len(mod.path.read_text(encoding="utf-8").splitlines())
        if n_lines > max_lines:
            out.append(Violation(rel(mod), n_lines, "size", f"{name} has {n_lines} lines (more than {max_lines})"))
        if mod.tree is None:
            out.append(Violation(rel(mod), 1, "syntax", f"{name} does not parse"))
            continue
        out.extend(_check_private(mod, modules, names, top, rel(mod)))
        graph[name] = _edges(mod, modules, names, top)
    for path, component in _cycles(graph):
        first = modules[path[0]]
        line = next(ln for target, ln in graph[path[0]] if target == path[1])
        more = ""
        if len(component) > len(path) - 1:
            others = [m for m in component if m not in path]
            more = f" (the same cycle group also holds {', '.join(others)})"
        out.append(Violation(rel(first), line, "cycle",
                             "import cycle at module level: " + " -> ".join(path) + more))
    return sorted(set(out))


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(DEFAULT_ROOT),
                        help="the package folder (default: python/vpoc)")
    parser.add_argument("--max-lines", type=int, default=MAX_LINES,
                        help=f"longest module allowed (default {MAX_LINES})")
    args = parser.parse_args(argv)
    root = Path(args.root)
    if not (root / "__init__.py").is_file():
        parser.error(f"{root} is not a package folder (no __init__.py)")
    violations = check(root, args.max_lines)
    for v in violations:
        print(v)
    counts = {rule: sum(v.rule == rule for v in violations) for rule in ("size", "private", "cycle", "syntax")}
    summary = ", ".join(f"{n} {rule}" for rule, n in counts.items() if n) or "no violations"
    print(f"check_layout: {root.name}: {summary}", file=sys.stderr)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
