"""ML feature tables from volume profiles: ``session_features`` [S, F] and ``bar_features`` [N, F].

Contract (docs/features.md): float32 C-contiguous rows; row s uses only sessions <= s, bar row i
only bars <= i of its session and sessions before it; every rule is a documented parameter.
"""

from __future__ import annotations

import datetime as _dt
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from ._api import _sessions, from_bars, from_trades
from ._arrays import as_prices, as_volume, gpu_location, unmasked
from ._optional import require
from ._profiles import Profiles
from ._time import check_time_unit, datetime64_ns, epoch_ns
from .synth import SynthBars

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import torch

__all__ = [
    "FeatureTable",
    "LEGACY_SESSION_COLUMNS",
    "LOOKBACK_FEATURES",
    "SHAPES",
    "bar_features",
    "legacy_columns",
    "session_features",
]

#: The 14 per-session features of the legacy pipeline, in its order (GUIDE section 2).
LEGACY_SESSION_COLUMNS: Tuple[str, ...] = (
    "vpoc", "total_volume", "value_area_low", "value_area_high", "value_area_width",
    "price_range", "range_pct", "close_change_pct", "session_high", "session_low",
    "session_open", "session_close", "vwap", "close_to_vwap_pct",
)

#: The 10 legacy lookback features per lookback N (``{n}`` is N), in the legacy order.
LOOKBACK_FEATURES: Tuple[str, ...] = (
    "price_mom_{n}d", "volatility_{n}d", "volume_trend_{n}d", "vpoc_change_{n}d",
    "vpoc_pct_change_{n}d", "range_change_{n}d", "va_width_{n}d_ma", "va_width_change_{n}d",
    "vpoc_std_{n}d", "vpoc_zscore_{n}d",
)

#: Profile shape labels, as one-hot columns ``shape_P``, ``shape_b``, ``shape_D``, ``shape_B``.
SHAPES: Tuple[str, ...] = ("P", "b", "D", "B")

_TIE_REL = 1e-9  # the contract's relative tie band, used for every volume comparison here
_NS_PER_MINUTE = 60 * 10**9
_NS_PER_DAY = 1440 * _NS_PER_MINUTE


def legacy_columns(lookbacks: Sequence[int] = (5, 10, 20, 50)) -> Tuple[str, ...]:
    """The legacy feature names (14 session features, then 10 per lookback): 54 by default."""
    names = list(LEGACY_SESSION_COLUMNS)
    for n in _lookbacks(lookbacks):
        names.extend(f.format(n=n) for f in LOOKBACK_FEATURES)
    return tuple(names)


# =============================================================================== FeatureTable


class FeatureTable:
    """A float32 feature matrix [rows, F] with column names, one row per session or per bar.

    ``values``: C-contiguous float32 numpy array [rows, F] (NaN where a feature is undefined).
    ``columns``: the F names. ``session_labels`` [S]: the label of each session (session ids,
    ``SynthBars.session_labels``, or 0..S-1). ``offsets`` [S+1]: rows ``offsets[s]:offsets[s+1]``
    belong to session s (``arange(S+1)`` for a session table). ``kind``: "session" or "bar".
    ``device``: where ``to_torch()`` puts the tensor by default.

    Export: ``numpy()`` / ``np.asarray(table)`` (no copy), ``torch.from_dlpack(table)`` and
    ``to_torch()`` (zero-copy on the CPU), ``to_pandas()``; ``table["name"]`` is a column view.
    """

    def __init__(self, values: np.ndarray, columns: Sequence[str], *, session_labels: np.ndarray,
                 offsets: np.ndarray, kind: str = "session", device: str = "cpu") -> None:
        values = np.asarray(values)
        if values.dtype != np.float32 or values.ndim != 2 or not values.flags.c_contiguous:
            raise ValueError("values must be a C-contiguous float32 array [rows, F], got "
                             f"{values.dtype} with shape {values.shape}")
        cols = tuple(str(c) for c in columns)
        if len(cols) != values.shape[1]:
            raise ValueError(f"columns has {len(cols)} names but values has {values.shape[1]} columns")
        if len(set(cols)) != len(cols):
            raise ValueError("columns must be unique")
        offs = np.asarray(offsets, dtype=np.int64)
        if offs.ndim != 1 or offs.size < 1 or offs[0] != 0 or offs[-1] != values.shape[0] \
                or np.any(np.diff(offs) < 0):
            raise ValueError("offsets must be non-decreasing, start at 0 and end at the number of rows")
        labels = np.asarray(session_labels)
        if labels.shape != (offs.size - 1,):
            raise ValueError(f"session_labels must have {offs.size - 1} entries, got shape {labels.shape}")
        if kind not in ("session", "bar"):
            raise ValueError(f"kind must be 'session' or 'bar', got {kind!r}")
        self.values: np.ndarray = values
        self.columns: Tuple[str, ...] = cols
        self.session_labels: np.ndarray = labels
        self.offsets: np.ndarray = offs
        self.kind: str = kind
        self.device: str = str(device)
        self._where: Dict[str, int] = {c: i for i, c in enumerate(cols)}

    # ---- container protocol
    def __len__(self) -> int:
        return int(self.values.shape[0])

    @property
    def shape(self) -> Tuple[int, int]:
        """(rows, F)."""
        return (int(self.values.shape[0]), int(self.values.shape[1]))

    def __contains__(self, name: object) -> bool:
        return name in self._where

    def __getitem__(self, name: str) -> np.ndarray:
        """The column ``name`` as a (strided) view of ``values``."""
        if not isinstance(name, str):
            raise TypeError(f"a column name (str) is expected, got {type(name).__name__}; "
                            "use select([...]) for several columns")
        if name not in self._where:
            raise KeyError(f"no column {name!r}; columns are {list(self.columns)}")
        return self.values[:, self._where[name]]

    def select(self, columns: Iterable[str]) -> "FeatureTable":
        """A new table with only ``columns`` (in that order; a copy)."""
        names = list(columns)
        for c in names:
            if c not in self._where:
                raise KeyError(f"no column {c!r}")
        idx = [self._where[c] for c in names]
        return FeatureTable(np.ascontiguousarray(self.values[:, idx]), names,
                            session_labels=self.session_labels, offsets=self.offsets,
                            kind=self.kind, device=self.device)

    @property
    def index(self) -> np.ndarray:
        """The session label of every row (length ``len(self)``)."""
        return np.repeat(self.session_labels, np.diff(self.offsets))

    def __repr__(self) -> str:
        return (f"FeatureTable(kind='{self.kind}', rows={self.shape[0]}, features={self.shape[1]}, "
                f"sessions={self.session_labels.shape[0]}, device='{self.device}')")

    # ---- array protocols (all delegate to the numpy array: no copy)
    def numpy(self) -> np.ndarray:
        """The float32 [rows, F] matrix itself (no copy)."""
        return self.values

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        if dtype is not None and np.dtype(dtype) != self.values.dtype:
            if copy is False:
                raise ValueError(f"cannot view float32 features as {np.dtype(dtype)} without a copy")
            return self.values.astype(dtype)
        return self.values.copy() if copy else self.values

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.values.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return self.values.__dlpack_device__()

    def to_torch(self, device: Any = None) -> "torch.Tensor":
        """A float32 tensor [rows, F]: shares memory on the CPU (``torch.from_numpy``), copied with
        ``.to(device)`` when ``device`` (default: ``self.device``) is not the CPU."""
        torch = require("torch", "FeatureTable.to_torch()")
        t = torch.from_numpy(self.values)
        target = torch.device(self.device if device is None else device)
        return t if target.type == "cpu" else t.to(target)

    def to_pandas(self) -> "pd.DataFrame":
        """A DataFrame with the feature columns; index ``session`` (session table) or
        (``session``, ``bar``) with the bar's position in its session (bar table)."""
        pd = require("pandas", "FeatureTable.to_pandas()")

        if self.kind == "session":
            index = pd.Index(self.session_labels, name="session")
        else:
            counts = np.diff(self.offsets)
            bar = np.arange(len(self), dtype=np.int64) - np.repeat(self.offsets[:-1], counts)
            index = pd.MultiIndex.from_arrays([self.index, bar], names=["session", "bar"])
        return pd.DataFrame(self.values, columns=list(self.columns), index=index)


# =============================================================================== parameters


def _int_param(x: Any, name: str, minimum: int, maximum: Optional[int] = None,
               why: str = "") -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__}")
    if int(x) < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {int(x)}")
    if maximum is not None and int(x) > maximum:
        raise ValueError(f"{name} must be <= {maximum}{why}, got {int(x)}")
    return int(x)


def _real_param(x: Any, name: str, lo: float, hi: float, lo_open: bool = False) -> float:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    v = float(x)
    ok = (v > lo if lo_open else v >= lo) and v <= hi
    if not ok:
        raise ValueError(f"{name} must be in {'(' if lo_open else '['}{lo}, {hi}], got {v}")
    return v


def _lookbacks(lookbacks: Any) -> Tuple[int, ...]:
    if isinstance(lookbacks, (str, bytes)) or not isinstance(lookbacks, Iterable):
        raise TypeError(f"lookbacks must be a sequence of integers, got {type(lookbacks).__name__}")
    out = tuple(_int_param(n, "lookbacks[]", 1) for n in lookbacks)
    if len(set(out)) != len(out):
        raise ValueError(f"lookbacks must be distinct, got {out}")
    return out


