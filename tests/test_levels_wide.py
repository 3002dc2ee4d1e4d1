"""POC / value area of wide sessions under every level rule: the CPU against the plain reference, and
GPU == CPU bit for bit around the widths where the GPU levels kernel changes path (rows staged in
shared memory up to 2,048; value area walked over staged group sums up to 1,024)."""

from __future__ import annotations

import numpy as np
import pytest

import vpoc
from preset_reference import touched_rows
from reference import ref_trades
from test_presets import FIELDS, check, draw_rules, expected

WIDTHS = (1, 2, 3, 700, 1023, 1024, 1025, 1500, 2047, 2048, 2049, 3001)


def wide_sessions(rng, tick):
    """2-4 sessions whose rows span one of WIDTHS exactly (a trade on the lowest and highest row),
    the volume shape drawn per call: ties everywhere, zeros and ties, a peak off centre, fractions."""
    widths = [int(w) for w in rng.choice(WIDTHS, size=int(rng.integers(2, 5)))]
    prices, vols, lens = [], [], []
    kind = int(rng.integers(0, 4))
    for w in widths:
        rows = np.concatenate([[0, w - 1], rng.integers(0, w, size=w)])
        if kind == 0:  # every row the same volume: every step of the expansion is a tie
            v = np.full(rows.size, 3.0)
        elif kind == 1:  # zeros and ties
            v = rng.integers(0, 3, size=rows.size) * 5.0
        elif kind == 2:  # a peak off centre on a noisy floor
            peak = rng.integers(0, w)
            v = np.round(1000.0 * np.exp(-0.5 * ((rows - peak) / max(w / 8, 1.0)) ** 2)) + rng.integers(0, 3, size=rows.size)
        else:  # dyadic fractions: exact sums
            v = rng.integers(0, 64, size=rows.size) / 8.0
        prices.append((4000 + rows) * tick)
        vols.append(v.astype(float))
        lens.append(rows.size)
    off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    return np.concatenate(prices), np.concatenate(vols), off


@pytest.mark.parametrize("seed", range(24))
def test_wide_sessions_match_reference(seed):
    rng = np.random.default_rng(9000 + seed)
    price, vol, off = wide_sessions(rng, 0.25)
    rules = draw_rules(rng)
    va = float(rng.choice([0.7, 0.5, 1.0, 0.68]))
    prof = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, value_area=va, **rules)
    ref = ref_trades(price, vol, off, tick_size=0.25, value_area=va)
    spans = touched_rows("trades", {"price": price}, 0.25)
    check(prof, ref, expected(prof, spans, off, rules, va), 0.25)


@pytest.mark.parametrize("seed", range(48))
def test_wide_sessions_gpu_equals_cpu(seed):
    if not vpoc.gpu_available():
        pytest.skip(f"no GPU: vpoc.gpu_available() is False (backends={vpoc.backends()})")
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9100 + seed)
    price, vol, off = wide_sessions(rng, 0.25)
    rules = draw_rules(rng)
    va = float(rng.choice([0.7, 0.5, 1.0, 0.68]))
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, value_area=va, **rules)
    p, v = torch.as_tensor(price, device="cuda"), torch.as_tensor(vol, device="cuda")
    b = vpoc.from_trades(p, v, offsets=off, tick_size=0.25, value_area=va, device="cuda", **rules).cpu()
    for k in FIELDS:
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)
