"""Time windows (``window="60min"``) of the developing series: the span, and each row's window start.

Contract: docs/contract.md "Rolling windows"; row i's window is its session's rows j <= i with t_j > t_i - span
(the call's rows with window_across_sessions=True).
"""

from __future__ import annotations

import bisect
import datetime as _dt
import warnings
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from ._time import interval_ns

__all__ = ["window_arg", "window_starts", "appended_starts"]

_INT64_MIN = np.iinfo(np.int64).min
_MAX_SPAN = 1 << 62  # ns (about 146 years): the longest time window; t - span is clipped to int64 where it would wrap
_HOW = ("a time window (a duration such as '60min', a datetime.timedelta or numpy.timedelta64) needs timestamps: pass a "
        "vpoc.io container or a DataFrame with a timestamp column (or window=N input rows for plain arrays)")


def _is_time(window: Any) -> bool:
    return isinstance(window, (str, _dt.timedelta, np.timedelta64)) or _has_nanos(window)


def _has_nanos(window: Any) -> bool:
    """A pandas offset: it has ``nanos`` (which raises ValueError for a non-fixed one such as BDay)."""
    try:
        return hasattr(window, "nanos")
    except ValueError:
        return True


def _string_ns(s: str) -> int:
    """A pandas offset / timedelta string ("60min", "1h", "90s", "1h30min") as nanoseconds, by the
    rules of ``DataFrame.rolling(s)`` (pandas' ``to_offset``, then ``Timedelta``); without pandas,
    ``vpoc._time.interval_ns``'s units. A string without a unit ("60") is refused (rows or seconds?)."""
    if not any(c.isalpha() for c in s):
        raise ValueError(f"window={s!r} has no unit: pass window={s.strip()} (an integer: input rows) or a duration "
                         f"such as '{s.strip()}s' or '{s.strip()}min'")
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is in every extra that reads timestamps
        return interval_ns(s, "window")
    try:
        with warnings.catch_warnings():  # pandas 2.2 warns on aliases it renames ('H', 'M'): read them as it does
            warnings.simplefilter("ignore", FutureWarning)
            return int(pd.tseries.frequencies.to_offset(s).nanos)
    except (ValueError, TypeError, AttributeError):
        pass
    try:
        td = pd.Timedelta(s)
    except (ValueError, TypeError):
        td = None
    if td is None or td is pd.NaT:
        raise ValueError(f"window={s!r} is neither an integer (input rows) nor a fixed duration such as '60min', "
                         "'1h', '90s' (pandas offset strings of fixed length)") from None
    return int(td.to_timedelta64().astype("timedelta64[ns]").astype(np.int64))


def window_arg(window: Any) -> Tuple[Any, Optional[int]]:
    """``window=`` as (what ``_core.Options(window=)`` takes, the time span in ns or None): an int
    (input rows) or None passes through (the engine checks it); a string, ``datetime.timedelta``
    (``pandas.Timedelta``), ``numpy.timedelta64`` or a fixed pandas offset is a time span > 0."""
    if type(window).__name__ == "NaTType":  # pandas.NaT: neither rows nor a duration
        raise ValueError("window must be a positive duration (a time window) or an integer >= 1 (input rows), "
                         "got NaT")
    if not _is_time(window):
        return window, None
    if isinstance(window, str):
        ns = _string_ns(window)
    elif not isinstance(window, (_dt.timedelta, np.timedelta64)) and _has_nanos(window):  # a pandas offset
        try:
            ns = int(window.nanos)
        except ValueError:
            raise ValueError(f"window={window!r} is not a fixed duration (pandas offsets such as months vary in "
                             "length); use e.g. '60min'") from None
    elif hasattr(window, "to_timedelta64"):  # pandas.Timedelta: keep its nanoseconds
        if window != window:  # NaT
            raise ValueError("window must be a positive duration, got NaT")
        ns = int(window.to_timedelta64().astype("timedelta64[ns]").astype(np.int64))
    else:
        ns = interval_ns(window, "window")
    if ns <= 0:
        raise ValueError(f"window must be a positive duration (a time window) or an integer >= 1 (input rows), "
                         f"got {window!r}")
    if ns > _MAX_SPAN:  # t - span must stay an int64 for every timestamp the engine takes
        raise ValueError(f"window={window!r} is longer than 2**62 ns (about 146 years): for every row's whole "
                         f"session so far, pass developing=True without window")
    return None, ns


def _session_offsets(offsets: Any, session_ids: Any, n: int) -> Optional[np.ndarray]:
    """The call's sessions as offsets; None when they are not valid offsets (the engine then
    refuses them, naming offsets= or session_ids=, before it reads any window start)."""
    if session_ids is not None:
        from . import _core

        ids = np.ascontiguousarray(session_ids, dtype=np.int64)
        if ids.shape != (n,):
            return None
        try:
            return np.asarray(_core.offsets_from_ids(ids, "session_ids")[0], dtype=np.int64)
        except ValueError:
            return None
    if offsets is None:
        return np.array([0, n], dtype=np.int64)
    o = np.asarray(offsets)
    if o.ndim != 1 or o.size < 1 or o.dtype.kind not in "iu":
        return None
    o = o.astype(np.int64)
    if o[0] != 0 or o[-1] != n or np.any(np.diff(o) < 0):
        return None
    return o


