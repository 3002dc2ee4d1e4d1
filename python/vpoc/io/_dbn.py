"""Databento DBN files read into the validated columns of read_trades / read_bars (needs databento-dbn).

Contract: one instrument per result: files holding several raise ValueError naming each one (id,
symbol, rows) unless ``instrument=`` picks one; a bad record (undefined price or time, unknown side)
raises ValueError naming the file and record; prices are the nearest float64 of the 1e-9 integers.

Rules (docs in vpoc.io._read and README):

* Schemas: read_trades reads ``trades`` and the trade records (action 'T') of ``tbbo`` / ``mbp-1``;
  read_bars reads ``ohlcv-1s`` / ``-1m`` / ``-1h`` / ``-1d`` (``ts_event`` is the bar's open:
  https://databento.com/docs/schemas/ohlcv, so ``Bars.label`` is "open" and ``Bars.interval`` the
  schema's). Files of the ``definition`` schema may join a list to give the definitions; any other
  schema, or data records of two kinds, is refused naming the file and the schema found. Status,
  statistics, imbalance, error and system records are not trades or bars and are skipped.
* ``side`` (https://databento.com/docs/schemas/trades): 'B' a buy aggressor -> +1, 'A' a sell
  aggressor -> -1, 'N' none -> 0 (vpoc._side).
* Instruments: a file of one instrument_id is read whole. Several: read whole only when they are the
  successive contracts of the one symbol the file was requested for (a continuous symbol such as
  ES.c.0: each record maps to it on its date through the metadata's symbology); otherwise ValueError
  unless ``instrument=`` gives an instrument_id (int) or a symbol (str: a definition's raw symbol, a
  symbol mapping's, or a symbol the metadata maps on each record's date, by dbn's rule: the UTC date
  of ts_recv for trades, of ts_event for bars; digits no symbol matches, such as "7", are the
  instrument_id 7). A selection whose instruments trade at the same time
  (not one after another) is refused too.
* ``symbol``: the symbol asked for, else the instrument's definition (raw symbol), else the symbol the
  metadata maps to it. ``tick_size``: the definitions' ``min_price_increment`` (the same for every
  instrument read, else ValueError); None without definitions, and None with a GuessedDefaultWarning
  when the definitions give none usable (0 or UNDEF_PRICE).
* Order. Databento writes the records of a file in the order of their index timestamp: ``ts_recv`` (the
  capture server's) for trade and MBP records, ``ts_event`` for OHLCV bars, which have no ts_recv
  (databento/dbn, rust/dbn/src/record/traits.rs, ``Record::raw_index_ts``: "This timestamp should be
  used for sorting records"; rust/dbn/src/record.rs marks ``ts_recv`` of TradeMsg / Mbp1Msg
  ``#[dbn(index_ts)]``). So trades in a file may step back in ``ts_event`` (the matching engine's
  time) while ``ts_recv`` does not: read_trades refuses a file, or a list of files, whose ``ts_recv``
  steps back (not in Databento's order: corrupt, or files given out of order), and returns the trades
  sorted by ``ts_event`` (stable: equal times keep the file order), the time a session, a bar or a
  developing series is read in; the trades that were moved are counted in a
  ``ReorderedRecordsWarning`` (how many, how far back at most). read_bars refuses bars whose
  ``ts_event`` steps back.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import os
import warnings
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np

from .._optional import require
from .._side import aggressor_side
from .._warnings import DroppedRowsWarning, GuessedDefaultWarning, user_stacklevel
from ._columns import _check_order, _validate
from ._dbn_file import (OHLCV_SECONDS, RTYPE_NAMES, TRADE_RTYPES, UNDEF_PRICE, UNDEF_TIMESTAMP,
                        DbnFile)
from ._options import _iso, _Options, _Where

__all__ = ["ReorderedRecordsWarning", "read_dbn", "prices_from_units", "peek_kind", "schema_kind"]

_TRADE_SCHEMAS = ("trades", "tbbo", "mbp-1")
_BAR_SCHEMAS = ("ohlcv-1s", "ohlcv-1m", "ohlcv-1h", "ohlcv-1d")
_SCHEMA_RTYPE = {"ohlcv-1s": 0x20, "ohlcv-1m": 0x21, "ohlcv-1h": 0x22, "ohlcv-1d": 0x23}
_DAY_NS = 86_400 * 10**9
_EXACT = 2**53  # |units| up to this are exact in float64, so one division rounds once
_EPOCH = _dt.date(1970, 1, 1)


class ReorderedRecordsWarning(UserWarning):
    """read_trades of a DBN file sorted its trades by ``ts_event``: Databento writes them in ``ts_recv``
    order, in which ``ts_event`` may step back (the message counts the trades moved and the largest
    step back)."""


def prices_from_units(units: np.ndarray) -> np.ndarray:
    """int64 prices in units of 1e-9 as the nearest float64 of ``units / 10**9``.

    Up to 2**53 units the int64 -> float64 conversion is exact and IEEE division rounds once, to
    the nearest; beyond (prices above ~9,007,199) Python's int / int, which is correctly rounded.
    """
    units = np.asarray(units, dtype=np.int64)
    out = units.astype(np.float64) / 1e9
    if units.size and (units.max() > _EXACT or units.min() < -_EXACT):
        big = (units > _EXACT) | (units < -_EXACT)
        out[big] = [u / 10**9 for u in units[big].tolist()]
    return out


def _distinct(ids: np.ndarray) -> Set[int]:
    """The distinct values of ``ids`` (one compare for the usual file of one instrument)."""
    if ids.size == 0:
        return set()
    if bool((ids == ids[0]).all()):
        return {int(ids[0])}
    return set(np.unique(ids).tolist())


class _RecordWhere(_Where):
    """Row i of the result named by its record number in the file (from 0)."""

    def __init__(self, source: str, index: np.ndarray) -> None:
        super().__init__(source)
        self.index = index

    def __call__(self, i: int) -> str:
        return f"{self.source} record {int(self.index[i])}"


class _Part:
    """The data records of one file, with each record's names and index date."""

    def __init__(self, f: DbnFile, recs: np.ndarray, index: np.ndarray, trades: bool) -> None:
        self.file, self.recs, self.index, self.trades = f, recs, index, trades
        self.ids = recs["instrument_id"].astype(np.int64)
        self.intervals = _intervals(f)
        self._day: Optional[np.ndarray] = None

    def mapped(self, symbol: str) -> np.ndarray:
        """Records the metadata maps to ``symbol`` on their date."""
        hit = np.zeros(len(self.ids), dtype=bool)
        for name, iid, d0, d1 in self.intervals:
            if name == symbol:
                if self._day is None:  # the UTC date of dbn's index timestamp
                    ts = self.recs["ts_recv"] if self.trades else self.recs["ts_event"]
                    self._day = (ts // np.uint64(_DAY_NS)).astype(np.int64)
                hit |= (self.ids == iid) & (self._day >= d0) & (self._day < d1)
        return hit


def _intervals(f: DbnFile) -> List[Tuple[str, int, int, int]]:
    """The metadata's symbology as (symbol, instrument_id, first day, end day) (days since the
    epoch, the end excluded), as dbn's TsSymbolMap reads it."""
    meta = f.meta
    out = []
    inverse = str(meta.stype_out) != "instrument_id"
    if inverse and (meta.stype_in is None or str(meta.stype_in) != "instrument_id"):
        return out
    for key, intervals in (meta.mappings or {}).items():
        for iv in intervals:
            name, iid = (iv["symbol"], key) if inverse else (key, iv["symbol"])
            try:
                iid = int(iid)
            except (TypeError, ValueError):
                continue  # an unresolved symbol (empty), as dbn skips it
            if name:
                out.append((name, iid, (iv["start_date"] - _EPOCH).days,
                            (iv["end_date"] - _EPOCH).days))
    return out


def read_dbn(objs: Sequence[Any], opts: _Options) -> Tuple[Dict[str, np.ndarray], str,
                                                            Dict[str, Any]]:
    """(columns, source name, {"symbol", "tick_size"[, "interval"]}) of DBN files read as one
    instrument's trades (``"price" in opts.fields``) or bars."""
    dbn = require("databento_dbn", "reading DBN files", "databento")
    trades = "price" in opts.fields
    for name, given in (("columns", opts.columns), ("sep", opts.sep),
                        ("time_format", opts.time_format), ("time_unit", opts.time_unit)):
        if given:
            raise ValueError(f"{name}= does not apply to DBN files (their fields and UTC "
                             "nanosecond timestamps are fixed)")
    files = [DbnFile(obj, dbn) for obj in objs]
    for f in files:
        if f.tail:
            _cut_short(f, opts.unterminated)
    names = [f.name for f in files]
    source = names[0] if len(names) == 1 else f"{names[0]} .. {names[-1]} ({len(names)} files)"
    parts, interval = [], None
    for f in files:
        kind, step = _kind(f, trades)
        if kind is None:
            continue
        if step is not None:
            if interval is not None and step != interval:
                raise ValueError(f"{f.name}: bars of {step} s after bars of {interval} s in "
                                 "another file; read each bar interval on its own")
            interval = step
        recs, index = f.records(kind, TRADE_RTYPES[kind[0]] if trades else 56, trades)
        if trades and kind == (0x01,):
            keep = recs["action"] == b"T"  # mbp-1: book updates are not trades
            recs, index = recs[keep], index[keep]
        parts.append(_Part(f, recs, index, trades))
    if not parts:
        what = "trades" if trades else "bars"
        raise ValueError(f"{source}: holds instrument definitions only, no {what}; give them "
                         f"in a list with the file of {what}")
    static = _static_names(files, dbn)
    keep, symbol, ids = _select(parts, static, opts.instrument, source, trades)
    tick = _tick_size(files, ids, dbn)
    cols = _combine_parts(parts, keep, trades, opts)
    meta: Dict[str, Any] = {"symbol": symbol, "tick_size": tick}
    if not trades:
        meta["interval"] = interval
    return cols, source, meta


def _cut_short(f: DbnFile, unterminated: str) -> None:
    """The bytes after the last whole record (a truncated file, or one still being written), by
    the rule of a text file's unterminated last line: "drop" warns, "raise" and "keep" raise."""
    pos = len(f.data) - f.tail
    what = (f"{f.name}: the file ends {f.tail} bytes into record {f.count} (byte {pos}), which "
            f"says it is {f.data[pos] * 4} bytes long: the file is truncated or still being "
            "written")
    if unterminated == "drop":
        share = 100.0 / (f.count + 1)
        warnings.warn(f"{what}; left out that record (1 of {f.count + 1}, {share:.3g}%); pass "
                      "unterminated='raise' to refuse such files", DroppedRowsWarning,
                      stacklevel=user_stacklevel())
        return
    hint = ("pass unterminated='drop' to read the whole records" if unterminated == "raise" else
            "unterminated='keep' cannot keep part of a record; pass unterminated='drop'")
    raise ValueError(f"{what}; {hint}")


def _kind(f: DbnFile, trades: bool) -> Tuple[Optional[Tuple[int, ...]], Optional[int]]:
    """The data rtype this call reads from ``f`` (None for a definitions file) and, for bars, the
    interval in seconds; ValueError for a schema or records the call does not read."""
    call, accepted = ("read_trades", _TRADE_SCHEMAS) if trades else ("read_bars", _BAR_SCHEMAS)
    other = "read_bars reads ohlcv-*" if trades else "read_trades reads trades, tbbo, mbp-1"
    if f.schema is not None and f.schema != "definition" and f.schema not in accepted:
        raise _other_kind(f"{f.name}: the DBN schema is {f.schema!r}; {call} reads "
                          f"{', '.join(accepted)} ({other})", schema_kind(f.schema))
    counts = f.rtypes()
    data = {r: c for r, c in counts.items() if r in RTYPE_NAMES and r not in
            (0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18)}
    unknown = sorted(r for r in counts if r not in RTYPE_NAMES)
    if unknown:
        raise ValueError(f"{f.name}: records of unknown rtype {unknown[0]:#04x} (corrupt file, or "
                         f"a DBN record type newer than vpoc knows)")
    wanted = set(TRADE_RTYPES) if trades else set(OHLCV_SECONDS)
    if len(data) > 1 or any(r not in wanted for r in data):
        found = ", ".join(f"{RTYPE_NAMES[r]} ({c:,})" for r, c in sorted(data.items()))
        kind = None if len(data) > 1 else ("trades" if next(iter(data)) in TRADE_RTYPES else
                                           "bars" if next(iter(data)) in OHLCV_SECONDS else None)
        raise _other_kind(f"{f.name}: holds records of {found}; {call} reads one of "
                          f"{', '.join(accepted)} ({other})", kind)
    if not data:  # no records (or definitions only): nothing to read, no interval to claim
        if f.schema == "definition":
            return None, None
        if trades:
            return ((0x00,) if f.schema == "trades" else (0x01,)), None
        rtype = _SCHEMA_RTYPE.get(f.schema or "")
        return ((0x20,), None) if rtype is None else ((rtype,), OHLCV_SECONDS[rtype])
    rtype = next(iter(data))
    if trades:
        return (rtype,), None
    step = OHLCV_SECONDS[rtype]
    if step is None:  # DBN v1's ohlcv rtype: the interval is the schema's
        if f.schema not in _SCHEMA_RTYPE:
            raise ValueError(f"{f.name}: OHLCV records of the deprecated rtype 0x11 and no "
                             "ohlcv schema in the metadata: the bar interval is unknown")
        step = OHLCV_SECONDS[_SCHEMA_RTYPE[f.schema]]
    return (rtype,), step


def schema_kind(schema: Optional[str]) -> Optional[str]:
    """"trades" for a DBN schema read_trades reads, "bars" for one read_bars reads, else None."""
    return "trades" if schema in _TRADE_SCHEMAS else "bars" if schema in _BAR_SCHEMAS else None


def peek_kind(path: Any) -> Optional[str]:
    """"trades" / "bars": what the schema in a DBN file's metadata says it holds, from the file's head
    only (the CLI picks its reader by it); None for another schema, none named, or a file that cannot
    be read so (the reader then says why)."""
    try:
        dbn = importlib.import_module("databento_dbn")
        with open(os.fspath(path), "rb") as fh:
            zstd = fh.read(4) == b"\x28\xb5\x2f\xfd"
            fh.seek(0)
            if zstd:
                fh = importlib.import_module("pyarrow").CompressedInputStream(fh, "zstd")
            head = fh.read(8)
            if head[:3] != b"DBN":
                return None
            meta = dbn.Metadata.decode(head + fh.read(int.from_bytes(head[4:8], "little")))
        return schema_kind(None if meta.schema is None else str(meta.schema))
    except Exception:  # not installed, unreadable, corrupt: the reader reports it
        return None


def _other_kind(message: str, kind: Optional[str]) -> ValueError:
    """The refusal of a DBN file the other reader reads: ``dbn_kind`` ("trades" / "bars", None when
    neither) lets vpoc.io.inspect and the CLI read it as what its schema says."""
    e = ValueError(message)
    e.dbn_kind = kind  # type: ignore[attr-defined]
    return e


def _static_names(files: Sequence[DbnFile], dbn: Any) -> Dict[int, Set[str]]:
    """The names each instrument_id has in the definitions and symbol mappings of every file."""
    out: Dict[int, Set[str]] = {}
    for f in files:
        for r in f.definitions(dbn):
            names = out.setdefault(int(r.instrument_id), set())
            for attr in ("raw_symbol", "stype_in_symbol", "stype_out_symbol"):
                value = getattr(r, attr, None)
                if isinstance(value, str) and value:
                    names.add(value)
    return out


def _raw_symbols(files: Sequence[DbnFile], dbn: Any) -> Dict[int, List[Tuple[str, int]]]:
    """instrument_id -> [(raw symbol, min_price_increment units)] of its definitions."""
    out: Dict[int, List[Tuple[str, int]]] = {}
    for f in files:
        for r in f.definitions(dbn):
            if hasattr(r, "min_price_increment"):
                out.setdefault(int(r.instrument_id), []).append(
                    (str(r.raw_symbol), int(r.min_price_increment)))
    return out


def _describe(parts: Sequence[_Part], static: Dict[int, Set[str]]) -> str:
    ids, counts = np.unique(np.concatenate([p.ids for p in parts]), return_counts=True)
    items = []
    for iid, c in zip(ids.tolist(), counts.tolist()):
        names = set(static.get(iid, set()))
        for p in parts:
            names |= {n for n, i, _, _ in p.intervals if i == iid}
        label = f" ({', '.join(sorted(names))})" if names else ""
        items.append(f"{iid}{label}: {c:,} rows")
    return "; ".join(items)


def _select(parts: Sequence[_Part], static: Dict[int, Set[str]], instrument: Any, source: str,
            trades: bool) -> Tuple[List[np.ndarray], Optional[str], Set[int]]:
    """Per part the records kept, the result's symbol and the instrument_ids kept."""
    all_ids = set().union(*(_distinct(p.ids) for p in parts))
    if instrument is None:
        keep = [np.ones(len(p.ids), dtype=bool) for p in parts]
        if not all_ids and len(static) == 1:  # no rows: the one instrument defined
            all_ids = set(static)
        if len(all_ids) <= 1:
            return keep, _name_of(all_ids, parts, static), all_ids
        asked = {s for p in parts for s in (p.file.meta.symbols or [])}
        if len(asked) == 1:
            only = next(iter(asked))
            if all(p.mapped(only).all() for p in parts):
                _one_after_another(parts, keep, f"the symbol {only!r}", source)
                return keep, only, all_ids
        raise ValueError(f"{source}: {len(all_ids)} instruments (instrument_id (symbols): rows): "
                         f"{_describe(parts, static)}; pass instrument=<instrument_id or symbol> "
                         "to read one")
    if isinstance(instrument, str):
        named = {i for i, names in static.items() if instrument in names}
        keep = [p.mapped(instrument) | np.isin(p.ids, list(named)) for p in parts]
        if (instrument.isascii() and instrument.isdigit() and int(instrument) < 2**32 and not named
                and not any(k.any() for k in keep)):
            instrument = int(instrument)  # no symbol "7": the instrument_id 7 as text (a CLI or config value)
    if not isinstance(instrument, str):
        keep = [p.ids == instrument for p in parts]
    kept = set().union(*(_distinct(p.ids[k]) for p, k in zip(parts, keep)))
    if not all_ids:  # no rows at all (a quiet day): nothing to choose from, 0 rows
        ids = {i for i, names in static.items() if instrument in names or i == instrument}
        return keep, instrument if isinstance(instrument, str) else _name_of(ids, parts, static), ids
    if not kept:
        raise ValueError(f"{source}: no {'trades' if trades else 'bars'} of instrument="
                         f"{instrument!r}; the file(s) hold {_describe(parts, static) or 'none'}")
    if len(kept) > 1:
        _one_after_another(parts, keep, f"instrument={instrument!r}", source)
    symbol = instrument if isinstance(instrument, str) else _name_of(kept, parts, static)
    return keep, symbol, kept


def _one_after_another(parts: Sequence[_Part], keep: Sequence[np.ndarray], what: str,
                       source: str) -> None:
    """Several instruments read as one series must follow one another (a roll), not interleave."""
    ids = np.concatenate([p.ids[k] for p, k in zip(parts, keep)])
    changes = int(np.count_nonzero(ids[1:] != ids[:-1])) if ids.size else 0
    distinct = np.unique(ids)
    if changes > distinct.size - 1:
        raise ValueError(f"{source}: {what} selects instruments {', '.join(map(str, distinct))}, "
                         "which trade at the same time, not one after another; pass "
                         "instrument=<instrument_id> to read one")


def _name_of(ids: Set[int], parts: Sequence[_Part], static: Dict[int, Set[str]]) -> Optional[str]:
    """One instrument's symbol: its definition's raw symbol, else its one mapped symbol."""
    if len(ids) != 1:
        return None
    iid = next(iter(ids))
    names = sorted(static.get(iid, set()))
    if len(names) == 1:
        return names[0]
    mapped = sorted({n for p in parts for n, i, _, _ in p.intervals if i == iid})
    return mapped[0] if len(mapped) == 1 else None


def _tick_size(files: Sequence[DbnFile], ids: Set[int], dbn: Any) -> Optional[float]:
    defs = _raw_symbols(files, dbn)
    ticks = {(iid, units) for iid in ids for _, units in defs.get(iid, [])
             if units != UNDEF_PRICE and units > 0}
    values = {units for _, units in ticks}
    unusable = sorted({(iid, units) for iid in ids for _, units in defs.get(iid, [])} - ticks)
    if unusable and not values:
        listing = ", ".join(f"{iid}: {'UNDEF_PRICE' if u == UNDEF_PRICE else u}" for iid, u in unusable)
        warnings.warn(f"the instrument definitions give no usable tick size (min_price_increment {listing}): "
                      "tick_size is None, not taken from them; pass tick_size= to the profile call",
                      GuessedDefaultWarning, stacklevel=user_stacklevel())
    if len(values) > 1:
        listing = ", ".join(f"{iid}: {prices_from_units(np.array([u]))[0]:g}"
                            for iid, u in sorted(ticks))
        raise ValueError(f"the instrument definitions give several tick sizes "
                         f"(min_price_increment) for the instruments read: {listing}")
    return float(prices_from_units(np.array([values.pop()]))[0]) if values else None


def _combine_parts(parts: Sequence[_Part], keep: Sequence[np.ndarray], trades: bool,
                   opts: _Options) -> Dict[str, np.ndarray]:
    """The columns of the records kept, file after file. The order check reads each file's index
    timestamp (module docstring, "Order"): ``ts_recv`` for trades, which are then sorted by
    ``ts_event``; ``ts_event`` for bars."""
    fields = opts.fields + (("side",) if trades else ())
    out: Dict[str, List[np.ndarray]] = {f: [] for f in fields}
    prev: Optional[Tuple[str, int]] = None
    for p, k in zip(parts, keep):
        every = bool(k.all())
        recs = p.recs if every else p.recs[k]
        where = _RecordWhere(p.file.name, p.index if every else p.index[k])
        cols = _convert(recs, where, trades)
        _validate(cols, where, opts)
        index_ts, label = (_recv_times(recs), "timestamp (ts_recv)") if trades else (cols["timestamp"], "timestamp")
        if trades:
            _check_recv_order(index_ts, where)
        else:
            _check_order(index_ts, where)
        defined = np.flatnonzero(index_ts >= 0)
        if prev is not None and defined.size and index_ts[defined[0]] < prev[1]:
            i = int(defined[0])
            raise ValueError(f"{where(i)}: {label} {_iso(index_ts[i])} is before the last row of {prev[0]} "
                             f"({_iso(prev[1])}); give the files in time order")
        if defined.size:
            prev = (p.file.name, int(index_ts[defined[-1]]))
        for f in fields:
            out[f].append(cols[f])
    cols = {f: v[0] if len(v) == 1 else np.concatenate(v) for f, v in out.items()}
    return _by_event_time(cols, parts) if trades else cols


def _span(ns: int) -> str:
    """A duration in ns as text in its unit: 750 ns, 12.5 us, 3.2 ms, 1.5 s."""
    for unit, size in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns >= size:
            return f"{ns / size:.3g} {unit}"
    return f"{ns} ns"


def _recv_times(recs: np.ndarray) -> np.ndarray:
    """``ts_recv`` as int64 ns; -1 where undefined (UNDEF_TIMESTAMP, or past int64)."""
    recv = recs["ts_recv"]
    out = recv.astype(np.int64)
    out[recv > np.uint64(np.iinfo(np.int64).max)] = -1
    return out


def _check_recv_order(recv: np.ndarray, where: _RecordWhere) -> None:
    """Trade records in Databento's order: ``ts_recv`` never steps back (undefined ones skipped)."""
    at = np.flatnonzero(recv >= 0)
    if at.size > 1:
        t = recv[at]
        back = np.flatnonzero(t[1:] < t[:-1])
        if back.size:
            i, j = int(at[back[0] + 1]), int(at[back[0]])
            raise ValueError(f"{where(i)}: timestamp (ts_recv) {_iso(recv[i])} is before the previous row's "
                             f"{_iso(recv[j])}: Databento writes records in ts_recv order, and this file is not "
                             "(rows must be in time order)")


def _by_event_time(cols: Dict[str, np.ndarray], parts: Sequence[_Part]) -> Dict[str, np.ndarray]:
    """Trades in ``ts_event`` order: a stable sort (equal times keep the file order), reported by a
    ``ReorderedRecordsWarning`` counting the trades that came after a later ``ts_event`` in the file
    and the largest step back. Nothing is moved (and nothing said) when they are in order."""
    ts = cols["timestamp"]
    if ts.size < 2 or not bool((ts[1:] < ts[:-1]).any()):
        return cols
    before = np.maximum.accumulate(ts)[:-1]  # the latest ts_event before each trade
    late = ts[1:] < before
    count, lag = int(late.sum()), int((before - ts[1:])[late].max())
    order = np.argsort(ts, kind="stable")
    names = parts[0].file.name if len(parts) == 1 else f"{parts[0].file.name} .. {parts[-1].file.name}"
    warnings.warn(f"{names}: {count} of {ts.size} trades ({100.0 * count / ts.size:.3g}%) have a ts_event before "
                  f"that of a trade ahead of them in the file (by up to {_span(lag)}): Databento writes "
                  "trades in ts_recv order, in which ts_event may step back; sorted by ts_event (equal times "
                  "keep the file order)", ReorderedRecordsWarning, stacklevel=user_stacklevel())
    return {f: x[order] for f, x in cols.items()}


def _convert(recs: np.ndarray, where: _RecordWhere, trades: bool) -> Dict[str, np.ndarray]:
    ts = recs["ts_event"]
    bad = np.flatnonzero(ts > np.uint64(np.iinfo(np.int64).max))
    if bad.size:
        i = int(bad[0])
        what = "undefined (UNDEF_TIMESTAMP)" if ts[i] == UNDEF_TIMESTAMP else f"{int(ts[i])}"
        raise ValueError(f"{where(i)}: ts_event is {what}")
    out: Dict[str, np.ndarray] = {"timestamp": ts.astype(np.int64)}
    for f in ("price",) if trades else ("open", "high", "low", "close"):
        units = recs[f]
        bad = np.flatnonzero(units == UNDEF_PRICE)
        if bad.size:
            raise ValueError(f"{where(int(bad[0]))}: {f} is undefined (UNDEF_PRICE, "
                             f"{UNDEF_PRICE}): the record has no price")
        out[f] = prices_from_units(units)
    if trades:
        out["volume"] = recs["size"].astype(np.int64)
        out["side"] = aggressor_side(recs["side"].view("S1"), "side", where)
    else:
        vol = recs["volume"]
        bad = np.flatnonzero(vol > np.uint64(np.iinfo(np.int64).max))
        if bad.size:
            raise ValueError(f"{where(int(bad[0]))}: volume {int(vol[bad[0]])} does not fit in "
                             "int64")
        out["volume"] = vol.astype(np.int64)
    return out
