"""The CPU pool's process-wide budget (cpu/pool.cpp, parallel.hpp pooled_thread_budget): however many
callers run at once, the process keeps at most max(cores - 1, 3) idle pool threads; workers beyond them
run on threads of the call, and every result still equals the one-thread call and the NumPy reference."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

vpoc = pytest.importorskip("vpoc")

LINUX = sys.platform.startswith("linux")

# A fresh interpreter: the pools (and their threads) of this test process do not count. Prints the
# threads the calls left behind (idle pool helpers), the budget, and whether every result matched.
_CONCURRENT_CALLS = """
    import os, sys, threading
    import numpy as np
    sys.path.insert(0, {tests!r})
    import vpoc
    from reference import ref_trades
    from _compare import assert_matches_reference, assert_profiles_identical
    from test_cpu_scratch import drifting_trades

    def tasks():
        return len(os.listdir("/proc/self/task"))

    data = [drifting_trades(seed, n_sessions=24) for seed in range(3)]
    expected = [vpoc.from_trades(p, v, offsets=o, tick_size=0.25, threads=1) for p, v, o in data]
    for (p, v, o), got in zip(data, expected):
        assert_matches_reference(got, ref_trades(p, v, o, tick_size=0.25), exact=True, value_area=0.70,
                                 va_method="cbot", poc_tie="center", ctx="threads=1")
    base = tasks()
    callers, errors = {callers}, []
    barrier = threading.Barrier(callers)

    def worker(k):
        try:
            barrier.wait()
            for r in range({calls}):
                j = (k + r) % len(data)
                p, v, o = data[j]
                got = vpoc.from_trades(p, v, offsets=o, tick_size=0.25, threads={threads})
                assert_profiles_identical(got, expected[j], ctx=f"caller {{k}} call {{r}}")
        except BaseException as e:  # reported below
            errors.append(repr(e))

    ths = [threading.Thread(target=worker, args=(k,)) for k in range(callers)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(120)
    assert not any(t.is_alive() for t in ths), "a caller hung"
    assert not errors, errors[0]
    budget = max((os.cpu_count() or 1) - 1, 3)
    # a joined thread's task can linger in /proc a moment after its join returned: wait for those
    import time
    deadline = time.monotonic() + 5.0
    while tasks() - base > budget and time.monotonic() < deadline:
        time.sleep(0.05)
    print("left", tasks() - base, "budget", budget, flush=True)
"""


def _left_behind(callers: int, threads: int, calls: int = 40) -> tuple[int, int]:
    import os

    code = textwrap.dedent(_CONCURRENT_CALLS).format(tests=os.path.dirname(os.path.abspath(__file__)),
                                                     callers=callers, threads=threads, calls=calls)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    line = r.stdout.strip().splitlines()[-1].split()
    assert line[0] == "left" and line[2] == "budget", r.stdout
    return int(line[1]), int(line[3])


@pytest.mark.skipif(not LINUX, reason="counts threads in /proc/self/task")
@pytest.mark.parametrize("callers, threads", [(8, 8), (4, 3), (1, 64)])
def test_idle_pool_threads_stay_within_one_budget(callers, threads):
    """8 Python threads calling with threads=8 at once (8 pools in use) leave at most the budget of
    idle threads, not 8 pools' worth; so do 4 callers of 3 threads and one caller of 64; results equal
    threads=1 (checked in the child)."""
    left, budget = _left_behind(callers, threads)
    assert 0 <= left <= budget, (left, budget)
    if threads > 1:
        assert left >= 1, "no pool thread kept: every call started its threads afresh"


@pytest.mark.skipif(not LINUX, reason="counts threads in /proc/self/task")
def test_budget_is_reachable_by_one_caller():
    """One caller asking for more workers than the budget gets the whole budget pooled (the rest on
    threads of the call): exactly the budget is left idle."""
    left, budget = _left_behind(1, 16, calls=5)
    assert left == budget, (left, budget)
