"""``ReorderedRecordsWarning`` is public as the other warnings are: ``vpoc.io.ReorderedRecordsWarning`` and
``vpoc.ReorderedRecordsWarning`` (one class), and read_trades' docstring states the DBN order rule.

Contract: a user filters the warning by its public name (``warnings.simplefilter("error",
vpoc.io.ReorderedRecordsWarning)`` makes the sort an error); the names are in ``__all__``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import _deps
import vpoc
from vpoc import io as vio


def test_exported_like_the_other_warnings():
    """Fails before the change: neither vpoc.io nor vpoc exported it."""
    from vpoc.io._dbn import ReorderedRecordsWarning

    assert vio.ReorderedRecordsWarning is ReorderedRecordsWarning is vpoc.ReorderedRecordsWarning
    assert "ReorderedRecordsWarning" in vio.__all__ and "ReorderedRecordsWarning" in vpoc.__all__
    assert issubclass(ReorderedRecordsWarning, UserWarning)
    for name in ("DroppedRowsWarning", "GuessedDefaultWarning", "IncompleteSessionWarning"):
        assert name in vpoc.__all__  # exported the same way


def test_read_trades_docstring_states_the_dbn_sort():
    """Fails before the change: it said DBN timestamps must be non-decreasing, like every format's."""
    doc = " ".join(vio.read_trades.__doc__.split())
    assert "sorted by ``ts_event``" in doc and "ReorderedRecordsWarning" in doc and "stable" in doc
    assert "ts_recv" in doc


def test_the_public_name_filters_the_warning(tmp_path):
    _deps.require("databento_dbn")  # skips without it
    import test_dbn_order as t

    event = t.T0 + np.array([5, 3, 4])
    recv = t.T0 + np.array([10, 11, 12])
    units = np.array([24000, 24001, 24002]) * (t.UNIT // 4)
    path = t.write(tmp_path / "es.dbn", [t.trade(event[k], recv[k], units[k], 2) for k in range(3)])
    with pytest.warns(vpoc.ReorderedRecordsWarning, match="2 of 3 trades"):
        got = vio.read_trades(path)
    np.testing.assert_array_equal(got.timestamp, np.sort(event))
    with warnings.catch_warnings():
        warnings.simplefilter("error", vio.ReorderedRecordsWarning)
        with pytest.raises(vio.ReorderedRecordsWarning):
            vio.read_trades(path)
