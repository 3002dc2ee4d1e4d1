"""Tables and session plans of ``from_trades`` / ``from_bars``: containers and frames read, sessions applied.

Contract: a frame is read by vpoc.io (one set of column, zone and label rules); every row a session rule
leaves out is counted on the result (``dropped_rows``, ``kept_rows``), every guessed default is warned about.
"""

from __future__ import annotations

import warnings
from typing import Any, Optional, Tuple

import numpy as np

from ._errors import InputError
from ._validate import check_dropped, report_volume
from ._warnings import GuessedDefaultWarning, user_stacklevel

__all__ = ["SESSION_RULES", "array_times", "bar_side_arguments", "no_table_options", "one_session", "plan", "session_facts", "table"]

SESSION_RULES = ("globex", "rth", "daily")
#: the options of vpoc.io.read_bars / read_trades that from_bars / from_trades pass on for a frame
READ_OPTIONS = ("tz", "columns", "time_unit", "ambiguous", "nonexistent")


def _is_frame(obj: Any) -> bool:
    module = type(obj).__module__
    return (hasattr(obj, "columns") and module.split(".")[0] in ("pandas", "polars")) or \
        (module.startswith("pyarrow") and hasattr(obj, "schema"))


def _read_frame(vio: Any, obj: Any, bars: bool, given: dict) -> Tuple[Any, bool]:
    """``obj`` read by vio.read_bars / read_trades; bars without an open column (which only
    distribute='legacy' reads, and the array call does not need) are read as read_bars reads them
    with ``columns={"open": None}`` (Bars.open None): (data, whether the frame had an open column)."""
    if not bars:
        return vio.read_trades(obj, **given), False
    try:
        data = vio.read_bars(obj, **given)
        return data, data.open is not None
    except InputError as e:
        if getattr(e, "columns_missing", None) != ("open",):
            raise
    columns = dict(given.get("columns") or {}, open=None)
    return vio.read_bars(obj, **dict(given, columns=columns)), False


def table(obj: Any, bars: bool, kw: dict) -> Tuple[dict, Any]:
    """A vpoc.io.Bars / Trades container, a vpoc.synth.SynthBars / SynthTrades or a pandas /
    polars DataFrame (pyarrow Table) as ``({field: array}, timestamps ns or None)``; frames are read
    by vpoc.io.read_bars / read_trades (``kw``: their tz / columns / label / interval), so column
    names, time zones and bar labels follow the one set of rules. A frame without an open column
    gives ``open`` None (as the array call without ``open=``)."""
    from . import io as vio
    from .synth import SynthBars, SynthTrades

    what = "from_bars" if bars else "from_trades"
    own, other = (vio.Bars, vio.Trades) if bars else (vio.Trades, vio.Bars)
    synth_own, synth_other = (SynthBars, SynthTrades) if bars else (SynthTrades, SynthBars)
    if isinstance(obj, (other, synth_other)):
        kind = "vpoc.io" if isinstance(obj, other) else "vpoc.synth"
        raise TypeError(f"{what} got a {kind}.{type(obj).__name__}; use "
                        f"{'from_trades' if bars else 'from_bars'} for it")
    has_open = True
    if isinstance(obj, (own, synth_own)):
        kind = "vpoc.io" if isinstance(obj, own) else "vpoc.synth"
        if kw.get("label") not in (None, "open") or any(kw.get(k) is not None for k in ("interval",) + READ_OPTIONS):
            how = "container was read with them already" if kind == "vpoc.io" else "was made with UTC bar opens"
            raise ValueError(f"{what}: tz=, columns=, time_unit=, ambiguous=, nonexistent=, label= and interval= "
                             f"apply to DataFrames; a {kind}.{type(obj).__name__} {how} (its timestamps are UTC "
                             "bar opens)")
        data = obj
        # read_bars / read_trades refuse such rows; a container made by hand may hold them
        _in_order(np.asarray(obj.timestamp, dtype=np.int64), f"{what}: the {type(obj).__name__}'s ")
        if bars and getattr(obj, "source", "<arrays>") == "<arrays>":
            # a container made by hand (read_bars warned about its own): its duplicated bars
            from ._arrays import warn_duplicate_bars

            warn_duplicate_bars(obj.timestamp, [c for c in (obj.open, obj.high, obj.low, obj.close, obj.volume)
                                                if c is not None], f"{what}: the {type(obj).__name__}")
    else:
        if not _is_frame(obj):
            need = "high, low, close and volume arrays" if bars else "price and volume arrays"
            raise TypeError(f"{what} needs {need}, or a vpoc.io.{own.__name__} container (a vpoc.synth."
                            f"{synth_own.__name__}) or a pandas / polars DataFrame as its first argument; "
                            f"got {type(obj).__name__} alone")
        given = {k: kw[k] for k in READ_OPTIONS if kw.get(k) is not None}  # vpoc.io's checks and meaning
        data, has_open = _read_frame(vio, obj, bars, given)
    names = ("high", "low", "close", "volume", "open", "buy_volume", "sell_volume") if bars else \
        ("price", "volume", "side")
    ts = np.asarray(data.timestamp, dtype=np.int64)
    if bars and data is not obj:
        ts = _opens(ts, kw)
    cols = {k: getattr(data, k, None) for k in names}
    if not has_open:
        cols["open"] = None
    return cols, ts


