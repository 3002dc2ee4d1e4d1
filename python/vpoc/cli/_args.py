"""The ``vpoc`` argument parser: every command, its flags and their value checks.

Contract: :func:`build_parser` returns the parser (usage errors exit 2 through argparse); each
sub-command sets ``run`` to the function that executes it.
"""

from __future__ import annotations

import argparse
import re
from typing import Any, Callable, Dict

from .. import _api
from .._time import interval_ns
from .._version import __version__
from ..sessions import DEFAULT_CALENDAR, DEFAULT_TRADE_DATES
from ._common import DEFAULT_CHUNK_ROWS, DEFAULT_PROGRESS_MIN_ROWS, OUTPUT_SUFFIXES, SESSION_KINDS
from ._info import cmd_bench, cmd_demo, cmd_doctor, cmd_info
from ._inspect import cmd_inspect
from ._profile import OUTPUT_COLUMNS, cmd_features, cmd_profile

__all__ = ["add_read_options", "build_parser", "parse_size"]

_SIZE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20,
               "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
               "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}


def parse_size(text: str) -> int:
    """Bytes from ``"268435456"``, ``"256M"``, ``"1.5GiB"`` (binary units K/M/G/T, case-insensitive)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", str(text))
    unit = m.group(2).upper() if m else ""
    if m is None or unit not in _SIZE_UNITS:
        raise ValueError(f"expected a size such as 268435456, 256M or 2G, got {text!r}")
    value = int(float(m.group(1)) * _SIZE_UNITS[unit])
    if value < 1:
        raise ValueError(f"expected a size of at least 1 byte, got {text!r}")
    return value


def _size_arg(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _int_at_least(low: int) -> Callable[[str], int]:
    """An argparse ``type``: the argument as an integer >= low (ArgumentTypeError otherwise)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {value}")
        return value
    return parse


_positive_int = _int_at_least(1)
_nonneg_int = _int_at_least(0)



def _add_device(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="cpu",
                   help="cpu (default), cuda, cuda:N or auto (a GPU when one is built and present)")
    p.add_argument("--memory-budget", type=_size_arg, default=_api.DEFAULT_MEMORY_BUDGET,
                   metavar="SIZE", help="GPU scratch + staging cap, e.g. 256M (default) or 2G")
    p.add_argument("--threads", type=_positive_int, default=None,
                   help="CPU worker threads (default: all cores; results do not depend on it)")


def _columns_arg(text: str) -> Dict[str, Any]:
    """``--columns timestamp=Date+Time,close=Last,...`` -> ``{"timestamp": ("Date", "Time"), ...}``."""
    out: Dict[str, Any] = {}
    for item in filter(None, (x.strip() for x in str(text).split(","))):
        name, eq, col = item.partition("=")
        name, col = name.strip(), col.strip()
        if not eq or not name or not col:
            raise argparse.ArgumentTypeError(
                f"expected name=column pairs such as timestamp=Date+Time,close=Last, got {item!r}")
        if name in out:
            raise argparse.ArgumentTypeError(f"{name} is given twice in {text!r}")
        parts = [c.strip() for c in col.split("+")]
        if len(parts) > 1 and (name != "timestamp" or len(parts) != 2 or not all(parts)):
            raise argparse.ArgumentTypeError(
                f"only timestamp may join two columns (timestamp=Date+Time), got {item!r}")
        out[name] = tuple(parts) if len(parts) == 2 else col
    if not out:
        raise argparse.ArgumentTypeError(f"expected name=column pairs, got {text!r}")
    return out


def _interval_arg(text: str) -> Any:
    """Seconds (``60``) or a duration (``1min``, ``60s``), checked by vpoc._time.interval_ns."""
    try:
        value: Any = float(text) if re.fullmatch(r"\s*\d+(\.\d*)?\s*", text) else text
        interval_ns(value, "--interval")
    except (ValueError, TypeError) as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return value


