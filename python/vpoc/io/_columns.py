"""Columns of a table matched to vpoc's fields, converted and validated, for the readers of vpoc.io.

Contract: names match case-insensitively ignoring punctuation, with the aliases listed below; a
missing, ambiguous or duplicated column raises naming it; every value is checked (see ``_validate``).
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import warnings
from dataclasses import replace
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .._errors import input_error
from .._side import aggressor_side
from .._validate import check_rows
from .._warnings import GuessedDefaultWarning, user_stacklevel
from ._options import (_ALIASES, _DATE_NAMES, _TIME_NAMES, _TRADE_VOLUME_ALIASES, _first, _iso,
                       _Options, _Where, no_open)
from ._timestamps import WallNs, _localize, _timestamps

# The optional columns a source may add (trades: side; bars: buy / sell volume), and the volume-like
# fields (integers stay integers).
OPTIONAL = ("side", "buy_volume", "sell_volume")
VOLUMES = ("volume", "buy_volume", "sell_volume")

# Columns whose integers are UTC epoch nanoseconds by the vendor's definition (Databento).
_NS_COLUMNS = ("tsevent",)
# Names of the optional aggressor-side column of trades (normalised).
SIDE_ALIASES = ("side", "aggressorside", "aggressor")
# Names of the optional aggressor-side volume columns of bars (normalised): vpoc's own, and the
# bid/ask volume columns of NinjaTrader / Sierra Chart exports (AskVolume: traded at the ask, a
# buyer lifting the offer; BidVolume: a seller hitting the bid), as Databento's aggressor_side is
# a side column's.
BAR_SIDE_ALIASES: Dict[str, Tuple[str, ...]] = {"buy_volume": ("buyvolume", "askvolume"),
                                               "sell_volume": ("sellvolume", "bidvolume")}

# Words in a column name that say it may hold the aggressor side (an unmapped one is announced).
SIDE_WORDS = ("buy", "sell", "ask", "bid", "aggressor", "side")

__all__ = ["BAR_SIDE_ALIASES", "SIDE_ALIASES", "SIDE_WORDS", "bar_side_names", "recorded_columns", "side_evidence",
           "side_lookalikes"]


# --------------------------------------------------------------------------- column handling


def _norm(name: Any) -> str:
    return re.sub(r"[^0-9a-z]", "", str(name).lower())


def _names(value: Any) -> Tuple[str, ...]:
    return tuple(value) if isinstance(value, tuple) else (value,)


def _resolve(names: Sequence[Any], opts: _Options, source: str) -> Dict[str, Any]:
    """Map each field to a source column (or ``(date, time)`` for the timestamp)."""
    by_norm: Dict[str, List[Any]] = {}
    for n in names:
        by_norm.setdefault(_norm(n), []).append(n)
    out: Dict[str, Any] = {}
    missing: List[str] = []
    listing = ", ".join(repr(str(n)) for n in names)
    for field in opts.fields:
        if field == "open" and no_open(opts):
            continue  # the close column stands in (below)
        if field in opts.columns:
            want = opts.columns[field]
            for w in _names(want):
                if w not in names:
                    raise ValueError(f"{source}: columns[{field!r}] = {w!r} is not a column "
                                     f"(columns: {listing})")
            out[field] = want
            continue
        aliases = _ALIASES[field] if not (field == "volume" and "price" in opts.fields) \
            else _TRADE_VOLUME_ALIASES
        hits = [n for a in aliases for n in by_norm.get(a, [])]
        own = by_norm.get(field, [])
        if len(own) == 1:
            out[field] = own[0]
            continue
        if len(own) > 1 or len(hits) > 1:
            dup = own if len(own) > 1 else hits
            raise ValueError(f"{source}: several columns could be {field!r} "
                             f"({', '.join(repr(str(d)) for d in dup)}); pass columns={{"
                             f"{field!r}: name}}")
        if hits:
            out[field] = hits[0]
            continue
        if field == "timestamp":
            dates = [n for a in _DATE_NAMES for n in by_norm.get(a, [])]
            times = [n for a in _TIME_NAMES for n in by_norm.get(a, [])]
            if len(dates) == 1 and len(times) == 1:
                out[field] = (dates[0], times[0])
                continue
            if len(dates) + len(times) == 1:
                out[field] = (dates + times)[0]
                continue
            out[field] = None  # the DataFrame's DatetimeIndex, if it has one
            continue
        missing.append(field)
    if missing:
        raise _missing(missing, out, by_norm, opts, source, listing)
    if no_open(opts):
        out["open"] = out["close"]
    if "price" in opts.fields:
        out["side"] = _side_column(names, by_norm, opts, source, listing)
    else:
        out.update(zip(BAR_SIDE_ALIASES, _bar_sides(names, by_norm, opts.columns, source, listing)))
    _warn_side_lookalikes(names, out, opts, source)
    seen = _RESOLVED.get()
    if seen is not None:  # vpoc.io.inspect: which columns were read (its side evidence)
        seen.append((list(names), dict(out), "price" in opts.fields))
    return out


#: set by recorded_columns(): each _resolve call's (column names, field -> column, trades?)
_RESOLVED: "contextvars.ContextVar[Optional[list]]" = contextvars.ContextVar("vpoc_io_resolved", default=None)


@contextlib.contextmanager
def recorded_columns() -> Iterator[list]:
    """Within it, each source the readers map appends (names, mapping, trades) to the list it gives,
    and the side look-alike warning is not raised (vpoc.io.inspect reports both in its evidence)."""
    outer = _RESOLVED.get()
    if outer is not None:
        yield outer
        return
    seen: list = []
    token = _RESOLVED.set(seen)
    try:
        yield seen
    finally:
        _RESOLVED.reset(token)


def side_evidence(names: Sequence[Any], mapping: Dict[str, Any], trades: bool) -> str:
    """vpoc.io.inspect's line on the side columns: the ones read, or that there are none and which
    look-alike columns were skipped (with the columns= that maps them)."""
    fields = ("side",) if trades else tuple(BAR_SIDE_ALIASES)
    used = [mapping.get(f) for f in fields]
    if all(u is not None for u in used):
        what = "aggressor side column" if trades else "buy / sell (aggressor side) volume columns"
        return (f"{what}: " + ", ".join(f"{f} = {str(u)!r}" for f, u in zip(fields, used))
                + " (the result has delta, delta POC and imbalances)")
    look = side_lookalikes(names, mapping)
    what = "no aggressor side column" if trades else "no buy / sell (aggressor side) volume columns"
    if not look:
        return f"{what}: the result has no delta (a side column would be read by name: docs/sessions.md)"
    return (f"{what} read; skipped {', '.join(map(repr, look))}, whose names look like the side: "
            f"{side_mapping_hint(trades, look)}")


def side_lookalikes(names: Sequence[Any], mapping: Dict[str, Any]) -> List[str]:
    """The columns of ``names`` not read as any field of ``mapping`` whose name holds buy / sell / ask /
    bid / aggressor / side (case-insensitive): ones that may hold the aggressor side."""
    used = set()
    for v in mapping.values():
        used.update(str(x) for x in (v if isinstance(v, tuple) else (v,)) if x is not None)
    return [str(n) for n in names if str(n) not in used and any(w in str(n).lower() for w in SIDE_WORDS)]


def side_mapping_hint(trades: bool, lookalikes: Sequence[str]) -> str:
    """How to map look-alike side columns: the ``columns={...}`` to pass (or to ignore them)."""
    if trades:
        return (f"columns={{'side': {lookalikes[0]!r}}} reads it as the side (+1 / -1 / 0, or "
                "B / A / N); columns={'side': None} says there is none")
    b = next((c for c in lookalikes if any(w in c.lower() for w in ("buy", "ask"))), "<buy column>")
    s = next((c for c in lookalikes if any(w in c.lower() for w in ("sell", "bid"))), "<sell column>")
    return (f"columns={{'buy_volume': {b!r}, 'sell_volume': {s!r}}} reads them as the bars' buy / sell (aggressor "
            "side) volumes; columns={'buy_volume': None, 'sell_volume': None} says there are none")


def _warn_side_lookalikes(names: Sequence[Any], out: Dict[str, Any], opts: _Options, source: str) -> None:
    """A GuessedDefaultWarning when no side column was picked up (nor set by ``columns=``) but some
    column's name says it may hold one: without it the result has no delta, which is otherwise silent."""
    trades = "price" in opts.fields
    fields = ("side",) if trades else tuple(BAR_SIDE_ALIASES)
    if _RESOLVED.get() is not None or any(out.get(f) is not None or f in opts.columns for f in fields):
        return
    look = side_lookalikes(names, out)
    if look:
        what = "trades' aggressor side" if trades else "bars' buy / sell (aggressor side) volumes"
        warnings.warn(f"{source}: column(s) {', '.join(map(repr, look))} look like the {what} but are not read "
                      f"(no column has a name vpoc reads as the side), so the result has no delta; "
                      f"{side_mapping_hint(trades, look)}", GuessedDefaultWarning, stacklevel=user_stacklevel())


