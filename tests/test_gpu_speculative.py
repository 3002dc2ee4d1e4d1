"""GPU calls of a shape seen before bin before reading their layout back (no mid-call wait).

Contract: a speculative call gives the bits the waiting call gives (and the CPU's), raises the same
exception for the same bad input, reruns (counted) when its rows outgrow the expected size, and its
histogram holds exactly the rows its offsets say. Skipped without a GPU build, a GPU and torch.
"""

from __future__ import annotations


import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
if not (hasattr(vpoc, "gpu_available") and vpoc.gpu_available()):
    pytest.skip("needs a vpoc GPU build and a GPU", allow_module_level=True)
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover - depends on the machine
    pytest.skip("needs PyTorch with a GPU", allow_module_level=True)


from _compare import ALL_FIELDS  # noqa: E402
from _gpu import speculation  # noqa: E402

FIELDS = ALL_FIELDS + ("poc", "vah", "val")


def stats():
    return vpoc.memory_stats("cuda")


def data(api: str, n: int, S: int, seed: int, *, spread: int = 1, volume: str = "int"):
    """Tick random walk on the 0.25 grid (``spread`` ticks per step), S sessions of about n / S rows."""
    rng = np.random.default_rng(seed)
    t = 16000 + np.cumsum(rng.integers(-spread, spread + 1, n))
    vol = rng.integers(0, 60, n).astype(np.float64)
    if volume == "frac":
        vol = vol + rng.integers(0, 4, n) * 0.25
    d = {"volume": vol}
    if api == "trades":
        d["price"] = t * 0.25
    else:
        w = rng.integers(0, 7 * spread, n)
        low = t * 0.25
        d.update(high=low + w * 0.25, low=low, close=low + rng.integers(0, w + 1) * 0.25,
                 open=low + rng.integers(0, w + 1) * 0.25)
    off = np.linspace(0, n, S + 1).astype(np.int64)
    return d, off


def call(api: str, d: dict, off, device: str, **kw):
    if device != "cpu":
        d = {k: torch.from_numpy(np.ascontiguousarray(v)).cuda() for k, v in d.items()}
    if api == "trades":
        return vpoc.from_trades(d["price"], d["volume"], offsets=off, tick_size=0.25, device=device, **kw)
    return vpoc.from_bars(d["high"], d["low"], d["close"], d["volume"], open=d["open"], offsets=off,
                          tick_size=0.25, distribute=api, device=device, **kw)


def fields(p) -> dict:
    h = p.cpu()
    return {k: np.asarray(getattr(h, k)) for k in FIELDS}


def assert_same(a: dict, b: dict, ctx: str) -> None:
    for k in FIELDS:
        np.testing.assert_array_equal(a[k], b[k], err_msg=f"{k} [{ctx}]", strict=True)


@pytest.mark.parametrize("api, volume", [("trades", "int"), ("trades", "frac"), ("close", "int"),
                                         ("hlc3", "frac"), ("uniform", "int"), ("legacy", "int")])
@pytest.mark.parametrize("va_method", ["cbot", "single"])
def test_repeated_shape_bins_before_reading_back(api, volume, va_method):
    d, off = data(api, 20_000 + len(api), 9, seed=1, volume=volume)
    with speculation(False):
        waiting = fields(call(api, d, off, "cuda", va_method=va_method))
    cpu = fields(call(api, d, off, "cpu", va_method=va_method))
    before = stats()
    for k in range(3):  # the first call of the shape may wait; the others do not
        got = fields(call(api, d, off, "cuda", va_method=va_method))
        assert_same(got, waiting, f"{api} call {k} vs the waiting call")
    after = stats()
    assert after["speculative_calls"] - before["speculative_calls"] >= 2
    assert after["speculative_reruns"] == before["speculative_reruns"]
    for k in ("offsets", "n_rows", "low_row", "poc_row", "vah_row", "val_row"):
        np.testing.assert_array_equal(waiting[k], cpu[k], err_msg=k, strict=True)
    np.testing.assert_allclose(waiting["volume"], cpu["volume"], rtol=1e-12, atol=0)
    assert waiting["volume"].size == waiting["offsets"][-1]