def _in_order(ts: np.ndarray, where: str) -> None:
    """ValueError naming ``timestamp[i]`` (after ``where``) when ``ts`` steps back: the order rule of a
    container made by hand and of ``timestamp=`` arrays (read_bars / read_trades refuse such rows too)."""
    from ._arrays import first_decrease

    i = first_decrease(ts)
    if i > 0:
        raise ValueError(f"{where}timestamp[{i}] is before timestamp[{i - 1}]; rows must be in time order "
                         "(sort them first)")


def _opens(ts: np.ndarray, kw: dict) -> np.ndarray:
    """from_bars' timestamps ``ts`` (a frame's or ``timestamp=``) as bar opens by its ``label=`` /
    ``interval=`` (vpoc._time.bar_opens, the one place close stamps become open stamps); an interval
    taken from the data is announced (GuessedDefaultWarning)."""
    if kw.get("label") is None and kw.get("interval") is None:
        return ts
    from ._time import bar_opens

    ts, step = bar_opens(ts, kw.get("label") or "open", kw.get("interval"))
    if kw.get("label") == "close" and kw.get("interval") is None and step is not None:
        warnings.warn(f"from_bars: label='close' without interval=: the bar interval was taken as "
                      f"{step / 1e9:g} s (the most common spacing of the timestamps); pass interval= "
                      "to set it", GuessedDefaultWarning, stacklevel=user_stacklevel())
    return ts


#: the options of from_bars / from_trades that describe ``timestamp=`` arrays as well as a frame's
ARRAY_TIME_OPTIONS = ("time_unit", "label", "interval")


def array_times(timestamp: Any, kw: dict, bars: bool, columns: dict, what: str) -> Optional[np.ndarray]:
    """``timestamp=`` of from_bars / from_trades given arrays (``columns``: high, low, close, volume, open
    or price, volume; as many rows as the first) as int64 ns UTC, or None when not given. Read as the feature tables
    and vpoc.Live read theirs (vpoc._time.input_timestamps_ns: integers in ``time_unit``, None: ns;
    datetime64 of any unit, UTC; tz-aware pandas datetimes; naive pandas ones refused, as a frame's
    without tz=), then taken as a container's are: in time order (ValueError naming ``timestamp``),
    bars stamped by ``label=`` / ``interval=`` (``_opens``), exact duplicate bars warned about. ``kw``:
    the call's frame options; the others than time_unit / label / interval (and those without
    ``timestamp=``) are refused naming them (TypeError)."""
    if timestamp is None:
        no_table_options(kw, what, " (time_unit=, label= and interval= also with timestamp=)")
        return None
    if _is_frame(timestamp) and not hasattr(timestamp, "dtype"):
        raise TypeError(f"{what}: timestamp= takes one array of times (one per row), got a "
                        f"{type(timestamp).__name__}; pass the frame as the first argument alone")
    no_table_options({k: v for k, v in kw.items() if k not in ARRAY_TIME_OPTIONS}, what)
    from ._time import check_time_unit, input_timestamps_ns

    check_time_unit(kw.get("time_unit"))
    first = next(iter(columns))
    try:
        n = len(columns[first])
    except TypeError:  # a scalar: the engine's words
        raise ValueError(f"{first} must be a 1-D array, got {type(columns[first]).__name__}") from None
    ts = input_timestamps_ns(timestamp, n, kw.get("time_unit"), naive_utc=False)
    _in_order(ts, f"{what}: ")
    if not bars:
        return ts
    ts = _opens(ts, kw)
    if ts.shape[0] > 1 and np.any(ts[1:] == ts[:-1]):  # exact duplicate bars, counted twice (as a frame's)
        from ._arrays import warn_duplicate_bars
        from ._time import host

        warn_duplicate_bars(ts, [host(columns[k], k) for k in ("open", "high", "low", "close", "volume")
                                 if columns.get(k) is not None], what)
    return ts


