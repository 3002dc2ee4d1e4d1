"""``plot_tpo``: one session of a ``vpoc.tpo`` result drawn as a letter TPO chart with matplotlib.

Contract: one text letter per TPO (period x row) at its row's centre on the price axis, in time order from left
to right; the TPO POC line, value-area band, IB range and single-print cells from the result's own columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Tuple

import numpy as np

from ._plot import fraction, label_text, new_axes, outside_legend, price_text, row_offset, session_position
from ._validate import real
from .features import TPO_LETTERS, TpoProfiles

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["LAYOUTS", "LETTER_GID", "plot_tpo", "tpo_cells"]

#: ``plot_tpo(layout=)``: "packed" puts a row's letters side by side from the left in time order
#: (the usual collapsed profile); "split" gives every period its own column (column = period index).
LAYOUTS: Tuple[str, ...] = ("packed", "split")
#: The ``gid`` of every letter drawn by ``plot_tpo`` (``[t for t in ax.texts if t.get_gid() == LETTER_GID]``).
LETTER_GID: str = "tpo-letter"


def tpo_cells(tp: TpoProfiles, s: int, layout: str = "packed") -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, columns, period indices) of every TPO of session ``s``: one entry per (period, row)
    the period's bracket touches, ordered by row then time (``TpoProfiles.cells``, the expansion
    the result's ``letters`` use too). ``rows``: absolute ladder rows; ``columns``: the letter's
    column (``layout``); the letter is ``TPO_LETTERS[period % 52]``."""
    rows, periods = tp.cells(s)
    if layout == "split":
        return rows, periods.copy(), periods
    n = rows.shape[0]
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if n else np.zeros(0, dtype=np.int64)
    first = np.repeat(starts, np.diff(np.r_[starts, n]))
    return rows, np.arange(n, dtype=np.int64) - first, periods


def _letter_size(ax: "Axes", n_rows: int, fontsize: Any) -> float:
    """Points per letter: ``fontsize``, or what fits ``n_rows`` rows in the Axes' height (3 to 10)."""
    if fontsize is not None:
        size = real(fontsize, "fontsize")
        if not size > 0:
            raise ValueError(f"fontsize must be > 0 points, got {fontsize!r}")
        return size
    height_pt = ax.bbox.height * 72.0 / ax.figure.dpi
    return float(np.clip(0.8 * height_pt / max(n_rows + 1, 1), 3.0, 10.0))


