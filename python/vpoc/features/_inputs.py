"""Inputs of the feature tables: arrays, SynthBars or DataFrames to validated host arrays (``_Data``).

Contract: ``_data`` returns float64 prices/volumes, int64 ns UTC timestamps and the CSR session
layout, or raises ValueError/TypeError naming the argument; nothing is dropped here.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

import numpy as np

from .._arrays import as_prices, as_volume, warn_duplicate_bars
from .._validate import check_dropped, report_volume
from .._time import bar_opens, check_label, check_time_unit, interval_ns
from .._time import host as _host, input_timestamps_ns as _timestamps_ns
from .._warnings import GuessedDefaultWarning, user_stacklevel
from ..synth import SynthBars
from ._grouping import GROUP_COLUMNS, _check_sorted, _group

__all__ = ["_DOC_COMMON", "_Data", "_data", "_given_sides", "_host", "_timestamps_ns", "_unpack_frame"]


def _unpack_frame(high: Any, low: Any, close: Any, volume: Any, open: Any,
                  timestamp: Any) -> Tuple[Any, ...]:
    """A SynthBars, a vpoc.io.Bars or a pandas/polars DataFrame given as ``high``: its columns as
    the arrays. Returns (high, low, close, volume, open, timestamp, kind, synth, frame_cols):
    ``kind`` "arrays", "synth", "bars" or "frame"; ``synth`` the SynthBars' (offsets, labels);
    ``frame_cols`` the frame's grouping columns (name -> values)."""
    from ..io import Bars

    is_frame = type(high).__module__.split(".")[0] in ("pandas", "polars") and hasattr(high, "columns")
    if not (isinstance(high, (SynthBars, Bars)) or is_frame):
        if low is None or close is None or volume is None:
            raise TypeError("high, low, close and volume are required (or pass a SynthBars, a "
                            "vpoc.io.Bars or a DataFrame as the first argument)")
        return high, low, close, volume, open, timestamp, "arrays", None, None
    if low is not None or close is not None or volume is not None:
        raise TypeError("when the first argument is a SynthBars, vpoc.io.Bars or DataFrame, do not pass "
                        "low, close or volume")
    frame = high
    synth = frame_cols = None
    if isinstance(frame, (SynthBars, Bars)):
        get = lambda k: getattr(frame, k)  # noqa: E731
        has = lambda k: True  # noqa: E731
        kind = "synth" if isinstance(frame, SynthBars) else "bars"
        if kind == "synth":
            synth = (frame.offsets, frame.session_labels)
    else:
        cols = {str(c) for c in frame.columns}
        missing = [k for k in ("high", "low", "close", "volume") if k not in cols]
        if missing:
            raise ValueError(f"the DataFrame has no column(s) {missing}; it needs high, low, close, "
                             f"volume (open, timestamp and a session column {list(GROUP_COLUMNS)} optional)")
        get = lambda k: frame[k].to_numpy() if k != "timestamp" else frame[k]  # noqa: E731
        has = lambda k: k in cols  # noqa: E731
        kind = "frame"
        frame_cols = {str(c): frame[c].to_numpy() for c in frame.columns
                      if str(c) in GROUP_COLUMNS}
    high, low, close, volume = get("high"), get("low"), get("close"), get("volume")
    if open is None and has("open"):
        open = get("open")
    if timestamp is None and has("timestamp"):
        timestamp = get("timestamp")
    return high, low, close, volume, open, timestamp, kind, synth, frame_cols


def _naive(x: Any) -> bool:
    """Whether ``x`` holds pandas or polars datetimes without a time zone (numpy datetime64 is UTC
    by vpoc's convention; integers are epoch times)."""
    module = type(x).__module__.split(".")[0]
    dtype = getattr(x, "dtype", None)
    if module == "pandas":
        return str(dtype).startswith("datetime64") and getattr(dtype, "tz", None) is None
    if module == "polars":
        return getattr(dtype, "time_zone", "") is None
    return False


