#!/usr/bin/env bash
# On an NVIDIA GPU machine (no network needed): build vpoc with the CUDA backend, run the whole
# test suite, compute-sanitizer memcheck + racecheck over the GPU tests (quick sizes), then the
# GPU benchmark. Everything goes to $OUT/device_run.log; a failing step is recorded and the next
# one still runs; a summary block ends the log. Exit status: 0 when every step that ran passed.
#
#   OUT=/tmp/out bash benchmarks/device_run.sh          # from anywhere; runs in the repo root
#
# Environment (all optional):
#   OUT                 output folder (default $TMPDIR/vpoc_device_out): device_run.log (everything),
#                       build.log, pytest.log, pytest.xml, memcheck.log, racecheck.log, <gpu-name-slug>.json,
#                       gpu_profile.json, host_gap.json, host_phases.json
#   PYTHON              interpreter (default python3: the one that has torch)
#   VPOC_STEPS          steps to run, comma-separated (default all, in this order:
#                       env,build,import,doctor,pytest,memcheck,racecheck,profile,bench,train)
#   VPOC_PYTEST_ARGS    what the pytest step runs (default "-n <cores - 1> -p no:benchmark -rfE tests" with
#                       pytest-xdist, else "-x tests": the whole suite; tests that need a package this machine lacks -- polars,
#                       pandas_market_calendars, dask, ... -- skip with the reason in the log)
#   VPOC_TRAIN_ARGS     extra arguments for examples/train.py in the train step (GPU, synthetic data)
#   VPOC_PYTEST_LIMIT_S most seconds of the pytest step (default 240; the whole suite: ~135 s on 15 xdist workers on one H200, 0658a20)
#   VPOC_CUDA_ARCH      CMAKE_CUDA_ARCHITECTURES (default 90: H100/H200)
#   VPOC_CUDA_FLAGS     CMAKE_CUDA_FLAGS of the build, one flag (e.g. -lineinfo, for benchmarks/ncu_source.sh)
#   VPOC_DEADLINE_S     time budget of the whole script in seconds (default 580); each step's
#                       timeout is cut to what is left, keeping VPOC_BENCH_RESERVE_S seconds for
#                       the benchmark (150)
#   VPOC_SAN_K          pytest -k expression for the sanitizer runs
#                       (default "not 500M and not 1000 and not oom")
#   VPOC_RACE_K         racecheck only: the tests it runs, and-ed with VPOC_SAN_K (default: the
#                       GPU-vs-CPU equality tests of trades, bars and the developing series)
#   VPOC_SAN_FILES      the test files both sanitizers run (default tests/test_gpu.py
#                       tests/test_developing_gpu.py)
#   VPOC_RACE_LIMIT_S   most seconds of the racecheck step (default 270; memcheck: 150)
#   VPOC_BENCH_ARGS     extra arguments for benchmarks/bench_gpu.py
#   VPOC_BASELINE_TREE  a source tree of an earlier commit (e.g. from `git archive`): adds a step
#                       after bench that builds it into a private folder and runs its own
#                       bench_gpu.py on the same machine ($OUT/baseline.json), for
#                       `python benchmarks/compare.py $OUT/baseline.json $OUT/<gpu>.json`
#                       (with VPOC_BENCH_ARGS too: the same workloads on both trees)
#   VPOC_BASELINE_COMMIT the commit that tree is (recorded in baseline.json)
#   VPOC_BASELINE_ROUNDS with a baseline tree: after the two full benchmarks, this many more
#                       rounds of VPOC_BASELINE_WORKLOADS (default batch), this tree then the
#                       baseline each round ($OUT/rounds/{new,old}_<k>.json): host-bound
#                       latencies move between runs, alternating rounds compare them
#   VPOC_GIT_COMMIT     commit recorded in the benchmark JSON when the tree has no .git
#   HYPOTHESIS_PROFILE  profile of the full pytest run (default ci)
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT=$PWD
export ROOT
export OUT=${OUT:-${TMPDIR:-/tmp}/vpoc_device_out}
mkdir -p "$OUT"
LOG=$OUT/device_run.log
: >"$LOG"
rm -f "$OUT/pytest.log"  # the summary reads this run's, not a previous one's
exec > >(tee -a "$LOG") 2>&1
TEE_PID=$!

export PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1
ARCH=${VPOC_CUDA_ARCH:-90}
STEPS=",${VPOC_STEPS:-env,build,import,doctor,pytest,memcheck,racecheck,profile,bench,train},"
# the whole suite wants ~480 s serially on one H100, ~200 s on 8 pytest-xdist workers with every
# optional wheel (b332a65: cut at 98% by a 200 s limit), 135 s on 15 (0658a20, 16 cores): one worker
# a core but one (where the machine has xdist; pytest-benchmark's "disabled under xdist" warning is an
# error under -W error); -rfE lists the failures at the end (and pytest-timeout, where it is there: a
# test that hangs fails with its stack after 120 s)
WORKERS=$(( $(nproc) > 2 ? $(nproc) - 1 : 2 ))
if $PY -c "import xdist, pytest_timeout" 2>/dev/null; then
  export PYTEST_ARGS=${VPOC_PYTEST_ARGS:--n $WORKERS -p no:benchmark -rfE --timeout 120 tests}
elif $PY -c "import xdist" 2>/dev/null; then
  export PYTEST_ARGS=${VPOC_PYTEST_ARGS:--n $WORKERS -p no:benchmark -rfE tests}
else
  export PYTEST_ARGS=${VPOC_PYTEST_ARGS:--x tests}
fi
DEADLINE=${VPOC_DEADLINE_S:-580}
BENCH_RESERVE=${VPOC_BENCH_RESERVE_S:-150}
export SAN_K=${VPOC_SAN_K:-not 500M and not 1000 and not oom}
# racecheck is ~10x slower than memcheck: the kernels' shared-memory users, in quick sizes
export RACE_K=${VPOC_RACE_K:-trades_gpu_equals_cpu or bars_gpu_equals_cpu or developing_gpu_equals_cpu or chunked_fractional or chunked_long_trade or chunked_presets}
# the test files the sanitizers run (the block-per-session developing kernel has its own file)
export SAN_FILES=${VPOC_SAN_FILES:-tests/test_gpu.py tests/test_developing_gpu.py}
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}
WORK=$(mktemp -d)
export WORK
T0=$SECONDS

if ! command -v nvcc >/dev/null 2>&1; then
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    [[ -x $d/nvcc ]] && export PATH=$d:$PATH && break
  done
fi
command -v nvcc >/dev/null 2>&1 && export CUDACXX=${CUDACXX:-$(command -v nvcc)}
SAN=$(command -v compute-sanitizer 2>/dev/null ||
      ls /usr/local/cuda*/bin/compute-sanitizer /usr/local/cuda*/compute-sanitizer/compute-sanitizer \
         2>/dev/null | head -n1 || true)
export SAN
if [[ -z ${VPOC_GIT_COMMIT:-} ]]; then
  VPOC_GIT_COMMIT=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || true)
fi
export VPOC_GIT_COMMIT

declare -A RC DUR
ORDER=()

left() { echo $((DEADLINE - (SECONDS - T0))); }
min() { if (($1 < $2)); then echo "$1"; else echo "$2"; fi; }

# step NAME MAX_SECONDS 'shell command'  -- runs under timeout, records rc and duration
step() {
  local name=$1 limit=$2 cmd=$3 t rc
  ORDER+=("$name")
  if [[ $STEPS != *",$name,"* ]]; then
    RC[$name]="not run"
    DUR[$name]=0
    return 0
  fi
  if ((limit < 15)); then
    echo "### [$name] not run: no time left (budget ${DEADLINE}s)"
    RC[$name]="not run (no time left)"
    DUR[$name]=0
    return 0
  fi
  echo
  echo "### [$name] $(date -u +%H:%M:%S) (limit ${limit}s): $cmd"
  t=$SECONDS
  timeout -k 15 "$limit" bash -c "set -o pipefail; $cmd"
  rc=$?
  DUR[$name]=$((SECONDS - t))
  RC[$name]=$rc
  ((rc == 124 || rc == 137)) && RC[$name]="$rc (timed out after ${limit}s)"
  echo "### [$name] rc=${RC[$name]} after ${DUR[$name]}s"
  return 0
}

# ------------------------------------------------------------------ steps
step env 60 '
  nvidia-smi
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  echo "python: $($PY -c "import sys; print(sys.version)")"
  $PY -c "import torch, numpy; print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda, \"numpy\", numpy.__version__, torch.cuda.get_device_name(0))"
  $PY -c "import cupy; print(\"cupy\", cupy.__version__)" 2>&1 | tail -n1
  nvcc --version | tail -n2; cmake --version | head -n1; ninja --version
  echo "compute-sanitizer: ${SAN:-not found}"; nproc; free -g | head -n2'

step build "$(min 420 $(($(left) - BENCH_RESERVE - 60)))" '
  $PY -m pip install --no-build-isolation --no-deps --no-index -v . \
    -Ccmake.define.VPOC_GPU_BACKEND=cuda -Ccmake.define.CMAKE_CUDA_ARCHITECTURES='"$ARCH"' \
    '"${VPOC_CUDA_FLAGS:+-Ccmake.define.CMAKE_CUDA_FLAGS=$VPOC_CUDA_FLAGS}"' 2>&1 | tee "$OUT/build.log"'

