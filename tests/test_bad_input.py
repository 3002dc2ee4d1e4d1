"""Bad input (contract, last section): the right exception type, a message that names the
argument and, for data errors, the first offending index."""

from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")

N = 20


@contextlib.contextmanager
def expect(exc, name: str, index: int | None = None):
    """pytest.raises(exc) whose message matches the regex `name` and, when given, contains
    `index` as a whole number (not as part of a longer number)."""
    with pytest.raises(exc) as info:
        yield info
    msg = str(info.value)
    assert re.search(name, msg), f"message does not name {name!r}: {msg!r}"
    if index is not None:
        assert re.search(rf"(?<![\d.]){index}(?![\d.])", msg), (
            f"message does not give the first offending index {index}: {msg!r}")


def trades_data():
    rng = np.random.default_rng(0)
    price = 4000.0 + rng.integers(-8, 8, N) * 0.25
    vol = rng.integers(1, 50, N).astype(np.float64)
    return price, vol


def bars_data():
    price, vol = trades_data()
    return dict(high=price + 0.5, low=price.copy(), close=price + 0.25, volume=vol,
                open=price + 0.25)


def call_trades(price, vol, **kw):
    kw.setdefault("tick_size", 0.25)
    return vpoc.from_trades(price, vol, **kw)


def call_bars(d, **kw):
    kw.setdefault("tick_size", 0.25)
    d = dict(d)
    return vpoc.from_bars(d.pop("high"), d.pop("low"), d.pop("close"), d.pop("volume"),
                          **d, **kw)


def test_good_data_is_accepted():
    # the fixtures themselves are valid: errors below come from the one defect injected
    call_trades(*trades_data())
    call_trades(*trades_data(), offsets=[0, 5, 20])
    for dist in ("close", "hlc3", "uniform", "legacy"):
        call_bars(bars_data(), distribute=dist, offsets=[0, 5, 20])


# --------------------------------------------------------------------------------------
# lengths
# --------------------------------------------------------------------------------------
def test_trades_lengths_differ():
    price, vol = trades_data()
    with expect(ValueError, r"price|volume"):
        call_trades(price, vol[:-1])
    with expect(ValueError, r"price|volume"):
        call_trades(price[:-3], vol)


@pytest.mark.parametrize("field", ["high", "low", "close", "volume", "open"])
def test_bars_lengths_differ(field):
    d = bars_data()
    d[field] = d[field][:-1]
    with expect(ValueError, field):
        call_bars(d, distribute="legacy")


# --------------------------------------------------------------------------------------
# non-finite / negative data, first offending index
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("offsets", [None, [0, 5, 20], [0, 7, 7, 20]])
def test_trades_bad_price(bad, offsets):
    price, vol = trades_data()
    price[7] = bad
    price[12] = bad
    with expect(ValueError, "price", 7):
        call_trades(price, vol, offsets=offsets)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, -1.0, -1e-300])
def test_trades_bad_volume(bad):
    price, vol = trades_data()
    vol[7] = bad
    vol[12] = bad
    with expect(ValueError, "volume", 7):
        call_trades(price, vol, offsets=[0, 3, 20])


def test_trades_negative_integer_volume_and_float32():
    price, vol = trades_data()
    v = vol.astype(np.int64)
    v[9] = -1
    v[15] = -5
    with expect(ValueError, "volume", 9):
        call_trades(price, v)
    p32 = price.astype(np.float32)
    p32[11] = np.nan
    with expect(ValueError, "price", 11):
        call_trades(p32, vol)


@pytest.mark.parametrize("field", ["high", "low", "close", "open"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_bars_bad_price(field, bad):
    d = bars_data()
    d[field][7] = bad
    d[field][12] = bad
    # open only matters for "legacy"; the other fields are checked for every distribute
    dists = ["legacy"] if field == "open" else ["close", "hlc3", "uniform", "legacy"]
    for dist in dists:
        with expect(ValueError, field, 7):
            call_bars(d, distribute=dist, offsets=[0, 10, 20])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0])
@pytest.mark.parametrize("dist", ["close", "uniform", "legacy"])
def test_bars_bad_volume(bad, dist):
    d = bars_data()
    d["volume"][7] = bad
    d["volume"][12] = bad
    with expect(ValueError, "volume", 7):
        call_bars(d, distribute=dist)


