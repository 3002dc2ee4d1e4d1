"""``Profiles``: the result of one vpoc call, as numpy views of memory owned by the C++ result.

Contract: every per-session array has ``n_sessions`` entries; ``volume[offsets[s]:offsets[s+1]]``
is session s's histogram from its ``low_row`` up; nothing here copies the engine's output.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

import numpy as np

from . import _core
from ._optional import require
from ._presets import row_prices
from ._side_profiles import SIDE_FIELDS, SIDE_SESSION_FIELDS, host_array

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Profiles", "SessionProfile", "NO_ROW"]

#: Row index reported for an empty session's poc/vah/val/low rows.
NO_ROW: int = -(2**63)

#: Per-input-row developing series (present when computed with ``developing=True``).
_DEVELOPING = ("dev_poc", "dev_vah", "dev_val")

_PER_SESSION = (
    "poc", "vah", "val", "poc_row", "vah_row", "val_row", "low_row", "n_rows",
    "total_volume", "va_volume",
)
#: bins=N (docs/presets.md): each session's lowest price and bin width (host arrays), else None.
_BINS = ("bin_low", "bin_width")
#: Every column of a result (what ``Profiles.__getattr__`` fetches on first use).
_COLUMNS = frozenset(_PER_SESSION + ("offsets", "volume") + _DEVELOPING)


class _HostResult:
    """Host arrays shaped like the engine's result object: copies of a GPU result, or the
    state of an unpickled ``Profiles``."""

    def __init__(self, fields: Dict[str, Any]) -> None:
        self._fields = fields

    def fields(self) -> Dict[str, Any]:
        """What ``Profiles`` holds (as the engine's ``Result.fields()``)."""
        return self._fields

    @staticmethod
    def of(prof: "Profiles") -> Dict[str, Any]:
        """Every array of ``prof`` as a host numpy array, with its scalars."""
        out: Dict[str, Any] = dict(n_sessions=prof.n_sessions, tick_size=prof.tick_size,
                                   ticks_per_row=prof.ticks_per_row)
        for name in _PER_SESSION + ("offsets", "volume"):
            out[name] = np.asarray(getattr(prof, name))
        for name in _DEVELOPING:
            value = getattr(prof, name)
            out[name] = None if value is None else np.asarray(value)
        for name in SIDE_FIELDS + _BINS:  # aggressor side, bins=N: only when the call had one
            value = getattr(prof, name)
            if value is not None:
                out[name] = host_array(value)
        return out


def _fields_of(result: Any, developing: Optional[bool]) -> Dict[str, Any]:
    """The fields of a result object that has no ``fields()`` (a duck-typed one, e.g. Live's
    finished sessions): its scalars and columns; the developing series when it has them."""
    out: Dict[str, Any] = dict(n_sessions=int(result.n_sessions), tick_size=float(result.tick_size),
                               ticks_per_row=int(result.ticks_per_row))
    for name in _PER_SESSION + ("offsets", "volume"):
        out[name] = getattr(result, name)
    if developing is None:
        developing = getattr(result, "dev_poc", None) is not None
    for name in _DEVELOPING:
        out[name] = getattr(result, name) if developing else None
    return out


#: What a result records about how its sessions were made and its rows checked (class defaults
#: below; set on the instance only when they differ, so the plain call pays nothing).
_FACTS = ("trade_dates", "session_rule", "dropped_rows", "dropped_volume", "kept_rows", "snapped_prices", "rules")


def _unpickle(fields: Dict[str, Any], session_labels: Optional[np.ndarray],
              facts: Optional[Dict[str, Any]] = None) -> "Profiles":
    prof = Profiles(_HostResult(dict(fields, row_size=fields["tick_size"] * fields["ticks_per_row"])),
                    session_labels=session_labels)
    for k, v in (facts or {}).items():
        setattr(prof, k, v)
    return prof


def _yyyymmdd(key: Any) -> Optional[int]:
    """A trade date given as 20250121, '2025-01-21', '20250121', a date, a datetime / Timestamp
    (its own calendar date) or a numpy datetime64, as the int 20250121; None when it is none."""
    if isinstance(key, (bool, np.bool_)):
        return None
    if isinstance(key, (int, np.integer)):
        return int(key)
    if isinstance(key, _dt.date):  # also datetime and pandas.Timestamp
        return key.year * 10000 + key.month * 100 + key.day
    if isinstance(key, np.datetime64):
        key = str(key.astype("datetime64[D]"))
    if isinstance(key, str):
        text = key.strip()
        if len(text) == 8 and text.isdigit():
            return int(text)
        try:
            d = _dt.date.fromisoformat(text[:10])
        except ValueError:
            return None
        return d.year * 10000 + d.month * 100 + d.day
    return None


class SessionProfile:
    """One session of a ``Profiles`` (``prof.loc[date]`` / ``prof[i]``): its label and position,
    ``prices`` (row prices) and ``volume`` (row volumes) of its histogram, and its levels
    ``poc``, ``vah``, ``val``, ``total_volume``, ``va_volume`` and row indices."""

    __slots__ = ("label", "position", "prices", "volume", "poc", "vah", "val", "total_volume",
                 "va_volume", "poc_row", "vah_row", "val_row", "low_row", "n_rows", "buy_volume",
                 "sell_volume", "delta", "buy_total", "sell_total", "delta_poc")

    def __init__(self, prof: "Profiles", i: int) -> None:
        self.position = i
        self.label = None if prof.session_labels is None else prof.session_labels[i].item()
        self.prices, self.volume = prof.session(i)
        for name in _PER_SESSION:
            setattr(self, name, getattr(prof, name)[i].item())
        sided = prof.buy_volume is not None  # aggressor side: its rows and levels, else None
        a, b = int(prof.offsets[i]), int(prof.offsets[i + 1])
        self.buy_volume = prof.buy_volume[a:b] if sided else None
        self.sell_volume = prof.sell_volume[a:b] if sided else None
        self.delta = prof.delta[i].item() if sided else None
        self.buy_total = prof.buy_total[i].item() if sided else None
        self.sell_total = prof.sell_total[i].item() if sided else None
        self.delta_poc = prof.delta_poc[i].item() if sided else None

    def __repr__(self) -> str:
        return (f"SessionProfile(label={self.label!r}, position={self.position}, poc={self.poc}, "
                f"vah={self.vah}, val={self.val}, total_volume={self.total_volume}, n_rows={self.n_rows})")


class _Loc:
    """``prof.loc[label]``: the session with that label (a trade date in any usual spelling when
    the profiles were built with ``session=``)."""

    __slots__ = ("_prof",)

    def __init__(self, prof: "Profiles") -> None:
        self._prof = prof

    def __getitem__(self, key: Any) -> SessionProfile:
        prof = self._prof.cpu()
        return SessionProfile(prof, prof.position(key))


class Profiles:
    """Per-session volume profiles, POC and value area.

    Per session (length ``n_sessions``): ``poc``, ``vah``, ``val`` (float64 row prices),
    ``poc_row``, ``vah_row``, ``val_row``, ``low_row``, ``n_rows`` (int64 absolute ladder rows),
    ``total_volume``, ``va_volume`` (float64). Histograms: ``offsets`` (int64, S+1) into
    ``volume`` (float64). With ``developing=True``: ``dev_poc``, ``dev_vah``, ``dev_val`` (float64,
    one per input row kept: the levels of the row's session up to and including it; ``kept_rows``
    names the input rows when ``session=`` left some out), else None. Empty sessions have ``n_rows == 0``, NaN prices and ``NO_ROW`` rows.
    With an aggressor side (``from_trades(side=)``, ``from_bars(buy_volume=, sell_volume=)``; else
    None): ragged ``buy_volume``, ``sell_volume`` (float64) and ``imbalance_buy``,
    ``imbalance_sell`` (bool), aligned with ``volume``; per session ``delta``, ``buy_total``,
    ``sell_total`` (float64: the exact buy / sell totals each rounded once, delta their difference),
    ``delta_poc`` / ``delta_poc_row`` (the row of the largest |buy - sell|, ties by ``poc_tie``; NaN /
    ``NO_ROW`` for a session with no volume of a known side, as for an empty one),
    ``stacked_imbalance_buy`` / ``stacked_imbalance_sell`` (int64); with ``developing=True``
    ``dev_delta`` (float64, one per input row). docs/contract.md, "Aggressor side".

    On the CPU the arrays are numpy views of the result's memory; on a GPU (``device`` is
    "cuda:N") they are ``DeviceArray`` objects in device memory, exported zero-copy through
    ``__dlpack__`` / ``__cuda_array_interface__`` (``to_torch()``), and ``cpu()`` copies them.
    ``levels``: ``poc``, ``vah``, ``val`` as one ``[S, 3]`` float64 array: on a GPU a zero-copy
    strided view (``torch.from_dlpack(prof.levels)``: one import, no stack kernel), on the CPU a
    new array.
    Profiles pickle (multiprocessing, Dask) as host arrays; GPU profiles unpickle on the CPU.
    """

    poc: np.ndarray
    vah: np.ndarray
    val: np.ndarray
    poc_row: np.ndarray
    vah_row: np.ndarray
    val_row: np.ndarray
    low_row: np.ndarray
    n_rows: np.ndarray
    total_volume: np.ndarray
    va_volume: np.ndarray
    offsets: np.ndarray
    volume: np.ndarray
    dev_poc: Optional[np.ndarray]
    dev_vah: Optional[np.ndarray]
    dev_val: Optional[np.ndarray]
    buy_volume: Optional[np.ndarray]
    sell_volume: Optional[np.ndarray]
    imbalance_buy: Optional[np.ndarray]
    imbalance_sell: Optional[np.ndarray]
    delta: Optional[np.ndarray]
    buy_total: Optional[np.ndarray]
    sell_total: Optional[np.ndarray]
    delta_poc: Optional[np.ndarray]
    delta_poc_row: Optional[np.ndarray]
    stacked_imbalance_buy: Optional[np.ndarray]
    stacked_imbalance_sell: Optional[np.ndarray]
    dev_delta: Optional[np.ndarray]
    levels: np.ndarray
    #: bins=N (docs/presets.md): per session the ladder's lowest price and bin width (host float64;
    #: NaN for an empty session); None without bins. Bin k of session s spans
    #: ``[bin_low[s] + bin_width[s] * k, bin_low[s] + bin_width[s] * (k + 1)]``.
    bin_low: Optional[np.ndarray]
    bin_width: Optional[np.ndarray]

    #: True when ``session_labels`` are trade dates (``YYYYMMDD``), from ``session=``.
    trade_dates: bool = False
    #: How the sessions were made: the rule name ("globex", "rth", "daily") or the
    #: ``vpoc.sessions`` definition they came from; None: the caller's offsets / session_ids (or
    #: one session).
    session_rule: Optional[str] = None
    #: Input rows outside every session (left out by ``session=`` / the Globex default) and their
    #: volume.
    dropped_rows: int = 0
    dropped_volume: float = 0.0
    #: When ``session=`` left input rows out: the input position of every kept row (host int64,
    #: sorted; ``Sessions.index``), so that ``dev_poc[j]`` (``dev_vah``, ``dev_val``, ``dev_delta``)
    #: is input row ``kept_rows[j]``: ``full[prof.kept_rows] = prof.dev_poc``. None when every
    #: input row was kept (the developing series then have one entry per input row).
    kept_rows: Optional[np.ndarray] = None
    #: Prices that were not on the ``tick_size`` grid and were rounded to the nearest tick
    #: (counted by the engine: on the CPU before it runs, on a GPU in its range pass).
    snapped_prices: Optional[int] = 0
    #: The rule keywords of the call and its ``preset`` (docs/presets.md) when it passed a preset
    #: or a peer rule (``va_rows``, ``va_compare``, ``va_stop``, ``tie_tol``, ``row_label``); None:
    #: today's rules (``vpoc._presets.RULE_DEFAULTS``, the "cbot" preset) with the call's own
    #: ``va_method`` / ``poc_tie`` / ``distribute``.
    rules: Optional[Dict[str, Any]] = None

    def __init__(self, result: Any, *, session_labels: Optional[np.ndarray] = None,
                 device: str = "cpu", developing: Optional[bool] = None) -> None:
        d = self.__dict__
        d["device"] = device
        if result.__class__ is _core.Result:  # the engine's result: columns made on first use
            d["_result"] = result
            d["n_sessions"] = result.n_sessions
            d["tick_size"] = result.tick_size
            d["ticks_per_row"] = result.ticks_per_row
            d["row_size"] = result.tick_size * result.ticks_per_row
            d["session_labels"] = result.session_labels if session_labels is None else session_labels
            return
        fields = result.fields() if result.__class__ is _HostResult else _fields_of(result, developing)
        d.update(fields)
        if "row_size" not in d:
            d["row_size"] = d["tick_size"] * d["ticks_per_row"]
        d["_result"] = result
        if session_labels is not None or "session_labels" not in d:
            d["session_labels"] = session_labels

    def __getattr__(self, name: str) -> Any:
        """A column's first use: a view of the engine result's memory (numpy on the CPU, a
        DeviceArray on a GPU), kept on the instance; later uses read it directly."""
        if name in _COLUMNS:
            result = self.__dict__.get("_result")
            if result is not None:
                value = getattr(result, name)
                self.__dict__[name] = value
                return value
        if name == "levels":  # [S, 3] poc, vah, val: the engine's (a GPU view), else stacked here
            result = self.__dict__.get("_result")
            if result.__class__ is _core.Result:
                value = result.levels
            else:
                value = np.stack([np.asarray(self.poc), np.asarray(self.vah), np.asarray(self.val)], 1)
            if isinstance(value, np.ndarray):  # a copy kept on the result: read-only, as it must stay poc/vah/val
                value.flags.writeable = False
            self.__dict__[name] = value
            return value
        if name in _BINS:  # bins=N: the engine result's ladders; None otherwise
            value = getattr(self.__dict__.get("_result"), name, None)
            self.__dict__[name] = value
            return value
        if name in SIDE_FIELDS:  # made by vpoc._side_profiles on first use; None without a side
            side = self.__dict__.get("_side")
            value = None if side is None else side.field(name)
            self.__dict__[name] = value
            return value
        raise AttributeError(f"'Profiles' object has no attribute {name!r}")

    def __len__(self) -> int:
        return self.n_sessions

    def __dir__(self) -> list:
        """The columns made on first use too (tab completion lists poc, vah, val, levels, ...)."""
        return sorted(set(super().__dir__()) | _COLUMNS | {"levels"} | set(SIDE_FIELDS) | set(_BINS))

    def __repr__(self) -> str:
        extra = ""
        if self.trade_dates and self.session_labels is not None and self.n_sessions:
            extra += f", trade dates {self.session_labels[0]} .. {self.session_labels[-1]}"
        if self.session_rule is not None:
            extra += f", sessions={self.session_rule!r}"
        if self.dropped_rows:
            extra += f", dropped_rows={self.dropped_rows}"
        if self.snapped_prices:
            extra += f", snapped_prices={self.snapped_prices}"
        return (f"Profiles(n_sessions={self.n_sessions}, rows={self.volume.shape[0]}, "
                f"tick_size={self.tick_size}, ticks_per_row={self.ticks_per_row}, "
                f"device='{self.device}'{extra})")

    @property
    def high_row(self) -> np.ndarray:
        """Highest row of each session (``NO_ROW`` for empty sessions; a host array)."""
        if self.device != "cpu":
            return self.cpu().high_row
        return np.where(self.n_rows > 0, self.low_row + self.n_rows - 1, NO_ROW)

    def _facts(self) -> Dict[str, Any]:
        return {k: self.__dict__[k] for k in _FACTS if k in self.__dict__}

    def cpu(self) -> "Profiles":
        """These profiles with every array copied to host memory (self when already there)."""
        if self.device == "cpu":
            return self
        return _unpickle(_HostResult.of(self), self.session_labels, self._facts())

    def __reduce__(self) -> Tuple[Any, ...]:
        """Pickles as host arrays (multiprocessing, Dask): GPU profiles are copied to the host
        and unpickle as CPU profiles (``device == "cpu"``)."""
        facts = self._facts()
        if facts:
            return (_unpickle, (_HostResult.of(self), self.session_labels, facts))
        return (_unpickle, (_HostResult.of(self), self.session_labels))

    @property
    def labels(self) -> Optional[np.ndarray]:
        """The session labels (alias of ``session_labels``): trade dates ``YYYYMMDD`` (int64) for
        profiles built with ``sessions=`` or from a container / DataFrame, the session ids for
        ``session_ids=``, None for ``offsets=``."""
        return self.session_labels

    @property
    def loc(self) -> _Loc:
        """``prof.loc[label]`` -> ``SessionProfile`` (levels and histogram of that session). With
        trade dates the label may be 20250121, '2025-01-21', a date, a datetime / Timestamp or a
        numpy datetime64; otherwise the session id. KeyError when no session has it."""
        return _Loc(self)

    def position(self, key: Any) -> int:
        """The index of the session labelled ``key`` (see ``loc``); KeyError when none is."""
        labels = self.session_labels
        if labels is None:
            raise KeyError(f"{key!r}: these profiles have no session labels (built with offsets=); "
                           "use an integer position, e.g. prof.session(i)")
        want = _yyyymmdd(key) if self.trade_dates else key
        if isinstance(want, (str, bytes)) or want is None:
            raise KeyError(f"{key!r} is not a session label (labels: {self._label_span()})")
        hits = np.flatnonzero(labels == want)
        if hits.shape[0] == 0:
            raise KeyError(f"no session labelled {key!r} (labels: {self._label_span()})")
        return int(hits[0])

    def _label_span(self) -> str:
        labels = self.session_labels
        if labels is None or labels.shape[0] == 0:
            return "none"
        kind = "trade dates " if self.trade_dates else ""
        return f"{kind}{labels[0]} .. {labels[-1]}, {labels.shape[0]} sessions"

    #: The ragged per-row fields ``dense(field=)`` lays out (each aligned with ``volume``).
    DENSE_FIELDS = ("volume", "buy_volume", "sell_volume", "imbalance_buy", "imbalance_sell")

    def dense(self, fill: float = 0.0, field: str = "volume") -> np.ndarray:
        """[S, max(n_rows)] float64 matrix of a per-row field (``volume``; with an aggressor side also
        ``buy_volume``, ``sell_volume``, ``imbalance_buy`` / ``imbalance_sell`` as 0 / 1), row s aligned
        at session s's low row, padded with fill (a host array; GPU profiles are copied first)."""
        if field not in self.DENSE_FIELDS:
            raise ValueError(f"field must be one of {', '.join(self.DENSE_FIELDS)}, got {field!r}")
        if self.device != "cpu":
            return self.cpu().dense(fill, field)
        values = getattr(self, field)
        if values is None:
            raise ValueError(f"field={field!r}: this profile has no aggressor side (pass side= to from_trades, "
                             "or buy_volume= and sell_volume= to from_bars)")
        width = int(self.n_rows.max()) if self.n_sessions else 0
        out = np.full((self.n_sessions, width), fill, dtype=np.float64)
        sessions = np.repeat(np.arange(self.n_sessions), self.n_rows)
        cols = np.arange(self.volume.shape[0]) - np.repeat(self.offsets[:-1], self.n_rows)
        out[sessions, cols] = np.asarray(values)
        return out

    def session(self, i: int) -> Tuple[np.ndarray, np.ndarray]:
        """(row prices, row volumes) of session i (negative i counts from the end; host arrays).
        With ``bins=N`` the prices are each bin's lower edge, while ``poc`` / ``vah`` / ``val`` follow
        ``bin_report`` (wickra's: the POC at its bin's centre, VAH / VAL at bin edges; docs/presets.md)."""
        if self.device != "cpu":
            return self.cpu().session(i)
        if not -self.n_sessions <= i < self.n_sessions:
            raise IndexError(f"session index {i} out of range for {self.n_sessions} sessions")
        i %= self.n_sessions
        n = int(self.n_rows[i])
        if self.bin_low is not None:  # bins=N: each bin's lower edge, bin_low + bin_width * k
            return self.bin_low[i] + self.bin_width[i] * np.arange(n, dtype=np.float64), \
                self.volume[self.offsets[i]:self.offsets[i + 1]]
        low = int(self.low_row[i]) if n else 0
        prices = row_prices(low + np.arange(n, dtype=np.int64), self.tick_size, self.ticks_per_row, self.rules)
        return prices, self.volume[self.offsets[i]:self.offsets[i + 1]]

    def to_pandas(self) -> "pd.DataFrame":
        """One row per session with every per-session field. Index: the trade dates as a
        ``DatetimeIndex`` named "trade_date" (midnight, no time zone; so ``df.loc["2025-01-21"]``
        works) when the profiles have trade dates (``sessions=``, a container / DataFrame); else
        the session labels (``session_ids=``) or 0..S-1, named "session"."""
        if self.device != "cpu":
            return self.cpu().to_pandas()
        pd = require("pandas", "Profiles.to_pandas()")
        if self.trade_dates and self.session_labels is not None:
            index = pd.DatetimeIndex(pd.to_datetime(self.session_labels.astype(str), format="%Y%m%d"),
                                     name="trade_date")
        else:
            index = (pd.Index(self.session_labels, name="session") if self.session_labels is not None
                     else pd.RangeIndex(self.n_sessions, name="session"))
        names = (_PER_SESSION + (SIDE_SESSION_FIELDS if self.delta is not None else ())
                 + (_BINS if self.bin_low is not None else ()))
        return pd.DataFrame({name: getattr(self, name) for name in names}, index=index)

    def plot(self, session: Any, ax: Any = None, **kwargs: Any) -> Any:
        """Horizontal volume bars of one session with its POC line and value-area band
        (matplotlib; returns the Axes). ``session``: a position, or a label as in ``loc`` (a trade
        date such as '2025-01-21'). Options: see ``vpoc._plot.plot_profile``."""
        from ._plot import plot_profile

        return plot_profile(self, session, ax=ax, **kwargs)

    def to_torch(self) -> dict:
        """Every array as a torch tensor sharing this result's memory (via DLPack)."""
        import torch

        names = _PER_SESSION + ("offsets", "volume")
        if self.dev_poc is not None:
            names += _DEVELOPING
        names += tuple(name for name in SIDE_FIELDS if getattr(self, name) is not None)
        return {name: torch.from_dlpack(getattr(self, name)) for name in names}
