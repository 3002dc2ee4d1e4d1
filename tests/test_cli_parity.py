"""The ``vpoc`` command line has the API's reading and session options, and says what it leaves out.

Contract: every reader / session option of the API has a flag (23.7), errors name only flags that
exist, rows left out are one stderr summary line or, with ``--strict``, an error (23.3),
``--session-tz`` cannot silently move RTH out of the exchange's hours (23.8), SIGTERM during a
write leaves no temporary file (28.6). Checked against pandas groupings and the NumPy reference.
"""

from __future__ import annotations

import inspect
import os
import re
import signal
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import _deps
import vpoc
from test_cli import BAR_COLS, assert_table, bars_frame, expected_profile, read_out, run, write_csv

pd = _deps.module("pandas")
NEEDS_PROFILE = _deps.needs("pandas", "pandas_market_calendars")
NEEDS_PANDAS = _deps.needs("pandas")

# Python keyword spellings the library uses in its hints; a CLI user must see flags instead
_KWARG_HINT = re.compile(r"\b(columns|time_format|time_unit|tz|interval|label|outside|on_outside|"
                         r"calendar|holidays|sep|ambiguous|nonexistent|roll|adjust|snap|tick_size)=")


def _no_kwarg_hints(text: str) -> None:
    assert _KWARG_HINT.search(text) is None, text


def _one_error(r: subprocess.CompletedProcess, code: int = 2) -> str:
    assert r.returncode == code, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vpoc: error: "), r.stderr
    _no_kwarg_hints(r.stderr)
    return lines[0]


def _chicago_minutes(df: "pd.DataFrame") -> "pd.Series":
    c = df.timestamp.dt.tz_convert("America/Chicago")
    return c.dt.hour * 60 + c.dt.minute


@pytest.fixture(scope="module")
def mlk(tmp_path_factory):
    """16 full Globex sessions of January 2019, MLK day (2019-01-21) among them: CME halts at
    12:00 CT that day and books its morning to 2019-01-22."""
    d = tmp_path_factory.mktemp("cli_mlk")
    df = bars_frame(16, 1380, seed=5)
    return {"dir": d, "df": df, "csv": write_csv(df, d / "es.csv", BAR_COLS)}


def _mlk_expected(df: "pd.DataFrame", own: bool) -> "tuple[pd.DataFrame, np.ndarray]":
    """The CME booking of the MLK session computed plainly: rows from 12:00 CT on the holiday are
    outside every session; its morning is 2019-01-22's (merge) or its own session (own)."""
    holiday = df.session_id.to_numpy() == 20190121
    after_halt = holiday & (_chicago_minutes(df).to_numpy() >= 12 * 60) & (
        df.timestamp.dt.tz_convert("America/Chicago").dt.day.to_numpy() == 21)
    kept = df[~after_halt].copy()
    if not own:
        kept.loc[kept.session_id == 20190121, "session_id"] = 20190122
    return kept.reset_index(drop=True), after_halt


# --------------------------------------------------------------------------- 23.3 / 23.8 holidays


@NEEDS_PROFILE
def test_23_3_rows_left_out_are_one_summary_line_with_shares(mlk):
    df = mlk["df"]
    out = mlk["dir"] / "merge.csv"
    r = run(["profile", mlk["csv"], "--tick-size", "0.25", "--out", out])
    assert r.returncode == 0, r.stderr
    kept, dropped = _mlk_expected(df, own=False)
    assert dropped.sum() == 240  # 12:00-16:00 CT on MLK day
    assert_table(read_out(out), expected_profile(kept))
    share_rows = dropped.sum() / len(df)
    share_vol = df.volume.to_numpy()[dropped].sum() / df.volume.sum()
    line = [x for x in r.stderr.splitlines() if x.startswith("vpoc: profile: left out")]
    assert len(line) == 1, r.stderr
    assert (f"left out 240 of {len(df):,} rows ({share_rows:.1%} of the rows, {share_vol:.1%} of the "
            f"volume)") in line[0], line[0]
    assert "halt" in line[0] and f"kept {len(df) - 240:,}" in line[0]
    _no_kwarg_hints(r.stderr)