def _check_naive(ts: np.ndarray, session: Any, kind: str, what: str) -> None:
    """Naive pandas / polars timestamps (``ts``: read as UTC) are taken only with a Sessions built from
    those very instants (``Sessions.mismatch``: the user read them as UTC there); otherwise refused
    as from_bars refuses a frame's (vpoc.io's no_zone_error), not read as UTC silently."""
    from ..io import no_zone_error
    from ..sessions import Sessions

    if isinstance(session, Sessions) and session.mismatch(ts) is None:
        return
    src = "<DataFrame>" if kind == "frame" else "timestamp"
    raise no_zone_error(f"{what}: {src}", (
        "localize them first (e.g. .dt.tz_localize('America/Chicago') for exchange time, or 'UTC'), or "
        "read the frame with vpoc.io.read_bars(df, tz=...) and pass the Bars; tz= here is the exchange "
        "zone of RTH and the IB, not the timestamps'"))


@dataclass
class _Data:
    """Validated host inputs (the rows kept in a session) and the session layout."""

    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    volume: np.ndarray  # float64
    open: Optional[np.ndarray]
    ts: Optional[np.ndarray]  # int64 ns UTC, bar opens
    offsets: np.ndarray  # bars, int64 [S+1]
    labels: np.ndarray  # [S]
    engine_inputs: Tuple[Any, ...]
    trade_days: Optional[np.ndarray] = None  # int64 [S] trade date (days since the epoch) or None
    facts: Dict[str, Any] = field(default_factory=dict)  # how the rows were grouped / stamped
    table: Any = None  # the vpoc.io.Bars / DataFrame given as ``high`` (its buy / sell columns), or None
    open_ns: Optional[np.ndarray] = None  # int64 [S] scheduled UTC open of each session (a session rule), or None


def _given_sides(buy_volume: Any, sell_volume: Any, data: _Data) -> Tuple[Any, Any]:
    """The call's ``buy_volume=`` / ``sell_volume=`` (input rows): as given when they are arrays; None
    for both takes a vpoc.io.Bars' own or a frame's buy_volume / sell_volume (or AskVolume /
    BidVolume) columns, by vpoc.io.read_bars' rule (both or neither: ValueError naming the missing
    one); column names (str) pick a frame's columns (TypeError without a frame)."""
    from ..io import Bars, bar_side_names

    names = [isinstance(x, str) for x in (buy_volume, sell_volume)]
    t = data.table
    frame = t is not None and not isinstance(t, Bars)
    if not any(names):
        if buy_volume is not None or sell_volume is not None or t is None:
            return buy_volume, sell_volume
        if isinstance(t, Bars):
            return t.buy_volume, t.sell_volume
        b, s = bar_side_names([str(c) for c in t.columns])
        return (None, None) if b is None else (t[b].to_numpy(), t[s].to_numpy())
    which, given = ("buy_volume", buy_volume) if names[0] else ("sell_volume", sell_volume)
    if not frame:
        raise TypeError(f"{which}={given!r} is a column name, which applies when the first argument is a "
                        "DataFrame; pass the column's values (an array, one per bar). A vpoc.io.Bars uses its "
                        "own buy_volume / sell_volume, and a frame's buy_volume / sell_volume (or AskVolume / "
                        "BidVolume) columns are picked up by name")
    if not all(names):
        raise TypeError(f"{which}={given!r} names a column: give buy_volume and sell_volume both as column "
                        "names, or both as arrays")
    b, s = bar_side_names([str(c) for c in t.columns], {"buy_volume": buy_volume, "sell_volume": sell_volume})
    return t[b].to_numpy(), t[s].to_numpy()


