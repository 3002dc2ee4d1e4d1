"""What a bar or trades file's timestamps and prices look like, with evidence, and how to read it right.

Contract: ``inspect(source, **read_kwargs)`` reads the bars (naive times as UTC wall clock), never
guesses silently: every conclusion carries its evidence and a confidence ("high"/"medium"/"low").

The checks assume CME Globex equity-index hours (GUIDE section 1): Sunday-Friday 17:00-16:00
America/Chicago with a daily halt 16:00-17:00, RTH open 08:30 CT, cash close 15:00 CT. Each
candidate reading (time zone x open/close stamps) is scored by how many bars it puts in the halt,
whether trading restarts at 17:00 CT after each pause (and on Sundays, the weekly open), stops at
16:00 CT, and whether the busiest bar is the 08:30 CT open. The reading with the fewest bars in
the halt wins; ties go to the earlier candidate (UTC first). A day-session file (RTH only: 3 h or
more of every day empty as written) is judged on US RTH instead (_day_hours): the reading whose days
open at 08:30 CT and end at 15:00 / 15:15 / 16:00 CT, the label checked by the days' round bounds.
A trades file (a price column, no high/low: what read_bars calls trades) is judged on the one-minute
buckets holding its trades (``Inspection.kind == "trades"``): the same zone, hours and gaps evidence, no bar label or interval.
See docs/inspect.md.
"""

from __future__ import annotations

import inspect as _pyinspect
import os
import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._time import infer_interval_ns, zone as _zone
from ._columns import recorded_columns, side_evidence
from ._timestamps import COMMON_TIME_FORMATS, formats_that_parse
from ._day_hours import day_hours, day_span, judge_day, reading_text, rth_kept, written_hours
from ._globex_hours import (TRADES_SLACK_MIN, _CASH_CLOSE, _NS, _RTH_OPEN, _hm, _hours_and_gaps, _key,
                            _localize, _score, _shown)

__all__ = ["Inspection", "inspect", "CANDIDATE_ZONES", "COMMON_TICKS", "COMMON_TIME_FORMATS"]

#: Time zones tried for naive timestamps, in order of preference on ties.
CANDIDATE_ZONES: Tuple[str, ...] = ("UTC", "America/Chicago", "America/New_York", "Europe/London",
                                    "Europe/Berlin", "America/Los_Angeles", "Asia/Tokyo",
                                    "Asia/Hong_Kong", "Australia/Sydney")
#: Price grids tried for the tick size; the largest one holding >= 99.9% of prices wins.
COMMON_TICKS: Tuple[float, ...] = (100.0, 50.0, 25.0, 10.0, 5.0, 1.0, 0.5, 0.25, 0.2, 0.1, 0.05, 1 / 32, 0.025, 0.02,
                                   1 / 64, 0.01, 0.005, 1 / 128, 0.0025, 1 / 256, 0.001, 0.0005,
                                   0.0001, 0.00005, 0.00001)
_GRID_SHARE = 0.999
_GRID_TOL = 1e-6
_MIN_RESTARTS = 3                  # daily restarts needed to judge zone and label


