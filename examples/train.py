"""Train an MLP on vpoc volume-profile features: the legacy training command line, rebuilt on vpoc.

Contract: writes ``<output>/train_<timestamp>/best_model.pt`` and ``best_model_metadata.json``
(plain JSON: features, scaling, architecture, metrics, timings); ``--resume PATH`` continues a run.

Examples
--------
    python examples/train.py --data synthetic --epochs 20                      # 1014 synthetic ES sessions
    python examples/train.py --data ES_1min.txt --tz America/Chicago --device cuda --use_mixed_precision
    python examples/train.py --data "ES 03-25.Last.txt" --tz UTC --label close   # UTC, close stamps
    python examples/train.py --data bars.csv --level bar --window 30 --target return
    python examples/train.py --data synthetic --epochs 5 \
        --resume runs/train_20250101_120000/last_checkpoint.pt

Session level (default): one row per session from ``vpoc.session_features`` (session s uses
sessions <= s only); the target is the *next* session's close-to-close return (``--target
return``, MSE) or its sign (``--target direction``, BCE). Bar level: windows of ``--window`` bars
of ``vpoc.bar_features`` inside one session; the target is the next bar's return or direction.
Features are standardized with statistics of the (chronologically first) training split only
(missing values become 0 = the training mean); the best model is chosen by validation loss.
Needs only vpoc, numpy and torch (pandas when vpoc.io reads CSV files).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn

import vpoc
from vpoc import synth

__all__ = ["MLP", "parse_args", "parse_hidden_layers", "standardization", "main"]

CHECKPOINT_FORMAT = "vpoc-train-checkpoint-v1"
METADATA_FORMAT = "vpoc-train-metadata-v1"
DATA_SUFFIXES = (".txt", ".csv", ".parquet", ".pq")


class UsageError(ValueError):
    """A bad command line or input: reported as one line, exit status 2."""


# --------------------------------------------------------------------------- arguments


def parse_hidden_layers(text: str) -> List[int]:
    """``"128,64"`` -> ``[128, 64]``; ``""`` -> ``[]`` (a linear model)."""
    text = text.strip()
    if not text:
        return []
    sizes = []
    for part in text.split(","):
        try:
            n = int(part)
        except ValueError:
            raise UsageError(f"--hidden_layers must be comma-separated positive integers like "
                             f"'128,64', got {text!r}") from None
        if n < 1:
            raise UsageError(f"--hidden_layers sizes must be >= 1, got {n} in {text!r}")
        sizes.append(n)
    return sizes


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The command line (legacy flags first), validated; bad values exit with status 2."""
    p = argparse.ArgumentParser(
        prog="train.py", description="Train an MLP on vpoc volume-profile features.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", required=True, nargs="+",
                   help="'synthetic', or bar files / folders: legacy 'YYYYMMDD HHMMSS;open;high;low;"
                        "close;volume' text, OHLCV CSV or Parquet (read by vpoc.io)")
    p.add_argument("--output", default="runs", help="folder that receives train_<timestamp>/")
    p.add_argument("--epochs", type=int, default=50, help="epochs to train (more epochs with --resume)")
    p.add_argument("--batch_size", type=int, default=64)
    p.add_argument("--learning_rate", type=float, default=None,
                   help="Adam learning rate (default 1e-3; with --resume the checkpoint's)")
    p.add_argument("--hidden_layers", default=None,
                   help="hidden layer sizes, comma-separated (default '128,64'; with --resume "
                        "the checkpoint's)")
    p.add_argument("--dropout_rate", type=float, default=None,
                   help="dropout after each hidden layer (default 0.2; with --resume the checkpoint's)")
    p.add_argument("--use_mixed_precision", action="store_true",
                   help="torch.amp autocast: float16 + GradScaler on CUDA, bfloat16 on the CPU")
    p.add_argument("--data_fraction", type=float, default=1.0,
                   help="use the chronologically first fraction of the sessions")
    p.add_argument("--chunk_size", type=int, default=3500,
                   help="rows per forward pass when scoring the validation split (the legacy "
                        "flag bounded GPU memory per profile chunk; vpoc needs no chunking)")
    p.add_argument("--device", default="auto", help="'auto', 'cpu', 'cuda' or 'cuda:N'")
    p.add_argument("--feature_device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where vpoc builds the features ('auto': the GPU when --device is CUDA "
                        "and vpoc has a GPU backend)")
    p.add_argument("--resume", default=None,
                   help="checkpoint to continue from (last_checkpoint.pt, best_model.pt or a run folder)")
    # vpoc-specific
    p.add_argument("--level", choices=("session", "bar"), default="session",
                   help="one sample per session (session_features) or bar windows (bar_features)")
    p.add_argument("--target", choices=("direction", "return"), default="direction",
                   help="next session's (or bar's) close-to-close direction (BCE) or return (MSE)")
    p.add_argument("--window", type=int, default=30, help="bars per window (--level bar)")
    p.add_argument("--stride", type=int, default=1, help="bars between windows (--level bar)")
    p.add_argument("--val_fraction", type=float, default=0.2, help="last fraction of samples for validation")
    p.add_argument("--tick_size", type=float, default=synth.ES_TICK_SIZE)
    p.add_argument("--tz", default="America/Chicago",
                   help="time zone of naive timestamps in the data files (the legacy files are in "
                        "exchange time; `vpoc inspect FILE` tells)")
    p.add_argument("--label", choices=("open", "close"), default="open",
                   help="the files' bars are stamped at their open (default) or close; close stamps "
                        "become open stamps before sessions and features (`vpoc inspect FILE` tells)")
    p.add_argument("--interval", default=None,
                   help="bar length for --label close, e.g. 60 (seconds) or 1min (default: the most "
                        "common spacing)")
    p.add_argument("--synthetic_sessions", type=int, default=1014, help="sessions of --data synthetic")
    p.add_argument("--bars_per_session", type=int, default=synth.GLOBEX_MINUTES,
                   help="one-minute bars per synthetic session")
    p.add_argument("--num_workers", type=int, default=0, help="DataLoader worker processes (CPU only)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    try:
        args.hidden = None if args.hidden_layers is None else parse_hidden_layers(args.hidden_layers)
        _check(args)
    except UsageError as e:
        p.error(str(e))
    return args


def _check(args: argparse.Namespace) -> None:
    positive = ("epochs", "batch_size", "chunk_size", "window", "stride", "synthetic_sessions",
                "bars_per_session")
    for name in positive:
        if getattr(args, name) < 1:
            raise UsageError(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.num_workers < 0:
        raise UsageError(f"--num_workers must be >= 0, got {args.num_workers}")
    if args.learning_rate is not None and not (args.learning_rate > 0
                                               and math.isfinite(args.learning_rate)):
        raise UsageError(f"--learning_rate must be > 0, got {args.learning_rate}")
    if args.dropout_rate is not None and not 0.0 <= args.dropout_rate < 1.0:
        raise UsageError(f"--dropout_rate must be in [0, 1), got {args.dropout_rate}")
    if not 0.0 < args.data_fraction <= 1.0:
        raise UsageError(f"--data_fraction must be in (0, 1], got {args.data_fraction}")
    if not 0.0 < args.val_fraction < 1.0:
        raise UsageError(f"--val_fraction must be in (0, 1), got {args.val_fraction}")
    if not (args.tick_size > 0 and math.isfinite(args.tick_size)):
        raise UsageError(f"--tick_size must be > 0, got {args.tick_size}")


def resolve_device(name: str) -> torch.device:
    """'auto' -> CUDA when torch sees a GPU, else the CPU; 'cuda' without a GPU is an error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(name)
    except RuntimeError:
        raise UsageError(f"--device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {name!r}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"--device {name}: torch sees no CUDA device (torch {torch.__version__}); "
                         "use --device cpu")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise UsageError(f"--device {name}: only {torch.cuda.device_count()} CUDA device(s)")
    if dev.type not in ("cpu", "cuda"):
        raise UsageError(f"--device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {name!r}")
    return dev


# --------------------------------------------------------------------------- data and features


def _data_files(items: Sequence[str]) -> List[str]:
    files: List[str] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted(str(f) for f in path.iterdir() if f.suffix.lower() in DATA_SUFFIXES)
            if not found:
                raise UsageError(f"--data {item}: the folder holds no {'/'.join(DATA_SUFFIXES)} files")
            files.extend(found)
        elif path.is_file():
            files.append(str(path))
        else:
            raise UsageError(f"--data {item}: no such file or folder")
    return files


def load_bars(args: argparse.Namespace) -> Dict[str, Any]:
    """Bars grouped into sessions: arrays ``open/high/low/close/volume/timestamp`` (N), CSR
    ``offsets`` (S+1), ``labels`` (S trading dates YYYYMMDD) and a ``source`` description."""
    if args.data == ["synthetic"]:
        bars = synth.es_bars(n_sessions=args.synthetic_sessions,
                             bars_per_session=args.bars_per_session, seed=args.seed)
        data = dict(open=bars.open, high=bars.high, low=bars.low, close=bars.close,
                    volume=bars.volume, timestamp=bars.timestamp, offsets=bars.offsets,
                    labels=bars.session_labels, source="synthetic")
    else:
        files = _data_files(args.data)
        from vpoc import io as vio
        from vpoc import sessions as vsessions

        interval = getattr(args, "interval", None)
        if isinstance(interval, str) and interval.replace(".", "", 1).isdigit():
            interval = float(interval)  # seconds
        bars = vio.read_bars(files if len(files) > 1 else files[0], tz=args.tz,
                             label=getattr(args, "label", "open"), interval=interval)
        sess = vsessions.globex(bars.timestamp)
        data = {k: sess.take(getattr(bars, k))
                for k in ("open", "high", "low", "close", "volume", "timestamp")}
        data.update(offsets=np.asarray(sess.offsets, dtype=np.int64),
                    labels=np.asarray(sess.labels), source=files)
    n_sessions = data["offsets"].shape[0] - 1
    keep = max(1, math.ceil(args.data_fraction * n_sessions)) if n_sessions else 0
    if keep < n_sessions:
        end = int(data["offsets"][keep])
        for k in ("open", "high", "low", "close", "volume", "timestamp"):
            data[k] = data[k][:end]
        data["offsets"] = data["offsets"][:keep + 1]
        data["labels"] = data["labels"][:keep]
    return data


def session_closes(close: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Last close of each session (NaN for an empty session)."""
    counts = np.diff(offsets)
    out = np.full(counts.shape[0], np.nan)
    nz = counts > 0
    out[nz] = close[offsets[1:][nz] - 1]
    return out


def returns(values: np.ndarray) -> np.ndarray:
    """``values[i] / values[i-1] - 1`` (NaN at 0 and where either is missing)."""
    out = np.full(values.shape[0], np.nan)
    out[1:] = values[1:] / values[:-1] - 1.0
    return out


def bar_returns(close: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Close-to-close return of each bar within its session (NaN at a session's first bar)."""
    out = returns(np.asarray(close, dtype=np.float64))
    counts = np.diff(offsets)
    out[offsets[:-1][counts > 0]] = np.nan
    return out


def build_features(args: argparse.Namespace, data: Dict[str, Any], feature_device: str
                   ) -> Tuple[np.ndarray, Tuple[str, ...], np.ndarray]:
    """(features [rows, F] float32, column names, per-row target series before the shift)."""
    fn = vpoc.session_features if args.level == "session" else vpoc.bar_features
    table = fn(data["high"], data["low"], data["close"], data["volume"], open=data["open"],
               timestamp=data["timestamp"], offsets=data["offsets"], tick_size=args.tick_size,
               device=feature_device)
    values = np.ascontiguousarray(np.asarray(table.values), dtype=np.float32)
    if args.level == "session":
        series = returns(session_closes(np.asarray(data["close"], dtype=np.float64), data["offsets"]))
    else:
        series = bar_returns(data["close"], data["offsets"])
    if args.target == "direction":
        series = np.where(np.isnan(series), np.nan, (series > 0).astype(np.float64))
    return values, tuple(str(c) for c in table.columns), series.astype(np.float32)


def standardization(values: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Per-column (mean, std) over the finite entries of ``values`` [rows, F] in float64; columns
    without a finite value get (0, 1) and constant columns std 1, so scaling never divides by 0."""
    finite = np.isfinite(values)
    count = finite.sum(axis=0)
    x = np.where(finite, values, 0.0).astype(np.float64)
    mean = np.divide(x.sum(axis=0), count, out=np.zeros(values.shape[1]), where=count > 0)
    dev = np.where(finite, x - mean, 0.0)
    var = np.divide((dev * dev).sum(axis=0), count, out=np.zeros(values.shape[1]), where=count > 0)
    std = np.sqrt(var)
    std[~(std > 0)] = 1.0
    return mean, std


def apply_standardization(values: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """``(values - mean) / std`` as float32, missing values (NaN/inf) -> 0 (the training mean)."""
    out = (values.astype(np.float64) - mean) / std
    out[~np.isfinite(out)] = 0.0
    return out.astype(np.float32)


# --------------------------------------------------------------------------- model


class MLP(nn.Module):
    """Flatten -> [Linear -> ReLU -> Dropout] per hidden size -> Linear(1) (one logit or value)."""

    def __init__(self, n_inputs: int, hidden: Sequence[int], dropout: float) -> None:
        super().__init__()
        layers: List[nn.Module] = [nn.Flatten()]
        prev = n_inputs
        for size in hidden:
            layers += [nn.Linear(prev, size), nn.ReLU(), nn.Dropout(dropout)]
            prev = size
        layers.append(nn.Linear(prev, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)


# --------------------------------------------------------------------------- training


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _json_ready(x: Any) -> Any:
    """Plain JSON values: numpy scalars/arrays -> Python, NaN/inf -> None."""
    if isinstance(x, dict):
        return {str(k): _json_ready(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_ready(v) for v in x]
    if isinstance(x, np.ndarray):
        return _json_ready(x.tolist())
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(float(x)) else None
    return x


def _run_dir(output: str) -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d_%H%M%S")
    base = Path(output) / f"train_{stamp}"
    path, k = base, 1
    while path.exists():
        path = base.with_name(f"{base.name}_{k}")
        k += 1
    path.mkdir(parents=True)
    return path


def _load_checkpoint(path: str) -> Tuple[Dict[str, Any], str]:
    p = Path(path)
    if p.is_dir():
        p = p / "last_checkpoint.pt"
    if not p.is_file():
        raise UsageError(f"--resume {path}: no checkpoint file {p}")
    ckpt = torch.load(p, map_location="cpu", weights_only=True)
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        raise UsageError(f"--resume {path}: not a checkpoint written by this script")
    return ckpt, str(p)


def _loss_fn(target: str) -> nn.Module:
    return nn.BCEWithLogitsLoss() if target == "direction" else nn.MSELoss()


@torch.no_grad()
def evaluate(model: nn.Module, ds: Any, items: range, args: argparse.Namespace,
             device: torch.device, amp_dtype: Optional[torch.dtype],
             zero: float = 0.0) -> Dict[str, float]:
    """Mean loss over ``items`` of ``ds`` (in ``--chunk_size`` batches) plus accuracy
    (direction) or directional accuracy and RMSE (return, in standardized units; ``zero`` is a
    0 return in those units)."""
    model.eval()
    loss_fn = _loss_fn(args.target)
    total, n, hits = 0.0, 0, 0
    sq = 0.0
    for start in range(items.start, items.stop, args.chunk_size):
        idx = list(range(start, min(start + args.chunk_size, items.stop)))
        xb, yb = ds[idx]
        xb, yb = xb.to(device), yb.to(device)
        with torch.autocast(device.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            out = model(xb)
        out = out.float()
        total += float(loss_fn(out, yb)) * len(idx)
        n += len(idx)
        if args.target == "direction":
            hits += int(((out > 0).float() == yb).sum())
        else:
            hits += int(((out > zero) == (yb > zero)).sum())
            sq += float(((out - yb) ** 2).sum())
    if n == 0:
        return {"loss": float("nan")}
    metrics = {"loss": total / n}
    if args.target == "direction":
        metrics["accuracy"] = hits / n
    else:
        metrics["directional_accuracy"] = hits / n
        metrics["rmse_standardized"] = math.sqrt(sq / n)
    return metrics


def _split(ds: Any, args: argparse.Namespace) -> Tuple[range, range, int]:
    """Chronological split: (train items, validation items, purged items). For bar windows the
    validation items whose window overlaps the last training target bar are left out."""
    n = len(ds)
    n_train = int(math.floor((1.0 - args.val_fraction) * n))
    if n_train < 1 or n - n_train < 1:
        raise UsageError(f"{n} samples are too few to split into training and validation "
                         f"(--val_fraction {args.val_fraction}); use more data")
    first_val = n_train
    if args.level == "bar":
        ends = ds.window_end.numpy()
        last_train_target = ends[n_train - 1] + 1  # horizon 1
        first_val = int(np.searchsorted(ends - args.window + 1, last_train_target, side="right"))
        if first_val >= n:
            raise UsageError("no validation window left after the training split; use more data")
    return range(0, n_train), range(first_val, n), first_val - n_train


def train(args: argparse.Namespace) -> Path:
    """Build features, train, write the run folder; returns its path."""
    from vpoc.torch import BarWindowDataset, SessionFeatureDataset

    t_start = time.perf_counter()
    torch.manual_seed(args.seed)
    device = resolve_device(args.device)
    ckpt, resumed_from = _load_checkpoint(args.resume) if args.resume else (None, None)
    if ckpt is not None:  # the run goes on as it was set up; only epochs, batches, lr may change
        cfg = ckpt["config"]
        for key in ("level", "target", "window", "stride"):
            if cfg[key] != getattr(args, key):
                raise UsageError(f"--resume: the checkpoint was trained with --{key} {cfg[key]}, "
                                 f"not {getattr(args, key)}")
        for key, given in (("hidden_layers", args.hidden), ("dropout_rate", args.dropout_rate)):
            if given is not None and list(np.atleast_1d(given)) != list(np.atleast_1d(cfg[key])):
                raise UsageError(f"--resume: the checkpoint's model has --{key} {cfg[key]}, "
                                 f"not {given}")
        args.hidden, args.dropout_rate = list(cfg["hidden_layers"]), cfg["dropout_rate"]
    else:
        args.hidden = [128, 64] if args.hidden is None else args.hidden
        args.dropout_rate = 0.2 if args.dropout_rate is None else args.dropout_rate
        args.learning_rate = 1e-3 if args.learning_rate is None else args.learning_rate
    args.hidden_layers = ",".join(str(n) for n in args.hidden)
    amp_dtype: Optional[torch.dtype] = None
    if args.use_mixed_precision:
        amp_dtype = torch.float16 if device.type == "cuda" else torch.bfloat16
    if args.feature_device == "auto":
        feature_device = str(device) if device.type == "cuda" and vpoc.gpu_available() else "cpu"
    elif args.feature_device == "cuda" and not vpoc.gpu_available():
        raise UsageError("--feature_device cuda: this vpoc build has no usable GPU backend "
                         f"(backends: {', '.join(vpoc.backends())})")
    else:
        feature_device = str(device) if args.feature_device == "cuda" and device.type == "cuda" \
            else args.feature_device
    dev_name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu"

    t0 = time.perf_counter()
    data = load_bars(args)
    t_data = time.perf_counter() - t0
    n_sessions = data["offsets"].shape[0] - 1
    print(f"data: {n_sessions} sessions, {data['close'].shape[0]:,} bars "
          f"({'synthetic' if data['source'] == 'synthetic' else ', '.join(data['source'])}) "
          f"in {t_data:.2f} s")
    t0 = time.perf_counter()
    values, names, series = build_features(args, data, feature_device)
    t_features = time.perf_counter() - t0
    print(f"features: {values.shape[1]} {args.level}-level features x {values.shape[0]:,} rows "
          f"(vpoc.{args.level}_features on {feature_device}) in {t_features:.3f} s")

    def dataset(x: np.ndarray, on: torch.device) -> Any:
        tgt = torch.from_numpy(series)
        if args.level == "session":  # session s -> the next session's return
            return SessionFeatureDataset(x, tgt, target_shift=1, columns=names, device=on)
        return BarWindowDataset(x, args.window, target=tgt, horizon=1, stride=args.stride,
                                session_offsets=data["offsets"], columns=names, device=on)

    probe = dataset(values, torch.device("cpu"))  # the samples that exist decide the split
    train_items, val_items, purged = _split(probe, args)
    if args.level == "session":
        train_rows = probe.session_index[:train_items.stop].numpy()
        split_labels = {"train": data["labels"][train_rows[[0, -1]]],
                        "val": data["labels"][probe.session_index[val_items.start:].numpy()[[0, -1]]]}
        stat_rows = values[train_rows]
    else:
        ends = probe.window_end.numpy()
        stat_rows = values[:int(ends[train_items.stop - 1]) + 1]  # every bar a training window reads
        session_of = np.searchsorted(data["offsets"], ends, side="right") - 1
        split_labels = {"train": data["labels"][session_of[[0, train_items.stop - 1]]],
                        "val": data["labels"][session_of[[val_items.start, -1]]]}
    del probe
    if ckpt is not None:
        if list(ckpt["config"]["feature_names"]) != list(names):
            raise UsageError("--resume: the data gives different feature columns than the checkpoint")
        mean = np.asarray(ckpt["config"]["scaling"]["mean"], dtype=np.float64)
        std = np.asarray(ckpt["config"]["scaling"]["std"], dtype=np.float64)
    else:
        mean, std = standardization(stat_rows)
    ds = dataset(apply_standardization(values, mean, std), device)
    y_train = ds.y[: train_items.stop].float().cpu().numpy()
    if args.target == "return":  # standardize the target too (train statistics)
        if ckpt is not None:
            y_mean, y_std = ckpt["config"]["target_scaling"]["mean"], ckpt["config"]["target_scaling"]["std"]
        else:
            y_mean, y_std = float(y_train.mean()), float(y_train.std()) or 1.0
        ds.y.sub_(y_mean).div_(y_std)
        target_scaling: Dict[str, Any] = {"mean": y_mean, "std": y_std}
        zero = -y_mean / y_std  # a 0 return, standardized
    else:
        target_scaling = {"train_up_fraction": float(y_train.mean())}
        zero = 0.0
    print(f"split: {len(train_items)} train / {len(val_items)} validation samples (chronological"
          f"{f', {purged} overlapping windows left out' if purged else ''})")

    n_inputs = int(np.prod(ds[0][0].shape))
    model = MLP(n_inputs, args.hidden, args.dropout_rate).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate or 1e-3)
    scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)
    loss_fn = _loss_fn(args.target)
    gen = torch.Generator().manual_seed(args.seed)
    history: List[Dict[str, Any]] = []
    start_epoch = 0
    best: Dict[str, Any] = {"val_loss": math.inf}
    if ckpt is not None:
        model.load_state_dict(ckpt["model_state"])
        optimizer.load_state_dict(ckpt["optimizer_state"])
        if args.learning_rate is None:
            args.learning_rate = optimizer.param_groups[0]["lr"]
        for group in optimizer.param_groups:  # a new --learning_rate applies from here on
            group["lr"] = args.learning_rate
        scaler.load_state_dict(ckpt["scaler_state"])
        gen.set_state(ckpt["sampler_rng"])
        torch.set_rng_state(ckpt["torch_rng"])
        if device.type == "cuda" and ckpt.get("cuda_rng") is not None:
            torch.cuda.set_rng_state(ckpt["cuda_rng"], device)
        start_epoch, history = int(ckpt["epoch"]), list(ckpt["history"])
        best = dict(ckpt["best"])
        print(f"resumed from {resumed_from} after epoch {start_epoch}")

    sampler = torch.utils.data.BatchSampler(
        torch.utils.data.SubsetRandomSampler(train_items, generator=gen), args.batch_size, False)
    workers = args.num_workers if device.type == "cpu" else 0  # GPU-resident data: no workers
    loader = torch.utils.data.DataLoader(ds, sampler=sampler, batch_size=None, num_workers=workers)

    run_dir = _run_dir(args.output)
    config = {
        "level": args.level, "target": args.target, "window": args.window, "stride": args.stride,
        "feature_names": list(names), "hidden_layers": list(args.hidden),
        "dropout_rate": args.dropout_rate, "n_inputs": n_inputs,
        "scaling": {"mean": mean.tolist(), "std": std.tolist()}, "target_scaling": target_scaling,
    }
    epoch_times: List[float] = []
    samples = 0
    for epoch in range(start_epoch + 1, start_epoch + args.epochs + 1):
        _sync(device)
        t0 = time.perf_counter()
        model.train()
        total, count = 0.0, 0
        for xb, yb in loader:
            xb = xb.to(device, non_blocking=True)
            yb = yb.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
                out = model(xb)
            loss = loss_fn(out.float(), yb)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            total += float(loss.detach()) * yb.shape[0]
            count += yb.shape[0]
        _sync(device)
        t_epoch = time.perf_counter() - t0
        epoch_times.append(t_epoch)
        samples += count
        val = evaluate(model, ds, val_items, args, device, amp_dtype, zero)
        row = {"epoch": epoch, "train_loss": total / max(count, 1), "epoch_time_s": t_epoch,
               **{f"val_{k}": v for k, v in val.items()}}
        history.append(row)
        extra = "  ".join(f"{k} {v:.4f}" for k, v in row.items() if k.startswith("val_") and k != "val_loss")
        print(f"epoch {epoch}/{start_epoch + args.epochs}  train_loss {row['train_loss']:.4f}  "
              f"val_loss {val['loss']:.4f}  {extra}  {t_epoch:.2f} s")
        improved = val["loss"] < best["val_loss"]
        if improved:
            best = {"val_loss": val["loss"], "epoch": epoch, "metrics": dict(row),
                    "model_state": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
                    "optimizer_state": optimizer.state_dict()}
        state = {
            "format": CHECKPOINT_FORMAT, "epoch": epoch, "config": config, "history": history,
            "model_state": model.state_dict(), "optimizer_state": optimizer.state_dict(),
            "scaler_state": scaler.state_dict(), "sampler_rng": gen.get_state(),
            "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
            "best": best,
        }
        torch.save(state, run_dir / "last_checkpoint.pt")
        if improved or not (run_dir / "best_model.pt").exists():
            best_state = dict(state, model_state=best["model_state"],
                              optimizer_state=best["optimizer_state"], epoch=best["epoch"])
            torch.save(best_state, run_dir / "best_model.pt")
    t_train = sum(epoch_times)
    meta = {
        "format": METADATA_FORMAT,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": {"vpoc": vpoc.__version__, "torch": torch.__version__, "numpy": np.__version__,
                     "python": platform.python_version()},
        "data": {"source": data["source"], "n_sessions": n_sessions,
                 "n_bars": int(data["close"].shape[0]), "data_fraction": args.data_fraction,
                 "tz": args.tz if data["source"] != "synthetic" else "UTC",
                 "label": args.label if data["source"] != "synthetic" else "open",
                 "interval": args.interval if data["source"] != "synthetic" else None,
                 "first_session": data["labels"][0] if n_sessions else None,
                 "last_session": data["labels"][-1] if n_sessions else None},
        "features": {"level": args.level, "builder": f"vpoc.{args.level}_features",
                     "names": list(names), "n_features": len(names), "tick_size": args.tick_size,
                     "window": args.window if args.level == "bar" else None,
                     "stride": args.stride if args.level == "bar" else None},
        "target": {"kind": args.target,
                   "definition": ("next session's close / this session's close - 1"
                                  if args.level == "session" else
                                  "next bar's close / window's last close - 1")
                   + (" > 0 (1.0 up, 0.0 otherwise)" if args.target == "direction" else ""),
                   "scaling": target_scaling},
        "scaling": {"method": "standardize with training-split mean/std; missing -> 0",
                    "mean": mean, "std": std},
        "split": {"method": "chronological", "val_fraction": args.val_fraction,
                  "n_train": len(train_items), "n_val": len(val_items), "purged": purged,
                  "train_sessions": split_labels.get("train"), "val_sessions": split_labels.get("val")},
        "architecture": {"type": "MLP", "n_inputs": n_inputs, "hidden_layers": list(args.hidden),
                         "activation": "ReLU", "dropout_rate": args.dropout_rate, "n_outputs": 1,
                         "n_parameters": sum(p.numel() for p in model.parameters())},
        "training": {"epochs_completed": start_epoch + args.epochs, "epochs_this_run": args.epochs,
                     "batch_size": args.batch_size, "learning_rate": args.learning_rate,
                     "optimizer": "Adam", "loss": type(loss_fn).__name__,
                     "mixed_precision": amp_dtype is not None,
                     "amp_dtype": str(amp_dtype).replace("torch.", "") if amp_dtype else None,
                     "device": str(device), "device_name": dev_name, "feature_device": feature_device,
                     "num_workers": workers, "seed": args.seed, "resumed_from": resumed_from},
        "metrics": {"best_epoch": best.get("epoch"), "best_val_loss": best["val_loss"],
                    "best": best.get("metrics"), "final": history[-1] if history else None,
                    "history": history},
        "timing": {"data_load_s": t_data, "feature_build_s": t_features,
                   "epoch_times_s": epoch_times, "train_time_s": t_train,
                   "train_samples_per_s": samples / t_train if t_train > 0 else None,
                   "total_s": time.perf_counter() - t_start},
        "args": {k: v for k, v in vars(args).items() if k != "hidden"},
    }
    with open(run_dir / "best_model_metadata.json", "w") as f:
        json.dump(_json_ready(meta), f, indent=2, allow_nan=False)
    print(f"best epoch {best.get('epoch')}: val_loss {best['val_loss']:.4f} -> {run_dir / 'best_model.pt'}")
    print(f"timing: features {t_features:.3f} s, {len(epoch_times)} epochs {t_train:.2f} s "
          f"(mean {t_train / max(len(epoch_times), 1):.3f} s), total {meta['timing']['total_s']:.2f} s")
    return run_dir


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    try:
        train(args)
    except (UsageError, FileNotFoundError) as e:
        print(f"train.py: error: {e}", file=sys.stderr)
        return 2
    except (ValueError, TypeError) as e:  # bad data reported by vpoc (file and line named)
        print(f"train.py: error: {e}", file=sys.stderr)
        return 2
    except ImportError as e:  # a package this run needs is missing (the message names it)
        print(f"train.py: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
