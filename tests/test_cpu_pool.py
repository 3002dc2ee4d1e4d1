"""The CPU backend's persistent worker pool (cpu/pool.hpp): results of any thread count, from several Python
threads at once, in a forked child and after Ctrl-C equal the one-thread call and the NumPy reference."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from _sigint import sigint_mid_call

from _compare import assert_matches_reference, assert_profiles_identical
from reference import ref_trades
from test_cpu_scratch import _wait, drifting_bars, drifting_trades

vpoc = pytest.importorskip("vpoc")

TICK = 0.25
LINUX = sys.platform.startswith("linux")


def small_trades(seed: int):
    return drifting_trades(seed, n_sessions=12)


def test_thread_counts_grow_and_shrink():
    """The pool grows to each call's count and serves smaller ones: every count equals threads=1."""
    price, volume, offsets = drifting_trades(21, n_sessions=64)
    ref = ref_trades(price, volume, offsets, tick_size=TICK)
    one = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=1)
    assert_matches_reference(one, ref, exact=True, value_area=0.70, va_method="cbot", poc_tie="center",
                             ctx="one thread")
    h, lo, c, v, off = drifting_bars(21, n_sessions=64)
    bars_one = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=TICK, developing=True, threads=1)
    for threads in (2, 8, 3, 16, 1, 5, 64, 2):
        got = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=threads)
        assert_profiles_identical(got, one, ctx=f"trades threads {threads}")
        bars = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=TICK, developing=True, threads=threads)
        assert_profiles_identical(bars, bars_one, ctx=f"developing threads {threads}")
        for k in ("dev_poc", "dev_vah", "dev_val"):
            np.testing.assert_array_equal(np.asarray(getattr(bars, k)), np.asarray(getattr(bars_one, k)),
                                          strict=True)


def test_many_short_calls_from_four_threads_match_the_reference():
    """Four Python threads make many short multi-thread calls at once (some get a pool each, the rest
    threads of their own): every result is the NumPy reference's."""
    data = [small_trades(seed) for seed in range(4)]
    refs = [ref_trades(p, v, o, tick_size=TICK) for p, v, o in data]
    expected = [vpoc.from_trades(p, v, offsets=o, tick_size=TICK, threads=1) for p, v, o in data]
    for got, ref in zip(expected, refs):
        assert_matches_reference(got, ref, exact=True, value_area=0.70, va_method="cbot", poc_tie="center",
                                 ctx="threads=1")
    barrier = threading.Barrier(4)
    errors = []

    def worker(k: int):
        try:
            barrier.wait()
            for r in range(150):
                j = (k + r) % len(data)
                p, v, o = data[j]
                got = vpoc.from_trades(p, v, offsets=o, tick_size=TICK, threads=2 + (k + r) % 3)
                assert_profiles_identical(got, expected[j], ctx=f"thread {k} call {r}")
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ths = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(120)
    assert not any(t.is_alive() for t in ths), "a caller hung"
    assert not errors, errors[0]


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="needs os.fork (Linux)")
@pytest.mark.skipif("thread" in vpoc._core.build_info().get("sanitize", ""),
                    reason="ThreadSanitizer cannot start threads in a child forked from a threaded process")
def test_child_forked_after_pooled_calls():
    """The parent's pool threads do not exist in a child: the child starts its own, grandchild too."""
    price, volume, offsets = drifting_trades(5)
    expected = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=1)
    for threads in (4, 2):
        vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=threads)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for threads in (2, 4, 6):
                got = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=threads)
                assert_profiles_identical(got, expected, ctx=f"child threads {threads}")
            grandchild = os.fork()
            if grandchild == 0:
                c2 = 1
                try:
                    got = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=3)
                    assert_profiles_identical(got, expected, ctx="grandchild")
                    c2 = 0
                finally:
                    os._exit(c2)
            code = 0 if _wait(grandchild, 60.0) == 0 else 2
        finally:
            os._exit(code)
    assert _wait(pid, 90.0) == 0
    got = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=4)
    assert_profiles_identical(got, expected, ctx="parent after the fork")