def bar_side_names(names: Sequence[Any], columns: Optional[Dict[str, Any]] = None,
                   source: str = "<DataFrame>") -> Tuple[Any, Any]:
    """The columns of ``names`` holding the bars' buy / sell (aggressor-side) volume, by the rule of
    read_bars (``columns``: its mapping), or (None, None): for the feature tables' frames."""
    by_norm: Dict[str, List[Any]] = {}
    for n in names:
        by_norm.setdefault(_norm(n), []).append(n)
    return _bar_sides(names, by_norm, columns or {}, source, ", ".join(repr(str(n)) for n in names),
                      "pass buy_volume= and sell_volume= (arrays, or the frame's column names), or drop "
                      "the column")


def _bar_sides(names: Sequence[Any], by_norm: Dict[str, List[Any]], columns: Dict[str, Any],
               source: str, listing: str, hint: str = "") -> Tuple[Any, Any]:
    """The bars' optional buy / sell volume columns (both or neither): ``columns[field]`` (None:
    ignore the source's), else the one column named like it (BAR_SIDE_ALIASES); one without the
    other is refused naming the missing one (a bar's delta needs both)."""
    found = [_optional_column(f, a, names, by_norm, columns, source, listing)
             for f, a in BAR_SIDE_ALIASES.items()]
    if (found[0] is None) != (found[1] is None):
        have, miss = ("buy_volume", "sell_volume") if found[1] is None else ("sell_volume", "buy_volume")
        col = found[0] if found[1] is None else found[1]
        hint = hint or f"pass columns={{{miss!r}: name}}, or columns={{{have!r}: None}} to ignore it"
        raise ValueError(f"{source}: column {str(col)!r} gives the bars' {have} but there is no {miss} "
                         f"column (columns: {listing}); the aggressor-side volumes go together: {hint}")
    return found[0], found[1]


