"""The names of the former single-module vpoc.io, re-exported from the modules that hold them now.

Contract: kept only so that code importing ``vpoc.io._core`` keeps working; new code imports from
``vpoc.io`` (public) or the module with the job it needs.
"""

from ._containers import Bars, Trades
from ._read import read_bars, read_trades
from ._write import write_bars, write_trades

__all__ = ["Bars", "Trades", "read_bars", "read_trades", "write_bars", "write_trades"]
