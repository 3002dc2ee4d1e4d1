"""PyTorch datasets over feature tables: one item per session, or sliding windows over bars.

Contract: each dataset stores its features as one tensor and an item is a view of it (no per-item
copy); tensors stay on the device the input lives on unless ``device=`` is given.
"""

from __future__ import annotations

import numbers
import warnings
from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from ._validate import integer
from ._warnings import DroppedRowsWarning, user_stacklevel

__all__ = ["DERIVED_COLUMNS", "SessionFeatureDataset", "BarWindowDataset"]

#: What ``target=`` may be: a column name, ``f(values, idx) -> targets``, or per-row targets.
Target = Union[None, str, Callable[[torch.Tensor, torch.Tensor], Any], torch.Tensor, np.ndarray]

_DROPNA = ("target", "any", "none")


# --------------------------------------------------------------------------- input handling


def _is_feature_table(x: Any) -> bool:
    """A vpoc FeatureTable, duck-typed: anything with ``values``, ``columns`` and ``to_torch``."""
    return hasattr(x, "to_torch") and hasattr(x, "columns") and hasattr(x, "values")


def _dtype_arg(dtype: Any) -> Optional[torch.dtype]:
    """``dtype=``: None, a floating torch dtype, or its name ("float32", "torch.float64");
    anything else is a TypeError naming dtype (an integer dtype would truncate the features)."""
    if dtype is None:
        return None
    d = dtype
    if isinstance(dtype, str):
        d = getattr(torch, dtype[6:] if dtype.startswith("torch.") else dtype, None)
    if not isinstance(d, torch.dtype) or not d.is_floating_point:
        raise TypeError(f"dtype must be None or a floating torch dtype (e.g. torch.float32 or "
                        f"'float32'), got {dtype!r}")
    return d


def _as_feature_tensor(features: Any, columns: Optional[Sequence[str]], device: Any,
                       dtype: Any) -> Tuple[torch.Tensor, Optional[Tuple[str, ...]]]:
    """``features`` as one 2-D tensor [rows, F] on its own device (or ``device``) and its column
    names. A FeatureTable goes through its ``to_torch`` (zero-copy on the CPU), a pandas
    DataFrame through ``to_numpy``, a numpy array through ``torch.from_numpy`` (zero-copy when
    writable and C-contiguous), a tensor as it is."""
    dtype = _dtype_arg(dtype)
    names: Optional[Tuple[str, ...]] = None
    if _is_feature_table(features):
        t = features.to_torch(None if device is None else str(device))
        names = tuple(str(c) for c in features.columns)
    elif type(features).__module__.startswith("pandas") and hasattr(features, "to_numpy"):
        names = tuple(str(c) for c in features.columns)
        dated = [str(c) for c, d in zip(features.columns, features.dtypes) if getattr(d, "kind", "") in "mM"]
        if dated:
            raise TypeError(f"features: every DataFrame column must be numeric; {dated} hold datetimes or "
                            "timedeltas (their number depends on the unit, which pandas may choose): drop "
                            "them or convert them to a number yourself")
        try:
            arr = np.array(features.to_numpy(dtype=np.float64, na_value=np.nan))
        except (TypeError, ValueError) as e:
            raise TypeError(f"features: every DataFrame column must be numeric ({e})") from None
        t = torch.from_numpy(arr)
    elif isinstance(features, torch.Tensor):
        t = features.detach()
    elif isinstance(features, np.ndarray):
        if features.dtype.kind not in "biuf":
            raise TypeError(f"features must be a numeric array, got dtype {features.dtype}")
        shared = features.flags.writeable and features.flags.c_contiguous
        arr = features if shared else np.array(features, order="C")  # one copy, then stored
        t = torch.from_numpy(arr)
    else:
        raise TypeError("features must be a vpoc FeatureTable, a pandas DataFrame, a numpy array "
                        f"or a torch tensor, got {type(features).__name__}")
    if t.dim() != 2:
        raise ValueError(f"features must be 2-D [rows, features], got shape {tuple(t.shape)}")
    if columns is not None:
        if names is not None and tuple(columns) != names:
            raise ValueError("columns must not be given for a FeatureTable or DataFrame "
                             "(they carry their own column names)")
        names = tuple(str(c) for c in columns)
        if len(names) != t.shape[1]:
            raise ValueError(f"columns has {len(names)} names but features has {t.shape[1]} columns")
    if names is not None and len(set(names)) != len(names):
        raise ValueError(f"columns must be unique, got {names}")
    if dtype is not None and t.dtype != dtype:
        t = t.to(dtype)
    if device is not None:
        t = t.to(device)
    return t, names