def add_read_options(p: argparse.ArgumentParser, *, many: bool = True) -> None:
    """The flags of vpoc.io.read_bars / read_trades / read_contracts (shared with ``inspect``)."""
    if many:
        p.add_argument("inputs", nargs="+", metavar="IN",
                       help="input files in time order (or one file per contract with --roll): legacy "
                            "'YYYYMMDD HHMMSS;o;h;l;c;v' text, .csv, .parquet, or Databento .dbn / .dbn.zst "
                            "(trades, tbbo, mbp-1 or ohlcv-*: the file's schema picks --kind)")
    else:
        p.add_argument("inputs", nargs=1, metavar="IN", help="the file to inspect")
    p.add_argument("--kind", choices=("bars", "trades"), default="bars",
                   help="inputs are OHLCV bars (default) or trades (timestamp, price, volume)")
    p.add_argument("--format", default=None, choices=("legacy", "csv", "parquet", "dbn"),
                   help="input format when the file name does not say (dbn: Databento DBN, also .dbn.zst)")
    p.add_argument("--instrument", default=None, metavar="ID_OR_SYMBOL",
                   help="DBN files holding several instruments: the instrument_id (digits) or symbol "
                        "(e.g. ESH5) to read")
    p.add_argument("--tz", default=None, help="time zone of timezone-naive timestamps in the file, "
                   "e.g. UTC or America/Chicago (vpoc inspect FILE tells which)")
    p.add_argument("--time-unit", choices=("s", "ms", "us", "ns"), default=None,
                   help="unit of integer epoch timestamps in the input (UTC); required for them")
    p.add_argument("--time-format", default=None, metavar="FMT",
                   help="strftime format of text timestamps, e.g. '%%d/%%m/%%Y %%H:%%M' (default: ISO "
                        "8601, or YYYYMMDD HHMMSS)")
    p.add_argument("--columns", type=_columns_arg, default=None, metavar="NAME=COL,...",
                   help="the file's column for each field (timestamp, open, high, low, close, volume, "
                        "buy_volume, sell_volume; price and side for trades), e.g. "
                        "timestamp=Date+Time,close=Last,volume=Vol")
    p.add_argument("--sep", default=None, help="CSV separator (default: sniffed among , ; tab |)")
    p.add_argument("--ambiguous", choices=("raise", "infer", "earliest", "latest"), default=None,
                   help="local times repeated when DST ends (default raise)")
    p.add_argument("--nonexistent", choices=("raise", "shift_forward", "shift_backward"), default=None,
                   help="local times skipped when DST starts (default raise)")
    p.add_argument("--unterminated", choices=("drop", "raise", "keep"), default=None,
                   help="a last line with no newline (maybe cut by a writer still at work): drop it "
                        "with a warning (default), raise (also with --strict), or keep it when it parses")
    p.add_argument("--label", choices=("open", "close"), default=None,
                   help="bars are stamped at their open (default) or their close; close stamps become "
                        "open stamps (minus --interval)")
    p.add_argument("--interval", type=_interval_arg, default=None, metavar="DURATION",
                   help="bar length, e.g. 60 (seconds) or 1min (default: the most common spacing)")
    p.add_argument("--roll", choices=("volume", "calendar"), default=None,
                   help="the inputs are one file per contract: join them into one series, rolling on "
                        "volume or on the calendar (vpoc.io.read_contracts)")
    p.add_argument("--adjust", choices=("none", "spread", "ratio"), default=None,
                   help="price adjustment at rolls with --roll (default none)")


