"""GPU test helpers shared by the test files: torch with a usable GPU (or None), and the engine's
speculation switch set for a block."""

from __future__ import annotations

import contextlib
import warnings

import pytest


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


def gpu_ok() -> bool:
    """Whether vpoc itself has a GPU backend and a device (vpoc.gpu_available())."""
    try:
        import vpoc

        return bool(vpoc.gpu_available())
    except Exception:  # pragma: no cover - depends on the machine
        return False


#: skip a test unless vpoc has a GPU build and a device
needs_gpu = pytest.mark.skipif(not gpu_ok(), reason="no GPU: vpoc.gpu_available() is False (CPU-only build or "
                                                    "no device)")
