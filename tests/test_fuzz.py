"""Fuzzing the public API with adversarial arrays: every case either raises ValueError/TypeError
naming an argument, or returns profiles that conserve volume with val <= poc <= vah inside the
session's price range (greedy: val <= vah and a maximal POC row, as the contract says) and
sessions that partition the kept rows.

The hypothesis runs happen in a child process (one per API), so a crash (segfault, abort, a
sanitizer report) fails the test instead of killing the test run. Cases per API: FUZZ_EXAMPLES.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import _deps
import vpoc

FUZZ_EXAMPLES = int(os.environ.get("VPOC_FUZZ_EXAMPLES", "300"))
HERE = os.path.dirname(os.path.abspath(__file__))

# Every argument name a message may name.
ARG_NAMES = ("price", "volume", "high", "low", "close", "open", "offsets", "session_ids",
             "tick_size", "ticks_per_row", "max_rows", "value_area", "distribute", "ts", "time_unit",
             "tz")

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.25, 4500.25, 1e-300, 5e-324, -5e-324, 2.2250738585072014e-308,
           1e15, 1e300, -1e300, 1.7976931348623157e308, np.inf, -np.inf, np.nan, 2.0**53, 2.0**63]
DTYPES = ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint64", "uint32",
          "uint8", "bool", "complex128", "object", "U4", "datetime64[ns]", "longdouble"]
LAYOUTS = ["plain", "strided", "readonly", "bigendian", "list", "2d", "scalar"]


def values(n: int, *, price: bool):
    """Mostly valid data (on and off the tick grid; tiny, fractional and huge volumes), sometimes
    mixed with special values (denormals, +-0, inf, NaN, extremes) anywhere."""
    if price:
        normal = st.one_of(st.floats(4000, 4100).map(lambda x: round(x * 4) / 4),
                           st.floats(4000, 4100), st.floats(-50, 50))
    else:
        normal = st.one_of(st.integers(0, 10**6).map(float), st.floats(0, 1e4),
                           st.floats(0, 1e-300), st.floats(1e290, 1e300))
    adversarial = st.one_of(normal, st.sampled_from(SPECIAL), st.floats())
    return st.one_of(*[st.lists(normal, min_size=n, max_size=n)] * 3,
                     st.lists(adversarial, min_size=n, max_size=n))


@st.composite
def array(draw, n: int, price: bool, dtype=None):
    """A 1-D input of length n in an adversarial dtype and memory layout (mostly float64)."""
    vals = draw(values(n, price=price))
    dt = dtype or draw(st.one_of(*[st.just("float64")] * 3, st.sampled_from(DTYPES)))
    layout = draw(st.sampled_from(LAYOUTS[:4] * 3 + LAYOUTS[4:]))
    with np.errstate(all="ignore"):
        try:
            arr = np.asarray(vals, dtype=np.float64).astype(dt)
        except (ValueError, TypeError, OverflowError):
            arr = np.asarray(vals, dtype=object)
    if layout == "strided":
        arr = np.repeat(arr, 2)[::2]
    elif layout == "readonly":
        arr = arr.copy()
        arr.setflags(write=False)
    elif layout == "bigendian" and arr.dtype.kind in "iufc" and arr.dtype.itemsize > 1:
        arr = arr.astype(arr.dtype.newbyteorder(">"))
    elif layout == "list":
        return arr.tolist()
    elif layout == "2d":
        return arr.reshape(1, -1)
    elif layout == "scalar":
        return arr[0] if n else arr
    return arr


@st.composite
def sessions(draw, n: int):
    """offsets / session_ids / neither: valid ones mostly, odd ones sometimes."""
    kind = draw(st.sampled_from(["none", "offsets", "offsets", "ids", "ids", "odd_offsets", "odd_ids"]))
    if kind == "none":
        return {}
    if kind == "offsets":
        cuts = sorted(draw(st.lists(st.integers(0, n), max_size=5)))
        return {"offsets": np.array([0, *cuts, n], dtype=draw(st.sampled_from(["int64", "int32", "uint8"])))}
    if kind == "ids":
        steps = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        base = draw(st.sampled_from([0, -(2**62), 2**62, 20240102]))
        return {"session_ids": np.asarray(base + np.cumsum(steps, dtype=np.int64), dtype=np.int64)}
    if kind == "odd_offsets":
        raw = draw(st.lists(st.integers(-3, n + 3), min_size=0, max_size=6))
        dt = draw(st.sampled_from(["int64", "float64", "uint64", "bool"]))
        return {"offsets": np.asarray(raw).astype(dt)}
    raw = draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=max(n - 1, 0), max_size=n + 1))
    return {"session_ids": np.asarray(raw, dtype=np.int64)}


TICKS = st.one_of(*[st.just(0.25)] * 4, st.sampled_from(
    [1.0, 1e-9, 1e-300, 5e-324, 1e300, 0.0, -0.25, np.nan, np.inf, 3, np.float32(0.25)]))
COMMON = dict(tick_size=TICKS, ticks_per_row=st.sampled_from([1, 1, 1, 1, 2, 7, 0, 2**40]),
              value_area=st.sampled_from([0.7, 0.7, 0.7, 0.7, 1.0, 1e-9, 0.0]),
              va_method=st.sampled_from(["cbot", "single", "greedy"]),
              poc_tie=st.sampled_from(["center", "low", "high"]),
              developing=st.booleans(),
              snap=st.booleans())  # snap=False: off-grid prices raise naming tick_size (most cases are off it)


@st.composite
def trade_case(draw):
    n = draw(st.sampled_from([0, 1, 1, 2, 5, 17, 40]))
    kw = {k: draw(v) for k, v in COMMON.items()}
    return dict(api="trades", price=draw(array(n, True)), volume=draw(array(n, False)),
                **draw(sessions(n)), **kw)


@st.composite
def bar_case(draw):
    n = draw(st.sampled_from([0, 1, 1, 2, 5, 17, 40]))
    dt = draw(st.sampled_from([None, "float64", "float32", "int64"]))
    low = np.asarray(draw(values(n, price=True)), dtype=np.float64)
    bad = draw(st.integers(0, 3)) == 0  # a quarter of the cases: high < low, close/open outside
    width = np.asarray(draw(st.lists(st.sampled_from([0, 0.25, 1.0, 3.75] + [-0.25] * bad),
                                     min_size=n, max_size=n)), dtype=np.float64)
    frac = np.asarray(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0] + [1.5, -0.5] * bad), min_size=n,
                                    max_size=n)), dtype=np.float64)
    with np.errstate(all="ignore"):
        high = low + width
        close = low + frac * width

    def shaped(x):  # mostly the well-formed bars above, sometimes a fully adversarial array
        if draw(st.integers(0, 9)) == 0:
            return draw(array(n, True))
        with np.errstate(all="ignore"):
            return x if dt is None else x.astype(dt)
    case = dict(api="bars", high=shaped(high), low=shaped(low), close=shaped(close),
                volume=draw(array(n, False)), **draw(sessions(n)),
                distribute=draw(st.sampled_from(["uniform", "close", "hlc3", "legacy"] * 3 + ["vwap"])),
                **{k: draw(v) for k, v in COMMON.items()})
    if draw(st.booleans()):
        case["open"] = shaped(np.where(frac > 0.5, low, close) if n else low)
    return case


@st.composite
def ts_case(draw):
    n = draw(st.sampled_from([0, 1, 2, 30]))
    base = draw(st.sampled_from([1_700_000_000 * 10**9, 1_700_000_000 * 10**6, 1_700_000_000, 0,
                                 -(2**62), 2**62]))
    steps = draw(st.lists(st.integers(-10**9, 10**13), min_size=n, max_size=n))
    dt = draw(st.sampled_from(["int64", "int64", "uint64", "int32", "float64", "datetime64[ns]",
                               "datetime64[us]", "object"]))
    with np.errstate(all="ignore"):
        try:
            ts = (np.int64(base) + np.cumsum(np.asarray(steps, dtype=np.int64))).astype(dt)
        except (OverflowError, TypeError, ValueError):
            ts = np.asarray(steps, dtype=object)
    return dict(api="sessions", ts=ts, rule=draw(st.sampled_from(["daily", "globex", "custom"])),
                time_unit=draw(st.sampled_from([None, None, "s", "ms", "us", "ns", "h"])))


def _names_an_argument(e: BaseException) -> bool:
    msg = str(e)
    return any(name in msg for name in ARG_NAMES)


def _host(x):
    return np.asarray(x)


def check_profiles(case: dict, prof: vpoc.Profiles) -> None:
    """Volume conservation, val <= poc <= vah inside the session's price range, structure."""
    vol_in = np.asarray(case["volume"], dtype=np.float64).reshape(-1)
    n = vol_in.shape[0]
    if "offsets" in case:
        offs = np.asarray(case["offsets"]).astype(np.int64)
    elif "session_ids" in case:
        ids = np.asarray(case["session_ids"])
        offs = (np.concatenate([[0], np.flatnonzero(np.diff(ids)) + 1, [n]]).astype(np.int64) if n
                else np.zeros(1, dtype=np.int64))
    else:
        offs = np.array([0, n], dtype=np.int64)
    S = offs.shape[0] - 1
    assert prof.n_sessions == S
    if case["api"] == "trades":
        lo_p = hi_p = np.asarray(case["price"], dtype=np.float64).reshape(-1)
    else:
        lo_p = np.asarray(case["low"], dtype=np.float64).reshape(-1)
        hi_p = np.asarray(case["high"], dtype=np.float64).reshape(-1)
    rs = prof.row_size
    out_off = np.asarray(prof.offsets)
    for s in range(S):
        a, b = int(offs[s]), int(offs[s + 1])
        ref = float(np.sum(vol_in[a:b]))
        rows = np.asarray(prof.volume[out_off[s]:out_off[s + 1]])
        tot = float(prof.total_volume[s])
        assert np.isfinite(tot)
        assert np.isclose(tot, ref, rtol=1e-9, atol=1e-300), (s, tot, ref)
        assert np.isclose(float(np.sum(rows)), tot, rtol=1e-9, atol=1e-300), (s, rows.sum(), tot)
        assert np.all(rows >= 0)
        if b == a:
            assert prof.n_rows[s] == 0 and np.isnan(prof.poc[s])
            continue
        top = prof.low_row[s] + prof.n_rows[s] - 1
        assert prof.low_row[s] <= prof.val_row[s] <= prof.vah_row[s] <= top
        assert prof.low_row[s] <= prof.poc_row[s] <= top
        val, poc, vah = float(prof.val[s]), float(prof.poc[s]), float(prof.vah[s])
        if case.get("va_method", "cbot") != "greedy":
            assert val <= poc <= vah, (val, poc, vah)
        else:  # greedy (contract): the POC need not lie between VAL and VAH when poc_tie picks
            # another of the tied maximal rows; the POC row is still a maximal row
            assert val <= vah and rows[prof.poc_row[s] - prof.low_row[s]] >= rows.max() * (1 - 1e-9)
        lo, hi = float(np.min(lo_p[a:b])), float(np.max(hi_p[a:b]))
        slack = rs * (1 + 1e-9) + 1e-9 * max(abs(lo), abs(hi))
        assert lo - slack <= val and vah <= hi + slack, (lo, hi, val, vah, rs)
        if case["developing"]:
            for k, final in (("dev_poc", poc), ("dev_vah", vah), ("dev_val", val)):
                assert float(np.asarray(getattr(prof, k))[b - 1]) == final, (k, s)


