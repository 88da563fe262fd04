"""The trade-off explorer's numbered key: a bubble whose name finds no room beside it carries a number on the
bubble, and a key under the chart names it ("1 Activation offload to host · 2 ZeRO-2 …"). A name that does not
fit is moved into a key, never dropped to the hover. Numbers run from the largest saving down. The list of
what does not apply shows whole rows, never a row cut through its text (`fit_whole_rows`)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.ui import plot_widgets as pw

FILL_ALPHA = 150  # the bubbles' fill alpha (tradeoff_panel): a number's colour is chosen on the blended fill
NUMBER_MARGIN_PX = 1.0  # the number's box margin: its opaque box stays about a small bubble's size
SAME_PLACE_PX = 14.0  # bubbles closer than this share one number item ("2, 3"), never two texts on each other


def blended(color: str, background: str, alpha: int = FILL_ALPHA) -> tuple[float, float, float]:
    """`color` at `alpha` (0–255) over `background`, as 0–255 RGB."""
    c, b = QtGui.QColor(color), QtGui.QColor(background)
    a = alpha / 255.0
    return tuple(a * x + (1 - a) * y for x, y in zip(c.getRgb()[:3], b.getRgb()[:3], strict=True))


class NumberedKey:
    """Numbers on the unnamed bubbles of one plot and the key label that names them."""

    def __init__(self, plot: pg.PlotItem):
        self.plot = plot
        self.items: list[pg.TextItem] = []
        self.numbers: dict[str, int] = {}
        self.label = QtWidgets.QLabel("")
        self.label.setFont(pw.font())
        self.label.setWordWrap(True)  # wraps at whole words; never widens the dock
        self.label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.label.setAccessibleName("Key to the numbered bubbles")
        self.label.setVisible(False)

    def update(
        self,
        hidden: list[str],
        points: dict[str, tuple[float, float]],
        names: dict[str, str],
        saved: dict[str, float],
        color: str,
    ) -> None:
        """Number the bubbles `hidden` (keys whose name has no room) at their `points` (view coordinates),
        largest `saved` first, and name them in the key."""
        order = sorted(hidden, key=lambda k: -saved.get(k, 0.0))
        self.numbers = {key: i + 1 for i, key in enumerate(order)}
        vb = self.plot.getViewBox()
        groups: list[list[str]] = []
        for key in order:  # bubbles on one spot share a number item
            sx, sy = vb.mapViewToScene(QtCore.QPointF(*points[key])).toTuple()
            for group in groups:
                gx, gy = vb.mapViewToScene(QtCore.QPointF(*points[group[0]])).toTuple()
                if abs(gx - sx) < SAME_PLACE_PX and abs(gy - sy) < SAME_PLACE_PX:
                    group.append(key)
                    break
            else:
                groups.append([key])
        while len(self.items) < len(groups):
            item = pw.label_item(anchor=(0.5, 0.5), size=11, bold=True)
            item.textItem.document().setDocumentMargin(NUMBER_MARGIN_PX)  # a box no wider than a small bubble
            item.setZValue(14)  # over the bubbles, their ring and the lines that end under them
            self.plot.addItem(item, ignoreBounds=True)
            self.items.append(item)
        fill = blended(color, pw.plot_background())
        text_color = pw.contrast_text_color(fill)
        for i, item in enumerate(self.items):
            if i >= len(groups):
                item.setVisible(False)
                continue
            group = groups[i]
            item.setText(", ".join(str(self.numbers[k]) for k in group))
            item.setColor(text_color)
            item.fill = pg.mkBrush(QtGui.QColor(*(round(c) for c in fill)))  # opaque: a line passes under it
            item.setPos(*points[group[0]])
            item.setVisible(True)
        text = " · ".join(f"<b>{self.numbers[k]}</b> {pw.html_escape(names[k])}" for k in order)
        if text != self.label.text():
            self.label.setText(text)
        if self.label.isVisibleTo(self.label.parentWidget() or self.label) != bool(order):
            self.label.setVisible(bool(order))

    def key_text(self) -> str:
        """The key as plain text ("" when every bubble is named beside it)."""
        return QtGui.QTextDocumentFragment.fromHtml(self.label.text()).toPlainText() if self.numbers else ""


def fit_whole_rows(view: QtWidgets.QListWidget, budget_px: int) -> None:
    """Size a word-wrapped list to the whole rows that fit in `budget_px` (at least its first row): the rest
    scrolls by whole rows, and no row shows cut through its text."""
    if shiboken_deleted(view):
        return
    view.setVerticalScrollMode(QtWidgets.QAbstractItemView.ScrollMode.ScrollPerItem)
    view.doItemsLayout()
    total = 0
    for i in range(view.count()):
        h = view.visualItemRect(view.item(i)).height()
        if total and total + h > budget_px:
            break
        total += h
    height = max(total, QtGui.QFontMetrics(view.font()).lineSpacing()) + 2 * view.frameWidth()
    view.setMinimumHeight(height)
    view.setMaximumHeight(height)


def shiboken_deleted(obj) -> bool:
    """True when the Qt object behind `obj` is gone (a deferred call after the panel closed)."""
    import shiboken6

    return not shiboken6.isValid(obj)
