# Trial 12 finding 5: vpoc.Live.profiles (and session_table()) carry the session facts the batch sets for the same rule.
# Contract: each test failed on main before the fix (guards marked as such pass on both); docs/live.md states the rule.
import pickle
import warnings

import numpy as np
import pytest

import vpoc

pd = pytest.importorskip("pandas")
pytest.importorskip("pandas_market_calendars")  # every Live here runs the default calendar

MIN = 60 * 10**9
N = 20  # bars a session


@pytest.fixture(scope="module")
def frame():
    """Two trade dates of 1-minute bars from 09:00 CT (15:00 UTC): inside Globex, RTH and daily sessions alike."""
    b = vpoc.synth.es_bars(n_sessions=2, bars_per_session=N)
    day = [np.datetime64(d, "ns").astype(np.int64) for d in ("2019-01-02T15:00", "2019-01-03T15:00")]
    ts = np.concatenate([d + MIN * np.arange(N) for d in day])
    df = pd.DataFrame(dict(timestamp=pd.to_datetime(ts, utc=True), open=np.asarray(b.open),
                           high=np.asarray(b.high), low=np.asarray(b.low), close=np.asarray(b.close),
                           volume=np.asarray(b.volume)))
    df.attrs["ns"] = ts  # the int64 ns stamps the Live takes
    return df


def _live(df, close=True, **kw):
    kw.setdefault("session_features", True)
    live = vpoc.Live(tick_size=0.25, **kw)
    live.update(df.high.to_numpy(), df.low.to_numpy(), df.close.to_numpy(), df.volume.to_numpy(),
                open=df.open.to_numpy(), timestamp=df.attrs["ns"])
    if close:
        live.close()
    return live


def _batch(df, session):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vpoc.GuessedDefaultWarning)
        return vpoc.from_bars(df, session=session, tick_size=0.25)


@pytest.mark.parametrize("rule", ["globex", "rth", "daily"])
def test_to_pandas_index_equals_the_batch(frame, rule):
    live, batch = _live(frame, session=rule), _batch(frame, rule)
    assert live.profiles.session_rule == batch.session_rule == rule
    assert live.profiles.trade_dates is True
    li, bi = live.profiles.to_pandas().index, batch.to_pandas().index
    assert isinstance(li, pd.DatetimeIndex) and li.name == "trade_date"
    pd.testing.assert_index_equal(li, bi, exact=True)  # name, dtype and values
    assert list(li.strftime("%Y-%m-%d")) == ["2019-01-02", "2019-01-03"]
    # the whole frame: the batch's rows on the finished sessions
    pd.testing.assert_frame_equal(live.profiles.to_pandas(), batch.to_pandas())


def test_to_pandas_index_after_two_sessions_without_close(frame):
    # the finished session (the second is running) is the batch's first row, labelled alike
    live, batch = _live(frame, close=False, session="globex"), _batch(frame, "globex")
    pd.testing.assert_index_equal(live.profiles.to_pandas().index, batch.to_pandas().index[:1], exact=True)


@pytest.mark.parametrize("rule", ["globex", "rth"])
def test_loc_by_date(frame, rule):
    live, batch = _live(frame, session=rule), _batch(frame, rule)
    for key in ("2019-01-02", pd.Timestamp("2019-01-03"), 20190103):
        a, b = live.profiles.loc[key], batch.loc[key]
        assert a.label == b.label and a.poc == b.poc and a.vah == b.vah and a.val == b.val
    with pytest.raises(KeyError, match="2019-01-04"):
        live.profiles.loc["2019-01-04"]


def test_concat_with_batch_gives_a_datetime_index(frame):
    live, batch = _live(frame, session="globex"), _batch(frame, "globex")
    both = pd.concat([batch.to_pandas(), live.profiles.to_pandas()])
    assert isinstance(both.index, pd.DatetimeIndex) and both.index.name == "trade_date"
    assert both.index.dtype == batch.to_pandas().index.dtype and len(both) == 4


