"""vpoc.io reads Databento DBN files, written here with databento-dbn's own encoder, exactly.

Contract: trades / tbbo / mbp-1 and ohlcv files (plain and zstd) read back to the arrays written
(prices the nearest float64 of the 1e-9 integers, ts_event as UTC ns, Databento's side letters as
+1/-1/0) and give the same profiles as those arrays; bad files and ambiguous instruments raise.
"""

from __future__ import annotations

import datetime as dt
import io
import sys
import warnings
from decimal import Decimal
from types import SimpleNamespace as NS

import numpy as np
import pytest

import _deps
import vpoc
from _compare import assert_profiles_identical
from vpoc import io as vio
from vpoc._warnings import DroppedRowsWarning
from vpoc.io._dbn import prices_from_units

dbn = _deps.require("databento_dbn")
pa = _deps.module("pyarrow")
pd = _deps.module("pandas")

T0 = np.datetime64("2025-03-10T14:30", "ns").astype(np.int64)  # a Monday, 09:30 New York
UNIT = 10**9
SIDES = {1: dbn.Side.BID, -1: dbn.Side.ASK, 0: dbn.Side.NONE}
ZST = [pytest.param(False, id="dbn"),
       pytest.param(True, id="zst", marks=pytest.mark.skipif(pa is None, reason=_deps.reason("pyarrow")))]


def metadata(schema="trades", symbols=("ESH5",), stype_in=None, mappings=None, **kw) -> bytes:
    schema = None if schema is None else dbn.Schema(schema)
    return dbn.Metadata(dataset="GLBX.MDP3", start=int(T0), stype_in=stype_in or dbn.SType.RAW_SYMBOL,
                        stype_out=dbn.SType.INSTRUMENT_ID, schema=schema, symbols=list(symbols),
                        mappings=mappings, **kw).encode()