def _add_profile_options(p: argparse.ArgumentParser) -> None:
    add_read_options(p)
    p.add_argument("--out", "-o", default=None, metavar="OUT",
                   help=f"output file ({', '.join(OUTPUT_SUFFIXES)}); default or '-': CSV on stdout")
    p.add_argument("--tick-size", type=float, required=True, help="price tick, e.g. 0.25 for ES")
    p.add_argument("--ticks-per-row", type=_positive_int, default=1, help="ticks per profile row (default 1)")
    p.add_argument("--snap", action="store_true",
                   help="round prices that are off the --tick-size grid to the nearest tick")
    p.add_argument("--session", choices=SESSION_KINDS, default="globex",
                   help="globex: CME 17:00-16:00 Chicago, labelled by trading date (default); rth: "
                        "--rth-start..--rth-end only; daily: calendar days in --session-tz")
    p.add_argument("--session-tz", default=None,
                   help="time zone of --rth-start/--rth-end and of daily sessions (default "
                        "America/Chicago, the exchange's); not the file's zone, which is --tz")
    p.add_argument("--rth-start", default="08:30", help="regular session start (default 08:30)")
    p.add_argument("--rth-end", default="15:15", help="regular session end (default 15:15)")
    p.add_argument("--calendar", default=None, metavar="NAME",
                   help=f"pandas_market_calendars calendar of globex/rth sessions (default "
                        f"{DEFAULT_CALENDAR!r} with trade dates from {DEFAULT_TRADE_DATES!r}, as "
                        f"vpoc.sessions uses), or none: the clock alone, no holidays")
    p.add_argument("--holidays", choices=("merge", "own"), default=None,
                   help="merge (default): a holiday's trading is booked to the next trade date, as CME "
                        "does; own: one session per calendar trading day")
    p.add_argument("--strict", action="store_true",
                   help="rows outside every session are an error (exit 2) instead of a warning")
    p.add_argument("--distribute", choices=("uniform", "close", "hlc3", "legacy"), default="uniform",
                   help="how a bar's volume goes on the ladder (default uniform over its ticks)")
    p.add_argument("--va", choices=("cbot", "single", "greedy"), default="cbot",
                   help="value-area method (default cbot: two rows at a time)")
    p.add_argument("--value-area", type=float, default=0.70, help="value-area fraction (default 0.70)")
    p.add_argument("--poc-tie", choices=("center", "low", "high"), default="center",
                   help="which of several equal-volume rows is the POC (default center)")
    p.add_argument("--max-rows", type=_positive_int, default=1_000_000,
                   help="reject a session wider than this many rows (default 1000000)")
    _add_device(p)
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="progress bar on stderr: auto (default) shows it when stderr is a terminal "
                        "and there are several inputs or one of at least --progress-min-rows rows")
    p.add_argument("--progress-min-rows", type=_nonneg_int, default=DEFAULT_PROGRESS_MIN_ROWS,
                   help=f"rows that make a single input long enough for a bar (default {DEFAULT_PROGRESS_MIN_ROWS})")
    p.add_argument("--chunk-rows", type=_positive_int, default=DEFAULT_CHUNK_ROWS,
                   help=f"rows of whole sessions profiled per engine call (default {DEFAULT_CHUNK_ROWS})")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vpoc", description="Volume profiles (POC, value area) for futures sessions.",
        epilog="exit codes: 0 ok, 2 bad arguments or input, 1 runtime error, 130 interrupted")
    parser.add_argument("--version", action="version", version=f"vpoc {__version__}")
    parser.add_argument("--traceback", action="store_true", help="show Python tracebacks of errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    prof = sub.add_parser("profile", help="per-session volume profiles of bar or trade files",
                          description="One row per session: " + ", ".join(OUTPUT_COLUMNS) + "; with the "
                          "aggressor side in the files (a trades 'side' / 'aggressor_side' column, bars' "
                          "'buy_volume' / 'sell_volume' or 'AskVolume' / 'BidVolume' columns, or mapped by "
                          "--columns) also delta, buy_total, sell_total, delta_poc, delta_poc_row, "
                          "stacked_imbalance_buy, stacked_imbalance_sell (as Profiles.to_pandas()).")
    _add_profile_options(prof)
    prof.set_defaults(run=cmd_profile)

    insp = sub.add_parser("inspect", help="what a file's timestamps, bars and prices look like, and the "
                          "flags to read it with (vpoc.io.inspect)",
                          description="Prints vpoc.io.inspect(FILE) (time zone, bar open/close stamps, "
                          "interval, tick size, with the evidence) and the vpoc profile command line to use.")
    add_read_options(insp, many=False)
    insp.set_defaults(run=cmd_inspect)

    feat = sub.add_parser("features", help="per-session feature table (vpoc.session_features)",
                          description="One row per session of bars (vpoc.session_features); bars' "
                          "'buy_volume' / 'sell_volume' (or 'AskVolume' / 'BidVolume') columns, or ones "
                          "mapped by --columns buy_volume=NAME,sell_volume=NAME, add the delta columns.")
    _add_profile_options(feat)
    feat.set_defaults(run=cmd_features)

    info = sub.add_parser("info", help="version, backends, devices and their memory")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.set_defaults(run=cmd_info)

    doctor = sub.add_parser("doctor", help="check this install: build, runtime, driver, torch, GPUs; "
                            "GPU-vs-CPU, DLPack and allocation self-tests",
                            description="Prints the build and what it runs on, then runs small GPU "
                            "self-tests. Exit 0: all checks passed; 1: a check failed (each FAIL line "
                            "says what to do).")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.add_argument("--no-gpu-tests", action="store_true",
                        help="report only; skip the GPU-vs-CPU, DLPack and allocation checks")
    doctor.set_defaults(run=cmd_doctor)

    bench = sub.add_parser("bench", help="quick benchmark on synthetic ES data")
    bench.add_argument("--full", action="store_true",
                       help="the reference sizes: 1014 sessions x 1380 bars, 50 M trades")
    bench.add_argument("--sessions", type=_nonneg_int, default=None, help="sessions (default 100, --full 1014)")
    bench.add_argument("--bars", type=_nonneg_int, default=1380, help="bars per session (default 1380)")
    bench.add_argument("--trades", type=_nonneg_int, default=None,
                       help="trades (default 2000000, --full 50000000)")
    bench.add_argument("--repeat", type=_positive_int, default=3, help="timed runs per workload (best is shown)")
    bench.add_argument("--json", action="store_true", help="machine-readable output")
    _add_device(bench)
    bench.set_defaults(run=cmd_bench)

    demo = sub.add_parser("demo", help="profile 1014 synthetic ES sessions and print a summary")
    demo.add_argument("--sessions", type=_nonneg_int, default=1014)
    demo.add_argument("--bars", type=_nonneg_int, default=1380, help="one-minute bars per session")
    demo.add_argument("--distribute", default="uniform", choices=("uniform", "close", "hlc3", "legacy"))
    demo.add_argument("--va", default="cbot", choices=("cbot", "single", "greedy"))
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--show", type=_nonneg_int, default=5, help="sessions to print")
    _add_device(demo)
    demo.set_defaults(run=cmd_demo)
    return parser

