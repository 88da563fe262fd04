"""Text a person cannot read whole: overlapping or cut plot texts, shortened labels, cut tabs and form values.

Plot texts are every visible, non-empty QGraphicsTextItem of a view (on-plot labels, titles, legend entries,
axis labels) and every axis's tick labels (drawn by the axis itself, `AxisItem.generateDrawSpecs`). Two texts
*overlap* when their glyph boxes (the text without the document margin, rotated as drawn) share more than
`TOLERANCE_PX` in both directions; a text is *clipped* when it reaches outside the area that shows it (its
ViewBox, which clips its children, or the visible part of its view). Boxes are in the view's viewport pixels,
mapped by each item's device transform: a legend ignores the view's scale (a slide scales its views), so its
scene box is not where it is drawn.

Shortening is not fitting: a text that holds "…" or ends in "...", a tab narrower than its title, a label
narrower than its one-line text and a form value wider than its box all count as *cut*.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TOLERANCE_PX = 1.0
_TAGS = re.compile(r"<[^>]+>")
_ENTITIES = {"&nbsp;": " ", "&amp;": "&", "&lt;": "<", "&gt;": ">", "&#8230;": "…", "&hellip;": "…"}


@dataclass(frozen=True)
class SceneText:
    label: str        # the text as shown (one line, at most 60 characters)
    polygon: object   # its glyph box in viewport pixels (QPolygonF)
    clip: object      # the viewport rect that shows it (QRectF)
    item: object      # the QGraphicsTextItem, or the AxisItem for a tick label


def plain(text: str) -> str:
    """Rich text as the words a person reads."""
    text = _TAGS.sub("", text)
    for entity, char in _ENTITIES.items():
        text = text.replace(entity, char)
    return text.strip()


def is_shortened(text: str) -> bool:
    """True for a text cut with an ellipsis: it holds "…" or ends in "..."."""
    text = text.strip()
    return "…" in text or text.endswith("...")


def scene_texts(view) -> list[SceneText]:
    """Every visible text of one GraphicsView, tick labels included."""
    import pyqtgraph as pg
    from PySide6 import QtCore, QtWidgets

    scene = view.scene()
    to_view = view.viewportTransform()
    visible = QtCore.QRectF(view.viewport().rect())
    out = []
    for item in scene.items():
        if not isinstance(item, QtWidgets.QGraphicsTextItem) or not item.isVisible():
            continue
        text = item.toPlainText().strip()
        if not text or item.effectiveOpacity() <= 0.01:
            continue
        margin = item.document().documentMargin()
        rect = item.boundingRect().adjusted(margin, margin, -margin, -margin)
        clip = visible
        parent = item.parentItem()
        while parent is not None:
            if isinstance(parent, pg.ViewBox):
                clip = clip.intersected(parent.deviceTransform(to_view).mapRect(parent.boundingRect()))
                break
            parent = parent.parentItem()
        out.append(SceneText(text.replace("\n", " / ")[:60], item.deviceTransform(to_view).map(rect), clip, item))
    return out + tick_texts(scene, visible, to_view)


def tick_texts(scene, visible, to_view) -> list[SceneText]:
    """The tick labels every visible axis draws."""
    import pyqtgraph as pg
    from PySide6 import QtGui

    image = QtGui.QImage(8, 8, QtGui.QImage.Format.Format_ARGB32)
    painter = QtGui.QPainter(image)
    out = []
    try:
        for item in scene.items():
            if not isinstance(item, pg.AxisItem) or not item.isVisible() or item.style.get("showValues") is False:
                continue
            specs = item.generateDrawSpecs(painter)
            if not specs:
                continue
            for rect, _flags, text in specs[2]:
                if text.strip():
                    out.append(SceneText(f"tick {text.strip()[:40]}", item.deviceTransform(to_view).map(rect), visible,
                                         item))
    finally:
        painter.end()
    return out


def scene_report(view) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(overlapping pairs, texts clipped by their view, texts shortened with an ellipsis) of one view; an
    on-plot label that a drawn line runs through overlaps that line (`audit_curves`)."""
    from trinity_desktop.audit_curves import texts_on_curves

    texts = scene_texts(view)
    overlaps, clipped, shortened = [], [], []
    for i, a in enumerate(texts):
        box = a.polygon.boundingRect()
        if is_shortened(a.label):
            shortened.append(a.label)
        if box.width() > 0 and not a.clip.adjusted(-TOLERANCE_PX, -TOLERANCE_PX, TOLERANCE_PX,
                                                    TOLERANCE_PX).contains(box):
            clipped.append(a.label)
        for b in texts[i + 1:]:
            if not box.intersects(b.polygon.boundingRect()):
                continue
            common = a.polygon.intersected(b.polygon).boundingRect()
            if common.width() > TOLERANCE_PX and common.height() > TOLERANCE_PX:
                overlaps.append((a.label, b.label))
    return overlaps + texts_on_curves(view, texts), clipped, shortened


