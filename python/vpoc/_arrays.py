"""Input normalisation: any 1-D array-like -> a contiguous numpy array the engine reads in place.

Contract: no copy when the input is already a contiguous array of a dtype the engine reads.
numpy masked arrays with masked entries raise ValueError (vpoc has no notion of a missing row:
drop the rows or fill them first); a masked array with nothing masked is read as its data.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from typing import Any, Optional, Tuple

import numpy as np

from . import _core
from ._errors import input_error

__all__ = [
    "unmasked", "as_array", "as_prices", "as_volume", "as_index", "gpu_location",
    "check_grid", "report_grid", "coarse_grid", "derived_prices", "COARSE_MIN_FACTOR", "COARSE_MIN_PRICES", "first_off_grid", "first_decrease", "duplicate_bars", "warn_duplicate_bars", "gpu_inputs_on_cpu", "host_prices", "host_volume", "host_index", "gpu_to_host", "volume_too_large", "GRID_MAX_SHARE", "GRID_TOLERANCE", "COMMON_TICKS", "MAX_VOLUME",
]

#: dtypes the C++ engine reads without conversion, per role.
PRICE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
VOLUME_DTYPES = PRICE_DTYPES + (np.dtype(np.int32), np.dtype(np.int64))


#: The GPU index of an array in GPU memory (a CUDA torch tensor, ``__cuda_array_interface__``, a DLPack
#: device of type CUDA, CUDA managed or ROCm), or None for host data: the C++ reader's rule
#: (cpp/bindings/gpu_input.cpp, which also reads GPU inputs for the engine: _core.gpu_inputs).
gpu_location = _core.gpu_location


def gpu_to_host(x: Any, name: str, start: int = 0, stop: Optional[int] = None) -> Any:
    """Elements start..stop-1 (slice bounds; stop None: to the end) of a GPU array, on the host: torch
    tensors by torch (``.cpu()``, a tensor), CuPy arrays by CuPy (``.get()``), any other
    ``__cuda_array_interface__`` / DLPack producer by vpoc's reader (a new NumPy array)."""
    if hasattr(x, "cpu"):
        return _detached(x[start:stop]).cpu()
    if hasattr(x, "get"):
        return x[start:stop].get()
    return _core.gpu_rows_to_host(x, start, (1 << 62) if stop is None else stop, name)


def _detached(x: Any) -> Any:
    """A torch tensor that tracks gradients, as its data (its array interfaces raise otherwise)."""
    if getattr(x, "requires_grad", False) and hasattr(x, "detach"):
        return x.detach()
    return x


def unmasked(x: Any, name: str) -> Any:
    """``x`` itself, or its data when it is a numpy masked array with nothing masked; ValueError
    naming ``name`` and the first masked index when any entry is masked (np.asarray would hand
    the engine the values behind the mask)."""
    if not isinstance(x, np.ma.MaskedArray):
        return x
    mask = np.ma.getmaskarray(x)
    if mask.any():
        i = np.unravel_index(int(np.argmax(mask)), mask.shape) if mask.ndim != 1 else int(np.argmax(mask))
        raise ValueError(
            f"{name} is a numpy masked array with {int(mask.sum())} masked value(s) (first at "
            f"index {i}); masked values are not supported: drop those rows from every column "
            f"(e.g. keep = ~np.ma.getmaskarray({name}), or {name}.compressed() when only it is "
            f"masked) or fill them ({name}.filled(value))")
    return x.data


def _to_numpy(x: Any, name: str) -> np.ndarray:
    x = unmasked(x, name)
    if isinstance(x, np.ndarray):
        return x
    x = _detached(x)  # a torch tensor that tracks gradients: read its data, not the graph
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        device_type = int(x.__dlpack_device__()[0])
        if device_type != 1 and _core.dlpack_host_memory(device_type):
            return np.asarray(x)  # pinned host memory (CUDA, ROCm), which numpy reads through __array__
        if device_type != 1:  # not kDLCPU: the C++ reader's rule says it is not host memory
            raise ValueError(
                f"{name} lives on a GPU (DLPack device type {device_type}) but this call computes "
                "on the CPU; pass device='cpu' data or use a GPU build of vpoc"
            )
        try:
            return np.from_dlpack(x)
        except (TypeError, BufferError, RuntimeError):
            pass  # e.g. dtypes numpy cannot view: fall back to the array protocol
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name} must be a 1-D numeric array-like, got {type(x).__name__}: {e}") from None


