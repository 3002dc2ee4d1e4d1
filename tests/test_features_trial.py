"""Feature tables of a vpoc.io.Bars: the label a Bars can still take, and warnings at the user's line.

Contract: a Bars read with the default label takes label='close' in session_features (the same as
reading it with label='close'); one read with label='close' refuses a second one, saying so truly.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import _deps

pd = _deps.require("pandas")
_deps.require("pandas_market_calendars")  # the Globex default reads the CME calendars

from _user_file import write_user_file  # noqa: E402

import vpoc  # noqa: E402
from vpoc.features import bar_features, session_features  # noqa: E402


@pytest.fixture(scope="module")
def utc_close(tmp_path_factory):
    return write_user_file(tmp_path_factory.mktemp("f") / "es.csv", fmt="csv", tz="UTC",
                           label="close", start="2025-01-05", end="2025-01-24", seed=5)


def test_23_trial9_bars_read_with_default_label_take_label_close(utc_close) -> None:
    raw = vpoc.io.read_bars(utc_close["path"], tz="UTC")  # the default label: stamps as written
    assert raw.label == "open"
    np.testing.assert_array_equal(raw.timestamp, utc_close["stamp_ns"])
    ref = vpoc.io.read_bars(utc_close["path"], **utc_close["read_kwargs"])
    np.testing.assert_array_equal(ref.timestamp, utc_close["open_ns"])  # independent: true opens
    got = session_features(raw, label="close", interval=60, session="globex", tick_size=0.25)
    want = session_features(ref, session="globex", tick_size=0.25)
    pd.testing.assert_frame_equal(got.to_pandas(), want.to_pandas())
    assert len(got) == len(utc_close["sessions"])


def test_23_trial9_bars_read_with_label_close_refuse_a_second_one(utc_close) -> None:
    ref = vpoc.io.read_bars(utc_close["path"], **utc_close["read_kwargs"])
    with pytest.raises(ValueError) as e:
        session_features(ref, label="close", session="globex", tick_size=0.25)
    msg = str(e.value)
    assert "read with label='close'" in msg and "bar opens already" in msg
    assert "read with them already" not in msg


def test_23_trial7_feature_warnings_point_at_the_callers_line(utc_close) -> None:
    """A DroppedRowsWarning (close stamps read as opens) and the GuessedDefaultWarning (no session
    given) raised deep inside vpoc name this file and line, not vpoc/features/_grouping.py."""
    raw = vpoc.io.read_bars(utc_close["path"], tz="UTC")  # close stamps taken as opens
    for fn in (session_features, bar_features):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            line = __import__("inspect").currentframe().f_lineno + 1
            fn(raw, tick_size=0.25)
        kinds = {r.category for r in rec}
        assert vpoc.DroppedRowsWarning in kinds and vpoc.GuessedDefaultWarning in kinds, kinds
        for r in rec:
            if issubclass(r.category, (vpoc.DroppedRowsWarning, vpoc.GuessedDefaultWarning)):
                assert r.filename == __file__ and r.lineno == line, (fn.__name__, r.filename, r.lineno)


def test_23_trial7_user_stacklevel_helper() -> None:
    from vpoc._warnings import user_stacklevel

    assert user_stacklevel() == 1  # called from outside vpoc: the caller itself
