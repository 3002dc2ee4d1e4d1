"""Tests of vpoc.io.read_contracts (issue 23 point 6): overlapping contracts 100 points apart.

Contract: roll dates, rows, ledgers and adjusted prices are checked against plain pandas/NumPy
computations of the documented rules; sessions never mix contracts.
"""

from __future__ import annotations

import datetime as dt
import warnings

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pandas_market_calendars")

import vpoc  # noqa: E402
from vpoc.io import ContinuousBars, read_contracts  # noqa: E402
from vpoc.io.contracts import cme_roll_date, contract_expiry, contract_name  # noqa: E402

from _user_file import user_bars  # noqa: E402
from reference import ref_bars  # noqa: E402

SPAN = dict(start="2025-02-16", end="2025-03-20", strays=False)


@pytest.fixture(scope="module")
def base():
    return user_bars(**SPAN)


def _frame(d, sel, shift, vmul):
    return pd.DataFrame({
        "timestamp": pd.DatetimeIndex(d["open_ns"][sel]).tz_localize("UTC"),
        "open": d["open"][sel] + shift, "high": d["high"][sel] + shift,
        "low": d["low"][sel] + shift, "close": d["close"][sel] + shift,
        "volume": (d["volume"][sel] * vmul[sel]).astype(np.int64)})


@pytest.fixture(scope="module")
def two(base):
    """ESH5 all span (busy until Mar 10), ESM5 from Mar 3 at +100 points (busy from Mar 11)."""
    td = base["trade_date"]
    h = _frame(base, np.ones(td.size, bool), 0.0, np.where(td <= 20250310, 10, 1))
    m = _frame(base, td >= 20250303, 100.0, np.where(td <= 20250310, 1, 10))
    return {"ESH5": h, "ESM5": m}, td


def _volume_roll_reference(frames, td_of):
    """First trade date after the first date on which ESM5's daily volume exceeds ESH5's."""
    daily = {n: f.groupby(td_of[n])["volume"].sum() for n, f in frames.items()}
    dates = sorted(set(daily["ESH5"].index) | set(daily["ESM5"].index))
    for i, d in enumerate(dates):
        if daily["ESM5"].get(d, 0) > daily["ESH5"].get(d, 0):
            return dates[i + 1]
    return None


