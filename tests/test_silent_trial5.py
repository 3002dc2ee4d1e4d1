"""Silent behaviour found by the fifth new-user trial (TPO, presets, diff, feature tables), each now reported.

Contract checked: docs/features.md (TPO profiles: incomplete IB, days_since_prior), docs/presets.md; each test
failed before its fix (brief t5fix).
"""

import warnings

import numpy as np
import pytest

import vpoc
import _deps

pd = pytest.importorskip("pandas")

CHI = "America/Chicago"
# 30-minute RTH bars of one session: (open, high, low, close, volume)
S1 = [(101, 104, 100, 103, 10), (103, 106, 103, 105, 10), (105, 110, 105, 109, 10),
      (109, 110, 108, 108, 10), (108, 109, 107, 107, 10), (107, 108, 106, 107, 10)]


def mk(day, rows, start="08:30", step="30min"):
    ts = pd.date_range(pd.Timestamp(f"{day} {start}", tz=CHI), periods=len(rows), freq=step)
    df = pd.DataFrame(rows, columns=["open", "high", "low", "close", "volume"]).astype(float)
    df.insert(0, "timestamp", ts)
    return df


def caught(fn, *a, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn(*a, **kw)
    return out, w


def of(w, cls):
    return [str(x.message) for x in w if issubclass(x.category, cls)]


# ------------------------------------------------------------------ 1. a session whose first bars are missing
@_deps.needs("pandas_market_calendars")
def test_missing_first_bars_make_the_ib_incomplete_in_tpo():
    df = mk("2025-03-04", S1[1:], start="09:00")  # the 08:30 period is missing
    tp, w = caught(vpoc.tpo, df, tick_size=1.0, session="rth")
    msgs = of(w, vpoc.IncompleteSessionWarning)
    assert len(msgs) == 1 and "miss the start of their initial balance" in msgs[0] and "20250304" in msgs[0]
    assert "30 minutes after" in msgs[0]
    assert not tp.ib_complete[0] and np.isnan(tp.ib_ext_up[0]) and np.isnan(tp.ib_ext_down[0])
    assert tp.day_type[0] == "" and tp.open_type[0] == ""
    assert tp.ib_high[0] == 106 and tp.ib_low[0] == 103  # the bars the window holds
    with pytest.raises(ValueError, match="miss the start"):
        vpoc.tpo(df, tick_size=1.0, session="rth", incomplete="raise")
    full, w = caught(vpoc.tpo, mk("2025-03-04", S1), tick_size=1.0, session="rth")
    assert not of(w, vpoc.IncompleteSessionWarning) and full.ib_complete[0]
    assert full.day_type[0] == "normal_variation"


@_deps.needs("pandas_market_calendars")
def test_missing_first_bars_session_features_same_rule_and_warning():
    df = mk("2025-03-04", S1[1:], start="09:00")
    t, w = caught(vpoc.session_features, df, tick_size=1.0, session="rth", tpo_columns=True,
                  context_columns=True, lookbacks=())
    msgs = of(w, vpoc.IncompleteSessionWarning)
    assert len(msgs) == 1 and msgs[0].startswith("session_features:") and "20250304" in msgs[0]
    f = t.to_pandas()
    assert f["ib_complete"].iloc[0] == 0 and np.isnan(f["ib_ext_up"].iloc[0])
    assert f["day_type"].iloc[0] == -1 and f["open_type"].iloc[0] == -1


@_deps.needs("pandas_market_calendars")
def test_one_minute_bars_starting_inside_the_first_period_keep_a_complete_ib():
    n = 120
    ts = pd.date_range(pd.Timestamp("2025-03-04 08:31", tz=CHI), periods=n, freq="1min")
    rng = np.random.default_rng(0)
    lo = 100 + np.cumsum(rng.integers(-1, 2, n)).astype(float)
    df = pd.DataFrame(dict(timestamp=ts, open=lo, high=lo + 1, low=lo, close=lo, volume=1.0))
    tp, w = caught(vpoc.tpo, df, tick_size=1.0, session="rth")
    assert tp.ib_complete[0] and not of(w, vpoc.IncompleteSessionWarning)
    late = df.iloc[30:]  # from 09:01: period A (08:30-09:00) has no bar
    tp, w = caught(vpoc.tpo, late, tick_size=1.0, session="rth")
    assert not tp.ib_complete[0] and of(w, vpoc.IncompleteSessionWarning)


@_deps.needs("pandas_market_calendars")
def test_first_bar_anchor_uses_the_scheduled_open_when_known():
    df = mk("2025-03-04", S1[1:], start="09:00")
    tp, w = caught(vpoc.tpo, df, tick_size=1.0, session="rth", preset="marketprofile")
    msgs = of(w, vpoc.IncompleteSessionWarning)
    assert not tp.ib_complete[0] and any("scheduled open" in m for m in msgs)
    # offsets only: no schedule, the first bar is taken as the open (docs/features.md)
    ts = df["timestamp"].dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
    tp = vpoc.tpo(df["high"].to_numpy(), df["low"].to_numpy(), df["close"].to_numpy(), timestamp=ts,
                  offsets=[0, len(df)], tick_size=1.0, ib_anchor="first_bar", incomplete="raise")
    assert tp.ib_complete[0]


# ------------------------------------------------------------------ 2. preset= on session_features / tpo
def _two_sessions():
    return pd.concat([mk("2025-03-04", S1), mk("2025-03-05", S1)], ignore_index=True)


@_deps.needs("pandas_market_calendars")
def test_preset_on_feature_functions_is_recorded_and_names_the_rules_not_applied():
    df = _two_sessions()
    plain = vpoc.session_features(df, tick_size=1.0, session="rth", lookbacks=())
    assert plain.rules is None
    t, w = caught(vpoc.session_features, df, tick_size=1.0, session="rth", lookbacks=(), preset="marketprofile")
    msgs = of(w, vpoc.PresetWarning)
    assert len(msgs) == 1 and "only its initial balance rules" in msgs[0] and "va_method='single'" in msgs[0]
    assert t.rules["preset"] == "marketprofile" and "va_method" in t.rules["preset_not_applied"]
    assert t.rules["preset_applied"] == ("ib_end", "ib_anchor", "opening_minutes")
    np.testing.assert_array_equal(t["vpoc"], plain["vpoc"])  # the profile columns keep the call's rules
    t, w = caught(vpoc.session_features, df, tick_size=1.0, session="rth", lookbacks=(), preset="wickra")
    msgs = of(w, vpoc.PresetWarning)
    assert len(msgs) == 1 and "applies none of its rules" in msgs[0] and "bins=50" in msgs[0]
    tp, w = caught(vpoc.tpo, df, tick_size=1.0, session="rth", preset="ninjatrader")
    msgs = of(w, vpoc.PresetWarning)
    assert len(msgs) == 1 and "value_area=0.68" in msgs[0] and msgs[0].startswith("tpo:")
    assert tp.rules["preset"] == "ninjatrader" and "value_area" in tp.rules["preset_not_applied"]
    # a keyword passed that equals the preset's rule is applied: not named
    tp, w = caught(vpoc.tpo, df, tick_size=1.0, session="rth", preset="ninjatrader", value_area=0.68,
                   va_method="single")
    assert not of(w, vpoc.PresetWarning) and tp.rules["preset_not_applied"] == ()
    for p in ("cbot", "sierra"):  # today's rules: nothing left out
        _, w = caught(vpoc.session_features, df, tick_size=1.0, session="rth", lookbacks=(), preset=p)
        assert not of(w, vpoc.PresetWarning)
    assert "PresetWarning" in vpoc.__all__


# ------------------------------------------------------------------ 3. diff of TpoProfiles: IB / opening range
@_deps.needs("pandas_market_calendars")
def test_diff_of_tpo_compares_ib_and_opening_range_and_names_their_rules():
    rows = [(101, 104, 100, 103, 10), (103, 106, 103, 105, 10), (105, 110, 105, 109, 10),
            (109, 110, 108, 108, 10)]
    df = mk("2025-03-04", rows, start="08:30", step="5min")  # four 5-minute bars: the 10-minute OR is two
    a = vpoc.tpo(df, tick_size=1.0, session="rth", incomplete="ignore")
    b = vpoc.tpo(df, tick_size=1.0, session="rth", incomplete="ignore", opening_minutes=10)
    assert a.or_high[0] == 110 and b.or_high[0] == 106  # one 30-minute period vs 10 minutes
    d = vpoc.diff(a, b)
    assert d.differs[0] and d.rule[0] == "opening_minutes"
    assert "or_high 110 vs 106" in d.reason[0] and "opening_minutes: 30 vs 10" in d.reason[0]
    assert d.settings["opening_minutes"] == (30, 10) and d.settings["ib_end"] == ("exclusive", "exclusive")
    for k in ("ib_minutes", "ib_anchor"):
        assert k in d.settings
    same = vpoc.diff(a, vpoc.tpo(df, tick_size=1.0, session="rth", incomplete="ignore"))
    assert not same.differs.any() and list(same.rule) == [""]


# ------------------------------------------------------------------ 4. diff of volume profiles: the rules named
def _trades(seed=3, S=4):
    rng = np.random.default_rng(seed)
    price = np.concatenate([4000 + rng.integers(0, 30, 300) * 0.25 for _ in range(S)])
    vol = rng.integers(1, 20, price.size).astype(float)
    return price, vol, np.arange(S + 1) * 300


def test_diff_does_not_name_rules_documented_to_have_no_effect():
    price, vol, off = _trades()
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, preset="cbot")
    b = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, preset="marketprofile")
    d = vpoc.diff(a, b)
    assert d.differs.any()
    for r in d.rule:
        assert "row_label" not in r and "tie_tol" not in r
    assert any("row_label 'low' vs 'top' has no effect" in n for n in d.notes)
    assert any("tie_tol 1e-09 vs 0.0 agree" in n for n in d.notes)
    assert d.settings["row_label"] == ("low", "top")  # still listed in settings


