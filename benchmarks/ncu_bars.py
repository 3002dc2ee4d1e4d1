"""The bench's bars workload (es_bars(1014, 1380), uniform, float32 on the GPU), its developing series
(default) or its plain profile (`plain`), run a few times for a profiler to attach to:
`ncu --clock-control none -k regex:chunk_kernel -c 1 python3 benchmarks/ncu_bars.py [calls] [plain]`.

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
        from vpoc.synth import es_bars
    except ImportError as e:
        print(f"ncu_bars: {e}")
        return 0
    if not (torch.cuda.is_available() and vpoc.gpu_available()):
        print("ncu_bars: needs a CUDA torch and a vpoc GPU build")
        return 0
    b = es_bars(1014, 1380, seed=0)
    H, L, C, V = (torch.from_numpy(x.astype(np.float32)).cuda() for x in (b.high, b.low, b.close, b.volume))
    off = b.offsets.astype(np.int64)
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    developing = not (len(sys.argv) > 2 and sys.argv[2] == "plain")
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
