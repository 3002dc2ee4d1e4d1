"""Silent behaviour the third new-user trial found (notes/trial3_findings.md 1-5, 7; brief t3silent).

Contract: each test fails before its fix: bar buy/sell columns are read, the CLI keeps the side, a bad
volume is blamed before the side check, float side text is read, a bad side names its first row.
"""

from __future__ import annotations

import numpy as np
import pytest

vpoc = pytest.importorskip("vpoc")
pd = pytest.importorskip("pandas")

from vpoc._side import aggressor_side  # noqa: E402
import _deps

WHAT = r"give \+1"


def _trades_csv(path, sides):
    rows = [f"2024-01-02T15:00:{k:02d}Z,{100 + 0.25 * (k % 3)},{k + 1},{s}" for k, s in enumerate(sides)]
    path.write_text("timestamp,price,volume,side\n" + "\n".join(rows) + "\n")
    return path


# --------------------------------------------------------------------------- 4. float side text


def test_float_side_text_is_read_as_its_exact_value(tmp_path):
    """read_trades reads '1.0' / '-1.0' / '0.0' (a float column written out) as from_trades reads
    the floats 1.0 / -1.0 / 0.0, and still refuses '0.5', 'nan', 'inf' naming their line."""
    sides = ["1.0", "-1.0", "0.0", "+1.0", " -0 ", "1"]
    t = vpoc.io.read_trades(_trades_csv(tmp_path / "f.csv", sides))
    ref = aggressor_side(np.array([1.0, -1.0, 0.0, 1.0, -0.0, 1.0]))
    np.testing.assert_array_equal(t.side, ref)
    assert t.side.dtype == np.int8
    np.testing.assert_array_equal(aggressor_side(np.array(sides, dtype=object)), ref)
    for bad in ("0.5", "nan", "inf", "2.0", "1e300"):
        with pytest.raises(ValueError, match=rf"line 3: side = '{bad}'; {WHAT}"):
            vpoc.io.read_trades(_trades_csv(tmp_path / "b.csv", ["1.0", bad, "0.0"]))
    # the same values as floats through from_trades: the same profile
    p = vpoc.from_trades(t, session="daily", tick_size=0.25)
    q = vpoc.from_trades(t.price, t.volume, tick_size=0.25, side=np.array([1.0, -1.0, 0.0, 1.0, 0.0, 1.0]))
    np.testing.assert_array_equal(p.delta, q.delta)


# --------------------------------------------------------------------------- 5. first bad row


@pytest.mark.parametrize("sides, row", [(["X", "B", "A", "Buy"], 0), (["Bid", "Ask"], 0),
                                        (["B", "Sell", "A", "Ask", "B"], 1), (["1", "0", "-1", "+1", "zz"], 4),
                                        ([b"B", b"AA", b"A", b"!!"], 1)])
def test_bad_text_side_names_the_first_offending_row(sides, row):
    with pytest.raises(ValueError, match=rf"side\[{row}\]: side = {sides[row]!r}"):
        aggressor_side(np.array(sides))
    with pytest.raises(ValueError, match=rf"side\[{row}\]"):
        vpoc.from_trades(np.full(len(sides), 100.0), np.ones(len(sides)), tick_size=0.25,
                         side=np.array(sides, dtype=object))


def test_bad_text_side_names_the_first_offending_line(tmp_path):
    sides = ["B", "Sell"] + ["A"] * 7 + [""]  # '' (line 11) sorts before 'Sell' (line 3)
    with pytest.raises(ValueError, match=r"line 3: side = 'Sell'"):
        vpoc.io.read_trades(_trades_csv(tmp_path / "s.csv", sides))


def test_first_bad_row_random_against_numpy():
    """Random text columns with a few bad values: the row named is NumPy's first bad position."""
    rng = np.random.default_rng(3)
    good = np.array(["B", "A", "N", "1", "-1", "0", "+1", "1.0"])
    bad_values = np.array(["Buy", "Ask", "", "0.5", "x", "BB"])
    for _ in range(20):
        n = int(rng.integers(1, 60))
        col = rng.choice(good, n).astype(object)
        k = rng.choice(n, size=int(rng.integers(1, min(n, 4) + 1)), replace=False)
        col[k] = rng.choice(bad_values, k.size)
        first = int(np.min(k))
        with pytest.raises(ValueError, match=rf"^side\[{first}\]: side = {col[first]!r}"):
            aggressor_side(col)


