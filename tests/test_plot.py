"""``plot_profile`` / ``Profiles.plot``: the drawn bars, POC line and value-area band match the
session's histogram and levels computed plainly in NumPy; empty sessions; bad input."""

from __future__ import annotations

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from vpoc._plot import plot_profile  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def trades(rows, vols, tick=0.25):
    """One trade per (row, volume) pair on a ``tick`` ladder."""
    return np.asarray(rows, dtype=np.float64) * tick, np.asarray(vols, dtype=np.float64)


def drawn(ax):
    """(bar centres, bar widths, bar heights) sorted by price."""
    rects = list(ax.containers[0])
    assert all(isinstance(r, Rectangle) for r in rects)
    centres = np.array([r.get_y() + r.get_height() / 2 for r in rects])
    order = np.argsort(centres)
    return (centres[order], np.array([r.get_width() for r in rects])[order],
            np.array([r.get_height() for r in rects])[order])


def ref_levels(rows, vols, row_size, offset):
    """(drawn row centres, row volumes) of one session, by hand in NumPy."""
    lo, hi = min(rows), max(rows)
    hist = np.zeros(hi - lo + 1)
    np.add.at(hist, np.asarray(rows) - lo, vols)
    prices = (np.arange(lo, hi + 1) * row_size) + offset
    return prices, hist


@pytest.mark.parametrize("ticks_per_row", [1, 4])
def test_bars_poc_and_value_area_match_the_session(ticks_per_row):
    rng = np.random.default_rng(ticks_per_row)
    ticks = rng.integers(17990, 18010, 300)
    vol = rng.integers(1, 50, 300).astype(np.float64)
    price = ticks * 0.25
    prof = vpoc.from_trades(price, vol, offsets=[0, 100, 300], tick_size=0.25,
                            ticks_per_row=ticks_per_row)
    s = 1
    ax = plot_profile(prof, s)
    row_size = 0.25 * ticks_per_row
    offset = (ticks_per_row - 1) * 0.25 / 2
    rows = np.floor_divide(ticks[100:], ticks_per_row)
    ref_prices, ref_hist = ref_levels(rows, vol[100:], row_size, offset)
    centres, widths, heights = drawn(ax)
    np.testing.assert_allclose(centres, ref_prices)
    np.testing.assert_array_equal(widths, ref_hist)
    np.testing.assert_allclose(heights, 0.9 * row_size)
    # POC line through the centre of the fullest row (no ties in this data: check it)
    top = np.flatnonzero(ref_hist == ref_hist.max())
    assert top.size == 1
    (line,) = ax.lines
    assert line.get_ydata()[0] == pytest.approx(ref_prices[top[0]])
    assert float(prof.poc[s]) + offset == pytest.approx(ref_prices[top[0]])
    # value-area band: bottom of the VAL row to the top of the VAH row
    band = [p for p in ax.patches if p.get_label().startswith("value area")]
    assert len(band) == 1
    box = band[0].get_bbox()  # y in data coordinates (x spans the axes)
    lo_edge = float(prof.val[s]) + offset - row_size / 2
    hi_edge = float(prof.vah[s]) + offset + row_size / 2
    np.testing.assert_allclose([box.y0, box.y1], [lo_edge, hi_edge])
    va_rows = (ref_prices >= lo_edge) & (ref_prices <= hi_edge)
    assert ref_hist[va_rows].sum() >= 0.7 * ref_hist.sum()  # the band holds >= 70% of the volume
    labels = ax.get_legend_handles_labels()[1]
    assert f"POC {prof.poc[s]:.2f}" in labels
    assert f"value area {prof.val[s]:.2f} - {prof.vah[s]:.2f}" in labels
    assert ax.get_title() == "session 1"


def test_session_labels_in_title_and_negative_index():
    bars = vpoc.synth.es_bars(n_sessions=3, bars_per_session=90, seed=5)
    prof = vpoc.from_bars(bars.high, bars.low, bars.close, bars.volume,
                          session_ids=bars.session_id, tick_size=0.25)
    ax = plot_profile(prof, -1)
    assert ax.get_title() == f"session {bars.session_labels[-1]}"
    prices, vols = prof.session(2)
    centres, widths, _ = drawn(ax)
    np.testing.assert_allclose(centres, prices)
    np.testing.assert_array_equal(widths, vols)


def test_draws_into_given_axes_and_options():
    price, vol = trades([0, 1, 1, 2, 5], [1, 2, 3, 1, 1])
    prof = vpoc.from_trades(price, vol, tick_size=0.25)
    fig, ax = plt.subplots()
    out = plot_profile(prof, 0, ax, show_va=False, show_poc=False, legend=False, title="t",
                       bar_fill=1.0, color="black")
    assert out is ax and ax.figure is fig
    assert not ax.lines and ax.get_legend() is None and ax.get_title() == "t"
    centres, widths, heights = drawn(ax)
    np.testing.assert_allclose(centres, np.arange(6) * 0.25)
    np.testing.assert_array_equal(widths, [1, 5, 1, 0, 0, 1])  # gap rows are drawn as zeros
    np.testing.assert_allclose(heights, 0.25)
    assert len(ax.patches) == 6  # no band


def test_empty_session_draws_nothing():
    price, vol = trades([3, 4], [1, 1])
    prof = vpoc.from_trades(price, vol, offsets=[0, 0, 2], tick_size=0.25)
    ax = plot_profile(prof, 0)
    assert not ax.patches and not ax.lines and "empty session" in ax.get_title()


def test_profiles_plot_method():
    if not hasattr(vpoc.Profiles, "plot"):
        pytest.skip("Profiles.plot is not attached yet (the lead adds it in _profiles.py)")
    price, vol = trades([0, 1, 1, 2], [1, 2, 3, 1])
    prof = vpoc.from_trades(price, vol, tick_size=0.25)
    fig, ax = plt.subplots()
    assert prof.plot(0, ax=ax, legend=False) is ax
    np.testing.assert_array_equal(drawn(ax)[1], [1, 5, 1])


@pytest.mark.parametrize("session, kw, exc, match", [
    (2, {}, IndexError, "session index 2 out of range"),
    (-3, {}, IndexError, "out of range"),
    (0.0, {}, TypeError, "session must be an integer"),
    (True, {}, TypeError, "session must be an integer"),
    (0, dict(va_alpha=1.5), ValueError, "va_alpha must be in"),
    (0, dict(bar_fill=0.0), ValueError, "bar_fill must be in"),
])
def test_bad_input(session, kw, exc, match):
    price, vol = trades([0, 1, 2], [1, 1, 1])
    prof = vpoc.from_trades(price, vol, offsets=[0, 1, 3], tick_size=0.25)
    with pytest.raises(exc, match=match):
        plot_profile(prof, session, **kw)