@NEEDS_PROFILE
def test_23_3_strict_makes_rows_left_out_an_error(mlk):
    out = mlk["dir"] / "strict.csv"
    r = run(["profile", mlk["csv"], "--tick-size", "0.25", "--out", out, "--strict"])
    msg = _one_error(r, 2)
    assert "strict" in msg and not out.exists()
    # nothing left out: --strict passes quietly (the clock alone has no MLK halt)
    r = run(["profile", mlk["csv"], "--tick-size", "0.25", "--out", out, "--strict", "--calendar", "none"])
    assert r.returncode == 0 and r.stderr == "", r.stderr


@NEEDS_PANDAS
def test_23_7_calendar_none_is_the_clock_alone(mlk):
    out = mlk["dir"] / "clock.csv"
    # no calendar package needed: --calendar none
    r = run(["profile", mlk["csv"], "--tick-size", "0.25", "--out", out, "--calendar", "none"])
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert_table(read_out(out), expected_profile(mlk["df"]))


@NEEDS_PROFILE
def test_23_8_holidays_own_keeps_the_holiday_session(mlk):
    out = mlk["dir"] / "own.csv"
    r = run(["profile", mlk["csv"], "--tick-size", "0.25", "--out", out, "--holidays", "own"])
    assert r.returncode == 0, r.stderr
    kept, _ = _mlk_expected(mlk["df"], own=True)
    got = read_out(out)
    assert_table(got, expected_profile(kept))
    assert got.set_index("session").loc[20190121, "count"] == 1380 - 240
    r = run(["profile", mlk["csv"], "--tick-size", "0.25", "--holidays", "both"])
    assert r.returncode == 2 and "--holidays" in r.stderr


# --------------------------------------------------------------------------- 23.7 reading flags


@pytest.fixture(scope="module")
def vendor(tmp_path_factory):
    """3 sessions written with German column names and day-first text times (naive UTC), once
    with one timestamp column and once with split date and time columns."""
    d = tmp_path_factory.mktemp("cli_vendor")
    df = bars_frame(3, 200, seed=2)
    t = df.timestamp.dt.tz_convert(None)
    values = {"Erster": df.open, "Hoch": df.high, "Tief": df.low, "Letzter": df.close, "Umsatz": df.volume}
    pd.DataFrame({"Zeitpunkt": t.dt.strftime("%d.%m.%Y %H:%M"), **values}).to_csv(d / "one.csv", index=False)
    pd.DataFrame({"Datum": t.dt.strftime("%Y-%m-%d"), "Zeit": t.dt.strftime("%H:%M:%S"), **values}).to_csv(
        d / "split.csv", index=False)
    return {"dir": d, "df": df}


_GERMAN = "open=Erster,high=Hoch,low=Tief,close=Letzter,volume=Umsatz"


@NEEDS_PANDAS
def test_23_7_columns_and_time_format_flags(vendor):
    d, df = vendor["dir"], vendor["df"]
    base = ["profile", d / "one.csv", "--tick-size", "0.25", "--calendar", "none"]
    msg = _one_error(run(base))
    assert "--columns" in msg
    msg = _one_error(run([*base, "--columns", f"timestamp=Zeitpunkt,{_GERMAN}", "--tz", "UTC"]))
    assert "--time-format" in msg
    out = d / "one_out.csv"
    r = run([*base, "--columns", f"timestamp=Zeitpunkt,{_GERMAN}", "--tz", "UTC",
             "--time-format", "%d.%m.%Y %H:%M", "--out", out])
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert_table(read_out(out), expected_profile(df))
    # a timestamp split over two columns: timestamp=Date+Time
    out = d / "split_out.csv"
    r = run(["profile", d / "split.csv", "--tick-size", "0.25", "--calendar", "none", "--tz", "UTC",
             "--columns", f"timestamp=Datum+Zeit,{_GERMAN}", "--out", out])
    assert r.returncode == 0, r.stderr
    assert_table(read_out(out), expected_profile(df))
    for bad in ("open", "open=", "timestamp=a+b+c", "close=a+b", "open=a,open=b"):
        r = run([*base, "--columns", bad])
        assert r.returncode == 2 and "--columns" in r.stderr, (bad, r.stderr)


def _has_label() -> bool:
    from vpoc import io as vio

    return "label" in inspect.signature(vio.read_bars).parameters