# --------------------------------------------------------------------------- 1. bar buy / sell columns


def _bars_frame(n_sessions=3, seed=2, float_cols=False):
    b = vpoc.synth.es_bars(n_sessions=n_sessions, bars_per_session=120, seed=seed)
    rng = np.random.default_rng(seed)
    buy = (b.volume * rng.uniform(0, 0.6, len(b.volume))).astype(np.int64)
    sell = (b.volume * rng.uniform(0, 0.4, len(b.volume))).astype(np.int64)
    if float_cols:
        buy, sell = buy + 0.5 * (buy > 0), sell.astype(np.float64)
    df = b.to_pandas()
    df["buy_volume"], df["sell_volume"] = buy, sell
    return b, df, buy, sell


def _np_delta(b, buy, sell):
    """NumPy reference: each session's buy - sell volume."""
    return np.array([np.sum(buy[s:e], dtype=np.float64) - np.sum(sell[s:e], dtype=np.float64)
                     for s, e in zip(b.offsets[:-1], b.offsets[1:])])


@_deps.needs("pandas_market_calendars")
@pytest.mark.parametrize("float_cols", [False, True])
def test_read_bars_reads_buy_sell_columns(tmp_path, float_cols):
    b, df, buy, sell = _bars_frame(float_cols=float_cols)
    df.to_csv(tmp_path / "bs.csv", index=False)
    for src in (tmp_path / "bs.csv", df):
        bars = vpoc.io.read_bars(src)
        np.testing.assert_array_equal(bars.buy_volume, buy)
        np.testing.assert_array_equal(bars.sell_volume, sell)
        assert bars.buy_volume.dtype == (np.float64 if float_cols else np.int64)
        assert "with buy/sell volume" in repr(bars)
        assert list(bars.to_pandas().columns)[-2:] == ["buy_volume", "sell_volume"]
        p = vpoc.from_bars(bars, session="globex", tick_size=0.25)
        np.testing.assert_array_equal(p.delta, _np_delta(b, buy, sell))
        q = vpoc.from_bars(b.high, b.low, b.close, b.volume, offsets=b.offsets, tick_size=0.25,
                           buy_volume=buy, sell_volume=sell)
        np.testing.assert_array_equal(p.buy_volume, q.buy_volume)
        np.testing.assert_array_equal(p.delta_poc, q.delta_poc)


def test_read_bars_vendor_names_and_columns_mapping(tmp_path):
    b, df, buy, sell = _bars_frame()
    ninja = df.rename(columns={"buy_volume": "AskVolume", "sell_volume": "BidVolume"})
    bars = vpoc.io.read_bars(ninja)
    np.testing.assert_array_equal(bars.buy_volume, buy)
    np.testing.assert_array_equal(bars.sell_volume, sell)
    mine = df.rename(columns={"buy_volume": "aggr_buy", "sell_volume": "aggr_sell"})
    bars = vpoc.io.read_bars(mine, columns={"buy_volume": "aggr_buy", "sell_volume": "aggr_sell"})
    np.testing.assert_array_equal(bars.sell_volume, sell)
    with pytest.warns(vpoc.GuessedDefaultWarning, match="look like the bars' buy / sell"):  # trial 4 #2
        assert vpoc.io.read_bars(mine).buy_volume is None  # no column of those names: no side (as trades)
    assert vpoc.io.read_bars(df, columns={"buy_volume": None, "sell_volume": None}).buy_volume is None
    with pytest.raises(ValueError, match="several columns could be 'buy_volume'"):
        vpoc.io.read_bars(df.assign(AskVolume=buy))
    with pytest.raises(ValueError, match=r"columns\['buy_volume'\] = 'nope' is not a column"):
        vpoc.io.read_bars(df, columns={"buy_volume": "nope"})


