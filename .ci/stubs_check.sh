#!/usr/bin/env bash
# .ci/stubs_check.sh — checks that python/vpoc/_core.pyi is what pybind11-stubgen makes of the INSTALLED vpoc._core.
# Contract: `bash .ci/stubs_check.sh` inside a venv where vpoc is installed; prints the diff and exits 1 when they differ.
#
# tools/gen_stubs.py does the work: it installs the pinned generator (pybind11-stubgen==3.0.0, see
# GENERATOR there) into build/stubgen-tools with pip --target, regenerates the stub into a temporary
# folder and diffs it against the checked-in file. Run from the repository root, `import vpoc` finds
# the installed package (python/ is not on sys.path), so the stub is checked against the build that
# the tests ran on. To refresh the stub after changing cpp/bindings: rebuild, then
#   python tools/gen_stubs.py
# What the generated stub says less precisely than the old hand-written one (numpy dtypes,
# DeviceArray columns typed Any, arg0 names of functions bound without py::arg) is listed in
# tools/gen_stubs.py's docstring, with the binding change that fixes each.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
PY=$(command -v python || command -v python3)
rc=0
"$PY" tools/gen_stubs.py --check || rc=$?
echo "stubs check took $(( $(date +%s) - start )) s"
if [ "$rc" -eq 0 ]; then echo "stubs: 1 passed, 0 failed"; else echo "stubs: 0 passed, 1 failed"; fi
exit "$rc"
