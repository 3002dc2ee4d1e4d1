"""Page faults and CPU time per call of one cpu_floor.py workload, one thread against all threads.

Contract: prints one JSON line {"workload", "threads": {n: {"cpu_s", "wall_s", "minor_faults"}}} per
call (best of --repeat for the times, the median fault count), in this process's vpoc (any tree: put it
first on PYTHONPATH). A call that faults in fresh pages on every call (scratch allocated per call in
worker threads' arenas) shows here as faults and extra CPU time with more threads (issue 25).

Usage::

    python benchmarks/cpu_faults.py trades_f32_20M            # 1 thread and os.cpu_count()
    PYTHONPATH=<other tree>/python python benchmarks/cpu_faults.py trades_f32_20M --repeat 9
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_floor  # noqa: E402


def measure(workload: str, repeat: int) -> Dict[str, Any]:
    import vpoc

    _, _, call = cpu_floor.make(workload)
    out: Dict[str, Any] = {"workload": workload, "vpoc": vpoc.__file__, "threads": {}}
    for threads in sorted({1, os.cpu_count() or 1}):
        call(vpoc, threads)  # warm-up
        cpu, wall, faults = [], [], []
        for _ in range(repeat):
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            c0, t0 = time.process_time(), time.perf_counter()
            call(vpoc, threads)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        out["threads"][threads] = {"cpu_s": min(cpu), "wall_s": min(wall),
                                   "minor_faults": int(statistics.median(faults))}
    return out


def main(argv: Any = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload", choices=cpu_floor.WORKLOADS + cpu_floor.EXTRA_WORKLOADS)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    print(json.dumps(measure(args.workload, args.repeat)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
