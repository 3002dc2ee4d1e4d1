"""Generates python/vpoc/_core.pyi from the built extension vpoc._core with a pinned pybind11-stubgen.

Contract: the stub is pybind11-stubgen's output, deterministic, with this project's docstring on top; --check diffs instead.
Usage:
    python tools/gen_stubs.py            # rewrite python/vpoc/_core.pyi from the vpoc._core this Python imports
    python tools/gen_stubs.py --check    # regenerate into a temp dir and diff against the checked-in stub (exit 1)
The pinned generator is installed on first use into build/stubgen-tools (pip --target), so the project's
environment is left as it is. The stub describes the module the interpreter imports: rebuild and copy
(or reinstall) the extension first after changing cpp/bindings.

What the generated stub says less precisely than the hand-written one it replaced (issue 24.2), all of it
fixable in cpp/bindings rather than here, so that the stub stays generated:
- array results are `numpy.ndarray` (Result columns, LiveSession.histogram, DeviceArray.numpy) where the
  hand stub said `NDArray[np.int64]` / `NDArray[np.float64]`: the bindings return `py::array`; returning
  `py::array_t<double>` / `py::array_t<int64_t>` gives typed NDArray annotations.
- Result columns (numpy views or DeviceArrays) and `_host_device_array` are `typing.Any` (the lambdas return `py::object`), not
  `DeviceArray`; GPU inputs and `open=` are `typing.Any` (they take `py::object`: host array, GPU array or
  None), where the hand stub spelled the (pointer, size, typestr, device) tuple and Optional.
- functions bound without `py::arg` get positional names arg0, arg1, ...: gpu_require_device,
  gpu_synchronize_stream, memory_stats, empty_cache, set_pool_limit, LiveSession.append_bar /
  append_trade / column. The hand stub named these (high, low, close, open, volume, ...), which was wrong:
  pybind11 accepts no keywords for them.
- dict/list results are bare `dict` / `list` (build_info, gpu_versions, gpu_devices, memory_stats), and
  the hand stub's comments (dev_* columns empty unless developing=True, the build_info keys) and
  aliases (Levels, GpuArg) are gone; py::arg(...).doc / function docstrings in the bindings carry them.
- the generated stub also lists what the hand one missed: DeviceArray.__cuda_array_interface__, nbytes,
  ndim, __repr__, _owner_refs, and __all__.
Scalar parameters read `typing.SupportsFloat | typing.SupportsIndex` (pybind11 3's own signatures); the
text therefore follows the pybind11 version the extension was built with, and the check reports a
pybind11 upgrade as a difference to regenerate.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["GENERATOR", "HEADER", "generate", "main"]

GENERATOR = "pybind11-stubgen==3.0.0"
ROOT = Path(__file__).resolve().parents[1]
STUB = ROOT / "python" / "vpoc" / "_core.pyi"
TOOLS = ROOT / "build" / "stubgen-tools"
MODULE = "vpoc._core"
HEADER = f'''"""Type stubs of the private C++ extension (use the vpoc package, not this module).

Generated from the built module by tools/gen_stubs.py ({GENERATOR}); .ci/stubs_check.sh checks it.
Do not edit by hand: change cpp/bindings, rebuild, then run `python tools/gen_stubs.py`.
"""
'''


def _generator_path() -> Path:
    """The folder holding the pinned generator, installed there when missing or of another version."""
    name, version = GENERATOR.split("==")
    stamp = TOOLS / f"{name}-{version}.installed"
    if not stamp.exists():
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--upgrade", "--target", str(TOOLS), GENERATOR], check=True)
        stamp.write_text(GENERATOR + "\n")
    return TOOLS


def _postprocess(text: str) -> str:
    """The generator's text with the project's docstring in place of the module's, numpy as np."""
    body = text
    if body.startswith('"""'):
        end = body.index('"""', 3) + 3
        body = body[end:].lstrip("\n")
    # DeviceArray has a method named `numpy`: inside its class body that name hides the module, so
    # the generator's `numpy.dtype[...]` there does not resolve (mypy: Name "numpy.dtype" is not
    # defined). The module is imported as np (and numpy.typing as npt) instead.
    lines = []
    for line in body.splitlines(True):
        if line.startswith("import "):
            line = {"import numpy\n": "import numpy as np\n",
                    "import numpy.typing\n": "import numpy.typing as npt\n"}.get(line, line)
        else:
            line = re.sub(r"(?<![\w.])numpy\.typing\.", "npt.", line)
            line = re.sub(r"(?<![\w.])numpy\.(?=[A-Za-z_])", "np.", line)
        lines.append(line)
    body = "".join(lines)
    out = HEADER + body
    if not out.endswith("\n"):
        out += "\n"
    ast.parse(out, filename="_core.pyi")  # a syntax error in the stub fails here
    return out


def generate(out_dir: Path) -> Path:
    """Runs the pinned generator on vpoc._core into out_dir; returns the path of the post-processed stub."""
    tools = _generator_path()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tools), env.get("PYTHONPATH", "")) if p)
    # --exit-code: an expression the generator cannot render is an error, not a silent '...'
    subprocess.run([sys.executable, "-m", "pybind11_stubgen", "--exit-code", "-o", str(out_dir), MODULE],
                   check=True, env=env, cwd=out_dir)
    raw = out_dir / "vpoc" / "_core.pyi"
    path = out_dir / "_core.pyi"
    path.write_text(_postprocess(raw.read_text()))
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="diff a fresh stub against the checked-in one")
    ap.add_argument("--stub", type=Path, default=STUB, help="the checked-in stub (default: %(default)s)")
    args = ap.parse_args(argv)
    core = importlib.import_module(MODULE)
    print(f"{MODULE} from {core.__file__}")
    with tempfile.TemporaryDirectory(prefix="vpoc-stubs-") as tmp:
        fresh = generate(Path(tmp)).read_text()
    if not args.check:
        args.stub.write_text(fresh)
        print(f"wrote {args.stub}")
        return 0
    current = args.stub.read_text() if args.stub.exists() else ""
    if current == fresh:
        print(f"{args.stub} matches the built module")
        return 0
    sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), fresh.splitlines(True),
                                               f"{args.stub} (checked in)", f"{MODULE} (generated)"))
    print(f"\n{args.stub} differs from the built module: run `python tools/gen_stubs.py` and commit it")
    return 1


if __name__ == "__main__":
    sys.exit(main())
