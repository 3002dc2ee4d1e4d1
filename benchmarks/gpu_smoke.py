"""Quick GPU sanity run: GPU results vs the CPU engine on synthetic data, every mode, with timings.

Usage: python benchmarks/gpu_smoke.py  (needs a GPU build; prints one line per case, exits 1 on a mismatch)
"""

from __future__ import annotations

import sys
import time

import numpy as np

import vpoc

FIELDS = ("poc_row", "vah_row", "val_row", "low_row", "n_rows", "offsets")


def compare(name: str, cpu: vpoc.Profiles, gpu: vpoc.Profiles, exact: bool) -> bool:
    host = gpu.cpu()
    ok = all(np.array_equal(getattr(cpu, f), getattr(host, f)) for f in FIELDS)
    if exact:
        ok &= np.array_equal(cpu.volume, host.volume)
    else:
        ok &= np.allclose(cpu.volume, host.volume, rtol=1e-9, atol=0)
    ok &= np.allclose(cpu.total_volume, host.total_volume, rtol=1e-9, atol=0)
    print(f"{'ok ' if ok else 'BAD'} {name}")
    if not ok:
        for f in FIELDS:
            a, b = getattr(cpu, f), getattr(host, f)
            if not np.array_equal(a, b):
                i = int(np.argmax(a != b)) if a.shape == b.shape else -1
                print(f"    {f}: first diff at {i}: cpu {a[i] if i >= 0 else a.shape} gpu {b[i] if i >= 0 else b.shape}")
        d = np.abs(cpu.volume - host.volume) if cpu.volume.shape == host.volume.shape else None
        if d is not None and d.size:
            print(f"    volume max abs diff {d.max()}")
    return ok


def main() -> int:
    import torch

    print("backends", vpoc.backends(), "gpu", vpoc.gpu_available(), torch.cuda.get_device_name(0))
    good = True
    bars = vpoc.synth.es_bars(200, 1380)
    for dist in ("close", "hlc3", "uniform", "legacy"):
        for va in ("cbot", "single", "greedy"):
            for tpr in (1, 4):
                kw = dict(offsets=bars.offsets, tick_size=0.25, ticks_per_row=tpr, distribute=dist, va_method=va)
                cpu = vpoc.from_bars(bars.high, bars.low, bars.close, bars.volume, open=bars.open, **kw)
                gpu = vpoc.from_bars(bars.high, bars.low, bars.close, bars.volume, open=bars.open, device="cuda", **kw)
                good &= compare(f"bars host {dist} {va} tpr={tpr}", cpu, gpu, exact=dist in ("close", "hlc3"))
    v32 = bars.volume.astype(np.int32)
    cpu = vpoc.from_bars(bars.high, bars.low, bars.close, v32, offsets=bars.offsets, tick_size=0.25, distribute="close")
    gpu = vpoc.from_bars(bars.high, bars.low, bars.close, v32, offsets=bars.offsets, tick_size=0.25, distribute="close", device="cuda")
    good &= compare("bars close int32 (u64 atomics)", cpu, gpu, exact=True)
    trades = vpoc.synth.es_trades(5_000_000, 100, price_dtype=np.float32, volume_dtype=np.float32)
    cpu = vpoc.from_trades(trades.price, trades.volume, offsets=trades.offsets, tick_size=0.25)
    for budget in (256 << 20, 1 << 20):
        gpu = vpoc.from_trades(trades.price, trades.volume, offsets=trades.offsets, tick_size=0.25, device="cuda",
                               memory_budget=budget)
        good &= compare(f"trades host budget={budget}", cpu, gpu, exact=True)
    tp = torch.from_numpy(trades.price).cuda()
    tv = torch.from_numpy(trades.volume).cuda()
    gpu = vpoc.from_trades(tp, tv, offsets=trades.offsets, tick_size=0.25, device="cuda")
    good &= compare("trades device-resident", cpu, gpu, exact=True)
    t = torch.from_dlpack(gpu.poc)
    print("dlpack ptr equal", t.data_ptr() == gpu.poc.data_ptr, "stats", vpoc.memory_stats("cuda:0"))
    try:
        vpoc.from_trades(tp, tv, offsets=trades.offsets, tick_size=0.25, device="cuda:99")
    except ValueError as e:
        print("ok  bad device:", e)
    bad = tp.clone()
    bad[12345] = float("nan")
    try:
        vpoc.from_trades(bad, tv, offsets=trades.offsets, tick_size=0.25, device="cuda")
        print("BAD no error for NaN")
        good = False
    except ValueError as e:
        print("ok  NaN:", e)
    # timings, device-resident
    big = vpoc.synth.es_trades(50_000_000, 1014, price_dtype=np.float32, volume_dtype=np.float32)
    bp, bv = torch.from_numpy(big.price).cuda(), torch.from_numpy(big.volume).cuda()
    for _ in range(2):
        vpoc.from_trades(bp, bv, offsets=big.offsets, tick_size=0.25, device="cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(5):
        vpoc.from_trades(bp, bv, offsets=big.offsets, tick_size=0.25, device="cuda")
    torch.cuda.synchronize()
    print(f"ticks 50M device-resident: {(time.perf_counter() - t0) / 5 * 1e3:.2f} ms")
    bb = vpoc.synth.es_bars()
    args = [torch.from_numpy(a.astype(np.float32)).cuda() for a in (bb.high, bb.low, bb.close, bb.volume)]
    for _ in range(2):
        vpoc.from_bars(*args, offsets=bb.offsets, tick_size=0.25, device="cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(10):
        vpoc.from_bars(*args, offsets=bb.offsets, tick_size=0.25, device="cuda")
    torch.cuda.synchronize()
    print(f"bars 1.4M uniform device-resident: {(time.perf_counter() - t0) / 10 * 1e3:.2f} ms")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
