"""Silent or misleading behaviour found by the seventh new-user trial (order flow, Databento DBN, Live, CLI).

Contract: every test here failed before its fix (DBN inspect / CLI kind and --instrument, unknown-side files,
vpoc.dask side columns, diff of the side fields, cum_delta_ratio with no sided volume, message nits);
plain-NumPy references where numeric.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import _deps
import vpoc
from vpoc import cli
from vpoc import io as vio
from vpoc._warnings import GuessedDefaultWarning

dbn = _deps.require("databento_dbn")
pd = _deps.require("pandas")
from test_io_dbn import T0, UNIT, bar, definition, metadata, save, trade  # noqa: E402

ES = UNIT // 4


def _trades_file(tmp_path, name="es.trades.dbn", n=300, ids=(7,), zst=False):
    body = [definition(i, s) for i, s in zip(ids, ("ESH5", "NQH5"))]
    body += [trade(ids[k % len(ids)], T0 + k * 10**9, (24000 + k % 5) * ES, 1 + k % 4, (1, -1, 0)[k % 3])
             for k in range(n)]
    return save(tmp_path / name, metadata() + b"".join(body), zst)


def _bars_file(tmp_path, name="es.ohlcv-1m.dbn", n=300):
    body = [definition(7, "ESH5")]
    for k in range(n):
        p = (24000 + k % 7) * ES
        body.append(bar(7, T0 + k * 60 * 10**9, p, p + 2 * ES, p - ES, p + ES, 10 + k % 5))
    return save(tmp_path / name, metadata("ohlcv-1m") + b"".join(body))


def _cli(argv, capsys):
    rc = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


# ---------------------------------------------------------------- 1. inspect on a DBN trades file

@pytest.mark.parametrize("zst", [False, pytest.param(True, marks=pytest.mark.skipif(
    _deps.module("pyarrow") is None, reason="pyarrow"))])
def test_inspect_dbn_trades_is_trades(tmp_path, capsys, zst):
    path = _trades_file(tmp_path, "es.trades.dbn" + (".zst" if zst else ""), zst=zst)
    i = vio.inspect(path)
    assert i.kind == "trades" and i.rows == 300 and i.cli_args == ["--kind", "trades"]
    assert i.tick_size == 0.25 and i.label is None and not i.naive
    rc, out, err = _cli(["inspect", path], capsys)
    assert rc == 0, err
    assert "read_trades" in out and "--kind trades" in out


# ---------------------------------------------------------------- 2. --instrument, --help, the error's flag

@_deps.needs("pandas_market_calendars")
def test_cli_instrument_flag_reads_one_of_several(tmp_path, capsys):
    path = _trades_file(tmp_path, "two.dbn", n=40, ids=(7, 8))
    rc, out, err = _cli(["profile", path, "--kind", "trades", "--tick-size", "0.25"], capsys)
    assert rc == 2 and "--instrument <instrument_id or symbol>" in err and "instrument=" not in err
    ref = vpoc.from_trades(vio.read_trades(path, instrument="ESH5"), tick_size=0.25, session="globex")
    for pick in ("ESH5", "7"):
        rc, out, err = _cli(["profile", path, "--kind", "trades", "--tick-size", "0.25", "--instrument", pick], capsys)
        assert rc == 0, err
        from io import StringIO
        df = pd.read_csv(StringIO(out))
        assert df["total_volume"].tolist() == list(ref.total_volume) and df["delta"].tolist() == list(ref.delta)
    rc, out, err = _cli(["profile", path, "--kind", "trades", "--tick-size", "0.25", "--instrument", "ZZ"], capsys)
    assert rc == 2 and "--instrument ZZ" in err
    i = vio.inspect(path, instrument="ESH5")  # inspect takes it too, and hands it on
    assert i.kind == "trades" and i.cli_args == ["--kind", "trades", "--instrument", "ESH5"]
    rc, out, err = _cli(["inspect", path, "--instrument", "ESH5"], capsys)
    assert rc == 0 and "--instrument ESH5" in out


@_deps.needs("pandas_market_calendars")
def test_cli_instrument_on_csv_is_named(tmp_path, capsys):
    f = tmp_path / "t.csv"
    f.write_text("timestamp,price,volume\n2025-03-10T14:30:00Z,6000,1\n")
    rc, out, err = _cli(["profile", f, "--kind", "trades", "--tick-size", "0.25", "--instrument", "ESH5"], capsys)
    assert rc == 2 and "leave out --instrument" in err


def test_cli_help_names_dbn(capsys):
    with pytest.raises(SystemExit):
        cli.main(["profile", "--help"])
    out = capsys.readouterr().out
    assert ".dbn" in out and ".dbn.zst" in out and "--instrument" in out and "dbn}" in out


# ---------------------------------------------------------------- 3. a DBN trades file without --kind trades

def test_cli_dbn_trades_read_as_trades_by_schema(tmp_path, capsys):
    path = _trades_file(tmp_path)
    rc, out, err = _cli(["profile", path, "--tick-size", "0.25", "--session", "daily"], capsys)
    assert rc == 0, err
    assert "the DBN schema says trades" in err and "--kind trades" in err
    rc2, out2, _ = _cli(["profile", path, "--kind", "trades", "--tick-size", "0.25", "--session", "daily"], capsys)
    assert rc2 == 0 and out == out2
    rc, out, err = _cli(["features", path, "--tick-size", "0.25"], capsys)
    assert rc == 2 and "vpoc features needs bars" in err


@_deps.needs("pandas_market_calendars")
def test_dbn_kind_error_names_the_flag(tmp_path, capsys):
    path = _bars_file(tmp_path)
    rc, out, err = _cli(["profile", path, "--kind", "trades", "--tick-size", "0.25"], capsys)
    assert rc == 2 and "pass --kind bars" in err


# ---------------------------------------------------------------- 8. nits: DBN bars label, tick UNDEF, id as text

def test_inspect_dbn_bars_label_open_by_definition(tmp_path):
    i = vio.inspect(_bars_file(tmp_path))
    assert i.label == "open" and i.confidence == "high" and i.interval == 60
    assert any("DBN" in e and "start" in e for e in i.evidence)


@pytest.mark.parametrize("units", [0, dbn.UNDEF_PRICE])
def test_definition_without_tick_warns(tmp_path, units):
    body = [definition(7, "ESH5", tick_units=units), trade(7, T0, 24000 * ES, 1)]
    path = save(tmp_path / "d.dbn", metadata() + b"".join(body))
    with pytest.warns(GuessedDefaultWarning, match="no usable tick size.*tick_size is None"):
        t = vio.read_trades(path)
    assert t.tick_size is None
    with warnings.catch_warnings():  # a good definition: nothing said
        warnings.simplefilter("error")
        assert vio.read_trades(save(tmp_path / "g.dbn", metadata() + definition(7, "ESH5")
                                    + trade(7, T0, 24000 * ES, 1))).tick_size == 0.25


def test_instrument_id_as_text(tmp_path):
    path = _trades_file(tmp_path, "two.dbn", n=40, ids=(7, 8))
    a, b = vio.read_trades(path, instrument="7"), vio.read_trades(path, instrument=7)
    np.testing.assert_array_equal(a.price, b.price)
    assert a.symbol == b.symbol == "ESH5" and len(a) == 20
    with pytest.raises(ValueError, match="instrument=9"):
        vio.read_trades(path, instrument="9")


# ---------------------------------------------------------------- 4. a list of files, some without the side column

def _side_files(tmp_path):
    ts = pd.date_range("2025-03-10 14:30", periods=6, freq="1min", tz="UTC")
    f1, f2 = tmp_path / "f1.csv", tmp_path / "f2.csv"
    pd.DataFrame({"timestamp": ts[:3], "price": [6000.0, 6000.25, 6000.5], "size": [1, 2, 3],
                  "side": ["B", "A", "B"]}).to_csv(f1, index=False)
    pd.DataFrame({"timestamp": ts[3:], "price": [6000.0, 6000.25, 6000.5], "size": [4, 5, 6]}).to_csv(f2, index=False)
    return f1, f2


def test_file_without_side_in_a_list_warns(tmp_path, capsys):
    f1, f2 = _side_files(tmp_path)
    with pytest.warns(GuessedDefaultWarning, match=r"f2\.csv \(3 rows\); their 3 of 6 rows .*volume 15 of 21"):
        t = vio.read_trades([f1, f2])
    np.testing.assert_array_equal(t.side, [1, -1, 1, 0, 0, 0])
    with warnings.catch_warnings():  # every file sided, or none: nothing to say
        warnings.simplefilter("error")
        vio.read_trades([f1])
        vio.read_trades([f2])
    rc, out, err = _cli(["profile", f1, f2, "--kind", "trades", "--tick-size", "0.25",
                         "--session", "daily"], capsys)
    assert rc == 0 and "vpoc: warning: 1 of 2 files have no aggressor side column" in err and "f2.csv (3 rows)" in err


def test_bar_file_without_buy_sell_in_a_list_warns(tmp_path):
    ts = pd.date_range("2025-03-10 14:30", periods=4, freq="1min", tz="UTC")
    base = dict(open=[1.0, 1, 1, 1], high=[2.0, 2, 2, 2], low=[1.0, 1, 1, 1], close=[2.0, 2, 2, 2], volume=[4, 4, 4, 4])
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame(dict(timestamp=ts, **base, buy_volume=[1, 2, 3, 4], sell_volume=[3, 2, 1, 0])).to_csv(a, index=False)
    pd.DataFrame(dict(timestamp=ts + pd.Timedelta("1h"), **base)).to_csv(b, index=False)
    with pytest.warns(GuessedDefaultWarning, match=r"no buy / sell volume columns .*b\.csv \(4 rows\)"):
        bars = vio.read_bars([a, b])
    np.testing.assert_array_equal(bars.buy_volume, [1, 2, 3, 4, 0, 0, 0, 0])


# ---------------------------------------------------------------- 5. vpoc.dask and the side columns it does not use

@pytest.mark.parametrize("extra,kind", [({"side": [1, -1, 1, 0, -1, 1]}, "trades"), ({"TradeSide": ["B"] * 6}, "trades"),
                                        ({"buy_volume": [1] * 6, "sell_volume": [0] * 6}, "bars"),
                                        ({"AskVolume": [1] * 6, "BidVolume": [0] * 6}, "bars")])
def test_dask_warns_of_side_columns(extra, kind):
    dd = pytest.importorskip("dask.dataframe")
    ts = pd.date_range("2025-03-10 14:30", periods=6, freq="1min", tz="UTC")
    px = [6000.0, 6000.25, 6000.5] * 2
    df = pd.DataFrame({"timestamp": ts, "price": px, "high": px, "low": px, "close": px, "volume": [1, 2, 3, 4, 5, 6]})
    import vpoc.dask as vd
    fn = vd.from_trades if kind == "trades" else vd.from_bars
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = fn(dd.from_pandas(df, npartitions=2), tick_size=0.25, session="daily").compute()
    col = next(iter(extra))
    with pytest.warns(GuessedDefaultWarning, match=rf"vpoc\.dask: column\(s\) .*'{col}'.* not used"):
        got = fn(dd.from_pandas(df.assign(**extra), npartitions=2), tick_size=0.25, session="daily")
    pd.testing.assert_frame_equal(got.compute(), plain)
    assert "delta" not in plain.columns


# ---------------------------------------------------------------- 7. cum_delta_ratio while no volume of a known side

def test_cum_delta_ratio_nan_without_sided_volume():
    rng = np.random.default_rng(7)
    offsets = np.array([0, 1, 1, 6, 20, 40])  # one bar, empty, all-unknown, unknown then sided, random
    n = offsets[-1]
    low = 6000 + 0.25 * rng.integers(0, 20, n)
    high = low + 0.25 * rng.integers(0, 4, n)
    close = low + 0.25 * rng.integers(0, 1 + np.round((high - low) / 0.25).astype(int))
    vol = rng.integers(1, 20, n)
    buy = (vol * rng.random(n)).astype(np.int64)
    sell = ((vol - buy) * rng.random(n)).astype(np.int64)
    buy[1:6] = sell[1:6] = 0  # session 2: no known side at all
    buy[6:10] = sell[6:10] = 0  # session 3: unknown for its first 4 bars
    buy[0], sell[0] = 0, 0  # session 0 (one bar): unknown
    bf = vpoc.bar_features(high, low, close, vol, open=close, offsets=offsets, tick_size=0.25, buy_volume=buy,
                           sell_volume=sell)
    sid = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    ref = np.full(n, np.nan)
    for s in range(len(offsets) - 1):
        a, b = offsets[s], offsets[s + 1]
        cb, cs, cv = np.cumsum(buy[a:b]), np.cumsum(sell[a:b]), np.cumsum(vol[a:b])
        with np.errstate(invalid="ignore", divide="ignore"):
            ref[a:b] = np.where((cb + cs > 0) & (cv > 0), (cb - cs) / cv, np.nan)
    got = np.asarray(bf["cum_delta_ratio"], dtype=np.float64)
    np.testing.assert_allclose(got, ref, rtol=1e-6, equal_nan=True)  # the table is float32
    assert np.isnan(got[sid == 2]).all() and np.isnan(got[6:10]).all() and np.isfinite(got[10:20]).all()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(np.asarray(bf["dev_delta_poc_dist"], dtype=np.float64)))
    # Live's row is the same function: a bar of unknown side only gives NaN there too
    live = vpoc.Live(tick_size=0.25, side=True, session_starts=np.array([T0]))
    live.update(float(high[0]), float(low[0]), float(close[0]), int(vol[0]), open=float(close[0]), buy_volume=0,
                sell_volume=0, timestamp=int(T0))
    row = live.bar_features_row()  # its side columns last: bar_delta, cum_delta, cum_delta_ratio, dev_delta_poc_dist
    assert row[-4] == row[-3] == 0 and np.isnan(row[-2]) and np.isnan(row[-1])


def test_live_time_order_error_prints_times():
    live = vpoc.Live(tick_size=0.25, kind="trades", session_starts=np.array([T0]))
    live.update(6000.0, 1, timestamp=int(T0) + 60 * 10**9)
    with pytest.raises(ValueError, match=r"timestamp 2025-03-10T14:30:00Z is before the previous row's "
                                         r"\(2025-03-10T14:31:00Z\)"):
        live.update(6000.0, 1, timestamp=int(T0))
    with pytest.raises(ValueError, match=r"timestamp\[0\] = 2025-03-10T14:30:00.000000001Z is before the previous "
                                         r"row's \(2025-03-10T14:31:00Z\)"):
        live.update(np.array([6000.0, 6000.0]), np.array([1, 1]), timestamp=np.array([T0 + 1, T0 + 2]))
    with pytest.raises(ValueError, match=r"timestamp\[1\] \(2025-03-10T14:32:00Z\) is before timestamp\[0\] "
                                         r"\(2025-03-10T14:33:00Z\)"):
        live.update(np.array([6000.0, 6000.0]), np.array([1, 1]),
                    timestamp=np.array([T0 + 180 * 10**9, T0 + 120 * 10**9]))


# ---------------------------------------------------------------- 6. vpoc.diff of the side fields; the imbalance rule recorded

def _sided_trades(seed=2, n=600, S=3):
    rng = np.random.default_rng(seed)
    price = .25 * (24000 + np.cumsum(rng.integers(-2, 3, n)))
    return price, rng.integers(1, 9, n), rng.choice([1, -1, 0], n), np.linspace(0, n, S + 1).astype(np.int64)


def _side_fields_differ(x, y):
    """Per session: any side field differs (the plain reference)."""
    out = np.zeros(x.n_sessions, dtype=bool)
    for f in ("delta", "buy_total", "sell_total", "delta_poc", "stacked_imbalance_buy", "stacked_imbalance_sell"):
        a, b = np.asarray(getattr(x, f), dtype=np.float64), np.asarray(getattr(y, f), dtype=np.float64)
        out |= ~((a == b) | (np.isnan(a) & np.isnan(b)))
    for s in range(x.n_sessions):
        for f in ("buy_volume", "sell_volume", "imbalance_buy", "imbalance_sell"):
            ra, rb = x.session(s)[0], y.session(s)[0]  # row prices
            va = dict(zip(ra.tolist(), np.asarray(getattr(x, f))[x.offsets[s]:x.offsets[s + 1]].tolist()))
            vb = dict(zip(rb.tolist(), np.asarray(getattr(y, f))[y.offsets[s]:y.offsets[s + 1]].tolist()))
            out[s] |= any(va.get(k, 0) != vb.get(k, 0) for k in set(va) | set(vb))
    return out


def test_diff_names_the_imbalance_rule():
    price, vol, side, offs = _sided_trades()
    a = vpoc.from_trades(price, vol, side=side, tick_size=.25, offsets=offs)
    b = vpoc.from_trades(price, vol, side=side, tick_size=.25, offsets=offs, imbalance_ratio=1.5, stacked_imbalance_min=2)
    assert a.rules == {"imbalance_ratio": 3.0, "stacked_imbalance_min": 3}
    assert b.rules == {"imbalance_ratio": 1.5, "stacked_imbalance_min": 2}
    import pickle
    assert pickle.loads(pickle.dumps(b)).rules == b.rules  # a saved result says which rule made its counts
    d = vpoc.diff(a, b)
    want = _side_fields_differ(a, b)
    assert want.any()
    np.testing.assert_array_equal(d.side_differs, want)
    np.testing.assert_array_equal(d.differs, want)
    assert not d.histogram_differs.any() and not d.poc_differs.any()
    assert d.settings["imbalance_ratio"] == (3.0, 1.5) and d.settings["stacked_imbalance_min"] == (3, 2)
    for s in np.flatnonzero(want):
        assert d.rule[s] == "imbalance_ratio+stacked_imbalance_min" and "imbalance_ratio: 3.0 vs 1.5" in d.reason[s]
    assert "side" in repr(d) and "side_differs" in d.to_pandas().columns


def test_diff_compares_the_sides():
    price, vol, side, offs = _sided_trades(seed=5)
    a = vpoc.from_trades(price, vol, side=side, tick_size=.25, offsets=offs)
    flipped = vpoc.from_trades(price, vol, side=-side, tick_size=.25, offsets=offs)
    d = vpoc.diff(a, flipped)
    assert d.side_differs.all() and d.differs.all() and set(d.rule) == {"side"}
    assert all(f"delta {x:g} vs {y:g}" in r for x, y, r in zip(a.delta, flipped.delta, d.reason))
    some = side.copy()
    some[offs[1]:offs[1] + 5] = 0  # session 1 only: five trades of unknown side
    c = vpoc.from_trades(price, vol, side=some, tick_size=.25, offsets=offs)
    d = vpoc.diff(a, c)
    np.testing.assert_array_equal(d.side_differs, _side_fields_differ(a, c))
    np.testing.assert_array_equal(d.side_differs, [False, True, False])
    assert not vpoc.diff(a, a).differs.any() and any("both have the aggressor side" in n for n in d.notes)
    # bars with buy / sell volumes
    h = price + 0.5
    buy = (vol * 0.5).astype(np.int64)
    x = vpoc.from_bars(h, price, price, vol, tick_size=.25, offsets=offs, buy_volume=buy, sell_volume=vol - buy)
    y = vpoc.from_bars(h, price, price, vol, tick_size=.25, offsets=offs, buy_volume=vol - buy, sell_volume=buy)
    d = vpoc.diff(x, y)
    np.testing.assert_array_equal(d.side_differs, _side_fields_differ(x, y))
    assert d.side_differs.all()


def test_diff_sided_vs_unsided_says_so():
    price, vol, side, offs = _sided_trades(seed=3)
    side[offs[2]:] = 0  # session 2: no known side
    a = vpoc.from_trades(price, vol, side=side, tick_size=.25, offsets=offs)
    e = vpoc.from_trades(price, vol, tick_size=.25, offsets=offs)
    for x, y, who in ((a, e, "a"), (e, a, "b")):
        d = vpoc.diff(x, y)
        np.testing.assert_array_equal(d.side_differs, [True, True, False])
        assert any(f"only {who} has the aggressor side" in n and "not compared" in n for n in d.notes)
        assert list(d.rule) == ["side", "side", ""]


def test_live_records_the_imbalance_rule():
    price, vol, side, _ = _sided_trades(n=50)
    ts = T0 + np.arange(50, dtype=np.int64) * 10**9
    live = vpoc.Live(tick_size=0.25, kind="trades", side=True, imbalance_ratio=2.0, session_starts=np.array([T0, T0 + 49 * 10**9]))
    live.update(price, vol, side=side, timestamp=ts)
    assert live.profiles.rules == {"imbalance_ratio": 2.0, "stacked_imbalance_min": 3}
