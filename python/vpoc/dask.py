"""Per-session volume profiles of a time-partitioned dask DataFrame: ``from_bars``, ``from_trades``.

Contract: the result equals ``vpoc.from_bars`` / ``from_trades`` on the whole frame in one process;
partitions are re-aligned at session boundaries (carry-over, see below), so no session is split.

Re-alignment: every partition's rows are labelled with their session (``session_column=``, or the
``session=`` rule of :mod:`vpoc.sessions` applied to the timestamps). Each partition then keeps the sessions
that *start* in it: its trailing session is carried to the next partition, which profiles it
together with its own leading rows of that session (a session spanning several partitions is
carried along until it ends). Each carry step runs beside its partition, so only the carried
rows (at most one session per partition) move between workers; the carry steps form a chain
(cheap: a scan of the labels), everything else runs in parallel. The result
has one row per session (index ``session``, the columns of :data:`vpoc._stream.PROFILE_COLUMNS`),
as many partitions as the input (some may be empty) and unknown divisions.
"""

from __future__ import annotations

import threading
import uuid
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from . import _api
from ._arrays import first_decrease
from ._optional import require
from ._time import bar_opens, check_label, check_time_unit, epoch_ns, interval_ns
from ._errors import InputError, _label_text, input_error, input_rows, readdressed, row_of
from ._stream import concat_rows, empty_profile_table, profile_table
from ._warnings import GuessedDefaultWarning, collected, user_location, user_stacklevel

if TYPE_CHECKING:  # pragma: no cover
    import dask.dataframe as dd
    import pandas as pd

__all__ = ["from_bars", "from_trades"]

SessionRule = Union[str, Callable[[np.ndarray], Any]]
_SESSION_RULES = ("globex", "rth", "daily")


@dataclass
class _Spec:
    """Everything a partition task needs (picklable)."""

    kind: str  # "bars" or "trades"
    columns: Dict[str, str]  # role -> column name (high/low/close/volume[/open] or price/volume)
    timestamp: Optional[str]  # column (or index) name, or None
    timestamp_is_index: bool
    session: Optional[str]  # session-label column
    rule: Optional[SessionRule]
    rule_kwargs: Dict[str, Any]
    tz: Optional[str]
    time_unit: Optional[str]  # unit of integer timestamps (None: ns)
    label: str  # "open" or "close": how the bars are stamped
    interval: Optional[int]  # bar length in ns (required with label="close")
    options: Dict[str, Any]  # engine keyword arguments
    label_dtype: Any
    call: str = ""  # this dask call's id: a compute's partitions say a warning once (_say_once)
    where: Tuple[str, int, str] = ("", 0, "")  # the user's line of the call (file, line, module)


@dataclass
class _Part:
    """One partition's rows that belong to a session: per-row labels, timestamps, values, and each
    row's position in its partition (_prepare) or, once the chain has placed it (_step), in the whole
    frame: the row an error or warning names."""

    labels: np.ndarray
    timestamp: Optional[np.ndarray]
    values: Dict[str, np.ndarray]
    rows: np.ndarray

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    def slice(self, a: int, b: int) -> "_Part":
        return _Part(self.labels[a:b], None if self.timestamp is None else self.timestamp[a:b],
                     {k: v[a:b] for k, v in self.values.items()}, self.rows[a:b])

    def placed(self, first_row: int) -> "_Part":
        """These rows of a partition whose first row is the frame's row ``first_row``."""
        return _Part(self.labels, self.timestamp, self.values, self.rows + first_row)

    concat = staticmethod(concat_rows)


@dataclass
class _Chain:
    """What the carry chain hands the next partition's step: the trailing session carried on (its rows
    placed in the frame), the frame rows and the sessions of the partitions before, this compute's id."""

    carry: Optional[_Part]
    rows: int
    sessions: int
    compute: str