def _column_index(name: Any, names: Optional[Tuple[str, ...]], arg: str) -> int:
    if not isinstance(name, str):
        raise TypeError(f"{arg} must name a column (str), got {type(name).__name__}")
    if names is None:
        raise ValueError(f"{arg}={name!r} names a column but the features have no column names; "
                         "pass columns=[...] with a numpy array or tensor")
    if name not in names:
        raise ValueError(f"{arg}={name!r} is not a column; columns are {list(names)}")
    return names.index(name)


def _frame_sessions(features: Any, bars: bool = False) -> Optional[np.ndarray]:
    """The session label of each row of a pandas DataFrame (its index, or a MultiIndex's first level,
    as ``to_pandas()`` writes them), checked to be in chronological order: increasing, one row per
    session for a session table; non-decreasing for bars (``bars``: a session's bars share its label, and
    bar timestamps may repeat). None for other inputs or an index that cannot be ordered. ValueError
    naming the first row out of order."""
    if not (type(features).__module__.startswith("pandas") and hasattr(features, "index")):
        return None
    idx = features.index
    multi = getattr(idx, "nlevels", 1) > 1
    labels = idx.get_level_values(0) if multi else idx
    repeats = multi or bars  # equal consecutive labels allowed
    try:
        ok = labels.is_monotonic_increasing and (repeats or labels.is_unique)
    except TypeError:
        return None
    if not ok:
        lab = np.asarray(labels)
        try:
            bad = next(i for i in range(1, len(lab)) if not (lab[i] > lab[i - 1] or (repeats and lab[i] == lab[i - 1])))
        except TypeError:
            return None
        order = "non-decreasing" if repeats else "increasing, one row per session"
        raise ValueError(f"features: the DataFrame's sessions must be in chronological order (index "
                         f"{'level 0 ' if multi else ''}{order}); row {bad} has {_show(labels[bad])} after "
                         f"{_show(labels[bad - 1])} (sort_index() it)")
    return np.asarray(labels)


def _show(v: Any) -> str:
    """A label as a message prints it: 20190102, 'a', 2019-01-02 00:00:00 (not np.int64(...) / Timestamp(...))."""
    v = v.item() if isinstance(v, np.generic) else v
    return repr(v) if isinstance(v, str) else str(v)


#: Same-session leakage (``target_shift=0``): per session-table column, the prefixes of the columns
#: that rebuild it exactly, alone or with other columns of the same row (vpoc/features/_session.py,
#: _lookback.py): vpoc = the vpoc lag + vpoc_change_5d, session_high = session_low + price_range,
#: value_area_high = value_area_low + value_area_width, close_change_pct from session_open/close, ...
DERIVED_COLUMNS: Mapping[str, Tuple[str, ...]] = MappingProxyType({
    "vpoc": ("vpoc_change_", "vpoc_pct_change_", "vpoc_std_", "vpoc_zscore_"),
    "session_close": ("price_mom_", "close_change_pct", "close_to_vwap_pct", "prev_poc_dist", "prev_vah_dist",
                      "prev_val_dist", "close_va_position"),
    "close_change_pct": ("volatility_", "session_open", "session_close"),
    "total_volume": ("volume_trend_",),
    "price_range": ("range_pct", "range_change_", "session_high", "session_low"),
    "value_area_width": ("va_width_", "value_area_high", "value_area_low", "close_va_position"),
    "session_high": ("price_range", "range_pct", "range_change_"),
    "session_low": ("price_range", "range_pct", "range_change_"),
    "session_open": ("range_pct", "close_change_pct"),
    "range_pct": ("range_change_", "price_range", "session_open"),
    "value_area_high": ("value_area_width", "va_width_", "close_va_position"),
    "value_area_low": ("value_area_width", "va_width_", "close_va_position"),
    "vwap": ("close_to_vwap_pct",),
    "close_to_vwap_pct": ("session_close", "vwap"),
    "close_va_position": ("session_close", "value_area_low", "value_area_high", "value_area_width"),
    "ib_high": ("ib_range",),
    "ib_low": ("ib_range",),
    "ib_range": ("ib_high", "ib_low"),
})


