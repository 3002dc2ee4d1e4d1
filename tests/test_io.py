"""Tests of vpoc.io: round trips through every format, an independent plain-Python parser of
the legacy and ISO text formats, flexible column names, and errors naming file and line.

The references below build the expected values with ``datetime``/``zoneinfo`` and ``float()``
from the text they write; they do not call vpoc.
"""

from __future__ import annotations

import datetime as dt
import gzip
import os
from pathlib import Path
from typing import List, Tuple
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from hypothesis import given, strategies as st

import _deps
import vpoc

pd = _deps.require("pandas")  # vpoc.io reads through pandas
pl = _deps.module("polars")  # tests that use these are marked _deps.needs(...)
pa = _deps.module("pyarrow")

from vpoc import io as vio
from vpoc import sessions as vsessions

CHI = "America/Chicago"
FIELDS = ("timestamp", "open", "high", "low", "close", "volume")


def ns(iso: str) -> int:
    t = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return int(t.timestamp()) * 10**9 + t.microsecond * 1000


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def assert_bars_equal(a: vio.Bars, b: object) -> None:
    for f in FIELDS:
        x, y = getattr(a, f), np.asarray(getattr(b, f))
        assert np.array_equal(x, y), f
    assert a.volume.dtype == (np.int64 if np.asarray(b.volume).dtype.kind in "iu" else np.float64)


@pytest.fixture(scope="module")
def synth_bars() -> vpoc.synth.SynthBars:
    return vpoc.synth.es_bars(3, bars_per_session=200, seed=11)


@pytest.fixture(scope="module")
def odd_bars() -> vio.Bars:
    """Float volumes, off-grid prices with long decimal expansions, second-resolution times
    across the 2025 spring-forward weekend."""
    rng = np.random.default_rng(7)
    n = 500
    t = ns("2025-03-07T20:00Z") + np.cumsum(rng.integers(1, 900, n)) * 10**9
    low = 5000 + rng.random(n) * 10
    high = low + rng.random(n) * 3
    op = low + (high - low) * rng.random(n)
    cl = low + (high - low) * rng.random(n)
    vol = rng.random(n) * 1e3
    vol[::7] = 0.0
    return vio.Bars(t, op, high, low, cl, vol, source="odd")


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("name, write_kw, read_kw", [
    ("bars.txt", {"tz": CHI}, {"tz": CHI}),
    ("bars.txt.gz", {"tz": "Europe/London"}, {"tz": "Europe/London"}),
    ("bars.csv", {}, {}),
    ("bars_local.csv", {"tz": CHI}, {}),
    ("bars.csv.bz2", {}, {}),
    pytest.param("bars.parquet", {}, {}, marks=_deps.needs("pyarrow")),
    pytest.param("bars_local.pq", {"tz": CHI}, {}, marks=_deps.needs("pyarrow")),
])
@pytest.mark.parametrize("which", ["synth_bars", "odd_bars"])
def test_file_round_trip(tmp_path, request, which, name, write_kw, read_kw) -> None:
    bars = request.getfixturevalue(which)
    path = tmp_path / name
    vio.write_bars(bars, path, **write_kw)
    got = vio.read_bars(path, **read_kw)
    assert_bars_equal(got, bars)
    assert got.source == str(path) and len(got) == len(bars)


@_deps.needs("polars", "pyarrow")
def test_dataframe_round_trips(synth_bars, odd_bars) -> None:
    for bars in (synth_bars, odd_bars):
        b = vio.Bars(*(getattr(bars, f) for f in FIELDS))
        df = b.to_pandas()
        assert str(df["timestamp"].dtype) == "datetime64[ns, UTC]"
        for src in (df, b.to_pandas(index=True), pl.from_pandas(df), pl.from_pandas(df).lazy(),
                    pa.Table.from_pandas(df)):
            got = vio.read_bars(src)
            assert_bars_equal(got, bars)
            assert got.source == "<DataFrame>"
        local = df.assign(timestamp=df["timestamp"].dt.tz_convert(CHI))
        assert_bars_equal(vio.read_bars(local), bars)
        assert_bars_equal(vio.read_bars(pl.from_pandas(local)), bars)


