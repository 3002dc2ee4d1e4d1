"""Type stubs of the private C++ extension (use the vpoc package, not this module).

Generated from the built module by tools/gen_stubs.py (pybind11-stubgen==3.0.0); .ci/stubs_check.sh checks it.
Do not edit by hand: change cpp/bindings, rebuild, then run `python tools/gen_stubs.py`.
"""
from __future__ import annotations
import collections.abc
import numpy as np
import numpy.typing as npt
import typing
__all__: list[str] = ['DeviceArray', 'GpuInput', 'InputError', 'LiveSession', 'NO_ROW', 'Options', 'OutOfMemoryError', 'Placement', 'Result', 'backends', 'bar_sides', 'build_info', 'check_bool', 'check_int', 'check_real', 'check_side', 'check_str', 'check_threads', 'count_off_grid', 'developing_delta_poc', 'dlpack_host_memory', 'empty_cache', 'gpu_backend', 'gpu_device_count', 'gpu_devices', 'gpu_inputs', 'gpu_location', 'gpu_require_device', 'gpu_rows_to_host', 'gpu_set_speculation', 'gpu_speculation', 'gpu_synchronize_stream', 'gpu_versions', 'host_trace', 'memory_stats', 'offsets_from_ids', 'price_off_grid', 'profile_bars', 'profile_trades', 'session_offsets', 'set_pool_limit', 'side_levels']
class OutOfMemoryError(MemoryError):
    pass
class InputError(ValueError):
    pass
class Options:
    """
    Every option of a call but the data and the device: ladder, levels, bars, threads.
    """
    def __getstate__(self) -> tuple:
        ...
    def __init__(self, *, tick_size: typing.Any, ticks_per_row: typing.Any = 1, value_area: typing.Any = 0.7, va_method: typing.Any = 'cbot', poc_tie: typing.Any = 'center', max_rows: typing.Any = 1000000, threads: typing.Any = None, developing: typing.Any = False, distribute: typing.Any = 'uniform', snap: typing.Any = False, window: typing.Any = None, va_rows: typing.Any = 'all', va_compare: typing.Any = 'tie_up', va_stop: typing.Any = 'reaches', tie_tol: typing.Any = 1e-09, row_label: typing.Any = 'low', price_label: typing.Any = 'product', va_target: typing.Any = 'float', bins: typing.Any = None, accumulate: typing.Any = 'exact', bin_report: typing.Any = 'center_edges', window_across_sessions: typing.Any = False) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, arg0: tuple) -> None:
        ...
    @property
    def accumulate(self) -> str:
        ...
    @property
    def bin_report(self) -> str:
        ...
    @property
    def bins(self) -> typing.Any:
        ...
    @property
    def developing(self) -> bool:
        ...
    @property
    def distribute(self) -> str:
        ...
    @property
    def max_rows(self) -> int:
        ...
    @property
    def poc_tie(self) -> str:
        ...
    @property
    def price_label(self) -> str:
        ...
    @property
    def row_label(self) -> str:
        ...
    @property
    def snap(self) -> bool:
        ...
    @property
    def threads(self) -> typing.Any:
        ...
    @property
    def tick_size(self) -> float:
        ...
    @property
    def ticks_per_row(self) -> int:
        ...
    @property
    def tie_tol(self) -> float:
        ...
    @property
    def va_compare(self) -> str:
        ...
    @property
    def va_method(self) -> str:
        ...
    @property
    def va_rows(self) -> str:
        ...
    @property
    def va_stop(self) -> str:
        ...
    @property
    def va_target(self) -> str:
        ...
    @property
    def value_area(self) -> float:
        ...
    @property
    def window(self) -> typing.Any:
        ...
    @property
    def window_across_sessions(self) -> bool:
        ...
class Placement:
    """
    Where a call runs: a GPU, its scratch budget, its stream and the streams to wait for.
    """
    def __init__(self, *, device: typing.SupportsInt | typing.SupportsIndex, memory_budget: typing.Any = 268435456, stream: typing.SupportsInt | typing.SupportsIndex = 0, user_stream: bool = False, wait_streams: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] = []) -> None:
        ...
    @property
    def device(self) -> int:
        ...
    @property
    def memory_budget(self) -> int:
        ...
