"""benchmarks/window_wickra.py (bench_cpu.py's ``window`` workload) against brute force and wickra.

Contract: window bounds and the needed-bar mask equal brute force; the rule replay equals vpoc's
levels on random histograms; the wickra check is exact on random bars, explains float ties, flags a
real difference; the workload runs (and skips wickra cleanly without it) through bench_cpu.main.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ww = _load("window_wickra")
OPTS = dict(distribute="uniform", va_method="single", poc_tie="low")


def _bars(rng, sizes, span=6):
    """Random bars on the 0.25 grid in tick units (flat bars, gaps, repeated prices)."""
    m = int(sum(sizes))
    tl = rng.integers(0, span, m)
    th = tl + rng.integers(0, 4, m)
    v = rng.integers(1, 12, m)
    off = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    return th * 0.25 + 100.0, tl * 0.25 + 100.0, v, off


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_window_bounds_brute_force(n):
    rng = np.random.default_rng(n)
    tl = rng.integers(0, 50, 40)
    th = tl + rng.integers(0, 5, 40)
    off = np.array([0, 0, 2, 15, 40])  # an empty session, one shorter than most windows
    lo, hi, full = ww.window_bounds(tl, th, off, n)
    for s in range(off.size - 1):
        for i in range(off[s], off[s + 1]):
            assert full[i] == (i - off[s] >= n - 1)
            if i >= n - 1:
                assert lo[i] == tl[i - n + 1:i + 1].min() and hi[i] == th[i - n + 1:i + 1].max()


def test_window_bounds_fewer_rows_than_window():
    lo, hi, full = ww.window_bounds(np.array([3, 4]), np.array([5, 6]), np.array([0, 2]), 5)
    assert lo.tolist() == [-1, -1] and hi.tolist() == [-1, -1] and not full.any()


def test_needed_brute_force():
    rng = np.random.default_rng(0)
    for n in (1, 2, 5):
        rows = rng.random(30) < 0.2
        want = np.zeros(30, bool)
        for i in np.flatnonzero(rows):
            want[max(0, i - n + 1):i + 1] = True
        assert np.array_equal(ww._needed(rows, n), want)


def test_replay_equals_vpoc_on_random_windows():
    rng = np.random.default_rng(3)
    for _ in range(300):
        h, low, v, _ = _bars(rng, [int(rng.integers(1, 6))])
        p = vpoc.from_bars(h, low, low, v, tick_size=0.25, **OPTS)
        hist = np.asarray(p.volume, dtype=np.float64)
        lo = int(np.asarray(p.low_row)[0])
        want = tuple(int(np.asarray(getattr(p, a))[0]) - lo for a in ("poc_row", "vah_row", "val_row"))
        assert ww.replay_levels(hist, 0.7, ww.TIE) == want
        assert want in ww.rule_outcomes(hist, 0.7, ww.TIE)


def test_rule_outcomes_ties():
    # no tie anywhere: one outcome
    assert ww.rule_outcomes(np.array([1.0, 5.0, 2.0, 0.5]), 0.7, ww.TIE) == {(1, 2, 1)}
    # POC tie, up/down tie, and a stop exactly on the target: every way is an outcome
    # (poc, vah, val): POCs 1 and 3 tie; from 1 the first step ties (up or down) and reaches
    # 4 = 50% of 8 exactly, so stopping and going on are both outcomes
    out = ww.rule_outcomes(np.array([1.0, 3.0, 1.0, 3.0]), 0.5, ww.TIE)
    assert out == {(1, 1, 0), (1, 2, 1), (1, 2, 0), (1, 3, 1), (3, 3, 2), (3, 3, 1)}
    assert ww.replay_levels(np.array([1.0, 3.0, 1.0, 3.0]), 0.5, ww.TIE) == (1, 2, 1)
    out = ww.rule_outcomes(np.array([1.5, 1.5, 7 / 3, 7 / 3, 7 / 3]), 0.7, ww.TIE)
    assert out == {(2, 4, 2), (2, 4, 1), (3, 4, 2), (3, 4, 1), (4, 4, 2), (4, 4, 1)}
    assert ww.replay_levels(np.array([1.5, 1.5, 7 / 3, 7 / 3, 7 / 3]), 0.7, ww.TIE) == (2, 4, 2)
    # a single row, and all-zero volume
    assert ww.rule_outcomes(np.array([4.0]), 0.7, ww.TIE) == {(0, 0, 0)}
    assert ww.replay_levels(np.array([0.0, 0.0]), 0.7, ww.TIE) == (0, 0, 0)


def test_load_wickra_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "wickra", None)
    wk, line = ww.load_wickra()
    assert wk is None and "skipped" in line


# ----------------------------------------------------------------------------- with wickra
def _check(wk, sizes, n, seed):
    rng = np.random.default_rng(seed)
    h, low, v, off = _bars(rng, sizes)
    p = vpoc.from_bars(h, low, low, v, offsets=off, tick_size=0.25, developing=True, window=n, **OPTS)
    return ww.check_window(wk, vpoc, p, h, low, low, v, off, 0.25, n, 0.7)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_check_random_sessions(n):
    wk = pytest.importorskip("wickra")
    for seed in range(15):
        r = _check(wk, [0, 1, n - 1, 9, 23], n, seed)
        assert r["differ_unexplained"] == 0 and not r["problems"], r
        assert r["compared"] + r["not_compared_partial_windows"] == r["windows"] == 33 + n - 1
        assert r["compared"] == sum(max(0, s - n + 1) for s in (0, 1, n - 1, 9, 23))
        assert r["equal"] + r["windows_differ"] == r["compared"]


def test_check_explains_a_float_tie():
    wk = pytest.importorskip("wickra")
    # window [1, 5]: 1.5, 1.5, 7/3, 7/3, 7/3; 70% of 10 is reached exactly at rows 2..4; wickra's
    # float sum of three 7/3 falls short of 7 and it goes on one row down
    h = np.array([5, 2]) * 0.25 + 100.0
    low = np.array([3, 1]) * 0.25 + 100.0
    v = np.array([7, 3])
    off = np.array([0, 2])
    p = vpoc.from_bars(h, low, low, v, offsets=off, tick_size=0.25, developing=True, window=2, **OPTS)
    r = ww.check_window(wk, vpoc, p, h, low, low, v, off, 0.25, 2, 0.7)
    assert r["compared"] == 1 and r["val_differ"] == 1  # vpoc stops on the target, wickra goes on
    assert r["windows_differ"] == r["differ_explained_float_ties"] == 1
    assert r["differ_unexplained"] == 0 and not r["problems"]


class _ShiftedWickra:
    """wickra with ValueArea's POC moved 1000 price units up: a difference no tie explains."""

    def __init__(self, wk):
        self.VolumeProfile = wk.VolumeProfile
        self._wk = wk

    def ValueArea(self, period, bin_count):  # noqa: N802 (wickra's name)
        inner = self._wk.ValueArea(period=period, bin_count=bin_count)

        class _Rows:
            def __init__(self, rows):
                self.rows = rows

            def tolist(self):
                return self.rows

        class _VA:
            def batch(self, hh, ll, vv):
                return _Rows([[r[0] + 1000.0, r[1], r[2]] for r in inner.batch(hh, ll, vv).tolist()])

        return _VA()


