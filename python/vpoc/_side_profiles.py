"""Aggressor-side profiles: per-row buy / sell volume, delta, delta POC, footprint imbalances, dev_delta.

Contract: the buy rows are the engine's profile of the same prices with volume * (side == +1), the sell
rows with side == -1, so they align with ``volume`` row for row and CPU / GPU agree bit for bit.

Every rule keeps its one home: the ladder and the distribution are the engine's (its one sided pass; GPU
bars and library columns: three engine passes over the input: all, buy, sell), the side fields of the rows
(delta, delta POC, imbalances, stacked runs) the C++ side epilogue's (``_core.side_levels``: cpu/side.cpp on
host rows, gpu/side.cu on device rows), the side codes vpoc._side's. Masking and dev_delta's fallback run in
the inputs' own library (numpy on the host; torch or cupy on their GPU). docs/contract.md, "Aggressor side";
docs/features.md, "Footprint imbalances".
"""

from __future__ import annotations

import functools
from typing import Any, Dict, NamedTuple

import numpy as np

from . import _core
from ._arrays import as_index, as_volume, gpu_location
from ._errors import InputError, input_error, readdressed, row_of
from ._side import aggressor_side
from ._side_lib import _Lib, host_array
from ._validate import INT64_MAX, integer, real

__all__ = ["SIDE_ROW_FIELDS", "SIDE_SESSION_FIELDS", "SIDE_FIELDS", "SideRules", "side_rules", "trade_side", "trade_engine",
           "bar_side_volumes", "add_trade_sides", "add_bar_sides", "host_array",
           "DEFAULT_IMBALANCE_RATIO", "DEFAULT_STACKED_IMBALANCE_MIN"]

#: Ragged per-row fields, aligned with ``Profiles.volume``.
SIDE_ROW_FIELDS = ("buy_volume", "sell_volume", "imbalance_buy", "imbalance_sell")
#: Per-session fields (length ``n_sessions``); ``buy_total`` / ``sell_total``: the exact buy / sell totals,
#: each rounded once to float64 (``delta`` is their difference).
SIDE_SESSION_FIELDS = ("delta", "buy_total", "sell_total", "delta_poc", "delta_poc_row", "stacked_imbalance_buy",
                       "stacked_imbalance_sell")
#: Every side field; ``dev_delta`` is one per input row (``developing=True`` only).
SIDE_FIELDS = SIDE_ROW_FIELDS + SIDE_SESSION_FIELDS + ("dev_delta",)

DEFAULT_IMBALANCE_RATIO = 3.0
DEFAULT_STACKED_IMBALANCE_MIN = 3


class SideRules(NamedTuple):
    """The imbalance parameters of one call; ``given``: the caller passed one of them."""

    imbalance_ratio: float
    stacked_min: int
    given: bool


def side_rules(imbalance_ratio: Any, stacked_imbalance_min: Any) -> SideRules:
    """``imbalance_ratio`` (a real >= 1, default 3.0) and ``stacked_imbalance_min`` (an integer >= 1,
    default 3), checked before any work."""
    given = imbalance_ratio is not None or stacked_imbalance_min is not None
    ratio = DEFAULT_IMBALANCE_RATIO if imbalance_ratio is None else real(imbalance_ratio, "imbalance_ratio")
    if not (np.isfinite(ratio) and ratio >= 1.0):
        raise ValueError(f"imbalance_ratio must be a finite number >= 1, got {imbalance_ratio!r}")
    k = (DEFAULT_STACKED_IMBALANCE_MIN if stacked_imbalance_min is None
         else integer(stacked_imbalance_min, "stacked_imbalance_min", 1, INT64_MAX))
    return SideRules(float(ratio), int(k), given)


# --------------------------------------------------------------------------- inputs


def _on_device(x: Any, lib: _Lib, name: str, n: int) -> Any:
    """A per-row column on the volume's side of the call: host values checked by ``as_volume``
    (numeric, 1-D) and moved to ``lib``; GPU values checked for a numeric dtype; length ``n``."""
    if gpu_location(x) is not None and lib.name == "numpy":
        x = host_array(x)
    if gpu_location(x) is None:
        x = as_volume(x, name)
        out = x if lib.name == "numpy" else lib.put(x)
    else:
        out = lib.put(x.detach() if hasattr(x, "detach") else x)
        if len(out.shape) != 1:
            raise ValueError(f"{name} must be 1-D, got shape {tuple(out.shape)}")
        if lib.kind(out) not in "iuf":
            raise TypeError(f"{name} must be a numeric array (integer or float), got dtype {out.dtype}")
    if int(out.shape[0]) != n:
        raise ValueError(f"{name} has length {int(out.shape[0])} but there are {n} rows")
    return out


