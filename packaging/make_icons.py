"""Render the one icon source (resources/icon.svg) into the icons the installers need.

    python packaging/make_icons.py OUT_DIR

writes OUT_DIR/hicolor/<n>x<n>/apps/trinity-desktop.png (the freedesktop sizes), OUT_DIR/trinity-desktop.ico
(Windows: EXE and installer icon) and OUT_DIR/trinity-desktop.icns (macOS: .app icon). Qt's SVG renderer
rasterises each size from the vector source (Pillow cannot read SVG); Pillow writes .ico and .icns.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "resources" / "icon.svg"
NAME = "trinity-desktop"
HICOLOR_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)  # freedesktop icon theme spec: common fixed sizes
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)  # Windows shell sizes; 256 is the largest .ico entry
ICNS_SIZES = (16, 32, 64, 128, 256, 512, 1024)  # Apple icon family (ic04 ... ic10)


def render_png(size: int, source: Path = SOURCE) -> bytes:
    """The SVG rasterised at size x size pixels (transparent background), as PNG bytes."""
    from PySide6 import QtCore, QtGui, QtSvg

    renderer = QtSvg.QSvgRenderer(str(source))
    if not renderer.isValid():
        raise ValueError(f"{source}: not a valid SVG")
    image = QtGui.QImage(size, size, QtGui.QImage.Format.Format_ARGB32)
    image.fill(QtCore.Qt.GlobalColor.transparent)
    painter = QtGui.QPainter(image)
    painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(buffer.data())


def make_icons(out: Path, source: Path = SOURCE) -> list[Path]:
    from PIL import Image
    from PySide6 import QtGui

    _app = QtGui.QGuiApplication.instance() or QtGui.QGuiApplication([sys.argv[0]])  # noqa: F841 (fonts)
    images = {n: Image.open(io.BytesIO(render_png(n, source))).convert("RGBA")
              for n in sorted(set(HICOLOR_SIZES + ICO_SIZES + ICNS_SIZES))}
    written = []
    for n in HICOLOR_SIZES:
        path = out / "hicolor" / f"{n}x{n}" / "apps" / f"{NAME}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        images[n].save(path)
        written.append(path)
    ico = out / f"{NAME}.ico"
    images[max(ICO_SIZES)].save(ico, sizes=[(n, n) for n in ICO_SIZES],
                                append_images=[images[n] for n in ICO_SIZES])
    icns = out / f"{NAME}.icns"
    images[max(ICNS_SIZES)].save(icns, append_images=[images[n] for n in ICNS_SIZES])
    return [*written, ico, icns]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    for path in make_icons(Path(argv[0])):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