class Result:
    """
    One call's profiles: host numpy views or GPU DeviceArrays.
    """
    def fields(self) -> dict:
        """
        Every column (None: not computed) and the scalars, as a dict: what vpoc.Profiles holds.
        """
    @property
    def bin_low(self) -> typing.Any:
        ...
    @property
    def bin_width(self) -> typing.Any:
        ...
    @property
    def dev_poc(self) -> typing.Any:
        ...
    @property
    def dev_vah(self) -> typing.Any:
        ...
    @property
    def dev_val(self) -> typing.Any:
        ...
    @property
    def developing(self) -> bool:
        ...
    @property
    def device(self) -> int:
        ...
    @property
    def first_off_grid(self) -> tuple[int, int]:
        ...
    @property
    def grid_counted(self) -> bool:
        ...
    @property
    def grid_prices(self) -> int:
        ...
    @property
    def grid_refused(self) -> bool:
        ...
    @property
    def levels(self) -> typing.Any:
        """
        POC, VAH, VAL as one [S, 3] float64 array (GPU: a zero-copy DeviceArray; host: a new array).
        """
    @property
    def low_row(self) -> typing.Any:
        ...
    @property
    def n_rows(self) -> typing.Any:
        ...
    @property
    def n_sessions(self) -> int:
        ...
    @property
    def off_grid(self) -> int:
        ...
    @property
    def offsets(self) -> typing.Any:
        ...
    @property
    def poc(self) -> typing.Any:
        ...
    @property
    def poc_row(self) -> typing.Any:
        ...
    @property
    def session_labels(self) -> typing.Any:
        ...
    @property
    def side_fields(self) -> typing.Any:
        """
        A sided host call's side columns (dict of numpy arrays); None otherwise.
        """
    @property
    def tick_size(self) -> float:
        ...
    @property
    def ticks_per_row(self) -> int:
        ...
    @property
    def total_volume(self) -> typing.Any:
        ...
    @property
    def va_volume(self) -> typing.Any:
        ...
    @property
    def vah(self) -> typing.Any:
        ...
    @property
    def vah_row(self) -> typing.Any:
        ...
    @property
    def val(self) -> typing.Any:
        ...
    @property
    def val_row(self) -> typing.Any:
        ...
    @property
    def volume(self) -> typing.Any:
        ...
