"""Findings of the eleventh new-user trial.

Contract: datetimes built from epoch integers in the wrong unit (pandas 3 datetimes hold microseconds, so
.asi8 read back as nanoseconds lands in January 1970) are refused by vpoc.sessions and vpoc.Live as
from_bars(df) and the feature tables refuse them, with an error saying how to rebuild them; real 1970
datetimes that are no time in another unit stay accepted.
"""

from __future__ import annotations

import numpy as np
import pytest

from _deps import needs

vpoc = pytest.importorskip("vpoc")


def _wrong_unit():
    import pandas as pd

    rng = pd.date_range("2025-03-03 23:00", periods=3000, freq="1min", tz="UTC")
    return pd.to_datetime(rng.asi8 * (1000 if rng.asi8[0] < 10**17 else 1) // 1000, utc=True)  # us read as ns


@needs("pandas")
@pytest.mark.parametrize("call", ["globex", "rth_series", "numpy"])
def test_sessions_refuse_datetimes_of_the_wrong_unit(call):
    import pandas as pd

    ts = _wrong_unit()
    assert ts[0].year == 1970
    arg = {"globex": ts, "rth_series": pd.Series(ts), "numpy": ts.tz_convert(None).to_numpy()}[call]
    fn = vpoc.sessions.rth if call == "rth_series" else vpoc.sessions.globex
    with pytest.raises(ValueError, match=r"looks like microseconds.*rebuild them.*unit='us'"):
        fn(arg)


@needs("pandas", "pandas_market_calendars")  # the default calendar
def test_live_refuses_datetimes_of_the_wrong_unit():
    ts = _wrong_unit()
    n = len(ts)
    live = vpoc.Live(tick_size=0.25, session="globex")
    with pytest.raises(ValueError, match=r"timestamp looks like microseconds.*unit='us'"):
        live.update(np.full(n, 6000.25), np.full(n, 6000.0), np.full(n, 6000.0), np.ones(n), timestamp=ts)


@needs("pandas", "pandas_market_calendars")  # the default calendar
def test_right_datetimes_and_real_1970_ones_stay_accepted():
    import pandas as pd

    rng = pd.date_range("2025-03-03 23:00", periods=300, freq="1min", tz="UTC")
    assert list(vpoc.sessions.globex(rng).labels) == [20250304]
    early = pd.date_range("1970-01-01 00:00", periods=3, freq="1min", tz="UTC")  # no time in any other unit
    vpoc.sessions.globex(early, on_outside="drop")


def _globex_frame():
    b = vpoc.synth.es_bars(n_sessions=4).to_pandas()
    return b.drop(columns="session_id")


@needs("pandas")
@pytest.mark.parametrize("fn", ["session_features", "bar_features"])
def test_a_calendar_date_column_taken_by_default_is_said(fn):
    import warnings

    df = _globex_frame()
    cal = df.assign(date=df.timestamp.dt.tz_convert("America/Chicago").dt.date.astype(str))
    with pytest.warns(vpoc.GuessedDefaultWarning, match=r"'date' column.*without a pause.*session='globex'"):
        getattr(vpoc, fn)(cal, tick_size=0.25)
    with warnings.catch_warnings():  # chosen on purpose: nothing to say
        warnings.simplefilter("error", vpoc.GuessedDefaultWarning)
        ft = getattr(vpoc, fn)(cal, tick_size=0.25, session="date")
    assert ft.session_rule == "column 'date'"


@needs("pandas", "pandas_market_calendars")  # the default calendar
def test_trade_dates_and_rth_calendar_dates_are_not_flagged():
    import warnings

    df = _globex_frame()
    s = vpoc.sessions.globex(df.timestamp)
    trade = df[np.asarray(s.mask)].assign(date=np.repeat(np.asarray(s.labels), np.diff(np.asarray(s.offsets))))
    loc = df.timestamp.dt.tz_convert("America/Chicago")
    rth = df[(loc.dt.strftime("%H:%M") >= "08:30") & (loc.dt.strftime("%H:%M") < "15:15")]
    rth = rth.assign(date=rth.timestamp.dt.tz_convert("America/Chicago").dt.date.astype(str))
    for frame in (trade, rth):
        with warnings.catch_warnings():
            warnings.simplefilter("error", vpoc.GuessedDefaultWarning)
            vpoc.session_features(frame, tick_size=0.25)


@needs("pandas")
@pytest.mark.parametrize("unit", ["s", "ms", "us"])
def test_integer_epoch_times_in_a_file_name_their_unit(tmp_path, unit):
    df = vpoc.synth.es_bars(n_sessions=1).to_pandas().drop(columns="session_id")
    df = df.assign(timestamp=df.timestamp.astype(f"datetime64[{unit}, UTC]").astype("int64"))
    path = tmp_path / "epoch.csv"
    df.to_csv(path, index=False)
    names = {"s": "seconds", "ms": "milliseconds", "us": "microseconds"}
    for fn in (vpoc.io.read_bars, vpoc.io.inspect):
        with pytest.raises(ValueError, match=rf"looks like {names[unit]} since the epoch: pass time_unit='{unit}'") as e:
            fn(path)
        assert e.value.argument == "time_unit"
        assert "time_format" not in str(e.value)
    assert len(vpoc.io.read_bars(path, time_unit=unit, tz="UTC")) == len(df)


def _globex_minutes(first, last, skip=()):
    """1-minute ES bars (open-stamped, UTC) of the Globex sessions opening on the evenings first..last
    (Sunday to Thursday), 17:00 -> 16:00 Chicago wall clock, less the sessions opening on ``skip`` dates."""
    import pandas as pd

    rows = []
    for d in pd.date_range(first, last, freq="D"):
        if d.weekday() in (6, 0, 1, 2, 3) and str(d.date()) not in skip:
            nxt = (d + pd.Timedelta(days=1)).date()
            start = pd.Timestamp(f"{d.date()} 17:00").tz_localize("America/Chicago")
            end = pd.Timestamp(f"{nxt} 16:00").tz_localize("America/Chicago")
            rows.append(pd.date_range(start, end, freq="1min", inclusive="left"))
    ts = rows[0].append(rows[1:])
    n = len(ts)
    p = 6000 + np.cumsum(np.random.default_rng(0).integers(-1, 2, n)) * 0.25
    return pd.DataFrame({"timestamp": ts.tz_convert("UTC"), "open": p, "high": p + 0.25, "low": p - 0.25,
                         "close": p, "volume": np.full(n, 5)})


@needs("pandas")
@pytest.mark.parametrize("first,last", [("2025-10-26", "2025-11-06"), ("2025-03-02", "2025-03-13")])
def test_inspect_takes_a_clock_change_weekend_for_a_weekend(first, last):
    report = str(vpoc.io.inspect(_globex_minutes(first, last)))
    assert "no pauses other than the daily halt and weekends" in report, report
    assert "holiday" not in report


@needs("pandas")
def test_inspect_still_names_a_closed_day():
    report = str(vpoc.io.inspect(_globex_minutes("2025-10-26", "2025-11-06", skip=("2025-10-28",))))
    assert "closed day(s): holiday" in report, report


def _rth_feed(shift_h=0, end="15:15"):
    """Open-stamped 1-minute bars of 08:30..end Chicago each weekday of 2025-03-03..21, moved shift_h hours
    (a feed written in New York wall time and read as Chicago's is one hour late)."""
    import pandas as pd

    rows = []
    for d in pd.bdate_range("2025-03-03", "2025-03-21"):
        s = pd.Timestamp(f"{d.date()} 08:30") + pd.Timedelta(hours=shift_h)
        e = pd.Timestamp(f"{d.date()} {end}") + pd.Timedelta(hours=shift_h)
        rows.append(pd.date_range(s, e, freq="1min", inclusive="left"))
    return rows[0].append(rows[1:]).tz_localize("America/Chicago")


@needs("pandas", "pandas_market_calendars")  # the default calendar
@pytest.mark.parametrize("shift,where", [(1, "after RTH ends"), (-1, "before RTH opens")])
def test_rth_says_a_shifted_rth_feed(shift, where):
    import warnings

    ts = _rth_feed(shift)
    with pytest.warns(vpoc.DroppedRowsWarning, match=rf"900 of 6,075 rows lie just {where} \(up to 60 min\) on 15 "
                                                     r"of 15 days.*wrong time zone"):
        s = vpoc.sessions.rth(ts)
    assert s.dropped_rows == 900
    with warnings.catch_warnings():
        warnings.simplefilter("error", vpoc.DroppedRowsWarning)
        vpoc.sessions.rth(ts, on_outside="drop")
    import pandas as pd

    p = np.full(len(ts), 6000.0)
    df = pd.DataFrame({"timestamp": ts, "high": p, "low": p, "close": p, "volume": np.ones(len(ts))})
    with pytest.warns(vpoc.DroppedRowsWarning, match="shifted"):
        vpoc.from_bars(df, session="rth", tick_size=0.25)


@needs("pandas", "pandas_market_calendars")  # the default calendar
def test_rth_says_nothing_of_right_feeds_longer_feeds_and_globex():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", vpoc.DroppedRowsWarning)
        assert vpoc.sessions.rth(_rth_feed(0)).dropped_rows == 0
        assert vpoc.sessions.rth(_rth_feed(0, end="16:00")).dropped_rows == 675  # a day session to 16:00
        vpoc.sessions.rth(vpoc.synth.es_bars(n_sessions=10).to_pandas().timestamp)  # overnight rows