def window_starts(span_ns: int, ts: Any, rows: Optional[np.ndarray], offsets: Any, session_ids: Any,
                  n: int, across: bool = False) -> np.ndarray:
    """Each row's window start (int64 [n], absolute rows): the first row j of its session with
    t_j > t_i - span, so the window is (t_i - span, t_i] as pandas' ``rolling(span)``: a row
    exactly ``span`` older has left. ``ts``: the call's timestamps (int64 ns, or datetime64 of any
    unit: the span is rounded up to whole units, which keeps the rule exact for integer times),
    ``rows``: the input row of each kept row (``_plan``'s), or None. Timestamps must be
    non-decreasing within each session (ValueError naming window). ``across``
    (window_across_sessions=True): the first row j of the call, timestamps in order over the call."""
    if ts is None:
        raise ValueError(_HOW)
    t = np.asarray(ts)
    if rows is not None:
        t = t[rows]
    span = int(span_ns)
    if t.dtype.kind == "M":
        nat = np.flatnonzero(np.isnat(t))
        if nat.size:
            where = "" if rows is None else f" (input row {int(rows[int(nat[0])])})"
            raise ValueError(f"window: timestamp of row {int(nat[0])}{where} is missing (NaT)")
        unit, count = np.datetime_data(t.dtype)
        step = int(np.timedelta64(count, unit).astype("timedelta64[ns]").astype(np.int64)) if unit != "generic" else 1
        span = -(-span // step)  # t_j > t_i - s for integers t exactly when t_i - t_j < ceil(s)
        t = t.view(np.int64)
    else:
        t = t.astype(np.int64, copy=False)
    if t.shape != (n,):
        raise ValueError(f"window: {t.shape[0] if t.ndim == 1 else t.shape} timestamps for {n} rows")
    o = _session_offsets(offsets, session_ids, n)
    if o is None:  # the engine refuses the offsets first
        return np.arange(n, dtype=np.int64)
    back = t - span if n == 0 or int(t.min()) >= _INT64_MIN + span else np.maximum(t, _INT64_MIN + span) - span
    down = np.flatnonzero(np.diff(t) < 0) + 1  # rows earlier than the row before them
    if down.size and across:  # "earlier session" must mean "earlier time"
        i = int(down[0])
        if np.isin(i, o):
            where = "" if rows is None else f" (input row {int(rows[i])})"
            raise ValueError(f"window_across_sessions=True with a time window needs timestamps in order across "
                             f"sessions: row {i}{where} (first row of session {int(np.searchsorted(o, i, 'right')) - 1}"
                             f") is earlier than row {i - 1} ({int(t[i])} < {int(t[i - 1])})")
    if down.size:
        down = down[~np.isin(down, o)]  # a session's first row may be earlier than the last one's
    if down.size:
        i = int(down[0])
        where = "" if rows is None else f" (input row {int(rows[i])})"
        raise ValueError(f"window: a time window needs timestamps in order within each session; row {i}{where} "
                         f"is earlier than row {i - 1} ({int(t[i])} < {int(t[i - 1])})")
    if across:  # one search over the call: a window may reach into earlier sessions
        return np.searchsorted(t, back, side="right").astype(np.int64)
    if np.all(np.diff(t) >= 0):  # time-ordered sessions: one search, clipped to each row's session
        first = np.repeat(o[:-1], np.diff(o))
        return np.maximum(np.searchsorted(t, back, side="right"), first).astype(np.int64)
    out = np.empty(n, dtype=np.int64)
    for a, b in zip(o[:-1].tolist(), o[1:].tolist()):
        out[a:b] = a + np.searchsorted(t[a:b], back[a:b], side="right")
    return out


def appended_starts(span_ns: int, session_ts: Sequence[int], new_ts: np.ndarray,
                    carry_ts: Sequence[int] = ()) -> np.ndarray:
    """vpoc.Live: the window starts (rows of the session, 0 = its first) of rows with timestamps
    ``new_ts`` (int64 ns, sorted) appended to a session whose rows so far have ``session_ts``
    (sorted): the same rule as window_starts, reading only the rows within ``span`` of ``new_ts[0]``.
    ``carry_ts``: the rows carried from earlier sessions before the session (window_across_sessions,
    sorted, no later than session_ts[0]), rows -len(carry_ts) .. -1."""
    new_ts = np.asarray(new_ts, dtype=np.int64)
    if new_ts.size == 0:
        return np.zeros(0, dtype=np.int64)
    k0 = bisect.bisect_right(session_ts, int(new_ts[0]) - span_ns)
    c0 = len(carry_ts) if k0 or not carry_ts else bisect.bisect_right(carry_ts, int(new_ts[0]) - span_ns)
    t = np.concatenate([np.asarray(carry_ts[c0:], dtype=np.int64), np.asarray(session_ts[k0:], dtype=np.int64), new_ts])
    back = np.maximum(new_ts, _INT64_MIN + span_ns) - span_ns  # clipped as window_starts does: no wrap
    return k0 - (len(carry_ts) - c0) + np.searchsorted(t, back, side="right").astype(np.int64)
