"""``vpoc.tpo``: TPO (time-price opportunity) profiles of bars, with the Market Profile levels of each session.

Contract (docs/features.md, TPO profiles): counts, POC and value area on the volume profile's ladder by the engine's
rules; every rule is a documented parameter; bad input raises naming the argument; gaps and short sessions are reported.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import warnings
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np

from .._arrays import check_grid
from .._presets import resolve_session
from .._time import interval_ns
from .._validate import boolean
from .._warnings import user_stacklevel
from ._market_context import VA_MIGRATIONS, _days_since_prior, _overnight, _prior, _va_migration
from ._engine import _Context, _profiles
from ._inputs import _data, _Data
from ._intraday import _clock, _Clock, _ib_late_ns, _ib_mask, _utc_offset_ns
from ._params import _NS_PER_MINUTE, _check_rth_hours, _engine_rules, _Rules, _rules
from ._preset_rules import _preset_rules
from ._segments import _previous_nonempty, _ratio, _segment_reduce
from ._tpo_counts import _context_pass, _tpo_pass, _TpoPass
from ._tpo_result import TpoProfiles
from ._tpo_types import _day_types, _open_types, _type_rules

__all__ = ["INCOMPLETE", "IncompleteSessionWarning", "TPO_TABLE_COLUMNS", "_session_tpo", "_table_columns", "tpo"]

#: What ``tpo(..., incomplete=)`` does with sessions whose periods have gaps or whose initial
#: balance is incomplete.
INCOMPLETE: Tuple[str, ...] = ("warn", "raise", "ignore")


class IncompleteSessionWarning(UserWarning):
    """Sessions have TPO periods without bars inside them, miss the start of their initial balance
    window, or end before their initial balance does (``vpoc.tpo``; ``session_features`` with TPO or
    context columns): their letters skip the empty periods, their IB is incomplete (extension NaN)."""


def _period_minutes(period: Any) -> int:
    """``period=`` ("30min", "1h", a timedelta, seconds) as whole minutes in [1, 1440]."""
    if isinstance(period, (bool, np.bool_)):
        raise TypeError("period must be a duration such as '30min' (a string, a timedelta or seconds), got bool")
    ns = interval_ns(period, "period")
    if ns is None:
        raise TypeError("period must be a duration such as '30min', got None")
    if ns % _NS_PER_MINUTE:
        raise ValueError(f"period={period!r} is not a whole number of minutes (TPO periods are clock "
                         "minutes aligned to rth_start)")
    minutes = ns // _NS_PER_MINUTE
    if minutes > 1440:
        raise ValueError(f"period={period!r} is longer than a day (1440 minutes)")
    return int(minutes)


def _arrays(high: Any, low: Any, close: Any, volume: Any, distribute: str) -> Tuple[Any, Any, Any, bool]:
    """close and volume are optional with arrays (TPO reads only high, low and the times):
    (close, volume, has_volume); close defaults to low, volume to zeros (they only pass the
    engine's bar checks). A volume profile whose ``distribute`` reads the close ("close", "hlc3",
    "legacy") needs the close: ValueError naming it rather than the low in its place."""
    from ..io import Bars
    from ..synth import SynthBars

    table = isinstance(high, (Bars, SynthBars)) or (
        type(high).__module__.split(".")[0] in ("pandas", "polars") and hasattr(high, "columns"))
    if table or low is None:
        if not table:
            raise TypeError("tpo needs high and low arrays (with timestamp=), or a vpoc.io.Bars, a "
                            "SynthBars or a DataFrame as its only positional argument")
        return close, volume, True
    has_volume = volume is not None
    if close is None and has_volume and distribute != "uniform":
        raise ValueError(f"tpo: close is missing, and volume= with distribute={distribute!r} puts each bar's "
                         "volume by its close; pass close= (or distribute='uniform', which reads high and low)")
    if close is None:
        close = low
    if volume is None:
        volume = np.zeros(np.shape(low)[0] if np.ndim(low) else 0, dtype=np.int64)
    return close, volume, has_volume


def _check_interval(data: _Data, period_min: int) -> None:
    """ValueError naming ``period`` when the bar interval (``interval=``, or the one inferred and
    announced for ``label="close"``) is longer than a period: each bar would put its letter in one
    period and leave the next ones empty."""
    step = data.facts.get("interval")
    if step is not None and step * 1e9 > period_min * _NS_PER_MINUTE:
        raise ValueError(f"period={period_min} minutes is shorter than the bars (interval {step / 60:g} "
                         "minutes): each bar would touch one period and leave the next empty; pass a "
                         "period of at least the bar interval")


def _period_start(ts: np.ndarray, rules: _Rules) -> np.ndarray:
    """UTC ns start of the clock period of each (bar open) ``ts``: the open minus the time since
    the period began on the local wall clock (the period grid of ``_clock``)."""
    if ts.size == 0:
        return np.zeros(0, dtype=np.int64)
    per_ns = rules.tpo_minutes * _NS_PER_MINUTE
    off = _utc_offset_ns(ts, rules.tz)
    pr = np.mod(ts, per_ns)
    return ts - np.mod(pr + off - rules.rth_start_ns, per_ns)


def _tails(count: np.ndarray, offsets: np.ndarray) -> Tuple[np.ndarray, ...]:
    """Per session: (poor high, poor low, excess high, excess low) of the ragged counts. Excess: the
    rows of count 1 running down from the top row (up from the bottom row). Single prints are the
    pass's (``_tpo_counts._single_prints``)."""
    S = offsets.shape[0] - 1
    n = np.diff(offsets)
    ne = n > 0
    poor_high = np.zeros(S, dtype=bool)
    poor_low = np.zeros(S, dtype=bool)
    excess_high = np.zeros(S, dtype=np.int64)
    excess_low = np.zeros(S, dtype=np.int64)
    if ne.any():
        top, bottom = offsets[1:][ne] - 1, offsets[:-1][ne]
        poor_high[ne] = count[top] >= 2
        poor_low[ne] = count[bottom] >= 2
        idx = np.arange(count.shape[0], dtype=np.int64)
        other = count != 1
        last_other = np.maximum.reduceat(np.where(other, idx, -1), bottom)
        first_other = np.minimum.reduceat(np.where(other, idx, count.shape[0]), bottom)
        excess_high[ne] = np.where(last_other >= bottom, top - last_other, n[ne])
        excess_low[ne] = np.where(first_other <= top, first_other - bottom, n[ne])
    return poor_high, poor_low, excess_high, excess_low


