"""Live reports a prior session more than MAX_PRIOR_DAYS calendar days back (MissingDaysWarning), as
bar_features does on the same bars: the next session's prev_* features read that session."""
import warnings

import numpy as np
import pytest

import vpoc
from vpoc.features import check_prior_gap

import _deps

pytestmark = _deps.needs("pandas")  # Live(session=...) assigns sessions with vpoc.sessions

_DAY_NS = 86_400 * 10**9


def _bars(gap_days):
    """Three synthetic Globex sessions of 30 bars; the third moved ``gap_days`` days later."""
    b = vpoc.synth.es_bars(n_sessions=3, bars_per_session=30, seed=5)
    ts = b.timestamp.copy()
    ts[int(b.offsets[2]):] += gap_days * _DAY_NS
    return b, ts


def _feed(b, ts):
    live = vpoc.Live(tick_size=0.25, session="globex", session_options=dict(calendar=None))
    for i in range(ts.shape[0]):
        live.update(b.high[i], b.low[i], b.close[i], b.volume[i], open=b.open[i], timestamp=int(ts[i]))
    live.close()
    return live


def test_live_warns_once_when_days_are_missing():
    b, ts = _bars(14)
    with pytest.warns(vpoc.MissingDaysWarning, match=r"Live: 1 of 1 sessions .* more than 4 calendar days"
                      r".*\(1[4-9] days\).*prev_\*_dist") as rec:
        live = _feed(b, ts)
    assert sum(issubclass(w.category, vpoc.MissingDaysWarning) for w in rec) == 1
    assert live.labels.shape == (3,)
    # the batch says the same about the same bars
    with pytest.warns(vpoc.MissingDaysWarning, match="bar_features"):
        vpoc.bar_features(b.high, b.low, b.close, b.volume, open=b.open, timestamp=ts, tick_size=0.25,
                          sessions=vpoc.sessions.globex(ts, calendar=None))


def test_live_is_quiet_on_consecutive_days():
    b, ts = _bars(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", vpoc.MissingDaysWarning)
        live = _feed(b, ts)
    assert live.labels.shape == (3,)


@pytest.mark.parametrize("prior, label, days, warns", [
    (20240102, 20240103, 1.0, False),
    (20240105, 20240108, 3.0, False),   # a weekend
    (20240105, 20240109, 4.0, False),   # a weekend and a holiday: the limit itself
    (20240105, 20240110, 5.0, True),
    (20231229, 20240119, 21.0, True),   # across a year
])
def test_check_prior_gap_counts_calendar_days(prior, label, days, warns):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert check_prior_gap(prior, label, "t", "x") == days
    assert any(issubclass(w.category, vpoc.MissingDaysWarning) for w in rec) == warns


def test_check_prior_gap_refuses_a_label_that_is_no_date():
    with pytest.raises(ValueError, match="session labels"):
        check_prior_gap(20240102, 20241399, "t", "x")


def _live_two_sessions(b, ts):
    live = vpoc.Live(tick_size=0.25, session="globex", session_options=dict(calendar=None))
    a = int(b.offsets[2])
    live.update(b.high[:a], b.low[:a], b.close[:a], b.volume[:a], open=b.open[:a], timestamp=ts[:a])
    return live, a


def test_a_rolled_back_update_does_not_warn_twice():
    b, ts = _bars(14)
    live, a = _live_two_sessions(b, ts)
    bad_close = b.close[a:].copy()
    bad_close[3] = np.nan  # the update starts the third session, then is refused at its 4th bar
    with pytest.warns(vpoc.MissingDaysWarning), pytest.raises(ValueError, match="close"):
        live.update(b.high[a:], b.low[a:], bad_close, b.volume[a:], open=b.open[a:], timestamp=ts[a:])
    assert len(live.labels) == 1  # rolled back: the second session still open
    with warnings.catch_warnings():
        warnings.simplefilter("error", vpoc.MissingDaysWarning)  # said once already: not again
        live.update(b.high[a:], b.low[a:], b.close[a:], b.volume[a:], open=b.open[a:], timestamp=ts[a:])
    live.close()
    assert len(live.labels) == 3


def test_missing_days_as_an_error_refuses_the_update_each_time():
    b, ts = _bars(14)
    live, a = _live_two_sessions(b, ts)
    with warnings.catch_warnings():
        warnings.simplefilter("error", vpoc.MissingDaysWarning)
        for _ in range(2):  # refused, nothing changed, and refused again when sent again
            with pytest.raises(vpoc.MissingDaysWarning):
                live.update(b.high[a:], b.low[a:], b.close[a:], b.volume[a:], open=b.open[a:], timestamp=ts[a:])
            assert len(live.labels) == 1 and live.session_label == int(live.session_label)