def _time_of_day_ns(x: Any, name: str) -> int:
    if isinstance(x, _dt.time):
        if x.tzinfo is not None:
            raise ValueError(f"{name} must be a local wall-clock time without tzinfo")
        return ((x.hour * 60 + x.minute) * 60 + x.second) * 10**9 + x.microsecond * 1000
    if isinstance(x, str):
        try:
            t = _dt.time.fromisoformat(x)
        except ValueError:
            raise ValueError(f"{name} must be 'HH:MM' (24 h local time), got {x!r}") from None
        return _time_of_day_ns(t, name)
    raise TypeError(f"{name} must be 'HH:MM' or a datetime.time, got {type(x).__name__}")


def _tzinfo(x: Any) -> _dt.tzinfo:
    if isinstance(x, _dt.tzinfo):
        return x
    if isinstance(x, str):
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            return ZoneInfo(x)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"tz must be an IANA time zone name such as 'America/Chicago', "
                             f"got {x!r}") from None
    raise TypeError(f"tz must be a time zone name or a datetime.tzinfo, got {type(x).__name__}")


#: Upper bound of ``node_smoothing`` and ``node_order`` (rows): the default ``max_rows``, the widest
#: profile the engine builds by default; a wider window reads nothing more.
MAX_NODE_ROWS = 1_000_000
_NODE_WHY = " (the default max_rows: a profile has no more rows to look at)"


@dataclass(frozen=True)
class _Rules:
    """Every feature rule, validated (docs/features.md describes each)."""

    tick_size: float
    ticks_per_row: int
    distribute: str
    value_area: float
    va_method: str
    poc_tie: str
    lookbacks: Tuple[int, ...]
    composite_sessions: int
    naked_max_age: Optional[int]
    node_smoothing: int
    node_order: int
    hvn_threshold: float
    lvn_threshold: float
    shape_edge: float
    shape_b_peak: float
    shape_b_valley: float
    tz: _dt.tzinfo
    rth_start_ns: int
    ib_minutes: int
    tpo_minutes: int

    @property
    def row_size(self) -> float:
        return self.tick_size * self.ticks_per_row


def _rules(tick_size: Any, ticks_per_row: Any, distribute: Any, value_area: Any, va_method: Any,
           poc_tie: Any, lookbacks: Any, composite_sessions: Any, naked_max_age: Any,
           node_smoothing: Any, node_order: Any, hvn_threshold: Any, lvn_threshold: Any,
           shape_edge: Any, shape_b_peak: Any, shape_b_valley: Any, tz: Any, rth_start: Any,
           ib_minutes: Any, tpo_minutes: Any) -> _Rules:
    # tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie are validated by the engine
    smoothing = _int_param(node_smoothing, "node_smoothing", 1, MAX_NODE_ROWS, _NODE_WHY)
    if smoothing % 2 == 0:
        raise ValueError(f"node_smoothing must be odd (a centred window), got {smoothing}")
    return _Rules(
        tick_size=tick_size, ticks_per_row=ticks_per_row, distribute=distribute,
        value_area=value_area, va_method=va_method, poc_tie=poc_tie,
        lookbacks=_lookbacks(lookbacks),
        composite_sessions=_int_param(composite_sessions, "composite_sessions", 1),
        naked_max_age=None if naked_max_age is None else _int_param(naked_max_age, "naked_max_age", 1),
        node_smoothing=smoothing,
        node_order=_int_param(node_order, "node_order", 1, MAX_NODE_ROWS, _NODE_WHY),
        hvn_threshold=_real_param(hvn_threshold, "hvn_threshold", 0.0, 1.0),
        lvn_threshold=_real_param(lvn_threshold, "lvn_threshold", 0.0, 1.0),
        shape_edge=_real_param(shape_edge, "shape_edge", 0.0, 0.5, lo_open=True),
        shape_b_peak=_real_param(shape_b_peak, "shape_b_peak", 0.0, 1.0, lo_open=True),
        shape_b_valley=_real_param(shape_b_valley, "shape_b_valley", 0.0, 1.0, lo_open=True),
        tz=_tzinfo(tz),
        rth_start_ns=_time_of_day_ns(rth_start, "rth_start"),
        ib_minutes=_int_param(ib_minutes, "ib_minutes", 1),
        tpo_minutes=_int_param(tpo_minutes, "tpo_minutes", 1),
    )


# =============================================================================== inputs


def _host(x: Any) -> Any:
    """GPU arrays copied to the host (features are computed in NumPy)."""
    if x is None or gpu_location(x) is None:
        return x
    return x.cpu() if hasattr(x, "cpu") else x.get()


def _timestamps_ns(x: Any, n: int, time_unit: Optional[str]) -> np.ndarray:
    """Timestamps as int64 ns since the epoch, UTC: integers (in ``time_unit``, None: ns, checked
    for plausibility), datetime64 (naive = UTC) or pandas datetimes (tz-aware converted to UTC)."""
    if type(x).__module__.split(".")[0] == "pandas" and hasattr(x, "dtype") \
            and str(getattr(x, "dtype", "")).startswith("datetime64"):
        import pandas as pd

        idx = pd.DatetimeIndex(x)
        if idx.tz is not None:
            idx = idx.tz_convert("UTC").tz_localize(None)
        arr = idx.to_numpy(dtype="datetime64[ns]")
    else:
        arr = np.asarray(unmasked(_host(x), "timestamp"))
    if arr.ndim != 1:
        raise ValueError(f"timestamp must be 1-D, got shape {arr.shape}")
    if arr.dtype.kind == "M":
        out = datetime64_ns(arr, "timestamp")
    elif arr.dtype.kind in "iu":
        out = epoch_ns(arr, "timestamp", time_unit)
    else:
        raise TypeError("timestamp must be integer epoch times (ns, or time_unit=), datetime64 or "
                        f"pandas datetimes, got dtype {arr.dtype}")
    if out.shape[0] != n:
        raise ValueError(f"timestamp has length {out.shape[0]} but the data has {n} rows")
    return np.ascontiguousarray(out)


def _unpack_frame(high: Any, low: Any, close: Any, volume: Any, open: Any, timestamp: Any,
                  offsets: Any, session_ids: Any) -> Tuple[Any, ...]:
    """A SynthBars or a pandas/polars DataFrame given as ``high``: its columns as the arrays."""
    labels = None
    is_frame = type(high).__module__.split(".")[0] in ("pandas", "polars") and hasattr(high, "columns")
    if isinstance(high, SynthBars) or is_frame:
        if low is not None or close is not None or volume is not None:
            raise TypeError("when the first argument is a SynthBars/DataFrame, do not pass low, "
                            "close or volume")
        frame = high
        if isinstance(frame, SynthBars):
            get = lambda k: getattr(frame, k)  # noqa: E731
            has = lambda k: True  # noqa: E731
            if offsets is None and session_ids is None:
                offsets, labels = frame.offsets, frame.session_labels
        else:
            cols = {str(c) for c in frame.columns}
            missing = [k for k in ("high", "low", "close", "volume") if k not in cols]
            if missing:
                raise ValueError(f"the DataFrame has no column(s) {missing}; it needs high, low, "
                                 "close, volume (open, timestamp, session_id optional)")
            get = lambda k: frame[k].to_numpy() if k != "timestamp" else frame[k]  # noqa: E731
            has = lambda k: k in cols  # noqa: E731
            if offsets is None and session_ids is None and has("session_id"):
                session_ids = get("session_id")
        high, low, close, volume = get("high"), get("low"), get("close"), get("volume")
        if open is None and has("open"):
            open = get("open")
        if timestamp is None and has("timestamp"):
            timestamp = get("timestamp")
    elif low is None or close is None or volume is None:
        raise TypeError("high, low, close and volume are required (or pass a SynthBars/DataFrame "
                        "as the first argument)")
    return high, low, close, volume, open, timestamp, offsets, session_ids, labels


@dataclass
class _Data:
    """Validated host inputs and the session layout."""

    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    volume: np.ndarray  # float64
    open: Optional[np.ndarray]
    ts: Optional[np.ndarray]  # int64 ns UTC
    offsets: np.ndarray  # bars, int64 [S+1]
    labels: np.ndarray  # [S]
    engine_inputs: Tuple[Any, ...]


def _data(high: Any, low: Any, close: Any, volume: Any, open: Any, timestamp: Any, offsets: Any,
          session_ids: Any, time_unit: Optional[str] = None) -> _Data:
    high, low, close, volume, open, timestamp, offsets, session_ids, labels = _unpack_frame(
        high, low, close, volume, open, timestamp, offsets, session_ids)
    h = as_prices(_host(high), "high")
    n = h.shape[0]
    offs, id_labels = _sessions(_host(offsets), _host(session_ids), n)
    if id_labels is not None:
        labels = id_labels
    o = None if open is None else as_prices(_host(open), "open")
    lo, c = as_prices(_host(low), "low"), as_prices(_host(close), "close")
    v = as_volume(_host(volume), "volume")
    check_time_unit(time_unit)
    ts = None if timestamp is None else _timestamps_ns(timestamp, n, time_unit)
    S = int(offs.shape[0]) - 1 if offs.ndim == 1 else 0
    if labels is None:
        labels = np.arange(max(S, 0), dtype=np.int64)
    f64 = lambda a: np.asarray(a, dtype=np.float64)  # noqa: E731
    return _Data(high=f64(h), low=f64(lo), close=f64(c), volume=f64(v),
                 open=None if o is None else f64(o), ts=ts, offsets=offs,
                 labels=np.asarray(labels), engine_inputs=(h, lo, c, v, o))


