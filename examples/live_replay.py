"""Replay bars through ``vpoc.Live`` as if they arrived live: the current POC / value area and a
model's prediction after every bar. Contract: the printed levels and predictions equal those of
the batch ``from_bars(developing=True)`` / ``bar_features`` tables (no train/serve skew).

The model is the bar-level MLP of ``examples/train.py`` (``--level bar``): pass its checkpoint
with ``--checkpoint runs/train_<stamp>/best_model.pt``. Without one, a tiny model is trained
first on the bars' leading sessions (``--train_epochs``, a few seconds) so the example runs alone.

Examples
--------
    python examples/live_replay.py                                   # synthetic ES bars
    python examples/live_replay.py --data ES_1min.txt --tz America/Chicago \
        --checkpoint runs/train_20250101_120000/best_model.pt --print_every 30
    python examples/live_replay.py --data "ES 03-25.Last.txt" --tz UTC --label close --interval 60
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch

import vpoc

HERE = Path(__file__).resolve().parent


def _train_module() -> Any:
    """examples/train.py as a module (its MLP, data loading and standardization)."""
    spec = importlib.util.spec_from_file_location("vpoc_example_train", HERE / "train.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="live_replay.py", description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", nargs="+", default=["synthetic"],
                   help="'synthetic' or bar files read by vpoc.io (as examples/train.py)")
    p.add_argument("--checkpoint", default=None,
                   help="best_model.pt / last_checkpoint.pt of train.py --level bar (default: "
                        "train a tiny one first)")
    p.add_argument("--train_epochs", type=int, default=2, help="epochs of the tiny model")
    p.add_argument("--window", type=int, default=10, help="bars per window of the tiny model")
    p.add_argument("--synthetic_sessions", type=int, default=8)
    p.add_argument("--bars_per_session", type=int, default=240)
    p.add_argument("--replay_sessions", type=int, default=2, help="last sessions replayed live")
    p.add_argument("--tick_size", type=float, default=0.25)
    p.add_argument("--tz", default="America/Chicago", help="zone of naive timestamps in files")
    p.add_argument("--label", choices=("open", "close"), default="open",
                   help="the files' bars are stamped at their open (default) or close")
    p.add_argument("--interval", default=None,
                   help="bar length for --label close, e.g. 60 (seconds) or 1min (default: inferred)")
    p.add_argument("--print_every", type=int, default=20, help="print every N-th bar (0: none)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def tiny_checkpoint(args: argparse.Namespace, out_dir: str) -> Path:
    """Trains train.py's bar-level model briefly on the sessions before the replayed ones."""
    train = _train_module()
    data = args.data if args.data != ["synthetic"] else ["synthetic"]
    n_total = args.synthetic_sessions
    frac = max(0.05, 1.0 - args.replay_sessions / max(n_total, 1)) if data == ["synthetic"] else 0.5
    argv = ["--data", *data, "--level", "bar", "--window", str(args.window), "--target", "direction",
            "--epochs", str(args.train_epochs), "--hidden_layers", "16", "--device", "cpu",
            "--output", out_dir, "--synthetic_sessions", str(args.synthetic_sessions),
            "--bars_per_session", str(args.bars_per_session), "--data_fraction", f"{frac:.6f}",
            "--tick_size", str(args.tick_size), "--tz", args.tz, "--label", args.label,
            "--seed", str(args.seed)] + (["--interval", str(args.interval)] if args.interval else [])
    run_dir = train.train(train.parse_args(argv))
    return run_dir / "best_model.pt"


def load_model(path: Path) -> Dict[str, Any]:
    train = _train_module()
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    cfg = ckpt["config"]
    if cfg["level"] != "bar":
        raise SystemExit(f"{path}: a --level bar checkpoint is needed, this one is {cfg['level']!r}")
    model = train.MLP(cfg["n_inputs"], cfg["hidden_layers"], cfg["dropout_rate"])
    model.load_state_dict(ckpt["model_state"])
    model.eval()
    return dict(model=model, cfg=cfg, mean=np.asarray(cfg["scaling"]["mean"]),
                std=np.asarray(cfg["scaling"]["std"]), window=int(cfg["window"]),
                train=train)


