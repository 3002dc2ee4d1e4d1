"""Where the host time of one bench_gpu ``batch`` call goes, phase by phase, from the engine's own marks.

Contract: sets VPOC_HOST_TRACE=1 before importing vpoc (vpoc/trace.hpp), runs the batch call (32 sessions x
390 bars, GPU inputs, levels consumed by torch.from_dlpack) --calls times after a warm-up, and prints the
median microseconds between consecutive marks (Python's perf_counter_ns and the engine's steady clock are
both CLOCK_MONOTONIC on Linux); JSON to --out. Needs torch with CUDA and a vpoc GPU build.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

os.environ["VPOC_HOST_TRACE"] = "1"


def main(argv: Any = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    import torch

    import vpoc
    from vpoc import _core
    from vpoc.synth import es_bars

    if not hasattr(_core, "host_trace"):
        print("this vpoc has no host marks (vpoc/trace.hpp)")
        return 0
    many = []
    for k in range(8):  # 8 batches of one shape (their offsets are the same: 32 sessions of 390 bars)
        b = es_bars(32, 390, seed=1000 + k)
        many.append(tuple(torch.from_numpy(np.asarray(x, np.float32)).cuda() for x in (b.high, b.low, b.close, b.volume)))
    off = np.asarray(b.offsets, np.int64)

    def call(k: int) -> List[int]:
        h, lo, c, v = many[k % 8]
        t0 = time.perf_counter_ns()
        prof = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.25, distribute="uniform", device="cuda")
        t1 = time.perf_counter_ns()
        lv = prof.levels
        t2 = time.perf_counter_ns()
        x = torch.from_dlpack(lv)
        t3 = time.perf_counter_ns()
        del x, lv, prof
        return [t0, t1, t2, t3]

    for k in range(300):
        call(k)
    torch.cuda.synchronize()
    _core.host_trace()
    spans: Dict[str, List[float]] = {}
    for k in range(args.calls):
        t0, t1, t2, t3 = call(k)
        marks = [("py.call", t0)] + list(_core.host_trace()) + [("py.returned", t1), ("py.levels", t2),
                                                                   ("py.from_dlpack", t3)]
        for (a, ta), (b, tb) in zip(marks, marks[1:]):
            spans.setdefault(f"{a} -> {b}", []).append((tb - ta) / 1e3)
    torch.cuda.synchronize()
    res = {name: round(statistics.median(v), 2) for name, v in spans.items() if len(v) >= args.calls // 2}
    res["total (py.call -> py.from_dlpack)"] = round(sum(res.values()), 2)
    for name, us in res.items():
        print(f"  {name:55s} {us:8.2f} us")
    if args.out:
        args.out.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
