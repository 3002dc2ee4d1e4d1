"""Per-kernel and per-API-call breakdown of vpoc GPU calls (torch.profiler over CUPTI).

Workloads as in bench_gpu.py: ``ticks`` (50 M float32 trades on the GPU), ``ticks_side`` (the same
with an int8 aggressor side, every side field read), ``bars`` (1014 x 1380
uniform bars on the GPU), ``developing`` (the same bars, developing=True) and ``batch`` (32 x 390
bars, results to torch). Each is warmed up, then ``--calls`` calls are profiled. Prints the tables
and writes ``gpu_profile.json`` (``--json``, else ``$OUT`` or benchmarks/results): per workload the GPU time per call
of each kernel / memset / memcpy, and the count per call of every runtime API call (so
``cudaMalloc`` / ``cudaFree`` / ``cudaDeviceSynchronize`` show up if a call makes them).

Usage: python benchmarks/gpu_profile.py [--calls 5] [--workloads ticks,ticks_side,bars,developing,batch]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Dict

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

import vpoc

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gpu import SIDE_CHECKED  # noqa: E402  (the side fields its timed ticks_side calls read)

TICK = 0.25


def workloads() -> Dict[str, Callable[[], Any]]:
    big = vpoc.synth.es_trades(50_000_000, 1014, price_dtype=np.float32, volume_dtype=np.float32)
    bp, bv = torch.from_numpy(big.price).cuda(), torch.from_numpy(big.volume).cuda()
    # bench_gpu's ticks_side mix: 45% buyer-, 45% seller-initiated, 10% unknown
    rng = np.random.default_rng(7)
    bs = torch.from_numpy(rng.choice(np.array([1, -1, 0], np.int8), size=big.price.shape[0],
                                     p=[0.45, 0.45, 0.10])).cuda()
    bb = vpoc.synth.es_bars()
    bars = [torch.from_numpy(a.astype(np.float32)).cuda() for a in (bb.high, bb.low, bb.close, bb.volume)]
    sb = vpoc.synth.es_bars(32, 390, seed=5)
    small = [torch.from_numpy(a.astype(np.float32)).cuda() for a in (sb.high, sb.low, sb.close, sb.volume)]

    def ticks_side() -> Any:  # every side field touched, as bench_gpu's timed ticks_side calls do
        p = vpoc.from_trades(bp, bv, offsets=big.offsets, tick_size=TICK, device="cuda", side=bs)
        for k in SIDE_CHECKED:
            getattr(p, k)
        return p

    def batch() -> Any:
        p = vpoc.from_bars(*small, offsets=sb.offsets, tick_size=TICK, device="cuda")
        return torch.stack([torch.from_dlpack(p.poc), torch.from_dlpack(p.vah), torch.from_dlpack(p.val)], 1)

    return {
        "ticks": lambda: vpoc.from_trades(bp, bv, offsets=big.offsets, tick_size=TICK, device="cuda"),
        "ticks_side": ticks_side,
        "bars": lambda: vpoc.from_bars(*bars, offsets=bb.offsets, tick_size=TICK, device="cuda"),
        "developing": lambda: vpoc.from_bars(*bars, offsets=bb.offsets, tick_size=TICK, device="cuda",
                                             developing=True),
        "batch": batch,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--workloads", default="ticks,ticks_side,bars,developing,batch")
    ap.add_argument("--json", default=None,
                    help="where the JSON goes (default: $OUT/gpu_profile.json, else benchmarks/results/); "
                         "a run under ncu, which sees no kernels here, should name another file")
    args = ap.parse_args()
    fns = workloads()
    doc: Dict[str, Any] = {"device": torch.cuda.get_device_name(0), "calls": args.calls,
                           "git_commit": os.environ.get("VPOC_GIT_COMMIT"), "workloads": {}}
    for name in [w for w in args.workloads.split(",") if w]:
        fn = fns[name]
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        s0 = vpoc.memory_stats()  # vpoc's own driver allocations / frees over the profiled calls
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(args.calls):
                r = fn()
            # wait through the stream the result names (a device-wide sync here would be ours)
            torch.from_dlpack(r if isinstance(r, torch.Tensor) else r.poc)
            torch.cuda.current_stream().synchronize()
        print(f"== {name} ({args.calls} calls)")
        print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=14, max_name_column_width=60))
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=14, max_name_column_width=60))
        gpu: Dict[str, float] = {}
        api: Dict[str, float] = {}
        for e in prof.key_averages():
            dev_us = getattr(e, "self_device_time_total", None)
            if dev_us is None:
                dev_us = getattr(e, "self_cuda_time_total", 0)
            if dev_us > 0:
                gpu[e.key] = dev_us / args.calls
            elif e.key.startswith(("cuda", "cu", "hip")):
                api[e.key] = e.count / args.calls
        s1 = vpoc.memory_stats()
        mine = {k: int(s1[k] - s0[k]) for k in ("driver_allocs", "driver_frees")}
        doc["workloads"][name] = {"gpu_us_per_call": dict(sorted(gpu.items(), key=lambda kv: -kv[1])),
                                  "gpu_us_total_per_call": sum(gpu.values()),
                                  "api_calls_per_call": dict(sorted(api.items())),
                                  "vpoc_driver_calls": mine}
        print(f"   GPU time per call {sum(gpu.values()):.1f} us; API calls per call: "
              + ", ".join(f"{k} {v:g}" for k, v in sorted(api.items()))
              + f"; of those vpoc's (memory_stats), over the {args.calls} calls: driver allocs "
              f"{mine['driver_allocs']}, frees {mine['driver_frees']}")
    import cProfile
    import pstats

    # where the host time of a call goes (Python and C++ alike): batch (small calls) and ticks_side (its
    # wall is ~0.28 ms above its GPU time on the H200, a plain ticks call's ~0.06 ms)
    for name, calls in (("batch", 200), ("ticks_side", 20)):
        if name not in args.workloads.split(","):
            continue
        fn = fns[name]
        torch.cuda.synchronize()
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        pr.disable()
        print(f"== {name}: host time of {calls} calls (cProfile, by own time)")
        pstats.Stats(pr).sort_stats("tottime").print_stats(15)
        print(f"== {name}: the same, by cumulative time")
        pstats.Stats(pr).sort_stats("cumulative").print_stats(25)
    if args.json:
        path = Path(args.json)
    else:
        path = (Path(os.environ["OUT"]) if os.environ.get("OUT") else Path(__file__).parent / "results") / "gpu_profile.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
