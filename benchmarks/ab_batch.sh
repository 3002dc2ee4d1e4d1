#!/usr/bin/env bash
# The batch workload's host latency, this tree against an earlier one, in alternating rounds on one
# machine: builds BASE (a source tree, e.g. `git archive <commit>`) into a private folder, then runs
# benchmarks/batch_timeline.py --walls-only with the installed vpoc and with BASE's, ROUNDS times each.
#   BASE=build/base0229215 ROUNDS=3 OUT=/tmp/ab bash benchmarks/ab_batch.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
PY=${PYTHON:-python3}
OUT=${OUT:-/tmp/vpoc_ab}
mkdir -p "$OUT"
[[ -d ${BASE:-} ]] || { echo "ab_batch: BASE must be a source tree"; exit 2; }
rm -rf "$OUT/base_site"
$PY -m pip install --no-build-isolation --no-deps --no-index -q --target "$OUT/base_site" "$BASE" \
  -Ccmake.define.VPOC_GPU_BACKEND=cuda -Ccmake.define.CMAKE_CUDA_ARCHITECTURES="${VPOC_CUDA_ARCH:-90}" \
  >"$OUT/base_build.log" 2>&1 || { echo "ab_batch: baseline build failed (see $OUT/base_build.log)"; exit 1; }
for k in $(seq 1 "${ROUNDS:-3}"); do
  (cd /tmp && $PY "$OLDPWD/benchmarks/batch_timeline.py" --walls-only >"$OUT/new_$k.txt" 2>&1)
  (cd /tmp && PYTHONPATH="$OUT/base_site${PYTHONPATH:+:$PYTHONPATH}" $PY "$OLDPWD/benchmarks/batch_timeline.py" \
     --walls-only >"$OUT/old_$k.txt" 2>&1)
  echo "round $k"
  paste <(grep " us per call" "$OUT/new_$k.txt") <(grep " us per call" "$OUT/old_$k.txt" | awk '{print "old", $2}')
done