def _check_same_session_target(target: str, names: Sequence[str], drop: Tuple[str, ...]) -> None:
    """target_shift=0 with a column target: ValueError when the column is an input, a UserWarning
    naming the columns computed from it (``DERIVED_COLUMNS``, and any ``target + "_*"``) still in x."""
    prefixes = DERIVED_COLUMNS.get(target, ()) + (target + "_",)
    derived = [n for n in names if n != target and n not in drop and n.startswith(prefixes)]
    shown = ", ".join(derived[:8]) + (f" and {len(derived) - 8} more" if len(derived) > 8 else "")
    also = f"; x also holds columns computed from it ({shown}): drop them too" if derived else ""
    if target not in drop:
        raise ValueError(f"target={target!r} with target_shift=0 would also be an input; "
                         f"list it in drop_columns{also}, or use target_shift >= 1")
    if derived:
        warnings.warn(f"target={target!r} with target_shift=0: x still holds columns computed from the same "
                      f"session's {target} ({shown}), so the target can be recovered from x; list them in "
                      "drop_columns too, or use target_shift >= 1", UserWarning, stacklevel=3)


def _warn_empty(cls: str, why: str) -> None:
    warnings.warn(f"{cls} has 0 items ({why}): a loop over it trains nothing", DroppedRowsWarning,
                  stacklevel=user_stacklevel())


def _dropna_arg(dropna: Any) -> str:
    if dropna not in _DROPNA:
        raise ValueError(f"dropna must be one of {_DROPNA}, got {dropna!r}")
    return str(dropna)


def _keep_columns(names: Optional[Tuple[str, ...]], n: int, drop_columns: Sequence[str]
                  ) -> Tuple[Optional[torch.Tensor], Optional[Tuple[str, ...]]]:
    """(column indices to keep or None for all, kept names)."""
    if isinstance(drop_columns, str):
        raise TypeError("drop_columns must be a sequence of column names, not one string")
    drop = [_column_index(c, names, "drop_columns") for c in drop_columns]
    if not drop:
        return None, names
    keep = [j for j in range(n) if j not in set(drop)]
    kept_names = None if names is None else tuple(names[j] for j in keep)
    return torch.tensor(keep, dtype=torch.int64), kept_names


def _targets(target: Target, values: torch.Tensor, names: Optional[Tuple[str, ...]],
             idx: torch.Tensor) -> torch.Tensor:
    """Targets read at rows ``idx`` (int64, CPU) of ``values``: a column, a callable's output, or
    rows of a per-row target array; on ``values``' device, shape [len(idx)] or [len(idx), T]."""
    rows = values.shape[0]
    dev_idx = idx.to(values.device)
    if isinstance(target, str):
        y = values[dev_idx, _column_index(target, names, "target")]
    elif isinstance(target, (torch.Tensor, np.ndarray)):
        t = torch.from_numpy(np.array(target)) if isinstance(target, np.ndarray) else target.detach()
        if t.dim() not in (1, 2) or t.shape[0] != rows:
            raise ValueError(f"target must have shape [{rows}] or [{rows}, T] (one entry per "
                             f"feature row), got {tuple(t.shape)}")
        y = t.to(values.device)[dev_idx]
    elif callable(target):
        out = target(values, dev_idx)
        y = (torch.from_numpy(np.array(out)) if not isinstance(out, torch.Tensor)
             else out).to(values.device)
        if y.dim() not in (1, 2) or y.shape[0] != idx.shape[0]:
            raise ValueError(f"target callable must return shape [{idx.shape[0]}] or "
                             f"[{idx.shape[0]}, T] (one target per index), got {tuple(y.shape)}")
    else:
        raise TypeError("target must be None, a column name, a callable f(values, idx) or a "
                        f"per-row tensor/array, got {type(target).__name__}")
    return y


