"""Timestamp columns of any supported representation to int64 ns UTC, for the readers of vpoc.io.

Contract: text (ISO 8601, ``YYYYMMDD HHMMSS``, a strftime format), datetimes (naive in ``tz=`` or
aware), integer epoch times (with ``time_unit=``); a value that does not parse raises naming its line.
"""

from __future__ import annotations

import datetime as _dt
import re
import warnings
from typing import Any, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

from .._errors import input_error
from .._time import TIME_UNITS, check_plausible, likely_unit, ns_range_error, unit_name
from ._options import (_YEARS, _LEGACY_TIME_FORMAT, _LEGACY_TIME_RE, _TZ_SUFFIX_RE, Int64Array, _first,
                       _Options, _Where)

__all__ = ["WallNs", "no_zone_error"]


#: Text timestamp formats tried without time_format= (vpoc.io.inspect uses the one that parses every row;
#: a reader's ISO 8601 error names those that do).
COMMON_TIME_FORMATS: Tuple[str, ...] = (
    "%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M", "%d/%m/%Y %H:%M:%S", "%d/%m/%Y %H:%M",
    "%d.%m.%Y %H:%M:%S", "%d.%m.%Y %H:%M", "%Y%m%d %H%M%S", "%Y%m%d %H:%M:%S", "%Y%m%d %H:%M",
    "%Y/%m/%d %H:%M:%S", "%Y/%m/%d %H:%M", "%m/%d/%Y %I:%M:%S %p", "%m/%d/%Y %I:%M %p",
    "%d-%m-%Y %H:%M:%S", "%m-%d-%Y %H:%M:%S")


def formats_that_parse(text: Any) -> List[str]:
    """The COMMON_TIME_FORMATS that parse every stripped timestamp of ``text`` (a pandas Series of str);
    where several do (day and month swapped), the one that keeps the rows in time order if only one does."""
    import pandas as pd

    parsed = {f: pd.to_datetime(text, format=f, errors="coerce") for f in COMMON_TIME_FORMATS}
    fits = [f for f, p in parsed.items() if len(text) and not p.isna().any()]
    ordered = [f for f in fits if parsed[f].is_monotonic_increasing]  # day/month: time order decides
    return ordered if len(fits) > 1 and len(ordered) == 1 else fits


def _timestamps(raw: Any, where: _Where, opts: _Options) -> Int64Array:
    """A column of timestamps (any supported representation) -> int64 ns UTC."""
    import pandas as pd

    dtype = raw.dtype
    if len(raw) == 0:  # nothing to convert, whatever the (inferred) dtype of an empty column
        return np.zeros(0, dtype=np.int64)
    if isinstance(dtype, pd.DatetimeTZDtype):
        return _utc_ns(raw, where)
    if dtype.kind == "M":
        return _local(raw, where, opts)
    if pd.api.types.is_bool_dtype(dtype):
        raise TypeError(f"{where.source}: the timestamp column is boolean")
    if pd.api.types.is_integer_dtype(dtype):
        return _epoch(raw, where, opts)
    if pd.api.types.is_numeric_dtype(dtype):
        raise TypeError(f"{where.source}: the timestamp column holds floats; give integer epoch "
                        "times (with time_unit=), datetimes or text")
    if pd.api.types.is_string_dtype(dtype) and dtype != object:
        return _parse_text(raw, where, opts)
    if dtype == object:
        kinds = {type(x) for x in raw
                 if x is not None and not (isinstance(x, float) and np.isnan(x))}
        if kinds and all(issubclass(k, str) for k in kinds):
            return _parse_text(raw.astype(object), where, opts)
        return _parse_objects(raw, where, opts)
    raise TypeError(f"{where.source}: the timestamp column has dtype {dtype}; expected "
                    "datetimes, text or integer epoch times")


def _nat_check(values: Any, raw: Any, where: _Where, what: str) -> None:
    na = np.asarray(values.isna(), dtype=bool)
    i = _first(na)
    if i is not None:
        raise ValueError(f"{where(i)}: {what} {raw.iloc[i]!r}")


def _utc_ns(values: Any, where: _Where) -> Int64Array:
    return np.asarray(_ns_index(values, where).tz_convert("UTC").asi8, dtype=np.int64)


