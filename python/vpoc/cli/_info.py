"""``vpoc info``, ``vpoc doctor``, ``vpoc bench`` and ``vpoc demo``: the install and its speed.

Contract: ``info`` lists the version, backends, devices and every optional package with its version
or "missing" and what runs without it (``--json`` for machines);
``doctor`` runs :mod:`vpoc._doctor`; ``bench`` / ``demo`` run on synthetic ES data only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import _api, synth
from .._version import __version__
from ._common import EXIT_OK

__all__ = ["cmd_bench", "cmd_demo", "cmd_doctor", "cmd_info"]


def _gib(n: Optional[int]) -> str:
    return "unknown" if n is None else f"{n / (1 << 30):.1f} GiB"


def _host_memory() -> Tuple[Optional[int], Optional[int]]:
    """(total, available) bytes of host memory, None where the OS does not say."""
    total = avail = None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
    except OSError:
        pass
    return total, avail


def _gpu_devices() -> List[Dict[str, Any]]:
    """vpoc's GPUs with name and memory (memory through torch when it is installed)."""
    from .. import _core

    if _core.gpu_backend() == "none":
        return []
    count = int(_core.gpu_device_count())
    out: List[Dict[str, Any]] = [{"device": f"cuda:{i}", "name": None, "total_bytes": None,
                                  "free_bytes": None} for i in range(count)]
    try:
        import torch

        if torch.cuda.is_available() and torch.cuda.device_count() == count:
            for i, d in enumerate(out):
                d["name"] = torch.cuda.get_device_name(i)
                free, total = torch.cuda.mem_get_info(i)
                d["total_bytes"], d["free_bytes"] = int(total), int(free)
    except ImportError:
        pass
    return out


def cmd_info(args: argparse.Namespace) -> int:
    from .. import _core, _doctor

    total, avail = _host_memory()
    info: Dict[str, Any] = {
        "vpoc": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "backends": _api.backends(),
        "gpu_backend": _core.gpu_backend(),
        "cpu": {"device": "cpu", "cores": os.cpu_count(), "total_bytes": total, "available_bytes": avail},
        "gpus": _gpu_devices(),
        "packages": _doctor.package_versions(),
    }
    if args.json:
        print(json.dumps(info, indent=2))
        return EXIT_OK
    print(f"vpoc {info['vpoc']} (python {info['python']}, {info['platform']})")
    print(f"backends: {', '.join(info['backends'])} (GPU backend: {info['gpu_backend']})")
    print("devices:")
    cpu = info["cpu"]
    print(f"  cpu      {cpu['cores']} cores, memory {_gib(total)} total, {_gib(avail)} available")
    for d in info["gpus"]:
        print(f"  {d['device']:<8} {d['name'] or 'GPU'}, memory {_gib(d['total_bytes'])} total, "
              f"{_gib(d['free_bytes'])} free")
    if info["gpu_backend"] != "none" and not info["gpus"]:
        print("  (no GPU visible to this process)")
    for line in _doctor.package_lines(info["packages"]):
        print(line)
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    from .. import _doctor

    return _doctor.main(json_output=args.json, gpu=not args.no_gpu_tests)


def _best_of(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm-up (thread pool, page faults, GPU workspace)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def cmd_bench(args: argparse.Namespace) -> int:
    sessions = args.sessions if args.sessions is not None else (1014 if args.full else 100)
    trades = args.trades if args.trades is not None else (50_000_000 if args.full else 2_000_000)
    t0 = time.perf_counter()
    bars = synth.es_bars(sessions, args.bars, seed=0)
    ticks = synth.es_trades(trades, max(sessions, 1), seed=0)
    t_data = time.perf_counter() - t0
    common = dict(tick_size=synth.ES_TICK_SIZE, device=args.device, threads=args.threads,
                  memory_budget=args.memory_budget)
    workloads: List[Tuple[str, int, Callable[[], Any]]] = [
        ("bars_uniform", len(bars), lambda: _api.from_bars(
            bars.high, bars.low, bars.close, bars.volume, offsets=bars.offsets,
            distribute="uniform", **common)),
        ("bars_close", len(bars), lambda: _api.from_bars(
            bars.high, bars.low, bars.close, bars.volume, offsets=bars.offsets,
            distribute="close", **common)),
        ("trades", len(ticks), lambda: _api.from_trades(ticks.price, ticks.volume,
                                                        offsets=ticks.offsets, **common)),
    ]
    results = []
    for name, n, fn in workloads:
        best = _best_of(fn, args.repeat)
        results.append({"workload": name, "rows": n, "sessions": int(sessions) if name != "trades"
                        else int(ticks.n_sessions), "best_s": best,
                        "rows_per_s": n / best if best > 0 else float("inf")})
    on_cpu = args.device == "cpu"
    report = {"vpoc": __version__, "device": args.device,
              "threads": (args.threads or os.cpu_count()) if on_cpu else None,
              "repeat": args.repeat, "data_s": t_data, "results": results}
    if args.json:
        print(json.dumps(report, indent=2))
        return EXIT_OK
    where = f"cpu, {report['threads']} threads" if on_cpu else f"{args.device}, host inputs: copies included"
    print(f"vpoc {__version__} bench ({where}; best of {args.repeat} after a warm-up; synthetic ES "
          f"data made in {t_data:.2f} s)")
    print(f"{'workload':<14} {'rows':>12} {'sessions':>9} {'best ms':>10} {'M rows/s':>10}")
    for r in results:
        print(f"{r['workload']:<14} {r['rows']:>12,} {r['sessions']:>9} {r['best_s'] * 1e3:>10.2f} "
              f"{r['rows_per_s'] / 1e6:>10.1f}")
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    bars = synth.es_bars(n_sessions=args.sessions, bars_per_session=args.bars, seed=args.seed)
    t_data = time.perf_counter() - t0
    t0 = time.perf_counter()
    prof = _api.from_bars(bars.high, bars.low, bars.close, bars.volume, open=bars.open,
                          offsets=bars.offsets, tick_size=0.25, distribute=args.distribute,
                          va_method=args.va, device=args.device, threads=args.threads,
                          memory_budget=args.memory_budget)
    t_run = time.perf_counter() - t0
    prof = prof.cpu()
    print(f"vpoc {__version__} demo: {prof.n_sessions} synthetic ES sessions, {len(bars):,} one-minute "
          f"bars ({t_data:.2f} s to generate)")
    print(f"backend: {args.device} (compiled: {', '.join(_api.backends())}); distribute="
          f"{args.distribute!r}, va_method={args.va!r}, tick_size=0.25")
    print(f"profiles: {prof.volume.shape[0]:,} price rows in {t_run * 1e3:.1f} ms "
          f"({len(bars) / max(t_run, 1e-9) / 1e6:.1f} M bars/s)")
    labels = bars.session_labels
    print(f"{'session':>10} {'POC':>10} {'VAH':>10} {'VAL':>10} {'volume':>12}")
    for s in range(min(args.show, prof.n_sessions)):
        print(f"{labels[s]:>10} {prof.poc[s]:>10.2f} {prof.vah[s]:>10.2f} {prof.val[s]:>10.2f} "
              f"{prof.total_volume[s]:>12,.0f}")
    return EXIT_OK

