"""Where a vpoc GPU call's wall time goes beyond its kernels: a timeline of each call (torch.profiler).

For each workload of gpu_profile.py, ``--calls`` calls are timed as bench_gpu.py times them
(synchronize, call, synchronize), each inside a ``record_function`` range, and the profiler's trace
(CPU and GPU on one clock) is split per call into: host time before the first GPU operation starts
(``lead``: Python, validation, launches, the H2D copy's issue), GPU busy time (``busy``: the union of
kernels, memcpys and memsets), GPU idle gaps between them (``gaps``: launch latency, a host wait
mid-call), and the time from the last GPU operation's end to the end of the call (``tail``: the sync
wake-up, result wrapping). Per-call medians in microseconds; ``--json`` writes them.

Usage: python benchmarks/host_gap.py [--calls 20] [--workloads ticks,ticks_side,bars,batch] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile, record_function

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_profile import workloads  # noqa: E402  (the same calls as the per-kernel profile)

_GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
_RANGE = "vpoc_call_"


def split_calls(trace: Dict[str, Any]) -> List[Dict[str, float]]:
    """Per call (a ``vpoc_call_<i>`` user range): lead, busy, gaps, tail, wall (us), n_gpu_ops."""
    ev = trace.get("traceEvents", [])
    ranges = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev
                    if e.get("ph") == "X" and str(e.get("name", "")).startswith(_RANGE)
                    and e.get("cat") == "user_annotation")
    ops = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("ph") == "X" and e.get("cat") in _GPU_CATS)
    out = []
    for a, b in ranges:
        mine = [(s, t) for s, t in ops if s >= a and s < b]
        if not mine:
            continue
        busy = gaps = 0.0
        end = mine[0][0]
        for s, t in mine:  # union of the intervals, gaps between them
            if s > end:
                gaps += s - end
            busy += max(0.0, t - max(s, end))
            end = max(end, t)
        out.append({"wall": b - a, "lead": mine[0][0] - a, "busy": busy, "gaps": gaps, "tail": max(0.0, b - end),
                    "n_gpu_ops": float(len(mine))})
    return out


def measure(fn: Any, calls: int) -> List[Dict[str, float]]:
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(calls):
            torch.cuda.synchronize()
            with record_function(f"{_RANGE}{i}"):
                r = fn()
                torch.cuda.synchronize()
            del r
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "trace.json"
        prof.export_chrome_trace(str(p))
        return split_calls(json.loads(p.read_text(encoding="utf-8")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--workloads", default="ticks,ticks_side,bars,batch")
    ap.add_argument("--json", default=None, help="default: $OUT/host_gap.json, else benchmarks/results/")
    args = ap.parse_args()
    fns = workloads()
    doc: Dict[str, Any] = {"device": torch.cuda.get_device_name(0), "calls": args.calls,
                           "git_commit": os.environ.get("VPOC_GIT_COMMIT"), "workloads": {}}
    print(f"{'workload':12s} {'wall':>8s} {'lead':>8s} {'busy':>8s} {'gaps':>8s} {'tail':>8s} {'ops':>5s}  (us, median of calls)")
    for name in [w for w in args.workloads.split(",") if w]:
        rows = measure(fns[name], args.calls)
        med: Dict[str, float] = {k: float(np.median([r[k] for r in rows])) for k in rows[0]} if rows else {}
        doc["workloads"][name] = {"median_us": med, "calls_seen": len(rows)}
        if med:
            print(f"{name:12s} {med['wall']:8.1f} {med['lead']:8.1f} {med['busy']:8.1f} {med['gaps']:8.1f} "
                  f"{med['tail']:8.1f} {med['n_gpu_ops']:5.0f}")
    path = Path(args.json) if args.json else (
        (Path(os.environ["OUT"]) if os.environ.get("OUT") else Path(__file__).parent / "results") / "host_gap.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
