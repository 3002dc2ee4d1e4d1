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

import _deps

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


@_deps.needs("pandas")
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
    # the CLI's default sessions are CME Globex, from the exchange calendar
    pytest.importorskip("pandas_market_calendars", reason='needs pandas_market_calendars (pip install "vpoc[cli]")')
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
    # the CLI's default sessions are CME Globex, from the exchange calendar
    pytest.importorskip("pandas_market_calendars", reason='needs pandas_market_calendars (pip install "vpoc[cli]")')
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


@_deps.needs("pandas")
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


# =============================================================================== case 11


def _live_state(kind="bars"):
    b = vpoc.synth.es_bars(8, 40, seed=1)
    n = int(b.offsets[-2]) + 5
    if kind == "bars":
        live = vpoc.Live(tick_size=0.25, session_starts=b.timestamp[b.offsets[:-1]],
                         features=dict(lookbacks=(1, 2), composite_sessions=2))
        live.update(b.high[:n], b.low[:n], b.close[:n], b.volume[:n].astype(np.int64),
                    open=b.open[:n], timestamp=b.timestamp[:n])
    else:
        live = vpoc.Live(tick_size=0.25, kind="trades", session_starts=b.timestamp[b.offsets[:-1]])
        live.update(b.close[:n], b.volume[:n].astype(np.int64), timestamp=b.timestamp[:n])
    return live, live.state_dict(), b, n


def _copy(x):
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_copy(v) for v in x]
    if isinstance(x, tuple):
        return tuple(_copy(v) for v in x)
    if isinstance(x, np.ndarray):
        return x.copy()
    return x


def _assert_same(a, b, path="state"):
    assert type(a) is type(b) or (isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer))), \
        (path, type(a), type(b))
    if isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            _assert_same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, path
        np.testing.assert_array_equal(a, b, err_msg=path)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), path
    else:
        assert a == b, path


def _set(path, value):
    def tamper(st):
        obj = st
        for p in path[:-1]:
            obj = obj[p]
        if isinstance(obj, tuple):  # comp / naked entries
            raise AssertionError("tamper a tuple through its list")
        obj[path[-1]] = value(obj[path[-1]]) if callable(value) else value
    return tamper


def _tuple_item(path, i, value):
    def tamper(st):
        lst = st
        for p in path[:-1]:
            lst = lst[p]
        t = list(lst[path[-1]])
        t[i] = value
        lst[path[-1]] = tuple(t)
    return tamper


def _nan_at(i):
    def f(a):
        a = a.astype(np.float64)
        a[i] = np.nan
        return a
    return f


def _scale_at(i, factor):
    def f(a):
        a = a.copy()
        a[i] *= factor
        return a
    return f


def _pop(key):
    def tamper(st):
        del st[key]
    return tamper


def _drop_last(*path):
    def tamper(st):
        obj = st
        for p in path:
            obj = obj[p]
        obj.pop()
    return tamper


