"""Tests of vpoc.io.inspect (issue 23 point 2) on synthetic files with the users' conventions.

Contract: the reported zone / label / interval / tick size are checked against how the file was
written (tests/_user_file.py) and the halt counts against a plain zoneinfo computation.
"""

from __future__ import annotations

import datetime as dt
import inspect as pyinspect
import json
import zoneinfo

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

import vpoc  # noqa: E402
from vpoc.io import Inspection, inspect, read_bars  # noqa: E402

from _user_file import user_frame, write_user_file  # noqa: E402

CHI = zoneinfo.ZoneInfo("America/Chicago")


def _opens_via_kwargs(path, kw):
    """read_bars(path, **kw).timestamp; where read_bars has no label= yet, the documented
    conversion (vpoc._time.bar_opens) applied to what it reads."""
    if "label" in pyinspect.signature(read_bars).parameters:
        return read_bars(path, **kw).timestamp
    from vpoc._time import bar_opens

    rest = {k: v for k, v in kw.items() if k not in ("label", "interval")}
    ts = read_bars(path, **rest).timestamp
    return bar_opens(ts, kw.get("label", "open"), kw.get("interval"))[0]


@pytest.fixture(scope="module")
def utc_close(tmp_path_factory):
    return write_user_file(tmp_path_factory.mktemp("u") / "ES 03-25.Last.txt")


def test_23_2_utc_close_legacy(utc_close):
    r = inspect(utc_close["path"])
    assert isinstance(r, Inspection)
    assert (r.tz, r.label, r.interval, r.tick_size) == ("UTC", "close", 60.0, 0.25)
    assert r.confidence == "high"
    assert r.naive and r.rows == utc_close["rows"]
    assert r.read_kwargs == {"tz": "UTC", "label": "close", "interval": 60}
    assert r.cli_args == ["--tz", "UTC", "--label", "close", "--interval", "60"]
    np.testing.assert_array_equal(_opens_via_kwargs(utc_close["path"], r.read_kwargs),
                                  utc_close["open_ns"])
    assert r.stray_rows == 2
    assert r.hours.startswith("bars open 17:00-15:59 America/Chicago, none 16:00-16:59")


def _halt_rows_reference(stamp_ns, wall_tz, label):
    """Rows whose bar opens in 16:00-17:00 Chicago when the UTC file's wall clock is read in
    ``wall_tz`` with ``label`` stamps: plain datetime + zoneinfo, one row at a time."""
    z = zoneinfo.ZoneInfo(wall_tz)
    n = 0
    for s in stamp_ns.tolist():
        wall = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=s // 1000)
        inst = wall.replace(tzinfo=z)
        if label == "close":
            inst = inst - dt.timedelta(seconds=60)
        local = inst.astimezone(CHI)
        n += local.hour == 16
    return n


def test_23_2_rejected_readings_counted_like_reference(utc_close):
    r = inspect(utc_close["path"])
    alt = {(a["tz"], a["label"]): a["halt_rows"] for a in r.alternatives}
    # a close-stamped UTC file read as open stamps: the 16:00 CT bar of every regular stop
    assert alt[("UTC", "open")] == _halt_rows_reference(utc_close["stamp_ns"], "UTC", "open")
    assert alt[("UTC", "open")] > 0
    text = "\n".join(r.evidence)
    assert "rejected tz=UTC, label=open" in text
    assert "Europe/London gives the same stamps" in text   # no UK DST change before Mar 30
    assert "busiest bars (mean volume) open at 08:30 CT (the 08:30 CT RTH open)" in text
    for label in ("open", "close"):   # what the docs' tz="America/Chicago" would do
        n = _halt_rows_reference(utc_close["stamp_ns"], "America/Chicago", label)
        assert alt[("America/Chicago", label)] == n > 0.03 * utc_close["rows"]
    assert "rejected tz=America/Chicago" in text
    assert "first stamp after a pause is mostly 17:01 CT and the last before one 16:00 CT" in text


