#!/usr/bin/env bash
# benchmarks/ncu_source.sh — where one kernel's warps stall, line by line of the CUDA source, on the device.
# Contract: writes $OUT/ncu_<tag>.txt (the kernel's stall reasons and its source lines ranked by stall samples);
# needs ncu and a build with line info (device_run.sh with VPOC_CUDA_FLAGS=-lineinfo); exits 0 when ncu is missing.
#
#   VPOC_CUDA_FLAGS=-lineinfo VPOC_STEPS=env,build,import bash benchmarks/device_run.sh
#   bash benchmarks/ncu_source.sh chunk 'regex:chunk_kernel' 2 python3 benchmarks/ncu_bars.py 3
#   bash benchmarks/ncu_source.sh levels 'regex:levels_kernel' 3 python3 benchmarks/ncu_bars.py 5 plain
#
# Arguments: a tag for the file names, ncu's kernel filter (-k), how many matching launches to skip
# (the first calls of a shape take the waiting path), then the program to profile. The clocks are left
# alone (--clock-control none), as the device notes ask.
set -uo pipefail
tag=$1 kernel=$2 skip=$3
shift 3
OUT=${OUT:-${TMPDIR:-/tmp}/vpoc_device_out}
mkdir -p "$OUT"
if ! command -v ncu >/dev/null 2>&1; then
  echo "ncu_source: ncu not found" | tee "$OUT/ncu_$tag.txt"
  exit 0
fi
rep=$OUT/ncu_$tag
ncu --clock-control none -k "$kernel" --launch-skip "$skip" -c 1 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters \
  --import-source yes -f -o "$rep" "$@" >"$OUT/ncu_${tag}_run.log" 2>&1
{
  echo "== $tag: $kernel (skip $skip): $*"
  ncu -i "$rep.ncu-rep" --page details 2>&1 | grep -E "Duration|Warp Cycles|Issued|Eligible|Active Warps|Stall|stall|Theoretical|Achieved" | head -40
  echo "== stall reasons (raw metrics)"
  ncu -i "$rep.ncu-rep" --page raw --csv 2>/dev/null | python3 -c '
import csv, sys
r = list(csv.reader(sys.stdin))
if len(r) >= 3:
    for n, u, v in zip(r[0], r[1], r[2]):
        if "issue_stalled" in n and "pct" not in n:
            try:
                if float(v.replace(",", "")) > 0: print(f"  {n} = {v} {u}")
            except ValueError:
                pass'
  echo "== SASS instructions by warp stall samples"
  ncu -i "$rep.ncu-rep" --page source --csv --print-source sass > "${rep}_sass.csv" 2>&1
  python3 "$(dirname "${BASH_SOURCE[0]}")/ncu_sass.py" "${rep}_sass.csv"
  echo "== CUDA source lines (cuda,sass) by warp stall samples"
  ncu -i "$rep.ncu-rep" --page source --csv --print-source cuda,sass > "${rep}_source.csv" 2>&1
  python3 "$(dirname "${BASH_SOURCE[0]}")/ncu_sass.py" "${rep}_source.csv"
} >"$OUT/ncu_$tag.txt" 2>&1
tail -n 45 "$OUT/ncu_$tag.txt"
