"""Concurrency and soak: many Python threads at once give the single-threaded results, long calls
release the GIL, and 10,000 small calls leave host (and device) memory flat."""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import vpoc
from _compare import assert_profiles_identical

THREADS = 8
HAS_GPU = vpoc.gpu_available()
needs_gpu = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="needs a vpoc GPU build and a GPU")]


def workloads(seed: int, n_sessions: int = 6, per: int = 300):
    """Three calls on one synthetic data set: bars, trades, developing."""
    b = vpoc.synth.es_bars(n_sessions, per, seed=seed)
    t = vpoc.synth.es_trades(n_sessions * per * 3, n_sessions, seed=seed)
    return {
        "bars": lambda **kw: vpoc.from_bars(b.high, b.low, b.close, b.volume, offsets=b.offsets,
                                            tick_size=0.25, distribute="uniform", **kw),
        "trades": lambda **kw: vpoc.from_trades(t.price, t.volume, offsets=t.offsets,
                                                tick_size=0.25, **kw),
        "developing": lambda **kw: vpoc.from_bars(b.high, b.low, b.close, b.volume, open=b.open,
                                                  offsets=b.offsets, tick_size=0.25, distribute="legacy",
                                                  developing=True, **kw),
    }


def run_threads(device: str):
    jobs = [(seed, name) for seed in range(4) for name in ("bars", "trades", "developing")]
    sets = {seed: workloads(seed) for seed in range(4)}
    expected = {job: sets[job[0]][job[1]](device=device).cpu() for job in jobs}
    barrier = threading.Barrier(THREADS)

    def worker(k: int):
        barrier.wait()  # every thread calls at the same moment
        out = []
        for r in range(3):
            for job in jobs[k % len(jobs):] + jobs[:k % len(jobs)]:
                out.append((job, sets[job[0]][job[1]](device=device)))
        return out

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(worker, range(THREADS)))
    n = 0
    for out in results:
        for job, prof in out:
            assert_profiles_identical(prof.cpu(), expected[job], ctx=f"{job} on {device}")
            if job[1] == "developing":
                for k in ("dev_poc", "dev_vah", "dev_val"):
                    np.testing.assert_array_equal(np.asarray(getattr(prof.cpu(), k)),
                                                  np.asarray(getattr(expected[job], k)), strict=True)
            n += 1
    assert n == THREADS * 3 * len(jobs)


def test_threads_give_single_threaded_results():
    run_threads("cpu")


@pytest.mark.parametrize("kind", ["bars", "trades", "developing"])
def test_long_call_releases_the_gil(kind):
    """With a huge switch interval a thread gets the GIL only when its holder lets go of it: a
    pure-Python counter that advances during the call proves the call released the GIL. The control
    (a Python loop of the same kind of length) shows the counter cannot advance otherwise."""
    b = vpoc.synth.es_bars(100, 1380, seed=1)
    t = vpoc.synth.es_trades(2_000_000, 20, seed=1)
    call = {
        "bars": lambda: vpoc.from_bars(b.high, b.low, b.close, b.volume, offsets=b.offsets,
                                       tick_size=0.25, threads=1),
        "trades": lambda: vpoc.from_trades(t.price, t.volume, offsets=t.offsets, tick_size=0.25,
                                           threads=1),
        "developing": lambda: vpoc.from_bars(b.high, b.low, b.close, b.volume, offsets=b.offsets,
                                             tick_size=0.25, developing=True, threads=1),
    }[kind]
    call()  # warm-up: the first call must not be what we measure
    counter = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counter[0] += 1
            time.sleep(0)  # lets the GIL go, so the caller can take it back when its call ends

    def python_loop():
        x = 0
        for i in range(300_000):
            x += i
        return x

    old = sys.getswitchinterval()
    th = threading.Thread(target=count, daemon=True)
    try:
        sys.setswitchinterval(1000.0)  # no forced GIL hand-over during the test
        th.start()
        advanced = {}
        for name, fn in (("control", python_loop), ("vpoc", call)):
            before = counter[0]
            for _ in range(10):  # ten calls of a few ms each: time for the counter thread to run
                fn()
            advanced[name] = counter[0] - before
    finally:
        stop.set()
        sys.setswitchinterval(old)
        th.join()
    assert advanced["control"] == 0, advanced  # the mechanism: no GIL release, no progress
    assert advanced["vpoc"] > 0, advanced


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 if sys.platform.startswith("linux") else 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_10000_small_calls_keep_rss_flat():
    b = vpoc.synth.es_bars(2, 40, seed=3)
    t = vpoc.synth.es_trades(120, 2, seed=3)
    calls = [
        lambda: vpoc.from_bars(b.high, b.low, b.close, b.volume, offsets=b.offsets, tick_size=0.25),
        lambda: vpoc.from_trades(t.price, t.volume, offsets=t.offsets, tick_size=0.25, developing=True),
        lambda: vpoc.from_bars(b.high, b.low, b.close, b.volume, session_ids=b.session_id,
                               tick_size=0.25, distribute="legacy", open=b.open).poc.sum(),
    ]
    for i in range(1500):  # warm-up: allocator arenas, thread pool, caches
        calls[i % 3]()
    rss0 = _rss_bytes()
    for i in range(10_000):
        calls[i % 3]()
    grown = _rss_bytes() - rss0
    # a leak of 1 KiB per call would be ~10 MB; allocator noise stays well under 4 MiB
    assert grown < 4 << 20, f"RSS grew by {grown / 1024:.0f} KiB over 10,000 calls"


# ------------------------------------------------------------------------------------- GPU


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs a vpoc GPU build and a GPU")
def test_threads_on_the_gpu():
    run_threads("cuda")


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs a vpoc GPU build and a GPU")
def test_gpu_memory_flat_over_many_calls():
    import gc

    w = workloads(9, n_sessions=4, per=200)
    for _ in range(50):
        for fn in w.values():
            fn(device="cuda")
    gc.collect()
    s0 = vpoc.memory_stats()
    for _ in range(1000):
        for fn in w.values():
            fn(device="cuda")
    gc.collect()
    s1 = vpoc.memory_stats()
    assert s1["driver_allocs"] == s0["driver_allocs"], (s0, s1)
    assert s1["output_bytes"] == s0["output_bytes"], (s0, s1)  # every result was given back
    assert s1["pool_bytes"] == s0["pool_bytes"] and s1["workspace_bytes"] == s0["workspace_bytes"], (s0, s1)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs a vpoc GPU build and a GPU")
def test_gpu_oom_then_next_call_works():
    # 64 sessions each 1e9 rows wide (max_rows' limit): their histograms (512 GB) cannot be
    # allocated on any GPU (a 1 PiB memory_budget lets the request reach the driver instead of the
    # budget check)
    wide = 1_000_000_000
    price = np.tile([0.0, (wide - 1) * 0.25], 64)
    offsets = np.arange(0, 129, 2)
    with pytest.raises(vpoc.OutOfMemoryError) as e:
        vpoc.from_trades(price, np.ones(price.size), offsets=offsets, tick_size=0.25, max_rows=wide,
                         device="cuda", memory_budget=2**50)
    assert isinstance(e.value, MemoryError) and "bytes" in str(e.value)
    w = workloads(4)
    for name, fn in w.items():
        assert_profiles_identical(fn(device="cuda").cpu(), fn(), ctx=f"{name} after OutOfMemoryError")
