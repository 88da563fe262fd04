"""A panel that cannot draw a scenario says so in place: a note across its top instead of an exception.

`update_or_explain(panel, results)` is how the main window and presentation mode feed panels. A problem in one
panel (a value outside the range one of its views handles) never reaches the event loop, never stops the other
panels, and goes away with the next scenario the panel can draw. The note takes the theme's tool-tip colours.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

NOTE_NAME = "panel_problem"


def _note(panel: QtWidgets.QWidget, create: bool) -> QtWidgets.QLabel | None:
    note = panel.findChild(QtWidgets.QLabel, NOTE_NAME, QtCore.Qt.FindChildOption.FindDirectChildrenOnly)
    if note is None and create:
        note = QtWidgets.QLabel(panel)
        note.setObjectName(NOTE_NAME)
        note.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        note.setWordWrap(True)
        note.setMargin(8)
        note.setAutoFillBackground(True)
        note.setBackgroundRole(QtGui.QPalette.ColorRole.ToolTipBase)
        note.setForegroundRole(QtGui.QPalette.ColorRole.ToolTipText)
        note.setAccessibleName("Panel problem")
        note.setToolTip("This panel cannot draw the current scenario; the other panels still show it")
    return note


def show_problem(panel: QtWidgets.QWidget, text: str) -> None:
    note = _note(panel, create=True)
    note.setText(text)
    note.setFixedWidth(max(panel.width(), 200))
    note.adjustSize()
    note.move(0, 0)
    note.show()
    note.raise_()


def clear_problem(panel: QtWidgets.QWidget) -> None:
    note = _note(panel, create=False)
    if note is not None:
        note.hide()


def problem_text(panel: QtWidgets.QWidget) -> str:
    """The note shown on the panel now, or ""."""
    note = _note(panel, create=False)
    return note.text() if note is not None and not note.isHidden() else ""


def update_or_explain(panel: QtWidgets.QWidget, results) -> bool:
    """`panel.update_results(results)`; any error becomes a note on the panel. True when the panel drew."""
    try:
        panel.update_results(results)
    except Exception as exc:  # noqa: BLE001 - the contract: a panel never raises into the event loop
        show_problem(panel, f"This panel cannot show this scenario: {exc}")
        return False
    clear_problem(panel)
    return True