def rows_of(x: Any, name: str) -> int:
    """The length of 1-D input ``name``, also of an object that only has ``__cuda_array_interface__``;
    ValueError naming it for anything without a length (a scalar, None)."""
    try:
        return len(x)
    except TypeError:
        cai = getattr(x, "__cuda_array_interface__", None)
        shape = tuple(cai["shape"]) if cai is not None else ()
        if len(shape) != 1:
            raise ValueError(f"{name} must be a 1-D array, got {type(x).__name__}"
                             + (f" of shape {shape}" if cai is not None else "")) from None
        return int(shape[0])


def trade_side(side: Any, volume: Any, price: Any, rules: SideRules, check_all: bool = True) -> Any:
    """``side`` as int8 codes +1 / -1 / 0 where ``volume`` lives (host numpy, or the torch / cupy of
    a GPU volume), checked against the rows of ``price`` (ValueError naming ``side`` and the row; the
    rule is vpoc._side's); None stays None (TypeError when an imbalance parameter was given without
    a side). An int8 GPU side with ``check_all`` False (every row reaches the engine) is left to the
    GPU engine's range pass (no host round trip here; trade_engine words its error)."""
    if side is None:
        if rules.given:
            raise TypeError("imbalance_ratio= / stacked_imbalance_min= apply to aggressor-side profiles: "
                            "pass side= (trades) or buy_volume= and sell_volume= (bars)")
        return None
    n = rows_of(price, "price")
    lib = _Lib.of(volume)
    if gpu_location(side) is None or lib.name == "numpy":
        codes = _host_codes(host_array(side) if gpu_location(side) is not None else side)
        codes = codes if lib.name == "numpy" else lib.put(codes)
    else:  # a GPU side for a GPU volume: checked on the device, the first bad value worded by vpoc._side
        codes = lib.put(side.detach() if hasattr(side, "detach") else side)
        if len(codes.shape) != 1:
            raise ValueError(f"side must be 1-D, got shape {tuple(codes.shape)}")
        if lib.kind(codes) not in "iuf":
            aggressor_side(host_array(codes[:1]), "side")  # raises: boolean or not a number
        if lib.is_int8(codes) and not check_all:  # the engine's range pass checks them
            if int(codes.shape[0]) != n:
                raise ValueError(f"side has length {int(codes.shape[0])} but there are {n} trades")
            return lib.contiguous(codes)
        bad = (codes != 1) & (codes != -1) & (codes != 0)
        if bool(bad.any()):
            i = int(lib.flatnonzero(bad)[0])
            aggressor_side(host_array(codes[i:i + 1]), "side", where=lambda _: f"side[{i}]")
        codes = lib.contiguous(lib.cast(codes, "i1"))  # the engine reads it in place
    if int(codes.shape[0]) != n:
        raise ValueError(f"side has length {int(codes.shape[0])} but there are {n} trades")
    return codes


def _host_codes(side: Any) -> Any:
    """Host ``side`` as int8 codes: a contiguous int8 or 'S1' numpy column checked (and letters mapped) in
    one C++ pass (core/side.hpp), the first bad value worded by vpoc._side; anything else by vpoc._side."""
    if type(side) is np.ndarray and side.ndim == 1 and side.dtype.itemsize == 1 and side.dtype.kind in "iS":
        codes, bad = _core.check_side(side)
        if bad >= 0:  # raises, naming the row as vpoc._side does
            aggressor_side(side[bad:bad + 1], "side", where=lambda _: f"side[{bad}]")
        if codes is not None:
            return codes
    return aggressor_side(side, "side")