def _data(high: Any, low: Any, close: Any, volume: Any, open: Any, timestamp: Any, offsets: Any,
          session_ids: Any, time_unit: Optional[str] = None, *, session: Any = None,
          sessions: Any = None, label: Any = "open", interval: Any = None,
          what: str = "session_features") -> _Data:
    """The validated inputs of one call: timestamps become bar opens (``label``/``interval``,
    vpoc._time.bar_opens) before the rows are grouped (``_grouping._group``); only the kept rows
    remain, their input positions in ``facts["input_index"]``."""
    read_label = getattr(high, "label", None)  # a vpoc.io.Bars: how its file was stamped
    read_interval = getattr(high, "interval", None)
    table = high
    high, low, close, volume, open, timestamp, kind, synth, frame_cols = _unpack_frame(
        high, low, close, volume, open, timestamp)
    if session is not None and sessions is not None:
        raise ValueError(f"{what}: give session= or sessions= (the same argument), not both")
    session = sessions if session is None else session
    label = check_label(label)
    # A Bars read with label="close" holds bar opens already: a second label=/interval= would move
    # them twice. One read with the default label="open" holds the file's stamps as written, so an
    # explicit label="close" here applies to them (read_bars(..., label="close") is the same).
    if kind == "bars" and read_label == "close" and (label != "open" or interval is not None):
        iv = "" if read_interval is None else f", interval={read_interval:g}"
        raise ValueError(f"{what}: this vpoc.io.Bars was read with label='close'{iv}: its timestamps "
                         "are bar opens already; leave out label= and interval= here")
    h = as_prices(_host(high), "high")
    n = h.shape[0]
    o = None if open is None else as_prices(_host(open), "open")
    lo, c = as_prices(_host(low), "low"), as_prices(_host(close), "close")
    v = as_volume(_host(volume), "volume")
    for name, arr in (("low", lo), ("close", c), ("volume", v), ("open", o)):
        if arr is not None and arr.shape[0] != n:
            raise ValueError(f"{name} has length {arr.shape[0]} but high has {n}")
    check_time_unit(time_unit)
    ts = None if timestamp is None else _timestamps_ns(timestamp, n, time_unit)
    if ts is not None and _naive(timestamp):
        _check_naive(ts, session if session is not None else sessions, kind, what)
    facts: Dict[str, Any] = dict(label=label, interval=None)
    if ts is None:
        if label != "open" or interval is not None:
            raise ValueError(f"{what}: label= and interval= describe timestamps; none were given "
                             "(timestamp=)")
    else:
        step_given = interval_ns(interval)
        ts, step = bar_opens(ts, label, interval, name="timestamp")
        if label == "close" and step_given is None and step is not None:
            warnings.warn(f"{what}: label='close' without interval=: the bar interval was inferred as "
                          f"{step / 1e9:g} s (the most common spacing of timestamp); every timestamp "
                          "moved back by it. Pass interval= to set it", GuessedDefaultWarning,
                          stacklevel=user_stacklevel())
        facts["interval"] = None if step is None else step / 1e9
        # exact duplicate bars, counted twice: from_bars' rule (vpoc.read_bars warned about a file's own;
        # a SynthBars has none)
        if kind in ("frame", "arrays") or (kind == "bars" and getattr(table, "source", None) == "<arrays>"):
            warn_duplicate_bars(ts, [x for x in (o, h, lo, c, v) if x is not None],
                                f"{what}: the DataFrame" if kind == "frame" else what)
    rows = dict(high=h, low=lo, close=c, volume=v, open=o)
    g = _group(n, offsets=_host(offsets), session_ids=_host(session_ids), session=session, synth=synth,
               frame_cols=frame_cols, ts=ts, volume=report_volume(np.asarray(v, dtype=np.float64)), what=what)
    if g.index is not None:
        check_dropped(rows, g.index, n, what, frame=kind == "frame")  # kept rows: the engine's check
        h, lo, c, v = h[g.index], lo[g.index], c[g.index], v[g.index]
        o = None if o is None else o[g.index]
        ts = None if ts is None else ts[g.index]
    if ts is not None:
        _check_sorted(ts, g.offsets, g.index)
    S = int(g.offsets.shape[0]) - 1 if g.offsets.ndim == 1 else 0
    labels = np.arange(max(S, 0), dtype=np.int64) if g.labels is None else g.labels
    facts.update(dropped_rows=0, dropped_volume=0.0)
    facts.update(g.facts)
    facts["input_index"] = g.index
    f64 = lambda a: np.asarray(a, dtype=np.float64)  # noqa: E731
    return _Data(high=f64(h), low=f64(lo), close=f64(c), volume=f64(v),
                 open=None if o is None else f64(o), ts=ts, offsets=g.offsets,
                 labels=np.asarray(labels), engine_inputs=(h, lo, c, v, o),
                 trade_days=g.trade_days, facts=facts, table=table if kind in ("bars", "frame") else None,
                 open_ns=g.open_ns)


