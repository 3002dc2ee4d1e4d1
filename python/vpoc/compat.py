"""vpoc.compat: drop-in replacement for the legacy per-session analyzer (``VolumeProfileAnalyzer``).

Contract: the legacy API and math (GUIDE §2), computed by vpoc's engine in float64; every deviation is listed below.

Migration of a training script (two lines)::

    # from src.core.vpoc import VolumeProfileAnalyzer, calculate_volume_profile, find_vpoc, find_value_area
    from vpoc.compat import VolumeProfileAnalyzer, calculate_volume_profile, find_vpoc, find_value_area

The legacy module is ``src/core/vpoc.py`` of github.com/lrud/futures_vpoc_backtest (commit 3e8febb)
and its feature table ``FeatureEngineer.generate_session_features`` in ``src/ml/feature_engineering.py``.
What is kept (semantics, not code):

* Profile: levels ``L_k = floor(lo/p)*p + k*p`` up to ``ceil(hi/p)*p`` (``p = price_precision``, lo/hi the
  session's min(open, close, low) / max(open, close, high)), every level of that range reported (zero
  ones too); a bar spreads its volume over the levels in [min(o,c,l), max(o,c,h)] with weights
  ``1 + 1/(1 + |L_k - close|)`` normalised to sum 1 (vpoc's ``distribute="legacy"``);
  ``volume_smooth`` is the 3-level moving average with zero padding.
* ``VolumeProfileAnalyzer.find_vpoc``: levels whose (smoothed) volume is >= its 95% quantile (linear,
  pandas' default); with at least 3 of them, the level nearest their volume-weighted mean price (first
  on ties), else the first level of maximal volume. ``find_value_area``: from the first maximal level,
  one level at a time towards the larger neighbour (ties up) until the target; percentage 0-100.
* Module ``find_vpoc(dict)``: lowest price of maximal volume, 0.0 for an empty dict;
  ``find_value_area(dict)``: levels by volume (highest first, equal volumes lower price first) until the
  target, (lowest, highest, fraction 0-1); (0.0, 0.0, 0.0) for an empty dict. DataFrames given to the
  module functions go to the analyzer methods, as in the legacy module.

Deviations (the legacy defects, and what had no defined result):

* float64 accumulation everywhere (the legacy summed in float32).
* ``chunk_size``, ``device_ids`` and multi-GPU requests are accepted and give the single-path result
  (the legacy chunked path dropped zero-volume levels and its multi-GPU path lost volume).
* ``device`` only selects where the engine runs: "cuda"/"cuda:N" use the GPU when this vpoc build has
  one and a GPU is present, else the CPU, silently; no environment variable is set, nothing is logged.
* Comparisons treat values within ``tie_rel`` (default 1e-9) relative as equal (maximum, quantile
  membership, nearest level, up/down choice, target reached; the greedy value area ranks volumes at a
  resolution of tie_rel x the session's largest volume, rint(v / vmax / tie_rel)), so float summation
  order (threads, GPU atomics) cannot flip a decision. ``tie_rel=0`` gives the legacy's exact
  comparisons.
* A bar whose open or close lies outside [low, high] (which ``vpoc.from_bars`` rejects) is widened to
  [min(open, close, low), max(open, close, high)] before the engine: the legacy's levels and weights.
* A bar whose range holds no level (prices off the grid inside one level) added nothing in the legacy
  code; ``sub_tick_bars="drop"`` (default) keeps that, ``"close"`` puts its volume on the level nearest
  its close (the engine's rule), so no volume is lost.
* Undefined legacy cases: an empty session gives NaN results (the legacy raised); a session whose
  top-quantile levels all have zero volume falls back to the first maximal level (the legacy raised
  ZeroDivisionError); a zero total gives a NaN percentage/fraction (the legacy divided 0 by 0).
* ``price_precision=None`` means 0.25 (the legacy settings default); 0, negative or non-finite values
  raise ValueError instead of silently becoming 0.25.
"""

from __future__ import annotations

import math
import numbers
import re
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ._api import from_bars, gpu_available
from ._validate import boolean as _bool, integer as _int
from ._arrays import as_prices, as_volume
from ._optional import require

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
else:
    pd = require("pandas", "vpoc.compat")

__all__ = [
    "ANALYZE_KEYS",
    "DEFAULT_PRICE_PRECISION",
    "LEGACY_FEATURES",
    "SUB_TICK_BARS",
    "TIE_REL",
    "VolumeProfileAnalyzer",
    "analyze_sessions",
    "calculate_volume_profile",
    "find_value_area",
    "find_vpoc",
    "session_features",
]

