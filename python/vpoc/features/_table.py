"""The FeatureTable container and the column writer that fills its float32 matrix.

Contract: a FeatureTable is a C-contiguous float32 [rows, F] matrix with unique column names and CSR
session offsets; every export (numpy, DLPack, torch, pandas) shares or copies exactly that matrix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, Optional, Sequence, Tuple

import numpy as np

from .._optional import require

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import torch

__all__ = ["FeatureTable", "_Columns"]


class FeatureTable:
    """A float32 feature matrix [rows, F] with column names, one row per session or per bar.

    ``values``: C-contiguous float32 numpy array [rows, F] (NaN where a feature is undefined).
    ``columns``: the F names. ``session_labels`` [S]: the label of each session (session ids,
    ``SynthBars.session_labels``, or 0..S-1). ``offsets`` [S+1]: rows ``offsets[s]:offsets[s+1]``
    belong to session s (``arange(S+1)`` for a session table). ``kind``: "session" or "bar".
    ``device``: where ``to_torch()`` puts the tensor by default.

    How the rows were grouped and stamped: ``session_rule`` (e.g. "globex", "column 'date'",
    "offsets"; None when not recorded), ``dropped_rows`` / ``dropped_volume`` (input rows outside
    every session, left out of the table, and their volume), ``input_index`` (the input position
    of every kept bar, or None when every row was kept), ``label`` ("open"/"close": how the input
    timestamps were stamped) and ``interval`` (seconds subtracted from close stamps, or None).
    ``snapped_prices``: the prices off the ``tick_size`` grid that were rounded to their nearest
    tick (``session_features``, warned about or ``snap=True``; 0 when none was). ``rules``: with
    ``preset=``, the preset and which of its rules the call applied / did not apply
    (``preset``, ``preset_applied``, ``preset_not_applied``; docs/presets.md), else None.

    Export: ``numpy()`` / ``np.asarray(table)`` (no copy), ``torch.from_dlpack(table)`` and
    ``to_torch()`` (zero-copy on the CPU), ``to_pandas()``; ``table["name"]`` is a column view.
    """

    def __init__(self, values: np.ndarray, columns: Sequence[str], *, session_labels: np.ndarray,
                 offsets: np.ndarray, kind: str = "session", device: str = "cpu",
                 session_rule: Optional[str] = None, dropped_rows: int = 0,
                 dropped_volume: float = 0.0, input_index: Optional[np.ndarray] = None,
                 label: str = "open", interval: Optional[float] = None, snapped_prices: int = 0,
                 rules: Optional[Dict[str, Any]] = None) -> None:
        values = np.asarray(values)
        if values.dtype != np.float32 or values.ndim != 2 or not values.flags.c_contiguous:
            raise ValueError("values must be a C-contiguous float32 array [rows, F], got "
                             f"{values.dtype} with shape {values.shape}")
        cols = tuple(str(c) for c in columns)
        if len(cols) != values.shape[1]:
            raise ValueError(f"columns has {len(cols)} names but values has {values.shape[1]} columns")
        if len(set(cols)) != len(cols):
            raise ValueError("columns must be unique")
        offs = np.asarray(offsets, dtype=np.int64)
        if offs.ndim != 1 or offs.size < 1 or offs[0] != 0 or offs[-1] != values.shape[0] \
                or np.any(np.diff(offs) < 0):
            raise ValueError("offsets must be non-decreasing, start at 0 and end at the number of rows")
        labels = np.asarray(session_labels)
        if labels.shape != (offs.size - 1,):
            raise ValueError(f"session_labels must have {offs.size - 1} entries, got shape {labels.shape}")
        if kind not in ("session", "bar"):
            raise ValueError(f"kind must be 'session' or 'bar', got {kind!r}")
        self.values: np.ndarray = values
        self.columns: Tuple[str, ...] = cols
        self.session_labels: np.ndarray = labels
        self.offsets: np.ndarray = offs
        self.kind: str = kind
        self.device: str = str(device)
        self._where: Dict[str, int] = {c: i for i, c in enumerate(cols)}
        self.session_rule: Optional[str] = session_rule
        self.dropped_rows: int = int(dropped_rows)
        self.dropped_volume: float = float(dropped_volume)
        self.input_index: Optional[np.ndarray] = input_index
        self.label: str = label
        self.interval: Optional[float] = interval
        self.snapped_prices: int = int(snapped_prices)
        self.rules: Optional[Dict[str, Any]] = None if rules is None else dict(rules)

    def _facts(self) -> Dict[str, Any]:
        return dict(session_rule=self.session_rule, dropped_rows=self.dropped_rows,
                    dropped_volume=self.dropped_volume, input_index=self.input_index,
                    label=self.label, interval=self.interval, snapped_prices=self.snapped_prices,
                    rules=self.rules)

    # ---- container protocol
    def __len__(self) -> int:
        return int(self.values.shape[0])

    @property
    def shape(self) -> Tuple[int, int]:
        """(rows, F)."""
        return (int(self.values.shape[0]), int(self.values.shape[1]))

    def __contains__(self, name: object) -> bool:
        return name in self._where

    def __getitem__(self, name: str) -> np.ndarray:
        """The column ``name`` as a (strided) view of ``values``."""
        if not isinstance(name, str):
            raise TypeError(f"a column name (str) is expected, got {type(name).__name__}; "
                            "use select([...]) for several columns")
        if name not in self._where:
            raise KeyError(f"no column {name!r}; columns are {list(self.columns)}")
        return self.values[:, self._where[name]]

    def select(self, columns: Iterable[str]) -> "FeatureTable":
        """A new table with only ``columns`` (in that order; a copy)."""
        names = list(columns)
        for c in names:
            if c not in self._where:
                raise KeyError(f"no column {c!r}")
        idx = [self._where[c] for c in names]
        return FeatureTable(np.ascontiguousarray(self.values[:, idx]), names,
                            session_labels=self.session_labels, offsets=self.offsets,
                            kind=self.kind, device=self.device, **self._facts())

    @property
    def index(self) -> np.ndarray:
        """The session label of every row (length ``len(self)``)."""
        return np.repeat(self.session_labels, np.diff(self.offsets))

    def __repr__(self) -> str:
        rule = "" if self.session_rule is None else f", session_rule={self.session_rule!r}"
        dropped = f", dropped_rows={self.dropped_rows}" if self.dropped_rows else ""
        snapped = f", snapped_prices={self.snapped_prices}" if self.snapped_prices else ""
        return (f"FeatureTable(kind='{self.kind}', rows={self.shape[0]}, features={self.shape[1]}, "
                f"sessions={self.session_labels.shape[0]}, device='{self.device}'{rule}{dropped}{snapped})")

    # ---- array protocols (all delegate to the numpy array: no copy)
    def numpy(self) -> np.ndarray:
        """The float32 [rows, F] matrix itself (no copy)."""
        return self.values

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        if dtype is not None and np.dtype(dtype) != self.values.dtype:
            if copy is False:
                raise ValueError(f"cannot view float32 features as {np.dtype(dtype)} without a copy")
            return self.values.astype(dtype)
        return self.values.copy() if copy else self.values

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.values.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return self.values.__dlpack_device__()

    def to_torch(self, device: Any = None) -> "torch.Tensor":
        """A float32 tensor [rows, F]: shares memory on the CPU (``torch.from_numpy``), copied with
        ``.to(device)`` when ``device`` (default: ``self.device``) is not the CPU."""
        torch = require("torch", "FeatureTable.to_torch()")
        t = torch.from_numpy(self.values)
        target = torch.device(self.device if device is None else device)
        return t if target.type == "cpu" else t.to(target)

    def to_pandas(self) -> "pd.DataFrame":
        """A DataFrame with the feature columns; index ``session`` (session table) or
        (``session``, ``bar``) with the bar's position in its session (bar table)."""
        pd = require("pandas", "FeatureTable.to_pandas()")

        if self.kind == "session":
            index = pd.Index(self.session_labels, name="session")
        else:
            counts = np.diff(self.offsets)
            bar = np.arange(len(self), dtype=np.int64) - np.repeat(self.offsets[:-1], counts)
            index = pd.MultiIndex.from_arrays([self.index, bar], names=["session", "bar"])
        return pd.DataFrame(self.values, columns=list(self.columns), index=index)



