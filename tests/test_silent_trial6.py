"""Silent behaviour found by the sixth new-user trial (datasets, CLI IB): each now refuses or warns.

Contract: every test here failed before its fix (dtype=, session order, default bar offsets,
same-session leakage identities, CLI dated IB, message nits); plain-NumPy references where numeric.
"""

import warnings

import numpy as np
import pytest

import vpoc

torch = pytest.importorskip("torch")
from vpoc.torch import BarWindowDataset, SessionFeatureDataset  # noqa: E402


@pytest.fixture(scope="module")
def ft():
    return vpoc.session_features(vpoc.synth.es_bars(n_sessions=8), tick_size=0.25)


@pytest.fixture(scope="module")
def bt():
    return vpoc.bar_features(vpoc.synth.es_bars(n_sessions=3), tick_size=0.25)


# ---------------------------------------------------------------- 1. dtype= (finding 5)

@pytest.mark.parametrize("bad", [torch.int32, torch.int64, torch.bool, "int32", "device", 3])
def test_dtype_non_floating_refused(ft, bt, bad):
    with pytest.raises(TypeError, match="dtype"):
        SessionFeatureDataset(ft, "vpoc", dtype=bad)
    with pytest.raises(TypeError, match="dtype"):
        BarWindowDataset(bt, 10, dtype=bad)


@pytest.mark.parametrize("name,want", [("float32", torch.float32), ("float64", torch.float64),
                                       ("torch.float64", torch.float64)])
def test_dtype_string_mapped(ft, bt, name, want):
    ds = SessionFeatureDataset(ft, "vpoc", dtype=name)
    assert ds.x.dtype == want and ds.y.dtype == want
    ref = np.asarray(ft.values, dtype=np.float64)
    np.testing.assert_array_equal(ds.x.double().numpy(), ref.astype(str(want)[6:]).astype(np.float64))
    assert BarWindowDataset(bt, 10, dtype=name).x.dtype == want


# ---------------------------------------------------------------- 2. frame order, datetime columns (finding 2)

def test_reversed_frame_refused(ft):
    pd = pytest.importorskip("pandas")
    df = ft.to_pandas()
    assert len(SessionFeatureDataset(df, "close_change_pct")) == len(df) - 1
    with pytest.raises(ValueError, match=r"chronological order.*row 1 has 20190110 after 20190111\b"):
        SessionFeatureDataset(df.sort_index(ascending=False), "close_change_pct")
    dup = pd.concat([df.iloc[:3], df.iloc[2:]])
    with pytest.raises(ValueError, match="chronological"):
        SessionFeatureDataset(dup, "vpoc")
    # a RangeIndex (reset_index(drop=True)) carries no order: accepted
    assert len(SessionFeatureDataset(df.reset_index(drop=True), "vpoc")) == len(df) - 1


@pytest.mark.parametrize("unit", ["ns", "us"])
def test_datetime_column_refused_like_string(ft, unit):
    pd = pytest.importorskip("pandas")
    df = ft.to_pandas()
    d = df.copy()
    d["day"] = pd.to_datetime(df.index.astype(str)).as_unit(unit)
    with pytest.raises(TypeError, match=r"numeric.*'day'"):
        SessionFeatureDataset(d, "vpoc")
    d = df.copy()
    d["gap"] = pd.to_timedelta(np.arange(len(df)), unit="D")
    with pytest.raises(TypeError, match=r"numeric.*'gap'"):
        BarWindowDataset(d, 2)


# ---------------------------------------------------------------- 3. bar offsets by default, empty warns (finding 4)

def _ref_ends(offsets, window, horizon):
    return np.concatenate([np.arange(a + window - 1, b - horizon) for a, b in zip(offsets[:-1], offsets[1:])])


def test_bar_table_offsets_by_default(bt):
    ref = _ref_ends(np.asarray(bt.offsets), 30, 1)
    for src in (bt, bt.to_pandas()):
        ds = BarWindowDataset(src, 30, target="dev_poc_dist")
        np.testing.assert_array_equal(ds.window_end.numpy(), ref)
        s_first = np.searchsorted(bt.offsets, ref - 29, side="right")
        assert (s_first == np.searchsorted(bt.offsets, ref + 1, side="right")).all()
    # a plain array still means one sequence
    whole = BarWindowDataset(np.asarray(bt.values), 30, target=np.zeros(bt.shape[0]))
    np.testing.assert_array_equal(whole.window_end.numpy(), np.arange(29, bt.shape[0] - 1))