def bar_side_arguments(obj: Any, buy_volume: Any, sell_volume: Any, kw: dict) -> Tuple[Any, Any, dict]:
    """from_bars' ``buy_volume=`` / ``sell_volume=`` before its first argument is read: with a DataFrame,
    column names (str) become ``columns=`` entries (vpoc.io.read_bars reads and checks them) and arrays
    given make the reader ignore the frame's own buy / sell columns; a name with anything else (arrays,
    a container) is refused (TypeError: a column name needs a frame). Returns (buy, sell, kw)."""
    names = [isinstance(x, str) for x in (buy_volume, sell_volume)]
    if not any(names):
        if (buy_volume is not None or sell_volume is not None) and _is_frame(obj):
            kw = dict(kw, columns={**(kw.get("columns") or {}), "buy_volume": None, "sell_volume": None})
        return buy_volume, sell_volume, kw
    which = "buy_volume" if names[0] else "sell_volume"
    given = buy_volume if names[0] else sell_volume
    if not _is_frame(obj):
        raise TypeError(f"from_bars: {which}={given!r} is a column name, which applies when the first argument "
                        "is a DataFrame; pass the column's values (an array, one per bar) here. A vpoc.io.Bars "
                        "uses its own buy_volume / sell_volume, and a frame's buy_volume / sell_volume (or "
                        "AskVolume / BidVolume) columns are picked up by name")
    if not all(names):
        other = "sell_volume" if names[0] else "buy_volume"
        raise TypeError(f"from_bars: {which}={given!r} names a column but {other} is "
                        f"{'missing' if (sell_volume if names[0] else buy_volume) is None else 'not a name'}; "
                        "give both as column names, or both as arrays")
    columns = {**(kw.get("columns") or {}), "buy_volume": buy_volume, "sell_volume": sell_volume}
    return None, None, dict(kw, columns=columns)


def no_table_options(kw: dict, what: str, also: str = "") -> None:
    """TypeError naming the frame-only options given with arrays (``also``: said after it)."""
    given = [k for k, v in kw.items() if v is not None]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise TypeError(f"{what}: {'= and '.join(given)}= {verb} only when the first argument is a DataFrame{also}")


def one_session(session: Any, sessions: Any) -> Any:
    """``session=`` (the name every entry point uses for the session rule) and its alias
    ``sessions=``: one of them, or both the same object."""
    if sessions is not None and sessions is not session:
        raise TypeError("give the session rule once: session= (sessions= is the same argument)")
    return session