def plot_tpo(tpo_result: TpoProfiles, session: Any, ax: Optional["Axes"] = None, *, layout: str = "packed",
             color: Any = "black", period_cmap: Any = None, va_color: Any = "tab:orange",
             poc_color: Any = "tab:red", ib_color: Any = "tab:blue", single_color: Any = "gold",
             va_alpha: float = 0.15, fontsize: Optional[float] = None, show_va: bool = True,
             show_poc: bool = True, show_ib: bool = True, show_singles: bool = True, legend: bool = True,
             title: Optional[str] = None) -> "Axes":
    """Draw session ``session`` of ``tpo_result`` (``vpoc.tpo(...)``) as a letter TPO chart.

    Every TPO is its period's letter (``TPO_LETTERS``: A-Z then a-z from the session's first
    period) at the centre of its row on the price axis (the row's price when
    ``ticks_per_row == 1``). ``layout="packed"`` (default) lays a row's letters side by side from
    column 0 in time order, so a row's length is its TPO count (the collapsed profile the Market
    Profile literature draws); ``"split"`` puts each period in its own column (column = period
    index, its letter on the x axis). Marked from the result's columns: the TPO POC (a horizontal
    line through the POC row's centre), the TPO value area (a band from the bottom of the VAL row
    to the top of the VAH row), the initial balance (a vertical bar left of column 0 from
    ``ib_low`` to ``ib_high``, when the session has one) and single prints (rows of count 1: a
    ``single_color`` cell behind their letter). An empty session draws nothing and says so in the
    title.

    Parameters
    ----------
    tpo_result : vpoc.TpoProfiles
    session : int, or a session label
        Session index (negative counts from the end), or a label (a trade date such as
        '2025-01-21' when the result has them). An integer that is a valid index is an index.
    ax : matplotlib Axes, optional
        Where to draw; default: a new figure from ``matplotlib.pyplot.subplots``.
    layout : "packed" or "split"
    color : matplotlib colour
        Of the letters (unless ``period_cmap`` is given).
    period_cmap : matplotlib colormap or its name, optional
        Colour each period's letters by its index along this colormap.
    va_color, poc_color, ib_color, single_color : matplotlib colours
    va_alpha : float in [0, 1]
        Opacity of the value-area band.
    fontsize : float, optional
        Letter size in points; default: what fits the rows in the Axes' height (3 to 10).
    show_va, show_poc, show_ib, show_singles : bool
        Draw the value-area band / POC line / IB bar / single-print cells.
    legend : bool
        A legend with their prices, right of the Axes (a new figure uses constrained layout to
        keep it; with your own ``ax``, ``fig.set_layout_engine("constrained")`` does).
    title : str, optional
        Default: "session <label> TPO (<period>-minute periods)".

    Returns
    -------
    matplotlib.axes.Axes
        Letters are Text artists with gid ``LETTER_GID``; the single-print cells one BarContainer
        labelled "single prints (<n>)".
    """
    if not isinstance(tpo_result, TpoProfiles):
        raise TypeError(f"tpo_result must be a vpoc.TpoProfiles (the result of vpoc.tpo), got "
                        f"{type(tpo_result).__name__}")
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(map(repr, LAYOUTS))}, got {layout!r}")
    alpha = fraction(va_alpha, "va_alpha")
    pos = session_position(tpo_result, session)
    prices, counts = tpo_result.session_counts(pos)  # IndexError for an out-of-range session
    s = pos % tpo_result.n_sessions
    if ax is None:
        ax = new_axes("vpoc.plot_tpo()", (8, 8), "constrained")
    if title is None:
        title = f"session {label_text(tpo_result, s)} TPO ({tpo_result.period}-minute periods)"
    ax.set_ylabel("price")
    if prices.shape[0] == 0:
        ax.set_title(f"{title} (empty session)")
        return ax
    tick = float(tpo_result.tick_size)
    row = float(tpo_result.row_size)
    offset = row_offset(tpo_result)
    rows, cols, periods = tpo_cells(tpo_result, s, layout)
    y = rows.astype(np.float64) * row + offset
    letters = np.asarray(list(TPO_LETTERS))[np.mod(periods, len(TPO_LETTERS))]
    ncols = int(cols.max()) + 1
    size = _letter_size(ax, prices.shape[0], fontsize)
    if period_cmap is not None:
        from matplotlib import colormaps

        cmap = colormaps[period_cmap] if isinstance(period_cmap, str) else period_cmap
        span = max(int(periods.max()), 1)
        colours = [cmap(k / span) for k in periods.tolist()]
    else:
        colours = [color] * periods.shape[0]
    for x_, y_, text, c in zip(cols.tolist(), y.tolist(), letters.tolist(), colours):
        ax.text(x_, y_, text, ha="center", va="center", fontsize=size, family="monospace", color=c,
                gid=LETTER_GID, zorder=3)
    if show_singles and int(tpo_result.single_prints[s]):
        # a single print is one cell: its row's only TPO (the result's rows and count, not a recount)
        at = np.isin(rows, tpo_result.single_print_rows(s))
        ax.barh(y[at], np.ones(int(at.sum())), height=0.9 * row, left=cols[at] - 0.5, color=single_color,
                zorder=1, label=f"single prints ({int(tpo_result.single_prints[s])})")
    if show_va:
        val, vah = float(tpo_result.val[s]), float(tpo_result.vah[s])
        ax.axhspan(val + offset - row / 2.0, vah + offset + row / 2.0, color=va_color, alpha=alpha,
                   zorder=0, label=f"TPO value area {price_text(val, tick)} - {price_text(vah, tick)}")
    if show_poc:
        poc = float(tpo_result.poc[s])
        ax.axhline(poc + offset, color=poc_color, linewidth=1.2, alpha=0.8, zorder=2,
                   label=f"TPO POC {price_text(poc, tick)}")
    ib_low, ib_high = float(tpo_result.ib_low[s]), float(tpo_result.ib_high[s])
    if show_ib and np.isfinite(ib_low) and np.isfinite(ib_high):
        ax.plot([-1.0, -1.0], [ib_low, ib_high], color=ib_color, linewidth=3, solid_capstyle="butt",
                label=f"IB {price_text(ib_low, tick)} - {price_text(ib_high, tick)}")
    ax.set_xlim(-1.75, ncols - 0.25)
    ax.set_ylim(float(prices[0]) + offset - row, float(prices[-1]) + offset + row)
    if layout == "split":
        first = int(periods.min())
        ticks = np.arange(first, ncols)
        if ticks.shape[0] <= 60:
            ax.set_xticks(ticks, [TPO_LETTERS[k % len(TPO_LETTERS)] for k in ticks.tolist()])
        ax.set_xlabel("period")
    else:
        ax.set_xlabel("TPOs (letters in time order)")
    ax.set_title(title)
    if legend:
        outside_legend(ax)
    return ax
