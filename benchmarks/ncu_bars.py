"""The bench's bars workload (es_bars(1014, 1380), uniform, float32 on the GPU), its developing series
(default) or its plain profile (`plain`), or the bench's ticks workload (`ticks`: es_trades(50 M, 1014),
float32 price and volume), run a few times for a profiler to attach to:
`ncu --clock-control none -k regex:chunk_kernel -c 1 python3 benchmarks/ncu_bars.py [calls] [plain|ticks]`.

Contract: no output but one line with the wall time per call; exits 0 without a GPU build or torch.
"""

from __future__ import annotations

import sys
import time


def main() -> int:
    try:
        import numpy as np
        import torch

        import vpoc
        from vpoc.synth import es_bars, es_trades
    except ImportError as e:
        print(f"ncu_bars: {e}")
        return 0
    if not (torch.cuda.is_available() and vpoc.gpu_available()):
        print("ncu_bars: needs a CUDA torch and a vpoc GPU build")
        return 0
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    mode = sys.argv[2] if len(sys.argv) > 2 else "developing"
    if mode == "ticks":
        tr = es_trades(50_000_000, 1014, seed=0, price_dtype=np.float32, volume_dtype=np.float32)
        P, Q = torch.from_numpy(tr.price).cuda(), torch.from_numpy(tr.volume).cuda()
        for _ in range(calls):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            p = vpoc.from_trades(P, Q, offsets=tr.offsets, tick_size=0.25, device="cuda")
            torch.cuda.synchronize()
            dt = time.perf_counter() - t0
        print(f"ticks {dt * 1e3:.3f} ms per call ({p.n_sessions} sessions)")
        return 0
    b = es_bars(1014, 1380, seed=0)
    H, L, C, V = (torch.from_numpy(x.astype(np.float32)).cuda() for x in (b.high, b.low, b.close, b.volume))
    off = b.offsets.astype(np.int64)
    developing = mode != "plain"
    for _ in range(calls):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        p = vpoc.from_bars(H, L, C, V, offsets=off, tick_size=0.25, distribute="uniform", device="cuda",
                           developing=developing)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
    what = "developing" if developing else "plain"
    print(f"{what} {dt * 1e3:.3f} ms per call ({p.n_sessions} sessions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
