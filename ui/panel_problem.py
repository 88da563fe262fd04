"""A panel that cannot draw a scenario says so in place: a note across its top instead of an exception.

`update_or_explain(panel, results)` is how the main window and presentation mode feed panels. A problem in one
panel (a value outside the range one of its views handles) never reaches the event loop, never stops the other
panels, and goes away with the next scenario the panel can draw. The note takes the theme's tool-tip colours.
`guard_event_loop(window)` does the same for anything else a panel's slots, event handlers or paint overrides
raise while the app runs.
"""

from __future__ import annotations

import sys

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


PROBLEM_CHARS = 300  # a note is a sentence, not a dump


def _panel_of(panels, tb) -> QtWidgets.QWidget | None:
    """The panel whose code raised: the innermost frame whose `self` is a panel, a widget inside one, or a
    graphics item drawn in one."""
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        owner = frame.f_locals.get("self")
        widget = None
        if isinstance(owner, QtWidgets.QWidget):
            widget = owner
        elif isinstance(owner, QtWidgets.QGraphicsItem) and owner.scene() is not None and owner.scene().views():
            widget = owner.scene().views()[0]
        while widget is not None:
            if widget in panels:
                return widget
            widget = widget.parentWidget()
    return None


def guard_event_loop(window) -> None:
    """The running app's `sys.excepthook`: an exception that escapes a slot, an event handler or a paint
    override (Qt hands those to the hook) is shown in place, as a note on the panel it came from, or on the
    status bar; the app keeps running and the terminal gets no traceback. Tests do not install it: there an
    escaped exception fails the test (tests/ui/conftest.py)."""
    previous = sys.excepthook

    def hook(kind, exc, tb) -> None:
        if issubclass(kind, (KeyboardInterrupt, SystemExit)):
            previous(kind, exc, tb)
            return
        text = " ".join(f"{kind.__name__}: {exc}".split())
        text = text if len(text) <= PROBLEM_CHARS else text[:PROBLEM_CHARS - 1] + "…"
        try:
            panel = _panel_of(set(window.panels.built().values()), tb)
            if panel is not None:
                show_problem(panel, f"This panel could not do that: {text}")
            else:
                window.statusBar().showMessage(f"That could not be done: {text}", 15000)
        except RuntimeError:  # the window is being torn down
            pass

    sys.excepthook = hook