def _optional_column(field: str, aliases: Sequence[str], names: Sequence[Any],
                     by_norm: Dict[str, List[Any]], columns: Dict[str, Any], source: str,
                     listing: str) -> Any:
    """An optional column: ``columns[field]`` (None: ignore the source's), else the one column
    named by ``aliases`` (normalised), else None; several are refused naming them."""
    if field in columns:
        want = columns[field]
        if want is not None and want not in names:
            raise ValueError(f"{source}: columns[{field!r}] = {want!r} is not a column "
                             f"(columns: {listing})")
        return want
    hits = [n for a in aliases for n in by_norm.get(a, [])]
    if len(hits) > 1:
        raise ValueError(f"{source}: several columns could be {field!r} "
                         f"({', '.join(repr(str(d)) for d in hits)}); pass columns={{{field!r}: name}} "
                         f"or columns={{{field!r}: None}} to ignore them")
    return hits[0] if hits else None


def _missing(missing: List[str], found: Dict[str, Any], by_norm: Dict[str, List[Any]], opts: _Options,
             source: str, listing: str) -> Exception:
    """The error naming every field without a column (a vpoc.InputError about ``columns``; its
    ``columns_missing`` / ``columns_found`` let from_bars read a frame without an open column)."""
    names = ", ".join(repr(f) for f in missing)
    hint = f"pass columns={{{missing[0]!r}: name}}"
    if missing == ["open"]:
        hint += " naming it, or columns={'open': None} for bars without open prices (Bars.open is then None)"
    if "price" not in opts.fields and "price" in by_norm and "high" in missing:
        hint = "this looks like trades (a 'price' column): use read_trades / from_trades, or " + hint
    elif "price" in opts.fields and "high" in by_norm and "price" in missing:
        hint = "this looks like bars (a 'high' column): use read_bars / from_bars, or " + hint
    e = input_error(f"{source}: no column for {names} (columns: {listing}); {hint}", "columns")
    e.columns_missing = tuple(missing)
    e.columns_found = dict(found)
    return e


def _side_column(names: Sequence[Any], by_norm: Dict[str, List[Any]], opts: _Options,
                 source: str, listing: str) -> Any:
    """The trades' optional aggressor-side column: ``columns["side"]`` (None: ignore the
    source's), else the one column named side / aggressor_side, else None."""
    return _optional_column("side", SIDE_ALIASES, names, by_norm, opts.columns, source, listing)


def _extract(df: Any, where: _Where, opts: _Options,
             mapping: Optional[Dict[str, Any]] = None) -> Dict[str, np.ndarray]:
    """Converted, validated arrays of one source."""
    return _combine([_extract_part(df, where, opts, mapping)], where, opts)