def replay(args: argparse.Namespace, model: Dict[str, Any], out: Any = sys.stdout) -> Dict[str, Any]:
    """Feeds the bars one at a time; returns per-bar levels and predictions (NaN before a
    session has a full window) and the update timings."""
    train = model["train"]
    data = train.load_bars(argparse.Namespace(
        data=args.data, synthetic_sessions=args.synthetic_sessions,
        bars_per_session=args.bars_per_session, seed=args.seed, tz=args.tz, label=args.label,
        interval=args.interval, data_fraction=1.0))
    offs = data["offsets"]
    S = offs.shape[0] - 1
    first = max(0, S - args.replay_sessions)
    # the sessions the bars were grouped into (train.py: synthetic offsets, else CME Globex)
    session = (dict(session_starts=data["timestamp"][offs[:-1]]) if data["source"] == "synthetic"
               else dict(session="globex"))
    live = vpoc.Live(tick_size=args.tick_size, **session)
    if list(model["cfg"]["feature_names"]) != list(vpoc.live.BAR_COLUMNS):
        raise SystemExit("the checkpoint's feature columns are not those of vpoc.Live")
    cols = [data[k] for k in ("high", "low", "close", "volume", "open", "timestamp")]
    a = int(offs[first])
    # history before the replay: one update with all of it (a live process would restore a state)
    live.update(*[c[:a] for c in cols[:4]], open=cols[4][:a], timestamp=cols[5][:a])
    H, L, C, V, O, T = (c[a:].tolist() for c in cols)
    W, mean, std, net = model["window"], model["mean"], model["std"], model["model"]
    direction = model["cfg"]["target"] == "direction"
    window: deque = deque(maxlen=W)
    label = None
    n = len(H)
    levels = np.full((n, 3), np.nan)
    preds = np.full(n, np.nan)
    times: List[float] = []
    for i in range(n):
        t0 = time.perf_counter()
        poc, vah, val, _, _ = live.update(H[i], L[i], C[i], V[i], open=O[i], timestamp=T[i])
        row = live.bar_features_row()
        times.append(time.perf_counter() - t0)
        if live.session_label != label:  # windows never cross a session boundary
            label = live.session_label
            window.clear()
        window.append(train.apply_standardization(row[None, :], mean, std)[0])
        levels[i] = (poc, vah, val)
        if len(window) == W:
            with torch.no_grad():
                y = float(net(torch.from_numpy(np.stack(window)[None]))[0])
            preds[i] = 1.0 / (1.0 + np.exp(-y)) if direction else \
                y * model["cfg"]["target_scaling"]["std"] + model["cfg"]["target_scaling"]["mean"]
        if args.print_every and i % args.print_every == 0:
            when = np.datetime64(T[i], "ns").astype("datetime64[s]")
            what = "P(up)" if direction else "return"
            pred = "   (window filling)" if np.isnan(preds[i]) else f"{what} {preds[i]: .4f}"
            print(f"{when}  close {C[i]:9.2f}  POC {poc:9.2f}  VA {val:9.2f} - {vah:9.2f}  {pred}",
                  file=out)
    live.close()
    us = np.asarray(times) * 1e6
    print(f"replayed {n} bars of {S - first} sessions live: update + bar_features_row mean "
          f"{us.mean():.1f} us, p99 {np.percentile(us, 99):.1f} us", file=out)
    return dict(levels=levels, preds=preds, start=a, data=data, times_us=us, live=live)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.checkpoint) if args.checkpoint else tiny_checkpoint(args, tmp)
        model = load_model(path)
    replay(args, model)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
