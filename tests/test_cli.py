"""The ``vpoc`` command line, driven as a user does: the console script and ``python -m vpoc``.

Results are checked against the plain-NumPy reference (tests/reference.py) with sessions found by
pandas; exit codes and messages against the CLI contract (0 ok, 2 bad input, 1 runtime error).
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile
import termios
import time
from pathlib import Path
from typing import Dict, Optional, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import _deps
import vpoc
from reference import ref_bars, ref_trades
from vpoc import cli

pd = _deps.module("pandas")  # None without it: the tests that use it are marked
pa = _deps.module("pyarrow")
# what `vpoc profile` needs: pandas; the calendars of the default --session globex (and rth); pyarrow
# for Parquet files
NEEDS_PANDAS = _deps.needs("pandas")
NEEDS_PROFILE = _deps.needs("pandas", "pandas_market_calendars")
NEEDS_PROFILE_PARQUET = _deps.needs("pandas", "pandas_market_calendars", "pyarrow")

TIMEOUT = 180  # seconds for one CLI run; a hang fails the test instead of the suite


def _script() -> str:
    path = Path(sysconfig.get_path("scripts")) / "vpoc"
    found = str(path) if path.exists() else shutil.which("vpoc")
    if found is None:
        pytest.fail("the vpoc console script is not installed (pip install . puts it on PATH)")
    return found


def run(args: Sequence[str], *, module: bool = False, cwd: Optional[Path] = None,
        stderr_tty: bool = False) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "vpoc", *map(str, args)] if module else [_script(), *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd,
                          stdin=subprocess.DEVNULL)


def run_pty(args: Sequence[str], cwd: Path, size: Optional[tuple] = (24, 100)) -> tuple:
    """Run the console script with stderr on a pseudo-terminal; (exit code, terminal text)."""
    master, slave = pty.openpty()
    if size is not None:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
    proc = subprocess.Popen([_script(), *map(str, args)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=slave, cwd=cwd)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + TIMEOUT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            out += data
        rc = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return rc, out.decode("utf-8", "replace")


# --------------------------------------------------------------------------- data and reference


def bars_frame(n_sessions: int, bars: int, seed: int) -> pd.DataFrame:
    """Synthetic ES bars in January 2019 (no holidays, CST): the Globex trading date is session_id."""
    return vpoc.synth.es_bars(n_sessions, bars, seed=seed).to_pandas()


def expected_profile(df: pd.DataFrame, by: str = "session_id", *, trades: bool = False,
                     **kw) -> pd.DataFrame:
    """The CLI's table computed plainly: pandas groups the sessions, the NumPy reference profiles."""
    labels, start = np.unique(df[by].to_numpy(), return_index=True)
    assert np.all(np.diff(start) > 0)
    offsets = np.append(start, len(df)).astype(np.int64)
    opts = dict(tick_size=kw.get("tick_size", 0.25), ticks_per_row=kw.get("ticks_per_row", 1),
                value_area=kw.get("value_area", 0.70), va_method=kw.get("va_method", "cbot"),
                poc_tie=kw.get("poc_tie", "center"))
    if trades:
        ref = ref_trades(df.price.to_numpy(), df.volume.to_numpy(), offsets, **opts)
    else:
        ref = ref_bars(df.high.to_numpy(), df.low.to_numpy(), df.close.to_numpy(), df.volume.to_numpy(),
                       df.open.to_numpy(), offsets, distribute=kw.get("distribute", "uniform"), **opts)
    g = df.groupby(by, sort=True)
    row_size = opts["tick_size"] * opts["ticks_per_row"]
    out = pd.DataFrame({
        "session": labels,
        "start": g.timestamp.min().to_numpy(),
        "end": g.timestamp.max().to_numpy(),
        "count": g.size().to_numpy(),
        "low": ref["low_row"] * row_size,
        "high": (ref["low_row"] + ref["n_rows"] - 1) * row_size,
    })
    for k in ("poc", "vah", "val", "total_volume", "va_volume", "poc_row", "vah_row", "val_row",
              "low_row", "n_rows"):
        out[k] = ref[k]
    out["fragile"] = ref["fragile"]
    return out