def _combine(parts: List[Dict[str, np.ndarray]], where: _Where,
             opts: _Options) -> Dict[str, np.ndarray]:
    """The parts of one source (pieces of a file read in turn) as one validated set of arrays:
    wall-clock timestamps localized together, the time order checked across pieces."""
    out: Dict[str, np.ndarray] = {}
    for f in opts.fields + tuple(k for k in OPTIONAL if k in parts[0]):
        arrays = [p[f] for p in parts]
        if f in VOLUMES:
            kind = np.int64 if all(a.dtype.kind in "iu" for a in arrays) else np.float64
            arrays = [a.astype(kind, copy=False) for a in arrays]
        out[f] = arrays[0] if len(arrays) == 1 else np.concatenate(arrays)
    wall = [isinstance(p["timestamp"], WallNs) for p in parts]
    if any(wall) and not all(wall):
        k = wall.index(not wall[0])
        row = sum(len(p["timestamp"]) for p in parts[:k])
        state = "has no UTC offset" if wall[k] else "has a UTC offset"
        raise ValueError(f"{where(row)}: timestamp {state} but {where(0)} "
                         f"{'does' if wall[k] else 'does not'}; mixing them is not allowed")
    if any(wall):
        out["timestamp"] = _localize(np.asarray(out["timestamp"]).view(np.int64)
                                     .view("datetime64[ns]"), where, opts)
    else:
        out["timestamp"] = np.asarray(out["timestamp"]).view(np.int64)
    _check_order(out["timestamp"], where)
    return out


def _extract_part(df: Any, where: _Where, opts: _Options,
                  mapping: Optional[Dict[str, Any]] = None) -> Dict[str, np.ndarray]:
    """Converted arrays of one table (timestamps as WallNs when naive and ``opts.defer_tz``),
    every value checked but the time order (``_combine``)."""
    import pandas as pd

    if mapping is None:
        if isinstance(df.index, pd.MultiIndex) or df.index.name is not None:
            df = _unindexed(df, where.source)
        mapping = _resolve(list(df.columns), opts, where.source)
    tcol = mapping["timestamp"]
    if tcol is None:
        if not isinstance(df.index, pd.DatetimeIndex):
            raise ValueError(f"{where.source}: no timestamp column (timestamp, datetime, ts, date "
                             "+ time) and no DatetimeIndex; pass columns={'timestamp': name}")
        raw: Any = pd.Series(df.index, index=pd.RangeIndex(len(df)))
    elif isinstance(tcol, tuple):
        d, t = (df[c].astype(str).str.strip() for c in tcol)
        raw = (d + " " + t).reset_index(drop=True)
    else:
        raw = df[tcol].reset_index(drop=True)
    if tcol is not None and not isinstance(tcol, tuple) and _norm(tcol) in _NS_COLUMNS \
            and opts.time_unit is None and len(raw) and _integers(raw):
        opts = replace(opts, time_unit="ns")  # Databento's ts_event: UTC ns by definition
    out: Dict[str, np.ndarray] = {"timestamp": _timestamps(raw, where, opts)}
    for field in opts.fields[1:]:
        out[field] = _numbers(df[mapping[field]].reset_index(drop=True), field, where,
                              field == "volume")
    if mapping.get("side") is not None:
        out["side"] = _sides(df[mapping["side"]].reset_index(drop=True), where)
    for f in BAR_SIDE_ALIASES:
        if mapping.get(f) is not None:
            out[f] = _numbers(df[mapping[f]].reset_index(drop=True), f, where, True)
    _validate(out, where, opts)
    return out


def _unindexed(df: Any, source: str) -> Any:
    """A frame with a named index (or a MultiIndex) as columns: ``df.reset_index()``, but an index
    level named like one of the columns (``df.set_index("timestamp", drop=False)``) is dropped when
    it holds the column's values, and refused (ValueError naming it) when it does not."""
    names = [n for n in df.index.names if n is not None]
    clash = [n for n in names if n in df.columns]
    if not clash:
        return df.reset_index()
    for n in clash:
        level = df.index.get_level_values(n)
        if not np.array_equal(np.asarray(level), df[n].to_numpy()):
            raise ValueError(f"{source}: the index level {n!r} and the column {n!r} differ; drop one "
                             f"(df.reset_index(drop=True)) or rename it")
    keep = [n for n in names if n not in clash]
    return df.reset_index(level=keep) if keep else df.reset_index(drop=True)


