"""CPU benchmark: vpoc against plain-NumPy peers on the GUIDE section 3 workloads.

Workloads (all on the ES ladder, tick_size 0.25, ticks_per_row 1, per-session profiles + POC):

* ``bars``       es_bars(1014, 1380), ``distribute="uniform"`` (every bar spread over its ticks)
* ``bars_close`` the same bars, ``distribute="close"``
* ``ticks``      es_trades(50_000_000, 1014) (float32 price, float32 volume by default, the
  GUIDE section 3 layout; ``--ticks N``, ``--price-dtype``, ``--volume-dtype``)
* ``window``     the ``bars`` bars, rolling windows of ``--window`` (60) bars: ``developing=True,
  window=60, distribute="uniform", va_method="single", poc_tie="low"``, beside wickra 2.0.0's
  ``ValueArea(period=60)`` when wickra imports (skipped with a message when not); every full
  window is first checked against wickra with one tick per bin, then both are timed in one run
  (benchmarks/window_wickra.py says how)

The bars are float64 prices and int64 volume (``vpoc.synth.es_bars``); the dtypes of every
workload are recorded in the JSON.

Peers (each computes the per-session volume histogram and the first-argmax POC):

* ``numpy_loop``: a Python loop over sessions, one ``np.histogram`` per session over the
  session's integer ticks ``t`` (``bins=hi - lo + 1``, ``range=(lo - 0.5, hi + 0.5)``,
  ``weights``); uniform bars first expand every bar over ``t(low)..t(high)`` with
  ``np.repeat``, weights ``v/n``.
* ``numpy_vec``: one ``np.bincount`` over a flattened dense ``(session, row)`` index (per-session
  low tick via ``np.minimum.reduceat``), then ``argmax`` over the dense ``[S, B]`` layout.

vpoc runs with ``threads=1`` and ``threads=os.cpu_count()``; vpoc also computes the value area,
which the peers do not. Every peer's histograms (aligned at the session's low row) and POC
volume are checked against vpoc before anything is timed; a mismatch exits with status 1.
Timings are the best of ``--repeat`` runs after one warm-up run (``time.perf_counter``).

Usage::

    python benchmarks/bench_cpu.py                      # full size
    python benchmarks/bench_cpu.py --ticks 2000000 --repeat 2
    python benchmarks/bench_cpu.py --workloads ticks --out /tmp/cpu.json
    python benchmarks/bench_cpu.py --workloads ticks --price-dtype float64 --volume-dtype int64
    python benchmarks/bench_cpu.py --workloads window --out /tmp/window.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parent.parent
try:
    import vpoc
except ImportError:  # not installed: try the source tree (an in-place build)
    sys.path.insert(0, str(REPO / "python"))
    import vpoc
from vpoc.synth import es_bars, es_trades  # noqa: E402

TICK_SIZE = 0.25
WORKLOADS = ("bars", "bars_close", "ticks", "tiny", "window")
# acceptance targets: (workload, which vpoc timing, versus, minimum ratio)
TARGETS = (
    ("ticks", "1t", "numpy_vec", 10.0),
    ("bars", "1t", "numpy_loop", 20.0),
    ("ticks", "scaling", None, 1.6),
)

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


class PeerResult(NamedTuple):
    """Per-session histograms of a peer: dense ``[S, B]`` (row ``low[s] + j`` in column j)
    or a list of per-session arrays; ``poc`` is the absolute POC row (first argmax)."""

    low: I64
    n_rows: I64
    hist: npt.NDArray[Any] | list[npt.NDArray[Any]]
    poc: I64


# --------------------------------------------------------------------------------------
# peers
# --------------------------------------------------------------------------------------
def _ticks(price: npt.NDArray[Any]) -> I64:
    return np.rint(price / TICK_SIZE).astype(np.int64)


def _dense_hist(
    t: I64, weights: npt.NDArray[Any], seg: I64, session_of_row_counts: I64
) -> PeerResult:
    """Dense ``[S, B]`` bincount of ticks ``t`` (modified in place) whose rows belong to
    sessions by CSR ``seg`` (per-session boundaries into ``t``)."""
    S = seg.shape[0] - 1
    counts = session_of_row_counts
    ne = counts > 0
    starts = seg[:-1][ne]
    low = np.zeros(S, dtype=np.int64)
    high = np.full(S, -1, dtype=np.int64)
    if starts.size:
        low[ne] = np.minimum.reduceat(t, starts)
        high[ne] = np.maximum.reduceat(t, starts)
    n_rows = high - low + 1
    B = int(n_rows.max(initial=0))
    base = np.arange(S, dtype=np.int64) * B - low
    t += np.repeat(base, counts)
    dense = np.bincount(t, weights=weights, minlength=S * B).reshape(S, B)
    poc = dense.argmax(axis=1) + low if B else low.copy()
    return PeerResult(low, n_rows, dense, poc)


def trades_numpy_vec(price: npt.NDArray[Any], volume: npt.NDArray[Any], offsets: I64) -> PeerResult:
    t = _ticks(price)
    return _dense_hist(t, volume, offsets, np.diff(offsets))


def _loop_peer(offsets: I64, session: Callable[[int, int], tuple[I64, npt.NDArray[Any], int, int]]
               ) -> PeerResult:
    """The numpy_loop pattern: per session, ``session(a, b)`` gives (ticks, weights, lo, hi) and
    one np.histogram bins them."""
    S = offsets.shape[0] - 1
    low = np.zeros(S, dtype=np.int64)
    n_rows = np.zeros(S, dtype=np.int64)
    poc = np.zeros(S, dtype=np.int64)
    hists: list[npt.NDArray[Any]] = []
    for s in range(S):
        a, b = int(offsets[s]), int(offsets[s + 1])
        if b == a:
            hists.append(np.zeros(0))
            continue
        t, w, lo, hi = session(a, b)
        h, _ = np.histogram(t, bins=hi - lo + 1, range=(lo - 0.5, hi + 0.5), weights=w)
        low[s], n_rows[s], poc[s] = lo, h.shape[0], lo + int(h.argmax())
        hists.append(h)
    return PeerResult(low, n_rows, hists, poc)


def trades_numpy_loop(
    price: npt.NDArray[Any], volume: npt.NDArray[Any], offsets: I64
) -> PeerResult:
    def session(a: int, b: int) -> tuple[I64, npt.NDArray[Any], int, int]:
        t = _ticks(price[a:b])
        return t, volume[a:b], int(t.min()), int(t.max())

    return _loop_peer(offsets, session)


def _expand_uniform(low_t: I64, high_t: I64, vol: npt.NDArray[Any]) -> tuple[I64, F64, I64]:
    """Every bar over its ticks ``t(low)..t(high)``: (ticks, weights v/n, n per bar)."""
    n = high_t - low_t + 1
    total = int(n.sum())
    bar_start = np.cumsum(n) - n
    ticks = np.arange(total, dtype=np.int64)
    ticks -= np.repeat(bar_start - low_t, n)
    w = np.repeat(vol / n, n)
    return ticks, w, n


def bars_uniform_numpy_vec(
    high: F64, low: F64, close: F64, volume: npt.NDArray[Any], offsets: I64
) -> PeerResult:
    tl, th = _ticks(low), _ticks(high)
    t, w, n = _expand_uniform(tl, th, volume)
    # expanded-row CSR per session
    cum = np.concatenate(([0], np.cumsum(n)))
    seg = cum[offsets]
    return _dense_hist(t, w, seg, np.diff(seg))


def bars_uniform_numpy_loop(
    high: F64, low: F64, close: F64, volume: npt.NDArray[Any], offsets: I64
) -> PeerResult:
    def session(a: int, b: int) -> tuple[I64, npt.NDArray[Any], int, int]:
        tl, th = _ticks(low[a:b]), _ticks(high[a:b])
        t, w, _ = _expand_uniform(tl, th, volume[a:b])
        return t, w, int(tl.min()), int(th.max())

    return _loop_peer(offsets, session)


def bars_close_numpy_vec(
    high: F64, low: F64, close: F64, volume: npt.NDArray[Any], offsets: I64
) -> PeerResult:
    return trades_numpy_vec(close, volume, offsets)


def bars_close_numpy_loop(
    high: F64, low: F64, close: F64, volume: npt.NDArray[Any], offsets: I64
) -> PeerResult:
    return trades_numpy_loop(close, volume, offsets)


# --------------------------------------------------------------------------------------
# correctness
# --------------------------------------------------------------------------------------
def _ragged(res: PeerResult) -> F64:
    if isinstance(res.hist, list):
        return np.concatenate(res.hist) if res.hist else np.zeros(0)
    B = res.hist.shape[1]
    mask = np.arange(B)[None, :] < res.n_rows[:, None]
    return res.hist[mask]


def check_peer(name: str, res: PeerResult, prof: Any) -> list[str]:
    """Compare a peer with vpoc; returns a list of problems (empty when it matches)."""
    errs: list[str] = []
    S = int(prof.n_sessions)
    n_rows = np.asarray(prof.n_rows)
    nonempty = n_rows > 0
    if res.n_rows.shape[0] != S:
        return [f"{name}: {res.n_rows.shape[0]} sessions, vpoc {S}"]
    if not np.array_equal(np.where(nonempty, res.n_rows, 0), n_rows):
        s = int(np.flatnonzero(res.n_rows != n_rows)[0])
        errs.append(f"{name}: n_rows differ first at session {s}: {res.n_rows[s]} vs {n_rows[s]}")
        return errs
    low_row = np.asarray(prof.low_row)
    if not np.array_equal(res.low[nonempty], low_row[nonempty]):
        s = int(np.flatnonzero(nonempty & (res.low != low_row))[0])
        errs.append(f"{name}: low_row differs first at session {s}: {res.low[s]} vs {low_row[s]}")
        return errs
    mine = _ragged(res)
    theirs = np.asarray(prof.volume, dtype=np.float64)
    offs = np.asarray(prof.offsets)
    if mine.shape != theirs.shape:
        return [f"{name}: {mine.shape[0]} histogram cells, vpoc {theirs.shape[0]}"]
    scale = np.repeat(
        np.maximum.reduceat(np.abs(theirs), offs[:-1][nonempty]) if theirs.size else np.zeros(0),
        n_rows[nonempty],
    )
    bad = np.abs(mine - theirs) > 1e-9 * scale + 1e-12
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        s = int(np.searchsorted(offs, i, side="right") - 1)
        errs.append(
            f"{name}: histogram differs at session {s} row {low_row[s] + i - offs[s]}: "
            f"{float(mine[i])!r} vs vpoc {float(theirs[i])!r} ({int(bad.sum())} cells differ)"
        )
        return errs
    # POC: same maximum volume (tie rules differ: peers first-argmax, vpoc 'center')
    idx = np.flatnonzero(nonempty)
    peer_poc_vol = mine[offs[idx] + res.poc[idx] - low_row[idx]]
    poc_row = np.asarray(prof.poc_row)
    vpoc_poc_vol = theirs[offs[idx] + poc_row[idx] - low_row[idx]]
    diff = np.abs(peer_poc_vol - vpoc_poc_vol) > 1e-9 * np.abs(vpoc_poc_vol)
    if np.any(diff):
        j = int(np.flatnonzero(diff)[0])
        s = int(idx[j])
        errs.append(
            f"{name}: POC volume differs at session {s}: {float(peer_poc_vol[j])!r} "
            f"(row {res.poc[s]}) "
            f"vs vpoc {float(vpoc_poc_vol[j])!r} (row {poc_row[s]})"
        )
    return errs


# --------------------------------------------------------------------------------------
# timing and reporting
# --------------------------------------------------------------------------------------
def best_of(fn: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` calls after one untimed warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def _git_dirty() -> bool | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(out.stdout.strip()) if out.returncode == 0 else None


def _machine() -> dict[str, Any]:
    u = platform.uname()
    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "processor": platform.processor() or u.machine,
        "cpu_model": model,
        "system": u.system,
        "release": u.release,
        "machine": u.machine,
        "node": u.node,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def _default_out() -> Path:
    host = re.sub(r"[^A-Za-z0-9_.-]", "_", socket.gethostname() or "") or "local"
    return REPO / "benchmarks" / "results" / f"cpu-{host}.json"


def run_workload(
    name: str,
    rows: int,
    input_bytes: int,
    vpoc_fn: Callable[[int], Any],
    peers: Mapping[str, Callable[[], PeerResult]],
    threads: int,
    repeat: int,
) -> dict[str, Any]:
    print(f"\n[{name}] rows={rows:,} input={input_bytes / 1e6:.1f} MB", flush=True)
    prof = vpoc_fn(1)
    prof_n = vpoc_fn(threads)
    errs: list[str] = []
    for attr in ("poc_row", "low_row", "n_rows", "offsets", "volume", "vah_row", "val_row"):
        a, b = np.asarray(getattr(prof, attr)), np.asarray(getattr(prof_n, attr))
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-9, atol=0.0, equal_nan=True):
            errs.append(f"vpoc threads=1 vs threads={threads}: {attr} differs")
    for pname, fn in peers.items():
        res = fn()
        perrs = check_peer(pname, res, prof)
        del res
        errs += perrs
        print(f"  check {pname}: {'ok' if not perrs else 'MISMATCH'}", flush=True)
    del prof, prof_n
    out: dict[str, Any] = {
        "rows": rows,
        "input_bytes": input_bytes,
        "threads": threads,
        "correct": not errs,
    }
    if errs:
        out["errors"] = errs
        return out
    out["vpoc_1t_s"] = best_of(lambda: vpoc_fn(1), repeat)
    out["vpoc_nt_s"] = best_of(lambda: vpoc_fn(threads), repeat)
    out["thread_scaling"] = out["vpoc_1t_s"] / out["vpoc_nt_s"]
    print(f"  vpoc 1t {out['vpoc_1t_s']:.4f}s  {threads}t {out['vpoc_nt_s']:.4f}s", flush=True)
    for pname, fn in peers.items():
        s = best_of(fn, repeat)
        out[f"{pname}_s"] = s
        out[f"speedup_1t_vs_{pname}"] = s / out["vpoc_1t_s"]
        out[f"speedup_nt_vs_{pname}"] = s / out["vpoc_nt_s"]
        print(f"  {pname} {s:.4f}s", flush=True)
    return out


def print_table(results: dict[str, dict[str, Any]], threads: int) -> None:
    hdr = (
        f"{'workload':<11} {'impl':<12} {'seconds':>10} {'1t speedup':>11} "
        f"{f'{threads}t speedup':>11} {'Mrows/s':>9} {'GB/s':>7}"
    )
    print("\n" + hdr)
    print("-" * len(hdr))
    for wl, r in results.items():
        if not r.get("correct"):
            print(f"{wl:<11} {'(incorrect: not timed)'}")
            continue
        impls = [("vpoc_1t", r["vpoc_1t_s"]), (f"vpoc_{threads}t", r["vpoc_nt_s"])]
        impls += [
            (k[:-2], v) for k, v in r.items() if k.endswith("_s") and not k.startswith("vpoc")
        ]
        for impl, s in impls:
            if impl.startswith("vpoc"):
                sp1 = sp2 = ""
            else:
                sp1 = f"{r[f'speedup_1t_vs_{impl}']:.1f}x"
                sp2 = f"{r[f'speedup_nt_vs_{impl}']:.1f}x"
            print(
                f"{wl:<11} {impl:<12} {s:>10.4f} {sp1:>11} {sp2:>11} "
                f"{r['rows'] / s / 1e6:>9.1f} {r['input_bytes'] / s / 1e9:>7.2f}"
            )
        print(f"{wl:<11} {'scaling':<12} {r['thread_scaling']:>9.2f}x ({threads} threads vs 1)")


def check_targets(results: dict[str, dict[str, Any]], threads: int) -> list[dict[str, Any]]:
    out = []
    print("\nacceptance targets (reported, not asserted):")
    for wl, which, peer, need in TARGETS:
        r = results.get(wl)
        if which == "scaling":
            label = f"{wl}: vpoc {threads} threads >= {need}x vpoc 1 thread"
            got = r.get("thread_scaling") if r else None
        else:
            label = f"{wl}: vpoc 1 thread >= {need}x {peer}"
            got = r.get(f"speedup_{which}_vs_{peer}") if r else None
        status = "n/a" if got is None else ("PASS" if got >= need else "FAIL")
        shown = "-" if got is None else f"{got:.2f}x"
        print(f"  [{status}] {label}: {shown}")
        out.append({"target": label, "value": got, "required": need, "status": status})
    return out


def _tiny_once(tree: Path | None) -> dict[str, Any]:
    """benchmarks/tiny_call.py in a fresh process, on this tree or on ``tree``'s python/."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(Path(tree).resolve() / "python")
    else:
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "python")
    out = subprocess.run([sys.executable, str(Path(__file__).with_name("tiny_call.py")), "3"], env=env,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _floor_once(workload: str, tree: Path | None) -> dict[str, Any]:
    """benchmarks/cpu_floor.py for one workload in a fresh process, on this tree or ``tree``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str((Path(tree).resolve() if tree is not None else Path(__file__).resolve().parents[1])
                            / "python")
    out = subprocess.run([sys.executable, str(Path(__file__).with_name("cpu_floor.py")), workload, "3"], env=env,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_floor_table(baseline: Path | None, rounds: int) -> dict[str, Any]:
    """Issue 25's table: per workload, new/old (median over rounds of the per-round ratio of the
    calling thread's CPU time, one thread; and of wall time, all threads) and floor/vpoc, this tree
    and ``baseline`` alternating process by process on identical inputs."""
    import statistics

    sys.path.insert(0, str(Path(__file__).parent))
    from cpu_floor import WORKLOADS as FLOOR_WORKLOADS

    table: dict[str, Any] = {}
    hdr = f"{'workload':<16} {'new/old 1t':>10} {'new/old nt':>10} {'floor/vpoc new':>15} {'floor/vpoc old':>15}"
    print(hdr + "\n" + "-" * len(hdr), flush=True)
    for wl in FLOOR_WORKLOADS:
        new, old = [], []
        for _ in range(rounds):
            new.append(_floor_once(wl, None))
            if baseline is not None:
                old.append(_floor_once(wl, baseline))
        row: dict[str, Any] = {"new": new, "old": old,
                               "floor_over_vpoc_new": statistics.median(r["floor_s"] / r["vpoc_s"] for r in new)}
        if old:
            row["new_over_old_1t"] = statistics.median(a["vpoc_s"] / b["vpoc_s"] for a, b in zip(new, old))
            row["new_over_old_nt"] = statistics.median(a["vpoc_nt_s"] / b["vpoc_nt_s"] for a, b in zip(new, old))
            row["floor_over_vpoc_old"] = statistics.median(r["floor_s"] / r["vpoc_s"] for r in old)
        table[wl] = row
        fmt = lambda k: f"{row[k]:.3f}" if k in row else "-"  # noqa: E731
        print(f"{wl:<16} {fmt('new_over_old_1t'):>10} {fmt('new_over_old_nt'):>10} "
              f"{fmt('floor_over_vpoc_new'):>15} {fmt('floor_over_vpoc_old'):>15}", flush=True)
    return table


def run_tiny(baseline: Path | None, rounds: int = 5) -> dict[str, Any]:
    """The tiny from_bars call (1 session, 10 bars; issue 24): Python function calls and latency,
    and the same on ``baseline`` (an earlier tree) in alternating processes, best of ``rounds``."""
    new: list[dict[str, Any]] = []
    old: list[dict[str, Any]] = []
    for _ in range(rounds):
        new.append(_tiny_once(None))
        if baseline is not None:
            old.append(_tiny_once(baseline))
    res: dict[str, Any] = {"calls": new[0]["calls"], "us": min(r["us"] for r in new), "vpoc": new[0]["vpoc"]}
    if old:
        res.update(baseline_tree=str(baseline), baseline_calls=old[0]["calls"],
                   baseline_us=min(r["us"] for r in old))
        res["speedup"] = res["baseline_us"] / res["us"]
    line = f"tiny from_bars (1 session, 10 bars): {res['calls']} Python calls, {res['us']:.2f} us"
    if old:
        line += (f"; baseline {res['baseline_calls']} calls, {res['baseline_us']:.2f} us: "
                 f"{res['speedup']:.2f}x faster")
    print(line, flush=True)
    return res


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--workloads",
        default=",".join(WORKLOADS),
        help=f"comma-separated subset of {','.join(WORKLOADS)}",
    )
    ap.add_argument("--sessions", type=int, default=1014, help="sessions (default 1014)")
    ap.add_argument("--bars", type=int, default=1380, help="bars per session (default 1380)")
    ap.add_argument("--ticks", type=int, default=50_000_000, help="trades (default 50M)")
    ap.add_argument("--repeat", type=int, default=3, help="timed repetitions, best kept")
    ap.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="thread count for the multi-threaded vpoc run (default cpu_count)",
    )
    ap.add_argument(
        "--price-dtype",
        choices=("float32", "float64"),
        default="float32",
        help="ticks workload price dtype (default float32, GUIDE section 3)",
    )
    ap.add_argument(
        "--volume-dtype",
        choices=("float32", "float64", "int32", "int64"),
        default="float32",
        help="ticks workload volume dtype (default float32, GUIDE section 3)",
    )
    ap.add_argument("--window", type=int, default=60, help="window workload: bars per window (default 60)")
    ap.add_argument("--window-across", action="store_true",
                    help="window workload: window_across_sessions=True (every N-bar window compared with wickra's)")
    ap.add_argument("--window-bins", type=int, default=None,
                    help="window workload: wickra's timed bin_count (default: median window width in ticks)")
    ap.add_argument("--no-ticks-loop", action="store_true", help="skip numpy_loop on ticks")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--floor-table",
        action="store_true",
        help="issue 25's table instead: each benchmarks/cpu_floor.py workload, this tree and "
        "--baseline-tree in alternating processes for --rounds rounds: new/old and floor/vpoc",
    )
    ap.add_argument("--rounds", type=int, default=3, help="rounds of --floor-table (default 3)")
    ap.add_argument(
        "--baseline-tree",
        type=Path,
        default=os.environ.get("VPOC_BASELINE_TREE") or None,
        help="a checkout of an earlier vpoc with its built extension in python/vpoc: the tiny "
        "workload runs it beside this tree, rounds interleaved (default $VPOC_BASELINE_TREE)",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="JSON path (default benchmarks/results/cpu-<hostname>.json)",
    )
    args = ap.parse_args(argv)
    wls = [w.strip() for w in args.workloads.split(",") if w.strip()]
    for w in wls:
        if w not in WORKLOADS:
            ap.error(f"unknown workload {w!r}")
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    if args.window < 1:
        ap.error("--window must be >= 1")
    if args.window_bins is not None and args.window_bins < 1:
        ap.error("--window-bins must be >= 1")
    threads = max(1, args.threads)

    load_before = _loadavg()
    if load_before is not None and load_before[0] > 0.5:
        print(
            f"warning: 1-minute load average {load_before[0]:.2f} before the run: other "
            "processes compete for the cores and can distort the timings (thread scaling most)",
            flush=True,
        )
    results: dict[str, dict[str, Any]] = {}
    if args.floor_table:
        doc = {"machine": _machine(), "git_commit": _git_commit(), "git_dirty": _git_dirty(),
               "load_avg_before": load_before, "floor_table": run_floor_table(args.baseline_tree, args.rounds),
               "load_avg_after": _loadavg()}
        out = args.out or _default_out()
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {out}")
        return 0
    tiny = run_tiny(args.baseline_tree) if "tiny" in wls else None
    if "bars" in wls or "bars_close" in wls:
        t0 = time.perf_counter()
        bars = es_bars(args.sessions, args.bars, seed=args.seed)
        print(f"es_bars({args.sessions}, {args.bars}): {time.perf_counter() - t0:.2f}s", flush=True)
        h, lo, c, v, off = bars.high, bars.low, bars.close, bars.volume, bars.offsets
        nbytes = h.nbytes + lo.nbytes + c.nbytes + v.nbytes + off.nbytes
        for wl, dist, peers in (
            (
                "bars",
                "uniform",
                {"numpy_loop": bars_uniform_numpy_loop, "numpy_vec": bars_uniform_numpy_vec},
            ),
            (
                "bars_close",
                "close",
                {"numpy_loop": bars_close_numpy_loop, "numpy_vec": bars_close_numpy_vec},
            ),
        ):
            if wl not in wls:
                continue

            def vfn(nt: int, dist: str = dist) -> Any:
                return vpoc.from_bars(
                    h, lo, c, v, offsets=off, tick_size=TICK_SIZE, distribute=dist, threads=nt
                )

            pf = {k: (lambda f=f: f(h, lo, c, v, off)) for k, f in peers.items()}
            results[wl] = run_workload(wl, len(bars), nbytes, vfn, pf, threads, args.repeat)
            results[wl]["distribute"] = dist
            results[wl]["price_dtype"] = str(h.dtype)
            results[wl]["volume_dtype"] = str(v.dtype)
            if not results[wl]["correct"]:
                break
        del bars, h, lo, c, v, off

    if "ticks" in wls and all(r["correct"] for r in results.values()):
        t0 = time.perf_counter()
        tr = es_trades(
            args.ticks,
            args.sessions,
            seed=args.seed,
            price_dtype=args.price_dtype,
            volume_dtype=args.volume_dtype,
        )
        print(
            f"es_trades({args.ticks:,}, {args.sessions}, price {args.price_dtype}, "
            f"volume {args.volume_dtype}): {time.perf_counter() - t0:.2f}s",
            flush=True,
        )
        p, v, off = tr.price, tr.volume, tr.offsets
        assert p.dtype == np.dtype(args.price_dtype) and v.dtype == np.dtype(args.volume_dtype)

        def tfn(nt: int) -> Any:
            return vpoc.from_trades(p, v, offsets=off, tick_size=TICK_SIZE, threads=nt)

        tpeers: dict[str, Callable[[], PeerResult]] = {
            "numpy_vec": lambda: trades_numpy_vec(p, v, off)
        }
        if not args.no_ticks_loop:
            tpeers["numpy_loop"] = lambda: trades_numpy_loop(p, v, off)
        nbytes = p.nbytes + v.nbytes + off.nbytes
        results["ticks"] = run_workload("ticks", len(tr), nbytes, tfn, tpeers, threads, args.repeat)
        results["ticks"]["price_dtype"] = str(p.dtype)
        results["ticks"]["volume_dtype"] = str(v.dtype)
        del tr, p, v, off

    if "window" in wls and all(r["correct"] for r in results.values()):
        sys.path.insert(0, str(Path(__file__).parent))
        from window_wickra import run_window

        t0 = time.perf_counter()
        bars = es_bars(args.sessions, args.bars, seed=args.seed)
        print(f"es_bars({args.sessions}, {args.bars}): {time.perf_counter() - t0:.2f}s", flush=True)
        results["window"] = run_window(vpoc, bars, TICK_SIZE, args.window, args.window_bins, threads,
                                       args.repeat, best_of, across=args.window_across)
        del bars

    ok = all(r["correct"] for r in results.values())
    if ok:
        print_table(results, threads)
        targets = check_targets(results, threads)
    else:
        targets = []
        for wl, r in results.items():
            for e in r.get("errors", []):
                print(f"ERROR [{wl}] {e}", file=sys.stderr)

    doc = {
        "machine": _machine(),
        "git_commit": _git_commit(),
        "git_dirty": _git_dirty(),
        "numpy_version": np.__version__,
        "vpoc_version": getattr(vpoc, "__version__", None),
        "repeat": args.repeat,
        "seed": args.seed,
        "tick_size": TICK_SIZE,
        "load_avg_before": load_before,
        "load_avg_after": _loadavg(),
        "workloads": results,
        "targets": targets,
    }
    if tiny is not None:
        doc["tiny_from_bars"] = tiny
    out = args.out or _default_out()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    if not ok:
        print(
            "FAILED: a peer disagrees with vpoc (see errors above); nothing was timed",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