@pytest.mark.parametrize("drop, missing", [("sell_volume", "sell_volume"), ("buy_volume", "buy_volume")])
def test_one_side_column_alone_is_refused_naming_the_missing_one(tmp_path, drop, missing):
    _, df, _, _ = _bars_frame()
    one = df.drop(columns=drop)
    one.to_csv(tmp_path / "one.csv", index=False)
    for src in (one, tmp_path / "one.csv"):
        with pytest.raises(ValueError, match=f"there is no {missing} column"):
            vpoc.io.read_bars(src)
    with pytest.raises(ValueError, match=f"there is no {missing} column"):
        vpoc.from_bars(one, session="globex", tick_size=0.25)
    with pytest.raises(ValueError, match=f"there is no {missing} column"):
        vpoc.session_features(one, tick_size=0.25)
    other = "buy_volume" if drop == "sell_volume" else "sell_volume"
    with pytest.raises(TypeError, match=f"{other} given without {missing}"):
        _bars_missing(df, drop)


def _bars_missing(df, drop):
    bars = vpoc.io.read_bars(df)
    kw = dict(timestamp=bars.timestamp, open=bars.open, high=bars.high, low=bars.low, close=bars.close,
              volume=bars.volume, buy_volume=bars.buy_volume, sell_volume=bars.sell_volume)
    kw[drop] = None
    return vpoc.io.Bars(**kw)


def test_bad_side_volumes_in_a_file_name_the_line(tmp_path):
    _, df, _, _ = _bars_frame()
    bad = df.copy()
    bad.loc[5, "buy_volume"] = bad.loc[5, "volume"]
    bad.loc[5, "sell_volume"] = 1
    bad.to_csv(tmp_path / "over.csv", index=False)
    with pytest.raises(ValueError, match=r"over\.csv line 7: buy_volume \+ sell_volume = \d+ \+ 1 is more than volume"):
        vpoc.io.read_bars(tmp_path / "over.csv")
    neg = df.copy()
    neg.loc[2, "sell_volume"] = -3
    with pytest.raises(ValueError, match=r"<DataFrame> row 2: sell_volume is -3 \(must be finite and >= 0\)"):
        vpoc.io.read_bars(neg)


@_deps.needs("pandas_market_calendars")
def test_frames_feed_from_bars_and_the_feature_tables():
    b, df, buy, sell = _bars_frame()
    plain = df.drop(columns=["buy_volume", "sell_volume"])
    ref = vpoc.from_bars(plain, session="globex", tick_size=0.25, buy_volume=buy, sell_volume=sell)
    got = vpoc.from_bars(df, session="globex", tick_size=0.25)
    np.testing.assert_array_equal(got.delta, ref.delta)
    np.testing.assert_array_equal(got.delta, _np_delta(b, buy, sell))
    # arrays given win over the frame's columns (as side= over a Trades' side)
    swapped = vpoc.from_bars(df, session="globex", tick_size=0.25, buy_volume=sell, sell_volume=buy)
    np.testing.assert_array_equal(swapped.delta, -ref.delta)
    # a column name with a frame names the column
    named = df.rename(columns={"buy_volume": "b", "sell_volume": "s"})
    by_name = vpoc.from_bars(named, session="globex", tick_size=0.25, buy_volume="b", sell_volume="s")
    np.testing.assert_array_equal(by_name.delta, ref.delta)
    for fn in (vpoc.session_features, vpoc.bar_features):
        want = fn(plain, tick_size=0.25, session="globex", buy_volume=buy, sell_volume=sell)
        for src, kw in ((df, {}), (vpoc.io.read_bars(df), {}), (named, dict(buy_volume="b", sell_volume="s"))):
            t = fn(src, tick_size=0.25, session="globex", **kw)
            assert t.columns == want.columns
            np.testing.assert_array_equal(np.asarray(t.values), np.asarray(want.values))
        assert "delta_poc" in want.columns or "dev_delta_poc_dist" in want.columns


