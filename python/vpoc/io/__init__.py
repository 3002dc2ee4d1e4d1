"""Readers and writers of bars and trades (text, CSV, Parquet, Databento DBN, DataFrames), file inspector.

Contract: public names re-exported here; each module of the package has one job.
"""

from .._warnings import DuplicateRowsWarning
from ._columns import bar_side_names  # the feature tables' frames: read_bars' buy / sell rule (not public API)
from ._columns import side_lookalikes  # vpoc.dask's side columns it does not use (not public API)
from ._containers import Bars, Trades
from ._dbn import ReorderedRecordsWarning
from ._dbn import peek_kind as dbn_kind  # the CLI's reader of a DBN file, by its schema (not public API)
from ._read import read_bars, read_trades
from ._timestamps import no_zone_error  # the feature tables' refusal of naive timestamps (not public API)
from ._write import write_bars, write_trades
from .contracts import ContinuousBars, read_contracts
from .inspect import Inspection, inspect

__all__ = [
    "Bars",
    "ContinuousBars",
    "DuplicateRowsWarning",
    "Inspection",
    "ReorderedRecordsWarning",
    "Trades",
    "inspect",
    "read_bars",
    "read_contracts",
    "read_trades",
    "write_bars",
    "write_trades",
]
