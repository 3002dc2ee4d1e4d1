"""Reader hardening of issue 28 (points 3, 4, 6, 7) and the vendor column aliases of 23.7.

Expected values come from a plain-Python parse of the text each test writes (``datetime``,
``float()``, ``int()``); the SIGINT and FIFO cases run in a subprocess with a timeout.
"""

from __future__ import annotations

import bz2
import datetime as dt
import gzip
import io
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import List

import numpy as np
import pytest

import _deps

pd = _deps.require("pandas")

import vpoc
from vpoc import io as vio
from _sigint import default_sigint

UTC = dt.timezone.utc
HEADER = "timestamp,open,high,low,close,volume"
LEGACY = ["20250102 170000;4000.25;4001.5;3999.75;4000.5;218",
          "20250102 170100;4000.5;4002;4000;4001.25;7",
          "20250102 170200;4001.25;4001.25;3998.5;3999;218"]
CSV = ["2025-01-02T17:00:00Z,4000.25,4001.5,3999.75,4000.5,218",
       "2025-01-02T17:01:00Z,4000.5,4002,4000,4001.25,7",
       "2025-01-02T17:02:00Z,4001.25,4001.25,3998.5,3999,218"]


def ref_legacy(lines: List[str]) -> dict:
    """Plain-Python parse of UTC legacy lines."""
    ts, cols = [], {k: [] for k in ("open", "high", "low", "close", "volume")}
    for line in lines:
        stamp, *vals = line.split(";")
        t = dt.datetime.strptime(stamp, "%Y%m%d %H%M%S").replace(tzinfo=UTC)
        ts.append(int(t.timestamp()) * 10**9)
        for k, v in zip(cols, vals):
            cols[k].append(int(v) if k == "volume" else float(v))
    return {"timestamp": ts, **cols}


def ref_csv(lines: List[str]) -> dict:
    out = ref_legacy([";".join([dt.datetime.fromisoformat(x.split(",")[0].replace("Z", "+00:00"))
                                .strftime("%Y%m%d %H%M%S")] + x.split(",")[1:]) for x in lines])
    return out


def check(bars: vio.Bars, ref: dict) -> None:
    for k, v in ref.items():
        assert getattr(bars, k).tolist() == v, k


def write(path: Path, text: str, opener=open) -> str:
    with opener(path, "wb") as fh:
        fh.write(text.encode("utf-8"))
    return str(path)


# --------------------------------------------------------------------------- 28.3 last line


@pytest.mark.parametrize("kind", ["legacy", "csv", "csv.gz", "legacy.bz2"])
def test_28_3_cut_last_line_is_dropped_with_a_warning(tmp_path, kind) -> None:
    legacy = kind.startswith("legacy")
    lines = LEGACY if legacy else CSV
    cut = lines[2][:-1]  # "...;21" where the writer was putting "...;218"
    body = ("" if legacy else HEADER + "\n") + "\n".join(lines[:2] + [cut])  # no final newline
    suffix = ".txt" if legacy else ".csv"
    comp = {"gz": gzip.open, "bz2": bz2.open}.get(kind.split(".")[-1], open)
    name = "cut" + suffix + ("." + kind.split(".")[-1] if "." in kind else "")
    path = write(tmp_path / name, body, comp)
    line = 3 if legacy else 4
    with pytest.warns(vpoc.DroppedRowsWarning, match=rf"{name} line {line}: left out the last "
                      r"line .*1 of 3 rows.*unterminated='keep'"):
        bars = vio.read_bars(path, tz="UTC")
    ref = ref_legacy(LEGACY[:2])
    check(bars, ref)
    with pytest.raises(ValueError, match=rf"{name} line {line}: the last line .*no newline"):
        vio.read_bars(path, tz="UTC", unterminated="raise")


@pytest.mark.parametrize("legacy", [True, False])
def test_28_3_complete_unterminated_line_kept_on_request(tmp_path, legacy) -> None:
    lines = LEGACY if legacy else CSV
    body = ("" if legacy else HEADER + "\n") + "\n".join(lines)
    path = write(tmp_path / ("ok.txt" if legacy else "ok.csv"), body)
    bars = vio.read_bars(path, tz="UTC", unterminated="keep")
    check(bars, ref_legacy(LEGACY) if legacy else ref_csv(CSV))
    # a terminated file reads the same with every rule and warns nothing (warnings are errors)
    path2 = write(tmp_path / ("ok2.txt" if legacy else "ok2.csv"), body + "\n")
    for rule in ("drop", "raise", "keep"):
        check(vio.read_bars(path2, tz="UTC", unterminated=rule), ref_legacy(LEGACY))