def assert_table(got: pd.DataFrame, exp: pd.DataFrame) -> None:
    assert list(got.columns) == list(cli.PROFILE_COLUMNS) + list(cli.SESSION_COLUMNS)
    assert len(got) == len(exp), (got.session.tolist(), exp.session.tolist())
    np.testing.assert_array_equal(got.session.to_numpy(), exp.session.to_numpy())
    # the session rule's columns: trade date of the YYYYMMDD label, partial, merged_days
    days = [f"{d // 10000:04d}-{d // 100 % 100:02d}-{d % 100:02d}" for d in exp.session.tolist()]
    assert [str(d)[:10] for d in got.trade_date.tolist()] == days
    assert got.partial.dtype == bool and (got.merged_days.to_numpy() >= 1).all()
    for k in ("count", "low_row", "n_rows"):
        np.testing.assert_array_equal(got[k].to_numpy(), exp[k].to_numpy(), err_msg=k)
    for k in ("start", "end"):
        g = pd.to_datetime(got[k], utc=True).to_numpy()
        e = pd.to_datetime(exp[k], utc=True).to_numpy()
        np.testing.assert_array_equal(g, e, err_msg=k)
    for k in ("low", "high", "total_volume"):
        np.testing.assert_allclose(got[k].to_numpy(), exp[k].to_numpy(), rtol=1e-12, err_msg=k)
    ok = ~exp.fragile.to_numpy()  # decisions within rounding of flipping are not compared
    assert ok.sum() >= len(exp) // 2
    for k in ("poc_row", "vah_row", "val_row"):
        np.testing.assert_array_equal(got[k].to_numpy()[ok], exp[k].to_numpy()[ok], err_msg=k)
    for k in ("poc", "vah", "val", "va_volume"):
        np.testing.assert_allclose(got[k].to_numpy()[ok], exp[k].to_numpy()[ok], rtol=1e-12, err_msg=k)


def write_csv(df: pd.DataFrame, path: Path, cols: Sequence[str]) -> Path:
    df[list(cols)].to_csv(path, index=False)
    return path


BAR_COLS = ("timestamp", "open", "high", "low", "close", "volume")


def read_out(path: Path) -> pd.DataFrame:
    if path.suffix == ".csv":
        return pd.read_csv(path)
    return pd.read_parquet(path)


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Dict[str, object]:
    """6 sessions x 200 bars in three CSV files, split inside sessions 1 and 3 (and a file
    boundary inside a session that spans three files), plus the same rows as one Parquet file."""
    d = tmp_path_factory.mktemp("cli_small")
    df = bars_frame(6, 200, seed=11)
    cuts = [0, 300, 350, 700, len(df)]  # 300, 350 in session 1; 700 in session 3
    files = [write_csv(df.iloc[a:b], d / f"part{i}.csv", BAR_COLS) for i, (a, b) in enumerate(zip(cuts, cuts[1:]))]
    if pa is not None:  # the tests that use it are marked NEEDS_PROFILE_PARQUET
        df[list(BAR_COLS)].to_parquet(d / "all.parquet", index=False)
    return {"dir": d, "df": df, "files": files, "parquet": d / "all.parquet"}


# --------------------------------------------------------------------------- vpoc profile


@pytest.mark.parametrize("out_name,module", [
    pytest.param("out.csv", False, marks=NEEDS_PROFILE),
    pytest.param("out.parquet", True, marks=NEEDS_PROFILE_PARQUET)])
def test_profile_files_match_reference(small, out_name, module):
    out = small["dir"] / out_name
    r = run(["profile", *small["files"], "--tick-size", "0.25", "--out", out], module=module)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""  # quiet on success, no bar when not a terminal
    got = read_out(out)
    assert_table(got, expected_profile(small["df"]))
    if out.suffix == ".parquet":  # dtypes survive in Parquet
        assert str(got.start.dtype) == "datetime64[ns, UTC]"
        assert got.session.dtype == np.int64 and got.n_rows.dtype == np.int64


@pytest.mark.parametrize("opts", [
    dict(distribute="close", va_method="greedy", poc_tie="low"),
    dict(distribute="hlc3", va_method="single", poc_tie="high", value_area=0.5),
    dict(distribute="legacy", ticks_per_row=4),
    dict(distribute="uniform", ticks_per_row=2, value_area=0.9),
])
@NEEDS_PROFILE_PARQUET
def test_profile_options_reach_the_engine(small, opts):
    flags = {"distribute": "--distribute", "va_method": "--va", "poc_tie": "--poc-tie",
             "value_area": "--value-area", "ticks_per_row": "--ticks-per-row"}
    args = [x for k, v in opts.items() for x in (flags[k], str(v))]
    r = run(["profile", small["parquet"], "--tick-size", "0.25", "--out", "-", *args])
    assert r.returncode == 0, r.stderr
    got = pd.read_csv(pd.io.common.StringIO(r.stdout))
    assert_table(got, expected_profile(small["df"], **opts))