def _utc_ns(values: Any, tz: Optional[str], name: str, time_unit: Optional[str]) -> np.ndarray:
    """A timestamp column/index as int64 ns UTC (naive datetimes are localized to ``tz``; integers
    are in ``time_unit``, None: ns, checked for plausibility)."""
    import pandas as pd

    dtype = values.dtype
    if isinstance(dtype, pd.DatetimeTZDtype) or (isinstance(dtype, np.dtype) and dtype.kind == "M"):
        idx = pd.DatetimeIndex(values)
        if idx.tz is None:
            if tz is None:
                raise ValueError(f"timestamp column {name!r} is timezone-naive; pass tz= (the zone "
                                 "the data was recorded in, e.g. 'America/Chicago')")
            idx = idx.tz_localize(tz)
        if idx.hasnans:  # its row of the partition: the chain says it of the frame (_Failed)
            i = int(np.flatnonzero(np.asarray(idx.isna()))[0])
            raise input_error(f"timestamp column {name!r}[{i}] is NaT (a missing timestamp); drop or fill the rows "
                              "with missing times", f"timestamp column {name!r}", i)
        return np.asarray(idx.tz_convert("UTC").as_unit("ns").asi8, dtype=np.int64)
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return epoch_ns(np.asarray(values), f"timestamp column {name!r}", time_unit)
    raise TypeError(f"timestamp column {name!r} must be datetime64 or integer epoch times (UTC), "
                    f"got dtype {dtype}")


def _check_sorted(labels: np.ndarray, name: str) -> None:
    """Session labels must not decrease (every session is one contiguous run of rows)."""
    i = first_decrease(labels)
    if i > 0:
        raise ValueError(f"session labels ({name}) must not decrease, but {labels[i]!r} follows "
                         f"{labels[i - 1]!r}; sort the frame by time")


def _runs(labels: np.ndarray) -> np.ndarray:
    """CSR offsets of the runs of equal labels."""
    n = labels.shape[0]
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    starts = np.flatnonzero(labels[1:] != labels[:-1]) + 1
    return np.concatenate([[0], starts, [n]]).astype(np.int64)


def _session_rule(rule: SessionRule, kwargs: Mapping[str, Any]) -> Callable[[np.ndarray], Any]:
    if callable(rule):
        return lambda ts: rule(ts, **kwargs)
    from . import sessions as vs

    return lambda ts: getattr(vs, rule)(ts, **kwargs)


@dataclass
class _Failed:
    """A partition's error about its row ``error.index`` (a vpoc.InputError made while its timestamps
    were converted or its sessions assigned), raised by the carry chain once it knows the partition's
    first frame row (:func:`_step`): the error names the frame's row, as the plain call on the frame."""

    error: InputError


def _prepare(df: "pd.DataFrame", spec: _Spec) -> Tuple[Union[_Part, _Failed], int]:
    """Label one partition's rows with their sessions (rows outside every session are dropped); with
    the partition's row count. An error about one of its rows is handed to the chain (_Failed)."""
    try:
        return _labelled(df, spec)
    except InputError as e:
        if row_of(e) is None:
            raise
        return _Failed(e), len(df)


def _labelled(df: "pd.DataFrame", spec: _Spec) -> Tuple[_Part, int]:
    """_prepare's work: the partition's rows labelled, with its row count."""
    values = {role: df[col].to_numpy() for role, col in spec.columns.items()}
    n = len(df)
    ts = None
    if spec.timestamp is not None:
        raw = df.index if spec.timestamp_is_index else df[spec.timestamp]
        ts = _utc_ns(raw, spec.tz, spec.timestamp, spec.time_unit)
        step = None if spec.interval is None else np.timedelta64(spec.interval, "ns")
        ts, _ = bar_opens(ts, spec.label, step, name=f"timestamp column {spec.timestamp!r}")
    if spec.session is not None:
        labels = df[spec.session].to_numpy()
        _check_sorted(labels, f"column {spec.session!r}")
        return _Part(labels, ts, values, np.arange(n, dtype=np.int64)), n
    assert ts is not None and spec.rule is not None
    sess = _session_rule(spec.rule, spec.rule_kwargs)(ts)
    offsets = np.asarray(sess.offsets, dtype=np.int64)
    labels = np.repeat(np.asarray(sess.labels, dtype=spec.label_dtype), np.diff(offsets))
    rows = np.arange(n, dtype=np.int64)
    if sess.index is not None:
        rows = np.asarray(sess.index, dtype=np.int64)
        ts = ts[rows]
        values = {k: v[rows] for k, v in values.items()}
    _check_sorted(labels, "from the session rule")
    return _Part(labels, ts, values, rows), n