def test_a_column_name_without_a_frame_is_refused_clearly():
    b, df, buy, sell = _bars_frame()
    for call in (lambda: vpoc.from_bars(b.high, b.low, b.close, b.volume, tick_size=0.25, buy_volume="buy_volume",
                                        sell_volume="sell_volume"),
                 lambda: vpoc.from_bars(vpoc.io.read_bars(df), session="globex", tick_size=0.25,
                                        buy_volume="buy_volume", sell_volume="sell_volume"),
                 lambda: vpoc.session_features(b.high, b.low, b.close, b.volume, tick_size=0.25,
                                               buy_volume="buy_volume", sell_volume="sell_volume")):
        with pytest.raises(TypeError, match="buy_volume='buy_volume' is a column name.*DataFrame") as e:
            call()
        assert "dtype" not in str(e.value)
    with pytest.raises(TypeError, match="give both as column names, or both as arrays"):
        vpoc.from_bars(df, session="globex", tick_size=0.25, buy_volume="buy_volume", sell_volume=sell)


def test_write_bars_round_trips_buy_sell(tmp_path):
    _, df, buy, sell = _bars_frame()
    bars = vpoc.io.read_bars(df)
    suffixes = ["csv"] + (["parquet"] if _has("pyarrow") else [])
    for suffix in suffixes:
        vpoc.io.write_bars(bars, tmp_path / f"rt.{suffix}")
        back = vpoc.io.read_bars(tmp_path / f"rt.{suffix}")
        np.testing.assert_array_equal(back.buy_volume, buy)
        np.testing.assert_array_equal(back.sell_volume, sell)
        assert back.buy_volume.dtype == np.int64
    vpoc.io.write_bars(df, tmp_path / "frame.csv")  # a frame: read by read_bars, its columns kept
    np.testing.assert_array_equal(vpoc.io.read_bars(tmp_path / "frame.csv").sell_volume, sell)
    with pytest.raises(ValueError, match="legacy format .* no field for them"):
        vpoc.io.write_bars(bars, tmp_path / "rt.txt", format="legacy", tz="America/Chicago")


def test_a_list_of_files_reads_missing_sides_as_unknown(tmp_path):
    _, df, buy, sell = _bars_frame()
    half = len(df) // 2
    df.iloc[:half].to_csv(tmp_path / "a.csv", index=False)
    df.iloc[half:].drop(columns=["buy_volume", "sell_volume"]).to_csv(tmp_path / "b.csv", index=False)
    with pytest.warns(vpoc.GuessedDefaultWarning, match=r"b\.csv"):  # said since trial 7
        bars = vpoc.io.read_bars([tmp_path / "a.csv", tmp_path / "b.csv"])
    np.testing.assert_array_equal(bars.buy_volume, np.r_[buy[:half], np.zeros(len(df) - half, np.int64)])
    np.testing.assert_array_equal(bars.sell_volume, np.r_[sell[:half], np.zeros(len(df) - half, np.int64)])


def _has(module):
    try:
        __import__(module)
        return True
    except ImportError:
        return False


# --------------------------------------------------------------------------- 2. the CLI keeps the side


def _sided_trades(tmp_path, n=6000, seed=4):
    t = vpoc.synth.es_trades(n, 3, seed=seed)
    side = np.random.default_rng(seed).choice(np.array(["B", "A", "N"]), len(t.price))
    df = t.to_pandas()
    df["side"] = side
    df.to_csv(tmp_path / "trades.csv", index=False)
    return tmp_path / "trades.csv"