def _nan_rows(t: torch.Tensor) -> torch.Tensor:
    """Bool [len(t)]: rows of t (1-D or 2-D) holding a NaN (never for integer tensors)."""
    if not t.is_floating_point():
        return torch.zeros(t.shape[0], dtype=torch.bool, device=t.device)
    nan = torch.isnan(t)
    return nan if nan.dim() == 1 else nan.any(dim=1)


def _item_index(indices: Any, n: int) -> torch.Tensor:
    """Batch indices (sequence, numpy or tensor of ints; negative counts from the end) as a
    checked int64 CPU tensor."""
    if isinstance(indices, torch.Tensor):
        idx = indices.detach().to("cpu")
    else:
        arr = np.asarray(indices)
        idx = torch.as_tensor(arr if arr.size else arr.astype(np.int64))  # [] reads as float64
    if idx.dtype == torch.bool or idx.is_floating_point() or idx.is_complex():
        raise TypeError(f"indices must be integers, got dtype {idx.dtype}")
    idx = idx.to(torch.int64).reshape(-1)
    if idx.numel() and (int(idx.min()) < -n or int(idx.max()) >= n):
        raise IndexError(f"index out of range for a dataset of {n} items")
    return torch.where(idx < 0, idx + n, idx)


def _one_index(i: Any, n: int) -> int:
    if isinstance(i, torch.Tensor) and i.dim() == 0:
        i = int(i)
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, numbers.Integral):
        raise TypeError(f"index must be an integer or a sequence of integers, got {type(i).__name__}")
    i = int(i)
    if not -n <= i < n:
        raise IndexError(f"index {i} out of range for a dataset of {n} items")
    return i % n


def _is_batch_index(i: Any) -> bool:
    if isinstance(i, torch.Tensor):
        return i.dim() > 0
    return isinstance(i, (list, tuple, range, np.ndarray))


# --------------------------------------------------------------------------- datasets


