"""GPU benchmark: vpoc on the GPU against NumPy and PyTorch peers (issue 3, point 9).

Workloads (ES ladder, tick_size 0.25, ticks_per_row 1, per-session profiles + POC):

* ``bars``            es_bars(1014, 1380), ``distribute="uniform"``; float32 high/low/close and
  float32 integer-valued volume resident on the GPU (torch tensors), offsets on the host.
* ``batch``           a training loop: 32 sessions x 390 bars per call (``--batch-calls`` calls,
  cycling over 8 distinct batches resident on the GPU, offsets on the host); each result's POC /
  VAH / VAL go to torch as one [32, 3] tensor (``torch.from_dlpack(prof.levels)``, a zero-copy
  view; ``vpoc_as_tensor_s``: the view imported by ``vpoc.torch.as_tensor``; ``vpoc_stack_s``: the same from
  three columns and ``torch.stack``) and are dropped. Reports the mean wall time per call (the loop's time / calls, one synchronize at the
  end) against the same loop with ``torch_vec``, and ``driver_allocs_after_warmup``: the rise of
  ``memory_stats()["driver_allocs"] + ["driver_frees"]`` over the timed calls.
* ``ticks``           es_trades(50_000_000, 1014), float32 price / float32 volume on the GPU.
* ``ticks_500M_host`` 500 M trades (``--host-trades``) in pinned host memory (torch
  ``pin_memory``), ``memory_budget=256 MiB``: the 50 M sample tiled, each tile's prices
  shifted by 3 ticks per tile and its sessions kept apart (seconds to make, not minutes).

Peers, run in the same process on the same inputs (each computes per-session histograms and the
first-argmax POC; vpoc also computes the value area):

* ``numpy_vec``  (CPU) one ``np.bincount`` over a flattened (session, row) index
  (``bench_cpu.py``'s implementation; host copies of the inputs, float64 sums).
* ``torch_loop`` (bars only) a Python loop over sessions, per session the bars expanded over their
  ticks (``repeat_interleave``) and one weighted ``torch.bincount`` on the GPU.
* ``torch_vec``  dense ``[S, B]`` ``index_add_`` + ``argmax(1)`` on the GPU; uniform bars are first
  expanded over their ticks with ``repeat_interleave``; host inputs are copied to the GPU first
  (inside the timing).

Correctness first: vpoc's GPU result is compared with the vpoc CPU engine on the same data
(every field exact for integer-valued trade volumes; for uniform bars the layout exact, volumes
within 1e-9 relative and POC / value-area rows exact except where the CPU's decision sits within
rounding of a tie), and every peer's per-session low row, row count and maximum row volume with
vpoc's (1e-9 relative for float64 sums, 1e-5 for the torch peers' float32 sums). ``correct``
records the outcome per workload; everything is timed anyway.

Timing: ``torch.cuda.synchronize()`` before and after each call (vpoc works on its own stream),
best of k; the bandwidth ceilings are timed with CUDA events: ``copy_bw_Bps`` a device-to-device
copy of 1 GiB counting bytes read + written, ``h2d_bw_Bps`` a pinned 1 GiB host-to-device copy.
``peak_device_bytes`` is vpoc's ``memory_stats()["peak_bytes"]`` (workspace high-water mark of the
process so far) plus the result's bytes; ``peak_driver_delta_bytes`` is the largest rise of
device memory not held by torch (driver free memory sampled on a thread during the first call)
over the level before vpoc's first call.

Acceptance (issues 3 and 9) is printed as PASS/FAIL lines, not asserted. Exit status 1 when a workload
raised or disagrees with the CPU engine. JSON: ``$OUT/<gpu-name-slug>.json`` when ``$OUT`` is
set, else ``benchmarks/results/<gpu-name-slug>.json`` (``--out`` overrides).

Usage::

    python benchmarks/bench_gpu.py
    python benchmarks/bench_gpu.py --host-trades 100000000 --workloads ticks,ticks_500M_host
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import re
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
try:
    import vpoc
except ImportError:  # not installed: the source tree (an in-place build)
    sys.path.insert(0, str(REPO / "python"))
    import vpoc
import torch  # noqa: E402

from bench_cpu import bars_uniform_numpy_vec, trades_numpy_vec  # noqa: E402
from vpoc.synth import es_bars, es_trades  # noqa: E402

TICK = 0.25
MiB = 1 << 20
GiB = 1 << 30
BUDGET_500M = 256 * MiB
WORKLOADS = ("bars", "batch", "ticks", "ticks_side", "ticks_500M_host")
# the side fields ticks_side checks against the CPU and touches in every timed call
SIDE_CHECKED = ("buy_volume", "sell_volume", "delta", "delta_poc", "imbalance_buy", "imbalance_sell")
BATCH_SESSIONS, BATCH_BARS, BATCH_CALLS, BATCH_WARMUP = 32, 390, 1000, 50
FIELDS = ("poc", "vah", "val", "poc_row", "vah_row", "val_row", "low_row", "n_rows",
          "total_volume", "va_volume", "offsets", "volume")
ROWS = ("poc_row", "vah_row", "val_row", "poc", "vah", "val")


def log(msg: str = "") -> None:
    print(msg, flush=True)


# --------------------------------------------------------------------------------------
# timing and ceilings
# --------------------------------------------------------------------------------------
def timed(fn: Callable[[], Any], gpu: bool = True) -> Tuple[float, Any]:
    if gpu:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    r = fn()
    if gpu:
        torch.cuda.synchronize()
    return time.perf_counter() - t0, r


def best_of(fn: Callable[[], Any], k: int, gpu: bool = True,
            first: Optional[float] = None) -> float:
    """Best of ``k`` timed calls (results dropped outside the timed region); ``first``: a time
    already measured (the correctness run) that counts as one of them."""
    best = math.inf if first is None else first
    for _ in range(k - (first is not None)):
        dt, r = timed(fn, gpu)
        del r
        best = min(best, dt)
    return best


def event_time(fn: Callable[[], None], k: int) -> float:
    """Best of k CUDA-event timings (seconds) of fn, after two warm-up calls."""
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    best = math.inf
    for _ in range(k):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        best = min(best, a.elapsed_time(b) / 1e3)
    return best


def copy_bandwidth() -> float:
    src = torch.empty(GiB, dtype=torch.uint8, device="cuda").random_(0, 255)
    dst = torch.empty_like(src)
    t = event_time(lambda: dst.copy_(src), 10)
    del src, dst
    torch.cuda.empty_cache()
    return 2 * GiB / t


def h2d_bandwidth() -> float:
    src = torch.empty(GiB, dtype=torch.uint8, pin_memory=True)
    src.numpy()[:] = 7
    dst = torch.empty(GiB, dtype=torch.uint8, device="cuda")
    t = event_time(lambda: dst.copy_(src, non_blocking=True), 5)
    del src, dst
    torch.cuda.empty_cache()
    return GiB / t


class DriverMemory:
    """Device memory not held by torch's allocator (driver view): total - free - reserved.
    Use as a context manager to sample its peak on a thread while a call runs."""

    def __init__(self) -> None:
        self.total = torch.cuda.mem_get_info()[1]

    def other_used(self) -> int:
        free, total = torch.cuda.mem_get_info()
        return total - free - torch.cuda.memory_reserved()

    def __enter__(self) -> "DriverMemory":
        torch.cuda.synchronize()
        self.reserved = torch.cuda.memory_reserved()
        self.min_free = torch.cuda.mem_get_info()[0]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.min_free = min(self.min_free, torch.cuda.mem_get_info(0)[0])
            time.sleep(50e-6)

    def __exit__(self, *exc: Any) -> bool:
        torch.cuda.synchronize()
        self._stop.set()
        self._thread.join()
        self.min_free = min(self.min_free, torch.cuda.mem_get_info()[0])
        self.peak_other = self.total - self.min_free - self.reserved
        return False


# --------------------------------------------------------------------------------------
# vpoc result checks
# --------------------------------------------------------------------------------------
def out_bytes(prof: Any) -> int:
    return sum(int(getattr(prof, k).nbytes) for k in FIELDS)


def host_fields(prof: Any) -> Dict[str, np.ndarray]:
    h = prof.cpu() if getattr(prof, "device", "cpu") != "cpu" else prof
    return {k: np.asarray(getattr(h, k)) for k in FIELDS}


def _differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise a != b, NaN equal to NaN."""
    same = a == b
    if a.dtype.kind == "f":
        same |= np.isnan(a) & np.isnan(b)
    return ~same


