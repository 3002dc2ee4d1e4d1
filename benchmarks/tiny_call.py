"""The tiny call of issue 24: one session of 10 bars through ``vpoc.from_bars`` on the CPU.

Contract: prints one JSON line {"calls": Python function calls (cProfile) of one call, "us": best
per-call microseconds}; run as a subprocess per tree (PYTHONPATH) so that trees compare in one run.
"""

from __future__ import annotations

import cProfile
import json
import pstats
import sys
import time

import numpy as np


def measure(rounds: int = 5, calls: int = 4000) -> dict:
    import vpoc

    rng = np.random.default_rng(0)
    low = np.round(rng.uniform(4000, 4010, 10) * 4) / 4
    high, close = low + 0.5, low + 0.25
    vol = rng.integers(1, 100, 10).astype(np.float64)

    def call() -> object:
        return vpoc.from_bars(high, low, close, vol, tick_size=0.25)

    for _ in range(1000):
        call()
    prof = cProfile.Profile()
    prof.enable()
    call()
    prof.disable()
    n = pstats.Stats(prof).total_calls - 1  # less the profiler's own disable()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - t0) / calls)
    return {"calls": int(n), "us": best * 1e6, "vpoc": vpoc.__file__}


if __name__ == "__main__":
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(json.dumps(measure(rounds)))
