"""The GPU range pass of bars (close, hlc3, uniform) takes each thread's lowest and highest key per
session (lows and highs, closes, or (high + low + close) / 3) and applies the ladder to those two only.

Contract: on the GPU, bars give the CPU engine's bits (host and torch inputs, float32 / float64 prices,
float / int volumes, a power-of-two tick and ones that are not, ticks_per_row 1-3, negative prices,
prices past the pass's fast range test but still valid), the CPU's off-grid warning, and the CPU's
exception for the first bad row, whichever column and check makes it bad. Skipped without a GPU.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
if not (hasattr(vpoc, "gpu_available") and vpoc.gpu_available()):
    pytest.skip("needs a vpoc GPU build and a GPU", allow_module_level=True)

from _compare import assert_profiles_identical  # noqa: E402

RULES = ["close", "hlc3", "uniform", "legacy"]


def bars(rng, n, tick, dtype, vdtype=np.float64, fractions=False):
    t = int(rng.integers(-4000, 4000)) + np.cumsum(rng.integers(-3, 4, n))  # negative prices too
    lo_t = t - rng.integers(0, 6, n)
    hi_t = t + rng.integers(0, 6, n)
    cl_t = lo_t + (rng.random(n) * (hi_t - lo_t + 1)).astype(np.int64).clip(0, hi_t - lo_t)
    op_t = lo_t + (rng.random(n) * (hi_t - lo_t + 1)).astype(np.int64).clip(0, hi_t - lo_t)
    high, low, close, open_ = ((x * tick).astype(dtype) for x in (hi_t, lo_t, cl_t, op_t))
    volume = rng.integers(0, 60, n).astype(vdtype)
    if fractions:
        volume = volume + rng.integers(0, 4, n) * 0.25
    return high, low, close, open_, volume


def offsets_for(rng, n, S):
    cuts = np.sort(rng.integers(0, n + 1, S - 1))
    return np.concatenate([[0], cuts, [n]]).astype(np.int64)  # empty sessions and ties included


def both(h, l, c, v, offsets, tick, **kw):
    cpu = vpoc.from_bars(h, l, c, v, offsets=offsets, tick_size=tick, **kw)
    gpu = vpoc.from_bars(h, l, c, v, offsets=offsets, tick_size=tick, device="cuda", **kw)
    return cpu, gpu.cpu()


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tick", [0.25, 0.1, 1.0 / 3.0])
@pytest.mark.parametrize("seed", range(2))
def test_random_bars_equal_the_cpu(rule, dtype, tick, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60_000))
    S = int(rng.integers(1, 40))
    h, l, c, o, v = bars(rng, n, tick, dtype, fractions=bool(seed))
    offsets = offsets_for(rng, n, S)
    tpr = int(rng.integers(1, 4))
    cpu, gpu = both(h, l, c, v, offsets, tick, open=o, distribute=rule, ticks_per_row=tpr)
    assert_profiles_identical(gpu, cpu, f"{rule} {dtype.__name__} tick {tick} seed {seed} tpr {tpr}")


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("vdtype", [np.float32, np.int32, np.int64])
def test_volume_dtypes_equal_the_cpu(rule, vdtype):
    rng = np.random.default_rng(11)
    n = 20_000
    h, l, c, o, v = bars(rng, n, 0.25, np.float32, vdtype=vdtype)
    offsets = offsets_for(rng, n, 9)
    cpu, gpu = both(h, l, c, v, offsets, 0.25, open=None, distribute=rule)
    assert_profiles_identical(gpu, cpu, f"{rule} {np.dtype(vdtype).name}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("rule", ["close", "hlc3", "uniform"])
def test_prices_past_the_fast_range_test_but_valid(dtype, sign, rule):
    # tick 0.25: valid while |p / 0.25| < 2**52; the fast test stops 2**-20 short of that
    big = dtype(sign * 2.0**50 * (1.0 - 2.0**-22))
    assert abs(float(big) / 0.25) < 2.0**52
    p = np.array([big, big, 100.0, 100.25, big], dtype=dtype)
    volume = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    offsets = np.array([0, 2, 4, 5], dtype=np.int64)
    cpu, gpu = both(p, p, p, volume, offsets, 0.25, distribute=rule, max_rows=10)
    assert_profiles_identical(gpu, cpu, f"{dtype.__name__} {sign} {rule}")
    assert np.asarray(gpu.total_volume).tolist() == [3.0, 7.0, 5.0]


BAD = {
    "high nan": ("high", np.nan),
    "low -inf": ("low", -np.inf),
    "close inf": ("close", np.inf),
    "open nan": ("open", np.nan),
    "high far": ("high", 2.0**60),
    "high below low": ("high", "below"),
    "close above high": ("close", "above"),
    "open below low": ("open", "below"),
    "negative volume": ("volume", -1.0),
    "nan volume": ("volume", np.nan),
    "tiny volume": ("volume", 1e-30),
}


@pytest.mark.parametrize("rule", ["close", "hlc3", "uniform"])
@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize("where", [0, 777, 29_999])
def test_first_bad_row_is_the_cpus(rule, bad, where):
    rng = np.random.default_rng(where)
    n = 30_000
    cols = dict(zip(("high", "low", "close", "open", "volume"), bars(rng, n, 0.25, np.float64)))
    col, value = BAD[bad]
    if value == "below":
        cols[col][where] = cols["low"][where] - 0.25
    elif value == "above":
        cols[col][where] = cols["high"][where] + 0.25
    else:
        cols[col][where] = value
    if where + 5 < n:  # a later row bad another way: the first one is reported
        cols["volume"][where + 5] = -2.0
    offsets = np.array([0, n // 3, n], dtype=np.int64)
    args = (cols["high"], cols["low"], cols["close"], cols["volume"])
    kw = dict(offsets=offsets, tick_size=0.25, open=cols["open"], distribute=rule)
    with pytest.raises(Exception) as cpu:
        vpoc.from_bars(*args, **kw)
    with pytest.raises(Exception) as gpu:
        vpoc.from_bars(*args, device="cuda", **kw)
    assert type(gpu.value) is type(cpu.value)
    assert str(gpu.value) == str(cpu.value)
    assert f"[{where}]" in str(cpu.value)


@pytest.mark.parametrize("rule", ["close", "hlc3", "uniform"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_off_grid_prices_warn_as_the_cpu(rule, dtype):
    rng = np.random.default_rng(5)
    n = 9_000
    h, l, c, o, v = bars(rng, n, 0.25, dtype)
    for col, rows in ((h, [3, 4000]), (l, [17]), (c, [8000, 8001])):
        col[rows] += dtype(0.1)
        np.maximum.at(h, rows, col[rows])  # keep the bar valid: high the largest, low the least
    np.minimum(l, np.minimum(c, h), out=l)
    o = np.clip(o, l, h)
    offsets = np.array([0, 2_000, 5_000, n], dtype=np.int64)
    got = {}
    for dev in ("cpu", "cuda"):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = vpoc.from_bars(h, l, c, v, open=o, offsets=offsets, tick_size=0.25, distribute=rule,
                               **({} if dev == "cpu" else {"device": dev}))
        got[dev] = (r if dev == "cpu" else r.cpu(), [str(x.message) for x in w if "tick" in str(x.message)])
    assert got["cuda"][1] == got["cpu"][1] and got["cpu"][1], got
    assert got["cuda"][0].snapped_prices == got["cpu"][0].snapped_prices > 0
    assert_profiles_identical(got["cuda"][0], got["cpu"][0], f"{rule} off grid")


@pytest.mark.parametrize("rule", ["close", "hlc3", "uniform"])
def test_torch_inputs_equal_the_cpu(rule):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():  # pragma: no cover - depends on the machine
        pytest.skip("needs PyTorch with a GPU")
    rng = np.random.default_rng(7)
    n = 200_000
    h, l, c, o, v = bars(rng, n, 0.25, np.float32, vdtype=np.float32)
    offsets = np.linspace(0, n, 12).astype(np.int64)
    cpu = vpoc.from_bars(h, l, c, v, offsets=offsets, tick_size=0.25, distribute=rule)
    dev = [torch.from_numpy(x).cuda() for x in (h, l, c, v)]
    for _ in range(3):  # the first call waits for its layout; later ones bin before reading it
        gpu = vpoc.from_bars(*dev, offsets=offsets, tick_size=0.25, distribute=rule, device="cuda")
        assert_profiles_identical(gpu.cpu(), cpu, f"torch {rule}")