def test_23_6_volume_roll_rows_ledger_sessions(two):
    frames, td = two
    td_of = {"ESH5": td, "ESM5": td[td >= 20250303]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = read_contracts({"ESM5": frames["ESM5"], "ESH5": frames["ESH5"]})  # any order
    assert isinstance(r, ContinuousBars) and r.contracts == ("ESH5", "ESM5")
    switch = _volume_roll_reference(frames, td_of)
    assert switch == 20250312
    n_h = int(np.sum(td < switch))
    n_m = int(np.sum(td_of["ESM5"] >= switch))
    assert len(r) == n_h + n_m
    assert r.dropped_rows == (td.size - n_h) + (td_of["ESM5"].size - n_m)
    assert r.dropped_by_contract == {"ESH5": td.size - n_h, "ESM5": td_of["ESM5"].size - n_m}
    # each trade date uses one contract, the right one
    df = r.to_pandas()
    per_date = df.groupby("trade_date")["contract"].agg(["nunique", "first"])
    assert (per_date["nunique"] == 1).all()
    assert (per_date.loc[per_date.index < switch, "first"] == "ESH5").all()
    assert (per_date.loc[per_date.index >= switch, "first"] == "ESM5").all()
    tm = td_of["ESM5"]
    np.testing.assert_array_equal(r.trade_date, np.concatenate([td[td < switch], tm[tm >= switch]]))
    # the ledger: last closes of both on the last trade date before the roll
    assert len(r.rolls) == 1
    row = r.rolls.iloc[0]
    assert (row["date"], row["from"], row["to"], row["reason"], row["ref_date"]) == \
        (switch, "ESH5", "ESM5", "volume", 20250311)
    last_h = frames["ESH5"]["close"][td == 20250311].iloc[-1]
    last_m = frames["ESM5"]["close"][td_of["ESM5"] == 20250311].iloc[-1]
    assert row["from_close"] == last_h and row["to_close"] == last_m
    assert row["offset"] == pytest.approx(100.0) and row["ratio"] == pytest.approx(last_m / last_h)
    # adjust="none": prices as traded
    np.testing.assert_array_equal(r.close[: n_h], frames["ESH5"]["close"].to_numpy()[td < switch])
    assert np.all(np.diff(r.timestamp) > 0)


def test_23_6_calendar_roll(two):
    frames, td = two
    assert cme_roll_date(2025, 3) == dt.date(2025, 3, 13)      # third Friday Mar 21 - 8 days
    assert cme_roll_date(2025, 6) == dt.date(2025, 6, 12)
    assert cme_roll_date(2024, 12) == dt.date(2024, 12, 12)
    r = read_contracts(frames, roll="calendar")
    assert r.rolls["date"].tolist() == [20250313] and r.rolls["reason"].tolist() == ["calendar"]
    assert set(r.contract[r.trade_date < 20250313]) == {"ESH5"}
    assert set(r.contract[r.trade_date >= 20250313]) == {"ESM5"}


@pytest.mark.parametrize("adjust", ["spread", "ratio"])
def test_23_6_adjusted_prices(two, adjust):
    frames, td = two
    r = read_contracts(frames, adjust=adjust)
    none = read_contracts(frames)
    old = none.contract == "ESH5"
    row = r.rolls.iloc[0]
    for f in ("open", "high", "low", "close"):
        a, b = getattr(r, f), getattr(none, f)
        if adjust == "spread":
            np.testing.assert_array_equal(a[old], b[old] + row["offset"])
        else:
            np.testing.assert_allclose(a[old], b[old] * row["ratio"], rtol=1e-15)
        np.testing.assert_array_equal(a[~old], b[~old])      # the newest contract as traded
    np.testing.assert_array_equal(r.volume, none.volume)
    # back-adjusted onto the new contract's level: no 100-point jump at the roll
    i = int(np.flatnonzero(~old)[0])
    assert abs(r.close[i] - r.close[i - 1]) < 5 and abs(none.close[i] - none.close[i - 1]) > 90


def test_23_6_three_contracts_cumulative_spread(base):
    td = base["trade_date"]
    frames = {
        "ESZ4": _frame(base, td <= 20250228, 0.0, np.where(td <= 20250221, 10, 1)),
        "ESH5": _frame(base, (td >= 20250218) & (td <= 20250314), 100.0,
                       np.where((td > 20250221) & (td <= 20250307), 10, 1)),
        "ESM5": _frame(base, td >= 20250303, 200.0, np.where(td > 20250307, 10, 1)),
    }
    r = read_contracts(frames, adjust="spread")
    assert r.rolls["date"].tolist() == [20250225, 20250311]
    assert r.rolls["offset"].tolist() == pytest.approx([100.0, 100.0])
    raw = {n: f.set_index(f["timestamp"].astype("int64"))["close"] for n, f in frames.items()}
    for name, total in (("ESZ4", 200.0), ("ESH5", 100.0), ("ESM5", 0.0)):
        sel = r.contract == name
        ts = pd.DatetimeIndex(r.timestamp[sel]).asi8
        np.testing.assert_array_equal(r.close[sel], raw[name].loc[ts].to_numpy() + total)


def test_23_6_callable_roll(two):
    frames, td = two
    seen = {}

    def rule(contract_frames):
        seen.update(contract_frames)
        return ["2025-03-05"]

    r = read_contracts(frames, roll=rule)
    assert list(seen) == ["ESH5", "ESM5"] and "trade_date" in seen["ESH5"].columns
    assert r.rolls["date"].tolist() == [20250305] and r.rolls["reason"].tolist() == ["callable"]
    with pytest.raises(ValueError, match="expected 1"):
        read_contracts(frames, roll=lambda f: [])
    with pytest.raises(TypeError, match="roll date"):
        read_contracts(frames, roll=lambda f: [1.5])


def test_23_6_file_names_and_close_stamps(tmp_path, two):
    frames, td = two
    paths = []
    for name, f in (("ES 06-25", frames["ESM5"]), ("ES 03-25", frames["ESH5"])):
        t = pd.DatetimeIndex(f["timestamp"]).tz_convert("UTC") + pd.Timedelta(60, "s")
        lines = [f"{s};{o:.2f};{h:.2f};{lo:.2f};{c:.2f};{v}" for s, o, h, lo, c, v in zip(
            t.strftime("%Y%m%d %H%M%S"), f["open"], f["high"], f["low"], f["close"], f["volume"])]
        p = tmp_path / f"{name}.Last.txt"
        p.write_text("\n".join(lines) + "\n")
        paths.append(str(p))
    r = read_contracts(paths, tz="UTC", label="close", interval=60)
    assert r.contracts == ("ES 03-25", "ES 06-25")
    ref = read_contracts(frames)
    np.testing.assert_array_equal(r.timestamp, ref.timestamp)   # open stamps
    np.testing.assert_array_equal(r.close, ref.close)
    assert r.rolls["date"].tolist() == ref.rolls["date"].tolist()


def test_23_6_contract_column(two):
    frames, td = two
    both = pd.concat([f.assign(symbol=n) for n, f in frames.items()], ignore_index=True)
    r = read_contracts(both)
    ref = read_contracts(frames)
    assert r.contracts == ("ESH5", "ESM5")
    np.testing.assert_array_equal(r.close, ref.close)
    r2 = read_contracts([f.assign(contract=n) for n, f in frames.items()])
    np.testing.assert_array_equal(r2.timestamp, ref.timestamp)


def test_23_6_prev_poc_uses_adjusted_prices(two):
    frames, td = two
    prev = {}
    for adjust in ("none", "spread"):
        r = read_contracts(frames, adjust=adjust)
        ft = vpoc.session_features(r.high, r.low, r.close, r.volume, session_ids=r.trade_date,
                                   tick_size=0.25, lookbacks=(5,))
        names = list(ft.columns)
        prev[adjust] = np.asarray(ft.values)[:, names.index("prev_poc_dist")].astype(np.float64)
        dates = np.unique(r.trade_date)
        offsets = np.r_[0, np.cumsum([np.sum(r.trade_date == d) for d in dates])]
        ref = ref_bars(r.high, r.low, r.close, r.volume, offsets=offsets, tick_size=0.25)
        last_close = r.close[offsets[1:] - 1]
        expect = (last_close[1:] - ref["poc"][:-1]) / 0.25
        np.testing.assert_allclose(prev[adjust][1:], expect, rtol=1e-6)
    k = int(np.searchsorted(dates, 20250312))              # first session of ESM5
    # across the roll the unadjusted previous POC sits 100 points (400 ticks) lower; elsewhere
    # both series agree (the same close minus the same shifted POC)
    assert prev["none"][k] - prev["spread"][k] == pytest.approx(400.0)
    np.testing.assert_allclose(np.delete(prev["none"], k)[1:], np.delete(prev["spread"], k)[1:],
                               atol=1e-3)


def test_23_6_gap_between_contracts_warns(base):
    td = base["trade_date"]
    frames = {"ESH5": _frame(base, td <= 20250305, 0.0, np.ones(td.size, int)),
              "ESM5": _frame(base, td >= 20250307, 100.0, np.ones(td.size, int))}
    with pytest.warns(UserWarning, match="ends on trade date 20250305"):
        with pytest.warns(UserWarning, match="share no trade date"):
            r = read_contracts(frames, roll="calendar", adjust="spread")
    assert r.rolls["date"].tolist() == [20250307]
    assert r.dropped_rows == 0


def test_23_6_names_and_expiries():
    assert contract_name("/data/ES 03-25.Last.txt") == "ES 03-25"
    assert contract_expiry("ES 03-25") == (2025, 3)
    assert contract_expiry("ESH5", 2024) == (2025, 3)
    assert contract_expiry("ESZ4", 2024) == (2024, 12)
    assert contract_expiry("ESZ4", 2025) == (2024, 12)     # the nearest year ending in 4
    assert contract_expiry("ESH9", 2024) == (2029, 3) and contract_expiry("ESH0", 2024) == (2020, 3)
    assert contract_expiry("ESZ24") == (2024, 12)
    assert contract_expiry("NQM2025") == (2025, 6)
    assert contract_expiry("continuous") is None


def test_23_6_bad_input(two):
    frames, td = two
    with pytest.raises(ValueError, match="roll must be"):
        read_contracts(frames, roll="weekly")
    with pytest.raises(ValueError, match="adjust must be"):
        read_contracts(frames, adjust="log")
    with pytest.raises(ValueError, match="empty"):
        read_contracts([])
    with pytest.raises(TypeError, match="paths_or_frames"):
        read_contracts(42)
    with pytest.raises(ValueError, match="contract' or 'symbol' column"):
        read_contracts([frames["ESH5"]])
    with pytest.raises(ValueError, match="more than once"):
        read_contracts([frames["ESH5"].assign(contract="A"), frames["ESM5"].assign(contract="A")])
    with pytest.raises(ValueError, match="expiry month"):
        read_contracts({"front": frames["ESH5"], "back": frames["ESM5"]}, roll="calendar")