def bar_side_volumes(buy_volume: Any, sell_volume: Any, volume: Any, high: Any, rules: SideRules) -> Any:
    """(buy, sell) volume columns of bars where ``volume`` lives, or None when neither is given.
    Both or neither (TypeError); numeric, as long as ``high``; per bar ``buy >= 0``, ``sell >= 0`` and
    ``buy + sell <= volume`` (exactly for integer columns, within 1e-9 relative for float ones; NaN fails),
    else ValueError naming the bar. Checked on every input row, before ``session=`` keeps some of them,
    so the error names the row of the caller's input (the engine's later pass over the kept rows would
    name a kept row's position)."""
    if buy_volume is None and sell_volume is None:
        if rules.given:
            raise TypeError("imbalance_ratio= / stacked_imbalance_min= apply to aggressor-side profiles: "
                            "pass buy_volume= and sell_volume= (bars) or side= (trades)")
        return None
    if buy_volume is None or sell_volume is None:
        raise TypeError("give buy_volume= and sell_volume= together (the aggressor-side volume of each bar)")
    n = rows_of(high, "high")
    lib = _Lib.of(volume, buy_volume, sell_volume)
    v = _on_device(volume, lib, "volume", n)
    b = _on_device(buy_volume, lib, "buy_volume", n)
    s = _on_device(sell_volume, lib, "sell_volume", n)
    if all(lib.kind(x) in "iu" for x in (v, b, s)):
        bi, si = lib.cast(b, "i8"), lib.cast(s, "i8")
        ok = (bi >= 0) & (si >= 0) & (bi + si <= lib.cast(v, "i8"))
    else:
        bf, sf = lib.cast(b, "f8"), lib.cast(s, "f8")
        ok = (bf >= 0) & (sf >= 0) & (bf + sf <= lib.cast(v, "f8") * (1.0 + 1e-9))  # NaN: never ok
    if not bool(ok.all()):
        vf = lib.cast(v, "f8")
        if not bool(((vf >= 0) & (vf < float("inf"))).all()):  # NaN fails
            return b, s  # a bad volume: the engine's volume check, which every caller runs next, names it
        i = int(lib.flatnonzero(~ok)[0])
        bv, sv, vv = b[i].item(), s[i].item(), v[i].item()
        # InputErrors (ValueErrors) with the row: callers that took kept rows re-address them (_errors.input_rows)
        for name, x in (("buy_volume", bv), ("sell_volume", sv)):
            if not (x >= 0 and x != float("inf")):  # NaN, inf, negative: one message (trial 4 #5a)
                raise input_error(f"{name}[{i}] = {x!r}: the aggressor-side volumes of a bar must be finite and "
                                  ">= 0 (a part of its volume)", name, i)
        raise input_error(f"buy_volume[{i}] + sell_volume[{i}] = {bv!r} + {sv!r} is more than volume[{i}] = {vv!r}; "
                          "the aggressor-side volumes of a bar are part of its volume", "buy_volume", i)
    return b, s


# --------------------------------------------------------------------------- engine passes


class _Engine:
    """The engine calls of one from_* call, on its device, memory budget and stream: the side passes
    over the same prices, and the delta-POC pass over profile rows."""

    def __init__(self, device: str, memory_budget: Any, stream: Any, prices: Dict[str, Any], offsets: Any,
                 session_ids: Any, opts: Any) -> None:
        self.device, self.memory_budget, self.stream = device, memory_budget, stream
        self.prices, self.offsets, self.session_ids, self.opts = prices, offsets, session_ids, opts
        self.place: Any = None  # the passes' placement (a GPU call's device and stream), set by _run

    def options(self, **over: Any) -> Any:
        """The call's options for a side pass: no developing series, every price rounded to its tick
        (the first pass has reported the off-grid ones already: a second report would repeat it)."""
        o = self.opts
        kw = dict(tick_size=o.tick_size, ticks_per_row=o.ticks_per_row, value_area=o.value_area,
                  va_method=o.va_method, poc_tie=o.poc_tie, max_rows=o.max_rows, threads=o.threads,
                  developing=False, distribute=o.distribute, snap=True)
        kw.update(over)
        return _core.Options(**kw)

    def _run(self, arrays: Dict[str, Any], offsets: Any, session_ids: Any, options: Any) -> Any:
        from ._device import _placed  # the one place a call is put on its device

        _, ins, place = _placed(self.device, arrays, self.memory_budget, self.stream)
        self.place = place
        if "price" in ins:
            return _core.profile_trades(ins["price"], ins["volume"], offsets, session_ids, options, place)
        return _core.profile_bars(ins["high"], ins["low"], ins["close"], ins["volume"], ins.get("open"), offsets,
                                  session_ids, options, place)

    def same_prices(self, volume: Any, name: str) -> Any:
        """The engine's profile of the call's prices with ``volume``; its errors name ``name``."""
        try:
            return self._run({**self.prices, "volume": volume}, self.offsets, self.session_ids, self.options())
        except InputError as e:
            if getattr(e, "argument", None) != "volume" or name == "volume":
                raise
            row = row_of(e)
            if row is None:
                raise ValueError(f"{name}: {e}") from None
            raise readdressed(e, row, ("volume",), lambda _, r: f"{name}[{r}]", name) from None

    def side_levels(self, buy: Any, sell: Any, row_size: float, rules: SideRules) -> Dict[str, Any]:
        """The side fields of the buy / sell passes' rows (``_core.Result``s of one layout) in one C++ call,
        ``_core.side_levels``: the epilogue of the engine's sided pass (delta, delta POC, imbalances, stacked
        counts), on the host for host rows, else on the passes' GPU and stream (DeviceArrays)."""
        place = self.place if buy.device >= 0 else None
        return _core.side_levels(buy.offsets, buy.low_row, buy.volume, sell.volume, row_size, self.opts,
                                 rules.imbalance_ratio, rules.stacked_min, buy_total=buy.total_volume,
                                 sell_total=sell.total_volume, placement=place)


