"""``plot_profile``: one session's volume profile drawn with matplotlib (``Profiles.plot``).

Contract: one horizontal bar per profile row (width = row volume), a POC line and a value-area
band, on the price axis; draws into ``ax`` (or a new figure) and returns the Axes.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ._optional import require

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from ._profiles import Profiles

__all__ = ["plot_profile"]


def _price(p: float, tick_size: float) -> str:
    """``p`` with as many decimals as the tick size has (0.25 -> "4512.75")."""
    text = np.format_float_positional(tick_size, trim="-")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return f"{p:.{decimals}f}"


def _position(prof: "Profiles", session: Any) -> int:
    """The index of ``session``: an in-range integer is an index, anything else a label."""
    if isinstance(session, (bool, np.bool_, float, np.floating)):
        raise TypeError(f"session must be an integer session index or a session label, got "
                        f"{type(session).__name__}")
    if isinstance(session, numbers.Integral):
        n = prof.n_sessions
        if -n <= int(session) < n or prof.session_labels is None:
            return int(session)
        try:
            return prof.position(session)
        except KeyError:
            return int(session)  # neither: the index error below says so
    return prof.position(session)  # KeyError naming the label and the labels there are


def plot_profile(prof: "Profiles", session: int, ax: Optional["Axes"] = None, *,
                 color: str = "tab:blue", va_color: str = "tab:orange",
                 poc_color: str = "tab:red", va_alpha: float = 0.15, bar_fill: float = 0.9,
                 show_va: bool = True, show_poc: bool = True, legend: bool = True,
                 title: Optional[str] = None) -> "Axes":
    """Draw session ``session`` of ``prof`` as horizontal volume bars with its POC and value area.

    Each profile row is a bar centred on the middle of the row's ticks (the row's price when
    ``ticks_per_row == 1``), ``bar_fill`` of a row high, as long as the row's volume. The POC
    is a horizontal line through the POC row's centre; the value area is a band from the
    bottom of the VAL row to the top of the VAH row. An empty session draws no bars and says
    so in the title. GPU profiles are copied to the host first.

    Parameters
    ----------
    prof : vpoc.Profiles
    session : int, or a session label
        Session index (negative counts from the end, as in ``Profiles.session``), or a label as
        ``Profiles.loc`` takes it: a trade date ('2025-01-21', 20250121, a date, a Timestamp)
        when ``prof`` has them. An integer that is a valid index is an index.
    ax : matplotlib Axes, optional
        Where to draw; default: a new figure from ``matplotlib.pyplot.subplots``.
    color, va_color, poc_color : matplotlib colours
        Of the bars, the value-area band and the POC line.
    va_alpha : float in [0, 1]
        Opacity of the value-area band.
    bar_fill : float in (0, 1]
        Bar height as a fraction of the row height (1 leaves no gap between rows).
    show_va, show_poc, legend : bool
        Draw the value-area band / POC line / a legend with their prices.
    title : str, optional
        Axes title; default: "session <label>" (the session label when ``prof`` has labels; a
        trade date as YYYY-MM-DD).

    Returns
    -------
    matplotlib.axes.Axes
    """
    pos = _position(prof, session)
    if not 0.0 <= float(va_alpha) <= 1.0:
        raise ValueError(f"va_alpha must be in [0, 1], got {va_alpha!r}")
    if not 0.0 < float(bar_fill) <= 1.0:
        raise ValueError(f"bar_fill must be in (0, 1], got {bar_fill!r}")
    if ax is None:
        plt = require("matplotlib.pyplot", "Profiles.plot()")
        _, ax = plt.subplots(figsize=(5, 7))
    host = prof.cpu()
    prices, volumes = host.session(pos)  # IndexError for an out-of-range session
    s = pos % host.n_sessions
    offset = (host.ticks_per_row - 1) * host.tick_size / 2.0  # row price -> centre of its ticks
    row = host.row_size
    if title is None:
        label = host.session_labels[s] if host.session_labels is not None else s
        if host.trade_dates:
            label = f"{label // 10000:04d}-{label // 100 % 100:02d}-{label % 100:02d}"
        title = f"session {label}"
    if prices.shape[0] == 0:
        ax.set_title(f"{title} (empty session)")
        ax.set_xlabel("volume")
        ax.set_ylabel("price")
        return ax
    ax.barh(prices + offset, volumes, height=bar_fill * row, color=color, label="volume")
    if show_va:
        val, vah = float(host.val[s]), float(host.vah[s])
        ax.axhspan(val + offset - row / 2.0, vah + offset + row / 2.0, color=va_color,
                   alpha=float(va_alpha), zorder=0,
                   label=f"value area {_price(val, host.tick_size)} - {_price(vah, host.tick_size)}")
    if show_poc:
        poc = float(host.poc[s])
        ax.axhline(poc + offset, color=poc_color, linewidth=1.5,
                   label=f"POC {_price(poc, host.tick_size)}")
    ax.set_title(title)
    ax.set_xlabel("volume")
    ax.set_ylabel("price")
    ax.set_xlim(0.0, float(volumes.max()) * 1.05 if float(volumes.max()) > 0 else 1.0)
    if legend:
        ax.legend(loc="lower right", fontsize="small")
    return ax