@NEEDS_PROFILE_PARQUET
def test_profile_stdout_is_default_and_same_as_file(small):
    r1 = run(["profile", small["parquet"], "--tick-size", "0.25"])
    r2 = run(["profile", *small["files"], "--tick-size", "0.25", "-o", "-", "--chunk-rows", "1"])
    assert r1.returncode == 0 and r2.returncode == 0, (r1.stderr, r2.stderr)
    assert r1.stdout.splitlines()[0] == ",".join(cli.PROFILE_COLUMNS + cli.SESSION_COLUMNS)
    assert r1.stdout == r2.stdout  # splitting into files and engine calls changes nothing
    assert len(r1.stdout.splitlines()) == 1 + 6


@NEEDS_PROFILE_PARQUET
def test_profile_trades(tmp_path):
    t = vpoc.synth.es_trades(30_000, 4, seed=5)
    df = t.to_pandas()
    files = [write_csv(df.iloc[a:b], tmp_path / f"t{i}.csv", ("timestamp", "price", "volume"))
             for i, (a, b) in enumerate([(0, 11_111), (11_111, 30_000)])]
    out = tmp_path / "t.parquet"
    r = run(["profile", "--kind", "trades", *files, "--tick-size", "0.25", "-o", out, "--va", "single"])
    assert r.returncode == 0, r.stderr
    assert_table(read_out(out), expected_profile(df, trades=True, va_method="single"))


@NEEDS_PROFILE
def test_profile_rth_and_daily_sessions(tmp_path):
    df = bars_frame(4, 1380, seed=3)
    write_csv(df.iloc[:2000], tmp_path / "a.csv", BAR_COLS)
    write_csv(df.iloc[2000:], tmp_path / "b.csv", BAR_COLS)
    chicago = df.timestamp.dt.tz_convert("America/Chicago")
    minute = chicago.dt.hour * 60 + chicago.dt.minute
    rth = df[(minute >= 8 * 60 + 30) & (minute < 15 * 60 + 15)].copy()
    rth["day"] = (chicago.dt.year * 10000 + chicago.dt.month * 100 + chicago.dt.day)[rth.index]
    r = run(["profile", tmp_path / "a.csv", tmp_path / "b.csv", "--tick-size", "0.25", "--session", "rth"])
    assert r.returncode == 0, r.stderr
    assert_table(pd.read_csv(pd.io.common.StringIO(r.stdout)), expected_profile(rth.reset_index(drop=True), "day"))

    df["day"] = (chicago.dt.year * 10000 + chicago.dt.month * 100 + chicago.dt.day).to_numpy()
    r = run(["profile", tmp_path / "a.csv", tmp_path / "b.csv", "--tick-size", "0.25", "--session", "daily"])
    assert r.returncode == 0, r.stderr
    assert_table(pd.read_csv(pd.io.common.StringIO(r.stdout)), expected_profile(df, "day"))


@NEEDS_PROFILE
def test_profile_naive_timestamps_with_tz(tmp_path):
    df = bars_frame(3, 300, seed=8)
    naive = df.copy()
    naive["timestamp"] = df.timestamp.dt.tz_convert("America/Chicago").dt.tz_localize(None)
    write_csv(naive, tmp_path / "naive.csv", BAR_COLS)
    r = run(["profile", tmp_path / "naive.csv", "--tick-size", "0.25"])
    assert r.returncode == 2 and "tz" in r.stderr and "Traceback" not in r.stderr
    r = run(["profile", tmp_path / "naive.csv", "--tick-size", "0.25", "--tz", "America/Chicago"])
    assert r.returncode == 0, r.stderr
    assert_table(pd.read_csv(pd.io.common.StringIO(r.stdout)), expected_profile(df))