#: Level spacing used when ``price_precision`` is None (the legacy ``settings.PRICE_PRECISION``).
DEFAULT_PRICE_PRECISION: float = 0.25
#: Values within this relative distance compare equal in every decision (see the module docstring).
TIE_REL: float = 1e-9
#: What to do with a bar whose [min(o,c,l), max(o,c,h)] holds no level: legacy "drop" or "close".
SUB_TICK_BARS: Tuple[str, ...] = ("drop", "close")
#: Scalar keys of ``analyze_session`` (it also returns "volume_profile"); columns of ``analyze_sessions``.
ANALYZE_KEYS: Tuple[str, ...] = (
    "vpoc", "value_area_low", "value_area_high", "value_area_width", "value_area_pct", "total_volume",
)
#: The legacy feature table's 14 per-session features (columns of ``session_features``).
LEGACY_FEATURES: Tuple[str, ...] = (
    "vpoc", "total_volume", "value_area_low", "value_area_high", "value_area_width", "price_range",
    "range_pct", "close_change_pct", "session_high", "session_low", "session_open", "session_close",
    "vwap", "close_to_vwap_pct",
)

_OHLCV = ("open", "high", "low", "close", "volume")
_FLOOR = 0.0001  # the legacy features' guard against dividing by a zero open / vwap / range
_DEVICES = "'cuda', 'cuda:N', 'cpu' or 'auto'"


# ----------------------------------------------------------------------------- argument checks
def _real(x: Any, name: str) -> float:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    return float(x)


def _precision(x: Any, name: str = "price_precision") -> float:
    if x is None:
        return DEFAULT_PRICE_PRECISION
    p = _real(x, name)
    if not (math.isfinite(p) and p > 0):
        raise ValueError(f"{name} must be a finite number > 0 (or None for {DEFAULT_PRICE_PRECISION}), got {p}")
    return p


def _fraction(x: Any, name: str) -> float:
    f = _real(x, name)
    if not 0.0 < f <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {f}")
    return f


def _tie(x: Any) -> float:
    t = _real(x, "tie_rel")
    if not 0.0 <= t <= 1e-3:
        raise ValueError(f"tie_rel must be in [0, 1e-3], got {t}")
    return t


def _choice(x: Any, name: str, allowed: Sequence[str]) -> str:
    if not isinstance(x, str):
        raise TypeError(f"{name} must be a string, got {type(x).__name__}")
    if x not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {x!r}")
    return x


def _device_ids(x: Any) -> List[int]:
    """Validated and kept for introspection only: the result never depends on it."""
    if x is None:
        return []
    if isinstance(x, (str, bytes)) or not (isinstance(x, Sequence) or isinstance(x, np.ndarray)):
        raise TypeError(f"device_ids must be None or a sequence of GPU indices, got {type(x).__name__}")
    return [_int(i, f"device_ids[{k}]", 0) for k, i in enumerate(list(x))]


def _device(device: Any) -> str:
    """The vpoc device for a legacy device name: a GPU only when one is built and present."""
    name = str(device)  # also accepts torch.device
    if name in ("cpu", "auto"):
        return name
    if name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit()):
        return name if gpu_available() else "cpu"
    raise ValueError(f"device must be {_DEVICES}, got {name!r}")


# ----------------------------------------------------------------------------- input frames
def _values(s: "pd.Series") -> np.ndarray:
    dtype = s.dtype
    if isinstance(dtype, pd.api.extensions.ExtensionDtype) and dtype.kind in "iuf":
        if s.hasnans:
            return s.to_numpy(dtype=np.float64, na_value=np.nan)  # the engine rejects the NaN
        return s.to_numpy(dtype=dtype.numpy_dtype)
    return s.to_numpy()


def _columns(df: Any, name: str) -> Dict[str, Any]:
    """open/high/low/close/volume of a DataFrame (names matched case-insensitively)."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame with open, high, low, close, volume columns, "
                        f"got {type(df).__name__}")
    found: Dict[str, Any] = {}
    for col in df.columns:
        key = col.lower() if isinstance(col, str) else None
        if key in _OHLCV:
            if key in found:
                raise ValueError(f"{name} has two columns named {key!r} (ignoring case): "
                                 f"{found[key]!r} and {col!r}")
            found[key] = col
    missing = [k for k in _OHLCV if k not in found]
    if missing:
        raise ValueError(f"{name} is missing column(s) {', '.join(missing)} "
                         "(needs open, high, low, close, volume; any case)")
    return found


class _Source(NamedTuple):
    """Where engine inputs came from, to name the caller's column and row in error messages."""

    frame: str  # the argument's name, e.g. "df"
    columns: Dict[str, Any]  # open/high/low/close/volume -> the frame's column label
    perm: Optional[np.ndarray]  # engine row -> frame row (None: the same)


def _ohlcv(df: Any, name: str) -> Tuple[Tuple[np.ndarray, ...], _Source]:
    """(open, high, low, close) as float64 and volume as an integer or float array."""
    cols = _columns(df, name)
    out = []
    for key in _OHLCV[:4]:
        label = f"{name}[{cols[key]!r}]"
        out.append(as_prices(_values(df[cols[key]]), label).astype(np.float64, copy=False))
    out.append(as_volume(_values(df[cols["volume"]]), f"{name}[{cols['volume']!r}]"))
    return tuple(out), _Source(name, cols, None)


