"""vpoc.torch: PyTorch helpers (datasets over feature tables, session sharding for torch.distributed, as_tensor).

Contract: imports torch (vpoc itself never does); tensors stay on the device they were computed on
unless a ``device=`` says otherwise.
"""

from __future__ import annotations

from ._optional import require

require("torch", "vpoc.torch")  # a clear ImportError naming the extra when torch is missing

from ._torch_data import DERIVED_COLUMNS, BarWindowDataset, SessionFeatureDataset  # noqa: E402
from ._torch_dist import gather_shards, shard_offsets, shard_sessions  # noqa: E402
from ._torch_tensor import as_tensor  # noqa: E402

__all__ = ["DERIVED_COLUMNS", "BarWindowDataset", "SessionFeatureDataset", "as_tensor", "gather_shards",
           "shard_offsets", "shard_sessions"]
