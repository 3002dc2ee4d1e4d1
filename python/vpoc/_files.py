"""Atomic file replacement, shared by ``vpoc.io.write_*`` and the ``vpoc`` command line.

Contract: a file is replaced whole or not at all. The new contents go to a fresh file in the
target's directory, created exclusively under an unpredictable name (``tempfile.mkstemp``:
``O_CREAT | O_EXCL``, so no existing file or symlink is ever opened or followed) and written
through that descriptor; on success it is flushed, fsynced and renamed onto the target
(``os.replace``: atomic on POSIX; a symlink at the target is replaced, not written through). On
any error (disk full, ``ulimit -f``, an exception of the writer, Ctrl-C) the temporary file is
removed and the old file is left as it was.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from typing import BinaryIO, Iterator, Union

__all__ = ["atomic_write"]

_UMASK_LOCK = threading.Lock()


def _umask() -> int:
    try:  # Linux: read it without changing it
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _mode(target: str) -> int:
    """The permission bits the new file gets: the old file's, else what ``open()`` would give."""
    try:
        st = os.stat(target)
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode)
    except OSError:
        pass
    return 0o666 & ~_umask()


@contextlib.contextmanager
def atomic_write(path: Union[str, "os.PathLike[str]"]) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new contents to; ``path`` is replaced when the block
    ends without an exception and left untouched otherwise (see the module docs)."""
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, _mode(target))
        with os.fdopen(fd, "wb") as fh:
            fd = -1  # the file object owns (and closes) the descriptor now
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable (POSIX directories)
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