def test_bar_frame_sessions_out_of_order_refused(bt):
    df = bt.to_pandas().sort_index(level=0, ascending=False, sort_remaining=False)
    with pytest.raises(ValueError, match="chronological"):
        BarWindowDataset(df, 30)


def test_empty_dataset_warns(bt, ft):
    longest = int(np.diff(bt.offsets).max())
    with pytest.warns(vpoc.DroppedRowsWarning, match=f"0 items.*longer than every session.*longest {longest}"):
        ds = BarWindowDataset(bt, longest, target="dev_poc_dist")
    assert len(ds) == 0
    v = np.ones((20, 2))
    with pytest.warns(vpoc.DroppedRowsWarning, match="0 items.*each of the 15 windows has a NaN target"):
        assert len(BarWindowDataset(v, 5, target=np.full(20, np.nan))) == 0
    with pytest.warns(vpoc.DroppedRowsWarning, match="0 items.*NaN"):
        assert len(SessionFeatureDataset(v, np.full(20, np.nan))) == 0
    with pytest.warns(vpoc.DroppedRowsWarning, match="0 items.*no session has a target"):
        assert len(SessionFeatureDataset(v[:1], "a", columns=["a", "b"])) == 0


# ---------------------------------------------------------------- 4. same-session identities (finding 3)

def _identities(c):
    """Plain-NumPy rebuilds of a target from other columns of the same row (vpoc/features/_session.py)."""
    return {
        "session_high": c["session_low"] + c["price_range"],
        "session_low": c["session_high"] - c["price_range"],
        "price_range": c["session_high"] - c["session_low"],
        "value_area_high": c["value_area_low"] + c["value_area_width"],
        "value_area_low": c["value_area_high"] - c["value_area_width"],
        "value_area_width": c["value_area_high"] - c["value_area_low"],
        "session_open": c["price_range"] / c["range_pct"] * 100.0,
        "range_pct": c["price_range"] / c["session_open"] * 100.0,
        "close_change_pct": (c["session_close"] - c["session_open"]) / c["session_open"] * 100.0,
        "vwap": c["session_close"] / (1.0 + c["close_to_vwap_pct"] / 100.0),
        "close_to_vwap_pct": (c["session_close"] - c["vwap"]) / c["vwap"] * 100.0,
        "close_va_position": (c["session_close"] - c["value_area_low"]) / c["value_area_width"],
        "ib_high": c["ib_low"] + c["ib_range"],
        "ib_low": c["ib_high"] - c["ib_range"],
        "ib_range": c["ib_high"] - c["ib_low"],
    }


def test_derived_columns_public_and_cover_every_identity():
    from vpoc.torch import DERIVED_COLUMNS
    # a clock so the IB columns exist; float64 reference from the table's own columns
    ft = vpoc.session_features(vpoc.synth.es_bars(n_sessions=12).to_pandas(), tick_size=0.25)
    c = {n: np.asarray(ft[n], dtype=np.float64) for n in ft.columns}
    for target, rebuilt in _identities(c).items():
        np.testing.assert_allclose(rebuilt, c[target], rtol=1e-6, atol=1e-5, err_msg=target)  # float32 table
        assert target in DERIVED_COLUMNS, target
        x_cols = [n for n in ft.columns if n != target]
        with pytest.warns(UserWarning, match="can be recovered from x"):
            SessionFeatureDataset(ft, target, target_shift=0, drop_columns=[target])
        # dropping every column the table names silences it
        drop = [target] + [n for n in x_cols if n.startswith(DERIVED_COLUMNS[target] + (target + "_",))]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            SessionFeatureDataset(ft, target, target_shift=0, drop_columns=drop)


