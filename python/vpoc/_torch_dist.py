"""Sharding sessions over torch.distributed ranks: ``shard_sessions`` and ``gather_shards``.

Contract: the shards of ranks 0..world_size-1 are contiguous, in rank order, sizes differ by at
most one and together cover every session exactly once; ``gather_shards`` undoes the sharding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Tuple

import numpy as np

from ._validate import integer

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["gather_shards", "shard_offsets", "shard_sessions"]

_MAX_DIMS = 6


def _dtypes() -> Tuple[Any, ...]:
    import torch

    return (torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
            torch.int16, torch.int8, torch.uint8, torch.bool, torch.complex64, torch.complex128)


def shard_sessions(n_sessions: int, rank: int, world_size: int) -> range:
    """The sessions rank ``rank`` of ``world_size`` handles: ``range(start, stop)``.

    Contiguous and balanced: the first ``n_sessions % world_size`` ranks get one session more
    than the others; a rank may get none when there are fewer sessions than ranks. Use
    ``r.start`` / ``r.stop`` to slice per-session arrays, :func:`shard_offsets` for the rows.
    """
    n = integer(n_sessions, "n_sessions", 0)
    w = integer(world_size, "world_size", 1)
    r = integer(rank, "rank", 0)
    if r >= w:
        raise ValueError(f"rank must be < world_size ({w}), got {r}")
    base, extra = divmod(n, w)
    start = r * base + min(r, extra)
    return range(start, start + base + (1 if r < extra else 0))


def shard_offsets(offsets: Any, rank: int, world_size: int) -> Tuple[range, slice, np.ndarray]:
    """This rank's sessions of CSR ``offsets`` [S+1]: (sessions, input-row slice, local offsets).

    The local offsets start at 0 and index the rows ``rows`` = ``data[row_slice]``, so
    ``vpoc.from_bars(high[row_slice], ..., offsets=local_offsets)`` profiles exactly this shard.
    """
    offs = np.asarray(offsets)
    if offs.ndim != 1 or offs.shape[0] < 1 or offs.dtype.kind not in "iu":
        raise ValueError(f"offsets must be a 1-D integer array of length S+1 >= 1, got "
                         f"dtype {offs.dtype} shape {offs.shape}")
    offs = offs.astype(np.int64, copy=False)
    sessions = shard_sessions(offs.shape[0] - 1, rank, world_size)
    a, b = int(offs[sessions.start]), int(offs[sessions.stop])
    return sessions, slice(a, b), offs[sessions.start:sessions.stop + 1] - a


def gather_shards(tensor: "torch.Tensor", group: Optional[Any] = None) -> "torch.Tensor":
    """Concatenate every rank's ``tensor`` along dim 0, in rank order (an all-gather).

    Ranks may hold different numbers of rows (dim 0); the other dims and the dtype must agree.
    Each shard is padded to the largest one for ``torch.distributed.all_gather`` and the padding is
    dropped again. Works with gloo (CPU tensors) and nccl (CUDA tensors); every rank of ``group``
    must call it. Returns a new tensor on ``tensor``'s device.
    """
    import torch
    import torch.distributed as dist

    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"tensor must be a torch.Tensor, got {type(tensor).__name__}")
    if tensor.dim() < 1:
        raise ValueError("tensor must have at least one dimension (rows of sessions)")
    if not (dist.is_available() and dist.is_initialized()):
        raise RuntimeError("gather_shards needs torch.distributed: call "
                           "torch.distributed.init_process_group() first")
    dtypes = _dtypes()
    if tensor.dim() > _MAX_DIMS:
        raise ValueError(f"tensor may have at most {_MAX_DIMS} dimensions, got {tensor.dim()}")
    world = dist.get_world_size(group)
    # every rank's dtype and shape, to check that they agree and to pad
    code = dtypes.index(tensor.dtype) if tensor.dtype in dtypes else len(dtypes)
    header = torch.tensor([code, tensor.dim(), *tensor.shape] + [0] * (_MAX_DIMS - tensor.dim()),
                          dtype=torch.int64, device=tensor.device)
    headers = [torch.empty_like(header) for _ in range(world)]
    dist.all_gather(headers, header, group=group)
    meta = [h.cpu().tolist() for h in headers]
    kinds = {(m[0], tuple(m[3:2 + m[1]])) for m in meta}
    if len(kinds) != 1 or meta[0][0] == len(dtypes):
        raise ValueError("every rank's tensor must have the same dtype (one of "
                         f"{', '.join(map(str, dtypes))}) and the same shape after dim 0; got "
                         f"(dtype index, trailing shape) {sorted(kinds)}")
    rows = [m[2] for m in meta]
    top = max(rows)
    if top == 0:
        return tensor.new_empty((0, *tensor.shape[1:]))
    padded = tensor.contiguous()
    if tensor.shape[0] < top:
        padded = torch.cat([padded, padded.new_zeros((top - tensor.shape[0], *tensor.shape[1:]))])
    out = [torch.empty_like(padded) for _ in range(world)]
    dist.all_gather(out, padded, group=group)
    return torch.cat([o[:n] for o, n in zip(out, rows)])
