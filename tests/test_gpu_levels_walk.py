"""GPU levels_kernel's value-area walks (serial, merged above kMergeMinGroups = 32 groups, unstaged past
kLevelRows = 2048 rows) equal the CPU engine bit for bit, on sessions whose widths straddle every gate.
The merged walk's stop is found by runs of steps on whole volumes whose session total is at most 2**52
(va_merge::run_stop) and by thread 0's walk otherwise: whole, fractional and huge (totals in (2**52, 2**53])
volumes take each."""
import numpy as np
import pytest

import vpoc
from _compare import ALL_FIELDS
from _gpu import needs_gpu

pytestmark = needs_gpu

# rows per session around the gates: merged from 32 groups (63-64 rows at cbot's step 2, 32 at step 1),
# staged up to 2048 rows, the merged walk's path up to kLevelRows / 2 = 1024 rows
WIDTHS = (1, 2, 3, 10, 31, 32, 33, 62, 63, 64, 65, 66, 100, 257, 1023, 1024, 1025, 2047, 2048, 2049, 3000)


def _sessions(seed: int, ties: bool, volumes: str = "whole"):
    """One session per width: trades on every row (a gap of empty rows in the wider ones), integer
    volumes (few distinct values when ``ties``: equal rows, equal groups); ``volumes`` "fractional":
    quarters of a lot (ties kept), "huge": whole volumes whose session total lies in (2**52, 2**53]."""
    rng = np.random.default_rng(seed)
    price, volume, offsets = [], [], [0]
    for w in WIDTHS:
        rows = np.arange(w)
        if w > 10:  # a gap: rows with no trade inside the session
            rows = np.delete(rows, np.arange(w // 3, w // 3 + w // 10))
        k = np.concatenate([rows, rng.choice(rows, size=2 * w)])
        p = 4000.0 + 0.25 * k
        v = rng.integers(1, 4 if ties else 500, size=k.size).astype(np.float64)
        if volumes == "fractional":
            v = v + 0.25 * rng.integers(1, 4, size=k.size)
        elif volumes == "huge":  # whole, the session's total 1.25-1.75 x 2**52 (< 2**53: accepted)
            unit = np.floor(2.0 ** 52 / v.sum())
            v = v * unit * (1.25 + 0.5 * rng.random())
            v = np.floor(v)
            assert 2.0 ** 52 < v.sum() <= 2.0 ** 53
        price.append(p)
        volume.append(v)
        offsets.append(offsets[-1] + k.size)
    return np.concatenate(price), np.concatenate(volume), np.array(offsets, dtype=np.int64)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("va_method", ["single", "cbot", "greedy"])
@pytest.mark.parametrize("va_compare", [None, "zero_absent"])
@pytest.mark.parametrize("value_area", [0.7, 0.3, 1.0])
@pytest.mark.parametrize("volumes", ["whole", "fractional", "huge"])
def test_walks_equal_cpu(ties, va_method, va_compare, value_area, volumes):
    if volumes != "whole" and (va_method == "greedy" or va_compare is not None):
        pytest.skip("only the merged walk ('tie_up', cbot / single) reads the volumes' kind")
    price, volume, off = _sessions(11 + ties, ties, volumes)
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


@pytest.mark.parametrize("rules", [dict(va_stop="exceeds"), dict(tie_tol=0.0), dict(tie_tol=1e-3),
                                   dict(va_target="decimal", value_area=0.68), dict(va_stop="exceeds", value_area=0.5)])
@pytest.mark.parametrize("va_method", ["single", "cbot"])
def test_merged_walk_rules_equal_cpu(rules, va_method):
    """The merged walk's stop under every stop / tie rule the merge takes (va_compare 'tie_up'), whole
    volumes (the runs' stop), fractional and huge ones (thread 0's walk), against the CPU engine."""
    for volumes in ("whole", "fractional", "huge"):
        if volumes == "fractional" and rules.get("va_target") == "decimal":
            continue  # va_target='decimal' refuses fractional volumes (its exact comparison)
        price, volume, off = _sessions(29, False, volumes)
        kw = dict(offsets=off, tick_size=0.25, va_method=va_method, value_area=0.7)
        kw.update(rules)
        c = vpoc.from_trades(price, volume, device="cpu", **kw)
        g = vpoc.from_trades(price, volume, device="cuda", **kw).cpu()
        for k in ALL_FIELDS:
            np.testing.assert_array_equal(np.asarray(getattr(g, k)), np.asarray(getattr(c, k)), strict=True,
                                          err_msg=f"{k} {va_method} {rules} {volumes}")