@_deps.needs("pandas_market_calendars")
def test_cli_profile_trades_carries_the_side(tmp_path):
    from vpoc import cli

    path = _sided_trades(tmp_path)
    out = tmp_path / "p.csv"
    assert cli.main(["profile", str(path), "--kind", "trades", "--tick-size", "0.25", "-o", str(out)]) == 0
    got = pd.read_csv(out)
    want = vpoc.from_trades(vpoc.io.read_trades(path), session="globex", tick_size=0.25).to_pandas()
    for c in ("delta", "delta_poc", "delta_poc_row", "stacked_imbalance_buy", "stacked_imbalance_sell"):
        assert c in got.columns, c
        np.testing.assert_array_equal(got[c].to_numpy(), want[c].to_numpy())
    # a split into small chunks and two files gives the same side columns
    df = pd.read_csv(path)
    half = len(df) // 2
    df.iloc[:half].to_csv(tmp_path / "a.csv", index=False)
    df.iloc[half:].to_csv(tmp_path / "b.csv", index=False)
    split = tmp_path / "s.csv"
    assert cli.main(["profile", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--kind", "trades",
                     "--tick-size", "0.25", "--chunk-rows", "1000", "-o", str(split)]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(split), got)
    # without a side column: no side columns (as Profiles.to_pandas)
    df.drop(columns="side").to_csv(tmp_path / "plain.csv", index=False)
    assert cli.main(["profile", str(tmp_path / "plain.csv"), "--kind", "trades", "--tick-size", "0.25",
                     "-o", str(out)]) == 0
    assert "delta" not in pd.read_csv(out).columns


@_deps.needs("pandas_market_calendars")
def test_cli_bars_profile_and_features_carry_buy_sell(tmp_path):
    from vpoc import cli

    b, df, buy, sell = _bars_frame()
    df.to_csv(tmp_path / "bars.csv", index=False)
    out = tmp_path / "p.csv"
    assert cli.main(["profile", str(tmp_path / "bars.csv"), "--tick-size", "0.25", "-o", str(out)]) == 0
    np.testing.assert_array_equal(pd.read_csv(out)["delta"].to_numpy(), _np_delta(b, buy, sell))
    feats = tmp_path / "f.csv"
    assert cli.main(["features", str(tmp_path / "bars.csv"), "--tick-size", "0.25", "-o", str(feats)]) == 0
    got = pd.read_csv(feats)
    want = vpoc.session_features(vpoc.io.read_bars(tmp_path / "bars.csv"), tick_size=0.25, session="globex")
    for c in ("delta", "delta_poc"):
        np.testing.assert_allclose(got[c].to_numpy(), np.asarray(want[c]), rtol=0, atol=0)
    ninja = df.rename(columns={"buy_volume": "AskVolume", "sell_volume": "BidVolume"})
    ninja.to_csv(tmp_path / "ninja.csv", index=False)
    assert cli.main(["profile", str(tmp_path / "ninja.csv"), "--tick-size", "0.25", "-o", str(out)]) == 0
    np.testing.assert_array_equal(pd.read_csv(out)["delta"].to_numpy(), _np_delta(b, buy, sell))


@_deps.needs("pandas_market_calendars")
def test_cli_advice_says_kind_trades(tmp_path, capsys):
    from vpoc import cli

    path = _sided_trades(tmp_path, n=500)
    assert cli.main(["profile", str(path), "--tick-size", "0.25", "-o", str(tmp_path / "x.csv")]) != 0
    err = capsys.readouterr().err
    assert "use --kind trades" in err and "read_trades" not in err


# --------------------------------------------------------------------------- 3. the volume's error first


_H, _L, _C = np.array([101.0, 102.0]), np.array([100.0, 101.0]), np.array([100.5, 101.5])
_TS = np.array(["2024-01-02T15:00", "2024-01-02T15:01"], dtype="datetime64[ns]")


# vpoc._side_profiles.bar_side_volumes (batch and Live) leaves a bad volume to the engine's own check.
@pytest.mark.parametrize("vol, shown", [([np.nan, 5.0], "nan"), ([-1.0, 5.0], "-1"), ([-1, 5], "-1"),
                                        ([5.0, np.nan], "nan")])
