"""One Databento DBN file (.dbn, or zstd-compressed .dbn.zst) parsed into its metadata and records.

Contract: DBN versions 1-3 (``databento-dbn`` decodes the metadata and instrument definitions; the
trade and bar records, whose layout is the same in all three, are read as NumPy views of the bytes);
an empty, non-DBN, corrupt or newer-version file raises ValueError naming it; a record cut short at
the end of the file is reported by ``DbnFile.tail`` (bytes), never parsed.

Layout (https://databento.com/docs/standards-and-conventions/databento-binary-encoding): ``DBN``,
a version byte, a little-endian u32 metadata length, the metadata, then records, each opening with
a 16-byte header (length in 4-byte words u8, rtype u8, publisher_id u16, instrument_id u32,
ts_event u64). Prices are int64 in units of 1e-9; timestamps uint64 ns since the epoch (UTC).
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._optional import require
from ._source import TextSource, check_regular, is_file_object

__all__ = ["DbnFile", "DATA_RTYPES", "TRADE_RTYPES", "OHLCV_SECONDS", "RTYPE_NAMES", "UNDEF_PRICE",
           "UNDEF_TIMESTAMP", "is_dbn_name"]

UNDEF_PRICE = np.iinfo(np.int64).max  # dbn's UNDEF_PRICE: no price
UNDEF_TIMESTAMP = np.iinfo(np.uint64).max  # dbn's UNDEF_TIMESTAMP: no time
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_SUFFIXES = (".dbn", ".dbn.zst")
_VERSIONS = (1, 2, 3)
_HEADER = 16

#: Record types of DBN versions 1-3 (dbn's RType) and the schema that holds them.
RTYPE_NAMES: Dict[int, str] = {
    0x00: "trades", 0x01: "mbp-1 / tbbo", 0x0A: "mbp-10", 0x11: "ohlcv (deprecated rtype)",
    0x12: "status", 0x13: "definition", 0x14: "imbalance", 0x15: "error", 0x16: "symbol mapping",
    0x17: "system", 0x18: "statistics", 0x20: "ohlcv-1s", 0x21: "ohlcv-1m", 0x22: "ohlcv-1h",
    0x23: "ohlcv-1d", 0x24: "ohlcv-eod", 0xA0: "mbo", 0xB1: "cmbp-1", 0xC0: "cbbo-1s",
    0xC1: "cbbo-1m", 0xC2: "tcbbo", 0xC3: "bbo-1s", 0xC4: "bbo-1m",
}
_DEFINITION, _SYMBOL_MAPPING = 0x13, 0x16
#: Records that are not prices of the instrument's own trades or bars: skipped by the readers
#: (definitions and symbol mappings are read for the symbol and tick size).
_NOT_DATA = (0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18)
DATA_RTYPES = tuple(r for r in RTYPE_NAMES if r not in _NOT_DATA)
#: Trade records: trades (MBP-0) and the trades of mbp-1 / tbbo (action 'T').
TRADE_RTYPES: Dict[int, int] = {0x00: 48, 0x01: 80}  # rtype -> record size without ts_out
#: OHLCV record types and their bar interval in seconds (0x11: from the metadata's schema).
OHLCV_SECONDS: Dict[int, Optional[int]] = {0x20: 1, 0x21: 60, 0x22: 3600, 0x23: 86400, 0x11: None}
_OHLCV_SIZE = 56

_U1, _U4, _U8, _I8 = "u1", "<u4", "<u8", "<i8"
_TRADE_FIELDS = (("rtype", _U1, 1), ("instrument_id", _U4, 4), ("ts_event", _U8, 8),
                 ("price", _I8, 16), ("size", _U4, 24), ("action", "S1", 28), ("side", "u1", 29),
                 ("ts_recv", _U8, 32))
_OHLCV_FIELDS = (("rtype", _U1, 1), ("instrument_id", _U4, 4), ("ts_event", _U8, 8),
                 ("open", _I8, 16), ("high", _I8, 24), ("low", _I8, 32), ("close", _I8, 40),
                 ("volume", _U8, 48))


def is_dbn_name(obj: Any) -> bool:
    """A path or file object whose name ends with .dbn or .dbn.zst (any case)."""
    name = os.fspath(obj) if isinstance(obj, (str, os.PathLike)) else getattr(obj, "name", None)
    return isinstance(name, str) and name.lower().endswith(_SUFFIXES)


def _dtype(fields: Tuple[Tuple[str, str, int], ...], size: int) -> np.dtype:
    return np.dtype({"names": [f[0] for f in fields], "formats": [f[1] for f in fields],
                     "offsets": [f[2] for f in fields], "itemsize": size})


def _read_bytes(obj: Any) -> Tuple[str, bytes]:
    """(name, content) of a path, an open file object or a TextSource."""
    if isinstance(obj, TextSource):
        if obj.data is not None:
            return obj.name, obj.data
        obj = obj.path
    if is_file_object(obj):
        data = obj.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"path_or_df: a DBN file object must be opened in binary mode ('rb'); "
                            f"its read() returned {type(data).__name__}")
        name = getattr(obj, "name", None)
        return (name if isinstance(name, str) else "<file object>"), bytes(data)
    path = os.fspath(obj)
    check_regular(path)
    with open(path, "rb") as fh:
        return path, fh.read()


def _unzstd(data: bytes, name: str) -> bytes:
    pa = require("pyarrow", f"reading a zstd-compressed DBN file ({name})", "databento")
    try:
        out = pa.CompressedInputStream(pa.BufferReader(data), "zstd").read()
    except (OSError, ValueError) as e:  # pyarrow: "Truncated compressed stream", corrupt frames
        raise ValueError(f"{name}: cannot read the zstd stream (truncated or corrupt? {e})") from None
    return bytes(out)


class DbnFile:
    """A DBN file's metadata (a ``databento_dbn.Metadata``), its raw bytes and the runs of
    equal-length records that follow the metadata.

    ``runs``: (byte offset, record size, count, index of the run's first record); ``tail``: the
    bytes after the last whole record (a record cut short: truncated file, writer at work).
    """

    def __init__(self, obj: Any, dbn: Any) -> None:
        self.name, data = _read_bytes(obj)
        if data[:4] == _ZSTD_MAGIC:
            data = _unzstd(data, self.name)
        self.data = data
        if not data:
            raise ValueError(f"{self.name}: the file is empty (a DBN file opens with its metadata; "
                             "an empty download holds at least that)")
        if data[:3] != b"DBN":
            raise ValueError(f"{self.name}: not a DBN file (it starts with {data[:8]!r}, not "
                             "b'DBN'); pass another format=, or the file Databento wrote")
        self.version = data[3]
        if self.version not in _VERSIONS:
            raise ValueError(f"{self.name}: DBN version {self.version}; vpoc reads versions "
                             f"{_VERSIONS[0]}-{_VERSIONS[-1]} (convert it with the dbn CLI, e.g. "
                             "`dbn FILE --output OUT.dbn`, or upgrade vpoc)")
        end = 8 + int.from_bytes(data[4:8], "little") if len(data) >= 8 else 8
        if len(data) < end:
            raise ValueError(f"{self.name}: the file ends inside its metadata ({len(data)} of "
                             f"{end} bytes; truncated?)")
        self.meta_end = end
        try:
            self.meta = dbn.Metadata.decode(data[:end])
        except Exception as e:  # databento_dbn.DBNError
            raise ValueError(f"{self.name}: cannot decode the DBN metadata ({e})") from None
        self.schema: Optional[str] = None if self.meta.schema is None else str(self.meta.schema)
        self.runs, self.tail = self._walk()
        self.count = sum(r[2] for r in self.runs)
        self._definitions: Optional[List[Any]] = None
        self._kinds: Optional[List[np.ndarray]] = None

    def _walk(self) -> Tuple[List[Tuple[int, int, int, int]], int]:
        """Runs of consecutive records of one length: each record's length byte is read once,
        in blocks (a file of one record type is one run)."""
        u8 = np.frombuffer(self.data, dtype=np.uint8)
        n, pos, first = len(self.data), self.meta_end, 0
        runs: List[Tuple[int, int, int, int]] = []
        while pos < n:
            size = int(u8[pos]) * 4
            fit = (n - pos) // size if size else 0
            if size and fit == 0:
                break  # the last record is cut short
            if size < _HEADER:
                raise ValueError(f"{self.name}: record {first} (byte {pos}) says it is {size} "
                                 f"bytes long, shorter than a record header: the file is corrupt")
            count, block = 1, 64
            while count < fit:
                m = min(block, fit - count)
                lengths = u8[pos + size * np.arange(count, count + m, dtype=np.int64)]
                other = np.flatnonzero(lengths != size // 4)
                if other.size:
                    count += int(other[0])
                    break
                count, block = count + m, block * 2
            runs.append((pos, size, count, first))
            pos, first = pos + size * count, first + count
        return runs, n - pos

    def kinds(self) -> List[np.ndarray]:
        """The rtype of every record, run by run (read once)."""
        if self._kinds is None:
            u8 = np.frombuffer(self.data, dtype=np.uint8)
            self._kinds = [u8[pos + 1 + size * np.arange(count, dtype=np.int64)]
                           for pos, size, count, _ in self.runs]
        return self._kinds

    def rtypes(self) -> Dict[int, int]:
        """Number of records of each rtype."""
        out: Dict[int, int] = {}
        for kinds in self.kinds():
            if kinds.size and bool((kinds == kinds[0]).all()):
                out[int(kinds[0])] = out.get(int(kinds[0]), 0) + int(kinds.size)
                continue
            values, counts = np.unique(kinds, return_counts=True)
            for k, c in zip(values.tolist(), counts.tolist()):
                out[k] = out.get(k, 0) + c
        return out

    def records(self, rtypes: Tuple[int, ...], size: int, trades: bool) -> Tuple[np.ndarray,
                                                                                   np.ndarray]:
        """The records of ``rtypes`` (all ``size`` bytes, plus 8 with ts_out) as a structured
        array of the trade (or OHLCV) fields, and each one's index among the file's records."""
        fields = _TRADE_FIELDS if trades else _OHLCV_FIELDS
        want = size + (8 if self.meta.ts_out else 0)
        parts, index = [], []
        for (pos, rsize, count, first), kinds in zip(self.runs, self.kinds()):
            mine = np.isin(kinds, rtypes)
            if not mine.any():
                continue
            if rsize != want:
                k = int(np.argmax(mine))
                raise ValueError(f"{self.name}: record {first + k} ({RTYPE_NAMES[int(kinds[k])]}) "
                                 f"is {rsize} bytes long, expected {want}: the file is corrupt")
            view = np.ndarray((count,), dtype=_dtype(fields, rsize), buffer=self.data, offset=pos)
            every = bool(mine.all())  # a run of one record type: the view itself, no copy
            parts.append(view if every else view[mine])
            index.append(first + (np.arange(count, dtype=np.int64) if every else np.flatnonzero(mine)))
        if not parts:
            return np.zeros(0, dtype=_dtype(fields, want)), np.zeros(0, dtype=np.int64)
        if len(parts) == 1:
            return parts[0], index[0]
        return np.concatenate(parts), np.concatenate(index).astype(np.int64)

    def definitions(self, dbn: Any) -> List[Any]:
        """The instrument definitions and symbol mappings (databento_dbn records, upgraded to
        the current DBN version by its decoder); decoded once."""
        if self._definitions is None:
            self._definitions = self._decode_definitions(dbn)
        return self._definitions

    def _decode_definitions(self, dbn: Any) -> List[Any]:
        pieces = []
        for (pos, size, count, _), kinds in zip(self.runs, self.kinds()):
            hit = np.flatnonzero((kinds == _DEFINITION) | (kinds == _SYMBOL_MAPPING))
            pieces += [self.data[s:s + size] for s in (pos + size * hit).tolist()]
        if not pieces:
            return []
        decoder = dbn.DBNDecoder()
        try:
            decoder.write(self.data[:self.meta_end] + b"".join(pieces))
            decoded = decoder.decode()
        except Exception as e:  # databento_dbn.DBNError
            raise ValueError(f"{self.name}: cannot decode its instrument definitions ({e})") from None
        return [r for r in decoded if not isinstance(r, dbn.Metadata)]