@dataclass(repr=False)
class Inspection:
    """The result of :func:`inspect`. ``tz``/``label`` are None when the data cannot tell
    (see ``evidence``); ``interval`` is seconds; ``read_kwargs`` passed to ``vpoc.io.read_bars``
    give correct bar-open timestamps; ``cli_args`` are the same as ``vpoc`` command-line flags."""

    source: str
    rows: int
    tz: Optional[str]
    label: Optional[str]
    interval: Optional[float]
    tick_size: Optional[float]
    confidence: str
    read_kwargs: Dict[str, Any]
    cli_args: List[str]
    evidence: List[str]
    naive: bool = True
    hours: str = ""
    gaps: List[Dict[str, Any]] = field(default_factory=list)
    duplicated_rows: int = 0
    duplicated_timestamps: int = 0
    unsorted_rows: int = 0
    stray_rows: int = 0
    alternatives: List[Dict[str, Any]] = field(default_factory=list)
    kind: str = "bars"
    tz_choices: List[str] = field(default_factory=list)  # naive stamps, zone unknown: tz= to choose from

    def to_dict(self) -> Dict[str, Any]:
        """Every field as plain Python values (JSON-ready)."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def __repr__(self) -> str:
        def kw(d: Dict[str, Any]) -> str:
            return ", ".join(f"{k}={v!r}" for k, v in d.items())

        tz_note = ("naive timestamps are wall clock in this zone" if self.naive
                   else "timestamps carry their UTC offset: no tz= needed")
        lab = {"close": "bars are stamped at their close", "open": "bars are stamped at their open",
               None: "cannot tell"}[self.label]
        iv = "unknown" if self.interval is None else f"{self.interval:g} s"
        trades = self.kind == "trades"
        if trades:
            lab, iv = "trades are instants: no bar label", "- (trades)"
        tick = "unknown" if self.tick_size is None else f"{self.tick_size:g}"
        lines = [f"Inspection of {self.source} ({self.rows:,} rows)",
                 f"  tz          {self.tz or ('unknown' if self.naive else '-')}"
                 f"  ({tz_note})",
                 f"  label       {self.label or ('-' if trades else 'unknown')}  ({lab})",
                 f"  interval    {iv}",
                 f"  tick_size   {tick}",
                 f"  hours       {self.hours or 'unknown'}",
                 f"  confidence  {self.confidence}",
                 f"  read with   vpoc.io.read_{self.kind}({', '.join(['source'] + ([kw(self.read_kwargs)] if self.read_kwargs else []))})",
                 f"  CLI flags   {' '.join(map(shlex.quote, self.cli_args))}"]
        if self.tz_choices:  # read_kwargs / cli_args cannot read naive stamps without it
            lines.append(f"  choose tz   required: add tz=ZONE (--tz ZONE), ZONE one of "
                         f"{', '.join(self.tz_choices)} (naive timestamps are refused without it)")
        lines.append("evidence:")
        lines += [f"  - {e}" for e in self.evidence]
        return "\n".join(lines)


# --------------------------------------------------------------------------- reading


def _read(source: Any, kw: Dict[str, Any], tz: str, trades: bool = False) -> Tuple[Any, int]:
    """read_bars(source, tz=tz, **kw) (``trades``: read_trades, as _MinuteBars); rows out of time
    order are sorted first (and counted)."""
    from ._read import read_bars_unwarned, read_trades

    def read(src: Any, **k: Any) -> Any:
        if trades:
            return _MinuteBars(read_trades(src, **{x: v for x, v in k.items() if x != "label"}))
        return read_bars_unwarned(src, **k)  # duplicated rows: in the evidence instead

    try:
        return read(source, tz=tz, **kw), 0
    except ValueError as e:
        if "before the previous" not in str(e):
            raise
    df, unsorted = _sorted_frame(source, kw)
    kw = {k: v for k, v in kw.items() if k not in ("format", "sep")}
    return read(df, tz=tz, **kw), unsorted


class _MinuteBars:
    """Trades as the bars inspect judges: one per UTC minute holding trades (timestamp the minute's
    start, the minute's volume), the trades kept for the tick size and duplicate counts."""

    def __init__(self, trades: Any) -> None:
        self.trades, self.source = trades, trades.source
        t = np.asarray(trades.timestamp, dtype=np.int64)
        minute = t - t % (60 * _NS)
        self.timestamp, first = np.unique(minute, return_index=True)
        self.volume = np.add.reduceat(np.asarray(trades.volume, dtype=np.float64), first) if t.size \
            else np.zeros(0)


def _looks_like_trades(e: ValueError) -> bool:
    """read_bars' refusal of a trades source (a price column, no high / low; a DBN trades schema)."""
    return ("high" in (getattr(e, "columns_missing", None) or ()) and "looks like trades" in str(e)) \
        or getattr(e, "dbn_kind", None) == "trades"


def _frame_and_key(source: Any, kw: Dict[str, Any]) -> Tuple[Any, Any]:
    """The source as a DataFrame (text read as str) and its timestamp column: ``columns=``'s, a
    timestamp/datetime/ts column, a ``Date`` + ``Time`` pair joined by a space (as the readers
    join them), ``time`` or ``date``, else the first column."""
    import pandas as pd

    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        fmt = kw.get("format")
        if fmt == "parquet" or (fmt is None and path.lower().endswith((".parquet", ".pq"))):
            df = pd.read_parquet(path)
        else:
            with open(path, "r", encoding="utf-8", errors="replace") as fh:
                first = fh.readline()
            if fmt == "legacy" or (fmt is None and first[:8].isdigit() and ";" in first):
                df = pd.read_csv(path, sep=";", header=None, dtype={0: str},
                                 names=["timestamp", "open", "high", "low", "close", "volume"])
            else:
                df = pd.read_csv(path, sep=kw.get("sep") or None, engine="python", dtype=str)
    elif isinstance(source, pd.DataFrame):
        df = source.reset_index() if isinstance(source.index, pd.DatetimeIndex) else source
    else:
        raise ValueError("source is not a file or a pandas DataFrame")
    col = (kw.get("columns") or {}).get("timestamp")
    names = {str(c).lower().replace("_", "").replace(" ", ""): c for c in df.columns}
    if col is None:
        col = next((names[n] for n in ("timestamp", "datetime", "ts") if n in names), None)
    if col is None and "date" in names and "time" in names:
        col = (names["date"], names["time"])
    if col is None:
        col = next((names[n] for n in ("time", "date") if n in names), df.columns[0])
    if isinstance(col, (tuple, list)):
        return df, df[list(col)].astype(str).agg(" ".join, axis=1)
    return df, df[col]


def _sorted_frame(source: Any, kw: Dict[str, Any]) -> Tuple[Any, int]:
    """The source as a DataFrame sorted by its timestamp text/values, and how many rows were
    earlier than the row before them (only for reporting: read_bars refuses unsorted rows)."""
    import pandas as pd

    try:
        df, key = _frame_and_key(source, kw)
    except ValueError:
        raise ValueError("source has rows out of time order and is not a file or a pandas DataFrame; "
                         "sort it by time first") from None
    if key.dtype == object or pd.api.types.is_string_dtype(key.dtype):
        fmt = kw.get("time_format") or ("%Y%m%d %H%M%S" if str(key.iloc[0]).strip()[:8].isdigit()
                                        and len(str(key.iloc[0]).strip()) == 15 else "ISO8601")
        key = pd.to_datetime(key.str.strip(), format=fmt, utc=True, errors="coerce")
    vals = np.asarray(pd.Series(key).to_numpy())
    order = np.argsort(vals, kind="stable")
    back = int(np.count_nonzero(vals[1:] < vals[:-1]))
    return df.iloc[order].reset_index(drop=True), back


def _guess_time_format(source: Any, kw: Dict[str, Any], error: ValueError) -> str:
    """The one COMMON_TIME_FORMATS entry that parses every timestamp, else ValueError naming them (an
    error about the unit of integer epoch times is raised as it is: no format is the fix)."""
    import pandas as pd

    if getattr(error, "argument", None) == "time_unit":
        raise error

    try:
        text = _frame_and_key(source, kw)[1].astype(str).str.strip()
    except (ValueError, KeyError, OSError):
        text = pd.Series([], dtype=str)
    fits = formats_that_parse(text)
    if len(fits) == 1:
        return fits[0]
    why = (("several common formats parse every timestamp (day and month cannot be told apart): "
            "pass one of " + " or ".join(f"time_format={f!r}" for f in fits)) if fits else
           f"none of {', '.join(map(repr, COMMON_TIME_FORMATS))} parses every timestamp: pass "
           "time_format= (strftime codes, e.g. '%d/%m/%Y %H:%M')")
    if getattr(error, "time_formats", ()):  # the reader's error names them already (io/_timestamps.py)
        raise error
    raise ValueError(f"{error}; {why}") from error


def _label_kwargs_supported() -> bool:
    from . import read_bars

    return "label" in _pyinspect.signature(read_bars).parameters


# --------------------------------------------------------------------------- tick size


def _tick_size(prices: np.ndarray) -> Tuple[Optional[float], List[str]]:
    p = prices[np.isfinite(prices)]
    if p.size == 0:
        return None, ["tick size: no prices"]
    uniq = np.unique(p)
    steps = np.diff(uniq)
    smallest = float(steps.min()) if steps.size else float("nan")
    for tick in COMMON_TICKS:
        r = p / tick
        share = float(np.mean(np.abs(r - np.round(r)) <= _GRID_TOL))
        if share >= _GRID_SHARE:
            ev = [f"tick size {tick:g}: {share:.2%} of {p.size:,} prices lie on its grid (within "
                  f"1e-6 ticks); smallest step between distinct prices {smallest:g} "
                  f"({smallest / tick:g} tick{'' if smallest == tick else 's'})"]
            if uniq.size < 20:
                ev.append(f"tick size: only {uniq.size} distinct prices; a finer grid is possible")
            return tick, ev
    if not steps.size:
        return None, [f"tick size: every price is {uniq[0]:g}; cannot tell the grid"]
    est = float(f"{smallest:.10g}")
    r = p / est
    share = float(np.mean(np.abs(r - np.round(r)) <= _GRID_TOL))
    return est, [f"tick size: no common tick holds {_GRID_SHARE:.1%} of prices; the smallest step "
                 f"between distinct prices is {est:g}, whose grid holds {share:.2%} of them "
                 "(an estimate: check it)"]


# --------------------------------------------------------------------------- main


def inspect(source: Any, **read_kwargs: Any) -> Inspection:
    """Read ``source`` (a path or DataFrame, as :func:`vpoc.io.read_bars` takes) and report its
    time zone, bar stamps (open/close), interval, tick size, trading hours, gaps, duplicated and
    unsorted rows, with evidence, and the ``read_bars`` / CLI arguments that read it right. A
    trades source (a price column, no high / low) is read by ``read_trades`` and judged on its
    one-minute buckets: time zone, tick size, hours, gaps, duplicates (``kind == "trades"``,
    ``label`` / ``interval`` None, ``read_kwargs`` for ``read_trades``, ``cli_args`` with
    ``--kind trades``).

    ``read_kwargs``: what ``read_bars`` needs to parse the file at all (``columns``,
    ``time_format``, ``format``, ``sep``, ``time_unit``...). A ``tz``/``label``/``interval`` given
    here is checked against the data rather than trusted. Naive timestamps are read as UTC wall
    clock and re-read in each of :data:`CANDIDATE_ZONES`.
    """
    with recorded_columns() as seen:  # the side columns read: in the evidence (no look-alike warning)
        return _inspect(source, read_kwargs, seen)


def _inspect(source: Any, read_kwargs: Dict[str, Any], seen: list) -> Inspection:
    kw = dict(read_kwargs)
    user_tz = kw.pop("tz", None)
    user_label = kw.pop("label", None)
    kw.pop("interval", None)
    if user_tz is not None:
        _zone(user_tz)
    if _label_kwargs_supported():
        kw["label"] = "open"
    guessed_format: Optional[str] = None
    trades = False
    while True:
        try:
            bars, unsorted = _read(source, kw, "UTC", trades)
            break
        except ValueError as e:
            if not trades and _looks_like_trades(e):
                trades = True  # judged on its one-minute buckets
                continue
            if "time_format" not in str(e) or kw.get("time_format") is not None:
                raise
            guessed_format = _guess_time_format(source, kw, e)
            kw["time_format"] = guessed_format
    kw.pop("label", None)
    is_path = isinstance(source, (str, os.PathLike))
    name = repr(os.fspath(source)) if is_path else getattr(bars, "source", "<DataFrame>")
    t = np.asarray(bars.timestamp, dtype=np.int64)  # trades: their minutes
    n = int(len(bars.trades) if trades else t.size)
    ev: List[str] = []
    legacy = kw.get("format") == "legacy" or (isinstance(source, (str, os.PathLike))
                                              and os.fspath(source).lower().endswith(".txt"))
    naive = True
    if not legacy and n:
        other, _ = _read(source, {**kw, **({"label": "open"} if _label_kwargs_supported() else {})},
                         "Asia/Tokyo", trades)
        naive = not np.array_equal(np.asarray(other.timestamp, dtype=np.int64), t)
    ev.append(f"read {n:,} rows; timestamps are "
              + ("naive (no UTC offset): read as wall clock and tried in each candidate zone"
                 if naive else "instants with a UTC offset (or epoch times): no tz= needed"))
    if guessed_format is not None:
        ev.append(f"time_format={guessed_format!r}: not ISO 8601; of {len(COMMON_TIME_FORMATS)} "
                  "common formats only this one parses all timestamps")
    if unsorted:
        ev.append(f"{unsorted:,} rows are earlier than the row before them (the file is not in "
                  "time order; read_bars refuses it: sort it first)")
    dup_ts, dup_rows = _duplicates(bars, trades)
    if dup_ts:
        ev.append(f"{dup_ts:,} rows repeat the previous row's timestamp ({dup_rows:,} are exact "
                  "duplicates of another row)" + ("; usual for trades (fills of one order)" if trades else ""))
    if seen:  # the side columns read, or the look-alikes skipped (DBN: its records' side)
        ev.append(side_evidence(*seen[-1]))
    step: Optional[int] = None
    dbn_bars = not trades and getattr(bars, "interval", None) is not None  # no interval= given: the schema's
    if dbn_bars:
        step = int(round(bars.interval * _NS))
        ev.append(f"DBN OHLCV bars: label open, interval {bars.interval:g} s by the DBN definition (ts_event is the "
                  "start of the bar's interval: https://databento.com/docs/schemas/ohlcv; the schema gives the "
                  "interval), not inferred from the data")
    elif trades:
        step = 60 * _NS
        ev.append(f"trades: {n:,} trades in {t.size:,} one-minute buckets (UTC minutes); the time zone, "
                  "hours and gaps are judged on those buckets as one-minute bars stamped at their open "
                  "(trades are instants: no bar label or interval to find)")
    else:
        try:
            step = infer_interval_ns(t)
            share = float(np.mean(np.diff(np.unique(t)) == step))
            ev.append(f"interval {step / _NS:g} s: the spacing of {share:.1%} of consecutive bars")
        except ValueError as e:
            ev.append(f"interval: {e}")
    tick, tick_ev = _tick_size(bars.trades.price if trades else
                               np.concatenate([bars.open, bars.high, bars.low, bars.close]))
    ev += tick_ev

    tz, label, confidence = None, None, "low"
    hours, gaps, alternatives, stray = "", [], [], 0
    vol = np.asarray(bars.volume, dtype=np.float64)
    if step is not None and n:
        zones: Sequence[Optional[str]] = (
            [None] if not naive else
            ([str(user_tz)] if user_tz is not None and str(user_tz) not in CANDIDATE_ZONES else [])
            + list(CANDIDATE_ZONES))
        span = day_span(t, step)  # a day session (RTH only), not Globex: judged on US RTH
        hyps = []
        for zi, z in enumerate(zones):
            inst = t if z is None else _localize(t, z)
            valid = inst != -1
            for li, lab in enumerate(("open",) if trades or dbn_bars else ("open", "close")):
                opens = inst - (step if lab == "close" else 0)
                sc = _score(opens, valid, vol, step, TRADES_SLACK_MIN if trades else 0)
                hyps.append({"tz": z, "label": lab, "score": sc, "opens": opens, "valid": valid,
                             "key": _key(sc, 2 * zi + li, span is not None)})
        hyps.sort(key=lambda h: h["key"])
        best = hyps[0]
        sc = best["score"]
        same = [h for h in hyps[1:] if h["label"] == best["label"]
                and np.array_equal(h["opens"], best["opens"])]
        distinct = [h for h in hyps[1:] if not np.array_equal(h["opens"], best["opens"])]
        runner = distinct[0] if distinct else None
        for h in distinct:
            s2 = h["score"]
            alternatives.append({"tz": h["tz"], "label": h["label"], "halt_rows": s2["halt_rows"],
                                 "halt_volume_share": s2["halt_volume_share"],
                                 "restart_at_17": s2["restart_at_17"], "restarts": s2["restarts"]})
        if span is not None:  # a day session (RTH only): US RTH bounds decide, not the Globex halt
            tz, label, confidence, chosen, bounds, dev = judge_day(hyps, distinct, t, step, span, trades, naive)
            ev += dev + _busiest_and_same(sc, step, trades, same, best["tz"], "; not used: the days' bounds decide")
            hours = "" if chosen else written_hours(t, span, naive, trades)
        else:
            what = reading_text(best, trades)
            at17, at16 = ((f"at 17:00-17:{TRADES_SLACK_MIN:02d} CT (first trade minute)",
                           f" (last trade minute from 15:{60 - TRADES_SLACK_MIN:02d})") if trades
                          else ("open at 17:00 CT", ""))
            ev.append(f"{what}: {sc['halt_rows']:,} of {sc['rows']:,} {'minutes with trades' if trades else 'bars open'} "
                      "in "
                      f"the daily halt 16:00-17:00 CT; {sc['restart_at_17']} of {sc['restarts']} "
                      f"restarts after a pause {at17}; {sc['stop_at_16']} of {sc['stops']} "
                      f"stops end at 16:00 CT{at16} (the others are early closes or halts); "
                      f"{sc['weekly_sunday_17']} of {sc['weekly']} weekly opens at Sunday 17:00 CT")
            raw = next(h for h in hyps if h["tz"] == best["tz"] and h["label"] == "open")["score"]
            if (not trades and raw["restart_mode"] is not None and raw["stop_mode"] is not None
                    and sc["halt_rows"] <= 0.01 * sc["rows"]):
                ev.append(f"as written (read in {best['tz'] or 'their own offsets'}), the first stamp "
                          f"after a pause is mostly {_hm(raw['restart_mode'])} CT and the last before "
                          f"one {_hm(raw['stop_mode'])} CT: bars of 17:00-16:00 stamped at their "
                          f"{'close' if best['label'] == 'close' else 'open'}")
            ev += _busiest_and_same(sc, step, trades, same, best["tz"])
            halt_share = sc["halt_rows"] / max(sc["rows"], 1)
            margin = (runner["score"]["halt_rows"] - sc["halt_rows"]) if runner else 0
            decided = halt_share <= 0.01 and sc["restarts"] >= 1
            shown = _shown(distinct, best)
            for h in shown:
                s2 = h["score"]
                share = s2["halt_rows"] / max(s2["rows"], 1)
                why = (f"puts {s2['halt_rows']:,} bars ({share:.1%} of rows, "
                       f"{s2['halt_volume_share']:.1%} of volume) in the daily halt")
                if h["tz"] == best["tz"] and s2["busiest"]:
                    why += f"; busiest bar at {_hm(s2['busiest'][0])} CT"
                if s2["invalid"]:
                    why += f"; {s2['invalid']} times do not exist in that zone"
                head = f"tz={h['tz']}, " if h["tz"] is not None else ""
                verdict = "rejected" if decided else "also possible"
                what = (head + ("" if trades else f"label={h['label']}")).rstrip(", ")
                ev.append(f"{verdict} {what}: {why}")
            if halt_share > 0.01:
                ev.append(f"ambiguous: every reading puts at least {halt_share:.1%} of bars in the "
                          "16:00-17:00 CT halt (no daily halt visible): these do not look like CME "
                          "Globex hours; time zone and label cannot be told")
            elif sc["restarts"] == 0:
                ev.append("ambiguous: no pause in trading is visible (too few rows): time zone and "
                          "label cannot be told")
            elif sc["restarts"] < _MIN_RESTARTS:
                ev.append(f"ambiguous: only {sc['restarts']} daily pause(s) visible (too few rows): "
                          "the best reading is a guess")
                tz, label = best["tz"], best["label"]
            elif margin < max(2, sc["restarts"] // 2):
                ev.append(f"ambiguous: the next reading (tz={runner['tz'] if runner else None}, "
                          f"label={runner['label'] if runner else None}) is almost as good")
                tz, label = best["tz"], best["label"]
            else:
                tz, label = best["tz"], best["label"]
                ok = sc["restart_at_17"] >= 0.8 * sc["restarts"] and sc["busiest_ok"]
                confidence = "high" if ok else "medium"
            chosen, bounds = label is not None, None
        if chosen:
            if user_tz is not None and naive and str(user_tz) != tz:
                ev.append(f"you passed tz={user_tz!r}, but the data says {tz!r}")
            if user_label is not None and user_label != label:
                ev.append(f"you passed label={user_label!r}, but the data says {label!r}")
            opens = best["opens"][best["valid"]]
            hours, gaps, hev = _hours_and_gaps(opens, step, TRADES_SLACK_MIN if trades else 0, bounds)
            if span is not None:
                hours = day_hours(hours, opens, step, tz if naive else None, trades)
                hev += [] if trades else [rth_kept(opens)]
            ev += hev
            stray = best["score"]["saturday_rows"]
    elif n == 0:
        ev.append("ambiguous: no rows")
    if dbn_bars and not naive:  # stamps, label and interval are the format's: nothing left to guess
        label, confidence = "open", "high"
    rk: Dict[str, Any] = dict(kw)
    if naive and tz is not None:
        rk["tz"] = tz
    if trades:  # instants: the minutes' label and interval are not the file's
        label = step = None
    if label is not None:
        rk["label"] = label
    if step is not None:
        secs = step / _NS
        rk["interval"] = int(secs) if secs == int(secs) else secs
    return Inspection(source=name, rows=n, tz=tz if naive else None, label=label,
                      interval=None if step is None else step / _NS, tick_size=tick,
                      confidence=confidence, read_kwargs=rk,
                      cli_args=(["--kind", "trades"] if trades else []) + _cli_args(rk), kind="trades" if trades else "bars",
                      evidence=ev, naive=naive, hours=hours, gaps=gaps,
                      duplicated_rows=dup_rows, duplicated_timestamps=dup_ts,
                      unsorted_rows=unsorted, stray_rows=stray, alternatives=alternatives,
                      tz_choices=list(CANDIDATE_ZONES) if naive and tz is None and not legacy else [])


def _busiest_and_same(sc: Dict[str, Any], step: int, trades: bool, same: List[Dict[str, Any]], tz: Optional[str],
                      note: str = "") -> List[str]:
    """The evidence lines of the busiest minutes of day, and of the zones giving the winner's stamps."""
    ev = []
    if sc["busiest"]:
        last = _CASH_CLOSE - step // (60 * _NS)
        names = {_RTH_OPEN: " (the 08:30 CT RTH open)", last: " (closes at the 15:00 CT cash close)"}
        ev.append(("busiest minutes (mean volume of their trades) at " if trades else "busiest bars (mean volume) open at ")
                  + ", ".join(f"{_hm(m)} CT{names.get(m, '')}" for m in sc["busiest"]) + note)
    for h in same:
        ev.append(f"tz={h['tz']} gives the same stamps on this span (no difference in its "
                  f"UTC offset rules here); {tz} preferred")
    return ev


def _duplicates(bars: Any, trades: bool) -> Tuple[int, int]:
    """(rows repeating the previous row's timestamp, rows that are exact duplicates of another row)
    of the bars, or of the trades (timestamp, price, volume) of a _MinuteBars."""
    if trades:
        src = bars.trades
        t = np.asarray(src.timestamp, dtype=np.int64)
        values = [src.price, src.volume]
    else:
        t = np.asarray(bars.timestamp, dtype=np.int64)
        values = [bars.open, bars.high, bars.low, bars.close, bars.volume]
    if not t.size:
        return 0, 0
    cols = np.stack([t.astype(np.float64)] + [np.asarray(v, dtype=np.float64) for v in values], axis=1)
    return int(np.count_nonzero(np.diff(t) == 0)), int(t.size - np.unique(cols, axis=0).shape[0])


_FLAGS = {"tz": "--tz", "label": "--label", "interval": "--interval", "format": "--format",
          "time_format": "--time-format", "time_unit": "--time-unit", "sep": "--sep",
          "ambiguous": "--ambiguous", "nonexistent": "--nonexistent", "instrument": "--instrument"}


def _cli_args(rk: Dict[str, Any]) -> List[str]:
    out: List[str] = []
    for k in ("tz", "label", "interval", "format", "columns", "time_format", "time_unit", "sep",
              "ambiguous", "nonexistent", "instrument"):
        if k not in rk or rk[k] is None:
            continue
        v = rk[k]
        if k == "columns":
            v = ",".join(f"{f}={'+'.join(c) if isinstance(c, tuple) else c}" for f, c in v.items())
            out += ["--columns", v]
        else:
            out += [_FLAGS[k], f"{v:g}" if isinstance(v, float) else str(v)]
    return out