def test_diff_names_bins_against_a_plain_profile():
    price, vol, off = _trades(5)
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25)
    b = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, preset="wickra")
    d = vpoc.diff(a, b)
    assert d.differs.all()
    for r, why in zip(d.rule, d.reason):
        assert all("bins" in alt.split("+") for alt in r.split(" or ")), r
        assert "bins: None vs 50" in why and "preset: None vs 'wickra'" in why
    assert d.settings["bins"] == (None, 50)


def test_value_area_set_by_a_preset_is_recorded_and_named():
    price, vol, off = _trades(7)
    b = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, preset="ninjatrader")
    assert b.rules["value_area"] == 0.68
    assert "value_area" not in vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, preset="ninjatrader",
                                                value_area=0.68).rules
    a = vpoc.from_trades(price, vol, offsets=off, tick_size=0.25, preset="cbot")
    d = vpoc.diff(a, b)
    assert d.settings["value_area"] == (None, 0.68)
    for s in np.flatnonzero(d.differs):
        assert "b fits 0.68" in d.reason[s] or "value_area" not in d.rule[s]


# ------------------------------------------------------------------ 5. missing days: days_since_prior
@_deps.needs("pandas_market_calendars")
def test_days_since_prior_and_a_warning_when_days_are_missing():
    days = ["2025-03-04", "2025-03-05", "2025-03-07", "2025-03-10", "2025-03-17"]  # 1, 2, 3 (week-end), 7
    df = pd.concat([mk(d, S1) for d in days], ignore_index=True)
    tp, w = caught(vpoc.tpo, df, tick_size=1.0, session="rth")
    msgs = of(w, vpoc.MissingDaysWarning)
    assert len(msgs) == 1 and msgs[0].startswith("tpo:") and "20250317 after 20250310 (7 days)" in msgs[0]
    np.testing.assert_array_equal(tp.days_since_prior, [np.nan, 1, 2, 3, 7])
    assert "days_since_prior" in tp.to_pandas().columns
    t, w = caught(vpoc.session_features, df, tick_size=1.0, session="rth", lookbacks=(), context_columns=True)
    msgs = of(w, vpoc.MissingDaysWarning)
    assert len(msgs) == 1 and msgs[0].startswith("session_features:") and "20250317" in msgs[0]
    np.testing.assert_array_equal(t["days_since_prior"], np.array([np.nan, 1, 2, 3, 7], dtype=np.float32))
    # without context columns the prev_*_dist columns still bridge the hole: still reported
    _, w = caught(vpoc.session_features, df, tick_size=1.0, session="rth", lookbacks=())
    assert len(of(w, vpoc.MissingDaysWarning)) == 1
    # a week-end (3) or a long week-end (4) is not reported
    _, w = caught(vpoc.tpo, df.iloc[:4 * len(S1)], tick_size=1.0, session="rth")
    assert not of(w, vpoc.MissingDaysWarning)
    assert "MissingDaysWarning" in vpoc.__all__