def test_rule_with_options_named_by_its_definition(frame):
    # with options the batch takes a vpoc.sessions.Sessions: session_rule is its definition
    opts = dict(start="09:00", end="09:30", tz="America/Chicago")
    live = _live(frame, session="custom", session_options=opts)
    ts = frame.attrs["ns"]
    batch = vpoc.from_bars(frame, session=vpoc.sessions.custom(ts, **opts), tick_size=0.25)
    assert live.profiles.session_rule == batch.session_rule != "custom"
    pd.testing.assert_index_equal(live.profiles.to_pandas().index, batch.to_pandas().index, exact=True)
    live = _live(frame, session="rth", session_options=dict(start="09:00"))
    batch = vpoc.from_bars(frame, session=vpoc.sessions.rth(ts, start="09:00"), tick_size=0.25)
    assert live.profiles.session_rule == batch.session_rule != "rth"


@pytest.mark.parametrize("rule", ["globex", "rth"])
def test_session_table_names_the_rule(frame, rule):
    # the feature table: the same index as session_features' (ints 'session': also on main) and its session_rule
    live = _live(frame, session=rule)
    ref = vpoc.session_features(frame, session=rule, tick_size=0.25)
    got = live.session_table()
    pd.testing.assert_index_equal(got.to_pandas().index, ref.to_pandas().index, exact=True)
    assert got.session_rule == ref.session_rule == rule


def test_facts_survive_state_and_pickle(frame):
    live = _live(frame, session="globex")
    for again in (vpoc.Live.from_state(live.state_dict()), pickle.loads(pickle.dumps(live)),
                  vpoc.Live.from_state(live.state_dict(flat=True))):
        assert again.profiles.session_rule == "globex"
        pd.testing.assert_index_equal(again.profiles.to_pandas().index, live.profiles.to_pandas().index, exact=True)
    prof = pickle.loads(pickle.dumps(live.profiles))
    assert prof.session_rule == "globex" and prof.loc["2019-01-02"].label == 20190102


@pytest.mark.parametrize("how", ["none", "starts"])
def test_without_a_session_rule_today_s_shape(frame, how):
    # guard (passes on main too): sessions by close() or session_starts keep the int 'session' index
    if how == "none":
        live = vpoc.Live(tick_size=0.25)
        half = len(frame) // 2
        for part in (frame.iloc[:half], frame.iloc[half:]):
            live.update(part.high.to_numpy(), part.low.to_numpy(), part.close.to_numpy(), part.volume.to_numpy(),
                        open=part.open.to_numpy(), timestamp=part.attrs["ns"][part.index])
            live.close()
        labels = [0, 1]
    else:
        live = _live(frame, session_starts=frame.attrs["ns"][[0, N]])
        labels = [0, 1]
    p = live.profiles
    assert p.session_rule is None and p.trade_dates is False
    pd.testing.assert_index_equal(p.to_pandas().index, pd.Index(labels, dtype="int64", name="session"), exact=True)
    assert p.loc[1].label == 1


def test_trades_and_sided_live_too(frame):
    ts, price, vol = frame.attrs["ns"], frame.close.to_numpy(), frame.volume.to_numpy()
    live = vpoc.Live(tick_size=0.25, kind="trades", session="globex")
    live.update(price, vol, timestamp=ts)
    live.close()
    trades = pd.DataFrame(dict(timestamp=frame.timestamp, price=price, volume=vol))
    batch = vpoc.from_trades(trades, session="globex", tick_size=0.25)
    assert live.profiles.session_rule == batch.session_rule == "globex"
    pd.testing.assert_frame_equal(live.profiles.to_pandas(), batch.to_pandas())
    live = vpoc.Live(tick_size=0.25, session="globex", side=True)
    buy = np.floor(vol / 2)
    live.update(frame.high.to_numpy(), frame.low.to_numpy(), price, vol, timestamp=ts, buy_volume=buy,
                sell_volume=vol - buy)
    live.close()
    assert live.profiles.session_rule == "globex" and live.profiles.delta.shape == (2,)
    pd.testing.assert_index_equal(live.profiles.to_pandas().index, _batch(frame, "globex").to_pandas().index,
                                  exact=True)