def compare_vpoc(g: Dict[str, np.ndarray], c: Dict[str, np.ndarray], exact: bool,
                 ) -> List[str]:
    """GPU fields g vs CPU fields c; a list of problems (empty: equal)."""
    errs: List[str] = []
    for k in FIELDS:
        if g[k].shape != c[k].shape or g[k].dtype != c[k].dtype:
            return [f"{k}: GPU {g[k].dtype}{g[k].shape} vs CPU {c[k].dtype}{c[k].shape}"]
    if exact:
        for k in FIELDS:
            bad = _differ(g[k], c[k])
            if np.any(bad):
                i = int(np.flatnonzero(bad)[0])
                errs.append(f"{k} differs at {i}: GPU {g[k][i].item()!r} vs CPU "
                            f"{c[k][i].item()!r} ({int(bad.sum())} entries)")
        return errs
    for k in ("n_rows", "low_row", "offsets"):
        if not np.array_equal(g[k], c[k]):
            errs.append(f"{k} differs")
    if errs:
        return errs
    for k in ("volume", "total_volume"):
        if not np.allclose(g[k], c[k], rtol=1e-9, atol=0):
            bad = ~np.isclose(g[k], c[k], rtol=1e-9, atol=0)
            i = int(np.flatnonzero(bad)[0])
            errs.append(f"{k} beyond 1e-9 relative at {i}: GPU {g[k][i].item()!r} vs CPU "
                        f"{c[k][i].item()!r} "
                        f"({int(bad.sum())} entries)")
    differ = ~np.isclose(g["va_volume"], c["va_volume"], rtol=1e-9, atol=0)
    for k in ROWS:
        differ |= _differ(g[k], c[k])
    if np.any(differ):
        sys.path.insert(0, str(REPO / "tests"))
        from reference import profile_stats  # the NumPy reference's rules, for 'fragile'

        off = c["offsets"]
        for s in np.flatnonzero(differ):
            st = profile_stats(c["volume"][off[s]:off[s + 1]], int(c["low_row"][s]),
                               value_area=0.70, va_method="cbot", poc_tie="center",
                               total=float(c["total_volume"][s]))
            if not st["fragile"]:
                errs.append(f"session {s}: GPU poc/val/vah rows {g['poc_row'][s]}/"
                            f"{g['val_row'][s]}/{g['vah_row'][s]} va "
                            f"{float(g['va_volume'][s])!r} vs CPU "
                            f"{c['poc_row'][s]}/{c['val_row'][s]}/{c['vah_row'][s]} va "
                            f"{float(c['va_volume'][s])!r} (not a near-tie)")
                if len(errs) > 5:
                    break
    return errs


class PeerSummary:
    """What the peers are compared on: per-session low row, row count, maximum row volume."""

    def __init__(self, low: np.ndarray, n_rows: np.ndarray, vmax: np.ndarray) -> None:
        self.low, self.n_rows, self.vmax = low, n_rows, vmax


def vpoc_summary(c: Dict[str, np.ndarray]) -> PeerSummary:
    n_rows = c["n_rows"]
    ne = n_rows > 0
    vmax = np.zeros(n_rows.shape[0])
    if c["volume"].size:
        vmax[ne] = np.maximum.reduceat(c["volume"], c["offsets"][:-1][ne])
    return PeerSummary(c["low_row"], n_rows, vmax)


def check_peer(name: str, got: PeerSummary, ref: PeerSummary, rtol: float) -> List[str]:
    ne = ref.n_rows > 0
    if got.n_rows.shape != ref.n_rows.shape:
        return [f"{name}: {got.n_rows.shape[0]} sessions, vpoc {ref.n_rows.shape[0]}"]
    errs = []
    for what, a, b in (("n_rows", got.n_rows[ne], ref.n_rows[ne]),
                       ("low", got.low[ne], ref.low[ne])):
        if not np.array_equal(a, b):
            i = int(np.flatnonzero(a != b)[0])
            errs.append(f"{name}: {what} differs at non-empty session #{i}: {a[i]} vs vpoc {b[i]}")
    if not errs:
        bad = ~np.isclose(got.vmax[ne], ref.vmax[ne], rtol=rtol, atol=0)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            errs.append(f"{name}: max row volume differs at non-empty session #{i}: "
                        f"{float(got.vmax[ne][i])!r} vs vpoc {float(ref.vmax[ne][i])!r} "
                        f"({int(bad.sum())} sessions)")
    return errs


