"""The keyboard help overlay (F1 or ?): every shortcut of the window's actions and of presentation mode."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

PRESENTATION_KEYS = (
    ("F5", "Start presenting the deck"),
    ("Esc", "Leave presentation mode"),
    ("F11", "Toggle full screen"),
    ("Page Down, Right, Space", "Next slide (clicker forward)"),
    ("Page Up, Left", "Previous slide (clicker back)"),
    ("Left / Right in the Step-through flow", "Previous / next stage (outside presentation mode)"),
)


def action_shortcuts(window: QtWidgets.QWidget) -> list[tuple[str, str]]:
    """(keys, description) for every action under `window` that has a shortcut, sorted by description."""
    rows = {}
    for action in window.findChildren(QtGui.QAction):
        keys = ", ".join(s.toString(QtGui.QKeySequence.SequenceFormat.NativeText) for s in action.shortcuts())
        if keys:
            rows[action.text().replace("&", "")] = keys
    return sorted(((k, d) for d, k in rows.items()), key=lambda r: r[1].lower())


class ShortcutsOverlay(QtWidgets.QDialog):
    def __init__(self, window: QtWidgets.QWidget):
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        self.setAccessibleName("Keyboard shortcuts")
        self.table = QtWidgets.QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Keys", "Action"])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAccessibleName("Shortcut list")
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(self.table)
        close = QtWidgets.QPushButton("Close")
        close.setToolTip("Close this list (Esc)")
        close.clicked.connect(self.accept)
        layout.addWidget(close, alignment=QtCore.Qt.AlignmentFlag.AlignRight)
        self.resize(640, 560)
        self.refresh(window)

    def refresh(self, window: QtWidgets.QWidget) -> None:
        rows = action_shortcuts(window) + list(PRESENTATION_KEYS)
        self.table.setRowCount(len(rows))
        for i, (keys, text) in enumerate(rows):
            self.table.setItem(i, 0, QtWidgets.QTableWidgetItem(keys))
            self.table.setItem(i, 1, QtWidgets.QTableWidgetItem(text))
        self.table.resizeColumnToContents(0)

    def rows(self) -> list[tuple[str, str]]:
        return [(self.table.item(i, 0).text(), self.table.item(i, 1).text()) for i in range(self.table.rowCount())]