def _first_not_number(arr: np.ndarray, name: str) -> str:
    """``"name[i] = None is not a number; "`` for the first value of a 1-D object array (a list with a
    None, a string) that is no real number, else "" (the dtype alone says it)."""
    if arr.dtype != object or arr.ndim != 1:
        return ""
    import numbers

    for i, v in enumerate(arr.tolist()):
        if v is None or isinstance(v, bool) or not isinstance(v, numbers.Real):
            return f"{name}[{i}] = {v!r} is not a number; "
    return ""


def as_array(x: Any, name: str) -> np.ndarray:
    """Return ``x`` as a 1-D, C-contiguous numeric numpy array (a view when possible)."""
    arr = _to_numpy(x, name)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{_first_not_number(arr, name)}{name} must be a numeric array (integer or float), "
                        f"got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise input_error(f"{name} must be 1-D, got shape {arr.shape}", name)
    if not arr.dtype.isnative:  # big-endian data: the same values in this machine's byte order
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return np.ascontiguousarray(arr)


def as_prices(x: Any, name: str) -> np.ndarray:
    """A price array as float32/float64 (other numeric dtypes are widened to float64)."""
    arr = as_array(x, name)
    return arr if arr.dtype in PRICE_DTYPES else arr.astype(np.float64)


def as_volume(x: Any, name: str) -> np.ndarray:
    """A volume array as float32/float64/int32/int64 (exact conversions only)."""
    arr = as_array(x, name)
    if arr.dtype in VOLUME_DTYPES:
        if arr.dtype == np.int64 and arr.shape[0]:
            _check_int_volume(arr, name)
        return arr
    if arr.dtype == np.float16:  # exact in float32
        return arr.astype(np.float32)
    if arr.dtype.kind == "f":  # long double: the nearest float64
        return arr.astype(np.float64)
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        i = int(np.argmax(arr > np.iinfo(np.int64).max))
        raise ValueError(f"{name}[{i}]={arr[i]} does not fit in int64")
    arr = arr.astype(np.int64)
    if arr.shape[0]:
        _check_int_volume(arr, name)
    return arr


#: The largest volume (and session total) vpoc sums exactly: 2**53 (docs/contract.md, "Exact sums").
MAX_VOLUME = 2**53


def volume_too_large(name: str, i: int, value: Any) -> ValueError:
    return ValueError(f"{name}[{i}]={value} is above 2**53 ({MAX_VOLUME}), the largest volume vpoc "
                      f"sums exactly; scale {name} down")


def _check_int_volume(arr: np.ndarray, name: str) -> None:
    """The contract's volume limit on the exact integers, before the engine widens them to float64
    (where 2**53 + 1 would become 2**53 and pass)."""
    if int(np.maximum.reduce(arr)) > MAX_VOLUME:
        i = int(np.argmax(arr > MAX_VOLUME))
        raise volume_too_large(name, i, int(arr[i]))


