"""Input normalisation: any 1-D array-like -> a contiguous numpy array the engine reads in place.

Contract: no copy when the input is already a contiguous array of a dtype the engine reads.
numpy masked arrays with masked entries raise ValueError (vpoc has no notion of a missing row:
drop the rows or fill them first); a masked array with nothing masked is read as its data.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Tuple

import numpy as np


__all__ = [
    "unmasked", "as_array", "as_prices", "as_volume", "as_index", "gpu_location", "gpu_view", "producer_stream",
    "check_grid", "report_grid", "host_prices", "host_volume", "host_index", "volume_too_large", "GRID_MAX_SHARE", "GRID_TOLERANCE", "COMMON_TICKS", "MAX_VOLUME",
]

#: dtypes the C++ engine reads without conversion, per role.
PRICE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
VOLUME_DTYPES = PRICE_DTYPES + (np.dtype(np.int32), np.dtype(np.int64))


_GPU_TYPESTRS = {"f4", "f8", "i4", "i8"}


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


# torch dtype name -> typestr, for the torch fast path (torch's __cuda_array_interface__ is a
# Python property that builds a dict per access: several accesses per array per call add up).
_TORCH_TYPESTRS = {"torch.float32": "f4", "torch.float64": "f8", "torch.int32": "i4", "torch.int64": "i8"}


def gpu_location(x: Any) -> Optional[int]:
    """The GPU index of an array in GPU memory (``__cuda_array_interface__`` or a DLPack device
    of type CUDA/ROCm), or None for host data."""
    if isinstance(x, np.ndarray):
        return None
    if _is_torch(x) and hasattr(x, "is_cuda"):
        return _device_index(x) if x.is_cuda else None
    x = _detached(x)
    if hasattr(x, "__cuda_array_interface__"):
        return _device_index(x)
    if hasattr(x, "__dlpack_device__"):
        kind, index = x.__dlpack_device__()
        if int(kind) in (2, 10):  # kDLCUDA, kDLROCM
            return int(index)
    return None


def _detached(x: Any) -> Any:
    """A torch tensor that tracks gradients, as its data (its array interfaces raise otherwise)."""
    if getattr(x, "requires_grad", False) and hasattr(x, "detach"):
        return x.detach()
    return x


def producer_stream(x: Any) -> Optional[int]:
    """The stream a GPU array's pending writes are on: the CUDA array interface v3 'stream', else
    torch's current stream for a torch tensor (its interface is v2, without one)."""
    if _is_torch(x) and hasattr(x, "is_cuda"):  # its interface is v2: no stream entry
        import torch

        return int(torch.cuda.current_stream(x.device).cuda_stream)
    x = _detached(x)
    stream = x.__cuda_array_interface__.get("stream")
    if stream is not None:
        return None if stream == -1 else int(stream)
    if type(x).__module__.startswith("torch"):
        import torch

        return int(torch.cuda.current_stream(x.device).cuda_stream)
    return None


def _device_index(x: Any) -> int:
    dev = getattr(x, "device", None)
    for attr in ("index", "id"):  # torch.device.index, cupy.cuda.Device.id
        value = getattr(dev, attr, None)
        if isinstance(value, int):
            return value
    return 0


def gpu_view(x: Any, name: str, kinds: str) -> Tuple[int, int, str, int]:
    """(pointer, size, typestr, device) of a 1-D contiguous array in GPU memory, read in place.

    ``kinds``: the accepted dtype kinds ("f" for prices, "fi" for volumes). The caller orders its
    work after ``producer_stream(x)``.
    """
    if _is_torch(x) and getattr(x, "is_cuda", False) and x.dim() == 1:
        typestr = _TORCH_TYPESTRS.get(str(x.dtype))
        if typestr is not None and typestr[0] in kinds and (x.numel() <= 1 or x.stride(0) == 1):
            return int(x.data_ptr()) if x.numel() else 0, int(x.numel()), typestr, _device_index(x)
        # anything else: the interface path below says what is wrong
    x = _detached(x)
    if not hasattr(x, "__cuda_array_interface__"):
        raise TypeError(f"{name} is a GPU array without __cuda_array_interface__; pass a torch "
                        "or cupy array (or copy it to the host)")
    cai = x.__cuda_array_interface__
    shape = tuple(cai["shape"])
    if len(shape) != 1:
        raise ValueError(f"{name} must be 1-D, got shape {shape}")
    typestr = cai["typestr"][1:]
    if typestr not in _GPU_TYPESTRS or typestr[0] not in kinds:
        allowed = "float32 or float64" if kinds == "f" else "float32, float64, int32 or int64"
        raise TypeError(f"{name} on the GPU must be {allowed} (got typestr {cai['typestr']!r}); "
                        "convert it on the device first, e.g. x.float()")
    strides = cai.get("strides")
    if strides is not None and shape[0] > 1 and tuple(strides) != (int(typestr[1]),):
        raise ValueError(f"{name} must be contiguous on the GPU; call .contiguous() first")
    return int(cai["data"][0]), int(shape[0]), typestr, _device_index(x)


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
        if device_type == 3:  # kDLCUDAHost: pinned host memory, which numpy reads through __array__
            return np.asarray(x)
        if device_type != 1:  # kDLCPU
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


