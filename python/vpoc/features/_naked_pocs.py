"""Naked (virgin) POCs: the POCs no later session traded through, by one O(m log m) sweep.

Contract: POC j is naked at the end of session e >= j while no session k (j < k <= e) traded
through its row; counts and nearest-level distances per session and per bar of the next session.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np

from ._engine import _Context
from ._segments import _price_rows

__all__ = ["_SortedSet", "_first_touch", "_naked"]


class _SortedSet:
    """A set of integers in [0, n): insert, remove, successor and predecessor in O(log_64 n)
    (a 64-ary tree of bit words: bit w of level h + 1 is set iff word w of level h is non-zero;
    each level has one spare zero word, so a successor query at n needs no bounds check).

    ``levels[0]`` may be read directly (a query answered within one word); a caller that clears
    or sets a whole word of level 0 passes the word's index to ``discard`` / ``add`` with
    ``h=1``."""

    __slots__ = ("levels",)

    def __init__(self, n: int) -> None:
        self.levels: List[List[int]] = []
        while True:
            n = (n + 63) >> 6
            self.levels.append([0] * (n + 1))
            if n <= 1:
                break

    def add(self, i: int, h: int = 0) -> None:
        levels = self.levels
        for h in range(h, len(levels)):
            words = levels[h]
            w = i >> 6
            old = words[w]
            words[w] = old | (1 << (i & 63))
            if old:
                return
            i = w

    def discard(self, i: int, h: int = 0) -> None:
        levels = self.levels
        for h in range(h, len(levels)):
            words = levels[h]
            w = i >> 6
            x = words[w] & ~(1 << (i & 63))
            words[w] = x
            if x:
                return
            i = w

    def next(self, i: int) -> int:
        """The smallest member >= i (0 <= i <= n), or -1."""
        levels = self.levels
        h = 0
        for words in levels:
            x = words[i >> 6] >> (i & 63)
            if x:
                i += (x & -x).bit_length() - 1
                break
            i = (i >> 6) + 1
            h += 1
        else:
            return -1
        while h:
            h -= 1
            x = levels[h][i]
            i = (i << 6) + (x & -x).bit_length() - 1
        return i

    def prev(self, i: int) -> int:
        """The largest member <= i (i < n), or -1 (i < 0: -1)."""
        levels = self.levels
        h = 0
        for words in levels:
            if i < 0:
                return -1
            w = i >> 6
            x = words[w] & ((2 << (i & 63)) - 1)
            if x:
                i = (w << 6) + x.bit_length() - 1
                break
            i = w - 1
            h += 1
        else:
            return -1
        while h:
            h -= 1
            i = (i << 6) + levels[h][i].bit_length() - 1
        return i


_SWEEP_BLOCK = 1 << 17  # sessions / queries per block of a sweep (bounds its Python lists)


def _first_touch(p_row: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """For each j: the first k > j with lo[k] <= p_row[j] <= hi[k] (len(p_row) when none).

    A sweep over k with the POCs not yet touched kept in a sorted set (by row): session k removes
    the pending ones in its row range, then adds its own. Each POC is added and removed at most
    once: O(m log m)."""
    m = p_row.shape[0]
    order = np.argsort(p_row, kind="stable")
    rows = p_row[order]
    pos = np.empty(m, dtype=np.int64)
    pos[order] = np.arange(m, dtype=np.int64)
    touch = np.full(m, m, dtype=np.int64)
    pending = _SortedSet(m)
    add, discard, nxt = pending.add, pending.discard, pending.next
    L0 = pending.levels[0]
    for k0 in range(0, m, _SWEEP_BLOCK):
        k1 = min(m, k0 + _SWEEP_BLOCK)
        a = np.searchsorted(rows, lo[k0:k1], side="left").tolist()  # pending in [a, b)
        b = np.searchsorted(rows, hi[k0:k1], side="right").tolist()
        hit_pos: List[int] = []
        hit_k: List[int] = []
        for k, p in enumerate(pos[k0:k1].tolist(), k0):
            s, bk = a[k - k0], b[k - k0]
            if s < bk:  # remove the pending positions in [s, bk) (level-0 words inline)
                x = L0[s >> 6] >> (s & 63)
                s = s + (x & -x).bit_length() - 1 if x else nxt(s)
                while 0 <= s < bk:
                    w = s >> 6
                    x = L0[w] & ~(1 << (s & 63))
                    L0[w] = x
                    if not x:
                        discard(w, 1)
                    hit_pos.append(s)
                    hit_k.append(k)
                    x >>= s & 63
                    s = s + (x & -x).bit_length() - 1 if x else nxt(s + 1)
            w = p >> 6
            x = L0[w]
            L0[w] = x | (1 << (p & 63))
            if not x:
                add(w, 1)
        touch[order[np.asarray(hit_pos, dtype=np.int64)]] = np.asarray(hit_k, dtype=np.int64)
    return touch


def _naked(ctx: _Context, bar_close: Optional[np.ndarray]) -> Dict[str, np.ndarray]:
    """Naked POCs: the POC of non-empty session j is naked at the end of session e >= j while no
    session k (j < k <= e) traded through its row (row(low_k) <= poc_row_j <= row(high_k)).

    Returns per non-empty session e (length m): ``count``, ``above``, ``below`` (distances in
    price from the close of e), and with ``bar_close``: per bar of the *next* non-empty session,
    ``bar_count``, ``bar_above``, ``bar_below`` against the set at the end of the previous one.

    POC j is naked for e in [j, end_j), end_j = min(first later session touching it, j +
    naked_max_age). Counts are prefix sums. The nearest naked POC above (below) a price x is the
    next (previous) naked one, in the stable (price, session) order of all POCs, from the first
    POC >= x (the last <= x): the element a search of the sorted naked levels alone finds. A
    sweep over e keeps the naked set (add j at e = j, remove it at e = end_j) and answers the
    queries of e, one look-up per distinct (e, position): O(m log m + bars log m), in blocks.
    """
    rules = ctx.rules
    m = ctx.ne.shape[0]
    res = {k: np.full(m, np.nan) for k in ("count", "above", "below")}
    if bar_close is not None:
        n = bar_close.shape[0]
        res.update({k: np.full(n, np.nan) for k in ("bar_count", "bar_above", "bar_below")})
        if m:  # the first non-empty session: nothing is known before it
            first = int(ctx.ne[0])
            res["bar_count"][ctx.data.offsets[first]:ctx.data.offsets[first + 1]] = 0.0
    if m == 0:
        return res
    p_row = np.asarray(ctx.prof.poc_row)[ctx.ne]
    price = np.asarray(ctx.prof.poc)[ctx.ne]
    lo = _price_rows(ctx.s_low[ctx.ne], rules)
    hi = _price_rows(ctx.s_high[ctx.ne], rules)
    ks = np.arange(m, dtype=np.int64)
    end = _first_touch(p_row, lo, hi)
    del p_row, lo, hi
    if rules.naked_max_age is not None:  # naked at e while e - j < naked_max_age (e - j < m)
        end = np.minimum(end, ks + min(rules.naked_max_age, m))
    # count at e: the j <= e whose end is past e
    count = (ks + 1 - np.cumsum(np.bincount(end[end < m], minlength=m))).astype(np.float64)
    res["count"][:] = count
    order = np.argsort(price, kind="stable")  # the levels in (price, session) order
    price_sorted = price[order]
    pos = np.empty(m, dtype=np.int64)
    pos[order] = ks
    del order
    r_order = np.argsort(end, kind="stable")  # removals by time
    r_end = end[r_order]
    r_pos = pos[r_order]
    del r_order, end
    # the queries at e: the close of session e, and the bars [bs[e], bs[e + 1]) (the bars of
    # session ne[e + 1]; empty sessions have none)
    bs = np.zeros(m + 1, dtype=np.int64)
    if bar_close is not None:
        bs[:m - 1] = ctx.data.offsets[ctx.ne[1:]]
        bs[m - 1:] = bar_close.shape[0]
    cum = bs + np.arange(m + 1, dtype=np.int64)  # queries before e: cum[e] - bs[0]
    s_close = ctx.s_close[ctx.ne]
    naked = _SortedSet(m)
    add, discard, nxt, prv = naked.add, naked.discard, naked.next, naked.prev
    L0 = naked.levels[0]
    e0 = 0
    while e0 < m:
        e1 = int(np.searchsorted(cum, cum[e0] + _SWEEP_BLOCK, side="right")) - 1
        e1 = min(m, max(e0 + 1, e1))
        b0, b1 = int(bs[e0]), int(bs[e1])
        t = np.arange(e0, e1, dtype=np.int64)
        q_x = s_close[e0:e1]
        if b1 > b0:
            t = np.concatenate([t, np.repeat(t, np.diff(bs[e0:e1 + 1]))])
            q_x = np.concatenate([q_x, bar_close[b0:b1]])  # type: ignore[index]
        # first POC >= x and last POC <= x, then the next / previous naked one from there
        qa = np.searchsorted(price_sorted, q_x, side="left")
        qb = np.searchsorted(price_sorted, q_x, side="right")  # one past the last <= x
        ua, ia = np.unique((t - e0) * (m + 1) + qa, return_inverse=True)
        ub, ib = np.unique((t - e0) * (m + 1) + qb, return_inverse=True)
        del qa, qb
        ua_t, ua_q = np.divmod(ua, m + 1)
        ub_t, ub_q = np.divmod(ub, m + 1)
        steps = np.arange(e1 - e0 + 1, dtype=np.int64)
        a_bounds = np.searchsorted(ua_t, steps).tolist()
        b_bounds = np.searchsorted(ub_t, steps).tolist()
        ua_l, ub_l = ua_q.tolist(), (ub_q - 1).tolist()
        del ua, ub, ua_t, ub_t, ua_q, ub_q
        r0, r1 = np.searchsorted(r_end, [e0, e1])
        r_l = r_pos[r0:r1].tolist()
        r_bounds = (np.searchsorted(r_end[r0:r1], steps + e0)).tolist()
        ans_a = [-1] * len(ua_l)
        ans_b = [-1] * len(ub_l)
        for e, p in enumerate(pos[e0:e1].tolist()):  # level-0 words inline, the tree past them
            w = p >> 6
            x = L0[w]
            L0[w] = x | (1 << (p & 63))
            if not x:
                add(w, 1)
            for i in range(r_bounds[e], r_bounds[e + 1]):
                r = r_l[i]
                w = r >> 6
                x = L0[w] & ~(1 << (r & 63))
                L0[w] = x
                if not x:
                    discard(w, 1)
            for i in range(a_bounds[e], a_bounds[e + 1]):
                q = ua_l[i]
                x = L0[q >> 6] >> (q & 63)
                ans_a[i] = q + (x & -x).bit_length() - 1 if x else nxt(q)
            for i in range(b_bounds[e], b_bounds[e + 1]):
                q = ub_l[i]
                x = L0[q >> 6] & ((2 << (q & 63)) - 1) if q >= 0 else 0
                ans_b[i] = ((q >> 6) << 6) + x.bit_length() - 1 if x else prv(q)
        ja = np.asarray(ans_a, dtype=np.int64)[ia]
        jb = np.asarray(ans_b, dtype=np.int64)[ib]
        del ans_a, ans_b, ia, ib
        above = np.full(q_x.shape[0], np.nan)
        below = np.full(q_x.shape[0], np.nan)
        ok = ja >= 0
        above[ok] = price_sorted[ja[ok]] - q_x[ok]
        ok = jb >= 0
        below[ok] = q_x[ok] - price_sorted[jb[ok]]
        k = e1 - e0
        res["above"][e0:e1] = above[:k]
        res["below"][e0:e1] = below[:k]
        if b1 > b0:
            res["bar_count"][b0:b1] = count[t[k:]]
            res["bar_above"][b0:b1] = above[k:]
            res["bar_below"][b0:b1] = below[k:]
        e0 = e1
    return res

