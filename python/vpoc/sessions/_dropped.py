"""Rows left out of every session: why (halt, weekend, holiday, early close, outside RTH), how many.

Contract: every left-out row is counted under one cause with its volume; above DROP_WARN_SHARE (or
when the rows look like close stamps) a DroppedRowsWarning names count, shares and likely cause.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, NamedTuple, Optional, Tuple

import numpy as np
import numpy.typing as npt

from .._errors import input_error
from .._time import infer_interval_ns
from .._warnings import DroppedRowsWarning, user_stacklevel
from ._clock import _date_span, _iso
from ._rules import _Definition

__all__ = ["CAUSES", "DROP_WARN_SHARE", "ON_OUTSIDE", "account", "ambiguous", "cause_counts", "cause_hint",
           "check_on_outside", "describe_cause"]

#: Rows (or volume) left out, as a share of the input, above which a DroppedRowsWarning is emitted
#: (rows left out by the definition itself, the overnight rows of ``rth``, never warn).
DROP_WARN_SHARE = 0.001
#: ``on_outside=`` values.
ON_OUTSIDE = ("warn", "drop", "raise")
#: Cause keys of ``Sessions.dropped_by_cause``.
CAUSES = ("halt", "weekend", "holiday-closed", "early-close", "holiday", "outside RTH", "outside window")

Int64Array = npt.NDArray[np.int64]


def check_on_outside(on_outside: Any, outside: Any) -> str:
    """``on_outside=`` validated, with the older ``outside="drop"|"raise"`` mapped onto it."""
    if outside is not None:
        if outside not in ("drop", "raise"):
            raise ValueError(f"outside must be 'drop' or 'raise' (the older spelling of on_outside=), "
                             f"got {outside!r}")
        if on_outside is not None and on_outside != outside:
            raise ValueError(f"outside={outside!r} and on_outside={on_outside!r} disagree; "
                             "pass on_outside= only")
        return outside
    if on_outside is None:
        return "warn"
    if on_outside not in ON_OUTSIDE:
        raise ValueError(f"on_outside must be 'warn' (default), 'drop' (counted on the result, no "
                         f"warning) or 'raise', got {on_outside!r}")
    return on_outside


def _days_of(yyyymmdd: Int64Array) -> Int64Array:
    """YYYYMMDD integers -> days since 1970-01-01."""
    y, m, d = yyyymmdd // 10000, yyyymmdd // 100 % 100, yyyymmdd % 100
    months = ((y - 1970) * 12 + m - 1).astype("datetime64[M]").astype("datetime64[D]")
    return months.astype(np.int64) + d - 1


def _causes(t: Int64Array, defn: _Definition, closed: str) -> Tuple[npt.NDArray[np.int8], ...]:
    """Cause of each left-out timestamp ``t`` (sorted), as positions in CAUSES."""
    gap_key = ("halt" if not defn.gap_by_definition else
               "outside RTH" if defn.gap.startswith("outside RTH") else "outside window")
    code = {k: np.int8(i) for i, k in enumerate(CAUSES)}
    out = np.full(t.shape[0], code[gap_key], dtype=np.int8)
    clock = defn.clock if defn.clock is not None else defn
    d0, d1 = _date_span(t, defn.zone)
    opens, closes, labels = clock.windows(d0, d1)
    days = _days_of(labels)
    i = np.searchsorted(opens, t, side="right" if closed == "left" else "left") - 1
    ok = i >= 0
    ic = np.maximum(i, 0)
    inside = ok & ((t < closes[ic]) if closed == "left" else (t <= closes[ic]))
    weekend = ((days[ic] + 3) % 7 >= 5) & ok & bool(defn.weekdays)
    out[inside & weekend] = code["weekend"]
    if not defn.gap_by_definition:  # the gap after a weekend date's window is part of the weekend
        out[~inside & weekend] = code["weekend"]
    rest = inside & ~weekend
    if rest.any():
        if defn.open_days is not None:
            has_hours = np.isin(days[ic], defn.open_days(d0, d1))
            has_window = (has_hours if defn.session_days is None
                          else np.isin(days[ic], defn.session_days(d0, d1)))
            out[rest & has_window] = code["early-close"]
            out[rest & has_hours & ~has_window] = code["holiday"]
            out[rest & ~has_hours] = code["holiday-closed"]
        else:
            out[rest] = code["outside window"]
    return (out,)


def cause_counts(t: Any, defn: _Definition, closed: str) -> Dict[str, int]:
    """Rows by cause (keys of CAUSES, those with rows) of the sorted left-out timestamps ``t`` (int64
    ns UTC) of sessions ``defn``: the batch's rule, which vpoc.Live reports its dropped rows by."""
    (keys,) = _causes(np.asarray(t, dtype=np.int64), defn, closed)
    counts = np.bincount(keys, minlength=len(CAUSES))
    return {k: int(c) for k, c in zip(CAUSES, counts) if c}


