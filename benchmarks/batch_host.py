"""Where the host time of one bench_gpu ``batch`` call goes: each layer of the call timed alone.

Contract: prints microseconds per call (best of 5 loops of --calls) for the Python preamble
(options, placement and its parts), the engine call (C++: checks, launches, the summary wait), the
Profiles wrapper, the levels export and torch's import (its parts, and vpoc.torch.as_tensor), and the
whole call, plus the Python function calls of one call (cProfile); JSON to --out. Needs torch
with CUDA and a vpoc GPU build.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np


def best_us(fn: Callable[[], Any], calls: int, sync: Callable[[], None]) -> float:
    out = []
    for _ in range(5):
        sync()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        out.append((time.perf_counter() - t0) / calls * 1e6)
    return min(out)


def main(argv: Any = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    import torch

    import vpoc
    from vpoc import _api, _core, _device
    from vpoc._profiles import Profiles
    from vpoc.synth import es_bars

    b = es_bars(32, 390, seed=1)
    H, L, C, V = (torch.from_numpy(np.asarray(x, np.float32)).cuda() for x in (b.high, b.low, b.close, b.volume))
    off = np.asarray(b.offsets, np.int64)
    sync = torch.cuda.synchronize
    arrays = {"high": H, "low": L, "close": C, "volume": V, "open": None}
    opts, _, _ = _api._options(None, dict(distribute="uniform"), True, None, None, 0.25, 1, 1_000_000, None,
                               False, False, False)
    gpu, ins, place = _device._placed("cuda", arrays, _device.DEFAULT_MEMORY_BUDGET, None)
    r = _core.profile_bars(*ins.values(), off, None, opts, place, None)
    prof = Profiles(r, device="cuda:0")
    res = {}
    n = args.calls
    res["torch_add_floor"] = best_us(lambda: V.add(0), n, sync)
    res["options"] = best_us(lambda: _api._options(None, dict(distribute="uniform"), True, None, None, 0.25, 1,
                                                    1_000_000, None, False, False, False), n, sync)
    res["core_Options"] = best_us(lambda: _core.Options(tick_size=0.25, distribute="uniform"), n, sync)
    res["placed"] = best_us(lambda: _device._placed("cuda", arrays, _device.DEFAULT_MEMORY_BUDGET, None), n, sync)
    # _placed's parts: the inputs read once, torch's current stream, the device argument, the cached Placement
    res["placed_gpu_inputs"] = best_us(lambda: _core.gpu_inputs(arrays, 0), n, sync)
    res["placed_current_raw_stream"] = best_us(lambda: _device._current_raw_stream(0), n, sync)
    res["placed_device"] = best_us(lambda: _device._device("cuda", None), n, sync)
    res["placed_placement"] = best_us(lambda: _device._placement(gpu, _device.DEFAULT_MEMORY_BUDGET, 0, True, (0,)),
                                      n, sync)
    res["engine"] = best_us(lambda: _core.profile_bars(*ins.values(), off, None, opts, place, None), n, sync)
    res["profiles_wrap"] = best_us(lambda: Profiles(r, device="cuda:0"), n, sync)
    res["levels_attr"] = best_us(lambda: r.levels, n, sync)
    res["levels_from_dlpack"] = best_us(lambda: torch.from_dlpack(r.levels), n, sync)
    # torch.from_dlpack's own parts, and vpoc.torch.as_tensor (the same view without current_stream())
    raw = _device._current_raw_stream(0) or 1  # (0, the legacy default stream, is 1 in the DLPack convention)
    res["torch_current_stream"] = best_us(lambda: torch.cuda.current_stream("cuda:0"), n, sync)
    res["levels_dlpack_export"] = best_us(lambda: r.levels.__dlpack__(stream=raw), n, sync)
    res["levels_torch_C_from_dlpack"] = best_us(lambda: torch._C._from_dlpack(r.levels.__dlpack__(stream=raw)), n, sync)
    try:
        from vpoc.torch import as_tensor
    except ImportError:  # an older tree
        as_tensor = None
    if as_tensor is not None:
        res["levels_as_tensor"] = best_us(lambda: as_tensor(r.levels), n, sync)
    res["three_from_dlpack_stack"] = best_us(lambda: torch.stack([torch.from_dlpack(r.poc), torch.from_dlpack(r.vah),
                                                                 torch.from_dlpack(r.val)], 1), n, sync)
    res["from_bars"] = best_us(lambda: vpoc.from_bars(H, L, C, V, offsets=off, tick_size=0.25, distribute="uniform",
                                                      device="cuda"), n, sync)
    res["from_bars_levels"] = best_us(lambda: torch.from_dlpack(vpoc.from_bars(
        H, L, C, V, offsets=off, tick_size=0.25, distribute="uniform", device="cuda").levels), n, sync)
    # as bench_gpu's batch loop: 8 distinct batches resident on the GPU, one per call in turn
    many = []
    for k in range(8):
        bk = es_bars(32, 390, seed=1000 + k)
        many.append(tuple(torch.from_numpy(np.asarray(x, np.float32)).cuda()
                          for x in (bk.high, bk.low, bk.close, bk.volume)))
    it = [0]

    def cycled() -> Any:
        it[0] += 1
        h, lo, c, v = many[it[0] % 8]
        return torch.from_dlpack(vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.25, distribute="uniform",
                                                device="cuda").levels)
    res["from_bars_levels_8_batches"] = best_us(cycled, n, sync)
    # the Python function calls of one whole call (cProfile; the plain call's goal: few)
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(100):
        cycled()
    pr.disable()
    res["python_calls_per_call"] = pstats.Stats(pr).total_calls / 100  # type: ignore[attr-defined]
    for k, v in res.items():
        print(f"  {k:26s} {v:8.1f} us")
    if args.out:
        args.out.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