# ------------------------------------------------------------------ 6 / 7. empty periods: the likely cause
@_deps.needs("pandas_market_calendars")
def test_coarse_bars_warning_names_the_bar_spacing_and_suggests_period():
    df = mk("2025-03-04", S1, step="60min")
    tp, w = caught(vpoc.tpo, df, tick_size=1.0, session="rth")
    msgs = of(w, vpoc.IncompleteSessionWarning)
    assert len(msgs) == 1 and "the bars look 60-minute" in msgs[0] and "period='60min'" in msgs[0]
    assert tp.empty_periods[0] == 5
    _, w = caught(vpoc.tpo, df, tick_size=1.0, session="rth", period="60min")
    assert not of(w, vpoc.IncompleteSessionWarning)


@_deps.needs("pandas_market_calendars")
def test_halt_inside_a_session_names_its_stretch_and_cme_schedules_in_both_functions():
    rows = S1 + S1[:2]
    ts = list(pd.date_range(pd.Timestamp("2025-03-04 08:30", tz=CHI), periods=6, freq="30min"))
    ts += [pd.Timestamp("2025-03-04 13:30", tz=CHI), pd.Timestamp("2025-03-04 14:00", tz=CHI)]
    df = pd.DataFrame(rows, columns=["open", "high", "low", "close", "volume"]).astype(float)
    df.insert(0, "timestamp", ts)  # 11:30 .. 13:00 without bars (a halt)
    _, w = caught(vpoc.tpo, df, tick_size=1.0, session="rth")
    a = of(w, vpoc.IncompleteSessionWarning)
    _, w = caught(vpoc.session_features, df, tick_size=1.0, session="rth", tpo_columns=True, lookbacks=())
    b = of(w, vpoc.IncompleteSessionWarning)
    assert len(a) == len(b) == 1
    for m in (a[0], b[0]):
        assert "has 4" in m and "longest stretch without bars is 2.5 h after the bar of 11:00 local" in m
        assert "holiday and early-close schedules" in m and "IncompleteSessionWarning" in m
    assert a[0].split(": ", 1)[1].split(". See")[0] == b[0].split(": ", 1)[1].split(". See")[0]  # one text