def cut_widget_texts(root) -> list[str]:
    """Labels, buttons and group titles under `root` that are shown shortened or cut by their width."""
    from PySide6 import QtWidgets

    out = []
    for label in root.findChildren(QtWidgets.QLabel):
        if not label.isVisible() or not label.text().strip():
            continue
        text = plain(label.text())
        if is_shortened(text):
            out.append(f"label {text[:60]!r} is shortened")
        elif not label.wordWrap() and label.width() + 1 < label.minimumSizeHint().width():
            out.append(f"label {text[:60]!r} needs {label.minimumSizeHint().width()} px, has {label.width()}")
    for button in root.findChildren(QtWidgets.QAbstractButton):
        if button.isVisible() and is_shortened(button.text()) and not button.text().strip().endswith("▸"):
            out.append(f"button {button.text()[:60]!r} is shortened")
    for box in root.findChildren(QtWidgets.QGroupBox):
        if box.isVisible() and is_shortened(box.title()):
            out.append(f"group {box.title()[:60]!r} is shortened")
    return out


def cut_tabs(bars) -> list[str]:
    """Tabs whose title is shortened, wider than the tab, or shown in part at the end of a scrolling bar (the
    visible tab bars in `bars`)."""
    from PySide6 import QtWidgets

    out = []
    for bar in bars:
        if not bar.isVisible():
            continue
        arrows = [b.geometry().left() for b in bar.findChildren(QtWidgets.QToolButton) if b.isVisible()]
        shown = bar.rect().adjusted(0, 0, (min(arrows) - bar.width()) if arrows else 0, 0)
        for i in range(bar.count()):
            text, rect = bar.tabText(i), bar.tabRect(i)
            if is_shortened(text):
                out.append(f"tab {text!r} is shortened")
            elif rect.width() + 1 < bar.tabSizeHint(i).width():
                out.append(f"tab {text!r} needs {bar.tabSizeHint(i).width()} px, has {rect.width()}")
            elif rect.intersects(shown) and not shown.contains(rect) and _inked(bar, rect.intersected(shown)):
                out.append(f"tab {text!r} is shown in part (the bar scrolls)")
    return out


def _inked(bar, rect) -> bool:
    """True when the part `rect` of the bar shows text: more than 0.5% of its pixels read at 3:1 or more
    against the part's median colour (an undrawn tab shows the bar's bare background)."""
    import numpy as np

    from trinity_desktop.audit_contrast import _luminance, _pixels, _ratio

    pixels = _pixels(bar.grab(rect).toImage()).reshape(-1, 3)
    if not len(pixels):
        return False
    lum = _luminance(pixels)
    return float(np.mean(_ratio(lum, float(np.median(lum))) >= 3.0)) > 0.005