@pytest.mark.parametrize("legacy, tail, match", [
    (True, "20250102 170300;4001;4002", "has 3 fields, expected 6"),
    (True, "20250102 170300;4001;4002;4000;4001;5;9", "has 7 fields, expected 6"),
    (True, "20250102 1703", "has 1 fields, expected 6"),
    (True, "20250102 170300;4001;4002;4000;4001;", "field 'volume' is empty or missing"),
    (False, "2025-01-02T17:03:00Z,4001,4002", "has 3 fields, expected 6"),
    (False, "2025-01-02T17:03:00Z,4001,4002,4000,4001,1e", "volume = '1e' is not a number"),
])
def test_28_3_keep_needs_every_field(tmp_path, legacy, tail, match) -> None:
    lines = LEGACY if legacy else CSV
    body = ("" if legacy else HEADER + "\n") + "\n".join(lines + [tail])
    name = "t.txt" if legacy else "t.csv"
    path = write(tmp_path / name, body)
    with pytest.raises(ValueError, match=rf"{name} line {4 if legacy else 5}: .*{match}"):
        vio.read_bars(path, tz="UTC", unterminated="keep")


def test_28_3_unterminated_option_checked(tmp_path) -> None:
    with pytest.raises(ValueError, match="unterminated must be one of 'drop', 'raise', 'keep'"):
        vio.read_bars(write(tmp_path / "a.txt", LEGACY[0] + "\n"), tz="UTC", unterminated="yes")


def test_28_3_trades_cut_last_line(tmp_path) -> None:
    path = write(tmp_path / "tr.csv", "timestamp,price,volume\n2025-01-02T17:00:00Z,4000.25,218\n"
                 "2025-01-02T17:00:01Z,4000.5,21")
    with pytest.warns(vpoc.DroppedRowsWarning, match=r"tr\.csv line 3"):
        tr = vio.read_trades(path)
    assert tr.volume.tolist() == [218]


