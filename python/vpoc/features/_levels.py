"""``vpoc.levels``: per-session level lists of a ``Profiles``: HVN / LVN prices, balanced target, opening range.

Contract (docs/features.md, "Level lists"): the nodes are the session table's (``_profile_nodes._nodes``, one rule),
ragged like the histogram (offsets + values); each session's levels read that session's profile only.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

import numpy as np

from .._optional import require
from .._profiles import NO_ROW, Profiles
from .._time import days_yyyymmdd
from ._params import _rules
from ._profile_nodes import _node_levels, _nodes
from ._tpo_result import TpoProfiles

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["LEVEL_FIELDS", "Levels", "_balanced_target", "levels"]

#: The per-session columns of a ``Levels``, in ``to_pandas()`` order (``or_high`` / ``or_low`` only
#: when a ``tpo=`` result was given).
LEVEL_FIELDS: Tuple[str, ...] = ("hvn_count", "lvn_count", "balanced_target", "balanced_target_row",
                                 "balanced_target_side", "or_high", "or_low")
_KINDS = ("hvn", "lvn")


def _balanced_target(poc_row: np.ndarray, low_row: np.ndarray,
                     n_rows: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(target row, side) per session: the row that makes the profile symmetric about its POC. With
    ``up`` = rows from the POC to the top row and ``down`` = rows from the bottom row to the POC: up >
    down gives ``poc_row - up`` (side -1, below the profile), down > up ``poc_row + down`` (side +1,
    above it); equal sides (a one-row profile too) or an empty session give ``NO_ROW`` and side 0."""
    S = n_rows.shape[0]
    row = np.full(S, NO_ROW, dtype=np.int64)
    side = np.zeros(S, dtype=np.int64)
    ne = n_rows > 0
    poc, low = poc_row[ne].astype(np.int64), low_row[ne].astype(np.int64)
    up = low + n_rows[ne].astype(np.int64) - 1 - poc
    down = poc - low
    r = np.where(up > down, poc - up, np.where(down > up, poc + down, NO_ROW))
    row[ne] = r
    side[ne] = np.sign(down - up)
    return row, side


def _node_rules(prof: Profiles, node_smoothing: Any, node_order: Any, hvn_threshold: Any,
                lvn_threshold: Any) -> Any:
    """The node rules validated as ``session_features`` validates them (errors name the argument);
    the other rules are placeholders the nodes never read."""
    return _rules(float(prof.tick_size), int(prof.ticks_per_row), "uniform", 0.7, "cbot", "center", (), 1,
                  None, node_smoothing, node_order, hvn_threshold, lvn_threshold, 0.3, 0.6, 0.5,
                  "America/Chicago", "08:30", 60, 30)


def _comparable(labels: Any) -> np.ndarray:
    """Session labels as compared by ``_check_tpo``: datetime64 dates as YYYYMMDD (the labels
    ``from_bars`` gives datetime64 session ids; the feature tables keep the dates), anything else as it is."""
    x = np.asarray(labels)
    return days_yyyymmdd(x.astype("datetime64[D]").astype(np.int64)) if x.dtype.kind == "M" else x


def _check_tpo(tpo: Any, prof: Profiles) -> Optional[TpoProfiles]:
    """``tpo`` (None or a TpoProfiles of the same sessions: as many, with the same labels when
    ``prof`` has labels): TypeError / ValueError naming ``tpo``."""
    if tpo is None:
        return None
    if not isinstance(tpo, TpoProfiles):
        raise TypeError(f"tpo must be a vpoc.TpoProfiles (vpoc.tpo's result) or None, got {type(tpo).__name__}")
    if tpo.n_sessions != prof.n_sessions:
        raise ValueError(f"tpo has {tpo.n_sessions} sessions but prof has {prof.n_sessions}: pass the TPO "
                         "profiles of the same bars and sessions")
    labels = prof.session_labels
    if labels is not None and not np.array_equal(_comparable(labels), _comparable(tpo.session_labels)):
        raise ValueError("tpo's session labels differ from prof's: pass the TPO profiles of the same bars and "
                         "sessions")
    return tpo