class LiveSession:
    def __init__(self, bars: bool, distribute: typing.Any, has_open: bool, tick_size: typing.Any, ticks_per_row: typing.Any, value_area: typing.Any, va_method: typing.Any, poc_tie: typing.Any, max_rows: typing.Any, window: typing.Any = None, rules: dict = {}, time_window: bool = False, sided: bool = False) -> None:
        ...
    def append(self, price: typing.Any, high: typing.Any, low: typing.Any, close: typing.Any, open: typing.Any, volume: typing.Any, window_start: typing.Any = None, buy: typing.Any = None, sell: typing.Any = None) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        ...
    def append_bar(self, high: typing.SupportsFloat | typing.SupportsIndex, low: typing.SupportsFloat | typing.SupportsIndex, close: typing.SupportsFloat | typing.SupportsIndex, open: typing.Any, volume: typing.SupportsFloat | typing.SupportsIndex, window_start: typing.Any = None, buy: typing.Any = None, sell: typing.Any = None) -> tuple[float, float, float, float, float]:
        ...
    def append_trade(self, price: typing.SupportsFloat | typing.SupportsIndex, volume: typing.SupportsFloat | typing.SupportsIndex, window_start: typing.Any = None, buy: typing.Any = None, sell: typing.Any = None) -> tuple[float, float, float, float, float]:
        ...
    def carry(self, from_session: LiveSession, tail: bool) -> None:
        """
        window_across_sessions: on an empty session, the rows of from_session a later window reaches (tail) or its own carried rows (not tail) become this session's carried prefix.
        """
    def carry_column(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> npt.NDArray[np.float64]:
        ...
    def check(self, price: typing.Any, high: typing.Any, low: typing.Any, close: typing.Any, open: typing.Any, volume: typing.Any, fresh: bool) -> None:
        ...
    def clear(self) -> None:
        ...
    def column(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> npt.NDArray[np.float64]:
        ...
    def histogram(self) -> np.ndarray:
        """
        The current histogram as a read-only view (n_rows() rows from low_row()).
        """
    def last_side(self) -> tuple[float, float]:
        """
        Sided: (buy, sell) volume of the session's latest row ((nan, nan) before its first).
        """
    def side_fields(self, imbalance_ratio: typing.SupportsFloat | typing.SupportsIndex, stacked_min: typing.SupportsInt | typing.SupportsIndex) -> dict:
        """
        Sided: every side field of the session so far (one session: buy_volume / sell_volume rows, delta, delta_poc(_row), imbalances, stacked counts; dev_delta None).
        """
    @property
    def bars(self) -> bool:
        ...
    @property
    def carried(self) -> int:
        ...
    @property
    def delta(self) -> float:
        """
        Sided: the session's buy - sell volume so far, in input order (its latest dev_delta).
        """
    @property
    def has_open(self) -> bool:
        ...
    @property
    def low_row(self) -> int:
        ...
    @property
    def n_rows(self) -> int:
        ...
    @property
    def poc_row(self) -> int:
        ...
    @property
    def sided(self) -> bool:
        ...
    @property
    def size(self) -> int:
        ...
    @property
    def total_volume(self) -> float:
        ...
    @property
    def va_volume(self) -> float:
        ...
    @property
    def vah_row(self) -> int:
        ...
    @property
    def val_row(self) -> int:
        ...
class DeviceArray:
    """
    A vpoc result in GPU (or host) memory: 1-D, or [n, cols] for several columns of one result (Profiles.levels). Zero-copy to PyTorch/CuPy/JAX via DLPack (torch.from_dlpack(arr)); .numpy() copies to host memory.
    """
    def __array__(self, dtype: typing.Any = None, copy: typing.Any = None) -> typing.Any:
        ...
    def __dlpack__(self, *, stream: typing.Any = None, max_version: typing.Any = None, dl_device: typing.Any = None, copy: typing.Any = None) -> typing.Any:
        ...
    def __dlpack_device__(self) -> tuple[int, int]:
        ...
    def __len__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def numpy(self) -> np.ndarray:
        """
        A host NumPy copy (waits for the GPU work that produced this array).
        """
    @property
    def __cuda_array_interface__(self) -> dict:
        ...
    @property
    def _owner_refs(self) -> int:
        ...
    @property
    def data_ptr(self) -> int:
        ...
    @property
    def device(self) -> str:
        ...
    @property
    def dtype(self) -> np.dtype[typing.Any]:
        ...
    @property
    def nbytes(self) -> int:
        ...
    @property
    def ndim(self) -> int:
        ...
    @property
    def shape(self) -> tuple:
        ...
    @property
    def size(self) -> int:
        ...
class GpuInput:
    """
    A GPU array as the engine reads it (made by gpu_inputs): pointer, length, dtype, device, the producer's stream, and what keeps the memory alive for the call.
    """
    def __repr__(self):
        """
        Return repr(self).
        """
def _host_device_array(array: typing.Any, device_type: typing.SupportsInt | typing.SupportsIndex = 1, device_id: typing.SupportsInt | typing.SupportsIndex = 0, col_stride: typing.SupportsInt | typing.SupportsIndex = -1) -> typing.Any:
    ...
def _parse_gpu_input(x: typing.Any, name: str, kinds: str, host_ok: bool = False, stream: typing.SupportsInt | typing.SupportsIndex = 0) -> tuple:
    """
    (pointer, size, typestr, device, stream) of a GPU array as gpu_inputs reads it (host_ok: a kDLCPU DLPack capsule too); TypeError for host data.
    """
def _torch_fields(x: typing.Any, kinds: str = 'fi', name: str | None = None) -> typing.Any:
    """
    The torch fast path's read of any tensor (CPU too): (pointer, size, typestr, device), or None when it declines (not dense, not 1-D, another dtype, the negative bit, not contiguous); with `name` it raises the error the CUDA path raises instead.
    """
def backends() -> list[str]:
    ...
def bar_sides(high: typing.Annotated[npt.ArrayLike, np.float64], low: typing.Annotated[npt.ArrayLike, np.float64], close: typing.Annotated[npt.ArrayLike, np.float64], open: typing.Any, buy: typing.Any, sell: typing.Any, offsets: typing.Annotated[npt.ArrayLike, np.int64], options: typing.Any, imbalance_ratio: typing.SupportsFloat | typing.SupportsIndex, stacked_min: typing.SupportsInt | typing.SupportsIndex) -> dict:
    """
    from_bars' side fields on the CPU in one call (vpoc/side.hpp bar_side_fields): the buy / sell columns binned by the engine's bar binning, then the side epilogue; also row_offsets / low_row (the rows' layout).
    """
def build_info() -> dict:
    ...
def check_bool(x: typing.Any, name: str) -> bool:
    ...
def check_int(x: typing.Any, name: str, minimum: typing.SupportsInt | typing.SupportsIndex, maximum: typing.SupportsInt | typing.SupportsIndex = 9223372036854775807) -> int:
    ...
def check_real(x: typing.Any, name: str) -> float:
    ...
def check_side(side: np.ndarray) -> tuple:
    """
    (int8 codes, index of the first bad value or -1) of a contiguous int8 or 'S1' side column (core/side.hpp's rule); (None, -2) for any other array (vpoc._side converts it).
    """
def check_str(x: typing.Any, name: str) -> str:
    ...
def check_threads(x: typing.Any) -> int:
    ...
def count_off_grid(prices: np.ndarray, tick_size: typing.SupportsFloat | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex = 1) -> tuple[int, int]:
    """
    (prices off the tick_size grid, index of the first or -1): the rule of core/grid.hpp.
    """
def developing_delta_poc(high: typing.Annotated[npt.ArrayLike, np.float64], low: typing.Annotated[npt.ArrayLike, np.float64], close: typing.Annotated[npt.ArrayLike, np.float64], open: typing.Any, volume: typing.Annotated[npt.ArrayLike, np.float64], buy: typing.Annotated[npt.ArrayLike, np.float64], sell: typing.Annotated[npt.ArrayLike, np.float64], offsets: typing.Annotated[npt.ArrayLike, np.int64], options: typing.Any) -> npt.NDArray[np.float64]:
    """
    Per bar, the delta POC (row price) of its session's bars so far: a sided LiveSession's rows and rule after each bar (vpoc/side.hpp developing_delta_poc), sessions by CSR offsets, float64 columns.
    """
def dlpack_host_memory(device_type: typing.SupportsInt | typing.SupportsIndex) -> bool:
    """
    Whether a DLPack device type is host memory (kDLCPU 1, kDLCUDAHost 3, kDLROCMHost 11): the rule of the GPU reader and of vpoc._arrays.
    """
def empty_cache(arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def gpu_backend() -> str:
    ...
def gpu_device_count() -> int:
    ...
def gpu_devices() -> list:
    ...
def gpu_inputs(arrays: dict, stream: typing.SupportsInt | typing.SupportsIndex = 0) -> tuple[typing.Any, typing.Any, tuple, dict]:
    """
    Each GPU array of {name: array} read once (GpuInput; 'volume' may be an integer array, the others float): (GPU index of the first or None, device of the first torch tensor or None, the producer streams of the others (handle or None), {name: GpuInput or the host input as it was}). `stream`: the raw stream DLPack producers order their work before (0: the legacy default stream).
    """
def gpu_location(x: typing.Any, name: str = 'x') -> typing.Any:
    """
    The GPU index of an array in GPU memory (a CUDA torch tensor, __cuda_array_interface__, a DLPack device of type CUDA, CUDA managed or ROCm), or None for host data; errors name `name`.
    """
def gpu_require_device(arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def gpu_rows_to_host(x: typing.Any, start: typing.SupportsInt | typing.SupportsIndex, stop: typing.SupportsInt | typing.SupportsIndex, name: str = 'x') -> np.ndarray:
    """
    Elements start..stop-1 (slice bounds) of a GPU array given by __cuda_array_interface__ or DLPack, as a new NumPy array of its dtype, after its producer's work (the engine's reader: the same refusals). The host copies of a few rows for error reports; torch tensors and CuPy arrays are copied by their library.
    """
def gpu_set_speculation(enabled: bool) -> None:
    """
    Whether GPU calls of a shape seen before bin before reading their layout back (default True).
    """
def gpu_speculation() -> bool:
    ...
def gpu_synchronize_stream(arg0: typing.SupportsInt | typing.SupportsIndex, arg1: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def gpu_versions() -> dict:
    ...
def host_trace() -> list:
    """
    Host phase marks (name, steady-clock ns) recorded since the last call, oldest first, when VPOC_HOST_TRACE=1 was in the environment at the first mark (vpoc/trace.hpp; benchmarks/host_phases.py): bar calls mark their binding and dispatcher, GPU calls their engine's speculative path; else [].
    """
def memory_stats(arg0: typing.SupportsInt | typing.SupportsIndex) -> dict:
    ...
def offsets_from_ids(ids: typing.Annotated[npt.ArrayLike, np.int64], name: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    ...
def price_off_grid(price: typing.SupportsFloat | typing.SupportsIndex, tick_size: typing.SupportsFloat | typing.SupportsIndex) -> bool:
    """
    Whether one float64 price is off the tick_size grid: the rule of core/grid.hpp.
    """
def profile_bars(high: typing.Any, low: typing.Any, close: typing.Any, volume: typing.Any, open: typing.Any, offsets: typing.Any, session_ids: typing.Any, options: typing.Any, placement: Placement | None = None, window_start: typing.Any = None) -> Result:
    ...
def profile_trades(price: typing.Any, volume: typing.Any, offsets: typing.Any, session_ids: typing.Any, options: typing.Any, placement: Placement | None = None, window_start: typing.Any = None, *, side: typing.Any = None, imbalance_ratio: typing.SupportsFloat | typing.SupportsIndex = 3.0, stacked_min: typing.SupportsInt | typing.SupportsIndex = 3) -> Result:
    ...
def session_offsets(offsets: typing.Any, session_ids: typing.Any, n: typing.SupportsInt | typing.SupportsIndex) -> tuple[npt.NDArray[np.int64], typing.Any]:
    """
    (offsets [S+1] int64, session labels or None) of n rows from offsets= or session_ids= (neither: one session), as every call reads them; offsets are validated by the engine call that uses them.
    """
def set_pool_limit(arg0: typing.SupportsInt | typing.SupportsIndex, arg1: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def side_levels(row_offsets: typing.Any, low_row: typing.Any, buy: typing.Any, sell: typing.Any, row_size: typing.SupportsFloat | typing.SupportsIndex, options: typing.Any, imbalance_ratio: typing.SupportsFloat | typing.SupportsIndex, stacked_min: typing.SupportsInt | typing.SupportsIndex, *, buy_total: typing.Any = None, sell_total: typing.Any = None, placement: Placement | None = None) -> dict:
    """
    Delta POC, imbalances and stacked counts of finished buy / sell rows (vpoc/side.hpp side_levels); with buy_total / sell_total [S] also delta (core/side.hpp delta). Host rows: numpy in and out. A placement on a GPU: every column in that GPU's memory (a DeviceArray, a GpuInput, a torch / CuPy / DLPack array; int64 offsets and low rows, float64 rows and totals), the GPU epilogue (gpu/side.cu side_levels_kernel) on the placement's stream after their producers, DeviceArrays out (flags int8).
    """
NO_ROW: int = -9223372036854775808
