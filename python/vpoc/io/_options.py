"""Reader options, field names and error locations shared by the readers and writers of vpoc.io.

Contract: options are validated once (ValueError/TypeError naming the argument); ``_Where`` names row
i of a source as ``file line N`` (text) or ``source row i`` (Parquet, DataFrames).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from .._time import check_time_unit, iso_utc
from .._time import zone as _zone

__all__ = ["BAR_FIELDS", "TRADE_FIELDS", "PathLike", "Int64Array", "Float64Array"]

PathLike = Union[str, "os.PathLike[str]"]
Int64Array = npt.NDArray[np.int64]
Float64Array = npt.NDArray[np.float64]


BAR_FIELDS: Tuple[str, ...] = ("timestamp", "open", "high", "low", "close", "volume")
TRADE_FIELDS: Tuple[str, ...] = ("timestamp", "price", "volume")

# Accepted column names per field, normalised (lower case, letters and digits only), in order
# of preference. The field's own name always wins; several other matches are ambiguous.
_ALIASES: Dict[str, Tuple[str, ...]] = {
    "timestamp": ("timestamp", "datetime", "ts", "timestamputc", "datetimeutc", "tsevent"),
    "open": ("open", "o", "openprice"),
    "high": ("high", "h", "highprice"),
    "low": ("low", "l", "lowprice"),
    "close": ("close", "c", "closeprice", "last"),
    "volume": ("volume", "vol", "v"),
    "price": ("price", "p", "px", "tradeprice", "last"),
}
_TRADE_VOLUME_ALIASES = ("volume", "vol", "v", "size", "qty", "quantity", "tradesize")
_DATE_NAMES = ("date", "day", "tradedate")
_TIME_NAMES = ("time", "timeofday")

_FORMATS = ("legacy", "csv", "parquet")  # what the writers write
_READ_FORMATS = _FORMATS + ("dbn",)
# Columns a trade source may have beyond TRADE_FIELDS (read when present; columns={"side": None}
# ignores the source's own).
_TRADE_OPTIONAL = ("side",)
# Columns a bar source may have beyond BAR_FIELDS: the aggressor-side volumes, both or neither (read
# when present; columns={"buy_volume": None, "sell_volume": None} ignores the source's own).
_BAR_OPTIONAL = ("buy_volume", "sell_volume")
_COMPRESSION = (".gz", ".bz2", ".xz")
_LEGACY_LINE = re.compile(r"^\s*\d{8} \d{6};")
_LEGACY_TIME_FORMAT = "%Y%m%d %H%M%S"
_LEGACY_TIME_RE = r"^\s*\d{8} \d{6}\s*$"
_TZ_SUFFIX_RE = r"(?:[zZ]|[+-]\d{2}:?\d{2})\s*$"
_PARSER_LINE_RE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
# Years a YYYYMMDD date may have: whole years inside the int64 ns range (1677-09-21 .. 2262-04-11).
_YEARS = (1678, 2261)
_UNTERMINATED = ("drop", "raise", "keep")
_AMBIGUOUS = ("raise", "infer", "earliest", "latest")
_NONEXISTENT = ("raise", "shift_forward", "shift_backward")


# --------------------------------------------------------------------------- options


@dataclass(frozen=True)
class _Options:
    tz: Any
    format: Optional[str]
    columns: Dict[str, Any]
    sep: Optional[str]
    time_format: Optional[str]
    time_unit: Optional[str]
    ambiguous: str
    nonexistent: str
    strict_ohlc: bool
    fields: Tuple[str, ...]
    unterminated: str = "drop"
    defer_tz: bool = False
    instrument: Any = None

    @staticmethod
    def make(tz: Any, format: Any, columns: Any, sep: Any, time_format: Any, time_unit: Any,
             ambiguous: Any, nonexistent: Any, strict_ohlc: Any,
             fields: Tuple[str, ...], unterminated: Any = "drop",
             instrument: Any = None) -> "_Options":
        if format is not None and format not in _READ_FORMATS:
            raise ValueError(f"format must be one of {', '.join(map(repr, _READ_FORMATS))} or "
                             f"None, got {format!r}")
        if instrument is not None:
            if isinstance(instrument, (bool, np.bool_)) or not isinstance(
                    instrument, (int, np.integer, str)):
                raise TypeError(f"instrument must be an instrument_id (int), a symbol (str) or "
                                f"None, got {type(instrument).__name__}")
            if isinstance(instrument, str) and not instrument.strip():
                raise ValueError("instrument must be a non-empty symbol, an instrument_id or None")
            if not isinstance(instrument, str) and not 0 <= int(instrument) < 2**32:
                raise ValueError(f"instrument: an instrument_id is a 32-bit unsigned integer, "
                                 f"got {int(instrument)}")
        if sep is not None and (not isinstance(sep, str) or len(sep) != 1):
            raise ValueError(f"sep must be a single character or None, got {sep!r}")
        if time_format is not None and not isinstance(time_format, str):
            raise TypeError(f"time_format must be a strftime string or None, got "
                            f"{type(time_format).__name__}")
        check_time_unit(time_unit)
        if ambiguous not in _AMBIGUOUS:
            raise ValueError(f"ambiguous must be one of {', '.join(map(repr, _AMBIGUOUS))}, "
                             f"got {ambiguous!r}")
        if nonexistent not in _NONEXISTENT:
            raise ValueError(f"nonexistent must be one of {', '.join(map(repr, _NONEXISTENT))}, "
                             f"got {nonexistent!r}")
        if not isinstance(unterminated, str) or unterminated not in _UNTERMINATED:
            raise ValueError(f"unterminated must be one of "
                             f"{', '.join(map(repr, _UNTERMINATED))}, got {unterminated!r}")
        if not isinstance(strict_ohlc, (bool, np.bool_)):
            raise TypeError(f"strict_ohlc must be True or False, got {strict_ohlc!r}")
        return _Options(tz=None if tz is None else _zone(tz), format=format,
                        columns=_check_columns(columns, fields), sep=sep,
                        time_format=time_format, time_unit=time_unit, ambiguous=ambiguous,
                        nonexistent=nonexistent, strict_ohlc=bool(strict_ohlc), fields=fields,
                        unterminated=unterminated,
                        instrument=instrument if isinstance(instrument, (str, type(None)))
                        else int(instrument))


def no_open(opts: Any) -> bool:
    """Whether ``columns={"open": None}`` says the bars have no open prices: the close column stands
    in for it while the rows are read and checked, and the Bars' ``open`` is None."""
    return "open" in opts.columns and opts.columns["open"] is None