def _sides(col: Any, where: _Where) -> np.ndarray:
    """A side column as int8 +1 / -1 / 0 (vpoc._side): numbers, or 'B' / 'A' / 'N' text."""
    import pandas as pd

    name = "side" if str(col.name) == "side" else f"side (column {str(col.name)!r})"
    if pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype):
        missing = col.isna().to_numpy(dtype=bool)
        i = _first(missing)
        if i is not None:
            raise ValueError(f"{where(i)}: {name} is missing")
        values = col.to_numpy(dtype=np.float64 if col.dtype.kind == "f" else np.int64)
    elif pd.api.types.is_bool_dtype(col.dtype):
        values = col.to_numpy(dtype=bool)
    else:
        values = col.to_numpy(dtype=object, na_value=None)
    return aggressor_side(values, name, where)


def _numbers(col: Any, field: str, where: _Where, volume: bool) -> np.ndarray:
    import pandas as pd

    dtype = col.dtype
    if pd.api.types.is_bool_dtype(dtype):
        raise TypeError(f"{where.source}: column {col.name!r} ({field}) is boolean, "
                        "expected numbers")
    if pd.api.types.is_numeric_dtype(dtype):
        na = col.isna().to_numpy(dtype=bool)
        i = _first(na)
        if i is not None and dtype.kind in "iub":  # a nullable integer column with a missing value
            raise ValueError(f"{where(i)}: {field} is missing")
        if dtype.kind in "iu" and i is None:
            if dtype.kind == "u" and len(col) and int(col.max()) > np.iinfo(np.int64).max:
                i = _first((col > np.iinfo(np.int64).max).to_numpy(dtype=bool))
                raise ValueError(f"{where(i)}: {field} = {col.iloc[i]} does not fit in int64")
            return col.to_numpy(dtype=np.int64) if volume else col.to_numpy(dtype=np.float64)
        return col.to_numpy(dtype=np.float64, na_value=np.nan)
    if pd.api.types.is_string_dtype(dtype) or dtype == object:
        text = col.astype(str).str.strip() if dtype == object else col.str.strip()
        num = pd.to_numeric(text.where(text != "", "?"), errors="coerce")
        nan_text = text.str.lower().isin(("nan", "-nan", "+nan"))  # NaN: reported by _validate
        bad = (num.isna() & ~nan_text).to_numpy(dtype=bool)
        i = _first(bad)
        if i is not None:
            raise ValueError(f"{where(i)}: {field} = {col.iloc[i]!r} is not a number")
        if num.dtype.kind in "iu" and volume:
            return num.to_numpy(dtype=np.int64)
        return num.to_numpy(dtype=np.float64)
    raise TypeError(f"{where.source}: column {col.name!r} ({field}) has dtype {dtype}, "
                    "expected numbers")


def _validate(out: Dict[str, np.ndarray], where: _Where, opts: _Options) -> None:
    check_rows(out, where, [f for f in opts.fields[1:] if f != "volume"], opts.strict_ohlc)
    if "buy_volume" in out:
        _check_bar_sides(out, where)


def _check_bar_sides(out: Dict[str, np.ndarray], where: _Where) -> None:
    """``buy_volume + sell_volume <= volume`` on every bar, by from_bars' rule (vpoc._side_profiles.
    bar_side_volumes, its one home), its refusal naming the file's line / the source's row."""
    from .._errors import InputError
    from .._side_profiles import bar_side_volumes, side_rules

    try:
        bar_side_volumes(out["buy_volume"], out["sell_volume"], out["volume"], out["high"],
                         side_rules(None, None))
    except InputError as e:
        i = getattr(e, "index", None)
        if i is None:
            raise
        b, s, v = (out[k][i].item() for k in ("buy_volume", "sell_volume", "volume"))
        raise ValueError(f"{where(i)}: buy_volume + sell_volume = {b!r} + {s!r} is more than volume = "
                         f"{v!r} (the aggressor-side volumes of a bar are part of its volume)") from None


def _integers(raw: Any) -> bool:
    """A column of integers, or of text whose first value is an integer."""
    import pandas as pd

    if pd.api.types.is_integer_dtype(raw.dtype):
        return True
    if pd.api.types.is_numeric_dtype(raw.dtype) or raw.dtype.kind == "M":
        return False
    first = raw.iloc[0]
    return isinstance(first, str) and re.fullmatch(r"\s*\d{1,19}\s*", first) is not None


def _check_order(t: np.ndarray, where: _Where) -> None:
    if t.shape[0] > 1:
        i = _first(t[1:] < t[:-1])
        if i is not None:
            raise ValueError(f"{where(i + 1)}: timestamp {_iso(t[i + 1])} is before the previous "
                             f"row's {_iso(t[i])} (rows must be in time order)")