@_deps.needs("polars", "pyarrow")
def test_trades_round_trips(tmp_path) -> None:
    rng = np.random.default_rng(3)
    n = 400
    t = ns("2025-11-01T00:00Z") + np.cumsum(rng.integers(0, 10**12, n))  # ns resolution, ties
    tr = vio.Trades(t, 5000 + rng.integers(-40, 40, n) * 0.25, rng.integers(1, 50, n))
    for name, kw in [("t.csv", {}), ("t.parquet", {}), ("t_local.csv", {"tz": CHI}),
                     ("t.csv.xz", {})]:
        vio.write_trades(tr, tmp_path / name, **kw)
        got = vio.read_trades(tmp_path / name)
        for f in ("timestamp", "price", "volume"):
            assert np.array_equal(getattr(got, f), getattr(tr, f)), (name, f)
        assert got.volume.dtype == np.int64
    df = tr.to_pandas()
    for src in (df, pl.from_pandas(df), tr.to_pandas(index=True)):
        got = vio.read_trades(src)
        assert np.array_equal(got.timestamp, t) and np.array_equal(got.price, tr.price)
    named = df.rename(columns={"price": "Last", "volume": "Size", "timestamp": "Time"})
    assert np.array_equal(vio.read_trades(named).volume, tr.volume)
    assert "Trades(400 rows" in repr(tr)


def test_legacy_fall_back_round_trip(tmp_path) -> None:
    # one-minute bars through the repeated hour of 2025-11-02 (01:00-01:59 twice in Chicago)
    t = np.arange(ns("2025-11-02T05:00Z"), ns("2025-11-02T08:00Z"), 60 * 10**9)
    one = np.ones(len(t))
    bars = vio.Bars(t, one, one, one, one, np.arange(len(t)))
    path = tmp_path / "fall.txt"
    vio.write_bars(bars, path, tz=CHI)
    lines = path.read_text().splitlines()
    assert lines[60].startswith("20251102 010000;") and lines[120].startswith("20251102 010000;")
    with pytest.raises(ValueError, match=r"fall\.txt line 61: 2025-11-02 01:00:00 is ambiguous"):
        vio.read_bars(path, tz=CHI)
    assert_bars_equal(vio.read_bars(path, tz=CHI, ambiguous="infer"), bars)
    # earliest/latest map both occurrences to one instant: the rows are then out of order
    with pytest.raises(ValueError, match=r"line 121: timestamp 2025-11-02T06:00:00Z is before"):
        vio.read_bars(path, tz=CHI, ambiguous="earliest")
    half = tmp_path / "half.txt"  # only the first occurrence of 01:00-01:29
    half.write_text("\n".join(lines[:90]) + "\n")
    early = vio.read_bars(half, tz=CHI, ambiguous="earliest").timestamp
    late = vio.read_bars(half, tz=CHI, ambiguous="latest").timestamp
    assert np.array_equal(early, t[:90])
    assert np.array_equal(late, np.r_[t[:60], t[60:90] + 3600 * 10**9])


def test_nonexistent_local_times(tmp_path) -> None:
    path = write(tmp_path / "spring.txt", "20250309 015900;1;1;1;1;1\n20250309 023000;1;1;1;1;1\n"
                 "20250309 030000;1;1;1;1;1\n")
    with pytest.raises(ValueError, match=r"spring\.txt line 2: 2025-03-09 02:30:00 does not exist"):
        vio.read_bars(path, tz=CHI)
    with pytest.warns(vio.DuplicateRowsWarning, match="1 of 3 bars are exact duplicates"):  # 02:30 -> 03:00
        fwd = vio.read_bars(path, tz=CHI, nonexistent="shift_forward").timestamp
    back = vio.read_bars(path, tz=CHI, nonexistent="shift_backward").timestamp
    assert fwd.tolist() == [ns("2025-03-09T07:59Z"), ns("2025-03-09T08:00Z"), ns("2025-03-09T08:00Z")]
    assert back[1] == ns("2025-03-09T08:00Z") - 1


@_deps.needs("pyarrow")
def test_list_of_files(tmp_path, synth_bars) -> None:
    paths = []
    for k, (a, b) in enumerate([(0, 200), (200, 401), (401, 600)]):
        part = vio.Bars(*(getattr(synth_bars, f)[a:b] for f in FIELDS))
        p = tmp_path / f"part{k}.{['txt', 'csv', 'parquet'][k]}"
        vio.write_bars(part, p, tz=CHI)
        paths.append(p)
    got = vio.read_bars(paths, tz=CHI)
    assert_bars_equal(got, synth_bars)
    assert got.source == f"{paths[0]} .. {paths[2]} (3 files)"
    with pytest.raises(ValueError, match=r"part0\.txt line 1: timestamp .* is before the last row "
                                         r"of .*part1\.csv"):
        vio.read_bars([paths[1], paths[0]], tz=CHI)
    # integer and float volumes: the result is float64
    flt = tmp_path / "float.csv"
    vio.write_bars(vio.Bars(synth_bars.timestamp[-1:] + 60 * 10**9, [1.0], [1.0], [1.0], [1.0],
                            [0.5]), flt)
    mixed = vio.read_bars(paths + [flt], tz=CHI)
    assert mixed.volume.dtype == np.float64 and mixed.volume[-1] == 0.5
    assert np.array_equal(mixed.volume[:-1], synth_bars.volume)


