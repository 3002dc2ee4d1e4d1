"""Which rows form a session in the feature tables: offsets, ids, a frame's column, vpoc.sessions, Globex.

Contract: every grouping is explicit or announced: a Sessions object or rule, a frame's session/date
column, offsets/session_ids, else Globex when timestamps are given (GuessedDefaultWarning), else one session.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

import numpy as np

from .. import _core
from .._time import session_dates, yyyymmdd_days as _yyyymmdd_days
from .._warnings import GuessedDefaultWarning, user_stacklevel

__all__ = ["GROUP_COLUMNS", "SESSION_RULES", "_Grouping", "_group", "_yyyymmdd_days"]

#: Frame columns that group rows into sessions, in the order they are looked for.
GROUP_COLUMNS: Tuple[str, ...] = ("session_id", "session", "trade_date", "date")
#: Of those, the columns whose values are trade dates (the IB lies on that date's regular session).
_DATE_COLUMNS = ("trade_date", "date")
#: Rule names ``session=`` accepts (the functions of vpoc.sessions that need no further arguments).
SESSION_RULES: Tuple[str, ...] = ("globex", "rth", "daily")


@dataclass
class _Grouping:
    """The session layout of the kept rows and how it was chosen."""

    offsets: np.ndarray  # int64 [S+1] over the kept rows
    labels: Optional[np.ndarray]  # [S] or None (0..S-1)
    trade_days: Optional[np.ndarray] = None  # int64 [S] days since the epoch, or None (unknown)
    index: Optional[np.ndarray] = None  # kept rows' positions in the input (None: all)
    facts: Dict[str, Any] = field(default_factory=dict)  # session_rule, dropped_rows, dropped_volume
    open_ns: Optional[np.ndarray] = None  # int64 [S] scheduled UTC open of each session (a session rule), or None


def _date_days(values: np.ndarray, column: str) -> np.ndarray:
    """A frame's date column (datetime64, datetime.date objects, 'YYYY-MM-DD' strings or YYYYMMDD
    integers) as days since 1970-01-01; ValueError naming the column when a value is no date."""
    if values.dtype.kind == "M":
        return values.astype("datetime64[D]").astype(np.int64)
    if values.dtype.kind in "iu":
        return _yyyymmdd_days(values, f"column {column!r}")
    days = np.empty(values.shape[0], dtype="datetime64[D]")
    for i, v in enumerate(values.tolist()):
        if hasattr(v, "date") and callable(v.date):  # datetime / pandas Timestamp: its own date
            v = v.date()
        try:
            days[i] = np.datetime64(v, "D") if not isinstance(v, (int, float)) else np.datetime64("NaT", "D")
        except (ValueError, TypeError):
            days[i] = np.datetime64("NaT", "D")
    if np.isnat(days).any():
        i = int(np.argmax(np.isnat(days)))
        raise ValueError(f"column {column!r}[{i}] = {values[i]!r} is not a date")
    return days.astype(np.int64)


def _runs(values: Any, column: str) -> Tuple[np.ndarray, np.ndarray]:
    """(offsets [S+1], one value per session) of a column whose equal values are contiguous runs
    (ValueError naming the column and row when a value is missing or comes back later)."""
    v = np.asarray(values)
    n = v.shape[0]
    if v.ndim != 1:
        raise ValueError(f"column {column!r} must be 1-D, got shape {v.shape}")
    missing = np.zeros(n, dtype=bool)
    if v.dtype.kind == "f":
        missing = np.isnan(v)
    elif v.dtype.kind == "M":
        missing = np.isnat(v)
    elif v.dtype.kind == "O":
        missing = np.asarray([x is None or (isinstance(x, float) and x != x) or str(x) in ("NaT", "<NA>")
                              for x in v], dtype=bool)
    if missing.any():
        i = int(np.argmax(missing))
        raise ValueError(f"column {column!r}[{i}] is missing: every row needs its session")
    if n == 0:
        return np.zeros(1, dtype=np.int64), v[:0]
    change = np.ones(n, dtype=bool)
    change[1:] = v[1:] != v[:-1]
    starts = np.flatnonzero(change)
    firsts = v[starts]
    if v.dtype.kind in "iufM" and starts.size > 1:
        back = np.flatnonzero(firsts[1:] <= firsts[:-1])
        if back.size:
            i = int(starts[back[0] + 1])
            raise ValueError(f"column {column!r} must be non-decreasing (rows of a session together, "
                             f"sessions in order): row {i} has {_shown(v[i])!r} after {_shown(v[i - 1])!r}")
    else:
        seen: Dict[Any, int] = {}
        for k, x in enumerate(firsts.tolist()):
            if x in seen:
                raise ValueError(f"column {column!r}: the rows of session {x!r} are not contiguous "
                                 f"(row {int(starts[k])} returns to it)")
            seen[x] = k
    offsets = np.append(starts, n).astype(np.int64)
    return offsets, firsts


# A date column that changes between two rows less than this apart cuts continuous trading: the futures
# sessions' daily halt (16:00-17:00 CT) and weekends are longer, a calendar day's midnight is not a pause.
_CONTINUOUS_NS = 30 * 60 * 1_000_000_000


def _warn_calendar_dates(column: str, offsets: np.ndarray, ts: np.ndarray, what: str) -> None:
    """A GuessedDefaultWarning when the date column taken by default (no session=) starts a session less
    than 30 minutes after the row before it: its values are likely calendar dates, which cut every
    overnight session at midnight, where from_bars on the same frame uses Globex trade dates."""
    starts = offsets[1:-1]
    if starts.size == 0 or ts.shape[0] != int(offsets[-1]):
        return
    cut = starts[(ts[starts] - ts[starts - 1]) < _CONTINUOUS_NS]
    if cut.size == 0:
        return
    i = int(cut[0])
    warnings.warn(f"{what}: rows are grouped into sessions by the DataFrame's {column!r} column, whose value "
                  f"changes {cut.size} time(s) without a pause in trading (e.g. between rows {i - 1} and {i}, "
                  f"{(int(ts[i]) - int(ts[i - 1])) // 1_000_000_000} s apart): calendar dates, which split "
                  "overnight sessions at midnight? Pass session='globex' (trade dates, as from_bars(df)) or "
                  f"session={column!r} to keep this grouping", GuessedDefaultWarning, stacklevel=user_stacklevel())


def _shown(x: Any) -> Any:
    """A numpy scalar as messages print it: 20190102, not np.int64(20190102); a datetime as its text."""
    if isinstance(x, np.datetime64):
        return str(x)
    return x.item() if isinstance(x, np.generic) else x


def _group(n: int, *, offsets: Any, session_ids: Any, session: Any, synth: Optional[Tuple[Any, Any]],
           frame_cols: Optional[Dict[str, Any]], ts: Optional[np.ndarray], volume: np.ndarray,
           what: str) -> _Grouping:
    """The session layout of ``n`` rows (see the module contract). ``session``: the merged
    ``session=`` / ``sessions=`` value; ``synth``: (offsets, labels) of a SynthBars; ``frame_cols``:
    the grouping columns of a DataFrame (name -> values); ``ts``: bar opens (int64 ns) or None."""
    from .. import sessions as vs

    explicit = offsets is not None or session_ids is not None
    if session is not None and explicit:
        raise ValueError(f"{what}: give session= (or sessions=) or offsets= / session_ids=, not both")
    if explicit:
        dates = None if offsets is not None else session_dates(session_ids)  # times of day refused
        if dates is not None:  # dates: dated sessions
            if len(dates) != n:
                raise ValueError(f"session_ids has length {len(dates)} but the data has {n} rows")
            # one unit whatever form the dates came in (datetime64 of any unit, dates, ISO strings): the
            # tables' session index is then the same for the same dates
            g = _by_column("session_ids", dates.astype("datetime64[D]"), dated=True)
            g.facts["session_rule"] = "session_ids"
            return g
        offs, labels = _core.session_offsets(offsets, session_ids, n)
        return _Grouping(offs, labels, facts=dict(session_rule="offsets" if offsets is not None
                                                   else "session_ids"))
    cols = frame_cols or {}
    if isinstance(session, str) and session in cols:  # a column named by session=
        return _by_column(session, cols[session])
    if isinstance(session, str) and session not in SESSION_RULES:
        raise ValueError(
            f"{what}: session={session!r} is neither a session rule ({', '.join(map(repr, SESSION_RULES))}) "
            f"nor a grouping column of the DataFrame (accepted: {', '.join(map(repr, GROUP_COLUMNS))}; "
            f"this frame has {sorted(cols) if cols else 'none'}); or pass a vpoc.sessions.Sessions, "
            "offsets= or session_ids=")
    if session is None:
        present = [c for c in GROUP_COLUMNS if c in cols]
        if present:
            if len(present) > 1:
                warnings.warn(f"{what}: the DataFrame has several grouping columns {present}: rows "
                              f"are grouped by {present[0]!r} (pass session='<column>' to choose)",
                              GuessedDefaultWarning, stacklevel=user_stacklevel())
            g = _by_column(present[0], cols[present[0]])
            if present[0] in _DATE_COLUMNS and ts is not None:
                _warn_calendar_dates(present[0], g.offsets, ts, what)
            return g
        if synth is not None:
            offs, labels = _core.session_offsets(synth[0], None, n)
            lab = np.asarray(synth[1])
            return _Grouping(offs, lab, trade_days=_yyyymmdd_days(lab, "session_labels"),
                             facts=dict(session_rule="SynthBars sessions"))
        if ts is None:
            return _Grouping(np.array([0, n], dtype=np.int64), None,
                             facts=dict(session_rule="one session (no timestamps or grouping given)"))
        session, guessed = "globex", True
    else:
        guessed = False
    if isinstance(session, str):
        if ts is None:
            raise ValueError(f"{what}: session={session!r} builds sessions from timestamps: pass "
                             "timestamp= (or a DataFrame with a timestamp column)")
        _check_sorted(ts, None, None)
        rule = getattr(vs, session)
        s = rule(ts, volume=volume)  # ts are bar opens already; the rule reports rows it leaves out
        rule_name: str = session
    elif isinstance(session, vs.Sessions):
        s, rule_name = session, session.definition
    else:
        raise TypeError(f"{what}: session must be a rule name ({', '.join(map(repr, SESSION_RULES))}), a "
                        f"grouping column name or a vpoc.sessions.Sessions, got {type(session).__name__}")
    if s.n_input == n:
        index = s.index
    elif s.n_kept == n:
        index = None
    else:
        raise ValueError(f"{what}: the data has {n} rows but the sessions were built from {s.n_input} "
                         f"timestamps (and keep {s.n_kept} rows); build them from this data's timestamps")
    if ts is not None and not guessed and isinstance(session, vs.Sessions):
        _check_windows(ts if index is None else ts[index], s, index)
    dropped = int(s.n_dropped) if s.n_input == n else 0
    kept_vol = float(np.sum(volume if index is None else volume[index], dtype=np.float64))
    dropped_volume = float(np.sum(volume, dtype=np.float64)) - kept_vol if s.n_input == n else 0.0
    facts = dict(session_rule=rule_name, dropped_rows=dropped, dropped_volume=dropped_volume)
    labels = np.asarray(s.labels, dtype=np.int64)
    g = _Grouping(np.asarray(s.offsets, dtype=np.int64), labels,
                  trade_days=_yyyymmdd_days(labels, "session labels"), index=index, facts=facts,
                  open_ns=np.asarray(s.start_ns, dtype=np.int64))
    if guessed:
        span = f", {labels[0]} .. {labels[-1]}" if labels.size else ""
        warnings.warn(
            f"{what}: no session, offsets or session_ids given: built CME Globex sessions from the "
            f"timestamps (vpoc.sessions.globex: 17:00-16:00 America/Chicago by trade date; "
            f"{labels.size} sessions{span}, {dropped} of {n} rows outside them); pass session='globex' "
            "(or 'rth', 'daily', a vpoc.sessions.Sessions, offsets=) to choose",
            GuessedDefaultWarning, stacklevel=user_stacklevel())
    return g


def _check_windows(opens: np.ndarray, s: Any, index: Optional[np.ndarray]) -> None:
    """ValueError naming ``timestamp[i]`` when a kept bar's open lies outside its session's window
    ``[start_ns, end_ns)``: the timestamps are not the ones the sessions were built from, or they
    are bar closes read as opens (the sessions were built with label="close")."""
    counts = np.diff(np.asarray(s.offsets, dtype=np.int64))
    start = np.repeat(np.asarray(s.start_ns, dtype=np.int64), counts)
    end = np.repeat(np.asarray(s.end_ns, dtype=np.int64), counts)
    bad = (opens < start) | (opens >= end)
    if bad.any():
        k = int(np.argmax(bad))
        i = k if index is None else int(index[k])
        how = getattr(s, "label", "open")
        hint = (" The sessions were built from bar closes (label='close'): pass label='close' (and "
                "interval=) here too." if how == "close" else
                " Are these bar closes? Pass label='close' (and interval=).")
        raise ValueError(f"timestamp[{i}] = {np.datetime64(int(opens[k]), 'ns')} (a bar open) lies outside "
                         f"its session {s.labels[np.searchsorted(np.asarray(s.offsets), k, side='right') - 1]} "
                         f"[{np.datetime64(int(start[k]), 'ns')}, {np.datetime64(int(end[k]), 'ns')}) of "
                         f"session=.{hint}")


def _by_column(name: str, values: Any, dated: bool = False) -> _Grouping:
    offs, firsts = _runs(values, name)
    days = _date_days(np.asarray(firsts), name) if dated or name in _DATE_COLUMNS else None
    return _Grouping(offs, np.asarray(firsts), trade_days=days, facts=dict(session_rule=f"column {name!r}"))


def _check_sorted(ts: np.ndarray, offsets: Optional[np.ndarray], index: Optional[np.ndarray]) -> None:
    """ValueError naming ``timestamp`` and the input index when a timestamp is before the previous
    one (within a session when ``offsets`` are given; ``index``: kept rows' input positions)."""
    if ts.shape[0] < 2:
        return
    back = ts[1:] < ts[:-1]
    if offsets is not None:
        inner = offsets[1:-1]
        inner = inner[(inner > 0) & (inner < ts.shape[0])]
        back[inner - 1] = False  # a session may start before the previous one ended
    if back.any():
        k = int(np.argmax(back)) + 1
        i, j = (k, k - 1) if index is None else (int(index[k]), int(index[k - 1]))
        where = " within a session" if offsets is not None else ""
        raise ValueError(f"timestamp must be sorted (non-decreasing){where}: timestamp[{i}] = "
                         f"{np.datetime64(int(ts[k]), 'ns')} is before timestamp[{j}] = "
                         f"{np.datetime64(int(ts[k - 1]), 'ns')}")