def _sessions(df: "pd.DataFrame", by: Any) -> Tuple[Optional[np.ndarray], np.ndarray, "pd.Index"]:
    """(row permutation or None, CSR offsets, session keys) grouping rows by ``by`` like
    DataFrame.groupby: sorted keys, rows of a session kept in frame order."""
    n = len(df)
    if isinstance(by, str):
        if by not in df.columns:
            raise ValueError(f"by={by!r} is not a column of df")
        keys: Any = df[by]
        label: Any = by
    else:
        if by is None or np.ndim(by) != 1:
            raise TypeError("by must be a column name or a 1-D array of session keys (one per row)")
        keys = by if isinstance(by, (pd.Series, pd.Index, np.ndarray)) else pd.Series(list(by))
        label = getattr(by, "name", None)
        if len(keys) != n:
            raise ValueError(f"by has {len(keys)} keys but df has {n} rows")
    try:
        codes, uniques = pd.factorize(keys, sort=True)
    except TypeError as e:
        raise TypeError(f"by: session keys must be mutually sortable ({e})") from None
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size and codes.min() < 0:
        raise ValueError(f"by has a missing session key (NaN/None/NaT) at row {int(np.argmin(codes))}")
    counts = np.bincount(codes, minlength=len(uniques)) if codes.size else np.zeros(0, np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    perm = None if np.all(codes[1:] >= codes[:-1]) else np.argsort(codes, kind="stable")
    return perm, offsets, pd.Index(uniques, name=label if label is not None else "session")


# ----------------------------------------------------------------------------- ragged helpers
def _layout(offsets: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(counts, session of each element, index of each element inside its session)."""
    counts = np.diff(offsets)
    seg = np.repeat(np.arange(counts.size), counts)
    local = np.arange(int(offsets[-1]), dtype=np.int64) - np.repeat(offsets[:-1], counts)
    return counts, seg, local


def _reduce(ufunc: np.ufunc, x: np.ndarray, offsets: np.ndarray, empty: Any) -> np.ndarray:
    """ufunc.reduceat over each session, ``empty`` for empty sessions."""
    counts = np.diff(offsets)
    dtype = np.result_type(x.dtype, np.asarray(empty).dtype)
    out = np.full(counts.size, empty, dtype=dtype)
    ne = counts > 0
    if ne.any():
        out[ne] = ufunc.reduceat(x, offsets[:-1][ne])
    return out


def _first(mask: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Index inside its session of each session's first True element (-1 when none)."""
    _, _, local = _layout(offsets)
    big = np.iinfo(np.int64).max
    first = _reduce(np.minimum, np.where(mask, local, big), offsets, big)
    return np.where(first == big, -1, first)


def _smooth(vol: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """3-level moving average of each session with zero padding: (v[k-1] + v[k] + v[k+1]) / 3."""
    counts, _, local = _layout(offsets)
    left = np.zeros_like(vol)
    right = np.zeros_like(vol)
    left[1:] = vol[:-1]
    right[:-1] = vol[1:]
    left[local == 0] = 0.0
    right[local == np.repeat(counts - 1, counts)] = 0.0
    return (left + vol + right) / 3.0


def _first_max(vol: np.ndarray, offsets: np.ndarray, tie_rel: float) -> np.ndarray:
    """First level of each session whose volume is within tie_rel of the session maximum."""
    _, seg, _ = _layout(offsets)
    vmax = _reduce(np.maximum, vol, offsets, 0.0)
    return _first(vol >= (vmax - tie_rel * vmax)[seg], offsets)


def _lerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Linear interpolation as numpy's quantile (method 'linear', pandas' default) computes it."""
    diff = b - a
    return np.where(t >= 0.5, b - diff * (1.0 - t), a + diff * t)


def _cluster_vpoc(price: np.ndarray, vol: np.ndarray, offsets: np.ndarray, quantile: float,
                  min_levels: int, tie_rel: float) -> np.ndarray:
    """Index of the analyzer's VPOC level per session (-1 for empty sessions)."""
    counts, seg, _ = _layout(offsets)
    simple = _first_max(vol, offsets, tie_rel)
    ne = counts > 0
    # each session's quantile of its volumes (linear interpolation between order statistics)
    sorted_vol = vol[np.lexsort((vol, seg))]
    virtual = quantile * (np.maximum(counts, 1) - 1).astype(np.float64)
    below = np.floor(virtual).astype(np.int64)
    above = np.minimum(below + 1, np.maximum(counts - 1, 0))
    starts = offsets[:-1]
    q = np.zeros(counts.size)
    q[ne] = _lerp(sorted_vol[starts[ne] + below[ne]], sorted_vol[starts[ne] + above[ne]],
                  virtual[ne] - below[ne])
    member = vol >= (q - tie_rel * np.abs(q))[seg]
    n_members = _reduce(np.add, member.astype(np.int64), offsets, 0)
    weights = np.where(member, vol, 0.0)
    wsum = _reduce(np.add, weights, offsets, 0.0)
    psum = _reduce(np.add, weights * price, offsets, 0.0)
    cluster = ne & (n_members >= min_levels) & (wsum > 0)  # zero weights: the simple rule
    mean = np.divide(psum, wsum, out=np.zeros_like(psum), where=cluster)
    dist = np.abs(price - mean[seg])
    dmin = _reduce(np.minimum, dist, offsets, np.inf)
    nearest = _first(dist <= (dmin + tie_rel * np.abs(mean))[seg], offsets)
    return np.where(cluster, nearest, simple)


def _reached(cur: np.ndarray, target: np.ndarray, tie_rel: float) -> np.ndarray:
    return cur >= target - tie_rel * target


def _expand(vol: np.ndarray, offsets: np.ndarray, start: np.ndarray, fraction: float,
            tie_rel: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Analyzer value area: from ``start``, one level at a time towards the larger neighbour (ties
    up) until ``fraction`` of the total. Returns (low index, high index, volume inside, total)."""
    counts = np.diff(offsets)
    starts = offsets[:-1]
    ne = counts > 0
    total = _reduce(np.add, vol, offsets, 0.0)
    target = total * fraction
    lo = np.where(ne, start, 0)
    hi = lo.copy()
    cur = np.where(ne, vol[np.where(ne, starts + lo, 0)] if vol.size else 0.0, 0.0)
    last = counts - 1
    while True:
        can_up = hi < last
        can_dn = lo > 0
        active = ne & ~_reached(cur, target, tie_rel) & (can_up | can_dn)
        if not active.any():
            break
        up = np.where(can_up, vol[np.minimum(starts + hi + 1, vol.size - 1)], 0.0)
        dn = np.where(can_dn, vol[np.maximum(starts + lo - 1, 0)], 0.0)
        go_up = active & can_up & (up >= dn - tie_rel * np.maximum(up, dn))
        go_dn = active & ~go_up & can_dn
        hi = hi + go_up
        lo = lo - go_dn
        cur = cur + np.where(go_up, up, np.where(go_dn, dn, 0.0))
    return lo, hi, cur, total


def _greedy(vol: np.ndarray, offsets: np.ndarray, fraction: float,
            tie_rel: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Legacy dict value area: levels by volume (highest first, equal volumes lower level first)
    until ``fraction`` of the total. Returns (lowest, highest selected index, volume inside, total)."""
    counts, seg, local = _layout(offsets)
    starts = offsets[:-1]
    total = _reduce(np.add, vol, offsets, 0.0)
    target = total * fraction
    rank = vol
    if tie_rel > 0:  # volumes ranked at a resolution of tie_rel x the session's largest volume
        vmax = _reduce(np.maximum, vol, offsets, 0.0)[seg]
        share = np.divide(vol, vmax, out=np.zeros_like(vol), where=vmax > 0)
        rank = np.rint(share / tie_rel)
    order = np.lexsort((local, -rank, seg))  # per session: rank descending, then level ascending
    sorted_vol = vol[order]
    taken = np.zeros(counts.size, dtype=np.int64)
    cur = np.zeros(counts.size)
    done = counts == 0
    for j in range(int(counts.max()) if counts.size else 0):
        take = ~done & (j < counts)
        if not take.any():
            break
        cur = cur + np.where(take, sorted_vol[np.minimum(starts + j, vol.size - 1)], 0.0)
        taken = taken + take
        done = done | (take & (_reached(cur, target, tie_rel) | (j + 1 >= counts)))
    selected = local[order] if vol.size else local
    in_va = (np.arange(vol.size) - np.repeat(starts, counts)) < taken[seg]
    big = np.iinfo(np.int64).max
    low = _reduce(np.minimum, np.where(in_va, selected, big), offsets, big)
    high = _reduce(np.maximum, np.where(in_va, selected, -1), offsets, -1)
    return low, high, cur, total


def _ratio(num: np.ndarray, den: np.ndarray, scale: float) -> np.ndarray:
    """num / den * scale, NaN where den == 0 (without a floating-point warning)."""
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return np.where(den > 0, out * scale, np.nan)


# ----------------------------------------------------------------------------- the profiles
def _has_level(mn: np.ndarray, mx: np.ndarray, base: np.ndarray, K: np.ndarray, tick: float) -> np.ndarray:
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


_ENGINE_ARG = re.compile(r"\b(open|high|low|close|volume)\[(\d+)\]")


def _engine_error(e: ValueError, source: _Source) -> ValueError:
    """The engine's message with its argument[i] rewritten as the caller's frame[column][row]."""
    def name(m: "re.Match[str]") -> str:
        i = int(m.group(2))
        row = int(source.perm[i]) if source.perm is not None else i
        return f"{source.frame}[{source.columns[m.group(1)]!r}] row {row}"

    return ValueError(_ENGINE_ARG.sub(name, str(e)))


def _legacy_profiles(o: np.ndarray, h: np.ndarray, l: np.ndarray, c: np.ndarray, v: np.ndarray,
                     offsets: np.ndarray, tick: float, device: str, sub_tick_bars: str,
                     source: Optional[_Source] = None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every session's legacy profile from one engine call: (offsets [S+1], price_level, volume),
    each session covering all levels floor(lo/tick) .. ceil(hi/tick), zero ones included."""
    counts = np.diff(offsets)
    ne = counts > 0
    with np.errstate(all="ignore"):  # bad prices are reported by the engine below
        mn = np.minimum(np.minimum(o, c), l)
        mx = np.maximum(np.maximum(o, c), h)
        base = np.floor(_reduce(np.minimum, mn, offsets, np.nan) / tick)
        top = np.ceil(_reduce(np.maximum, mx, offsets, np.nan) / tick)
        if sub_tick_bars == "drop" and v.size:
            seg = np.repeat(np.arange(counts.size), counts)
            unplaced = ~_has_level(mn, mx, base[seg], (top - base)[seg], tick)
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
    _, _, k = _layout(out_off)
    price = np.repeat(base_i.astype(np.float64), n_levels) * tick + k.astype(np.float64) * tick
    volume = np.zeros(int(out_off[-1]))
    rows = np.asarray(prof.n_rows, dtype=np.int64)
    shift = np.where(rows > 0, np.asarray(prof.low_row), base_i) - base_i  # empty: NO_ROW
    if np.any(shift < 0) or np.any(shift + rows > n_levels):  # pragma: no cover - engine contract
        raise RuntimeError("vpoc engine rows fall outside the legacy level range; please report this")
    _, eseg, j = _layout(np.asarray(prof.offsets, dtype=np.int64))
    volume[out_off[:-1][eseg] + shift[eseg] + j] = np.asarray(prof.volume)
    return out_off, price, volume


def _one(bars: Tuple[np.ndarray, ...]) -> np.ndarray:
    """CSR offsets of a single session holding all bars."""
    return np.array([0, bars[0].size], dtype=np.int64)


def _profile_frame(price: np.ndarray, volume: np.ndarray) -> "pd.DataFrame":
    offsets = np.array([0, price.size], dtype=np.int64)
    return pd.DataFrame({"price_level": price, "volume": volume,
                         "volume_smooth": _smooth(volume, offsets)})


def _profile_arrays(volume_profile: "pd.DataFrame", column: str) -> Tuple[np.ndarray, np.ndarray]:
    """(price_level, chosen volume column) of a profile frame as validated float64 arrays."""
    for col in ("price_level", column):
        if col not in volume_profile.columns:
            raise ValueError(f"volume_profile has no {col!r} column (expected price_level, volume, "
                             "volume_smooth as returned by calculate_volume_profile)")
    price = as_prices(_values(volume_profile["price_level"]), "volume_profile['price_level']")
    vol = as_prices(_values(volume_profile[column]), f"volume_profile[{column!r}]")
    price = price.astype(np.float64, copy=False)
    vol = vol.astype(np.float64, copy=False)
    bad = ~np.isfinite(price)
    if bad.any():
        raise ValueError(f"volume_profile['price_level'][{int(np.argmax(bad))}] is not finite")
    bad = ~(np.isfinite(vol) & (vol >= 0))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"volume_profile[{column!r}][{i}]={vol[i]} must be finite and >= 0")
    return price, vol


def _dict_arrays(volume_profile: Mapping[Any, Any]) -> Tuple[np.ndarray, np.ndarray]:
    """(prices ascending, volumes) of a {price_level: volume} dict, validated."""
    try:
        price = np.array(list(volume_profile.keys()), dtype=np.float64)
        vol = np.array(list(volume_profile.values()), dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"volume_profile must map numeric price levels to numeric volumes ({e})") from None
    if price.ndim != 1 or vol.ndim != 1:
        raise TypeError("volume_profile must map numeric price levels to numeric volumes")
    bad = ~np.isfinite(price)
    if bad.any():
        raise ValueError(f"volume_profile has a non-finite price level {price[int(np.argmax(bad))]}")
    bad = ~(np.isfinite(vol) & (vol >= 0))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"volume_profile[{price[i]}]={vol[i]} must be finite and >= 0")
    order = np.argsort(price, kind="stable")
    return price[order], vol[order]


# ----------------------------------------------------------------------------- the analyzer
class VolumeProfileAnalyzer:
    """The legacy analyzer's API on vpoc's engine (see the module docstring for the exact rules).

    ``price_precision``: level spacing (None: 0.25). ``device``: "cuda" (default; the GPU when this
    vpoc build has one and a GPU is present, else the CPU), "cuda:N", "cpu" or "auto".
    ``device_ids`` and ``chunk_size`` are validated and ignored (single-path results).
    ``sub_tick_bars``: "drop" (legacy) or "close", for bars whose range holds no level.
    ``tie_rel``: relative tolerance under which values compare equal (0: exact comparisons).
    ``quantile`` / ``min_levels``: find_vpoc's top-volume quantile and the cluster size it needs.
    """

    def __init__(self, price_precision: Optional[float] = None, device: Any = "cuda",
                 device_ids: Optional[Sequence[int]] = None, chunk_size: int = 3500, *,
                 sub_tick_bars: str = "drop", tie_rel: float = TIE_REL, quantile: float = 0.95,
                 min_levels: int = 3) -> None:
        self.price_precision: float = _precision(price_precision)
        self.device: str = _device(device)
        self.device_ids: List[int] = _device_ids(device_ids)
        self.chunk_size: int = _int(chunk_size, "chunk_size", 1)
        self.sub_tick_bars: str = _choice(sub_tick_bars, "sub_tick_bars", SUB_TICK_BARS)
        self.tie_rel: float = _tie(tie_rel)
        self.quantile: float = _fraction(quantile, "quantile")
        self.min_levels: int = _int(min_levels, "min_levels", 1)

    def __repr__(self) -> str:
        return (f"VolumeProfileAnalyzer(price_precision={self.price_precision}, device={self.device!r}, "
                f"sub_tick_bars={self.sub_tick_bars!r}, tie_rel={self.tie_rel})")

    # -- profiles
    def _profiles(self, bars: Tuple[np.ndarray, ...], offsets: np.ndarray,
                  source: _Source) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        return _legacy_profiles(*bars, offsets, self.price_precision, self.device, self.sub_tick_bars,
                                source)

    def calculate_volume_profile(self, session_df: "pd.DataFrame") -> "pd.DataFrame":
        """One session's profile: DataFrame[price_level, volume, volume_smooth] (float64), one row
        per level from floor(lo/p)*p to ceil(hi/p)*p, zero-volume levels included; empty for an
        empty session."""
        bars, source = _ohlcv(session_df, "session_df")
        _, price, volume = self._profiles(bars, _one(bars), source)
        return _profile_frame(price, volume)

    # -- decisions on one profile frame
    def _column(self, volume_profile: Any, use_smoothing: Any) -> str:
        if not isinstance(volume_profile, pd.DataFrame):
            raise TypeError("volume_profile must be a DataFrame from calculate_volume_profile, "
                            f"got {type(volume_profile).__name__}")
        smooth = _bool(use_smoothing, "use_smoothing") and "volume_smooth" in volume_profile.columns
        return "volume_smooth" if smooth else "volume"

    def find_vpoc(self, volume_profile: "pd.DataFrame", use_smoothing: bool = True) -> float:
        """VPOC of a profile frame: among the levels whose volume (``volume_smooth`` when
        ``use_smoothing`` and present) is >= its ``quantile``, with at least ``min_levels`` of them,
        the level nearest their volume-weighted mean price; else the first maximal level. NaN when
        the frame is empty."""
        column = self._column(volume_profile, use_smoothing)
        price, vol = _profile_arrays(volume_profile, column)
        if price.size == 0:
            return math.nan
        offsets = np.array([0, price.size], dtype=np.int64)
        idx = _cluster_vpoc(price, vol, offsets, self.quantile, self.min_levels, self.tie_rel)
        return float(price[idx[0]])

    def find_value_area(self, volume_profile: "pd.DataFrame", value_area_pct: float = 0.7,
                        use_smoothing: bool = True) -> Tuple[float, float, float]:
        """(value_area_low, value_area_high, percentage 0-100 of the volume inside): from the first
        maximal level, add the larger neighbour one level at a time (ties up) until
        ``value_area_pct`` of the total. (NaN, NaN, NaN) for an empty frame; NaN percentage for a
        zero total."""
        fraction = _fraction(value_area_pct, "value_area_pct")
        column = self._column(volume_profile, use_smoothing)
        price, vol = _profile_arrays(volume_profile, column)
        if price.size == 0:
            return math.nan, math.nan, math.nan
        offsets = np.array([0, price.size], dtype=np.int64)
        start = _first_max(vol, offsets, self.tie_rel)
        lo, hi, cur, total = _expand(vol, offsets, start, fraction, self.tie_rel)
        pct = _ratio(cur, total, 100.0)
        return float(price[lo[0]]), float(price[hi[0]]), float(pct[0])

    # -- sessions
    def _analyze(self, bars: Tuple[np.ndarray, ...], offsets: np.ndarray, source: _Source,
                 value_area_pct: float,
                 use_smoothing: bool) -> Tuple[Dict[str, np.ndarray], np.ndarray, np.ndarray]:
        """analyze_session's scalar results for every session (arrays), plus the profiles."""
        off, price, volume = self._profiles(bars, offsets, source)
        vol = _smooth(volume, off) if use_smoothing else volume
        ne = np.diff(off) > 0
        base = off[:-1]

        def at(idx: np.ndarray) -> np.ndarray:
            return np.where(ne, price[np.where(ne, base + idx, 0)] if price.size else 0.0, np.nan)

        vpoc = at(_cluster_vpoc(price, vol, off, self.quantile, self.min_levels, self.tie_rel))
        lo, hi, cur, total = _expand(vol, off, _first_max(vol, off, self.tie_rel), value_area_pct,
                                     self.tie_rel)
        val, vah = at(lo), at(hi)
        result = {
            "vpoc": vpoc,
            "value_area_low": val,
            "value_area_high": vah,
            "value_area_width": vah - val,
            "value_area_pct": np.where(ne, _ratio(cur, total, 100.0), np.nan),
            "total_volume": _reduce(np.add, bars[4], offsets, 0).astype(np.float64),
        }
        return result, price, volume

    def analyze_session(self, session_df: "pd.DataFrame") -> Dict[str, Any]:
        """The legacy per-session dict: vpoc, value_area_low, value_area_high, value_area_width,
        value_area_pct (0-100), volume_profile (the calculate_volume_profile frame) and
        total_volume (sum of the volume column, float)."""
        bars, source = _ohlcv(session_df, "session_df")
        result, price, volume = self._analyze(bars, _one(bars), source, 0.7, True)
        out: Dict[str, Any] = {key: float(result[key][0]) for key in ANALYZE_KEYS}
        return {"vpoc": out["vpoc"], "value_area_low": out["value_area_low"],
                "value_area_high": out["value_area_high"], "value_area_width": out["value_area_width"],
                "value_area_pct": out["value_area_pct"], "volume_profile": _profile_frame(price, volume),
                "total_volume": out["total_volume"]}


# ----------------------------------------------------------------------------- module functions
def calculate_volume_profile(session_data: "pd.DataFrame", price_precision: float = 0.25,
                             device_ids: Optional[Sequence[int]] = None, chunk_size: int = 3500, *,
                             device: Any = "cuda", sub_tick_bars: str = "drop") -> Dict[float, float]:
    """One session's profile as the legacy dict {price_level: volume}, ascending, every level of
    the session's range (zero ones too), for any session length (no chunked path)."""
    analyzer = VolumeProfileAnalyzer(price_precision, device, device_ids, chunk_size,
                                     sub_tick_bars=sub_tick_bars)
    bars, source = _ohlcv(session_data, "session_data")
    _, price, volume = analyzer._profiles(bars, _one(bars), source)
    return dict(zip(price.tolist(), volume.tolist()))


def find_vpoc(volume_profile: Any, *, tie_rel: float = TIE_REL) -> float:
    """Legacy ``find_vpoc``: for a dict, the lowest price level of maximal volume (0.0 when empty);
    a DataFrame goes to ``VolumeProfileAnalyzer().find_vpoc`` (smoothed, clustered), as before."""
    if isinstance(volume_profile, pd.DataFrame):
        return VolumeProfileAnalyzer(tie_rel=tie_rel).find_vpoc(volume_profile)
    if not isinstance(volume_profile, Mapping):
        raise TypeError(f"volume_profile must be a dict {{price_level: volume}} or a DataFrame, "
                        f"got {type(volume_profile).__name__}")
    tie = _tie(tie_rel)
    price, vol = _dict_arrays(volume_profile)
    if price.size == 0:
        return 0.0
    idx = _first_max(vol, np.array([0, price.size], dtype=np.int64), tie)
    return float(price[idx[0]])


def find_value_area(volume_profile: Any, value_area_pct: float = 0.7, *,
                    tie_rel: float = TIE_REL) -> Tuple[float, float, float]:
    """Legacy ``find_value_area``: for a dict, levels by volume (highest first, equal volumes lower
    price first) until ``value_area_pct`` of the total -> (lowest, highest, fraction 0-1 inside);
    (0.0, 0.0, 0.0) when empty, NaN fraction for a zero total. A DataFrame goes to
    ``VolumeProfileAnalyzer().find_value_area`` (percentage 0-100), as before."""
    if isinstance(volume_profile, pd.DataFrame):
        return VolumeProfileAnalyzer(tie_rel=tie_rel).find_value_area(volume_profile, value_area_pct)
    if not isinstance(volume_profile, Mapping):
        raise TypeError(f"volume_profile must be a dict {{price_level: volume}} or a DataFrame, "
                        f"got {type(volume_profile).__name__}")
    fraction = _fraction(value_area_pct, "value_area_pct")
    tie = _tie(tie_rel)
    price, vol = _dict_arrays(volume_profile)
    if price.size == 0:
        return 0.0, 0.0, 0.0
    low, high, cur, total = _greedy(vol, np.array([0, price.size], dtype=np.int64), fraction, tie)
    return float(price[low[0]]), float(price[high[0]]), float(_ratio(cur, total, 1.0)[0])


def _grouped(df: Any, by: Any) -> Tuple[Tuple[np.ndarray, ...], np.ndarray, _Source, "pd.Index"]:
    """The bars of ``df`` ordered session by session, their CSR offsets, source and session keys."""
    bars, source = _ohlcv(df, "df")
    perm, offsets, index = _sessions(df, by)
    if perm is not None:
        bars = tuple(a[perm] for a in bars)
        source = source._replace(perm=perm)
    return bars, offsets, source, index


def analyze_sessions(df: "pd.DataFrame", by: Any, *, price_precision: Optional[float] = None,
                     device: Any = "cuda", device_ids: Optional[Sequence[int]] = None,
                     chunk_size: int = 3500, value_area_pct: float = 0.7, use_smoothing: bool = True,
                     sub_tick_bars: str = "drop", tie_rel: float = TIE_REL) -> "pd.DataFrame":
    """``VolumeProfileAnalyzer.analyze_session`` for every session of ``df`` from one engine call.

    ``by``: a column name or an array of session keys (one per row); rows are grouped like
    ``df.groupby(by)`` (sorted keys, frame order inside a session; missing keys raise). To group by
    calendar date as the legacy feature code did, pass e.g. ``by=df.index.date``. Returns one row per
    session, indexed by key, with columns ``ANALYZE_KEYS`` (the histograms: calculate_volume_profile
    or vpoc.from_bars(..., distribute="legacy")).
    """
    analyzer = VolumeProfileAnalyzer(price_precision, device, device_ids, chunk_size,
                                     sub_tick_bars=sub_tick_bars, tie_rel=tie_rel)
    fraction = _fraction(value_area_pct, "value_area_pct")
    smoothing = _bool(use_smoothing, "use_smoothing")
    bars, offsets, source, index = _grouped(df, by)
    if bars[0].size == 0:
        return pd.DataFrame({k: np.zeros(0) for k in ANALYZE_KEYS}, index=index)
    result, _, _ = analyzer._analyze(bars, offsets, source, fraction, smoothing)
    return pd.DataFrame(result, index=index)[list(ANALYZE_KEYS)]


def session_features(df: "pd.DataFrame", by: Any, *, price_precision: float = 0.25,
                     device: Any = "cuda", device_ids: Optional[Sequence[int]] = None,
                     chunk_size: int = 3500, value_area_pct: float = 0.7, sub_tick_bars: str = "drop",
                     tie_rel: float = TIE_REL) -> "pd.DataFrame":
    """The legacy feature table's 14 session features (``LEGACY_FEATURES``) from one engine call.

    Per session (grouped by ``by`` as in analyze_sessions): vpoc = find_vpoc(dict) (raw volume);
    value_area_low/high = find_value_area(dict) (greedy); session_high/low = max(high)/min(low);
    session_open/close = first open/last close; total_volume = sum(volume);
    price_range = max(high - low, 1e-4); range_pct = price_range / max(open, 1e-4) * 100;
    close_change_pct = (close - open) / max(open, 1e-4) * 100; vwap = sum(close*volume)/total_volume
    (the close when total_volume is 0); close_to_vwap_pct = (close - vwap) / max(vwap, 1e-4) * 100.
    """
    analyzer = VolumeProfileAnalyzer(price_precision, device, device_ids, chunk_size,
                                     sub_tick_bars=sub_tick_bars, tie_rel=tie_rel)
    fraction = _fraction(value_area_pct, "value_area_pct")
    bars, offsets, source, index = _grouped(df, by)
    if bars[0].size == 0:
        return pd.DataFrame({k: np.zeros(0) for k in LEGACY_FEATURES}, index=index)
    o, h, l, c, v = bars
    off, price, volume = analyzer._profiles(bars, offsets, source)
    base = off[:-1]
    vpoc = price[base + _first_max(volume, off, analyzer.tie_rel)]
    low, high, _, _ = _greedy(volume, off, fraction, analyzer.tie_rel)
    val, vah = price[base + low], price[base + high]
    session_high = _reduce(np.maximum, h, offsets, np.nan)
    session_low = _reduce(np.minimum, l, offsets, np.nan)
    first, last = offsets[:-1], offsets[1:] - 1
    session_open, session_close = o[first], c[last]
    total = _reduce(np.add, v, offsets, 0).astype(np.float64)
    weighted = _reduce(np.add, c * v.astype(np.float64), offsets, 0.0)
    vwap = np.where(total > 0, _ratio(weighted, total, 1.0), session_close)
    price_range = np.maximum(session_high - session_low, _FLOOR)
    features = {
        "vpoc": vpoc,
        "total_volume": total,
        "value_area_low": val,
        "value_area_high": vah,
        "value_area_width": vah - val,
        "price_range": price_range,
        "range_pct": price_range / np.maximum(session_open, _FLOOR) * 100,
        "close_change_pct": (session_close - session_open) / np.maximum(session_open, _FLOOR) * 100,
        "session_high": session_high,
        "session_low": session_low,
        "session_open": session_open,
        "session_close": session_close,
        "vwap": vwap,
        "close_to_vwap_pct": (session_close - vwap) / np.maximum(vwap, _FLOOR) * 100,
    }
    return pd.DataFrame(features, index=index)[list(LEGACY_FEATURES)]
