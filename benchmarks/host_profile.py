"""Where the host time of a GPU call goes: the bench_gpu ``batch`` call (or ``ticks_side``'s sided call with its
six side fields touched, --workload ticks_side), profiled on the host.

Contract: prints a plain-text report (and writes JSON with --out): wall per call with and without
consuming the result, Python function calls per call and the functions that take the time (cProfile),
and the CPU time of each CUDA runtime call per call (torch.profiler). Needs torch with CUDA and a
vpoc GPU build; exits 0 with a message otherwise.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict

import numpy as np

SESSIONS, BARS, TICK = 32, 390, 0.25  # bench_gpu's batch workload


def _timed(fn: Callable[[int], Any], n: int, torch: Any) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for k in range(n):
        fn(k)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n


def main(argv: Any = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--workload", choices=("batch", "ticks_side"), default="batch")
    ap.add_argument("--trades", type=int, default=2_000_000, help="ticks_side: trades per call")
    args = ap.parse_args(argv)
    try:
        import torch

        import vpoc
        from vpoc.synth import es_bars
    except ImportError as e:
        print(f"host_profile: {e}")
        return 0
    if not (torch.cuda.is_available() and vpoc.gpu_available()):
        print("host_profile: needs a CUDA torch and a vpoc GPU build")
        return 0
    b = es_bars(SESSIONS, BARS, seed=1)
    H, L, C, V = (torch.from_numpy(x.astype(np.float32)).cuda() for x in (b.high, b.low, b.close, b.volume))
    off = b.offsets.astype(np.int64)
    off_dev = torch.from_numpy(off).cuda()

    def call(k: int) -> Any:
        return vpoc.from_bars(H, L, C, V, offsets=off, tick_size=TICK, distribute="uniform", device="cuda")

    def call_dev_offsets(k: int) -> Any:
        return vpoc.from_bars(H, L, C, V, offsets=off_dev, tick_size=TICK, distribute="uniform", device="cuda")

    def consume(k: int) -> Any:
        p = call(k)
        return torch.stack([torch.from_dlpack(p.poc), torch.from_dlpack(p.vah), torch.from_dlpack(p.val)], 1)

    if args.workload == "ticks_side":  # bench_gpu's ticks_side call shape, fewer trades (the host part is per call)
        rng = np.random.default_rng(1)
        n, S = args.trades, 1014
        tick_off = np.linspace(0, n, S + 1).astype(np.int64)
        p = (4000 + np.cumsum(rng.integers(-2, 3, n)) % 400).astype(np.float32) * np.float32(TICK)
        v = rng.integers(1, 20, n).astype(np.float32)
        sd = rng.choice(np.array([1, -1, 0], np.int8), size=n, p=[0.45, 0.45, 0.10])
        P, Vt, SD = torch.from_numpy(p).cuda(), torch.from_numpy(v).cuda(), torch.from_numpy(sd).cuda()
        toff = torch.from_numpy(tick_off).cuda()
        fields = ("buy_volume", "sell_volume", "delta", "delta_poc", "imbalance_buy", "imbalance_sell")

        def call(k: int) -> Any:  # noqa: F811 - the sided call, unconsumed
            return vpoc.from_trades(P, Vt, offsets=toff, tick_size=TICK, device="cuda", side=SD)

        def consume(k: int) -> Any:  # noqa: F811 - its side fields touched, as bench_gpu's ticks_side
            q = call(k)
            return [getattr(q, f) for f in fields]

        def call_dev_offsets(k: int) -> Any:  # noqa: F811 - the unsided call on the same trades
            return vpoc.from_trades(P, Vt, offsets=toff, tick_size=TICK, device="cuda")

    report: Dict[str, Any] = {"device": torch.cuda.get_device_name(0), "workload": args.workload,
                              "sessions": SESSIONS, "bars": BARS}
    for fn in (call, consume, call_dev_offsets):
        _timed(fn, 50, torch)
    report["wall_us"] = {name: 1e6 * min(_timed(fn, args.calls, torch) for _ in range(3))
                         for name, fn in (("call", call), ("call_and_consume", consume),
                                          ("call_device_offsets", call_dev_offsets))}
    one = torch.zeros(1, device="cuda")
    report["wall_us"]["launch_floor"] = 1e6 * _timed(lambda k: one.add_(1), args.calls, torch)

    # Python function calls per call, and where the time goes
    n = 200
    prof = cProfile.Profile()
    torch.cuda.synchronize()
    prof.enable()
    for k in range(n):
        consume(k)
    torch.cuda.synchronize()
    prof.disable()
    st = pstats.Stats(prof)
    report["python_calls_per_call"] = st.total_calls / n
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(30)
    report["cprofile_tottime"] = s.getvalue()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(30)
    report["cprofile_cumulative"] = s.getvalue()

    # CPU time of each CUDA runtime call, per call
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for k in range(n):
            consume(k)
        torch.cuda.synchronize()
    api: Dict[str, Dict[str, float]] = {}
    for e in p.key_averages():
        if e.key.startswith(("cuda", "hip")):
            api[e.key] = {"count_per_call": e.count / n, "cpu_us_per_call": e.cpu_time_total / n}
    report["runtime_api"] = dict(sorted(api.items(), key=lambda kv: -kv[1]["cpu_us_per_call"]))

    print(f"device: {report['device']}; " + (f"{SESSIONS} sessions x {BARS} bars per call" if args.workload == "batch"
                                              else f"ticks_side, {args.trades} trades per call (call_device_offsets: "
                                              "the same call without side)"))
    for k, v in report["wall_us"].items():
        print(f"  wall {k}: {v:.1f} us")
    print(f"  Python function calls per call (call + consume): {report['python_calls_per_call']:.0f}")
    print("  CUDA runtime calls per call (count, CPU us):")
    for k, v in report["runtime_api"].items():
        print(f"    {k}: {v['count_per_call']:.1f}, {v['cpu_us_per_call']:.1f} us")
    print(report["cprofile_tottime"])
    print(report["cprofile_cumulative"])
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