def cause_hint(key: str, few_halt: bool) -> str:
    """The likely reason of rows left out for cause ``key`` (no bar-label pattern); ``few_halt``:
    the halt holds about one row per session or fewer (stray prints, rather than a wrong zone)."""
    if key == "halt" and few_halt:
        return _STRAY_HALT
    return _HINTS.get(key, "check the time zone and the session definition")


def describe_cause(key: str, defn: _Definition) -> str:
    """What cause ``key`` is under ``defn``: "holidays (dates the calendar has no session)", ..."""
    return _describe(key, defn)


def _describe(key: str, defn: _Definition) -> str:
    return {"halt": f"the {defn.gap}",
            "weekend": "weekends (between Friday's close and Sunday's open)",
            "holiday-closed": "holidays (dates the calendar has no session)",
            "early-close": "hours after an early close or holiday halt",
            "holiday": "holidays the definition has no session on (no RTH on a day that is no trade date)",
            }.get(key, defn.gap)


#: Likely causes. Only UTC nanoseconds reach this module, never the zone the file was read in, so
#: the hints name what is likely wrong, not what the zone was (label='close' is suggested apart,
#: only when the rows look like close stamps).
_INSPECT = "vpoc.io.inspect(path) / `vpoc inspect FILE` finds the zone (and a bars file's label)"
#: the halt hint when it holds about one row per session or fewer: a wrong zone puts hours there
_STRAY_HALT = f"stray prints, or the time zone the timestamps were read in is wrong? ({_INSPECT})"
_HINTS = {
    "halt": f"the time zone the timestamps were read in is likely wrong ({_INSPECT})",
    "weekend": f"stray prints, or the time zone the timestamps were read in is wrong? ({_INSPECT})",
    "holiday-closed": "the time zone the timestamps were read in is wrong, or a calendar that "
                      "differs from the data?",
    "early-close": "a calendar that differs from the data, or the time zone the timestamps were "
                   "read in is wrong?",
}


