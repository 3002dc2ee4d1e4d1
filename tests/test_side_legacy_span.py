"""The order-flow developing delta POC sizes a legacy session as from_bars does.

Contract: a legacy session that from_bars profiles within max_rows is not refused by
_core.developing_delta_poc (the bar table's delta POC column); a too-wide one is refused by both,
naming the same session (the delta POC path once measured legacy spans by round-to-nearest rows, from_bars
by the session's level ladder, up to two rows narrower with off-grid prices: both now use session_span).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
from vpoc import _core  # noqa: E402


def _session(n=4000):
    h = np.full(n, 102.5)
    lo = np.full(n, 100.5)
    c = np.full(n, 101.5)
    v = np.ones(n)
    h[0], lo[0], c[0] = 102.6, 100.1, 101.0  # off the 0.25 grid: legacy levels ceil / floor them
    return h, lo, c, v


def _delta_poc(h, lo, c, v, max_rows):
    opts = _core.Options(tick_size=0.25, distribute="legacy", max_rows=max_rows)
    return _core.developing_delta_poc(h, lo, c, None, v, v / 2, v / 2, np.array([0, len(v)], dtype=np.int64), opts)


def test_a_session_from_bars_profiles_is_not_refused():
    h, lo, c, v = _session()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the two off-grid prices are reported by from_bars
        p = vpoc.from_bars(h, lo, c, v, tick_size=0.25, distribute="legacy", max_rows=10)
    assert int(np.asarray(p.n_rows)[0]) == 10
    out = _delta_poc(h, lo, c, v, max_rows=10)
    assert out.shape == (len(v),)


def test_a_session_too_wide_for_both_is_refused_by_both():
    h, lo, c, v = _session()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="max_rows=8") as plain:
            vpoc.from_bars(h, lo, c, v, tick_size=0.25, distribute="legacy", max_rows=8)
    with pytest.raises(ValueError, match="max_rows=8") as delta:
        _delta_poc(h, lo, c, v, max_rows=8)
    assert str(delta.value) == str(plain.value)  # "session 0 spans 10 rows, ... from bar 0 on; ..."
    assert (delta.value.session, delta.value.index) == (plain.value.session, plain.value.index) == (0, 0)