def _ib(data: _Data, clock: _Clock, rules: _Rules) -> Tuple[Dict[str, np.ndarray], np.ndarray]:
    """The initial balance of ``session_features`` (``_ib_mask``: bars opening in
    [rth_start, rth_start + ib_minutes) on the trade date), whether it is complete (a bar in its
    first TPO period, ``_ib_late_ns``, and a bar after its last bar) and the range extension of the
    bars after it, in IB ranges; and the IB mask. ``_ib_late_ns``: how late the IB's first bar is
    where that makes it incomplete, else -1 (for the report)."""
    offs = data.offsets
    S = offs.shape[0] - 1
    ib = _ib_mask(clock, offs, data.trade_days, rules, data.ts)
    ib_high = _segment_reduce(np.maximum, np.where(ib, data.high, -np.inf), offs, np.nan)
    ib_low = _segment_reduce(np.minimum, np.where(ib, data.low, np.inf), offs, np.nan)
    ib_high[~np.isfinite(ib_high)] = np.nan
    ib_low[~np.isfinite(ib_low)] = np.nan
    idx = np.arange(ib.shape[0], dtype=np.int64)
    last_ib = _segment_reduce(np.maximum, np.where(ib, idx, -1).astype(np.float64), offs, -1.0)
    after = (idx > np.repeat(last_ib, np.diff(offs))) & np.repeat(last_ib >= 0, np.diff(offs))
    post_high = _segment_reduce(np.maximum, np.where(after, data.high, -np.inf), offs, -np.inf)
    post_low = _segment_reduce(np.minimum, np.where(after, data.low, np.inf), offs, np.inf)
    # an IB whose window's start has no bar (the feed or the session began late) is not a whole IB
    late = _ib_late_ns(clock, offs, data.trade_days, rules, ib, data.ts, getattr(data, "open_ns", None))
    late_start = late >= min(rules.tpo_minutes, rules.ib_minutes) * _NS_PER_MINUTE
    complete = (last_ib >= 0) & np.isfinite(post_high) & ~late_start
    ib_range = ib_high - ib_low
    up = np.full(S, np.nan)
    down = np.full(S, np.nan)
    # extensions in whole ticks (prices on the grid): a decimal tick's float differences would put
    # an extension of exactly k IB ranges on either side of a day-type threshold
    with np.errstate(invalid="ignore"):
        t = lambda x: np.rint(x[complete] / rules.tick_size)  # noqa: E731
        up[complete] = _ratio(np.maximum(t(post_high) - t(ib_high), 0.0), t(ib_high) - t(ib_low))
        down[complete] = _ratio(np.maximum(t(ib_low) - t(post_low), 0.0), t(ib_high) - t(ib_low))
    return dict(ib_high=ib_high, ib_low=ib_low, ib_range=ib_range, ib_complete=complete,
                ib_ext_up=up, ib_ext_down=down, _ib_late_ns=np.where(late_start, late, -1)), ib


