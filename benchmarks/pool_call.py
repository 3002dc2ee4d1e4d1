"""Per-call time and page faults of a small multi-session CPU call (issue 25 follow-up: the worker pool).

Contract: prints one JSON line {"sessions", "bars", "threads", "us": best per-call microseconds,
"faults_per_call"}; run it under each tree (PYTHONPATH first) to compare per-call threads with the pool.
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import numpy as np


def measure(sessions: int, bars: int, threads: int, rounds: int, calls: int) -> dict:
    import vpoc

    b = vpoc.synth.es_bars(sessions, bars, seed=0)

    def call() -> object:
        return vpoc.from_bars(b.high, b.low, b.close, b.volume, offsets=b.offsets, tick_size=0.25,
                              distribute="uniform", threads=threads)

    for _ in range(200):
        call()
    best = float("inf")
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - t0) / calls)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / (rounds * calls)
    return {"vpoc": vpoc.__file__, "sessions": sessions, "bars": bars, "threads": threads,
            "us": round(best * 1e6, 2), "faults_per_call": round(faults, 3)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=32)
    ap.add_argument("--bars", type=int, default=390)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=200)
    a = ap.parse_args()
    for t in a.threads:
        print(json.dumps(measure(a.sessions, a.bars, t, a.rounds, a.calls)))