step import 60 '
  cd "$WORK" && $PY -c "import vpoc; print(vpoc.__file__); print(vpoc.backends(), vpoc.gpu_available())" |
    tee "$WORK/import.txt" && grep -q "True$" "$WORK/import.txt"'

# the install's self-test, as a user would run it: $OUT/doctor.txt
step doctor 90 '
  cd "$WORK" && $PY -m vpoc doctor 2>&1 | tee "$OUT/doctor.txt"'

# 60 s kept for the steps after pytest only when one of them is asked for (c91ad88's run: a suite-only
# call cut its own pytest step at 95%)
AFTER_PYTEST=0
for s in memcheck racecheck profile bench train; do [[ $STEPS == *",$s,"* ]] && AFTER_PYTEST=60; done
step pytest "$(min ${VPOC_PYTEST_LIMIT_S:-240} $(($(left) - BENCH_RESERVE - AFTER_PYTEST)))" '
  $PY -m pytest -q -p no:cacheprovider --junitxml="$OUT/pytest.xml" $PYTEST_ARGS 2>&1 | tee "$OUT/pytest.log"'

for tool in memcheck racecheck; do
  if [[ -z $SAN ]]; then
    ORDER+=("$tool")
    RC[$tool]="not run (compute-sanitizer not found)"
    DUR[$tool]=0
    continue
  fi
  # racecheck instruments every shared-memory access: the chunked developing kernel's tests take it
  # past memcheck's time (a9c36be: 66 tests in 150 s); VPOC_RACE_LIMIT_S (default 270) bounds it
  step "$tool" "$(min "$([[ $tool == racecheck ]] && echo "${VPOC_RACE_LIMIT_S:-270}" || echo 150)" $(($(left) - BENCH_RESERVE)))" '
    VPOC_GPU_TEST_QUICK=1 HYPOTHESIS_PROFILE=dev "$SAN" --tool '"$tool"' --error-exitcode 1 \
      --print-limit 50 $PY -m pytest -q -p no:cacheprovider $SAN_FILES \
      -k "$([[ '"$tool"' == racecheck ]] && echo "($RACE_K) and ($SAN_K)" || echo "$SAN_K")" \
      2>&1 | tee "$OUT/'"$tool"'.log"'
done

# torch.profiler per-kernel / per-API-call breakdown: $OUT/gpu_profile.json; then each call's wall split
# into host lead, GPU busy, gaps and tail on the profiler's timeline: $OUT/host_gap.json (in profile.log);
# then the batch call's host time phase by phase from the engine's marks: $OUT/host_phases.json
step profile "$(min 140 $(($(left) - BENCH_RESERVE)))" '
  { $PY benchmarks/gpu_profile.py ${VPOC_PROFILE_ARGS:-} && $PY benchmarks/host_gap.py &&
    $PY benchmarks/host_phases.py --calls 2000 --out "$OUT/host_phases.json"; } 2>&1 | tee "$OUT/profile.log"'

step bench "$(min 330 $(($(left) - 5)))" '
  $PY benchmarks/bench_gpu.py ${VPOC_BENCH_ARGS:-} 2>&1 | tee "$WORK/bench.txt"'

# an earlier tree's own benchmark on this machine, in this run: before/after ratios that compare
[[ -n ${VPOC_BASELINE_TREE:-} ]] && STEPS="${STEPS}baseline,"
step baseline "$(min 240 $(($(left) - 5)))" '
  rm -rf "$WORK/baseline" &&
  $PY -m pip install --no-build-isolation --no-deps --no-index -q --target "$WORK/baseline" \
    "$VPOC_BASELINE_TREE" -Ccmake.define.VPOC_GPU_BACKEND=cuda \
    -Ccmake.define.CMAKE_CUDA_ARCHITECTURES='"$ARCH"' 2>&1 | tail -n 5 &&
  cd "$VPOC_BASELINE_TREE" && PYTHONPATH="$WORK/baseline" VPOC_GIT_COMMIT="${VPOC_BASELINE_COMMIT:-baseline}" \
    $PY benchmarks/bench_gpu.py ${VPOC_BENCH_ARGS:-} --out "$OUT/baseline.json" 2>&1 | tee "$WORK/baseline_bench.txt" &&
  for k in $(seq 1 "${VPOC_BASELINE_ROUNDS:-0}"); do
    mkdir -p "$OUT/rounds" &&
    (cd "$ROOT" && $PY benchmarks/bench_gpu.py --workloads "${VPOC_BASELINE_WORKLOADS:-batch}" \
       --out "$OUT/rounds/new_$k.json" >/dev/null 2>&1) &&
    PYTHONPATH="$WORK/baseline" VPOC_GIT_COMMIT="${VPOC_BASELINE_COMMIT:-baseline}" \
      $PY benchmarks/bench_gpu.py --workloads "${VPOC_BASELINE_WORKLOADS:-batch}" \
      --out "$OUT/rounds/old_$k.json" >/dev/null 2>&1 &&
    echo "round $k: new $(grep -o "\"vpoc_s\": [0-9.e-]*" "$OUT/rounds/new_$k.json" | head -n1)" \
         "old $(grep -o "\"vpoc_s\": [0-9.e-]*" "$OUT/rounds/old_$k.json" | head -n1)"
  done'