def test_trial6_leaks_now_named(ft):
    with pytest.warns(UserWarning, match=r"session_high.*price_range"):
        SessionFeatureDataset(ft, "session_high", target_shift=0, drop_columns=["session_high"])
    with pytest.warns(UserWarning, match=r"value_area_high.*value_area_width"):
        SessionFeatureDataset(ft, "value_area_high", target_shift=0, drop_columns=["value_area_high"])


# ---------------------------------------------------------------- 6. message nits (finding 9)

def test_lookbacks_message_names_the_index():
    with pytest.raises(ValueError, match=r"lookbacks\[1\] must be >= 1, got 0"):
        vpoc.session_features(vpoc.synth.es_bars(n_sessions=2), tick_size=0.25, lookbacks=(5, 0))


@pytest.mark.parametrize("index", ["labels", "timestamps"])
def test_bar_frame_with_a_repeating_single_index_is_taken(index):
    """Review of t6fix: a bar frame indexed by its session label (repeated per bar) or by bar timestamps
    with a repeat is in order and must be accepted (the session table's one-row-per-session rule is not
    the bars' rule); reversed, it is refused with readable labels."""
    pd = pytest.importorskip("pandas")
    n = 12
    x = np.arange(n * 2, dtype=np.float64).reshape(n, 2)
    idx = (np.repeat([1, 2, 3], 4) if index == "labels"
           else pd.DatetimeIndex(np.array(["2024-01-02T00:00"] * 2 + ["2024-01-02T00:01"] * 10, "datetime64[ns]")))
    df = pd.DataFrame(x, columns=["a", "b"], index=idx)
    ds = BarWindowDataset(df, 3, target=np.arange(n, dtype=np.float64))
    # a single-level index gives no sessions: one sequence, as before t6fix
    np.testing.assert_array_equal(ds.window_end.numpy(), np.arange(2, n - 1))
    with pytest.raises(ValueError, match=r"non-decreasing\); row \d+ has (2|2024-01-02 00:00:00) after "
                                         r"(3|2024-01-02 00:01:00) \(sort_index"):
        BarWindowDataset(df.iloc[::-1], 3)


def test_session_order_message_prints_plain_values():
    pd = pytest.importorskip("pandas")
    df = vpoc.synth.es_bars(n_sessions=4).to_pandas()
    df = pd.concat([df[df.session_id > 20190103], df[df.session_id <= 20190103]])
    with pytest.raises(ValueError, match=r"has 20190102 after 20190107$") as e:
        vpoc.session_features(df, tick_size=0.25)
    assert "np." not in str(e.value)


# ---------------------------------------------------------------- 5. CLI IB on holiday-merged sessions (finding 1)

def test_cli_features_match_python_on_holiday_merged_sessions(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pandas_market_calendars")
    from vpoc import cli
    csv, out = tmp_path / "es.csv", tmp_path / "feats.csv"
    vpoc.io.write_bars(vpoc.synth.es_bars(n_sessions=60), str(csv))  # holds MLK 2019-01-21, 2019-02-18
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rules' dropped-row / holiday reports
        assert cli.main(["features", str(csv), "--tick-size", "0.25", "--out", str(out), "--progress", "never"]) == 0
        bars = vpoc.io.read_bars(str(csv), label="open", interval=60)
        py = vpoc.session_features(bars, tick_size=0.25, session="globex").to_pandas()
    got = pd.read_csv(out).set_index("session")
    assert list(got.index) == list(py.index)
    # plain-pandas reference: bars opening 08:30 <= t < 09:30 America/Chicago on the trade date
    ts = pd.to_datetime(bars.timestamp, utc=True).tz_convert("America/Chicago")
    df = pd.DataFrame({"high": bars.high, "low": bars.low}, index=ts)
    for day in (20190122, 20190219):  # the sessions that hold the holiday morning
        d = pd.Timestamp(str(day), tz="America/Chicago")
        w = df[(df.index >= d + pd.Timedelta("8h30min")) & (df.index < d + pd.Timedelta("9h30min"))]
        assert got.loc[day, "ib_high"] == w.high.max() and got.loc[day, "ib_low"] == w.low.min()
    for c in py.columns:
        np.testing.assert_allclose(got[c].to_numpy(np.float64), py[c].to_numpy(np.float64), rtol=1e-6,
                                   equal_nan=True, err_msg=c)