def summary_numpy(res: Any) -> PeerSummary:  # bench_cpu.PeerResult, dense [S, B] float64
    vmax = res.hist.max(axis=1) if res.hist.shape[1] else np.zeros(res.hist.shape[0])
    return PeerSummary(res.low, res.n_rows, vmax)


def summary_torch_vec(res: Tuple[Any, Any, Any, Any]) -> PeerSummary:
    lo, nr, dense, _ = res
    vmax = dense.max(dim=1).values if dense.shape[1] else torch.zeros(dense.shape[0])
    return PeerSummary(lo.cpu().numpy(), nr.cpu().numpy(), vmax.double().cpu().numpy())


def summary_torch_loop(res: Tuple[list, list], S: int) -> PeerSummary:
    hists, _ = res
    low = np.zeros(S, np.int64)
    n_rows = np.zeros(S, np.int64)
    vmax = np.zeros(S)
    for s, item in enumerate(hists):
        if item is not None:
            lo, h = item
            low[s], n_rows[s], vmax[s] = int(lo), h.shape[0], float(h.max())
    return PeerSummary(low, n_rows, vmax)


# --------------------------------------------------------------------------------------
# torch peers
# --------------------------------------------------------------------------------------
_BIG = 2**62


def _session_ids(offsets_dev: Any, n: int) -> Any:
    counts = offsets_dev[1:] - offsets_dev[:-1]
    S = counts.shape[0]
    return torch.repeat_interleave(torch.arange(S, device="cuda"), counts, output_size=n), counts


def _dense(seg: Any, counts: Any, t_lo: Any, t_hi: Any, ticks: Any, seg_ticks: Any, w: Any,
           S: int) -> Tuple[Any, Any, Any, Any]:
    lo = torch.full((S,), _BIG, dtype=torch.int64, device="cuda").scatter_reduce_(
        0, seg, t_lo, "amin")
    hi = torch.full((S,), -_BIG, dtype=torch.int64, device="cuda").scatter_reduce_(
        0, seg, t_hi, "amax")
    empty = counts == 0
    lo = torch.where(empty, 0, lo)
    hi = torch.where(empty, -1, hi)
    nr = hi - lo + 1
    B = int(nr.max()) if S else 0
    idx = seg_ticks * B + (ticks - lo[seg_ticks])
    dense = torch.zeros(S * B, dtype=w.dtype, device="cuda").index_add_(0, idx, w).view(S, B)
    poc = dense.argmax(1) + lo if B else lo.clone()
    return lo, nr, dense, poc


def trades_torch_vec(price: Any, volume: Any, offsets_dev: Any) -> Tuple[Any, Any, Any, Any]:
    if not price.is_cuda:  # host inputs: to the GPU first
        price = price.to("cuda", non_blocking=True)
        volume = volume.to("cuda", non_blocking=True)
    n = price.shape[0]
    seg, counts = _session_ids(offsets_dev, n)
    t = torch.round(price / TICK).to(torch.int64)
    return _dense(seg, counts, t, t, t, seg, volume, counts.shape[0])


def bars_uniform_torch_vec(high: Any, low: Any, volume: Any, offsets_dev: Any
                           ) -> Tuple[Any, Any, Any, Any]:
    n = high.shape[0]
    seg, counts = _session_ids(offsets_dev, n)
    tl = torch.round(low / TICK).to(torch.int64)
    th = torch.round(high / TICK).to(torch.int64)
    k = th - tl + 1
    total = int(k.sum())
    bar = torch.repeat_interleave(torch.arange(n, device="cuda"), k, output_size=total)
    start = torch.cumsum(k, 0) - k
    ticks = tl[bar] + (torch.arange(total, device="cuda") - start[bar])
    w = (volume / k)[bar]
    return _dense(seg, counts, tl, th, ticks, seg[bar], w, counts.shape[0])


def bars_uniform_torch_loop(high: Any, low: Any, volume: Any, offsets_host: np.ndarray
                            ) -> Tuple[list, list]:
    hists: list = []
    pocs: list = []
    for s in range(offsets_host.shape[0] - 1):
        a, b = int(offsets_host[s]), int(offsets_host[s + 1])
        if a == b:
            hists.append(None)
            continue
        tl = torch.round(low[a:b] / TICK).to(torch.int64)
        th = torch.round(high[a:b] / TICK).to(torch.int64)
        k = th - tl + 1
        bar = torch.repeat_interleave(k)
        start = torch.cumsum(k, 0) - k
        ticks = tl[bar] + (torch.arange(bar.shape[0], device="cuda") - start[bar])
        lo = tl.min()
        h = torch.bincount(ticks - lo, weights=(volume[a:b] / k)[bar])
        hists.append((lo, h))
        pocs.append(lo + h.argmax())
    return hists, pocs


