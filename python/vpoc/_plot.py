"""``plot_profile``: one session's volume profile drawn with matplotlib (``Profiles.plot``).

Contract: one horizontal bar per profile row (width = row volume; with aggressor sides: buy, sell and
unknown-side layers stacked to it, and the row's delta), a POC line and a value-area band, on the
price axis; draws into ``ax`` (or a new figure) and returns the Axes. The helpers below (session
lookup, row centres, price text, stacked bars) are shared with ``vpoc._plot_tpo``.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple

import numpy as np

from ._optional import require
from ._profiles import _yyyymmdd
from ._validate import real

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from ._profiles import Profiles

__all__ = ["DELTA_GID", "fraction", "label_text", "new_axes", "outside_legend", "plot_profile", "price_text",
           "row_offset", "session_position", "side_rows", "stacked_bars"]

#: The ``gid`` of the per-row delta bars ``plot_profile`` draws for a Profiles with aggressor sides.
DELTA_GID: str = "delta"


def price_text(p: float, tick_size: float) -> str:
    """``p`` with as many decimals as the tick size has (0.25 -> "4512.75")."""
    text = np.format_float_positional(tick_size, trim="-")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return f"{p:.{decimals}f}"


def fraction(x: Any, name: str, low_open: bool = False) -> float:
    """``x`` as a float in [0, 1] (``low_open``: in (0, 1]); TypeError / ValueError naming ``name``."""
    v = real(x, name)
    if not (0.0 < v <= 1.0 if low_open else 0.0 <= v <= 1.0):
        raise ValueError(f"{name} must be in {'(0, 1]' if low_open else '[0, 1]'}, got {x!r}")
    return v


def row_offset(result: Any) -> float:
    """From a row's price (its lowest tick) to the middle of its ticks: 0 with one tick per row."""
    return (int(result.ticks_per_row) - 1) * float(result.tick_size) / 2.0


def label_text(result: Any, s: int) -> str:
    """Session ``s``'s label as a title shows it: a trade date as YYYY-MM-DD, else the label, else
    the index."""
    labels = result.session_labels
    if labels is None:
        return str(s)
    label = labels[s].item() if isinstance(labels[s], np.generic) else labels[s]
    if result.trade_dates:
        return f"{label // 10000:04d}-{label // 100 % 100:02d}-{label % 100:02d}"
    return str(label)


def _label_position(result: Any, key: Any) -> int:
    """The index of the session labelled ``key`` in a result without ``position`` (TpoProfiles):
    trade dates in any spelling ``Profiles.loc`` takes; KeyError when no session has it."""
    labels = result.session_labels
    if labels is None:
        raise KeyError(f"{key!r}: this result has no session labels; use an integer position")
    want = _yyyymmdd(key) if result.trade_dates else key
    hits = np.flatnonzero(np.asarray(labels) == want) if want is not None and not isinstance(want, bytes) else []
    if len(hits) == 0:
        span = f"{labels[0]} .. {labels[-1]}" if len(labels) else "none"
        raise KeyError(f"no session labelled {key!r} (labels: {span})")
    return int(hits[0])


def session_position(result: Any, session: Any, name: str = "session") -> int:
    """The index of ``session`` in ``result`` (a Profiles or a TpoProfiles): an in-range integer is
    an index (negative counts from the end), anything else a label (a trade date in any usual
    spelling when the result has them). TypeError for a float or bool naming ``name``; KeyError for
    an unknown label; an out-of-range integer that is no label is returned as it is (the caller's
    ``session(i)`` raises the IndexError)."""
    if isinstance(session, (bool, np.bool_, float, np.floating)):
        raise TypeError(f"{name} must be an integer session index or a session label, got "
                        f"{type(session).__name__}")
    find = getattr(result, "position", None)
    if find is None:
        def find(key: Any) -> int:
            return _label_position(result, key)
    if isinstance(session, numbers.Integral):
        n = result.n_sessions
        if -n <= int(session) < n or result.session_labels is None:
            return int(session)
        try:
            return find(session)
        except KeyError:
            return int(session)  # neither: the index error of session(i) says so
    return find(session)  # KeyError naming the label and the labels there are


