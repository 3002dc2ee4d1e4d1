"""The engine cases of tests/test_cpu_isa.py: inputs, and one run of them all into an .npz (one per VPOC_CPU_ISA level).
Contract: inputs() is deterministic; run_all() runs every case in this process (whatever level it has) and keeps each field.

Run as a script (a subprocess with VPOC_CPU_ISA set): ``python _isa_cases.py VPOC_PARENT OUT.npz`` puts the
parent's vpoc first on sys.path and writes every case's result fields, its error texts and build_info's level.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

TICK = 0.25
N = 12_000  # a dozen 1024-trade blocks: several runs_likely samples, block and session edges
OFFSETS = [0, 1500, 5000, 5000, N]  # an empty session, sessions ending inside blocks
FIELDS = ("poc_row", "vah_row", "val_row", "low_row", "n_rows", "poc", "vah", "val", "total_volume", "va_volume",
          "offsets", "volume")
THREADS = (1, 2)


def _walk(n: int, seed: int, move: float) -> np.ndarray:
    """Prices on the TICK grid that move on a `move` share of the trades (long runs of equal prices where small)."""
    rng = np.random.default_rng(seed)
    steps = rng.integers(-2, 3, n) * (rng.random(n) < move)
    return 4000.0 + (np.cumsum(steps) % 400) * TICK


def inputs() -> dict:
    """name -> (kind, arrays, keyword arguments, whether the volumes are whole)."""
    rng = np.random.default_rng(25)
    # runs first (the merged-runs path of float32 prices and volumes at avx512), then busy trades
    walk = np.concatenate([_walk(N // 2, 1, 0.05), _walk(N - N // 2, 2, 0.7)])
    cases = {}
    for pd in (np.float32, np.float64):
        for vd in (np.float32, np.int32, np.int64, np.float64):
            vol = rng.integers(1, 500, N).astype(vd)
            cases[f"trades_{np.dtype(pd).name}_{np.dtype(vd).name}"] = (
                "trades", (walk.astype(pd), vol), {"offsets": OFFSETS}, True)
    frac = (rng.integers(1, 64, N) / 8.0).astype(np.float32)  # fractions: the float rows, never merged
    cases["trades_float32_fractional"] = ("trades", (walk.astype(np.float32), frac), {"offsets": OFFSETS}, False)
    cases["trades_float64_fractional"] = ("trades", (walk, frac.astype(np.float64) * 1.1), {"offsets": OFFSETS}, False)
    # bars: high / low around the walk's close, 1 .. 12 ticks wide
    nb = 6000
    close = _walk(nb, 3, 0.5)
    high = close + rng.integers(0, 6, nb) * TICK
    low = close - rng.integers(0, 6, nb) * TICK
    boff = [0, 700, 4100, nb]
    for pd in (np.float32, np.float64):
        for vd, whole in ((np.int64, True), (np.float32, True), (np.float64, False)):
            bvol = rng.integers(1, 5000, nb).astype(vd) if whole else rng.integers(1, 5000, nb) / 3.0
            for dist in ("close", "uniform"):
                cases[f"bars_{dist}_{np.dtype(pd).name}_{np.dtype(vd).name}"] = (
                    "bars", (high.astype(pd), low.astype(pd), close.astype(pd), bvol),
                    {"offsets": boff, "distribute": dist}, whole and dist == "close")
    return cases


def bad_inputs() -> dict:
    """name -> (kind, arrays, keyword arguments): calls refused for one bad row, the error text compared."""
    walk = _walk(N, 4, 0.05)
    out = {}
    for pd, vd in ((np.float32, np.float32), (np.float64, np.int64), (np.float32, np.int32)):
        vol = np.ones(N, dtype=vd)
        vol[7777] = -3  # in the eighth block, after merged runs
        out[f"bad_volume_{np.dtype(pd).name}_{np.dtype(vd).name}"] = ("trades", (walk.astype(pd), vol), {})
    nb = 3000
    close = _walk(nb, 5, 0.5)
    bvol = np.full(nb, 7.0)
    bvol[2222] = np.nan
    out["bad_volume_bars"] = ("bars", (close + TICK, close - TICK, close, bvol), {"distribute": "uniform"})
    return out


def off_grid_inputs() -> dict:
    """name -> (prices, tick_size): the grid prefilter's two loops (a power-of-two tick, and 0.1)."""
    rng = np.random.default_rng(7)
    p = _walk(70_000, 6, 0.5)
    p[rng.integers(0, p.size, 9)] += 0.03
    return {"grid_f64_quarter": (p, TICK), "grid_f32_quarter": (p.astype(np.float32), TICK),
            "grid_f64_tenth": (np.round(p, 1) + (np.arange(p.size) % 997 == 5) * 0.04, 0.1)}


def call(vpoc, kind: str, arrays: tuple, kw: dict, threads: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "trades":
            return vpoc.from_trades(*arrays, tick_size=TICK, threads=threads, **kw)
        return vpoc.from_bars(*arrays, tick_size=TICK, threads=threads, **kw)


def run_all(vpoc) -> dict:
    """Every case's fields ("case/threads/field"), error texts ("error:case/threads") and off-grid counts."""
    out = {}
    for name, (kind, arrays, kw, _) in inputs().items():
        for t in THREADS:
            r = call(vpoc, kind, arrays, kw, t)
            for f in FIELDS:
                out[f"{name}/{t}/{f}"] = np.asarray(getattr(r, f))
    for name, (kind, arrays, kw) in bad_inputs().items():
        for t in THREADS:
            try:
                call(vpoc, kind, arrays, kw, t)
                text = "no error"
            except (ValueError, TypeError) as e:
                text = f"{type(e).__name__}: {e}"
            out[f"error:{name}/{t}"] = np.array(text)
    for name, (p, tick) in off_grid_inputs().items():
        for t in THREADS:
            out[f"grid:{name}/{t}"] = np.array(vpoc._core.count_off_grid(p, tick, t), dtype=np.int64)
    return out


def main(parent: str, path: str) -> None:
    sys.path.insert(0, parent)
    import vpoc

    out = run_all(vpoc)
    info = vpoc._core.build_info()
    out["level"] = np.array(info["cpu_isa"])
    out["vpoc_file"] = np.array(vpoc.__file__)
    np.savez(path, **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
