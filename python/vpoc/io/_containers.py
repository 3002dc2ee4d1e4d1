"""The Bars and Trades containers returned by the readers of vpoc.io.

Contract: arrays are converted on construction (timestamps to int64 ns UTC, prices to float64,
volumes to int64 or float64, a trade's aggressor side to int8 +1/-1/0) and their lengths must agree;
values are validated by the readers. ``symbol`` / ``tick_size`` are the source's own (DBN
instrument definitions), or None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from .._arrays import as_array, unmasked
from .._optional import require
from .._side import aggressor_side
from .._time import check_label, datetime64_ns, epoch_ns
from ._options import BAR_FIELDS, TRADE_FIELDS, Float64Array, Int64Array, _iso

__all__ = ["Bars", "Trades"]


# --------------------------------------------------------------------------- containers


def _as_ns(x: Any, name: str) -> Int64Array:
    arr = np.asarray(unmasked(x, name))
    if arr.dtype.kind == "M":
        arr = datetime64_ns(arr, name)
    arr = as_array(arr, name)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be int64 nanoseconds since the epoch (UTC) or datetime64, "
                        f"got dtype {arr.dtype}")
    return epoch_ns(arr, name, hint=f"give datetime64 values, e.g. "
                    f"np.asarray({name}, dtype='datetime64[{{unit}}]')")


def _as_f64(x: Any, name: str) -> Float64Array:
    return np.ascontiguousarray(as_array(x, name), dtype=np.float64)


def _as_vol(x: Any, name: str) -> npt.NDArray[Any]:
    arr = as_array(x, name)
    if arr.dtype.kind in "iu":
        if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            raise ValueError(f"{name} values must fit in int64")
        return np.ascontiguousarray(arr, dtype=np.int64)
    return np.ascontiguousarray(arr, dtype=np.float64)


def _same_length(obj: Any, fields: Sequence[str]) -> None:
    n = len(getattr(obj, fields[0]))
    for f in fields[1:]:
        if len(getattr(obj, f)) != n:
            raise ValueError(f"{f} has length {len(getattr(obj, f))} but {fields[0]} has {n}")


def _frame(ts: Int64Array, cols: Dict[str, np.ndarray], index: bool) -> Any:
    pd = require("pandas", "to_pandas()")

    t = pd.DatetimeIndex(ts.view("datetime64[ns]")).tz_localize("UTC")
    if index:
        return pd.DataFrame(cols, index=pd.Index(t, name="timestamp"))
    return pd.DataFrame({"timestamp": t, **cols})


def _span(ts: Int64Array) -> str:
    return f"{_iso(ts[0])} .. {_iso(ts[-1])}, " if ts.shape[0] else ""


def _check_instrument(obj: Any) -> None:
    """``symbol`` (a string or None) and ``tick_size`` (a positive finite number or None)."""
    if obj.symbol is not None and not isinstance(obj.symbol, str):
        raise TypeError(f"symbol must be a string or None, got {type(obj.symbol).__name__}")
    tick = obj.tick_size
    if tick is None:
        return
    if isinstance(tick, bool) or not isinstance(tick, (int, float, np.number)):
        raise TypeError(f"tick_size must be a number or None, got {type(tick).__name__}")
    if not (np.isfinite(tick) and tick > 0):
        raise ValueError(f"tick_size must be a positive number, got {tick!r}")
    object.__setattr__(obj, "tick_size", float(tick))


def _instrument_repr(obj: Any) -> str:
    out = "" if obj.symbol is None else f", symbol={obj.symbol!r}"
    return out + ("" if obj.tick_size is None else f", tick_size={obj.tick_size!r}")


@dataclass(frozen=True, repr=False, eq=False)
class Bars:
    """OHLCV bars with int64 ns UTC timestamps, as read by :func:`read_bars`.

    Attributes: ``timestamp`` (int64, ns since the epoch, UTC), ``open``, ``high``, ``low``,
    ``close`` (float64; ``open`` None for bars without open prices, read with
    ``columns={"open": None}``), ``volume`` (int64 when the source holds integers, else float64),
    ``source`` (the file(s) read, or ``"<DataFrame>"``), ``label`` ("open" or "close": how
    the *source* stamped its bars) and ``interval`` (the bar interval in seconds, or None when
    neither given nor needed). ``timestamp`` is always the bar's OPEN time: read_bars(...,
    label="close") has already subtracted the interval. ``symbol`` and ``tick_size`` (None unless
    the source says: a DBN file's instrument definitions give the contract's raw symbol and its
    ``min_price_increment``; pass ``tick_size=bars.tick_size`` to the profiles). ``buy_volume`` /
    ``sell_volume``: each bar's buy- and sell-aggressor volume (both or neither; int64 or float64 as
    ``volume``), read from a source's buy_volume / sell_volume (or AskVolume / BidVolume) columns,
    or None; ``vpoc.from_bars(bars)`` and the feature tables use them as their ``buy_volume=`` /
    ``sell_volume=`` (delta, delta POC, imbalances). Arrays are converted on construction (lengths
    must agree); values are validated by the readers, not here.
    """

    timestamp: Int64Array
    open: Optional[Float64Array]
    high: Float64Array
    low: Float64Array
    close: Float64Array
    volume: npt.NDArray[Any]
    source: str = "<arrays>"
    label: str = "open"
    interval: Optional[float] = None
    symbol: Optional[str] = None
    tick_size: Optional[float] = None
    buy_volume: Optional[npt.NDArray[Any]] = None
    sell_volume: Optional[npt.NDArray[Any]] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "timestamp", _as_ns(self.timestamp, "timestamp"))
        if (self.buy_volume is None) != (self.sell_volume is None):
            have, miss = ("buy_volume", "sell_volume") if self.sell_volume is None else ("sell_volume",
                                                                                         "buy_volume")
            raise TypeError(f"Bars: {have} given without {miss}; give both (the aggressor-side volumes "
                            "of each bar) or neither")
        for f in ("buy_volume", "sell_volume"):
            if getattr(self, f) is not None:
                object.__setattr__(self, f, _as_vol(getattr(self, f), f))
        for f in ("open", "high", "low", "close"):
            if f != "open" or self.open is not None:
                object.__setattr__(self, f, _as_f64(getattr(self, f), f))
        object.__setattr__(self, "volume", _as_vol(self.volume, "volume"))
        if not isinstance(self.source, str):
            raise TypeError(f"source must be a string, got {type(self.source).__name__}")
        check_label(self.label)
        if self.interval is not None:
            if isinstance(self.interval, bool) or not isinstance(self.interval, (int, float,
                                                                                  np.number)):
                raise TypeError(f"interval must be seconds (a number) or None, got "
                                f"{type(self.interval).__name__}")
            if not (np.isfinite(self.interval) and self.interval > 0):
                raise ValueError(f"interval must be a positive number of seconds, got "
                                 f"{self.interval!r}")
            object.__setattr__(self, "interval", float(self.interval))
        _check_instrument(self)
        _same_length(self, self._fields)

    @property
    def _fields(self) -> Tuple[str, ...]:
        """The fields these bars hold: timestamp, open, high, low, close, volume (open left out when
        None: bars without open prices, read with ``columns={"open": None}``), then buy_volume and
        sell_volume when given."""
        out = BAR_FIELDS if self.open is not None else tuple(f for f in BAR_FIELDS if f != "open")
        return out if self.buy_volume is None else out + ("buy_volume", "sell_volume")

    def __len__(self) -> int:
        return int(self.timestamp.shape[0])

    def __repr__(self) -> str:
        extra = "" if self.label == "open" else f", label={self.label!r}"
        if self.open is None:
            extra += ", no open"
        if self.interval is not None:
            extra += f", interval={self.interval:g}s"
        if self.buy_volume is not None:
            extra += ", with buy/sell volume"
        extra += _instrument_repr(self)
        return f"Bars({len(self)} rows, {_span(self.timestamp)}source={self.source!r}{extra})"

    @property
    def ts(self) -> Int64Array:
        """Alias of ``timestamp``."""
        return self.timestamp

    def to_pandas(self, index: bool = False) -> Any:
        """A DataFrame with ``timestamp`` (datetime64[ns, UTC]; the index when ``index``),
        ``open`` (left out when None), ``high``, ``low``, ``close``, ``volume``, and ``buy_volume``
        / ``sell_volume`` when the bars have them."""
        return _frame(self.timestamp, {f: getattr(self, f) for f in self._fields[1:]}, index)


@dataclass(frozen=True, repr=False, eq=False)
class Trades:
    """Trades with int64 ns UTC timestamps, as read by :func:`read_trades`.

    Attributes: ``timestamp`` (int64, ns since the epoch, UTC), ``price`` (float64),
    ``volume`` (int64 when the source holds integers, else float64), ``source``; ``side``: the
    aggressor side of each trade as int8, +1 buyer-initiated, -1 seller-initiated, 0 unknown (given
    as those integers or Databento's letters 'B' / 'A' / 'N', see vpoc._side), or None when the
    source has no side (``vpoc.from_trades(trades)`` uses it as its ``side=`` by default: buy / sell
    volume per row, delta, imbalances); ``symbol`` / ``tick_size`` as in :class:`Bars`.
    """

    timestamp: Int64Array
    price: Float64Array
    volume: npt.NDArray[Any]
    source: str = "<arrays>"
    side: Optional[npt.NDArray[np.int8]] = None
    symbol: Optional[str] = None
    tick_size: Optional[float] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "timestamp", _as_ns(self.timestamp, "timestamp"))
        object.__setattr__(self, "price", _as_f64(self.price, "price"))
        object.__setattr__(self, "volume", _as_vol(self.volume, "volume"))
        if not isinstance(self.source, str):
            raise TypeError(f"source must be a string, got {type(self.source).__name__}")
        if self.side is not None:
            object.__setattr__(self, "side", aggressor_side(self.side, "side"))
        _check_instrument(self)
        _same_length(self, TRADE_FIELDS if self.side is None else TRADE_FIELDS + ("side",))

    def __len__(self) -> int:
        return int(self.timestamp.shape[0])

    def __repr__(self) -> str:
        extra = "" if self.side is None else ", with side"
        return (f"Trades({len(self)} rows, {_span(self.timestamp)}source={self.source!r}{extra}"
                f"{_instrument_repr(self)})")

    @property
    def ts(self) -> Int64Array:
        """Alias of ``timestamp``."""
        return self.timestamp

    def to_pandas(self, index: bool = False) -> Any:
        """A DataFrame with ``timestamp`` (datetime64[ns, UTC]; the index when ``index``),
        ``price``, ``volume``, and ``side`` (int8) when the trades have one."""
        cols = {"price": self.price, "volume": self.volume}
        if self.side is not None:
            cols["side"] = self.side
        return _frame(self.timestamp, cols, index)
