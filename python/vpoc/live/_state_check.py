"""Validation of a ``vpoc.Live`` state (``Live.state_dict()``) before ``Live.from_state`` uses it.

Contract: every field is checked for its type, shape, range and its consistency with the other
fields; a state that ``state_dict()`` could not have produced raises TypeError (wrong type) or
ValueError (wrong value, length or count) naming the field, e.g. ``state['done'][2]['volume']``.
Array fields may come back as lists (a state stored as JSON) and are returned as the numpy arrays
``state_dict()`` gives. The current session's bars are re-validated by the engine as they are
replayed (NaN, high < low, negative volume, max_rows, ...).

This makes ``from_state`` safe on a state read from ``.npz`` / JSON. It does not make unpickling
safe: ``pickle.loads`` runs code chosen by whoever wrote the bytes before vpoc sees anything, so
pickles (of ``Live`` or of anything else) must come from a trusted source.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["STATE_KEYS", "STATE_VERSION", "check_envelope", "check_state", "_array", "_BAR_KEYS",
           "_CURRENT_KEYS", "_DONE_KEYS", "_FLOAT_FIELDS", "_SIDE_CURRENT_KEYS", "_SIDE_DONE_KEYS",
           "_SIDE_TOTAL_KEYS"]

STATE_VERSION = 1
STATE_KEYS = ("version", "config", "has_open", "n_dropped", "n_rows", "last_ts", "label", "done",
              "done_labels", "comp", "naked", "tail", "session_rows", "session_columns", "current")
_FLOAT_FIELDS = ("poc", "vah", "val", "total_volume", "va_volume")
_ROW_FIELDS = ("poc_row", "vah_row", "val_row", "low_row", "n_rows")
_DONE_KEYS = _FLOAT_FIELDS + _ROW_FIELDS + ("volume",)
_BAR_KEYS = ("high", "low", "close", "open", "volume", "ts")
_CURRENT_KEYS = _BAR_KEYS + ("int_volume",)
# Live(side=True) only: a finished session's buy / sell rows and delta; the current rows' buy / sell volume
_SIDE_DONE_KEYS = ("buy_volume", "sell_volume", "delta")
# ... and its buy / sell totals (both or neither: states written before they were kept have none, and get
# the exact sums of the float64 rows, which are the totals for whole-number volumes)
_SIDE_TOTAL_KEYS = ("buy_total", "sell_total")
_SIDE_CURRENT_KEYS = ("buy", "sell")
_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1
_REL = 1e-9  # the engine's tie band, relative


def _name(path: Sequence[Any]) -> str:
    return "state" + "".join(f"[{p!r}]" for p in path)


def _dict(x: Any, path: Sequence[Any], keys: Sequence[str]) -> Dict[str, Any]:
    if not isinstance(x, dict):
        raise TypeError(f"{_name(path)} must be a dict, got {type(x).__name__}")
    missing = [k for k in keys if k not in x]
    if missing:
        raise ValueError(f"{_name(path)} is missing {missing}")
    unknown = sorted(map(str, set(x) - set(keys)))
    if unknown:
        raise ValueError(f"{_name(path)} has unknown key(s) {unknown}")
    return x


def _list(x: Any, path: Sequence[Any], length: Optional[int] = None) -> List[Any]:
    if not isinstance(x, (list, tuple)):
        raise TypeError(f"{_name(path)} must be a list, got {type(x).__name__}")
    if length is not None and len(x) != length:
        raise ValueError(f"{_name(path)} has {len(x)} entries, expected {length}")
    return list(x)


def _int(x: Any, path: Sequence[Any], lo: Optional[int] = None, none: bool = False) -> Optional[int]:
    if x is None and none:
        return None
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{_name(path)} must be an integer{' or None' if none else ''}, "
                        f"got {type(x).__name__}")
    v = int(x)
    if not _INT64_MIN < v <= _INT64_MAX:
        raise ValueError(f"{_name(path)} = {v} is outside the int64 range (or -2**63, NaT)")
    if lo is not None and v < lo:
        raise ValueError(f"{_name(path)} must be >= {lo}, got {v}")
    return v


def _bool(x: Any, path: Sequence[Any], none: bool = False) -> Optional[bool]:
    if x is None and none:
        return None
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{_name(path)} must be True or False{' or None' if none else ''}, "
                        f"got {type(x).__name__}")
    return bool(x)


def _float(x: Any, path: Sequence[Any], nan: bool = False) -> float:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{_name(path)} must be a number, got {type(x).__name__}")
    v = float(x)
    if not (np.isfinite(v) or (nan and np.isnan(v))):
        raise ValueError(f"{_name(path)} must be finite{' or NaN' if nan else ''}, got {v}")
    return v


def _array(x: Any, path: Sequence[Any], kind: str, length: Optional[int] = None,
           finite: bool = True, lo: Optional[float] = None) -> np.ndarray:
    """A 1-D float64 (kind "f"), int64 ("i") or float32 ("f4") array."""
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{_name(path)} must be a 1-D numeric array: {e}") from None
    if arr.ndim == 1 and arr.size == 0:  # an empty list (JSON) has no dtype of its own
        arr = arr.astype(np.int64 if kind == "i" else np.float64)
    ok = "iu" if kind == "i" else "iuf"
    if arr.dtype.kind not in ok or arr.dtype == np.bool_:
        want = "an integer" if kind == "i" else "a numeric"
        raise TypeError(f"{_name(path)} must be {want} array, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{_name(path)} must be 1-D, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{_name(path)} has length {arr.shape[0]}, expected {length}")
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > _INT64_MAX:
        raise ValueError(f"{_name(path)} holds values outside the int64 range")
    dtype = {"f": np.float64, "i": np.int64, "f4": np.float32}[kind]
    out = np.ascontiguousarray(arr, dtype=dtype)
    if kind == "f4" and arr.dtype.kind == "f" and not np.array_equal(out, arr, equal_nan=True):
        raise ValueError(f"{_name(path)} holds values that are not float32")
    if finite and kind != "i":
        bad = ~np.isfinite(out)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{_name(path)}[{i}] = {out[i]} is not finite")
    if kind == "i" and out.size and np.any(out == _INT64_MIN):
        raise ValueError(f"{_name(path)}[{int(np.argmax(out == _INT64_MIN))}] is -2**63 (NaT / NO_ROW)")
    if lo is not None and out.size and np.any(out < lo):
        i = int(np.argmax(out < lo))
        raise ValueError(f"{_name(path)}[{i}] = {out[i]} must be >= {lo}")
    return out


def _sorted(ts: np.ndarray, path: Sequence[Any]) -> None:
    if ts.size > 1 and np.any(ts[1:] < ts[:-1]):
        i = int(np.argmax(ts[1:] < ts[:-1])) + 1
        raise ValueError(f"{_name(path)}[{i}] is before [{i - 1}]: rows are in time order")


def check_envelope(state: Any) -> Dict[str, Any]:
    """The state's top level (keys, version); returns its ``config`` (the constructor's
    arguments, which the constructor validates)."""
    if not isinstance(state, dict):
        hint = (": pass dict(numpy.load(path)) of a state_dict(flat=True)" if type(state).__name__ == "NpzFile"
                else "")
        raise TypeError(f"state must be a dict from Live.state_dict() (version {STATE_VERSION}), "
                        f"got {type(state).__name__}{hint}")
    version = state.get("version")
    if isinstance(version, (bool, np.bool_)) or version != STATE_VERSION:
        raise ValueError(f"state must be a dict from Live.state_dict() (version {STATE_VERSION}); "
                         f"state['version'] is {version!r}")
    _dict(state, (), STATE_KEYS + (("carry",) if "carry" in state else ()))  # carry: window_across_sessions
    if not isinstance(state["config"], dict):
        raise TypeError(f"state['config'] must be a dict, got {type(state['config']).__name__}")
    return state["config"]


def _bars(x: Any, path: Sequence[Any], has_open: bool) -> Dict[str, Any]:
    """One finished session's bars (``state['tail'][k]``)."""
    d = _dict(x, path, _BAR_KEYS)
    high = _array(d["high"], (*path, "high"), "f")
    n = high.shape[0]
    if n == 0:
        raise ValueError(f"{_name((*path, 'high'))} is empty (a finished session has bars)")
    low = _array(d["low"], (*path, "low"), "f", n)
    close = _array(d["close"], (*path, "close"), "f", n)
    volume = _array(d["volume"], (*path, "volume"), "f", n, lo=0.0)
    ts = _array(d["ts"], (*path, "ts"), "i", n)
    _sorted(ts, (*path, "ts"))
    if has_open:
        open_ = _array(d["open"], (*path, "open"), "f", n)
    elif d["open"] is not None:
        raise ValueError(f"{_name((*path, 'open'))} must be None (state['has_open'] is False)")
    else:
        open_ = None
    for k, p in (("high", low), ("close", close), ("open", open_)):
        if p is None:
            continue
        bad = np.flatnonzero((p < low) | (p > high)) if k != "high" else np.flatnonzero(high < low)
        if bad.size:
            raise ValueError(f"{_name((*path, k))}[{bad[0]}] is outside its bar's [low, high]")
    return dict(high=high, low=low, close=close, open=open_, volume=volume, ts=ts)