@NEEDS_PROFILE_PARQUET
def test_profile_empty_input_writes_header_only(tmp_path):
    write_csv(bars_frame(1, 5, seed=0).iloc[:0], tmp_path / "empty.csv", BAR_COLS)
    out = tmp_path / "e.parquet"
    r = run(["profile", tmp_path / "empty.csv", "--tick-size", "0.25", "-o", out, "--tz", "UTC"])
    assert r.returncode == 0, r.stderr
    got = pd.read_parquet(out)
    assert len(got) == 0 and list(got.columns) == list(cli.PROFILE_COLUMNS + cli.SESSION_COLUMNS)


@NEEDS_PANDAS  # --session daily: no calendar
@settings(max_examples=12)
@given(cuts=st.lists(st.integers(1, 479), max_size=4, unique=True), chunk=st.integers(1, 500),
       seed=st.integers(0, 3))
def test_split_and_chunking_do_not_change_results(cuts, chunk, seed):
    """In-process: any split of the rows into files and any engine chunk size give one table
    (UTC calendar days, so sessions start and end inside the synthetic Globex days)."""
    df = bars_frame(4, 120, seed=seed)
    df["day"] = df.timestamp.dt.year * 10000 + df.timestamp.dt.month * 100 + df.timestamp.dt.day
    bounds = [0, *sorted(cuts), len(df)]
    opts = ["--tick-size", "0.25", "--session", "daily", "--session-tz", "UTC", "--progress", "never"]
    with tempfile.TemporaryDirectory() as d:
        files = [str(write_csv(df.iloc[a:b], Path(d) / f"p{i}.csv", BAR_COLS))
                 for i, (a, b) in enumerate(zip(bounds, bounds[1:]))]
        one = Path(d) / "one.csv"
        whole = Path(d) / "whole.csv"
        split = Path(d) / "split.csv"
        write_csv(df, one, BAR_COLS)
        assert cli.main(["profile", str(one), "-o", str(whole), *opts]) == 0
        assert cli.main(["profile", *files, "-o", str(split), "--chunk-rows", str(chunk), *opts]) == 0
        a, b = pd.read_csv(whole), pd.read_csv(split)
    pd.testing.assert_frame_equal(a, b)
    assert_table(a, expected_profile(df, "day"))


# --------------------------------------------------------------------------- progress bar