@pytest.mark.parametrize("api", ["trades", "uniform"])
def test_rows_outgrowing_the_expected_size_rerun(api):
    narrow, off = data(api, 30_011, 5, seed=2, spread=1)
    wide, _ = data(api, 30_011, 5, seed=3, spread=40)  # same shape, far more rows
    call(api, narrow, off, "cuda")
    call(api, narrow, off, "cuda")
    before = stats()
    got = call(api, wide, off, "cuda")
    after = stats()
    assert after["speculative_reruns"] - before["speculative_reruns"] == 1
    want = fields(call(api, wide, off, "cpu"))
    g = fields(got)
    for k in ("offsets", "n_rows", "low_row", "poc_row", "vah_row", "val_row"):
        np.testing.assert_array_equal(g[k], want[k], err_msg=k, strict=True)
    np.testing.assert_allclose(g["volume"], want["volume"], rtol=1e-12, atol=0)
    # the hint grew: the next call of the shape fits
    before = stats()
    assert_same(fields(call(api, wide, off, "cuda")), g, "after the rerun")
    assert stats()["speculative_reruns"] == before["speculative_reruns"]


def test_the_expected_size_comes_down_after_narrow_calls():
    """One wide call grows a shape's expected rows; 64 calls in a row under half of it bring it down
    to the most of them (the histogram a call takes from the pool is sized from it)."""
    import gc

    narrow, off = data("trades", 30_029, 5, seed=4, spread=1)
    wide, _ = data("trades", 30_029, 5, seed=5, spread=400)  # same shape, far more rows
    want = fields(call("trades", narrow, off, "cpu"))

    def alive_bytes_of_one_call() -> int:
        gc.collect()
        r = call("trades", narrow, off, "cuda")
        b = stats()["output_bytes"]
        assert_same(fields(r), want, "narrow")
        del r
        gc.collect()
        return b

    call("trades", narrow, off, "cuda")
    call("trades", wide, off, "cuda")  # reruns, the expected rows grow to the wide call's
    big = alive_bytes_of_one_call()
    for _ in range(70):
        call("trades", narrow, off, "cuda")
    small = alive_bytes_of_one_call()
    assert small < big, (small, big)


def _bad(api: str, d: dict, case: str) -> dict:
    d = {k: v.copy() for k, v in d.items()}
    key = "price" if api == "trades" else "high"
    if case == "nan_price":
        d[key][[70, 90]] = np.nan
    elif case == "negative_volume":
        d["volume"][[70, 90]] = -1.0
    elif case == "too_wide":
        d[key][70] += 5000.0
        if api != "trades":
            d["close"][70] = d["low"][70]
    elif case == "high_below_low":
        d["high"][70] = d["low"][70] - 0.25
    elif case == "nan_volume":
        d["volume"][[70, 90]] = np.nan
    elif case == "volume_before_price":  # a bad volume, then a bad price: the first row is named
        d["volume"][70] = -1.0
        d[key][90] = np.nan
    elif case == "price_before_volume":
        d[key][70] = np.inf
        d["volume"][90] = np.nan
    elif case == "wide_and_bad_volume":  # too wide and a bad volume: the order of the checks holds
        d[key][70] += 5000.0
        d["volume"][20] = -3.0
    return d


@pytest.mark.parametrize("api, case", [("trades", "nan_price"), ("trades", "negative_volume"),
                                       ("trades", "too_wide"), ("trades", "nan_volume"),
                                       ("trades", "volume_before_price"), ("trades", "price_before_volume"),
                                       ("trades", "wide_and_bad_volume"), ("uniform", "nan_price"),
                                       ("uniform", "high_below_low"), ("close", "negative_volume"),
                                       ("uniform", "too_wide")])
