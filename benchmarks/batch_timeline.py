"""Where the wall time of the bench_gpu ``batch`` call goes on the device: variants and a GPU timeline.

Contract: prints wall per call for the variants of the batch loop (vpoc's own stream or the caller's,
with and without consuming the result), then a torch.profiler timeline of a few calls: per call the
GPU busy time of each stream, the gaps between kernels, the CUDA runtime calls on the host. Writes
JSON (and a chrome trace) under --out. Needs torch with CUDA and a vpoc GPU build.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Dict, List

import numpy as np

SESSIONS, BARS, TICK = 32, 390, 0.25  # bench_gpu's batch workload


def main(argv: Any = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--walls-only", action="store_true", help="print the walls per call and stop (no profiler, no files)")
    args = ap.parse_args(argv)
    try:
        import torch

        import vpoc
        from vpoc.synth import es_bars
    except ImportError as e:
        print(f"batch_timeline: {e}")
        return 0
    if not (torch.cuda.is_available() and vpoc.gpu_available()):
        print("batch_timeline: needs a CUDA torch and a vpoc GPU build")
        return 0
    dev = []
    for k in range(8):
        b = es_bars(SESSIONS, BARS, seed=1000 + k)
        dev.append(tuple(torch.from_numpy(x.astype(np.float32)).cuda() for x in (b.high, b.low, b.close, b.volume)))
    off = b.offsets.astype(np.int64)
    cur = torch.cuda.current_stream()

    def call(k: int, stream: Any = None) -> Any:
        H, L, C, V = dev[k % 8]
        return vpoc.from_bars(H, L, C, V, offsets=off, tick_size=TICK, distribute="uniform", device="cuda",
                              stream=stream)

    def consume(p: Any) -> Any:
        return torch.stack([torch.from_dlpack(p.poc), torch.from_dlpack(p.vah), torch.from_dlpack(p.val)], 1)

    from vpoc import _device

    def own(fn: Callable[[int], Any]) -> Callable[[int], Any]:
        """fn with vpoc's own stream for stream=None (the default before torch's current stream)."""
        def run(k: int) -> Any:
            _device._TORCH_STREAM = False
            try:
                return fn(k)
            finally:
                _device._TORCH_STREAM = True
        return run

    variants: Dict[str, Callable[[int], Any]] = {
        "call": lambda k: call(k),
        "call_consume": lambda k: consume(call(k)),
        "call_own_stream": own(lambda k: call(k)),
        "call_consume_own_stream": own(lambda k: consume(call(k))),
        "call_torch_stream": lambda k: call(k, cur),
        "call_consume_torch_stream": lambda k: consume(call(k, cur)),
        "consume_only": None,  # filled below
        "torch_add_floor": None,
    }
    held = call(0)
    variants["consume_only"] = lambda k: consume(held)
    one = torch.zeros(1, device="cuda")
    variants["torch_add_floor"] = lambda k: one.add_(1)

    def loop(fn: Callable[[int], Any], n: int) -> float:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for k in range(n):
            out = fn(k)
            del out
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / n

    res: Dict[str, Any] = {"device": torch.cuda.get_device_name(), "walls_us": {}}
    for name, fn in variants.items():
        loop(fn, 50)
        w = min(loop(fn, args.calls) for _ in range(3))
        res["walls_us"][name] = w * 1e6
        print(f"{name:28s} {w * 1e6:8.1f} us per call")
    if args.walls_only:
        return 0

    from torch.profiler import ProfilerActivity, profile

    for name in ("call_consume", "call_consume_own_stream"):
        fn = variants[name]
        loop(fn, 20)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for k in range(30):
                with torch.profiler.record_function(f"iter{k}"):
                    out = fn(k)
                    del out
            torch.cuda.synchronize()
        try:
            prof.export_chrome_trace(str(args.out / f"batch_timeline_{name}.json"))
        except Exception as e:  # noqa: BLE001
            print(f"trace export failed: {e}")
        gpu: List[Any] = []
        cpu_calls: Dict[str, List[float]] = defaultdict(list)
        for e in prof.events():
            dt = getattr(e, "device_type", None)
            if dt is not None and "CUDA" in str(dt):
                gpu.append((e.time_range.start, e.time_range.end, e.name, getattr(e, "device_resource_id", -1)))
            elif e.name.startswith("cuda") or e.name.startswith("cu"):
                cpu_calls[e.name].append(e.time_range.end - e.time_range.start)
        gpu.sort()
        print(f"\n[{name}] GPU events over 30 calls (us from the first):")
        t0 = gpu[0][0] if gpu else 0
        lines = []
        prev_end = t0
        for s, e_, n, r in gpu[-60:]:
            lines.append(f"  {s - t0:9.1f} +{e_ - s:6.1f} gap {s - prev_end:7.1f} stream {r} {n[:70]}")
            prev_end = e_
        print("\n".join(lines))
        busy = sum(e_ - s for s, e_, _, _ in gpu)
        span = (gpu[-1][1] - gpu[0][0]) if gpu else 0
        print(f"  busy {busy / 30:.1f} us per call over a span of {span / 30:.1f} us per call")
        for k, v in sorted(cpu_calls.items()):
            print(f"  host {k}: {len(v) / 30:.1f} per call, {sum(v) / 30:.1f} us per call")
        res[name] = {"gpu_busy_us": busy / 30, "gpu_span_us": span / 30,
                     "host": {k: [len(v) / 30, sum(v) / 30] for k, v in cpu_calls.items()}}
    (args.out / "batch_timeline.json").write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