def test_check_flags_a_real_difference():
    wk = pytest.importorskip("wickra")
    rng = np.random.default_rng(5)
    h, low, v, off = _bars(rng, [12])
    p = vpoc.from_bars(h, low, low, v, offsets=off, tick_size=0.25, developing=True, window=4, **OPTS)
    r = ww.check_window(_ShiftedWickra(wk), vpoc, p, h, low, low, v, off, 0.25, 4, 0.7)
    assert r["poc_differ"] == r["compared"] == 9 and r["differ_unexplained"] == 9
    assert "not the shared rules" in r["problems"][0]


# ----------------------------------------------------------------------------- bench_cpu.main
def test_bench_cpu_window_workload(tmp_path, monkeypatch):
    bench = _load("bench_cpu")
    out = tmp_path / "w.json"
    assert bench.main(["--workloads", "window", "--sessions", "3", "--bars", "90", "--repeat", "1",
                       "--window", "20", "--out", str(out)]) == 0
    r = json.loads(out.read_text())["workloads"]["window"]
    assert r["correct"] and r["window"] == 20 and r["rows"] == 270 and r["vpoc_1t_s"] > 0
    if r["wickra"] is None:
        assert "wickra_s" not in r and "skipped" in r["wickra_note"]
    else:
        assert r["check"]["compared"] == 3 * (90 - 19) and r["check"]["differ_unexplained"] == 0
        assert r["wickra_s"] > 0 and r["speedup_1t_vs_wickra"] == r["wickra_s"] / r["vpoc_1t_s"]


def test_bench_cpu_window_without_wickra(tmp_path, monkeypatch):
    bench = _load("bench_cpu")
    monkeypatch.setitem(sys.modules, "wickra", None)
    out = tmp_path / "w.json"
    assert bench.main(["--workloads", "window", "--sessions", "2", "--bars", "30", "--repeat", "1",
                       "--window", "5", "--out", str(out)]) == 0
    r = json.loads(out.read_text())["workloads"]["window"]
    assert r["correct"] and r["wickra"] is None and "wickra_s" not in r and "check" not in r


@pytest.mark.parametrize("bad", [["--window", "0"], ["--window-bins", "0"]])
def test_bench_cpu_window_bad_args(bad):
    bench = _load("bench_cpu")
    with pytest.raises(SystemExit):
        bench.main(["--workloads", "window", *bad])