def new_axes(feature: str, figsize: Tuple[float, float], layout: Optional[str] = None) -> "Axes":
    """A new figure's Axes (matplotlib.pyplot.subplots, ``layout`` as it takes it: "constrained"
    keeps a legend outside the Axes in the figure); ModuleNotFoundError naming ``feature`` and the
    ``plot`` extra when matplotlib is missing."""
    plt = require("matplotlib.pyplot", feature)
    return plt.subplots(figsize=figsize, layout=layout)[1]


def outside_legend(ax: "Axes") -> None:
    """The Axes' legend right of it, top-aligned (it never hides what is drawn)."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize="small")


def stacked_bars(ax: "Axes", y: np.ndarray, layers: Sequence[Tuple[str, np.ndarray, Any]],
                 height: float) -> list:
    """Horizontal bars at ``y``, one set per layer (label, widths, colour), each layer starting
    where the previous ones end (one layer: plain bars from 0). Returns the BarContainers."""
    left = np.zeros(np.shape(y)[0], dtype=np.float64)
    out = []
    for label, widths, color in layers:
        out.append(ax.barh(y, widths, height=height, left=left.copy(), color=color, label=label))
        left = left + np.asarray(widths, dtype=np.float64)
    return out


def side_rows(host: "Profiles", s: int) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(buy, sell, unknown-side) volume per row of session ``s`` of a host Profiles with aggressor
    sides (``side=`` / ``buy_volume=``), aligned with its ``volume`` rows; None without them. The
    unknown-side volume is ``volume - buy - sell`` (0 where float rounding leaves less)."""
    buy = host.buy_volume
    if buy is None:
        return None
    a, b = int(host.offsets[s]), int(host.offsets[s + 1])
    bv = np.asarray(buy[a:b], dtype=np.float64)
    sv = np.asarray(host.sell_volume[a:b], dtype=np.float64)
    rest = np.asarray(host.volume[a:b], dtype=np.float64) - bv - sv
    return bv, sv, np.where(rest > 0, rest, 0.0)


