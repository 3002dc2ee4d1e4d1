"""vpoc.io.inspect on RTH-only (day-session) files: New York wall clock 09:30-16:00, open or close stamped (trial 11, finding 3).

Contract: the files are built here with plain pandas; inspect must say tz America/New_York, the label they
were written with, an RTH-only day session (not Globex 17:00-16:00), whatever the volumes; a Globex file keeps its advice.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

import _deps  # noqa: E402
import vpoc  # noqa: E402
from vpoc.io import inspect, read_bars  # noqa: E402

from _user_file import user_frame  # noqa: E402

NY = "America/New_York"
# 20 weekdays, no US holiday, across the US clock change of 2025-03-09 (New York and Chicago move together)
START, DAYS = "2025-02-24", 20


def rth_frame(label="open", flat=False, start=START, days=DAYS, t0="09:30", t1="16:00", skip=(), early=None):
    """One-minute bars of ``t0``-``t1`` New York wall clock (naive text), stamped at their ``label``;
    a U-shaped volume (busiest at the open and the close) unless ``flat``; ``early``: (date, "HH:MM") ends that day early."""
    rng = np.random.default_rng(7)
    parts = []
    for day in pd.bdate_range(start, periods=days):
        if str(day.date()) in skip:
            continue
        end = day + pd.Timedelta(f"{early[1]}:00") if early and str(day.date()) == early[0] else \
            day + pd.Timedelta(f"{t1}:00")
        opens = pd.date_range(day + pd.Timedelta(f"{t0}:00"), end, freq="1min", inclusive="left")
        x = np.linspace(-1, 1, opens.size)
        vol = np.full(opens.size, 400) if flat else (200 + 3000 * x ** 2 + rng.integers(0, 60, opens.size)).astype(int)
        px = 5000 + 0.25 * np.cumsum(rng.integers(-2, 3, opens.size))
        stamps = opens + pd.Timedelta(minutes=1) if label == "close" else opens
        parts.append(pd.DataFrame({"timestamp": stamps.strftime("%Y-%m-%d %H:%M:%S"), "open": px,
                                   "high": px + 0.25, "low": px - 0.25, "close": px, "volume": vol}))
    return pd.concat(parts, ignore_index=True)


def _write(tmp_path, df, name="rth.csv"):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("flat", [False, True], ids=["u_shaped", "flat_volume"])
@pytest.mark.parametrize("label", ["open", "close"])
def test_rth_only_new_york_file_gets_its_zone_and_label(tmp_path, label, flat):
    df = rth_frame(label, flat)
    path = _write(tmp_path, df)
    r = inspect(path)
    assert (r.tz, r.label, r.interval, r.confidence) == (NY, label, 60, "high"), r
    assert r.read_kwargs == {"tz": NY, "label": label, "interval": 60}
    assert r.cli_args == ["--tz", NY, "--label", label, "--interval", "60"]
    text = "\n".join(r.evidence)
    assert "bars of 17:00-16:00" not in text and "ambiguous" not in text
    assert "a day session: the stamps cover 6.5 h" in text
    assert "RTH-only day session of 6.5 h (bars open 09:30-15:59 America/New_York)" in r.hours
    assert r.hours.startswith("bars open 08:30-14:59 America/Chicago")
    assert r.gaps == [] and "no pauses other than the pause between days and weekends" in text
    # read as it says, the bars are the New York 09:30-15:59 opens
    bars = read_bars(path, **r.read_kwargs)
    want = pd.to_datetime(df.timestamp) - (pd.Timedelta(minutes=1) if label == "close" else pd.Timedelta(0))
    want = want.dt.tz_localize(NY).dt.tz_convert("UTC").dt.as_unit("ns").astype("int64").to_numpy()
    np.testing.assert_array_equal(np.asarray(bars.timestamp, dtype=np.int64), want)
    # and RTH (08:30-15:15 CT) keeps every row: nothing left out, nothing to warn about
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = vpoc.sessions.rth(bars, calendar=None)
    assert s.dropped_rows == 0 and len(np.unique(s.labels)) == DAYS
    assert any("session='rth' (vpoc.sessions.rth) leaves none out" in e for e in r.evidence)


@_deps.needs("pandas_market_calendars")
def test_rth_only_file_read_as_inspect_says_keeps_every_row_in_session_rth(tmp_path):
    path = _write(tmp_path, rth_frame("close"))
    r = inspect(path)
    bars = read_bars(path, **r.read_kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert vpoc.sessions.rth(bars).dropped_rows == 0  # the default (CME) calendar: no holiday in the span
        f = vpoc.from_bars(bars, session="rth", tick_size=0.25)
    assert len(f) == DAYS


def test_rth_only_file_says_its_holidays_and_early_closes(tmp_path):
    df = rth_frame("open", start="2025-11-17", days=14, skip=("2025-11-27",), early=("2025-11-28", "13:00"))
    r = inspect(_write(tmp_path, df))
    assert (r.tz, r.label, r.confidence) == (NY, "open", "high")
    assert [g["kind"] for g in r.gaps] == ["closed day(s): holiday", "early halt: holiday or early close"]
    assert r.gaps[0]["after"].startswith("2025-11-26 15:00") and r.gaps[1]["after"].startswith("2025-11-28 12:00")


def test_rth_only_few_days_is_a_guess_and_says_so(tmp_path):
    r = inspect(_write(tmp_path, rth_frame("open", days=2)))
    assert (r.tz, r.label, r.confidence) == (NY, "open", "low")
    assert any(e.startswith("ambiguous: only 1 daily pause") for e in r.evidence)


def test_a_day_session_off_us_rth_names_no_zone_but_its_label(tmp_path, capsys):
    """09:00-17:30 (a European day session): no zone puts it on US RTH, so tz is the user's choice;
    the label still follows from the days' round bounds (09:00 / 17:29 open stamps)."""
    from vpoc.cli import main

    path = _write(tmp_path, rth_frame("open", t0="09:00", t1="17:30"))
    r = inspect(path)
    assert r.tz is None and r.label == "open" and r.confidence == "low"
    assert r.tz_choices[:2] == ["UTC", "America/Chicago"] and "tz" not in r.read_kwargs
    text = "\n".join(r.evidence)
    assert "ambiguous: no reading puts the days on US RTH" in text and "the zone cannot be told" in text
    assert r.hours == "stamps 09:00-17:29 as written (zone unknown); a day session of 8.5 h, not Globex 17:00-16:00"
    assert main(["inspect", str(path)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].strip() == \
        f"vpoc profile {path} --tz ZONE --label open --interval 60 --tick-size 0.25"


def test_cli_inspect_says_new_york_for_an_rth_file(tmp_path, capsys):
    from vpoc.cli import main

    path = _write(tmp_path, rth_frame("open", flat=True))
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"vpoc profile {path} --tz {NY} --label open --interval 60 --tick-size 0.25" in out


def test_globex_file_keeps_its_advice():
    """A 23 h Globex file (UTC, close stamps) is judged on the halt as before: no day-session line."""
    df, _ = user_frame("UTC", "close", end="2025-01-20", strays=False)
    r = inspect(df)
    assert (r.tz, r.label, r.confidence) == ("UTC", "close", "high")
    assert r.hours.startswith("bars open 17:00-15:59 America/Chicago, none 16:00-16:59")
    assert not any("day session" in e for e in r.evidence) and "day session" not in r.hours
    assert any("bars of 17:00-16:00 stamped at their close" in e for e in r.evidence)
