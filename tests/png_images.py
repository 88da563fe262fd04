"""Reading a PNG's size and colours with QImage (no display needed), for the UI and end-to-end tests' `png_info`
fixture. PySide6 is imported when a PNG is read, not when this module is."""

from __future__ import annotations

from pathlib import Path


def png_info(path: Path) -> tuple[int, int, int]:
    """(width, height, distinct colours) of a PNG."""
    import numpy as np
    from PySide6.QtGui import QImage

    image = QImage(str(path))
    assert not image.isNull(), f"{path} is not a readable image"
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    width, height, stride = image.width(), image.height(), image.bytesPerLine() // 4
    data = np.frombuffer(image.constBits(), dtype=np.uint32, count=stride * height)
    return width, height, int(np.unique(data.reshape(height, stride)[:, :width]).size)
