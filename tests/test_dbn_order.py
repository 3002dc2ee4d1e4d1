"""DBN trades are in ``ts_recv`` order (Databento's index timestamp), in which ``ts_event`` may step back: read_trades
returns them sorted by ``ts_event`` (stable) and counts the trades moved in a ReorderedRecordsWarning; a file (or a
list of files) whose ``ts_recv`` steps back is refused; bars (indexed on ``ts_event``) keep their strict check. Files
written with databento-dbn's own encoder; counts and order checked against plain NumPy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import _deps
import vpoc
from vpoc import io as vio
from vpoc.io._dbn import ReorderedRecordsWarning

dbn = _deps.require("databento_dbn")

T0 = np.datetime64("2025-03-10T14:30", "ns").astype(np.int64)
UNIT = 10**9
SIDES = {1: dbn.Side.BID, -1: dbn.Side.ASK, 0: dbn.Side.NONE}


def metadata(schema="trades") -> bytes:
    return dbn.Metadata(dataset="GLBX.MDP3", start=int(T0), stype_in=dbn.SType.RAW_SYMBOL,
                        stype_out=dbn.SType.INSTRUMENT_ID, schema=dbn.Schema(schema), symbols=["ESH5"]).encode()


def trade(ts_event, ts_recv, units, size, side=1, mbp=False, action=dbn.Action.TRADE, iid=7):
    msg = dbn.MBP1Msg if mbp else dbn.TradeMsg
    extra = {"levels": dbn.BidAskPair(bid_px=units - UNIT // 4, ask_px=units)} if mbp else {}
    return bytes(msg(publisher_id=1, instrument_id=iid, ts_event=int(ts_event), price=int(units), size=int(size),
                     action=action, side=SIDES[side], depth=0, ts_recv=int(ts_recv), **extra))


def bar(ts, o, h, lo, c, v):
    return bytes(dbn.OHLCVMsg(rtype=0x21, publisher_id=1, instrument_id=7, ts_event=int(ts), open=int(o),
                              high=int(h), low=int(lo), close=int(c), volume=int(v)))


def as_databento(rng, n):
    """Trades in ts_recv order (non-decreasing, ties included) whose ts_event lag it by 0.1-5 ms: a later
    trade may have been matched before an earlier one was captured."""
    recv = T0 + np.cumsum(rng.integers(0, 2_000_000, n))
    event = recv - rng.integers(1_000_000, 5_000_000, n)
    units = (24000 + np.cumsum(rng.integers(-2, 3, n))) * (UNIT // 4)
    return event, recv, units, rng.integers(1, 40, n), rng.choice([1, -1, 0], n)


def ref_late(event):
    """(trades with a ts_event before an earlier trade's, the largest step back in ns), by a plain loop."""
    count, lag, top = 0, 0, None
    for t in event.tolist():
        if top is not None and t < top:
            count, lag = count + 1, max(lag, top - t)
        top = t if top is None else max(top, t)
    return count, lag


def write(path, records, schema="trades"):
    path.write_bytes(metadata(schema) + b"".join(records))
    return path


@pytest.mark.parametrize("schema", ["trades", "mbp-1"])
def test_out_of_order_ts_event_is_sorted_and_counted(tmp_path, schema):
    """Fails before the change: the reader refused the file ('timestamp ... is before the previous row')."""
    rng = np.random.default_rng(3)
    event, recv, units, size, side = as_databento(rng, 2000)
    count, lag = ref_late(event)
    assert count > 0
    mbp = schema == "mbp-1"
    records = []
    for k in range(event.size):
        if mbp and k % 4 == 0:  # a book update between trades: not a trade
            records.append(trade(event[k] - 7, recv[k], units[k] - UNIT, 3, mbp=True, action=dbn.Action.ADD))
        records.append(trade(event[k], recv[k], units[k], size[k], side[k], mbp=mbp))
    path = write(tmp_path / "es.dbn", records, schema)
    with pytest.warns(ReorderedRecordsWarning) as rec:
        got = vio.read_trades(path)
    (w,) = [x for x in rec if issubclass(x.category, ReorderedRecordsWarning)]
    assert f"{count} of 2000 trades" in str(w.message) and f"by up to {lag / 1e6:.3g} ms" in str(w.message)
    assert w.filename == __file__  # the caller's line
    order = np.argsort(event, kind="stable")  # equal ts_event keep the file (ts_recv) order
    np.testing.assert_array_equal(got.timestamp, event[order])
    np.testing.assert_array_equal(got.price, units[order] / 1e9)
    np.testing.assert_array_equal(got.volume, size[order])
    np.testing.assert_array_equal(got.side, side[order])
    # the profile of the container (its side, its developing series) is that of the arrays sorted by hand
    kw = dict(offsets=[0, event.size], tick_size=0.25, developing=True)
    a = vpoc.from_trades(got.price, got.volume, side=got.side, **kw)
    b = vpoc.from_trades(units[order] / 1e9, size[order], side=side[order], **kw)
    for name in ("poc", "vah", "val", "volume", "buy_volume", "sell_volume", "dev_poc", "dev_delta"):
        np.testing.assert_array_equal(np.asarray(getattr(a, name)), np.asarray(getattr(b, name)), err_msg=name)


def test_ties_keep_the_file_order(tmp_path):
    # ts_event: 5, 3, 3, 5, 4 (ts_recv increasing): sorted 3 (rec 1), 3 (rec 2), 4 (rec 4), 5 (rec 0), 5 (rec 3)
    event = T0 + np.array([5, 3, 3, 5, 4])
    path = write(tmp_path / "t.dbn", [trade(e, T0 + 10 + k, UNIT * (k + 1), k + 1) for k, e in enumerate(event)])
    with pytest.warns(ReorderedRecordsWarning, match=r"3 of 5 trades \(60%\) .*by up to 2 ns\)"):
        got = vio.read_trades(path)
    assert got.volume.tolist() == [2, 3, 5, 1, 4]
    assert ref_late(event) == (3, 2)


def test_in_order_files_read_without_a_word(tmp_path):
    path = write(tmp_path / "ok.dbn", [trade(T0 + k, T0 + k + 9, UNIT, 1) for k in range(50)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = vio.read_trades(path)
    assert got.timestamp.tolist() == (T0 + np.arange(50)).tolist()


def test_ts_recv_out_of_order_is_refused(tmp_path):
    path = write(tmp_path / "r.dbn", [trade(T0, T0 + 5, UNIT, 1), trade(T0 + 1, T0 + 9, UNIT, 1),
                                      trade(T0 + 2, T0 + 7, UNIT, 1)])
    with pytest.raises(ValueError, match=r"r.dbn record 2: timestamp \(ts_recv\) .* is before the previous row's "
                                         r".*Databento writes records in ts_recv order"):
        vio.read_trades(path)


def test_files_follow_each_other_by_ts_recv(tmp_path):
    # b's first trade was matched before a's last one (ts_event) but captured after it (ts_recv): in order
    a = write(tmp_path / "a.dbn", [trade(T0 + 10, T0 + 20, UNIT, 1), trade(T0 + 30, T0 + 40, UNIT, 2)])
    b = write(tmp_path / "b.dbn", [trade(T0 + 25, T0 + 41, UNIT, 3), trade(T0 + 50, T0 + 60, UNIT, 4)])
    with pytest.warns(ReorderedRecordsWarning, match=r"a.dbn .. .*b.dbn: 1 of 4 trades"):
        got = vio.read_trades([a, b])
    assert got.volume.tolist() == [1, 3, 2, 4]
    with pytest.raises(ValueError, match=r"a.dbn record 0: timestamp \(ts_recv\) .* is before the last row of "
                                         r".*b.dbn .*give the files in time order"):
        vio.read_trades([b, a])


def test_bars_stay_in_ts_event_order(tmp_path):
    path = write(tmp_path / "bars.dbn", [bar(T0 + 60 * UNIT, 4 * UNIT, 5 * UNIT, 3 * UNIT, 4 * UNIT, 9),
                                         bar(T0, 4 * UNIT, 5 * UNIT, 3 * UNIT, 4 * UNIT, 9)], "ohlcv-1m")
    with pytest.raises(ValueError, match=r"bars.dbn record 1: timestamp .* is before the previous row"):
        vio.read_bars(path)