def account(stamps: Int64Array, t: Int64Array, dropped: Int64Array, defn: _Definition, closed: str,
            volume: Optional[npt.NDArray[np.float64]], on_outside: str, what: str,
            win_closes: Int64Array, n_windows_used: int, win_opens: Optional[Int64Array] = None,
            step: Optional[int] = None, whole_days: bool = True
            ) -> Tuple[Dict[str, int], Dict[str, float], float]:
    """Counts the left-out rows ``dropped`` (input positions, sorted) by cause; raises or warns as
    ``on_outside`` says. ``stamps``: the input timestamps (for messages), ``t`` those assigned;
    ``win_closes`` / ``win_opens``: the bounds of the windows that hold rows, ``step``: the bar
    interval (ns; None: the modal spacing), which tell close stamps read as opens and open stamps
    read as closes (label='close' on bar opens) apart from other rows left out; ``whole_days``: whether
    whole days of "holiday" rows (FULL_DAY_SHARE) warn / raise (False: rth's window lies outside ES hours,
    which check_hours warns about; a holiday's overnight session can fill such a window).
    Returns (rows by cause, volume by cause, dropped volume; NaN without ``volume``)."""
    n = t.shape[0]
    td = t[dropped]
    (keys,) = _causes(td, defn, closed)
    by_rows: Dict[str, int] = {}
    by_vol: Dict[str, float] = {}
    vol_d = None if volume is None else volume[dropped]
    for ci, k in enumerate(CAUSES):
        sel = keys == ci
        c = int(sel.sum())
        if c:
            by_rows[k] = c
            by_vol[k] = float("nan") if vol_d is None else float(vol_d[sel].sum())
    dropped_volume = float("nan") if vol_d is None else float(vol_d.sum())
    excused = {"outside RTH", "outside window", "holiday"} if defn.gap_by_definition else set()
    warned = [k for k in by_rows if k not in excused]
    if on_outside == "drop":
        return by_rows, by_vol, dropped_volume
    if by_rows.get("outside RTH", 0):
        _warn_shifted(td[keys == CAUSES.index("outside RTH")], t, win_opens, win_closes, step, n, what)
    # "holiday" rows are excused, except a whole day of them on one date (the calendar differs from the data)
    full, full_dates = (_full_days(td, keys, defn, closed, t, step) if whole_days and by_rows.get("holiday", 0)
                        else (np.zeros(td.shape[0], dtype=bool), np.zeros(0, dtype=np.int64)))
    unexcused = ~np.isin(keys, [CAUSES.index(k) for k in excused])  # the rows warned of (or raised on)
    if on_outside == "raise" and (warned or full_dates.size):
        bad = np.flatnonzero(unexcused | full)
        j = int(bad[0])
        i = int(dropped[j])
        why = (f"a whole day of rows on {_date_txt(full_dates[:1])}, a date {_no_session(defn)}: "
               f"{_FULL_DAY_HINT}" if full[j] else _describe(CAUSES[int(keys[j])], defn))
        # the warning's bar-label advice, which a raise would otherwise lose
        lab = (_labels(td, keys, np.flatnonzero(unexcused), t, closed, win_opens, win_closes, n_windows_used, step)
               if warned else None)
        label = ("; the timestamps look like bar closes (about one row per session on its close): pass "
                 "label='close'" if lab is not None and lab.close_pattern else
                 "; the timestamps look like bar opens moved back as bar closes (about one row per session one "
                 "interval before its open): pass label='open'" if lab is not None and lab.open_pattern else "")
        raise input_error(f"ts[{i}] = {_iso(stamps[i])} is outside every session of {defn.definition} "
                          f"({why}){label}; {bad.size} of {n} rows are; pass "
                          "on_outside='warn' or 'drop' to leave such rows out", "ts", i)
    if full_dates.size:
        _warn_full_days(full, full_dates, vol_d, volume, n, defn, what)
    if not warned:
        return by_rows, by_vol, dropped_volume
    bad = np.flatnonzero(unexcused)
    total_vol = None if volume is None else float(volume.sum())
    k_rows = sum(by_rows[k] for k in warned)
    k_vol = None if vol_d is None else sum(by_vol[k] for k in warned)
    row_share = k_rows / n
    vol_share = (k_vol / total_vol) if (k_vol is not None and total_vol) else None
    lab = _labels(td, keys, bad, t, closed, win_opens, win_closes, n_windows_used, step)
    close_pattern, open_pattern, stray_at_close, stray_at_open = (lab.close_pattern, lab.open_pattern,
                                                                  lab.stray_at_close, lab.stray_at_open)
    at_close, at_open, pushed, pushed_open, bar = lab.at_close, lab.at_open, lab.pushed, lab.pushed_open, lab.bar
    if row_share <= DROP_WARN_SHARE and (vol_share is None or vol_share <= DROP_WARN_SHARE) \
            and not close_pattern and not open_pattern:
        return by_rows, by_vol, dropped_volume
    vol_txt = ("volume not given (pass volume= to count it)" if vol_share is None
               else f"{_pct(vol_share)} of the volume")
    few = by_rows.get("halt", 0) <= 2 * max(1, n_windows_used)  # a wrong zone puts whole hours there
    parts = []
    for k in sorted(warned, key=lambda k: -by_rows[k]):
        hint = ("a wrong bar label (below)" if (close_pattern and k != "weekend") or open_pattern
                else "stray prints at the sessions' ends, not a bar label (below)"
                if (stray_at_close and k != "weekend") or stray_at_open
                else cause_hint(k, few))
        parts.append(f"{_pct(by_rows[k] / n)} of rows ({by_rows[k]:,}) fall in {_describe(k, defn)}: "
                     f"{hint}")
    if close_pattern:
        parts.append(f"{at_close:,} of them sit exactly on a session's close, about one per "
                     "session: the timestamps look like bar closes: pass label='close'")
    if open_pattern:
        parts.append(f"{at_open:,} of them sit exactly one bar interval ({bar / 1e9:g} s) before a session's "
                     "open, about one per session: the timestamps look like bar opens moved back as bar "
                     "closes: pass label='open' (the default) where label='close' was given")
    if stray_at_close:
        parts.append(f"{at_close:,} of them sit exactly on a session's close, but {pushed:,} rows sit exactly "
                     "on a session's open, which label='close' would leave out instead: prints at the close "
                     "(settlement?) on bar opens; the bar label is right")
    if stray_at_open:
        parts.append(f"{at_open:,} of them sit exactly one bar interval ({bar / 1e9:g} s) before a session's "
                     f"open, but {pushed_open:,} rows sit one bar interval before a session's close, which "
                     "label='open' would leave out instead: the bar label cannot be told from these rows "
                     "(prints at the close, settlement?); vpoc.io.inspect(path) / `vpoc inspect FILE` weighs "
                     "all of them")
    warnings.warn(
        f"vpoc.sessions.{what}: {k_rows:,} of {n:,} rows ({_pct(row_share)}; {vol_txt}) are outside "
        f"every session and left out. " + "; ".join(parts) + ". Counts: Sessions.dropped_rows, "
        ".dropped_by_cause; on_outside='drop' silences this, on_outside='raise' makes it an error "
        f"(vpoc.sessions.{what}(ts, on_outside=...); from_* and the feature tables take the result as session=)",
        DroppedRowsWarning, stacklevel=user_stacklevel())
    return by_rows, by_vol, dropped_volume