def _ns_index(values: Any, where: _Where) -> Any:
    """``values`` as a DatetimeIndex in ns; a missing time or one outside the int64 ns range
    (pandas keeps finer units that reach years 1..9999) raises naming its row."""
    import pandas as pd

    idx = pd.DatetimeIndex(values)
    _nat_check(idx, pd.Series(idx), where, "timestamp is missing:")
    try:
        return idx.as_unit("ns")
    except (pd.errors.OutOfBoundsDatetime, OverflowError):
        utc = idx.tz_convert("UTC").tz_localize(None) if idx.tz is not None else idx
        bad = np.asarray((utc < pd.Timestamp.min) | (utc > pd.Timestamp.max), dtype=bool)
        i = _first(bad) or 0
        raise ValueError(f"{where(i)}: timestamp {idx[i]} is outside the int64 nanosecond range "
                         "(1677-09-21 .. 2262-04-11)") from None


class WallNs(np.ndarray):
    """int64 wall-clock ns not yet localized (``opts.defer_tz``: the reader of a file in pieces
    localizes all of them at once, so that ``ambiguous='infer'`` sees every row)."""


def _local(values: Any, where: _Where, opts: _Options) -> Int64Array:
    """Naive datetimes -> int64 ns UTC (``_localize``), or WallNs when ``opts.defer_tz``."""
    if not opts.defer_tz:
        return _localize(values, where, opts)
    return np.asarray(_ns_index(values, where).asi8, dtype=np.int64).view(WallNs)


def _epoch(raw: Any, where: _Where, opts: _Options) -> Int64Array:
    if opts.time_unit is None:
        vals = raw.to_numpy()
        guess = likely_unit(int(vals.min()), int(vals.max())) if vals.size and vals.dtype.kind in "iu" else None
        unit = ("'s', 'ms', 'us' or 'ns' (epoch times are UTC)" if guess is None else
                f"{guess!r} (epoch times are UTC; the values are 1990..2100 times in {guess!r} only)")
        raise TypeError(f"{where.source}: the timestamp column holds integers; pass time_unit={unit} to the "
                        "call that reads the frame: vpoc.io.read_bars / read_trades, from_bars / from_trades")
    na = raw.isna().to_numpy(dtype=bool)
    i = _first(na)
    if i is not None:
        raise ValueError(f"{where(i)}: timestamp is missing")
    vals = raw.to_numpy(dtype=np.int64)
    bad = ns_range_error(vals, opts.time_unit)
    if bad is not None:
        raise ValueError(f"{where(bad[0])}: timestamp {vals[bad[0]]} {bad[1]}")
    try:
        check_plausible(vals, "timestamp", opts.time_unit, hint="read it with time_unit='{unit}'")
    except ValueError as e:
        raise ValueError(f"{where.source}: {e}") from None
    return vals * TIME_UNITS[opts.time_unit]


