"""Reading a user's file: regular files only, never more than a size cap. The one reader every loader uses.

A FIFO, a device (`/dev/zero`), a folder or a socket is refused before a byte is read, so that nothing hangs or
reads without end; a regular file is read up to `limit + 1` bytes and refused when larger.
"""

from __future__ import annotations

import os
import stat
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
