"""The Python pieces of one bench_gpu ``batch`` call timed one by one (where the 'Python before the binding' goes).

Contract: builds the batch call's inputs (32 sessions x 390 bars, torch CUDA float32), then times each piece of
from_bars' plain GPU path alone (median of --rounds rounds of --calls calls, microseconds a call) and counts the
Python function calls of one whole call (cProfile); JSON to --out. Needs torch with CUDA and a vpoc GPU build.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Dict

import numpy as np


def timed(fn: Callable[[], Any], calls: int, rounds: int) -> float:
    """Median over ``rounds`` of the mean microseconds of ``calls`` calls of ``fn``."""
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter_ns() - t0) / calls / 1e3)
    return statistics.median(out)


def main(argv: Any = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    import torch

    import vpoc
    from vpoc import _api, _core, _device
    from vpoc.synth import es_bars

    b = es_bars(32, 390, seed=1000)
    h, lo, c, v = (torch.from_numpy(np.asarray(x, np.float32)).cuda() for x in (b.high, b.low, b.close, b.volume))
    off = np.asarray(b.offsets, np.int64)
    arrays = {"high": h, "low": lo, "close": c, "volume": v, "open": None}

    def call() -> Any:
        return vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=0.25, distribute="uniform", device="cuda")

    for _ in range(300):
        call()
    torch.cuda.synchronize()
    prof = call()
    lv = prof.levels
    given = dict(distribute="uniform", va_method=None, poc_tie=None, va_rows=None, va_compare=None, va_stop=None,
                 tie_tol=None, row_label=None, price_label=None, va_target=None, bins=None, accumulate=None,
                 bin_report=None)
    opts = _api._options(None, dict(given), True, None, None, 0.25, 1, 1_000_000, None, False, False, False)[0]
    gpu, ins, place = _device._placed("cuda", arrays, _api.DEFAULT_MEMORY_BUDGET, None)
    budget = _api.DEFAULT_MEMORY_BUDGET
    pieces: Dict[str, Callable[[], Any]] = {
        "from_bars (whole call)": call,
        "from_bars + levels + torch.from_dlpack": lambda: torch.from_dlpack(call().levels),
        "_options": lambda: _api._options(None, dict(given), True, None, None, 0.25, 1, 1_000_000, None, False,
                                          False, False),
        "_placed": lambda: _device._placed("cuda", arrays, budget, None),
        "_core.gpu_inputs": lambda: _core.gpu_inputs(arrays, 0),
        "_current_raw_stream": lambda: _device._current_raw_stream(0),
        "_device('cuda')": lambda: _device._device("cuda", None),
        "_placement (cached)": lambda: _device._placement(gpu, budget, 0, True, (0,)),
        "engine (_core.profile_bars)": lambda: _core.profile_bars(*ins.values(), off, None, opts, place, None),
        "Profiles(r)": lambda: vpoc.Profiles(prof._result, device="cuda:0"),
        "prof.levels": lambda: prof.levels,
        "torch.from_dlpack(levels)": lambda: torch.from_dlpack(lv),
        "vpoc.torch.as_tensor(levels)": lambda: __import__("vpoc.torch").torch.as_tensor(lv),
        "levels.__dlpack__(stream=raw)": lambda: lv.__dlpack__(stream=_device._current_raw_stream(0) or 1),
        "torch.cuda.current_stream('cuda:0')": lambda: torch.cuda.current_stream("cuda:0"),
        "levels.__dlpack_device__()": lambda: lv.__dlpack_device__(),
        "torch._C._from_dlpack(levels.__dlpack__(stream=raw))":
            lambda: torch._C._from_dlpack(lv.__dlpack__(stream=_device._current_raw_stream(0) or 1)),
        "torch._C._cuda_getCurrentRawStream": lambda: torch._C._cuda_getCurrentRawStream(0),
        "empty python call": lambda: None,
    }
    res: Dict[str, Any] = {}
    for name, fn in pieces.items():
        try:
            res[name] = round(timed(fn, args.calls, args.rounds), 2)
        except Exception as e:  # a piece this tree lacks
            res[name] = f"{type(e).__name__}: {e}"
        torch.cuda.synchronize()
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(100):
        call()
    pr.disable()
    st = pstats.Stats(pr)
    res["python_function_calls_per_call"] = st.total_calls / 100  # type: ignore[attr-defined]
    top = sorted(st.stats.items(), key=lambda kv: -kv[1][3])[:25]  # type: ignore[attr-defined]
    res["cprofile_top_cumulative"] = [f"{k[2]} ({Path(k[0]).name}:{k[1]}) calls={v[1] / 100:g} "
                                      f"cum_us={v[3] / 100 * 1e6:.1f} own_us={v[2] / 100 * 1e6:.1f}"
                                      for k, v in top]
    text = json.dumps(res, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