#: A date on which an RTH definition leaves out rows as "holiday" (the calendar has hours there but no
#: RTH session, e.g. not a trade date) holds a whole day of rows, not a holiday's abbreviated Globex
#: morning, when those rows span at least this share of the date's RTH window (the first row to the last
#: row's end: one bar interval, ``interval=`` or the modal spacing, added). One rule, by the clock: a
#: holiday halt at 12:00 CT leaves at most 08:30-12:00 of ES RTH 08:30-15:15 (52%; 09:30-13:00 of
#: 09:30-16:00 ET: 54%), which stays quiet; an RTH feed 08:30-15:00 CT on that date (96%) warns.
FULL_DAY_SHARE = 0.75
_FULL_DAY_HINT = ("a calendar that differs from the data (or wrong dates)? pass calendar=None to keep them "
                  "(every Monday-Friday), or calendar= / trade_dates= calendars that have these dates")


def _bar_ns(step: Optional[int], t: Int64Array) -> int:
    """The bar interval in ns: ``step`` (interval=), else the modal spacing of the rows ``t``; 0 when it
    cannot be told (trades, too few rows)."""
    if step:
        return int(step)
    try:
        return infer_interval_ns(t)
    except ValueError:
        return 0


def _full_days(td: Int64Array, keys: npt.NDArray[np.int8], defn: _Definition, closed: str, t: Int64Array,
               step: Optional[int]) -> Tuple[npt.NDArray[np.bool_], Int64Array]:
    """(which left-out rows ``td`` (sorted, cause ``keys``) are "holiday" rows of a date whose such rows
    span at least FULL_DAY_SHARE of its window, those dates as YYYYMMDD): whole days on dates the
    calendar has no session. Only for definitions whose gaps are out by definition (RTH)."""
    full = np.zeros(td.shape[0], dtype=bool)
    hol = np.flatnonzero(keys == CAUSES.index("holiday"))
    if not defn.gap_by_definition or hol.size == 0:
        return full, np.zeros(0, dtype=np.int64)
    th = td[hol]
    clock = defn.clock if defn.clock is not None else defn
    opens, closes, labels = clock.windows(*_date_span(th, defn.zone))
    # each "holiday" row lies inside its date's clock window (_causes): the window names the date
    w = np.searchsorted(opens, th, side="right" if closed == "left" else "left") - 1
    starts = np.flatnonzero(np.r_[True, w[1:] != w[:-1]])
    ends = np.r_[starts[1:], th.size]
    day = w[starts]
    bar = _bar_ns(step, t)  # 0: the span is the rows' own
    span = np.minimum(th[ends - 1] + bar, closes[day]) - th[starts]
    whole = span >= FULL_DAY_SHARE * (closes[day] - opens[day])
    full[hol] = np.repeat(whole, ends - starts)
    return full, labels[day[whole]].astype(np.int64)


def _no_session(defn: _Definition) -> str:
    return ("the calendar has no RTH session on" if defn.gap.startswith("outside RTH")
            else "the calendar has no session on")


def _date_txt(dates: Int64Array, few: int = 5) -> str:
    txt = ", ".join(f"{d // 10000:04d}-{d // 100 % 100:02d}-{d % 100:02d}" for d in dates[:few])
    return txt + (f" and {dates.size - few} more" if dates.size > few else "")