def _parse_text(raw: Any, where: _Where, opts: _Options) -> Int64Array:
    import pandas as pd

    text = raw.astype(str).str.strip() if raw.dtype == object else raw.str.strip()
    missing = (raw.isna() | (text == "")).to_numpy(dtype=bool)
    i = _first(missing)
    if i is not None:
        raise ValueError(f"{where(i)}: timestamp is empty or missing")
    if opts.time_unit is not None:  # integer epoch times stored as text
        i = _first(~text.str.fullmatch(r"[+-]?\d{1,19}").to_numpy(dtype=bool))
        if i is not None:
            raise ValueError(f"{where(i)}: timestamp {raw.iloc[i]!r} is not an integer epoch "
                             f"time ({opts.time_unit})")
        num = pd.to_numeric(text, errors="coerce")
        if num.dtype.kind != "i":
            i = _first((num.abs() > np.iinfo(np.int64).max).to_numpy(dtype=bool)) or 0
            raise ValueError(f"{where(i)}: timestamp {raw.iloc[i]!r} does not fit in int64")
        return _epoch(num, where, opts)
    fmt = opts.time_format
    if fmt is None:
        legacy = bool(len(text)) and bool(re.match(_LEGACY_TIME_RE, text.iloc[0]))
        fmt = _LEGACY_TIME_FORMAT if legacy else "ISO8601"
    expect = "ISO 8601" if fmt == "ISO8601" else repr(fmt)
    what = f"timestamp does not match {expect} (pass time_format=):"
    if fmt == _LEGACY_TIME_FORMAT:
        wall, bad, years = _parse_legacy_times(text)
        i = _first(bad)
        if i is not None:
            raise ValueError(f"{where(i)}: {what} {raw.iloc[i]!r}")
        i = _first((years < _YEARS[0]) | (years > _YEARS[1]))
        if i is not None:
            raise ValueError(f"{where(i)}: timestamp {raw.iloc[i]!r}: year {int(years[i])} is outside "
                             f"{_YEARS[0]}..{_YEARS[1]} (int64 nanoseconds cover 1677-09-21 .. "
                             "2262-04-11)")
        return _local(wall.view("datetime64[ns]"), where, opts)
    try:
        with warnings.catch_warnings():  # pandas < 3 warns (FutureWarning) where 3 raises
            warnings.simplefilter("error", FutureWarning)
            parsed = pd.to_datetime(text, format=fmt, errors="coerce")
    except (ValueError, FutureWarning) as e:  # mixed UTC offsets, or offsets on some rows only
        if isinstance(e, pd.errors.OutOfBoundsDatetime):  # pandas < 3 (ns only): find the row
            for j in range(len(text)):
                _out_of_range(text.iloc[j], fmt, where(j))
        if fmt != "ISO8601":
            raise ValueError(f"{where.source}: cannot parse timestamps with format {fmt!r}: "
                             f"{e}") from None
        _check_offsets_not_mixed(text, where)
        parsed = pd.to_datetime(text, format=fmt, errors="coerce", utc=True)
    else:
        if fmt == "ISO8601" and isinstance(parsed.dtype, pd.DatetimeTZDtype):
            # pandas < 3 reads naive stamps among aware ones as UTC (unparsed ones are named below)
            _check_offsets_not_mixed(text, where, np.asarray(parsed.notna(), dtype=bool))
    bad = np.asarray(parsed.isna(), dtype=bool)
    i = _first(bad)
    if i is not None:
        _out_of_range(text.iloc[i], fmt, where(i))
        digits = text.iloc[i].lstrip("-").isdigit()
        guess = likely_unit(int(text.iloc[i]), int(text.iloc[i])) if digits else None
        if guess is not None:  # an epoch time: the fix is its unit, not a format (InputError.argument says so)
            raise input_error(f"{where(i)}: timestamp {raw.iloc[i]!r} is an integer that looks like "
                              f"{unit_name(guess)} since the epoch: pass time_unit={guess!r}", "time_unit")
        hint = " (integer epoch times need time_unit=)" if digits else ""
        fits = formats_that_parse(text) if not digits and opts.time_format is None else []  # inspect's candidates
        if fits:
            hint = (f"; time_format={fits[0]!r} parses every timestamp" if len(fits) == 1
                    else "; several common formats parse every timestamp (day and month cannot be told apart): "
                    "pass one of " + " or ".join(f"time_format={f!r}" for f in fits))
        error = ValueError(f"{where(i)}: {what} {raw.iloc[i]!r}{hint}")
        error.time_formats = tuple(fits)  # type: ignore[attr-defined]  # named in the message (vpoc.io.inspect)
        raise error
    if opts.time_format is not None:
        _check_day_month(text, parsed, fmt, where)
    if isinstance(parsed.dtype, pd.DatetimeTZDtype):
        return _utc_ns(parsed, where)
    return _local(parsed, where, opts)


#: A step between consecutive rows this long (ns) is a jump; day and month swapped make one at each
#: new day of the month up to the 12th (a month apart), a continuous series has none.
_JUMP_NS = 20 * 86_400 * 10**9
#: Rows the day/month check reads again with the swapped format (a cost only files with %d and %m pay).
_DAY_MONTH_ROWS = 200_000


def _check_day_month(text: Any, parsed: Any, fmt: str, where: _Where) -> None:
    """A given ``fmt`` with both %d and %m whose swapped form also parses every stamp: a warning when the
    given reading jumps about a month between consecutive rows at least twice and the swapped one never
    does (day and month likely swapped: the rows read would be in sessions weeks apart)."""
    import pandas as pd

    if "%d" not in fmt or "%m" not in fmt or len(text) < 3:
        return
    n = min(len(text), _DAY_MONTH_ROWS)  # the first rows tell (a swap jumps at each new day), at bounded cost
    text, parsed = text.iloc[:n], parsed.iloc[:n]
    swapped = fmt.replace("%d", "\0").replace("%m", "%d").replace("\0", "%m")
    other = pd.to_datetime(text, format=swapped, errors="coerce")
    if other.isna().any():
        return

    def jumps(p: Any) -> int:  # steps of more than _JUMP_NS between consecutive rows (UTC where aware)
        p = pd.Series(p)
        if isinstance(p.dtype, pd.DatetimeTZDtype):
            p = p.dt.tz_convert(None)
        return int(np.count_nonzero(np.abs(np.diff(p.to_numpy(dtype="datetime64[ns]").view(np.int64))) > _JUMP_NS))

    given_jumps, other_jumps = jumps(parsed), jumps(other)
    if given_jumps >= 2 and other_jumps == 0:
        from .._warnings import user_stacklevel

        warnings.warn(f"{where.source}: time_format={fmt!r} reads consecutive rows about a month apart {given_jumps:,} "
                      f"times in the first {n:,} rows; time_format={swapped!r} reads them with no such jump: day and "
                      "month are likely "
                      "swapped (vpoc.io.inspect(path) / `vpoc inspect FILE` shows both readings)", UserWarning,
                      stacklevel=user_stacklevel())