def _session(x: Any, path: Sequence[Any], row_size: float, sided: bool = False) -> Dict[str, np.ndarray]:
    """One finished session's profile (``state['done'][k]``; with ``sided`` its side rows and delta)."""
    totals = _SIDE_TOTAL_KEYS if sided and isinstance(x, dict) and any(k in x for k in _SIDE_TOTAL_KEYS) else ()
    d = _dict(x, path, _DONE_KEYS + (_SIDE_DONE_KEYS + totals if sided else ()))
    out: Dict[str, np.ndarray] = {}
    for k in _FLOAT_FIELDS:
        out[k] = _array(d[k], (*path, k), "f", 1)
    for k in _ROW_FIELDS:
        out[k] = _array(d[k], (*path, k), "i", 1)
    n = int(out["n_rows"][0])
    if n < 1:
        raise ValueError(f"{_name((*path, 'n_rows'))} must be >= 1 (a finished session has rows), got {n}")
    vol = out["volume"] = _array(d["volume"], (*path, "volume"), "f", n, lo=0.0)
    low = int(out["low_row"][0])
    if low + n - 1 > _INT64_MAX:
        raise ValueError(f"{_name((*path, 'low_row'))} + n_rows leaves the int64 range")
    for k in ("poc_row", "vah_row", "val_row"):
        r = int(out[k][0])
        if not low <= r <= low + n - 1:
            raise ValueError(f"{_name((*path, k))} = {r} is outside the profile's rows "
                             f"[{low}, {low + n - 1}]")
    if out["val_row"][0] > out["vah_row"][0]:
        raise ValueError(f"{_name((*path, 'val_row'))} is above vah_row")
    for price, row in (("poc", "poc_row"), ("vah", "vah_row"), ("val", "val_row")):
        if out[price][0] != float(out[row][0]) * row_size:
            raise ValueError(f"{_name((*path, price))} = {out[price][0]} is not {row} x row size "
                             f"({float(out[row][0]) * row_size})")
    total, va = float(out["total_volume"][0]), float(out["va_volume"][0])
    vsum, vmax = float(np.sum(vol)), float(np.max(vol))
    if abs(total - vsum) > _REL * max(vsum, 1.0):
        raise ValueError(f"{_name((*path, 'total_volume'))} = {total} is not the sum of volume ({vsum})")
    if not 0.0 <= va <= total * (1 + _REL):
        raise ValueError(f"{_name((*path, 'va_volume'))} = {va} is not in [0, total_volume]")
    if vol[int(out["poc_row"][0]) - low] < vmax - 10 * _REL * vmax:
        raise ValueError(f"{_name((*path, 'poc_row'))} is not a row of the largest volume")
    if sided:
        _side_rows(d, out, path, vol)
    return {k: out[k] for k in tuple(d) + (() if not sided or totals else _SIDE_TOTAL_KEYS)}  # state_dict()'s order