def _warn_full_days(full: npt.NDArray[np.bool_], dates: Int64Array, vol_d: Optional[npt.NDArray[np.float64]],
                    volume: Optional[npt.NDArray[np.float64]], n: int, defn: _Definition, what: str) -> None:
    """A DroppedRowsWarning for whole days of rows left out as "holiday" (``full``: which left-out rows,
    ``dates``: their dates), whatever their share: a quant cannot see a missing day otherwise."""
    c = int(full.sum())
    total_vol = None if volume is None else float(volume.sum())
    vol_txt = ("" if vol_d is None or not total_vol
               else f"; {_pct(float(vol_d[full].sum()) / total_vol)} of the volume")
    many = dates.size > 1
    warnings.warn(
        f"vpoc.sessions.{what}: {c:,} of {n:,} rows ({_pct(c / n)}{vol_txt}) are "
        f"{'whole days' if many else 'a whole day'} of rows on {dates.size} date{'s' if many else ''} ({_date_txt(dates)}) and are left out as holidays: "
        f"{_no_session(defn)} {'these dates' if many else 'this date'}: "
        f"{_FULL_DAY_HINT}, or on_outside='drop' to leave them out quietly. Counts: "
        "Sessions.dropped_by_cause['holiday']", DroppedRowsWarning,
        stacklevel=user_stacklevel())


# How far from an RTH window the rows it leaves out may lie and still read as a shifted RTH-only feed.
_SHIFT_REACH_NS = 3 * 3600 * 1_000_000_000