def _input_offsets(offsets: Any, session_ids: Any, n: int) -> np.ndarray:
    """The CSR layout of the input rows the engine profiled (host int64)."""
    if offsets is not None:
        return as_index(host_array(offsets) if gpu_location(offsets) is not None else offsets, "offsets")
    if session_ids is not None:
        ids = as_index(host_array(session_ids) if gpu_location(session_ids) is not None else session_ids,
                       "session_ids")
        return np.asarray(_core.offsets_from_ids(ids, "session_ids")[0], dtype=np.int64)
    return np.array([0, n], dtype=np.int64)


def _dev_delta(lib: _Lib, buy: Any, sell: Any, in_offsets: np.ndarray) -> Any:
    """Per input row, the session's buy - sell volume up to and including it (float64): int64 running
    sums when every volume is whole (exact, any order), else a float64 sum in input order on the host."""
    n = int(in_offsets[-1])
    counts = np.diff(in_offsets)
    starts = in_offsets[:-1][counts > 0]
    if lib.whole(buy) and lib.whole(sell):
        d = lib.cast(buy, "i8") - lib.cast(sell, "i8")  # int64 sums wrap mod 2**64, and so do their differences
        if starts.shape[0] > 1:  # restart at each session: its first row less the previous session's total
            if lib.name == "numpy":
                totals = np.add.reduceat(d, starts)
            else:
                totals = lib.cumsum(d)[lib.put(in_offsets[1:][counts > 0] - 1)]
                totals = totals - lib.cat([lib.zeros(1, "i8"), totals[:-1]])
            d[lib.put(starts[1:])] -= totals[:-1]
        return lib.cast(lib.cumsum(d), "f8")
    d = host_array(lib.cast(buy, "f8")) - host_array(lib.cast(sell, "f8"))
    out = np.empty(n, dtype=np.float64)
    for a, b in zip(starts.tolist(), in_offsets[1:][counts > 0].tolist()):
        np.cumsum(d[a:b], out=out[a:b])
    return lib.put(out)


# --------------------------------------------------------------------------- attach


def _attach(prof: Any, lib: _Lib, engine: _Engine, buy_in: Any, sell_in: Any, names: tuple, rules: SideRules,
            developing: bool, n: int) -> Any:
    """``prof`` with the side fields of the masked columns ``buy_in`` / ``sell_in``: an engine pass over each
    (the call's prices), then the side epilogue of their rows (``_Engine.side_levels``, one C++ call)."""
    buy = engine.same_prices(buy_in, names[0])
    sell = engine.same_prices(sell_in, names[1])
    engine.prices = {}  # the passes are done with the input: let it go with the caller
    dev = None
    if developing:
        dev = _dev_delta(lib, buy_in, sell_in, _input_offsets(engine.offsets, engine.session_ids, n))
    # the check reads host copies of the rows' layouts, which wait for the GPU passes to finish: only then may
    # the masked columns (temporaries of this call) be freed
    _same_rows(prof, buy, sell)
    cols = engine.side_levels(buy, sell, float(prof.row_size), rules)
    cols.update(buy_volume=buy.volume, sell_volume=sell.volume, buy_total=buy.total_volume,
                sell_total=sell.total_volume)
    if buy.device < 0:
        cols["dev_delta"] = dev
        prof.__dict__["_side"] = HostSideFields(cols, rules)
    else:
        cols["dev_delta"] = None
        prof.__dict__["_side"] = DeviceSideFields(cols, rules, lib, None if dev is None else (lambda: dev))
    return prof