def test_23_2_inspect_then_globex_keeps_every_session_row(utc_close):
    """The acceptance path: inspect -> read with its kwargs -> vpoc.sessions.globex keeps every
    row of a Globex session (only the 2 Saturday strays are left out), each session as written."""
    pytest.importorskip("pandas_market_calendars")
    import warnings

    r = inspect(utc_close["path"])
    opens = _opens_via_kwargs(utc_close["path"], r.read_kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vpoc.DroppedRowsWarning)
        s = vpoc.sessions.globex(opens)
    assert s.n_dropped == utc_close["stray_rows"] == 2
    exp = utc_close["sessions"]
    assert s.labels.tolist() == sorted(exp)
    first = opens[s.take(np.arange(opens.size))[s.offsets[:-1]]]
    last = opens[s.take(np.arange(opens.size))[s.offsets[1:] - 1]]
    assert first.tolist() == [exp[d]["first_open_ns"] for d in sorted(exp)]
    assert last.tolist() == [exp[d]["last_open_ns"] for d in sorted(exp)]
    assert np.diff(s.offsets).tolist() == [exp[d]["rows"] for d in sorted(exp)]
    ct = pd.DatetimeIndex(first).tz_localize("UTC").tz_convert("America/Chicago")
    assert set(ct.strftime("%H:%M")) == {"17:00"}


