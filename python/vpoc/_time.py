"""Integer epoch timestamps to int64 nanoseconds UTC, with the unit check every timestamp input shares.

Contract: integers are read in ``time_unit`` ("s", "ms", "us", "ns"; None = "ns"); values that all
fall in 1990..2100 only when read in another unit raise ValueError naming that unit and how to pass it.
The int64 minimum (-2**63, the integer form of NaT) is a missing timestamp, never a date: it raises
ValueError naming the argument and index, as does a value outside the int64 nanosecond range.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from ._arrays import unmasked

__all__ = ["TIME_UNITS", "check_time_unit", "check_plausible", "datetime64_ns", "epoch_ns", "likely_unit",
           "ns_range_error"]

#: Nanoseconds per unit.
TIME_UNITS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
_NAMES = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
# 1990-01-01 and 2100-01-01 in ns since the epoch: the span a market timestamp is taken to lie in.
# The spans of the four units do not overlap (each is < 1000x wide), so at most one unit fits.
_LO_NS = 631_152_000 * 1_000_000_000
_HI_NS = 4_102_444_800 * 1_000_000_000


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
            return int(np.argmax(bad)), f"{unit} is out of the int64 nanosecond range"
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
    if bad is not None:
        i, what = bad
        raise ValueError(f"{name}[{i}] = {int(arr.reshape(-1)[i])} {what}")
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
