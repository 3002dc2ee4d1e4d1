"""Session features under torch.distributed: each rank (one GPU) computes a shard of sessions, then all-gather.

Contract: every rank ends with the full [S, F] float32 feature tensor, equal to one process computing
every session (``--check`` verifies it on rank 0 and exits 1 on a mismatch).

Run with torchrun (one process per GPU; on a machine without GPUs the ranks use gloo on the CPU)::

    torchrun --nproc-per-node=2 examples/distributed_features.py --check            # synthetic, CPU
    torchrun --nproc-per-node=8 examples/distributed_features.py --device cuda      # 8 GPUs, NCCL
    torchrun --nproc-per-node=4 examples/distributed_features.py --data ES_1min.txt --tz America/Chicago \\
        --device cuda --out features.parquet

Sharding: ``vpoc.torch.shard_sessions(S, rank, world_size)`` gives each rank a contiguous, balanced
range of sessions. Session features look back over earlier sessions (lookbacks up to 50 sessions,
composite profiles, naked POCs up to ``--naked-max-age`` sessions old), so each rank also
computes a *halo* of the sessions just before its shard and keeps only its own rows; with a halo
at least as long as the longest look-back the gathered table equals the single-process one.
``gather_shards`` pads the shards to equal size for ``all_gather`` and drops the padding.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import sys
import time
from typing import Dict, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.distributed as dist

import vpoc
from vpoc.features import session_features

try:
    from vpoc.torch import gather_shards, shard_sessions
except ImportError:  # a vpoc without the public vpoc.torch module
    from vpoc._torch_dist import gather_shards, shard_sessions


def load(args: argparse.Namespace) -> Tuple[Dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """(bar columns incl. int64 ns UTC timestamp, session offsets [S+1], labels [S]); every rank
    loads the same data (synthetic data is deterministic)."""
    if args.data == "synthetic":
        b = vpoc.synth.es_bars(args.sessions, args.bars, seed=args.seed)
        cols = {k: getattr(b, k) for k in ("timestamp", "open", "high", "low", "close", "volume")}
        return cols, b.offsets, b.session_labels
    from vpoc import io, sessions

    bars = io.read_bars(args.data, tz=args.tz)
    rule = {"globex": sessions.globex, "rth": sessions.rth, "daily": sessions.daily}[args.session]
    s = rule(bars.timestamp)
    cols = {k: s.take(getattr(bars, k)) for k in ("timestamp", "open", "high", "low", "close", "volume")}
    return cols, s.offsets, s.labels


def features(cols: Dict[str, np.ndarray], offsets: np.ndarray, first: int, stop: int,
             args: argparse.Namespace, device: str) -> Tuple[np.ndarray, Tuple[str, ...]]:
    """Feature rows of sessions first..stop-1 computed from the bars of those sessions alone."""
    a, b = int(offsets[first]), int(offsets[stop])
    table = session_features(
        cols["high"][a:b], cols["low"][a:b], cols["close"][a:b], cols["volume"][a:b],
        open=cols["open"][a:b], timestamp=cols["timestamp"][a:b], offsets=offsets[first:stop + 1] - a,
        tick_size=args.tick_size, lookbacks=args.lookbacks, composite_sessions=args.composite_sessions,
        naked_max_age=args.naked_max_age, device=device, threads=args.threads)
    return table.values, table.columns


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="synthetic", help="'synthetic' (default) or a bar file for vpoc.io")
    p.add_argument("--sessions", type=int, default=1014, help="synthetic sessions (default 1014)")
    p.add_argument("--bars", type=int, default=1380, help="synthetic bars per session (default 1380)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tz", default=None, help="time zone of naive timestamps in --data")
    p.add_argument("--session", choices=("globex", "rth", "daily"), default="globex")
    p.add_argument("--tick-size", type=float, default=0.25)
    p.add_argument("--lookbacks", type=lambda s: tuple(int(x) for x in s.split(",")),
                   default=(5, 10, 20, 50), help="comma-separated look-back windows (default 5,10,20,50)")
    p.add_argument("--composite-sessions", type=int, default=5)
    p.add_argument("--naked-max-age", type=int, default=50,
                   help="naked POCs of the last this many sessions (bounded, so a halo can cover it)")
    p.add_argument("--halo", type=int, default=None,
                   help="earlier sessions each rank recomputes (default: the longest look-back + 1)")
    p.add_argument("--device", default="cpu", help="cpu (gloo) or cuda (nccl, GPU = LOCAL_RANK)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads per rank")
    p.add_argument("--timeout", type=float, default=300, help="collective timeout in seconds")
    p.add_argument("--check", action="store_true", help="rank 0 compares with one process")
    p.add_argument("--out", default=None, help="rank 0 writes the table here (.parquet or .csv)")
    args = p.parse_args(argv)
    halo = args.halo if args.halo is not None else \
        max(max(args.lookbacks, default=0), args.composite_sessions, args.naked_max_age) + 1

    cuda = args.device.startswith("cuda")
    if cuda:
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local_rank)
        tensor_device = f"cuda:{local_rank}"
        # vpoc computes on this rank's GPU when built with a GPU backend, else on the CPU
        vpoc_device = tensor_device if vpoc.gpu_available() else "cpu"
    else:
        tensor_device = vpoc_device = "cpu"
    dist.init_process_group("nccl" if cuda else "gloo", timeout=_dt.timedelta(seconds=args.timeout),
                            device_id=torch.device(tensor_device) if cuda else None)
    try:
        rank, world = dist.get_rank(), dist.get_world_size()
        t0 = time.perf_counter()
        cols, offsets, labels = load(args)
        S = labels.shape[0]
        t_load = time.perf_counter() - t0

        t0 = time.perf_counter()
        mine = shard_sessions(S, rank, world)
        first = max(0, mine.start - halo)
        values, names = features(cols, offsets, first, mine.stop, args, vpoc_device)
        local = torch.from_numpy(np.ascontiguousarray(values[mine.start - first:])).to(tensor_device)
        t_local = time.perf_counter() - t0
        t0 = time.perf_counter()
        table = gather_shards(local)  # [S, F] on every rank
        t_gather = time.perf_counter() - t0
        print(f"rank {rank}/{world}: sessions {mine.start}..{mine.stop - 1} (+{mine.start - first} halo) "
              f"in {t_local:.2f} s; gather {t_gather * 1e3:.1f} ms", flush=True)
        dist.barrier()
        status = 0
        if rank == 0:
            print(f"features: {tuple(table.shape)} ({len(names)} columns) on {world} ranks; "
                  f"data loaded in {t_load:.2f} s")
            if args.check:
                single, _ = features(cols, offsets, 0, S, args, vpoc_device)
                same = np.array_equal(table.cpu().numpy(), single, equal_nan=True)
                print("check: " + ("distributed == single process" if same else "MISMATCH"))
                status = 0 if same else 1
            if args.out:
                import pandas as pd

                df = pd.DataFrame(table.cpu().numpy(), columns=list(names))
                df.insert(0, "session", labels)
                df.to_csv(args.out, index=False) if args.out.endswith(".csv") else df.to_parquet(args.out)
        flag = torch.tensor([status], device=tensor_device)
        dist.broadcast(flag, 0)  # every rank exits with rank 0's verdict
        return int(flag.item())
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
