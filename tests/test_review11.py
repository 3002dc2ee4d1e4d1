"""The review of the tenth stop's merge (dask11): each test failed on main before its fix.

Contract: ISO date strings with a time of day finer than a microsecond are refused, not read as
midnight; vpoc.dask says its warnings each compute and names the user's frame row and the session's place.
"""

from __future__ import annotations

import numpy as np
import pytest

import vpoc

TICK = 0.25


def _labels(ids):
    p = 4000 + np.arange(len(ids)) * TICK
    return np.asarray(vpoc.from_trades(p, np.ones(len(ids)), session_ids=ids, tick_size=TICK).session_labels).tolist()


@pytest.mark.parametrize("text", ["2024-03-08T00:00:00.0000001", "2024-03-08 00:00:00.000000001",
                                  "2024-03-08T00:00:00.1234567"])
def test_iso_date_strings_with_a_sub_microsecond_time_of_day_are_refused(text):
    ids = ["2024-03-07"] * 3 + [text] * 3
    with pytest.raises(vpoc.InputError) as e:
        _labels(ids)
    assert str(e.value).startswith(f"session_ids[3] = {text} has a time of day"), str(e.value)
    assert (e.value.argument, e.value.index) == ("session_ids", 3)
    # a fraction that is zero past the microseconds is still midnight: a date
    assert _labels(["2024-03-08T00:00:00.000000000"] * 3 + ["2024-03-11 00:00:00.0000000"] * 3) == [20240308, 20240311]
