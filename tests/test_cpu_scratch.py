"""The CPU workers' scratch kept across calls (cpu/scratch_cache.hpp, issue 25): later calls, calls after a
failed one, calls from several threads and calls in a forked child give the NumPy reference's results."""

from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np
import pytest

from _compare import assert_matches_reference, assert_profiles_identical
from reference import ref_bars, ref_trades

vpoc = pytest.importorskip("vpoc")

TICK = 0.25


def drifting_trades(seed: int, n_sessions: int = 40):
    """Integer-volume trades whose sessions lie far apart on the ladder and vary in width: the kept row
    windows must move (and sometimes grow) between sessions and between calls."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 400, n_sessions)
    sizes[::7] = 0  # empty sessions between the others
    parts = []
    for k, n in enumerate(sizes):
        base = (-1) ** k * rng.integers(0, 200_000) * TICK
        width = int(rng.choice([3, 50, 900, 3000]))
        parts.append(base + rng.integers(0, width, n) * TICK)
    price = np.concatenate(parts)
    volume = rng.integers(1, 1000, price.size).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return price, volume, offsets


def drifting_bars(seed: int, n_sessions: int = 30):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 120, n_sessions)
    close = np.concatenate([(-1) ** k * rng.integers(0, 100_000) * TICK + np.cumsum(rng.integers(-3, 4, n)) * TICK
                            for k, n in enumerate(sizes)])
    low = close - rng.integers(0, 6, close.size) * TICK
    high = close + rng.integers(0, 6, close.size) * TICK
    volume = rng.integers(1, 5000, close.size).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return high, low, close, volume, offsets


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_repeated_calls_on_drifting_sessions_match_the_reference(threads):
    for seed in range(3):
        price, volume, offsets = drifting_trades(seed)
        ref = ref_trades(price, volume, offsets, tick_size=TICK)
        for _ in range(2):
            prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=threads)
            assert_matches_reference(prof, ref, exact=True, value_area=0.70, va_method="cbot", poc_tie="center",
                                     ctx=f"trades seed {seed} threads {threads}")
        h, lo, c, v, off = drifting_bars(seed)
        for dist in ("uniform", "close"):
            ref = ref_bars(h, lo, c, v, offsets=off, tick_size=TICK, distribute=dist)
            first = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=TICK, distribute=dist, threads=threads)
            assert_matches_reference(first, ref, exact=dist == "close", value_area=0.70, va_method="cbot",
                                     poc_tie="center", ctx=f"bars {dist} seed {seed} threads {threads}")
            again = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=TICK, distribute=dist, threads=threads)
            assert_profiles_identical(again, first, ctx=f"bars {dist} again")
            one = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=TICK, distribute=dist, threads=1)
            assert_profiles_identical(one, first, ctx=f"bars {dist} one thread")


@pytest.mark.parametrize("threads", [1, 2])
def test_calls_after_a_failed_call_match_the_reference(threads):
    """A call that stops mid-session (a bad price; a volume too large for int64 lanes, which redoes the
    call in fixed point) leaves its windows unclean: they must not serve the next call."""
    price, volume, offsets = drifting_trades(7)
    ref = ref_trades(price, volume, offsets, tick_size=TICK)
    bad = price.copy()
    bad[int(offsets[-1]) - 3] = np.nan  # the last session's rows are binned before the bad one
    with pytest.raises(ValueError, match="price"):
        vpoc.from_trades(bad, volume, offsets=offsets, tick_size=TICK, threads=threads)
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=threads)
    assert_matches_reference(prof, ref, exact=True, value_area=0.70, va_method="cbot", poc_tie="center",
                             ctx="after a bad price")
    # a volume >= 2**31 late in a long session: the int64 pass has binned the blocks before it when it
    # throws, and the call is redone in fixed point
    rng = np.random.default_rng(8)
    p2 = 4000.0 + rng.integers(0, 40, 3000) * TICK
    v2 = rng.integers(1, 100, 3000).astype(np.int64)
    v2[2500] = 2**40
    off2 = np.array([0, 1000, 3000], dtype=np.int64)
    big = vpoc.from_trades(p2, v2, offsets=off2, tick_size=TICK, threads=threads)
    assert_matches_reference(big, ref_trades(p2, v2, off2, tick_size=TICK), exact=True, value_area=0.70,
                             va_method="cbot", poc_tie="center", ctx="fixed-point redo")
    prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=threads)
    assert_matches_reference(prof, ref, exact=True, value_area=0.70, va_method="cbot", poc_tie="center",
                             ctx="after the fixed-point redo")


def test_developing_after_other_calls_is_unchanged():
    h, lo, c, v, off = drifting_bars(3)
    first = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=TICK, developing=True, threads=2)
    vpoc.from_bars(h[:50], lo[:50], c[:50], v[:50], tick_size=TICK, developing=True, threads=2)
    again = vpoc.from_bars(h, lo, c, v, offsets=off, tick_size=TICK, developing=True, threads=2)
    assert_profiles_identical(again, first, ctx="developing again")
    for k in ("dev_poc", "dev_vah", "dev_val"):
        np.testing.assert_array_equal(np.asarray(getattr(again, k)), np.asarray(getattr(first, k)), strict=True)


def _wait(pid: int, timeout: float) -> int:
    """The child's exit status, or -1 (after killing it) when it did not end within timeout seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return -1


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="needs os.fork (Linux)")
@pytest.mark.skipif("thread" in vpoc._core.build_info().get("sanitize", ""),
                    reason="ThreadSanitizer cannot start threads in a child forked from a threaded process")