def _same_rows(prof: Any, buy: Any, sell: Any) -> None:
    """The buy / sell passes' rows are the profile's (the same prices give the same rows: zero-volume inputs
    touch theirs); RuntimeError otherwise (a bug)."""
    low_row = np.asarray(host_array(prof.low_row), dtype=np.int64)
    n_rows = np.asarray(host_array(prof.n_rows), dtype=np.int64)
    for r in (buy, sell):
        if not (np.array_equal(host_array(r.low_row), low_row) and np.array_equal(host_array(r.n_rows), n_rows)):
            raise RuntimeError("vpoc: the side pass binned the prices onto other rows than the profile; "
                               "please report this")  # pragma: no cover


def _no_bins(opts: Any, what: str) -> None:
    """The side fields are per tick row: bins=N (rows of each session's own range) has none."""
    if opts.bins:
        raise ValueError(f"bins={opts.bins} does not work with {what}: the aggressor-side fields are kept per "
                         f"tick row; drop bins= (or the side)")


def add_trade_sides(prof: Any, side: Any, rules: SideRules, volume: Any, price: Any, offsets: Any,
                    session_ids: Any, opts: Any, memory_budget: Any, stream: Any) -> Any:
    """``prof`` with the side fields of trades whose aggressor side is ``side`` (from ``trade_side``;
    None: ``prof`` as it is). Buy / sell passes: the engine on ``volume * (side == +1)`` and
    ``volume * (side == -1)``, masked where the volume lives."""
    if side is None:
        return prof
    _no_bins(opts, "side")
    cols = getattr(prof.__dict__.get("_result"), "side_fields", None)
    if cols is not None and prof.device == "cpu":  # the CPU engine binned the sides with the volumes
        prof.__dict__["_side"] = HostSideFields(cols, rules)
        return prof
    if cols is not None:  # the GPU engine did (trade_engine); dev_delta: today's fallback, on first use
        dev = None
        if opts.developing:
            lib = _Lib.of(volume)
            dev = functools.partial(_trade_dev_delta, lib, side, volume, offsets, session_ids)
        prof.__dict__["_side"] = DeviceSideFields(cols, rules, _Lib.of(volume), dev)
        return prof
    return _engine_trade_sides(prof, side, rules, volume, price, offsets, session_ids, opts, memory_budget, stream)


def trade_engine(side: Any, rules: SideRules, arrays: Dict[str, Any]) -> Any:
    """(engine, arrays) of from_trades' engine call: ``_core.profile_trades`` over ``arrays`` (price, volume),
    and, sided, over the side codes too (the third array, placed with the others: a GPU side is read where it
    is). The engine bins each trade into the unknown / buy / sell plane of its row in its one binning pass
    and returns every side field but a GPU call's ``dev_delta`` (``Result.side_fields``: numpy columns on
    the CPU, DeviceArrays on a GPU). A bad code found by the GPU range pass (int8 GPU sides, not checked
    before) is worded by vpoc._side, as every side error."""
    if side is None:
        return _core.profile_trades, arrays

    def engine(price: Any, volume: Any, codes: Any, *rest: Any) -> Any:
        try:
            return _core.profile_trades(price, volume, *rest, side=codes, imbalance_ratio=rules.imbalance_ratio,
                                        stacked_min=rules.stacked_min)
        except InputError as e:
            i = row_of(e)
            if getattr(e, "argument", None) != "side" or i is None:
                raise
            aggressor_side(host_array(side[i:i + 1]), "side", where=lambda _: f"side[{i}]")
            raise  # pragma: no cover - aggressor_side raised for the bad code

    return engine, {**arrays, "side": side}


