"""bench_cpu.py's ``window`` workload: vpoc's rolling-window levels beside wickra 2.0.0's ValueArea.
Contract: run_window() checks vpoc against wickra on every full window (one tick per bin) before timing both.

What is compared (GUIDE section 7 gives wickra's rules):

* vpoc: ``from_bars(..., developing=True, window=N, distribute="uniform", va_method="single",
  poc_tie="low")``: per bar, POC / VAH / VAL of the session's last N bars.
* wickra: ``ValueArea(period=N, bin_count=B)``: per candle, POC (bin centre), VAH / VAL (bin
  upper / lower edges) of the last N candles, ``B`` equal-width bins over [window low, window high],
  a candle's volume split equally over the bins its range touches, first maximum, one bin at a
  time with ``up >= down`` going up, stop at ``acc >= target``. Its windows run across sessions.

**Exact check (one tick per bin).** ``bin_count`` is fixed per instance while a window's range
varies, so a window of ``K + 1`` ticks (``K`` = high tick - low tick) is checked by an instance with
``bin_count = K + 1``, fed in tick units with every candle's high raised by half a tick: the window
is ``[lo, lo + K + 0.5]``, the bin width ``(K + 0.5) / (K + 1)``, and tick ``lo + k`` (a low, or a
high + 0.5) falls in bin ``k`` with a margin of at least ``0.5 / (K + 0.5)`` of a bin, so each bin
holds exactly one tick: wickra's histogram is vpoc's row histogram. Each width ``K`` runs one
``batch`` over the bars its windows need (bars ``i - N + 1 .. i`` of every bar ``i`` of that width;
runs of such bars are contiguous in the original order, so every compared window is the same N
bars). Only *full* windows (bar ``i`` at least ``N - 1`` bars into its session) are compared: a
window reaching into the previous session, or shorter than N, has no wickra counterpart; their
count is reported. With ``window_across_sessions=True`` (``bench_cpu.py --window-across``) vpoc's
windows run across sessions as wickra's do, and every window of N bars is compared. Levels are compared as bin indices (= ticks above the window low).

**Float ties.** wickra sums ``v / n`` in float64 and compares strictly; vpoc sums exactly and treats
values within ``1e-9`` relative as tied (docs/contract.md "POC", "Value area"). A window where an
exact tie is broken by wickra's last bits differs; it is counted as *explained* only when (a)
wickra's ``VolumeProfile`` histogram of that window equals vpoc's (``from_bars`` of the N bars,
whose levels must be the window series') to ``1e-12`` of the window's volume, (b) wickra's levels
are one of the outcomes of the shared rules on that histogram with every decision that lies within
1e-9 of a tie (the maximum, an up/down step, the stop at the target) taken either way (wickra's own
float sums are not reproducible from outside, so its exact path is not replayed), and (c) the
rules with vpoc's tie resolution on that same histogram give vpoc's levels. Any other difference
fails the workload (nothing is timed).

**Timing.** vpoc on every bar (``threads=1`` and all); wickra's ``ValueArea.batch`` on the same
float64 bars in price units with one fixed ``bin_count`` (default: the median window width in ticks,
so a typical window has one tick per bin; its bins then differ from vpoc's where a window is wider
or narrower, which the timing does not depend on), a fresh instance per call (``batch`` keeps the
instance's window). ``tolist()`` of wickra's result is not timed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import sliding_window_view

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
TIE = 1e-9  # vpoc's relative tie band (docs/contract.md)
MAX_EXPLAIN = 2000  # differing windows examined one by one at most


def load_wickra() -> tuple[Any, str]:
    """(wickra module or None, a line saying which one or why it is skipped)."""
    try:
        import wickra
    except ImportError as e:
        return None, f"wickra not importable ({e}): the wickra part of the window workload is skipped"
    return wickra, f"wickra {getattr(wickra, '__version__', '?')}"


def window_bounds(tl: I64, th: I64, offsets: I64, n: int) -> tuple[I64, I64, npt.NDArray[np.bool_]]:
    """Per bar i: low tick and high tick of bars ``i - n + 1 .. i`` (-1 for i < n - 1), and
    whether that window is full and inside i's session."""
    rows = tl.shape[0]
    lo = np.full(rows, -1, dtype=np.int64)
    hi = np.full(rows, -1, dtype=np.int64)
    if rows >= n:
        lo[n - 1:] = sliding_window_view(tl, n).min(axis=1)
        hi[n - 1:] = sliding_window_view(th, n).max(axis=1)
    counts = np.diff(offsets)
    pos = np.arange(rows, dtype=np.int64) - np.repeat(offsets[:-1], counts)
    return lo, hi, pos >= n - 1


