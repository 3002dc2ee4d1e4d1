"""``vpoc.plot_tpo`` and ``vpoc.plot_migration``: what is drawn (letters and their cells, POC line, value-area
band, IB bar, single-print cells; value-area bars / band and POC points per session) equals the result's columns
and a plain loop over the periods written here; empty sessions, labels, options; bad input names the argument."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import _deps
import vpoc

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

TICK = 0.25
MIN = 60 * 10**9
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
GID = "tpo-letter"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def rth_tpo(brackets, *, day="2024-06-03", period=30, start_min=0, offsets=None, **kw):
    """``vpoc.tpo`` of one bar per period from 08:30 Chicago (CDT, UTC-5); brackets (low, high) in ticks."""
    t0 = np.datetime64(day, "ns").astype(np.int64) + (13 * 60 + 30 + start_min) * MIN
    ts = t0 + np.arange(len(brackets), dtype=np.int64) * period * MIN
    lo = np.array([b[0] for b in brackets], dtype=np.float64) * TICK
    hi = np.array([b[1] for b in brackets], dtype=np.float64) * TICK
    kw.setdefault("incomplete", "ignore")
    return vpoc.tpo(hi, lo, timestamp=ts, offsets=[0, ts.size] if offsets is None else offsets, tick_size=TICK,
                    period=f"{period}min", **kw)


def ref_cells(brackets, tpr=1, layout="packed"):
    """Every TPO as (column, row, letter), by a plain loop: rows bottom up, periods in time order."""
    by_row = {}
    for k, (lo, hi) in enumerate(brackets):
        for r in range(lo // tpr, hi // tpr + 1):
            by_row.setdefault(r, []).append(k)
    out = []
    for r in sorted(by_row):
        for j, k in enumerate(by_row[r]):
            out.append((j if layout == "packed" else k, r, LETTERS[k % 52]))
    return out


def drawn_letters(ax):
    """(x, y, letter) of every letter drawn, sorted by y then x."""
    got = [(t.get_position()[0], t.get_position()[1], t.get_text()) for t in ax.texts if t.get_gid() == GID]
    return sorted(got, key=lambda c: (c[1], c[0]))


def labelled(ax, prefix):
    return [a for a in list(ax.lines) + list(ax.patches) + list(ax.collections) if a.get_label().startswith(prefix)]


# A: 100-103, B: 101-104 (the IB: 08:30-09:30), C: 104-108, D: 98-101, E: 102-103
BRACKETS = [(100, 103), (101, 104), (104, 108), (98, 101), (102, 103)]


@pytest.mark.parametrize("tpr", [1, 2])
def test_letters_poc_value_area_ib_and_single_prints(tpr):
    tp = rth_tpo(BRACKETS, ticks_per_row=tpr)
    ax = vpoc.plot_tpo(tp, 0)
    row, offset = TICK * tpr, (tpr - 1) * TICK / 2
    want = [(float(c), r * row + offset, letter) for c, r, letter in ref_cells(BRACKETS, tpr)]
    got = drawn_letters(ax)
    assert len(got) == int(tp.total_tpo[0]) == len(want)
    assert [g[2] for g in got] == [w[2] for w in want]
    np.testing.assert_allclose([g[:2] for g in got], [w[:2] for w in want])
    # each row's letters, left to right, are the result's own letters of that row
    prices, counts, letters = tp.session(0)
    for p, c, text in zip(prices, counts, letters):
        assert "".join(g[2] for g in got if abs(g[1] - (p + offset)) < 1e-9) == text and len(text) == c
    # POC line through the POC row's centre; value-area band from the bottom of VAL's row to the top of VAH's
    (poc,) = labelled(ax, "TPO POC")
    assert poc.get_ydata()[0] == pytest.approx(tp.poc[0] + offset)
    (band,) = labelled(ax, "TPO value area")
    box = band.get_bbox()
    np.testing.assert_allclose([box.y0, box.y1], [tp.val[0] + offset - row / 2, tp.vah[0] + offset + row / 2])
    # IB: a bar left of the letters from ib_low to ib_high (A and B: ticks 100..104)
    (ib,) = labelled(ax, "IB")
    np.testing.assert_allclose(ib.get_xdata(), [-1, -1])
    np.testing.assert_allclose(ib.get_ydata(), [100 * TICK, 104 * TICK])
    assert tp.ib_low[0] == 100 * TICK and tp.ib_high[0] == 104 * TICK
    # single prints: a cell behind the one letter of every row of count 1
    (cells,) = [c for c in ax.containers if c.get_label().startswith("single prints")]
    single_rows = np.flatnonzero(counts == 1)
    assert len(cells) == single_rows.size == tp.single_prints[0] > 0
    assert cells.get_label() == f"single prints ({single_rows.size})"
    np.testing.assert_allclose(sorted(r.get_y() + r.get_height() / 2 for r in cells),
                               prices[single_rows] + offset)
    assert all(r.get_x() == -0.5 and r.get_width() == 1.0 for r in cells)  # column 0 in the packed layout
    assert ax.get_title() == "session 0 TPO (30-minute periods)"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"TPO POC {tp.poc[0]:.2f}" in legend and "IB 25.00 - 26.00" in legend


def test_split_layout_gives_each_period_its_column():
    tp = rth_tpo(BRACKETS)
    ax = vpoc.plot_tpo(tp, 0, layout="split")
    want = [(float(c), r * TICK, letter) for c, r, letter in ref_cells(BRACKETS, layout="split")]
    got = drawn_letters(ax)
    assert [g[2] for g in got] == [w[2] for w in want]
    np.testing.assert_allclose([g[:2] for g in got], [w[:2] for w in want])
    assert [t.get_text() for t in ax.get_xticklabels()] == list("ABCDE")
    (cells,) = [c for c in ax.containers if c.get_label().startswith("single prints")]
    rows_x = {(round(r.get_y() + r.get_height() / 2, 9), r.get_x() + 0.5) for r in cells}
    singles = {(round(r * TICK, 9), float(k)) for k, r, _ in ref_cells(BRACKETS, layout="split")
               if sum(1 for c in ref_cells(BRACKETS) if c[1] == r) == 1}
    assert rows_x == singles


def test_letters_wrap_and_period_colours():
    tp = rth_tpo([(100, 100)] * 60, period=5, start_min=-510)  # 60 five-minute periods from 00:00
    ax = vpoc.plot_tpo(tp, 0, layout="split", period_cmap="viridis", fontsize=6)
    got = drawn_letters(ax)
    assert "".join(g[2] for g in got) == LETTERS + LETTERS[:8] == tp.letters[0]
    assert [g[0] for g in got] == list(range(60))
    colours = [t.get_color() for t in ax.texts if t.get_gid() == GID]
    assert len({tuple(np.round(c, 6)) for c in colours}) == 60  # one colour per period
    assert all(t.get_fontsize() == 6 for t in ax.texts if t.get_gid() == GID)
    assert len(ax.get_xticklabels()) == 60


def test_options_hide_marks_and_draw_into_given_axes():
    tp = rth_tpo(BRACKETS)
    fig, ax = plt.subplots()
    out = vpoc.plot_tpo(tp, 0, ax, show_va=False, show_poc=False, show_ib=False, show_singles=False, legend=False,
                        title="t", color="tab:green")
    assert out is ax and ax.figure is fig and ax.get_title() == "t"
    assert not ax.lines and not ax.patches and not ax.containers and ax.get_legend() is None
    assert len(drawn_letters(ax)) == 19
    assert {matplotlib.colors.to_hex(t.get_color()) for t in ax.texts} == {matplotlib.colors.to_hex("tab:green")}


@_deps.needs("pandas", "pandas_market_calendars")
def test_empty_session_and_session_labels():
    h = np.array([101, 102]) * TICK
    lo = np.array([100, 100]) * TICK
    ts = np.datetime64("2024-06-03T13:30", "ns").astype(np.int64) + np.array([0, 30]) * MIN
    tp = vpoc.tpo(h, lo, timestamp=ts, offsets=[0, 0, 2], tick_size=TICK, incomplete="ignore")
    ax = vpoc.plot_tpo(tp, 0)
    assert "empty session" in ax.get_title() and not ax.texts and not ax.lines
    bars = vpoc.synth.es_bars(n_sessions=3, seed=1)
    tp = vpoc.tpo(bars, tick_size=TICK, ticks_per_row=4, session="rth")
    ax1 = vpoc.plot_tpo(tp, "2019-01-03")
    ax2 = vpoc.plot_tpo(tp, 20190103)
    ax3 = vpoc.plot_tpo(tp, -2)
    assert drawn_letters(ax1) == drawn_letters(ax2) == drawn_letters(ax3)
    assert len(drawn_letters(ax1)) == tp.total_tpo[1]
    assert ax1.get_title() == "session 2019-01-03 TPO (30-minute periods)"


@pytest.mark.parametrize("arg, kw, exc, match", [
    ("profiles", {}, TypeError, "tpo_result must be a vpoc.TpoProfiles"),
    (None, dict(session=1.5), TypeError, "session must be an integer"),
    (None, dict(session=5), IndexError, "session index 5 out of range"),
    (None, dict(session="2024-06-04"), KeyError, "no session labelled"),
    (None, dict(layout="stacked"), ValueError, "layout must be one of"),
    (None, dict(va_alpha=1.5), ValueError, r"va_alpha must be in \[0, 1\]"),
    (None, dict(va_alpha="x"), TypeError, "va_alpha must be a real number"),
    (None, dict(fontsize=0), ValueError, "fontsize must be > 0 points"),
    (None, dict(fontsize="big"), TypeError, "fontsize must be a real number"),
])
def test_plot_tpo_bad_input(arg, kw, exc, match):
    tp = rth_tpo(BRACKETS)
    kw = dict(kw)
    session = kw.pop("session", 0)
    target = vpoc.from_trades(np.array([1.0]), np.array([1.0]), tick_size=TICK) if arg == "profiles" else tp
    with pytest.raises(exc, match=match):
        vpoc.plot_tpo(target, session, **kw)


def test_without_matplotlib_the_hint_names_the_extra(monkeypatch):
    tp = rth_tpo(BRACKETS)
    prof = vpoc.from_trades(np.array([1.0, 2.0]), np.array([1.0, 1.0]), tick_size=TICK)
    for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.dates"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ModuleNotFoundError, match=r'^vpoc.plot_tpo\(\) needs matplotlib: pip install "vpoc\[plot\]"$'):
        vpoc.plot_tpo(tp, 0)
    with pytest.raises(ModuleNotFoundError, match=r"^vpoc.plot_migration\(\) needs matplotlib"):
        vpoc.plot_migration(prof)


# ------------------------------------------------------------------------------ plot_migration
def session_profiles(tpr=1):
    """Four sessions by offsets (the third empty): no trade dates."""
    rng = np.random.default_rng(7)
    ticks = np.concatenate([rng.integers(400, 440, 50), rng.integers(420, 470, 60), rng.integers(380, 400, 40)])
    vol = rng.integers(1, 20, ticks.size).astype(np.float64)
    return vpoc.from_trades(ticks * TICK, vol, offsets=[0, 50, 110, 110, 150], tick_size=TICK, ticks_per_row=tpr)


@pytest.mark.parametrize("tpr", [1, 4])
def test_migration_bars_and_poc_by_session_index(tpr):
    prof = session_profiles(tpr)
    ax = vpoc.plot_migration(prof)
    row, offset = TICK * tpr, (tpr - 1) * TICK / 2
    (bars,) = ax.containers
    assert bars.get_label() == "value area"
    ne = np.flatnonzero(prof.n_rows > 0)
    assert len(bars) == ne.size == 3  # the empty session draws no bar
    np.testing.assert_allclose([b.get_x() + b.get_width() / 2 for b in bars], ne)
    np.testing.assert_allclose([b.get_y() for b in bars], prof.val[ne] + offset - row / 2)
    np.testing.assert_allclose([b.get_y() + b.get_height() for b in bars], prof.vah[ne] + offset + row / 2)
    np.testing.assert_allclose([b.get_width() for b in bars], 0.6)
    (poc,) = labelled(ax, "POC")
    np.testing.assert_allclose(poc.get_xdata(), np.arange(4))
    np.testing.assert_allclose(poc.get_ydata(), prof.poc + offset)  # NaN (a gap) at the empty session
    assert np.isnan(poc.get_ydata()[2])
    assert ax.get_xlabel() == "session" and ax.get_title() == "POC and value area by session"
    lo, hi = ax.get_ylim()  # every bar whole inside the axes (no sticky bar base)
    assert lo < np.nanmin(prof.val) + offset - row / 2 and hi > np.nanmax(prof.vah) + offset + row / 2


def rth_profiles():
    bars = vpoc.synth.es_bars(n_sessions=5, seed=3)
    s = vpoc.sessions.rth(bars.timestamp)
    return bars, vpoc.from_bars(bars.high, bars.low, bars.close, bars.volume, session=s, tick_size=TICK)


@_deps.needs("pandas", "pandas_market_calendars")
def test_migration_on_trade_dates_and_selected_sessions():
    bars, prof = rth_profiles()
    dates = np.array([f"{d // 10000}-{d // 100 % 100:02d}-{d % 100:02d}" for d in prof.labels], dtype="datetime64[D]")
    ax = vpoc.plot_migration(prof, sessions=["2019-01-03", 20190107, 4], bar_width=0.8, marker=None)
    pos = np.array([1, 3, 4])
    assert prof.labels[3] == 20190107
    (bars_,) = ax.containers
    np.testing.assert_allclose([b.get_x() + b.get_width() / 2 for b in bars_], mdates.date2num(dates[pos]))
    np.testing.assert_allclose([b.get_y() for b in bars_], prof.val[pos] - TICK / 2)
    (poc,) = labelled(ax, "POC")
    np.testing.assert_allclose(poc.get_xdata(), mdates.date2num(dates[pos]))
    np.testing.assert_allclose(poc.get_ydata(), prof.poc[pos])
    assert poc.get_marker() in (None, "None", "")
    assert ax.get_xlabel() == "trade date" and ax.get_title() == "POC and value area by trade date"
    ax = vpoc.plot_migration(prof, sessions=slice(1, None, 2))
    np.testing.assert_allclose(labelled(ax, "POC")[0].get_ydata(), prof.poc[[1, 3]])


@_deps.needs("pandas", "pandas_market_calendars")
def test_migration_band_and_tpo_levels():
    bars, _ = rth_profiles()
    tp = vpoc.tpo(bars, tick_size=TICK, ticks_per_row=8, session="rth")
    ax = vpoc.plot_migration(tp, style="band", title="TPO value")
    (band,) = labelled(ax, "value area")
    verts = np.concatenate([p.vertices for p in band.get_paths()])
    row, offset = 8 * TICK, 7 * TICK / 2
    x = mdates.date2num(np.array(["2019-01-02", "2019-01-03", "2019-01-04", "2019-01-07", "2019-01-08"],
                                 dtype="datetime64[D]"))
    for xi, lo, hi in zip(x, tp.val + offset - row / 2, tp.vah + offset + row / 2):
        ys = verts[np.isclose(verts[:, 0], xi), 1]
        assert np.isclose(ys.min(), lo) and np.isclose(ys.max(), hi)
    np.testing.assert_allclose(labelled(ax, "POC")[0].get_ydata(), tp.poc + offset)
    assert ax.get_title() == "TPO value" and not ax.containers


@pytest.mark.parametrize("kw, exc, match", [
    (dict(prof="x"), TypeError, "prof must be a vpoc.Profiles or a vpoc.TpoProfiles"),
    (dict(style="area"), ValueError, "style must be one of"),
    (dict(bar_width=0), ValueError, r"bar_width must be in \(0, 1\]"),
    (dict(va_alpha=True), TypeError, "va_alpha must be a real number"),
    (dict(sessions=[]), ValueError, "sessions selects no session"),
    (dict(sessions=slice(9, None)), ValueError, "sessions selects no session"),
    (dict(sessions="2019-01-03"), TypeError, "sessions must be None, a slice or a sequence"),
    (dict(sessions=[7]), IndexError, "session index 7 out of range"),
    (dict(sessions=[0.5]), TypeError, r"sessions\[\.\.\.\] must be an integer"),
])
def test_plot_migration_bad_input(kw, exc, match):
    prof = kw.pop("prof", None) or session_profiles()
    with pytest.raises(exc, match=match):
        vpoc.plot_migration(prof, **kw)