# examples/train.py on the GPU (synthetic ES data): features with vpoc on the device, an MLP with AMP.
step train "$(min 180 $(($(left) - 5)))" '
  $PY examples/train.py --data synthetic --device cuda --use_mixed_precision --epochs 5 \
    --output "$WORK/train" ${VPOC_TRAIN_ARGS:-} 2>&1 | tee "$OUT/train.log" &&
  cp "$(ls -d "$WORK"/train/train_*/ | tail -n1)best_model_metadata.json" "$OUT/train_metadata.json"'

# ------------------------------------------------------------------ summary
san_summary() {  # tool -> one line, plus the most frequent reports
  local log=$OUT/$1.log
  [[ -f $log ]] || { echo "no log"; return; }
  local line
  line=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$log" | tail -n2 | sed -E 's/^=+ *//' | paste -sd ';' -)
  echo "${line:-no summary line (crashed or timed out?)}"
  grep -E '^=+ +(Invalid|Program hit|Error|Race|Warning|Uninitialized|Barrier|Malloc|Leaked)' "$log" |
    sed -E 's/^=+ +//; s/0x[0-9a-f]+/0x_/g' | sort | uniq -c | sort -rn | head -n 6 | sed -E 's/^ +/      /'
  grep -E '^=+ +at ' "$log" | sed -E 's/^=+ +at //; s/\+0x[0-9a-f]+//; s/ in .*//' |
    sort | uniq -c | sort -rn | head -n 6 | sed -E 's/^ +/      at: /'
}

echo
echo "==================== device_run summary ($((SECONDS - T0))s) ===================="
echo "device:    $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n1)"
echo "commit:    ${VPOC_GIT_COMMIT:-unknown}"
for s in "${ORDER[@]}"; do
  printf '%-10s rc=%s (%ss)\n' "$s:" "${RC[$s]}" "${DUR[$s]}"
done
echo "build:     $([[ ${RC[build]:-} == 0 ]] && echo ok || echo "FAILED or not run (see $OUT/build.log)")"
[[ -f $WORK/import.txt ]] && echo "import:    $(tail -n1 "$WORK/import.txt")"
if [[ -f $OUT/pytest.log ]]; then
  echo "pytest:    $(grep -E '^[0-9]+ (passed|failed|errors?|skipped)' "$OUT/pytest.log" | tail -n1)"
  grep -E '^(FAILED|ERROR) ' "$OUT/pytest.log" | head -n 10 | sed 's/^/      /'
  # why tests skipped (a missing optional package, no second GPU, ...): reason -> count
  grep -E '^SKIPPED \[[0-9]+\]' "$OUT/pytest.log" |
    sed -E 's/^SKIPPED \[([0-9]+)\] [^ ]+: (.*)$/\1 \2/' |
    awk '{n=$1; $1=""; c[substr($0,2)]+=n} END {for (r in c) printf "      skipped %4d: %s\n", c[r], r}' |
    sort -k2,2nr | head -n 8
fi
for tool in memcheck racecheck; do
  [[ ${RC[$tool]:-} == "not run"* ]] && { echo "$tool: ${RC[$tool]}"; continue; }
  echo "$tool: $(san_summary "$tool")"
  [[ -f $OUT/$tool.log ]] &&
    echo "      tests: $(grep -E '^[0-9]+ (passed|failed|errors?|skipped|deselected)' "$OUT/$tool.log" | tail -n1)"
done
if [[ -f $WORK/bench.txt ]]; then
  echo "bench:     $(grep -E '^wrote ' "$WORK/bench.txt" | tail -n1)"
  grep -E '^(PASS|FAIL) ' "$WORK/bench.txt" | sed 's/^/  /'
  grep -E '^  ERROR ' "$WORK/bench.txt" | head -n 10
fi
echo "files:     $(cd "$OUT" && ls | paste -sd ' ' -)"

status=0
for s in "${ORDER[@]}"; do
  [[ ${RC[$s]} == 0 || ${RC[$s]} == "not run"* ]] || status=1
done
echo "overall:   $([[ $status == 0 ]] && echo 'every step that ran passed' || echo 'some step failed')"
rm -rf "$WORK"
exec 1>&- 2>&-
wait "$TEE_PID" 2>/dev/null
exit $status