def _side_rows(d: Dict[str, Any], out: Dict[str, np.ndarray], path: Sequence[Any], vol: np.ndarray) -> None:
    """A finished session's buy / sell rows (as long as its volume, >= 0, together at most the
    row's volume) and its delta (their totals' difference)."""
    n = vol.shape[0]
    buy = out["buy_volume"] = _array(d["buy_volume"], (*path, "buy_volume"), "f", n, lo=0.0)
    sell = out["sell_volume"] = _array(d["sell_volume"], (*path, "sell_volume"), "f", n, lo=0.0)
    delta = out["delta"] = _array(d["delta"], (*path, "delta"), "f", 1)
    over = np.flatnonzero(buy + sell > vol + _REL * max(float(np.max(vol)), 1.0))
    if over.size:
        i = int(over[0])
        raise ValueError(f"{_name((*path, 'buy_volume'))}[{i}] + sell_volume[{i}] is more than the row's "
                         f"volume ({vol[i]})")
    b, s = math.fsum(buy.tolist()), math.fsum(sell.tolist())
    if abs(float(delta[0]) - (b - s)) > _REL * max(b + s, 1.0):
        raise ValueError(f"{_name((*path, 'delta'))} = {float(delta[0])} is not buy - sell volume ({b - s})")
    if "buy_total" not in d:  # a state from before the totals were kept
        out["buy_total"], out["sell_total"] = np.array([b]), np.array([s])
        return
    for k, rows in (("buy_total", b), ("sell_total", s)):
        t = out[k] = _array(d[k], (*path, k), "f", 1, lo=0.0)
        if abs(float(t[0]) - rows) > _REL * max(rows, 1.0):
            raise ValueError(f"{_name((*path, k))} = {float(t[0])} is not the sum of its rows ({rows})")