@pytest.mark.parametrize("dist", ["close", "hlc3", "uniform", "legacy"])
def test_bars_high_below_low(dist):
    d = bars_data()
    d["high"][7] = d["low"][7] - 0.25
    d["high"][12] = d["low"][12] - 1.0
    with expect(ValueError, r"high|low", 7):
        call_bars(d, distribute=dist)


DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(
    "not vpoc.gpu_available()", reason="needs a vpoc GPU build and a GPU")])]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dist", ["close", "hlc3", "uniform", "legacy"])
@pytest.mark.parametrize("field, delta", [("close", 0.25), ("close", -0.25), ("open", 0.5),
                                          ("open", -0.25)])
def test_bars_close_or_open_outside_low_high(field, delta, dist, device):
    """Rejected (not clipped): a close/open outside its bar's range is a data error upstream."""
    d = bars_data()
    d[field][7] = (d["high"][7] if delta > 0 else d["low"][7]) + delta
    d[field][12] = d["high"][12] + 1.0
    with expect(ValueError, rf"{field}\[7\]=[-\d.]+ is outside \[low\[7\], high\[7\]\]", 7):
        call_bars(d, distribute=dist, device=device)
    d[field][7] = d["low"][7]  # on the edges is fine
    d[field][12] = d["high"][12]
    call_bars(d, distribute=dist, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("api", ["trades", "bars"])
def test_volume_sum_overflow(api, device):
    """Volumes are summed exactly up to 2**53 (docs/contract.md "Exact sums"): every volume valid
    but a session's sum past 2**53 is a ValueError naming volume and the session; a single volume
    past 2**53 names its index; never a rounded or inf total."""
    d = bars_data()
    d["volume"][:] = 1.0
    big = float(2**52 + 2**51)  # each is fine, two of them pass 2**53
    d["volume"][[11, 13]] = big
    offsets = np.array([0, 10, N])
    if api == "trades":
        call = lambda: vpoc.from_trades(d["close"], d["volume"], offsets=offsets,  # noqa: E731
                                        tick_size=0.25, device=device)
    else:
        call = lambda: call_bars(d, offsets=offsets, distribute="close", device=device)  # noqa: E731
    with expect(ValueError, r"volume of session 1 sums past 2\*\*53"):
        call()
    d["volume"][13] = 1.0
    prof = call()
    total = np.asarray(prof.cpu().total_volume)
    assert total[0] == 10.0 and total[1] == float(2**52 + 2**51 + N - 11)  # exact
    d["volume"][11] = 1e308
    with expect(ValueError, r"volume\[11\]=1e\+308 is above 2\*\*53", 11):
        call()


@pytest.mark.parametrize("api", ["trades", "bars"])
def test_volume_below_the_fixed_point_unit_range(api):
    """A non-zero volume below 2**-32 would lose most of its bits in units of 2**-64: refused,
    naming the index; 2**-32 itself and 0 are fine."""
    p = np.array([100.0, 100.25, 100.5])
    v = np.array([1.0, 4.5e-88, 2.0])
    call = (lambda: vpoc.from_trades(p, v, tick_size=0.25)) if api == "trades" else \
        (lambda: vpoc.from_bars(p, p, p, v, tick_size=0.25))  # noqa: E731
    with expect(ValueError, r"volume\[1\]=4.4\d+e-88 is below 2\*\*-32", 1):
        call()
    v[1] = 2.0**-32
    assert call().total_volume[0] == 3.0 + 2.0**-32
    v[1] = 0.0
    assert call().total_volume[0] == 3.0


def test_bars_high_equal_low_is_fine():
    d = bars_data()
    d["high"] = d["low"].copy()
    d["close"] = d["low"].copy()
    d["open"] = d["low"].copy()
    call_bars(d, distribute="uniform")


# --------------------------------------------------------------------------------------
# sessions
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("offsets, index", [
    ([1, 5, 20], 0),            # not starting at 0
    ([0, 3, 8, 6, 20], (2, 3)),  # decreasing at 3 (6 < 8); accept 2 or 3
    ([0, 5, 19], None),         # not ending at N
    ([0, 5, 21], None),         # beyond N
    ([], None),                 # no entries
    ([-1, 5, 20], 0),
])
@pytest.mark.parametrize("api", ["trades", "bars"])
def test_bad_offsets(offsets, index, api):
    price, vol = trades_data()
    off = np.array(offsets, dtype=np.int64)
    with pytest.raises(ValueError) as info:
        if api == "trades":
            call_trades(price, vol, offsets=off)
        else:
            call_bars(bars_data(), offsets=off)
    msg = str(info.value)
    assert "offsets" in msg, msg
    if index is not None:
        idx = index if isinstance(index, tuple) else (index,)
        idx_pat = "|".join(str(i) for i in idx)
        assert re.search(rf"(?<![\d.])({idx_pat})(?![\d.])", msg), msg


def test_offsets_float_dtype_rejected():
    price, vol = trades_data()
    with pytest.raises((TypeError, ValueError), match="offsets"):
        call_trades(price, vol, offsets=np.array([0.0, 5.0, 20.0]))


@pytest.mark.parametrize("api", ["trades", "bars"])
def test_session_ids_decreasing(api):
    ids = np.repeat([5, 6, 7, 3], [5, 5, 5, 5]).astype(np.int64)  # 7 -> 3 at index 15
    price, vol = trades_data()
    with expect(ValueError, "session_ids", 15):
        if api == "trades":
            call_trades(price, vol, session_ids=ids)
        else:
            call_bars(bars_data(), session_ids=ids)


def test_session_ids_decreasing_datetime():
    ids = np.array(["2024-01-02"] * 10 + ["2024-01-01"] * 10, dtype="datetime64[D]")
    price, vol = trades_data()
    with expect(ValueError, "session_ids", 10):
        call_trades(price, vol, session_ids=ids)


def test_session_ids_wrong_length():
    price, vol = trades_data()
    with expect(ValueError, "session_ids"):
        call_trades(price, vol, session_ids=np.zeros(N - 1, np.int64))


@pytest.mark.parametrize("api", ["trades", "bars"])
def test_offsets_and_session_ids(api):
    price, vol = trades_data()
    with expect(ValueError, r"offsets|session_ids"):
        if api == "trades":
            call_trades(price, vol, offsets=[0, N], session_ids=np.zeros(N, np.int64))
        else:
            call_bars(bars_data(), offsets=[0, N], session_ids=np.zeros(N, np.int64))


# --------------------------------------------------------------------------------------
# parameters
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("tick_size", [0.0, -0.25, np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("api", ["trades", "bars"])
def test_bad_tick_size(tick_size, api):
    price, vol = trades_data()
    with expect(ValueError, "tick_size"):
        if api == "trades":
            call_trades(price, vol, tick_size=tick_size)
        else:
            call_bars(bars_data(), tick_size=tick_size)


@pytest.mark.parametrize("tpr", [0, -1, -4])
@pytest.mark.parametrize("api", ["trades", "bars"])
def test_bad_ticks_per_row(tpr, api):
    price, vol = trades_data()
    with expect(ValueError, "ticks_per_row"):
        if api == "trades":
            call_trades(price, vol, ticks_per_row=tpr)
        else:
            call_bars(bars_data(), ticks_per_row=tpr)


@pytest.mark.parametrize("tpr", [1.5, "2"])
def test_non_integer_ticks_per_row(tpr):
    price, vol = trades_data()
    with expect((ValueError, TypeError), "ticks_per_row"):
        call_trades(price, vol, ticks_per_row=tpr)


@pytest.mark.parametrize("va", [0.0, -0.1, 1.0000001, 2.0, np.nan, np.inf])
@pytest.mark.parametrize("api", ["trades", "bars"])
def test_bad_value_area(va, api):
    price, vol = trades_data()
    with expect(ValueError, "value_area"):
        if api == "trades":
            call_trades(price, vol, value_area=va)
        else:
            call_bars(bars_data(), value_area=va)


@pytest.mark.parametrize("arg, value", [
    ("distribute", "vwap"), ("distribute", ""), ("va_method", "dalton"), ("va_method", "none"),
    ("poc_tie", "middle"), ("poc_tie", "mid"), ("device", "tpu"), ("device", "gpu:x"),
])
def test_unknown_options_bars(arg, value):
    with expect(ValueError, arg):
        call_bars(bars_data(), **{arg: value})


@pytest.mark.parametrize("arg, value", [
    ("va_method", "dalton"), ("poc_tie", "middle"), ("device", "tpu")])
def test_unknown_options_trades(arg, value):
    price, vol = trades_data()
    with expect(ValueError, arg):
        call_trades(price, vol, **{arg: value})


@pytest.mark.parametrize("threads", [0, -1, -8])
@pytest.mark.parametrize("api", ["trades", "bars"])
def test_bad_threads(threads, api):
    price, vol = trades_data()
    with expect(ValueError, "threads"):
        if api == "trades":
            call_trades(price, vol, threads=threads)
        else:
            call_bars(bars_data(), threads=threads)


# --------------------------------------------------------------------------------------
# dtypes and shapes
# --------------------------------------------------------------------------------------
def _bad_dtype_arrays():
    return {
        "object": np.array([object()] * N, dtype=object),
        "str": np.array(["4000.25"] * N),
        "bytes": np.array([b"1"] * N),
        "complex": np.full(N, 4000.0 + 1j),
    }


@pytest.mark.parametrize("kind", sorted(_bad_dtype_arrays()))
@pytest.mark.parametrize("field", ["price", "volume"])
def test_trades_non_numeric_dtype(kind, field):
    price, vol = trades_data()
    bad = _bad_dtype_arrays()[kind]
    with expect(TypeError, field):
        if field == "price":
            call_trades(bad, vol)
        else:
            call_trades(price, bad)


@pytest.mark.parametrize("kind", ["object", "str", "complex"])
@pytest.mark.parametrize("field", ["high", "low", "close", "volume", "open"])
def test_bars_non_numeric_dtype(kind, field):
    d = bars_data()
    d[field] = _bad_dtype_arrays()[kind]
    with expect(TypeError, field):
        call_bars(d, distribute="legacy")


@pytest.mark.parametrize("field", ["price", "volume"])
def test_trades_two_dimensional(field):
    price, vol = trades_data()
    args = {"price": price, "volume": vol}
    args[field] = args[field].reshape(4, 5)
    with expect(ValueError, field):
        call_trades(args["price"], args["volume"])


@pytest.mark.parametrize("field", ["high", "low", "close", "volume", "open"])
def test_bars_two_dimensional(field):
    d = bars_data()
    d[field] = d[field].reshape(2, 10)
    with expect(ValueError, field):
        call_bars(d, distribute="legacy")


def test_zero_dimensional():
    with expect(ValueError, "price"):
        call_trades(np.float64(4000.0), np.ones(1))


def test_offsets_two_dimensional():
    price, vol = trades_data()
    with expect(ValueError, "offsets"):
        call_trades(price, vol, offsets=np.array([[0, 5], [10, 20]]))


# --------------------------------------------------------------------------------------
# ladder limits
# --------------------------------------------------------------------------------------
def test_price_too_large_for_ladder():
    price, vol = trades_data()
    price[7] = 2.0**52 * 0.25
    price[12] = 2.0**60
    with expect(ValueError, "price", 7):
        call_trades(price, vol)
    price, vol = trades_data()
    price[5] = -(2.0**53)
    with expect(ValueError, "price", 5):
        call_trades(price, vol)


@pytest.mark.parametrize("api", ["trades", "bars"])
def test_max_rows_exceeded_default(api):
    # 2,000,001 ticks between two trades at tick .25 -> more than 1_000_000 rows
    price = np.array([0.0, 500_000.25])
    vol = np.array([1.0, 1.0])
    with expect(ValueError, r"tick_size|ticks_per_row"):
        if api == "trades":
            vpoc.from_trades(price, vol, tick_size=0.25)
        else:
            vpoc.from_bars(price, price, price, vol, tick_size=0.25, distribute="close")
    # a wider row makes it fit
    if api == "trades":
        prof = vpoc.from_trades(price, vol, tick_size=0.25, ticks_per_row=4)
        assert np.asarray(prof.n_rows).tolist() == [500_001]


@pytest.mark.parametrize("distribute", ["uniform", "legacy"])
def test_max_rows_exceeded_custom_one_bar(distribute):
    # one bar spanning 11 rows, max_rows 10
    with expect(ValueError, r"tick_size|ticks_per_row"):
        vpoc.from_bars([10.0], [0.0], [5.0], [1.0], tick_size=1.0, max_rows=10,
                       distribute=distribute)


def test_max_rows_exceeded_custom():
    # close: two bars closing 10 rows apart (11 rows)
    with expect(ValueError, r"tick_size|ticks_per_row"):
        vpoc.from_bars([0.0, 10.0], [0.0, 10.0], [0.0, 10.0], [1.0, 1.0], tick_size=1.0,
                       max_rows=10, distribute="close")
    # trades: 11 rows in the second session only
    with expect(ValueError, r"tick_size|ticks_per_row"):
        vpoc.from_trades([0.0, 1.0, 0.0, 10.0], [1, 1, 1, 1], offsets=[0, 2, 4],
                         tick_size=1.0, max_rows=10)
