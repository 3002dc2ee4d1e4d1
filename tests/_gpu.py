"""GPU test helpers shared by the test files: torch with a usable GPU (or None), and the engine's
speculation switch set for a block."""

from __future__ import annotations

import contextlib
import warnings


def torch_cuda():
    """The torch module when it imports and sees a GPU, else None (the tests that need it skip)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import torch
        return torch if torch.cuda.is_available() else None
    except Exception:  # pragma: no cover
        return None


@contextlib.contextmanager
def speculation(enabled: bool):
    """The GPU engine's speculative path on / off inside the block, as it was afterwards."""
    from vpoc import _core

    before = _core.gpu_speculation()
    _core.gpu_set_speculation(enabled)
    try:
        yield
    finally:
        _core.gpu_set_speculation(before)