def _engine_trade_sides(prof: Any, side: Any, rules: SideRules, volume: Any, price: Any, offsets: Any,
                        session_ids: Any, opts: Any, memory_budget: Any, stream: Any) -> Any:
    """``add_trade_sides`` by masked engine passes in the volume's library (GPU calls)."""
    lib = _Lib.of(volume)
    v = as_volume(volume, "volume") if lib.name == "numpy" else (volume.detach() if hasattr(volume, "detach")
                                                                 else volume)
    buy, sell = v * (side == 1), v * (side == -1)
    engine = _Engine(prof.device, memory_budget, stream, {"price": price}, offsets, session_ids, opts)
    return _attach(prof, lib, engine, buy, sell, ("volume", "volume"), rules, bool(opts.developing),
                   int(v.shape[0]))


def _trade_dev_delta(lib: _Lib, side: Any, volume: Any, offsets: Any, session_ids: Any) -> Any:
    """dev_delta of a GPU call's trades: _dev_delta on the masked columns (int64 running sums for whole
    volumes, else float64 in input order on the host), as before the engine binned the sides."""
    v = as_volume(volume, "volume") if lib.name == "numpy" else (volume.detach() if hasattr(volume, "detach")
                                                                 else volume)
    s = lib.put(side)
    return _dev_delta(lib, v * (s == 1), v * (s == -1), _input_offsets(offsets, session_ids, int(v.shape[0])))


class DeviceSideFields:
    """The side fields of a GPU call, made by the GPU engine (vpoc/side.hpp SideDeviceColumns) or by the
    masked passes' rows and the GPU side epilogue (``_Engine.side_levels``): buy / sell rows and the delta
    POC as DeviceArrays; delta, totals, imbalances, stacked counts and dev_delta in the volume's library
    (numpy for host inputs, torch / cupy zero-copy); dev_delta from the engine's scan when it made one,
    else by ``dev`` (the masked fallback) on first use."""

    _LIB_FIELDS = ("delta", "buy_total", "sell_total", "imbalance_buy", "imbalance_sell", "stacked_imbalance_buy",
                   "stacked_imbalance_sell")

    def __init__(self, cols: Dict[str, Any], rules: SideRules, lib: _Lib, dev: Any) -> None:
        self.cols, self.rules, self.lib, self.dev = cols, rules, lib, dev
        self.cache: Dict[str, Any] = {}

    def field(self, name: str) -> Any:
        if name not in self.cache:
            if name == "dev_delta":  # the engine's scan (device inputs, whole volumes), else the fallback
                made = self.cols.get("dev_delta")
                self.cache[name] = (None if self.dev is None else self.lib.put(made) if made is not None
                                    else self.dev())
            elif name in self._LIB_FIELDS:
                x = self.lib.put(self.cols[name])
                if name.startswith("imbalance_"):  # int8 0 / 1 flags: the same bytes as bools
                    x = x.view(self.xp_bool())
                self.cache[name] = x
            else:
                self.cache[name] = self.cols[name]
        return self.cache[name]

    def xp_bool(self) -> Any:
        return self.lib.xp.bool if self.lib.name == "torch" else np.bool_


def add_bar_sides(prof: Any, volumes: Any, rules: SideRules, prices: Dict[str, Any], offsets: Any,
                  session_ids: Any, opts: Any, memory_budget: Any, stream: Any) -> Any:
    """``prof`` with the side fields of bars whose (buy, sell) volumes are ``volumes`` (from
    ``bar_side_volumes``; None: ``prof`` as it is): each spread by the call's ``distribute``."""
    if volumes is None:
        return prof
    _no_bins(opts, "buy_volume / sell_volume")
    buy, sell = volumes
    lib = _Lib.of(buy)
    if lib.name == "numpy" and prof.device == "cpu" and _host_bars(prices, buy, sell):
        return _cpu_bar_sides(prof, buy, sell, rules, prices, offsets, session_ids, opts)
    engine = _Engine(prof.device, memory_budget, stream, prices, offsets, session_ids, opts)
    return _attach(prof, lib, engine, buy, sell, ("buy_volume", "sell_volume"), rules, bool(opts.developing),
                   int(buy.shape[0]))