_DOC_COMMON = """
    high, low, close, volume : 1-D array-likes [N] (any numeric dtype; torch/cupy GPU arrays are
        copied to the host), or a ``vpoc.synth.SynthBars``, a ``vpoc.io.Bars`` or a pandas/polars
        DataFrame (columns high, low, close, volume, optional open, timestamp, a session column
        session_id / session / trade_date / date, and buy_volume / sell_volume or AskVolume /
        BidVolume: used as ``buy_volume=`` / ``sell_volume=`` unless those are given, as arrays or
        as the frame's column names; a Bars' own buy / sell volumes likewise) as the first
        argument alone.
    open : [N], optional. Bar opens: the session open (NaN without it) and ``distribute="legacy"``.
    timestamp : [N], optional. Integer epoch times (UTC; ns unless ``time_unit``), datetime64
        (naive = UTC) or timezone-aware pandas / polars datetimes (naive ones are refused, as
        ``from_bars`` refuses them, unless ``session=`` is a Sessions built from the same instants
        read as UTC), stamped at the bar's open (``label="open"``) or close
        (``label="close"``). Adds the time-based columns.
    label, interval : "open" (default) or "close": how ``timestamp`` is stamped. With "close" each
        timestamp becomes its bar's open (minus ``interval``: seconds, a timedelta or "1min";
        None: the most common spacing, announced by a GuessedDefaultWarning) before sessions, IB,
        TPO and clock features are computed (vpoc._time.bar_opens).
    time_unit : unit of integer timestamps, "s", "ms", "us" or "ns" (None: ns). Integers that are
        1990..2100 times only in another unit raise ValueError naming it.
    session, sessions : (the same argument, two spellings) the sessions: a rule name ("globex",
        "rth", "daily": ``vpoc.sessions.<rule>`` applied to the bar opens), a
        ``vpoc.sessions.Sessions`` built from these rows' timestamps (or from their kept rows), or
        the name of a DataFrame column. Default: a DataFrame's session_id / session / trade_date /
        date column (the first present); offsets / session_ids when given; else Globex sessions
        when there are timestamps (GuessedDefaultWarning); else one session. Rows outside every
        session are left out of the table (counted in ``FeatureTable.dropped_rows``, reported by
        vpoc.sessions' DroppedRowsWarning). A name that is neither a rule nor a column raises.
    offsets, session_ids, tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie,
    device, threads : as in ``vpoc.from_bars`` (one engine call computes every profile).
    composite_sessions : sessions in a composite profile (default 5).
    naked_max_age : only POCs of the last this many sessions can be naked (None: all).
    node_smoothing : odd window, in rows, of the moving sum used for HVN/LVN detection (3).
    node_order : an HVN/LVN is the extreme of ``node_order`` rows on each side (3). Both are at
        most ``MAX_NODE_ROWS`` (1_000_000, the default max_rows; ValueError above); the cost of
        either does not grow with its value.
    hvn_threshold, lvn_threshold : an HVN's smoothed volume is >= hvn_threshold x the session's
        largest; an LVN's <= lvn_threshold x it (0.5 and 0.5).
    tz, rth_start, ib_minutes : the exchange time zone ("America/Chicago"), the regular session's
        open in it ("08:30") and the initial balance length in minutes (60, at most 1440). The IB
        is ``[rth_start, rth_start + ib_minutes)`` on the session's own trade date (its label when
        the sessions carry dates), never on a holiday morning merged into the session.
"""
