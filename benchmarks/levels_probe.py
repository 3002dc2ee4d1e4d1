"""Where the levels kernel's time goes: the ticks / bars workloads of bench_gpu.py with value areas
that stop at once (value_area tiny), at 70% and at 100%, and both expansion steps, per-kernel GPU
time by torch.profiler. Usage: python benchmarks/levels_probe.py (prints a table, writes $OUT/levels_probe.json)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

import vpoc

TICK = 0.25


def kernel_us(fn, calls=5):
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    out = {}
    for e in prof.key_averages():
        t = getattr(e, "self_device_time_total", 0) or 0
        if t > 0:
            name = e.key.replace("(anonymous namespace)::", "").split("(")[0]
            out[name] = out.get(name, 0.0) + t / calls
    return out


def main():
    big = vpoc.synth.es_trades(50_000_000, 1014, price_dtype=np.float32, volume_dtype=np.float32)
    bp, bv = torch.from_numpy(big.price).cuda(), torch.from_numpy(big.volume).cuda()
    bb = vpoc.synth.es_bars()
    bars = [torch.from_numpy(a.astype(np.float32)).cuda() for a in (bb.high, bb.low, bb.close, bb.volume)]
    doc = {"device": torch.cuda.get_device_name(0), "git_commit": os.environ.get("VPOC_GIT_COMMIT"), "runs": []}
    p = vpoc.from_trades(bp, bv, offsets=big.offsets, tick_size=TICK, device="cuda")
    try:
        n = np.diff(torch.from_dlpack(p.offsets).cpu().numpy())
    except Exception as e:  # noqa: BLE001
        print("offsets:", e)
        n = None
    if n is not None:
        doc["ticks_rows_per_session"] = {"mean": float(n.mean()), "max": int(n.max()), "min": int(n.min())}
    for wl in ("ticks", "bars"):
        for va in (1e-12, 0.7, 1.0):
            for m in ("cbot", "single"):
                if wl == "ticks":
                    fn = lambda: vpoc.from_trades(bp, bv, offsets=big.offsets, tick_size=TICK, device="cuda",
                                                  value_area=va, va_method=m)
                else:
                    fn = lambda: vpoc.from_bars(*bars, offsets=bb.offsets, tick_size=TICK, device="cuda",
                                                value_area=va, va_method=m)
                k = kernel_us(fn)
                lev = sum(v for kk, v in k.items() if "levels" in kk)
                doc["runs"].append({"workload": wl, "value_area": va, "va_method": m, "levels_us": lev, "kernels": k})
                print(f"{wl:6s} va={va:<7g} {m:6s} levels {lev:8.1f} us   total {sum(k.values()):8.1f} us", flush=True)
    out = Path(os.environ.get("OUT", "."))
    (out / "levels_probe.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps({k: v for k, v in doc.items() if k != "runs"}))


if __name__ == "__main__":
    main()