def _needed(rows: npt.NDArray[np.bool_], n: int) -> npt.NDArray[np.bool_]:
    """Bar j is needed when some selected bar i has j in ``i - n + 1 .. i``."""
    c = np.concatenate(([0], np.cumsum(rows, dtype=np.int64)))
    j = np.arange(rows.shape[0])
    return c[np.minimum(j + n, rows.shape[0])] - c[j] > 0


def wickra_tick_levels(
    wk: Any, tl: I64, th: I64, vol: F64, lo: I64, hi: I64, sel: npt.NDArray[np.bool_], n: int
) -> tuple[I64, I64, I64, dict[str, Any]]:
    """wickra's POC / VAH / VAL bin of every selected full window, one tick per bin (module
    docstring), as ticks above the window low (-1 where not selected); and what it took."""
    rows = tl.shape[0]
    poc = np.full(rows, -1, dtype=np.int64)
    vah, val = poc.copy(), poc.copy()
    H = th.astype(np.float64) + 0.5
    L = tl.astype(np.float64)
    K = hi - lo
    widths = np.unique(K[sel])
    fed = 0
    for k in widths.tolist():
        rows_k = sel & (K == k)
        idx = np.flatnonzero(_needed(rows_k, n))
        fed += idx.size
        out = np.asarray(wk.ValueArea(period=n, bin_count=k + 1).batch(H[idx], L[idx], vol[idx]).tolist())
        take = rows_k[idx]
        r, o = idx[take], out[take]
        w = (k + 0.5) / (k + 1)
        base = lo[r].astype(np.float64)
        poc[r] = np.floor((o[:, 0] - base) / w)
        vah[r] = np.rint((o[:, 1] - base) / w) - 1
        val[r] = np.rint((o[:, 2] - base) / w)
    info = {"distinct_widths": int(widths.size), "bars_fed_to_wickra": int(fed),
            "width_ticks_min": int(widths[0]) + 1 if widths.size else None,
            "width_ticks_max": int(widths[-1]) + 1 if widths.size else None}
    return poc, vah, val, info


def replay_levels(hist: F64, value_area: float, tie: float) -> tuple[int, int, int]:
    """The rules both tools share, ties resolved as vpoc does (docs/contract.md): first maximum
    (values within ``tie`` relative of the maximum tie: the lowest), one row at a time, up on
    ``up >= down`` (or within ``tie``), one side exhausted takes the other, stop when the
    target is reached or within ``tie`` of it. Returns (poc, vah, val) indices."""
    m = float(hist.max())
    poc = int(np.flatnonzero(hist >= m - tie * m)[0])
    target = value_area * float(hist.sum())
    acc, a, b = float(hist[poc]), poc, poc
    while not (acc >= target or target - acc <= tie * target) and (a > 0 or b < hist.size - 1):
        up = float(hist[b + 1]) if b < hist.size - 1 else None
        dn = float(hist[a - 1]) if a > 0 else None
        if dn is None or (up is not None and (up >= dn or abs(up - dn) <= tie * max(up, dn))):
            b += 1
            acc += up  # type: ignore[operator]
        else:
            a -= 1
            acc += dn
    return poc, b, a


def rule_outcomes(hist: F64, value_area: float, tie: float) -> set[tuple[int, int, int]]:
    """Every (poc, vah, val) the shared rules give when each decision within ``tie`` relative of
    a tie is taken either way: the tied maxima, an up/down step with ``|up - down| <= tie *
    max``, stopping or not when the running sum is within ``tie`` of the target. A float
    implementation that compares strictly gives one of these; the sums are exact per state
    (prefix sums of ``hist``), so the walk is over (val, vah) states, each visited once."""
    size = hist.shape[0]
    m = float(hist.max())
    pre = np.concatenate(([0.0], np.cumsum(hist, dtype=np.float64)))
    target = value_area * float(pre[-1])
    out: set[tuple[int, int, int]] = set()
    for poc in np.flatnonzero(hist >= m - tie * m).tolist():
        seen: set[tuple[int, int]] = set()
        todo = [(poc, poc)]
        while todo:
            a, b = todo.pop()
            if (a, b) in seen:
                continue
            seen.add((a, b))
            acc = float(pre[b + 1] - pre[a])
            near = abs(acc - target) <= tie * target
            if near or acc >= target or (a == 0 and b == size - 1):
                out.add((poc, b, a))
                if not near or (a == 0 and b == size - 1):
                    continue
            up = float(hist[b + 1]) if b < size - 1 else None
            dn = float(hist[a - 1]) if a > 0 else None
            if up is not None and (dn is None or up > dn or abs(up - dn) <= tie * max(up, dn)):
                todo.append((a, b + 1))
            if dn is not None and (up is None or dn > up or abs(up - dn) <= tie * max(up, dn)):
                todo.append((a - 1, b))
    return out


