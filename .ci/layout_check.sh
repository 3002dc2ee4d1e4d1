#!/usr/bin/env bash
# .ci/layout_check.sh — checks python/vpoc's layout rules: no module over 600 lines, no private name across subpackages, no import cycle.
# Contract: `bash .ci/layout_check.sh` from anywhere; prints each violation as path:line: [rule] message and exits 1 when there is one.
#
# tools/check_layout.py does the work with the standard library only (ast; nothing of vpoc is imported),
# so it needs no build and no installed package. Its docstring states the rules exactly.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=$(command -v python3 || command -v python)
rc=0
"$PY" tools/check_layout.py python/vpoc || rc=$?
if [ "$rc" -eq 0 ]; then echo "layout: 1 passed, 0 failed"; else echo "layout: 0 passed, 1 failed"; fi
exit "$rc"
