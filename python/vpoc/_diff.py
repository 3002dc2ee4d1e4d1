"""``vpoc.diff``: two ``Profiles``, or two ``TpoProfiles``, compared session by session: what differs and why.

Contract: same kind and number of sessions or TypeError / ValueError; per session the POC / VAH / VAL / total /
histogram differences (price and rows), and the rule that explains them where the settings or histograms can tell it.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import numpy as np

from ._api import from_trades
from ._arrays import derived_prices
from ._optional import require
from ._presets import BIN_KEYWORDS, PEER_KEYWORDS, RULE_DEFAULTS
from ._profiles import NO_ROW, Profiles
from ._validate import real
from ._diff_side import SIDE_RULES, side_diff
from ._diff_tpo import _TpoView, _windows
from .features import TpoProfiles

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["DIFF_FIELDS", "PEER_RULES", "POC_TIES", "ProfilesDiff", "RULES", "TPO_RULES", "VA_METHODS", "diff"]

#: The rules that decide a profile's levels: the ladder, then the options ``Profiles`` does not record.
RULES: Tuple[str, ...] = ("tick_size", "ticks_per_row", "value_area", "va_method", "poc_tie", "distribute")
#: The same for two ``TpoProfiles`` (each records all of them): the ladder, the level rules, then the
#: rules that place the TPO brackets (the period grid: its length, its start, the clock it is read on).
TPO_RULES: Tuple[str, ...] = ("tick_size", "ticks_per_row", "value_area", "va_method", "poc_tie", "period",
                              "rth_start", "tz", "ib_minutes", "opening_minutes", "ib_end", "ib_anchor")
#: Per kind: the rules after the level rules that move the histogram itself (named instead of "histogram"
#: when both sides record them and they differ).
_SPREAD_RULES = {"volume": ("distribute",), "tpo": ("period", "rth_start", "tz")}
#: The values tried when a side's rule is not recorded (docs/contract.md).
POC_TIES: Tuple[str, ...] = ("center", "low", "high")
VA_METHODS: Tuple[str, ...] = ("cbot", "single", "greedy")
#: The peer rules (docs/presets.md) a ``Profiles.rules`` records: named when both sides record them and
#: they differ, and used when a side's levels are recomputed from its histogram.
PEER_RULES: Tuple[str, ...] = PEER_KEYWORDS + BIN_KEYWORDS
_LEVELS = ("poc", "vah", "val")
_INFERRED = ("poc_tie", "va_method", "value_area")  # the order of a candidate triple

#: The per-session columns of a ``ProfilesDiff``, in ``to_pandas()`` order.
DIFF_FIELDS: Tuple[str, ...] = (
    "differs", "poc_differs", "vah_differs", "val_differs", "total_volume_differs", "histogram_differs",
    "side_differs", "poc_delta", "vah_delta", "val_delta", "poc_rows", "vah_rows", "val_rows", "total_volume_delta",
    "rows_differ", "first_row", "first_price", "rule", "reason",
)

_Triple = Tuple[str, str, float]


class ProfilesDiff:
    """``vpoc.diff(a, b)``'s result: per session (length ``n_sessions``, ``DIFF_FIELDS``):

    - ``differs``: anything below differs; ``poc_differs``, ``vah_differs``, ``val_differs``,
      ``total_volume_differs``, ``histogram_differs``, ``side_differs`` (the aggressor-side fields: delta, buy /
      sell volume per row, delta POC, imbalances, stacked counts; or only one result has them) (bool);
    - ``poc_delta``, ``vah_delta``, ``val_delta`` (b - a, price; NaN when a side is empty) and
      ``poc_rows``, ``vah_rows``, ``val_rows`` (the same in rows of the finer ladder);
      ``total_volume_delta`` (b - a);
    - ``rows_differ``: histogram rows whose volumes differ or that only one profile covers, on the
      compared ladder (-1 when the two ladders cannot be compared row by row); ``first_row`` /
      ``first_price``: the lowest of them (``NO_ROW`` / NaN when none);
    - ``rule``: the likely rule behind the differences ("" when nothing differs): names from
      ``RULES`` and "histogram" (the volumes differ: other inputs, or ``distribute``) joined by "+",
      alternatives joined by " or ", "unexplained" when no rule tried reproduces a side;
      ``reason``: the same in words, with the values that tell it.

    Of two ``TpoProfiles`` the histogram is the TPO counts (``total_volume_*``: the total TPO
    count), the levels the TPO POC / value area, the rule names from ``TPO_RULES``.

    Also: ``settings`` (each rule of ``RULES``, or ``TPO_RULES``, -> (a's, b's); None where a side
    does not record it), ``compared_row_size`` (the row size histograms were compared on, or
    None), ``notes`` (what could not be compared and why), ``session_labels``, ``trade_dates`` (a's).
    """

    def __init__(self, columns: Dict[str, np.ndarray], *, settings: Dict[str, Tuple[Any, Any]],
                 compared_row_size: Optional[float], notes: Tuple[str, ...], source: Any) -> None:
        self.__dict__.update(columns)
        self.settings = settings
        self.compared_row_size = compared_row_size
        self.notes = notes
        self.session_labels = source.session_labels
        self.trade_dates = source.trade_dates
        self._source = source

    @property
    def n_sessions(self) -> int:
        return int(self.differs.shape[0])

    def __len__(self) -> int:
        return self.n_sessions

    def __repr__(self) -> str:
        counts = ", ".join(f"{name[:-8]} {int(getattr(self, name).sum())}" for name in DIFF_FIELDS[1:7])
        return f"ProfilesDiff(n_sessions={self.n_sessions}, differ={int(self.differs.sum())}: {counts})"

    def to_dict(self) -> Dict[str, np.ndarray]:
        """Every per-session column (``DIFF_FIELDS``) as a numpy array."""
        return {name: getattr(self, name) for name in DIFF_FIELDS}

    def to_pandas(self) -> "pd.DataFrame":
        """One row per session with every column, indexed as ``a.to_pandas()`` (trade dates,
        session labels or 0..S-1)."""
        pd = require("pandas", "ProfilesDiff.to_pandas()")
        index = self._source.to_pandas().index
        return pd.DataFrame(self.to_dict(), index=index)


def _rules_of(prof: Any) -> Dict[str, Any]:
    """The rules a result records: tick_size and ticks_per_row always, the others when it carries a
    ``rules`` dict (as ``TpoProfiles`` does: every one of ``TPO_RULES``)."""
    out: Dict[str, Any] = {"tick_size": float(prof.tick_size), "ticks_per_row": int(prof.ticks_per_row)}
    extra = getattr(prof, "rules", None)
    if isinstance(extra, dict):
        tpo = getattr(prof, "kind", "volume") == "tpo"
        names = TPO_RULES if tpo else RULES + PEER_RULES + SIDE_RULES
        out.update({k: extra[k] for k in names[2:] if k in extra})
        for k in ("preset", "assumed"):
            if k in extra:
                out[k] = extra[k]
    return out


def _value_areas(value_area: Any) -> Tuple[float, ...]:
    values = value_area if isinstance(value_area, (list, tuple, np.ndarray)) else (value_area,)
    out = []
    for v in values:
        x = real(v, "value_area")
        if not 0.0 < x <= 1.0:
            raise ValueError(f"value_area must be in (0, 1], got {v!r}")
        out.append(x)
    if not out:
        raise ValueError("value_area must name at least one value-area fraction")
    return tuple(out)


def _ragged(prof: Any, m: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, low rows, volumes) of ``prof``'s histograms on the ladder of rows ``m`` times its
    own (row R holds rows m*R .. m*R + m - 1; m == 1: the histograms themselves); a TPO profile's
    counts on that ladder are rebuilt from its periods (``_TpoView.coarse``)."""
    n = np.asarray(prof.n_rows, dtype=np.int64)
    low = np.asarray(prof.low_row, dtype=np.int64)
    vol = np.asarray(prof.volume, dtype=np.float64)
    if m > 1 and isinstance(prof, _TpoView):
        return prof.coarse(m)
    if m == 1:
        return np.asarray(prof.offsets, dtype=np.int64), np.where(n > 0, low, 0), vol
    S = n.shape[0]
    sess = np.repeat(np.arange(S, dtype=np.int64), n)
    row = np.repeat(low, n) + (np.arange(vol.shape[0], dtype=np.int64) - np.repeat(np.cumsum(n) - n, n))
    clow = np.where(n > 0, np.floor_divide(low, m), 0)
    cn = np.where(n > 0, np.floor_divide(low + n - 1, m) - clow + 1, 0)
    offs = np.concatenate(([0], np.cumsum(cn))).astype(np.int64)
    out = np.bincount(offs[:-1][sess] + np.floor_divide(row, m) - clow[sess], weights=vol,
                      minlength=int(offs[-1])).astype(np.float64)
    return offs, clow, out


def _compare_rows(a: Tuple[np.ndarray, ...], b: Tuple[np.ndarray, ...], rtol: float
                  ) -> Tuple[np.ndarray, np.ndarray]:
    """Per session: (rows that differ, lowest such row or NO_ROW) over the union of the two
    sessions' rows: a row differs when its volumes differ (beyond ``rtol`` relative; a row outside
    a profile holds 0 there) or when only one profile covers it (the extent decides poc_tie="center")."""
    (oa, la, va), (ob, lb, vb) = a, b
    na, nb = np.diff(oa), np.diff(ob)
    S = na.shape[0]
    ha, hb = la + na - 1, lb + nb - 1
    lo = np.where(na > 0, np.where(nb > 0, np.minimum(la, lb), la), lb)
    hi = np.where(na > 0, np.where(nb > 0, np.maximum(ha, hb), ha), hb)
    width = np.where((na > 0) | (nb > 0), hi - lo + 1, 0)
    offs = np.concatenate(([0], np.cumsum(width))).astype(np.int64)
    dense = np.zeros((2, int(offs[-1])), dtype=np.float64)
    covered = np.zeros((2, int(offs[-1])), dtype=bool)
    for k, (o, low, v, n) in enumerate(((oa, la, va, na), (ob, lb, vb, nb))):
        sess = np.repeat(np.arange(S, dtype=np.int64), n)
        at = offs[:-1][sess] + (low - lo)[sess] + (np.arange(v.shape[0], dtype=np.int64) - np.repeat(o[:-1], n))
        dense[k, at] = v
        covered[k, at] = True
    x, y = dense
    bad = (np.abs(x - y) > rtol * np.maximum(np.abs(x), np.abs(y))) | (covered[0] != covered[1])
    hits = np.flatnonzero(bad)
    seg = np.searchsorted(offs, hits, side="right") - 1
    count = np.bincount(seg, minlength=S).astype(np.int64)
    first = np.full(S, NO_ROW, dtype=np.int64)
    segs, at = np.unique(seg, return_index=True)
    first[segs] = lo[segs] + (hits[at] - offs[segs])
    return count, first


def _levels_under(prof: Any, sel: np.ndarray, poc_tie: str, va_method: str, value_area: float
                  ) -> np.ndarray:
    """[len(sel), 3] (poc_row, vah_row, val_row) of sessions ``sel`` of ``prof`` recomputed by the
    engine from their histograms (each row a trade at its row price) under these rules and the peer
    rules ``prof.rules`` records (with va_rows='touched' the rows holding volume stand for the
    touched rows: a touched row of 0 is not recorded)."""
    n = np.asarray(prof.n_rows, dtype=np.int64)[sel]
    offs = np.asarray(prof.offsets, dtype=np.int64)
    take = np.concatenate([np.arange(offs[s], offs[s + 1]) for s in sel.tolist()]) if sel.size else \
        np.zeros(0, dtype=np.int64)
    rows = np.repeat(np.asarray(prof.low_row, dtype=np.int64)[sel], n) + (
        np.arange(take.shape[0], dtype=np.int64) - np.repeat(np.cumsum(n) - n, n))
    vol = np.asarray(prof.volume, dtype=np.float64)[take]
    recorded = getattr(prof, "rules", None)
    # the level rules only: a bins=N histogram is levelled as rows 0..N-1 (its bins)
    peer = {k: recorded[k] for k in PEER_KEYWORDS if k in recorded} if isinstance(recorded, dict) else {}
    off = np.concatenate(([0], np.cumsum(n)))
    if peer.get("va_rows") == "touched":
        keep = vol > 0
        cnt = np.bincount(np.repeat(np.arange(n.size), n)[keep], minlength=n.size)
        off = np.concatenate(([0], np.cumsum(cnt)))
        rows, vol = rows[keep], vol[keep]
    row = float(prof.row_size)
    with derived_prices():  # a profile's ladder rows, not the caller's prices
        r = from_trades(rows.astype(np.float64) * row, vol, offsets=off, tick_size=row, value_area=value_area,
                        va_method=va_method, poc_tie=poc_tie, **peer)
    return np.stack([r.poc_row, r.vah_row, r.val_row], axis=1)


def _candidates(prof: Any, sel: np.ndarray, recorded: Dict[str, Any], value_areas: Tuple[float, ...]
                ) -> List[Set[_Triple]]:
    """Per session of ``sel``: the (poc_tie, va_method, value_area) triples under which the engine
    reproduces ``prof``'s POC, VAH and VAL rows from its own histogram. A recorded rule is the only
    value tried for it. A session no triple reproduces at ``value_areas`` is tried again with the
    fraction of its volume its value area holds (``va_volume / total_volume``: the largest
    ``value_area`` giving that value area)."""
    ties = (recorded["poc_tie"],) if "poc_tie" in recorded else POC_TIES
    methods = (recorded["va_method"],) if "va_method" in recorded else VA_METHODS
    fixed = (float(recorded["value_area"]),) if "value_area" in recorded else value_areas
    want = np.stack([np.asarray(getattr(prof, f"{x}_row"))[sel] for x in _LEVELS], axis=1)
    out: List[Set[_Triple]] = [set() for _ in range(sel.shape[0])]
    for t, m, v in itertools.product(ties, methods, fixed):
        ok = np.all(_levels_under(prof, sel, t, m, v) == want, axis=1)
        for k in np.flatnonzero(ok).tolist():
            out[k].add((t, m, v))
    if "value_area" in recorded:
        return out
    total = np.asarray(prof.total_volume, dtype=np.float64)
    va_vol = np.asarray(prof.va_volume, dtype=np.float64)
    for k in [k for k, c in enumerate(out) if not c]:
        s = int(sel[k])
        if not total[s] > 0:
            continue
        v = min(float(va_vol[s] / total[s]), 1.0)
        one = sel[k:k + 1]
        for t, m in itertools.product(ties, methods):
            if np.array_equal(_levels_under(prof, one, t, m, v)[0], want[k]):
                out[k].add((t, m, v))
    return out


def _explain(ca: Set[_Triple], cb: Set[_Triple]) -> Tuple[List[FrozenSet[str]], str]:
    """The smallest sets of rule names in which a triple of ``ca`` and one of ``cb`` differ, and
    the values that show it."""
    best: Dict[FrozenSet[str], Tuple[set, set]] = {}
    size = None
    for x, y in itertools.product(sorted(ca), sorted(cb)):
        names = frozenset(n for i, n in enumerate(_INFERRED) if x[i] != y[i])
        if size is None or len(names) < size:
            best, size = {}, len(names)
        if len(names) == size:
            sa, sb = best.setdefault(names, (set(), set()))
            sa.add(x)
            sb.add(y)
    words = []
    for names, (sa, sb) in best.items():
        for i, n in enumerate(_INFERRED):
            if n in names:
                fmt = (lambda v: f"{v:.4g}") if i == 2 else repr
                va_ = ", ".join(sorted({fmt(x[i]) for x in sa}))
                vb_ = ", ".join(sorted({fmt(y[i]) for y in sb}))
                words.append(f"{n}: a fits {va_}, b fits {vb_}")
    return list(best), "; ".join(dict.fromkeys(words))


def _check(x: Any, name: str) -> Any:
    """``x`` as ``diff`` reads it: a Profiles on the host, or a TpoProfiles' TPO histogram."""
    if isinstance(x, TpoProfiles):
        return _TpoView(x)
    if not isinstance(x, Profiles):
        raise TypeError(f"{name} must be a vpoc.Profiles or a vpoc.TpoProfiles (two of the same kind), got "
                        f"{type(x).__name__}")
    return x.cpu()


def diff(a: Any, b: Any, *, rtol: float = 1e-9, value_area: Any = 0.70) -> ProfilesDiff:
    """Compare two ``Profiles``, or two ``TpoProfiles``, session by session (position by position).

    For each session: whether POC, VAH, VAL, total volume and histogram differ, by how much (b - a
    in price, and in rows of the finer ladder), how many histogram rows differ and the lowest one,
    and the likely rule behind the differences (``ProfilesDiff``). Volumes are equal within
    ``rtol`` relative (default 1e-9, the engine's tie band); levels compare as prices (equal within
    a millionth of a row).

    Two ``TpoProfiles`` (``vpoc.tpo`` results) compare their TPO profiles the same way: the TPO
    counts per row are the histogram (``total_volume_*`` is then the total TPO count), the TPO POC /
    VAH / VAL the levels, and every rule is read from their ``rules`` (``TPO_RULES``): besides the
    ladder and the level rules, ``period`` / ``rth_start`` / ``tz`` (the period grid) are named in
    place of "histogram" when they differ and the counts do.

    Histograms are compared row by row on one ladder: the common one, or the coarser of the two
    when its row size is a whole multiple of the finer one's (the finer histogram summed onto the
    coarser rows: ``ticks_per_row`` 1 vs 2 compares on 2-tick rows); otherwise they are not
    compared (``rows_differ == -1``, said in ``notes``).

    The rule: a ``tick_size`` / ``ticks_per_row`` difference is read from the two results; a
    volume difference is "histogram" (other inputs, or ``distribute``: ``Profiles`` does not record
    how bars were spread). ``value_area``, ``va_method`` and ``poc_tie`` are not recorded by
    ``Profiles`` either (a result carrying a ``rules`` dict, as ``TpoProfiles`` does, has them read
    from it): for a session whose levels differ each side's POC / VAH / VAL are recomputed by the
    engine from its own histogram under every ``poc_tie`` x ``va_method`` with each fraction of
    ``value_area`` (a number or a sequence; default 0.70), else with the fraction that side's
    value area holds, and the rule names in which the fitting rules of a and b differ least are
    reported ("unexplained" when no rule tried reproduces a side). When both results carry
    ``Profiles.rules`` (a call with ``preset=`` or a peer-rule keyword, docs/presets.md), each peer
    rule (``PEER_RULES``) that differs between them is named for the sessions whose levels differ
    (``rule`` "va_stop", ``reason`` "va_stop: 'reaches' vs 'exceeds'", and the presets when they
    differ), beside the row-level words; ``settings`` lists them, and a side's levels are
    recomputed under its own peer rules. Raises TypeError naming ``a`` /
    ``b`` for anything but a Profiles or a TpoProfiles, or for one of each; ValueError when their
    session counts differ.
    """
    pa, pb = _check(a, "a"), _check(b, "b")
    kind = getattr(pa, "kind", "volume")
    if getattr(pb, "kind", "volume") != kind:
        tp, other = ("a", "b") if kind == "tpo" else ("b", "a")
        raise TypeError(f"{tp} is a vpoc.TpoProfiles and {other} a vpoc.Profiles: diff compares like with like "
                        f"(a TpoProfiles' volume_profile is the volume profile of its bars)")
    names = TPO_RULES if kind == "tpo" else RULES
    tol = real(rtol, "rtol")
    if not 0.0 <= tol < 1.0:
        raise ValueError(f"rtol must be in [0, 1), got {rtol!r}")
    fractions = _value_areas(value_area)
    S = pa.n_sessions
    if pb.n_sessions != S:
        raise ValueError(f"diff compares session by session: a has {S} sessions, b has {pb.n_sessions}")
    ra, rb = _rules_of(pa), _rules_of(pb)
    notes: List[str] = []
    if kind == "volume":
        _plain_side(pa, pb, ra, rb, notes)
    settings = {k: (ra.get(k), rb.get(k)) for k in names}
    settings.update({k: (ra.get(k), rb.get(k)) for k in PEER_RULES + ("preset", "assumed") + SIDE_RULES
                     if k in ra or k in rb})
    inert = _inert(pa, pb, ra, rb, notes) if kind == "volume" else ()
    unrecorded = [k for k in names[2:] if k not in ra or k not in rb]
    if unrecorded:
        notes.append(f"{', '.join(unrecorded)} not recorded on both results: the rule behind a level difference is "
                     "inferred from each side's histogram (see vpoc.diff)")
    la, lb = pa.session_labels, pb.session_labels
    if la is not None and lb is not None and not np.array_equal(np.asarray(la), np.asarray(lb)):
        k = int(np.flatnonzero(np.asarray(la) != np.asarray(lb))[0])
        notes.append(f"session labels differ (first at position {k}: {la[k]} vs {lb[k]}); compared by position")
    ladder = [k for k in RULES[:2] if not np.isclose(ra[k], rb[k], rtol=1e-12, atol=0.0)]
    size_a, size_b = float(pa.row_size), float(pb.row_size)
    fine = min(size_a, size_b)
    ratio = max(size_a, size_b) / fine
    compared: Optional[float] = None
    if abs(ratio - round(ratio)) <= 1e-9 * ratio:
        m = int(round(ratio))
        compared = max(size_a, size_b)
        rows_differ, first = _compare_rows(_ragged(pa, m if size_a < size_b else 1),
                                           _ragged(pb, m if size_b < size_a else 1), tol)
        if m > 1:
            how = ("the finer TPO profile's periods counted on them" if kind == "tpo" else
                   "the finer histogram summed onto them")
            notes.append(f"row sizes differ ({size_a:g} vs {size_b:g}): histograms compared on the coarser rows "
                         f"({compared:g}, {how})")
        first_price = np.where(first != NO_ROW, first.astype(np.float64) * compared, np.nan)
        hist = rows_differ > 0
    else:
        rows_differ = np.full(S, -1, dtype=np.int64)
        first = np.full(S, NO_ROW, dtype=np.int64)
        first_price = np.full(S, np.nan)
        hist = (np.asarray(pa.n_rows) > 0) | (np.asarray(pb.n_rows) > 0)
        notes.append(f"row sizes {size_a:g} and {size_b:g} share no ladder: histograms not compared row by row")
    unit: Any = fine
    ba, bb = getattr(pa, "bin_low", None), getattr(pb, "bin_low", None)
    if ba is not None or bb is not None:  # bins=N (docs/presets.md): rows are bins of each session's ladder
        same = ba is not None and bb is not None and all(
            np.array_equal(np.asarray(getattr(pa, k)), np.asarray(getattr(pb, k)), equal_nan=k != "n_rows")
            for k in ("bin_low", "bin_width", "n_rows"))
        if same:
            first_price = np.where(first != NO_ROW, pa.bin_low + pa.bin_width * first.astype(np.float64), np.nan)
        else:
            rows_differ, first = np.full(S, -1, dtype=np.int64), np.full(S, NO_ROW, dtype=np.int64)
            first_price = np.full(S, np.nan)
            hist = (np.asarray(pa.n_rows) > 0) | (np.asarray(pb.n_rows) > 0)
            notes.append("bins=N ladders differ (bins, or one side on the tick ladder): histograms not compared "
                         "bin by bin")
        if ba is not None:
            w = np.asarray(pa.bin_width, dtype=np.float64)
            unit = np.where(w > 0, w, fine)
            notes.append("level differences in 'rows' are counted in a's bins (bin_width)")
    cols: Dict[str, Any] = {}
    for x in _LEVELS:
        pxa, pxb = np.asarray(getattr(pa, x), dtype=np.float64), np.asarray(getattr(pb, x), dtype=np.float64)
        both_nan = np.isnan(pxa) & np.isnan(pxb)
        cols[f"{x}_differs"] = ~both_nan & ~(np.abs(pxb - pxa) <= 1e-6 * fine)
        cols[f"{x}_delta"] = pxb - pxa
        cols[f"{x}_rows"] = (pxb - pxa) / unit
    ta, tb = np.asarray(pa.total_volume, dtype=np.float64), np.asarray(pb.total_volume, dtype=np.float64)
    cols["total_volume_differs"] = np.abs(tb - ta) > tol * np.maximum(np.abs(ta), np.abs(tb))
    cols["total_volume_delta"] = tb - ta
    cols["histogram_differs"] = hist
    level = cols["poc_differs"] | cols["vah_differs"] | cols["val_differs"]
    other = level | cols["total_volume_differs"] | hist
    same_ladder = compared == fine and ba is None and bb is None  # per-row side fields: row by row
    side, side_names, side_words = (side_diff(pa, pb, ra, rb, tol, _compare_rows if same_ladder else None, notes)
                                    if kind == "volume" else (np.zeros(S, dtype=bool), [], []))
    cols["side_differs"] = side
    cols["differs"] = other | side
    cols.update(rows_differ=rows_differ, first_row=first, first_price=first_price)
    rule, reason = _rules(pa, pb, ra, rb, cols, level, ladder, fractions, kind, inert)
    if kind == "tpo":
        rule, reason = rule.astype(object), reason.astype(object)
        _windows(pa.source, pb.source, ra, rb, cols, rule, reason)
        rule, reason = rule.astype(str), reason.astype(str)
    if side.any():
        rule, reason = _with_side(rule.astype(object), reason.astype(object), side, other, side_names, side_words)
    cols["rule"], cols["reason"] = rule, reason
    return ProfilesDiff({k: cols[k] for k in DIFF_FIELDS}, settings=settings, compared_row_size=compared,
                        notes=tuple(notes), source=getattr(pa, "source", pa))


def _with_side(rule: np.ndarray, reason: np.ndarray, side: np.ndarray, other: np.ndarray, names: List[str],
               words: List[str]) -> Tuple[np.ndarray, np.ndarray]:
    """``rule`` / ``reason`` with the side fields' causes (vpoc._diff_side) added to each alternative of the
    sessions whose side fields differ (in place of "unexplained" where nothing else differs)."""
    for s in np.flatnonzero(side).tolist():
        alts = [] if (not other[s] and rule[s] == "unexplained") else str(rule[s]).split(" or ")
        rule[s] = " or ".join(dict.fromkeys("+".join(x for x in (a, names[s]) if x) for a in alts)) if alts else names[s]
        reason[s] = "; ".join(x for x in ((reason[s] if alts else ""), words[s]) if x)
    return rule.astype(str), reason.astype(str)


def _plain_side(pa: Any, pb: Any, ra: Dict[str, Any], rb: Dict[str, Any], notes: List[str]) -> None:
    """A Profiles with no ``rules`` (a plain call: docs/presets.md, its rules are today's) against one
    that records them: its ladder is the tick ladder (``bins`` None, ``BIN_KEYWORDS`` as
    ``RULE_DEFAULTS``) and its preset None, so that ``bins=50`` of ``preset="wickra"`` is named; its
    other peer rules stay unrecorded (not named)."""
    for prof, mine, other, side in ((pa, ra, rb, "a"), (pb, rb, ra, "b")):
        if "preset" not in (getattr(prof, "rules", None) or {}) and "preset" in other and other.get("bins") is not None:
            mine.update({k: RULE_DEFAULTS[k] for k in BIN_KEYWORDS if k in other})
            mine.update(preset=None)
            notes.append(f"{side} records no rules (made without preset= or a peer rule): it is on the tick "
                         "ladder (bins=None)")


def _whole(prof: Any) -> bool:
    v = np.asarray(prof.volume, dtype=np.float64)
    return bool(np.all(v == np.floor(v))) and (v.size == 0 or float(np.max(np.abs(v))) < 1e9)


def _inert(pa: Any, pb: Any, ra: Dict[str, Any], rb: Dict[str, Any], notes: List[str]) -> Tuple[str, ...]:
    """The recorded peer rules that differ but are documented to have no effect here (docs/presets.md):
    ``row_label`` "top" vs "low" with ``ticks_per_row=1`` on both sides, ``tie_tol`` values of at most
    1e-9 on histograms of whole volumes below 1e9 per row; said in ``notes``, never named as a cause."""
    out = []
    if ra.get("row_label") != rb.get("row_label") and "row_label" in ra and "row_label" in rb \
            and ra["ticks_per_row"] == rb["ticks_per_row"] == 1:
        out.append("row_label")
        notes.append(f"row_label {ra['row_label']!r} vs {rb['row_label']!r} has no effect with ticks_per_row=1 "
                     "(a row's top tick is its only tick): not named as a cause")
    ta, tb = ra.get("tie_tol"), rb.get("tie_tol")
    if ta is not None and tb is not None and ta != tb and max(ta, tb) <= 1e-9 and _whole(pa) and _whole(pb):
        out.append("tie_tol")
        notes.append(f"tie_tol {ta!r} vs {tb!r} agree on whole volumes below 1e9 per row (these histograms): "
                     "not named as a cause")
    return tuple(out)


def _level_words(x: str, cols: Dict[str, Any], s: int, pa: Any, pb: Any) -> str:
    if np.isnan(float(getattr(pa, x)[s])):
        return f"{x}: a's session is empty"
    if np.isnan(float(getattr(pb, x)[s])):
        return f"{x}: b's session is empty"
    return f"{x} {cols[f'{x}_delta'][s]:+g} ({cols[f'{x}_rows'][s]:+g} rows)"


def _rules(pa: Any, pb: Any, ra: Dict[str, Any], rb: Dict[str, Any], cols: Dict[str, Any],
           level: np.ndarray, ladder: Sequence[str], fractions: Tuple[float, ...], kind: str = "volume",
           inert: Sequence[str] = ()) -> Tuple[np.ndarray, np.ndarray]:
    """The ``rule`` and ``reason`` columns (see ``ProfilesDiff``); ``kind``: "volume" (Profiles) or
    "tpo" (TpoProfiles: TPO counts in place of volumes, the period grid in place of ``distribute``)."""
    S = level.shape[0]
    rule = np.full(S, "", dtype=object)
    reason = np.full(S, "", dtype=object)
    base = list(ladder)
    base_words = [f"{k} {ra[k]:g} vs {rb[k]:g}" for k in ladder]
    spread = [k for k in _SPREAD_RULES[kind] if k in ra and k in rb and ra[k] != rb[k]]
    # peer rules both sides record (Profiles.rules) and that differ: they move the levels only
    # (less those documented to have no effect here: ``inert``); bins=N and its rules move the
    # histogram too: named for every session that differs
    peer = [k for k in PEER_RULES if k in ra and k in rb and ra[k] != rb[k] and k not in inert]
    bins = [k for k in peer if k in BIN_KEYWORDS]
    peer = [k for k in peer if k not in BIN_KEYWORDS]
    preset_words = ([f"preset: {ra.get('preset')!r} vs {rb.get('preset')!r}"]
                    if (peer or bins) and ra.get("preset") != rb.get("preset") else [])
    peer_words = [f"{k}: {ra[k]!r} vs {rb[k]!r}" for k in peer]
    bin_words = [f"{k}: {ra[k]!r} vs {rb[k]!r}" for k in bins]
    total = "total TPO count" if kind == "tpo" else "total volume"
    ne = (np.asarray(pa.n_rows) > 0) & (np.asarray(pb.n_rows) > 0)
    sel = np.flatnonzero(level & ne)
    ca = _candidates(pa, sel, ra, fractions) if sel.size else []
    cb = _candidates(pb, sel, rb, fractions) if sel.size else []
    where = {int(s): k for k, s in enumerate(sel.tolist())}
    for s in np.flatnonzero(cols["differs"]).tolist():
        names = list(base)
        words = list(base_words) + [_level_words(x, cols, s, pa, pb) for x in _LEVELS if cols[f"{x}_differs"][s]]
        if cols["rows_differ"][s] < 0:  # no common ladder: the ladder alone may explain the histograms
            if cols["total_volume_differs"][s]:
                if kind != "tpo":  # a TPO total depends on the ladder: the ladder alone may explain it
                    names.append("histogram")
                words.append(f"{total} {cols['total_volume_delta'][s]:+g}")
            words.append("histograms not compared (no common ladder)")
        elif cols["histogram_differs"][s]:
            if spread:
                names.extend(spread)
                words.extend(f"{k} {ra[k]!r} vs {rb[k]!r}" for k in spread)
            else:
                names.append("histogram")
            what = "TPO count rows" if kind == "tpo" else "histogram rows"
            words.append(f"{cols['rows_differ'][s]} {what} differ, the lowest at {cols['first_price'][s]:g}")
            if cols["total_volume_differs"][s]:
                words.append(f"{total} {cols['total_volume_delta'][s]:+g}")
            elif not spread:
                words.append("the same total TPO count on other rows (other bars, or the period grid)"
                             if kind == "tpo" else
                             "the same total volume on other rows (distribute, or the inputs' prices)")
        if bins:
            names.extend(bins)
            words.extend(bin_words)
        if level[s] and peer:
            names.extend(peer)
            words.extend(peer_words)
        if (bins or (level[s] and peer)) and preset_words:
            words.extend(preset_words)
        alternatives = [names]
        k = where.get(s)
        if k is not None and ca[k] and cb[k]:
            found, text = _explain(ca[k], cb[k])
            alternatives = [names + [n for n in _INFERRED if n in f] for f in found]
            if text:
                words.append(text)
        elif k is not None:
            words.append(f"no poc_tie / va_method / value_area tried reproduces {'a' if not ca[k] else 'b'}'s "
                         "levels from its histogram")
        rule[s] = " or ".join(dict.fromkeys("+".join(alt) for alt in alternatives if alt)) or "unexplained"
        reason[s] = "; ".join(words)
    return rule.astype(str), reason.astype(str)
