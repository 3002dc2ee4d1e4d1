"""Integer epoch timestamps to int64 nanoseconds UTC, with the unit check every timestamp input shares.

Contract: integers are read in ``time_unit`` ("s", "ms", "us", "ns"; None = "ns"); values that all
fall in 1990..2100 only when read in another unit raise ValueError naming that unit and how to pass it.
The int64 minimum (-2**63, the integer form of NaT) is a missing timestamp, never a date: it raises
ValueError naming the argument and index, as does a value outside the int64 nanosecond range.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Tuple

import numpy as np

from ._arrays import gpu_location, gpu_to_host, unmasked

__all__ = ["LABELS", "TIME_UNITS", "bar_opens", "iso_utc", "timestamps_ns", "check_label", "check_time_unit", "check_plausible",
           "check_datetimes", "unit_name",
           "datetime64_ns", "epoch_ns", "infer_interval_ns", "interval_ns", "likely_unit", "zone",
           "ns_range_error", "host", "input_timestamps_ns", "naive_pandas_error", "yyyymmdd_days", "zone_offset_s",
           "offset_change", "utc_offset_ns", "days_yyyymmdd", "session_dates", "session_date_ids"]

#: Nanoseconds per unit.
TIME_UNITS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
_NAMES = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
# 1990-01-01 and 2100-01-01 in ns since the epoch: the span a market timestamp is taken to lie in.
# The spans of the four units do not overlap (each is < 1000x wide), so at most one unit fits.
_LO_NS = 631_152_000 * 1_000_000_000
_HI_NS = 4_102_444_800 * 1_000_000_000


def iso_utc(ns: Any) -> str:
    """int64 ns UTC as ISO 8601 text, as the readers' messages print a time: ``2025-03-10T14:30:00Z``
    (whole seconds), ``2025-03-10T14:30:00.000000001Z`` otherwise."""
    ns = int(ns)
    return str(np.datetime64(ns // 1_000_000_000, "s") if ns % 1_000_000_000 == 0
               else np.datetime64(ns, "ns")) + "Z"


def unit_name(unit: str) -> str:
    """A time unit ("s", "ms", "us", "ns") as messages spell it: "milliseconds"."""
    return _NAMES[unit]


def check_time_unit(time_unit: Any, name: str = "time_unit") -> Optional[str]:
    """``time_unit`` validated: None or one of "s", "ms", "us", "ns"."""
    if time_unit is not None and (not isinstance(time_unit, str) or time_unit not in TIME_UNITS):
        raise ValueError(f"{name} must be one of 's', 'ms', 'us', 'ns' or None, got {time_unit!r}")
    return time_unit


def likely_unit(lo: int, hi: int) -> Optional[str]:
    """The unit in which every value of [lo, hi] is a 1990..2100 epoch time, or None."""
    for unit, scale in TIME_UNITS.items():
        if _LO_NS // scale <= lo and hi <= _HI_NS // scale:
            return unit
    return None


def check_plausible(values: np.ndarray, name: str, time_unit: Optional[str], hint: str = "") -> None:
    """Raises ValueError when integer ``values`` (read in ``time_unit``, None = "ns") are 1990..2100
    times only in another unit: a microsecond array read as nanoseconds is a few minutes of 1970.

    ``hint``: how the caller passes the unit (default "pass time_unit='<unit>'").
    """
    unit = time_unit or "ns"
    if values.size == 0:
        return
    guess = likely_unit(int(values.min()), int(values.max()))
    if guess is None or guess == unit:
        return
    first = int(values.reshape(-1)[0])
    scale = TIME_UNITS[unit]
    seen = (str(np.datetime64(first * scale, "ns")) if abs(first) <= np.iinfo(np.int64).max // scale
            else "out of range")
    how = hint.replace("{unit}", guess) if hint else f"pass time_unit={guess!r}"
    raise ValueError(f"{name} looks like {_NAMES[guess]} since the epoch, not {_NAMES[unit]} "
                     f"({name}[0] = {first} read as {_NAMES[unit]} is {seen}); {how}")


_INT64_MIN = int(np.iinfo(np.int64).min)


def ns_range_error(values: np.ndarray, unit: str) -> Optional[Tuple[int, str]]:
    """(index, what is wrong) of the first int64 epoch time in ``unit`` that is no instant in
    int64 nanoseconds: the NaT sentinel -2**63 (a missing timestamp, read as a number it would be
    year 1677, or after scaling 1970) or a value that overflows when scaled to ns; None if none."""
    flat = values.reshape(-1)
    if not flat.size:
        return None
    nat = flat == _INT64_MIN
    if nat.any():
        return int(np.argmax(nat)), ("is -2**63, the integer form of NaT (a missing timestamp); "
                                     "drop or fill the rows with missing times")
    scale = TIME_UNITS[unit]
    if scale > 1:
        limit = np.iinfo(np.int64).max // scale
        bad = np.abs(flat) > limit  # exact: -2**63 is excluded above
        if bad.any():
            guess = likely_unit(int(flat.min()), int(flat.max()))
            fix = ("" if guess is None or guess == unit else
                   f": the values look like {_NAMES[guess]} since the epoch, not {_NAMES[unit]}; pass "
                   f"time_unit={guess!r}" + (" or leave time_unit out (a vpoc.io.Bars / Trades, SynthBars or "
                                             "datetime64 timestamps are nanoseconds already)" if guess == "ns" else ""))
            return int(np.argmax(bad)), f"{unit} is out of the int64 nanosecond range{fix}"
    return None


def epoch_ns(values: Any, name: str, time_unit: Optional[str] = None, *, hint: str = "") -> np.ndarray:
    """Integer epoch times (1-D) in ``time_unit`` (None: "ns") as a contiguous int64 ns array.

    Raises ValueError when the values are 1990..2100 times only in another unit (see
    :func:`check_plausible`; ``hint`` as there, "{unit}" is replaced by the likely unit), or when
    scaling leaves the int64 nanosecond range.
    """
    unit = check_time_unit(time_unit) or "ns"
    arr = np.asarray(unmasked(values, name))
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{name} values must fit in int64")
    arr = arr.astype(np.int64, copy=False)
    bad = ns_range_error(arr, unit)
    if bad is not None:  # an InputError (argument name, row i): a caller working on part of the rows re-addresses it
        from ._errors import input_error

        i, what = bad
        raise input_error(f"{name}[{i}] = {int(arr.reshape(-1)[i])} {what}", name, i)
    check_plausible(arr, name, unit, hint)
    scale = TIME_UNITS[unit]
    if scale > 1 and arr.size:
        arr = arr * scale
    return np.ascontiguousarray(arr)


def datetime64_ns(arr: np.ndarray, name: str) -> np.ndarray:
    """A datetime64 array of any unit as int64 ns since the epoch.

    NaT (a missing time), an instant outside the int64 nanosecond range (about 1677-09-21 ..
    2262-04-11) or one finer than 1 ns raises ValueError naming its index (numpy's own conversion
    wraps silently before 2.5 and raises OverflowError naming nothing from 2.5)."""
    nat = np.isnat(arr)
    if nat.any():
        raise ValueError(f"{name}[{int(np.argmax(nat))}] is NaT")
    if arr.dtype == np.dtype("datetime64[ns]"):
        return arr.view(np.int64)
    unit = np.datetime_data(arr.dtype)[0]
    if unit == "generic":
        raise ValueError(f"{name} is datetime64 without a unit; give one, e.g. "
                         f"np.asarray({name}, dtype='datetime64[ns]')")
    flat = arr.reshape(-1)
    try:
        with np.errstate(all="ignore"):
            ns = flat.astype("datetime64[ns]")
        bad = np.isnat(ns) | (ns.astype(arr.dtype) != flat)  # wrapped, or rounded
    except OverflowError:  # numpy >= 2.5: find the element one at a time (the error path only)
        ns = None
        bad = np.zeros(flat.shape, dtype=bool)
        for i, x in enumerate(flat):
            try:
                y = x.astype("datetime64[ns]")
                bad[i] = bool(np.isnat(y) or y.astype(arr.dtype) != x)
            except OverflowError:
                bad[i] = True
    if ns is None or bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name}[{i}] = {flat[i]} is not an instant in int64 nanoseconds "
                         "(1677-09-21 .. 2262-04-11, whole ns)")
    return ns.view(np.int64).reshape(arr.shape)


def zone(tz: Any) -> Any:
    """``tz`` as a tzinfo: a tzinfo as is, or an IANA name ('America/Chicago', 'UTC')."""
    import datetime as _dt
    import zoneinfo

    if isinstance(tz, _dt.tzinfo):
        return tz
    if not isinstance(tz, str):
        raise TypeError(f"tz must be a time zone name such as 'America/Chicago' or a tzinfo, "
                        f"got {type(tz).__name__}")
    try:
        return zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"tz={tz!r} is not a known time zone (IANA name such as "
                         "'America/Chicago', 'UTC')") from None


#: The labels a bar's timestamp can carry: the bar's open or its close.
LABELS = ("open", "close")
# Share of the positive spacings that must equal the modal one before an interval is inferred:
# below it the data has no clear bar interval and the caller must pass interval=.
_MODAL_SHARE = 0.5
_UNIT_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000, "sec": 1_000_000_000,
            "min": 60_000_000_000, "t": 60_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000,
            "hour": 3_600_000_000_000, "d": 86_400_000_000_000, "day": 86_400_000_000_000}


def check_label(label: Any, name: str = "label") -> str:
    """``label`` validated: "open" (timestamps are bar opens) or "close" (bar closes)."""
    if not isinstance(label, str) or label not in LABELS:
        raise ValueError(f"{name} must be 'open' (timestamps are bar opens) or 'close' (bar closes), "
                         f"got {label!r}")
    return label


def interval_ns(interval: Any, name: str = "interval") -> Optional[int]:
    """``interval`` as positive int64 nanoseconds, or None (infer): seconds as a number,
    a ``datetime.timedelta`` / ``numpy.timedelta64``, or a string such as "60s", "1min", "5T"."""
    import datetime as _dt
    import re

    if interval is None:
        return None
    if isinstance(interval, bool):
        raise TypeError(f"{name} must be seconds (a number), a timedelta or a string such as '1min', "
                        "got bool")
    if isinstance(interval, _dt.timedelta):
        ns = (interval.days * 86_400 + interval.seconds) * 1_000_000_000 + interval.microseconds * 1_000
    elif isinstance(interval, np.timedelta64):
        if np.isnat(interval):
            raise ValueError(f"{name} must be a positive duration, got NaT")
        if np.datetime_data(interval.dtype)[0] == "generic":  # a bare count: seconds? minutes? not guessed
            raise ValueError(f"{name}: numpy.timedelta64({int(interval.astype(np.int64))}) has no unit; give one, "
                             f"e.g. numpy.timedelta64({int(interval.astype(np.int64))}, 's')")
        ns = int(interval.astype("timedelta64[ns]").astype(np.int64))
    elif isinstance(interval, (int, np.integer)):
        ns = int(interval) * 1_000_000_000
    elif isinstance(interval, (float, np.floating)):
        if not np.isfinite(interval):
            raise ValueError(f"{name} must be a positive number of seconds, got {interval!r}")
        ns = int(round(float(interval) * 1e9))
        if ns != float(interval) * 1e9:
            raise ValueError(f"{name}={interval!r} seconds is not a whole number of nanoseconds")
    elif isinstance(interval, str):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)?\s*([a-zA-Z]+)\s*", interval)
        unit = m.group(2).lower() if m else ""
        unit = {"mins": "min", "minute": "min", "minutes": "min", "secs": "sec", "second": "sec",
                "seconds": "sec", "hours": "hour", "days": "day"}.get(unit, unit)
        if not m or unit not in _UNIT_NS:
            raise ValueError(f"{name}={interval!r} is not a duration such as '60s', '1min', '5min', '1h'")
        ns = int(round(float(m.group(1) or 1) * _UNIT_NS[unit]))
    else:
        raise TypeError(f"{name} must be seconds (a number), a timedelta or a string such as '1min', "
                        f"got {type(interval).__name__}")
    if ns <= 0:
        raise ValueError(f"{name} must be a positive duration, got {interval!r}")
    return ns


def infer_interval_ns(ts: np.ndarray, name: str = "timestamp") -> int:
    """The bar interval of int64-ns ``ts``: the modal positive spacing between consecutive distinct
    timestamps. Raises ValueError (asking for interval=) when there are fewer than two distinct
    timestamps or no spacing covers at least half of them."""
    t = np.unique(np.asarray(ts, dtype=np.int64))
    if t.size < 2:
        raise ValueError(f"cannot infer the bar interval from {t.size} distinct {name} value(s): "
                         "pass interval= (seconds, or a string such as '1min')")
    gaps = np.diff(t)
    values, counts = np.unique(gaps, return_counts=True)
    k = int(np.argmax(counts))
    if counts[k] < _MODAL_SHARE * gaps.size:
        raise ValueError(f"{name} has no clear bar interval (the most common spacing, {int(values[k])} ns, "
                         f"covers {counts[k]} of {gaps.size} gaps): pass interval= (seconds, or a "
                         "string such as '1min')")
    return int(values[k])


def bar_opens(ts: np.ndarray, label: Any = "open", interval: Any = None, *,
              name: str = "timestamp") -> Tuple[np.ndarray, Optional[int]]:
    """The bars' open times (int64 ns) from timestamps stamped at bar ``label``, and the interval
    used (ns; None when label="open" and no interval was given). label="close" subtracts the bar
    interval: ``interval=`` or, when None, the modal spacing (infer_interval_ns). The one place
    where close stamps become open stamps: readers, sessions, features, Live and dask call it."""
    label = check_label(label)
    step = interval_ns(interval)
    t = np.asarray(ts, dtype=np.int64)
    if label == "open":
        return t, step
    if step is None:
        step = infer_interval_ns(t, name)
    lo = np.iinfo(np.int64).min + 1 + step
    if t.size and int(t.min()) < lo:
        from ._errors import input_error

        i = int(np.argmin(t))
        raise input_error(f"{name}[{i}] minus the bar interval leaves the int64 nanosecond range", name, i)
    return t - step, step


def timestamps_ns(arr: np.ndarray, name: str, time_unit: Optional[str] = None,
                  kinds: str = "datetime64") -> np.ndarray:
    """A 1-D host timestamp array as int64 ns UTC: datetime64 of any unit (datetime64_ns) or
    integer epoch times in ``time_unit`` (epoch_ns); anything else is a TypeError naming ``name``
    and the accepted ``kinds``. The one conversion sessions and the feature tables share."""
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.dtype.kind == "M":
        return check_datetimes(datetime64_ns(arr, name), name)
    if arr.dtype.kind in "iu":
        return epoch_ns(arr, name, time_unit)
    raise TypeError(f"{name} must be integer epoch times (ns, or time_unit=), {kinds}, got dtype {arr.dtype}")


def check_datetimes(ns: np.ndarray, name: str) -> np.ndarray:
    """``ns`` (datetimes as int64 ns) as given, or ValueError when they are all in 1970 but 1990..2100 times
    in another unit: epoch integers built into datetimes in the wrong unit (pandas 3 keeps datetimes in
    microseconds, so .asi8 / astype('int64') give microseconds, not the nanoseconds pd.to_datetime assumes)."""
    check_plausible(ns, name, "ns", hint=_DATETIME_HINT)
    return ns


_DATETIME_HINT = ("these datetimes were likely built from epoch integers in {unit} read as nanoseconds (pandas 3 "
                  "datetimes hold microseconds: .asi8 / astype('int64') give microseconds); rebuild them with the "
                  "integers' unit, e.g. pd.to_datetime(x, unit='{unit}', utc=True)")


def host(x: Any, name: str = "timestamp") -> Any:
    """GPU arrays copied to the host (torch / cupy by their library); anything else as is. ``name``: the
    argument that errors name."""
    if x is None or gpu_location(x, name) is None:
        return x
    return gpu_to_host(x, name)


def naive_pandas_error(name: str, accessor: str = ".dt") -> ValueError:
    """The error of a timezone-naive pandas datetime where an instant is needed (vpoc.sessions,
    vpoc.Live): which zone its wall-clock times are in is not guessed."""
    return ValueError(f"{name} is a timezone-naive pandas datetime; localize it first, e.g. "
                      f"{name}{accessor}.tz_localize('America/Chicago'), or pass int64 ns UTC")


def input_timestamps_ns(x: Any, n: int, time_unit: Optional[str], naive_utc: bool = True,
                        name: str = "timestamp") -> np.ndarray:
    """A ``timestamp=`` argument of ``n`` rows as int64 ns since the epoch, UTC: integers (in
    ``time_unit``, None: ns, checked for plausibility), datetime64 (naive = UTC) or pandas datetimes
    (tz-aware converted to UTC; naive ones read as UTC, or refused as vpoc.sessions refuses them
    with ``naive_utc=False``: naive_pandas_error); GPU arrays are copied to the host. The feature
    tables and vpoc.Live share it."""
    if type(x).__module__.split(".")[0] == "pandas" and hasattr(x, "dtype") \
            and str(getattr(x, "dtype", "")).startswith("datetime64"):
        import pandas as pd

        idx = pd.DatetimeIndex(x)
        if idx.tz is None and not naive_utc:
            raise naive_pandas_error(name, ".dt" if hasattr(x, "dt") else "")
        if idx.tz is not None:
            idx = idx.tz_convert("UTC").tz_localize(None)
        arr = idx.to_numpy(dtype="datetime64[ns]")
    else:
        arr = np.asarray(unmasked(host(x, name), name))
        if arr.size == 0 and arr.ndim == 1 and arr.dtype == np.float64:  # [] (no rows): no dtype to read
            arr = arr.astype(np.int64)
    out = timestamps_ns(arr, name, time_unit, "datetime64 or pandas datetimes")
    if out.shape[0] != n:
        raise ValueError(f"{name} has length {out.shape[0]} but the data has {n} rows")
    return np.ascontiguousarray(out)


def yyyymmdd_days(labels: np.ndarray, what: str) -> np.ndarray:
    """YYYYMMDD integers as days since 1970-01-01 (ValueError naming ``what`` when one is no date)."""
    import datetime as _dt

    lab = np.asarray(labels)
    if lab.dtype.kind not in "iu":
        raise ValueError(f"{what} must be YYYYMMDD integers, got dtype {lab.dtype}")
    out = np.zeros(lab.shape[0], dtype=np.int64)
    epoch = _dt.date(1970, 1, 1).toordinal()
    for i, x in enumerate(lab.tolist()):
        try:
            out[i] = _dt.date(x // 10000, x // 100 % 100, x % 100).toordinal() - epoch
        except ValueError:
            raise ValueError(f"{what}[{i}] = {x} is not a date YYYYMMDD") from None
    return out


def days_yyyymmdd(days: Any) -> np.ndarray:
    """Days since 1970-01-01 -> YYYYMMDD integers (int64): the inverse of :func:`yyyymmdd_days`."""
    d = np.asarray(days, dtype=np.int64).astype("datetime64[D]")
    y = d.astype("datetime64[Y]").astype(np.int64) + 1970
    m = d.astype("datetime64[M]").astype(np.int64) % 12 + 1
    dd = (d - d.astype("datetime64[M]")).astype(np.int64) + 1
    return (y * 10000 + m * 100 + dd).astype(np.int64)


# An ISO date, a time of day after it allowed (session_dates refuses one that is not midnight): strings
# as session ids are read only in this one unambiguous form.
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?")
# ... whose fraction of a second is not zero past the microseconds ("00:00:00.0000001": a time of day)
_SUB_MICROSECOND = re.compile(r"\.\d{6}0*[1-9]")


def _iso_date(text: str) -> bool:
    if not _ISO_DATE.fullmatch(text):
        return False
    try:
        np.datetime64(text, "us")
    except ValueError:  # 2024-13-45
        return False
    return True


def _iso_dates(seq: Any, name: str) -> np.ndarray:
    """String session ids (a list / tuple / array / Series of str) as datetime64[us]: each an ISO
    date ("2024-01-02"); anything else raises ValueError naming ``name``, the first such index and
    what to pass (the same ids as integers, or dates)."""
    from ._errors import input_error

    if isinstance(seq, np.ndarray) and seq.dtype.kind in ("U", "S"):
        other, arr = [], seq.astype(str)
    else:  # a list, tuple or object column: strings only (None, NaN: missing; a date among strings)
        seq = list(seq)
        other = [i for i, x in enumerate(seq) if not isinstance(x, (str, bytes))][:1]
        arr = np.array([x.decode() if isinstance(x, bytes) else x for x in seq], dtype=object if other else str)
    if not other:
        unique = [str(u) for u in np.unique(arr)]
        bad = [u for u in unique if not _iso_date(u)]
        other = [int(np.argmax(np.isin(arr, bad)))] if bad else []
        # a time of day finer than the microseconds read below (datetime64[us] would drop it: a midnight)
        fine = [u for u in unique if _SUB_MICROSECOND.search(u)] if not other else []
        if fine:
            i = int(np.argmax(np.isin(arr, fine)))
            raise _timed(name, i, str(arr[i]))
    if other:
        i = other[0]
        x = arr[i]
        shown = repr(str(x)) if isinstance(x, str) else repr(x)
        raise input_error(f"{name}[{i}] = {shown} is not an ISO date (YYYY-MM-DD): string {name} are read as trade "
                          f"dates only; pass integer ids (YYYYMMDD strings: np.asarray({name}, dtype=np.int64); "
                          f"names such as contract symbols: pandas.factorize({name})[0]) or dates (datetime64, "
                          f"datetime.date, 'YYYY-MM-DD' strings; another format: pandas.to_datetime({name}, "
                          f"format=...))", name, i)
    return arr.astype("datetime64[us]")


def _date_objects(ids: Any, name: str) -> Optional[np.ndarray]:
    """A list / tuple (or object array / Series) whose first element is a date (numpy datetime64,
    datetime.date / datetime, pandas Timestamp) as datetime64[us] of the elements' wall times
    (tz-aware ones in their own zone); strings (a numpy str array, or a first element that is one) as
    ISO dates (:func:`_iso_dates`: anything else refused); None for anything else (integer ids: the
    engine's)."""
    import datetime as _dt

    kind = getattr(getattr(ids, "dtype", None), "kind", None)
    if isinstance(ids, (list, tuple)):
        seq = ids
    elif kind == "O":
        seq = list(ids)
    elif kind in ("U", "S"):
        return _iso_dates(ids, name) if np.ndim(ids) == 1 and len(ids) else None
    else:
        return None
    if len(seq) and isinstance(seq[0], (str, bytes)):
        return _iso_dates(seq, name)
    if len(seq) == 0 or not isinstance(seq[0], (np.datetime64, _dt.date)):
        return None
    vals = [x.replace(tzinfo=None) if isinstance(x, _dt.datetime) and x.tzinfo is not None else x for x in seq]
    try:
        return np.array(vals, dtype="datetime64[us]")
    except (TypeError, ValueError):
        raise TypeError(f"{name} mixes dates with other values: give one date (or one integer id) per row") from None


def session_dates(ids: Any, name: str = "session_ids") -> Optional[np.ndarray]:
    """Datetime session ids (a datetime64 array of any unit, a pandas Series / Index, tz-aware ones
    read in their own zone; dates as objects or ISO date strings: :func:`_date_objects`) as their
    naive datetime64 values, each a date (midnight); None when
    ``ids`` are no datetimes (integer ids: the caller's). A NaT, or a time of day (ids that are
    timestamps, not trade dates), raises ValueError naming ``name`` and the index."""
    dtype = getattr(ids, "dtype", None)
    if getattr(dtype, "kind", None) != "M":
        ids = _date_objects(ids, name)  # a list / tuple / object array of dates, or None
        if ids is None:
            return None
        dtype = ids.dtype
    if getattr(dtype, "tz", None) is not None:  # pandas tz-aware: the dates of its own zone
        ids = ids.dt.tz_localize(None) if hasattr(ids, "dt") else ids.tz_localize(None)
    arr = np.asarray(ids)
    if arr.dtype.kind != "M" or arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of dates, got {arr.dtype} of shape {arr.shape}")
    from ._errors import input_error

    nat = np.isnat(arr)
    if nat.any():
        i = int(np.argmax(nat))
        raise input_error(f"{name}[{i}] is NaT: every row needs its session's date", name, i)
    timed = arr != arr.astype("datetime64[D]")
    if timed.any():
        i = int(np.argmax(timed))
        raise _timed(name, i, arr[i])
    return arr


def _timed(name: str, i: int, value: Any) -> Exception:
    """The refusal of session id ``name[i]`` = ``value``, a date with a time of day (not midnight)."""
    from ._errors import input_error

    return input_error(f"{name}[{i}] = {value} has a time of day: datetime session ids must be dates (each "
                       f"row's trade date, at midnight), one session per date; pass dates, e.g. "
                       f"ts.dt.normalize() of a pandas Series (its local dates), the trade_date column of a "
                       f"vpoc.io.contracts table, or session=vpoc.sessions.globex(ts) for CME trade dates", name, i)


def session_date_ids(ids: Any, name: str = "session_ids") -> Any:
    """``ids`` as the engine reads them: datetime dates (:func:`session_dates`) as YYYYMMDD integers,
    the labels of their sessions (docs/contract.md); anything else as given."""
    dates = session_dates(ids, name)
    if dates is None:
        return ids
    return days_yyyymmdd(dates.astype("datetime64[D]").astype(np.int64))


def zone_offset_s(s: int, tz: Any) -> int:
    """UTC offset (seconds) of ``tz`` (a tzinfo) at the instant ``s`` seconds after the epoch."""
    import datetime as _dt

    delta = _dt.datetime.fromtimestamp(s, tz).utcoffset()
    return 0 if delta is None else int(delta.total_seconds())


def offset_change(day: int, tz: Any, before: int) -> int:
    """The first second of UTC day ``day`` (days since the epoch) at which the offset is no
    longer ``before`` (it differs at the next midnight): bisection to the second."""
    lo, hi = day * 86400, (day + 1) * 86400
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if zone_offset_s(mid, tz) == before:
            lo = mid
        else:
            hi = mid
    return hi


def utc_offset_ns(ts: np.ndarray, tz: Any) -> np.ndarray:
    """UTC offset (ns) of ``tz`` at each instant: the zone's offsets at every UTC midnight of
    the span, each change located to the second by bisection (at most one change a day)."""
    if ts.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    sec = np.floor_divide(ts, 10**9)
    d0, d1 = int(sec.min()) // 86400, int(sec.max()) // 86400 + 1
    days = list(range(d0, d1 + 1))
    offs = [zone_offset_s(d * 86400, tz) for d in days]
    when = []
    value = [offs[0]]
    for i in range(len(days) - 1):
        if offs[i] != offs[i + 1]:
            when.append(offset_change(days[i], tz, offs[i]))
            value.append(offs[i + 1])
    k = np.searchsorted(np.asarray(when, dtype=np.int64), sec, side="right")
    return np.asarray(value, dtype=np.int64)[k] * 10**9