def device_time_per_call(fn: Callable[[int], Any], calls: int) -> Optional[float]:
    """Seconds of GPU activity (kernels, copies, memsets) per call of ``fn`` (torch.profiler, CUDA
    activities only), or None when the profiler gives no device times."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for k in range(calls):
            out = fn(k)
            del out
        torch.cuda.synchronize()
    us = 0.0
    for e in prof.key_averages():
        dev = getattr(e, "self_device_time_total", None)
        us += dev if dev is not None else getattr(e, "self_cuda_time_total", 0)
    return us / calls * 1e-6 if us > 0 else None


# --------------------------------------------------------------------------------------
# batch: the training-loop workload
# --------------------------------------------------------------------------------------
def run_batch(calls: int, seed: int) -> Dict[str, Any]:
    """Many small calls, results consumed by torch and dropped: latency and driver allocations."""
    S, nb = BATCH_SESSIONS, BATCH_BARS
    log(f"\n[batch] {S} sessions x {nb} bars per call, {calls} calls")
    r: Dict[str, Any] = {"rows": S * nb, "sessions_per_call": S, "calls": calls}
    errors: List[str] = []
    host, dev = [], []
    for k in range(8):
        b = es_bars(S, nb, seed=seed + 1000 + k)
        arrs = tuple(x.astype(np.float32) for x in (b.high, b.low, b.close, b.volume))
        host.append((arrs, b.offsets.astype(np.int64)))
        dev.append(tuple(torch.from_numpy(x).cuda() for x in arrs))
    off = host[0][1]
    assert all(np.array_equal(o, off) for _, o in host)
    off_dev = torch.from_numpy(off).cuda()
    r["input_bytes"] = sum(x.nbytes for x in host[0][0]) + off.nbytes

    def vpoc_call(k: int) -> Any:  # the [S, 3] levels view: one DLPack import, no stack kernel
        H, L, C, V = dev[k % 8]
        prof = vpoc.from_bars(H, L, C, V, offsets=off, tick_size=TICK, distribute="uniform",
                              device="cuda")
        return torch.from_dlpack(prof.levels)

    try:
        from vpoc.torch import as_tensor
    except ImportError:  # an older tree (a baseline): no vpoc.torch.as_tensor
        as_tensor = None

    def vpoc_call_as_tensor(k: int) -> Any:  # the same view imported by vpoc.torch.as_tensor
        H, L, C, V = dev[k % 8]
        prof = vpoc.from_bars(H, L, C, V, offsets=off, tick_size=TICK, distribute="uniform",
                              device="cuda")
        return as_tensor(prof.levels)

    def vpoc_call_stack(k: int) -> Any:  # the same features from three columns and torch.stack
        H, L, C, V = dev[k % 8]
        prof = vpoc.from_bars(H, L, C, V, offsets=off, tick_size=TICK, distribute="uniform",
                              device="cuda")
        return torch.stack([torch.from_dlpack(prof.poc), torch.from_dlpack(prof.vah),
                            torch.from_dlpack(prof.val)], 1)

    def torch_call(k: int) -> Any:
        H, L, C, V = dev[k % 8]
        return bars_uniform_torch_vec(H, L, V, off_dev)

    try:  # correctness first: every distinct batch against the CPU engine
        for k in range(8):
            (h, lo, c, v), o = host[k]
            cpu = host_fields(vpoc.from_bars(h, lo, c, v, offsets=o, tick_size=TICK,
                                             distribute="uniform"))
            H, L, C, V = dev[k]
            g = host_fields(vpoc.from_bars(H, L, C, V, offsets=o, tick_size=TICK,
                                           distribute="uniform", device="cuda"))
            errors += [f"batch {k}: {e}" for e in compare_vpoc(g, cpu, exact=False)]
            for fn in (vpoc_call, vpoc_call_stack) + ((vpoc_call_as_tensor,) if as_tensor else ()):
                feats = fn(k).cpu().numpy()
                if not np.array_equal(feats, np.stack([g["poc"], g["vah"], g["val"]], 1)):
                    errors.append(f"batch {k}: torch.from_dlpack features ({fn.__name__}) differ "
                                  "from the result")
            errors += check_peer("torch_vec", summary_torch_vec(torch_call(k)), vpoc_summary(cpu),
                                 1e-5)
        log(f"  check vpoc GPU vs CPU engine and torch_vec: {'ok' if not errors else 'MISMATCH'}")
    except Exception as e:
        errors.append(f"raised {type(e).__name__}: {e}")
        log(traceback.format_exc())

    def loop(fn: Callable[[int], Any], n: int) -> float:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for k in range(n):
            out = fn(k)
            del out
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / n

    try:
        loop(vpoc_call, BATCH_WARMUP)
        gc.collect()
        s0 = vpoc.memory_stats()
        per_call = min(loop(vpoc_call, calls) for _ in range(3))
        gc.collect()
        s1 = vpoc.memory_stats()
        r["vpoc_s"] = per_call
        r["driver_allocs_after_warmup"] = int(s1["driver_allocs"] - s0["driver_allocs"])
        r["driver_frees_after_warmup"] = int(s1["driver_frees"] - s0["driver_frees"])
        r["pool_hits"] = int(s1["pool_hits"] - s0["pool_hits"])
        r["pool_bytes"] = int(s1["pool_bytes"])
        log(f"  vpoc {per_call * 1e6:.1f} us per call; driver allocs/frees after warm-up "
            f"{r['driver_allocs_after_warmup']}/{r['driver_frees_after_warmup']}, pool hits "
            f"{r['pool_hits']}, pool {r['pool_bytes'] / MiB:.1f} MiB")
        # The GPU time of a call's kernels (and copies), same run: torch.profiler over the same loop;
        # wall / kernels is issue 24's "within 2x of its kernel time".
        r["kernels_s"] = device_time_per_call(vpoc_call, 50)
        if r["kernels_s"]:
            r["wall_over_kernels"] = per_call / r["kernels_s"]
            log(f"  kernels {r['kernels_s'] * 1e6:.1f} us per call (torch.profiler): wall / kernels "
                f"{r['wall_over_kernels']:.2f}")
        # The same calls imported by vpoc.torch.as_tensor (torch.from_dlpack's current_stream() skipped).
        if as_tensor is not None:
            loop(vpoc_call_as_tensor, 50)
            r["vpoc_as_tensor_s"] = min(loop(vpoc_call_as_tensor, calls) for _ in range(3))
            log(f"  imported by vpoc.torch.as_tensor: {r['vpoc_as_tensor_s'] * 1e6:.1f} us per call")
        # The same calls consumed as three columns + torch.stack (the way before Profiles.levels).
        loop(vpoc_call_stack, 50)
        r["vpoc_stack_s"] = min(loop(vpoc_call_stack, calls) for _ in range(3))
        log(f"  consumed as three columns + torch.stack: {r['vpoc_stack_s'] * 1e6:.1f} us per call")
        # The machine's floor for a call: one tiny torch kernel per iteration, same loop.
        one = torch.zeros(1, device="cuda")
        loop(lambda k: one.add_(1), 100)
        r["launch_floor_s"] = loop(lambda k: one.add_(1), calls)
        log(f"  launch floor (one torch.add_ on 1 element per iteration) "
            f"{r['launch_floor_s'] * 1e6:.1f} us: a vpoc call is "
            f"{per_call / r['launch_floor_s']:.1f} such launches")
        loop(torch_call, 20)
        r["torch_vec_s"] = loop(torch_call, max(100, calls // 5))
        r["speedup_vs_torch_vec"] = r["torch_vec_s"] / per_call
        log(f"  torch_vec {r['torch_vec_s'] * 1e6:.1f} us per call "
            f"({r['speedup_vs_torch_vec']:.1f}x)")
    except Exception as e:
        errors.append(f"raised {type(e).__name__}: {e}")
        log(traceback.format_exc())
    r["correct"] = not errors
    if errors:
        r["errors"] = errors[:20]
        for e in errors[:20]:
            log(f"  ERROR {e}")
    return r


# --------------------------------------------------------------------------------------
# ticks_side: the ticks workload with an aggressor side per trade
# --------------------------------------------------------------------------------------
def run_ticks_side(tr: Any, args: Any, off_arg: Callable[[np.ndarray], Any], mem: Any, base_other: int,
                   h2d_bw: float, copy_bw: float) -> Dict[str, Any]:
    """from_trades(side=) on the ticks data (45% buyer-, 45% seller-initiated, 10% unknown), every side
    field touched per call; correctness: the GPU side fields equal the CPU's exactly (whole volumes)."""
    p, v, off = tr.price, tr.volume, tr.offsets.astype(np.int64)
    rng = np.random.default_rng(args.seed + 7)
    side = rng.choice(np.array([1, -1, 0], np.int8), size=p.shape[0], p=[0.45, 0.45, 0.10])
    P, V, SD = torch.from_numpy(p).cuda(), torch.from_numpy(v).cuda(), torch.from_numpy(side).cuda()
    voff = off_arg(off)

    def touched(prof: Any) -> Any:
        for name in SIDE_CHECKED:
            getattr(prof, name)
        return prof

    t0 = time.perf_counter()
    cpu_prof = vpoc.from_trades(p, v, offsets=off, tick_size=TICK, side=side)
    cpu = host_fields(cpu_prof)
    cpu_side = {k: np.asarray(getattr(cpu_prof, k)) for k in SIDE_CHECKED}
    log(f"\n[ticks_side] CPU side reference: {time.perf_counter() - t0:.1f}s")
    del cpu_prof
    r = run_workload(
        "ticks_side", rows=p.shape[0], input_bytes=p.nbytes + v.nbytes + side.nbytes + off.nbytes,
        vpoc_fn=lambda: touched(vpoc.from_trades(P, V, offsets=voff, tick_size=TICK, device="cuda", side=SD)),
        cpu_fields=cpu, exact=True, peers={}, k_vpoc=args.repeat, mem=mem, base_other=base_other,
        host_streamed=False, h2d_bw=h2d_bw, copy_bw=copy_bw)
    try:
        g = vpoc.from_trades(P, V, offsets=voff, tick_size=TICK, device="cuda", side=SD).cpu()
        bad = [k for k in SIDE_CHECKED
               if not np.array_equal(np.asarray(getattr(g, k)), cpu_side[k], equal_nan=True)]
        log(f"  check side fields GPU vs CPU: {'ok' if not bad else 'MISMATCH ' + ', '.join(bad)}")
        if bad:
            r["correct"] = False
            r.setdefault("errors", []).append(f"side fields differ: {bad}")
    except Exception as e:  # recorded, the run goes on
        r["correct"] = False
        r.setdefault("errors", []).append(f"side check raised {type(e).__name__}: {e}")
        log(traceback.format_exc())
    r.update(price_dtype="float32", volume_dtype="float32", side_dtype="int8")
    return r