@pytest.fixture(scope="module")
def million(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("cli_big")
    df = bars_frame(725, 1380, seed=1)  # 1,000,500 bars
    df[list(BAR_COLS)].to_parquet(d / "big.parquet", index=False)
    return d / "big.parquet"


@NEEDS_PROFILE_PARQUET
def test_progress_bar_on_a_terminal_for_a_million_rows(million):
    _deps.require("tqdm")  # the progress bar
    rc, text = run_pty(["profile", million, "--tick-size", "0.25", "-o", million.parent / "o.parquet"],
                       million.parent)
    assert rc == 0, text
    # the bar counts the rows kept: 725 sessions from January 2019 run over holidays, whose rows
    # the Globex calendar leaves out (23.3: the bar stopped at 100% of the rows read before)
    with pytest.warns(vpoc.DroppedRowsWarning):
        kept = vpoc.sessions.globex(pd.read_parquet(million, columns=["timestamp"]).timestamp).n_kept
    assert 0 < kept < 1_000_500
    pct = f"{100 * kept / 1_000_500:3.0f}%"  # tqdm's format
    import tqdm  # its own rounding of the count (986,550 is "987k"; the test had kept // 1000)

    assert "vpoc profile" in text and pct in text and f"{tqdm.tqdm.format_sizeof(kept)}/1.00M" in text, text
    assert "100%" not in text and "rows/s" in text
    assert f"left out {1_000_500 - kept:,} of 1,000,500 rows" in text and f"kept {kept:,}" in text
    assert len(pd.read_parquet(million.parent / "o.parquet")) > 600


@NEEDS_PROFILE_PARQUET
def test_no_progress_bar_when_stderr_is_not_a_terminal(million):
    r = run(["profile", million, "--tick-size", "0.25", "-o", million.parent / "o2.parquet"])
    assert r.returncode == 0 and r.stdout == ""
    # no bar; only the lines on the rows left out on holidays
    assert all(line.startswith("vpoc: ") for line in r.stderr.splitlines()), r.stderr
    assert "left out" in r.stderr and "\r" not in r.stderr


@NEEDS_PROFILE_PARQUET
def test_progress_rules_on_a_terminal(small):
    _deps.require("tqdm")  # the progress bar
    d = small["dir"]
    # one small input: not a long run, no bar; --progress always forces it; never suppresses it
    rc, text = run_pty(["profile", small["parquet"], "--tick-size", "0.25", "-o", d / "p1.csv"], d)
    assert rc == 0 and "vpoc profile" not in text, text
    rc, text = run_pty(["profile", small["parquet"], "--tick-size", "0.25", "-o", d / "p2.csv",
                        "--progress", "always"], d, size=None)  # a terminal that reports no size
    assert rc == 0 and "100%" in text and "1.20k/1.20k" in text, text
    # several inputs are a long run: a bar that advances by files
    rc, text = run_pty(["profile", *small["files"], "--tick-size", "0.25", "-o", d / "p3.csv"], d)
    assert rc == 0 and "file 4/4" in text and "100%" in text, text
    rc, text = run_pty(["profile", *small["files"], "--tick-size", "0.25", "-o", d / "p4.csv",
                        "--progress", "never"], d)
    assert rc == 0 and text.strip() == "", text


# --------------------------------------------------------------------------- errors


def run_inproc(argv: Sequence[str], capsys) -> subprocess.CompletedProcess:
    """``cli.main`` in this process (the console script's code path without the start-up cost)."""
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as e:  # argparse usage errors
        code = int(e.code)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(list(argv), code, out.out, out.err)


def _one_line_error(r: subprocess.CompletedProcess, code: int, *needles: str) -> None:
    assert r.returncode == code, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vpoc: error: "), r.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])


@NEEDS_PROFILE_PARQUET
def test_input_errors_exit_2_with_one_line(small, tmp_path):
    """Through the console script: what a shell user sees."""
    d = small["dir"]
    _one_line_error(run(["profile", d / "missing.csv", "--tick-size", "0.25"]), 2,
                    "input not found", "missing.csv")
    _one_line_error(run(["profile", small["files"][1], small["files"][0], "--tick-size", "0.25"]), 2,
                    "time order", "part0.csv")
    bad = bars_frame(2, 50, seed=2)
    bad.loc[60, "high"] = bad.loc[60, "low"] - 1.0
    write_csv(bad, tmp_path / "bad.csv", BAR_COLS)
    _one_line_error(run(["profile", tmp_path / "bad.csv", "--tick-size", "0.25"], module=True), 2,
                    "bad.csv", "high")
    # a tick size that makes a session too wide names the file and the time of the row
    _one_line_error(run(["profile", small["parquet"], "--tick-size", "1e-7"]), 2, "all.parquet",
                    "2019-01-01 23:00:00 UTC", "--max-rows")  # the library's max_rows as the flag


@NEEDS_PROFILE_PARQUET
def test_option_and_file_errors_exit_2(small, tmp_path, capsys):
    d = small["dir"]
    pq = small["parquet"]
    cases = [
        (["profile", d, "--tick-size", "0.25"], "directory"),
        (["profile", pq, "--tick-size", "-1"], "--tick-size"),
        (["profile", pq, "--tick-size", "0.25", "--value-area", "1.5"], "--value-area"),
        (["profile", pq, "--tick-size", "0.25", "--device", "tpu"], "--device"),
        (["profile", pq, "--tick-size", "0.25", "-o", d / "x.json"], ".parquet"),
        (["profile", pq, "--tick-size", "0.25", "-o", d / "no" / "x.csv"], "does not exist"),
        (["profile", pq, "--tick-size", "0.25", "-o", d], "directory"),
        (["profile", pq, "--tick-size", "0.25", "--session", "rth", "--rth-start", "16:00"], "--session rth"),
        (["profile", pq, "--tick-size", "0.25", "--session", "daily", "--session-tz", "Mars/Base"], "Mars/Base"),
        (["profile", "--kind", "trades", pq, "--tick-size", "0.25"], "all.parquet"),
        (["features", "--kind", "trades", pq, "--tick-size", "0.25"], "bars"),
    ]
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all")
    cases.append((["profile", tmp_path / "junk.parquet", "--tick-size", "0.25"], "junk.parquet"))
    for argv, needle in cases:
        _one_line_error(run_inproc(argv, capsys), 2, needle)


@pytest.mark.parametrize("argv,needle", [
    (["profile", "x.csv"], "--tick-size"),
    (["profile", "--tick-size", "0.25"], "IN"),
    (["profile", "x.csv", "--tick-size", "abc"], "--tick-size"),
    (["profile", "x.csv", "--tick-size", "0.25", "--memory-budget", "lots"], "--memory-budget"),
    (["profile", "x.csv", "--tick-size", "0.25", "--session", "weekly"], "--session"),
    (["profile", "x.csv", "--tick-size", "0.25", "--threads", "0"], "--threads"),
    (["bench", "--repeat", "0"], "--repeat"),
    (["frobnicate"], "invalid choice"),
    ([], "COMMAND"),
])
def test_usage_errors_exit_2(argv, needle, capsys):
    r = run_inproc(argv, capsys)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_usage_error_from_the_console_script():
    r = run(["profile", "x.csv"])
    assert r.returncode == 2 and "--tick-size" in r.stderr and "Traceback" not in r.stderr


@NEEDS_PROFILE_PARQUET
def test_runtime_errors_exit_1_and_traceback_flag(small, monkeypatch, capsys):
    def boom(*a, **k):
        raise MemoryError("cannot allocate 1 TiB")

    monkeypatch.setattr(cli._api, "from_bars", boom)
    argv = ["profile", str(small["parquet"]), "--tick-size", "0.25", "--progress", "never"]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("vpoc: error: out of memory: cannot allocate 1 TiB") and err.count("\n") == 1

    def bug(*a, **k):
        raise RuntimeError("engine exploded")

    monkeypatch.setattr(cli._api, "from_bars", bug)
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert "RuntimeError: engine exploded" in err and "--traceback" in err and "Traceback" not in err
    with pytest.raises(RuntimeError, match="engine exploded"):
        cli.main(["--traceback", *argv])


@pytest.mark.parametrize("package,args,needle", [
    ("pandas", [], 'vpoc profile needs pandas: pip install "vpoc[cli]"'),
    pytest.param("pandas_market_calendars", [],
                 'vpoc profile --session globex needs pandas_market_calendars: pip install "vpoc[cli]", '
                 "or use --calendar none (no holidays) or --session daily", marks=NEEDS_PANDAS),
    pytest.param("pyarrow", ["--session", "daily", "-o", "{tmp}/out.parquet"],
                 'vpoc profile with Parquet files ({tmp}/out.parquet) needs pyarrow: pip install "vpoc[cli]"',
                 marks=NEEDS_PANDAS),
])
def test_missing_optional_package_is_one_error_line_exit_1(package, args, needle, tmp_path,
                                                           monkeypatch, capsys):
    """Without an optional package the command says which extra to install, before reading."""
    monkeypatch.setitem(sys.modules, package, None)  # `import package` fails as if not installed
    path = tmp_path / "bars.csv"
    path.write_text("timestamp,open,high,low,close,volume\n2019-01-02T15:00:00Z,1,2,1,2,3\n")
    argv = ["profile", path, "--tick-size", "0.25", *[a.format(tmp=tmp_path) for a in args]]
    _one_line_error(run_inproc(argv, capsys), 1, needle.format(tmp=tmp_path))
    with pytest.raises(ImportError, match=package):
        cli.main(["--traceback", *map(str, argv)])


def test_parse_size():
    assert cli.parse_size("268435456") == 268435456
    assert cli.parse_size("256M") == 256 << 20
    assert cli.parse_size("1.5GiB") == 3 << 29
    assert cli.parse_size("2g") == 2 << 30
    assert cli.parse_size("64 KB") == 64 << 10
    for bad in ("", "M", "12X", "-5M", "0", "0.1"):
        with pytest.raises(ValueError, match="size"):
            cli.parse_size(bad)


# --------------------------------------------------------------------------- profile_table


@NEEDS_PANDAS
def test_profile_table_with_empty_sessions():
    price = np.array([10.0, 10.25, 10.25, 11.0, 5.0])
    vol = np.array([1, 2, 3, 1, 7])
    offsets = np.array([0, 3, 3, 5])  # session 1 is empty
    ts = np.array([5, 6, 7, 100, 200], dtype=np.int64) * 60_000_000_000
    prof = vpoc.from_trades(price, vol, offsets=offsets, tick_size=0.25)
    t = cli.profile_table(prof, np.array([7, 8, 9]), offsets, ts)
    assert list(t.columns) == list(cli.PROFILE_COLUMNS)
    assert t["count"].tolist() == [3, 0, 2]
    assert t.start[0] == pd.Timestamp("1970-01-01 00:05", tz="UTC")
    assert t.end[2] == pd.Timestamp("1970-01-01 03:20", tz="UTC")
    assert pd.isna(t.start[1]) and pd.isna(t.end[1]) and np.isnan(t.low[1]) and np.isnan(t.high[1])
    assert t.poc.tolist()[0] == 10.25 and t.low[0] == 10.0 and t.high[0] == 10.25
    assert t.low[2] == 5.0 and t.high[2] == 11.0 and t.total_volume[2] == 8.0
    with pytest.raises(ValueError, match="labels"):
        cli.profile_table(prof, np.array([1, 2]), offsets, ts)
    with pytest.raises(ValueError, match="offsets"):
        cli.profile_table(prof, np.array([7, 8, 9]), offsets[:-1], ts)
    with pytest.raises(ValueError, match="timestamp"):
        cli.profile_table(prof, np.array([7, 8, 9]), offsets, ts[:-1])
    e = cli.empty_profile_table()
    assert len(e) == 0 and list(e.columns) == list(cli.PROFILE_COLUMNS)
    assert e.dtypes.to_dict() == t.dtypes.to_dict()


# --------------------------------------------------------------------------- features


@NEEDS_PROFILE_PARQUET
def test_features_match_in_process(small):
    from vpoc.features import session_features

    out = small["dir"] / "feat.parquet"
    r = run(["features", *small["files"], "--tick-size", "0.25", "-o", out, "--va", "single"])
    assert r.returncode == 0, r.stderr
    got = pd.read_parquet(out)
    df = small["df"]
    offsets = np.append(np.unique(df.session_id.to_numpy(), return_index=True)[1], len(df))
    exp = session_features(df.high.to_numpy(), df.low.to_numpy(), df.close.to_numpy(),
                           df.volume.to_numpy(), open=df.open.to_numpy(),
                           timestamp=pd.DatetimeIndex(df.timestamp).as_unit("ns").asi8,
                           offsets=offsets, tick_size=0.25, va_method="single").to_pandas()
    assert got.session.tolist() == sorted(df.session_id.unique().tolist())
    assert list(got.columns[1:]) == list(exp.columns)
    np.testing.assert_array_equal(got.iloc[:, 1:].to_numpy(), exp.to_numpy())


# --------------------------------------------------------------------------- info, bench, demo


def test_info():
    r = run(["info"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"vpoc {vpoc.__version__}")
    assert f"backends: {', '.join(vpoc.backends())}" in r.stdout and "cpu " in r.stdout
    r = run(["info", "--json"], module=True)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["vpoc"] == vpoc.__version__ and info["backends"] == vpoc.backends()
    assert info["cpu"]["cores"] == os.cpu_count()
    assert (info["gpus"] == []) == (not vpoc.gpu_available())
    assert info["packages"]["numpy"] == np.__version__
    r = run(["--version"])
    assert r.returncode == 0 and r.stdout.strip() == f"vpoc {vpoc.__version__}"


def test_bench_small():
    r = run(["bench", "--sessions", "3", "--bars", "40", "--trades", "5000", "--repeat", "2", "--json"])
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    rows = {x["workload"]: x for x in rep["results"]}
    assert set(rows) == {"bars_uniform", "bars_close", "trades"}
    assert rows["bars_uniform"]["rows"] == 120 and rows["trades"]["rows"] == 5000
    for x in rows.values():
        assert x["best_s"] > 0 and x["rows_per_s"] == pytest.approx(x["rows"] / x["best_s"])
    r = run(["bench", "--sessions", "2", "--bars", "10", "--trades", "100", "--repeat", "1"])
    assert r.returncode == 0 and "bars_uniform" in r.stdout and "M rows/s" in r.stdout


def test_demo_prints_the_engine_result():
    r = run(["demo", "--sessions", "4", "--bars", "90", "--show", "3", "--seed", "2"], module=True)
    assert r.returncode == 0, r.stderr
    bars = vpoc.synth.es_bars(4, 90, seed=2)
    ref = ref_bars(bars.high, bars.low, bars.close, bars.volume, bars.open, bars.offsets, tick_size=0.25)
    lines = r.stdout.splitlines()
    for s in range(3):
        row = next(line for line in lines if line.split()[:1] == [str(bars.session_labels[s])])
        assert row.split()[1:4] == [f"{ref[k][s]:.2f}" for k in ("poc", "vah", "val")]