def plot_profile(prof: "Profiles", session: int, ax: Optional["Axes"] = None, *,
                 color: str = "tab:blue", va_color: str = "tab:orange",
                 poc_color: str = "tab:red", va_alpha: float = 0.15, bar_fill: float = 0.9,
                 show_va: bool = True, show_poc: bool = True, legend: bool = True,
                 title: Optional[str] = None, side: Optional[bool] = None, buy_color: Any = "tab:green",
                 sell_color: Any = "tab:red", unknown_color: Any = "tab:gray", delta_color: Any = "black",
                 show_delta: bool = True) -> "Axes":
    """Draw session ``session`` of ``prof`` as horizontal volume bars with its POC and value area.

    Each profile row is a bar centred on the middle of the row's ticks (the row's price when
    ``ticks_per_row == 1``), ``bar_fill`` of a row high, as long as the row's volume. The POC
    is a horizontal line through the POC row's centre; the value area is a band from the
    bottom of the VAL row to the top of the VAH row. An empty session draws no bars and says
    so in the title. GPU profiles are copied to the host first.

    A Profiles with aggressor sides (``from_trades(side=)``, ``from_bars(buy_volume=,
    sell_volume=)``) draws each row's bar as stacked layers: its buy volume from 0, its sell
    volume after it, and the volume of unknown side after that (only when some row has any), so
    the stack is as long as the row's volume; and, with ``show_delta``, the row's delta
    (buy - sell) as a thinner bar from 0 (right when positive, left when negative; gid
    ``DELTA_GID``), labelled with the session's delta.

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
        Of the bars (without sides), the value-area band and the POC line.
    va_alpha : float in [0, 1]
        Opacity of the value-area band.
    bar_fill : float in (0, 1]
        Bar height as a fraction of the row height (1 leaves no gap between rows).
    show_va, show_poc, legend : bool
        Draw the value-area band / POC line / a legend with their prices.
    title : str, optional
        Axes title; default: "session <label>" (the session label when ``prof`` has labels; a
        trade date as YYYY-MM-DD).
    side : bool, optional
        Draw the aggressor-side layers: None (default) when ``prof`` has them, False never, True
        always (ValueError naming ``side`` when ``prof`` has none).
    buy_color, sell_color, unknown_color, delta_color : matplotlib colours
        Of the buy, sell and unknown-side layers and the delta bars.
    show_delta : bool
        Draw the per-row delta bars (with sides only).

    Returns
    -------
    matplotlib.axes.Axes
        Without sides one BarContainer labelled "volume"; with them one per layer labelled
        "buy", "sell" (and "unknown side"), and the delta bars labelled "delta (session <d>)".
    """
    pos = session_position(prof, session)
    if not 0.0 <= float(va_alpha) <= 1.0:
        raise ValueError(f"va_alpha must be in [0, 1], got {va_alpha!r}")
    if not 0.0 < float(bar_fill) <= 1.0:
        raise ValueError(f"bar_fill must be in (0, 1], got {bar_fill!r}")
    if side is not None and not isinstance(side, (bool, np.bool_)):
        raise TypeError(f"side must be True, False or None, got {type(side).__name__}")
    if ax is None:
        ax = new_axes("Profiles.plot()", (5, 7))
    host = prof.cpu()
    prices, volumes = host.session(pos)  # IndexError for an out-of-range session
    s = pos % host.n_sessions
    sides = side_rows(host, s) if side is not False else None
    if side and sides is None:
        raise ValueError("side=True draws the aggressor-side volumes, and this Profiles has none (make it "
                         "with from_trades(side=) or from_bars(buy_volume=, sell_volume=))")
    offset = row_offset(host)  # row price -> centre of its ticks
    row = host.row_size
    edges = False  # bins=N: rows are bins (price: lower edge); VAH / VAL may be edges (bin_report)
    if host.bin_low is not None:
        w = float(host.bin_width[s])
        row = w if w > 0 else row
        offset = row / 2.0
        edges = (host.rules or {}).get("bin_report", "center_edges") == "center_edges"
    if title is None:
        title = f"session {label_text(host, s)}"
    if prices.shape[0] == 0:
        ax.set_title(f"{title} (empty session)")
        ax.set_xlabel("volume")
        ax.set_ylabel("price")
        return ax
    left = 0.0
    if sides is None:
        stacked_bars(ax, prices + offset, [("volume", volumes, color)], bar_fill * row)
    else:
        buy, sell, unknown = sides
        layers = [("buy", buy, buy_color), ("sell", sell, sell_color)]
        if unknown.any():
            layers.append(("unknown side", unknown, unknown_color))
        stacked_bars(ax, prices + offset, layers, bar_fill * row)
        if show_delta:
            delta = buy - sell
            total = float(np.asarray(host.delta)[s])
            bars = ax.barh(prices + offset, delta, height=0.35 * bar_fill * row, color=delta_color, zorder=3,
                           label=f"delta (session {total:+g})")
            for r in bars:
                r.set_gid(DELTA_GID)
            ax.axvline(0.0, color=delta_color, linewidth=0.6, zorder=2)
            left = min(0.0, float(delta.min()))
    if show_va:
        val, vah = float(host.val[s]), float(host.vah[s])
        lo_e, hi_e = (val, vah) if edges else (val + offset - row / 2.0, vah + offset + row / 2.0)
        if host.bin_low is not None and not edges:  # bin centres
            lo_e, hi_e = val - row / 2.0, vah + row / 2.0
        ax.axhspan(lo_e, hi_e, color=va_color,
                   alpha=float(va_alpha), zorder=0,
                   label=f"value area {price_text(val, host.tick_size)} - {price_text(vah, host.tick_size)}")
    if show_poc:
        poc = float(host.poc[s])
        ax.axhline(poc + (0.0 if host.bin_low is not None else offset), color=poc_color, linewidth=1.5,
                   label=f"POC {price_text(poc, host.tick_size)}")
    ax.set_title(title)
    ax.set_xlabel("volume" if sides is None else "volume (buy | sell stacked; delta from 0)")
    ax.set_ylabel("price")
    top = float(volumes.max())
    ax.set_xlim(left * 1.05, top * 1.05 if top > 0 else 1.0)
    if legend:
        ax.legend(loc="lower right", fontsize="small")
    return ax
