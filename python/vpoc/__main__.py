"""Command line: ``python -m vpoc demo`` (the main job on synthetic ES data) and ``info``.

Contract: exit code 0 on success, 2 on bad arguments; errors go to stderr as one line.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import List, Optional

from . import _api, synth
from ._version import __version__

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    bars = synth.es_bars(n_sessions=args.sessions, bars_per_session=args.bars, seed=args.seed)
    t_data = time.perf_counter() - t0
    t0 = time.perf_counter()
    prof = _api.from_bars(bars.high, bars.low, bars.close, bars.volume, open=bars.open,
                          offsets=bars.offsets, tick_size=0.25, distribute=args.distribute,
                          va_method=args.va, device=args.device, threads=args.threads)
    t_run = time.perf_counter() - t0
    print(f"vpoc {__version__} demo: {prof.n_sessions} synthetic ES sessions, {len(bars):,} one-minute "
          f"bars ({t_data:.2f} s to generate)")
    print(f"backend: {prof.device} (compiled: {', '.join(_api.backends())}); distribute="
          f"{args.distribute!r}, va_method={args.va!r}, tick_size=0.25")
    print(f"profiles: {prof.volume.shape[0]:,} price rows in {t_run * 1e3:.1f} ms "
          f"({len(bars) / max(t_run, 1e-9) / 1e6:.1f} M bars/s)")
    labels = bars.session_labels
    print(f"{'session':>10} {'POC':>10} {'VAH':>10} {'VAL':>10} {'volume':>12}")
    for s in range(min(args.show, prof.n_sessions)):
        print(f"{labels[s]:>10} {prof.poc[s]:>10.2f} {prof.vah[s]:>10.2f} {prof.val[s]:>10.2f} "
              f"{prof.total_volume[s]:>12,.0f}")
    return 0


def _info(_: argparse.Namespace) -> int:
    print(f"vpoc {__version__}")
    print(f"backends: {', '.join(_api.backends())}")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="vpoc", description="Volume profiles for futures sessions")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="profile 1014 synthetic ES sessions and print a summary")
    demo.add_argument("--sessions", type=int, default=1014)
    demo.add_argument("--bars", type=int, default=1380, help="one-minute bars per session")
    demo.add_argument("--distribute", default="uniform",
                      choices=["uniform", "close", "hlc3", "legacy"])
    demo.add_argument("--va", default="cbot", choices=["cbot", "single", "greedy"])
    demo.add_argument("--device", default="cpu")
    demo.add_argument("--threads", type=int, default=None)
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--show", type=int, default=5, help="sessions to print")
    demo.set_defaults(run=_demo)
    info = sub.add_parser("info", help="version and compiled backends")
    info.set_defaults(run=_info)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except (ValueError, TypeError, MemoryError) as e:
        print(f"vpoc: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
