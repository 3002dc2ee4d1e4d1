"""Issue 15, the Python-side hardening cases (5, 8, 9, 10, 11 and the memory half of 12).

Each case has a test named after it. Cases that could crash or hang run in a subprocess with a
generous timeout (never a timed assertion otherwise).
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import vpoc
from vpoc import io as vio
from vpoc import sessions

NAT_INT = -2**63
TIMEOUT = 300  # seconds; only against hangs


def run_python(code: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (a crash there fails the test instead of killing pytest)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


# =============================================================================== case 10


def _masked(values, masked_at):
    mask = np.zeros(len(values), dtype=bool)
    mask[masked_at] = True
    return np.ma.masked_array(np.asarray(values), mask=mask)


@pytest.mark.parametrize("call, name", [
    (lambda p, v: vpoc.from_trades(p, [1.0, 1.0, 5.0], tick_size=1.0), "price"),
    (lambda p, v: vpoc.from_trades([1.0, 2.0, 3.0], v, tick_size=1.0), "volume"),
    (lambda p, v: vpoc.from_bars(p, [0.5, 1.5, 2.5], p, [1.0, 1.0, 5.0], tick_size=0.5), "high"),
    (lambda p, v: vpoc.from_bars([1.0, 2.0, 3.0], [0.5, 1.5, 2.5], [1.0, 2.0, 3.0], v,
                                 tick_size=0.5, developing=True), "volume"),
    (lambda p, v: vpoc.from_trades([1.0, 2.0, 3.0], [1.0, 1.0, 5.0],
                                   offsets=_masked([0, 2, 3], 1), tick_size=1.0), "offsets"),
    (lambda p, v: vpoc.from_trades([1.0, 2.0, 3.0], [1.0, 1.0, 5.0],
                                   session_ids=_masked([0, 0, 1], 2), tick_size=1.0), "session_ids"),
    (lambda p, v: vpoc.session_features([2.0, 3.0, 4.0], [1.0, 2.0, 3.0], [1.5, 2.5, 3.5], v,
                                        tick_size=0.5), "volume"),
    (lambda p, v: vpoc.bar_features(p, [0.5, 1.5, 2.5], p, [1.0, 1.0, 5.0], tick_size=0.5), "high"),
    (lambda p, v: vpoc.Live(tick_size=0.5).update(p, [0.5, 1.5, 2.5], p, [1.0, 1.0, 5.0],
                                                  timestamp=[1, 2, 3]), "high"),
])
def test_case10_masked_arrays_are_refused(call, name):
    # before: the masked rows were used silently (the masked 5.0 made row 3 the POC)
    p = _masked([1.0, 2.0, 3.0], 2)
    v = _masked([1.0, 1.0, 5.0], 2)
    with pytest.raises(ValueError, match=rf"{name} is a numpy masked array .*index [12].*not supported"):
        call(p, v)


def test_case10_masked_timestamps_are_refused():
    ts = _masked(np.array([1_700_000_000, 1_700_000_060, 1_700_000_120]) * 10**9, 1)
    with pytest.raises(ValueError, match="ts is a numpy masked array"):
        sessions.daily(ts)
    with pytest.raises(ValueError, match="timestamp is a numpy masked array"):
        vpoc.bar_features([2.0, 3.0, 4.0], [1.0, 2.0, 3.0], [1.5, 2.5, 3.5], [1, 1, 1],
                          timestamp=ts, tick_size=0.5)
    with pytest.raises(ValueError, match="timestamp is a numpy masked array"):
        vio.Trades(timestamp=ts, price=[1.0, 2.0, 3.0], volume=[1, 1, 1])


def test_case10_masked_array_without_masked_values_is_its_data():
    p = np.ma.masked_array([1.0, 2.0, 2.0])  # nothing masked: the data is all there
    got = vpoc.from_trades(p, np.ma.masked_array([1, 1, 1]), tick_size=1.0)
    assert got.poc[0] == 2.0 and got.total_volume[0] == 3.0


GOOD_NS = [1_700_000_000 * 10**9, 1_700_000_060 * 10**9, 1_700_000_120 * 10**9]


@pytest.mark.parametrize("unit, scale", [("ns", 1), ("s", 10**-9)])
@pytest.mark.parametrize("entry", ["daily", "globex", "bar_features", "io.Bars", "Live", "Live.one"])
def test_case10_nat_integer_timestamp_is_an_error(entry, unit, scale):
    # before: -2**63 went through as a number: 1970 in seconds (the scaling wrapped), 1677 or a
    # pandas OutOfBounds error or a calendar error in ns; io.Bars stored NaT; Live accepted it
    good = [int(t * scale) if scale != 1 else t for t in GOOD_NS]
    ts = np.array([good[0], NAT_INT, good[2]], dtype=np.int64)
    h, lo, c, v = [2.0, 3.0, 4.0], [1.0, 2.0, 3.0], [1.5, 2.5, 3.5], [1, 1, 1]
    name = "ts" if entry in ("daily", "globex") else "timestamp"
    index = 0 if entry == "Live.one" else 1
    calls = {
        "daily": lambda: sessions.daily(ts, time_unit=unit),
        "globex": lambda: sessions.globex(ts, time_unit=unit),
        "bar_features": lambda: vpoc.bar_features(h, lo, c, v, timestamp=ts, time_unit=unit,
                                                  tick_size=0.5),
        "io.Bars": lambda: vio.Bars(timestamp=ts,
                                    open=c, high=h, low=lo, close=c, volume=v),
        "Live": lambda: vpoc.Live(tick_size=0.5, time_unit=unit).update(h, lo, c, v, timestamp=ts),
        "Live.one": lambda: vpoc.Live(tick_size=0.5, time_unit=unit).update(2.0, 1.0, 1.5, 1,
                                                                            timestamp=NAT_INT),
    }
    if entry == "io.Bars" and unit != "ns":
        pytest.skip("vpoc.io containers take ns (or datetime64)")
    with pytest.raises(ValueError, match=rf"{name}\[{index}\] = -9223372036854775808 is -2\*\*63, "
                                         r"the integer form of NaT"):
        calls[entry]()


def test_case10_nat_integer_timestamp_in_a_file(tmp_path):
    path = tmp_path / "bars.csv"
    path.write_text("timestamp,open,high,low,close,volume\n"
                    f"{GOOD_NS[0] // 10**9},1,2,1,1,1\n{NAT_INT},1,2,1,1,1\n")
    with pytest.raises(ValueError, match=r"line 3: timestamp -9223372036854775808 is -2\*\*63"):
        vio.read_bars(path, time_unit="s")


def test_case10_nat_datetime_session_ids_are_an_error():
    ids = np.array(["2024-01-02", "NaT", "NaT"], dtype="datetime64[ns]")
    with pytest.raises(ValueError, match=r"session_ids\[1\] is NaT"):
        vpoc.from_trades([1.0, 2.0, 3.0], [1, 1, 1], session_ids=ids, tick_size=1.0)


# =============================================================================== cases 8 and 9


def _bars(n_sessions=2, bars=30, seed=0):
    return vpoc.synth.es_bars(n_sessions, bars, seed=seed)


def _write_input(tmp_path):
    path = tmp_path / "in.parquet"
    vio.write_bars(_bars(), path)
    return path


def _leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_case8_cli_temp_file_unpredictable_and_no_symlink_follow(tmp_path, monkeypatch, suffix):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from vpoc import cli

    src = _write_input(tmp_path)
    outdir = tmp_path / "out"
    outdir.mkdir()
    out = outdir / f"result{suffix}"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    # before: the temporary file was .<out>.<pid>.tmp, opened following symlinks: a link planted
    # there made the run overwrite the file it points to (and leave `out` a link to it)
    (outdir / f".{out.name}.{os.getpid()}.tmp").symlink_to(victim)
    (outdir / f".{out.name}.tmp").symlink_to(victim)
    seen = []
    real_replace = os.replace

    def spy(a, b, *args, **kw):
        seen.append(os.path.basename(os.fspath(a)))
        return real_replace(a, b, *args, **kw)

    monkeypatch.setattr(os, "replace", spy)
    for _ in range(2):
        assert cli.main(["profile", str(src), "--tick-size", "0.25", "--out", str(out)]) == 0
    assert victim.read_text() == "precious"
    assert out.is_file() and not out.is_symlink()
    table = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    assert len(table) == 2
    assert len(seen) == 2 and seen[0] != seen[1]  # a fresh, unpredictable name each time
    assert all(str(os.getpid()) not in name.split(".") for name in seen)
    assert _leftovers(outdir) == sorted([f".{out.name}.{os.getpid()}.tmp", f".{out.name}.tmp"])


def test_case8_cli_failed_write_keeps_the_old_output(tmp_path, monkeypatch):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from vpoc import cli

    src = _write_input(tmp_path)
    out = tmp_path / "result.csv"
    out.write_text("old")

    def broken(self, buf, *args, **kw):
        buf.write(b"partial,rows\n")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", broken)
    assert cli.main(["profile", str(src), "--tick-size", "0.25", "--out", str(out)]) != 0
    assert out.read_text() == "old"
    assert _leftovers(tmp_path) == []


def _write_call(kind, fmt, path):
    if kind == "bars":
        return lambda: vio.write_bars(_bars(), path, tz="America/Chicago" if fmt == "legacy" else None)
    b = _bars()
    trades = vio.Trades(timestamp=b.timestamp, price=b.close, volume=b.volume)
    return lambda: vio.write_trades(trades, path)


CASE9 = [("bars", "csv", "old.csv"), ("bars", "csv", "old.csv.gz"), ("bars", "legacy", "old.txt"),
         ("bars", "parquet", "old.parquet"), ("trades", "csv", "old.csv"),
         ("trades", "parquet", "old.pq")]


@pytest.mark.parametrize("kind, fmt, name", CASE9)
def test_case9_io_write_failing_midway_keeps_the_old_file(tmp_path, monkeypatch, kind, fmt, name):
    pd = pytest.importorskip("pandas")

    if fmt == "parquet":
        pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / name
    path.write_bytes(b"old data")
    os.chmod(path, 0o640)

    def broken(*args, **kw):  # writes part of the file, then the disk is full
        handle = args[1] if len(args) > 1 else kw["path_or_buf"]
        if isinstance(handle, (str, os.PathLike)):  # a writer given the path opens it itself
            with open(handle, "wb") as fh:
                fh.write(b"half a file")
        else:
            handle.write(b"half a file")
        raise OSError(28, "No space left on device")

    if fmt == "parquet":
        monkeypatch.setattr(pq, "write_table", broken)
    else:
        monkeypatch.setattr(pd.DataFrame, "to_csv", broken)
    with pytest.raises(OSError, match="No space left"):
        _write_call(kind, fmt, path)()
    # before: the file was truncated and held the partial write
    assert path.read_bytes() == b"old data"
    assert _leftovers(tmp_path) == []
    monkeypatch.undo()
    _write_call(kind, fmt, path)()  # a write that succeeds replaces it whole, keeping its mode
    assert path.read_bytes() != b"old data" and (os.stat(path).st_mode & 0o777) == 0o640
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("fmt, name", [("csv", "old.csv"), ("parquet", "old.parquet")])
def test_case9_io_write_under_file_size_limit_keeps_the_old_file(tmp_path, fmt, name):
    pytest.importorskip("pandas")
    # a real failing disk: RLIMIT_FSIZE in a child process (SIGXFSZ ignored, so write() fails
    # with EFBIG instead of killing it)
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    path = tmp_path / name
    old = b"x" * 1000
    path.write_bytes(old)
    r = run_python(f"""
        import resource, signal
        import vpoc
        from vpoc import io
        bars = vpoc.synth.es_bars(20, 500, seed=1)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))
        try:
            io.write_bars(bars, {str(path)!r})
        except OSError as e:
            print("OSError", e.errno)
        else:
            print("written")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "OSError", r.stdout
    assert path.read_bytes() == old
    assert _leftovers(tmp_path) == []