# --------------------------------------------------------------------------- independent parser


_ZONE_NAMES = ["America/Chicago", "Europe/Berlin", "UTC", "Asia/Kolkata"]
_price = st.integers(-10**7, 10**9).map(lambda k: k / 64) | st.floats(-1e6, 1e6, allow_nan=False)


def _safe_wall(d: dt.datetime, zone: ZoneInfo) -> bool:
    """True when the wall time exists exactly once in the zone (no DST gap or fold)."""
    a = d.replace(tzinfo=zone, fold=0)
    b = d.replace(tzinfo=zone, fold=1)
    return a.utcoffset() == b.utcoffset() and a.astimezone(dt.timezone.utc).astimezone(zone).replace(
        tzinfo=None) == d


@given(
    seconds=st.lists(st.integers(0, 2 * 365 * 86400), min_size=1, max_size=40),
    zone=st.sampled_from(_ZONE_NAMES),
    rows=st.lists(st.tuples(_price, st.floats(0, 50), st.floats(0, 1), st.floats(0, 1),
                            st.integers(0, 2**40)), min_size=40, max_size=40),
)
def test_legacy_text_vs_plain_parser(tmp_path_factory, seconds, zone, rows) -> None:
    tz = ZoneInfo(zone)
    walls = sorted(dt.datetime(2024, 1, 1) + dt.timedelta(seconds=s) for s in seconds)
    walls = [w for w in walls if _safe_wall(w, tz)]
    lines: List[str] = []
    expected: List[Tuple[int, float, float, float, float, int]] = []
    for w, (low, span, fo, fc, vol) in zip(walls, rows):
        high = low + span
        op, cl = low + fo * span, low + fc * span
        if not (low <= op <= high and low <= cl <= high):
            continue
        fields = [w.strftime("%Y%m%d %H%M%S"), repr(op), repr(high), repr(low), repr(cl), str(vol)]
        lines.append(";".join(fields))
        utc = int(w.replace(tzinfo=tz).timestamp()) * 10**9
        expected.append((utc, float(fields[1]), float(fields[2]), float(fields[3]),
                         float(fields[4]), int(fields[5])))
    path = tmp_path_factory.mktemp("legacy") / "x.txt"
    path.write_text("\n".join(lines) + ("\n" if lines else ""))
    got = vio.read_bars(path, tz=zone, strict_ohlc=True)
    assert len(got) == len(expected)
    for k, f in enumerate(FIELDS):
        assert got.__getattribute__(f).tolist() == [e[k] for e in expected], f
    assert got.volume.dtype == np.int64


