"""``vpoc profile`` / ``vpoc inspect`` after the user trial of the file -> sessions -> profile flow.

Contract: the help states the real calendar default; the profile table carries the session rule's
trade date, partial and merged_days; --roll prints the roll ledger and the overlap it left out;
errors and suggested flags are spelled as a shell takes them.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

import _deps

pd = _deps.require("pandas")
NEEDS_CAL = _deps.needs("pandas_market_calendars")

from _user_file import write_user_file  # noqa: E402

import vpoc  # noqa: E402
from vpoc import cli  # noqa: E402

TIMEOUT = 180
UTC_CLOSE = ["--tz", "UTC", "--label", "close", "--interval", "60"]


def run(args: Sequence[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vpoc", *map(str, args)], capture_output=True,
                          text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)


def _cut(path: Path, head: int, tail: int) -> None:
    """Leave out the first ``head`` and last ``tail`` data lines of a CSV (the header stays)."""
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([lines[0], *lines[1 + head:len(lines) - tail]]))


# --------------------------------------------------------------------------- 5: --calendar help


def test_23_trial5_profile_help_states_the_real_calendar_default() -> None:
    from vpoc.sessions import DEFAULT_CALENDAR, DEFAULT_TRADE_DATES

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["profile"]
    text = " ".join(sub.format_help().split())
    assert "CME_Equity" not in text
    assert f"default {DEFAULT_CALENDAR!r} with trade dates from {DEFAULT_TRADE_DATES!r}" in text
    # and that is what the session rule the CLI builds uses when --calendar is left out
    import inspect as pyinspect

    params = pyinspect.signature(vpoc.sessions.globex).parameters
    assert params["calendar"].default == DEFAULT_CALENDAR
    assert params["trade_dates"].default == DEFAULT_TRADE_DATES


# --------------------------------------------------------------------------- 8: session columns


@NEEDS_CAL
def test_23_trial8_profile_has_trade_date_partial_merged_days(tmp_path) -> None:
    exp = write_user_file(tmp_path / "es.csv", fmt="csv", tz="UTC", label="close",
                          start="2025-01-05", end="2025-01-24", seed=1)
    _cut(Path(exp["path"]), head=100, tail=50)  # the first and last sessions lose rows
    out = tmp_path / "p.csv"
    r = run(["profile", exp["path"], "--tick-size", "0.25", *UTC_CLOSE, "-o", out])
    assert r.returncode == 0, r.stderr
    got = pd.read_csv(out)
    assert list(got.columns) == list(cli.PROFILE_COLUMNS) + ["trade_date", "partial", "merged_days"]
    dates = sorted(exp["sessions"])
    assert got.session.tolist() == dates
    assert got.trade_date.tolist() == [f"{d // 10000}-{d // 100 % 100:02d}-{d % 100:02d}" for d in dates]
    # the plain facts of the data: the first and last sessions were cut; holiday trading booked
    # to the next trade date (Jan 9 -> Jan 10, MLK Jan 20 -> Jan 21) gives two windows
    assert got.partial.tolist() == [i in (0, len(dates) - 1) for i in range(len(dates))]
    assert got.merged_days.tolist() == [exp["sessions"][d]["windows"] for d in dates]
    assert {d for d in dates if exp["sessions"][d]["windows"] == 2} == {20250110, 20250121}


@NEEDS_CAL
def test_23_trial8_roll_prints_the_ledger_and_the_overlap(tmp_path) -> None:
    front = write_user_file(tmp_path / "ESH5.csv", fmt="csv", tz="UTC", label="close",
                            start="2025-01-05", end="2025-01-24", seed=2)
    back = write_user_file(tmp_path / "ESM5.csv", fmt="csv", tz="UTC", label="close",
                           start="2025-01-12", end="2025-02-07", seed=3, price=6050.0)
    out = tmp_path / "p.csv"
    r = run(["profile", front["path"], back["path"], "--roll", "volume", "--tick-size", "0.25",
             *UTC_CLOSE, "-o", out])
    assert r.returncode == 0, r.stderr
    bars = vpoc.io.read_contracts([front["path"], back["path"]], roll="volume", tz="UTC",
                                  label="close", interval=60)
    assert len(bars.rolls) >= 1
    err = r.stderr
    for row in bars.rolls.to_dict("records"):
        line = f"roll {row['date']} ESH5 -> ESM5 offset {float(row['offset']):g}"
        assert line in err, err
    # the overlap left out: plain count from the files, not the library's field
    overlap = front["rows"] + back["rows"] - len(bars)
    assert overlap > 0
    m = re.search(r"left out by the roll rule: ([\d,]+)", err)
    assert m is not None, err
    assert int(m.group(1).replace(",", "")) == overlap
    assert "date, from, to, offset" in err


# --------------------------------------------------------------------------- 9: wording, quoting


@NEEDS_CAL
def test_23_trial9_strict_error_names_no_drop_option(tmp_path) -> None:
    exp = write_user_file(tmp_path / "chi.csv", fmt="csv", tz="America/Chicago", label="open",
                          start="2025-01-05", end="2025-01-17", seed=4)
    r = run(["profile", exp["path"], "--tick-size", "0.25", "--tz", "UTC", "--strict"])
    assert r.returncode == 2
    line = r.stderr.strip().splitlines()[-1]
    assert "'drop'" not in line and "drop'" not in line
    assert "leave out --strict to leave such rows out" in line


def _date_time_csv(path: Path, day_first: bool = False, start: str = "2025-01-05",
                   end: str = "2025-01-24") -> Path:
    exp = write_user_file(path.with_suffix(".tmp.csv"), fmt="csv", tz="America/Chicago",
                          label="open", start=start, end=end, seed=6)
    df = pd.read_csv(exp["path"])
    ts = pd.to_datetime(df.timestamp)
    pd.DataFrame({"Date": ts.dt.strftime("%d/%m/%Y" if day_first else "%m/%d/%Y"),
                  "Time": ts.dt.strftime("%H:%M:%S"), "Open": df.open, "High": df.high,
                  "Low": df.low, "Last": df.close, "Volume": df.volume}).to_csv(path, index=False)
    return path


@NEEDS_CAL
def test_23_trial9_inspect_finds_the_date_time_format_and_quotes_it(tmp_path) -> None:
    path = _date_time_csv(tmp_path / "vendor.csv")
    r = run(["inspect", path])
    assert r.returncode == 0, r.stderr
    flags = next(ln for ln in r.stdout.splitlines() if ln.strip().startswith("CLI flags"))
    want = "--time-format " + shlex.quote("%m/%d/%Y %H:%M:%S")
    assert want in flags and "'%m/%d/%Y %H:%M:%S'" in flags
    assert "%m/%d/%Y" in r.stdout and "time_format=" in r.stdout  # the evidence says it guessed
    # the suggested command, run as a shell splits it, reads the file right
    cmd = next(ln.strip() for ln in r.stdout.splitlines() if ln.strip().startswith("vpoc profile"))
    argv = shlex.split(cmd)
    assert argv[argv.index("--time-format") + 1] == "%m/%d/%Y %H:%M:%S"
    assert argv[argv.index("--tz") + 1] == "America/Chicago"


@NEEDS_CAL
def test_23_trial9_inspect_day_month_ambiguity_names_both_formats(tmp_path) -> None:
    """Rows only on days 1-12 (both month- and day-first parse every one): the file's time order
    tells them apart when it spans two months (Jan 5-12, Feb 2-7: day-first would go back from
    1 Oct to 2 Mar); within one month it cannot, and both formats are named."""
    path = _date_time_csv(tmp_path / "amb.csv", start="2025-01-05", end="2025-02-07")
    df = pd.read_csv(path)
    df = df[df.Date.str[3:5].astype(int) <= 12]
    assert set(df.Date.str[:2]) == {"01", "02"}
    df.to_csv(path, index=False)
    got = vpoc.io.inspect(str(path))
    assert got.read_kwargs["time_format"] == "%m/%d/%Y %H:%M:%S"
    one = pd.read_csv(path).iloc[:60]  # 17:00-17:59 of Jan 5: both readings parse and keep order
    one.to_csv(tmp_path / "one.csv", index=False)
    r = run(["inspect", tmp_path / "one.csv"])
    assert r.returncode == 2
    msg = r.stderr
    assert "--time-format '%m/%d/%Y %H:%M:%S'" in msg and "--time-format '%d/%m/%Y %H:%M:%S'" in msg


def test_23_trial9_strict_summary_names_no_library_switches() -> None:
    """--strict's error quotes the warning's cause, not its pointers to on_outside= (which the
    CLI spells as --strict itself: "leave out --strict silences this")."""
    import argparse
    import warnings

    from vpoc.cli._input import Tally
    from vpoc.cli._progress import Reporter

    args = argparse.Namespace(strict=True, session="globex")
    tally = Tally(rows_in=100, rows_kept=90, volume_in=100.0, volume_kept=90.0)
    with pytest.raises(cli.UsageError) as e:
        with Reporter("profile", args) as rep:
            warnings.warn("vpoc.sessions.globex: 10 of 100 rows (10.0%) are outside every session "
                          "and left out. Counts: Sessions.dropped_rows, .dropped_by_cause; "
                          "on_outside='drop' silences this, on_outside='raise' makes it an error",
                          vpoc.DroppedRowsWarning)
            rep.check(tally)
    msg = str(e.value)
    assert msg.startswith("--strict: left out 10 of 100 rows")
    assert "10 of 100 rows (10.0%) are outside every session" in msg
    assert "silences" not in msg and "on_outside" not in msg
