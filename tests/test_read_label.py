"""read_bars(label=, interval=) of issue 23.1: Bars.timestamp is always the bar open.

The expected open times are the written close stamps minus the interval, computed here with
``datetime`` arithmetic on the text each test writes; vpoc._time is not called.
"""

from __future__ import annotations

import datetime as dt
import pickle
from pathlib import Path

import numpy as np
import pytest

import _deps

pd = _deps.require("pandas")

import vpoc
from vpoc import io as vio

UTC = dt.timezone.utc
HEADER = "timestamp,open,high,low,close,volume"


def closes(n: int = 30, gap_after: int = 10) -> list:
    """One-minute close stamps with an hour's gap (a halt) after ``gap_after`` bars."""
    t = dt.datetime(2025, 1, 6, 23, 1, tzinfo=UTC)
    out = []
    for i in range(n):
        out.append(t)
        t += dt.timedelta(minutes=61 if i == gap_after - 1 else 1)
    return out


def ns(t: dt.datetime) -> int:
    return int(t.timestamp()) * 10**9


def write_csv(path: Path, stamps: list) -> str:
    rows = [f"{t.strftime('%Y-%m-%dT%H:%M:%SZ')},{6000 + i * 0.25},{6001 + i * 0.25},"
            f"{5999 + i * 0.25},{6000.5 + i * 0.25},{i + 1}" for i, t in enumerate(stamps)]
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    return str(path)


def write_legacy(path: Path, stamps: list) -> str:
    rows = [f"{t.strftime('%Y%m%d %H%M%S')};6000;6001;5999;6000.5;{i + 1}"
            for i, t in enumerate(stamps)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def test_23_1_close_stamps_become_opens_with_given_interval(tmp_path) -> None:
    stamps = closes()
    want = [ns(t - dt.timedelta(seconds=60)) for t in stamps]
    for interval in (60, 60.0, "1min", "60s", dt.timedelta(minutes=1), np.timedelta64(60, "s")):
        bars = vio.read_bars(write_csv(tmp_path / "c.csv", stamps), label="close",
                             interval=interval)
        assert bars.timestamp.tolist() == want
        assert bars.label == "close" and bars.interval == 60.0
    legacy = vio.read_bars(write_legacy(tmp_path / "c.txt", stamps), tz="UTC", label="close",
                           interval=60)
    assert legacy.timestamp.tolist() == want and legacy.label == "close"


def test_23_1_interval_inferred_as_modal_spacing_is_announced(tmp_path) -> None:
    stamps = closes()
    with pytest.warns(vpoc.GuessedDefaultWarning, match=r"c\.csv: .*inferred as 60 s"):
        bars = vio.read_bars(write_csv(tmp_path / "c.csv", stamps), label="close")
    assert bars.timestamp.tolist() == [ns(t - dt.timedelta(minutes=1)) for t in stamps]
    assert bars.interval == 60.0
    five = [stamps[0] + dt.timedelta(minutes=5 * i) for i in range(12)]
    with pytest.warns(vpoc.GuessedDefaultWarning, match="inferred as 300 s"):
        bars = vio.read_bars(write_csv(tmp_path / "f.csv", five), label="close")
    assert bars.timestamp.tolist() == [ns(t - dt.timedelta(minutes=5)) for t in five]
    assert bars.interval == 300.0


def test_23_1_open_label_is_the_default_and_keeps_stamps(tmp_path) -> None:
    stamps = closes()
    path = write_csv(tmp_path / "o.csv", stamps)
    bars = vio.read_bars(path)
    assert bars.timestamp.tolist() == [ns(t) for t in stamps]
    assert bars.label == "open" and bars.interval is None
    bars = vio.read_bars(path, label="open", interval="1min")
    assert bars.timestamp.tolist() == [ns(t) for t in stamps] and bars.interval == 60.0


def test_23_1_frames_and_lists_of_files(tmp_path) -> None:
    stamps = closes(40)
    want = [ns(t - dt.timedelta(minutes=1)) for t in stamps]
    a = write_csv(tmp_path / "a.csv", stamps[:20])
    b = write_csv(tmp_path / "b.csv", stamps[20:])
    assert vio.read_bars([a, b], label="close", interval=60).timestamp.tolist() == want
    df = vio.read_bars(a).to_pandas()
    assert vio.read_bars(df, label="close", interval=60).timestamp.tolist() == want[:20]


def test_23_1_bad_label_and_interval(tmp_path) -> None:
    path = write_csv(tmp_path / "c.csv", closes())
    with pytest.raises(ValueError, match="label must be 'open'"):
        vio.read_bars(path, label="end")
    with pytest.raises(ValueError, match="interval"):
        vio.read_bars(path, label="close", interval=-60)
    with pytest.raises(TypeError, match="interval"):
        vio.read_bars(path, label="close", interval=[60])
    irregular = [closes()[0] + dt.timedelta(seconds=s) for s in (0, 7, 20, 33, 61, 100, 160)]
    with pytest.raises(ValueError, match="pass interval="):
        vio.read_bars(write_csv(tmp_path / "i.csv", irregular), label="close")
    with pytest.raises(ValueError, match="label must be"):
        vio.Bars([0], [1], [1], [1], [1], [1], label="x")
    with pytest.raises(ValueError, match="interval must be a positive"):
        vio.Bars([0], [1], [1], [1], [1], [1], interval=0)


def test_23_1_pickle_repr_and_write_bars_writes_opens(tmp_path) -> None:
    stamps = closes()
    bars = vio.read_bars(write_csv(tmp_path / "c.csv", stamps), label="close", interval=60)
    back = pickle.loads(pickle.dumps(bars))
    assert back.label == "close" and back.interval == 60.0
    assert back.timestamp.tolist() == bars.timestamp.tolist()
    assert "label='close'" in repr(bars) and "interval=60s" in repr(bars)
    out = tmp_path / "opens.csv"
    vio.write_bars(bars, out)
    again = vio.read_bars(str(out))  # what was written are the open times
    assert again.timestamp.tolist() == bars.timestamp.tolist()
    assert again.label == "open"
    empty = tmp_path / "empty.csv"
    empty.write_text(HEADER + "\n")
    e = vio.read_bars(str(empty), label="close")
    assert len(e) == 0 and e.label == "close" and e.interval is None