@pytest.mark.skipif(not LINUX, reason="reads /proc/self/task")
def test_pool_threads_block_signals():
    """Pool threads never take SIGINT (it must reach a thread that runs Python): after a call with 3
    threads, at least two threads of this process block SIGINT and the calling thread does not."""
    price, volume, offsets = drifting_trades(6)
    vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=3)

    def blocks_sigint(task: str) -> bool:
        with open(f"/proc/self/task/{task}/status") as f:
            line = next(x for x in f if x.startswith("SigBlk:"))
        return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))

    tasks = os.listdir("/proc/self/task")
    assert sum(blocks_sigint(t) for t in tasks) >= 2
    assert not blocks_sigint(str(threading.get_native_id()))


def _run(code: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout)


def test_sigint_stops_a_pooled_call_and_the_pool_serves_the_next():
    """Ctrl-C 0.5 s into a long three-thread call raises KeyboardInterrupt; the next calls (same pool)
    give the one-thread results."""
    code = textwrap.dedent("""
        import sys, time
        import numpy as np
        import vpoc

        b = vpoc.synth.es_bars(40, 300, seed=2)
        small = lambda t: vpoc.from_bars(b.high, b.low, b.close, b.volume, offsets=b.offsets, tick_size=0.25,
                                         threads=t)
        one = small(1)
        small(3)
        S, n, W = 2000, 100, 100_000  # legacy bars 1e5 ticks wide: minutes of work
        c = np.full(S * n, 1000.0); h = c + W * 0.25
        offs = np.arange(S + 1, dtype=np.int64) * n
        print("started", flush=True)
        try:
            vpoc.from_bars(h, c, c, np.ones(S * n), offsets=offs, tick_size=0.25, distribute="legacy", threads=3)
        except KeyboardInterrupt:
            for t in (3, 2, 3):
                got = small(t)
                for k in ("poc", "vah", "val", "volume", "offsets"):
                    assert np.array_equal(np.asarray(getattr(got, k)), np.asarray(getattr(one, k)),
                                          equal_nan=True), k
            print("interrupted, next calls ok", flush=True)
            sys.exit(0)
        sys.exit(3)
    """)
    sigint_mid_call(code, "next calls ok")  # the call itself needs minutes: only an interrupted one ends in 30 s


def test_interpreter_exit_with_an_idle_pool():
    """Exit does not wait for the pool: its idle helpers (detached, asleep) end with the process."""
    r = _run("""
        import vpoc
        b = vpoc.synth.es_bars(64, 390, seed=1)
        for t in (2, 4, 8):
            vpoc.from_bars(b.high, b.low, b.close, b.volume, offsets=b.offsets, tick_size=0.25, threads=t)
        print("exiting", flush=True)
    """, timeout=60)
    assert r.returncode == 0 and r.stdout == "exiting\n" and r.stderr == "", (r.returncode, r.stdout, r.stderr)


def test_interpreter_exit_with_a_daemon_thread_mid_call_does_not_hang():
    """A daemon thread inside a pooled call at exit: the process ends (no wait on the pool). It may end
    with SIGABRT: CPython ends such a thread (pthread_exit) when it takes the GIL back in pybind11's
    gil_scoped_release destructor, a noexcept frame ("terminate called without an active exception");
    that predates the pool (same with per-call threads) and is not the pool's doing."""
    r = _run("""
        import threading, time
        import vpoc
        b = vpoc.synth.es_bars(64, 390, seed=1)
        call = lambda: vpoc.from_bars(b.high, b.low, b.close, b.volume, offsets=b.offsets, tick_size=0.25,
                                      threads=4)
        call()
        def loop():
            while True:
                call()
        threading.Thread(target=loop, daemon=True).start()
        time.sleep(0.2)
        print("exiting", flush=True)
    """, timeout=60)
    assert "exiting" in r.stdout, (r.returncode, r.stdout, r.stderr)
    assert r.returncode in (0, -signal.SIGABRT), (r.returncode, r.stdout, r.stderr)