def plan(sessions: Any, offsets: Any, session_ids: Any, ts: Any, volume: Any, n: int, what: str,
         columns: dict) -> Tuple[dict, Any, dict, Optional[np.ndarray]]:
    """Apply ``sessions=`` (a vpoc.sessions.Sessions or a rule name), or the Globex default for
    data with timestamps: returns the kept rows of ``columns``, the offsets, the result's session
    facts (labels, rule, dropped rows, the kept rows' input positions) and the caller's input row
    of each kept row (None when the columns are the caller's rows as given): errors about a kept
    row name its input row through ``vpoc._errors.input_rows``. A Sessions given with timestamps
    must have been built from them (ValueError naming ``session``)."""
    from . import sessions as vs

    if sessions is None:
        if ts is None or offsets is not None or session_ids is not None:
            return columns, offsets, {}, None
        sessions, guessed = "globex", True
    else:
        guessed = False
        if offsets is not None or session_ids is not None:
            raise ValueError(f"{what}: give session= or offsets= / session_ids=, not both")
    rule: Optional[str] = None
    if isinstance(sessions, str):
        if sessions not in SESSION_RULES:
            raise ValueError(f"session must be a vpoc.sessions.Sessions or one of "
                             f"{', '.join(map(repr, SESSION_RULES))}, got {sessions!r}")
        if ts is None:
            raise ValueError(f"session={sessions!r} builds sessions from timestamps: pass timestamp= with "
                             "the arrays, or a vpoc.io container or a DataFrame with a timestamp column (or a "
                             f"vpoc.sessions.{sessions}(ts) result)")
        rule = sessions
        vol = report_volume(volume) if isinstance(volume, np.ndarray) else None  # bad values: refused below
        sessions = _build(getattr(vs, rule), ts, vol)
    elif not isinstance(sessions, vs.Sessions):
        raise TypeError(f"session must be a vpoc.sessions.Sessions (e.g. vpoc.sessions.globex(ts)) or a "
                        f"rule name, got {type(sessions).__name__}")
    s = sessions
    rows = None
    if n == s.n_input:
        if s.index is not None:
            names = ("high", "low", "close", "open", "price", "volume")  # buy / sell: checked on every row
            check_dropped({k: x for k, x in columns.items() if k in names}, s.index, n, what)
            columns = {k: (None if x is None else s.take(x)) for k, x in columns.items()}
            rows = np.asarray(s.index, dtype=np.int64)
    elif n != s.n_kept:
        raise ValueError(f"{what}: the data has {n} rows but session= was built from {s.n_input} "
                         f"timestamps (and keeps {s.n_kept} rows); build it from this data's timestamps")
    if rule is None and ts is not None:
        problem = s.mismatch(ts)
        if problem is not None:
            raise ValueError(f"{what}: session= was not built from this data's timestamps ({problem}); "
                             "build it from them, e.g. vpoc.sessions.globex(df['timestamp']), with the "
                             "label= / interval= the data is read with")
    facts = dict(session_facts(s.labels, rule, s.definition), dropped_rows=int(s.n_dropped))
    if rows is not None:
        facts["kept_rows"] = rows
    dv = float(getattr(s, "dropped_volume", float("nan")))
    if s.n_dropped == 0:
        dv = 0.0
    elif np.isnan(dv) and isinstance(volume, np.ndarray) and n == s.n_input:  # built without volume=
        dv = float(np.sum(volume, dtype=np.float64)) - float(np.sum(columns["volume"], dtype=np.float64))
    facts["dropped_volume"] = dv
    if guessed:
        span = f", {s.labels[0]} .. {s.labels[-1]}" if s.n_sessions else ""
        warnings.warn(
            f"{what}: no sessions, offsets or session_ids given: built CME Globex sessions from the "
            f"timestamps (vpoc.sessions.globex: 17:00-16:00 America/Chicago by trade date; "
            f"{s.n_sessions} sessions{span}, {s.n_dropped} of {s.n_input} rows outside them); pass "
            "session='globex' (or another rule, a vpoc.sessions.Sessions, offsets=) to choose",
            GuessedDefaultWarning, stacklevel=3)
    return columns, s.offsets, facts, rows


def session_facts(labels: Any, rule: Optional[str], definition: str) -> dict:
    """The session facts of a result whose sessions are the trade dates ``labels`` (YYYYMMDD) of a
    session rule: its labels, ``trade_dates`` (``to_pandas()`` indexed by a DatetimeIndex
    "trade_date", ``loc`` by date) and ``session_rule``: the rule's name when the call named one
    (``session="globex"``), else its definition's (a ``vpoc.sessions.Sessions``' ``definition``).
    One home for from_* (``plan``) and ``vpoc.Live.profiles``."""
    return dict(session_labels=np.asarray(labels, dtype=np.int64), trade_dates=True,
                session_rule=rule or definition)


def _build(rule: Any, ts: Any, volume: Any) -> Any:
    """``rule(ts, volume=volume)``: the volume lets the sessions report the dropped volume."""
    return rule(ts) if volume is None else rule(ts, volume=volume)


def synth_sessions(obj: Any, session: Any, sessions: Any, offsets: Any, session_ids: Any) -> Tuple[Any, dict]:
    """A vpoc.synth.SynthBars / SynthTrades given with no session=, offsets= or session_ids=: its own
    sessions (offsets, trade-date labels), as the feature tables read it, not the Globex rule on its
    timestamps (the synthetic clock has no DST or holidays: Globex would drop rows of it). Returns
    (offsets, the result's session facts); anything else: (offsets, {})."""
    from .synth import SynthBars, SynthTrades

    if not isinstance(obj, (SynthBars, SynthTrades)) or any(
            x is not None for x in (session, sessions, offsets, session_ids)):
        return offsets, {}
    return np.asarray(obj.offsets, dtype=np.int64), session_facts(obj.session_labels, None,
                                                                  f"{type(obj).__name__} sessions")

