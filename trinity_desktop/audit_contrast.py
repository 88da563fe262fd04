"""Faint text, measured on the pixels: each plot text's contrast against what is actually drawn behind it.

A view is rendered twice: as shown, and with every text hidden (text items at opacity 0, axes' tick text in a
transparent pen; nothing moves). Behind a text is the median colour of the second render inside the text's
box; the text's colour is the pixel of the first render inside the box that differs most from that background
(the core of a glyph stroke; anti-aliased edges are paler). A text drawn in its background's colour changes no
pixel and reads as 1:1. The ratio is WCAG 2.1's: 4.5:1 is the goal for text, 3:1 the floor (large text and
graphics); below the floor a text counts as missing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_desktop.audit_text import scene_texts

GOAL_RATIO = 4.5
FLOOR_RATIO = 3.0
_CHANGED = 8   # a channel difference (0-255) above render noise


@dataclass(frozen=True)
class TextContrast:
    label: str
    ratio: float
    text_rgb: tuple[int, int, int]
    behind_rgb: tuple[int, int, int]

    def describe(self) -> str:
        text, behind = ("#" + "".join(f"{v:02x}" for v in rgb) for rgb in (self.text_rgb, self.behind_rgb))
        return f"{self.label!r} {self.ratio:.1f}:1 ({text} on {behind})"


def _pixels(image) -> np.ndarray:
    """A QImage as an (h, w, 3) uint8 RGB array."""
    from PySide6 import QtGui

    image = image.convertToFormat(QtGui.QImage.Format.Format_RGB32)
    h, w = image.height(), image.width()
    data = np.frombuffer(image.constBits(), np.uint8).reshape(h, image.bytesPerLine() // 4, 4)
    return data[:, :w, 2::-1].copy()   # BGRA in memory -> RGB


def _luminance(rgb: np.ndarray) -> np.ndarray:
    c = rgb.astype(float) / 255.0
    lin = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return lin @ np.array([0.2126, 0.7152, 0.0722])


def _ratio(la, lb):
    return (np.maximum(la, lb) + 0.05) / (np.minimum(la, lb) + 0.05)


def _grab(view) -> np.ndarray:
    return _pixels(view.viewport().grab().toImage())


def view_contrast(view) -> list[TextContrast]:
    """The measured contrast of every visible text of one view that lies on screen."""
    import pyqtgraph as pg
    from PySide6 import QtGui, QtWidgets

    texts = scene_texts(view)
    if not texts:
        return []
    shown = _grab(view)
    opacities, pens = {}, {}
    for t in texts:
        if isinstance(t.item, QtWidgets.QGraphicsTextItem) and t.item not in opacities:
            opacities[t.item] = t.item.opacity()
            t.item.setOpacity(0.0)
        elif isinstance(t.item, pg.AxisItem) and t.item not in pens:
            pens[t.item] = QtGui.QPen(t.item.textPen())
            t.item.setTextPen(pg.mkPen(QtGui.QColor(0, 0, 0, 0)))
    try:
        behind = _grab(view)
    finally:
        for item, opacity in opacities.items():
            item.setOpacity(opacity)
        for item, pen in pens.items():
            item.setTextPen(pen)
    h, w = shown.shape[:2]
    out = []
    for t in texts:
        box = t.polygon.boundingRect().toAlignedRect()
        x0, y0 = max(box.left(), 0), max(box.top(), 0)
        x1, y1 = min(box.right() + 1, w), min(box.bottom() + 1, h)
        if x1 - x0 < 2 or y1 - y0 < 2:
            continue   # off screen: the clipping check reports it
        a = shown[y0:y1, x0:x1].reshape(-1, 3)
        b = behind[y0:y1, x0:x1].reshape(-1, 3)
        back = np.median(b, axis=0)
        changed = np.abs(a.astype(int) - b.astype(int)).max(axis=1) > _CHANGED
        if not changed.any():
            out.append(TextContrast(t.label, 1.0, tuple(int(v) for v in back), tuple(int(v) for v in back)))
            continue
        ratios = _ratio(_luminance(a[changed]), _luminance(back[None, :])[0])
        best = int(np.argmax(ratios))
        out.append(TextContrast(t.label, float(ratios[best]), tuple(int(v) for v in a[changed][best]),
                                tuple(int(v) for v in back)))
    return out


def faint(measured: list[TextContrast], floor: float = FLOOR_RATIO) -> list[TextContrast]:
    return [m for m in measured if m.ratio < floor]


def faint_cells(view) -> list[str]:
    """Map cells (an `ImageItem` drawn from RGB colours, e.g. the planner's map) that merge with the plot
    where they meet it: a cell beside a cell drawn in the view's background colour (a hole: "nothing fits"
    under a hatch, a zero) under `FLOOR_RATIO` against that background."""
    import pyqtgraph as pg

    background = view.backgroundBrush().color()
    bg = np.array([background.red(), background.green(), background.blue()], float)
    out = []
    for item in view.scene().items():
        image = getattr(item, "image", None) if isinstance(item, pg.ImageItem) else None
        if not item.isVisible() or image is None or image.ndim != 3 or image.dtype != np.uint8:
            continue
        rgb = image[..., :3].astype(float)
        hole = np.abs(rgb - bg).max(axis=2) == 0
        beside = np.zeros_like(hole)
        beside[1:, :] |= hole[:-1, :]
        beside[:-1, :] |= hole[1:, :]
        beside[:, 1:] |= hole[:, :-1]
        beside[:, :-1] |= hole[:, 1:]
        colors = rgb[beside & ~hole]
        if not len(colors):
            continue
        ratios = _ratio(_luminance(colors), float(_luminance(bg[None, :])[0]))
        weak = ratios < FLOOR_RATIO
        if weak.any():
            worst = colors[int(np.argmin(ratios))].astype(int)
            out.append(f"map cells: {int(weak.sum())} of {len(colors)} beside a hole under {FLOOR_RATIO}:1 "
                       f"against the plot (worst {float(ratios.min()):.1f}:1, "
                       f"#{''.join(f'{v:02x}' for v in worst)} on {background.name()})")
    return out


FIELD_RING_PX = 2   # a field's frame: its outermost pixels


def frameless_fields(root) -> list[str]:
    """Form fields (line edits, spin boxes, combo boxes) whose outline a person cannot see: no pixel of the
    field's outer ring reads at `FLOOR_RATIO` (WCAG 2.1 non-text contrast) against the colour around it (the
    parent's background), so the field's box vanishes into the form."""
    from PySide6 import QtWidgets

    out = []
    kinds = (QtWidgets.QLineEdit, QtWidgets.QAbstractSpinBox, QtWidgets.QComboBox)
    for field in root.findChildren(QtWidgets.QWidget):
        if not isinstance(field, kinds) or not field.isVisible() or field.width() < 8 or field.height() < 8:
            continue
        if isinstance(field, QtWidgets.QLineEdit) and isinstance(field.parentWidget(), kinds):
            continue   # a spin or combo box's own editor: its box is the parent's
        parent = field.parentWidget()
        around = parent.palette().color(parent.backgroundRole()) if parent is not None else None
        if around is None:
            continue
        pixels = _pixels(field.grab().toImage())
        ring = np.concatenate([pixels[:FIELD_RING_PX].reshape(-1, 3), pixels[-FIELD_RING_PX:].reshape(-1, 3),
                               pixels[:, :FIELD_RING_PX].reshape(-1, 3), pixels[:, -FIELD_RING_PX:].reshape(-1, 3)])
        back = np.array([[around.red(), around.green(), around.blue()]], float)
        best = float(_ratio(_luminance(ring), _luminance(back)[0]).max())
        if best < FLOOR_RATIO:
            name = field.accessibleName() or field.toolTip()[:40] or type(field).__name__
            out.append(f"{name!r}: its frame reads {best:.1f}:1 against {around.name()}")
    return out
