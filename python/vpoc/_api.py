"""``from_trades`` / ``from_bars``: argument checking and normalisation around the C++ engine.

Contract: docs/contract.md; every bad argument raises ValueError/TypeError naming it.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from . import _core
from ._arrays import as_prices, coarse_grid, first_off_grid, gpu_location, report_grid
from ._device import (DEFAULT_MEMORY_BUDGET, backends, empty_cache, gpu_available, memory_stats,  # noqa: F401
                      set_pool_limit, _placed)
from ._errors import InputError, input_rows, labelled
from ._frames import one_session as _one_session, plan as _plan
from ._frames import synth_sessions as _synth_sessions, table as _table, bar_side_arguments as _bar_side_arguments
from ._frames import array_times as _array_times
from ._profiles import Profiles
from ._time import session_date_ids
from . import _presets
from . import _side_profiles as _sides
from . import _timewin
from ._validate import boolean as _bool

__all__ = ["from_trades", "from_bars", "backends", "gpu_available", "memory_stats", "empty_cache",
           "set_pool_limit"]


def _finish(r: Any, facts: dict, prices: dict, opts: Any, device: str = "cpu",
            rows: Optional[np.ndarray] = None, level: int = 3) -> Profiles:
    """The Profiles of engine result ``r``: off-grid prices reported (report_grid: refused or
    warned about), the session facts of ``session=`` set. ``prices``: the call's price inputs in
    the engine's order (trades: price; bars: high, low, close, open when legacy); ``rows``: the
    caller's input row of each (``_plan``'s; None: they are the caller's rows), which the report
    names; ``level``: the warning's stack level (the from_* caller's line)."""
    snapped = 0
    if r.off_grid:
        items = [(name, x if isinstance(x, np.ndarray) or gpu_location(x) is not None else as_prices(x, name))
                 for name, x in prices.items()]
        snapped = report_grid(r.off_grid, r.grid_prices, first_off_grid(r, items, opts), items, opts.tick_size,
                              opts.snap, level, rows)
    prof = attach_facts(Profiles(r, device=device), facts)
    if snapped != 0:
        prof.snapped_prices = snapped
    return prof


def attach_facts(prof: Profiles, facts: dict) -> Profiles:
    """``prof`` with the session facts ``facts`` set (``vpoc._frames.plan`` / ``session_facts``' keys:
    ``session_labels``, ``trade_dates``, ``session_rule``, ...): the one place a result takes them,
    from_* (``_finish``) and ``vpoc.Live.profiles`` alike."""
    for k, v in facts.items():
        setattr(prof, k, v)
    return prof


def _prices_on_gpu(ins: dict) -> bool:
    """Whether every price input of an engine call (``_placed``'s inputs) was read in GPU memory."""
    for k in ("price", "high", "low", "close", "open"):
        x = ins.get(k)
        if x is not None and type(x) is not _core.GpuInput:
            return False
    return True


def _run(engine: Any, arrays: dict, args: tuple, device: Any, memory_budget: Any, stream: Any,
         prices: Optional[dict], opts: Any, facts: Optional[dict] = None, rows: Optional[np.ndarray] = None,
         window_start: Optional[np.ndarray] = None) -> Profiles:
    """The tail of every from_* call off the CPU fast path: where it runs (``_placed``), the engine
    call ``engine(*arrays in engine order, *args, placement)`` (its input-row errors named through
    ``rows``, its session errors by the sessions' labels: ``_labels``) and ``_finish``. ``prices``: the grid check's inputs (None: the bars of ``arrays``);
    ``window_start``: each row's time-window start (vpoc._timewin) or None."""
    labels = _labels(facts, args[1])
    if rows is None and labels is None:
        gpu, ins, place = _placed(device, arrays, memory_budget, stream)
        r = engine(*ins.values(), *args, place, window_start)
    else:
        with input_rows(rows, labels=labels):
            gpu, ins, place = _placed(device, arrays, memory_budget, stream)
            r = engine(*ins.values(), *args, place, window_start)
    where = "cpu" if gpu is None else f"cuda:{gpu}"
    if gpu is None or not _prices_on_gpu(ins):  # coarse_grid reads host prices only
        if prices is None:
            prices = _bar_prices(arrays["high"], arrays["low"], arrays["close"], arrays["open"], opts)
        coarse_grid(next(iter(prices.values())), prices, opts.tick_size, opts.ticks_per_row, opts.bins)
    if not r.off_grid and not facts:
        return Profiles(r, device=where)
    if prices is None:
        prices = _bar_prices(arrays["high"], arrays["low"], arrays["close"], arrays["open"], opts)
    # the off-grid report names the input rows itself (input_rows would map its error's row again)
    return _finish(r, facts or {}, prices, opts, where, rows, 4)


def _labels(facts: Optional[dict], session_ids: Any) -> Any:
    """The labels of a call's sessions for its errors (``input_rows``' ``labels``): the session rule's
    (``facts``), else a function giving those of ``session_ids`` (run on an error only), else None
    (offsets: the sessions are their positions)."""
    if facts and facts.get("session_labels") is not None:
        return facts["session_labels"]
    if session_ids is None:
        return None

    def of_ids() -> Any:
        try:
            return _core.session_offsets(None, session_ids, len(session_ids))[1]
        except (TypeError, ValueError):  # ids the engine cannot read on the host: positions
            return None
    return of_ids


def _relabel(e: InputError, session_ids: Any) -> None:
    """Raise ``e`` with its session named by its id in ``session_ids`` (``_errors.labelled``) when
    it names one; else return (the caller raises ``e``)."""
    out = labelled(e, _labels(None, session_ids))
    if out is not e:
        raise out from None


def _options(preset: Optional[str], given: dict, bars: bool, value_area: Optional[float], window: Any,
             tick_size: Any, ticks_per_row: Any, max_rows: Any, threads: Any, developing: Any, snap: Any,
             across: Any = False) -> Tuple[Any, Optional[dict], Optional[int]]:
    """(opts, rules, span) of from_trades / from_bars: rule keywords ``given`` resolved against ``preset``
    (``rules``: Profiles.rules, None for the plain call), its value area unless given, ``window`` as rows
    or a time window (``span``: ns, None for rows); the plain call makes one function call here (resolve)."""
    rk, rules = _presets.resolve(preset, given, bars)
    va = value_area if value_area is not None else _presets.VALUE_AREA[preset]  # preset checked by resolve
    rules = _presets.recorded_rules(rules, preset, value_area)  # a preset's value_area recorded (vpoc.diff)
    window, span = ((window, None) if window is None or window.__class__ is int  # rows: no call
                    else _timewin.window_arg(window))  # span: a time window's ns (None: rows)
    across = across if across is not None else _bool(across, "window_across_sessions")  # None: TypeError, as Live
    key = (tick_size, ticks_per_row, va, max_rows, threads, developing, snap, window, across, *rk, *rk.values())
    types = tuple(map(type, key))  # 1 and True, 0.25 and np.float64(0.25): each checked by Options once
    # only types whose == and hash are their value's (a str subclass may compare loosely, a mutable number
    # change after the call): anything else is built afresh
    key = key + types if _CACHEABLE.issuperset(types) else None
    opts = None if key is None else _OPTIONS.get(key)
    if opts is None:
        opts = _core.Options(tick_size=tick_size, ticks_per_row=ticks_per_row, value_area=va, max_rows=max_rows,
                             threads=threads, developing=developing, snap=snap, window=window,
                             window_across_sessions=across, **rk)
        if key is not None:
            if len(_OPTIONS) >= 64:
                _OPTIONS.clear()
            _OPTIONS[key] = opts
    return opts, rules, span


# Options of recent calls by the value and type of every argument (immutable; a loop's calls share one).
_OPTIONS: dict = {}
_CACHEABLE = frozenset((int, float, bool, str, type(None), np.bool_, np.int8, np.int16, np.int32, np.int64,
                        np.uint8, np.uint16, np.uint32, np.uint64, np.float16, np.float32, np.float64))


def from_trades(price: Any, volume: Any = None, *, offsets: Any = None, session_ids: Any = None,
                session: Any = None, sessions: Any = None, tick_size: float, ticks_per_row: int = 1,
                value_area: Optional[float] = None, va_method: Optional[str] = None, poc_tie: Optional[str] = None,
                device: Any = "cpu", threads: Optional[int] = None, max_rows: int = 1_000_000,
                memory_budget: int = DEFAULT_MEMORY_BUDGET, stream: Any = None,
                developing: bool = False, snap: bool = False, tz: Any = None,
                columns: Any = None, side: Any = None, imbalance_ratio: Optional[float] = None,
                stacked_imbalance_min: Optional[int] = None, window: Any = None,
                preset: Optional[str] = None, va_rows: Optional[str] = None, va_compare: Optional[str] = None,
                va_stop: Optional[str] = None, tie_tol: Optional[float] = None,
                row_label: Optional[str] = None, price_label: Optional[str] = None,
                va_target: Optional[str] = None, bins: Optional[int] = None, accumulate: Optional[str] = None,
                bin_report: Optional[str] = None, window_across_sessions: bool = False,
                time_unit: Optional[str] = None, ambiguous: Optional[str] = None,
                nonexistent: Optional[str] = None, timestamp: Any = None) -> Profiles:
    """Volume profiles of trades: each trade's volume goes to the row of its price.

    ``price``/``volume``: 1-D array-likes of any numeric dtype (read in place when contiguous
    float32/float64/int32/int64), or GPU arrays (torch/cupy, read in place). Or ``price`` alone:
    a ``vpoc.io.Trades`` container (a ``vpoc.synth.SynthTrades``) or a pandas / polars DataFrame with timestamp, price and
    volume columns (read by ``vpoc.io.read_trades``, with ``tz=`` / ``columns=`` / ``time_unit=`` /
    ``ambiguous=`` / ``nonexistent=``, their meaning and checks there).
    Sessions by CSR ``offsets`` [S+1], per-row ``session_ids``, or ``session=`` (alias ``sessions=``): a
    ``vpoc.sessions.Sessions`` (its kept rows are taken when the arrays have all N input rows;
    the result keeps its trade dates: ``prof.labels``, ``prof.loc[date]``, ``to_pandas()``
    indexed by date) or a rule name ("globex", "rth", "daily") applied to the timestamps.
    ``timestamp=``: the arrays' times (one per row; arrays only: a container or frame carries its own),
    read as ``bar_features`` / ``vpoc.Live`` read theirs: integer epoch times (ns, or ``time_unit=``),
    datetime64 of any unit (UTC) or tz-aware pandas datetimes (naive ones raise ValueError); in time
    order. With them arrays are taken as the same data as a frame: the same sessions, facts and warnings.
    Neither: one session for arrays without timestamps; for a container, a frame or ``timestamp=`` CME
    Globex sessions, announced by a GuessedDefaultWarning and ``prof.session_rule == "globex"``.
    Rows a session rule leaves out are counted (``prof.dropped_rows``) and the input rows kept are
    ``prof.kept_rows`` (then ``dev_*`` hold one entry per kept row). A Sessions given with a
    container or frame must have been built from its timestamps (ValueError naming ``session``).
    ``snap``: prices must lie on the ``tick_size`` grid (within 1e-6 ticks); more than 0.1% off
    it raises ValueError naming the grid the data suggests, a few are rounded with a warning;
    ``snap=True`` rounds every price to the nearest tick (``prof.snapped_prices`` counts them).
    ``device``: "cpu" (default), "cuda" / "cuda:N" (NVIDIA or AMD ROCm builds), or "auto" (the
    inputs' GPU, else a GPU if one is built and present, else the CPU). On a GPU,
    ``memory_budget`` caps vpoc's device scratch + staging bytes and ``stream`` (an int handle or
    a torch/cupy stream) is the stream vpoc works on (default: torch's current stream when the
    inputs are torch tensors, as torch's own ops; else a stream of vpoc's own). ``developing=True`` also computes
    ``dev_poc`` / ``dev_vah`` / ``dev_val`` [N]: for every trade, the levels of its session's
    profile up to and including it (no lookahead). ``side``: each trade's aggressor side, +1 / -1 / 0
    (unknown) or 'B' / 'A' / 'N' (a ``vpoc.io.Trades`` with a ``side`` uses it unless ``side=`` is
    given); adds ``buy_volume`` / ``sell_volume`` (rows aligned with ``volume``), ``delta``,
    ``buy_total`` / ``sell_total``, ``delta_poc`` (NaN for a session with no volume of a known side), footprint imbalances (``imbalance_ratio``, default 3.0; ``stacked_imbalance_min``,
    default 3) and, with ``developing=True``, ``dev_delta`` (cumulative, also with window=; contract.md).
    ``window=N`` (with ``developing=True``): ``dev_poc`` / ``dev_vah`` / ``dev_val`` of every trade are
    the levels of the profile of its session's last N trades (it included; fewer at the session's start; the
    call's with ``window_across_sessions=True``), each equal to the batch profile of exactly those trades, CPU and GPU;
    ``window="60min"`` (a timedelta too; needs timestamps: a container, a frame or ``timestamp=``): its session's trades
    in ``(t - 60min, t]``, as pandas' rolling (docs/contract.md, "Rolling windows"). ``preset``: "cbot" (the defaults), "marketprofile"
    (py-market-profile 0.2.0) or "lean" (QuantConnect LEAN VolumeProfile) sets every rule keyword
    not passed (``va_method``, ``poc_tie``, ``va_rows``, ``va_compare``, ``va_stop``, ``tie_tol``,
    ``row_label``, ``price_label``, ``va_target``; each a keyword of its own, docs/presets.md),
    recorded as ``prof.rules``; "wickra" (wickra 2.0.0 ValueArea) also ``bins`` (N equal-width bins per
    session: ``volume`` holds N bins, the ``*_row`` levels are bin indices, ``prof.bin_low`` /
    ``prof.bin_width`` the ladders), ``accumulate``, ``bin_report``; "tradingview", "sierra",
    "ninjatrader" as docs/presets.md assumes them. See docs/contract.md for every rule.
    """
    opts, rules, span = _options(preset, dict(va_method=va_method, poc_tie=poc_tie, va_rows=va_rows,
                                              va_compare=va_compare, va_stop=va_stop, tie_tol=tie_tol,
                                              row_label=row_label, price_label=price_label, va_target=va_target,
                                              bins=bins, accumulate=accumulate, bin_report=bin_report), False, value_area,
                                 window, tick_size, ticks_per_row, max_rows, threads, developing, snap, window_across_sessions)
    if price is None:
        raise TypeError("from_trades: price is None; give price and volume arrays, or a vpoc.io.Trades / "
                        "DataFrame as the only positional argument")
    if session_ids is not None:  # datetime dates: YYYYMMDD labels; times of day refused
        session_ids = session_date_ids(session_ids)
    if (volume is not None and span is None and session is None and sessions is None and tz is None
            and columns is None and side is None and imbalance_ratio is None and stacked_imbalance_min is None
            and time_unit is None and ambiguous is None and nonexistent is None and timestamp is None):
        # the plain call: arrays in, one engine call (no helper calls)
        if device == "cpu":
            try:
                r = _core.profile_trades(price, volume, offsets, session_ids, opts)
            except InputError as e:  # a session named by its id (no cost when the call succeeds)
                _relabel(e, session_ids)
                raise
            p = Profiles(r) if not r.off_grid else _finish(r, {}, {"price": price}, opts)
            coarse_grid(price, {"price": price}, opts.tick_size, opts.ticks_per_row, opts.bins)
            return p if rules is None else _ruled(p, rules, volume)
        return _ruled(_run(_core.profile_trades, {"price": price, "volume": volume}, (offsets, session_ids, opts),
                           device, memory_budget, stream, {"price": price}, opts), rules, volume)
    sided = _sides.side_rules(imbalance_ratio, stacked_imbalance_min)
    facts: dict = {}
    table = dict(tz=tz, columns=columns, time_unit=time_unit, ambiguous=ambiguous, nonexistent=nonexistent)
    if volume is None:
        _own_timestamps(timestamp, "from_trades")
        cols, ts = _table(price, False, table)
        offsets, facts = _synth_sessions(price, session, sessions, offsets, session_ids)
        price, volume, side = cols["price"], cols["volume"], cols["side"] if side is None else side
    else:  # arrays: their timestamp= (None: none), read and checked as a container's
        volume = _host_volume(volume, timestamp)
        ts = _array_times(timestamp, table, False, {"price": price, "volume": volume}, "from_trades")
    # session= / sessions= / a table keep some rows: the whole side column is checked first (rule b)
    side = _sides.trade_side(side, volume, price, sided, session is not None or sessions is not None or ts is not None)
    if session is not None:
        sessions = _one_session(session, sessions)
    rows = None
    if sessions is not None or ts is not None:
        cols, offsets, planned, rows = _plan(sessions, offsets, session_ids, ts, volume, len(price), "from_trades",
                                             {"price": price, "volume": volume, "side": side})
        facts = {**facts, **planned}
        price, volume, side = cols["price"], cols["volume"], cols["side"]
    ws = None if span is None else _timewin.window_starts(span, ts, rows, offsets, session_ids, len(price), window_across_sessions)
    engine, arrays = _sides.trade_engine(side, sided, {"price": price, "volume": volume})
    prof = _run(engine, arrays, (offsets, session_ids, opts), device, memory_budget, stream, {"price": price}, opts, facts, rows, ws)
    with input_rows(rows, labels=_labels(facts, session_ids)):
        return _ruled(_sides.add_trade_sides(prof, side, sided, volume, price, offsets, session_ids, opts, memory_budget,
                                      stream), rules, volume, sided)


def from_bars(high: Any, low: Any = None, close: Any = None, volume: Any = None, *, open: Any = None,
              offsets: Any = None, session_ids: Any = None, session: Any = None, sessions: Any = None,
              tick_size: float,
              ticks_per_row: int = 1, distribute: Optional[str] = None, value_area: Optional[float] = None,
              va_method: Optional[str] = None, poc_tie: Optional[str] = None, device: Any = "cpu",
              threads: Optional[int] = None, max_rows: int = 1_000_000,
              memory_budget: int = DEFAULT_MEMORY_BUDGET, stream: Any = None,
              developing: bool = False, snap: bool = False, tz: Any = None, columns: Any = None,
              label: Optional[str] = None, interval: Any = None, buy_volume: Any = None,
              sell_volume: Any = None, imbalance_ratio: Optional[float] = None,
              stacked_imbalance_min: Optional[int] = None, window: Any = None,
              preset: Optional[str] = None, va_rows: Optional[str] = None, va_compare: Optional[str] = None,
              va_stop: Optional[str] = None, tie_tol: Optional[float] = None,
              row_label: Optional[str] = None, price_label: Optional[str] = None,
              va_target: Optional[str] = None, bins: Optional[int] = None, accumulate: Optional[str] = None,
              bin_report: Optional[str] = None, window_across_sessions: bool = False,
              time_unit: Optional[str] = None, ambiguous: Optional[str] = None,
              nonexistent: Optional[str] = None, timestamp: Any = None) -> Profiles:
    """Volume profiles of OHLC bars; ``distribute`` puts each bar's volume on the ladder.

    ``"uniform"`` (default) splits it equally over every tick from low to high, ``"close"`` and
    ``"hlc3"`` put it on one price, ``"legacy"`` reproduces the legacy analyzer's weighting
    (uses ``open`` when given). ``high`` alone may be a ``vpoc.io.Bars`` container or a pandas /
    polars DataFrame with the usual columns and a timestamp column or DatetimeIndex (read by
    ``vpoc.io.read_bars`` with ``tz=``, ``columns=``, ``time_unit=``, ``ambiguous=`` and ``nonexistent=``,
    their meaning and checks there; without an open column ``open`` is None, as
    for arrays), or a ``vpoc.synth.SynthBars``; ``label="close"`` says the stamps are bar
    closes, moved to bar opens by ``interval=`` or the inferred spacing, announced by a
    GuessedDefaultWarning). A frame without timestamps: pass its columns as arrays.
    ``timestamp=`` (with arrays): the bars' times, as in from_trades; ``label=`` / ``interval=`` and
    ``time_unit=`` describe them as a frame's (exact duplicate bars are warned about, as a frame's).
    ``session``, ``snap``,
    ``device``, ``memory_budget``, ``stream``, ``developing``: as in from_trades (the developing
    series has one entry per bar). The grid check (``snap``) covers high, low, close, and open
    with ``"legacy"`` (the only rule that reads it); ``"legacy"`` weights off-grid prices where
    they lie rather than rounding them, and ``snap=True`` accepts them. ``buy_volume`` /
    ``sell_volume`` (both or neither; per bar, at most its volume together: NinjaTrader / Sierra
    Chart bid-ask exports) give the side fields of ``from_trades(side=)``, each spread by
    ``distribute``; a ``vpoc.io.Bars`` with them, or a frame with buy_volume / sell_volume (or
    AskVolume / BidVolume) columns, uses its own unless they are given (with a frame, as arrays or
    as column names). ``window=N`` / ``"60min"``, ``window_across_sessions``: as in from_trades, over bars (not with ``"legacy"``).
    ``preset`` and the rule keywords: as in from_trades, ``distribute`` included (docs/presets.md).
    See docs/contract.md for every rule.
    """
    opts, rules, span = _options(preset, dict(distribute=distribute, va_method=va_method, poc_tie=poc_tie,
                                              va_rows=va_rows, va_compare=va_compare, va_stop=va_stop, tie_tol=tie_tol,
                                              row_label=row_label, price_label=price_label, va_target=va_target,
                                              bins=bins, accumulate=accumulate, bin_report=bin_report), True, value_area,
                                 window, tick_size, ticks_per_row, max_rows, threads, developing, snap, window_across_sessions)
    if high is None:
        raise TypeError("from_bars: high is None; give high, low, close and volume arrays, or a vpoc.io.Bars / "
                        "DataFrame as the only positional argument")
    if session_ids is not None:  # datetime dates: YYYYMMDD labels; times of day refused
        session_ids = session_date_ids(session_ids)
    if (low is not None and close is not None and volume is not None and span is None and session is None
            and sessions is None
            and tz is None and columns is None and label is None and interval is None and buy_volume is None
            and time_unit is None and ambiguous is None and nonexistent is None
            and sell_volume is None and imbalance_ratio is None and stacked_imbalance_min is None
            and timestamp is None):  # the plain call
        if device == "cpu":
            try:
                r = _core.profile_bars(high, low, close, volume, open, offsets, session_ids, opts)
            except InputError as e:  # a session named by its id (no cost when the call succeeds)
                _relabel(e, session_ids)
                raise
            prices = {"high": high, "low": low, "close": close} if open is None else \
                _bar_prices(high, low, close, open, opts)
            p = Profiles(r) if not r.off_grid else _finish(r, {}, prices, opts)
            coarse_grid(high, prices, opts.tick_size, opts.ticks_per_row, opts.bins)
            return p if rules is None else _ruled(p, rules, volume)
        return _ruled(_run(_core.profile_bars, {"high": high, "low": low, "close": close, "volume": volume,
                                                "open": open}, (offsets, session_ids, opts), device, memory_budget,
                           stream, None, opts), rules, volume)
    sided = _sides.side_rules(imbalance_ratio, stacked_imbalance_min)
    facts: dict = {}
    table = dict(tz=tz, columns=columns, label=label, interval=interval, time_unit=time_unit, ambiguous=ambiguous,
                 nonexistent=nonexistent)
    if low is None:
        if close is not None or volume is not None or open is not None:
            raise TypeError("from_bars: low is missing (give high, low, close and volume, or a vpoc.io.Bars "
                            "/ DataFrame alone)")
        _own_timestamps(timestamp, "from_bars")
        buy_volume, sell_volume, table = _bar_side_arguments(high, buy_volume, sell_volume, table)
        cols, ts = _table(high, True, table)
        offsets, facts = _synth_sessions(high, session, sessions, offsets, session_ids)
        high, low, close, volume, open = (cols[k] for k in ("high", "low", "close", "volume", "open"))
        if buy_volume is None and sell_volume is None:  # a Bars' / frame's own (vpoc.io), as from_trades' side
            buy_volume, sell_volume = cols["buy_volume"], cols["sell_volume"]
    else:
        if close is None or volume is None:
            raise TypeError("from_bars needs high, low, close and volume (or a vpoc.io.Bars / DataFrame "
                            "as the only positional argument)")
        _bar_side_arguments(high, buy_volume, sell_volume, table)  # a column name needs a frame
        volume = _host_volume(volume, timestamp)  # arrays: their timestamp= (None: none), as a container's
        ts = _array_times(timestamp, table, True, {"high": high, "low": low, "close": close, "volume": volume,
                                                   "open": open}, "from_bars")
    sv = _sides.bar_side_volumes(buy_volume, sell_volume, volume, high, sided)
    if session is not None:
        sessions = _one_session(session, sessions)
    rows = None
    if sessions is not None or ts is not None:
        cols, offsets, planned, rows = _plan(sessions, offsets, session_ids, ts, volume, len(high), "from_bars",
                                             {"high": high, "low": low, "close": close, "volume": volume,
                                              "open": open, "buy": sv and sv[0], "sell": sv and sv[1]})
        facts = {**facts, **planned}
        high, low, close, volume, open = (cols[k] for k in ("high", "low", "close", "volume", "open"))
        sv = sv and (cols["buy"], cols["sell"])
    ws = None if span is None else _timewin.window_starts(span, ts, rows, offsets, session_ids, len(high), window_across_sessions)
    prof = _run(_core.profile_bars, {"high": high, "low": low, "close": close, "volume": volume, "open": open},
                (offsets, session_ids, opts), device, memory_budget, stream, None, opts, facts, rows, ws)
    with input_rows(rows, labels=_labels(facts, session_ids)):
        return _ruled(_sides.add_bar_sides(prof, sv, sided, {"high": high, "low": low, "close": close, "open": open},
                                    offsets, session_ids, opts, memory_budget, stream), rules, volume, sided)


def _own_timestamps(timestamp: Any, what: str) -> None:
    """TypeError naming ``timestamp=`` given with a container or frame, which carries its own."""
    if timestamp is not None:
        raise TypeError(f"{what}: timestamp= goes with arrays; a vpoc.io container, vpoc.synth data or a "
                        "DataFrame carries its own timestamps (a frame's column or DatetimeIndex): leave it out")


def _host_volume(volume: Any, timestamp: Any) -> Any:
    """An array-like ``volume`` (a list, a pandas Series) of a call with ``timestamp=`` as a numpy array, so
    that the session rule counts the volume of the rows it leaves out (``dropped_volume``) as for a frame;
    numpy and GPU arrays, and every call without ``timestamp=``, as given."""
    if timestamp is None or isinstance(volume, np.ndarray) or gpu_location(volume) is not None:
        return volume
    return np.asarray(volume)


def _ruled(prof: Profiles, rules: Optional[dict], volume: Any = None, sided: Any = None) -> Profiles:
    """``prof`` with its rules recorded (``Profiles.rules``) when the call set a preset or a peer rule,
    and a sided result's imbalance rule (``sided``: its SideRules); va_target='decimal' checks that the
    volumes were whole (ValueError naming va_target)."""
    if rules is not None and rules["va_target"] == "decimal":
        _presets.check_whole_volume(volume, prof.cpu().volume)
    # sided: the result holds side fields (read without making one: prof.delta would export or copy it)
    if sided is not None and prof.__dict__.get("_side") is not None:
        rules = _presets.with_side_rules(rules, sided.imbalance_ratio, sided.stacked_min)
    if rules is not None:
        prof.rules = rules
    return prof


def _bar_prices(high: Any, low: Any, close: Any, open: Any, opts: Any) -> dict:
    """The bar prices the grid check covers, in the engine's order: open only with 'legacy' (the
    only rule that reads it)."""
    prices = {"high": high, "low": low, "close": close}
    if open is not None and opts.distribute == "legacy":
        prices["open"] = open
    return prices
