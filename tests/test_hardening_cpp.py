"""Issue 15, C++ side: no crash, hang or silent corruption from concurrent Live use, inputs mutated
during a call, failing thread starts, fat-finger legacy bars, Ctrl-C, Live volume overflow and prices
near the float maximum. Cases that can crash or hang run in a subprocess with a generous timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from typing import Optional

import numpy as np
import pytest

from _sigint import sigint_mid_call

import vpoc

# Generous: each subprocess needs about a second when all is well; a hang is what these catch.
TIMEOUT = 120


def run_py(code: str, timeout: float = TIMEOUT, env: Optional[dict] = None) -> subprocess.CompletedProcess:
    """Runs code in a fresh interpreter (``env``: its environment, default ours); fails the test on a
    timeout (a hang)."""
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                              text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"subprocess still running after {timeout} s (a hang):\n{e.stdout}\n{e.stderr}")


def assert_ok(r: subprocess.CompletedProcess, expect: str = "OK") -> None:
    assert r.returncode == 0, f"exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr[-4000:]}"
    assert expect in r.stdout, r.stdout + r.stderr


# ------------------------------------------------------------------------------------- case 1

def test_case1_live_two_threads():
    """Two threads looping update() on one Live (array updates release the GIL, scalar ones do
    not) neither crash nor lose rows: the final state equals a fresh Live fed the same updates in
    the order the rows ended up in."""
    r = run_py("""
        import threading
        import numpy as np
        import vpoc

        T = 1_700_000_000 * 10**9
        ITER, ROWS, SCALARS = 60, 2000, 3

        def rows(k, j):
            # volume encodes (thread, iteration, row): 1 + k * 10**7 + j * 10**4 + m
            m = np.arange(SCALARS if scalar(k, j) else ROWS)
            price = 4000.0 + ((k * 7 + j * 3 + m) % 50) * 0.25
            return price, (1 + k * 10**7 + j * 10**4 + m).astype(np.int64)

        def scalar(k, j):  # thread 1 sends every third iteration as scalar updates, row by row
            return k == 1 and j % 3 == 0

        def send(live, k, j):
            p, v = rows(k, j)
            if scalar(k, j):
                for a, b in zip(p, v):
                    live.update(float(a), int(b), timestamp=T)
            else:
                live.update(p, v, timestamp=np.full(p.shape[0], T))

        def worker(live, k, barrier):
            barrier.wait()
            for j in range(ITER):
                send(live, k, j)
                live.levels, live.histogram(), live.session_rows, live.row_prices

        for rep in range(3):
            live = vpoc.Live(tick_size=0.25, kind="trades")
            barrier = threading.Barrier(2)
            ts = [threading.Thread(target=worker, args=(live, k, barrier)) for k in range(2)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            cur = live.state_dict()["current"]
            vol = np.asarray(cur["volume"]).astype(np.int64)
            k, j = (vol - 1) // 10**7, ((vol - 1) % 10**7) // 10**4
            for kk in range(2):  # each thread's rows, all there, in its order
                mine = np.concatenate([rows(kk, jj)[1] for jj in range(ITER)])
                np.testing.assert_array_equal(vol[k == kk], mine)
            # every array update is contiguous (not torn); the order the updates took
            order = []
            for kk in range(2):
                for jj in range(ITER):
                    at = np.flatnonzero((k == kk) & (j == jj))
                    if not scalar(kk, jj):
                        assert np.all(np.diff(at) == 1), "torn update"
                        order.append((int(at[0]), kk, jj))
                    else:
                        order += [(int(a), kk, jj, m) for m, a in enumerate(at)]
            order.sort()
            serial = vpoc.Live(tick_size=0.25, kind="trades")
            for o in order:
                p, v = rows(o[1], o[2])
                if len(o) == 3:
                    serial.update(p, v, timestamp=np.full(p.shape[0], T))
                else:
                    serial.update(float(p[o[3]]), int(v[o[3]]), timestamp=T)
            assert live.levels == serial.levels, (live.levels, serial.levels)
            np.testing.assert_array_equal(live.histogram(), serial.histogram())
            assert live.low_row == serial.low_row and live.session_rows == serial.session_rows
            np.testing.assert_array_equal(np.asarray(cur["high"]), np.asarray(serial.state_dict()["current"]["high"]))
        print("OK")
    """)
    assert_ok(r)


def test_case1_core_live_session_two_threads():
    """The C++ LiveSession itself (vpoc._core) serialises its appends and reads."""
    r = run_py("""
        import threading
        import numpy as np
        from vpoc import _core

        s = _core.LiveSession(False, "close", False, tick_size=0.25, ticks_per_row=1, value_area=0.7,
                              va_method="cbot", poc_tie="center", max_rows=1_000_000)
        N, ITER = 2000, 100

        def worker(k):
            rng = np.random.default_rng(k)
            for j in range(ITER):
                p = 4000.0 + rng.integers(-200, 200, N) * 0.25
                if j % 4 == 3:
                    s.append_trade(float(p[0]), 1.0)
                else:
                    s.append(p, None, None, None, None, np.ones(N))
                s.histogram(); s.column(0); s.poc_row

        ts = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        expected = 2 * ITER // 4 * 3 * N + 2 * ITER // 4
        assert s.size == expected and s.total_volume == expected, (s.size, s.total_volume)
        assert float(np.sum(s.histogram())) == expected
        print("OK")
    """)
    assert_ok(r)


# ------------------------------------------------------------------------------------- case 2

def test_case2_offsets_mutated_during_call():
    """Another thread flips offsets[1] between a valid and an absurd value while calls run with
    the GIL released: each call gives the result of some valid offsets or an offsets error, never a
    crash or an error about rows beyond the arrays."""
    r = run_py("""
        import threading, time
        import numpy as np
        import vpoc

        N = 200_000
        rng = np.random.default_rng(0)
        price = 4000.0 + rng.integers(-400, 400, N) * 0.25
        vol = rng.integers(1, 10, N).astype(np.int64)
        high = price + 1.0
        offs = np.array([0, N // 2, N], dtype=np.int64)
        calls = {
            "trades": lambda o, **kw: vpoc.from_trades(price, vol, offsets=o, tick_size=0.25, threads=2, **kw),
            "bars": lambda o, **kw: vpoc.from_bars(high, price, price, vol, offsets=o, tick_size=0.25,
                                                   distribute="uniform", threads=2, **kw),
        }
        expected = {k: np.asarray(f(offs.copy(), developing=True).poc) for k, f in calls.items()}
        stop = False

        def mutate():
            while not stop:
                offs[1] = 10**12
                offs[1] = -(10**12)
                offs[1] = N // 2

        t = threading.Thread(target=mutate)
        t.start()
        outcomes = {"result": 0, "offsets error": 0}
        try:
            end = time.time() + 4
            while time.time() < end:
                for name, f in calls.items():
                    try:
                        got = np.asarray(f(offs, developing=True).poc)
                    except ValueError as e:
                        assert "offsets" in str(e), f"{name}: {e}"
                        outcomes["offsets error"] += 1
                    else:
                        np.testing.assert_array_equal(got, expected[name])
                        outcomes["result"] += 1
        finally:
            stop = True
            t.join()
        print("OK", outcomes)
    """)
    assert_ok(r)


def test_case2_session_ids_read_once():
    """offsets_from_ids reads every id once: its offsets are always a valid partition."""
    ids = np.repeat(np.arange(50, dtype=np.int64), 1000)
    offs, labels = vpoc._core.offsets_from_ids(ids, "session_ids")
    assert offs[0] == 0 and offs[-1] == ids.shape[0] and np.all(np.diff(offs) > 0)
    np.testing.assert_array_equal(labels, np.arange(50))


# ------------------------------------------------------------------------------------- case 3

def test_case3_thread_start_failure():
    """threads=400 under an address-space limit that leaves room for only a few thread stacks:
    the call falls back to the threads it could start (same result), never aborts."""
    if vpoc._core.build_info()["sanitize"]:
        pytest.skip("sanitizers reserve terabytes of address space: no RLIMIT_AS under them")
    r = run_py("""
        import resource
        import numpy as np
        import vpoc

        b = vpoc.synth.es_bars(600, 50, seed=1)
        call = lambda dist, **kw: vpoc.from_bars(b.high, b.low, b.close, b.volume, open=b.open, offsets=b.offsets,
                                                 tick_size=0.25, distribute=dist, developing=True, **kw)
        expected = {d: call(d, threads=1) for d in ("uniform", "legacy")}
        t = vpoc.synth.es_trades(60_000, 600, seed=1)
        expected_t = vpoc.from_trades(t.price, t.volume, offsets=t.offsets, tick_size=0.25, threads=1)
        vm = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
        # room for the work and a few dozen 8 MiB thread stacks, not for 400
        resource.setrlimit(resource.RLIMIT_AS, (vm + 400 * 2**20, resource.RLIM_INFINITY))
        for rep in range(3):
            for d in expected:
                got = call(d, threads=400)
                for k in ("poc", "vah", "val", "volume", "dev_poc", "dev_val", "dev_vah"):
                    np.testing.assert_array_equal(np.asarray(getattr(got, k)), np.asarray(getattr(expected[d], k)))
            got = vpoc.from_trades(t.price, t.volume, offsets=t.offsets, tick_size=0.25, threads=400)
            np.testing.assert_array_equal(np.asarray(got.poc), np.asarray(expected_t.poc))
        print("OK")
    """, env=dict(os.environ, MALLOC_ARENA_MAX="1"))
    # MALLOC_ARENA_MAX=1: each worker thread that starts reserves no 64 MiB malloc arena of its own; those
    # reservations count against RLIMIT_AS too, and on a machine of many cores they took the room the test
    # leaves, so a plain allocation failed (MemoryError) before a thread start did (H200 run, ee0236b)
    assert_ok(r)


def test_case3_threads_upper_bound():
    t = vpoc.synth.es_trades(100, 2, seed=1)
    with pytest.raises(ValueError, match=r"threads must be in \[1, 1024\]"):
        vpoc.from_trades(t.price, t.volume, offsets=t.offsets, tick_size=0.25, threads=1025)
    vpoc.from_trades(t.price, t.volume, offsets=t.offsets, tick_size=0.25, threads=1024)


# ------------------------------------------------------------------------------------- case 4

def test_case4_legacy_fat_finger_bar_raises_at_once():
    """One bar with high=1e12 (4e12 ticks): the max_rows check comes before any weighing, in the
    engine, its developing pass and vpoc.compat."""
    r = run_py("""
        import numpy as np
        import vpoc

        n = 100
        c = np.full(n, 4000.0); h = c + 1.0; l = c - 1.0; o = c.copy(); v = np.ones(n)
        h[37] = 1e12
        for dev in (False, True):
            for kw in ({}, {"open": o}, {"ticks_per_row": 4}):
                try:
                    vpoc.from_bars(h, l, c, v, tick_size=0.25, distribute="legacy", developing=dev, **kw)
                except ValueError as e:
                    assert "max_rows" in str(e) and "bar 37" in str(e), str(e)
                else:
                    raise AssertionError("no error")
        try:
            import pandas as pd
        except ImportError:
            pass
        else:
            from vpoc import compat
            df = pd.DataFrame({"open": o, "high": h, "low": l, "close": c, "volume": v})
            try:
                compat.calculate_volume_profile(df, device="cpu")
            except ValueError as e:
                assert "max_rows" in str(e), str(e)
            else:
                raise AssertionError("no error from compat")
        print("OK")
    """, timeout=60)
    assert_ok(r)


# ------------------------------------------------------------------------------------- case 6

def test_case6_sigint_interrupts_long_call():
    """SIGINT 0.5 s into a CPU call that needs minutes raises KeyboardInterrupt within seconds."""
    code = textwrap.dedent("""
        import sys, time
        import numpy as np
        import vpoc

        S, n, W = 2000, 100, 100_000  # legacy bars 1e5 ticks wide: about 2e10 level weighings
        c = np.full(S * n, 1000.0); h = c + W * 0.25
        offs = np.arange(S + 1, dtype=np.int64) * n
        print("started", flush=True)
        t0 = time.monotonic()
        try:
            vpoc.from_bars(h, c, c, np.ones(S * n), offsets=offs, tick_size=0.25, distribute="legacy", threads=2)
        except KeyboardInterrupt:
            print(f"interrupted after {time.monotonic() - t0:.2f} s", flush=True)
            sys.exit(0)
        print("finished", flush=True)
        sys.exit(3)
    """)
    sigint_mid_call(code, "interrupted")  # the call itself needs minutes: only an interrupted one ends in 30 s


def test_case6_interrupt_hook_is_harmless():
    """Calls from the main thread (watched for Ctrl-C) and from other threads give the same result."""
    import threading

    b = vpoc.synth.es_bars(20, 200, seed=3)
    call = lambda: vpoc.from_bars(b.high, b.low, b.close, b.volume, offsets=b.offsets, tick_size=0.25,  # noqa: E731
                                  distribute="legacy", developing=True)
    main = call()
    box = []
    t = threading.Thread(target=lambda: box.append(call()))
    t.start()
    t.join()
    np.testing.assert_array_equal(np.asarray(main.dev_poc), np.asarray(box[0].dev_poc))
    np.testing.assert_array_equal(np.asarray(main.poc), np.asarray(box[0].poc))


# ------------------------------------------------------------------------------------- case 7

T0 = 1_700_000_000 * 10**9


def test_case7_live_volume_overflow():
    """Live validates volumes as the batch engine does, before anything changes."""
    # an integer volume that does not fit in int64: refused on the exact integer (the contract's
    # 2**53 message, as for any volume past 2**53), nothing changes
    for kind in ("trades", "bars"):
        live = vpoc.Live(tick_size=0.25, kind=kind)
        args = (100.0,) if kind == "trades" else (101.0, 99.0, 100.0)
        with pytest.raises(ValueError, match=r"volume\[0\]=9223372036854775808 is above 2\*\*53"):
            live.update(*args, 2**63, timestamp=T0)
        with pytest.raises(ValueError, match=r"does not fit in int64"):
            vpoc.from_trades([100.0], np.array([2**63], dtype=np.uint64), tick_size=0.25)
        assert live.session_rows == 0 and live.n_rows == 0
        # past 2**53 a volume cannot be summed exactly (docs/contract.md "Exact sums"): the batch
        # message, nothing changes
        with pytest.raises(ValueError, match=r"volume\[0\]=9223372036854775807 is above 2\*\*53"):
            live.update(*args, 2**63 - 1, timestamp=T0)
        assert live.session_rows == 0 and live.n_rows == 0
        # the largest total that is exact: kept, and the session ends equal to the batch
        big = 2**52 + 2**51
        live.update(*args, big, timestamp=T0)
        live.update(*args, 2**53 - big, timestamp=T0)
        live.close()
        vol = np.array([big, 2**53 - big], dtype=np.int64)
        batch = (vpoc.from_trades([100.0] * 2, vol, tick_size=0.25) if kind == "trades" else
                 vpoc.from_bars([101.0] * 2, [99.0] * 2, [100.0] * 2, vol, tick_size=0.25))
        assert live.profiles.total_volume[0] == batch.total_volume[0] == 2.0**53
        np.testing.assert_array_equal(live.profiles.volume, batch.volume)
        live.update(*args, 7, timestamp=T0 + 1)  # later sessions still work
        live.close()
        assert len(live) == 2 and live.profiles.total_volume[1] == 7.0

    # volumes summing past 2**53: the batch engine's message, the update changes nothing
    batch_msg = r"sums past 2\*\*53 \(9007199254740992\)"
    big = float(2**52 + 2**51)
    with pytest.raises(ValueError, match=batch_msg):
        vpoc.from_trades([100.0, 100.0], [big, big], tick_size=0.25)
    live = vpoc.Live(tick_size=0.25, kind="trades")
    live.update(100.0, big, timestamp=T0)
    before = (live.levels, live.session_rows, live.n_rows)
    with pytest.raises(ValueError, match=batch_msg):
        live.update(100.0, big, timestamp=T0)
    with pytest.raises(ValueError, match=batch_msg):
        live.update(np.array([101.0, 102.0]), np.array([1.0, big]), timestamp=np.array([T0, T0]))
    assert (live.levels, live.session_rows, live.n_rows) == before
    live.close()
    assert live.profiles.total_volume[0] == big
    live.update(100.0, 1.0, timestamp=T0 + 1)
    live.close()
    assert len(live) == 2

    bars = vpoc.Live(tick_size=0.25)
    with pytest.raises(ValueError, match=batch_msg):
        bars.update(np.array([101.0, 101.0]), np.array([99.0, 99.0]), np.array([100.0, 100.0]),
                    np.array([big, big]), timestamp=np.array([T0, T0]))
    assert bars.session_rows == 0


# ------------------------------------------------------------------------------------ case 10c

def test_case10c_price_near_float_max():
    """A price whose tick rounds past the float64 range: a ValueError naming it, not an inf POC."""
    with pytest.raises(ValueError, match=r"price\[1\]=1\.\d+e\+308 is out of range for tick_size=1e\+308 .*past the float64 range"):
        vpoc.from_trades([0.0, 1.7e308], [1.0, 1.0], tick_size=1e308, snap=True)
    with pytest.raises(ValueError, match=r"price\[0\]"):
        vpoc.from_trades([-1.7976931348623157e308], [1.0], tick_size=1e293, developing=True)
    for dist in ("close", "uniform", "legacy", "hlc3"):
        with pytest.raises(ValueError, match=r"high\[0\]=1\.79769\d+e\+308 is out of range"):
            vpoc.from_bars([1.7976931348623157e308], [1e308], [1e308], [1.0], tick_size=1e293,
                           distribute=dist)
    live = vpoc.Live(tick_size=1e308, kind="trades")
    with pytest.raises(ValueError, match=r"price\[0\]=1\.\d+e\+308 is out of range"):
        live.update(1.7e308, 1.0, timestamp=T0)
    # prices just inside the range still work, with finite levels
    p = vpoc.from_trades([1.7976e308, 1.7975e308], [1.0, 2.0], tick_size=1e300, developing=True)
    assert np.isfinite(p.poc).all() and np.isfinite(p.dev_poc).all() and np.isfinite(p.vah).all()
    p = vpoc.from_bars([1.7976e308], [1.7975e308], [1.7975e308], [1.0], tick_size=1e300, distribute="legacy")
    assert np.isfinite(p.poc).all() and np.isfinite(p.vah).all()
