"""datetime64 inputs of every unit become int64 ns exactly, or raise ValueError naming the element:
numpy wraps an out-of-range conversion silently before 2.5 and raises a bare OverflowError from 2.5,
so the library checks the conversion itself (vpoc._time.datetime64_ns) everywhere it takes one."""

from __future__ import annotations

import numpy as np
import pytest

import vpoc
from vpoc._time import datetime64_ns

FAR = np.array([0, 2**62], dtype="datetime64[us]")  # year 148108: no instant in int64 ns


def reference_ns(values: np.ndarray) -> list:
    """Plain Python: the integer ns of each instant (unit multiple x count), no numpy casts."""
    unit, count = np.datetime_data(values.dtype)
    per = {"W": 7 * 86400 * 10**9, "D": 86400 * 10**9, "h": 3600 * 10**9, "m": 60 * 10**9,
           "s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}[unit] * count
    return [int(v) * per for v in values.view(np.int64)]


@pytest.mark.parametrize("unit", ["W", "D", "h", "m", "s", "ms", "us", "ns", "10ms"])
def test_every_unit_converts_exactly(unit):
    rng = np.random.default_rng(1)
    ns = rng.integers(-(2**62), 2**62, 1000)
    values = (ns // reference_ns(np.array([1], dtype=f"datetime64[{unit}]"))[0]).astype(
        f"datetime64[{unit}]")
    got = datetime64_ns(values, "ts")
    assert got.dtype == np.int64
    assert got.tolist() == reference_ns(values)


@pytest.mark.parametrize("values, index", [
    (FAR, 1),
    (np.array([5, -(2**62)], dtype="datetime64[s]"), 1),
    (np.array([10**6, 1], dtype="datetime64[ps]"), 1),  # 1 ps would be rounded to 0 ns
    (np.array(["2300-01-01"], dtype="datetime64[D]"), 0),
    (np.array(["1600-01-01"], dtype="datetime64[Y]"), 0),
])
def test_out_of_range_or_finer_than_ns_names_the_element(values, index):
    with pytest.raises(ValueError, match=rf"ts\[{index}\] = .* is not an instant in int64 nanoseconds"):
        datetime64_ns(values, "ts")


@pytest.mark.parametrize("unit", ["s", "ns"])
def test_nat_names_the_element(unit):
    with pytest.raises(ValueError, match=r"^ts\[1\] is NaT$"):
        datetime64_ns(np.array(["2025-03-10", "NaT"], dtype=f"datetime64[{unit}]"), "ts")


def test_generic_unit_is_refused():
    with pytest.raises(ValueError, match="ts is datetime64 without a unit"):
        datetime64_ns(np.zeros(2, dtype="datetime64"), "ts")


def test_the_public_entry_points_use_it():
    with pytest.raises(ValueError, match=r"ts\[1\] = .* not an instant"):
        vpoc.sessions.daily(FAR)
    with pytest.raises(ValueError, match=r"timestamp\[1\] = .* not an instant"):
        vpoc.features.session_features(np.ones(2), np.ones(2), np.ones(2), np.ones(2),
                                       timestamp=FAR, tick_size=0.25)


def test_io_containers_use_it():
    import vpoc.io as vio  # its containers need no pandas

    ok = np.array(["2025-03-10T13:31", "2025-03-10T13:32"], dtype="datetime64[m]")
    bars = vio.Bars(ok, *(np.ones(2),) * 4, np.ones(2))
    assert bars.timestamp.tolist() == reference_ns(ok)
    with pytest.raises(ValueError, match=r"timestamp\[1\] = .* not an instant"):
        vio.Bars(FAR, *(np.ones(2),) * 4, np.ones(2))
