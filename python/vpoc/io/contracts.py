"""One continuous bar series from per-contract files: the contract of each trade date, and rolls.

Contract: ``read_contracts(...)`` returns ``ContinuousBars`` (Bars + per-row ``contract`` + a
``rolls`` ledger); contracts switch only between Globex trade dates; overlap is dropped and counted.

Rules (see docs/inspect.md):

* Contract names: from the file name up to its first dot (``"ES 03-25.Last.txt"`` ->
  ``"ES 03-25"``), the keys of a dict ``{name: path_or_frame}``, or a ``contract`` / ``symbol``
  column. The expiry month is read from ``"ES 03-25"`` (MM-YY) or ``"ESH5"`` / ``"ESH25"`` (CME
  month code); contracts are ordered by expiry (by first timestamp when a name has none).
* Trade dates: ``vpoc.sessions.globex`` labels of the bars' open times; a row outside every Globex
  session (halt, weekend print) takes the trade date of the next session (it is not dropped here).
* ``roll="volume"``: from the trade date AFTER the first trade date on which the next contract's
  daily volume exceeds the current one's (known only at that day's close: no lookahead; the rule
  of volume-ranked vendor symbols). ``"calendar"``: from the first trade date on or after the CME
  roll date, 8 calendar days before the expiry month's third Friday (the Thursday of the week
  before). A callable gets ``{name: DataFrame}`` (timestamp, OHLCV, trade_date; in expiry order) and
  returns one roll date per switch (the first trade date of the next contract).
* A contract whose data ends before its roll switches early to the next one; trade dates on which
  the chosen contract has no rows while another has are a gap: both warn.
* ``adjust="none"`` (default, as vendors' continuous symbols): prices as traded. ``"spread"``:
  every row before a roll is shifted by ``offset = to_close - from_close`` (the two contracts'
  last closes on the last trade date before the roll that both traded), summed over the later
  rolls: the newest contract is as traded, older ones are back-adjusted onto its level.
  ``"ratio"``: multiplied by ``to_close / from_close`` instead (prices leave the tick grid: pass
  ``snap=True`` to profiles). Applies to open, high, low and close; volume never changes.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import inspect as _pyinspect
import os
import re
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from .._warnings import DroppedRowsWarning, user_stacklevel
from ._containers import Bars

__all__ = ["ContinuousBars", "read_contracts", "contract_name", "contract_expiry", "cme_roll_date"]

_MONTH_CODES = "FGHJKMNQUVXZ"
_MMYY = re.compile(r"^(?P<root>.*?)[\s_-]*(?P<mm>\d{1,2})-(?P<yy>\d{2}|\d{4})$")
_CODE = re.compile(r"^(?P<root>[A-Za-z0-9]*?[A-Za-z])[\s_]*(?P<code>[FGHJKMNQUVXZ])"
                   r"(?P<y>\d{1,2}|\d{4})$")
_ROLLS = ("volume", "calendar")
_ADJUSTS = ("none", "spread", "ratio")
_NAME_COLUMNS = ("contract", "symbol")


@dataclasses.dataclass(frozen=True, repr=False, eq=False)
class ContinuousBars(Bars):
    """Bars of several contracts joined into one series (see :func:`read_contracts`).

    Extra attributes: ``contract`` (str per row), ``trade_date`` (int64 YYYYMMDD per row),
    ``rolls`` (pandas DataFrame, one row per switch: date, from, to, reason, ref_date,
    from_close, to_close, offset = to_close - from_close, ratio = to_close / from_close),
    ``adjust``, ``roll``, ``dropped_rows`` (rows of other contracts left out by the rule),
    ``dropped_by_contract`` ({name: rows}), ``contracts`` (names in expiry order).
    """

    contract: Any = None
    trade_date: Any = None
    rolls: Any = None
    adjust: str = "none"
    roll: str = "volume"
    dropped_rows: int = 0
    dropped_volume: float = 0.0
    dropped_by_contract: Any = None
    contracts: Tuple[str, ...] = ()

    def __repr__(self) -> str:
        return (f"ContinuousBars({len(self)} rows, {len(self.contracts)} contracts, "
                f"{0 if self.rolls is None else len(self.rolls)} rolls, roll={self.roll!r}, "
                f"adjust={self.adjust!r}, {self.dropped_rows} overlapping rows dropped)")

    def to_pandas(self, index: bool = False) -> Any:
        """As :meth:`Bars.to_pandas` plus ``contract`` and ``trade_date`` columns."""
        df = super().to_pandas(index)
        df["contract"] = self.contract
        df["trade_date"] = self.trade_date
        return df


def contract_name(path: Any) -> str:
    """``"ES 03-25.Last.txt"`` -> ``"ES 03-25"``: the file name up to its first dot."""
    base = os.path.basename(os.fspath(path))
    name = base.split(".")[0].strip()
    if not name:
        raise ValueError(f"cannot take a contract name from the file name {base!r}; pass a dict "
                         "{name: path}")
    return name


def contract_expiry(name: str, near_year: Optional[int] = None) -> Optional[Tuple[int, int]]:
    """(year, month) of a contract named like ``"ES 03-25"`` or ``"ESH5"`` / ``"ESH25"``, else
    None. A one-digit year is the year ending in that digit nearest ``near_year`` (the year of
    the contract's first bar; the later one on a tie; default this year)."""
    name = str(name).strip()
    m = _MMYY.match(name)
    if m:
        month, yy = int(m.group("mm")), m.group("yy")
        year = int(yy) if len(yy) == 4 else 2000 + int(yy)
        return (year, month) if 1 <= month <= 12 else None
    m = _CODE.match(name)
    if m:
        month = _MONTH_CODES.index(m.group("code")) + 1
        y = m.group("y")
        if len(y) == 4:
            return int(y), month
        if len(y) == 2:
            return 2000 + int(y), month
        base = near_year if near_year is not None else _dt.date.today().year
        year = base - base % 10 + int(y)
        year = min((year - 10, year, year + 10), key=lambda c: (abs(c - base), -c))
        return year, month
    return None


def cme_roll_date(year: int, month: int) -> _dt.date:
    """The CME equity-index roll date: 8 calendar days before the expiry month's third Friday."""
    first = _dt.date(year, month, 1)
    third_friday = first + _dt.timedelta(days=(4 - first.weekday()) % 7 + 14)
    return third_friday - _dt.timedelta(days=8)


def _yyyymmdd(x: Any, name: str) -> int:
    """A roll date (int YYYYMMDD, 'YYYY-MM-DD', date, datetime, pandas Timestamp) as YYYYMMDD."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 19000101 <= x <= 29991231:
        return int(x)
    if isinstance(x, str):
        try:
            x = _dt.date.fromisoformat(x.strip()[:10])
        except ValueError:
            raise ValueError(f"{name} = {x!r} is not a date (YYYY-MM-DD)") from None
    if isinstance(x, np.datetime64):
        x = x.astype("datetime64[D]").item()
    if hasattr(x, "year") and hasattr(x, "month") and hasattr(x, "day"):
        return int(x.year) * 10000 + int(x.month) * 100 + int(x.day)
    raise TypeError(f"{name} must be a date (int YYYYMMDD, 'YYYY-MM-DD', datetime.date), got "
                    f"{type(x).__name__}")


# --------------------------------------------------------------------------- inputs


def _items(obj: Any) -> List[Tuple[Optional[str], Any]]:
    """(name or None, path or frame) per contract."""
    if isinstance(obj, Mapping):
        if not obj:
            raise ValueError("paths_or_frames is empty; give at least one contract")
        out = []
        for k, v in obj.items():
            if not isinstance(k, str) or not k.strip():
                raise TypeError(f"paths_or_frames keys must be contract names (str), got {k!r}")
            out.append((k.strip(), v))
        return out
    if isinstance(obj, (str, os.PathLike)):
        obj = [obj]
    elif hasattr(obj, "columns") and hasattr(obj, "iloc"):
        return _split_frame(obj)
    if not isinstance(obj, (list, tuple)):
        raise TypeError("paths_or_frames must be a list of paths or DataFrames, a dict "
                        f"{{name: path_or_frame}} or one DataFrame with a contract column, got "
                        f"{type(obj).__name__}")
    if not obj:
        raise ValueError("paths_or_frames is empty; give at least one contract")
    out: List[Tuple[Optional[str], Any]] = []
    for k, item in enumerate(obj):
        if isinstance(item, (str, os.PathLike)):
            out.append((contract_name(item), item))
        elif hasattr(item, "columns") and hasattr(item, "iloc"):
            parts = _split_frame(item, f"paths_or_frames[{k}]")
            out.extend(parts)
        else:
            raise TypeError(f"paths_or_frames[{k}] must be a path or a DataFrame, got "
                            f"{type(item).__name__}")
    names = [n for n, _ in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"contract {dup[0]!r} is given more than once; each contract once")
    return out


def _split_frame(df: Any, where: str = "paths_or_frames") -> List[Tuple[Optional[str], Any]]:
    cols = {str(c).strip().lower(): c for c in df.columns}
    col = next((cols[c] for c in _NAME_COLUMNS if c in cols), None)
    if col is None:
        raise ValueError(f"{where}: a DataFrame needs a 'contract' or 'symbol' column to name its "
                         "contract(s), or pass a dict {name: frame}")
    values = df[col].astype(str).str.strip()
    out = []
    for name in dict.fromkeys(values.tolist()):
        part = df.loc[(values == name).to_numpy()].drop(columns=[col])
        out.append((name, part))
    return out


def _read_one(src: Any, kw: Dict[str, Any]) -> Bars:
    from . import read_bars

    if (kw.get("columns") or {}).get("open", "") is None:
        raise ValueError("read_contracts: columns={'open': None} (bars without open prices) is not "
                         "available here: a roll across a gap compares the next contract's first open")
    if hasattr(src, "columns") and hasattr(src, "iloc"):
        cols = {str(c).strip().lower(): c for c in src.columns}
        drop = [cols[c] for c in _NAME_COLUMNS if c in cols]
        if drop:
            src = src.drop(columns=drop)
    params = _pyinspect.signature(read_bars).parameters
    if "label" in params:
        return read_bars(src, **kw)
    from .._time import bar_opens  # read_bars without label=: the one conversion

    rest = {k: v for k, v in kw.items() if k not in ("label", "interval")}
    bars = read_bars(src, **rest)
    opens, _ = bar_opens(bars.timestamp, kw.get("label") or "open", kw.get("interval"))
    return dataclasses.replace(bars, timestamp=opens)


def _trade_dates(t: np.ndarray, calendar: Any) -> np.ndarray:
    """Globex trade date (YYYYMMDD) of every bar open; rows outside every session take the next
    session's (the last one's after the last session)."""
    from .. import sessions as vs

    if t.size == 0:
        return np.zeros(0, dtype=np.int64)
    kw = {} if calendar is _DEFAULT else {"calendar": calendar}
    with warnings.catch_warnings():  # rows outside sessions are kept here, not dropped
        warnings.simplefilter("ignore", DroppedRowsWarning)
        s = vs.globex(t, **kw)
    if s.n_sessions == 0:
        raise ValueError("no bar falls in a Globex session (17:00-16:00 America/Chicago): are the "
                         "timestamps read with the right tz= and label=? (vpoc.io.inspect tells)")
    out = np.empty(t.size, dtype=np.int64)
    mask = s.mask
    out[mask] = s.session_ids
    rest = np.flatnonzero(~mask)
    if rest.size:
        k = np.searchsorted(s.start_ns, t[rest], side="right")
        out[rest] = s.labels[np.minimum(k, s.n_sessions - 1)]
    return out


_DEFAULT = object()


# --------------------------------------------------------------------------- main


def read_contracts(paths_or_frames: Any, roll: Union[str, Callable[..., Any]] = "volume",
                   adjust: str = "none", *, calendar: Any = _DEFAULT,
                   **read_kwargs: Any) -> ContinuousBars:
    """Join per-contract bar files or frames into one continuous series (rules: module docs).

    ``paths_or_frames``: a list of paths (contract = file name up to its first dot), a dict
    ``{name: path_or_frame}``, a list of DataFrames with a ``contract``/``symbol`` column, or one
    DataFrame holding several contracts in such a column. ``roll``: "volume" (default),
    "calendar" or a callable ``f({name: DataFrame}) -> roll dates``. ``adjust``: "none" (default),
    "spread" or "ratio". ``calendar``: the Globex calendar for trade dates (as
    ``vpoc.sessions.globex``). ``read_kwargs`` go to :func:`vpoc.io.read_bars` for every
    contract (``tz=``, ``label=``, ``interval=``, ``columns=``...).
    """
    if not (callable(roll) or roll in _ROLLS):
        raise ValueError(f"roll must be 'volume', 'calendar' or a callable, got {roll!r}")
    if adjust not in _ADJUSTS:
        raise ValueError(f"adjust must be 'none', 'spread' or 'ratio', got {adjust!r}")
    items = _items(paths_or_frames)
    data = []
    for name, src in items:
        bars = _read_one(src, read_kwargs)
        data.append((name, bars, _trade_dates(np.asarray(bars.timestamp), calendar)))
    data = [d for d in data if len(d[1])]
    if not data:
        raise ValueError("every contract is empty")
    expiries = {n: contract_expiry(n, int(np.datetime64(int(b.timestamp[0]), "ns")
                                          .astype("datetime64[Y]").astype(int)) + 1970)
                for n, b, _ in data}
    if all(expiries.values()):
        data.sort(key=lambda d: (expiries[d[0]], int(d[1].timestamp[0])))
    else:
        if roll == "calendar":
            bad = next(n for n, e in expiries.items() if e is None)
            raise ValueError(f"roll='calendar' needs each contract's expiry month: cannot read it "
                             f"from {bad!r} (name contracts like 'ES 03-25' or 'ESH5')")
        data.sort(key=lambda d: int(d[1].timestamp[0]))
    names = [d[0] for d in data]
    dates = np.unique(np.concatenate([d[2] for d in data]))
    K, D = len(data), dates.size
    vol = np.zeros((K, D))
    has = np.zeros((K, D), dtype=bool)
    for k, (_, b, td) in enumerate(data):
        pos = np.searchsorted(dates, td)
        np.add.at(vol[k], pos, np.asarray(b.volume, dtype=np.float64))
        has[k, pos] = True
    rule = roll if isinstance(roll, str) else "callable"
    if rule == "calendar":
        starts = [_yyyymmdd(cme_roll_date(*expiries[n]), "roll date") for n in names[:-1]]
    elif rule == "callable":
        starts = _callable_dates(roll, data, K)
    else:
        starts = None
    active, reasons = _schedule(dates, vol, has, starts, names, rule)
    return _assemble(data, dates, active, reasons, has, adjust, rule)


def _callable_dates(fn: Callable[..., Any], data: List[Any], K: int) -> List[int]:
    frames = {}
    for name, b, td in data:
        df = b.to_pandas()
        df["trade_date"] = td
        frames[name] = df
    got = fn(frames)
    try:
        got = list(got)
    except TypeError:
        raise TypeError(f"roll callable must return a sequence of {K - 1} roll dates, got "
                        f"{type(got).__name__}") from None
    if len(got) != K - 1:
        raise ValueError(f"roll callable returned {len(got)} roll dates for {K} contracts; "
                         f"expected {K - 1} (the first trade date of each next contract)")
    out = [_yyyymmdd(x, f"roll date [{i}]") for i, x in enumerate(got)]
    if any(b < a for a, b in zip(out, out[1:])):
        raise ValueError(f"roll dates must not decrease, got {out}")
    return out


def _schedule(dates: np.ndarray, vol: np.ndarray, has: np.ndarray, starts: Optional[List[int]],
              names: List[str], rule: str) -> Tuple[np.ndarray, Dict[int, str]]:
    """Index of the contract used on each trade date, and why each switch happened."""
    K, D = vol.shape
    last = np.array([int(np.flatnonzero(h)[-1]) if h.any() else -1 for h in has])
    cur = int(np.argmax(has[:, 0]))  # the earliest-expiring contract with rows on the first date
    active = np.empty(D, dtype=np.int64)
    reasons: Dict[int, str] = {}
    pending = False
    for i in range(D):
        target = cur
        if starts is not None:
            while target + 1 < K and dates[i] >= starts[target]:
                target += 1
        elif pending:
            target = cur + 1
        pending = False
        new = target
        while new + 1 < K and last[new] < i:  # the contract has no data left
            new += 1
        if new != cur:
            if new == target:
                reasons[i] = rule
            else:
                gone = new - 1
                reasons[i] = f"{names[gone]} has no rows after {dates[last[gone]]}"
                warnings.warn(f"read_contracts: {names[gone]} ends on trade date "
                              f"{dates[last[gone]]}, before its {rule} roll; switched to "
                              f"{names[new]} on {dates[i]}", UserWarning,
                              stacklevel=user_stacklevel())
            cur = new
        active[i] = cur
        if starts is None and cur + 1 < K and vol[cur + 1, i] > vol[cur, i]:
            pending = True
    return active, reasons


def _assemble(data: List[Any], dates: np.ndarray, active: np.ndarray, reasons: Dict[int, str],
              has: np.ndarray, adjust: str, rule: str) -> ContinuousBars:
    import pandas as pd

    names = [d[0] for d in data]
    K = len(data)
    # price at each roll: last closes of both contracts on the last date before the roll both traded
    factors_add = np.zeros(dates.size)
    factors_mul = np.ones(dates.size)
    ledger = []
    for i in sorted(reasons):
        a, b = int(active[i - 1]), int(active[i])
        both = np.flatnonzero(has[a, :i] & has[b, :i])
        ba, bb = data[a][1], data[b][1]
        if both.size:
            ref = dates[both[-1]]
            ca = float(ba.close[np.flatnonzero(data[a][2] == ref)[-1]])
            cb = float(bb.close[np.flatnonzero(data[b][2] == ref)[-1]])
        else:
            ref = int(dates[i])
            ca = float(ba.close[-1])
            cb = float(bb.open[np.flatnonzero(data[b][2] >= ref)[0]])
            warnings.warn(f"read_contracts: {names[a]} and {names[b]} share no trade date "
                          f"before the roll on {dates[i]} (a gap between contracts); the "
                          f"roll offset compares {names[a]}'s last close with {names[b]}'s "
                          "first open", UserWarning, stacklevel=3)
        off, ratio = cb - ca, (cb / ca if ca != 0 else float("nan"))
        ledger.append({"date": int(dates[i]), "from": names[a], "to": names[b],
                       "reason": reasons[i], "ref_date": int(ref), "from_close": ca,
                       "to_close": cb, "offset": off, "ratio": ratio})
        if adjust == "spread":
            factors_add[:i] += off
        elif adjust == "ratio":
            if not np.isfinite(ratio) or ratio <= 0:
                raise ValueError(f"adjust='ratio' cannot scale by {cb!r}/{ca!r} at the roll from "
                                 f"{names[a]} to {names[b]} on {dates[i]}; use adjust='spread'")
            factors_mul[:i] *= ratio
    parts, gaps = [], []
    dropped_by = {}
    dropped_volume = 0.0
    for k, (name, b, td) in enumerate(data):
        pos = np.searchsorted(dates, td)
        keep = active[pos] == k
        dropped_by[name] = int(np.count_nonzero(~keep))
        dropped_volume += float(np.asarray(b.volume, dtype=np.float64)[~keep].sum())
        rows = np.flatnonzero(keep)
        parts.append((k, rows, pos[rows]))
    for i in range(dates.size):
        if not has[active[i], i] and has[:, i].any():
            gaps.append(int(dates[i]))
    if gaps:
        other = int(sum(np.count_nonzero(data[k][2] == d) for d in gaps for k in range(K)))
        shown = ", ".join(map(str, gaps[:5]))
        warnings.warn(f"read_contracts: on {len(gaps)} trade date(s) ({shown}"
                      f"{', ...' if len(gaps) > 5 else ''}) the chosen contract has no rows while "
                      f"another has ({other} rows left out): a gap in a contract's data",
                      DroppedRowsWarning, stacklevel=3)
    ts = np.concatenate([np.asarray(data[k][1].timestamp)[r] for k, r, _ in parts])
    order = np.argsort(ts, kind="stable")
    cols: Dict[str, Any] = {"timestamp": ts[order]}
    for f in ("open", "high", "low", "close"):
        v = np.concatenate([np.asarray(getattr(data[k][1], f))[r] * factors_mul[p] + factors_add[p]
                            for k, r, p in parts])
        cols[f] = v[order]
    vols = [np.asarray(data[k][1].volume)[r] for k, r, _ in parts]
    kind = np.int64 if all(v.dtype.kind in "iu" for v in vols) else np.float64
    cols["volume"] = np.concatenate([v.astype(kind, copy=False) for v in vols])[order]
    for f in ("buy_volume", "sell_volume"):  # a contract without them: side unknown (0), as read_bars' lists
        if any(getattr(data[k][1], f) is not None for k, _, _ in parts):
            got = [np.zeros(r.size, np.int64) if getattr(data[k][1], f) is None
                   else np.asarray(getattr(data[k][1], f))[r] for k, r, _ in parts]
            kind = np.int64 if all(g.dtype.kind in "iu" for g in got) else np.float64
            cols[f] = np.concatenate([g.astype(kind, copy=False) for g in got])[order]
        else:
            cols[f] = None
    contract = np.concatenate([np.full(r.size, k, dtype=np.int64) for k, r, _ in parts])[order]
    tdate = np.concatenate([dates[p] for _, _, p in parts])[order]
    base = data[0][1]
    extra = {f.name: getattr(base, f.name) for f in dataclasses.fields(Bars)
             if f.name not in cols and f.name != "source"}
    src = f"{names[0]} .. {names[-1]} ({K} contracts)" if K > 1 else names[0]
    return ContinuousBars(**cols, **extra, source=src,
                          contract=np.asarray(names, dtype=object)[contract], trade_date=tdate,
                          rolls=pd.DataFrame(ledger, columns=["date", "from", "to", "reason",
                                                              "ref_date", "from_close", "to_close",
                                                              "offset", "ratio"]),
                          adjust=adjust, roll=rule, dropped_rows=int(sum(dropped_by.values())),
                          dropped_volume=dropped_volume, dropped_by_contract=dropped_by,
                          contracts=tuple(names))