# --------------------------------------------------------------------------------------
# one workload
# --------------------------------------------------------------------------------------
def bars_developing(h: np.ndarray, lo: np.ndarray, c: np.ndarray, v: np.ndarray, off: np.ndarray,
                    H: Any, L: Any, C: Any, V: Any, voff: Any, k: int,
                    plain_s: Optional[float]) -> Dict[str, Any]:
    """developing=True on the bars workload: equal to the CPU pass (same core code), and its time
    against the plain profile's."""
    r: Dict[str, Any] = {}
    try:
        cpu = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=TICK, distribute="uniform",
                             developing=True)
        run = lambda: vpoc.from_bars(H, L, C, V, offsets=voff, tick_size=TICK,  # noqa: E731
                                     distribute="uniform", device="cuda", developing=True)
        t_first, prof = timed(run)
        same = all(np.array_equal(np.asarray(getattr(prof, f)), getattr(cpu, f))
                   for f in ("dev_poc", "dev_vah", "dev_val"))
        log(f"  check developing GPU vs CPU pass: {'ok' if same else 'MISMATCH'}")
        del prof
        r["developing_s"] = best_of(run, k)
        r["developing_correct"] = same
        t0 = time.perf_counter()
        vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=TICK, distribute="uniform",
                       developing=True)
        r["developing_cpu_s"] = time.perf_counter() - t0
        if plain_s:
            r["developing_ratio"] = r["developing_s"] / plain_s
        log(f"  developing {r['developing_s'] * 1e3:.3f} ms (first call {t_first * 1e3:.1f} ms, "
            f"{r.get('developing_ratio', 0):.2f}x the plain profile; CPU pass "
            f"{r['developing_cpu_s'] * 1e3:.0f} ms)")
    except Exception as e:  # recorded, the run goes on
        r["developing_correct"] = False
        r["developing_error"] = f"{type(e).__name__}: {e}"
        log(traceback.format_exc())
    return r


