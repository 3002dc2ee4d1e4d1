"""The TPO engine pass, the single-print count and the TPO cells are each computed once per call: ``vpoc.tpo``,
``session_features(tpo_columns= / context_columns=)`` and ``plot_tpo`` (counted by wrapping the functions), and the
single-print count equals a plain NumPy reference built here from the bars on random sessions."""

from __future__ import annotations

import numpy as np
import pytest

import vpoc
from vpoc.features import _tpo_counts, _tpo_result

TICK = 0.25
MIN = 60 * 10**9
DAY = 86_400 * 10**9
T0 = np.datetime64("2024-06-03", "ns").astype(np.int64) + (13 * 60 + 30) * MIN  # 08:30 CDT


def random_bars(seed, *, per_period=3, period=30):
    """Bars every ``period // per_period`` minutes from 08:30 CDT on successive days (one session a day, some
    empty); returns (high, low, ts, offsets, sessions as lists of (period, low tick, high tick))."""
    rng = np.random.default_rng(seed)
    step = period // per_period
    hs, ls, ts, offsets, sessions = [], [], [], [0], []
    for d in range(int(rng.integers(1, 5))):
        n = int(rng.choice([0, 1, 5, 20, 40]))
        price = 400 + int(rng.integers(-20, 20))
        bars = []
        for k in range(n):
            price += int(rng.integers(-3, 4))
            lo, hi = price - int(rng.integers(0, 3)), price + int(rng.integers(0, 3))
            ts.append(T0 + d * DAY + k * step * MIN)
            ls.append(lo * TICK)
            hs.append(hi * TICK)
            bars.append((k * step // period, lo, hi))
        offsets.append(len(ts))
        sessions.append(bars)
    return (np.array(hs, dtype=np.float64), np.array(ls, dtype=np.float64), np.array(ts, dtype=np.int64),
            np.array(offsets, dtype=np.int64), sessions)


def ref_single_prints(sessions, tpr=1):
    """Per session: rows of TPO count 1, by NumPy: each period's bracket (lowest low row .. highest high row)
    adds 1 to its rows (np.add.at), then count == 1 over the session's rows."""
    out = []
    for bars in sessions:
        if not bars:
            out.append(0)
            continue
        per = np.array([b[0] for b in bars])
        lo = np.array([b[1] for b in bars]) // tpr
        hi = np.array([b[2] for b in bars]) // tpr
        base = lo.min()
        counts = np.zeros(hi.max() - base + 1, dtype=np.int64)
        for p in np.unique(per):
            a, b = lo[per == p].min() - base, hi[per == p].max() - base
            np.add.at(counts, np.arange(a, b + 1), 1)
        out.append(int((counts == 1).sum()))
    return np.array(out, dtype=np.int64)


class Counter:
    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args, **kw):
        self.calls += 1
        return self.fn(*args, **kw)


@pytest.mark.filterwarnings("ignore::vpoc.IncompleteSessionWarning")  # session_features reports them as tpo (t5fix)
def test_session_features_runs_one_tpo_pass(monkeypatch):
    """Fails before the change: the table's tpo_poc / single_prints and its tpo_columns each ran the TPO
    engine pass (2 passes), and counted single prints twice."""
    h, lo, ts, offs, _ = random_bars(3)
    vol = np.ones(h.shape[0], dtype=np.int64)
    engine = Counter(_tpo_counts.from_bars)
    monkeypatch.setattr(_tpo_counts, "from_bars", engine)
    singles = Counter(getattr(_tpo_counts, "_single_prints", None))
    monkeypatch.setattr(_tpo_counts, "_single_prints", singles, raising=False)
    for kw in (dict(tpo_columns=True), dict(context_columns=True), dict(tpo_columns=True, context_columns=True),
               {}):
        engine.calls = singles.calls = 0
        vpoc.session_features(h, lo, lo, vol, timestamp=ts, offsets=offs, tick_size=TICK, lookbacks=(),
                              tpo_minutes=30, **kw)
        assert engine.calls == 1, kw
        assert singles.calls == 1, kw
    engine.calls = singles.calls = 0
    vpoc.tpo(h, lo, timestamp=ts, offsets=offs, tick_size=TICK, incomplete="ignore")
    assert (engine.calls, singles.calls) == (1, 1)


def test_plot_tpo_builds_the_cells_once(monkeypatch):
    """Fails before the change: plot_tpo read ``session(i)``, which built every session's letters, and then
    expanded the session's periods into cells again."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    h, lo, ts, offs, _ = random_bars(5)
    tp = vpoc.tpo(h, lo, timestamp=ts, offsets=offs, tick_size=TICK, incomplete="ignore")
    s = int(np.argmax(tp.n_rows > 0))
    letters = Counter(vpoc.TpoProfiles._build_letters)
    monkeypatch.setattr(vpoc.TpoProfiles, "_build_letters", lambda self: letters(self))
    cells = Counter(_tpo_result.period_cells) if hasattr(_tpo_result, "period_cells") else Counter(None)
    monkeypatch.setattr(_tpo_result, "period_cells", cells, raising=False)
    try:
        vpoc.plot_tpo(tp, s)
        assert letters.calls == 0 and cells.calls == 1
    finally:
        plt.close("all")


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("tpr", [1, 2])
def test_single_prints_equal_a_numpy_reference(seed, tpr):
    h, lo, ts, offs, sessions = random_bars(seed, per_period=int(np.random.default_rng(seed).choice([1, 3, 6])))
    want = ref_single_prints(sessions, tpr)
    tp = vpoc.tpo(h, lo, timestamp=ts, offsets=offs, tick_size=TICK, ticks_per_row=tpr, incomplete="ignore")
    np.testing.assert_array_equal(tp.single_prints, want)
    for s in range(tp.n_sessions):
        rows = tp.single_print_rows(s)
        assert rows.shape[0] == want[s]
        _, counts = tp.session_counts(s)
        assert (counts[rows - tp.low_row[s]] == 1).all() if rows.size else True
    table = vpoc.session_features(h, lo, lo, np.ones(h.shape[0], dtype=np.int64), timestamp=ts, offsets=offs,
                                  tick_size=TICK, ticks_per_row=tpr, lookbacks=(), tpo_minutes=30)
    ne = np.diff(offs) > 0
    np.testing.assert_array_equal(np.asarray(table["single_prints"], dtype=np.float64)[ne], want[ne])
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    try:
        for s in np.flatnonzero(ne).tolist():
            ax = vpoc.plot_tpo(tp, s)
            bars = [c for c in ax.containers if c.get_label().startswith("single prints")]
            if want[s]:
                assert len(bars) == 1 and len(bars[0]) == want[s]
                assert bars[0].get_label() == f"single prints ({want[s]})"
            else:
                assert not bars
            plt.close(ax.figure)
    finally:
        plt.close("all")