def as_array(x: Any, name: str) -> np.ndarray:
    """Return ``x`` as a 1-D, C-contiguous numeric numpy array (a view when possible)."""
    arr = _to_numpy(x, name)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a numeric array (integer or float), got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
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
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{name} values must fit in int64")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _on_gpu(x: Any, name: str) -> None:
    if gpu_location(x) is not None:
        raise ValueError("device='cpu' but the inputs live on a GPU; pass device='cuda' (or 'auto'), or copy "
                         "them to the host")


def host_prices(x: Any, name: str) -> np.ndarray:
    """The engine's converter of a price input that is not a plain float32/float64 numpy array."""
    _on_gpu(x, name)
    return as_prices(x, name)


def host_volume(x: Any, name: str) -> np.ndarray:
    """The engine's converter of a volume input that is not a plain numeric numpy array."""
    _on_gpu(x, name)
    return as_volume(x, name)


def host_index(x: Any, name: str) -> np.ndarray:
    """The engine's converter of offsets / session ids (on a GPU: copied to the host, they are small)."""
    if gpu_location(x) is not None:
        x = x.cpu() if hasattr(x, "cpu") else x.get()
    return as_index(x, name)


# --------------------------------------------------------------------------- price grid

#: Share of prices off the ``tick_size`` grid above which vpoc refuses them (unless ``snap=True``).
GRID_MAX_SHARE = 0.001
#: A price is on the grid when ``|p / tick_size - rint(p / tick_size)|`` is at most this many ticks,
#: plus the rounding of the price's own dtype (float32 holds about 7 significant digits: its
#: 6000.1 is 6000.10009765625).
GRID_TOLERANCE = 1e-6
#: Ticks the error message may suggest, largest first (the largest holding >= 99.9% of the prices).
COMMON_TICKS = (0.25, 0.1, 0.05, 1 / 32, 1 / 64, 0.01, 0.005, 0.001)
_DEVICE_CHUNK = 1 << 20  # GPU rows per pass: two float64 buffers and a mask, 17 MiB, reused by every chunk
_SAMPLE = 1 << 20  # prices the suggested grid is measured on


def _host_off(arr: np.ndarray, tick: float, threads: int = 1) -> Tuple[int, int]:
    """(number of prices off the grid, index of the first; -1 when none) of a host array: the
    engine's own count (core/grid.hpp), on up to ``threads`` threads (0: one per core)."""
    from . import _core

    if arr.dtype not in PRICE_DTYPES or not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr, dtype=np.float64)
    return _core.count_off_grid(arr, float(tick), threads)


def _device_lib(x: Any) -> Any:
    """(module, tensor) to compute on a GPU array with: torch for torch tensors and other GPU
    arrays torch can wrap (``__cuda_array_interface__`` / DLPack), else cupy; None when neither
    is installed."""
    if _is_torch(x):
        import torch

        return torch, _detached(x)
    if type(x).__module__.startswith("cupy"):
        import cupy

        return cupy, x
    try:
        import torch

        return torch, (torch.from_dlpack(x) if hasattr(x, "__dlpack__")
                       else torch.as_tensor(x, device=f"cuda:{gpu_location(x)}"))
    except ImportError:
        pass
    try:
        import cupy

        return cupy, cupy.asarray(x)
    except ImportError:
        return None, None