def test_a_bad_volume_is_blamed_before_the_side_check(vol, shown):
    """With buy_volume= / sell_volume= a NaN / negative / infinite volume reports the volume's own
    error (the engine's, as without the sides), not "0.0 + 0.0 is more than volume[0] = nan"."""
    vol = np.asarray(vol)
    j = int(np.flatnonzero(~(np.isfinite(vol.astype(float)) & (vol >= 0)))[0])
    msg = rf"^volume\[{j}\] must be finite and >= 0, got {shown}$"
    with pytest.raises(vpoc.InputError, match=msg):
        vpoc.from_bars(_H, _L, _C, vol, tick_size=0.25)  # the engine's wording, without sides
    with pytest.raises(vpoc.InputError, match=msg) as e:
        vpoc.from_bars(_H, _L, _C, vol, tick_size=0.25, buy_volume=np.zeros(2), sell_volume=np.zeros(2))
    assert e.value.argument == "volume" and e.value.index == j
    live = vpoc.Live(tick_size=0.25, side=True)
    with pytest.raises(vpoc.InputError, match=msg):
        live.update(_H, _L, _C, vol, buy_volume=np.zeros(2), sell_volume=np.zeros(2), timestamp=_TS)


def test_a_good_volume_with_too_much_buy_sell_names_the_sides():
    with pytest.raises(vpoc.InputError, match=r"buy_volume\[1\] \+ sell_volume\[1\] = 3\.0 \+ 3\.0 is more"):
        vpoc.from_bars(_H, _L, _C, np.array([5.0, 5.0]), tick_size=0.25, buy_volume=np.array([0.0, 3.0]),
                       sell_volume=np.array([0.0, 3.0]))


# --------------------------------------------------------------------------- 6. inspect reads trades


def _naive_ct_trades(tmp_path, n=60_000, sessions=6):
    t = vpoc.synth.es_trades(n, sessions, seed=5)
    df = t.to_pandas().drop(columns="session_id")
    df["timestamp"] = df["timestamp"].dt.tz_convert("America/Chicago").dt.tz_localize(None)
    df.to_csv(tmp_path / "tr_ct.csv", index=False)
    return t, df, tmp_path / "tr_ct.csv"


def test_inspect_finds_the_zone_of_a_trades_file(tmp_path):
    t, df, path = _naive_ct_trades(tmp_path)
    r = vpoc.io.inspect(path)
    assert r.kind == "trades" and r.rows == len(df)
    assert r.tz == "America/Chicago" and r.naive and r.label is None and r.interval is None
    assert r.tick_size == 0.25
    assert r.read_kwargs == {"tz": "America/Chicago"}
    assert r.cli_args[:2] == ["--kind", "trades"] and "--tz" in r.cli_args
    assert "17:00-15:59 America/Chicago" in r.hours and r.gaps == []
    np.testing.assert_array_equal(vpoc.io.read_trades(path, **r.read_kwargs).timestamp, t.timestamp)
    assert "vpoc.io.read_trades(source, tz='America/Chicago')" in repr(r)
    # the minutes NumPy buckets: what the evidence counts
    minutes = np.unique(t.timestamp - t.timestamp % (60 * 10**9)).size
    assert any(f"{minutes:,} one-minute buckets" in e for e in r.evidence)
    # a frame, and trades with a UTC offset (no zone to find)
    assert vpoc.io.inspect(df).tz == "America/Chicago"
    aware = t.to_pandas().drop(columns="session_id")
    r2 = vpoc.io.inspect(aware)
    assert r2.kind == "trades" and not r2.naive and r2.tz is None and "tz" not in r2.read_kwargs


def test_inspect_trades_counts_duplicates_and_cli_says_kind_trades(tmp_path, capsys):
    from vpoc import cli

    _, df, path = _naive_ct_trades(tmp_path, n=20_000, sessions=4)
    dup = pd.concat([df, df.iloc[[10, 10, 500]]]).sort_values("timestamp", kind="stable")
    dup.to_csv(tmp_path / "dup.csv", index=False)
    r = vpoc.io.inspect(tmp_path / "dup.csv")
    t = pd.to_datetime(dup["timestamp"]).to_numpy().astype(np.int64)
    assert r.duplicated_timestamps == int(np.count_nonzero(np.diff(t) == 0))
    rows = np.stack([t.astype(float), dup["price"].to_numpy(float), dup["volume"].to_numpy(float)], axis=1)
    assert r.duplicated_rows == len(rows) - np.unique(rows, axis=0).shape[0]
    assert cli.main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "--kind trades --tz America/Chicago --tick-size 0.25" in out