def run_workload(name: str, *, rows: int, input_bytes: int, vpoc_fn: Callable[[], Any],
                 cpu_fields: Dict[str, np.ndarray], exact: bool,
                 peers: Dict[str, Tuple[Callable[[], Any], Callable[[Any], PeerSummary], float,
                                        bool, int]],
                 k_vpoc: int, mem: DriverMemory, base_other: int, host_streamed: bool,
                 h2d_bw: float, copy_bw: float) -> Dict[str, Any]:
    """peers: name -> (run, summarize, rtol, on_gpu, repeats)."""
    log(f"\n[{name}] rows={rows:,} input={input_bytes / 1e6:.1f} MB")
    r: Dict[str, Any] = {"rows": rows, "input_bytes": input_bytes}
    errors: List[str] = []
    # --- vpoc: correctness run (also the memory-sampled run), then timings
    try:
        with mem as m:
            t_first, prof = timed(vpoc_fn)
        r["peak_driver_delta_bytes"] = int(m.peak_other - base_other)
        ob = out_bytes(prof)
        stats = vpoc.memory_stats("cuda:0")
        r["output_bytes"] = ob
        r["peak_device_bytes"] = int(stats["peak_bytes"]) + ob
        r["memory_stats"] = stats
        g = host_fields(prof)
        errs = compare_vpoc(g, cpu_fields, exact)
        log(f"  check vpoc GPU vs CPU engine: {'ok' if not errs else 'MISMATCH'} "
            f"({'exact' if exact else '1e-9 relative'})")
        errors += [f"vpoc: {e}" for e in errs]
        del prof, g
        r["vpoc_first_call_s"] = t_first
        r["vpoc_s"] = best_of(vpoc_fn, k_vpoc)
        log(f"  vpoc {r['vpoc_s'] * 1e3:.3f} ms (first call {t_first * 1e3:.1f} ms)")
    except Exception as e:  # recorded, the run goes on
        errors.append(f"vpoc raised {type(e).__name__}: {e}")
        log(traceback.format_exc())
    ref = vpoc_summary(cpu_fields)
    # --- peers
    for pname, (run, summarize, rtol, on_gpu, k) in peers.items():
        try:
            if on_gpu:
                torch.cuda.reset_peak_memory_stats()
                base_alloc = torch.cuda.memory_allocated()
            t1, res = timed(run, on_gpu)
            perrs = check_peer(pname, summarize(res), ref, rtol)
            del res
            errors += perrs
            log(f"  check {pname}: {'ok' if not perrs else 'MISMATCH'}")
            s = best_of(run, k, on_gpu, first=t1 if not on_gpu or k == 1 else None)
            r[f"{pname}_s"] = s
            if on_gpu:
                r[f"{pname}_peak_gpu_bytes"] = int(torch.cuda.max_memory_allocated() - base_alloc)
                torch.cuda.empty_cache()
            log(f"  {pname} {s * 1e3:.2f} ms")
        except Exception as e:
            errors.append(f"{pname} raised {type(e).__name__}: {e}")
            log(traceback.format_exc())
            torch.cuda.empty_cache()
    # --- ratios
    v = r.get("vpoc_s")
    if v:
        for pname in peers:
            if f"{pname}_s" in r:
                r[f"speedup_vs_{pname}"] = r[f"{pname}_s"] / v
        r["bw_fraction"] = input_bytes / v / copy_bw
        if host_streamed:
            r["h2d_fraction"] = input_bytes / v / h2d_bw
    r["correct"] = not errors
    if errors:
        r["errors"] = errors
        for e in errors:
            log(f"  ERROR {e}")
    return r


# --------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------
def tile_pinned(p: np.ndarray, v: np.ndarray, off: np.ndarray, n: int
                ) -> Tuple[Any, Any, np.ndarray]:
    """n trades in pinned host memory: copies of (p, v) with prices shifted 3 ticks per tile;
    each tile keeps its own sessions (cut where a tile ends)."""
    P = torch.empty(n, dtype=torch.float32, pin_memory=True)
    V = torch.empty(n, dtype=torch.float32, pin_memory=True)
    pn, vn = P.numpy(), V.numpy()
    cuts = [np.zeros(1, np.int64)]
    pos, tile, base = 0, 0, p.shape[0]
    inner = off[1:-1]
    while pos < n:
        m = min(base, n - pos)
        np.add(p[:m], np.float32(3 * TICK * tile), out=pn[pos:pos + m])
        vn[pos:pos + m] = v[:m]
        cuts.append(pos + inner[inner < m])
        cuts.append(np.array([pos + m], np.int64))
        pos += m
        tile += 1
    return P, V, np.concatenate(cuts).astype(np.int64)


def gpu_name() -> str:
    return torch.cuda.get_device_name(0)


def slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-") or "gpu"


def git_commit() -> Optional[str]:
    env = os.environ.get("VPOC_GIT_COMMIT")
    if env:
        return env
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=False)
        return out.stdout.strip() or None if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


# --------------------------------------------------------------------------------------
# acceptance
# --------------------------------------------------------------------------------------
def acceptance(res: Dict[str, Dict[str, Any]], h2d: float) -> List[Dict[str, Any]]:
    out = []

    def check(label: str, ok: Optional[bool], shown: str) -> None:
        status = "PASS" if ok else "FAIL"
        log(f"{status} {label}: {shown}")
        out.append({"check": label, "status": status, "value": shown})

    def g(wl: str, key: str) -> Optional[float]:
        return res.get(wl, {}).get(key)

    for wl in WORKLOADS:
        if wl in res:
            check(f"{wl} correct (vpoc GPU == CPU engine, peers agree)", res[wl].get("correct"),
                  str(res[wl].get("correct")))
    if "ticks" in res:
        x = g("ticks", "speedup_vs_torch_vec")
        check("ticks vpoc >= 50x torch_vec", x is not None and x >= 50, f"{x or 0:.1f}x")
        x = g("ticks", "bw_fraction")
        check("ticks bw_fraction >= 0.30", x is not None and x >= 0.30, f"{x or 0:.4f}")
    if "ticks_side" in res:
        x = g("ticks_side", "bytes_per_s_vs_ticks")
        check("ticks_side bytes/s >= 0.8 of ticks'", x is not None and x >= 0.8, f"{x or 0:.2f}")
    if "bars" in res:
        v = g("bars", "vpoc_s")
        check("bars vpoc <= 0.10 ms per call", v is not None and v <= 0.10e-3,
              f"{(v or 0) * 1e3:.3f} ms")
        x = g("bars", "speedup_vs_torch_vec")
        check("bars vpoc >= 12x torch_vec", x is not None and x >= 12, f"{x or 0:.1f}x")
        x = g("bars", "speedup_vs_torch_loop")
        check("bars vpoc >= 200x torch_loop", x is not None and x >= 200, f"{x or 0:.1f}x")
        check("bars developing GPU == CPU", g("bars", "developing_correct"),
              str(g("bars", "developing_correct")))
        x = g("bars", "developing_ratio")
        check("bars developing <= 5x plain profile", x is not None and x <= 5, f"{x or 0:.2f}x")
    if "batch" in res:
        v = g("batch", "vpoc_s")
        check("batch <= 30 us per call", v is not None and v <= 30e-6, f"{(v or 0) * 1e6:.1f} us")
        a, f = g("batch", "driver_allocs_after_warmup"), g("batch", "driver_frees_after_warmup")
        check("batch 0 driver allocations / frees after warm-up", a == 0 and f == 0, f"{a}/{f}")
        w = g("batch", "wall_over_kernels")
        check("batch within 2x of its kernel time", w is not None and w <= 2, f"{w or 0:.2f}x")
    if "ticks_500M_host" in res:
        r = res["ticks_500M_host"]
        v = r.get("vpoc_s")
        limit = 1.3 * r["input_bytes"] / h2d if h2d else None
        check("ticks_500M_host wall <= 1.3 x input_bytes / h2d_bw",
              v is not None and limit is not None and v <= limit,
              f"{(v or 0) * 1e3:.1f} ms vs limit {(limit or 0) * 1e3:.1f} ms")
        p, ob = r.get("peak_device_bytes"), r.get("output_bytes", 0)
        check("ticks_500M_host peak_device_bytes <= 256 MiB + outputs",
              p is not None and p <= BUDGET_500M + ob,
              f"{(p or 0) / MiB:.1f} MiB vs limit {(BUDGET_500M + ob) / MiB:.1f} MiB "
              f"(driver delta {r.get('peak_driver_delta_bytes', 0) / MiB:.1f} MiB)")
    return out