_Step = Tuple[Optional[_Part], Optional[_Part], int, Optional[_Chain], Tuple[int, int, str]]


def _sessions(carry: Optional[_Part], labels: np.ndarray) -> int:
    """How many sessions ``carry`` followed by rows of ``labels`` (non-decreasing) hold."""
    n = 0 if labels.shape[0] == 0 else 1 + int(np.count_nonzero(labels[1:] != labels[:-1]))
    if carry is not None and len(carry):
        n += 0 if labels.shape[0] and carry.labels[-1] == labels[0] else 1
    return n


def _step(chain: Optional[_Chain], prepared: Tuple[Union[_Part, _Failed], int], last: bool) -> _Step:
    """Split ``carry + part`` into whole sessions and the trailing session to carry on.

    Returns ``(carry, part, k, next, at)``: the sessions that end here are ``carry`` followed by
    ``part[:k]`` (concatenated by the profiling task, in parallel), ``next`` goes to the next
    partition's step; ``at``: (the frame row of the partition's first row, the position of the first
    session handed over here in the whole result, this compute's id). The first step makes the
    compute's id: each compute of the collection runs the chain again.
    """
    part, n_rows = prepared
    if chain is None:
        chain = _Chain(None, 0, 0, uuid.uuid4().hex)
    if isinstance(part, _Failed):  # its row said of the frame (the rows before it are counted now)
        e = part.error
        names = () if e.argument is None else (e.argument,)
        raise readdressed(e, chain.rows + int(e.index), names, lambda name, row: f"{name}[{row}]") from None
    carry, at = chain.carry, (chain.rows, chain.sessions, chain.compute)
    if carry is not None and len(carry) and len(part):
        if part.labels[0] < carry.labels[-1]:
            raise ValueError(f"session labels must not decrease across partitions: "
                             f"{part.labels[0]!r} follows {carry.labels[-1]!r}; sort the frame by time")
    if last:
        return carry, part, len(part), None, at

    def after(new_carry: Optional[_Part], handed: int) -> _Chain:
        return _Chain(new_carry, chain.rows + n_rows, chain.sessions + handed, chain.compute)

    if len(part) == 0:
        return None, None, 0, after(carry, 0), at
    lab = part.labels
    k = int(np.flatnonzero(lab != lab[-1])[-1]) + 1 if lab[0] != lab[-1] else 0
    if k == 0 and carry is not None and len(carry) and carry.labels[-1] == lab[-1]:
        return None, None, 0, after(_Part.concat(carry, part.placed(chain.rows)), 0), at  # the session goes on
    return carry, part, k, after(part.slice(k, len(part)).placed(chain.rows), _sessions(carry, lab[:k])), at