@given(
    stamps=st.lists(st.datetimes(dt.datetime(1990, 1, 1), dt.datetime(2060, 1, 1)), min_size=1,
                    max_size=30),
    offsets=st.lists(st.integers(-14 * 60, 14 * 60), min_size=30, max_size=30),
    vols=st.lists(st.floats(0, 1e12), min_size=30, max_size=30),
)
def test_iso_csv_with_offsets_vs_plain_parser(tmp_path_factory, stamps, offsets, vols) -> None:
    aware = [s.replace(tzinfo=dt.timezone(dt.timedelta(minutes=o))) for s, o in zip(stamps, offsets)]
    aware.sort(key=lambda a: a.astimezone(dt.timezone.utc))
    text = ["time;o;h;l;c;vol"]
    for a, v in zip(aware, vols):
        text.append(f"{a.isoformat()};1.5;2;1;1.25;{v!r}")
    path = tmp_path_factory.mktemp("iso") / "x.csv"
    path.write_text("\n".join(text) + "\n")
    got = vio.read_bars(path)
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    want = [(a - epoch) // dt.timedelta(microseconds=1) * 1000 for a in aware]
    assert got.timestamp.tolist() == want
    assert got.volume.tolist() == [float(repr(v)) for v in vols[:len(aware)]]
    assert got.volume.dtype == np.float64


# --------------------------------------------------------------------------- column names


HEADER_VARIANTS = [
    ("timestamp,open,high,low,close,volume", "{ts},1.25,2.5,1,2,7"),
    ("Timestamp,Open,High,Low,Close,Volume", "{ts},1.25,2.5,1,2,7"),
    ("DATETIME;OPEN;HIGH;LOW;CLOSE;VOLUME", "{ts};1.25;2.5;1;2;7"),
    ("Date,Time,Open,High,Low,Close,Vol", "{date},{time},1.25,2.5,1,2,7"),
    ("date\ttime\to\th\tl\tc\tv", "{date}\t{time}\t1.25\t2.5\t1\t2\t7"),
    ("Time|Open Price|High Price|Low Price|Close Price|Volume", "{ts}|1.25|2.5|1|2|7"),
    ("ts,open,high,low,last,volume,session,notes", "{ts},1.25,2.5,1,2,7,20250310,x"),
    ("Date Time,O,H,L,C,V", "{ts},1.25,2.5,1,2,7"),
]


@pytest.mark.parametrize("header, row", HEADER_VARIANTS)
def test_flexible_csv_headers(tmp_path, header, row) -> None:
    stamps = ["2025-03-10 08:30:00", "2025-03-10 08:31:00"]
    body = []
    for s in stamps:
        date, time = s.split(" ")
        body.append(row.format(ts=s, date=date, time=time))
    path = write(tmp_path / "x.csv", header + "\n" + "\n".join(body) + "\n")
    got = vio.read_bars(path, tz=CHI)
    assert got.timestamp.tolist() == [ns("2025-03-10T13:30Z"), ns("2025-03-10T13:31Z")]
    assert got.open.tolist() == [1.25, 1.25] and got.close.tolist() == [2.0, 2.0]
    assert got.volume.tolist() == [7, 7] and got.volume.dtype == np.int64


@_deps.needs("pyarrow")
def test_columns_mapping_and_dataframe_shapes(tmp_path) -> None:
    df = pd.DataFrame({"Zeit": ["2025-03-10T13:30:00Z"], "Eroeffnung": [1.0], "Hoch": [2.0],
                       "Tief": [0.5], "Schluss": [1.5], "Umsatz": [3]})
    cols = {"timestamp": "Zeit", "open": "Eroeffnung", "high": "Hoch", "low": "Tief",
            "close": "Schluss", "volume": "Umsatz"}
    got = vio.read_bars(df, columns=cols)
    assert got.timestamp.tolist() == [ns("2025-03-10T13:30Z")] and got.volume.tolist() == [3]
    df.to_csv(tmp_path / "de.csv", index=False)
    assert vio.read_bars(tmp_path / "de.csv", columns=cols).close.tolist() == [1.5]
    split = pd.DataFrame({"D": ["2025-03-10"], "T": ["08:30"], "open": [1.0], "high": [2.0],
                          "low": [0.5], "close": [1.5], "volume": [3.5]})
    got = vio.read_bars(split, columns={"timestamp": ("D", "T")}, tz=CHI)
    assert got.timestamp.tolist() == [ns("2025-03-10T13:30Z")] and got.volume.dtype == np.float64
    # a naive unnamed DatetimeIndex, pandas nullable and pyarrow-backed dtypes
    idx = pd.DataFrame({"open": pd.array([1.0], dtype="Float64"), "high": [2.0],
                        "low": pd.array([0.5], dtype="float64[pyarrow]"), "close": [1.5],
                        "volume": pd.array([4], dtype="Int64")},
                       index=pd.DatetimeIndex(["2025-03-10 08:30"]))
    got = vio.read_bars(idx, tz=CHI)
    assert got.timestamp.tolist() == [ns("2025-03-10T13:30Z")] and got.volume.dtype == np.int64
    idx.to_parquet(tmp_path / "idx.parquet")
    assert vio.read_bars(tmp_path / "idx.parquet", tz=CHI).timestamp.tolist() == got.timestamp.tolist()
    # numeric epoch timestamps need time_unit
    ep = pd.DataFrame({"timestamp": [1741613400], "open": [1], "high": [2], "low": [0],
                       "close": [1], "volume": [1]})
    assert vio.read_bars(ep, time_unit="s").timestamp.tolist() == [ns("2025-03-10T13:30Z")]
    assert vio.read_bars(ep.assign(timestamp=[1741613400000]), time_unit="ms").timestamp[0] == \
        ns("2025-03-10T13:30Z")
    with pytest.raises(TypeError, match="holds integers; pass time_unit="):
        vio.read_bars(ep)
    epcsv = write(tmp_path / "ep.csv", "time,open,high,low,close,volume\n1741613400,1,2,0,1,1\n")
    assert vio.read_bars(epcsv, time_unit="s").timestamp.tolist() == [ns("2025-03-10T13:30Z")]
    with pytest.raises(ValueError, match=r"ep\.csv line 2: .*looks like seconds since the epoch: pass time_unit='s'"):
        vio.read_bars(epcsv)
    # python datetime objects, aware
    objs = pd.DataFrame({"timestamp": [dt.datetime(2025, 3, 10, 8, 30, tzinfo=ZoneInfo(CHI))],
                         "open": [1], "high": [2], "low": [0], "close": [1], "volume": [1]},
                        dtype=object)
    assert vio.read_bars(objs).timestamp.tolist() == [ns("2025-03-10T13:30Z")]
    # custom time_format
    us = write(tmp_path / "us.csv", "Date,Open,High,Low,Close,Volume\n03/10/2025 08:30,1,2,0,1,1\n")
    got = vio.read_bars(us, tz=CHI, time_format="%m/%d/%Y %H:%M")
    assert got.timestamp.tolist() == [ns("2025-03-10T13:30Z")]
    # without it, the error names the common formats that parse every stamp (as vpoc.io.inspect does):
    # both day/month orders when the dates cannot tell, the one that fits when they can
    with pytest.raises(ValueError, match=r"us\.csv line 2: timestamp does not match ISO 8601.*day and month cannot "
                                         r"be told apart\): pass one of time_format='%m/%d/%Y %H:%M' or "
                                         r"time_format='%d/%m/%Y %H:%M'"):
        vio.read_bars(us, tz=CHI)
    # a given format with day and month swapped (a new-user pass: dd/mm given for an mm/dd file read 3 days
    # as 3 months, exit 0): a warning when only the swapped reading has no month-long jumps between rows
    days = "".join(f"01/0{d}/2019 {h:02d}:00,1,2,0,1,1\n" for d in (2, 3, 4) for h in (9, 10))
    mmdd = write(tmp_path / "mmdd.csv", "Date,Open,High,Low,Close,Volume\n" + days)
    with pytest.warns(UserWarning, match=r"mmdd\.csv: time_format='%d/%m/%Y %H:%M' reads consecutive rows about a "
                                         r"month apart 2 times in the first 6 rows; "
                                         r"time_format='%m/%d/%Y %H:%M'.*likely swapped"):
        vio.read_bars(mmdd, tz=CHI, time_format="%d/%m/%Y %H:%M")
    assert len(vio.read_bars(mmdd, tz=CHI, time_format="%m/%d/%Y %H:%M").timestamp) == 6  # the right one: silent
    eu = write(tmp_path / "eu.csv", "Date,Open,High,Low,Close,Volume\n13.03.2025 08:30,1,2,0,1,1\n")
    with pytest.raises(ValueError, match=r"; time_format='%d\.%m\.%Y %H:%M' parses every timestamp$"):
        vio.read_bars(eu, tz=CHI)
    # aware data ignores tz=
    assert vio.read_bars(df, columns=cols, tz="Asia/Tokyo").timestamp.tolist() == \
        [ns("2025-03-10T13:30Z")]


def test_format_sniffing(tmp_path) -> None:
    legacy = "20250310 083000;1;2;0.5;1.5;3\n"
    for name in ("a.csv", "a.dat", "a"):
        got = vio.read_bars(write(tmp_path / name, legacy), tz=CHI)
        assert got.timestamp.tolist() == [ns("2025-03-10T13:30Z")], name
    with gzip.open(tmp_path / "z.dat.gz", "wt") as fh:
        fh.write(legacy)
    assert len(vio.read_bars(tmp_path / "z.dat.gz", tz=CHI)) == 1
    csv = write(tmp_path / "h.txt", "timestamp,open,high,low,close,volume\n")
    with pytest.raises(ValueError, match=r"h\.txt line 1: field 'open' is empty or missing"):
        vio.read_bars(csv, tz=CHI)  # .txt is the legacy format
    assert len(vio.read_bars(csv, format="csv")) == 0
    with pytest.raises(ValueError, match="cannot tell the format"):
        vio.read_bars(write(tmp_path / "b.json", "{}"))


def test_empty_sources(tmp_path) -> None:
    assert len(vio.read_bars(write(tmp_path / "e.txt", ""), tz=CHI)) == 0
    empty_csv = vio.read_bars(write(tmp_path / "e.csv", "timestamp,open,high,low,close,volume\n"))
    assert len(empty_csv) == 0 and empty_csv.timestamp.dtype == np.int64
    assert len(vio.read_bars(pd.DataFrame({f: [] for f in FIELDS}))) == 0
    blank = write(tmp_path / "blank.txt", "\n20250310 083000;1;2;0.5;1.5;3\n\n   \n"
                                          "20250310 083100;1;2;0.5;1.5;4\n\n")
    assert vio.read_bars(blank, tz=CHI).volume.tolist() == [3, 4]


# --------------------------------------------------------------------------- malformed input

GOOD = ["20250310 083000;1;2;0.5;1.5;3", "20250310 083100;1;2;0.5;1.5;3",
        "20250310 083200;1;2;0.5;1.5;3"]

LEGACY_BAD = [
    ("20250310 083100;1;2;0.5;1.5;3;9", "expected 6 ';'-separated fields .*found 7"),
    ("20250310 083100;1;2;0.5;1.5", "field 'volume' is empty or missing"),
    ("20250310 083100;1;2;0.5;;3", "field 'close' is empty or missing"),
    ("20250310 083100;1;2;abc;1.5;3", "low = 'abc' is not a number"),
    ("20250310 083100;1;2;nan;1.5;3", r"low is nan \(prices must be finite\)"),
    ("20250310 083100;1;inf;0.5;1.5;3", r"high is inf \(prices must be finite\)"),
    ("20250310 083100;1;0.4;0.5;1.5;3", r"high \(0.4\) < low \(0.5\)"),
    ("20250310 083100;1;2;0.5;1.5;-3", r"volume is -3 \(must be finite and >= 0\)"),
    ("20250310 083100;1;2;0.5;1.5;x", "volume = 'x' is not a number"),
    ("20250310 083100;1;2;0.5;1.5;nan", r"volume is nan \(must be finite and >= 0\)"),
    ("20250310 086100;1;2;0.5;1.5;3", "timestamp does not match '%Y%m%d %H%M%S'"),
    ("20250230 083100;1;2;0.5;1.5;3", "timestamp does not match"),
    ("20250300 083100;1;2;0.5;1.5;3", "timestamp does not match"),  # 28.7: day 00
    ("20250010 083100;1;2;0.5;1.5;3", "timestamp does not match"),  # month 00
    ("20251310 083100;1;2;0.5;1.5;3", "timestamp does not match"),  # month 13
    ("20250431 083100;1;2;0.5;1.5;3", "timestamp does not match"),  # April 31
    ("20250310 240000;1;2;0.5;1.5;3", "timestamp does not match"),  # hour 24
    ("00010101 083100;1;2;0.5;1.5;3", r"timestamp '00010101 083100': year 1 is outside 1678\.\.2261"),
    # 28.4: years 1 and 9999 wrapped to 1754 and 1816 before
    ("99991231 083100;1;2;0.5;1.5;3", "timestamp .99991231 083100.: year 9999 is outside"),
    ("2025031 0083100;1;2;0.5;1.5;3", "timestamp does not match"),
    ("20250310 082900;1;2;0.5;1.5;3", "timestamp 2025-03-10T13:29:00Z is before the previous row"),
]


@pytest.mark.parametrize("line, match", LEGACY_BAD)
def test_legacy_malformed_names_file_and_line(tmp_path, line, match) -> None:
    # line numbers count every line of the file, the blank line 2 included
    path = write(tmp_path / "bad.txt", "\n".join([GOOD[0], "", line, GOOD[2]]) + "\n")
    with pytest.raises(ValueError, match=r"bad\.txt line 3: " + match):
        vio.read_bars(path, tz=CHI)


CSV_BAD = [
    ("2025-03-10T13:31:00Z,1,2,0.5,1.5,3,9", "expected 6 ','-separated fields .*found 7"),
    ("2025-03-10T13:31:00Z,1,2,abc,1.5,3", "low = 'abc' is not a number"),
    ("2025-03-10T13:31:00Z,1,2,,1.5,3", "low = '' is not a number"),
    ("2025-03-10T13:31:00Z,1,0.4,0.5,1.5,3", r"high \(0.4\) < low \(0.5\)"),
    ("2025-03-10T13:31:00Z,1,2,0.5,1.5,-1.5", r"volume is -1.5"),
    ("2025-03-10 13:31:00,1,2,0.5,1.5,3", "timestamp '2025-03-10 13:31:00' has no UTC offset but .* line 2 does"),
    ("2025-03-10T13:31:00+01:00,1,2,0.5,1.5,3", "timestamp 2025-03-10T12:31:00Z is before the previous"),
    ("yesterday,1,2,0.5,1.5,3", "timestamp does not match ISO 8601"),
    (",1,2,0.5,1.5,3", "timestamp is empty or missing"),
]


@pytest.mark.parametrize("line, match", CSV_BAD)
def test_csv_malformed_names_file_and_line(tmp_path, line, match) -> None:
    rows = ["timestamp,open,high,low,close,volume", "2025-03-10T13:30:00Z,1,2,0.5,1.5,3", line,
            "2025-03-10T13:32:00Z,1,2,0.5,1.5,3"]
    path = write(tmp_path / "bad.csv", "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"bad\.csv line 3: " + match):
        vio.read_bars(path)


@_deps.needs("polars", "pyarrow")
def test_dataframe_and_parquet_errors_name_the_row(tmp_path) -> None:
    t = pd.to_datetime(["2025-03-10 13:30", "2025-03-10 13:31", "2025-03-10 13:32"], utc=True)
    df = pd.DataFrame({"timestamp": t, "open": [1.0, 1, 1], "high": [2.0, 2, 2],
                       "low": [0.5, 0.5, 0.5], "close": [1.5, 1.5, 1.5], "volume": [1, 2, 3]})
    cases = [
        (df.assign(low=[0.5, 3.0, 0.5]), r"row 1: high \(2.0\) < low \(3.0\)"),
        (df.assign(close=[1.5, 1.5, np.nan]), "row 2: close is nan"),
        (df.assign(volume=pd.array([1, None, 3], dtype="Int64")), "row 1: volume is (missing|nan)"),
        (df.assign(volume=[1.0, -np.inf, 3.0]), "row 1: volume is -inf"),
        (df.assign(timestamp=t[::-1]), "row 1: timestamp .* is before the previous row"),
        (df.assign(timestamp=[t[0], pd.NaT, t[2]]), "row 1: timestamp is missing"),
        (df.assign(open=["1", "x", "1"]), "row 1: open = 'x' is not a number"),
    ]
    for frame, match in cases:
        with pytest.raises(ValueError, match=r"<DataFrame> " + match):
            vio.read_bars(frame)
        with pytest.raises(ValueError, match=r"<DataFrame> " + match):
            vio.read_bars(pl.from_pandas(frame))
        frame.to_parquet(tmp_path / "bad.parquet")
        with pytest.raises(ValueError, match=r"bad\.parquet " + match):
            vio.read_bars(tmp_path / "bad.parquet")
    with pytest.raises(ValueError, match=r"row 1: open \(3.0\) is outside \[low, high\]"):
        vio.read_bars(df.assign(open=[1.0, 3.0, 1.0]), strict_ohlc=True)
    assert len(vio.read_bars(df.assign(open=[1.0, 3.0, 1.0]))) == 3  # default: only high >= low
    with pytest.raises(ValueError, match="row 1: price is inf"):
        vio.read_trades(pd.DataFrame({"timestamp": t, "price": [1, np.inf, 2], "size": [1, 1, 1]}))


@_deps.needs("polars")
def test_naive_timestamps_need_tz(tmp_path) -> None:
    naive = write(tmp_path / "n.csv", "timestamp,open,high,low,close,volume\n"
                                      "2025-03-10 08:30:00,1,2,0.5,1.5,3\n")
    with pytest.raises(ValueError, match=r"n\.csv: timestamps have no time zone; pass tz="):
        vio.read_bars(naive)
    with pytest.raises(ValueError, match=r"legacy format stores local wall-clock times; pass tz="):
        vio.read_bars(write(tmp_path / "l.txt", GOOD[0] + "\n"))
    df = pd.DataFrame({"timestamp": pd.to_datetime(["2025-03-10 08:30"]), "open": [1.0],
                       "high": [2.0], "low": [1.0], "close": [1.0], "volume": [1]})
    with pytest.raises(ValueError, match="<DataFrame>: timestamps have no time zone"):
        vio.read_bars(df)
    with pytest.raises(ValueError, match="<DataFrame>: timestamps have no time zone"):
        vio.read_bars(pl.from_pandas(df))
    assert vio.read_bars(df, tz="UTC").timestamp.tolist() == [ns("2025-03-10T08:30Z")]


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"format": "xlsx"}, ValueError, "format must be one of"),
    ({"tz": "Nowhere/City"}, ValueError, "tz='Nowhere/City' is not a known time zone"),
    ({"tz": 5}, TypeError, "tz must be a time zone name"),
    ({"ambiguous": "first"}, ValueError, "ambiguous must be one of"),
    ({"nonexistent": "NaT"}, ValueError, "nonexistent must be one of"),
    ({"time_unit": "h"}, ValueError, "time_unit must be one of"),
    ({"time_format": 3}, TypeError, "time_format must be a strftime string"),
    ({"sep": ";;"}, ValueError, "sep must be a single character"),
    ({"columns": ["open"]}, TypeError, "columns must be a mapping"),
    ({"columns": {"Zeit": "timestamp"}}, ValueError, r"unknown field 'Zeit'.*did you mean"),
    ({"columns": {"open": 3}}, TypeError, r"columns\['open'\] must be a column name"),
    ({"columns": {"open": ("a", "b")}}, TypeError, r"columns\['open'\] must be a column name"),
    ({"strict_ohlc": "yes"}, TypeError, "strict_ohlc must be True or False"),
])
def test_bad_options(tmp_path, kwargs, exc, match) -> None:
    path = write(tmp_path / "ok.txt", GOOD[0] + "\n")
    with pytest.raises(exc, match=match):
        vio.read_bars(path, **{"tz": CHI, **kwargs})


