"""Before/after table of two bench_gpu.py results: per workload, vpoc's time and its ratio to each
peer measured in the same run, and the change; a workload slower by more than --limit fails.

    python benchmarks/compare.py BEFORE.json AFTER.json [--limit 0.10] [--out FILE.md]

Times from two different machines do not compare; the ratios to peers (timed in the same run as
vpoc) do, roughly. Exit status 1 when a workload got slower than the limit or is not `correct`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# (label, key, lower is better)
COLUMNS = [("vpoc", "vpoc_s", True), ("developing", "developing_s", True),
           ("developing / plain", "developing_ratio", True),
           ("x torch_vec", "speedup_vs_torch_vec", False), ("x torch_loop", "speedup_vs_torch_loop", False),
           ("x numpy_vec", "speedup_vs_numpy_vec", False)]


def _fmt(key: str, v: float) -> str:
    return f"{v * 1e3:.3f} ms" if key.endswith("_s") else f"{v:.2f}x"


def compare(before: dict, after: dict, limit: float) -> tuple[list[str], bool]:
    lines = [f"before: {before.get('git_commit')} on {before.get('device')}",
             f"after:  {after.get('git_commit')} on {after.get('device')}", "",
             "| workload | measure | before | after | change |", "|---|---|---|---|---|"]
    ok = before.get("device") == after.get("device")
    if not ok:
        lines.insert(2, "(different devices: only the ratios to GPU peers compare)")
    worst = True
    for name, a in after["workloads"].items():
        b = before["workloads"].get(name)
        if b is None:
            lines.append(f"| {name} | (new workload) | | | |")
            continue
        if not a.get("correct", False):
            worst = False
            lines.append(f"| {name} | correct | {b.get('correct')} | {a.get('correct')} | FAIL |")
        for label, key, lower in COLUMNS:
            if key not in a or key not in b or not b[key]:
                continue
            if not ok and (key.endswith("_s") or "numpy" in key):  # machine-bound (numpy: host CPU)
                continue
            change = a[key] / b[key] - 1.0
            slower = change if lower else (b[key] / a[key] - 1.0)
            flag = " SLOWER" if slower > limit else ""
            if flag:
                worst = False
            lines.append(f"| {name} | {label} | {_fmt(key, b[key])} | {_fmt(key, a[key])} | "
                         f"{change:+.1%}{flag} |")
    lines += ["", f"limit: no workload slower by more than {limit:.0%} -> "
              f"{'PASS' if worst else 'FAIL'}"]
    return lines, worst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--limit", type=float, default=0.10)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    lines, ok = compare(json.loads(args.before.read_text()), json.loads(args.after.read_text()),
                        args.limit)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