def levels(prof: Profiles, *, node_smoothing: int = 3, node_order: int = 3, hvn_threshold: float = 0.5,
           lvn_threshold: float = 0.5, tpo: Optional[TpoProfiles] = None) -> "Levels":
    """The level lists of every session of ``prof`` (docs/features.md, "Level lists").

    HVN and LVN prices (ragged: ``hvn[hvn_offsets[s]:hvn_offsets[s+1]]``, ascending) by the rule of
    the session table's ``hvn_count`` / ``lvn_count`` (the same code): the histogram smoothed by a
    centred moving sum of ``node_smoothing`` rows, a node the extreme of ``node_order`` rows on each
    side, HVNs at or above ``hvn_threshold`` x the session's largest smoothed volume, LVNs at or
    below ``lvn_threshold`` x it. The balanced target: the price that would make the profile
    symmetric about its POC (the longer side mirrored beyond the shorter one). With ``tpo`` (the
    ``vpoc.tpo`` result of the same sessions) the opening range ``or_high`` / ``or_low`` is carried
    over from it (else those are None: a ``Profiles`` has no times).
    """
    if not isinstance(prof, Profiles):
        raise TypeError(f"prof must be a vpoc.Profiles (from_bars / from_trades), got {type(prof).__name__}")
    if prof.bin_low is not None:  # rows are bin indices of per-session ladders: no tick rows to read
        raise ValueError("vpoc.levels: prof was built with bins= (its rows are bins of each session's own "
                         "range, not tick rows); build it without bins for level lists")
    prof = prof.cpu()
    rules = _node_rules(prof, node_smoothing, node_order, hvn_threshold, lvn_threshold)
    tpo = _check_tpo(tpo, prof)
    nodes = _nodes(SimpleNamespace(rules=rules, prof=prof))  # type: ignore[arg-type]
    cols: Dict[str, Any] = {}
    for kind in _KINDS:
        flag = getattr(nodes, kind)
        offs, prices = _node_levels(nodes, flag)
        cols[f"{kind}_offsets"], cols[kind] = offs, prices
        cols[f"{kind}_row"], cols[f"{kind}_volume"] = nodes.row[flag], nodes.smooth[flag]
        cols[f"{kind}_count"] = np.diff(offs)
    row, side = _balanced_target(np.asarray(prof.poc_row), np.asarray(prof.low_row), np.asarray(prof.n_rows))
    price = np.full(row.shape[0], np.nan)
    price[side != 0] = row[side != 0].astype(np.float64) * rules.row_size
    cols.update(balanced_target=price, balanced_target_row=row, balanced_target_side=side)
    cols["or_high"] = None if tpo is None else np.array(tpo.or_high, dtype=np.float64)
    cols["or_low"] = None if tpo is None else np.array(tpo.or_low, dtype=np.float64)
    settings = dict(tick_size=float(prof.tick_size), ticks_per_row=int(prof.ticks_per_row),
                    row_size=rules.row_size,
                    rules=dict(node_smoothing=rules.node_smoothing, node_order=rules.node_order,
                               hvn_threshold=rules.hvn_threshold, lvn_threshold=rules.lvn_threshold))
    return Levels(cols, settings=settings, profile=prof)