def _profile_part(step: _Step, spec: _Spec) -> "pd.DataFrame":
    """The session table of the whole sessions a step hands over (index ``session``)."""
    carry, part, k, _, (first_row, first_session, compute) = step
    rows = _Part.concat(carry, part.slice(0, k).placed(first_row)) if part is not None else carry
    if rows is None or len(rows) == 0:
        return empty_profile_table(spec.label_dtype).set_index("session")
    offsets = _runs(rows.labels)
    v = rows.values
    labels = rows.labels[offsets[:-1]].astype(spec.label_dtype, copy=False)
    # the data warnings are said once a compute, at the user's line, those about these rows naming them
    # (even when the engine then raises); errors name the frame's row, the session's label and place
    said: List[Tuple[type, str, bool]] = []
    try:
        with collected(rows.rows) as said, input_rows(rows.rows, labels=labels, first_session=first_session):
            if spec.kind == "trades":
                prof = _api.from_trades(v["price"], v["volume"], offsets=offsets, **spec.options)
            else:
                prof = _api.from_bars(v["high"], v["low"], v["close"], v["volume"], open=v.get("open"),
                                      offsets=offsets, **spec.options)
    finally:
        first, last = _label_text(labels[0]), _label_text(labels[-1])
        scope = (f"vpoc.dask, {f'session {first}' if len(labels) == 1 else f'sessions {first} to {last}'} "
                 f"(rows {int(rows.rows[0])} to {int(rows.rows[-1])} of ddf): ")
        _say_once(spec, compute, [(c, scope + m if local else m) for c, m, local in said])
    return profile_table(prof, labels, offsets, rows.timestamp).set_index("session")


# The warnings each recent compute of a dask call has said in this process ((category, message) by the
# call's and the compute's ids): the same warning of several partitions is said once a compute (a process
# of a distributed cluster says it once itself); the next compute says it again.
_SAID: "OrderedDict[Tuple[str, str], set]" = OrderedDict()
_SAID_LOCK = threading.Lock()
_SAID_COMPUTES = 256


def _say_once(spec: _Spec, compute: str, said: List[Tuple[type, str]]) -> None:
    """Issue the data warnings ``said`` by a partition's engine call (vpoc._warnings.collected) that this
    compute of the dask call has not said yet, each pointing at the user's line of the call (``spec.where``)."""
    key = (spec.call, compute)
    for category, message in said:
        with _SAID_LOCK:
            seen = _SAID.setdefault(key, set())
            _SAID.move_to_end(key)
            while len(_SAID) > _SAID_COMPUTES:
                _SAID.popitem(last=False)
            if (category, message) in seen:
                continue
            seen.add((category, message))
        filename, lineno, module = spec.where
        warnings.warn_explicit(message, category, filename, lineno, module=module)


def _get(step: Tuple[Any, ...], i: int) -> Any:
    return step[i]


def _build(ddf: "dd.DataFrame", kind: str, columns: Dict[str, str], timestamp: Optional[str],
           session_column: Optional[str], rule: Optional[SessionRule],
           session_kwargs: Optional[Mapping[str, Any]], tz: Optional[str],
           options: Dict[str, Any], time_unit: Optional[str] = None, label: str = "open",
           interval: Any = None) -> "dd.DataFrame":
    dask = require("dask", "vpoc.dask")
    dd = require("dask.dataframe", "vpoc.dask")

    if not isinstance(ddf, dd.DataFrame):
        raise TypeError(f"ddf must be a dask.dataframe.DataFrame, got {type(ddf).__name__}")
    check_time_unit(time_unit)
    names = set(ddf.columns)
    for role, col in columns.items():
        if col not in names:
            raise ValueError(f"{role}={col!r} is not a column of ddf (columns: {sorted(map(str, names))})")
    _warn_side_columns(names, [*columns.values(), timestamp, session_column], kind)
    session = session_column
    if session is not None and session not in names:
        raise ValueError(f"session_column={session!r} is not a column of ddf")
    if session is not None and rule is not None:
        raise ValueError("give either session_column= (a column of session labels) or session= "
                         "(a rule), not both")
    if session is not None and session_kwargs:
        raise ValueError("session_kwargs apply to session= (a rule), not to a session_column=")
    if session is None:
        rule = "globex" if rule is None else rule
        if not callable(rule) and rule not in _SESSION_RULES:
            raise ValueError(f"session must be one of {_SESSION_RULES} or a callable ts -> Sessions "
                             f"(a column of labels is session_column=), got {rule!r}")
    label = check_label(label)
    step_ns = interval_ns(interval)
    if label == "close" and step_ns is None and timestamp is not None:
        raise ValueError("label='close' in vpoc.dask needs interval= (e.g. '1min'): each partition "
                         "would otherwise infer its own bar interval")
    ts_is_index = False
    if timestamp is not None:
        if timestamp not in names:
            if ddf.index.name != timestamp:
                raise ValueError(f"timestamp={timestamp!r} is neither a column nor the index of ddf; "
                                 "pass timestamp=<column name>" +
                                 (" or timestamp=None" if session is not None else ""))
            ts_is_index = True
    elif rule is not None:
        raise ValueError("session= (a rule) needs timestamps: pass timestamp=<column name> (or "
                         "session_column=<column>)")
    label_dtype = ddf[session].dtype if session is not None else np.dtype(np.int64)
    if session is not None and (not isinstance(label_dtype, np.dtype) or label_dtype.kind not in "iufmM"):
        raise TypeError(f"session column {session!r} must have a numeric or datetime numpy dtype "
                        f"(integers such as YYYYMMDD, datetimes), got {label_dtype}")
    spec = _Spec(kind, dict(columns), timestamp, ts_is_index, session, rule,
                 dict(session_kwargs or {}), tz, time_unit, label, step_ns, options, label_dtype,
                 uuid.uuid4().hex, user_location())
    meta = empty_profile_table(label_dtype).set_index("session")
    parts = ddf.to_delayed()
    n = len(parts)
    prepare = dask.delayed(_prepare, pure=True)
    step_fn = dask.delayed(_step, pure=True)
    get = dask.delayed(_get, pure=True)
    profile = dask.delayed(_profile_part, pure=True)
    outs = []
    carry: Any = None
    for i, p in enumerate(parts):
        step = step_fn(carry, prepare(p, spec), i == n - 1)
        carry = get(step, 3)
        outs.append(profile(step, spec))
    return dd.from_delayed(outs, meta=meta, verify_meta=True)