class SessionFeatureDataset(torch.utils.data.Dataset):
    """One item per session: ``(x, y)`` with ``x`` the session's feature row [F] (a view).

    Parameters
    ----------
    features : FeatureTable, pandas DataFrame, numpy array or tensor, [S, F]
        One row per session in chronological order (``vpoc.session_features(...)``); a
        DataFrame's index (the session labels of ``to_pandas()``) must be increasing, else a
        ValueError, and a datetime/timedelta column is a TypeError like a string one.
    target : None, str, callable or tensor/array
        ``None``: items are ``x`` alone. A column name: that feature of session
        ``s + target_shift``. A tensor/array of one value (or a row of T values) per session:
        its entry ``s + target_shift``. A callable ``target(values, idx)`` gets the full feature
        tensor [S, F] (before ``drop_columns``) and the int64 tensor of target rows
        ``idx = s + target_shift`` and returns one target (or T) per index.
    target_shift : int, default 1
        Which session's target belongs to session s: 1 (default) is the *next* session, the
        common "predict tomorrow from today" setup; 0 is the same session (then a column target
        must be listed in ``drop_columns``, else it would be an input, and so should the columns
        computed from it, which a UserWarning names: for ``"vpoc"`` ``vpoc_change_{n}d``,
        ``vpoc_pct_change_{n}d``, ``vpoc_std_{n}d``, ``vpoc_zscore_{n}d`` (vpoc = its lag + the
        change); ``vpoc.torch.DERIVED_COLUMNS`` lists them per column, including the ones that
        rebuild it with another column, e.g. price_range for session_high). Sessions whose target row
        ``s + target_shift`` does not exist are dropped.
    columns : sequence of str, optional
        Column names of a numpy array or tensor (FeatureTable/DataFrame carry their own).
    drop_columns : sequence of str
        Columns left out of ``x`` (the target may still read them).
    dropna : {"target", "any", "none"}, default "target"
        Drop sessions whose target has a NaN ("target"), whose target or ``x`` has a NaN
        ("any"), or none.
    device : torch device, optional
        Where the tensors live; default: where ``features`` lives (a FeatureTable's own
        ``device``; a CUDA tensor stays on CUDA).
    dtype : floating torch dtype, its name ("float64") or None, default torch.float32
        dtype of the stored features (None keeps the input's); an integer dtype is a TypeError.

    ``ds[i]`` returns views of the stored tensors; ``ds[list_of_indices]`` returns the batch
    ``(x [B, F], y [B])`` gathered in one copy (use it with a ``BatchSampler`` and
    ``DataLoader(batch_size=None)``). ``session_index[i]`` is item i's row in ``features``.
    CPU datasets work with ``DataLoader(num_workers>0)`` and ``DistributedSampler``; a dataset
    on a GPU needs ``num_workers=0``.
    """

    def __init__(self, features: Any, target: Target = None, *, target_shift: int = 1,
                 columns: Optional[Sequence[str]] = None, drop_columns: Sequence[str] = (),
                 dropna: str = "target", device: Any = None,
                 dtype: Optional[torch.dtype] = torch.float32) -> None:
        _frame_sessions(features)
        values, names = _as_feature_tensor(features, columns, device, dtype)
        shift = integer(target_shift, "target_shift", 0)
        dropna = _dropna_arg(dropna)
        keep, kept_names = _keep_columns(names, values.shape[1], drop_columns)
        if isinstance(target, str) and shift == 0:
            _check_same_session_target(target, names, tuple(drop_columns or ()))
        n_rows = values.shape[0]
        rows = torch.arange(max(n_rows - shift, 0) if target is not None else n_rows)
        x = values if keep is None else values.index_select(1, keep.to(values.device))
        y: Optional[torch.Tensor] = None
        if target is not None:
            y_all = _targets(target, values, names, rows + shift)
            bad = _nan_rows(y_all) if dropna != "none" else None
            if dropna == "any":
                bad = bad | _nan_rows(x[rows.to(x.device)])
            if bad is not None:
                ok = ~bad
                rows, y_all = rows[ok.cpu()], y_all[ok]
            y = y_all.contiguous()
        elif dropna == "any":
            rows = rows[~_nan_rows(x).cpu()]
        if n_rows and not rows.numel():
            _warn_empty("SessionFeatureDataset", f"{n_rows} sessions, target_shift={shift}: "
                        + ("no session has a target row" if n_rows <= shift
                           else f"every target (or x, dropna={dropna!r}) has a NaN"))
        self.x: torch.Tensor = x.contiguous()
        self.y: Optional[torch.Tensor] = y
        self.session_index: torch.Tensor = rows.contiguous()
        self.columns: Optional[Tuple[str, ...]] = kept_names
        self.target_shift: int = shift
        labels = getattr(features, "session_labels", None) if _is_feature_table(features) else None
        self.session_labels: Optional[np.ndarray] = (
            None if labels is None else np.asarray(labels)[rows.numpy()])

    def __len__(self) -> int:
        return int(self.session_index.shape[0])

    def __getitem__(self, i: Any) -> Any:
        n = len(self)
        if _is_batch_index(i):
            idx = _item_index(i, n)
            x = self.x.index_select(0, self.session_index[idx].to(self.x.device))
            if self.y is None:
                return x
            return x, self.y.index_select(0, idx.to(self.y.device))
        k = _one_index(i, n)
        x = self.x[int(self.session_index[k])]
        return x if self.y is None else (x, self.y[k])

    @property
    def device(self) -> torch.device:
        """Device of the stored tensors."""
        return self.x.device

    def __repr__(self) -> str:
        return (f"SessionFeatureDataset(items={len(self)}, features={self.x.shape[1]}, "
                f"target={'none' if self.y is None else tuple(self.y.shape[1:]) or 'scalar'}, "
                f"target_shift={self.target_shift}, device='{self.x.device}')")


