"""Engine errors of the feature calls under ``session=`` (``session_features``, ``bar_features``, ``vpoc.tpo``) name
the caller's input row, as ``from_trades`` / ``from_bars`` do (tests/test_session_errors_followup.py).

Contract: a bad value in an input row the session keeps raises the engine's error (a vpoc.InputError, same wording
and ``.argument``) about that input row (``volume[6]``, ``.index == 6``), not its position among the kept rows; the
plain reference is the same call on the kept rows passed by hand (``offsets=``), whose error names the kept
position, mapped through ``Sessions.index``. Errors about no one row, and calls that keep every row, are unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
pytest.importorskip("pandas")  # vpoc.sessions builds its clock with pandas
# 12 hourly rows from 12:00 UTC, rth keeping input rows 3..9; the bars, the error of a call, and the check that an
# error is the kept rows' error said of the input row
from test_session_errors_followup import KEPT_FIRST, N, TICK, _bars, _check, _error, _plant, _sessions  # noqa: E402
import _deps  # noqa: E402

TS = np.datetime64("2024-01-02T12:00", "ns") + np.arange(N) * np.timedelta64(1, "h")  # _sessions()' timestamps
CALLS = {"session_features": lambda *a, **k: vpoc.session_features(*a, lookbacks=(1,), composite_sessions=1, **k),
         "bar_features": lambda *a, **k: vpoc.bar_features(*a, composite_sessions=1, **k),
         "tpo": lambda *a, **k: vpoc.tpo(*a, incomplete="ignore", **k)}


def _bad(cols, bad, row):
    _plant(bad, row, *cols)


@pytest.mark.parametrize("what", sorted(CALLS))
@pytest.mark.parametrize("bad", ["volume", "volume_nan", "high_below_low", "close_outside", "open_nan", "high_inf"])
@pytest.mark.parametrize("row", [KEPT_FIRST + 3, 9])
def test_feature_errors_name_the_input_row(what, bad, row):
    """Fails before the change: the error named volume[3] (the kept position) for input row 6."""
    s = _sessions()
    cols = _bars()
    _bad(cols, bad, row)
    high, low, close, vol, opn = cols
    kw = dict(tick_size=TICK, distribute="legacy")
    got = _error(lambda: CALLS[what](high, low, close, vol, open=opn, timestamp=TS, session=s, **kw))
    k = s.take(high, low, close, vol, opn, TS)
    kept = _error(lambda: CALLS[what](*k[:4], open=k[4], timestamp=k[5], offsets=s.offsets, **kw))
    _check(got, kept, row, s)
    assert f"[{row}]" in str(got)


@pytest.mark.parametrize("what", ["session_features", "bar_features"])
@pytest.mark.parametrize("column", ["buy_volume", "sell_volume"])
def test_side_volume_errors_name_the_input_row(what, column):
    s = _sessions()
    high, low, close, vol, opn = _bars()
    buy = np.floor(vol / 2)
    sides = {"buy_volume": buy, "sell_volume": vol - buy}
    row = KEPT_FIRST + 2
    sides[column][row] = -1.0
    kw = dict(tick_size=TICK)
    got = _error(lambda: CALLS[what](high, low, close, vol, timestamp=TS, session=s, **sides, **kw))
    k = s.take(high, low, close, vol, TS, sides["buy_volume"], sides["sell_volume"])
    kept = _error(lambda: CALLS[what](*k[:4], timestamp=k[4], offsets=s.offsets, buy_volume=k[5],
                                      sell_volume=k[6], **kw))
    assert column in str(got)
    _check(got, kept, row, s)


@pytest.mark.filterwarnings("ignore::vpoc.sessions.SessionHoursWarning")  # a UTC clock on purpose (t8fix)
@_deps.needs("pandas_market_calendars")
def test_session_rule_and_frames_name_the_input_row():
    """session='rth' (a rule applied to the bar opens) and a DataFrame (its row) the same way."""
    pd = pytest.importorskip("pandas")
    s = _sessions()
    high, low, close, vol, opn = _bars()
    row = KEPT_FIRST + 4
    vol[row] = -3.0
    df = pd.DataFrame({"timestamp": TS, "high": high, "low": low, "close": close, "volume": vol})
    for what, call in CALLS.items():
        for e in (_error(lambda: call(high, low, close, vol, timestamp=TS, session="rth", tz="UTC",
                                      tick_size=TICK)),
                  _error(lambda: call(df, session=s, tick_size=TICK))):
            assert isinstance(e, vpoc.InputError) and e.index == row and e.argument == "volume", what
            assert str(e).startswith(f"volume[{row}] "), what


def test_off_grid_refusal_of_session_features_names_the_input_row():
    """session_features checks the grid itself (once, before the engine): its refusal names the input row too."""
    s = _sessions()
    high, low, close, vol, opn = _bars()
    row = KEPT_FIRST + 1
    high[row] += 0.1
    got = _error(lambda: vpoc.session_features(high, low, close, vol, timestamp=TS, session=s, tick_size=TICK))
    assert f"e.g. high[{row}]={float(high[row])!r}" in str(got) and "snap=True" in str(got)
    k = s.take(high, low, close, vol, TS)
    kept = _error(lambda: vpoc.session_features(*k[:4], timestamp=k[4], offsets=s.offsets, tick_size=TICK))
    _check(got, kept, row, s)


def test_every_row_kept_and_errors_about_no_row_are_unchanged():
    """No row left out (offsets=): positions are the caller's rows; an error about no one row passes as it is."""
    high, low, close, vol, opn = _bars()
    vol[5] = -1.0
    for what, call in CALLS.items():
        e = _error(lambda: call(high, low, close, vol, timestamp=TS, offsets=[0, N], tick_size=TICK))
        assert e.index == 5 and str(e).startswith("volume[5] "), what
    s = _sessions()
    high, low, close, vol, opn = _bars()
    with pytest.raises(ValueError, match="ticks_per_row") as info:
        vpoc.session_features(high, low, close, vol, timestamp=TS, session=s, tick_size=TICK, ticks_per_row=0)
    assert getattr(info.value, "index", None) is None