def _warn_side_columns(names: Any, used: Any, kind: str) -> None:
    """A GuessedDefaultWarning for columns of ddf that hold (or look like) the aggressor side (a trades'
    ``side``, bars' ``buy_volume`` / ``sell_volume``, by vpoc.io's rule for a pandas frame): vpoc.dask
    gives the profile columns only, so they are not used, which would otherwise be silent."""
    from .io import side_lookalikes  # lazily: vpoc.io is pandas' side of vpoc

    cols = side_lookalikes(sorted(map(str, names)), {"used": tuple(str(u) for u in used if u is not None)})
    if cols:
        what = "trades' aggressor side" if kind == "trades" else "bars' buy / sell (aggressor side) volumes"
        warnings.warn(f"vpoc.dask: column(s) {', '.join(map(repr, cols))} of ddf hold or look like the {what}, "
                      "but vpoc.dask gives the profile columns only (no delta, buy / sell totals, delta POC or "
                      "imbalances): they are not used; for the order flow run vpoc.from_" + kind + " on the "
                      "pandas frame (ddf.compute(), or per session)", GuessedDefaultWarning, stacklevel=user_stacklevel())


def _session_args(ddf: Any, session: Any, session_column: Optional[str],
                  sessions: Any) -> Tuple[Optional[SessionRule], Optional[str]]:
    """(rule, column) from ``session=`` / ``session_column=`` and the deprecated spellings:
    ``sessions=`` (the rule, now ``session=``) and ``session=<a column name>`` (now
    ``session_column=``), each with a DeprecationWarning."""
    if sessions is not None:
        warnings.warn("vpoc.dask: sessions= is deprecated; use session= (the same rule: 'globex', "
                      "'rth', 'daily' or a callable), as in vpoc.Live and the CLI",
                      DeprecationWarning, stacklevel=3)
        if session is not None:
            raise ValueError("give session= or its deprecated alias sessions=, not both")
        session = sessions
    if (isinstance(session, str) and session not in _SESSION_RULES
            and session in getattr(ddf, "columns", ())):
        warnings.warn(f"vpoc.dask: session={session!r} naming a column of labels is deprecated; use "
                      f"session_column={session!r} (session= is the session rule everywhere in vpoc)",
                      DeprecationWarning, stacklevel=3)
        if session_column is not None:
            raise ValueError("give session_column= or a column as session= (deprecated), not both")
        return None, session
    if session is not None and not callable(session) and not isinstance(session, str):
        raise TypeError(f"session must be a rule name {_SESSION_RULES} or a callable ts -> Sessions, "
                        f"got {type(session).__name__}")
    return session, session_column