def test_bad_input_on_a_known_shape_raises_as_the_waiting_call(api, case):
    good, off = data(api, 4_000 + 7 * len(case), 3, seed=4)
    kw = {"max_rows": 2000} if case in ("too_wide", "wide_and_bad_volume") else {}
    call(api, good, off, "cuda", **kw)
    call(api, good, off, "cuda", **kw)
    bad = _bad(api, good, case)
    with speculation(False):
        with pytest.raises(ValueError) as waiting:
            call(api, bad, off, "cuda", **kw)
    before = stats()
    with pytest.raises(ValueError) as spec:
        call(api, bad, off, "cuda", **kw)
    assert stats()["speculative_calls"] > before["speculative_calls"], "the bad call did not bin first"
    assert str(spec.value) == str(waiting.value)
    with pytest.raises(ValueError) as cpu:
        call(api, bad, off, "cpu", **kw)
    assert type(cpu.value) is type(spec.value)
    if case in ("volume_before_price", "price_before_volume", "nan_volume"):
        assert getattr(spec.value, "index", 70) == 70 and getattr(cpu.value, "index", 70) == 70
        assert "70" in str(spec.value), str(spec.value)
    # and the shape still works
    assert_same(fields(call(api, good, off, "cuda", **kw)), fields(call(api, good, off, "cuda", **kw)), "after")


def test_a_fraction_met_first_by_a_speculative_call_reruns_once():
    """Trades of a shape seen with whole volumes bin before their volumes are checked: a fraction
    makes that call run again (once, counted) with the volumes checked first, and the shape's later
    calls check them first without a rerun; every result equals the CPU's."""
    ints, off = data("trades", 23_456, 6, seed=8, volume="int")
    fracs, _ = data("trades", 23_456, 6, seed=8, volume="frac")
    call("trades", ints, off, "cuda")
    assert_same(fields(call("trades", ints, off, "cuda")), fields(call("trades", ints, off, "cuda")), "ints")
    before = stats()
    got = fields(call("trades", fracs, off, "cuda"))
    mid = stats()
    assert mid["speculative_reruns"] - before["speculative_reruns"] == 1
    cpu = fields(call("trades", fracs, off, "cpu"))
    for k in ("offsets", "n_rows", "low_row", "poc_row", "vah_row", "val_row"):
        np.testing.assert_array_equal(got[k], cpu[k], err_msg=k, strict=True)
    np.testing.assert_allclose(got["volume"], cpu["volume"], rtol=1e-12, atol=0)
    for d in (fracs, ints, fracs):
        call("trades", d, off, "cuda")
    assert stats()["speculative_reruns"] == mid["speculative_reruns"]


def test_integer_then_fractional_volumes_on_one_shape():
    ints, off = data("trades", 12_345, 4, seed=5, volume="int")
    fracs, _ = data("trades", 12_345, 4, seed=5, volume="frac")
    call("trades", ints, off, "cuda")
    for d in (ints, fracs, ints, fracs):
        with speculation(False):
            want = fields(call("trades", d, off, "cuda"))
        assert_same(fields(call("trades", d, off, "cuda")), want, "int/frac")


def test_off_grid_counts_on_the_speculative_path():
    d, off = data("trades", 8_888, 3, seed=6)
    call("trades", d, off, "cuda")
    few = {k: v.copy() for k, v in d.items()}
    few["price"][[5, 600]] += 0.1  # 2 of 8888 off the grid: rounded with a warning
    with speculation(False):
        with pytest.warns(UserWarning, match="tick") as w0:
            want = call("trades", few, off, "cuda")
    with pytest.warns(UserWarning, match="tick") as w1:
        got = call("trades", few, off, "cuda")
    assert [str(x.message) for x in w0] == [str(x.message) for x in w1]
    assert got.snapped_prices == want.snapped_prices
    assert_same(fields(got), fields(want), "off grid")
    many = {k: v.copy() for k, v in d.items()}
    many["price"][::10] += 0.1  # 10% off: refused
    with speculation(False):
        with pytest.raises(ValueError) as e0:
            call("trades", many, off, "cuda")
    with pytest.raises(ValueError) as e1:
        call("trades", many, off, "cuda")
    assert str(e0.value) == str(e1.value)


