"""A row of controls that wraps onto more lines when its panel is narrow (so no panel needs a fixed width).

`WrapLayout` lays its items left to right and starts a new line where the next item would not fit; its
minimum width is that of its widest item, and it reports the height it needs for a given width
(heightForWidth), so a panel's layout gives it the extra lines. `control_row` builds one from
(caption, widget) pairs, each pair kept together on one line.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6 import QtCore, QtWidgets


class WrapLayout(QtWidgets.QLayout):
    def __init__(self, parent: QtWidgets.QWidget | None = None, spacing: int = 10, line_spacing: int = 4):
        super().__init__(parent)
        self._items: list[QtWidgets.QLayoutItem] = []
        self._spacing, self._line_spacing = spacing, line_spacing
        self.setContentsMargins(0, 0, 0, 0)

    # --- QLayout interface ---------------------------------------------------------------------
    def addItem(self, item: QtWidgets.QLayoutItem) -> None:  # noqa: N802 (Qt name)
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int):  # noqa: N802 (Qt name)
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int):  # noqa: N802 (Qt name)
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> QtCore.Qt.Orientation:  # noqa: N802 (Qt name)
        return QtCore.Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt name)
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt name)
        return self._arrange(QtCore.QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QtCore.QRect) -> None:  # noqa: N802 (Qt name)
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 (Qt name)
        width = sum(i.sizeHint().width() for i in self._items) + self._spacing * max(len(self._items) - 1, 0)
        height = max((i.sizeHint().height() for i in self._items), default=0)
        m = self.contentsMargins()
        return QtCore.QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def minimumSize(self) -> QtCore.QSize:  # noqa: N802 (Qt name)
        size = QtCore.QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QtCore.QSize(m.left() + m.right(), m.top() + m.bottom())

    # --- placement -----------------------------------------------------------------------------
    def _arrange(self, rect: QtCore.QRect, move: bool) -> int:
        """Place the items in lines inside `rect` (when `move`); return the height the lines take. Items
        that stretch share the spare width of their line."""
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        lines: list[list[QtWidgets.QLayoutItem]] = [[]]
        used = 0
        for item in self._items:
            if item.isEmpty():
                continue
            w = item.sizeHint().width()
            if lines[-1] and used + self._spacing + w > area.width():
                lines.append([])
                used = 0
            used += (self._spacing if lines[-1] else 0) + w
            lines[-1].append(item)
        y = area.y()
        for line in lines:
            if not line:
                continue
            height = max(i.sizeHint().height() for i in line)
            widths = [min(i.sizeHint().width(), area.width()) for i in line]
            spare = area.width() - sum(widths) - self._spacing * (len(line) - 1)
            stretchy = [k for k, i in enumerate(line)
                        if i.expandingDirections() & QtCore.Qt.Orientation.Horizontal]
            for k in stretchy:
                widths[k] += max(spare, 0) // len(stretchy)
            x = area.x()
            for item, w in zip(line, widths, strict=True):
                if move:
                    item.setGeometry(QtCore.QRect(x, y, max(w, item.minimumSize().width()), height))
                x += w + self._spacing
            y += height + self._line_spacing
        return y - self._line_spacing - area.y() + m.top() + m.bottom()


def captioned(caption: str, widget: QtWidgets.QWidget, font=None, stretch: bool = False) -> QtWidgets.QWidget:
    """A caption and its control on one line, as one item that wraps as a unit."""
    box = QtWidgets.QWidget()
    row = QtWidgets.QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    label = QtWidgets.QLabel(caption)
    if font is not None:
        label.setFont(font)
    label.setBuddy(widget)
    label.setProperty("editingControl", True)   # it titles its control: off the slides with it (slide_controls)
    row.addWidget(label)
    row.addWidget(widget, 1)
    if stretch:
        box.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Preferred)
    return box


def control_row(items: Iterable[QtWidgets.QWidget | tuple[str, QtWidgets.QWidget]], font=None) -> WrapLayout:
    """A WrapLayout of widgets and (caption, widget) pairs."""
    layout = WrapLayout()
    for item in items:
        layout.addWidget(captioned(item[0], item[1], font) if isinstance(item, tuple) else item)
    return layout


def interaction_hint(text: str, font=None) -> QtWidgets.QLabel:
    """What a click does ("Click a row to load it."), on its own line: shown while exploring, off the slides
    with the editing controls (an audience cannot click a projector)."""
    label = QtWidgets.QLabel(text)
    if font is not None:
        label.setFont(font)
    label.setWordWrap(True)
    label.setAccessibleName("What a click does")
    label.setProperty("editingControl", True)
    return label