def _engine_options(tick_size: float, ticks_per_row: int, value_area: float, va_method: Optional[str],
                    poc_tie: Optional[str], device: Any, threads: Optional[int], max_rows: int,
                    memory_budget: int, rules: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    # fail early (on the client) on bad options: the engine checks them on an empty CPU call (the
    # device is checked by the workers, which may have GPUs the client lacks). ``rules``: preset= and
    # the peer-rule keywords (docs/presets.md), passed on only when given.
    opts = dict(tick_size=tick_size, ticks_per_row=ticks_per_row, value_area=value_area,
                va_method=va_method, poc_tie=poc_tie, threads=threads, max_rows=max_rows,
                memory_budget=memory_budget, **{k: v for k, v in (rules or {}).items() if v is not None})
    _api.from_trades(np.zeros(0), np.zeros(0), **opts)
    if not isinstance(device, str):
        raise TypeError(f"device must be a string such as 'cpu' or 'cuda:0', got {type(device).__name__}")
    return dict(opts, device=device)


def from_bars(ddf: "dd.DataFrame", *, tick_size: float, session: Optional[SessionRule] = None,
              session_column: Optional[str] = None, session_kwargs: Optional[Mapping[str, Any]] = None,
              timestamp: Optional[str] = "timestamp", tz: Optional[str] = None,
              time_unit: Optional[str] = None, label: str = "open", interval: Any = None,
              sessions: Optional[SessionRule] = None, high: str = "high", low: str = "low", close: str = "close", volume: str = "volume",
              open: Optional[str] = "open", ticks_per_row: int = 1, distribute: Optional[str] = None,
              value_area: Optional[float] = None, va_method: Optional[str] = None, poc_tie: Optional[str] = None,
              device: Any = "cpu", threads: Optional[int] = 1, max_rows: int = 1_000_000,
              memory_budget: int = _api.DEFAULT_MEMORY_BUDGET, preset: Optional[str] = None,
              va_rows: Optional[str] = None, va_compare: Optional[str] = None, va_stop: Optional[str] = None,
              tie_tol: Optional[float] = None, row_label: Optional[str] = None, price_label: Optional[str] = None,
              va_target: Optional[str] = None, bins: Optional[int] = None,
              accumulate: Optional[str] = None, bin_report: Optional[str] = None) -> "dd.DataFrame":
    """Per-session profiles of OHLCV bars in a dask DataFrame (rows in time order), lazily.

    Sessions: ``session=`` is the rule, as everywhere in vpoc: one of :mod:`vpoc.sessions`
    ("globex", the default, "rth", "daily"; ``session_kwargs`` are passed to it, e.g.
    ``{"tz": "America/Chicago"}``) or a callable ``ts -> Sessions`` applied to the int64 ns UTC bar
    open times; or ``session_column=`` names a column of non-decreasing session labels.
    Deprecated (DeprecationWarning, same results): ``sessions=<rule>`` (now ``session=``) and
    ``session=<column name>`` (now ``session_column=``; a column named like a rule is the rule).
    ``label``: the bars are stamped at their "open" (default) or "close"; close stamps become
    open stamps (minus ``interval``, required with "close": seconds or a string such as "1min",
    since each partition would otherwise infer its own), before the session rule sees them. ``timestamp``: the column (or index) of bar times, datetime64 (naive
    ones are in ``tz``) or integer epoch times UTC in ``time_unit`` ("s", "ms", "us", "ns"; None:
    ns; integers that are 1990..2100 times only in another unit raise ValueError); it gives ``start`` / ``end`` (``timestamp=None`` with
    ``session=``: NaT). ``open`` is used when ddf has that column (``distribute="legacy"`` reads it).
    ``threads``: engine threads per task (default 1: dask runs the partitions in parallel).
    Other options (``preset=`` and the rule keywords included) as in :func:`vpoc.from_bars`.
    Returns a dask DataFrame indexed by session label
    with the columns of :data:`vpoc._stream.PROFILE_COLUMNS`; ``compute()`` it. A data warning of
    the partitions' engine calls is said each compute, pointing at the line of this call: a coarse price
    grid once, off-grid prices rounded once for each partition's sessions that round (naming them, their
    rows of ddf and an example row of ddf); an error names the session's label, the row of ddf and
    (``.session``) the session's position in the whole result, as :func:`vpoc.from_bars` on ddf.compute().
    """
    opts = _engine_options(tick_size, ticks_per_row, value_area, va_method, poc_tie, device,
                           threads, max_rows, memory_budget,
                           dict(preset=preset, va_rows=va_rows, va_compare=va_compare, va_stop=va_stop,
                                tie_tol=tie_tol, row_label=row_label, price_label=price_label, va_target=va_target,
                                bins=bins, accumulate=accumulate, bin_report=bin_report))
    if distribute is not None and not isinstance(distribute, str):
        raise TypeError(f"distribute must be a string, got {type(distribute).__name__}")
    _api.from_bars(np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), distribute=distribute,
                   **dict(opts, device="cpu"))
    opts["distribute"] = distribute
    columns = {"high": high, "low": low, "close": close, "volume": volume}
    if open is not None and open in getattr(ddf, "columns", ()):
        columns["open"] = open
    rule, column = _session_args(ddf, session, session_column, sessions)
    return _build(ddf, "bars", columns, timestamp, column, rule, session_kwargs, tz, opts,
                  time_unit, label, interval)


