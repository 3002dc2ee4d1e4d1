"""The DroppedRowsWarning of vpoc.sessions says what is likely wrong, true whatever zone a file was read in.

Contract: the hints name the read time zone as the likely culprit (the rule sees UTC ns only) and
suggest label='close' only when the dropped rows are about one per session, on its close.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import _deps

pd = _deps.require("pandas")
NEEDS_CAL = _deps.needs("pandas_market_calendars")

from _user_file import user_bars  # noqa: E402

import vpoc  # noqa: E402
from vpoc import sessions as S  # noqa: E402

MIN = 60 * 10**9


@pytest.fixture(scope="module")
def es():
    return user_bars(start="2025-01-05", end="2025-02-07", seed=3)


def _chicago_wall_as_utc(open_ns: np.ndarray) -> np.ndarray:
    """What a Chicago open-stamped file gives when it is read with tz='UTC' (plain pandas)."""
    idx = pd.DatetimeIndex(open_ns.view("datetime64[ns]")).tz_localize("UTC")
    return np.asarray(idx.tz_convert("America/Chicago").tz_localize(None).as_unit("ns").asi8)


def _warning(t, **kw) -> str:
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        S.globex(t, **kw)
    msgs = [str(r.message) for r in rec if issubclass(r.category, vpoc.DroppedRowsWarning)]
    assert len(msgs) == 1, msgs
    return msgs[0]


@NEEDS_CAL
def test_23_trial7_chicago_file_read_as_utc_hint_is_true(es) -> None:
    """The data WERE read as UTC: the hint must not ask "are these timestamps UTC?" and must not
    offer label='close' (rows fall deep inside the halt, not one per session on its close)."""
    t = _chicago_wall_as_utc(es["open_ns"])
    msg = _warning(t, volume=es["volume"])
    assert "are these timestamps UTC" not in msg
    assert "time zone the timestamps were read in is likely wrong" in msg
    assert "vpoc.io.inspect(path)" in msg
    assert "label='close'" not in msg
    s = S.globex(t, on_outside="drop")
    assert f"({s.dropped_by_cause['halt']:,}) fall in the daily halt" in msg


@NEEDS_CAL
def test_23_trial7_label_close_suggested_when_it_fixes_it(es) -> None:
    """Close stamps read as opens: about one row per session on its close, nothing else in the
    halt: label='close' is offered, and it does put every such row back."""
    stamps = es["open_ns"] + MIN
    msg = _warning(stamps, volume=es["volume"])
    assert "label='close'" in msg and "look like bar closes" in msg
    assert "likely wrong" not in msg.split("weekends")[0]  # the halt rows get the close-stamp hint
    fixed = S.globex(stamps, label="close", interval=60, volume=es["volume"], on_outside="drop")
    assert fixed.dropped_rows == int(es["stray"].sum())


@NEEDS_CAL
def test_23_trial7_close_hint_not_given_with_rows_deep_in_the_halt(es) -> None:
    """Close stamps read as opens plus rows in the middle of the halt: label='close' would not fix
    those, so it is not offered."""
    stamps = es["open_ns"] + MIN
    wall = pd.DatetimeIndex(stamps.view("datetime64[ns]")).tz_localize("UTC").tz_convert("America/Chicago")
    last = np.flatnonzero((wall.hour == 16) & (wall.minute == 0))[:12]  # 12 sessions' last bars
    bad = stamps.copy()
    for k in (0, 1, 2):  # their last three bars to 16:28-16:30 CT: deep inside the halt
        bad[last - k] += 30 * MIN
    assert np.all(np.diff(bad) >= 0)
    msg = _warning(bad)
    assert "label='close'" not in msg


@NEEDS_CAL
def test_label_advice_kept_when_on_outside_raises(es) -> None:
    """on_outside='raise' (the CLI's --strict) gives the warning's bar-label advice too (a new-user
    pass found --strict dropped it): close stamps read as opens name label='close'; rows of a wrong
    zone, deep in the halt, do not."""
    with pytest.raises(vpoc.InputError, match="look like bar closes .*pass label='close'"):
        S.globex(es["open_ns"] + MIN, volume=es["volume"], on_outside="raise")
    with pytest.raises(vpoc.InputError) as e:
        S.globex(_chicago_wall_as_utc(es["open_ns"]), volume=es["volume"], on_outside="raise")
    assert "label=" not in str(e.value)
