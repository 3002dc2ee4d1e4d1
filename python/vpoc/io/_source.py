"""Text sources for the readers of vpoc.io: a path (regular files only) or an open file object,
decompressed and handed to the parser in pieces of whole lines, the unterminated last line held back.

Contract: a path that is not a regular file (FIFO, device, socket, directory) raises ValueError before
anything opens it (it could block forever); pass an open file object to read one. Bytes that are not
UTF-8 and a truncated .gz/.bz2/.xz stream raise ValueError naming the source and line. A last line
with no newline after it is never parsed with the others: it is kept in ``LineStream.tail`` for the
reader's ``unterminated=`` rule (it may be a line cut short by a writer still at work).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import zlib
from typing import Any, Optional

__all__ = ["TextSource", "LineStream", "check_regular", "is_file_object"]

_PIECE = 1 << 20  # bytes read from the file at a time
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"))
_SUFFIX = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}
_KINDS = ((stat.S_ISFIFO, "FIFO (named pipe)"), (stat.S_ISCHR, "character device"),
          (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"), (stat.S_ISDIR, "directory"))


def is_file_object(obj: Any) -> bool:
    """True for an open file (anything with a ``read`` method that is not a path or a frame)."""
    return callable(getattr(obj, "read", None)) and not isinstance(obj, (str, bytes, os.PathLike))


def check_regular(path: str) -> None:
    """Raises unless ``path`` is a regular file (checked with os.stat, which opens nothing)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"path_or_df: no such file: {path!r}") from None
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "special file")
    raise ValueError(f"{path} is a {kind}, not a regular file: reading it by name could block or "
                     f"never end; to read it anyway pass an open file object, e.g. "
                     f"read_bars(open({path!r}, 'rb'), format=...)")


def _compression(path: Optional[str], head: bytes) -> Optional[str]:
    if path is not None:
        return _SUFFIX.get(os.path.splitext(path)[1].lower())
    return next((name for magic, name in _MAGIC if head.startswith(magic)), None)


class TextSource:
    """A path or the bytes of a file object, re-openable as a :class:`LineStream`."""

    def __init__(self, obj: Any) -> None:
        self.data: Optional[bytes] = None
        if is_file_object(obj):
            data = obj.read()
            if isinstance(data, str):
                data = data.encode("utf-8")
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError(f"path_or_df: the file object's read() returned "
                                f"{type(data).__name__}, expected bytes or str")
            self.data = bytes(data)
            self.path: Optional[str] = None
            name = getattr(obj, "name", None)
            self.name = name if isinstance(name, str) else "<file object>"
            self.compression = _compression(None, self.data[:8])
        else:
            self.path = os.fspath(obj)
            check_regular(self.path)
            self.name = self.path
            self.compression = _compression(self.path, b"")

    def open(self) -> "LineStream":
        base: Any = open(self.path, "rb") if self.data is None else io.BytesIO(self.data)
        if self.compression is None:
            return LineStream(base, self.name, None)
        try:
            raw = {"gzip": lambda f: gzip.GzipFile(fileobj=f, mode="rb"), "bz2": bz2.BZ2File,
                   "xz": lzma.LZMAFile}[self.compression](base)
        except BaseException:
            base.close()
            raise
        return LineStream(raw, self.name, self.compression, base)

    def head(self, n: int = 8) -> bytes:
        """The first ``n`` bytes as stored (not decompressed), for telling binary formats apart."""
        if self.data is not None:
            return self.data[:n]
        with open(self.path, "rb") as fh:  # type: ignore[arg-type]
            return fh.read(n)

    def first_line(self) -> str:
        """The first line (decoded leniently), for sniffing the format and the separator."""
        with self.open() as s:
            head = b""
            while b"\n" not in head and len(head) < (1 << 22):
                piece = s.raw_read(1 << 16)
                if not piece:
                    break
                head += piece
        return head.split(b"\n", 1)[0].decode("utf-8", errors="replace")


class LineStream(io.RawIOBase):
    """Binary stream of whole lines, checked as UTF-8; after EOF ``tail`` holds the bytes after
    the last newline (b"" when the file ends with one) and ``tail_line`` its line number."""

    def __init__(self, raw: Any, name: str, compression: Optional[str], base: Any = None) -> None:
        super().__init__()
        self._raw = raw
        self._base = base  # the file under a decompressor (closed with it)
        self.name = name
        self._compression = compression
        self._buf = memoryview(b"")
        self._hold = b""
        self.lines = 0  # newlines handed out so far
        self.tail = b""
        self.tail_line = 0
        self.at_eof = False
        self.error: Optional[BaseException] = None

    def readable(self) -> bool:
        return True

    def raw_read(self, n: int) -> bytes:
        try:
            return self._raw.read(n)
        except (EOFError, OSError, lzma.LZMAError, zlib.error) as e:
            what = f"the {self._compression} stream" if self._compression else "the file"
            line = self.lines + self._hold.count(b"\n")
            raise ValueError(f"{self.name}: cannot read {what} after its first {line} lines "
                             f"(truncated or corrupt? {e})") from None

    def _fill(self) -> None:
        while not self._buf and not self.at_eof:
            piece = self.raw_read(_PIECE if self._compression is None else _PIECE // 16)
            if not piece:
                self.at_eof = True
                self.tail, self._hold = self._hold, b""
                self.tail_line = self.lines + 1
                return
            data = self._hold + piece
            k = max(data.rfind(b"\n"), data.rfind(b"\r"))
            if k < 0:
                self._hold = data
                continue
            whole, self._hold = data[: k + 1], data[k + 1:]
            try:
                whole.decode("utf-8")
            except UnicodeDecodeError as e:
                line = self.lines + whole.count(b"\n", 0, e.start) + 1
                raise ValueError(f"{self.name} line {line}: byte {whole[e.start]:#04x} is not "
                                 f"UTF-8 ({e.reason}); convert the file to UTF-8, e.g. "
                                 f"iconv -f latin1 -t utf-8") from None
            self.lines += whole.count(b"\n")
            self._buf = memoryview(whole)

    def readinto(self, b: Any) -> int:
        try:
            self._fill()
            n = min(len(b), len(self._buf))
            b[:n] = self._buf[:n]
            self._buf = self._buf[n:]
            return n
        except BaseException as e:  # the parser may wrap it (Ctrl-C included): kept to re-raise
            self.error = e
            raise

    def close(self) -> None:
        try:
            self._raw.close()
            if self._base is not None:
                self._base.close()
        finally:
            super().close()
