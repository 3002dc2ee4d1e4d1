"""GPU levels_kernel's value-area walks (serial, merged above kMergeMinGroups = 32 groups, unstaged past
kLevelRows = 2048 rows) equal the CPU engine bit for bit, on sessions whose widths straddle every gate."""
import numpy as np
import pytest

import vpoc
from _compare import ALL_FIELDS
from _gpu import needs_gpu

pytestmark = needs_gpu

# rows per session around the gates: merged from 32 groups (63-64 rows at cbot's step 2, 32 at step 1),
# staged up to 2048 rows, the merged walk's path up to kLevelRows / 2 = 1024 rows
WIDTHS = (1, 2, 3, 10, 31, 32, 33, 62, 63, 64, 65, 66, 100, 257, 1023, 1024, 1025, 2047, 2048, 2049, 3000)


def _sessions(seed: int, ties: bool):
    """One session per width: trades on every row (a gap of empty rows in the wider ones), integer
    volumes (few distinct values when ``ties``: equal rows, equal groups)."""
    rng = np.random.default_rng(seed)
    price, volume, offsets = [], [], [0]
    for w in WIDTHS:
        rows = np.arange(w)
        if w > 10:  # a gap: rows with no trade inside the session
            rows = np.delete(rows, np.arange(w // 3, w // 3 + w // 10))
        k = np.concatenate([rows, rng.choice(rows, size=2 * w)])
        p = 4000.0 + 0.25 * k
        v = rng.integers(1, 4 if ties else 500, size=k.size).astype(np.float64)
        price.append(p)
        volume.append(v)
        offsets.append(offsets[-1] + k.size)
    return np.concatenate(price), np.concatenate(volume), np.array(offsets, dtype=np.int64)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("va_method", ["single", "cbot", "greedy"])
@pytest.mark.parametrize("va_compare", [None, "zero_absent"])
@pytest.mark.parametrize("value_area", [0.7, 0.3, 1.0])
def test_walks_equal_cpu(ties, va_method, va_compare, value_area):
    price, volume, off = _sessions(11 + ties, ties)
    kw = dict(offsets=off, tick_size=0.25, va_method=va_method, value_area=value_area)
    if va_compare is not None:
        kw["va_compare"] = va_compare
    for poc_tie in ("center", "low", "high"):
        c = vpoc.from_trades(price, volume, device="cpu", poc_tie=poc_tie, **kw)
        g = vpoc.from_trades(price, volume, device="cuda", poc_tie=poc_tie, **kw).cpu()
        assert np.asarray(c.n_rows).tolist() == list(WIDTHS)  # the widths straddle the gates as meant
        for k in ALL_FIELDS:
            np.testing.assert_array_equal(np.asarray(getattr(g, k)), np.asarray(getattr(c, k)), strict=True,
                                          err_msg=f"{k} {va_method}/{poc_tie} va_compare={va_compare}")