def _explain(wk: Any, vpoc: Any, i: int, n: int, bars: tuple[F64, F64, F64, Any], tick: float,
             tl: I64, th: I64, value_area: float, got: tuple[int, int, int],
             want: tuple[int, int, int]) -> str | None:
    """None when window i's difference is a float tie (module docstring), else why not."""
    h, low, c, v = bars
    sl = slice(i - n + 1, i + 1)
    lo, k = int(tl[sl].min()), int(th[sl].max() - tl[sl].min())
    p = vpoc.from_bars(h[sl], low[sl], c[sl], v[sl], tick_size=tick, distribute="uniform",
                       va_method="single", poc_tie="low", value_area=value_area)
    exact = np.asarray(p.volume, dtype=np.float64)
    lv = tuple(int(np.asarray(getattr(p, a))[0]) - lo for a in ("poc_row", "vah_row", "val_row"))
    if lv != want:
        return f"bar {i}: vpoc on the window's {n} bars gives {lv}, its window series {want}"
    out = wk.VolumeProfile(period=n, bin_count=k + 1).batch(
        th[sl].astype(np.float64) + 0.5, tl[sl].astype(np.float64), np.asarray(v[sl], dtype=np.float64))
    wh = np.asarray(out.tolist()[-1][2:], dtype=np.float64)
    if wh.shape != exact.shape or np.abs(wh - exact).max() > 1e-12 * exact.sum():
        return f"bar {i}: wickra's histogram differs from vpoc's beyond float rounding"
    if got not in rule_outcomes(wh, value_area, TIE):
        return f"bar {i}: wickra's levels {got} are not the shared rules on its histogram, ties either way"
    if replay_levels(wh, value_area, TIE) != want:
        return f"bar {i}: vpoc's tie band on wickra's histogram does not give vpoc's levels {want}"
    return None


def check_window(wk: Any, vpoc: Any, prof: Any, h: F64, low: F64, c: F64, v: Any, offsets: I64,
                 tick: float, n: int, value_area: float) -> dict[str, Any]:
    """Every full window of vpoc's window series (``prof``) against wickra, one tick per bin."""
    t0 = time.perf_counter()
    tl = np.rint(low / tick).astype(np.int64)
    th = np.rint(h / tick).astype(np.int64)
    lo, hi, full = window_bounds(tl, th, offsets, n)
    vol = np.asarray(v, dtype=np.float64)
    wp, wvh, wvl, info = wickra_tick_levels(wk, tl, th, vol, lo, hi, full, n)
    mine = [np.rint(np.asarray(getattr(prof, a)) / tick).astype(np.int64) - lo
            for a in ("dev_poc", "dev_vah", "dev_val")]
    res: dict[str, Any] = {"method": "one tick per bin: bin_count = window width in ticks, highs + 0.5 "
                           "tick, one wickra batch per width; levels compared as bin indices",
                           "windows": int(tl.shape[0]), "compared": int(full.sum()),
                           "not_compared_partial_windows": int((~full).sum()), **info}
    diff = full & ((mine[0] != wp) | (mine[1] != wvh) | (mine[2] != wvl))
    for name, a, b in zip(("poc", "vah", "val"), mine, (wp, wvh, wvl)):
        res[f"{name}_differ"] = int((full & (a != b)).sum())
    bad = np.flatnonzero(diff)
    res["windows_differ"] = int(bad.size)
    problems: list[str] = []
    explained = 0
    for i in bad[:MAX_EXPLAIN].tolist():
        why = _explain(wk, vpoc, i, n, (h, low, c, v), tick, tl, th, value_area,
                       (int(wp[i]), int(wvh[i]), int(wvl[i])),
                       (int(mine[0][i]), int(mine[1][i]), int(mine[2][i])))
        if why is None:
            explained += 1
        else:
            problems.append(why)
    if bad.size > MAX_EXPLAIN:
        problems.append(f"{bad.size - MAX_EXPLAIN} differing windows not examined (over {MAX_EXPLAIN})")
    res["differ_explained_float_ties"] = explained
    res["differ_unexplained"] = int(bad.size) - explained
    res["equal"] = int(full.sum()) - int(bad.size)
    res["examples_differ"] = [int(i) for i in bad[:10]]
    res["problems"] = problems[:20]
    res["seconds"] = time.perf_counter() - t0
    return res


def time_wickra(wk: Any, h: F64, low: F64, v: F64, n: int, bins: int,
                best_of: Callable[[Callable[[], object], int], float], repeat: int) -> float:
    """Best ``ValueArea(period=n, bin_count=bins).batch`` time, a fresh instance per call."""
    return best_of(lambda: wk.ValueArea(period=n, bin_count=bins).batch(h, low, v), repeat)