def test_bad_sources_and_columns(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        vio.read_bars(tmp_path / "missing.csv")
    with pytest.raises(TypeError, match="path_or_df must be a path"):
        vio.read_bars(42)
    with pytest.raises(TypeError, match=r"path_or_df\[1\] must be a path"):
        vio.read_bars([tmp_path / "a.csv", 3])
    with pytest.raises(ValueError, match="empty list"):
        vio.read_bars([])
    df = pd.DataFrame({"timestamp": pd.to_datetime(["2025-03-10"], utc=True), "open": [1.0],
                       "high": [1.0], "low": [1.0], "close": [1.0], "volume": [1]})
    with pytest.raises(ValueError, match="format='csv' applies to files"):
        vio.read_bars(df, format="csv")
    with pytest.raises(ValueError, match=r"several columns could be 'close' \('close', 'Close'\)"):
        vio.read_bars(df.assign(Close=[1.0]))
    with pytest.raises(ValueError, match=r"no column for 'volume'"):
        vio.read_bars(df.drop(columns="volume"))
    with pytest.raises(ValueError, match=r"columns\['volume'\] = 'qty' is not a column"):
        vio.read_bars(df, columns={"volume": "qty"})
    with pytest.raises(ValueError, match="no timestamp column"):
        vio.read_bars(df.drop(columns="timestamp"))
    with pytest.raises(TypeError, match=r"column 'open' \(open\) is boolean"):
        vio.read_bars(df.assign(open=[True]))
    with pytest.raises(TypeError, match="timestamp column holds floats"):
        vio.read_bars(df.assign(timestamp=[1.5]))
    with pytest.raises(ValueError, match="format='legacy' holds bars, not trades"):
        vio.read_trades(tmp_path / "x.txt", format="legacy")
    with pytest.raises(ValueError, match=r"e\.csv line 1: the CSV file is empty"):
        vio.read_bars(write(tmp_path / "e.csv", ""))
    with pytest.raises(ValueError, match=r"np\.csv line 1: no timestamp column"):
        vio.read_bars(write(tmp_path / "np.csv", "open,high,low,close,volume\n1,1,1,1,1\n"))


@_deps.needs("pyarrow")
def test_not_a_parquet_file(tmp_path) -> None:
    with pytest.raises(ValueError, match="not a readable Parquet file"):
        vio.read_bars(write(tmp_path / "fake.parquet", "not parquet"))


def test_writers_and_containers_reject_bad_input(tmp_path, synth_bars) -> None:
    with pytest.raises(ValueError, match="tz is required for the legacy format"):
        vio.write_bars(synth_bars, tmp_path / "x.txt")
    b = vio.Bars([1], [1.0], [1.0], [1.0], [1.0], [1])
    with pytest.raises(ValueError, match=r"timestamp\[0\] = .* has fractions of a second"):
        vio.write_bars(b, tmp_path / "x.txt", tz="UTC")
    with pytest.raises(ValueError, match="cannot tell the format"):
        vio.write_bars(synth_bars, tmp_path / "x.xlsx")
    with pytest.raises(ValueError, match="format must be one of"):
        vio.write_bars(synth_bars, tmp_path / "x.csv", format="feather")
    with pytest.raises(TypeError, match="path must be a file path"):
        vio.write_bars(synth_bars, 3)
    with pytest.raises(TypeError, match="bars must be vpoc.io.Bars or have"):
        vio.write_bars(object(), tmp_path / "x.csv")
    with pytest.raises(ValueError, match="format='legacy' holds bars"):
        vio.write_trades(vio.Trades([0], [1.0], [1]), tmp_path / "t.txt")
    with pytest.raises(ValueError, match="high has length 2 but timestamp has 1"):
        vio.Bars([0], [1.0], [1.0, 2.0], [1.0], [1.0], [1])
    with pytest.raises(TypeError, match="timestamp must be int64 nanoseconds"):
        vio.Bars([0.5], [1.0], [1.0], [1.0], [1.0], [1])
    with pytest.raises(TypeError, match="source must be a string"):
        vio.Trades([0], [1.0], [1], source=3)
    with pytest.raises(TypeError, match="price must be a numeric array"):
        vio.Trades([0], ["a"], [1])
    dt64 = vio.Bars(np.array(["2025-03-10T13:30"], dtype="datetime64[s]"), [1], [1], [1], [1], [1.5])
    assert dt64.timestamp.tolist() == [ns("2025-03-10T13:30Z")] and dt64.ts is dt64.timestamp
    assert dt64.open.dtype == np.float64 and dt64.volume.dtype == np.float64


@_deps.needs("pandas_market_calendars")
def test_read_then_sessions_then_profiles(tmp_path, synth_bars) -> None:
    path = tmp_path / "es.txt"
    vio.write_bars(synth_bars, path, tz=CHI)
    bars = vio.read_bars(path, tz=CHI)
    s = vsessions.globex(bars)
    assert s.index is None and np.array_equal(s.labels, synth_bars.session_labels)
    prof = vpoc.from_bars(bars.high, bars.low, bars.close, bars.volume, offsets=s.offsets,
                          tick_size=0.25, distribute="close")  # whole volumes: exact sums
    per_session = np.add.reduceat(synth_bars.volume, synth_bars.offsets[:-1])
    assert np.array_equal(prof.total_volume, per_session.astype(np.float64))
    assert os.path.getsize(path) > 0