def _out_of_range(text: str, fmt: str, where: str) -> None:
    """Raises the range error when ``text`` is a valid time outside the int64 ns range: pandas < 3
    parses strings only in ns and turns such a time into NaT, where pandas 3 keeps it in a coarser
    unit (and _ns_index names it); the message is the same on both."""
    import pandas as pd

    try:
        t = pd.Timestamp(text) if fmt == "ISO8601" else pd.Timestamp(_dt.datetime.strptime(text, fmt))
    except (ValueError, TypeError, OverflowError):
        return
    t = t.tz_convert("UTC").tz_localize(None) if t.tz is not None else t
    if t < pd.Timestamp.min or t > pd.Timestamp.max:
        raise ValueError(f"{where}: timestamp {text} is outside the int64 nanosecond range "
                         "(1677-09-21 .. 2262-04-11)")


def _check_offsets_not_mixed(text: Any, where: _Where,
                             rows: Optional[npt.NDArray[np.bool_]] = None) -> None:
    """ISO 8601 stamps either all carry a UTC offset or none does (never guessed per row);
    ``rows`` limits the check to those rows (the first row is always checked against)."""
    has_tz = text.str.contains(_TZ_SUFFIX_RE, regex=True).to_numpy(dtype=bool)
    differs = has_tz != has_tz[0] if len(has_tz) else has_tz
    if rows is not None:
        differs &= rows
    if differs.any():
        i = int(np.argmax(differs))
        state = "has a UTC offset" if has_tz[i] else "has no UTC offset"
        raise ValueError(f"{where(i)}: timestamp {text.iloc[i]!r} {state} but {where(0)} "
                         f"{'does not' if has_tz[i] else 'does'}; mixing them is not allowed")


def _parse_legacy_times(text: Any) -> Tuple[Int64Array, npt.NDArray[np.bool_], Int64Array]:
    """Strict ``YYYYMMDD HHMMSS`` parser: (wall-clock ns since the epoch, bad-row mask, years).
    Month 00 or 13+, day 00 or past the month's end, hour 24+ are bad rows; the ns of a year outside
    1678..2261 are meaningless (the caller refuses those rows by ``years``)."""
    n = len(text)
    try:
        import pyarrow as pa

        raw = pa.array(text, type=pa.large_string()).cast(pa.large_binary())
        b = np.asarray(raw.to_numpy(zero_copy_only=False), dtype="S16")
    except ImportError:  # pragma: no cover - pandas without pyarrow
        b = np.asarray([s.encode("utf-8") for s in text], dtype="S16")
    chars = b.view(np.uint8).reshape(n, 16)  # UTF-8 bytes; anything non-ASCII is not a digit
    bad = (chars[:, 8] != ord(" ")) | (chars[:, 15] != 0)  # exactly 15 characters
    cols = {}
    for k in (*range(8), *range(9, 15)):
        c = chars[:, k].astype(np.int64) - ord("0")
        bad |= (c < 0) | (c > 9)
        cols[k] = c

    def num(a: int, b: int) -> Int64Array:
        out = np.zeros(n, dtype=np.int64)
        for k in range(a, b):
            out = out * 10 + cols[k]
        return out

    y, mo, d = num(0, 4), num(4, 6), num(6, 8)
    hh, mi, ss = num(9, 11), num(11, 13), num(13, 15)
    bad |= (mo < 1) | (mo > 12) | (d < 1) | (hh > 23) | (mi > 59) | (ss > 59)
    month = ((y - 1970) * 12 + np.clip(mo, 1, 12) - 1).astype("datetime64[M]")
    day = month.astype("datetime64[D]") + (np.maximum(d, 1) - 1).astype("timedelta64[D]")
    bad |= day.astype("datetime64[M]") != month  # e.g. February 30
    ok = ~bad & (y >= _YEARS[0]) & (y <= _YEARS[1])  # no int64 overflow (it wrapped silently)
    secs = np.where(ok, day.astype(np.int64) * 86_400 + (hh * 60 + mi) * 60 + ss, 0)
    return secs * 1_000_000_000, bad, y