def test_fork_while_another_thread_calls():
    """A child forked while another thread is inside a two-thread call (maybe holding the cache's lock)
    finishes its own two-thread calls with the parent's results: nothing in the cache can deadlock it."""
    price, volume, offsets = drifting_trades(11)
    expected = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=2)
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=2)

    th = threading.Thread(target=busy, daemon=True)
    th.start()
    codes = []
    try:
        for _ in range(12):
            time.sleep(0.003)
            pid = os.fork()
            if pid == 0:  # the child: only this thread exists here
                code = 1
                try:
                    for _ in range(3):
                        got = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=2)
                        assert_profiles_identical(got, expected, ctx="forked child")
                    code = 0
                finally:
                    os._exit(code)
            codes.append(_wait(pid, 60.0))
    finally:
        stop.set()
        th.join()
    assert codes == [0] * len(codes), codes


@pytest.mark.parametrize("top", [2**31 - 1, 2**31, 2**31 + 1, 2**40])
def test_int64_volumes_at_the_int64_lane_limit(top):
    """int64 volumes bin in int64 rows while every volume of a block is below 2**31 (judged from the
    block's OR, volumes_ok's bound) and in fixed point otherwise: exact either way, trades and bars."""
    rng = np.random.default_rng(top % 1000)
    n = 5000
    price = 4000.0 + rng.integers(0, 60, n) * TICK
    volume = rng.integers(0, 2**20, n).astype(np.int64)
    volume[rng.integers(0, n, 3)] = top
    offsets = np.array([0, 1500, 1500, 5000], dtype=np.int64)
    for threads in (1, 2):
        prof = vpoc.from_trades(price, volume, offsets=offsets, tick_size=TICK, threads=threads)
        assert_matches_reference(prof, ref_trades(price, volume, offsets, tick_size=TICK), exact=True,
                                 value_area=0.70, va_method="cbot", poc_tie="center", ctx=f"trades {top}")
        low, high = price - rng.integers(0, 3, n) * TICK, price + rng.integers(0, 3, n) * TICK
        bars = vpoc.from_bars(high, low, price, volume, offsets=offsets, tick_size=TICK, distribute="close",
                              threads=threads)
        ref = ref_bars(high, low, price, volume, offsets=offsets, tick_size=TICK, distribute="close")
        assert_matches_reference(bars, ref, exact=True, value_area=0.70, va_method="cbot", poc_tie="center",
                                 ctx=f"bars {top}")
