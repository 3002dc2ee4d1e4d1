"""Per-kernel and per-API-call breakdown of vpoc GPU calls (torch.profiler over CUPTI).

Usage: python benchmarks/gpu_profile.py   (needs a GPU build and torch with CUDA)
"""

from __future__ import annotations

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

import vpoc


def main() -> None:
    big = vpoc.synth.es_trades(50_000_000, 1014, price_dtype=np.float32, volume_dtype=np.float32)
    bp, bv = torch.from_numpy(big.price).cuda(), torch.from_numpy(big.volume).cuda()
    bb = vpoc.synth.es_bars()
    args = [torch.from_numpy(a.astype(np.float32)).cuda() for a in (bb.high, bb.low, bb.close, bb.volume)]
    for name, fn in (
        ("ticks", lambda: vpoc.from_trades(bp, bv, offsets=big.offsets, tick_size=0.25, device="cuda")),
        ("bars", lambda: vpoc.from_bars(*args, offsets=bb.offsets, tick_size=0.25, device="cuda")),
    ):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                fn()
            torch.cuda.synchronize()
        print(f"== {name} (5 calls)")
        print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=12, max_name_column_width=50))
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12, max_name_column_width=50))


if __name__ == "__main__":
    main()