def _parse_objects(raw: Any, where: _Where, opts: _Options) -> Int64Array:
    """A column of Python datetime-like objects (naive or aware, not mixed)."""
    import pandas as pd

    missing = raw.isna().to_numpy(dtype=bool)
    i = _first(missing)
    if i is not None:
        raise ValueError(f"{where(i)}: timestamp is missing")
    aware = np.array([getattr(x, "tzinfo", None) is not None for x in raw], dtype=bool)
    if aware.size and (aware != aware[0]).any():
        i = int(np.argmax(aware != aware[0]))
        raise ValueError(f"{where(i)}: timestamp {raw.iloc[i]!r} mixes naive and aware datetimes "
                         f"with {where(0)}")
    try:
        parsed = pd.to_datetime(raw, utc=bool(aware.size and aware[0]))
    except (TypeError, ValueError) as e:
        raise TypeError(f"{where.source}: the timestamp column holds {type(raw.iloc[0]).__name__} "
                        f"objects that are not datetimes ({e})") from None
    if isinstance(parsed.dtype, pd.DatetimeTZDtype):
        return _utc_ns(parsed, where)
    return _local(parsed, where, opts)


def no_zone_error(source: str, remedy: Optional[str] = None) -> ValueError:
    """The refusal of naive timestamps whose zone nothing gives (their zone is never guessed):
    read_bars / read_trades, so from_bars / from_trades of a frame, and the feature tables, which
    name their own remedy (their tz= is the exchange zone, not the timestamps')."""
    return ValueError(f"{source}: timestamps have no time zone; " + (
        remedy or "pass tz= with the zone they are in (e.g. tz='America/Chicago' for exchange time, tz='UTC')"))


def _localize(values: Any, where: _Where, opts: _Options) -> Int64Array:
    """Naive wall-clock datetimes in ``opts.tz`` -> int64 ns UTC, DST per ambiguous/nonexistent."""
    import pandas as pd

    idx = _ns_index(values, where)
    if len(idx) == 0:
        return np.zeros(0, dtype=np.int64)
    if opts.tz is None:
        raise no_zone_error(where.source)
    probe = idx.tz_localize(opts.tz, ambiguous="NaT", nonexistent="NaT")
    bad = np.asarray(probe.isna(), dtype=bool)
    if not bad.any():
        return np.asarray(probe.asi8, dtype=np.int64)
    shifted = idx.tz_localize(opts.tz, ambiguous="NaT", nonexistent="shift_forward")
    gap = bad & ~np.asarray(shifted.isna(), dtype=bool)
    fold = bad & ~gap
    zone = str(opts.tz)
    if gap.any() and opts.nonexistent == "raise":
        i = _first(gap)
        raise ValueError(f"{where(i)}: {idx[i]} does not exist in {zone} (skipped when DST "
                         "starts); pass nonexistent='shift_forward' or 'shift_backward'")
    if fold.any() and opts.ambiguous == "raise":
        i = _first(fold)
        raise ValueError(f"{where(i)}: {idx[i]} is ambiguous in {zone} (repeated when DST "
                         "ends); pass ambiguous='infer', 'earliest' or 'latest'")
    amb: Any = "raise"
    if opts.ambiguous == "infer":
        amb = "infer"
    elif opts.ambiguous in ("earliest", "latest"):
        amb = np.full(idx.shape[0], opts.ambiguous == "earliest", dtype=bool)
    try:
        loc = idx.tz_localize(opts.tz, ambiguous=amb, nonexistent=opts.nonexistent)
    except ValueError as e:  # pandas raises a ValueError when ambiguous='infer' cannot decide
        i = _first(fold) or 0
        raise ValueError(f"{where(i)}: cannot infer which {idx[i]} in {zone} is meant "
                         f"({e}); pass ambiguous='earliest' or 'latest'") from None
    return np.asarray(loc.as_unit("ns").asi8, dtype=np.int64)
