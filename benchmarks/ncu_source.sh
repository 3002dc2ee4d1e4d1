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
  echo "== source lines by warp stall samples"
  ncu -i "$rep.ncu-rep" --page source --csv --print-source cuda > "${rep}_source.csv" 2>&1
  python3 - "${rep}_source.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
head = next((i for i, r in enumerate(rows) if any("Sampl" in c for c in r)), None)
if head is None:
    print("no sampling columns in the source page:", rows[:3])
    raise SystemExit(0)
cols = rows[head]
s_col = next(i for i, c in enumerate(cols) if "Sampl" in c and "Not" not in c)
src_col = next((i for i, c in enumerate(cols) if c.strip().lower() in ("source", "# source")), len(cols) - 1)
def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0
data = [(num(r[s_col]), r[0], r[src_col].strip()) for r in rows[head + 1:] if len(r) > max(s_col, src_col)]
total = sum(d[0] for d in data) or 1.0
print(f"{cols[s_col]}: {total:.0f} in all")
for n, line, text in sorted(data, reverse=True)[:40]:
    print(f"{100 * n / total:5.1f}%  {line:>6}  {text[:110]}")
PY
} >"$OUT/ncu_$tag.txt" 2>&1
rm -f "$rep.ncu-rep"  # large; the text and the csv stay
tail -n 45 "$OUT/ncu_$tag.txt"
