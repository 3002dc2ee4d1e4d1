"""A CPU result's volume column holds no allocation much larger than itself: a call of many trades
and few rows after a call of many rows (one thread: the worker's buffer handed over as the column)."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

import numpy as np
import pytest

import vpoc


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]


def _malloced():
    """Bytes malloc has handed out and not taken back (glibc's mallinfo2: heap + mmapped blocks)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    f = getattr(libc, "mallinfo2", None)
    if f is None:
        pytest.skip("needs glibc >= 2.33 (mallinfo2)")
    f.restype = _Mallinfo2
    m = f()
    return m.uordblks + m.hblkhd


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallinfo2")
def test_a_one_row_result_after_a_many_row_call_holds_no_big_buffer():
    n, sessions = 1_000_000, 500
    wide = np.tile(1000.0 + np.arange(n // sessions) * 0.25, sessions)  # every trade its own row: 1 M rows
    vol = np.ones(n, np.float64)
    a = vpoc.from_trades(wide, vol, offsets=np.arange(0, n + 1, n // sessions), tick_size=0.25, threads=1)
    assert a.volume.size == n
    del a
    flat = np.full(n, 1000.0)  # as many trades, one price: one row
    b = vpoc.from_trades(flat, vol, offsets=np.array([0, n]), tick_size=0.25, threads=1)
    assert b.n_rows[0] == 1 and b.volume[0] == n
    before = _malloced()
    del b  # what the result held goes back to malloc
    held = before - _malloced()
    assert held < 1 << 20, f"a 1-row result held {held / 2**20:.1f} MiB"  # 1 M rows would be 7.6 MiB
