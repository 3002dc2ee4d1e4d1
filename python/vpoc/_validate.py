"""Scalar argument checks shared by every entry point (from_*, Live, compat, cli).

Contract: each returns the value converted (float, int, bool, str) or raises TypeError/ValueError
naming the argument and what was expected; the wording lives once, in the C++ bindings (checks.hpp),
which also check every engine call's options.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np

from . import _core

__all__ = ["INT64_MAX", "real", "integer", "threads", "boolean", "string", "check_rows", "check_dropped", "dropped_rows_where", "numeric_rows",
           "report_volume"]

INT64_MAX = 2**63 - 1


def real(x: Any, name: str) -> float:
    """``x`` as a float: TypeError unless it is a real number (bool excluded)."""
    return _core.check_real(x, name)


def integer(x: Any, name: str, minimum: int, maximum: int = INT64_MAX) -> int:
    """``x`` as a Python int in [minimum, maximum]: TypeError for a non-integer (bool, str, None,
    float), ValueError naming ``name`` and the range otherwise (never a pybind11 overload dump)."""
    return _core.check_int(x, name, minimum, maximum)


def threads(x: Any) -> int:
    """``threads=``: None (all cores) as 0, else an int in [1, 1024]."""
    return _core.check_threads(x)


def boolean(x: Any, name: str) -> bool:
    """``x`` as a bool: TypeError unless it is True/False (numpy bools included)."""
    return _core.check_bool(x, name)


def string(x: Any, name: str) -> str:
    """``x`` itself: TypeError unless it is a str."""
    return _core.check_str(x, name)


#: the aggressor-side columns of bars checked as volumes by check_rows
BAR_SIDES = ("buy_volume", "sell_volume")


def _first(mask: np.ndarray) -> Optional[int]:
    return int(np.argmax(mask)) if mask.any() else None


def check_rows(out: Dict[str, Any], where: Callable[[int], str], prices: Optional[Sequence[str]] = None,
               strict_ohlc: bool = False) -> None:
    """The row values of bars / trades, by vpoc.io.read_bars' rule (its one home; every entry point that
    leaves rows out checks them here too): prices (``prices``, default the price / open / high / low /
    close entries of ``out``) finite, ``high >= low``, volume and buy / sell volume finite and >= 0.
    ValueError ``"{where(i)}: volume is -5.0 (must be finite and >= 0)"`` naming the first bad row.
    None entries are skipped; buy + sell <= volume is vpoc._side_profiles.bar_side_volumes' rule."""
    if prices is None:
        prices = [f for f in ("price", "open", "high", "low", "close") if f in out]
    for f in prices:
        if out.get(f) is None:
            continue
        i = _first(~np.isfinite(out[f]))
        if i is not None:
            raise ValueError(f"{where(i)}: {f} is {out[f][i]} (prices must be finite)")
    if out.get("high") is not None and out.get("low") is not None:
        h, lo = out["high"], out["low"]
        i = _first(h < lo)
        if i is not None:
            raise ValueError(f"{where(i)}: high ({h[i].item()!r}) < low ({lo[i].item()!r})")
        if strict_ohlc:
            for f in ("open", "close"):
                x = out[f]
                i = _first((x < lo) | (x > h))
                if i is not None:
                    raise ValueError(f"{where(i)}: {f} ({x[i].item()!r}) is outside [low, high] = "
                                     f"[{lo[i].item()!r}, {h[i].item()!r}] (strict_ohlc=True)")
    for f in ("volume",) + BAR_SIDES:
        v = out.get(f)
        if v is None:
            continue
        bad = (v < 0) if v.dtype.kind in "iu" else ~(np.isfinite(v) & (v >= 0))
        i = _first(bad)
        if i is not None:
            raise ValueError(f"{where(i)}: {f} is {v[i].item()!r} (must be finite and >= 0)")


def dropped_rows_where(what: str, rows: np.ndarray) -> Callable[[int], str]:
    """``where`` of check_rows for the rows a session rule leaves out (``rows``: their input positions)."""
    return lambda i: f"{what}: row {int(rows[i])} (outside every session)"


def numeric_rows(columns: Dict[str, Any], rows: Optional[np.ndarray] = None) -> Dict[str, np.ndarray]:
    """The host numeric 1-D columns of ``columns`` (at ``rows`` when given) for check_rows; others (None,
    text, GPU arrays, wrong shapes) are left out: the engine's own checks refuse them with their wording."""
    out: Dict[str, np.ndarray] = {}
    for k, x in columns.items():
        if x is None or hasattr(x, "__cuda_array_interface__") or type(x).__module__.split(".")[0] == "torch":
            continue
        try:
            a = np.asarray(x)
        except Exception:  # noqa: BLE001 - left to the engine's checks
            continue
        if a.ndim != 1 or a.dtype.kind not in "iuf":
            continue
        if rows is not None:
            if a.shape[0] <= (int(rows.max()) if rows.size else -1):
                continue
            a = a[rows]
        out[k] = a
    return out


def check_dropped(columns: Dict[str, Any], kept: Any, n: int, what: str, frame: bool = False) -> None:
    """The rows of ``n`` a session rule leaves out (all but ``kept``, input positions), checked by
    check_rows (the engine checks the kept ones): a NaN / negative volume or high < low there is refused,
    naming the caller's row, not left out in silence (nor summed into ``dropped_volume``). ``frame``:
    named ``<DataFrame> row i``, as vpoc.io.read_bars (from_bars(DataFrame)) names it."""
    out = np.ones(n, dtype=bool)
    out[np.asarray(kept, dtype=np.int64)] = False
    rows = np.flatnonzero(out)
    if rows.size:
        where = (lambda i: f"<DataFrame> row {int(rows[i])}") if frame else dropped_rows_where(what, rows)
        check_rows(numeric_rows(columns, rows), where)


def report_volume(volume: Any) -> Any:
    """``volume`` for a session rule's dropped-volume report (``rule(ts, volume=)``), with NaN / inf /
    negative values as 0: the rule would refuse them naming its own row, before the engine (kept rows)
    or check_dropped (the others) names the caller's; one of those refuses the call anyway."""
    v = np.asarray(volume)
    if v.dtype.kind != "f":
        return v if v.dtype.kind != "i" or not (v < 0).any() else np.where(v < 0, 0, v)
    bad = ~(np.isfinite(v) & (v >= 0))
    return np.where(bad, 0.0, v) if bad.any() else v
