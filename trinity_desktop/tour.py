"""The 60-second tour: the Scenario form, the triangle, the roofline and the planner, highlighted in turn.

Each stop brings its dock to the front, draws a frame in the theme's highlight colour around it and a note
that says what to look at; the tour moves on by itself every `STOP_MS` (four stops, one minute) or with
Next, and Esc or End tour leaves it.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6 import QtCore, QtGui, QtWidgets

STOP_MS = 15_000


@dataclass(frozen=True)
class Stop:
    dock: str
    note: str


STOPS = (
    Stop("controls", "The Scenario: pick a model, the hardware, the parallelism and the batch. Every panel "
                     "follows each change, and Edit ▸ Undo takes it back."),
    Stop("triangle", "The triangle: the workload sits nearest the resource under the most pressure. Tick "
                     "techniques to see where each one moves it."),
    Stop("roofline", "The roofline: each kernel against the hardware's ceilings. Left of the ridge it waits "
                     "for memory, right of it for the tensor cores; the slider sweeps the decode batch."),
    Stop("planner", "The planner: every parallel layout of this job, searched in about a second. Each dot is "
                    "a layout no other beats; click one to load it."),
)


class _Frame(QtWidgets.QWidget):
    """A highlight frame over a dock; clicks pass through to the dock."""

    def __init__(self, parent: QtWidgets.QWidget):
        super().__init__(parent)
        self.setAttribute(QtCore.Qt.WidgetAttribute.WA_TransparentForMouseEvents)

    def paintEvent(self, _event) -> None:  # noqa: N802 (Qt name)
        painter = QtGui.QPainter(self)
        painter.setPen(QtGui.QPen(self.palette().color(QtGui.QPalette.ColorRole.Highlight), 4))
        painter.drawRect(self.rect().adjusted(2, 2, -2, -2))
        painter.end()


class Tour(QtCore.QObject):
    stopChanged = QtCore.Signal(int)   # the index of the stop shown, -1 when the tour ends

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.index = -1
        self._timer = QtCore.QTimer(self, singleShot=True, interval=STOP_MS)
        self._timer.timeout.connect(self.next)
        self._frame: _Frame | None = None
        self._note: QtWidgets.QFrame | None = None
        self._escape = QtGui.QShortcut(QtGui.QKeySequence("Esc"), window)
        self._escape.setEnabled(False)
        self._escape.activated.connect(self.stop)

    def active(self) -> bool:
        return self.index >= 0

    def start(self) -> None:
        self._build()
        self._escape.setEnabled(True)
        self._show(0)

    def next(self) -> None:
        if self.index + 1 < len(STOPS):
            self._show(self.index + 1)
        else:
            self.stop()

    def stop(self) -> None:
        self._timer.stop()
        self._escape.setEnabled(False)
        for widget in (self._frame, self._note):
            if widget is not None:
                widget.hide()
        self.index = -1
        self.stopChanged.emit(-1)

    def _build(self) -> None:
        if self._frame is not None:
            return
        self._frame = _Frame(self.window)
        self._note = QtWidgets.QFrame(self.window)
        self._note.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self._note.setAutoFillBackground(True)
        self._note.setAccessibleName("Tour")
        self.note_label = QtWidgets.QLabel()
        self.note_label.setWordWrap(True)
        self.step_label = QtWidgets.QLabel()
        next_button = QtWidgets.QPushButton("Next")
        next_button.clicked.connect(self.next)
        end_button = QtWidgets.QPushButton("End tour")
        end_button.clicked.connect(self.stop)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.step_label)
        buttons.addStretch(1)
        buttons.addWidget(end_button)
        buttons.addWidget(next_button)
        layout = QtWidgets.QVBoxLayout(self._note)
        layout.addWidget(self.note_label)
        layout.addLayout(buttons)

    def _show(self, index: int) -> None:
        self.index = index
        stop = STOPS[index]
        dock = self.window.docks[stop.dock]
        dock.show()
        dock.raise_()
        QtWidgets.QApplication.processEvents()
        rect = dock.geometry()
        self._frame.setGeometry(rect)
        self.note_label.setText(stop.note)
        self.step_label.setText(f"{index + 1} of {len(STOPS)}")
        width = min(max(rect.width() - 40, 260), 460)
        self._note.setFixedWidth(width)
        self._note.adjustSize()
        self._note.move(rect.left() + (rect.width() - width) // 2, rect.bottom() - self._note.height() - 20)
        for widget in (self._frame, self._note):
            widget.show()
            widget.raise_()
        self._timer.start()
        self.stopChanged.emit(index)