OUTCOMES: dict = {}  # (api, "result" or the exception type) -> cases


def run_case(case: dict) -> None:
    api = case["api"]
    outcome = run_one(case)
    OUTCOMES[(api, outcome)] = OUTCOMES.get((api, outcome), 0) + 1


def run_one(case: dict) -> str:
    api = case["api"]
    args = {k: v for k, v in case.items() if k != "api"}
    try:
        if api == "sessions":
            rule = args.pop("rule")
            fn = {"daily": vpoc.sessions.daily,
                  "globex": lambda ts, **kw: vpoc.sessions.globex(ts, calendar=None, **kw),
                  "custom": lambda ts, **kw: vpoc.sessions.custom(ts, "17:00", "16:00", "America/Chicago",
                                                                   **kw)}[rule]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", vpoc.DroppedRowsWarning)
                sess = fn(args["ts"], time_unit=args["time_unit"])
            if any(issubclass(w.category, vpoc.DroppedRowsWarning) for w in caught):
                assert sess.n_dropped > 0  # the warning counts rows that were left out
        elif api == "trades":
            prof = vpoc.from_trades(args.pop("price"), args.pop("volume"), **args)
        else:
            prof = vpoc.from_bars(args.pop("high"), args.pop("low"), args.pop("close"),
                                  args.pop("volume"), **args)
    except (ValueError, TypeError) as e:
        assert _names_an_argument(e), f"{type(e).__name__} names no argument: {e}"
        return type(e).__name__
    if api == "sessions":
        offs = np.asarray(sess.offsets)
        assert offs[0] == 0 and offs[-1] == sess.n_kept and np.all(np.diff(offs) >= 1)
        assert sess.n_kept + sess.n_dropped == len(case["ts"])
        assert np.all(np.diff(sess.labels) > 0)
        return "result"
    check_profiles(case, prof)
    return "result"