@_deps.needs("pandas_market_calendars")
@NEEDS_PANDAS
def test_23_7_label_close_and_interval(tmp_path):
    if not _has_label():
        pytest.skip("vpoc.io.read_bars has no label= yet")
    df = bars_frame(4, 1380, seed=3)
    closed = df.assign(timestamp=df.timestamp + pd.Timedelta(minutes=1))
    src = write_csv(closed, tmp_path / "close.csv", BAR_COLS)
    exp = expected_profile(df)
    for extra in ([], ["--interval", "60"], ["--interval", "1min"]):
        out = tmp_path / f"o{len(extra)}{extra[-1] if extra else ''}.csv"
        r = run(["profile", src, "--tick-size", "0.25", "--calendar", "none", "--label", "close",
                 *extra, "--out", out])
        assert r.returncode == 0, (extra, r.stderr)
        assert "left out" not in r.stderr
        assert_table(read_out(out), exp)
    # read as opens, each session's last bar (close stamp 16:00 CT) falls in the halt: reported
    r = run(["profile", src, "--tick-size", "0.25", "--calendar", "none", "--out", tmp_path / "x.csv"])
    assert r.returncode == 0 and "left out 4 of 5,520 rows" in r.stderr, r.stderr
    for bad in (["--interval", "soon"], ["--interval", "0"], ["--label", "middle"]):
        r = run(["profile", src, "--tick-size", "0.25", *bad])
        assert r.returncode == 2 and bad[0] in r.stderr, (bad, r.stderr)
    r = run(["profile", src, "--tick-size", "0.25", "--kind", "trades", "--label", "close"])
    assert r.returncode == 2 and "--label" in r.stderr