TAMPERS = {
    # top level and counters
    "missing key": (_pop("naked"), "state is missing ['naked']"),
    "unknown key": (_set(("extra",), 1), "unknown key(s) ['extra']"),
    "version bool": (_set(("version",), True), "state['version']"),
    "config type": (_set(("config",), [1]), "state['config'] must be a dict"),
    "config unknown arg": (_set(("config", "colour"), "red"), "state['config']"),
    "config bad tick": (_set(("config", "tick_size"), -1.0), "state['config']"),
    "n_rows negative": (_set(("n_rows",), -1), "state['n_rows']"),
    "n_rows float": (_set(("n_rows",), 285.5), "state['n_rows']"),
    "n_rows too few": (_set(("n_rows",), 10), "state['n_rows'] = 10 is fewer"),
    "n_dropped negative": (_set(("n_dropped",), -3), "state['n_dropped']"),
    "n_dropped str": (_set(("n_dropped",), "0"), "state['n_dropped']"),
    "has_open int": (_set(("has_open",), 1), "state['has_open']"),
    "has_open None": (_set(("has_open",), None), "state['has_open']"),
    "last_ts None": (_set(("last_ts",), None), "state['last_ts']"),
    "last_ts NaT": (_set(("last_ts",), -2**63), "state['last_ts']"),
    "last_ts early": (_set(("last_ts",), 0), "state['last_ts'] = 0"),
    "label None": (_set(("label",), None), "state['current'] holds rows but state['label']"),
    "label negative": (_set(("label",), -1), "state['label']"),
    "label older": (_set(("label",), 3), "state['label'] = 3"),
    "label other session": (_set(("label",), 8), "state['current']['ts'][0] is not in session"),
    # finished sessions
    "done type": (_set(("done",), {}), "state['done'] must be a list"),
    "done entry type": (_set(("done", 0), [1, 2]), "state['done'][0] must be a dict"),
    "done missing field": (lambda st: st["done"][1].pop("vah"), "state['done'][1] is missing ['vah']"),
    "done poc NaN": (_set(("done", 2, "poc"), lambda a: a * np.nan), "state['done'][2]['poc'][0]"),
    "done poc moved": (_set(("done", 2, "poc"), lambda a: a + 0.25), "state['done'][2]['poc']"),
    "done poc_row moved": (_set(("done", 2, "poc_row"), lambda a: a + 1), "state['done'][2]"),
    "done poc_row outside": (_set(("done", 2, "poc_row"), lambda a: a + 10**6), "state['done'][2]['poc_row']"),
    "done poc_row float": (_set(("done", 2, "poc_row"), lambda a: a.astype(float)), "state['done'][2]['poc_row']"),
    "done low_row NO_ROW": (_set(("done", 2, "low_row"), lambda a: np.full_like(a, -2**63)), "state['done'][2]['low_row']"),
    "done n_rows long": (_set(("done", 3, "n_rows"), lambda a: a + 1), "state['done'][3]['volume'] has length"),
    "done n_rows zero": (_set(("done", 3, "n_rows"), lambda a: a * 0), "state['done'][3]['n_rows']"),
    "done n_rows two": (_set(("done", 3, "n_rows"), lambda a: np.r_[a, a]), "state['done'][3]['n_rows'] has length 2"),
    "done volume short": (_set(("done", 3, "volume"), lambda a: a[:-1]), "state['done'][3]['volume'] has length"),
    "done volume NaN": (_set(("done", 3, "volume"), _nan_at(1)), "state['done'][3]['volume'][1]"),
    "done volume negative": (_set(("done", 3, "volume"), lambda a: -a), "state['done'][3]['volume']"),
    "done volume 2-D": (_set(("done", 3, "volume"), lambda a: a[None, :]), "state['done'][3]['volume'] must be 1-D"),
    "done volume text": (_set(("done", 3, "volume"), lambda a: a.astype(str)), "state['done'][3]['volume'] must be"),
    "done volume scaled": (_set(("done", 3, "volume"), _scale_at(0, 3.0)), "state['done'][3]"),
    "done total": (_set(("done", 4, "total_volume"), lambda a: a * 2), "state['done'][4]['total_volume']"),
    "done total inf": (_set(("done", 4, "total_volume"), lambda a: a * np.inf), "state['done'][4]['total_volume']"),
    "done va_volume": (_set(("done", 4, "va_volume"), lambda a: a * 3), "state['done'][4]['va_volume']"),
    "done val above vah": (_set(("done", 4, "val_row"), lambda a: a + 10**4), "state['done'][4]['val_row']"),
    "done_labels short": (_drop_last("done_labels"), "state['done_labels'] has 6 entries, expected 7"),
    "done_labels float": (_set(("done_labels", 0), 0.5), "state['done_labels'][0]"),
    "done_labels decreasing": (_set(("done_labels", 3), 0), "state['done_labels'][3] = 0 is below"),
    "done extra session": (lambda st: st["done"].append(_copy(st["done"][0])), "state['done_labels'] has 7 entries, expected 8"),
    # feature state
    "comp short": (_drop_last("comp"), "state['comp'] has 6 entries"),
    "comp entry length": (_set(("comp", 5), (1.0, 2.0)), "state['comp'][5] has 2 entries"),
    "comp inf": (_tuple_item(("comp", 5), 1, np.inf), "state['comp'][5][1]"),
    "comp str": (_tuple_item(("comp", 5), 0, "x"), "state['comp'][5][0]"),
    "naked session": (_tuple_item(("naked", 0), 0, 99), "state['naked'][0]"),
    "naked row": (_tuple_item(("naked", 0), 1, 1), "state['naked'][0]"),
    "naked price NaN": (_tuple_item(("naked", 0), 2, np.nan), "state['naked'][0][2]"),
    "naked order": (lambda st: st["naked"].reverse(), "state['naked'][1]"),
    "naked last missing": (_drop_last("naked"), "state['naked'] must end"),
    "tail too long": (lambda st: st["tail"].insert(0, _copy(st["tail"][0])), "state['tail'] has 4 entries, expected 3"),
    "tail missing column": (lambda st: st["tail"][0].pop("close"), "state['tail'][0] is missing ['close']"),
    "tail short column": (_set(("tail", 1, "low"), lambda a: a[:-2]), "state['tail'][1]['low'] has length"),
    "tail NaN": (_set(("tail", 1, "close"), _nan_at(3)), "state['tail'][1]['close'][3]"),
    "tail high below low": (_set(("tail", 1, "high"), lambda a: a - 100), "state['tail'][1]['high']"),
    "tail open None": (_set(("tail", 1, "open"), None), "state['tail'][1]['open']"),
    "tail ts unsorted": (_set(("tail", 1, "ts"), lambda a: a[::-1].copy()), "state['tail'][1]['ts']"),
    "tail ts float": (_set(("tail", 1, "ts"), lambda a: a.astype(float)), "state['tail'][1]['ts']"),
    "tail negative volume": (_set(("tail", 2, "volume"), lambda a: a - 10**6), "state['tail'][2]['volume']"),
    "session_rows short": (_drop_last("session_rows"), "state['session_rows'] has 6 entries"),
    "session_rows length": (_set(("session_rows", 0), lambda a: a[:-1]), "state['session_rows'][0] has length"),
    "session_rows not float32": (_set(("session_rows", 0), lambda a: a.astype(np.float64) + 1e-12),
                                 "state['session_rows'][0]"),
    "session_columns None": (_set(("session_columns",), None), "state['session_columns'] is None"),
    "session_columns int": (_set(("session_columns",), lambda c: (1,) + tuple(c[1:])), "state['session_columns']"),
    # the current session
    "current type": (_set(("current",), [1]), "state['current'] must be a dict"),
    "current None": (_set(("current",), None), "state['label'] is 7 but state['current'] is None"),
    "current missing": (lambda st: st["current"].pop("ts"), "state['current'] is missing ['ts']"),
    "current short high": (_set(("current", "high"), lambda a: a[:-1]), "state['current']['high'] has length"),
    "current long ts": (_set(("current", "ts"), lambda a: np.r_[a, a[-1]]), "state['current']"),
    "current NaN": (_set(("current", "close"), _nan_at(2)), "state['current']['close'][2]"),
    "current open NaN": (_set(("current", "open"), _nan_at(0)), "state['current']['open'][0]"),
    "current negative volume": (_set(("current", "volume"), lambda a: a - 10**6), "state['current']['volume']"),
    "current high below low": (_set(("current", "high"), lambda a: a - 50), "state['current']"),
    "current ts unsorted": (_set(("current", "ts"), lambda a: a[::-1].copy()), "state['current']['ts']"),
    "current ts NaT": (_set(("current", "ts"), lambda a: np.r_[-2**63, a[1:]]), "state['current']['ts'][0]"),
    "current ts before tail": (_set(("current", "ts"), lambda a: a - 10**15), "state['current']['ts'][0]"),
    "current int_volume fractional": (_set(("current", "volume"), lambda a: a + 0.5),
                                      "state['current']['int_volume'] is True but state['current']['volume'][0]"),
    "current int_volume huge": (_set(("current", "volume"), lambda a: a * 0 + 2.0**64),
                                "state['current']['volume'][0]"),
    "current int_volume str": (_set(("current", "int_volume"), "yes"), "state['current']['int_volume']"),
}