def _opening_range(data: _Data, clock: _Clock, rules: _Rules, minutes: int) -> Tuple[np.ndarray, np.ndarray]:
    """High / low of the bars opening in [rth_start, rth_start + minutes) on the trade date: the IB
    window rule (``_ib_mask``, its ``ib_end`` / ``ib_anchor`` too) with ``minutes`` for ``ib_minutes``."""
    mask = _ib_mask(clock, data.offsets, data.trade_days, dataclasses.replace(rules, ib_minutes=minutes), data.ts)
    hi = _segment_reduce(np.maximum, np.where(mask, data.high, -np.inf), data.offsets, np.nan)
    lo = _segment_reduce(np.minimum, np.where(mask, data.low, np.inf), data.offsets, np.nan)
    hi[~np.isfinite(hi)] = np.nan
    lo[~np.isfinite(lo)] = np.nan
    return hi, lo


def _report(data: _Data, cols: Dict[str, np.ndarray], rules: _Rules, incomplete: str,
            what: str = "tpo") -> None:
    """The report of sessions with empty periods or an incomplete IB (one home: ``vpoc.tpo``'s
    ``incomplete=`` and ``session_features``' TPO / context columns, which always warn)."""
    if incomplete == "ignore":
        return
    period_min = rules.tpo_minutes
    empty_periods, ib_complete = cols["empty_periods"], cols["ib_complete"]
    late = cols.get("_ib_late_ns", np.full(ib_complete.shape[0], -1, dtype=np.int64))
    ne = np.diff(data.offsets) > 0
    gaps = np.flatnonzero(empty_periods > 0)
    starts = np.flatnonzero(ne & (late >= 0))
    short = np.flatnonzero(ne & ~ib_complete & (late < 0))
    if not gaps.size and not short.size and not starts.size:
        return
    labels = np.asarray(data.labels)

    def name(s: int) -> Any:
        x = labels[s]
        return x.item() if isinstance(x, np.generic) else x

    S = int(ne.sum())
    parts = []
    if gaps.size:
        s = int(gaps[0])
        parts.append(f"{gaps.size} of {S} sessions have {period_min}-minute periods without bars between their "
                     f"first and last bar (session {name(s)!r} has {int(empty_periods[s])}; the empty "
                     "periods keep their letters" + _gap_cause(data, rules, s) + ")")
    if starts.size:
        s = int(starts[0])
        anchor = ("the session's scheduled open" if rules.ib_anchor == "first_bar" else
                  "the window's start (rth_start on the trade date)")
        parts.append(f"{starts.size} of {S} sessions miss the start of their initial balance window: no bar in "
                     f"its first {period_min} minutes (session {name(s)!r}: its first IB bar opens "
                     f"{late[s] / _NS_PER_MINUTE:g} minutes after {anchor}); their IB holds only part of the "
                     "window: ib_complete False, ib_ext_up/ib_ext_down NaN, day_type / open_type undecided")
    if short.size:
        s = int(short[0])
        parts.append(f"{short.size} of {S} sessions have no initial balance or no bar after it "
                     f"(session {name(s)!r} first; their ib_ext_up/ib_ext_down are NaN)")
    text = "; ".join(parts)
    if incomplete == "raise":
        raise ValueError(f"tpo: timestamp: {text}. incomplete='raise' refuses them; check timestamp, period "
                         "and the sessions (incomplete='warn' reports them in empty_periods / ib_complete)")
    if what == "tpo":
        tail = ("See empty_periods and ib_complete; incomplete='raise' makes this an error, incomplete='ignore' "
                "keeps only those columns")
    else:
        tail = ("See the tpo_empty_periods / ib_complete columns (tpo_columns=True); "
                "warnings.simplefilter('ignore', vpoc.IncompleteSessionWarning) silences this")
    warnings.warn(f"{what}: {text}. {tail}", IncompleteSessionWarning, stacklevel=user_stacklevel())


