"""PNG files written atomically: the image encoded in memory, then `write_atomically` (a temporary file in the
same folder, fsync, `os.replace`), so that a screenshot or a slide export never leaves a half-written PNG and a
failed one keeps the previous file."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6 import QtCore, QtGui

from trinity_desktop.model.base.files import FileNotWritten, write_atomically


def png_bytes(image: QtGui.QImage | QtGui.QPixmap) -> bytes:
    """The image encoded as PNG; FileNotWritten when Qt cannot encode it (an empty image)."""
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise FileNotWritten("cannot be written (the image could not be encoded as PNG)")
    return bytes(buffer.data())


def save_png(image: QtGui.QImage | QtGui.QPixmap, path: str | os.PathLike) -> Path:
    """Write `image` to `path` as a PNG, whole or not at all; FileNotWritten (an OSError) names the reason."""
    return write_atomically(path, png_bytes(image))