TRADE_TAMPERS = {
    "has_open True": (_set(("has_open",), True), "state['has_open']"),
    "naked not empty": (_set(("naked",), [(0, 1, 0.25)]), "state['naked']"),
    "comp not empty": (_set(("comp",), [(1.0, 1.0, 1.0)] * 7), "state['comp'] has 7 entries, expected 0"),
    "tail not empty": (lambda st: st["tail"].append({}), "state['tail'] has 1 entries, expected 0"),
    "price NaN": (_set(("current", "high"), _nan_at(1)), "state['current']['high'][1]"),
    "price short": (_set(("current", "high"), lambda a: a[:2]), "state['current']['high'] has length"),
    "fractional volume": (_set(("current", "volume"), lambda a: a * 0.5 + 0.25), "state['current']['int_volume']"),
}


@pytest.mark.parametrize("kind, name", [("bars", n) for n in TAMPERS] +
                         [("trades", n) for n in TRADE_TAMPERS])
def test_case11_tampered_state_raises_naming_the_field(kind, name):
    # before: from_state took most of these silently (inconsistent lengths, NaN, counters, a
    # fractional volume with int_volume=True) and failed later, or gave wrong results
    _, state, _, _ = _live_state(kind)
    tamper, needle = (TAMPERS if kind == "bars" else TRADE_TAMPERS)[name]
    st = _copy(state)
    tamper(st)
    with pytest.raises((ValueError, TypeError)) as info:
        vpoc.Live.from_state(st)
    assert needle in str(info.value), str(info.value)