def as_index(x: Any, name: str) -> np.ndarray:
    """Offsets or session ids as int64 (datetime64 ids are taken as their int64 ticks)."""
    arr = _to_numpy(x, name)
    if arr.dtype.kind in "mM":
        if arr.size and np.isnat(arr).any():
            raise ValueError(f"{name}[{int(np.argmax(np.isnat(arr)))}] is NaT")
        arr = arr.view(np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise input_error(f"{name} must be 1-D, got shape {arr.shape}", name)
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{name} values must fit in int64")
    return np.ascontiguousarray(arr, dtype=np.int64)


def gpu_inputs_on_cpu() -> ValueError:
    """The error of a CPU call (device='cpu') given inputs that live on a GPU."""
    return ValueError("device='cpu' but the inputs live on a GPU; pass device='cuda' (or 'auto'), or copy "
                      "them to the host")


def host_prices(x: Any, name: str) -> np.ndarray:
    """The engine's converter of a price input that is not a plain float32/float64 numpy array."""
    if gpu_location(x, name) is not None:
        raise gpu_inputs_on_cpu()
    return as_prices(x, name)


def host_volume(x: Any, name: str) -> np.ndarray:
    """The engine's converter of a volume input that is not a plain numeric numpy array."""
    if gpu_location(x, name) is not None:
        raise gpu_inputs_on_cpu()
    return as_volume(x, name)


def host_index(x: Any, name: str) -> np.ndarray:
    """The engine's converter of offsets / session ids (on a GPU: copied to the host, they are small)."""
    if gpu_location(x, name) is not None:
        x = gpu_to_host(x, name)
    return as_index(x, name)


# --------------------------------------------------------------------------- price grid

#: Share of prices off the ``tick_size`` grid above which vpoc refuses them (unless ``snap=True``).
GRID_MAX_SHARE = 0.001
#: Off-grid prices up to this share of the given grid's, all on a finer common tick, read as possibly a
#: few bad prints: the error then also offers snap=True on the given grid (report_grid).
GRID_FEW_SHARE = 0.01
#: A price is on the grid when ``|p / tick_size - rint(p / tick_size)|`` is at most this many ticks,
#: plus the rounding of the price's own dtype (float32 holds about 7 significant digits: its
#: 6000.1 is 6000.10009765625).
GRID_TOLERANCE = 1e-6
#: Ticks the error message may suggest, largest first (the largest holding >= 99.9% of the prices).
COMMON_TICKS = (0.25, 0.1, 0.05, 1 / 32, 1 / 64, 0.01, 0.005, 0.001)
_SAMPLE = 1 << 20  # prices the suggested grid is measured on


def _host_off(arr: np.ndarray, tick: float, threads: int = 1) -> Tuple[int, int]:
    """(number of prices off the grid, index of the first; -1 when none) of a host array: the
    engine's own count (core/grid.hpp), on up to ``threads`` threads (0: one per core)."""
    if arr.dtype not in PRICE_DTYPES or not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr, dtype=np.float64)
    return _core.count_off_grid(arr, float(tick), threads)


def _host_copy(x: Any, start: int, stop: int) -> np.ndarray:
    """Values start..stop-1 of a host or GPU array as a numpy array of the same dtype."""
    if isinstance(x, np.ndarray):
        return x[start:stop].copy()
    if gpu_location(x, "price") is not None:
        return np.asarray(gpu_to_host(x, "price", start, stop))
    return _detached(x[start:stop]).cpu().numpy()  # a torch CPU tensor