# --------------------------------------------------------------------------------------
def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--sessions", type=int, default=1014)
    ap.add_argument("--bars", type=int, default=1380, help="bars per session")
    ap.add_argument("--ticks", type=int, default=50_000_000)
    ap.add_argument("--host-trades", type=int, default=500_000_000,
                    help="trades of ticks_500M_host (default 500M)")
    ap.add_argument("--batch-calls", type=int, default=BATCH_CALLS,
                    help="timed calls of the batch workload")
    ap.add_argument("--repeat", type=int, default=10, help="timed vpoc calls (best kept)")
    ap.add_argument("--device-offsets", action="store_true",
                    help="pass vpoc the offsets as a GPU tensor (default: host numpy)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    wls = [w.strip() for w in args.workloads.split(",") if w.strip()]
    for w in wls:
        if w not in WORKLOADS:
            ap.error(f"unknown workload {w!r}")
    if not torch.cuda.is_available() or not getattr(vpoc, "gpu_available", lambda: False)():
        log("bench_gpu: needs torch with a GPU and a GPU build of vpoc "
            f"(vpoc backends {vpoc.backends()}, torch.cuda.is_available() "
            f"{torch.cuda.is_available()})")
        return 2
    t_start = time.perf_counter()
    name = gpu_name()
    log(f"device: {name}; torch {torch.__version__}; vpoc {vpoc.__version__} {vpoc.backends()}")
    torch.zeros(1, device="cuda")
    copy_bw = copy_bandwidth()
    h2d_bw = h2d_bandwidth()
    log(f"copy_bw {copy_bw / 1e12:.2f} TB/s (read+write), pinned h2d {h2d_bw / 1e9:.1f} GB/s")
    mem = DriverMemory()
    torch.cuda.synchronize()
    base_other = mem.other_used()
    results: Dict[str, Dict[str, Any]] = {}
    S = args.sessions

    def off_arg(off: np.ndarray) -> Any:
        return torch.from_numpy(off).cuda() if args.device_offsets else off

    # ---------------------------------------------------------------- bars
    if "bars" in wls:
        t0 = time.perf_counter()
        b = es_bars(S, args.bars, seed=args.seed)
        h, lo, c = (x.astype(np.float32) for x in (b.high, b.low, b.close))
        v = b.volume.astype(np.float32)
        off = b.offsets.astype(np.int64)
        assert np.array_equal(h, b.high) and np.array_equal(v, b.volume), "float32 not exact"
        log(f"es_bars({S}, {args.bars}): {time.perf_counter() - t0:.1f}s")
        H, L, C, V = (torch.from_numpy(x).cuda() for x in (h, lo, c, v))
        off_dev = torch.from_numpy(off).cuda()
        voff = off_arg(off)
        cpu = host_fields(vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=TICK,
                                         distribute="uniform"))
        nbytes = sum(x.nbytes for x in (h, lo, c, v)) + off.nbytes
        results["bars"] = run_workload(
            "bars", rows=h.shape[0], input_bytes=nbytes,
            vpoc_fn=lambda: vpoc.from_bars(H, L, C, V, offsets=voff, tick_size=TICK,
                                           distribute="uniform", device="cuda"),
            cpu_fields=cpu, exact=False,
            peers={
                "numpy_vec": (lambda: bars_uniform_numpy_vec(h, lo, c, v, off), summary_numpy,
                              1e-9, False, 3),
                "torch_loop": (lambda: bars_uniform_torch_loop(H, L, V, off),
                               lambda r: summary_torch_loop(r, S), 1e-5, True, 3),
                "torch_vec": (lambda: bars_uniform_torch_vec(H, L, V, off_dev), summary_torch_vec,
                              1e-5, True, 10),
            },
            k_vpoc=args.repeat, mem=mem, base_other=base_other, host_streamed=False,
            h2d_bw=h2d_bw, copy_bw=copy_bw)
        results["bars"].update(distribute="uniform", price_dtype="float32", volume_dtype="float32",
                               vpoc_offsets="device" if args.device_offsets else "host")
        results["bars"].update(bars_developing(h, lo, c, v, off, H, L, C, V, voff, args.repeat,
                                               results["bars"].get("vpoc_s")))
        del b, H, L, C, V, off_dev, voff, cpu
        torch.cuda.empty_cache()

    # ---------------------------------------------------------------- batch
    if "batch" in wls:
        results["batch"] = run_batch(args.batch_calls, args.seed)

    # ---------------------------------------------------------------- ticks (and the 500M sample)
    tr = None
    if "ticks" in wls or "ticks_side" in wls or "ticks_500M_host" in wls:
        t0 = time.perf_counter()
        tr = es_trades(args.ticks, S, seed=args.seed, price_dtype=np.float32,
                       volume_dtype=np.float32)
        log(f"\nes_trades({args.ticks:,}, {S}): {time.perf_counter() - t0:.1f}s")
    if "ticks" in wls:
        p, v, off = tr.price, tr.volume, tr.offsets.astype(np.int64)
        P, V = torch.from_numpy(p).cuda(), torch.from_numpy(v).cuda()
        off_dev = torch.from_numpy(off).cuda()
        voff = off_arg(off)
        cpu = host_fields(vpoc.from_trades(p, v, offsets=off, tick_size=TICK))
        results["ticks"] = run_workload(
            "ticks", rows=p.shape[0], input_bytes=p.nbytes + v.nbytes + off.nbytes,
            vpoc_fn=lambda: vpoc.from_trades(P, V, offsets=voff, tick_size=TICK, device="cuda"),
            cpu_fields=cpu, exact=True,
            peers={
                "numpy_vec": (lambda: trades_numpy_vec(p, v, off), summary_numpy, 1e-9, False, 2),
                "torch_vec": (lambda: trades_torch_vec(P, V, off_dev), summary_torch_vec, 1e-5,
                              True, 5),
            },
            k_vpoc=args.repeat, mem=mem, base_other=base_other, host_streamed=False,
            h2d_bw=h2d_bw, copy_bw=copy_bw)
        results["ticks"].update(price_dtype="float32", volume_dtype="float32",
                                vpoc_offsets="device" if args.device_offsets else "host")
        del P, V, off_dev, voff, cpu
        torch.cuda.empty_cache()

    # ---------------------------------------------------------------- ticks_side
    if "ticks_side" in wls:
        results["ticks_side"] = run_ticks_side(tr, args, off_arg, mem, base_other, h2d_bw, copy_bw)
        if "ticks" in results and results["ticks_side"].get("vpoc_s") and results["ticks"].get("vpoc_s"):
            a, b = results["ticks_side"], results["ticks"]
            a["bytes_per_s"] = a["input_bytes"] / a["vpoc_s"]
            a["bytes_per_s_vs_ticks"] = a["bytes_per_s"] / (b["input_bytes"] / b["vpoc_s"])
            log(f"  ticks_side {a['bytes_per_s'] / 1e9:.1f} GB/s = {a['bytes_per_s_vs_ticks']:.2f} of the plain "
                "ticks workload's")
        torch.cuda.empty_cache()

    # ---------------------------------------------------------------- ticks_500M_host
    if "ticks_500M_host" in wls:
        t0 = time.perf_counter()
        P, V, off = tile_pinned(tr.price, tr.volume, tr.offsets.astype(np.int64), args.host_trades)
        log(f"\n{args.host_trades:,} pinned host trades ({off.shape[0] - 1} sessions): "
            f"{time.perf_counter() - t0:.1f}s")
        del tr
        tr = None
        pn, vn = P.numpy(), V.numpy()
        off_dev = torch.from_numpy(off).cuda()
        t0 = time.perf_counter()
        cpu = host_fields(vpoc.from_trades(pn, vn, offsets=off, tick_size=TICK))
        log(f"  CPU engine reference: {time.perf_counter() - t0:.1f}s")
        results["ticks_500M_host"] = run_workload(
            "ticks_500M_host", rows=pn.shape[0], input_bytes=pn.nbytes + vn.nbytes + off.nbytes,
            # numpy views of the pinned buffers (host arrays of the plain kind)
            vpoc_fn=lambda: vpoc.from_trades(pn, vn, offsets=off, tick_size=TICK, device="cuda",
                                             memory_budget=BUDGET_500M),
            cpu_fields=cpu, exact=True,
            peers={
                "numpy_vec": (lambda: trades_numpy_vec(pn, vn, off), summary_numpy, 1e-9, False, 1),
                "torch_vec": (lambda: trades_torch_vec(P, V, off_dev), summary_torch_vec, 1e-5,
                              True, 2),
            },
            k_vpoc=max(2, args.repeat // 3), mem=mem, base_other=base_other, host_streamed=True,
            h2d_bw=h2d_bw, copy_bw=copy_bw)
        results["ticks_500M_host"].update(price_dtype="float32", volume_dtype="float32",
                                          memory_budget=BUDGET_500M, pinned=True)
        del P, V, pn, vn, off_dev, cpu
        torch.cuda.empty_cache()

    # ---------------------------------------------------------------- report
    log(f"\n{'workload':<16} {'impl':<11} {'ms':>10} {'vpoc speedup':>13}")
    for wl, r in results.items():
        # the timings (seconds per call) only: not rates such as bytes_per_s
        for key in [k for k in r if k.endswith("_s") and k not in ("vpoc_first_call_s", "bytes_per_s")]:
            impl = key[:-2]
            sp = r.get(f"speedup_vs_{impl}")
            log(f"{wl:<16} {impl:<11} {r[key] * 1e3:>10.3f} "
                f"{'' if sp is None else f'{sp:.1f}x':>13}")
        if "bw_fraction" in r:
            extra = f", h2d_fraction {r['h2d_fraction']:.3f}" if "h2d_fraction" in r else ""
            log(f"{wl:<16} bw_fraction {r['bw_fraction']:.3f}{extra}, peak_device_bytes "
                f"{r.get('peak_device_bytes', 0) / MiB:.1f} MiB, driver delta "
                f"{r.get('peak_driver_delta_bytes', 0) / MiB:.1f} MiB")
    log("\nacceptance (issues 3 and 9; reported, not asserted):")
    checks = acceptance(results, h2d_bw)
    doc = {
        "device": name,
        "git_commit": git_commit(),
        "copy_bw_Bps": copy_bw,
        "h2d_bw_Bps": h2d_bw,
        "workloads": results,
        "acceptance": checks,
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "vpoc_version": vpoc.__version__,
        "vpoc_backends": vpoc.backends(),
        "numpy_version": np.__version__,
        "python": platform.python_version(),
        "host_cpu_count": os.cpu_count(),
        "seed": args.seed,
        "tick_size": TICK,
        "total_runtime_s": time.perf_counter() - t_start,
    }
    if args.out is not None:
        out = args.out
    elif os.environ.get("OUT"):
        out = Path(os.environ["OUT"]) / f"{slug(name)}.json"
    else:
        out = REPO / "benchmarks" / "results" / f"{slug(name)}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")
    log(f"\nwrote {out} ({doc['total_runtime_s']:.0f}s)")
    return 0 if all(r.get("correct") for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