@pytest.mark.parametrize("kind", ["bars", "trades"])
def test_case11_untampered_state_round_trips_exactly(kind):
    import json
    import pickle

    live, state, b, n = _live_state(kind)
    original = _copy(state)
    restored = vpoc.Live.from_state(state)
    _assert_same(restored.state_dict(), original)
    _assert_same(state, original)  # from_state leaves its argument as it was
    _assert_same(pickle.loads(pickle.dumps(live)).state_dict(), original)

    def plain(x):  # what a JSON file gives back: lists, floats, ints, None
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [plain(v) for v in x]
        if isinstance(x, np.ndarray):
            return x.tolist()
        return x

    from_json = vpoc.Live.from_state(json.loads(json.dumps(plain(state))))
    got = from_json.state_dict()
    assert plain(got.pop("config")) == plain(original["config"])  # given back as JSON gave it
    _assert_same(got, {k: v for k, v in original.items() if k != "config"})
    # the restored feeds continue exactly like the uninterrupted one
    for lv in (live, restored, from_json):
        if kind == "bars":
            lv.update(b.high[n:], b.low[n:], b.close[n:], b.volume[n:].astype(np.int64),
                      open=b.open[n:], timestamp=b.timestamp[n:])
        else:
            lv.update(b.close[n:], b.volume[n:].astype(np.int64), timestamp=b.timestamp[n:])
        lv.close()
    _assert_same(restored.state_dict(), live.state_dict())
    got, want = from_json.state_dict(), live.state_dict()
    assert plain(got.pop("config")) == plain(want.pop("config"))
    _assert_same(got, want)


# =============================================================================== case 12 (memory)

# Each case runs in a child whose address space (RLIMIT_AS, i.e. ``ulimit -v``) is capped at what
# it holds after its imports plus the case's budget; it must give the expected result or a clear
# Python error (ValueError / MemoryError), never a crash or a hang. Budgets: docs/contract.md,
# "Resource bounds".
MB = 2**20
_MEM_CHILD = """
import json, os, resource, sys
import numpy as np, pandas as pd, vpoc
from vpoc import compat
M, T = 10**6, 0.25
T0 = 1_700_000_000 * 10**9

def wide(n_ticks, distribute="uniform", S=1, **kw):
    lo = np.full(S, 1000.0)
    return vpoc.from_bars(lo + (n_ticks - 1) * T, lo, lo, np.full(S, 100.0), offsets=np.arange(S + 1),
                          tick_size=T, distribute=distribute, **kw)

def one_row_sessions(S):
    p = 1000.0 + (np.arange(S) % 7) * T
    return (p + T, p, p, np.full(S, 10, np.int64)), np.arange(S + 1)

def live_wide():
    live = vpoc.Live(tick_size=T)
    live.update(1000 + (M - 1) * T, 1000.0, 1000.0, 5, timestamp=T0)
    live.update(1001.0, 1000.0, 1000.0, 5, timestamp=T0 + 60 * 10**9)
    live.bar_features_row()
    live.close()
    return live.session_table()

def live_sessions(S):
    (h, lo, c, v), _ = one_row_sessions(S)
    ts = T0 + np.arange(S) * 10**9
    live = vpoc.Live(tick_size=T, session_starts=ts)
    live.update(h, lo, c, v, timestamp=ts)
    live.close()
    return live.session_table()

def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

case = compile(sys.argv[1], "case", "eval")
budget = int(sys.argv[2])
base = status("VmSize")
resource.setrlimit(resource.RLIMIT_AS, (base + budget, base + budget))
try:
    eval(case)
    out = dict(result="ok")
except (ValueError, TypeError, MemoryError) as e:
    # the builtin class it is (vpoc.InputError is a ValueError)
    out = dict(result=next(c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"), message=str(e))
out["peak_mb"] = (status("VmPeak") - base) / 2**20
print(json.dumps(out))
"""