def _gap_cause(data: _Data, rules: _Rules, s: int) -> str:
    """What may cause the empty periods of session ``s`` (findings 6 / 7): bars spaced wider than the
    period (the most common spacing of timestamp within sessions), else its longest stretch without
    bars and, for CME session rules, that holiday / early-close schedules leave such periods on
    clean data."""
    ts, offs = data.ts, data.offsets
    per_ns = rules.tpo_minutes * _NS_PER_MINUTE
    gaps = np.diff(ts)
    same = np.ones(gaps.shape[0], dtype=bool)
    same[offs[1:-1][(offs[1:-1] > 0) & (offs[1:-1] < ts.shape[0])] - 1] = False  # across two sessions
    within = gaps[same & (gaps > 0)]
    if within.size:
        values, counts = np.unique(within, return_counts=True)
        step = int(values[int(np.argmax(counts))])
        if step > per_ns:
            m = step / _NS_PER_MINUTE
            return (f"; the bars look {m:g}-minute (the most common spacing of timestamp within sessions) "
                    f"against period={rules.tpo_minutes} minutes: each bar fills one period and leaves the next "
                    f"empty; pass period='{m:g}min' (a period of at least the bar spacing)")
    a, b = int(offs[s]), int(offs[s + 1])
    text = ""
    if b - a >= 2:
        g = np.diff(ts[a:b])
        k = int(np.argmax(g))
        start = int(ts[a + k])
        local = (start + int(_utc_offset_ns(np.array([start], dtype=np.int64), rules.tz)[0])) % (86400 * 10**9)
        hh, mm = divmod(local // _NS_PER_MINUTE, 60)
        text = (f"; its longest stretch without bars is {int(g[k]) / 3.6e12:.4g} h after the bar of "
                f"{int(hh):02d}:{int(mm):02d} local")
    rule = str(data.facts.get("session_rule") or "")
    if "globex" in rule or "rth" in rule:
        text += ("; on clean CME data holiday and early-close schedules leave such periods (a holiday's trading "
                 "merged into the next trade date, a 12:00 halt): warnings.simplefilter('ignore', "
                 "vpoc.IncompleteSessionWarning), or vpoc.tpo(..., incomplete='ignore'), silences this")
    return text


def tpo(high: Any, low: Any = None, close: Any = None, volume: Any = None, *, open: Any = None,
        timestamp: Any = None, offsets: Any = None, session_ids: Any = None, session: Any = None,
        sessions: Any = None, label: str = "open", interval: Any = None,
        time_unit: Optional[str] = None, tick_size: float, ticks_per_row: int = 1,
        period: Any = "30min", value_area: float = 0.70, va_method: str = "cbot",
        poc_tie: str = "center", distribute: str = "uniform",
        tz: Union[str, _dt.tzinfo] = "America/Chicago", rth_start: Union[str, _dt.time] = "08:30",
        ib_minutes: int = 60, opening_minutes: Optional[int] = None, incomplete: str = "warn",
        type_rules: Optional[Dict[str, Any]] = None, threads: Optional[int] = None,
        snap: bool = False, preset: Optional[str] = None, ib_end: Optional[str] = None,
        ib_anchor: Optional[str] = None) -> TpoProfiles:
    """TPO profiles of bars, one per session (docs/features.md, "TPO profiles").

    A session's bars are grouped into ``period``-long clock periods (aligned to ``rth_start`` in
    ``tz``); a period touches every ladder row from the row of its lowest low to that of its
    highest high; a row's TPO count is the number of periods touching it. The TPO POC and value
    area are the engine's rules (``value_area``, ``va_method``, ``poc_tie``, docs/contract.md)
    applied to the counts. Also per session: period letters per row (A-Z then a-z from the
    session's first period), single prints, poor high/low, excess, opening range
    (``opening_minutes`` after ``rth_start``, default one period), initial balance (as
    ``session_features``: ``ib_minutes`` after ``rth_start`` on the trade date) and range
    extension in IB ranges; Dalton's day type and open type (``type_rules``: their thresholds,
    defaults ``TPO_TYPE_RULES``); the overnight high / low (bars before ``rth_start`` on the trade
    date), the prior non-empty session's high / low / close and the TPO value area's migration
    against the prior one (docs/features.md, "Session context").

    Inputs and sessions as ``session_features`` (docs/features.md): arrays with ``timestamp=``
    (required), a ``vpoc.io.Bars``, a SynthBars or a DataFrame; ``close`` and ``volume`` are
    optional with arrays (TPO counts read high, low and the times; with ``volume`` the result
    carries the volume profile of the same bars, by ``distribute``, in ``volume_profile``).
    ``incomplete``: sessions with periods without bars between their first and last bar, or with
    no initial balance, no bar in its first period (a late feed: ``ib_complete`` False) or no bar
    after it, are reported by an ``IncompleteSessionWarning`` (naming the likely cause)
    ("warn", default), refused with ValueError ("raise") or only recorded in ``empty_periods`` /
    ``ib_complete`` ("ignore").

    ``snap``: as in ``from_bars`` (docs/contract.md): the prices given (high, low, close when
    given, open with ``distribute="legacy"``) must lie on the ``tick_size`` grid; more than 0.1%
    off it raises ValueError, a few are rounded to the nearest tick with a warning; ``snap=True``
    rounds every one without a word. Either way ``snapped_prices`` counts the prices rounded
    (``from_bars``' count of the same bars with a close), and the TPO brackets are their rows.

    ``ib_end`` ("exclusive", default / "inclusive": a bar stamped at the window's end belongs to
    it), ``ib_anchor`` ("rth", default / "first_bar": the window starts at the session's first
    bar's stamp) set the initial balance and opening range windows; ``preset="marketprofile"``
    sets them as py-market-profile 0.2.0 does ("inclusive", "first_bar", ``opening_minutes=10``),
    each keyword passed winning (docs/presets.md).
    """
    if not isinstance(incomplete, str) or incomplete not in INCOMPLETE:
        raise ValueError(f"incomplete must be one of {', '.join(map(repr, INCOMPLETE))}, got {incomplete!r}")
    snap = boolean(snap, "snap")
    period_min = _period_minutes(period)
    types = _type_rules(type_rules)
    srk = resolve_session(preset, dict(ib_end=ib_end, ib_anchor=ib_anchor, opening_minutes=opening_minutes))
    rules = _rules(tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie, (), 1, None, 1, 1,
                   0.5, 0.5, 0.3, 0.6, 0.5, tz, rth_start, ib_minutes, period_min, srk["ib_end"], srk["ib_anchor"],
                   srk["opening_minutes"])
    prec = _preset_rules(preset, dict(value_area=rules.value_area, va_method=rules.va_method,
                                      poc_tie=rules.poc_tie, distribute=rules.distribute), "tpo")
    or_min = period_min if rules.opening_minutes is None else rules.opening_minutes
    close_given = close is not None or low is None  # a table always has its closes
    close, volume, has_volume = _arrays(high, low, close, volume, distribute)
    data = _data(high, low, close, volume, open, timestamp, offsets, session_ids, time_unit,
                 session=session, sessions=sessions, label=label, interval=interval, what="tpo")
    if data.ts is None:
        raise ValueError("tpo: timestamp is required (TPO periods are clock periods): pass timestamp= "
                         "or a vpoc.io.Bars / SynthBars / DataFrame with a timestamp column")
    _check_rth_hours(rules)  # the periods, IB and opening range read the clock in tz: sessions.rth's rule
    # the tick grid of the prices the caller gave (from_bars' rule: high, low, close, and open with
    # "legacy"; not the stand-in close of arrays without one), reported here once, so that its
    # advice (snap=True) is this call's; then the engine's other bar checks (finite prices,
    # low <= close <= high, the ladder options) on the kept bars, and their volume profile on the
    # same ladder, every price rounded to its tick (reported above)
    h, lo, c, _, o = data.engine_inputs
    grid = {"high": h, "low": lo}
    if close_given:
        grid["close"] = c
    if o is not None and rules.distribute == "legacy":
        grid["open"] = o
    snapped = check_grid(grid, rules.tick_size, snap=snap, stacklevel=user_stacklevel(), threads=threads or 0)
    prof, _ = _profiles(data, rules, "cpu", threads, developing=False, snap=True)
    rules = _engine_rules(rules, prof)
    _check_interval(data, period_min)
    clock = _clock(data.ts, rules)
    columns = _columns(data, clock, rules, _tpo_pass(data.offsets, clock.period, data.low, data.high, rules, threads),
                       or_min, types, close_given)
    _report(data, columns, rules, incomplete)
    columns = {k: v for k, v in columns.items() if not k.startswith("_")}
    settings = dict(tick_size=rules.tick_size, ticks_per_row=rules.ticks_per_row, row_size=rules.row_size,
                    period=period_min,
                    rules=dict(period=period_min, value_area=rules.value_area, va_method=rules.va_method,
                               poc_tie=rules.poc_tie, tz=rules.tz, rth_start_ns=rules.rth_start_ns,
                               ib_minutes=rules.ib_minutes, opening_minutes=or_min, ib_end=rules.ib_end,
                               ib_anchor=rules.ib_anchor,
                               distribute=rules.distribute, type_rules=types, **prec))
    facts = dict(session_labels=data.labels, trade_days=data.trade_days,
                 trade_dates=data.trade_days is not None, session_rule=data.facts.get("session_rule"),
                 dropped_rows=int(data.facts.get("dropped_rows", 0)),
                 dropped_volume=float(data.facts.get("dropped_volume", 0.0)) if has_volume else float("nan"),
                 input_index=data.facts.get("input_index"), label=data.facts.get("label", "open"),
                 interval=data.facts.get("interval"), snapped_prices=int(snapped))
    return TpoProfiles(columns, settings=settings, facts=facts, volume_profile=prof if has_volume else None)


def _columns(data: _Data, clock: _Clock, rules: _Rules, tpass: _TpoPass, or_min: int,
             types: Optional[Dict[str, float]] = None, close_given: bool = True,
             what: Optional[str] = "tpo") -> Dict[str, np.ndarray]:
    """Every column of the result from the TPO pass ``tpass`` (brackets, engine profile, counts,
    single prints); the day and open types with ``types`` (the open type needs ``open`` and ``close``)."""
    offs = data.offsets
    S = offs.shape[0] - 1
    b, tprof, count = tpass.brackets, tpass.prof, tpass.count
    cols: Dict[str, np.ndarray] = {}
    for name in ("poc", "vah", "val", "poc_row", "vah_row", "val_row", "low_row", "n_rows"):
        cols[name] = np.array(getattr(tprof, name))
    cols["total_tpo"] = np.asarray(tprof.total_volume).astype(np.int64)
    cols["va_tpo"] = np.asarray(tprof.va_volume).astype(np.int64)
    cols["offsets"] = np.array(tprof.offsets, dtype=np.int64)
    cols["count"] = count
    # periods: index from the session's first period (A), start time, bracket rows
    n_per = np.diff(b.offsets)
    first_per = np.repeat(b.period[b.offsets[:-1][n_per > 0]], n_per[n_per > 0])
    cols["period_offsets"] = b.offsets
    cols["period_index"] = b.period - first_per
    cols["period_start"] = _period_start(data.ts[b.first_bar], rules)
    cols["period_low_row"] = b.lo_row
    cols["period_high_row"] = b.hi_row
    cols["n_periods"] = n_per.astype(np.int64)
    span = np.zeros(S, dtype=np.int64)
    ne = n_per > 0
    span[ne] = cols["period_index"][b.offsets[1:][ne] - 1] + 1
    cols["empty_periods"] = span - cols["n_periods"]
    first_start = np.full(S, np.iinfo(np.int64).min, dtype=np.int64)
    first_start[ne] = cols["period_start"][b.offsets[:-1][ne]]
    cols["first_period_start"] = first_start
    cols["single_prints"] = tpass.singles
    cols["poor_high"], cols["poor_low"], cols["excess_high"], cols["excess_low"] = _tails(count, cols["offsets"])
    cols["session_high"] = _segment_reduce(np.maximum, data.high, offs, np.nan)
    cols["session_low"] = _segment_reduce(np.minimum, data.low, offs, np.nan)
    cols["or_high"], cols["or_low"] = _opening_range(data, clock, rules, or_min)
    ib_cols, ib = _ib(data, clock, rules)
    cols.update(ib_cols)
    if types is not None:
        cols["day_type"] = _day_types(cols, types)
        decide = cols["ib_complete"] & (cols["ib_range"] > 0)
        cols["open_type"] = _open_types(data.high, data.low, data.open if close_given else None, data.close,
                                        ib, offs, decide, rules.tick_size, types)
    cols.update(_session_context(data, clock, rules, cols, close_given, what))
    return cols


def _session_context(data: _Data, clock: _Clock, rules: _Rules, cols: Dict[str, np.ndarray],
                     close_given: bool, what: Optional[str] = "tpo") -> Dict[str, np.ndarray]:
    """Overnight high / low, the prior non-empty session's high / low / close (NaN without closes)
    and the migration of the TPO value area against the prior one (a ``VA_MIGRATIONS`` name; ""
    for the first non-empty session and empty ones): the rules of ``_context``. NaN / "" for an
    empty session."""
    offs = data.offsets
    n = np.diff(offs)
    out: Dict[str, np.ndarray] = {}
    out["overnight_high"], out["overnight_low"] = _overnight(data.high, data.low, offs, clock, data.trade_days,
                                                             rules)
    prev = _previous_nonempty(n)
    close = np.full(n.shape[0], np.nan)
    if close_given:
        close[n > 0] = data.close[offs[1:][n > 0] - 1]
    out["prior_high"], out["prior_low"], out["prior_close"] = _prior(prev, cols["session_high"],
                                                                     cols["session_low"], close)
    for name in ("prior_high", "prior_low", "prior_close"):
        out[name][n == 0] = np.nan  # an empty session's fields are all NaN
    mig = np.full(n.shape[0], "", dtype="U18")
    has = (prev >= 0) & (n > 0)
    if has.any():
        val, vah, p = cols["val_row"], cols["vah_row"], prev[has]
        mig[has] = np.asarray(VA_MIGRATIONS)[_va_migration(val[has], vah[has], val[p], vah[p])]
    out["va_migration"] = mig
    out["days_since_prior"] = _days_since_prior(offs, clock, data.trade_days, prev, data.labels, what)
    return out


#: The session table's further TPO columns (``session_features(..., tpo_columns=True)``), after
#: ``single_prints``, and the ``vpoc.tpo`` column each one is.
TPO_TABLE_COLUMNS: Tuple[Tuple[str, str], ...] = (
    ("tpo_vah", "vah"), ("tpo_val", "val"), ("tpo_poor_high", "poor_high"), ("tpo_poor_low", "poor_low"),
    ("tpo_excess_high", "excess_high"), ("tpo_excess_low", "excess_low"),
    ("tpo_empty_periods", "empty_periods"), ("or_high", "or_high"), ("or_low", "or_low"),
    ("ib_complete", "ib_complete"), ("ib_ext_up", "ib_ext_up"), ("ib_ext_down", "ib_ext_down"),
)


def _session_tpo(ctx: _Context, clock: _Clock, types: Optional[Dict[str, float]] = None) -> Dict[str, np.ndarray]:
    """``vpoc.tpo``'s columns for the session table's sessions, with ``period = tpo_minutes`` and
    ``opening_minutes`` (None: ``tpo_minutes``); the day and open types with ``types``. The TPO pass is the
    call's one (``_context_pass``: the table's ``tpo_poc`` / ``single_prints`` read it too)."""
    or_min = ctx.rules.tpo_minutes if ctx.rules.opening_minutes is None else ctx.rules.opening_minutes
    return _columns(ctx.data, clock, ctx.rules, _context_pass(ctx, clock), or_min, types, what=None)


def _table_columns(ctx: _Context, clock: _Clock,
                   cols: Optional[Dict[str, np.ndarray]] = None) -> Dict[str, np.ndarray]:
    """``TPO_TABLE_COLUMNS`` of the session table: ``vpoc.tpo``'s columns for its sessions
    (``_session_tpo``, or ``cols`` when computed already), as float64 (bools 0/1; NaN for an empty
    session). Each uses only its own session's bars."""
    d = ctx.data
    if cols is None:
        cols = _session_tpo(ctx, clock)
    empty = np.diff(d.offsets) == 0
    out: Dict[str, np.ndarray] = {}
    for name, key in TPO_TABLE_COLUMNS:
        x = np.asarray(cols[key], dtype=np.float64).copy()
        x[empty] = np.nan
        out[name] = x
    return out