_SETTINGS = settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None, print_blob=True,
                     suppress_health_check=list(HealthCheck))


@_SETTINGS
@given(case=trade_case())
def fuzz_trades(case):
    run_case(case)


@_SETTINGS
@given(case=bar_case())
def fuzz_bars(case):
    run_case(case)


@_SETTINGS
@given(case=ts_case())
def fuzz_sessions(case):
    run_case(case)


@pytest.mark.parametrize("target", ["fuzz_trades", "fuzz_bars",
                                    pytest.param("fuzz_sessions", marks=_deps.needs("pandas"))])
def test_fuzz_in_subprocess(target):
    code = textwrap.dedent(f"""
        import sys, warnings
        sys.path.insert(0, {HERE!r})
        warnings.simplefilter("error")
        import vpoc
        # whole-number prices with tick 0.25 (k = 4) are a real data shape that warns; the fuzz's do too
        warnings.filterwarnings("ignore", category=vpoc.CoarseGridWarning)
        import test_fuzz
        test_fuzz.{target}()
        print("fuzz outcomes:", sorted(test_fuzz.OUTCOMES.items()))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, (f"{target} exited with {r.returncode} (negative: killed by signal)\n"
                               f"--- stdout\n{r.stdout[-6000:]}\n--- stderr\n{r.stderr[-12000:]}")
    print(r.stdout.strip())
    # the generators must reach the engine's results, not only its argument checks
    # (vpoc.InputError is the engine's ValueError naming an argument)
    assert "'result'), " in r.stdout + " " and ("ValueError" in r.stdout or "InputError" in r.stdout), r.stdout


def test_checker_catches_a_wrong_result():
    """The property check itself can fail: a profile with a tampered total is rejected."""
    case = dict(api="trades", price=np.array([1.0, 1.25]), volume=np.array([1.0, 2.0]),
                tick_size=0.25, developing=False)
    prof = vpoc.from_trades(case["price"], case["volume"], tick_size=0.25)
    check_profiles(case, prof)
    bad = vpoc.from_trades(case["price"], np.array([1.0, 2.5]), tick_size=0.25)
    with pytest.raises(AssertionError):
        check_profiles(case, bad)