def _warn_shifted(out: Int64Array, t: Int64Array, win_opens: Optional[Int64Array], win_closes: Int64Array,
                  step: Optional[int], n: int, what: str) -> None:
    """A DroppedRowsWarning when the rows RTH leaves out (``out``, times) look like an RTH-only feed read
    in the wrong time zone: every one of them within 3 hours after a window's end (or before its start),
    and the days that have them start (end) that much later (earlier) inside the window, on at least two
    days and most of them. Rows outside RTH are otherwise no news (a Globex feed has them every night)."""
    if win_opens is None or win_opens.size < 2 or out.size == 0:
        return
    bar = _bar_ns(step, t)  # 0: the extents are the rows' own times
    first = t[np.minimum(np.searchsorted(t, win_opens, side="left"), t.size - 1)]
    last = t[np.maximum(np.searchsorted(t, win_closes, side="left") - 1, 0)]
    prev = np.searchsorted(win_closes, out, side="right") - 1  # the window each row follows
    nxt = np.searchsorted(win_opens, out, side="right")  # the window each row precedes
    after = np.where(prev >= 0, out - win_closes[np.maximum(prev, 0)], _SHIFT_REACH_NS)
    before = np.where(nxt < win_opens.size, win_opens[np.minimum(nxt, win_opens.size - 1)] - out, _SHIFT_REACH_NS)
    for late in (True, False):
        gap = after if late else before
        if not np.all((gap >= 0) & (gap < _SHIFT_REACH_NS)):
            continue
        win = prev if late else nxt
        days = np.unique(win)
        extent = np.zeros(win_opens.size, dtype=np.int64)
        np.maximum.at(extent, win, gap + (bar if late else 0))
        inside = (first - win_opens) if late else (win_closes - (last + bar))  # the same shift at the other end
        e, g = extent[days], inside[days]
        match = np.abs(g - e) <= np.maximum(15 * 60 * 1_000_000_000, e // 4)
        if days.size < 2 or match.sum() < max(2, 0.8 * days.size):
            continue
        minutes = float(np.median(e[match])) / 6e10
        warnings.warn(
            f"vpoc.sessions.{what}: {out.size:,} of {n:,} rows lie just {'after RTH ends' if late else 'before RTH opens'} "
            f"(up to {minutes:.0f} min) on {int(match.sum())} of {days.size} days, each of which "
            f"{'starts' if late else 'ends'} about as much {'after RTH opens' if late else 'before RTH ends'}, "
            "and no row lies elsewhere outside RTH: an RTH-only feed whose timestamps are shifted, read in the "
            f"wrong time zone? ({_INSPECT}). These rows are left out (Sessions.dropped_rows); on_outside='drop' "
            "silences this", DroppedRowsWarning, stacklevel=user_stacklevel())
        return


def _one_per_session(hits: int, others: int, n_windows_used: int) -> bool:
    """About one left-out row per session at the same bound (a session's close, or one bar before
    its open) and no other row in the halt: the pattern of a wrong bar label."""
    return (hits >= max(2, n_windows_used // 2) and hits <= n_windows_used + max(2, n_windows_used // 10)
            and others == 0)


def ambiguous(put_back: int, pushed: int) -> bool:
    """Whether switching the bar label, which would put ``put_back`` left-out rows back into their
    sessions and push ``pushed`` kept rows out of theirs, is no clear fix: at least half as many
    pushed out (prints at the close on bar opens look like that). The label hint is then not given."""
    return 2 * pushed >= put_back


def _on_edges(t: Int64Array, edges: Optional[Int64Array], shift: int) -> int:
    """How many of the sorted timestamps ``t`` sit exactly on one of the sorted window bounds
    ``edges`` moved by ``shift`` ns: the rows the other bar label would push out of their session."""
    if edges is None or not edges.size or not t.size:
        return 0
    e = edges + shift
    pos = np.minimum(np.searchsorted(t, e), t.size - 1)
    return int(np.sum(t[pos] == e))


def _before_open(tb: Int64Array, keys: npt.NDArray[np.int8], t: Int64Array, win_opens: Optional[Int64Array],
                 step: Optional[int], closed: str) -> Tuple[int, int, int]:
    """(how many of the left-out rows ``tb`` (cause ``keys``) sit exactly one bar interval before a
    window's open (a halt's or a weekend's last bar), how many other rows are in the halt, the
    interval in ns): ``step`` or the modal spacing of all rows ``t``."""
    if closed != "left" or win_opens is None or not win_opens.size or tb.size < 2:  # the pattern needs 2
        return 0, 0, 0
    bar = step
    if bar is None:
        try:
            bar = infer_interval_ns(t)
        except ValueError:  # trades, or too few rows: no bar length
            return 0, 0, 0
    moved = tb + bar
    pos = np.clip(np.searchsorted(win_opens, moved), 0, win_opens.size - 1)
    hit = win_opens[pos] == moved
    return int(np.sum(hit)), int(np.sum(~hit & (keys == CAUSES.index("halt")))), int(bar)


def _pct(x: float) -> str:
    return f"{x:.1%}" if x >= 0.01 or x == 0 else f"{x:.2%}" if x >= 0.0001 else "<0.01%"


class _Labels(NamedTuple):
    """What the left-out rows say of the bar label (account): close / open stamps read as the other."""
    close_pattern: bool
    open_pattern: bool
    stray_at_close: bool
    stray_at_open: bool
    at_close: int
    at_open: int
    pushed: int
    pushed_open: int
    bar: int


def _labels(td: Int64Array, keys: Any, bad: Int64Array, t: Int64Array, closed: str, win_opens: Any,
            win_closes: Int64Array, n_windows_used: int, step: Optional[int]) -> _Labels:
    """The left-out rows ``td[bad]`` (causes ``keys[bad]``) against the windows' opens and closes (account)."""
    # close stamps read as opens: the last bar of each session sits on the session's close
    # (about one row per session, on its close, and no other row inside the halt: label='close'
    # would put them all back; rows deep inside the halt point at a wrong zone instead)
    at_close = deep = 0
    if closed == "left" and win_closes.size:
        tb = td[bad]
        pos = np.clip(np.searchsorted(win_closes, tb), 0, win_closes.size - 1)
        on_close = win_closes[pos] == tb
        at_close = int(np.sum(on_close))
        deep = int(np.sum(~on_close & (keys[bad] == CAUSES.index("halt"))))
    close_pattern = _one_per_session(at_close, deep, n_windows_used)
    # ... unless label='close' would push out about as many rows as it puts back: rows exactly on a
    # session's open (a close stamp there would be a bar of the halt) move into the halt with it.
    # Open stamps with one print on each close (a settlement print) look like that: no advice.
    pushed = _on_edges(t, win_opens, 0) if close_pattern else 0
    stray_at_close = close_pattern and ambiguous(at_close, pushed)
    close_pattern = close_pattern and not stray_at_close
    # the mirror: bar opens read as closes (label='close' on open stamps): each session's first bar
    # moves one interval before the session's open, into the halt (label='open' puts them back)
    at_open, deep_open, bar = (0, 0, 0) if close_pattern else _before_open(td[bad], keys[bad], t, win_opens,
                                                                          step, closed)
    open_pattern = at_open > 0 and _one_per_session(at_open, deep_open, n_windows_used)
    # ... unless label='open' would push out about as many: rows one interval before a session's close
    # (label='open' moves them onto the close, out of it)
    pushed_open = _on_edges(t, win_closes, -bar) if open_pattern else 0
    stray_at_open = open_pattern and ambiguous(at_open, pushed_open)
    open_pattern = open_pattern and not stray_at_open
    return _Labels(close_pattern, open_pattern, stray_at_close, stray_at_open, at_close, at_open, pushed,
                   pushed_open, bar)