def from_trades(ddf: "dd.DataFrame", *, tick_size: float, session: Optional[SessionRule] = None,
                session_column: Optional[str] = None, session_kwargs: Optional[Mapping[str, Any]] = None,
                timestamp: Optional[str] = "timestamp", tz: Optional[str] = None,
                time_unit: Optional[str] = None, sessions: Optional[SessionRule] = None, price: str = "price", volume: str = "volume", ticks_per_row: int = 1,
                value_area: Optional[float] = None, va_method: Optional[str] = None, poc_tie: Optional[str] = None,
                device: Any = "cpu", threads: Optional[int] = 1, max_rows: int = 1_000_000,
                memory_budget: int = _api.DEFAULT_MEMORY_BUDGET, preset: Optional[str] = None,
                va_rows: Optional[str] = None, va_compare: Optional[str] = None, va_stop: Optional[str] = None,
                tie_tol: Optional[float] = None, row_label: Optional[str] = None, price_label: Optional[str] = None,
                va_target: Optional[str] = None, bins: Optional[int] = None,
              accumulate: Optional[str] = None, bin_report: Optional[str] = None) -> "dd.DataFrame":
    """Per-session profiles of trades (``price``, ``volume`` columns) in a dask DataFrame, lazily.

    Sessions (``session=`` rule or ``session_column=``), timestamps, ``threads`` and the result: as in
    :func:`from_bars` (trades are instants: no ``label``); other options as in :func:`vpoc.from_trades`.
    """
    opts = _engine_options(tick_size, ticks_per_row, value_area, va_method, poc_tie, device,
                           threads, max_rows, memory_budget,
                           dict(preset=preset, va_rows=va_rows, va_compare=va_compare, va_stop=va_stop,
                                tie_tol=tie_tol, row_label=row_label, price_label=price_label, va_target=va_target,
                                bins=bins, accumulate=accumulate, bin_report=bin_report))
    rule, column = _session_args(ddf, session, session_column, sessions)
    return _build(ddf, "trades", {"price": price, "volume": volume}, timestamp, column, rule,
                  session_kwargs, tz, opts, time_unit)
