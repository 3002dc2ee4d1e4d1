"""CPU cost of aggressor-side profiles: from_trades with side= against the same call without it.

Contract: prints one line per workload (milliseconds, best of --repeat after a warm-up, and the ratio to the
call without a side); the side fields are all touched, so the lazy ones (delta POC, imbalances) count.

On the CPU the engine bins each trade into the unknown / buy / sell plane of its row in its one binning
pass and derives the side fields per session (docs/design/side-single-pass.md); before that, three engine
passes (all, buy, sell), one over the profile rows and numpy work cost 8-9x the plain call.

Usage::

    python benchmarks/bench_side.py                    # 5M trades, 200 sessions, threads=1
    python benchmarks/bench_side.py --ticks 20000000 --threads 0 --repeat 3 --float32
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
try:
    import vpoc
except ImportError:  # not installed: the source tree
    sys.path.insert(0, str(REPO / "python"))
    import vpoc
from vpoc.synth import es_trades  # noqa: E402

FIELDS = ("buy_volume", "sell_volume", "delta", "delta_poc", "imbalance_buy", "stacked_imbalance_sell")


def best(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=5_000_000)
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1, help="engine threads (0: all cores)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--float32", action="store_true", help="float32 prices and volumes (GUIDE section 3 layout; "
                                                           "default float64 prices, int64 volumes)")
    args = ap.parse_args(argv)
    dt = dict(price_dtype=np.float32, volume_dtype=np.float32) if args.float32 else {}
    tr = es_trades(args.ticks, args.sessions, seed=0, **dt)
    side = np.random.default_rng(0).choice(np.array([1, -1, 0], dtype=np.int8), len(tr), p=[0.48, 0.48, 0.04])
    threads = None if args.threads == 0 else args.threads
    kw = dict(offsets=tr.offsets, tick_size=0.25, threads=threads)

    def plain(developing: bool = False):
        return vpoc.from_trades(tr.price, tr.volume, developing=developing, **kw)

    def sided(developing: bool = False):
        prof = vpoc.from_trades(tr.price, tr.volume, side=side, developing=developing, **kw)
        for name in FIELDS + (("dev_delta",) if developing else ()):
            getattr(prof, name)
        return prof

    print(f"es_trades({len(tr):,}, {args.sessions}), price {tr.price.dtype}, volume {tr.volume.dtype}, "
          f"threads={args.threads or 'all'}")
    for label, developing in (("ticks", False), ("ticks developing", True)):
        a = best(lambda: plain(developing), args.repeat)
        b = best(lambda: sided(developing), args.repeat)
        print(f"{label:<17} plain {a * 1e3:9.2f} ms   side {b * 1e3:9.2f} ms   side/plain {b / a:5.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