def _device_off(x: Any, tick: float, lazy: bool = False) -> Any:
    """As _host_off for a GPU array, plus its length: (off-grid count, first index, n), computed on
    its device with torch or cupy in chunks of _DEVICE_CHUNK rows through two float64 buffers and a
    mask allocated once per call (17 MiB at most: the memory_budget promise holds beside it) and one
    device-to-host read of the count; None when neither library is installed."""
    lib, a = _device_lib(x)
    if lib is None:
        return None
    n = int(a.shape[0])
    if n == 0:
        return 0, -1, 0
    torch_ = lib.__name__ == "torch"
    eps = 2.0**-23 if a.dtype == lib.float32 else 2.0**-52
    m = min(n, _DEVICE_CHUNK)
    if torch_:
        t = lib.empty(m, dtype=lib.float64, device=a.device)
        d = lib.empty(m, dtype=lib.float64, device=a.device)
        b = lib.empty(m, dtype=lib.bool, device=a.device)
    else:
        t, d, b = lib.empty(m, dtype=lib.float64), lib.empty(m, dtype=lib.float64), lib.empty(m, dtype=lib.bool_)

    def off(i0: int) -> Any:  # mask of chunk i0's off-grid prices: |t - rint(t)| > |t| eps + 1e-6
        k = min(m, n - i0)
        tt, dd, bb = t[:k], d[:k], b[:k]
        if torch_:
            tt.copy_(a[i0:i0 + k])  # widened exactly, then divided in float64 as on the host
            tt.div_(tick)
            lib.round(tt, out=dd)  # round half to even, as np.rint
            dd.sub_(tt).abs_()
            tt.abs_().mul_(eps).add_(GRID_TOLERANCE)
            lib.gt(dd, tt, out=bb)
        else:
            lib.copyto(tt, a[i0:i0 + k], casting="safe")
            lib.divide(tt, tick, out=tt)
            lib.rint(tt, out=dd)
            lib.subtract(dd, tt, out=dd)
            lib.absolute(dd, out=dd)
            lib.absolute(tt, out=tt)
            lib.multiply(tt, eps, out=tt)
            lib.add(tt, GRID_TOLERANCE, out=tt)
            lib.greater(dd, tt, out=bb)
        return bb

    count = None
    for i0 in range(0, n, m):
        c = off(i0).sum()
        count = c if count is None else count + c
    if lazy:  # the caller adds the counts of a call's arrays and reads them back once
        return count
    count = int(count)  # the one read-back of the common path
    if not count:
        return 0, -1, n
    for i0 in range(0, n, m):  # the error path: find the first one
        hits = lib.nonzero(off(i0))
        hits = hits.flatten() if torch_ else hits[0]
        if hits.shape[0]:
            return count, i0 + int(hits[0]), n
    return count, -1, n  # pragma: no cover (changed under us)


def _host_copy(x: Any, start: int, stop: int) -> np.ndarray:
    """Values start..stop-1 of a host or GPU array as a numpy array of the same dtype."""
    part = x[start:stop]
    if isinstance(part, np.ndarray):
        return part.copy()
    if hasattr(part, "get"):  # cupy
        return np.asarray(part.get())
    return _detached(part).cpu().numpy()