def _side_current(cur: Dict[str, Any], path: Sequence[Any], bars: bool, n: int) -> None:
    """The current rows' buy / sell volume: bars by from_bars' rule (vpoc._side_profiles); a
    trade's buy volume is its volume or 0, its sell volume too, never both."""
    from .._side_profiles import bar_side_volumes, side_rules

    buy = cur["buy"] = _array(cur["buy"], (*path, "buy"), "f", n, lo=0.0)
    sell = cur["sell"] = _array(cur["sell"], (*path, "sell"), "f", n, lo=0.0)
    v = cur["volume"]
    if bars:
        try:
            bar_side_volumes(buy, sell, v, cur["high"], side_rules(None, None))
        except ValueError as e:
            raise ValueError(f"{_name(path)}: {e}") from None
        return
    bad = np.flatnonzero(((buy != 0) & (buy != v)) | ((sell != 0) & (sell != v)) | ((buy != 0) & (sell != 0)))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{_name((*path, 'buy'))}[{i}] = {buy[i]}, sell[{i}] = {sell[i]}: a trade's buy and "
                         f"sell volume are its volume ({v[i]}) on its side and 0 on the other")


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b)))) \
        if a.dtype.kind == "f" or b.dtype.kind == "f" else bool(np.array_equal(a, b))


def _check_tail(tail: List[Dict[str, Any]], done: List[Dict[str, np.ndarray]],
                profile_of: Callable[[Dict[str, Any]], Dict[str, np.ndarray]]) -> None:
    """Each kept session's bars give the finished session they stand beside in ``done``."""
    S, T = len(done), len(tail)
    for k, t in enumerate(tail):
        j = S - T + k
        try:
            got = profile_of(t)
        except ValueError as e:
            raise ValueError(f"state['tail'][{k}]: {e}") from None
        for field in _DONE_KEYS:  # the profile (the side rows are checked with the session)
            want = done[j][field]
            if not _same(got[field], want):
                raise ValueError(f"state['tail'][{k}] is not the bars of state['done'][{j}]: they give "
                                 f"{field} {got[field][:4]}, the session holds {want[:4]}")


def _check_comp(comp: List[Tuple[float, ...]], done: List[Dict[str, np.ndarray]],
                composites_of: Callable[[List[Dict[str, np.ndarray]]], List[Tuple[float, ...]]]) -> None:
    """Each composite is that of the finished sessions ending where it stands."""
    want = composites_of(done)
    for k, (c, w) in enumerate(zip(comp, want)):
        if not _same(c, w):
            raise ValueError(f"state['comp'][{k}] = {tuple(c)} is not the composite of the sessions "
                             f"ending at state['done'][{k}] ({tuple(w)})")


def _columns(cur: Dict[str, Any], path: Sequence[Any], bars: bool, has_open: Optional[bool]) -> int:
    """The rows of ``cur`` (``state['current']`` or ``state['carry']``) checked and normalised in place:
    ts sorted int64, the prices and volume a Live of this kind reads finite (volume >= 0) and as long
    as ts, the others empty or as long; returns their number (> 0)."""
    ts = _array(cur["ts"], (*path, "ts"), "i")
    n = ts.shape[0]
    if n == 0:
        raise ValueError(f"{_name((*path, 'ts'))} is empty (state_dict() gives None then)")
    _sorted(ts, (*path, "ts"))
    used = ("high", "low", "close", "volume") if bars else ("high", "volume")
    if has_open:
        used += ("open",)
    for k in _BAR_KEYS[:5]:
        arr = _array(cur[k], (*path, k), "f", finite=k in used, lo=0.0 if k == "volume" else None)
        if k in used and arr.shape[0] != n:
            raise ValueError(f"{_name((*path, k))} has length {arr.shape[0]}, expected {n}")
        if k not in used and arr.shape[0] not in (0, n):
            raise ValueError(f"{_name((*path, k))} has length {arr.shape[0]}, expected 0 or {n}")
        cur[k] = arr
    cur["ts"] = ts
    return n