def _check_columns(columns: Any, fields: Tuple[str, ...]) -> Dict[str, Any]:
    if columns is None:
        return {}
    if not isinstance(columns, Mapping):
        raise TypeError(f"columns must be a mapping {{field: column name}}, got "
                        f"{type(columns).__name__}")
    out = {}
    optional = _TRADE_OPTIONAL if "price" in fields else _BAR_OPTIONAL
    for key, value in columns.items():
        if key in optional and (value is None or isinstance(value, str)):
            out[key] = value
            continue
        if key == "open" and value is None and "open" in fields:  # bars without open prices (no_open)
            out[key] = None
            continue
        if key not in fields + optional:
            hint = ""
            if isinstance(value, str) and value in fields:
                hint = f" (did you mean {{{value!r}: {key!r}}}? keys are vpoc's field names)"
            raise ValueError(f"columns: unknown field {key!r}; fields are "
                             f"{', '.join(fields + optional)}{hint}")
        pair = isinstance(value, tuple) and len(value) == 2 and key == "timestamp"
        if not (isinstance(value, str) or pair):
            raise TypeError(f"columns[{key!r}] must be a column name"
                            f"{' or a (date, time) pair' if key == 'timestamp' else ''}"
                            f"{' or None (ignore the column)' if key in optional else ''}"
                            f"{' or None (bars without open prices)' if key == 'open' else ''}, "
                            f"got {value!r}")
        out[key] = value
    return out


# --------------------------------------------------------------------------- dispatch


class _Where:
    """Names row i of a source in error messages: ``file line N`` or ``source row i``."""

    def __init__(self, source: str, first_line: Optional[int] = None,
                 lines: Optional[np.ndarray] = None) -> None:
        self.source = source
        self.first_line = first_line
        self.lines = lines

    def __call__(self, i: int) -> str:
        if self.lines is not None:
            return f"{self.source} line {int(self.lines[i])}"
        if self.first_line is not None:
            return f"{self.source} line {i + self.first_line}"
        return f"{self.source} row {i}"


def _first(mask: np.ndarray) -> Optional[int]:
    return int(np.argmax(mask)) if mask.any() else None


def _iso(ns: Any) -> str:
    return iso_utc(ns)  # vpoc._time's, shared with vpoc.Live's messages