class _Columns:
    """Ordered float64 columns, written into one float32 [rows, F] matrix.

    With ``names`` (all the columns, in order) the matrix is allocated at once and each column
    is written into it when set (no second copy of the columns: peak memory); without, the
    columns are kept (as float32) and copied into the matrix at the end."""

    def __init__(self, rows: int, names: Optional[Sequence[str]] = None) -> None:
        self.rows = rows
        self.cols: Dict[str, np.ndarray] = {}
        self.names = None if names is None else tuple(names)
        self.out = None if names is None else np.empty((rows, len(names)), dtype=np.float32)
        self.n_set = 0

    def __setitem__(self, name: str, values: Any) -> None:
        arr = np.asarray(values, dtype=np.float64)
        if arr.shape != (self.rows,):
            raise AssertionError(f"column {name} has shape {arr.shape}, expected ({self.rows},)")
        if self.names is not None:
            j = self.n_set
            if j >= len(self.names) or self.names[j] != name:
                raise AssertionError(f"column {name} set out of the expected order {self.names}")
            self.out[:, j] = arr  # type: ignore[index]
            self.n_set += 1
            return
        if name in self.cols:
            raise AssertionError(f"column {name} set twice")
        self.cols[name] = arr.astype(np.float32)  # what the matrix holds: half the memory

    def matrix(self) -> Tuple[np.ndarray, Tuple[str, ...]]:
        if self.names is not None:
            if self.n_set != len(self.names):
                raise AssertionError(f"{len(self.names) - self.n_set} columns not set")
            return self.out, self.names  # type: ignore[return-value]
        out = np.empty((self.rows, len(self.cols)), dtype=np.float32)
        arrays = list(self.cols.values())
        block = 16384  # rows written at once: the block stays in cache across the columns
        for a in range(0, self.rows, block):
            dst = out[a:a + block]
            for j, arr in enumerate(arrays):
                dst[:, j] = arr[a:a + block]
        return out, tuple(self.cols)