def _suggest(arrays: Any) -> Optional[float]:
    """The largest of COMMON_TICKS on which >= 99.9% of (a sample of) the prices lie."""
    parts = []
    for x in arrays:
        n = int(x.shape[0])
        step = max(1, n // _SAMPLE)
        if step == 1:
            parts.append(_host_copy(x, 0, n))
        elif isinstance(x, np.ndarray):
            parts.append(x[::step].copy())
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


def _all_on_device_and_on_grid(items: Any, tick: float) -> bool:
    """True when every array of ``items`` is a GPU array (torch or cupy at hand) and none of their
    prices is off the grid, found with one device-to-host read of the summed counts; False sends
    the caller through its per-array pass (host arrays, or the error path)."""
    total = None
    for _, x in items:
        if x is None:
            continue
        if isinstance(x, np.ndarray) or gpu_location(x) is None:
            return False
        lib, wrapped = _device_lib(x)
        if lib is None or not int(wrapped.shape[0]):
            return False
        c = _device_candidates(lib, wrapped, tick)
        if c is None:
            c = _device_off(wrapped, tick, lazy=True)
        total = c if total is None else total + c
    return total is not None and int(total) == 0


def _device_candidates(lib: Any, a: Any, tick: float) -> Any:
    """For a power-of-two tick and float prices, the device count of prices whose remainder by the
    tick is not 0 (two kernels a chunk, in the prices' own dtype): p / tick is exact there, so every
    price on the grid has remainder 0 and a count of 0 proves none is off it (a non-zero count only
    sends the caller to the exact test). None when the shortcut does not apply."""
    if math.frexp(tick)[0] != 0.5 or a.dtype not in (lib.float32, lib.float64):
        return None
    n = int(a.shape[0])
    m = min(n, _DEVICE_CHUNK * 2)  # 16 MiB of float64 at most, reused by every chunk
    torch_ = lib.__name__ == "torch"
    buf = lib.empty(m, dtype=a.dtype, device=a.device) if torch_ else lib.empty(m, dtype=a.dtype)
    count = None
    for i0 in range(0, n, m):
        k = min(m, n - i0)
        r = buf[:k]
        lib.remainder(a[i0:i0 + k], tick, out=r)  # NaN / inf give NaN: counted, left to the exact test
        c = lib.count_nonzero(r)
        count = c if count is None else count + c
    return count


def check_grid(prices: Any, tick_size: float, snap: bool = False, name: str = "price",
               stacklevel: int = 2, threads: int = 0) -> Optional[int]:
    """Check that prices lie on the ``tick_size`` grid; return how many do not (they are snapped
    to the nearest tick by the engine).

    ``prices``: one array (named ``name``) or a mapping ``{name: array}`` (a bar's high, low,
    close, open), numpy arrays or GPU arrays (torch/cupy, checked on their device). A price is
    on the grid within ``GRID_TOLERANCE`` (1e-6) ticks plus its dtype's own rounding.
    More than ``GRID_MAX_SHARE`` (0.1%) off the grid: ValueError naming ``tick_size``, the share,
    the first off-grid price (and index) and the grid the data suggests, unless ``snap=True``.
    Some but at most 0.1% off: a UserWarning counting them unless ``snap=True``.
    Returns None only for GPU arrays when neither torch nor cupy is installed and ``snap=True``
    (without ``snap`` that raises: the check needs one of them).
    Host arrays: the engine's own count (core/grid.hpp) on up to ``threads`` threads (0: one per
    core), which from_trades / from_bars make themselves for host inputs. A tick_size that is not
    a finite positive number is left to the engine's own error.
    """
    tick = float(tick_size)
    if not (tick > 0.0 and math.isfinite(tick)):
        return 0
    if isinstance(prices, dict):
        items = list(prices.items())
    else:
        items = [(name, prices)]
    if _all_on_device_and_on_grid(items, tick):  # one read-back for all of a call's GPU arrays
        return 0
    total, count, first = 0, 0, None
    for key, x in items:
        if x is None:
            continue
        if not isinstance(x, np.ndarray) and gpu_location(x) is None:
            x = as_prices(x, key)
        if isinstance(x, np.ndarray):
            off, i = _host_off(x, tick, threads)
        else:
            lib, wrapped = _device_lib(x)  # a torch / cupy view (also of __cuda_array_interface__-only objects)
            res = None if lib is None else _device_off(wrapped, tick)
            if res is None:
                if snap:
                    return None
                raise TypeError(f"{key} is a GPU array of type {type(x).__name__}: checking its prices "
                                f"against tick_size needs torch or cupy; install one, or pass snap=True "
                                f"to round every price to the nearest tick unchecked")
            off, i, n_x = res
            total += n_x
            if off and first is None:
                first = (key, i, wrapped)
            count += off
            if off:  # the error path (_suggest) reads the wrapped view
                items = [(k, wrapped if k == key else v) for k, v in items]
            continue
        total += int(x.shape[0])
        if off and first is None:
            first = (key, i, x)
        count += off
    if not count:
        return 0
    return report_grid(count, total, first, items, tick, snap, stacklevel + 1)


def report_grid(count: int, total: int, first: Tuple[str, int, Any], items: Any, tick: float, snap: bool,
                stacklevel: int = 2) -> int:
    """What ``count`` off-grid prices of ``total`` mean: ValueError when more than GRID_MAX_SHARE
    and not ``snap`` (naming the grid the data suggests), a UserWarning when fewer and not
    ``snap``; returns ``count``. ``first``: (name, index, array) of the first one; ``items``:
    the (name, array) pairs checked."""
    share = count / total
    key, i, x = first
    example = f"{key}[{i}]={float(_host_copy(x, i, i + 1)[0])!r}"
    if share > GRID_MAX_SHARE and not snap:
        hint = _suggest([x for _, x in items if x is not None])
        if hint is not None and hint != tick:
            guess = f"the data suggests tick_size={_tick_text(hint)} (99.9% or more of the prices lie on it)."
        else:
            guess = ("no common tick (" + ", ".join(_tick_text(t) for t in COMMON_TICKS) + ") holds 99.9% "
                     "of them: are these back-adjusted (ratio) or averaged prices?")
        raise ValueError(
            f"tick_size={tick!r}: {count} of {total} prices ({100 * share:.3g}%) are not on its grid "
            f"(within 1e-6 ticks), e.g. {example}; {guess} Pass the tick size of the data, or "
            f"snap=True to round every price to the nearest tick")
    if not snap:
        import warnings

        warnings.warn(
            f"tick_size={tick!r}: {count} of {total} prices ({100 * share:.3g}%) are not on its grid, "
            f"e.g. {example}; they were rounded to the nearest tick (the result's snapped_prices). "
            f"Likely a few bad prints; pass snap=True to round them without this warning",
            UserWarning, stacklevel=stacklevel + 1)
    return count