# ------------------------------------------------------------------ 8. target_shift=0 names the derived columns
def test_same_session_target_names_the_columns_computed_from_it():
    pytest.importorskip("torch")
    from vpoc.torch import SessionFeatureDataset
    bars = vpoc.synth.es_bars(n_sessions=8, seed=1)
    t = vpoc.session_features(bars, tick_size=0.25, lookbacks=(2,))
    with pytest.raises(ValueError, match="vpoc_change_2d"):
        SessionFeatureDataset(t, "vpoc", target_shift=0)
    with pytest.warns(UserWarning, match="vpoc_change_2d, vpoc_pct_change_2d, vpoc_std_2d, vpoc_zscore_2d"):
        SessionFeatureDataset(t, "vpoc", target_shift=0, drop_columns=["vpoc"])
    drop = ["vpoc", "vpoc_change_2d", "vpoc_pct_change_2d", "vpoc_std_2d", "vpoc_zscore_2d"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = SessionFeatureDataset(t, "vpoc", target_shift=0, drop_columns=drop)
    assert len(ds) > 0


# ------------------------------------------------------------------ 11. synth.es_bars with the Globex rule
@_deps.needs("pandas_market_calendars")
def test_quickstart_es_bars_with_globex_keeps_every_row_and_longer_spans_are_reported():
    bars = vpoc.synth.es_bars(n_sessions=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = vpoc.sessions.globex(bars.timestamp, volume=bars.volume)
        prof = vpoc.from_bars(bars, session=s, tick_size=0.25)
    assert s.dropped_rows == 0 and s.n_sessions == 10 and len(prof) == 10
    np.testing.assert_array_equal(np.asarray(s.labels), np.asarray(bars.session_labels))
    # crossing the first CME holiday: the synthetic calendar has none, and the rows left out are said
    longer = vpoc.synth.es_bars(n_sessions=60)
    _, w = caught(vpoc.sessions.globex, longer.timestamp, volume=longer.volume)
    assert of(w, vpoc.DroppedRowsWarning)
    assert "DST" in vpoc.synth.es_bars.__doc__ and "quickstart" in vpoc.synth.es_bars.__doc__


# ------------------------------------------------------------------ a preset's value_area in Live's rules too
@pytest.mark.parametrize("preset", ["ninjatrader", "marketprofile"])
def test_live_records_a_preset_value_area_as_from_bars_does(preset):
    rng = np.random.default_rng(5)
    n = 60
    c = (400 + rng.integers(0, 12, size=n)) * 0.25
    v = rng.integers(1, 4, size=n) * 10.0
    ts = 1_700_000_000 * 10**9 + np.arange(n) * 60 * 10**9
    ref = vpoc.from_bars(c + 0.5, c - 0.5, c, v, tick_size=0.25, preset=preset)
    live = vpoc.Live(tick_size=0.25, preset=preset)
    live.update(c + 0.5, c - 0.5, c, v, timestamp=ts)
    live.close()
    assert live.profiles.rules == ref.rules
    assert ("value_area" in ref.rules) == (preset == "ninjatrader")
    if preset == "ninjatrader":
        assert ref.rules["value_area"] == 0.68
        assert (live.profiles.val[0], live.profiles.vah[0]) == (ref.val[0], ref.vah[0])


# ------------------------------------------------------------------ bar_features bridging missing days: said too
@_deps.needs("pandas_market_calendars")
def test_bar_features_warns_when_prior_session_columns_bridge_missing_days():
    bars = vpoc.synth.es_bars(n_sessions=12)
    keep = np.ones(bars.offsets[-1], bool)
    keep[bars.offsets[3]:bars.offsets[9]] = False  # six sessions (8+ calendar days) missing
    ts, h, lo, c, v = (np.asarray(x)[keep] for x in (bars.timestamp, bars.high, bars.low, bars.close, bars.volume))
    with pytest.warns(vpoc.MissingDaysWarning, match="bar_features: 1 of .*prev_\\*_dist / cum_volume_vs_prev"):
        vpoc.features.bar_features(h, lo, c, v, timestamp=ts, session="globex", tick_size=0.25)
    with warnings.catch_warnings():  # the data without the hole: nothing said
        warnings.simplefilter("error")
        vpoc.features.bar_features(bars.high, bars.low, bars.close, bars.volume, timestamp=bars.timestamp,
                                   session="globex", tick_size=0.25)