def trade(iid, ts, units, size, side=1, action=dbn.Action.TRADE, mbp=False, ts_recv=None, ts_out=None):
    msg = dbn.MBP1Msg if mbp else dbn.TradeMsg
    extra = {"levels": dbn.BidAskPair(bid_px=units - UNIT // 4, ask_px=units)} if mbp else {}
    rec = bytearray(bytes(msg(publisher_id=1, instrument_id=iid, ts_event=int(ts), price=int(units), size=int(size),
                        action=action, side=SIDES[side], depth=0,
                        ts_recv=int(ts if ts_recv is None else ts_recv), **extra)))
    if ts_out is not None:  # a live record: ts_out appended, counted in the length (DBN's WithTsOut)
        rec[0] += 2
        rec += int(ts_out).to_bytes(8, "little")
    return bytes(rec)


def bar(iid, ts, o, h, lo, c, v, rtype=0x21):
    return bytes(dbn.OHLCVMsg(rtype=rtype, publisher_id=1, instrument_id=iid, ts_event=int(ts),
                              open=int(o), high=int(h), low=int(lo), close=int(c), volume=int(v)))


def definition(iid, symbol, tick_units=UNIT // 4):
    return bytes(dbn.InstrumentDefMsg(
        publisher_id=1, instrument_id=iid, ts_event=int(T0), ts_recv=int(T0),
        min_price_increment=tick_units, display_factor=UNIT, raw_symbol=symbol, asset="ES",
        security_type="FUT", instrument_class=dbn.InstrumentClass.FUTURE,
        security_update_action=dbn.SecurityUpdateAction.ADD))


def save(path, data: bytes, zst: bool = False):
    """``data`` as ``path`` (.dbn), or zstd-compressed by databento-dbn's Transcoder (.dbn.zst)."""
    if zst:
        out = io.BytesIO()
        coder = dbn.Transcoder(out, dbn.Encoding.DBN, dbn.Compression.ZSTD)
        coder.write(data)
        if hasattr(coder, "finish"):
            coder.finish()
        else:  # databento-dbn < 0.65 ends the zstd frame when the transcoder is dropped
            coder.flush()
            del coder
        data, path = out.getvalue(), path.with_name(path.name + ".zst")
    path.write_bytes(data)
    return path


def random_trades(rng, n):
    ts = T0 + np.cumsum(rng.integers(0, 3 * 10**9, n))  # ties included
    ticks = 24000 + np.cumsum(rng.integers(-2, 3, n))  # ES around 6000, on the 0.25 grid
    return ts, ticks * (UNIT // 4), rng.integers(1, 40, n), rng.choice([1, -1, 0], n)


# --------------------------------------------------------------------------- exact prices


def test_prices_are_the_nearest_double_of_the_decimal():
    rng = np.random.default_rng(11)
    units = np.concatenate([rng.integers(-2**63 + 1, 2**63 - 1, 20_000), rng.integers(-10**16, 10**16, 20_000),
                            rng.integers(0, 10**13, 20_000), [0, 1, -1, 2**53, 2**53 + 1, -2**53 - 1,
                                                              2**63 - 2, -2**63 + 1, 6000250000000]])
    want = np.array([float(Decimal(int(u)) / Decimal(UNIT)) for u in units.tolist()])
    assert np.array_equal(prices_from_units(units), want)
    q, r = np.divmod(units, UNIT)  # the two-rounding shortcut is not always the nearest double
    assert np.count_nonzero(q + r / 1e9 != want) > 0


# --------------------------------------------------------------------------- trades


@pytest.mark.parametrize("zst", ZST)
@pytest.mark.parametrize("schema", ["trades", "tbbo", "mbp-1"])
def test_trades_round_trip(tmp_path, schema, zst):
    rng = np.random.default_rng(5)
    ts, units, size, side = random_trades(rng, 3000)
    mbp = schema != "trades"
    body = []
    for k in range(ts.size):
        if schema == "mbp-1" and k % 3 == 0:  # book updates between trades are not trades
            body.append(trade(7, ts[k], units[k] - UNIT, 5, 1, action=dbn.Action.ADD, mbp=True))
        body.append(trade(7, ts[k], units[k], size[k], side[k], mbp=mbp))
    path = save(tmp_path / f"es.{schema}.dbn", metadata(schema) + b"".join(body), zst)
    got = vio.read_trades(path)
    assert isinstance(got, vio.Trades) and len(got) == ts.size
    assert np.array_equal(got.timestamp, ts) and got.timestamp.dtype == np.int64
    assert np.array_equal(got.price, units / 1e9) and got.price.dtype == np.float64
    assert np.array_equal(got.volume, size) and got.volume.dtype == np.int64
    assert np.array_equal(got.side, side) and got.side.dtype == np.int8
    assert got.symbol is None and got.tick_size is None and got.source == str(path)
    # the container as users pass it (its side used by default) gives the same profiles as the
    # original trades passed as arrays (one session; developing too)
    for kw in ({}, {"developing": True}):
        a = vpoc.from_trades(got, offsets=[0, ts.size], tick_size=0.25, **kw)
        b = vpoc.from_trades(units / 1e9, size, side=side, offsets=[0, ts.size], tick_size=0.25, **kw)
        assert_profiles_identical(a, b)
        assert a.buy_volume is not None and np.array_equal(np.asarray(a.buy_volume), np.asarray(b.buy_volume))
        assert np.array_equal(np.asarray(a.delta), np.asarray(b.delta))
    # a container with a side goes through from_trades' table path like one without
    plain = vio.Trades(ts, units / 1e9, size)
    assert_profiles_identical(vpoc.from_trades(got, session="daily", tick_size=0.25),
                              vpoc.from_trades(plain, session="daily", tick_size=0.25))


def test_side_convention_follows_databento():
    """'B' = buy aggressor (+1), 'A' = sell aggressor (-1), 'N' = none (0):
    https://databento.com/docs/schemas/trades."""
    data = metadata() + b"".join(trade(7, T0 + k, 6000 * UNIT, 1, s) for k, s in enumerate([1, -1, 0]))
    got = vio.read_trades(io.BytesIO(data), format="dbn")
    assert got.side.tolist() == [1, -1, 0]
    assert [str(dbn.Side.BID), str(dbn.Side.ASK), str(dbn.Side.NONE)] == ["B", "A", "N"]


def test_big_prices_and_versions(tmp_path):
    units = [9_007_199_254_740_993, 123_456_789_123_456_789, -5 * UNIT // 4, 1]
    for version in (1, 2, 3):
        data = metadata(version=version) + b"".join(trade(7, T0 + k, u, 1) for k, u in enumerate(units))
        got = vio.read_trades(save(tmp_path / f"v{version}.dbn", data))
        assert got.price.tolist() == [float(Decimal(u) / Decimal(UNIT)) for u in units], version


def test_ts_out_records(tmp_path):
    data = metadata(ts_out=True) + b"".join(trade(7, T0 + k, (6000 + k) * UNIT, 2, ts_out=T0 + 99)
                                           for k in range(4))
    got = vio.read_trades(save(tmp_path / "live.dbn", data))
    assert got.price.tolist() == [6000.0, 6001.0, 6002.0, 6003.0] and np.array_equal(got.timestamp, T0 + np.arange(4))


# --------------------------------------------------------------------------- bars


@pytest.mark.parametrize("zst", ZST)
@pytest.mark.parametrize("schema,rtype,seconds", [("ohlcv-1m", 0x21, 60), ("ohlcv-1s", 0x20, 1),
                                                  ("ohlcv-1h", 0x22, 3600), ("ohlcv-1d", 0x23, 86400)])
def test_bars_round_trip(tmp_path, schema, rtype, seconds, zst):
    rng = np.random.default_rng(9)
    n = 500
    ts = T0 + np.arange(n) * seconds * 10**9
    lo = 24000 + np.cumsum(rng.integers(-3, 4, n))
    hi = lo + rng.integers(0, 6, n)
    o, c = lo + rng.integers(0, 1 + hi - lo), lo + rng.integers(0, 1 + hi - lo)
    v = rng.integers(0, 2000, n)
    q = UNIT // 4
    body = b"".join(bar(7, ts[k], o[k] * q, hi[k] * q, lo[k] * q, c[k] * q, v[k], rtype) for k in range(n))
    path = save(tmp_path / f"es.{schema}.dbn", metadata(schema) + definition(7, "ESH5") + body, zst)
    got = vio.read_bars(path, strict_ohlc=True)
    assert isinstance(got, vio.Bars) and got.label == "open" and got.interval == seconds
    assert got.symbol == "ESH5" and got.tick_size == 0.25
    assert np.array_equal(got.timestamp, ts)
    for name, ticks in (("open", o), ("high", hi), ("low", lo), ("close", c)):
        assert np.array_equal(getattr(got, name), ticks * 0.25), name
    assert np.array_equal(got.volume, v) and got.volume.dtype == np.int64
    a = vpoc.from_bars(got.high, got.low, got.close, got.volume, offsets=[0, n], tick_size=got.tick_size)
    b = vpoc.from_bars(hi * 0.25, lo * 0.25, c * 0.25, v, offsets=[0, n], tick_size=0.25)
    assert_profiles_identical(a, b)


def test_bar_stamps_and_interval(tmp_path):
    path = save(tmp_path / "m.dbn", metadata("ohlcv-1m") + bar(7, T0, 4, 5, 3, 4, 1))
    assert vio.read_bars(path, interval="1min").interval == 60
    with pytest.raises(ValueError, match="stamped at the start of their interval"):
        vio.read_bars(path, label="close")
    with pytest.raises(ValueError, match="bars are 60 s apart"):
        vio.read_bars(path, interval=300)


# --------------------------------------------------------------------------- instruments


def test_definitions_give_symbol_and_tick_size(tmp_path):
    body = b"".join(trade(7, T0 + k, 6000 * UNIT + k * UNIT // 10, 1) for k in range(3))
    inline = vio.read_trades(save(tmp_path / "a.dbn", metadata() + definition(7, "ESH5", UNIT // 10) + body))
    assert (inline.symbol, inline.tick_size) == ("ESH5", 0.1)
    defs = save(tmp_path / "defs.dbn", metadata("definition") + definition(7, "ESH5", UNIT // 10))
    trades = save(tmp_path / "t.dbn", metadata() + body)
    listed = vio.read_trades([defs, trades])
    assert (listed.symbol, listed.tick_size) == ("ESH5", 0.1) and len(listed) == 3
    assert "symbol='ESH5', tick_size=0.1" in repr(listed)
    with pytest.raises(ValueError, match="instrument definitions only, no trades"):
        vio.read_trades(defs)
    # without definitions: the symbol the metadata maps to the instrument, no tick size
    mapped = metadata(mappings=[NS(raw_symbol="ESH5", intervals=[
        NS(start_date=dt.date(2025, 3, 10), end_date=dt.date(2025, 3, 11), symbol="7")])])
    got = vio.read_trades(save(tmp_path / "m.dbn", mapped + body))
    assert (got.symbol, got.tick_size) == ("ESH5", None)
    # definitions that disagree on the tick size of what is read
    two = metadata() + definition(7, "ESH5") + definition(7, "ESH5", UNIT) + body
    with pytest.raises(ValueError, match="several tick sizes"):
        vio.read_trades(save(tmp_path / "two.dbn", two))


def test_several_instruments_are_refused_or_selected(tmp_path):
    body = b"".join(trade(7 if k % 2 else 8, T0 + k, (6000 + k) * UNIT, 1) for k in range(6))
    path = save(tmp_path / "two.dbn", metadata(symbols=["ESH5", "ESM5"]) + definition(7, "ESH5")
                + definition(8, "ESM5") + body)
    with pytest.raises(ValueError, match=r"2 instruments .*7 \(ESH5\): 3 rows; 8 \(ESM5\): 3 rows; "
                                         r"pass instrument="):
        vio.read_trades(path)
    by_id = vio.read_trades(path, instrument=8)
    assert by_id.price.tolist() == [6000.0, 6002.0, 6004.0] and by_id.symbol == "ESM5"
    by_symbol = vio.read_trades(path, instrument="ESH5")
    assert by_symbol.price.tolist() == [6001.0, 6003.0, 6005.0] and by_symbol.symbol == "ESH5"
    with pytest.raises(ValueError, match=r"no trades of instrument=9; the file\(s\) hold 7 \(ESH5\)"):
        vio.read_trades(path, instrument=9)
    with pytest.raises(ValueError, match="no trades of instrument='NQH5'"):
        vio.read_trades(path, instrument="NQH5")
    with pytest.raises(ValueError, match=r"instrument=7 applies to DBN files .*; pass instrument=None"):
        vio.read_trades(io.BytesIO(b"timestamp,price,volume\n"), format="csv", instrument=7)
    with pytest.raises(TypeError, match="instrument must be an instrument_id"):
        vio.read_trades(path, instrument=7.0)
    with pytest.raises(ValueError, match="32-bit unsigned"):
        vio.read_trades(path, instrument=-1)


def test_continuous_symbol_reads_its_contracts_in_turn(tmp_path):
    """ES.c.0 maps to 100 until 2025-03-14 (UTC date of ts_recv), then to 200 (dbn's TsSymbolMap)."""
    day = 86_400 * 10**9
    roll = np.datetime64("2025-03-14", "ns").astype(np.int64)
    mappings = [NS(raw_symbol="ES.c.0", intervals=[
        NS(start_date=dt.date(2025, 3, 10), end_date=dt.date(2025, 3, 14), symbol="100"),
        NS(start_date=dt.date(2025, 3, 14), end_date=dt.date(2025, 3, 20), symbol="200")])]
    head = dict(symbols=["ES.c.0"], stype_in=dbn.SType.CONTINUOUS, mappings=mappings)
    rows = [(100, T0), (100, roll - 1), (200, roll), (200, roll + day)]
    body = b"".join(trade(i, t, 6000 * UNIT, 1) for i, t in rows)
    got = vio.read_trades(save(tmp_path / "c.dbn", metadata(**head) + body))
    assert got.symbol == "ES.c.0" and len(got) == 4
    # a record of the old contract after the roll is not ES.c.0: two instruments, refused
    late = body + trade(100, roll + day + 1, 6000 * UNIT, 1)
    with pytest.raises(ValueError, match="2 instruments"):
        vio.read_trades(save(tmp_path / "late.dbn", metadata(**head) + late))
    # with ESH5 requested beside it: instrument="ES.c.0" keeps each day's contract only
    both = dict(head, symbols=["ES.c.0", "ESH5"], mappings=mappings + [NS(raw_symbol="ESH5", intervals=[
        NS(start_date=dt.date(2025, 3, 10), end_date=dt.date(2025, 3, 20), symbol="100")])])
    path = save(tmp_path / "both.dbn", metadata(**both) + late)
    with pytest.raises(ValueError, match=r"2 instruments .*100 \(ES.c.0, ESH5\): 3 rows; 200 \(ES.c.0\)"):
        vio.read_trades(path)
    cont = vio.read_trades(path, instrument="ES.c.0")
    assert np.array_equal(cont.timestamp, [t for _, t in rows]) and cont.symbol == "ES.c.0"
    assert len(vio.read_trades(path, instrument="ESH5")) == 3
    # instruments that trade at the same time are never one series
    mixed = b"".join(trade(i, roll + k, 6000 * UNIT, 1) for k, i in enumerate([100, 200, 100]))
    same = dict(head, mappings=[NS(raw_symbol="ES.c.0", intervals=[
        NS(start_date=dt.date(2025, 3, 14), end_date=dt.date(2025, 3, 15), symbol="100"),
        NS(start_date=dt.date(2025, 3, 14), end_date=dt.date(2025, 3, 15), symbol="200")])])
    with pytest.raises(ValueError, match="trade at the same time, not one after another"):
        vio.read_trades(save(tmp_path / "same.dbn", metadata(**same) + mixed))


# --------------------------------------------------------------------------- bad files


def test_schema_that_does_not_fit_the_call(tmp_path):
    mbo = bytes(dbn.MBOMsg(publisher_id=1, instrument_id=7, ts_event=int(T0), order_id=1, price=6000 * UNIT,
                           size=1, action=dbn.Action.TRADE, side=dbn.Side.BID, ts_recv=int(T0)))
    path = save(tmp_path / "o.dbn", metadata("mbo") + mbo)
    with pytest.raises(ValueError, match=r"o.dbn: the DBN schema is 'mbo'; read_trades reads trades, tbbo, mbp-1"):
        vio.read_trades(path)
    bars = save(tmp_path / "b.dbn", metadata("ohlcv-1m") + bar(7, T0, 4, 5, 3, 4, 1))
    with pytest.raises(ValueError, match=r"schema is 'ohlcv-1m'; read_trades reads .*\(read_bars reads ohlcv"):
        vio.read_trades(bars)
    trades = save(tmp_path / "t.dbn", metadata() + trade(7, T0, UNIT, 1))
    with pytest.raises(ValueError, match=r"schema is 'trades'; read_bars reads ohlcv-1s, ohlcv-1m"):
        vio.read_bars(trades)
    mixed = save(tmp_path / "x.dbn", metadata(None) + trade(7, T0, UNIT, 1) + bar(7, T0, 4, 5, 3, 4, 1))
    with pytest.raises(ValueError, match=r"holds records of trades \(1\), ohlcv-1m \(1\)"):
        vio.read_trades(mixed)
    # a live (schema-less) file of trades, a definition and a status record reads as trades
    status = bytes(dbn.StatusMsg(publisher_id=1, instrument_id=7, ts_event=int(T0), ts_recv=int(T0)))
    live = save(tmp_path / "live.dbn", metadata(None) + definition(7, "ESH5") + status + trade(7, T0, UNIT, 2))
    got = vio.read_trades(live)
    assert got.volume.tolist() == [2] and got.symbol == "ESH5"
    # statistics records are as long as mbp-1's (80 bytes): skipped inside one run of records
    stat = bytearray(trade(7, T0, UNIT, 9, mbp=True))
    stat[1] = 0x18  # rtype STATISTICS
    body = b"".join(trade(7, T0 + k, (6000 + k) * UNIT, k + 1, mbp=True) + bytes(stat) for k in range(4))
    got = vio.read_trades(save(tmp_path / "mbp.dbn", metadata(None) + body))
    assert got.volume.tolist() == [1, 2, 3, 4] and got.price.tolist() == [6000.0, 6001.0, 6002.0, 6003.0]


def test_undefined_values_are_refused(tmp_path):
    undef = dbn.UNDEF_PRICE
    assert undef == np.iinfo(np.int64).max
    data = metadata() + trade(7, T0, UNIT, 1) + trade(7, T0 + 1, undef, 1)
    with pytest.raises(ValueError, match=r"u.dbn record 1: price is undefined \(UNDEF_PRICE"):
        vio.read_trades(save(tmp_path / "u.dbn", data))
    data = metadata("ohlcv-1m") + bar(7, T0, 4, undef, 3, 4, 1)
    with pytest.raises(ValueError, match=r"record 0: high is undefined"):
        vio.read_bars(save(tmp_path / "ub.dbn", data))
    data = metadata() + trade(7, dbn.UNDEF_TIMESTAMP, UNIT, 1)
    with pytest.raises(ValueError, match=r"record 0: ts_event is undefined"):
        vio.read_trades(save(tmp_path / "ut.dbn", data))
    data = metadata("ohlcv-1m") + bar(7, T0, 4, 3, 5, 4, 1)  # high < low
    with pytest.raises(ValueError, match=r"hl.dbn record 0: high .* < low"):
        vio.read_bars(save(tmp_path / "hl.dbn", data))


def test_time_order_is_checked(tmp_path):
    data = metadata() + definition(7, "ESH5") + trade(7, T0 + 5, UNIT, 1) + trade(7, T0, UNIT, 1)
    with pytest.raises(ValueError, match=r"o.dbn record 2: timestamp .* is before the previous row"):
        vio.read_trades(save(tmp_path / "o.dbn", data))
    a = save(tmp_path / "a.dbn", metadata() + trade(7, T0 + 5, UNIT, 1))
    b = save(tmp_path / "b.dbn", metadata() + trade(7, T0, UNIT, 3))
    assert vio.read_trades([b, a]).volume.tolist() == [3, 1]
    with pytest.raises(ValueError, match=r"b.dbn record 0: timestamp .* is before the last row of .*a.dbn"):
        vio.read_trades([a, b])
    csv = tmp_path / "c.csv"
    csv.write_text("timestamp,price,volume\n")
    with pytest.raises(ValueError, match=r"path_or_df\[1\] .*c.csv\) is not a DBN file"):
        vio.read_trades([a, csv])


def test_empty_truncated_and_foreign_files(tmp_path):
    empty = save(tmp_path / "e.dbn", b"")
    with pytest.raises(ValueError, match="e.dbn: the file is empty"):
        vio.read_trades(empty)
    only = vio.read_trades(save(tmp_path / "m.dbn", metadata()))  # metadata, no records: no rows
    assert len(only) == 0 and only.side.dtype == np.int8 and only.price.dtype == np.float64
    assert len(vio.read_bars(save(tmp_path / "mb.dbn", metadata("ohlcv-1m")))) == 0
    whole = metadata() + b"".join(trade(7, T0 + k, UNIT, k + 1) for k in range(3))
    cut = save(tmp_path / "cut.dbn", whole[:-10])
    with pytest.warns(DroppedRowsWarning, match=r"cut.dbn: the file ends 38 bytes into record 2 .* "
                                                r"left out that record \(1 of 3"):
        got = vio.read_trades(cut)
    assert got.volume.tolist() == [1, 2]
    with pytest.raises(ValueError, match="truncated or still being written; pass unterminated='drop'"):
        vio.read_trades(cut, unterminated="raise")
    with pytest.raises(ValueError, match="cannot keep part of a record"):
        vio.read_trades(cut, unterminated="keep")
    with pytest.raises(ValueError, match="ends inside its metadata"):
        vio.read_trades(save(tmp_path / "h.dbn", whole[:20]))
    with pytest.raises(ValueError, match=r"not a DBN file \(it starts with b'timestam"):
        vio.read_trades(save(tmp_path / "c.dbn", b"timestamp,price,volume\n"))
    with pytest.raises(ValueError, match="DBN version 4; vpoc reads versions 1-3"):
        vio.read_trades(save(tmp_path / "v4.dbn", b"DBN\x04" + whole[4:]))
    with pytest.raises(ValueError, match="shorter than a record header: the file is corrupt"):
        vio.read_trades(save(tmp_path / "z.dbn", metadata() + b"\x00" * 48))
    with pytest.raises(ValueError, match=r"unknown rtype 0x99"):
        vio.read_trades(save(tmp_path / "r.dbn", metadata() + b"\x0c\x99" + trade(7, T0, UNIT, 1)[2:]))


@pytest.mark.skipif(pa is None, reason=_deps.reason("pyarrow"))
def test_truncated_zstd_stream(tmp_path):
    path = save(tmp_path / "t.dbn", metadata() + trade(7, T0, UNIT, 1) * 50, zst=True)
    path.write_bytes(path.read_bytes()[:-6])
    with pytest.raises(ValueError, match=r"t.dbn.zst: cannot read the zstd stream \(truncated or corrupt"):
        vio.read_trades(path)


def test_options_that_do_not_apply(tmp_path):
    path = save(tmp_path / "t.dbn", metadata() + trade(7, T0, UNIT, 1))
    for kw in ({"columns": {"price": "px"}}, {"sep": ";"}, {"time_format": "%Y"}, {"time_unit": "ns"}):
        with pytest.raises(ValueError, match=f"{next(iter(kw))}= does not apply to DBN files"):
            vio.read_trades(path, **kw)
    assert len(vio.read_trades(path, tz="America/Chicago")) == 1  # UTC by definition: tz unused
    with pytest.raises(ValueError, match="format must be one of 'legacy', 'csv', 'parquet', 'dbn'"):
        vio.read_trades(path, format="zst")
    with pytest.raises(ValueError, match="format must be one of 'legacy', 'csv', 'parquet' or None"):
        vio.write_trades(vio.read_trades(path), tmp_path / "x.dbn", format="dbn")


def test_missing_packages_name_the_extra(tmp_path, monkeypatch):
    plain = save(tmp_path / "t.dbn", metadata() + trade(7, T0, UNIT, 1))
    packed = save(tmp_path / "z.dbn", metadata() + trade(7, T0, UNIT, 1), zst=pa is not None)
    if pa is not None:
        monkeypatch.setitem(sys.modules, "pyarrow", None)
        with pytest.raises(ModuleNotFoundError, match=r'reading a zstd-compressed DBN file \(.*z.dbn.zst\) '
                                                      r'needs pyarrow: pip install "vpoc\[databento\]"'):
            vio.read_trades(packed)
    monkeypatch.setitem(sys.modules, "databento_dbn", None)
    with pytest.raises(ModuleNotFoundError, match=r'reading DBN files needs databento_dbn: pip install '
                                                  r'"vpoc\[databento\]"'):
        vio.read_trades(plain)


# --------------------------------------------------------------------------- side outside DBN


def test_trades_container_side():
    t = vio.Trades([1, 2, 3], [1.0, 2.0, 3.0], [1, 1, 1], side=["B", "A", "N"])
    assert t.side.tolist() == [1, -1, 0] and t.side.dtype == np.int8 and "with side" in repr(t)
    assert vio.Trades([1], [1.0], [1]).side is None
    with pytest.raises(ValueError, match="side has length 2 but timestamp has 3"):
        vio.Trades([1, 2, 3], [1.0, 2.0, 3.0], [1, 1, 1], side=[1, -1])
    with pytest.raises(ValueError, match=r"side\[1\]: side = 2; give \+1"):
        vio.Trades([1, 2], [1.0, 2.0], [1, 1], side=[1, 2])
    with pytest.raises(TypeError, match="side is boolean"):
        vio.Trades([1], [1.0], [1], side=[True])
    with pytest.raises(ValueError, match="tick_size must be a positive number"):
        vio.Trades([1], [1.0], [1], tick_size=0.0)
    with pytest.raises(TypeError, match="symbol must be a string"):
        vio.Bars([1], [1.0], [1.0], [1.0], [1.0], [1], symbol=5)


@pytest.mark.skipif(pd is None, reason=_deps.reason("pandas"))
def test_side_column_in_csv_parquet_and_frames(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("timestamp,price,volume,Side\n2025-03-10T14:30:00Z,1,1,B\n2025-03-10T14:30:01Z,2,1,A\n"
                   "2025-03-10T14:30:02Z,3,1,N\n")
    assert vio.read_trades(csv).side.tolist() == [1, -1, 0]
    assert vio.read_trades(csv, columns={"side": None}).side is None
    numbers = tmp_path / "n.csv"
    numbers.write_text("timestamp,price,volume,aggressor_side\n2025-03-10T14:30:00Z,1,1,-1\n"
                       "2025-03-10T14:30:01Z,2,1,1\n")
    assert vio.read_trades(numbers).side.tolist() == [-1, 1]
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp,price,volume,side\n2025-03-10T14:30:00Z,1,1,B\n2025-03-10T14:30:01Z,2,1,Bid\n")
    with pytest.raises(ValueError, match=r"bad.csv line 3: side = 'Bid'; give \+1"):
        vio.read_trades(bad)
    with pytest.raises(ValueError, match=r"line 2: side \(column 'S'\) = 'x'"):
        vio.read_trades(io.BytesIO(b"timestamp,price,volume,S\n2025-03-10T14:30:00Z,1,1,x\n"), format="csv",
                        columns={"side": "S"})
    with pytest.raises(ValueError, match="several columns could be 'side'"):
        vio.read_trades(io.BytesIO(b"timestamp,price,volume,side,aggressor side\n"), format="csv")
    with pytest.raises(ValueError, match=r"columns\['side'\] = 'S' is not a column"):
        vio.read_trades(csv, columns={"side": "S"})
    df = pd.DataFrame({"timestamp": pd.to_datetime([T0, T0 + 1], utc=True), "price": [1.0, 2.0],
                       "volume": [1, 2], "side": pd.array([1, None], dtype="Int64")})
    with pytest.raises(ValueError, match=r"<DataFrame> row 1: side is missing"):
        vio.read_trades(df)
    df["side"] = ["A", "B"]
    assert vio.read_trades(df).side.tolist() == [-1, 1]
    assert len(vpoc.from_trades(df, session="daily", tick_size=0.25)) == 1
    # written and read back; files of a list without a side column read as unknown (0)
    trades = vio.read_trades(csv)
    plain = tmp_path / "p.csv"
    vio.write_trades(vio.Trades(trades.timestamp + 10**9 * 10, trades.price, trades.volume), plain)
    names = ["w.csv"] + (["w.parquet"] if pa is not None else [])
    for name in names:
        vio.write_trades(trades, tmp_path / name)
        back = vio.read_trades(tmp_path / name)
        assert back.side.tolist() == [1, -1, 0] and back.side.dtype == np.int8
        with pytest.warns(vpoc.GuessedDefaultWarning, match=r"p\.csv \(3 rows\)"):  # said since trial 7
            assert vio.read_trades([tmp_path / name, plain]).side.tolist() == [1, -1, 0, 0, 0, 0]
    assert list(trades.to_pandas().columns) == ["timestamp", "price", "volume", "side"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert vio.read_trades(plain).side is None
