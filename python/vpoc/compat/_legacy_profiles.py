"""Every session's legacy profile (all levels floor(lo/p) .. ceil(hi/p), zero ones too) from one engine call.

Contract: vpoc.from_bars(distribute="legacy", snap=True) computes the volumes; bars are widened to
[min(o,c,l), max(o,c,h)] as the legacy did, and engine errors name the caller's frame, column and row.
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from .._api import from_bars
from .._errors import readdressed, row_of
from ._inputs import Source
from ._ragged import layout, reduce

__all__ = ["has_level", "legacy_profiles"]


def has_level(mn: np.ndarray, mx: np.ndarray, base: np.ndarray, K: np.ndarray, tick: float) -> np.ndarray:
    """Whether [mn, mx] holds a level L_k = base*tick + k*tick (k = 0..K), decided exactly as the
    engine's legacy ladder does (the first level >= mn is <= mx). Bars with non-finite or
    off-ladder prices count as holding one: the engine rejects them."""
    limit = 2.0**52  # the engine's bound on |price / tick|
    ok = ((np.abs(mn / tick) < limit) & (np.abs(mx / tick) < limit) & (np.abs(base) < limit)
          & (np.abs(base + K) < limit))
    result = np.ones(mn.shape, dtype=bool)
    if not ok.any():
        return result
    mn, mx, base, K = mn[ok], mx[ok], base[ok], K[ok]

    def level(k: np.ndarray) -> np.ndarray:
        return base * tick + k * tick

    ka = np.clip(np.ceil(mn / tick) - base, 0, K + 1)
    while True:  # levels increase with k, so these loops end within a step or two
        step = (ka > 0) & (level(ka - 1) >= mn)
        if not step.any():
            break
        ka = ka - step
    while True:
        step = (ka <= K) & (level(ka) < mn)
        if not step.any():
            break
        ka = ka + step
    result[ok] = (ka <= K) & (level(ka) <= mx)
    return result


# The engine's names of a bar's arrays (they are the keys of Source.columns).
_BAR_NAMES = ("open", "high", "low", "close", "volume")


def _engine_error(e: ValueError, source: Source) -> ValueError:
    """The engine's error about bar e.index (a vpoc.InputError) said of the caller's frame: each
    argument[i] it names becomes frame[column] row r (r: the frame's row of engine row i), the
    new error's .argument is frame[column] and .index r. Errors about no one bar are returned
    as they are."""
    i = row_of(e)
    if i is None:
        return e
    row = int(source.perm[i]) if source.perm is not None else i

    def column(name: str) -> str:
        return f"{source.frame}[{source.columns[name]!r}]"

    return readdressed(e, row, _BAR_NAMES, lambda name, r: f"{column(name)} row {r}",
                       argument=column(e.argument) if e.argument in source.columns else None)


def legacy_profiles(o: np.ndarray, h: np.ndarray, l: np.ndarray, c: np.ndarray, v: np.ndarray,
                    offsets: np.ndarray, tick: float, device: str, sub_tick_bars: str,
                    source: Optional[Source] = None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every session's legacy profile from one engine call: (offsets [S+1], price_level, volume),
    each session covering all levels floor(lo/tick) .. ceil(hi/tick), zero ones included."""
    counts = np.diff(offsets)
    ne = counts > 0
    with np.errstate(all="ignore"):  # bad prices are reported by the engine below
        mn = np.minimum(np.minimum(o, c), l)
        mx = np.maximum(np.maximum(o, c), h)
        base = np.floor(reduce(np.minimum, mn, offsets, np.nan) / tick)
        top = np.ceil(reduce(np.maximum, mx, offsets, np.nan) / tick)
        if sub_tick_bars == "drop" and v.size:
            seg = np.repeat(np.arange(counts.size), counts)
            unplaced = ~has_level(mn, mx, base[seg], (top - base)[seg], tick)
            unplaced &= np.isfinite(v) & (v >= 0)  # an invalid volume still reaches the engine
            if unplaced.any():
                v = np.where(unplaced, v.dtype.type(0), v)  # the legacy added nothing for these bars
        # vpoc rejects a close/open outside [low, high]; the legacy spread such a bar over
        # [min(o,c,l), max(o,c,h)]: widen it to that range (same levels, same weights). Bars with
        # NaN prices or high < low reach the engine as they are, to be reported by name.
        ok = np.isfinite(mn) & np.isfinite(mx) & (h >= l)
        l, h = np.where(ok, mn, l), np.where(ok, mx, h)
    try:
        # snap=True: the legacy analyzer took prices off the price_precision grid as they are (a bar
        # spreads over the grid levels inside its range; no price is moved), so the grid check of
        # from_bars does not apply; only sub_tick_bars="close" places a close on its nearest level.
        prof = from_bars(h, l, c, v, open=o, offsets=offsets, tick_size=tick, distribute="legacy",
                         device=device, snap=True).cpu()
    except ValueError as e:
        if source is None:
            raise
        raise _engine_error(e, source) from None
    base_i = np.where(ne, base, 0.0).astype(np.int64)
    n_levels = np.where(ne, top - base + 1, 0.0).astype(np.int64)
    out_off = np.concatenate([[0], np.cumsum(n_levels)]).astype(np.int64)
    _, _, k = layout(out_off)
    price = np.repeat(base_i.astype(np.float64), n_levels) * tick + k.astype(np.float64) * tick
    volume = np.zeros(int(out_off[-1]))
    rows = np.asarray(prof.n_rows, dtype=np.int64)
    shift = np.where(rows > 0, np.asarray(prof.low_row), base_i) - base_i  # empty: NO_ROW
    if np.any(shift < 0) or np.any(shift + rows > n_levels):  # pragma: no cover - engine contract
        raise RuntimeError("vpoc engine rows fall outside the legacy level range; please report this")
    _, eseg, j = layout(np.asarray(prof.offsets, dtype=np.int64))
    volume[out_off[:-1][eseg] + shift[eseg] + j] = np.asarray(prof.volume)
    return out_off, price, volume
