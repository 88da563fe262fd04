"""Reading a user's file (regular files only, never more than a size cap) and writing one atomically.

A FIFO, a device (`/dev/zero`), a folder or a socket is refused before a byte is read, so that nothing hangs or
reads without end; a regular file is read up to `limit + 1` bytes and refused when larger.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class FileRefused(ValueError):
    """A file that cannot be read as input; the message names the reason (not the path: callers add it)."""


class FileTooLarge(FileRefused):
    """A regular file over the cap; `size` is its size in bytes (at least the cap + 1)."""

    def __init__(self, size: int, limit: int):
        super().__init__(f"is {size} bytes or more; the limit is {limit}")
        self.size, self.limit = size, limit


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_capped(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; anything else raises `FileRefused`."""
    if not str(path):
        raise FileRefused("no file name given (an empty path)")
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        raise FileRefused(f"cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    if not stat.S_ISREG(mode):
        raise FileRefused(f"is {_kind(mode)}, not a regular file")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)  # O_NONBLOCK: a file swapped for a FIFO after the check cannot block
    except OSError as exc:
        raise FileRefused(f"cannot be read ({exc.strerror or exc})") from None
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise FileRefused("is not a regular file")
        try:
            data = f.read(limit + 1)
        except OSError as exc:
            raise FileRefused(f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > limit:
        try:
            size = Path(path).stat().st_size
        except OSError:
            size = len(data)
        raise FileTooLarge(max(size, len(data)), limit)
    return data


class FileNotWritten(OSError):
    """A save that did not happen: the previous file, if any, is left as it was; the message names the reason."""


def write_atomically(path: str | os.PathLike, data: bytes) -> Path:
    """Write `data` to `path` whole or not at all: a temporary file in the same folder, flushed to disk (fsync),
    then renamed over `path` (`os.replace`, atomic on POSIX and Windows). An existing file keeps its permissions;
    on any failure the temporary file is removed, the previous file stays, and `FileNotWritten` is raised."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    except OSError:
        mode = 0o644
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except (OSError, ValueError) as exc:
        raise FileNotWritten(f"cannot write in the folder ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        try:
            os.chmod(tmp, mode)
        except OSError:
            pass
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise FileNotWritten(f"cannot be written ({exc.strerror or exc}); the previous file is kept") from None
        raise
    return path
