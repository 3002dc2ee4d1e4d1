"""Issue 15, the Python-side hardening cases (5, 8, 9, 10, 11 and the memory half of 12).

Each case has a test named after it. Cases that could crash or hang run in a subprocess with a
generous timeout (never a timed assertion otherwise).
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import vpoc
from vpoc import io as vio
from vpoc import sessions

NAT_INT = -2**63
TIMEOUT = 300  # seconds; only against hangs


def run_python(code: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (a crash there fails the test instead of killing pytest)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


# =============================================================================== case 10


def _masked(values, masked_at):
    mask = np.zeros(len(values), dtype=bool)
    mask[masked_at] = True
    return np.ma.masked_array(np.asarray(values), mask=mask)


@pytest.mark.parametrize("call, name", [
    (lambda p, v: vpoc.from_trades(p, [1.0, 1.0, 5.0], tick_size=1.0), "price"),
    (lambda p, v: vpoc.from_trades([1.0, 2.0, 3.0], v, tick_size=1.0), "volume"),
    (lambda p, v: vpoc.from_bars(p, [0.5, 1.5, 2.5], p, [1.0, 1.0, 5.0], tick_size=0.5), "high"),
    (lambda p, v: vpoc.from_bars([1.0, 2.0, 3.0], [0.5, 1.5, 2.5], [1.0, 2.0, 3.0], v,
                                 tick_size=0.5, developing=True), "volume"),
    (lambda p, v: vpoc.from_trades([1.0, 2.0, 3.0], [1.0, 1.0, 5.0],
                                   offsets=_masked([0, 2, 3], 1), tick_size=1.0), "offsets"),
    (lambda p, v: vpoc.from_trades([1.0, 2.0, 3.0], [1.0, 1.0, 5.0],
                                   session_ids=_masked([0, 0, 1], 2), tick_size=1.0), "session_ids"),
    (lambda p, v: vpoc.session_features([2.0, 3.0, 4.0], [1.0, 2.0, 3.0], [1.5, 2.5, 3.5], v,
                                        tick_size=0.5), "volume"),
    (lambda p, v: vpoc.bar_features(p, [0.5, 1.5, 2.5], p, [1.0, 1.0, 5.0], tick_size=0.5), "high"),
    (lambda p, v: vpoc.Live(tick_size=0.5).update(p, [0.5, 1.5, 2.5], p, [1.0, 1.0, 5.0],
                                                  timestamp=[1, 2, 3]), "high"),
])
def test_case10_masked_arrays_are_refused(call, name):
    # before: the masked rows were used silently (the masked 5.0 made row 3 the POC)
    p = _masked([1.0, 2.0, 3.0], 2)
    v = _masked([1.0, 1.0, 5.0], 2)
    with pytest.raises(ValueError, match=rf"{name} is a numpy masked array .*index [12].*not supported"):
        call(p, v)


def test_case10_masked_timestamps_are_refused():
    ts = _masked(np.array([1_700_000_000, 1_700_000_060, 1_700_000_120]) * 10**9, 1)
    with pytest.raises(ValueError, match="ts is a numpy masked array"):
        sessions.daily(ts)
    with pytest.raises(ValueError, match="timestamp is a numpy masked array"):
        vpoc.bar_features([2.0, 3.0, 4.0], [1.0, 2.0, 3.0], [1.5, 2.5, 3.5], [1, 1, 1],
                          timestamp=ts, tick_size=0.5)
    with pytest.raises(ValueError, match="timestamp is a numpy masked array"):
        vio.Trades(timestamp=ts, price=[1.0, 2.0, 3.0], volume=[1, 1, 1])


def test_case10_masked_array_without_masked_values_is_its_data():
    p = np.ma.masked_array([1.0, 2.0, 2.0])  # nothing masked: the data is all there
    got = vpoc.from_trades(p, np.ma.masked_array([1, 1, 1]), tick_size=1.0)
    assert got.poc[0] == 2.0 and got.total_volume[0] == 3.0


GOOD_NS = [1_700_000_000 * 10**9, 1_700_000_060 * 10**9, 1_700_000_120 * 10**9]


@pytest.mark.parametrize("unit, scale", [("ns", 1), ("s", 10**-9)])
@pytest.mark.parametrize("entry", ["daily", "globex", "bar_features", "io.Bars", "Live", "Live.one"])
def test_case10_nat_integer_timestamp_is_an_error(entry, unit, scale):
    # before: -2**63 went through as a number: 1970 in seconds (the scaling wrapped), 1677 or a
    # pandas OutOfBounds error or a calendar error in ns; io.Bars stored NaT; Live accepted it
    good = [int(t * scale) if scale != 1 else t for t in GOOD_NS]
    ts = np.array([good[0], NAT_INT, good[2]], dtype=np.int64)
    h, lo, c, v = [2.0, 3.0, 4.0], [1.0, 2.0, 3.0], [1.5, 2.5, 3.5], [1, 1, 1]
    name = "ts" if entry in ("daily", "globex") else "timestamp"
    index = 0 if entry == "Live.one" else 1
    calls = {
        "daily": lambda: sessions.daily(ts, time_unit=unit),
        "globex": lambda: sessions.globex(ts, time_unit=unit),
        "bar_features": lambda: vpoc.bar_features(h, lo, c, v, timestamp=ts, time_unit=unit,
                                                  tick_size=0.5),
        "io.Bars": lambda: vio.Bars(timestamp=ts,
                                    open=c, high=h, low=lo, close=c, volume=v),
        "Live": lambda: vpoc.Live(tick_size=0.5, time_unit=unit).update(h, lo, c, v, timestamp=ts),
        "Live.one": lambda: vpoc.Live(tick_size=0.5, time_unit=unit).update(2.0, 1.0, 1.5, 1,
                                                                            timestamp=NAT_INT),
    }
    if entry == "io.Bars" and unit != "ns":
        pytest.skip("vpoc.io containers take ns (or datetime64)")
    with pytest.raises(ValueError, match=rf"{name}\[{index}\] = -9223372036854775808 is -2\*\*63, "
                                         r"the integer form of NaT"):
        calls[entry]()


def test_case10_nat_integer_timestamp_in_a_file(tmp_path):
    path = tmp_path / "bars.csv"
    path.write_text("timestamp,open,high,low,close,volume\n"
                    f"{GOOD_NS[0] // 10**9},1,2,1,1,1\n{NAT_INT},1,2,1,1,1\n")
    with pytest.raises(ValueError, match=r"line 3: timestamp -9223372036854775808 is -2\*\*63"):
        vio.read_bars(path, time_unit="s")


def test_case10_nat_datetime_session_ids_are_an_error():
    ids = np.array(["2024-01-02", "NaT", "NaT"], dtype="datetime64[ns]")
    with pytest.raises(ValueError, match=r"session_ids\[1\] is NaT"):
        vpoc.from_trades([1.0, 2.0, 3.0], [1, 1, 1], session_ids=ids, tick_size=1.0)