def _carry(st: Dict[str, Any], across: bool, bars: bool, has_open: Optional[bool],
           last_ts: Optional[int]) -> Optional[Dict[str, Any]]:
    """``state['carry']`` (window_across_sessions only: the rows carried into the current session
    from earlier ones, or None): their columns as ``current``'s, no later than state['last_ts'];
    whether a later window reaches them all is checked as the Live takes them."""
    if across != ("carry" in st):
        raise ValueError("state is missing ['carry'] (a Live with window_across_sessions=True records it)" if across
                         else "state has unknown key(s) ['carry'] (only window_across_sessions=True records it)")
    if not across or st["carry"] is None:
        return None
    given = st["carry"]
    keys = _BAR_KEYS + (("prev_ts",) if isinstance(given, dict) and "prev_ts" in given else ())  # older: none
    carry = dict(_dict(given, ("carry",), keys))
    if has_open is None:
        raise ValueError("state['carry'] holds rows but state['n_rows'] is 0")
    _columns(carry, ("carry",), bars, has_open)
    if last_ts is not None and carry["ts"][-1] > last_ts:
        raise ValueError(f"state['last_ts'] = {last_ts} is before state['carry']['ts'][-1]")
    if carry.get("prev_ts") is not None:  # the newest finished row not carried: before the carried ones
        prev = _int(carry["prev_ts"], ("carry", "prev_ts"))
        if prev > carry["ts"][0]:
            raise ValueError(f"state['carry']['prev_ts'] = {prev} is after state['carry']['ts'][0]")
        carry["prev_ts"] = prev
    return carry