_FIFO_CODE = """
import os, sys, time, vpoc.io as v
t = time.time()
try:
    v.read_bars(sys.argv[1], tz="UTC", format="legacy")
    print("read")
except ValueError as e:
    print("ValueError:", e)
print("elapsed", time.time() - t)
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_28_3_fifo_and_devices_refused_without_blocking(tmp_path) -> None:
    fifo = tmp_path / "feed.txt"
    os.mkfifo(fifo)
    targets = [(str(fifo), "FIFO (named pipe)"), (str(tmp_path), "directory")]
    if os.path.exists("/dev/null"):
        targets.append(("/dev/null", "character device"))
    for target, kind in targets:
        try:
            r = subprocess.run([sys.executable, "-c", _FIFO_CODE, target], capture_output=True,
                               text=True, timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"read_bars({target!r}) blocked")
        assert f"is a {kind}, not a regular file" in r.stdout, r.stdout + r.stderr
        assert "open file object" in r.stdout


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_28_3_open_file_objects_are_read(tmp_path) -> None:
    body = "\n".join(LEGACY) + "\n"
    ref = ref_legacy(LEGACY)
    check(vio.read_bars(io.BytesIO(body.encode()), tz="UTC", format="legacy"), ref)
    check(vio.read_bars(io.StringIO(body), tz="UTC", format="legacy"), ref)
    check(vio.read_bars(io.BytesIO(gzip.compress(body.encode())), tz="UTC"), ref)  # sniffed
    csv_body = HEADER + "\n" + "\n".join(CSV) + "\n"
    check(vio.read_bars(io.StringIO(csv_body), format="csv"), ref)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def writer() -> None:
        with open(fifo, "w") as fh:
            fh.write(body)

    th = threading.Thread(target=writer, daemon=True)
    th.start()
    with open(fifo, "rb") as fh:
        bars = vio.read_bars(fh, tz="UTC", format="legacy")
    th.join(10)
    check(bars, ref)
    assert bars.source == str(fifo)


def test_28_3_errors_name_file_and_line(tmp_path) -> None:
    bad = (LEGACY[0] + "\n" + LEGACY[1] + "\n" + "20250102 170200;4001;4002;4000;4001;2\xe9\n")
    p = tmp_path / "enc.txt"
    p.write_bytes(bad.encode("latin-1"))
    with pytest.raises(ValueError, match=r"enc\.txt line 3: byte 0xe9 is not UTF-8"):
        vio.read_bars(str(p), tz="UTC")
    p = tmp_path / "enc.csv"
    p.write_bytes((HEADER + "\n" + CSV[0] + "\n" + CSV[1] + "\xe9\n").encode("latin-1"))
    with pytest.raises(ValueError, match=r"enc\.csv line 3: byte 0xe9 is not UTF-8"):
        vio.read_bars(str(p))
    for name, body in (("trunc.txt.gz", "\n".join(LEGACY * 3000) + "\n"),
                       ("trunc.csv.gz", HEADER + "\n" + "\n".join(CSV * 3000) + "\n")):
        data = gzip.compress(body.encode())
        (tmp_path / name).write_bytes(data[: len(data) // 2])
        with pytest.raises(ValueError, match=rf"{name}: cannot read the gzip stream .*truncated"):
            vio.read_bars(str(tmp_path / name), tz="UTC")
    for stamp in ("2300-01-01T00:00:00Z", "2300-01-01T00:00:00", "1600-01-01T00:00:00+01:00"):
        naive = not stamp.endswith(("Z", "+01:00"))
        first = CSV[0] if not naive else CSV[0].replace("Z", "")
        p = write(tmp_path / "oob.csv", f"{HEADER}\n{first}\n{stamp},1,2,0.5,1.5,3\n")
        with pytest.raises(ValueError, match=r"oob\.csv line 3: timestamp .* is outside the int64 "
                           r"nanosecond range"):
            vio.read_bars(p, tz="UTC")
    df = pd.DataFrame({"timestamp": pd.DatetimeIndex(np.array(["2025-01-01", "2300-01-01"], dtype="datetime64[s]")),
                       "open": 1.0, "high": 2.0, "low": 0.5, "close": 1.5, "volume": 3})
    with pytest.raises(ValueError, match=r"<DataFrame> row 1: timestamp 2300-01-01.*outside"):
        vio.read_bars(df, tz="UTC")


# --------------------------------------------------------------------------- 28.4 / 28.7 dates


@pytest.mark.parametrize("date, year", [("00010101", 1), ("99991231", 9999), ("16770101", 1677),
                                        ("22620101", 2262), ("16771231", 1677)])
def test_28_4_legacy_years_outside_int64_ns_raise(tmp_path, date, year) -> None:
    path = write(tmp_path / "y.txt", f"{LEGACY[0]}\n{date} 000000;1;2;0.5;1.5;1\n")
    with pytest.raises(ValueError, match=rf"y\.txt line 2: timestamp '{date} 000000': year {year} "
                       r"is outside 1678\.\.2261"):
        vio.read_bars(path, tz="UTC")
    csv = write(tmp_path / "y.csv", f"{HEADER}\n{date} 000000,1,2,0.5,1.5,1\n")  # same parser
    with pytest.raises(ValueError, match=rf"y\.csv line 2: .*year {year} is outside"):
        vio.read_bars(csv, tz="UTC")


def test_28_4_legacy_years_at_the_edges_are_exact(tmp_path) -> None:
    lines = ["16780101 000000;1;2;0.5;1.5;1", "20250102 170000;1;2;0.5;1.5;2",
             "22611231 235959;1;2;0.5;1.5;3"]
    bars = vio.read_bars(write(tmp_path / "edge.txt", "\n".join(lines) + "\n"), tz="UTC")
    check(bars, ref_legacy(lines))


IMPOSSIBLE = ["20250300", "20250000", "20250001", "20251301", "20250230", "20230229", "20250431",
              "20251232", "20259901"]


def _impossible_files(tmp_path: Path, date: str) -> list:
    y, m, d = date[:4], date[4:6], date[6:]
    good_l, good_i = "20200102 170000", "2020-01-02T17:00:00"
    return [  # (path, read kwargs, reader, line of the bad date)
        (write(tmp_path / "a.txt", f"{good_l};1;2;0.5;1.5;1\n{date} 180000;1;2;0.5;1.5;1\n"),
         {"tz": "UTC"}, vio.read_bars, 2),
        (write(tmp_path / "b.csv", f"{HEADER}\n{good_l},1,2,0.5,1.5,1\n{date} 180000,1,2,0.5,1.5,1\n"),
         {"tz": "UTC"}, vio.read_bars, 3),
        (write(tmp_path / "c.csv", f"{HEADER}\n{good_i}Z,1,2,0.5,1.5,1\n{y}-{m}-{d}T18:00:00Z,1,2,0.5,1.5,1\n"),
         {}, vio.read_bars, 3),
        (write(tmp_path / "d.csv", f"{HEADER}\n{good_i},1,2,0.5,1.5,1\n{y}-{m}-{d} 18:00:00,1,2,0.5,1.5,1\n"),
         {"tz": "UTC"}, vio.read_bars, 3),
        (write(tmp_path / "e.csv", "Date,Time,Open,High,Low,Last,Volume\n01/02/2020,17:00,1,2,0.5,1.5,1\n"
               f"{m}/{d}/{y},18:00,1,2,0.5,1.5,1\n"),
         {"tz": "UTC", "time_format": "%m/%d/%Y %H:%M"}, vio.read_bars, 3),
        (write(tmp_path / "f.csv", f"Date;Time;Open;High;Low;Close;Volume\n2020-01-02;17:00:00;1;2;0.5;1.5;1\n"
               f"{y}-{m}-{d};18:00:00;1;2;0.5;1.5;1\n"), {"tz": "UTC"}, vio.read_bars, 3),
        (write(tmp_path / "g.csv", f"timestamp,price,volume\n{good_i}Z,1,1\n{y}-{m}-{d}T18:00:00Z,1,1\n"),
         {}, vio.read_trades, 3),
        (write(tmp_path / "h.csv", f"timestamp,price,volume\n{good_l},1,1\n{date} 180000,1,1\n"),
         {"tz": "UTC"}, vio.read_trades, 3),
    ]


@pytest.mark.parametrize("date", IMPOSSIBLE)
def test_28_7_impossible_calendar_dates_refused_by_every_reader(tmp_path, date) -> None:
    for path, kw, reader, line in _impossible_files(tmp_path, date):
        name = os.path.basename(path)
        with pytest.raises(ValueError, match=rf"{name} line {line}: timestamp"):
            reader(path, **kw)
        with pytest.raises(ValueError, match=rf"<file object> line {line}: timestamp"):
            reader(io.BytesIO(Path(path).read_bytes()), format="legacy" if name.endswith(".txt")
                   else "csv", **kw)


def test_28_7_real_leap_day_is_read(tmp_path) -> None:
    for path, kw, reader, line in _impossible_files(tmp_path, "20240229"):
        t = reader(path, **kw).timestamp
        assert t[-1] == int(dt.datetime(2024, 2, 29, 18, tzinfo=UTC).timestamp()) * 10**9, path


# --------------------------------------------------------------------------- 28.6


_SIGINT_CODE = """
import sys, vpoc.io as v
print("go", flush=True)
v.read_bars(sys.argv[1])
print("done", flush=True)
"""


def _big_csv(path: Path, size: int = 150_000_000) -> None:
    """Minute-varying ISO bars written as one day's text per block (fast: no per-row Python work
    beyond the first day)."""
    secs = range(86_400)
    day = "".join(f"DDDDDDDDDDT{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z,"
                  f"{4000 + s % 997 * 0.25},{4001.5 + s % 997 * 0.25},{3999 + s % 997 * 0.25},"
                  f"{4000.25 + s % 997 * 0.25},{s % 1000}\n" for s in secs).encode()
    d, n = dt.date(2025, 1, 1), 0
    with open(path, "wb") as fh:
        fh.write((HEADER + "\n").encode())
        while n < size:
            fh.write(day.replace(b"DDDDDDDDDD", d.isoformat().encode()))
            n += len(day)
            d += dt.timedelta(days=1)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_28_6_sigint_interrupts_a_large_csv_read_within_a_second(tmp_path) -> None:
    path = Path("/tmp") / f"vpoc_sigint_{os.getpid()}.csv"
    try:
        _big_csv(path)
        waits = []
        for delay in (0.8, 2.5):
            p = subprocess.Popen([sys.executable, "-c", _SIGINT_CODE, str(path)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 preexec_fn=default_sigint)
            try:
                assert p.stdout.readline().strip() == "go"
                time.sleep(delay)
                t0 = time.monotonic()
                p.send_signal(signal.SIGINT)
                out, err = p.communicate(timeout=120)
                waits.append(time.monotonic() - t0)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            assert "done" not in out, "the read finished before the signal: make the file larger"
            assert "KeyboardInterrupt" in err, err[-2000:]
        assert max(waits) < 1.5, waits
    finally:
        if path.exists():
            path.unlink()


@pytest.mark.parametrize("header, column", [
    ("timestamp,open,high,low,close,close,volume", "close"),
    ("timestamp,open,high,low,Close,close,volume", "close"),
    ("timestamp,open,high,low,close,volume,Vol,vol", "vol"),
    ("timestamp,Open,high,low,close,volume,OPEN", "OPEN"),
    ("timestamp,timestamp,open,high,low,close,volume", "timestamp"),
    ("Date,Time,date,open,high,low,close,volume", "date"),
])
def test_28_6_duplicated_columns_refused(tmp_path, header, column) -> None:
    n = header.count(",") + 1
    row = ",".join(["2025-01-02T17:00:00Z"] * (2 if header.startswith("timestamp,timestamp") else 1)
                   + ["1"] * (n - (2 if header.startswith("timestamp,timestamp") else 1)))
    path = write(tmp_path / "dup.csv", f"{header}\n{row}\n")
    with pytest.raises(ValueError, match=rf"dup\.csv line 1: column '{column}' appears twice"):
        vio.read_bars(path, tz="UTC")


def test_28_6_duplicated_trade_price_refused(tmp_path) -> None:
    path = write(tmp_path / "dup.csv", "timestamp,price,price,volume\n2025-01-02T17:00:00Z,1,2,3\n")
    with pytest.raises(ValueError, match=r"column 'price' appears twice"):
        vio.read_trades(path)


# --------------------------------------------------------------------------- 23.7 aliases


def test_23_7_vendor_column_aliases(tmp_path) -> None:
    t0 = int(dt.datetime(2025, 1, 2, 17, tzinfo=UTC).timestamp()) * 10**9
    ref = {"timestamp": [t0, t0 + 60 * 10**9], "open": [1.0, 1.25], "high": [2.0, 2.25],
           "low": [0.5, 0.75], "close": [1.5, 1.75], "volume": [218, 7]}
    files = {
        "databento_ns.csv": "ts_event,open,high,low,close,volume\n"
                            f"{t0},1,2,0.5,1.5,218\n{t0 + 60 * 10**9},1.25,2.25,0.75,1.75,7\n",
        "databento_iso.csv": "ts_event,open,high,low,close,volume\n"
                             "2025-01-02T17:00:00.000000000Z,1,2,0.5,1.5,218\n"
                             "2025-01-02T17:01:00.000000000Z,1.25,2.25,0.75,1.75,7\n",
        "split.csv": "Date,Time,Open,High,Low,Last,Volume\n2025-01-02,17:00:00,1,2,0.5,1.5,218\n"
                     "2025-01-02,17:01:00,1.25,2.25,0.75,1.75,7\n",
        "vol.csv": "datetime,Open,High,Low,Last,Vol\n2025-01-02 17:00:00,1,2,0.5,1.5,218\n"
                   "2025-01-02 17:01:00,1.25,2.25,0.75,1.75,7\n",
    }
    for name, body in files.items():
        check(vio.read_bars(write(tmp_path / name, body), tz="UTC"), ref)
    df = pd.DataFrame({"ts_event": np.array(ref["timestamp"], dtype=np.int64),
                       **{k: ref[k] for k in ("open", "high", "low", "close", "volume")}})
    check(vio.read_bars(df), ref)
    tr = vio.read_trades(write(tmp_path / "tr.csv", "ts_event,Last,Volume\n"
                               f"{t0},1.5,218\n{t0 + 60 * 10**9},1.75,7\n"))
    assert tr.timestamp.tolist() == ref["timestamp"] and tr.price.tolist() == [1.5, 1.75]
    # an explicit unit still wins, and a wrong one is named
    with pytest.raises(ValueError, match="x.csv line 2: timestamp .* s is out of the int64 nanosecond range"):
        vio.read_bars(write(tmp_path / "x.csv", files["databento_ns.csv"]), time_unit="s")