# =============================================================================== helpers


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b, NaN where b == 0 (or either is NaN)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = np.broadcast_arrays(a, b)
    out = np.full(a.shape, np.nan)
    ok = b != 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out[ok] = a[ok] / b[ok]
    out[~np.isfinite(out)] = np.nan
    return out


def _segment_reduce(ufunc: np.ufunc, x: np.ndarray, offsets: np.ndarray, empty: float) -> np.ndarray:
    """``ufunc`` over each segment ``x[offsets[s]:offsets[s+1]]``; ``empty`` for empty ones."""
    S = offsets.shape[0] - 1
    out = np.full(S, empty, dtype=np.float64)
    nz = np.diff(offsets) > 0
    if nz.any():
        out[nz] = ufunc.reduceat(x, offsets[:-1][nz])
    return out


def _segment_count(mask: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Number of True entries per segment (exact, int64)."""
    c = np.zeros(mask.shape[0] + 1, dtype=np.int64)
    np.cumsum(mask, out=c[1:])
    return c[offsets[1:]] - c[offsets[:-1]]


def _segment_accumulate(ufunc: np.ufunc, x: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``ufunc.accumulate`` restarted at every segment (one call per session of two or more
    rows, none per row; a one-row segment is its value)."""
    out = np.array(x, dtype=np.float64)
    bounds = offsets.tolist()
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b - a > 1:
            ufunc.accumulate(x[a:b], out=out[a:b])
    return out


def _sliding(ufunc: np.ufunc, x: np.ndarray, k: int) -> np.ndarray:
    """``ufunc.reduce(x[i:i+k])`` for i = 0..len(x)-k (np.maximum / np.minimum), in O(len(x)):
    the maximum of a block-wise suffix and the next block's prefix (van Herk / Gil-Werman)."""
    n = x.shape[0]
    if k > n:
        return np.zeros(0, dtype=x.dtype)
    fill = -np.inf if ufunc is np.maximum else np.inf
    blocks = np.concatenate([x, np.full(-n % k, fill)]).reshape(-1, k)
    prefix = ufunc.accumulate(blocks, axis=1).reshape(-1)
    suffix = ufunc.accumulate(blocks[:, ::-1], axis=1)[:, ::-1].reshape(-1)
    return ufunc(suffix[:n - k + 1], prefix[k - 1:n])


def _price_rows(p: np.ndarray, rules: _Rules) -> np.ndarray:
    """The contract's ladder row of each price: floor(rint(p / tick_size) / ticks_per_row)."""
    t = np.rint(np.asarray(p, dtype=np.float64) / rules.tick_size).astype(np.int64)
    return np.floor_divide(t, np.int64(rules.ticks_per_row))


def _nearest(levels: np.ndarray, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """For sorted ``levels``: (min level - x over levels >= x, min x - level over levels <= x),
    NaN where there is none."""
    above = np.full(x.shape[0], np.nan)
    below = np.full(x.shape[0], np.nan)
    if levels.shape[0] == 0 or x.shape[0] == 0:
        return above, below
    i = np.searchsorted(levels, x, side="left")
    ok = i < levels.shape[0]
    above[ok] = levels[i[ok]] - x[ok]
    j = np.searchsorted(levels, x, side="right") - 1
    ok = j >= 0
    below[ok] = x[ok] - levels[j[ok]]
    return above, below


def _nearest_grouped(level_offsets: np.ndarray, levels: np.ndarray, query_offsets: np.ndarray,
                     queries: np.ndarray, source: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Query group g (rows ``query_offsets[g]:[g+1]``) looks up the sorted levels of group
    ``source[g]`` (``levels[level_offsets[k]:[k+1]]``; -1: none). One loop step per group."""
    above = np.full(queries.shape[0], np.nan)
    below = np.full(queries.shape[0], np.nan)
    qo = query_offsets.tolist()
    lo = level_offsets.tolist()
    for g, k in enumerate(source.tolist()):
        a, b = qo[g], qo[g + 1]
        if k < 0 or b == a or lo[k + 1] == lo[k]:
            continue
        above[a:b], below[a:b] = _nearest(levels[lo[k]:lo[k + 1]], queries[a:b])
    return above, below


def _lag(x: np.ndarray, p: int) -> np.ndarray:
    out = np.full(x.shape[0], np.nan)
    if x.shape[0] > p:
        out[p:] = x[:-p]
    return out


def _rolling(x: np.ndarray, p: int) -> Optional[np.ndarray]:
    """Trailing windows [m - p + 1, p] (None when there are fewer than p values)."""
    if x.shape[0] < p:
        return None
    return np.lib.stride_tricks.sliding_window_view(x, p)


def _rolling_mean(x: np.ndarray, p: int) -> np.ndarray:
    out = np.full(x.shape[0], np.nan)
    w = _rolling(x, p)
    if w is not None:
        out[p - 1:] = w.mean(axis=1)
    return out


_STD_BLOCK = 1 << 21  # values per block of _rolling_std


def _rolling_std(x: np.ndarray, p: int) -> np.ndarray:
    """Sample standard deviation (ddof=1) of trailing windows; 0 when a window's values are
    all equal; NaN for p < 2 or windows holding a NaN."""
    out = np.full(x.shape[0], np.nan)
    w = _rolling(x, p)
    if w is not None and p >= 2:
        # in blocks of windows (std's temporaries are a copy of the block, not of all m x p
        # values); a window's result does not depend on the block (no block of one window but
        # where there is only one)
        rows = w.shape[0]
        step = max(2, _STD_BLOCK // p)
        a = 0
        while a < rows:
            b = rows if rows - a < 2 * step else a + step
            blk = w[a:b]
            sd = blk.std(axis=1, ddof=1)
            sd[np.max(blk, axis=1) == np.min(blk, axis=1)] = 0.0
            out[p - 1 + a:p - 1 + b] = sd
            a = b
    return out


# =============================================================================== session context


@dataclass
class _Context:
    """Everything computed once per call, shared by session and bar features."""

    data: _Data
    rules: _Rules
    prof: Profiles
    S: int
    counts: np.ndarray  # bars per session
    ne: np.ndarray  # indices of the non-empty sessions (m)
    k_of: np.ndarray  # [S] position of each session among the non-empty ones (-1 when empty)
    prev: np.ndarray  # [S] previous non-empty session (-1: none)
    s_open: np.ndarray
    s_close: np.ndarray
    s_high: np.ndarray
    s_low: np.ndarray
    total_volume: np.ndarray
    vwap: np.ndarray
    threads: Optional[int]


def _context(data: _Data, rules: _Rules, prof: Profiles, threads: Optional[int]) -> _Context:
    offs = data.offsets
    S = offs.shape[0] - 1
    counts = np.diff(offs)
    nonempty = counts > 0
    ne = np.flatnonzero(nonempty)
    k_of = np.full(S, -1, dtype=np.int64)
    k_of[ne] = np.arange(ne.shape[0])
    before = np.cumsum(nonempty) - nonempty  # non-empty sessions before s
    prev = np.where(before > 0, ne[np.maximum(before - 1, 0)] if ne.size else -1, -1)
    first = offs[:-1]
    last = offs[1:] - 1
    s_close = np.full(S, np.nan)
    s_open = np.full(S, np.nan)
    s_close[nonempty] = data.close[last[nonempty]]
    if data.open is not None:
        s_open[nonempty] = data.open[first[nonempty]]
    s_high = _segment_reduce(np.maximum, data.high, offs, np.nan)
    s_low = _segment_reduce(np.minimum, data.low, offs, np.nan)
    total = _segment_reduce(np.add, data.volume, offs, np.nan)
    pv = _segment_reduce(np.add, data.close * data.volume, offs, np.nan)
    vwap = np.where(total > 0, _ratio(pv, total), s_close)  # no volume: the close (legacy)
    return _Context(data=data, rules=rules, prof=prof, S=S, counts=counts, ne=ne, k_of=k_of,
                    prev=np.asarray(prev, dtype=np.int64), s_open=s_open, s_close=s_close,
                    s_high=s_high, s_low=s_low, total_volume=total, vwap=vwap, threads=threads)


def _profiles(data: _Data, rules: _Rules, device: Any, threads: Optional[int],
              developing: bool) -> Tuple[Profiles, str]:
    """One engine call over all sessions; (host profiles, the device it ran on)."""
    h, lo, c, v, o = data.engine_inputs
    kw: Dict[str, Any] = dict(developing=True) if developing else {}
    prof = from_bars(h, lo, c, v, open=o, offsets=data.offsets, tick_size=rules.tick_size,
                     ticks_per_row=rules.ticks_per_row, distribute=rules.distribute,
                     value_area=rules.value_area, va_method=rules.va_method, poc_tie=rules.poc_tie,
                     device=device, threads=threads, **kw)
    return prof.cpu(), prof.device


# ---------------------------------------------------------------------------- composite profiles


def _composites(ctx: _Context) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """POC/VAH/VAL of the composite of the N = composite_sessions non-empty sessions ending at
    each non-empty session (the sum of their histograms, same rules); NaN for the first N-1."""
    rules, prof = ctx.rules, ctx.prof
    m, N = ctx.ne.shape[0], rules.composite_sessions
    out = tuple(np.full(m, np.nan) for _ in range(3))
    if m < N:
        return out  # type: ignore[return-value]
    hoff = np.asarray(prof.offsets)
    vol = np.asarray(prof.volume)
    n_rows = np.asarray(prof.n_rows)
    row_price = (np.repeat(np.asarray(prof.low_row), n_rows)
                 + (np.arange(vol.shape[0]) - np.repeat(hoff[:-1], n_rows))).astype(np.float64) \
        * rules.row_size
    # the rows of window e are one contiguous slice of the flat histogram
    starts = hoff[ctx.ne[: m - N + 1]]
    ends = hoff[ctx.ne[N - 1:] + 1]
    lengths = ends - starts
    budget = 8_000_000  # histogram rows per engine call
    e0 = 0
    while e0 < starts.shape[0]:
        e1 = e0 + 1
        total = int(lengths[e0])
        while e1 < starts.shape[0] and total + int(lengths[e1]) <= budget:
            total += int(lengths[e1])
            e1 += 1
        seg = lengths[e0:e1]
        w_offs = np.zeros(e1 - e0 + 1, dtype=np.int64)
        np.cumsum(seg, out=w_offs[1:])
        idx = np.arange(total, dtype=np.int64) + np.repeat(starts[e0:e1] - w_offs[:-1], seg)
        comp = from_trades(row_price[idx], vol[idx], offsets=w_offs, tick_size=rules.row_size,
                           ticks_per_row=1, value_area=rules.value_area, va_method=rules.va_method,
                           poc_tie=rules.poc_tie, threads=ctx.threads)
        for arr, name in zip(out, ("poc", "vah", "val")):
            arr[N - 1 + e0:N - 1 + e1] = getattr(comp, name)
        e0 = e1
    return out  # type: ignore[return-value]


# ---------------------------------------------------------------------------- naked POCs


class _SortedSet:
    """A set of integers in [0, n): insert, remove, successor and predecessor in O(log_64 n)
    (a 64-ary tree of bit words: bit w of level h + 1 is set iff word w of level h is non-zero;
    each level has one spare zero word, so a successor query at n needs no bounds check).

    ``levels[0]`` may be read directly (a query answered within one word); a caller that clears
    or sets a whole word of level 0 passes the word's index to ``discard`` / ``add`` with
    ``h=1``."""

    __slots__ = ("levels",)

    def __init__(self, n: int) -> None:
        self.levels: List[List[int]] = []
        while True:
            n = (n + 63) >> 6
            self.levels.append([0] * (n + 1))
            if n <= 1:
                break

    def add(self, i: int, h: int = 0) -> None:
        levels = self.levels
        for h in range(h, len(levels)):
            words = levels[h]
            w = i >> 6
            old = words[w]
            words[w] = old | (1 << (i & 63))
            if old:
                return
            i = w

    def discard(self, i: int, h: int = 0) -> None:
        levels = self.levels
        for h in range(h, len(levels)):
            words = levels[h]
            w = i >> 6
            x = words[w] & ~(1 << (i & 63))
            words[w] = x
            if x:
                return
            i = w

    def next(self, i: int) -> int:
        """The smallest member >= i (0 <= i <= n), or -1."""
        levels = self.levels
        h = 0
        for words in levels:
            x = words[i >> 6] >> (i & 63)
            if x:
                i += (x & -x).bit_length() - 1
                break
            i = (i >> 6) + 1
            h += 1
        else:
            return -1
        while h:
            h -= 1
            x = levels[h][i]
            i = (i << 6) + (x & -x).bit_length() - 1
        return i

    def prev(self, i: int) -> int:
        """The largest member <= i (i < n), or -1 (i < 0: -1)."""
        levels = self.levels
        h = 0
        for words in levels:
            if i < 0:
                return -1
            w = i >> 6
            x = words[w] & ((2 << (i & 63)) - 1)
            if x:
                i = (w << 6) + x.bit_length() - 1
                break
            i = w - 1
            h += 1
        else:
            return -1
        while h:
            h -= 1
            i = (i << 6) + levels[h][i].bit_length() - 1
        return i


_SWEEP_BLOCK = 1 << 17  # sessions / queries per block of a sweep (bounds its Python lists)


def _first_touch(p_row: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """For each j: the first k > j with lo[k] <= p_row[j] <= hi[k] (len(p_row) when none).

    A sweep over k with the POCs not yet touched kept in a sorted set (by row): session k removes
    the pending ones in its row range, then adds its own. Each POC is added and removed at most
    once: O(m log m)."""
    m = p_row.shape[0]
    order = np.argsort(p_row, kind="stable")
    rows = p_row[order]
    pos = np.empty(m, dtype=np.int64)
    pos[order] = np.arange(m, dtype=np.int64)
    touch = np.full(m, m, dtype=np.int64)
    pending = _SortedSet(m)
    add, discard, nxt = pending.add, pending.discard, pending.next
    L0 = pending.levels[0]
    for k0 in range(0, m, _SWEEP_BLOCK):
        k1 = min(m, k0 + _SWEEP_BLOCK)
        a = np.searchsorted(rows, lo[k0:k1], side="left").tolist()  # pending in [a, b)
        b = np.searchsorted(rows, hi[k0:k1], side="right").tolist()
        hit_pos: List[int] = []
        hit_k: List[int] = []
        for k, p in enumerate(pos[k0:k1].tolist(), k0):
            s, bk = a[k - k0], b[k - k0]
            if s < bk:  # remove the pending positions in [s, bk) (level-0 words inline)
                x = L0[s >> 6] >> (s & 63)
                s = s + (x & -x).bit_length() - 1 if x else nxt(s)
                while 0 <= s < bk:
                    w = s >> 6
                    x = L0[w] & ~(1 << (s & 63))
                    L0[w] = x
                    if not x:
                        discard(w, 1)
                    hit_pos.append(s)
                    hit_k.append(k)
                    x >>= s & 63
                    s = s + (x & -x).bit_length() - 1 if x else nxt(s + 1)
            w = p >> 6
            x = L0[w]
            L0[w] = x | (1 << (p & 63))
            if not x:
                add(w, 1)
        touch[order[np.asarray(hit_pos, dtype=np.int64)]] = np.asarray(hit_k, dtype=np.int64)
    return touch


def _naked(ctx: _Context, bar_close: Optional[np.ndarray]) -> Dict[str, np.ndarray]:
    """Naked POCs: the POC of non-empty session j is naked at the end of session e >= j while no
    session k (j < k <= e) traded through its row (row(low_k) <= poc_row_j <= row(high_k)).

    Returns per non-empty session e (length m): ``count``, ``above``, ``below`` (distances in
    price from the close of e), and with ``bar_close``: per bar of the *next* non-empty session,
    ``bar_count``, ``bar_above``, ``bar_below`` against the set at the end of the previous one.

    POC j is naked for e in [j, end_j), end_j = min(first later session touching it, j +
    naked_max_age). Counts are prefix sums. The nearest naked POC above (below) a price x is the
    next (previous) naked one, in the stable (price, session) order of all POCs, from the first
    POC >= x (the last <= x): the element a search of the sorted naked levels alone finds. A
    sweep over e keeps the naked set (add j at e = j, remove it at e = end_j) and answers the
    queries of e, one look-up per distinct (e, position): O(m log m + bars log m), in blocks.
    """
    rules = ctx.rules
    m = ctx.ne.shape[0]
    res = {k: np.full(m, np.nan) for k in ("count", "above", "below")}
    if bar_close is not None:
        n = bar_close.shape[0]
        res.update({k: np.full(n, np.nan) for k in ("bar_count", "bar_above", "bar_below")})
        if m:  # the first non-empty session: nothing is known before it
            first = int(ctx.ne[0])
            res["bar_count"][ctx.data.offsets[first]:ctx.data.offsets[first + 1]] = 0.0
    if m == 0:
        return res
    p_row = np.asarray(ctx.prof.poc_row)[ctx.ne]
    price = np.asarray(ctx.prof.poc)[ctx.ne]
    lo = _price_rows(ctx.s_low[ctx.ne], rules)
    hi = _price_rows(ctx.s_high[ctx.ne], rules)
    ks = np.arange(m, dtype=np.int64)
    end = _first_touch(p_row, lo, hi)
    del p_row, lo, hi
    if rules.naked_max_age is not None:  # naked at e while e - j < naked_max_age (e - j < m)
        end = np.minimum(end, ks + min(rules.naked_max_age, m))
    # count at e: the j <= e whose end is past e
    count = (ks + 1 - np.cumsum(np.bincount(end[end < m], minlength=m))).astype(np.float64)
    res["count"][:] = count
    order = np.argsort(price, kind="stable")  # the levels in (price, session) order
    price_sorted = price[order]
    pos = np.empty(m, dtype=np.int64)
    pos[order] = ks
    del order
    r_order = np.argsort(end, kind="stable")  # removals by time
    r_end = end[r_order]
    r_pos = pos[r_order]
    del r_order, end
    # the queries at e: the close of session e, and the bars [bs[e], bs[e + 1]) (the bars of
    # session ne[e + 1]; empty sessions have none)
    bs = np.zeros(m + 1, dtype=np.int64)
    if bar_close is not None:
        bs[:m - 1] = ctx.data.offsets[ctx.ne[1:]]
        bs[m - 1:] = bar_close.shape[0]
    cum = bs + np.arange(m + 1, dtype=np.int64)  # queries before e: cum[e] - bs[0]
    s_close = ctx.s_close[ctx.ne]
    naked = _SortedSet(m)
    add, discard, nxt, prv = naked.add, naked.discard, naked.next, naked.prev
    L0 = naked.levels[0]
    e0 = 0
    while e0 < m:
        e1 = int(np.searchsorted(cum, cum[e0] + _SWEEP_BLOCK, side="right")) - 1
        e1 = min(m, max(e0 + 1, e1))
        b0, b1 = int(bs[e0]), int(bs[e1])
        t = np.arange(e0, e1, dtype=np.int64)
        q_x = s_close[e0:e1]
        if b1 > b0:
            t = np.concatenate([t, np.repeat(t, np.diff(bs[e0:e1 + 1]))])
            q_x = np.concatenate([q_x, bar_close[b0:b1]])  # type: ignore[index]
        # first POC >= x and last POC <= x, then the next / previous naked one from there
        qa = np.searchsorted(price_sorted, q_x, side="left")
        qb = np.searchsorted(price_sorted, q_x, side="right")  # one past the last <= x
        ua, ia = np.unique((t - e0) * (m + 1) + qa, return_inverse=True)
        ub, ib = np.unique((t - e0) * (m + 1) + qb, return_inverse=True)
        del qa, qb
        ua_t, ua_q = np.divmod(ua, m + 1)
        ub_t, ub_q = np.divmod(ub, m + 1)
        steps = np.arange(e1 - e0 + 1, dtype=np.int64)
        a_bounds = np.searchsorted(ua_t, steps).tolist()
        b_bounds = np.searchsorted(ub_t, steps).tolist()
        ua_l, ub_l = ua_q.tolist(), (ub_q - 1).tolist()
        del ua, ub, ua_t, ub_t, ua_q, ub_q
        r0, r1 = np.searchsorted(r_end, [e0, e1])
        r_l = r_pos[r0:r1].tolist()
        r_bounds = (np.searchsorted(r_end[r0:r1], steps + e0)).tolist()
        ans_a = [-1] * len(ua_l)
        ans_b = [-1] * len(ub_l)
        for e, p in enumerate(pos[e0:e1].tolist()):  # level-0 words inline, the tree past them
            w = p >> 6
            x = L0[w]
            L0[w] = x | (1 << (p & 63))
            if not x:
                add(w, 1)
            for i in range(r_bounds[e], r_bounds[e + 1]):
                r = r_l[i]
                w = r >> 6
                x = L0[w] & ~(1 << (r & 63))
                L0[w] = x
                if not x:
                    discard(w, 1)
            for i in range(a_bounds[e], a_bounds[e + 1]):
                q = ua_l[i]
                x = L0[q >> 6] >> (q & 63)
                ans_a[i] = q + (x & -x).bit_length() - 1 if x else nxt(q)
            for i in range(b_bounds[e], b_bounds[e + 1]):
                q = ub_l[i]
                x = L0[q >> 6] & ((2 << (q & 63)) - 1) if q >= 0 else 0
                ans_b[i] = ((q >> 6) << 6) + x.bit_length() - 1 if x else prv(q)
        ja = np.asarray(ans_a, dtype=np.int64)[ia]
        jb = np.asarray(ans_b, dtype=np.int64)[ib]
        del ans_a, ans_b, ia, ib
        above = np.full(q_x.shape[0], np.nan)
        below = np.full(q_x.shape[0], np.nan)
        ok = ja >= 0
        above[ok] = price_sorted[ja[ok]] - q_x[ok]
        ok = jb >= 0
        below[ok] = q_x[ok] - price_sorted[jb[ok]]
        k = e1 - e0
        res["above"][e0:e1] = above[:k]
        res["below"][e0:e1] = below[:k]
        if b1 > b0:
            res["bar_count"][b0:b1] = count[t[k:]]
            res["bar_above"][b0:b1] = above[k:]
            res["bar_below"][b0:b1] = below[k:]
        e0 = e1
    return res


# ---------------------------------------------------------------------------- HVN / LVN and shape


@dataclass
class _Nodes:
    hvn: np.ndarray  # bool per histogram row
    lvn: np.ndarray
    smooth: np.ndarray  # smoothed (window-summed) volume per histogram row
    row_price: np.ndarray
    hoff: np.ndarray  # histogram offsets [S+1]


def _nodes(ctx: _Context) -> _Nodes:
    """HVN/LVN rows. Volumes are summed over a centred window of ``node_smoothing`` rows (rows
    outside the profile count 0). Consecutive rows with equal smoothed volume (within the 1e-9
    relative tie band) form a run; a run is an HVN when the rows just below and above it are
    strictly lower, no row within ``node_order`` rows of it is higher (those rows must lie inside
    the profile) and its volume is >= ``hvn_threshold`` x the session's largest smoothed volume;
    an LVN mirrors this (strictly higher neighbours, none lower, <= ``lvn_threshold`` x largest).
    The node is the run's middle row (the lower of two)."""
    rules, prof = ctx.rules, ctx.prof
    hoff = np.asarray(prof.offsets)
    vol = np.asarray(prof.volume)
    n_rows = np.asarray(prof.n_rows)
    R = vol.shape[0]
    pos = np.arange(R, dtype=np.int64) - np.repeat(hoff[:-1], n_rows)
    nr = np.repeat(n_rows, n_rows)
    # the window sum from per-session running sums: O(rows) whatever the window (the running sums
    # restart at every session, so their rounding is relative to the session's volume)
    h = rules.node_smoothing // 2
    idx = np.arange(R, dtype=np.int64)
    csum = _segment_accumulate(np.add, vol, hoff)
    top = csum[idx + np.minimum(nr - 1 - pos, h)]
    below = np.where(pos > h, csum[np.maximum(idx - h - 1, 0)], 0.0)
    sm = top - below if h else vol.astype(np.float64)
    smax = np.repeat(_segment_reduce(np.maximum, sm, hoff, 0.0), n_rows)
    tol = _TIE_REL * smax
    new_run = np.ones(R, dtype=bool)
    if R > 1:
        new_run[1:] = (pos[1:] == 0) | (np.abs(sm[1:] - sm[:-1]) > tol[1:])
    a = np.flatnonzero(new_run)  # run starts; runs never cross sessions
    b = np.append(a[1:], R)[:a.size].astype(np.int64) - 1  # run ends
    k = rules.node_order
    inside = (pos[a] >= k) & (pos[b] + k <= nr[a] - 1)
    a, b = a[inside], b[inside]
    c = (a + b) // 2
    v, t, top = sm[c], tol[c], smax[c]
    is_h = (v >= rules.hvn_threshold * top - t) & (v - sm[a - 1] > t) & (v - sm[b + 1] > t)
    is_l = (v <= rules.lvn_threshold * top + t) & (sm[a - 1] - v > t) & (sm[b + 1] - v > t)
    if a.size:  # the k rows on each side, by sliding-window extremes (windows inside sessions)
        hi_k, lo_k = _sliding(np.maximum, sm, k), _sliding(np.minimum, sm, k)
        is_h &= (v - hi_k[a - k] >= -t) & (v - hi_k[b + 1] >= -t)
        is_l &= (lo_k[a - k] - v >= -t) & (lo_k[b + 1] - v >= -t)
    hvn = np.zeros(R, dtype=bool)
    lvn = np.zeros(R, dtype=bool)
    hvn[c[is_h]] = True
    lvn[c[is_l]] = True
    row_price = (np.repeat(np.asarray(prof.low_row), n_rows) + pos).astype(np.float64) * rules.row_size
    return _Nodes(hvn=hvn, lvn=lvn, smooth=sm, row_price=row_price, hoff=hoff)


def _node_levels(nodes: _Nodes, flag: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(CSR offsets [S+1], sorted prices) of the flagged rows of every session."""
    offs = np.zeros(nodes.hoff.shape[0], dtype=np.int64)
    np.cumsum(_segment_count(flag, nodes.hoff), out=offs[1:])
    return offs, nodes.row_price[flag]


def _shapes(ctx: _Context, nodes: _Nodes) -> np.ndarray:
    """Shape code per session: 0 P, 1 b, 2 D, 3 B, -1 empty (docs/features.md)."""
    rules, prof = ctx.rules, ctx.prof
    S = ctx.S
    n_rows = np.asarray(prof.n_rows)
    code = np.full(S, -1, dtype=np.int64)
    ok = n_rows > 0
    poc_pos = np.full(S, 0.5)
    multi = n_rows > 1
    poc_pos[multi] = (np.asarray(prof.poc_row)[multi] - np.asarray(prof.low_row)[multi]) \
        / (n_rows[multi] - 1).astype(np.float64)
    code[ok] = 2
    code[ok & (poc_pos <= rules.shape_edge)] = 1
    code[ok & (poc_pos >= 1.0 - rules.shape_edge)] = 0
    # B: the two largest HVNs (by smoothed volume, equal ones lower row first)
    hv = np.flatnonzero(nodes.hvn)
    if hv.size >= 2:
        sess = np.repeat(np.arange(S), n_rows)[hv]
        order = np.lexsort((hv, -nodes.smooth[hv], sess))
        hv, sess = hv[order], sess[order]
        first = np.r_[True, sess[1:] != sess[:-1]]
        i1 = np.flatnonzero(first)
        has2 = (i1 + 1 < hv.size)
        has2[has2] = sess[i1[has2] + 1] == sess[i1[has2]]
        i1 = i1[has2]
        r1, r2 = hv[i1], hv[i1 + 1]
        s1, s2 = nodes.smooth[r1], nodes.smooth[r2]
        a, b = np.minimum(r1, r2), np.maximum(r1, r2)
        ext = np.append(nodes.smooth, np.inf)
        pairs = np.empty(2 * a.size, dtype=np.int64)
        pairs[0::2], pairs[1::2] = a, b + 1
        valley = np.minimum.reduceat(ext, pairs)[0::2]
        smax = s1  # the largest HVN is the session's largest smoothed volume or below it
        tol = _TIE_REL * np.maximum(smax, 0.0)
        is_b = (s2 >= rules.shape_b_peak * s1 - tol) & (valley <= rules.shape_b_valley * s2 + tol)
        code[sess[i1][is_b]] = 3
    return code


# ---------------------------------------------------------------------------- time: IB, TPO


def _zone_offset_s(s: int, tz: _dt.tzinfo) -> int:
    """UTC offset (seconds) of ``tz`` at the instant ``s`` seconds after the epoch."""
    delta = _dt.datetime.fromtimestamp(s, tz).utcoffset()
    return 0 if delta is None else int(delta.total_seconds())


def _offset_change(day: int, tz: _dt.tzinfo, before: int) -> int:
    """The first second of UTC day ``day`` (days since the epoch) at which the offset is no
    longer ``before`` (it differs at the next midnight): bisection to the second."""
    lo, hi = day * 86400, (day + 1) * 86400
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _zone_offset_s(mid, tz) == before:
            lo = mid
        else:
            hi = mid
    return hi


def _utc_offset_ns(ts: np.ndarray, tz: _dt.tzinfo) -> np.ndarray:
    """UTC offset (ns) of ``tz`` at each instant: the zone's offsets at every UTC midnight of
    the span, each change located to the second by bisection (at most one change a day)."""
    if ts.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    sec = np.floor_divide(ts, 10**9)
    d0, d1 = int(sec.min()) // 86400, int(sec.max()) // 86400 + 1
    days = list(range(d0, d1 + 1))
    offs = [_zone_offset_s(d * 86400, tz) for d in days]
    when: List[int] = []
    value: List[int] = [offs[0]]
    for i in range(len(days) - 1):
        if offs[i] != offs[i + 1]:
            when.append(_offset_change(days[i], tz, offs[i]))
            value.append(offs[i + 1])
    k = np.searchsorted(np.asarray(when, dtype=np.int64), sec, side="right")
    return np.asarray(value, dtype=np.int64)[k] * 10**9


@dataclass
class _Clock:
    local: np.ndarray  # int64 local wall-clock ns since the epoch
    tod: np.ndarray  # ns since local midnight
    ib: np.ndarray  # bool: the bar opens inside the initial balance window
    period: np.ndarray  # int64 TPO period number


def _clock(ts: np.ndarray, rules: _Rules) -> _Clock:
    local = ts + _utc_offset_ns(ts, rules.tz)
    tod = np.mod(local, _NS_PER_DAY)
    ib = np.mod(tod - rules.rth_start_ns, _NS_PER_DAY) < rules.ib_minutes * _NS_PER_MINUTE
    period = np.floor_divide(local - rules.rth_start_ns, rules.tpo_minutes * _NS_PER_MINUTE)
    return _Clock(local=local, tod=tod, ib=ib, period=period)


def _tpo(ctx: _Context, clock: _Clock) -> Tuple[np.ndarray, np.ndarray]:
    """(TPO POC price, single-print count) per session. A TPO period covers every row from the
    row of its lowest low to the row of its highest high; a row's TPO count is the number of
    periods covering it; the TPO POC follows ``poc_tie``; single prints are rows counted once."""
    rules, d = ctx.rules, ctx.data
    S = ctx.S
    sid = np.repeat(np.arange(S, dtype=np.int64), ctx.counts)
    per = clock.period
    if per.size > 1 and not np.all((np.diff(per) >= 0) | (np.diff(sid) != 0)):
        order = np.lexsort((per, sid))
    else:
        order = None
    lo_row = _price_rows(d.low, rules)
    hi_row = _price_rows(d.high, rules)
    if order is not None:
        sid, per, lo_row, hi_row = sid[order], per[order], lo_row[order], hi_row[order]
    start = np.flatnonzero(np.r_[True, (sid[1:] != sid[:-1]) | (per[1:] != per[:-1])]) \
        if sid.size else np.zeros(0, dtype=np.int64)
    g_lo = np.minimum.reduceat(lo_row, start) if start.size else np.zeros(0, dtype=np.int64)
    g_hi = np.maximum.reduceat(hi_row, start) if start.size else np.zeros(0, dtype=np.int64)
    g_offs = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(np.bincount(sid[start], minlength=S), out=g_offs[1:])
    rs = rules.row_size
    tprof = from_bars(g_hi.astype(np.float64) * rs, g_lo.astype(np.float64) * rs,
                      g_lo.astype(np.float64) * rs, (g_hi - g_lo + 1).astype(np.int64),
                      offsets=g_offs, tick_size=rs, ticks_per_row=1, distribute="uniform",
                      poc_tie=rules.poc_tie, threads=ctx.threads)
    singles = _segment_count(np.asarray(tprof.volume) == 1.0, np.asarray(tprof.offsets))
    return np.asarray(tprof.poc, dtype=np.float64), singles.astype(np.float64)


# =============================================================================== column assembly


class _Columns:
    """Ordered float64 columns, written into one float32 [rows, F] matrix.

    With ``names`` (all the columns, in order) the matrix is allocated at once and each column
    is written into it when set (no second copy of the columns: peak memory); without, the
    columns are kept (as float32) and copied into the matrix at the end."""

    def __init__(self, rows: int, names: Optional[Sequence[str]] = None) -> None:
        self.rows = rows
        self.cols: Dict[str, np.ndarray] = {}
        self.names = None if names is None else tuple(names)
        self.out = None if names is None else np.empty((rows, len(names)), dtype=np.float32)
        self.n_set = 0

    def __setitem__(self, name: str, values: Any) -> None:
        arr = np.asarray(values, dtype=np.float64)
        if arr.shape != (self.rows,):
            raise AssertionError(f"column {name} has shape {arr.shape}, expected ({self.rows},)")
        if self.names is not None:
            j = self.n_set
            if j >= len(self.names) or self.names[j] != name:
                raise AssertionError(f"column {name} set out of the expected order {self.names}")
            self.out[:, j] = arr  # type: ignore[index]
            self.n_set += 1
            return
        if name in self.cols:
            raise AssertionError(f"column {name} set twice")
        self.cols[name] = arr.astype(np.float32)  # what the matrix holds: half the memory

    def matrix(self) -> Tuple[np.ndarray, Tuple[str, ...]]:
        if self.names is not None:
            if self.n_set != len(self.names):
                raise AssertionError(f"{len(self.names) - self.n_set} columns not set")
            return self.out, self.names  # type: ignore[return-value]
        out = np.empty((self.rows, len(self.cols)), dtype=np.float32)
        arrays = list(self.cols.values())
        block = 16384  # rows written at once: the block stays in cache across the columns
        for a in range(0, self.rows, block):
            dst = out[a:a + block]
            for j, arr in enumerate(arrays):
                dst[:, j] = arr[a:a + block]
        return out, tuple(self.cols)


def _session_column_names(rules: _Rules, clock: Optional[_Clock]) -> Tuple[str, ...]:
    """The columns of ``_session_columns``, in its order."""
    names = list(legacy_columns(rules.lookbacks))
    names += [f"prev_{k}_dist" for k in ("poc", "vah", "val")]
    names += [f"composite_{k}" for k in ("poc", "vah", "val")]
    names += ["naked_poc_count", "naked_poc_above_dist", "naked_poc_below_dist", "hvn_count",
              "lvn_count", "hvn_above_dist", "hvn_below_dist", "lvn_above_dist", "lvn_below_dist"]
    if clock is not None:
        names += ["ib_high", "ib_low", "ib_range", "tpo_poc", "single_prints"]
    names += [f"shape_{label}" for label in SHAPES]
    return tuple(names + ["close_va_position"])


def _scatter(values: np.ndarray, where: np.ndarray, size: int) -> np.ndarray:
    out = np.full(size, np.nan)
    out[where] = values
    return out


def _session_columns(ctx: _Context, nodes: _Nodes,
                     comp: Tuple[np.ndarray, np.ndarray, np.ndarray],
                     naked: Dict[str, np.ndarray], clock: Optional[_Clock]) -> _Columns:
    rules, prof = ctx.rules, ctx.prof
    S, ne = ctx.S, ctx.ne
    tick = rules.tick_size
    cols = _Columns(S, _session_column_names(rules, clock))
    poc, vah, val = (np.asarray(getattr(prof, k), dtype=np.float64) for k in ("poc", "vah", "val"))
    empty = ctx.counts == 0

    def nan_empty(x: np.ndarray) -> np.ndarray:
        x = np.array(x, dtype=np.float64)
        x[empty] = np.nan
        return x

    # ---- the 14 legacy session features
    price_range = ctx.s_high - ctx.s_low
    range_pct = _ratio(price_range, ctx.s_open) * 100.0
    close_change_pct = _ratio(ctx.s_close - ctx.s_open, ctx.s_open) * 100.0
    width = vah - val
    base = {
        "vpoc": poc, "total_volume": ctx.total_volume, "value_area_low": val,
        "value_area_high": vah, "value_area_width": width, "price_range": price_range,
        "range_pct": range_pct, "close_change_pct": close_change_pct,
        "session_high": ctx.s_high, "session_low": ctx.s_low, "session_open": ctx.s_open,
        "session_close": ctx.s_close, "vwap": ctx.vwap,
        "close_to_vwap_pct": _ratio(ctx.s_close - ctx.vwap, ctx.vwap) * 100.0,
    }
    for name in LEGACY_SESSION_COLUMNS:
        cols[name] = nan_empty(base[name])
    # ---- the legacy lookback features, over the sequence of non-empty sessions
    c_close, c_cc, c_vol = ctx.s_close[ne], close_change_pct[ne], ctx.total_volume[ne]
    c_poc, c_range, c_width = poc[ne], range_pct[ne], width[ne]
    del base, price_range, range_pct, close_change_pct, width  # peak memory
    for p in rules.lookbacks:
        ma = _rolling_mean(c_width, p)
        sd = _rolling_std(c_poc, p)
        feats = {  # computed one at a time (peak memory)
            "price_mom_{n}d": lambda: (_ratio(c_close, _lag(c_close, p)) - 1.0) * 100.0,
            "volatility_{n}d": lambda: _rolling_std(c_cc, p),
            "volume_trend_{n}d": lambda: (_ratio(c_vol, _lag(c_vol, p)) - 1.0) * 100.0,
            "vpoc_change_{n}d": lambda: c_poc - _lag(c_poc, p),
            "vpoc_pct_change_{n}d": lambda: (_ratio(c_poc, _lag(c_poc, p)) - 1.0) * 100.0,
            "range_change_{n}d": lambda: (_ratio(c_range, _lag(c_range, p)) - 1.0) * 100.0,
            "va_width_{n}d_ma": lambda: ma,
            "va_width_change_{n}d": lambda: _ratio(c_width, ma),
            "vpoc_std_{n}d": lambda: sd,
            "vpoc_zscore_{n}d": lambda: _ratio(c_poc - _rolling_mean(c_poc, p), sd),
        }
        for template in LOOKBACK_FEATURES:
            cols[template.format(n=p)] = _scatter(feats[template](), ne, S)
        del ma, sd, feats
    del c_close, c_cc, c_vol, c_range, c_width
    # ---- previous session, composite, naked POCs
    prev = ctx.prev
    has_prev = prev >= 0
    for name, level in (("poc", poc), ("vah", vah), ("val", val)):
        d = np.full(S, np.nan)
        d[has_prev] = (ctx.s_close[has_prev] - level[prev[has_prev]]) / tick
        cols[f"prev_{name}_dist"] = nan_empty(d)
    for name, level in zip(("poc", "vah", "val"), comp):
        cols[f"composite_{name}"] = _scatter(level, ne, S)
    cols["naked_poc_count"] = _scatter(naked["count"], ne, S)
    cols["naked_poc_above_dist"] = _scatter(naked["above"] / tick, ne, S)
    cols["naked_poc_below_dist"] = _scatter(naked["below"] / tick, ne, S)
    # ---- HVN / LVN
    close_q = np.where(empty, np.nan, ctx.s_close)
    q_offs = np.r_[0, np.cumsum(~empty)].astype(np.int64)
    for kind, flag in (("hvn", nodes.hvn), ("lvn", nodes.lvn)):
        cols[f"{kind}_count"] = nan_empty(_segment_count(flag, nodes.hoff))
    for kind, flag in (("hvn", nodes.hvn), ("lvn", nodes.lvn)):
        l_offs, levels = _node_levels(nodes, flag)
        up, dn = _nearest_grouped(l_offs, levels, q_offs, close_q[~empty],
                                  np.where(empty, -1, np.arange(S)))
        cols[f"{kind}_above_dist"] = _scatter(up / tick, ~empty, S)
        cols[f"{kind}_below_dist"] = _scatter(dn / tick, ~empty, S)
    # ---- initial balance and TPO (only with timestamps)
    if clock is not None:
        d = ctx.data
        ib_high = _segment_reduce(np.maximum, np.where(clock.ib, d.high, -np.inf), d.offsets, np.nan)
        ib_low = _segment_reduce(np.minimum, np.where(clock.ib, d.low, np.inf), d.offsets, np.nan)
        ib_high[~np.isfinite(ib_high)] = np.nan
        ib_low[~np.isfinite(ib_low)] = np.nan
        tpo_poc, singles = _tpo(ctx, clock)
        cols["ib_high"] = ib_high
        cols["ib_low"] = ib_low
        cols["ib_range"] = ib_high - ib_low
        cols["tpo_poc"] = tpo_poc
        cols["single_prints"] = nan_empty(singles)
    # ---- shape and close in value area
    code = _shapes(ctx, nodes)
    for i, label in enumerate(SHAPES):
        cols[f"shape_{label}"] = np.where(code < 0, np.nan, (code == i).astype(np.float64))
    cols["close_va_position"] = nan_empty(_ratio(ctx.s_close - val, vah - val))
    return cols


def _bar_columns(ctx: _Context, nodes: _Nodes, comp: Tuple[np.ndarray, np.ndarray, np.ndarray],
                 naked: Dict[str, np.ndarray], clock: Optional[_Clock]) -> _Columns:
    rules, prof, d = ctx.rules, ctx.prof, ctx.data
    tick = rules.tick_size
    n, S = d.close.shape[0], ctx.S
    offs = d.offsets
    sid = np.repeat(np.arange(S, dtype=np.int64), ctx.counts)
    start = np.repeat(offs[:-1], ctx.counts)
    close = d.close
    cols = _Columns(n)
    cols["bar_index"] = np.arange(n, dtype=np.int64) - start
    cum_vol = _segment_accumulate(np.add, d.volume, offs)
    cum_pv = _segment_accumulate(np.add, close * d.volume, offs)
    prev = ctx.prev[sid] if n else np.zeros(0, dtype=np.int64)
    has_prev = prev >= 0
    prev_total = np.full(n, np.nan)
    prev_total[has_prev] = ctx.total_volume[prev[has_prev]]
    cols["cum_volume"] = cum_vol
    cols["cum_volume_vs_prev"] = _ratio(cum_vol, prev_total)
    s_open = ctx.s_open[sid] if n else np.zeros(0)
    cols["close_change_pct"] = _ratio(close - s_open, s_open) * 100.0
    vwap = np.where(cum_vol > 0, _ratio(cum_pv, cum_vol), close)
    cols["close_to_vwap_pct"] = _ratio(close - vwap, vwap) * 100.0
    dev = {k: np.asarray(getattr(prof, f"dev_{k}"), dtype=np.float64) for k in ("poc", "vah", "val")}
    for k in ("poc", "vah", "val"):
        cols[f"dev_{k}_dist"] = (close - dev[k]) / tick
    cols["dev_va_position"] = _ratio(close - dev["val"], dev["vah"] - dev["val"])
    cols["dev_high_dist"] = (_segment_accumulate(np.maximum, d.high, offs) - close) / tick
    cols["dev_low_dist"] = (close - _segment_accumulate(np.minimum, d.low, offs)) / tick
    # ---- levels of earlier sessions
    for k in ("poc", "vah", "val"):
        level = np.full(n, np.nan)
        level[has_prev] = np.asarray(getattr(prof, k))[prev[has_prev]]
        cols[f"prev_{k}_dist"] = (close - level) / tick
    kb = ctx.k_of[sid] - 1 if n else np.zeros(0, dtype=np.int64)  # composite ending before
    for k, arr in zip(("poc", "vah", "val"), comp):
        level = np.full(n, np.nan)
        level[kb >= 0] = arr[kb[kb >= 0]]
        cols[f"composite_{k}_dist"] = (close - level) / tick
    cols["naked_poc_count"] = naked["bar_count"]
    cols["naked_poc_above_dist"] = naked["bar_above"] / tick
    cols["naked_poc_below_dist"] = naked["bar_below"] / tick
    for kind, flag in (("hvn", nodes.hvn), ("lvn", nodes.lvn)):
        l_offs, levels = _node_levels(nodes, flag)
        up, dn = _nearest_grouped(l_offs, levels, offs, close, ctx.prev)
        cols[f"prev_{kind}_above_dist"] = up / tick
        cols[f"prev_{kind}_below_dist"] = dn / tick
    # ---- clock
    if clock is not None:
        cols["minute_of_day"] = clock.tod / _NS_PER_MINUTE
        first_ts = d.ts[start] if n else np.zeros(0, dtype=np.int64)  # type: ignore[index]
        cols["minutes_elapsed"] = (d.ts - first_ts) / _NS_PER_MINUTE  # type: ignore[operator]
        ib_hi = _segment_accumulate(np.maximum, np.where(clock.ib, d.high, -np.inf), offs)
        ib_lo = _segment_accumulate(np.minimum, np.where(clock.ib, d.low, np.inf), offs)
        ib_hi[~np.isfinite(ib_hi)] = np.nan
        ib_lo[~np.isfinite(ib_lo)] = np.nan
        cols["ib_high_dist"] = (ib_hi - close) / tick
        cols["ib_low_dist"] = (close - ib_lo) / tick
    return cols


# =============================================================================== public API


_DOC_COMMON = """
    high, low, close, volume : 1-D array-likes [N] (any numeric dtype; torch/cupy GPU arrays are
        copied to the host), or a ``vpoc.synth.SynthBars`` / pandas DataFrame (columns high, low,
        close, volume, optional open, timestamp, session_id) as the first argument alone.
    open : [N], optional. Bar opens: the session open (NaN without it) and ``distribute="legacy"``.
    timestamp : [N], optional. Bar open times: integer epoch times (UTC; ns unless ``time_unit``),
        datetime64 (naive = UTC) or pandas datetimes. Adds the time-based columns.
    time_unit : unit of integer timestamps, "s", "ms", "us" or "ns" (None: ns). Integers that are
        1990..2100 times only in another unit raise ValueError naming it.
    offsets, session_ids, tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie,
    device, threads : as in ``vpoc.from_bars`` (one engine call computes every profile).
    composite_sessions : sessions in a composite profile (default 5).
    naked_max_age : only POCs of the last this many sessions can be naked (None: all).
    node_smoothing : odd window, in rows, of the moving sum used for HVN/LVN detection (3).
    node_order : an HVN/LVN is the extreme of ``node_order`` rows on each side (3). Both are at
        most ``MAX_NODE_ROWS`` (1_000_000, the default max_rows; ValueError above); the cost of
        either does not grow with its value.
    hvn_threshold, lvn_threshold : an HVN's smoothed volume is >= hvn_threshold x the session's
        largest; an LVN's <= lvn_threshold x it (0.5 and 0.5).
    tz, rth_start, ib_minutes : the exchange time zone ("America/Chicago"), the regular session's
        open in it ("08:30") and the initial balance length in minutes (60).
"""

_DOC_SESSION = """
    Parameters
    ----------""" + _DOC_COMMON + """\
    lookbacks : the legacy lookback windows, in sessions (default 5, 10, 20, 50).
    shape_edge : POC position (0 = low row, 1 = high row) <= shape_edge is "b", >= 1 - shape_edge
        is "P", else "D" (0.3).
    shape_b_peak, shape_b_valley : "B" when the second-largest HVN is >= shape_b_peak x the
        largest and the least smoothed volume between them is <= shape_b_valley x the second
        (0.6 and 0.5).
    tpo_minutes : the TPO period in minutes, aligned to rth_start (30).
"""

_DOC_BAR = """
    Parameters
    ----------""" + _DOC_COMMON


def session_features(high: Any, low: Any = None, close: Any = None, volume: Any = None, *,
                     open: Any = None, timestamp: Any = None, offsets: Any = None,
                     session_ids: Any = None, tick_size: float, ticks_per_row: int = 1,
                     distribute: str = "uniform", value_area: float = 0.70,
                     va_method: str = "cbot", poc_tie: str = "center",
                     lookbacks: Sequence[int] = (5, 10, 20, 50), composite_sessions: int = 5,
                     naked_max_age: Optional[int] = None, node_smoothing: int = 3,
                     node_order: int = 3, hvn_threshold: float = 0.5, lvn_threshold: float = 0.5,
                     shape_edge: float = 0.3, shape_b_peak: float = 0.6,
                     shape_b_valley: float = 0.5, tz: Union[str, _dt.tzinfo] = "America/Chicago",
                     rth_start: Union[str, _dt.time] = "08:30", ib_minutes: int = 60,
                     tpo_minutes: int = 30, device: Any = "cpu",
                     threads: Optional[int] = None, time_unit: Optional[str] = None) -> FeatureTable:
    """One row per session [S, F] (float32): the 54 legacy features (14 session + 10 per
    lookback), previous-session and composite levels, naked POCs, HVN/LVN, initial balance and
    TPO (with ``timestamp``), profile shape and the close's place in the value area.

    Row s uses only sessions <= s; an empty session's row is all NaN. Every column is defined in
    docs/features.md.
    """
    rules = _rules(tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie, lookbacks,
                   composite_sessions, naked_max_age, node_smoothing, node_order, hvn_threshold,
                   lvn_threshold, shape_edge, shape_b_peak, shape_b_valley, tz, rth_start,
                   ib_minutes, tpo_minutes)
    data = _data(high, low, close, volume, open, timestamp, offsets, session_ids, time_unit)
    prof, where = _profiles(data, rules, device, threads, developing=False)
    rules = _engine_rules(rules, prof)
    ctx = _context(data, rules, prof, threads)
    nodes = _nodes(ctx)
    clock = None if data.ts is None else _clock(data.ts, rules)
    cols = _session_columns(ctx, nodes, _composites(ctx), _naked(ctx, None), clock)
    del ctx, nodes, prof  # the profiles are not needed for the matrix (peak memory)
    values, names = cols.matrix()
    return FeatureTable(values, names, session_labels=data.labels,
                        offsets=np.arange(values.shape[0] + 1, dtype=np.int64), kind="session",
                        device=where)


def bar_features(high: Any, low: Any = None, close: Any = None, volume: Any = None, *,
                 open: Any = None, timestamp: Any = None, offsets: Any = None,
                 session_ids: Any = None, tick_size: float, ticks_per_row: int = 1,
                 distribute: str = "uniform", value_area: float = 0.70, va_method: str = "cbot",
                 poc_tie: str = "center", composite_sessions: int = 5,
                 naked_max_age: Optional[int] = None, node_smoothing: int = 3,
                 node_order: int = 3, hvn_threshold: float = 0.5, lvn_threshold: float = 0.5,
                 tz: Union[str, _dt.tzinfo] = "America/Chicago",
                 rth_start: Union[str, _dt.time] = "08:30", ib_minutes: int = 60,
                 device: Any = "cpu", threads: Optional[int] = None,
                 time_unit: Optional[str] = None) -> FeatureTable:
    """One row per bar [N, F] (float32): the developing POC/VAH/VAL (``from_bars(...,
    developing=True)``), developing VWAP, range and volume, and levels of earlier sessions
    (previous session, composite, naked POCs, HVN/LVN), as distances from the bar's close.

    Row i uses only bars <= i of its session and the sessions before it (no lookahead). Every
    column is defined in docs/features.md.
    """
    rules = _rules(tick_size, ticks_per_row, distribute, value_area, va_method, poc_tie, (),
                   composite_sessions, naked_max_age, node_smoothing, node_order, hvn_threshold,
                   lvn_threshold, 0.3, 0.6, 0.5, tz, rth_start, ib_minutes, 30)
    data = _data(high, low, close, volume, open, timestamp, offsets, session_ids, time_unit)
    prof, where = _profiles(data, rules, device, threads, developing=True)
    rules = _engine_rules(rules, prof)
    ctx = _context(data, rules, prof, threads)
    nodes = _nodes(ctx)
    clock = None if data.ts is None else _clock(data.ts, rules)
    cols = _bar_columns(ctx, nodes, _composites(ctx), _naked(ctx, data.close), clock)
    del ctx, nodes, prof  # the profiles are not needed for the matrix (peak memory)
    values, names = cols.matrix()
    return FeatureTable(values, names, session_labels=data.labels, offsets=data.offsets,
                        kind="bar", device=where)


def _engine_rules(rules: _Rules, prof: Profiles) -> _Rules:
    """The rules with the engine-validated ladder (tick_size/ticks_per_row as floats/ints)."""
    return _Rules(**{**rules.__dict__, "tick_size": float(prof.tick_size),
                     "ticks_per_row": int(prof.ticks_per_row)})


session_features.__doc__ = (session_features.__doc__ or "") + _DOC_SESSION
bar_features.__doc__ = (bar_features.__doc__ or "") + _DOC_BAR