def check_state(state: Dict[str, Any], *, bars: bool, row_size: float, tail_n: int,
                session_rows: bool, profile_of: Optional[Callable[..., Any]] = None,
                composites_of: Optional[Callable[..., Any]] = None, sided: bool = False,
                across: bool = False) -> Dict[str, Any]:
    """Every field of ``state`` (whose envelope passed :func:`check_envelope`) checked and
    normalised; ``bars``, ``row_size``, ``tail_n`` (bars kept per finished session for the
    lookbacks), ``session_rows`` (session_features rows kept): the restored Live's settings;
    ``profile_of`` (bars -> profile arrays) and ``composites_of`` (done -> composites), when
    given, check ``tail`` and ``comp`` against the finished sessions; ``sided``: a Live with
    side=True (its finished sessions' side rows, its current rows' buy / sell volume); ``across``:
    window_across_sessions=True (``state['carry']``)."""
    st = dict(state)
    n_rows = _int(st["n_rows"], ("n_rows",), 0)
    n_dropped = _int(st["n_dropped"], ("n_dropped",), 0)
    has_open = _bool(st["has_open"], ("has_open",), none=True)
    last_ts = _int(st["last_ts"], ("last_ts",), none=True)
    label = _int(st["label"], ("label",), 0, none=True)
    if (has_open is None) != (n_rows == 0):
        raise ValueError(f"state['has_open'] is {has_open!r} but state['n_rows'] is {n_rows} (it is "
                         "None exactly while no row has been kept)")
    if not bars and has_open:
        raise ValueError("state['has_open'] is True but this Live takes trades")
    if (last_ts is None) != (n_rows + n_dropped == 0):
        raise ValueError(f"state['last_ts'] is {last_ts!r} but {n_rows} rows were kept and "
                         f"{n_dropped} dropped (it is None exactly before the first row)")

    done = [_session(d, ("done", k), row_size, sided) for k, d in enumerate(_list(st["done"], ("done",)))]
    S = len(done)
    labels = [_int(x, ("done_labels", k), 0)
              for k, x in enumerate(_list(st["done_labels"], ("done_labels",), S))]
    for k in range(1, S):
        if labels[k] < labels[k - 1]:
            raise ValueError(f"state['done_labels'][{k}] = {labels[k]} is below the one before it")
    if S and has_open is None:
        raise ValueError(f"state['done'] has {S} sessions but state['n_rows'] is 0")

    comp = [tuple(_float(v, ("comp", k, i), nan=True) for i, v in enumerate(_list(c, ("comp", k), 3)))
            for k, c in enumerate(_list(st["comp"], ("comp",), S if bars else 0))]
    naked: List[Tuple[int, int, float]] = []
    for k, x in enumerate(_list(st["naked"], ("naked",))):
        j, r, p = _list(x, ("naked", k), 3)
        j = _int(j, ("naked", k, 0), 0)
        r = _int(r, ("naked", k, 1))
        p = _float(p, ("naked", k, 2))
        if not bars:
            raise ValueError("state['naked'] must be empty for a Live of trades")
        if j >= S or (naked and j <= naked[-1][0]):
            raise ValueError(f"state['naked'][{k}] names session {j}: not a finished session after "
                             "the previous entry's")
        if r != int(done[j]["poc_row"][0]) or p != float(done[j]["poc"][0]):
            raise ValueError(f"state['naked'][{k}] = ({j}, {r}, {p}) is not the POC of "
                             f"state['done'][{j}]")
        naked.append((j, r, p))
    if bars and S and (not naked or naked[-1][0] != S - 1):
        raise ValueError("state['naked'] must end with the last finished session's POC")

    tail_len = min(S, tail_n) if bars else 0
    tail = [_bars(t, ("tail", k), bool(has_open))
            for k, t in enumerate(_list(st["tail"], ("tail",), tail_len))]
    for k in range(1, len(tail)):
        if tail[k]["ts"][0] < tail[k - 1]["ts"][-1]:
            raise ValueError(f"state['tail'][{k}]['ts'][0] is before the session before it ended")

    if profile_of is not None:
        _check_tail(tail, done, profile_of)
    if composites_of is not None and bars and S:
        _check_comp(comp, done, composites_of)

    rows_want = S if session_rows else 0
    rows = [_array(r, ("session_rows", k), "f4", finite=False)
            for k, r in enumerate(_list(st["session_rows"], ("session_rows",), rows_want))]
    cols = st["session_columns"]
    if cols is None:
        if rows:
            raise ValueError("state['session_columns'] is None but state['session_rows'] is not empty")
    else:
        cols = tuple(_list(cols, ("session_columns",)))
        if not all(isinstance(c, str) for c in cols) or len(set(cols)) != len(cols):
            raise TypeError("state['session_columns'] must be distinct strings")
        for k, r in enumerate(rows):
            if r.shape[0] != len(cols):
                raise ValueError(f"state['session_rows'][{k}] has length {r.shape[0]}, expected "
                                 f"{len(cols)} (state['session_columns'])")

    cur = st["current"]
    kept = sum(t["ts"].shape[0] for t in tail)
    if cur is not None:
        path = ("current",)
        _dict(cur, path, _CURRENT_KEYS + (_SIDE_CURRENT_KEYS if sided else ()))
        if label is None:
            raise ValueError("state['current'] holds rows but state['label'] is None")
        cur = dict(cur)
        n = _columns(cur, path, bars, has_open)
        ts = cur["ts"]
        if sided:
            _side_current(cur, path, bars, n)
        cur["int_volume"] = _bool(cur["int_volume"], (*path, "int_volume"))
        if cur["int_volume"]:
            v = cur["volume"]
            bad = (v != np.floor(v)) | (v >= 2.0**63)
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(f"state['current']['int_volume'] is True but "
                                 f"state['current']['volume'][{i}] = {v[i]} is not an int64 integer")
        if tail and ts[0] < tail[-1]["ts"][-1]:
            raise ValueError("state['current']['ts'][0] is before the last finished session's end")
        if last_ts is not None and ts[-1] > last_ts:
            raise ValueError(f"state['last_ts'] = {last_ts} is before state['current']['ts'][-1]")
        if S and label < labels[-1]:
            raise ValueError(f"state['label'] = {label} is older than the last finished session's "
                             f"({labels[-1]})")
        kept += n
    elif label is not None:
        raise ValueError(f"state['label'] is {label} but state['current'] is None (no session is open)")
    if n_rows < kept + S - len(tail):  # the tail's bars, the current rows, >= 1 per other session
        raise ValueError(f"state['n_rows'] = {n_rows} is fewer than the rows the state holds")
    if tail and last_ts is not None and tail[-1]["ts"][-1] > last_ts:
        raise ValueError(f"state['last_ts'] = {last_ts} is before the last finished session's end")
    carry = _carry(st, across, bars, has_open, last_ts)
    if carry is not None and cur is not None and carry["ts"][-1] > cur["ts"][0]:
        raise ValueError("state['carry']['ts'][-1] is after state['current']['ts'][0]")
    st.update(n_rows=n_rows, n_dropped=n_dropped, has_open=has_open, last_ts=last_ts, label=label,
              done=done, done_labels=labels, comp=comp, naked=naked, tail=tail,
              session_rows=rows, session_columns=cols, current=cur)
    if across:
        st["carry"] = carry
    return st
