"""``plot_migration``: POC and value area of many sessions over time, drawn with matplotlib.

Contract: one value-area bar (or one band) per session from the bottom of its VAL row to the top of its VAH row
and the POC at its row's centre; x = trade dates when the result has them, else session indices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Tuple

import numpy as np

from ._optional import require
from ._plot import fraction, new_axes, outside_legend, row_offset, session_position
from ._profiles import Profiles
from ._time import yyyymmdd_days
from .features import TpoProfiles

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["STYLES", "migration_levels", "plot_migration"]

#: ``plot_migration(style=)``: "bars" draws one value-area bar per session, "band" one band through them.
STYLES: Tuple[str, ...] = ("bars", "band")


def _positions(result: Any, sessions: Any) -> np.ndarray:
    """``sessions`` (None: all; a slice; a sequence of indices or labels) as sorted unique indices."""
    n = int(result.n_sessions)
    if sessions is None:
        return np.arange(n, dtype=np.int64)
    if isinstance(sessions, slice):
        out = np.arange(n, dtype=np.int64)[sessions]
    else:
        if isinstance(sessions, (str, bytes)) or not hasattr(sessions, "__iter__"):
            raise TypeError(f"sessions must be None, a slice or a sequence of session indices / labels, got "
                            f"{type(sessions).__name__}")
        picked = []
        for key in sessions:
            i = session_position(result, key, "sessions[...]")
            if not -n <= i < n:
                raise IndexError(f"sessions: session index {i} out of range for {n} sessions")
            picked.append(i % n)
        out = np.array(picked, dtype=np.int64)
    if out.shape[0] == 0:
        raise ValueError("sessions selects no session")
    return np.unique(out)


def migration_levels(result: Any, sessions: Any = None) -> dict:
    """What ``plot_migration`` draws, as arrays over the selected sessions (in session order):
    ``position``, ``dates`` (the trade dates as datetime64[D], or None), ``poc`` (the POC row's centre), ``va_bottom`` / ``va_top`` (bottom of
    the VAL row, top of the VAH row); NaN for an empty session."""
    if isinstance(result, Profiles):
        result = result.cpu()
    elif not isinstance(result, TpoProfiles):
        raise TypeError(f"prof must be a vpoc.Profiles or a vpoc.TpoProfiles, got {type(result).__name__}")
    pos = _positions(result, sessions)
    row = float(result.row_size)
    offset = row_offset(result)
    dates = None
    if result.trade_dates and result.session_labels is not None:
        days = yyyymmdd_days(np.asarray(result.session_labels, dtype=np.int64)[pos], "session_labels")
        dates = days.astype("datetime64[D]")
    return dict(position=pos, dates=dates,
                poc=np.asarray(result.poc, dtype=np.float64)[pos] + offset,
                va_bottom=np.asarray(result.val, dtype=np.float64)[pos] + offset - row / 2.0,
                va_top=np.asarray(result.vah, dtype=np.float64)[pos] + offset + row / 2.0)


def plot_migration(prof: Any, sessions: Any = None, ax: Optional["Axes"] = None, *, style: str = "bars",
                   va_color: Any = "tab:orange", poc_color: Any = "tab:red", va_alpha: float = 0.35,
                   bar_width: float = 0.6, marker: Optional[str] = "o", legend: bool = True,
                   title: Optional[str] = None) -> "Axes":
    """Draw the POC and value area of many sessions side by side: how value migrates over time.

    Per session: the value area from the bottom of its VAL row to the top of its VAH row (as
    ``plot_profile``'s band) as a vertical bar (``style="bars"``) or as one band through every
    session (``"band"``), and the POC at its row's centre (the row's price when
    ``ticks_per_row == 1``) as a line with markers. Empty sessions leave a gap. The x axis holds
    the trade dates when the result has them (``session=`` rules, a container or frame with
    dates), else the session indices.

    Parameters
    ----------
    prof : vpoc.Profiles or vpoc.TpoProfiles
        Volume profiles (GPU ones are copied to the host), or TPO profiles (their TPO POC and
        value area).
    sessions : None, slice, or sequence of indices / labels
        The sessions to draw (default: all), drawn in session order.
    ax : matplotlib Axes, optional
        Where to draw; default: a new figure from ``matplotlib.pyplot.subplots``.
    style : "bars" or "band"
    va_color, poc_color : matplotlib colours
    va_alpha : float in [0, 1]
        Opacity of the value-area bars / band.
    bar_width : float in (0, 1]
        Bar width as a fraction of a day (dates) or of a session (indices).
    marker : matplotlib marker or None
        Of the POC points.
    legend : bool
        A legend right of the Axes (a new figure uses constrained layout to keep it).
    title : str, optional
        Default: "POC and value area by trade date" (or "by session").

    Returns
    -------
    matplotlib.axes.Axes
        The value area is one BarContainer (``"bars"``) or one PolyCollection (``"band"``)
        labelled "value area", the POC one Line2D labelled "POC".
    """
    if not isinstance(style, str) or style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(map(repr, STYLES))}, got {style!r}")
    alpha, width = fraction(va_alpha, "va_alpha"), fraction(bar_width, "bar_width", low_open=True)
    lv = migration_levels(prof, sessions)
    if ax is None:
        ax = new_axes("vpoc.plot_migration()", (10, 5), "constrained")
    dated = lv["dates"] is not None
    if dated:
        mdates = require("matplotlib.dates", "vpoc.plot_migration()")
        x = np.asarray(mdates.date2num(lv["dates"]), dtype=np.float64)
    else:
        x = lv["position"].astype(np.float64)
    bottom, top = lv["va_bottom"], lv["va_top"]
    ok = np.isfinite(bottom) & np.isfinite(top)
    if style == "bars":
        bars = ax.bar(x[ok], (top - bottom)[ok], bottom=bottom[ok], width=width, color=va_color,
                      alpha=alpha, label="value area")
        for patch in bars:  # floating bars: no sticky base, so the margins show every bar whole
            patch.sticky_edges.y.clear()
        ax.autoscale_view()
    else:
        ax.fill_between(x, bottom, top, where=ok, color=va_color, alpha=alpha, linewidth=0,
                        label="value area")
    ax.plot(x, lv["poc"], color=poc_color, marker=marker, linewidth=1.5, label="POC")
    if dated:
        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    elif x.shape[0] <= 30:
        ax.set_xticks(x, [str(int(p)) for p in lv["position"].tolist()])
    ax.set_xlabel("trade date" if dated else "session")
    ax.set_ylabel("price")
    ax.set_title(title if title is not None else f"POC and value area by {'trade date' if dated else 'session'}")
    if legend:
        outside_legend(ax)
    return ax
