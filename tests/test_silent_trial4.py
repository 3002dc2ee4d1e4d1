"""Silent behaviour found by the fourth new-user trial (notes/trial4_findings.md): each test failed before its fix.

Contract: bad values on rows outside every session are refused as from_bars(DataFrame) refuses them; side
look-alike columns are announced; inspect's suggested commands run; its trades halts and wording are right.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import vpoc
import _deps

pd = pytest.importorskip("pandas")
pytestmark = pytest.mark.filterwarnings("ignore::vpoc.DroppedRowsWarning")

# rows 0-2 at 08:00-08:02 CT (in the Globex session), row 3 at 16:30 CT (the daily halt: left out)
STAMPS = ["2024-03-04 14:00Z", "2024-03-04 14:01Z", "2024-03-04 14:02Z", "2024-03-04 22:30Z"]


def _frame(**over):
    df = pd.DataFrame({"timestamp": pd.to_datetime(STAMPS), "open": 100.0, "high": 100.5, "low": 99.75,
                       "close": 100.25, "volume": [10.0, 20.0, 30.0, 40.0],
                       "buy_volume": [4.0, 5, 6, 7], "sell_volume": [3.0, 5, 6, 1]})
    for k, v in over.items():
        df[k] = v
    return df


BAD_DROPPED = [  # (column, values): a bad value on row 3 only, and the words of from_bars(DataFrame)
    ("volume", [10.0, 20, 30, -500], "row 3: volume is -500.0 (must be finite and >= 0)"),
    ("volume", [10.0, 20, 30, np.nan], "row 3: volume is nan (must be finite and >= 0)"),
    ("volume", [10.0, 20, 30, np.inf], "row 3: volume is inf (must be finite and >= 0)"),
    ("buy_volume", [4.0, 5, 6, -3], "row 3: buy_volume is -3.0 (must be finite and >= 0)"),
    ("sell_volume", [3.0, 5, 6, np.nan], "row 3: sell_volume is nan (must be finite and >= 0)"),
    ("low", [99.75, 99.75, 99.75, 101.0], "row 3: high (100.5) < low (101.0)"),
]


@_deps.needs("pandas_market_calendars")
@pytest.mark.parametrize("col,values,words", BAD_DROPPED)
def test_frame_bad_value_on_a_dropped_row_is_refused_by_every_entry_point(col, values, words):
    df = _frame(**{col: values})
    with pytest.raises(ValueError) as ref:
        vpoc.from_bars(df, session="globex", tick_size=0.25)
    assert str(ref.value) == f"<DataFrame> {words}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in (vpoc.session_features, vpoc.bar_features):
            with pytest.raises(ValueError) as e:
                f(df, session="globex", tick_size=0.25)
            assert str(e.value) == str(ref.value), f.__name__


@_deps.needs("pandas_market_calendars")
@pytest.mark.parametrize("bad", [np.nan, -500.0, np.inf])
def test_sessions_volume_bad_value_names_volume_and_row(bad):
    ts = pd.Series(pd.to_datetime(STAMPS))
    with pytest.raises(ValueError, match=r"vpoc\.sessions\.globex: row 3: volume is .* \(must be finite and >= 0\)"):
        vpoc.sessions.globex(ts, volume=np.array([10.0, 20, 30, bad]))
    with pytest.raises(ValueError, match=r"vpoc\.sessions\.rth: row 0: volume is -1"):
        vpoc.sessions.rth(ts, volume=np.array([-1, 2, 3, 4]))
    s = vpoc.sessions.globex(ts, volume=np.array([10.0, 20, 30, 40]))  # good volumes: the share is right
    assert s.dropped_volume == 40.0


@pytest.mark.parametrize("col,bad,words", [
    ("volume", np.nan, "from_bars: row 3 (outside every session): volume is nan (must be finite and >= 0)"),
    ("volume", -5.0, "from_bars: row 3 (outside every session): volume is -5.0 (must be finite and >= 0)"),
    ("low", 101.0, "from_bars: row 3 (outside every session): high (100.5) < low (101.0)"),
    ("close", np.inf, "from_bars: row 3 (outside every session): close is inf (prices must be finite)"),
])
@_deps.needs("pandas_market_calendars")
def test_arrays_with_sessions_bad_value_on_a_dropped_row(col, bad, words):
    s = vpoc.sessions.globex(pd.Series(pd.to_datetime(STAMPS)))
    cols = dict(high=np.full(4, 100.5), low=np.full(4, 99.75), close=np.full(4, 100.25),
                volume=np.array([10.0, 20, 30, 40]))
    cols[col] = cols[col].copy()
    cols[col][3] = bad
    with pytest.raises(ValueError) as e:
        vpoc.from_bars(cols["high"], cols["low"], cols["close"], cols["volume"], session=s, tick_size=0.25)
    assert str(e.value) == words
    p = vpoc.from_bars(np.full(4, 100.5), np.full(4, 99.75), np.full(4, 100.25), np.array([10.0, 20, 30, 40]),
                       session=s, tick_size=0.25)  # good rows: the kept ones profiled, the dropped one counted
    assert p.dropped_rows == 1 and np.isclose(float(np.sum(p.cpu().volume)), 60.0)


@_deps.needs("pandas_market_calendars")
def test_feature_arrays_bad_side_on_a_dropped_row():
    s = vpoc.sessions.globex(pd.Series(pd.to_datetime(STAMPS)))
    h, lo, c, v = np.full(4, 100.5), np.full(4, 99.75), np.full(4, 100.25), np.array([10.0, 20, 30, 40])
    with pytest.raises(ValueError, match=r"row 3 \(outside every session\): buy_volume is -3.0"):
        vpoc.bar_features(h, lo, c, v, timestamp=pd.Series(pd.to_datetime(STAMPS)), session=s, tick_size=0.25,
                          buy_volume=np.array([1.0, 1, 1, -3]), sell_volume=np.ones(4))
    with pytest.raises(ValueError, match=r"row 3 \(outside every session\): volume is nan"):
        vpoc.session_features(h, lo, c, np.array([10.0, 20, 30, np.nan]),
                              timestamp=pd.Series(pd.to_datetime(STAMPS)), session=s, tick_size=0.25)


# --------------------------------------------------------------------------- 2: side look-alike columns


BARS_CSV = ("timestamp,open,high,low,close,volume,{}\n"
            "2024-03-04T14:00:00Z,100,100.5,99.75,100.25,10,4,3\n"
            "2024-03-04T14:01:00Z,100,100.5,99.75,100.25,20,5,5\n")
TRADES_CSV = ("timestamp,price,volume,{}\n"
              "2024-03-04T14:00:00Z,100,1,B\n2024-03-04T14:00:01Z,100.25,2,A\n2024-03-04T14:00:02Z,100,3,N\n")


def test_bars_side_lookalike_columns_warn_with_the_mapping(tmp_path):
    p = tmp_path / "b.csv"
    p.write_text(BARS_CSV.format("buy_vol,sell_vol"))
    with pytest.warns(vpoc.GuessedDefaultWarning,
                      match=r"'buy_vol', 'sell_vol' look like .*columns=\{'buy_volume': 'buy_vol', "
                            r"'sell_volume': 'sell_vol'\}"):
        b = vpoc.io.read_bars(p)
    assert b.buy_volume is None
    b = vpoc.io.read_bars(p, columns={"buy_volume": "buy_vol", "sell_volume": "sell_vol"})
    assert list(b.buy_volume) == [4, 5]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vpoc.io.read_bars(p, columns={"buy_volume": None, "sell_volume": None})  # said there are none: quiet
    df = pd.read_csv(p)
    with pytest.warns(vpoc.GuessedDefaultWarning, match=r"<DataFrame>: column\(s\) 'buy_vol', 'sell_vol'"):
        vpoc.io.read_bars(df)


def test_trades_aggressor_column_is_read_and_lookalikes_warn(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text(TRADES_CSV.format("Aggressor"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(vpoc.io.read_trades(p).side) == [1, -1, 0]
    p.write_text(TRADES_CSV.format("TradeSide"))
    with pytest.warns(vpoc.GuessedDefaultWarning, match=r"'TradeSide' look like the trades' aggressor side.*"
                                                        r"columns=\{'side': 'TradeSide'\}"):
        assert vpoc.io.read_trades(p).side is None


def test_inspect_names_the_side_columns(tmp_path):
    p = tmp_path / "b.csv"
    p.write_text(BARS_CSV.format("AskVolume,BidVolume"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vpoc.GuessedDefaultWarning)
        ev = vpoc.io.inspect(p).evidence
    assert any("buy_volume = 'AskVolume', sell_volume = 'BidVolume'" in e for e in ev), ev
    p.write_text(BARS_CSV.format("buy_vol,sell_vol"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", vpoc.GuessedDefaultWarning)  # reported in the evidence, not warned
        ev = vpoc.io.inspect(p).evidence
    assert any(e.startswith("no buy / sell") and "skipped 'buy_vol', 'sell_vol'" in e for e in ev), ev
    p.write_text(BARS_CSV.format("x,y"))
    ev = vpoc.io.inspect(p).evidence
    assert any(e.startswith("no buy / sell (aggressor side) volume columns: the result has no delta") for e in ev)
    t = tmp_path / "t.csv"
    t.write_text(TRADES_CSV.format("Aggressor"))
    ev = vpoc.io.inspect(t).evidence
    assert any("aggressor side column: side = 'Aggressor'" in e for e in ev), ev


# --------------------------------------------------------------------------- 3: inspect's command for naive stamps


@_deps.needs("pandas_market_calendars")
def test_inspect_naive_unplaceable_says_tz_must_be_chosen(tmp_path, capsys):
    from vpoc.cli import main

    p = tmp_path / "naive.csv"
    p.write_text("timestamp,open,high,low,close,volume\n"
                 + "".join(f"2024-03-04T15:{m:02d}:00,100,101,99.75,100.5,50\n" for m in range(6)))
    r = vpoc.io.inspect(p)
    assert r.tz is None and r.naive and "tz" not in r.read_kwargs
    assert r.tz_choices[:2] == ["UTC", "America/Chicago"]
    assert "choose tz   required: add tz=ZONE (--tz ZONE), ZONE one of UTC, America/Chicago" in repr(r)
    assert "read_bars(source, interval=60)" in repr(r)
    assert main(["inspect", str(p)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].strip() == f"vpoc profile {p} --tz ZONE --interval 60 --tick-size 0.25"
    assert "ZONE: the zone of the naive timestamps" in out[-2] and "America/Chicago" in out[-2]
    cmd = out[-1].strip().split()[2:]
    assert main(["profile", *[("UTC" if a == "ZONE" else a) for a in cmd], "-o", str(tmp_path / "o.csv")]) == 0
    with pytest.raises(ValueError, match="no time zone"):
        vpoc.io.read_bars(p, **r.read_kwargs)  # the user's choice, not a finding
    aware = tmp_path / "aware.csv"
    aware.write_text(p.read_text().replace(":00,", ":00Z,"))
    assert vpoc.io.inspect(aware).tz_choices == []


# --------------------------------------------------------------------------- 4: inspect on trades


def test_inspect_trades_sparse_minutes_near_the_halt_are_the_daily_halt(tmp_path):
    # trades of Wed-Thu 2024-03-06/07: last trade 15:57 CT, first after the halt 17:03 CT (CST = UTC-6)
    stamps = []
    for d in ("2024-03-05", "2024-03-06", "2024-03-07"):
        start = pd.Timestamp(f"{d} 23:03Z") - pd.Timedelta(days=1)  # 17:03 CT the evening before
        stamps += list(pd.date_range(start, pd.Timestamp(f"{d} 21:57Z"), freq="7min"))
    df = pd.DataFrame({"timestamp": stamps, "price": 5000.0 + 0.25 * (np.arange(len(stamps)) % 9),
                       "volume": 1 + np.arange(len(stamps)) % 5})
    p = tmp_path / "tr.csv"
    df.to_csv(p, index=False)
    r = vpoc.io.inspect(p)
    text = repr(r)
    assert r.kind == "trades" and r.gaps == [], r.gaps
    assert "no pauses other than the daily halt and weekends" in r.evidence
    assert "2 of 2 restarts after a pause at 17:00-17:05 CT" in text and "2 of 2 stops end at 16:00 CT" in text
    assert "read with   vpoc.io.read_trades(source)" in text
    assert "hours       trades " in text and "bars" not in r.hours
    assert not any(e.startswith("busiest bars") for e in r.evidence)


# --------------------------------------------------------------------------- 5: messages


H2 = np.array([101.0, 102.0])


@_deps.needs("pandas_market_calendars")
@pytest.mark.parametrize("bad", [np.inf, np.nan, -1.0])
def test_inf_buy_sell_gets_the_finite_message_batch_and_live(bad):
    words = r"sell_volume\[1\] = .*: the aggressor-side volumes of a bar must be finite and >= 0"
    with pytest.raises(ValueError, match=words):
        vpoc.from_bars(H2, H2 - 1, H2 - 0.5, np.array([10, 20]), tick_size=0.25,
                       buy_volume=np.array([1.0, 1.0]), sell_volume=np.array([1.0, bad]))
    live = vpoc.Live(tick_size=0.25, kind="bars", session="globex", side=True)
    with pytest.raises(ValueError, match=r"sell_volume\[0\] = .*: the aggressor-side volumes of a bar must be "
                                         r"finite and >= 0"):
        live.update(101.0, 100.0, 100.5, 20, buy_volume=1, sell_volume=bad,
                    timestamp=pd.Timestamp("2024-03-04T15:00Z").value)


@_deps.needs("pandas_market_calendars")
def test_live_scalar_side_message_does_not_double_the_name():
    live = vpoc.Live(tick_size=0.25, kind="trades", session="globex", side=True)
    with pytest.raises(ValueError) as e:
        live.update(100.0, 1, side=2, timestamp=pd.Timestamp("2024-03-04T15:00Z").value)
    assert str(e.value).startswith("Live.update: side = 2; give +1")


def test_list_with_none_names_its_index():
    with pytest.raises(TypeError, match=r"^buy_volume\[1\] = None is not a number; buy_volume must be a numeric"):
        vpoc.from_bars(H2, H2 - 1, H2 - 0.5, np.array([10, 20]), tick_size=0.25, buy_volume=[1, None],
                       sell_volume=[1, 1])
    with pytest.raises(TypeError, match=r"^volume\[1\] = None is not a number"):
        vpoc.from_bars(H2, H2 - 1, H2 - 0.5, [10, None], tick_size=0.25)
    with pytest.raises(TypeError, match=r"^volume\[0\] = 'x' is not a number"):
        vpoc.from_bars(H2, H2 - 1, H2 - 0.5, np.array(["x", 1], dtype=object), tick_size=0.25)


# --------------------------------------------------------------------------- 6: docs


def test_docs_describe_bars_sides_and_drop_internal_references():
    from pathlib import Path

    docs = Path(__file__).resolve().parent.parent / "docs"
    sessions = (docs / "sessions.md").read_text()
    assert "`buy_volume`, `sell_volume`) and `Trades`" in sessions  # the Bars fields
    assert "**Bars' aggressor side.**" in sessions and "`AskVolume` / `BidVolume`" in sessions
    assert "`columns={\"buy_volume\": None, \"sell_volume\": None}` ignores them" in sessions
    assert "issue 27" not in (docs / "plots.md").read_text()