def test_input_rows_helper():
    """vpoc._errors.input_rows: an InputError about kept position i becomes one about rows[i] (wording, .argument,
    .reason kept); positions outside ``rows``, errors about no row, other errors and rows=None pass; nested, each
    maps its own positions (the inner rows are positions among the outer's)."""
    from vpoc._errors import input_error, input_rows

    rows = np.array([4, 7, 9], dtype=np.int64)

    def raised(e, r=rows):
        with pytest.raises(type(e)) as info:
            with input_rows(r):
                raise e
        return info.value

    e = raised(input_error("close[1]=5 is outside [low[1], high[1]]", "close", 1, "close[1] outside low[1]"))
    assert (str(e), e.argument, e.index, e.reason) == ("close[7]=5 is outside [low[7], high[7]]", "close", 7,
                                                       "close[7] outside low[7]")
    for plain in (input_error("volume[5] is bad", "volume", 5), input_error("tick_size bad", "tick_size"),
                  ValueError("volume[1] is bad")):
        assert raised(plain) is plain
    e = input_error("volume[1] is bad", "volume", 1)
    assert raised(e, None) is e
    with pytest.raises(vpoc.InputError) as info:  # nested: inner 0 -> 1, outer 1 -> 7
        with input_rows(rows):
            with input_rows(np.array([1, 2], dtype=np.int64)):
                raise input_error("volume[0] is bad", "volume", 0)
    assert info.value.index == 7 and str(info.value) == "volume[7] is bad"
    with input_rows(rows):
        pass  # nothing raised: nothing happens


def test_good_input_is_unchanged():
    s = _sessions()
    high, low, close, vol, opn = _bars()
    got = vpoc.session_features(high, low, close, vol, timestamp=TS, session=s, tick_size=TICK, lookbacks=(1,),
                                composite_sessions=1)
    k = s.take(high, low, close, vol, TS)
    want = vpoc.session_features(*k[:4], timestamp=k[4], offsets=s.offsets, tick_size=TICK, lookbacks=(1,),
                                 composite_sessions=1)
    assert got.columns == want.columns
    np.testing.assert_array_equal(got.values, want.values)