@pytest.mark.parametrize("fmt", ["legacy", "csv", "parquet"])
def test_23_2_chicago_open_stamped(tmp_path, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    exp = write_user_file(tmp_path / f"es.{ {'legacy': 'txt'}.get(fmt, fmt) }", fmt=fmt,
                          tz="America/Chicago", label="open")
    r = inspect(exp["path"])
    assert (r.tz, r.label, r.interval, r.tick_size) == ("America/Chicago", "open", 60.0, 0.25)
    assert r.confidence == "high"
    assert r.cli_args == ["--tz", "America/Chicago", "--label", "open", "--interval", "60"]
    assert "mostly 17:00 CT and the last before one 15:59 CT" in "\n".join(r.evidence)
    np.testing.assert_array_equal(_opens_via_kwargs(exp["path"], r.read_kwargs), exp["open_ns"])


def test_23_2_new_york_close_stamped(tmp_path):
    exp = write_user_file(tmp_path / "ny.csv", fmt="csv", tz="America/New_York", label="close")
    r = inspect(exp["path"])
    assert (r.tz, r.label) == ("America/New_York", "close")
    np.testing.assert_array_equal(_opens_via_kwargs(exp["path"], r.read_kwargs), exp["open_ns"])


def test_23_2_aware_timestamps_need_no_tz(tmp_path):
    exp = write_user_file(tmp_path / "aware.csv", fmt="csv", tz="America/Chicago", label="close",
                          aware=True)
    r = inspect(exp["path"])
    assert r.naive is False and r.tz is None and r.label == "close"
    assert "tz" not in r.read_kwargs and "--tz" not in r.cli_args
    assert "no tz= needed" in repr(r)
    np.testing.assert_array_equal(_opens_via_kwargs(exp["path"], r.read_kwargs), exp["open_ns"])


def test_23_2_five_minute_bars(tmp_path):
    df, data = user_frame("UTC", "open")
    t = data["open_ns"]
    grp = t // (300 * 10**9)
    first = np.r_[True, grp[1:] != grp[:-1]]
    starts = np.flatnonzero(first)
    agg = pd.DataFrame({
        "timestamp": pd.DatetimeIndex((grp[starts] * 300 + 300) * 10**9),  # stamped at the close
        "open": data["open"][starts], "high": np.maximum.reduceat(data["high"], starts),
        "low": np.minimum.reduceat(data["low"], starts),
        "close": data["close"][np.r_[starts[1:] - 1, t.size - 1]],
        "volume": np.add.reduceat(data["volume"], starts)})
    r = inspect(agg)
    assert (r.tz, r.label, r.interval) == ("UTC", "close", 300.0)
    assert r.cli_args[:6] == ["--tz", "UTC", "--label", "close", "--interval", "300"]


def test_23_2_gaps_holidays_and_strays(utc_close):
    r = inspect(utc_close["path"])
    kinds = {g["after"][:16]: g["kind"] for g in r.gaps}
    assert kinds["2025-01-20 12:00"].startswith("early halt")     # MLK
    assert kinds["2024-12-24 12:15"].startswith("closed day")     # early close, then Christmas
    assert kinds["2025-01-09 08:30"].startswith("early halt")
    assert len(r.gaps) == 5
    assert r.duplicated_rows == 0 and r.unsorted_rows == 0 and r.duplicated_timestamps == 0


def test_23_2_duplicated_and_unsorted_rows():
    df, _ = user_frame("UTC", "close", end="2024-12-20", strays=False)
    df = pd.concat([df, df.iloc[[100]]]).reset_index(drop=True)       # one exact duplicate
    swapped = df.index.to_numpy().copy()
    swapped[[10, 11]] = swapped[[11, 10]]
    swapped[[500, 700]] = swapped[[700, 500]]
    df = df.iloc[swapped].reset_index(drop=True)
    t = df["timestamp"].to_numpy()
    expect_back = int(np.count_nonzero(t[1:] < t[:-1]))
    r = inspect(df)
    assert r.unsorted_rows == expect_back > 0
    assert r.duplicated_rows == 1 and r.duplicated_timestamps == 1
    assert (r.tz, r.label) == ("UTC", "close")
    assert "not in time order" in "\n".join(r.evidence)


@pytest.mark.parametrize("tick", [0.1, 1 / 32, 0.01, 1.0, 0.25])
def test_23_2_tick_size_grid(tick):
    rng = np.random.default_rng(3)
    k = 40_000 + np.cumsum(rng.integers(-3, 4, size=3000))
    p = k * tick
    t = pd.date_range("2025-01-06 23:00", periods=3000, freq="1min")
    df = pd.DataFrame({"timestamp": t, "open": p, "high": p + tick, "low": p - tick, "close": p,
                       "volume": 1})
    r = inspect(df)
    assert r.tick_size == pytest.approx(tick)


def test_23_2_tick_size_off_grid_is_an_estimate():
    rng = np.random.default_rng(4)
    p = 100 + np.round(rng.random(3000) * 1000) / 3     # a 1/3 grid, on no common tick
    t = pd.date_range("2025-01-06 23:00", periods=3000, freq="1min")
    df = pd.DataFrame({"timestamp": t, "open": p, "high": p, "low": p, "close": p, "volume": 1})
    r = inspect(df)
    assert r.tick_size == pytest.approx(1 / 3, rel=1e-8)
    assert "no common tick" in "\n".join(r.evidence)


def test_23_2_ambiguous_without_halt():
    t = pd.date_range("2025-01-01", periods=20_000, freq="1min")   # 24/7 data: no halt
    df = pd.DataFrame({"timestamp": t, "open": 100.0, "high": 100.5, "low": 99.5,
                       "close": 100.25, "volume": 5})
    r = inspect(df)
    assert r.tz is None and r.label is None and r.confidence == "low"
    assert "tz" not in r.read_kwargs and "label" not in r.read_kwargs
    assert "ambiguous" in "\n".join(r.evidence)


def test_23_2_ambiguous_few_rows():
    df, _ = user_frame("UTC", "close", end="2024-12-17")   # two sessions, one pause
    r = inspect(df)
    assert r.confidence == "low"
    assert "ambiguous" in "\n".join(r.evidence)
    one = df.iloc[:1]
    r1 = inspect(one)
    assert r1.tz is None and r1.label is None and r1.interval is None and r1.confidence == "low"


def test_23_2_user_tz_is_checked_not_trusted(utc_close):
    r = inspect(utc_close["path"], tz="America/Chicago", label="open")
    assert (r.tz, r.label) == ("UTC", "close")
    text = "\n".join(r.evidence)
    assert "you passed tz='America/Chicago'" in text and "you passed label='open'" in text


def test_23_2_bad_input(utc_close):
    with pytest.raises(TypeError):
        inspect(12345)
    with pytest.raises(ValueError, match="tz"):
        inspect(utc_close["path"], tz="Mars/Olympus")
    with pytest.raises(FileNotFoundError):
        inspect("/nonexistent/file.txt")


def test_23_2_repr_and_to_dict(utc_close):
    r = inspect(utc_close["path"])
    text = repr(r)
    for piece in ("tz          UTC", "label       close", "interval    60 s", "tick_size   0.25",
                  "confidence  high", "read_bars(source, tz='UTC', label='close', interval=60)",
                  "--tz UTC --label close --interval 60", "evidence:"):
        assert piece in text
    d = r.to_dict()
    assert d["tz"] == "UTC" and d["cli_args"] == r.cli_args
    json.dumps(d)
    assert vpoc.io.inspect is inspect


@pytest.mark.parametrize("unit", ["s", "ns"])
def test_23_2_epoch_integers_are_instants(unit):
    df, data = user_frame("UTC", "close", end="2025-01-10")
    stamps = data["open_ns"] + 60 * 10**9
    df["timestamp"] = stamps // (10**9 if unit == "s" else 1)
    r = inspect(df, time_unit=unit)
    assert (r.tz, r.label, r.naive, r.confidence) == (None, "close", False, "high")
    assert r.read_kwargs == {"time_unit": unit, "label": "close", "interval": 60}
    assert r.cli_args == ["--label", "close", "--interval", "60", "--time-unit", unit]
