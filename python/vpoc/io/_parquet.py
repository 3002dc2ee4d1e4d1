"""Parquet files read into validated columns for vpoc.io (needs pyarrow).

Contract: only the needed columns are read; a file pyarrow cannot read raises ValueError naming it;
rows are named by position from 0.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np

from .._optional import require
from ._columns import _extract, _names, _resolve
from ._options import _Options, _Where

__all__: list = []


def _read_parquet(path: Any, opts: _Options,
                  name: Optional[str] = None) -> Tuple[Dict[str, np.ndarray], _Where]:
    """``path``: a file name or a readable file object (then ``name`` names it in errors)."""
    import pandas as pd

    target, path = path, name or path

    pq = require("pyarrow.parquet", f"reading Parquet ({path})", "io")
    try:
        schema = pq.read_schema(target)
    except Exception as e:  # pyarrow raises ArrowInvalid / OSError for non-Parquet files
        raise ValueError(f"{path}: not a readable Parquet file ({e})") from None
    meta = schema.pandas_metadata or {}
    index_cols = [c for c in meta.get("index_columns", []) if isinstance(c, str)]
    names = [n for n in schema.names if n not in index_cols or not n.startswith("__")]
    mapping = _resolve(names, opts, path)
    wanted = {n for v in mapping.values() if v is not None for n in _names(v)}
    if mapping["timestamp"] is None:  # an unnamed DatetimeIndex stored by pandas
        wanted.update(index_cols)
    df = pq.read_table(target, columns=[n for n in schema.names if n in wanted]).to_pandas()
    if isinstance(df.index, pd.MultiIndex) or df.index.name is not None:
        df = df.reset_index()
    where = _Where(path)
    return _extract(df, where, opts, mapping), where