def test_huge_volumes_on_the_speculative_path():
    d, off = data("trades", 10_000, 2, seed=7)
    call("trades", d, off, "cuda")
    big = {k: v.copy() for k, v in d.items()}
    big["volume"][::50] = 2.0**52  # a session's sum passes 2**53
    with speculation(False):
        with pytest.raises(ValueError) as e0:
            call("trades", big, off, "cuda")
    with pytest.raises(ValueError) as e1:
        call("trades", big, off, "cuda")
    assert str(e0.value) == str(e1.value)
    with pytest.raises(ValueError):
        call("trades", big, off, "cpu")


@pytest.mark.parametrize("S", [1, 63, 64, 65, 300])
@pytest.mark.parametrize("api", ["trades", "uniform"])
@pytest.mark.parametrize("where", ["cuda", "host"])
def test_session_offsets_by_launch_parameter_or_copy(S, api, where):
    """Up to 64 sessions a group's offsets travel in the first launch's parameters (no copy), beyond
    that by a copy: both give the CPU's bits, on the speculative path (device inputs, a repeated
    shape) and the waiting one (host inputs), with an empty session in the middle."""
    d, off = data(api, 9_000 + S, S, seed=10 + S, volume="frac")
    if S > 2:
        off = off.copy()
        off[S // 2] = off[S // 2 - 1]  # an empty session
    want = fields(call(api, d, off, "cpu"))
    for k in range(3):  # device inputs: the calls after the first bin before reading back
        if where == "cuda":
            got = fields(call(api, d, off, "cuda"))
        elif api == "trades":
            got = fields(vpoc.from_trades(d["price"], d["volume"], offsets=off, tick_size=0.25, device="cuda"))
        else:
            got = fields(vpoc.from_bars(d["high"], d["low"], d["close"], d["volume"], open=d["open"],
                                        offsets=off, tick_size=0.25, distribute=api, device="cuda"))
        for f in ("offsets", "n_rows", "low_row", "poc_row", "vah_row", "val_row", "total_volume"):
            np.testing.assert_array_equal(got[f], want[f], err_msg=f"{f} S={S} call {k}", strict=True)
        np.testing.assert_allclose(got["volume"], want["volume"], rtol=1e-12, atol=0)


def test_a_released_result_read_late_on_the_default_stream_is_not_overwritten():
    """A result made and read on torch's default stream (a stream that cannot be destroyed: its
    buffers go back to the pool with no event) is read there after a 30 ms spin and dropped; the
    next call, on a side stream, takes the same buffers from the pool: its writes must wait for that
    read."""
    import gc

    a, off = data("trades", 50_000, 8, seed=21)
    b, _ = data("trades", 50_000, 8, seed=22)
    b["volume"] = b["volume"] + 1.0  # other histograms, same shape and sizes
    want = fields(call("trades", a, off, "cpu"))
    A = {k: torch.from_numpy(v).cuda() for k, v in a.items()}
    B = {k: torch.from_numpy(v).cuda() for k, v in b.items()}
    for _ in range(2):  # the shape known: the pool holds buffers of these sizes
        vpoc.from_trades(A["price"], A["volume"], offsets=off, tick_size=0.25, device="cuda").cpu()
    torch.cuda.synchronize()
    g = vpoc.from_trades(A["price"], A["volume"], offsets=off, tick_size=0.25, device="cuda")
    torch.cuda._sleep(60_000_000)  # on the default stream, before the reads below
    late_volume = torch.from_dlpack(g.volume).clone()
    late_poc = torch.from_dlpack(g.poc_row).clone()
    del g
    gc.collect()
    hits = stats()["pool_hits"]
    s = torch.cuda.Stream()
    g2 = vpoc.from_trades(B["price"], B["volume"], offsets=off, tick_size=0.25, device="cuda", stream=s)
    assert stats()["pool_hits"] > hits  # the dropped result's buffers were reused
    torch.cuda.synchronize()
    np.testing.assert_array_equal(late_volume.cpu().numpy(), want["volume"])
    np.testing.assert_array_equal(late_poc.cpu().numpy(), want["poc_row"])
    del g2


def test_a_refused_far_price_does_not_size_the_shape():
    """A call refused for a session over max_rows (one far price) on a known trades shape: the next
    clean call of the shape gets a histogram sized as before (no out-of-memory, no huge buffer)."""
    import gc

    d, off = data("trades", 20_000, 5, seed=11)
    call("trades", d, off, "cuda")
    call("trades", d, off, "cuda")
    bad = {k: v.copy() for k, v in d.items()}
    bad["price"][70] = 1e12
    with pytest.raises(ValueError, match="max_rows"):
        call("trades", bad, off, "cuda")
    gc.collect()
    before = stats()["output_bytes"]
    got = call("trades", d, off, "cuda")
    assert stats()["output_bytes"] - before < 64 << 20
    assert_same(fields(got), fields(call("trades", d, off, "cuda")), "after the refused call")


def test_a_bad_volume_does_not_mark_the_shape_fractional():
    """A NaN volume is refused; it does not count as a fraction, so a later fractional call of the
    shape is still met first by the bin pass's check (one rerun), as for a shape never refused."""
    ints, off = data("trades", 21_000, 4, seed=12, volume="int")
    fracs, _ = data("trades", 21_000, 4, seed=12, volume="frac")
    call("trades", ints, off, "cuda")
    call("trades", ints, off, "cuda")
    bad = {k: v.copy() for k, v in ints.items()}
    bad["volume"][[5, 9]] = np.nan
    with pytest.raises(ValueError, match="volume"):
        call("trades", bad, off, "cuda")
    s = stats()
    call("trades", fracs, off, "cuda")
    assert stats()["speculative_reruns"] - s["speculative_reruns"] == 1


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_volumes_checked_in_the_bin_pass_for_every_volume_dtype(dtype):
    d, off = data("trades", 17_000, 6, seed=13)
    d["volume"] = d["volume"].astype(dtype)
    d["volume"][[3, 4000]] = 3_000_000_000 if dtype == np.int64 else 7  # int64: whole, past 2**31
    cpu = fields(call("trades", d, off, "cpu"))
    for k in range(3):
        g = fields(call("trades", d, off, "cuda"))
        for name in ("offsets", "n_rows", "low_row", "poc_row", "vah_row", "val_row", "volume", "total_volume"):
            np.testing.assert_array_equal(g[name], cpu[name], err_msg=f"{name} call {k}", strict=True)
    bad = {kk: v.copy() for kk, v in d.items()}
    bad["volume"][77] = -1
    with pytest.raises(ValueError) as spec:
        call("trades", bad, off, "cuda")
    with pytest.raises(ValueError) as cpu_e:
        call("trades", bad, off, "cpu")
    assert type(spec.value) is type(cpu_e.value) and "77" in str(spec.value) and "77" in str(cpu_e.value)


def _bars_of_widths(spec, pdt, vdt, seed):
    """Sessions of (bars, width in ticks): bar 0 spans the whole width, the others lie inside it."""
    rng = np.random.default_rng(seed)
    lows, highs, closes = [], [], []
    for n, width in spec:
        if n == 0:
            continue
        lo = rng.integers(0, width, n)
        hi = np.minimum(lo + rng.integers(0, 9, n), width - 1)
        lo[0], hi[0] = 0, width - 1
        lows.append(lo), highs.append(hi), closes.append(lo + rng.integers(0, hi - lo + 1))
    t0 = 16000
    low, high, close = ((t0 + np.concatenate(x)) * 0.25 for x in (lows, highs, closes))
    n = low.size
    vol = rng.integers(0, 90, n).astype(np.float64)
    if vdt != np.int32:
        vol[::7] += 0.5  # fractions on some rows (whole on the others)
    off = np.concatenate([[0], np.cumsum([b for b, _ in spec])]).astype(np.int64)
    return {"high": high.astype(pdt), "low": low.astype(pdt), "close": close.astype(pdt),
            "volume": vol.astype(vdt)}, off


def _bars_call(d, off, api, tpr, device):
    g = {k: torch.from_numpy(v).cuda() for k, v in d.items()} if device == "cuda" else d
    return vpoc.from_bars(g["high"], g["low"], g["close"], g["volume"], offsets=off, tick_size=0.25,
                          ticks_per_row=tpr, distribute=api, device=device)


@pytest.mark.parametrize("api", ["uniform", "close", "hlc3"])
@pytest.mark.parametrize("tpr", [1, 2])
@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float32), (np.float32, np.int32)])
def test_bars_binned_by_the_levels_kernel_equal_the_waiting_call(api, tpr, dtypes):
    """Speculative bar calls bin each session in the levels kernel (shared rows up to 1,024 rows, the
    session's own output rows beyond, staged up to 2,048): sessions of 1 to 3,000 rows (1,024 and 1,025
    at one tick a row), an empty one, whole and fractional volumes, in one call, give the waiting call's
    bits and the CPU's, and the fused kernel ran (fused_bar_calls)."""
    spec = [(300, 50), (0, 1), (1, 1), (700, 1024), (600, 1025), (800, 1500), (900, 2100), (1000, 3000)]
    d, off = _bars_of_widths(spec, *dtypes, seed=11 + tpr)
    with speculation(False):
        waiting = fields(_bars_call(d, off, api, tpr, "cuda"))
    cpu = fields(_bars_call(d, off, api, tpr, "cpu"))
    if tpr == 1 and api == "uniform":
        assert list(waiting["n_rows"]) == [w if b else 0 for b, w in spec]  # the widths asked for
    before = stats()
    for k in range(3):
        assert_same(fields(_bars_call(d, off, api, tpr, "cuda")), waiting, f"{api} tpr={tpr} call {k}")
    after = stats()
    assert after["speculative_calls"] - before["speculative_calls"] >= 2
    assert after["fused_bar_calls"] - before["fused_bar_calls"] >= 2
    for k in ("offsets", "n_rows", "low_row", "poc_row", "vah_row", "val_row", "volume", "total_volume"):
        np.testing.assert_array_equal(waiting[k], cpu[k], err_msg=k, strict=True)


@pytest.mark.parametrize("api", ["uniform", "close"])
def test_sessions_of_many_bars_keep_the_bin_pass(api):
    """A session of more bars than one block bins (4,096) leaves the call to the bin pass's tiles: not
    fused, the same bits as the waiting call and the CPU."""
    d, off = _bars_of_widths([(5000, 400), (3, 5)], np.float64, np.float64, seed=5)
    with speculation(False):
        waiting = fields(_bars_call(d, off, api, 1, "cuda"))
    cpu = fields(_bars_call(d, off, api, 1, "cpu"))
    before = stats()
    for k in range(3):
        assert_same(fields(_bars_call(d, off, api, 1, "cuda")), waiting, f"{api} call {k}")
    after = stats()
    assert after["speculative_calls"] - before["speculative_calls"] >= 2
    assert after["fused_bar_calls"] == before["fused_bar_calls"]
    for k in ("offsets", "n_rows", "poc_row", "vah_row", "val_row", "volume", "total_volume"):
        np.testing.assert_array_equal(waiting[k], cpu[k], err_msg=k, strict=True)
