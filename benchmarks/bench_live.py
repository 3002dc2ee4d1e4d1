"""Live benchmark: ``vpoc.Live`` one-bar updates against recomputing with the batch API each bar.

Workloads (ES ladder, tick_size 0.25, ``distribute="uniform"``, synthetic one-minute bars from
``vpoc.synth.es_bars``, Globex sessions by the clock: ``session="globex"``, ``calendar=None``):

* ``session``: 6 sessions of 1,380 bars; the first 5 are fed untimed (the history the
  previous-session and composite features read), then every bar of the 6th is one timed
  ``update()`` followed by the POC/VAH/VAL read (``live_us``) or by ``bar_features_row()``
  (``live_features_us``; a second feed). The first bar of the 6th session also ends the 5th
  (its profile, composite, naked POCs and session_features row): its time is reported alone
  (``*_rollover_us``) and the others as ``*_steady``; ``live_us`` / ``live_features_us`` cover
  all 1,380. Peers, per bar of the 6th session: ``from_bars`` on the
  session's bars so far (``from_bars_us``: the plain profile, POC and value area), and
  ``bar_features`` on all bars so far (``bar_features_us``, every ``--stride``-th bar: the
  features need the earlier sessions).
* ``replay``: ``--sessions`` sessions (254: about one year, ~350,000 bars) fed one bar at a
  time end to end (update, levels read and ``bar_features_row()`` each bar; session_features
  rows of all finished sessions at the end: ``live_s``; ``live_bars_s`` without them), against
  one batch call of ``from_bars(developing=True)`` +
  ``bar_features`` + ``session_features``.

Correctness first: every live level and feature row is compared with the batch results bit
for bit (finished profiles and session rows too); a mismatch exits with status 1. Timings are
``time.perf_counter_ns`` around each call (mean, p50, p99, max).

Usage::

    python benchmarks/bench_live.py                       # full size, writes results/live-cpu.json
    python benchmarks/bench_live.py --sessions 20 --out /tmp/live.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy as np

from bench_cpu import REPO, _git_commit, _git_dirty, _loadavg, _machine  # noqa: F401
import vpoc  # noqa: E402  (bench_cpu puts the source tree on the path when vpoc is not installed)

TICK = 0.25
BARS = 1380
KW = dict(tick_size=TICK, distribute="uniform")
SESSION = dict(session="globex", session_options=dict(calendar=None))
TARGETS = {"live_p99_us": 20.0, "live_features_p99_us": 100.0}


def _stats(ns: Sequence[int]) -> Dict[str, float]:
    us = np.asarray(ns, dtype=np.float64) / 1e3
    return {"mean": float(us.mean()), "p50": float(np.percentile(us, 50)),
            "p99": float(np.percentile(us, 99)), "max": float(us.max()), "n": int(us.size)}


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def _batch(b: Any) -> Dict[str, Any]:
    """The batch results for the bars of b, on the kept rows of Globex sessions."""
    S = vpoc.sessions.globex(b.timestamp, calendar=None)
    h, lo, c, v, o, ts = S.take(b.high, b.low, b.close, b.volume, b.open, b.timestamp)
    t0 = time.perf_counter()
    dev = vpoc.from_bars(h, lo, c, v, open=o, offsets=S.offsets, developing=True, **KW)
    bf = vpoc.bar_features(h, lo, c, v, open=o, timestamp=ts, offsets=S.offsets, **KW)
    sf = vpoc.session_features(h, lo, c, v, open=o, timestamp=ts, offsets=S.offsets, **KW)
    seconds = time.perf_counter() - t0
    return dict(S=S, dev=dev, bf=bf, sf=sf, seconds=seconds,
                cols=(h, lo, c, v, o, ts), plain=vpoc.from_bars(h, lo, c, v, open=o, offsets=S.offsets, **KW))


def session_workload(stride: int) -> Dict[str, Any]:
    b = vpoc.synth.es_bars(n_sessions=6, bars_per_session=BARS, seed=1)
    ref = _batch(b)
    S = ref["S"]
    h, lo, c, v, o, ts = ref["cols"]
    start = int(S.offsets[-2])  # first kept row of the last session
    n = h.shape[0]
    args = [x.tolist() for x in (h, lo, c, v, o)]
    tsl = ts.tolist()
    out: Dict[str, Any] = {"bars": n - start, "history_bars": start}
    correct = True
    for with_features in (False, True):
        live = vpoc.Live(**KW, **SESSION)
        live.update(h[:start], lo[:start], c[:start], v[:start], open=o[:start], timestamp=ts[:start])
        times: List[int] = []
        rows = []
        levels = []
        clock = time.perf_counter_ns
        H, L, C, V, O = args
        for i in range(start, n):
            t0 = clock()
            live.update(H[i], L[i], C[i], V[i], open=O[i], timestamp=tsl[i])
            if with_features:
                row = live.bar_features_row()
            else:
                lv = (live.poc, live.vah, live.val)
            times.append(clock() - t0)
            if with_features:
                rows.append(row)
            else:
                levels.append(lv)
        key = "live_features_us" if with_features else "live_us"
        out[key] = _stats(times)  # every bar, the first one ending the previous session
        out[key + "_steady"] = _stats(times[1:])  # bars that only extend the session
        out[key.replace("_us", "_rollover_us")] = times[0] / 1e3
        if with_features:
            correct &= _same(np.stack(rows), ref["bf"].values[start:])
        else:
            lv_arr = np.asarray(levels)
            dev = ref["dev"]
            correct &= (np.array_equal(lv_arr[:, 0], dev.dev_poc[start:])
                        and np.array_equal(lv_arr[:, 1], dev.dev_vah[start:])
                        and np.array_equal(lv_arr[:, 2], dev.dev_val[start:]))
    # peer 1: from_bars on the session's bars so far, each bar
    times = []
    for i in range(start, n):
        t0 = time.perf_counter_ns()
        p = vpoc.from_bars(h[start:i + 1], lo[start:i + 1], c[start:i + 1], v[start:i + 1],
                           open=o[start:i + 1], **KW)
        _ = (p.poc[0], p.vah[0], p.val[0])
        times.append(time.perf_counter_ns() - t0)
    out["from_bars_us"] = _stats(times)
    last = vpoc.from_bars(h[start:], lo[start:], c[start:], v[start:], open=o[start:], **KW)
    correct &= bool(last.poc[0] == ref["plain"].poc[-1])
    # peer 2: bar_features on every bar so far (all sessions), each stride-th bar
    times = []
    offs = S.offsets
    for i in range(start, n, stride):
        k = i + 1
        o_k = np.r_[offs[offs < k], k]
        t0 = time.perf_counter_ns()
        t = vpoc.bar_features(h[:k], lo[:k], c[:k], v[:k], open=o[:k], timestamp=ts[:k],
                              offsets=o_k, **KW)
        row = t.values[-1]
        times.append(time.perf_counter_ns() - t0)
        correct &= _same(row, ref["bf"].values[i])
    out["bar_features_us"] = _stats(times)
    out["bar_features_stride"] = stride
    out["speedup_vs_from_bars"] = out["from_bars_us"]["mean"] / out["live_us"]["mean"]
    out["speedup_features_vs_bar_features"] = out["bar_features_us"]["mean"] / out["live_features_us"]["mean"]
    out["correct"] = bool(correct)
    return out


def replay_workload(n_sessions: int) -> Dict[str, Any]:
    b = vpoc.synth.es_bars(n_sessions=n_sessions, bars_per_session=BARS, seed=7, start_date="2023-01-03")
    ref = _batch(b)
    n = b.close.shape[0]
    H, L, C, V, O = (x.tolist() for x in (b.high, b.low, b.close, b.volume, b.open))
    T = b.timestamp.tolist()
    kept = ref["S"].mask
    live = vpoc.Live(**KW, **SESSION)
    levels = np.empty((int(kept.sum()), 3))
    rows = np.empty((int(kept.sum()), len(ref["bf"].columns)), dtype=np.float32)
    j = 0
    t0 = time.perf_counter()
    for i in range(n):
        lv = live.update(H[i], L[i], C[i], V[i], open=O[i], timestamp=T[i])
        if kept[i]:
            levels[j] = lv[:3]
            rows[j] = live.bar_features_row()
            j += 1
    live.close()
    seconds_bars = time.perf_counter() - t0
    table = live.session_table()  # the finished sessions' session_features rows
    seconds = time.perf_counter() - t0
    dev, plain = ref["dev"], ref["plain"]
    correct = (np.array_equal(levels[:, 0], dev.dev_poc) and np.array_equal(levels[:, 1], dev.dev_vah)
               and np.array_equal(levels[:, 2], dev.dev_val) and _same(rows, ref["bf"].values)
               and live.n_dropped == ref["S"].n_dropped)
    prof = live.profiles
    for name in ("poc", "vah", "val", "offsets", "volume", "total_volume", "va_volume"):
        correct &= bool(np.array_equal(getattr(prof, name), getattr(plain, name)))
    correct &= table.columns == ref["sf"].columns and _same(table.values, ref["sf"].values)
    return {"bars": n, "kept_bars": int(kept.sum()), "dropped_bars": int(live.n_dropped),
            "sessions": int(prof.n_sessions), "live_s": seconds, "live_us_per_bar": seconds / n * 1e6,
            "live_bars_s": seconds_bars, "live_session_table_s": seconds - seconds_bars,
            "batch_s": ref["seconds"], "correct": bool(correct)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=254, help="sessions in the replay (254: ~1 year)")
    ap.add_argument("--stride", type=int, default=10, help="bar_features peer: every N-th bar")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "live-cpu.json")
    args = ap.parse_args(argv)
    doc: Dict[str, Any] = {
        "machine": _machine(), "git_commit": _git_commit(), "git_dirty": _git_dirty(),
        "numpy_version": np.__version__, "vpoc_version": vpoc.__version__,
        "tick_size": TICK, "distribute": KW["distribute"], "session": "globex(calendar=None)",
        "load_avg_before": _loadavg(), "targets": TARGETS, "workloads": {},
    }
    s = session_workload(args.stride)
    doc["workloads"]["session"] = s
    print(f"session ({s['bars']} bars after {s['history_bars']}): live update+levels mean "
          f"{s['live_us']['mean']:.2f} us p99 {s['live_us']['p99']:.2f} us; with bar_features_row mean "
          f"{s['live_features_us']['mean']:.2f} us p99 {s['live_features_us']['p99']:.2f} us; "
          f"from_bars each bar {s['from_bars_us']['mean']:.1f} us ({s['speedup_vs_from_bars']:.1f}x); "
          f"bar_features each bar {s['bar_features_us']['mean']:.0f} us "
          f"({s['speedup_features_vs_bar_features']:.0f}x); correct={s['correct']}")
    r = replay_workload(args.sessions)
    doc["workloads"]["replay"] = r
    print(f"replay {r['bars']} bars ({r['sessions']} sessions, {r['dropped_bars']} dropped): "
          f"{r['live_s']:.2f} s ({r['live_us_per_bar']:.2f} us/bar) vs batch {r['batch_s']:.2f} s; "
          f"correct={r['correct']}")
    doc["load_avg_after"] = _loadavg()
    doc["meets_targets"] = {
        "live_p99_us": s["live_us"]["p99"] <= TARGETS["live_p99_us"],
        "live_features_p99_us": s["live_features_us"]["p99"] <= TARGETS["live_features_p99_us"],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0 if s["correct"] and r["correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