def _suggest(arrays: Any) -> Optional[float]:
    """The largest of COMMON_TICKS on which >= 99.9% of (a sample of) the prices lie."""
    parts = []
    for x in arrays:
        if isinstance(x, np.ndarray):
            parts.append(x[::max(1, x.shape[0] // _SAMPLE)].copy())
        else:  # a GPU array: a contiguous stretch (a strided view may not copy cheaply)
            parts.append(_host_copy(x, 0, _SAMPLE))
    if not parts:
        return None
    if len({p.dtype for p in parts}) > 1:
        parts = [p.astype(np.float64) for p in parts]
    sample = np.concatenate(parts)
    sample = sample[np.isfinite(sample)]
    if not sample.size:
        return None
    for tick in COMMON_TICKS:
        off, _ = _host_off(sample, tick)
        if off <= GRID_MAX_SHARE * sample.size:
            return tick
    return None


def _tick_text(tick: float) -> str:
    for frac in (32, 64):
        if tick == 1 / frac:
            return f"1/{frac} ({tick})"
    return repr(tick)


def check_grid(prices: Any, tick_size: float, snap: bool = False, name: str = "price",
               stacklevel: int = 2, threads: int = 0, counted_in: str = "the result's snapped_prices") -> int:
    """Check that host prices lie on the ``tick_size`` grid; return how many do not (they are
    snapped to the nearest tick by the engine). For callers outside from_trades / from_bars, which
    the engine checks itself (core/grid.hpp: on the CPU before it runs, on a GPU in its range pass).

    ``prices``: one array (named ``name``) or a mapping ``{name: array}`` (a bar's high, low,
    close, open) of host prices. A price is on the grid within ``GRID_TOLERANCE`` (1e-6) ticks plus
    its dtype's own rounding. More than ``GRID_MAX_SHARE`` (0.1%) off the grid: ValueError naming
    ``tick_size``, the share, the first off-grid price (and index) and the grid the data suggests,
    unless ``snap=True``. Some but at most 0.1% off: a UserWarning counting them unless ``snap=True``.
    Counted by the engine's own rule on up to ``threads`` threads (0: one per core). A tick_size
    that is not a finite positive number is left to the engine's own error. ``counted_in``: where
    the warning says the rounded prices are counted (vpoc.Live: ``live.snapped_prices``).
    """
    tick = float(tick_size)
    if not (tick > 0.0 and math.isfinite(tick)):
        return 0
    items = list(prices.items()) if isinstance(prices, dict) else [(name, prices)]
    items = [(k, as_prices(x, k)) for k, x in items if x is not None]
    total, count, first = 0, 0, None
    for key, x in items:
        off, i = _host_off(x, tick, threads)
        total += int(x.shape[0])
        if off and first is None:
            first = (key, i, x)
        count += off
    if not count:
        return 0
    return report_grid(count, total, first, items, tick, snap, stacklevel + 1, counted_in=counted_in)


#: A coarse grid: every price a multiple of at least this many ticks (CoarseGridWarning) ...
COARSE_MIN_FACTOR = 4
#: ... among at least this many distinct prices (a few prices, or one, say nothing about the grid).
COARSE_MIN_PRICES = 16
_COARSE_SAMPLE = 512  # prices the factor is first measured on (every price is checked before it is reported)
_DERIVED: "contextvars.ContextVar[bool]" = contextvars.ContextVar("vpoc_derived_prices", default=False)


@contextlib.contextmanager
def derived_prices() -> Any:
    """Within it, from_trades / from_bars skip :func:`coarse_grid`: vpoc's own calls on prices it made
    from a profile's ladder rows (composites, TPO counts, diffs), whose grid the caller's call reported."""
    token = _DERIVED.set(True)
    try:
        yield
    finally:
        _DERIVED.reset(token)


def _grid_ticks(x: np.ndarray, tick: float) -> np.ndarray:
    """The int64 tick numbers of the finite prices of ``x`` that lie on the ``tick`` grid (the
    others are the off-grid report's: refused or rounded)."""
    t = np.asarray(x, dtype=np.float64) / tick
    q = np.rint(t)
    keep = np.isfinite(q) & (np.abs(t - q) <= 1e-3) & (np.abs(q) < 2.0**62)
    return q[keep].astype(np.int64)


def coarse_grid(first: Any, prices: Any, tick_size: float, ticks_per_row: int = 1, bins: Any = None) -> int:
    """The factor k when every price of ``prices`` (a mapping {name: array} of host prices, ``first``
    its array of one price per row: price, or high; GPU arrays are skipped: only host data is read)
    lies on a grid of k >= COARSE_MIN_FACTOR ticks among >= COARSE_MIN_PRICES distinct prices and
    rows, reported by a vpoc.CoarseGridWarning (prices in cents with a tick in points:
    ``tick_size=0.25`` on 512525.0 is k = 100, ``tick_size=25.0``); else 0.
    Cheap: the gcd of the tick numbers of a sample of 512 prices of ``first`` (a few us), and only
    when it is >= k every price (the engine's count_off_grid on the k-tick grid, then the exact gcd
    of all). Skipped inside :func:`derived_prices` and with ``bins`` (N equal-width bins: no tick
    ladder); with ``ticks_per_row`` t only a grid that leaves at least one empty row between prices
    (k // t >= 2) is reported. Prices off the tick grid are left to the off-grid report (refused or
    rounded)."""
    if bins:
        return 0
    tpr = max(1, int(ticks_per_row))
    tick = float(tick_size)
    if type(first) is np.ndarray and tick > 0.0:  # the common case, in a few us
        if first.shape[0] < COARSE_MIN_PRICES:  # a call of a few rows
            return 0
        # the gcd of (a sample of) the first array's tick numbers bounds the factor (NaN, inf and
        # off-grid prices make no large gcd: any factor found is checked on every price below)
        with np.errstate(invalid="ignore", over="ignore"):
            q = np.rint(first[::max(1, first.shape[0] // _COARSE_SAMPLE)] / tick).astype(np.int64)
        if int(np.gcd.reduce(q)) < COARSE_MIN_FACTOR:
            return 0
    if _DERIVED.get():
        return 0
    arrays = []
    for name, x in prices.items():
        if x is None or gpu_location(x, name) is not None:
            continue
        arrays.append(x if isinstance(x, np.ndarray) else as_prices(x, name))
    n = sum(int(a.shape[0]) for a in arrays)
    if n < COARSE_MIN_PRICES or not (tick > 0.0 and math.isfinite(tick)):
        return 0
    step = max(1, n // _COARSE_SAMPLE)
    ticks = np.concatenate([_grid_ticks(a[::step], tick) for a in arrays])
    k = int(np.gcd.reduce(ticks)) if ticks.size else 0
    if k < COARSE_MIN_FACTOR or k // tpr < 2 or np.unique(ticks).size < COARSE_MIN_PRICES:
        return 0
    if any(_host_off(a, k * tick, 0)[0] for a in arrays):  # not every price: the exact gcd of all
        k = int(np.gcd.reduce(np.concatenate([_grid_ticks(a, tick) for a in arrays])))
        if k < COARSE_MIN_FACTOR or k // tpr < 2:
            return 0
    from ._warnings import CoarseGridWarning, data_warning, user_stacklevel

    coarse = float(f"{k * tick:.12g}")
    n_empty = k // tpr - 1
    empty = f"{n_empty} empty row{'' if n_empty == 1 else 's'}" if k % tpr == 0 else f"about {n_empty} empty rows"
    rows = "" if tpr == 1 else f" of ticks_per_row={tpr} ticks"
    data_warning(f"the prices all lie on a grid {k} times coarser than tick_size={tick!r} "
                 f"(every price is a multiple of {coarse!r}; {COARSE_MIN_PRICES} or more distinct prices): the "
                 f"profile's ladder{rows} holds {empty} between neighbouring prices, which moves the POC and "
                 f"value area. If the prices are in cents (or another unit {k} times finer than the tick), pass "
                 f"tick_size={coarse!r}; if tick_size={tick!r} is right, filter vpoc.CoarseGridWarning",
                 CoarseGridWarning, user_stacklevel())
    return k


def off_grid_at(x: Any, i: int, tick_size: float) -> bool:
    """Whether price ``x[i]`` (a host or GPU array) is off the ``tick_size`` grid (the engine's rule)."""
    return _host_off(as_prices(_host_copy(x, i, i + 1), "price"), tick_size)[0] > 0


def _float32_text(tick: float) -> str:
    """A sentence when ``tick`` is the float32 nearest a short decimal it is not (a numpy float32
    tick_size, or one read as float32: 0.10000000149011612 for 0.1), else ''."""
    if float(np.float32(tick)) != tick:
        return ""
    short = str(np.float32(tick))  # the shortest decimal that reads back as this float32
    if len(short) > 12 or float(short) == tick:
        return ""
    return (f" tick_size is a float32 ({tick!r}, the float32 nearest {short}): pass it as a Python float, "
            f"tick_size={short}.")


def report_grid(count: int, total: int, first: Tuple[str, int, Any], items: Any, tick: float, snap: bool,
                stacklevel: int = 2, rows: Any = None, counted_in: str = "the result's snapped_prices") -> int:
    """What ``count`` off-grid prices of ``total`` mean: ValueError when more than GRID_MAX_SHARE
    and not ``snap`` (naming the grid the data suggests), a UserWarning when fewer and not
    ``snap``; returns ``count``. ``first``: (name, index, array) of the first one; ``items``:
    the (name, array) pairs checked. ``rows``: the caller's input row of each index (the rows
    ``session=`` kept; None: the indices are the caller's rows): the example and the error's
    ``.index`` name the input row ``rows[index]``. A float32 ``tick`` (the float32 nearest a short
    decimal) is named in the error (never converted). ``counted_in``: the warning's count."""
    share = count / total
    key, i, x = first
    row = i if rows is None else int(rows[i])
    value = float(_host_copy(x, i, i + 1)[0])
    example = f"{key}[{row}]={value!r}"
    if share > GRID_MAX_SHARE and not snap:
        hint = _suggest([x for _, x in items if x is not None])
        if hint is not None and hint != tick:
            guess = f"the data suggests tick_size={_tick_text(hint)} (99.9% or more of the prices lie on it)."
            ratio = tick / hint
            if share <= GRID_FEW_SHARE and ratio > 1.5 and abs(ratio - round(ratio)) <= 1e-9 * ratio:
                # a finer grid holds them, but most prices are on the coarser one given: a few bad prints?
                guess += (f" With {100 * (1 - share):.3g}% of the prices on tick_size={tick!r}, the other {count} may "
                          f"be bad prints: snap=True keeps tick_size={tick!r} and rounds them to its grid (counted).")
        else:
            guess = ("no common tick (" + ", ".join(_tick_text(t) for t in COMMON_TICKS) + ") holds 99.9% "
                     "of them: are these back-adjusted (ratio) or averaged prices?")
        from ._errors import input_error

        reason = (f"{count} of {total} prices ({100 * share:.3g}%) are not on the grid of tick_size={tick!r} "
                  "(within 1e-6 ticks)")
        raise input_error(
            f"tick_size={tick!r}: {count} of {total} prices ({100 * share:.3g}%) are not on its grid "
            f"(within 1e-6 ticks), e.g. {example}; {guess}{_float32_text(tick)} Pass the tick size of the data, or "
            f"snap=True to round every price to the nearest tick", key, row, reason)
    if not snap:
        from ._warnings import collecting_row, data_warning

        data_warning(  # its example the row of a collecting caller's input (vpoc.dask: of the whole frame)
            f"tick_size={tick!r}: {count} of {total} prices ({100 * share:.3g}%) are not on its grid, "
            f"e.g. {key}[{collecting_row(row)}]={value!r}; they were rounded to the nearest tick ({counted_in}). "
            "Likely a few bad prints; pass snap=True to round them without this warning",
            UserWarning, stacklevel + 1, local=True)
    return count


def first_off_grid(r: Any, items: list, opts: Any) -> Tuple[str, int, Any]:
    """(name, row, array) of the first off-grid price of ``r`` among the (name, array) ``items``
    (``row``: its position in them, which report_grid says of the caller's input row): the engine
    names the input of a CPU count; a GPU count names the row, whose prices are tested here by the
    same rule."""
    k, i = r.first_off_grid
    if k >= 0:
        return items[k][0], i, items[k][1]
    for name, x in items:
        if off_grid_at(x, i, opts.tick_size):
            return name, i, x
    return items[0][0], i, items[0][1]  # pragma: no cover (changed under us)


def first_decrease(a: np.ndarray) -> int:
    """The first position ``i`` of the 1-D array ``a`` with ``a[i] < a[i - 1]``, -1 when ``a`` never
    decreases: the order check of timestamps and session labels (each caller words its error)."""
    if a.shape[0] > 1:
        down = np.flatnonzero(a[1:] < a[:-1])
        if down.size:
            return int(down[0]) + 1
    return -1


def duplicate_bars(ts: Any, columns: Any) -> Tuple[int, int]:
    """(exact duplicates, rows repeating the previous row's timestamp) of bars sorted by their int64
    timestamps ``ts`` with per-row ``columns`` (open, high, low, close, volume), as ``vpoc inspect``
    counts them: a row is an exact duplicate when another row has the same timestamp and values.
    One vectorised compare of the timestamps when none repeats; the values are compared only in
    the runs of equal timestamps."""
    t = np.asarray(ts, dtype=np.int64)
    if t.shape[0] < 2:
        return 0, 0
    same = t[1:] == t[:-1]
    repeats = int(np.count_nonzero(same))
    if not repeats:
        return 0, 0
    rows = np.zeros(t.shape[0], dtype=bool)  # the rows of runs of equal timestamps
    rows[1:] |= same
    rows[:-1] |= same
    idx = np.flatnonzero(rows)
    # exact: the timestamps and the float64 values' bits as int64 (rows of one run compare equal
    # only when every field does)
    table = np.stack([t[idx]] + [np.ascontiguousarray(np.asarray(c, dtype=np.float64)[idx]).view(np.int64)
                                 for c in columns], axis=1)
    return int(idx.shape[0] - np.unique(table, axis=0).shape[0]), repeats


def warn_duplicate_bars(ts: Any, columns: Any, what: str) -> int:
    """A vpoc.DuplicateRowsWarning counting the exact duplicate bars of ``ts`` / ``columns``
    (:func:`duplicate_bars`), which a profile counts twice; returns their number."""
    dups, repeats = duplicate_bars(ts, columns)
    if dups:
        import warnings

        from ._warnings import DuplicateRowsWarning, user_stacklevel

        n = int(np.asarray(ts).shape[0])
        warnings.warn(f"{what}: {dups:,} of {n:,} bars are exact duplicates of another bar (same timestamp, "
                      f"open, high, low, close and volume; {repeats:,} rows repeat the previous row's "
                      "timestamp): each copy's volume is counted again. If the source repeated them, drop the "
                      "rows equal in timestamp and every column first (for a DataFrame indexed by time: "
                      "df[~df.reset_index().duplicated().to_numpy()]; df.drop_duplicates() ignores the index "
                      "and would drop distinct bars too); vpoc inspect FILE reports them",
                      DuplicateRowsWarning, stacklevel=user_stacklevel())
    return dups