# =============================================================================== case 5


def test_case5_node_smoothing_bounded():
    # before: node_smoothing / node_order drove a Python loop of that many steps (per call and at
    # every Live session end): 10**12 hung for hours. Now: a ValueError naming the bound.
    r = run_python("""
        import numpy as np, vpoc
        from vpoc import features
        h, lo, c, v = [2.0, 3.0, 4.0], [1.0, 2.0, 3.0], [1.5, 2.5, 3.5], [1, 1, 1]
        big = {"node_smoothing": 10**12 + 1, "node_order": 10**12}
        for name, value in big.items():
            for call in (lambda: vpoc.session_features(h, lo, c, v, tick_size=0.5, **{name: value}),
                         lambda: vpoc.bar_features(h, lo, c, v, tick_size=0.5, **{name: value}),
                         lambda: vpoc.Live(tick_size=0.5, features={name: value})):
                try:
                    call()
                    print("accepted", name)
                except ValueError as e:
                    print("ValueError", e)
        print("bound", features.MAX_NODE_ROWS)
    """, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[-1] == "bound 1000000"
    assert len(lines) == 7 and all(line.startswith("ValueError") for line in lines[:6]), r.stdout
    assert all("must be <= 1000000" in line for line in lines[:6])
    assert sum("node_smoothing" in line for line in lines[:6]) == 3
    assert sum("node_order" in line for line in lines[:6]) == 3
    vpoc.session_features([2.0], [1.0], [1.5], [1], tick_size=0.5, node_smoothing=999_999,
                          node_order=1_000_000)  # the bound itself is accepted


def test_case5_node_windows_cost_does_not_grow_with_their_value():
    # any accepted window runs in O(rows): the largest ones on 200 sessions of 300 bars, in a
    # child with a timeout against a hang (the old loop took ~1e6 numpy passes per call)
    r = run_python("""
        import numpy as np, vpoc
        b = vpoc.synth.es_bars(200, 300, seed=2)
        t = vpoc.session_features(b.high, b.low, b.close, b.volume, offsets=b.offsets,
                                  tick_size=0.25, node_smoothing=999_999, node_order=1_000_000)
        u = vpoc.bar_features(b.high, b.low, b.close, b.volume, offsets=b.offsets,
                              tick_size=0.25, node_smoothing=999_999, node_order=1_000_000)
        live = vpoc.Live(tick_size=0.25, features=dict(node_smoothing=999_999, node_order=1_000_000),
                         session_starts=b.timestamp[b.offsets[:-1]])
        live.update(b.high, b.low, b.close, b.volume, timestamp=b.timestamp)
        print(len(t), len(u), len(live), int(np.nansum(t["hvn_count"])))
    """, timeout=240)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:3] == ["200", "60000", "199"]
    assert r.stdout.split()[3] == "0"  # a window that wide leaves no room for a node


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("smoothing, order", [(1, 1), (3, 2), (7, 4), (21, 9), (41, 30), (99, 1)])
def test_case5_wide_node_windows_match_the_reference(smoothing, order, exact):
    import feature_reference as FR
    from vpoc import features as F

    rng = np.random.default_rng(smoothing * 100 + order + exact)
    sizes = rng.integers(0, 120, 12)
    d = _random_walk_bars(rng, sizes, exact)
    rules = dict(F._Rules.__dataclass_fields__)  # every rule name
    prof = vpoc.from_bars(d["high"], d["low"], d["close"], d["volume"], offsets=d["offsets"],
                          tick_size=0.25)
    r = F._rules(0.25, 1, "uniform", 0.7, "cbot", "center", (), 1, None, smoothing, order, 0.3, 0.7,
                 0.3, 0.6, 0.5, "UTC", "08:30", 60, 30)
    from types import SimpleNamespace
    nodes = F._nodes(SimpleNamespace(rules=r, prof=prof))
    want_rules = {k: getattr(r, k) for k in rules}
    offs = np.asarray(prof.offsets)
    for s in range(len(sizes)):
        hist = np.asarray(prof.volume)[offs[s]:offs[s + 1]]
        hvn, lvn, smooth = FR.nodes(hist, want_rules)
        np.testing.assert_allclose(nodes.smooth[offs[s]:offs[s + 1]], smooth, rtol=1e-12, atol=0)
        assert list(np.flatnonzero(nodes.hvn[offs[s]:offs[s + 1]])) == hvn, s
        assert list(np.flatnonzero(nodes.lvn[offs[s]:offs[s + 1]])) == lvn, s


def _random_walk_bars(rng, sizes, exact):
    n = int(np.sum(sizes))
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    steps = rng.integers(-3, 4, n)
    close_t = 18000 + np.cumsum(steps)
    high_t = close_t + rng.integers(0, 4, n)
    low_t = close_t - rng.integers(0, 4, n)
    ticks = high_t - low_t + 1
    volume = rng.integers(0, 40, n) * ticks if exact else rng.random(n) * 50
    p = lambda t: t.astype(np.float64) * 0.25  # noqa: E731
    return dict(high=p(high_t), low=p(low_t), close=p(close_t), volume=volume, offsets=offsets)