def cut_form_values(root) -> list[str]:
    """Combo-box, spin-box and line-edit values under `root` wider than the box that shows them."""
    from PySide6 import QtWidgets

    style_of = QtWidgets.QStyle
    out = [f"{_name(w)}: its box is cut by the form's width" for w in _cut_by_viewport(root)]
    for combo in root.findChildren(QtWidgets.QComboBox):
        if not combo.isVisible() or not combo.currentText():
            continue
        option = QtWidgets.QStyleOptionComboBox()
        combo.initStyleOption(option)
        field = combo.style().subControlRect(style_of.ComplexControl.CC_ComboBox, option,
                                             style_of.SubControl.SC_ComboBoxEditField, combo)
        need = combo.fontMetrics().horizontalAdvance(combo.currentText())
        if need > field.width() + 1:
            out.append(f"{_name(combo)}: {combo.currentText()!r} needs {need} px, its box shows {field.width()}")
    for edit in root.findChildren(QtWidgets.QLineEdit):
        text = edit.text() or edit.placeholderText()   # an empty box shows its hint: read whole, or cut
        if not edit.isVisible() or not text:
            continue
        margins = edit.textMargins()
        room = edit.contentsRect().width() - margins.left() - margins.right() - 4   # QLineEdit's own margin
        need = edit.fontMetrics().horizontalAdvance(text)
        if need > room + 1 or (not edit.text() and is_shortened(text)):
            out.append(f"{_name(edit)}: {text!r} needs {need} px, its box shows {room}")
    return out


def _cut_by_viewport(root) -> list:
    """Form fields that reach past the right edge of the scroll area showing them (the value is cut there)."""
    from PySide6 import QtCore, QtWidgets

    out = []
    for area in root.findChildren(QtWidgets.QScrollArea):
        viewport = area.viewport()
        fields = area.findChildren(QtWidgets.QComboBox) + area.findChildren(QtWidgets.QAbstractSpinBox)
        for field in fields:
            if not field.isVisible() or field in out:
                continue
            right = field.mapTo(viewport, QtCore.QPoint(field.width(), 0)).x()
            if right > viewport.width() + 1:
                out.append(field)
    return out


def _name(widget) -> str:
    """How a person would point at a form widget: its accessible name, else the label beside it."""
    from PySide6 import QtWidgets

    name = widget.accessibleName() or widget.toolTip()
    parent = widget.parentWidget()
    while not name and parent is not None:
        if isinstance(parent, (QtWidgets.QComboBox, QtWidgets.QAbstractSpinBox)):
            name = parent.accessibleName() or parent.toolTip()
        parent = parent.parentWidget()
    return plain(name)[:40] or type(widget).__name__


CELL_PAD_PX = 6   # a cell's text margins, both sides together


def cut_table_cells(root) -> list[str]:
    """Tables under `root` a person cannot read whole: one whose columns run past its width (it scrolls
    sideways), and cells whose text (a wrapped cell: its longest word) is wider than the column."""
    from PySide6 import QtCore, QtGui, QtWidgets

    out = []
    for view in root.findChildren(QtWidgets.QTableView):
        if not view.isVisible() or view.model() is None:
            continue
        name = _name(view)
        if view.horizontalScrollBar().maximum() > 0:
            out.append(f"table {name}: its columns run past its width (it scrolls sideways)")
        model = view.model()
        for col in range(model.columnCount()):
            if view.isColumnHidden(col):
                continue
            room = view.columnWidth(col) - CELL_PAD_PX
            for row in range(model.rowCount()):
                index = model.index(row, col)
                text = str(model.data(index) or "")
                font = model.data(index, QtCore.Qt.ItemDataRole.FontRole)
                metrics = QtGui.QFontMetrics(font if isinstance(font, QtGui.QFont) else view.font())
                # a wrapped cell breaks at spaces, zero-width spaces and after hyphens (Qt's line breaking),
                # never inside a word
                parts = re.split(r"\s+|\u200b|(?<=-)", text) if view.wordWrap() else text.splitlines()
                widest = max(parts, key=metrics.horizontalAdvance, default="")
                if metrics.horizontalAdvance(widest) > room:
                    out.append(f"table {name}: {widest[:40]!r} is wider than its column ({room} px)")
                    break
    return out