def _host_bars(prices: Dict[str, Any], buy: Any, sell: Any) -> bool:
    """Whether every bar column is a host numpy array the C++ side call takes as it is (float prices, read
    as float64; numeric buy / sell in their own dtype, anything but float32 / float64 / int32 / int64 as
    float64: bar_side_volumes checked them, whole ones within the volume's 2**53)."""
    cols = [prices[k] for k in ("high", "low", "close")] + ([] if prices.get("open") is None else [prices["open"]])
    return (all(type(x) is np.ndarray and x.ndim == 1 and x.dtype.kind == "f" for x in cols)
            and all(type(x) is np.ndarray and x.ndim == 1 and x.dtype.kind in "iuf" for x in (buy, sell)))


def _cpu_bar_sides(prof: Any, buy: Any, sell: Any, rules: SideRules, prices: Dict[str, Any], offsets: Any,
                   session_ids: Any, opts: Any) -> Any:
    """``add_bar_sides`` of a CPU call in one C++ call (``_core.bar_sides``): the buy and the sell column each
    binned by the engine's bar binning (the rows of the masked engine passes), then the side epilogue;
    dev_delta as ``_dev_delta`` (input order)."""
    n = int(buy.shape[0])
    in_offsets = _input_offsets(offsets, session_ids, n)
    cols = _core.bar_sides(prices["high"], prices["low"], prices["close"], prices.get("open"), buy, sell, in_offsets,
                           opts, rules.imbalance_ratio, rules.stacked_min)
    row_off, low = cols.pop("row_offsets"), cols.pop("low_row")
    n_rows = np.diff(row_off)
    if not (np.array_equal(row_off, np.asarray(host_array(prof.offsets), dtype=np.int64))
            and np.array_equal(low[n_rows > 0], np.asarray(host_array(prof.low_row), dtype=np.int64)[n_rows > 0])):
        raise RuntimeError("vpoc: the side pass binned the prices onto other rows than the profile; "
                           "please report this")  # pragma: no cover
    if opts.developing:
        cols["dev_delta"] = _dev_delta(_Lib.of(buy), buy, sell, in_offsets)
    prof.__dict__["_side"] = HostSideFields(cols, rules)
    return prof


# --------------------------------------------------------------------------- rows already binned


class HostSideFields:
    """The side fields of a host call, made by the C++ engine (vpoc/side.hpp): every one at hand."""

    def __init__(self, cols: Dict[str, Any], rules: SideRules) -> None:
        self.cache, self.rules = cols, rules

    def field(self, name: str) -> Any:
        return self.cache[name]


def row_sides(row_size: float, offsets: Any, low_row: Any, buy_rows: Any, sell_rows: Any, buy_total: Any,
              sell_total: Any, rules: SideRules, opts: Any) -> HostSideFields:
    """The side fields of host profile rows whose buy / sell volumes are binned already: CSR
    ``offsets`` [S+1] into ``buy_rows`` / ``sell_rows`` (float64), session s from ladder row
    ``low_row[s]`` up, ``buy_total``, ``sell_total`` [S] known (``delta`` is their difference, as every
    from_* call's). ``.field(name)`` gives ``delta``, ``delta_poc``, ``delta_poc_row``,
    the imbalances and stacked counts by the C++ side epilogue (``_core.side_levels``: the rules of every
    from_* call, the engine's POC rule under ``opts``, a ``_core.Options``); ``dev_delta`` is None. For vpoc.Live (its
    finished sessions, the session so far) and bar_features (the profiles of session prefixes)."""
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    n_rows = np.diff(offsets)
    low = np.where(n_rows > 0, np.asarray(low_row, dtype=np.int64), np.iinfo(np.int64).min)
    buy = np.ascontiguousarray(buy_rows, dtype=np.float64)
    sell = np.ascontiguousarray(sell_rows, dtype=np.float64)
    bt, st = np.asarray(buy_total, dtype=np.float64), np.asarray(sell_total, dtype=np.float64)
    cols = _core.side_levels(offsets, low, buy, sell, float(row_size), opts, rules.imbalance_ratio, rules.stacked_min,
                             buy_total=bt, sell_total=st)
    cols.update(buy_volume=buy, sell_volume=sell, buy_total=bt, sell_total=st, dev_delta=None)
    return HostSideFields(cols, rules)


def attach_sides(prof: Any, fields: Any) -> Any:
    """``prof`` (a host Profiles) with ``fields`` (from ``row_sides`` on its rows) as its side fields."""
    prof.__dict__["_side"] = fields
    return prof


__all__ += ["row_sides", "attach_sides"]
