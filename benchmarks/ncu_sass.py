"""Rank the instructions of one kernel's ncu report by warp-stall samples (benchmarks/ncu_source.sh).

Contract: reads a CSV of `ncu -i REP --page source --csv --print-source sass|cuda,sass` (argv[1]) and
prints the hottest instructions with their share of the samples and, where the report has them, the
source lines they came from (a -lineinfo build); prints what it found when the columns are missing.
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict


def num(x: str) -> float:
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


def main(path: str, top: int = 45) -> int:
    rows = list(csv.reader(open(path, errors="replace")))
    head = next((i for i, r in enumerate(rows) if any("Sampl" in c for c in r)), None)
    if head is None:
        print("no sampling columns:", [r[:4] for r in rows[:4]])
        return 0
    cols = rows[head]
    s_col = next(i for i, c in enumerate(cols) if "Sampl" in c and "Not" not in c)
    src_col = next((i for i, c in enumerate(cols) if c.strip().lower() in ("source", "# source")), 1)
    addr_col = next((i for i, c in enumerate(cols) if "Address" in c), 0)
    data = [r for r in rows[head + 1:] if len(r) > max(s_col, src_col)]
    total = sum(num(r[s_col]) for r in data) or 1.0
    print(f"{cols[s_col]}: {total:.0f} samples, {len(data)} instructions; columns: {cols[:12]}")
    # the stall columns (one per reason, where the report has them): their totals
    reasons = [(i, c) for i, c in enumerate(cols) if c.startswith("stall_") or "Stall" in c and i != s_col]
    sums = defaultdict(float)
    for r in data:
        for i, c in reasons:
            if i < len(r):
                sums[c] += num(r[i])
    for c, v in sorted(sums.items(), key=lambda x: -x[1])[:12]:
        print(f"  {c}: {v:.0f}")
    print("== hottest instructions")
    order = sorted(range(len(data)), key=lambda k: -num(data[k][s_col]))[:top]
    for k in order:
        r = data[k]
        print(f"{100 * num(r[s_col]) / total:5.1f}%  #{k:<5d} {r[addr_col][:10]:>10}  {r[src_col][:100]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