@NEEDS_PANDAS
def test_23_7_errors_name_only_flags_that_exist(tmp_path):
    df = bars_frame(2, 30, seed=4)
    ints = df.assign(timestamp=df.timestamp.astype("int64") // 10**9)
    naive = df.assign(timestamp=df.timestamp.dt.tz_convert(None))
    legacy = tmp_path / "bars.txt"
    c = df.timestamp.dt.tz_convert(None)
    legacy.write_text("".join(f"{t:%Y%m%d %H%M%S};{o};{h};{lo};{cl};{v}\n" for t, o, h, lo, cl, v in
                              zip(c, df.open, df.high, df.low, df.close, df.volume)))
    cases = [
        (write_csv(ints, tmp_path / "ints.csv", BAR_COLS), [], "--time-unit"),
        (write_csv(naive, tmp_path / "naive.csv", BAR_COLS), [], "--tz"),
        (legacy, [], "--tz"),
        (write_csv(df.rename(columns={"close": "schluss"}), tmp_path / "cols.csv",
                   ["timestamp", "open", "high", "low", "schluss", "volume"]), [], "--columns"),
        (legacy, ["--tz", "UTC", "--tick-size", "-1"], "--tick-size"),
    ]
    for path, extra, flag in cases:
        args = ["profile", path, "--calendar", "none", *extra]
        if "--tick-size" not in extra:
            args += ["--tick-size", "0.25"]
        msg = _one_error(run(args))
        assert flag in msg, (path, msg)


# --------------------------------------------------------------------------- 23.8 --session-tz


@NEEDS_PROFILE
def test_23_8_session_tz_cannot_move_rth_out_of_the_exchange_hours(mlk):
    src = mlk["csv"]
    # before: exit 0 with an "RTH" of 08:30-15:15 UTC (02:30-09:15 in Chicago, the European morning)
    msg = _one_error(run(["profile", src, "--tick-size", "0.25", "--session", "rth", "--session-tz", "UTC"]))
    assert "02:30-09:15 America/Chicago" in msg and "--tz" in msg
    # the same hours in another zone are fine: 09:30-16:00 New York = 08:30-15:00 Chicago
    ny, chi = mlk["dir"] / "ny.csv", mlk["dir"] / "chi.csv"
    r = run(["profile", src, "--tick-size", "0.25", "--session", "rth", "--session-tz", "America/New_York",
             "--rth-start", "09:30", "--rth-end", "16:00", "--out", ny])
    assert r.returncode == 0, r.stderr
    r = run(["profile", src, "--tick-size", "0.25", "--session", "rth", "--rth-end", "15:00", "--out", chi])
    assert r.returncode == 0, r.stderr
    a, b = read_out(ny), read_out(chi)
    pd.testing.assert_frame_equal(a, b)
    minutes = _chicago_minutes(mlk["df"])
    assert a["count"].sum() == ((minutes >= 510) & (minutes < 900)).sum() - 390  # MLK: no RTH
    # Chicago hours are the user's to choose; the daily rule takes any zone
    r = run(["profile", src, "--tick-size", "0.25", "--session", "daily", "--session-tz", "UTC",
             "--out", mlk["dir"] / "d.csv"])
    assert r.returncode == 0, r.stderr


# --------------------------------------------------------------------------- 23.7 contracts


@NEEDS_PROFILE
def test_23_7_several_contract_files_in_one_run(tmp_path):
    from vpoc import io as vio

    if not hasattr(vio, "read_contracts"):
        pytest.skip("vpoc.io.read_contracts has not landed")
    df = bars_frame(8, 1380, seed=6)
    front = df[df.session_id <= 20190110]
    back = df[df.session_id >= 20190108].copy()
    for k in ("open", "high", "low", "close"):
        back[k] = back[k] + 25.0  # the next contract trades 25 points higher
    back["volume"] = back["volume"] * np.where(back.session_id >= 20190109, 3, 1)
    f1 = write_csv(front, tmp_path / "ESH19.csv", BAR_COLS)
    f2 = write_csv(back, tmp_path / "ESM19.csv", BAR_COLS)
    msg = _one_error(run(["profile", f1, f2, "--tick-size", "0.25"]))
    assert "--roll" in msg
    for roll, adjust in (("volume", "none"), ("calendar", "spread")):
        out = tmp_path / f"{roll}_{adjust}.csv"
        r = run(["profile", f1, f2, "--tick-size", "0.25", "--roll", roll, "--adjust", adjust, "--out", out])
        assert r.returncode == 0, r.stderr
        with warnings.catch_warnings():  # the roll's notes; the CLI shows them as warning lines
            warnings.simplefilter("ignore")
            bars = vio.read_contracts([str(f1), str(f2)], roll=roll, adjust=adjust)
            s = vpoc.sessions.globex(bars.timestamp)
        kept = pd.DataFrame({"timestamp": pd.to_datetime(bars.timestamp, utc=True), "open": bars.open,
                             "high": bars.high, "low": bars.low, "close": bars.close,
                             "volume": bars.volume}).iloc[np.asarray(s.index) if s.index is not None else
                                                          slice(None)].reset_index(drop=True)
        kept["session_id"] = np.repeat(np.asarray(s.labels), np.diff(np.asarray(s.offsets)))
        assert_table(read_out(out), expected_profile(kept))


# --------------------------------------------------------------------------- 23.2 inspect


@NEEDS_PROFILE
def test_23_2_inspect_prints_the_inspection_and_the_command(tmp_path):
    from vpoc import io as vio

    if not hasattr(vio, "inspect"):
        pytest.skip("vpoc.io.inspect has not landed")
    user_file = pytest.importorskip("_user_file", reason="tests/_user_file.py has not landed")
    path = tmp_path / "ES 03-25.Last.txt"
    user_file.write_user_file(path, fmt="legacy", tz="UTC", label="close")
    r = run(["inspect", path])
    assert r.returncode == 0, r.stderr
    result = vio.inspect(str(path))
    assert repr(result) in r.stdout
    cmd = [line.strip() for line in r.stdout.splitlines() if line.strip().startswith("vpoc profile")]
    assert len(cmd) == 1 and all(str(a) in cmd[0] for a in result.cli_args), r.stdout
    assert "UTC" in cmd[0] and "close" in cmd[0]
    # the suggested command runs as printed and leaves no row of a Globex session out
    import shlex

    args = shlex.split(cmd[0])[1:] + ["--out", str(tmp_path / "p.csv")]
    r = run(args)
    assert r.returncode == 0, r.stderr
    _no_kwarg_hints(r.stderr)


def test_23_2_inspect_missing_file_is_a_usage_error(tmp_path):
    r = run(["inspect", tmp_path / "nope.csv"])
    assert r.returncode == 2 and "not found" in r.stderr


# --------------------------------------------------------------------------- 28.6 SIGTERM


_SIGTERM_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    import pandas as pd
    from vpoc import cli

    real = pd.DataFrame.to_csv

    def slow(self, fh=None, *a, **k):  # the write starts, then the job is terminated
        if hasattr(fh, "write"):
            fh.write(b"partial,row\\n" if "b" in getattr(fh, "mode", "b") else "partial,row\\n")
            fh.flush()
            os.kill(os.getpid(), signal.SIGTERM)
            signal.pause()  # not reached: SIGTERM raises
        return real(self, fh, *a, **k)

    pd.DataFrame.to_csv = slow
    sys.exit(cli.main(sys.argv[1:]))
""")


@NEEDS_PANDAS
def test_28_6_sigterm_during_a_write_removes_the_temporary_file(tmp_path):
    df = bars_frame(2, 100, seed=1)
    src = write_csv(df, tmp_path / "in.csv", BAR_COLS)
    outdir = tmp_path / "out"
    outdir.mkdir()
    out = outdir / "p.csv"
    out.write_text("old\n")
    script = tmp_path / "term.py"
    script.write_text(_SIGTERM_SCRIPT)
    r = subprocess.run([sys.executable, str(script), "profile", str(src), "--tick-size", "0.25",
                        "--calendar", "none", "--out", str(out)], capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 128 + signal.SIGTERM, (r.returncode, r.stderr)
    assert "terminated" in r.stderr and "Traceback" not in r.stderr
    assert sorted(os.listdir(outdir)) == ["p.csv"], os.listdir(outdir)  # no temporary file left
    assert out.read_text() == "old\n"  # the old output untouched


# --------------------------------------------------------------------------- 28.3 cut last line


@NEEDS_PANDAS
def test_28_3_cut_last_line_is_reported_as_the_library_does(tmp_path):
    """A CSV whose last line has no newline (a writer still at work: ...;25 of ...;255): left out
    with a warning line naming --unterminated (the library's default), refused under --strict or
    --unterminated raise, read with --unterminated keep."""
    df = bars_frame(2, 60, seed=1)
    text = df[list(BAR_COLS)].to_csv(index=False)
    assert text.endswith("\n")
    src = tmp_path / "cut.csv"
    src.write_text(text[:-2])  # the last volume loses its last digit and the newline
    base = ["profile", src, "--tick-size", "0.25", "--calendar", "none"]
    out = tmp_path / "o.csv"
    r = run([*base, "--out", out])
    assert r.returncode == 0, r.stderr
    assert "cut.csv line 121" in r.stderr and "--unterminated keep" in r.stderr, r.stderr
    _no_kwarg_hints(r.stderr)
    assert read_out(out)["count"].sum() == len(df) - 1
    assert_table(read_out(out), expected_profile(df.iloc[:-1]))
    for flags in (["--strict"], ["--unterminated", "raise"]):
        msg = _one_error(run([*base, *flags]))
        assert "cut.csv line 121" in msg and "no newline" in msg
    r = run([*base, "--unterminated", "keep", "--out", out])
    assert r.returncode == 0 and r.stderr == "", r.stderr
    got = read_out(out)
    assert got["count"].sum() == len(df)
    exp_volume = df.volume.sum() - df.volume.iloc[-1] + df.volume.iloc[-1] // 10
    assert got["total_volume"].sum() == exp_volume


@NEEDS_PANDAS
def test_23_7_vendor_column_aliases_need_no_flags(tmp_path):
    """Date + Time split columns with Last for the close, and Databento's ts_event (ns UTC): read by
    the readers' aliases, no --columns needed."""
    df = bars_frame(3, 120, seed=7)
    t = df.timestamp.dt.tz_convert(None)
    vendor = pd.DataFrame({"Date": t.dt.strftime("%Y-%m-%d"), "Time": t.dt.strftime("%H:%M:%S"),
                           "Open": df.open, "High": df.high, "Low": df.low, "Last": df.close,
                           "Volume": df.volume})
    dbn = pd.DataFrame({"ts_event": pd.DatetimeIndex(df.timestamp).as_unit("ns").asi8, "open": df.open,
                        "high": df.high, "low": df.low, "close": df.close, "volume": df.volume})
    vendor.to_csv(tmp_path / "vendor.csv", index=False)
    dbn.to_csv(tmp_path / "dbn.csv", index=False)
    for name, extra in (("vendor.csv", ["--tz", "UTC"]), ("dbn.csv", [])):
        out = tmp_path / f"{name}.out.csv"
        r = run(["profile", tmp_path / name, "--tick-size", "0.25", "--calendar", "none", *extra,
                 "--out", out])
        assert r.returncode == 0, (name, r.stderr)
        assert_table(read_out(out), expected_profile(df))