def run_window(vpoc: Any, bars: Any, tick: float, n: int, bins: int | None, threads: int, repeat: int,
               best_of: Callable[[Callable[[], object], int], float], across: bool = False) -> dict[str, Any]:
    """The ``window`` workload: vpoc threads=1 vs all, the wickra check, then the timings. Keys as
    bench_cpu.run_workload's (``wickra_s``, ``speedup_1t_vs_wickra``, ...) plus ``check``.
    ``across``: ``window_across_sessions=True``: vpoc's windows run across sessions as wickra's do,
    so every window of N bars is compared (not only those inside one session)."""
    h, low, c, v, off = bars.high, bars.low, bars.close, bars.volume, bars.offsets
    nbytes = h.nbytes + low.nbytes + c.nbytes + v.nbytes + off.nbytes
    print(f"\n[window] rows={len(h):,} input={nbytes / 1e6:.1f} MB window={n} bars"
          f"{' across sessions' if across else ''}", flush=True)
    opts = dict(offsets=off, tick_size=tick, developing=True, window=n, distribute="uniform",
                va_method="single", poc_tie="low")
    if across:
        opts["window_across_sessions"] = True
    # the windows compared with wickra's: full ones inside a session, or (across) every full one
    full_off = np.array([0, len(h)], dtype=np.int64) if across else off

    def vfn(nt: int) -> Any:
        return vpoc.from_bars(h, low, c, v, threads=nt, **opts)

    out: dict[str, Any] = {"rows": int(len(h)), "input_bytes": int(nbytes), "threads": threads, "window": n,
                           "distribute": "uniform", "va_method": "single", "poc_tie": "low",
                           "price_dtype": str(h.dtype), "volume_dtype": str(v.dtype),
                           "window_across_sessions": across}
    prof, prof_n = vfn(1), vfn(threads)
    errs = [f"vpoc threads=1 vs threads={threads}: {a} differs" for a in ("dev_poc", "dev_vah", "dev_val")
            if not np.array_equal(np.asarray(getattr(prof, a)), np.asarray(getattr(prof_n, a)), equal_nan=True)]
    del prof_n
    wk, line = load_wickra()
    print(f"  {line}", flush=True)
    out["wickra"] = getattr(wk, "__version__", "?") if wk is not None else None
    out["wickra_note"] = line
    if wk is not None and not errs:
        chk = check_window(wk, vpoc, prof, h, low, c, v, full_off, tick, n, 0.70)
        out["check"] = chk
        print(f"  check wickra ({chk['seconds']:.1f}s, one tick per bin): {chk['compared']:,} full windows, "
              f"{chk['equal']:,} equal, {chk['windows_differ']} differ ({chk['differ_explained_float_ties']} "
              f"explained by float ties, {chk['differ_unexplained']} unexplained); "
              f"{chk['not_compared_partial_windows']:,} partial windows not compared", flush=True)
        errs += [f"wickra: {p}" for p in chk["problems"]]
        if chk["differ_unexplained"]:
            errs.append(f"wickra: {chk['differ_unexplained']} windows differ unexplained")
    del prof
    out["correct"] = not errs
    if errs:
        out["errors"] = errs
        return out
    out["vpoc_1t_s"] = best_of(lambda: vfn(1), repeat)
    out["vpoc_nt_s"] = best_of(lambda: vfn(threads), repeat)
    out["thread_scaling"] = out["vpoc_1t_s"] / out["vpoc_nt_s"]
    print(f"  vpoc 1t {out['vpoc_1t_s']:.4f}s  {threads}t {out['vpoc_nt_s']:.4f}s", flush=True)
    if wk is None:
        return out
    if bins is None:
        tl, th = np.rint(low / tick).astype(np.int64), np.rint(h / tick).astype(np.int64)
        lo, hi, full = window_bounds(tl, th, full_off, n)
        bins = int(np.median(hi[full] - lo[full])) + 1 if full.any() else 1
    hf, lf, vf = (np.ascontiguousarray(a, dtype=np.float64) for a in (h, low, v))
    out["wickra_config"] = {"class": "ValueArea", "period": n, "bin_count": bins, "value_area_pct": 0.70,
                            "prices": "float64 price units", "note": "one fixed bin_count for every window "
                            "(default: median window width in ticks); a fresh instance per timed call"}
    s = time_wickra(wk, hf, lf, vf, n, bins, best_of, repeat)
    out["wickra_s"] = s
    out["speedup_1t_vs_wickra"] = s / out["vpoc_1t_s"]
    out["speedup_nt_vs_wickra"] = s / out["vpoc_nt_s"]
    print(f"  wickra ValueArea(period={n}, bin_count={bins}) {s:.4f}s: vpoc 1t "
          f"{out['speedup_1t_vs_wickra']:.1f}x, {threads}t {out['speedup_nt_vs_wickra']:.1f}x faster", flush=True)
    return out