MEMORY_CASES = [
    # one 1e6-tick bar (a session of 1e6 rows, the default max_rows): <= 128 MB per worker
    pytest.param("wide(M)", 128, "ok", id="uniform-1e6-tick-bar"),
    pytest.param("wide(M, S=2, threads=2)", 256, "ok", id="uniform-1e6-tick-bars-2-threads"),
    pytest.param("wide(M, 'close')", 128, "ok", id="close-1e6-rows"),
    pytest.param("wide(M, 'legacy')", 128, "ok", id="legacy-1e6-tick-bar"),
    pytest.param("wide(M, developing=True)", 128, "ok", id="developing-1e6-tick-bar"),
    pytest.param("wide(M, 'legacy', developing=True)", 128, "ok", id="developing-legacy-1e6-tick-bar"),
    pytest.param("vpoc.session_features(*wide_args(), tick_size=T)", 128, "ok",
                 id="session_features-1e6-tick-bar"),
    pytest.param("live_wide()", 384, "ok", id="Live-1e6-tick-bar"),
    pytest.param("compat.calculate_volume_profile(pd.DataFrame(dict(open=[1000.0], "
                 "high=[1000 + (M - 1) * T], low=[1000.0], close=[1000.0], volume=[5.0])), "
                 "price_precision=T)", 512, "ok", id="compat-1e6-tick-bar"),
    # wider than max_rows, or max_rows at its limit: a clear error, at once
    pytest.param("wide(2 * M)", 64, "ValueError", id="uniform-2e6-tick-bar-over-max_rows"),
    pytest.param("wide(2 * M, 'legacy')", 64, "ValueError", id="legacy-2e6-tick-bar-over-max_rows"),
    pytest.param("wide(4 * 10**12, 'legacy')", 64, "ValueError", id="legacy-1e12-bar"),
    pytest.param("compat.calculate_volume_profile(pd.DataFrame(dict(open=[1000.0], high=[1e12], "
                 "low=[1000.0], close=[1000.0], volume=[5.0])), price_precision=T)", 64, "ValueError",
                 id="compat-1e12-bar"),
    pytest.param("wide(10**9 - 8, max_rows=10**9)", 512, "MemoryError", id="max_rows-at-its-limit"),
    pytest.param("vpoc.from_trades(np.array([0.0, (10**9 - 2) * T]), np.ones(2), tick_size=T, "
                 "max_rows=10**9)", 512, "MemoryError", id="trades-max_rows-at-its-limit"),
    pytest.param("wide(M, max_rows=2**62)", 64, "ValueError", id="max_rows-past-its-limit"),
    # 1e6 one-row sessions: <= 512 MB (about 10 result arrays of 8 B per session, plus inputs)
    pytest.param("vpoc.from_trades(np.full(M, 1000.0), np.ones(M), offsets=np.arange(M + 1), "
                 "tick_size=T)", 512, "ok", id="trades-1e6-sessions"),
    pytest.param("vpoc.from_bars(*one_row_sessions(M)[0], offsets=one_row_sessions(M)[1], "
                 "tick_size=T, developing=True, threads=2)", 512, "ok", id="bars-developing-1e6-sessions"),
    pytest.param("vpoc.session_features(*one_row_sessions(M)[0], offsets=one_row_sessions(M)[1], "
                 "tick_size=T)", 1024, "ok", id="session_features-1e6-sessions"),
    pytest.param("vpoc.bar_features(*one_row_sessions(M)[0], offsets=one_row_sessions(M)[1], "
                 "tick_size=T)", 1024, "ok", id="bar_features-1e6-sessions"),
    pytest.param("vpoc.session_features(*one_row_sessions(20_000)[0], "
                 "offsets=one_row_sessions(20_000)[1], tick_size=T)", 256, "ok",
                 id="session_features-20k-sessions"),
    pytest.param("vpoc.bar_features(*one_row_sessions(20_000)[0], "
                 "offsets=one_row_sessions(20_000)[1], tick_size=T)", 256, "ok",
                 id="bar_features-20k-sessions"),
    pytest.param("live_sessions(1000)", 256, "ok", id="Live-1000-sessions"),
]


@pytest.mark.parametrize("case, budget_mb, expected", MEMORY_CASES)
def test_case12_absurd_sizes_under_ulimit_v(case, budget_mb, expected):
    pytest.importorskip("pandas")
    code = _MEM_CHILD.replace("def status(key):", "def wide_args():\n"
                              "    return ([1000 + (M - 1) * T], [1000.0], [1000.0], [5])\n\n"
                              "def status(key):")
    # one malloc arena: glibc reserves 64 MB of address space for each new arena, which the budget is
    # not about; with 2, a worker thread's arena came to count or not by whether pyarrow's threads had
    # made it before the base was read (without pyarrow, 2-threads failed at 253 of its 256 MB)
    env = dict(os.environ, MALLOC_ARENA_MAX="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", code, case, str(budget_mb * MB)], capture_output=True,
                       text=True, timeout=TIMEOUT, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"crashed ({r.returncode}): {r.stderr[-2000:]}"
    import json

    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["result"] == expected, out
    if expected == "ValueError":
        assert "max_rows" in out["message"], out
    if expected == "MemoryError":
        assert out["peak_mb"] <= budget_mb, out