class BarWindowDataset(torch.utils.data.Dataset):
    """Sliding windows over per-bar features: item i is ``(x [window, F], y)``, ``x`` a view.

    The window of item i ends at bar ``last`` (rows ``last-window+1 .. last``) and its target
    is read at bar ``last + horizon``.

    Parameters
    ----------
    features : FeatureTable, pandas DataFrame, numpy array or tensor, [N, F]
        One row per bar in time order (``vpoc.bar_features(...)``).
    window : int >= 1
        Bars per window.
    target : None, str, callable or tensor/array
        ``None``: items are ``x`` alone (and ``horizon`` is not used). A column name: that
        feature at bar ``last + horizon``. A tensor/array with one entry (or a row of T) per
        bar: its entry ``last + horizon``. A callable ``target(values, idx)`` gets the full
        feature tensor [N, F] and the int64 tensor of target bars ``idx = last + horizon`` and
        returns one target (or T) per index.
    horizon : int >= 0, default 1
        Bars from the window's last bar to its target bar (1: the next bar). With 0 a column
        target must be in ``drop_columns``, else it would be an input.
    session_offsets : int array [S+1], optional
        CSR session boundaries of the rows; a window and its target bar always lie in one
        session (sessions shorter than ``window + horizon`` give no item). None (default): a bar
        FeatureTable's own ``offsets``, a DataFrame with a MultiIndex (``to_pandas()``'s
        (session, bar)) its first level's runs; for any other input the rows are one sequence.
        A dataset left with 0 items warns (``DroppedRowsWarning``) naming why.
    stride : int >= 1, default 1
        Bars between the ends of consecutive windows (counted from each session's first window).
    columns, drop_columns, dropna, device, dtype
        As for :class:`SessionFeatureDataset`; ``dropna="any"`` drops windows with a NaN in any
        of their bars or in the target.

    ``ds[list_of_indices]`` returns the batch ``(x [B, window, F], y [B])`` gathered in one copy.
    ``window_end[i]`` is the last bar of item i.
    """

    def __init__(self, features: Any, window: int, *, target: Target = None, horizon: int = 1,
                 session_offsets: Any = None, stride: int = 1,
                 columns: Optional[Sequence[str]] = None, drop_columns: Sequence[str] = (),
                 dropna: str = "target", device: Any = None,
                 dtype: Optional[torch.dtype] = torch.float32) -> None:
        labels = _frame_sessions(features, bars=True)
        if session_offsets is None:
            if _is_feature_table(features) and getattr(features, "kind", None) == "bar":
                session_offsets = np.asarray(features.offsets)
            elif labels is not None and getattr(features.index, "nlevels", 1) > 1:
                starts = np.flatnonzero(labels[1:] != labels[:-1]) + 1
                session_offsets = np.concatenate([[0], starts, [len(labels)]]).astype(np.int64)
        values, names = _as_feature_tensor(features, columns, device, dtype)
        window = integer(window, "window", 1)
        horizon = integer(horizon, "horizon", 0)
        stride = integer(stride, "stride", 1)
        dropna = _dropna_arg(dropna)
        keep, kept_names = _keep_columns(names, values.shape[1], drop_columns)
        if isinstance(target, str) and horizon == 0 and target not in (drop_columns or ()):
            raise ValueError(f"target={target!r} with horizon=0 would also be an input; list it "
                             "in drop_columns or use horizon >= 1")
        n = values.shape[0]
        offsets = self._offsets(session_offsets, n)
        ahead = horizon if target is not None else 0
        ends = []
        for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
            first, last = a + window - 1, b - 1 - ahead
            if last >= first:
                ends.append(torch.arange(first, last + 1, stride, dtype=torch.int64))
        end = torch.cat(ends) if ends else torch.zeros(0, dtype=torch.int64)
        n_windows = int(end.shape[0])
        x = values if keep is None else values.index_select(1, keep.to(values.device))
        y: Optional[torch.Tensor] = None
        if target is not None:
            y = _targets(target, values, names, end + horizon)
        if dropna != "none":
            bad = torch.zeros(end.shape[0], dtype=torch.bool)
            if y is not None:
                bad |= _nan_rows(y).cpu()
            if dropna == "any":  # NaN bars inside a window, by prefix sums over the rows
                nan_bar = _nan_rows(x).cpu().to(torch.int64)
                csum = torch.cat([torch.zeros(1, dtype=torch.int64), nan_bar.cumsum(0)])
                bad |= (csum[end + 1] - csum[end + 1 - window]) > 0
            end = end[~bad]
            if y is not None:
                y = y[(~bad).to(y.device)]
        if n and not end.numel():
            longest = int((offsets[1:] - offsets[:-1]).max()) if offsets.numel() > 1 else 0
            _warn_empty("BarWindowDataset", f"window={window} + horizon={ahead} is longer than every session "
                        f"(longest {longest} rows)" if not n_windows else
                        f"each of the {n_windows} windows has a NaN target (or x, dropna={dropna!r})")
        self.x: torch.Tensor = x.contiguous()
        self.y: Optional[torch.Tensor] = None if y is None else y.contiguous()
        self.window_end: torch.Tensor = end.contiguous()
        self.window: int = window
        self.horizon: int = horizon
        self.stride: int = stride
        self.columns: Optional[Tuple[str, ...]] = kept_names
        self._steps = torch.arange(-window + 1, 1, dtype=torch.int64)

    @staticmethod
    def _offsets(session_offsets: Any, n: int) -> torch.Tensor:
        if session_offsets is None:
            return torch.tensor([0, n], dtype=torch.int64)
        if isinstance(session_offsets, torch.Tensor):
            arr = session_offsets.detach().cpu().numpy()
        else:
            arr = np.asarray(session_offsets)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"session_offsets must be an integer array, got dtype {arr.dtype}")
        if arr.ndim != 1 or arr.shape[0] < 1:
            raise ValueError(f"session_offsets must be 1-D with S+1 >= 1 entries, got shape {arr.shape}")
        arr = arr.astype(np.int64)
        if arr[0] != 0 or arr[-1] != n:
            raise ValueError(f"session_offsets must start at 0 and end at the number of rows {n}, "
                             f"got {arr[0]} .. {arr[-1]}")
        dec = np.flatnonzero(np.diff(arr) < 0)
        if dec.size:
            raise ValueError(f"session_offsets must be non-decreasing; session_offsets[{dec[0] + 1}]"
                             f"={arr[dec[0] + 1]} < session_offsets[{dec[0]}]={arr[dec[0]]}")
        return torch.from_numpy(arr)

    def __len__(self) -> int:
        return int(self.window_end.shape[0])

    def __getitem__(self, i: Any) -> Any:
        n = len(self)
        if _is_batch_index(i):
            idx = _item_index(i, n)
            rows = (self.window_end[idx].unsqueeze(1) + self._steps).to(self.x.device)
            x = self.x[rows]
            if self.y is None:
                return x
            return x, self.y.index_select(0, idx.to(self.y.device))
        k = _one_index(i, n)
        last = int(self.window_end[k])
        x = self.x[last - self.window + 1:last + 1]
        return x if self.y is None else (x, self.y[k])

    @property
    def device(self) -> torch.device:
        """Device of the stored tensors."""
        return self.x.device

    def __repr__(self) -> str:
        return (f"BarWindowDataset(items={len(self)}, window={self.window}, "
                f"features={self.x.shape[1]}, horizon={self.horizon}, stride={self.stride}, "
                f"device='{self.x.device}')")
