"""The flat layout of a vpoc.Live state: one level of numpy arrays and strings, for .npz and JSON.

Contract: ``unflatten(flatten(st))`` is ``st``; ``unflatten`` checks the layout naming the flat key
(``check_state`` checks the rest); ``is_flat`` tells a flat state from a nested one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, List

import numpy as np

from ._state_check import (STATE_VERSION, _array, _BAR_KEYS, _CURRENT_KEYS, _DONE_KEYS, _FLOAT_FIELDS,
                           _SIDE_CURRENT_KEYS, _SIDE_DONE_KEYS, _SIDE_TOTAL_KEYS)

__all__ = ["FLAT_KEYS", "FLAT_SIDE_KEYS", "FLAT_CARRY_KEYS", "FLAT_LAYOUT", "flatten", "is_flat", "unflatten"]

# state_dict(flat=True): one level of numpy arrays (int64 / float64 / float32 / str) and plain
# strings and integers, so that np.savez + np.load(allow_pickle=False) and JSON keep it whole.
# Ragged parts are laid end to end with their lengths (done_n_rows, tail_rows); None is -1
# (has_open) or -2**63 (last_ts, label: NaT / NO_ROW); no current session is current_ts empty.

FLAT_LAYOUT = "flat"
_NONE = -2**63
_FLAT_DONE = tuple(f"done_{k}" for k in _DONE_KEYS)
FLAT_KEYS = (("layout", "version", "config", "has_open", "n_dropped", "n_rows", "last_ts", "label")
             + _FLAT_DONE + ("done_labels", "comp", "naked_session", "naked_row", "naked_price",
                             "tail_rows") + tuple(f"tail_{k}" for k in _BAR_KEYS)
             + ("session_rows", "session_columns") + tuple(f"current_{k}" for k in _CURRENT_KEYS))
#: Live(side=True) only (all or none): the finished sessions' buy / sell rows (laid out as done_volume)
#: and deltas, the current rows' buy / sell volume.
FLAT_SIDE_KEYS = tuple(f"done_{k}" for k in _SIDE_DONE_KEYS) + tuple(f"current_{k}" for k in _SIDE_CURRENT_KEYS)
#: with them (both or neither; states written before they were kept have none): the finished sessions' buy / sell totals
FLAT_SIDE_TOTAL_KEYS = tuple(f"done_{k}" for k in _SIDE_TOTAL_KEYS)
#: Live(window_across_sessions=True) only (all or none): the rows carried into the current session (empty: none).
FLAT_CARRY_KEYS = tuple(f"carry_{k}" for k in _BAR_KEYS)
#: with them since prev_ts was recorded: the newest finished row not carried (-2**63: none)
FLAT_CARRY_PREV = "carry_prev_ts"


def is_flat(state: Any) -> bool:
    """Whether ``state`` is a flat state (a dict or an ``np.load`` result with layout "flat")."""
    if not isinstance(state, Mapping) or "layout" not in state:
        return False
    try:
        return str(np.asarray(state["layout"])) == FLAT_LAYOUT
    except Exception:  # noqa: BLE001 - anything else is not a flat state
        return False


def _json_config(config: Dict[str, Any]) -> str:
    import json

    from .._time import interval_ns

    def plain(x: Any, path: str) -> Any:
        if isinstance(x, dict):
            return {str(k): plain(v, f"{path}[{k!r}]") for k, v in x.items()}
        if isinstance(x, (list, tuple, np.ndarray)):
            return [plain(v, f"{path}[{i}]") for i, v in enumerate(np.asarray(x).tolist()
                                                                     if isinstance(x, np.ndarray) else x)]
        if isinstance(x, (np.integer, np.floating, np.bool_, np.str_)):
            return x.item()
        if x is None or isinstance(x, (str, int, float, bool)):
            return x
        raise TypeError(f"state_dict(flat=True) stores the Live's settings as JSON, but {path} is "
                        f"a {type(x).__name__}; pass a name (e.g. a calendar's name) to Live instead")

    c = dict(config)
    if c.get("interval") is not None and not isinstance(c["interval"], (str, int, float)):
        c["interval"] = f"{interval_ns(c['interval'])}ns"
    return json.dumps(plain(c, "config"))


def flatten(st: Dict[str, Any]) -> Dict[str, Any]:
    """The flat layout of a nested state (from ``Live.state_dict()``)."""
    done, tail, cur = st["done"], st["tail"], st["current"]
    f64, i64 = np.float64, np.int64
    cat = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt)  # noqa: E731
    out: Dict[str, Any] = dict(
        layout=FLAT_LAYOUT, version=STATE_VERSION, config=_json_config(st["config"]),
        has_open=-1 if st["has_open"] is None else int(st["has_open"]),
        n_dropped=int(st["n_dropped"]), n_rows=int(st["n_rows"]),
        last_ts=_NONE if st["last_ts"] is None else int(st["last_ts"]),
        label=_NONE if st["label"] is None else int(st["label"]))
    for k, fk in zip(_DONE_KEYS, _FLAT_DONE):
        out[fk] = cat([d[k] for d in done], f64 if k in _FLOAT_FIELDS or k == "volume" else i64)
    out["done_labels"] = np.asarray(st["done_labels"], dtype=i64)
    out["comp"] = np.asarray(st["comp"], dtype=f64).reshape(len(st["comp"]), 3)
    naked = st["naked"]
    out["naked_session"] = np.asarray([x[0] for x in naked], dtype=i64)
    out["naked_row"] = np.asarray([x[1] for x in naked], dtype=i64)
    out["naked_price"] = np.asarray([x[2] for x in naked], dtype=f64)
    out["tail_rows"] = np.asarray([t["ts"].shape[0] for t in tail], dtype=i64)
    for k in _BAR_KEYS:
        out[f"tail_{k}"] = cat([t[k] for t in tail if t[k] is not None], i64 if k == "ts" else f64)
    rows, cols = st["session_rows"], st["session_columns"]
    out["session_rows"] = np.asarray(np.stack(rows) if rows else np.zeros((0, len(cols or ()))),
                                     dtype=np.float32)
    out["session_columns"] = np.asarray(list(cols or ()), dtype=np.str_)
    for k in _BAR_KEYS:
        out[f"current_{k}"] = np.zeros(0, i64 if k == "ts" else f64) if cur is None else \
            np.asarray(cur[k], dtype=i64 if k == "ts" else f64)
    out["current_int_volume"] = 0 if cur is None else int(bool(cur["int_volume"]))
    if st["config"].get("side"):
        for k in _SIDE_DONE_KEYS + (_SIDE_TOTAL_KEYS if all(_SIDE_TOTAL_KEYS[0] in d for d in done) else ()):
            out[f"done_{k}"] = cat([d[k] for d in done], f64)
        for k in _SIDE_CURRENT_KEYS:
            out[f"current_{k}"] = np.zeros(0, f64) if cur is None else np.asarray(cur[k], dtype=f64)
    if "carry" in st:
        for k in _BAR_KEYS:
            c = None if st["carry"] is None else st["carry"][k]
            out[f"carry_{k}"] = np.zeros(0, i64 if k == "ts" else f64) if c is None else \
                np.asarray(c, dtype=i64 if k == "ts" else f64)
        prev = None if st["carry"] is None else st["carry"].get("prev_ts")
        out[FLAT_CARRY_PREV] = _NONE if prev is None else int(prev)
    return out


def _flat_int(x: Any, key: str) -> int:
    a = np.asarray(x)
    if a.ndim != 0 or a.dtype.kind not in "iu":
        raise TypeError(f"state[{key!r}] must be an integer, got {a.dtype} of shape {a.shape}")
    return int(a)


def _flat_str(x: Any, key: str) -> str:
    a = np.asarray(x)
    if a.ndim != 0 or a.dtype.kind != "U":
        raise TypeError(f"state[{key!r}] must be a string, got {a.dtype} of shape {a.shape}")
    return str(a)


def _split(flat: np.ndarray, lengths: np.ndarray, key: str, len_key: str) -> List[np.ndarray]:
    if lengths.size and lengths.min() < 0:
        raise ValueError(f"state[{len_key!r}] holds a negative length")
    if int(lengths.sum()) != flat.shape[0]:
        raise ValueError(f"state[{key!r}] has length {flat.shape[0]}, expected {int(lengths.sum())} "
                         f"(the sum of state[{len_key!r}])")
    offs = np.r_[0, np.cumsum(lengths)]
    return [flat[offs[i]:offs[i + 1]] for i in range(lengths.shape[0])]


def unflatten(state: Any) -> Dict[str, Any]:
    """The nested state of a flat one (from ``state_dict(flat=True)``, ``np.load`` or JSON),
    its layout checked naming the flat key; ``check_state`` checks the rest."""
    import json

    flat = dict(state)
    missing = [k for k in FLAT_KEYS if k not in flat]
    if missing:
        raise ValueError(f"state is missing {missing} (a flat state from Live.state_dict(flat=True))")
    unknown = sorted(map(str, set(flat) - set(FLAT_KEYS) - set(FLAT_SIDE_KEYS) - set(FLAT_SIDE_TOTAL_KEYS)
                         - set(FLAT_CARRY_KEYS)
                         - ({FLAT_CARRY_PREV} if FLAT_CARRY_KEYS[0] in flat else set())))
    if unknown:
        raise ValueError(f"state has unknown key(s) {unknown}")
    carried = [k for k in FLAT_CARRY_KEYS if k in flat]
    if carried and len(carried) != len(FLAT_CARRY_KEYS):
        raise ValueError(f"state is missing {[k for k in FLAT_CARRY_KEYS if k not in flat]} (the carry keys "
                         "of a Live with window_across_sessions=True come all together)")
    carry = {k[6:]: _array(flat[k], (k,), "i" if k == "carry_ts" else "f", finite=False) for k in carried}
    if carried and FLAT_CARRY_PREV in flat:  # states of earlier versions have none
        prev = _flat_int(flat[FLAT_CARRY_PREV], FLAT_CARRY_PREV)
        carry["prev_ts"] = None if prev == _NONE else prev
    sided = [k for k in FLAT_SIDE_KEYS if k in flat]
    if sided and len(sided) != len(FLAT_SIDE_KEYS):
        raise ValueError(f"state is missing {[k for k in FLAT_SIDE_KEYS if k not in flat]} (the side keys "
                         "of a Live with side=True come all together)")
    totals = [k for k in FLAT_SIDE_TOTAL_KEYS if k in flat]
    if totals and (len(totals) != len(FLAT_SIDE_TOTAL_KEYS) or not sided):
        raise ValueError(f"state has {totals} without {[k for k in FLAT_SIDE_TOTAL_KEYS + FLAT_SIDE_KEYS if k not in flat]} "
                         "(the side keys of a Live with side=True come all together)")
    side = {k: _array(flat[k], (k,), "f", finite=False) for k in sided + totals}
    version = _flat_int(flat["version"], "version")
    try:
        config = json.loads(_flat_str(flat["config"], "config"))
    except json.JSONDecodeError as e:
        raise ValueError(f"state['config'] is not JSON: {e}") from None
    ints = {k: _flat_int(flat[k], k) for k in ("has_open", "n_dropped", "n_rows", "last_ts", "label")}
    if ints["has_open"] not in (-1, 0, 1):
        raise ValueError(f"state['has_open'] must be -1 (no row yet), 0 or 1, got {ints['has_open']}")
    arr = {k: _array(flat[k], (k,), "i" if k.endswith(("_row", "_rows", "_labels", "_session", "_ts"))
                     else "f", finite=False)
           for k in _FLAT_DONE + ("done_labels", "naked_session", "naked_row", "naked_price", "tail_rows")
           + tuple(f"tail_{k}" for k in _BAR_KEYS) + tuple(f"current_{k}" for k in _BAR_KEYS)}
    S = arr["done_n_rows"].shape[0]
    for k in _FLAT_DONE:
        if k != "done_volume" and arr[k].shape[0] != S:
            raise ValueError(f"state[{k!r}] has length {arr[k].shape[0]}, expected {S} (state['done_n_rows'])")
    vols = _split(arr["done_volume"], arr["done_n_rows"], "done_volume", "done_n_rows")
    done = [{k: (vols[s] if k == "volume" else arr[f"done_{k}"][s:s + 1]) for k in _DONE_KEYS}
            for s in range(S)]
    if side:
        if side["done_delta"].shape[0] != S:
            raise ValueError(f"state['done_delta'] has length {side['done_delta'].shape[0]}, expected {S} "
                             "(state['done_n_rows'])")
        rows = {k: _split(side[f"done_{k}"], arr["done_n_rows"], f"done_{k}", "done_n_rows")
                for k in ("buy_volume", "sell_volume")}
        for k in totals:
            if side[k].shape[0] != S:
                raise ValueError(f"state[{k!r}] has length {side[k].shape[0]}, expected {S} (state['done_n_rows'])")
        for s in range(S):
            done[s].update(buy_volume=rows["buy_volume"][s], sell_volume=rows["sell_volume"][s],
                           delta=side["done_delta"][s:s + 1], **{k[5:]: side[k][s:s + 1] for k in totals})
    comp = np.asarray(flat["comp"], dtype=np.float64)
    comp = comp.reshape(0, 3) if comp.size == 0 else comp
    if comp.ndim != 2 or comp.shape[1] != 3:
        raise ValueError(f"state['comp'] must have shape (sessions, 3), got {comp.shape}")
    nk = [arr[k] for k in ("naked_session", "naked_row", "naked_price")]
    if not nk[0].shape == nk[1].shape == nk[2].shape:
        raise ValueError("state['naked_session'], ['naked_row'] and ['naked_price'] differ in length")
    tails = {k: arr[f"tail_{k}"] for k in _BAR_KEYS}
    T = arr["tail_rows"].shape[0]
    has_open = ints["has_open"] == 1
    parts = {k: _split(v, arr["tail_rows"], f"tail_{k}", "tail_rows") if (k != "open" or has_open)
             else [None] * T for k, v in tails.items()}
    if not has_open and tails["open"].size:
        raise ValueError("state['tail_open'] must be empty (state['has_open'] is not 1)")
    tail = [{k: parts[k][i] for k in _BAR_KEYS} for i in range(T)]
    rows = np.asarray(flat["session_rows"])
    rows_list = [] if rows.size == 0 else list(rows) if rows.ndim == 2 else None
    if rows_list is None:
        raise ValueError(f"state['session_rows'] must have shape (sessions, columns), got {rows.shape}")
    cols = np.asarray(flat["session_columns"])
    if cols.size and (cols.ndim != 1 or cols.dtype.kind != "U"):
        raise TypeError("state['session_columns'] must be a 1-D array of strings")
    cur = None
    if arr["current_ts"].shape[0]:
        cur = {k: arr[f"current_{k}"] for k in _BAR_KEYS}
        cur["int_volume"] = bool(_flat_int(flat["current_int_volume"], "current_int_volume"))
        if side:
            cur.update({k: side[f"current_{k}"] for k in _SIDE_CURRENT_KEYS})
    extra = {} if not carried else {"carry": carry if carry["ts"].shape[0] else None}
    return dict(extra, version=version, config=config, has_open=None if ints["has_open"] < 0 else has_open,
                n_dropped=ints["n_dropped"], n_rows=ints["n_rows"],
                last_ts=None if ints["last_ts"] == _NONE else ints["last_ts"],
                label=None if ints["label"] == _NONE else ints["label"], done=done,
                done_labels=arr["done_labels"].tolist(), comp=[tuple(c) for c in comp.tolist()],
                naked=[(int(j), int(r), float(p)) for j, r, p in zip(*nk)], tail=tail,
                session_rows=rows_list, session_columns=tuple(cols.tolist()) if cols.size else None,
                current=cur)