class Levels:
    """Per-session level lists: ``vpoc.levels(prof, ...)``'s result.

    Ragged, like ``Profiles.volume``: ``hvn_offsets`` (int64, S+1) into ``hvn`` (float64 row prices,
    ascending), ``hvn_row`` (int64 ladder rows) and ``hvn_volume`` (the node rule's smoothed
    volume); the same for ``lvn``. Per session (length ``n_sessions``; ``LEVEL_FIELDS``,
    ``to_pandas()``): ``hvn_count``, ``lvn_count`` (int64); ``balanced_target`` (float64 price, NaN
    when the profile is symmetric about its POC or empty), ``balanced_target_row`` (int64,
    ``NO_ROW`` then), ``balanced_target_side`` (int64: +1 the target lies above the profile, -1
    below it, 0 none); ``or_high``, ``or_low`` (float64, from ``tpo=``; None without it).
    ``profile``: the ``Profiles`` they were read from (on the host); ``rules``: the node rules
    used; ``tick_size``, ``ticks_per_row``, ``row_size``, ``session_labels``, ``trade_dates``.
    """

    def __init__(self, columns: Dict[str, Any], *, settings: Dict[str, Any], profile: Profiles) -> None:
        self.__dict__.update(columns)
        self.__dict__.update(settings)
        self.profile = profile
        self.session_labels = profile.session_labels
        self.trade_dates = bool(profile.trade_dates)

    @property
    def n_sessions(self) -> int:
        return int(self.hvn_offsets.shape[0]) - 1

    def __len__(self) -> int:
        return self.n_sessions

    @property
    def labels(self) -> Optional[np.ndarray]:
        """The session labels (alias of ``session_labels``)."""
        return self.session_labels

    def session(self, i: int) -> Dict[str, Any]:
        """Session i's levels: ``hvn``, ``lvn`` (price arrays), ``balanced_target``,
        ``balanced_target_side``, ``or_high``, ``or_low`` (None without ``tpo=``); negative i counts
        from the end."""
        if not -self.n_sessions <= i < self.n_sessions:
            raise IndexError(f"session index {i} out of range for {self.n_sessions} sessions")
        i %= self.n_sessions
        out: Dict[str, Any] = {}
        for kind in _KINDS:
            offs = getattr(self, f"{kind}_offsets")
            out[kind] = getattr(self, kind)[offs[i]:offs[i + 1]]
        out["balanced_target"] = float(self.balanced_target[i])
        out["balanced_target_side"] = int(self.balanced_target_side[i])
        for name in ("or_high", "or_low"):
            col = getattr(self, name)
            out[name] = None if col is None else float(col[i])
        return out

    def __repr__(self) -> str:
        return (f"Levels(n_sessions={self.n_sessions}, hvn={self.hvn.shape[0]}, lvn={self.lvn.shape[0]}, "
                f"opening_range={self.or_high is not None}, row_size={self.row_size})")

    def _fields(self) -> Tuple[str, ...]:
        return tuple(k for k in LEVEL_FIELDS if getattr(self, k) is not None)

    def to_dict(self) -> Dict[str, np.ndarray]:
        """Every per-session column (``LEVEL_FIELDS`` present) and the ragged ``hvn*`` / ``lvn*``
        arrays with their offsets."""
        out = {name: getattr(self, name) for name in self._fields()}
        for kind in _KINDS:
            for suffix in ("_offsets", "", "_row", "_volume"):
                out[kind + suffix] = getattr(self, kind + suffix)
        return out

    def to_pandas(self) -> "pd.DataFrame":
        """One row per session with the per-session columns; the index of ``Profiles.to_pandas()``
        (trade dates, session labels or positions)."""
        pd = require("pandas", "Levels.to_pandas()")
        index = self.profile.to_pandas().index
        return pd.DataFrame({name: getattr(self, name) for name in self._fields()}, index=index)

    def nodes_frame(self) -> "pd.DataFrame":
        """One row per node: ``session`` (position), ``kind`` ("hvn" / "lvn"), ``price``, ``row``,
        ``smoothed_volume``; HVNs first, each kind by session then price."""
        pd = require("pandas", "Levels.nodes_frame()")
        parts = []
        for kind in _KINDS:
            offs = getattr(self, f"{kind}_offsets")
            parts.append(pd.DataFrame({
                "session": np.repeat(np.arange(self.n_sessions, dtype=np.int64), np.diff(offs)),
                "kind": kind, "price": getattr(self, kind), "row": getattr(self, f"{kind}_row"),
                "smoothed_volume": getattr(self, f"{kind}_volume")}))
        return pd.concat(parts, ignore_index=True)
