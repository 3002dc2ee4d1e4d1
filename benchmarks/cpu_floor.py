"""One CPU workload of issue 25 timed against its read floor, in this process's vpoc (any tree).

Contract: prints one JSON line {"workload", "vpoc_s" (1 thread: the calling thread's CPU time),
"vpoc_nt_s" (all threads: wall), "floor_s", "vpoc": path}; the data is made here from a seed (numpy only),
so the same command under another tree's PYTHONPATH times that tree on identical inputs.

Workloads (ES ladder, tick 0.25): bars_uniform / bars_close (1014 sessions x 1380 bars, float64
prices, int64 volume), trades_f32_20M / trades_f32_50M (float32 price and volume), trades_f64_20M
(float64 both), trades_f64_i64 (float64 price, int64 volume, 20 M); and, beyond issue 25's table,
trades_f32_runs (20 M float32 trades whose price moves on one trade in ten, as traded prices do: long
runs of trades on one row, the histogram's dependency chain). The read floor is, per input the
engine reads, the faster of ``a.sum()`` and ``a.max()`` on one thread, summed over the inputs.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

WORKLOADS = ("bars_uniform", "bars_close", "trades_f32_20M", "trades_f32_50M", "trades_f64_20M", "trades_f64_i64")
EXTRA_WORKLOADS = ("trades_f32_runs",)  # not in issue 25's table (bench_cpu.py)
SESSIONS, BARS = 1014, 1380


def _bars(seed: int = 0) -> Tuple[List[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    n = SESSIONS * BARS
    steps = rng.integers(-2, 3, n).astype(np.float64) * 0.25
    close = 4000.0 + np.cumsum(steps)
    low = close - rng.integers(0, 4, n) * 0.25
    high = close + rng.integers(0, 4, n) * 0.25
    vol = rng.integers(1, 500, n).astype(np.int64)
    offsets = np.arange(0, n + 1, BARS, dtype=np.int64)
    return [high, low, close, vol], offsets


def _trades(n: int, price_dtype: Any, volume_dtype: Any, seed: int = 0,
            moves: float = 2 / 3) -> Tuple[List[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    step = rng.integers(-1, 2, n, dtype=np.int64)
    if moves != 2 / 3:  # a move (one tick up or down) on a `moves` share of the trades
        step = np.where(rng.random(n) < moves, np.where(rng.random(n) < 0.5, -1, 1), 0)
    walk = np.cumsum(step)
    price = (4000.0 + (walk - walk.min()) % 800 * 0.25).astype(price_dtype)
    vol = rng.integers(1, 10, n).astype(volume_dtype)
    offsets = np.linspace(0, n, SESSIONS + 1).astype(np.int64)
    return [price, vol], offsets


def make(workload: str) -> Tuple[List[np.ndarray], np.ndarray, Callable[[Any, int], Any]]:
    """(the inputs the engine reads, offsets, call(vpoc, threads))."""
    if workload.startswith("bars"):
        arrays, offsets = _bars()
        dist = "uniform" if workload == "bars_uniform" else "close"

        def call(vpoc: Any, threads: int) -> Any:
            h, lo, c, v = arrays
            return vpoc.from_bars(h, lo, c, v, offsets=offsets, tick_size=0.25, distribute=dist, threads=threads)

        return arrays, offsets, call
    n = 50_000_000 if workload == "trades_f32_50M" else 20_000_000
    dtypes = {"trades_f32_20M": (np.float32, np.float32), "trades_f32_50M": (np.float32, np.float32),
              "trades_f64_20M": (np.float64, np.float64), "trades_f64_i64": (np.float64, np.int64),
              "trades_f32_runs": (np.float32, np.float32)}[workload]
    arrays, offsets = _trades(n, *dtypes, moves=0.1 if workload == "trades_f32_runs" else 2 / 3)

    def call_t(vpoc: Any, threads: int) -> Any:
        return vpoc.from_trades(arrays[0], arrays[1], offsets=offsets, tick_size=0.25, threads=threads)

    return arrays, offsets, call_t


def _best(fn: Callable[[], Any], repeat: int, clock: Callable[[], float]) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best


def measure(workload: str, repeat: int = 5) -> Dict[str, Any]:
    import vpoc

    arrays, _, call = make(workload)
    call(vpoc, 1)  # warm-up (pages, caches)
    one = _best(lambda: call(vpoc, 1), repeat, time.thread_time)
    many = _best(lambda: call(vpoc, os.cpu_count() or 1), repeat, time.perf_counter)
    floor = sum(min(_best(a.sum, repeat, time.thread_time), _best(a.max, repeat, time.thread_time)) for a in arrays)
    return {"workload": workload, "vpoc_s": one, "vpoc_nt_s": many, "floor_s": floor, "vpoc": vpoc.__file__}


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)))
