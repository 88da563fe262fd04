"""The first-run page: what the AI Trinity is, the example decks one click away, and the 60-second tour.

The page lies over the centre of the window (the docks keep their layout under it) until it is closed, a
deck is opened or the tour starts; closing it is remembered (`welcome/seen` in the settings). Help ▸ Welcome
shows it again. `TRINITY_FIRST_RUN=1` shows it at start-up whatever the settings (to check or time it).
"""

from __future__ import annotations

import json
import os

from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.deck import example_decks
from trinity_desktop.tour import Tour
from trinity_desktop.ui.theme import RESOURCE_COLORS, RESOURCE_LABELS

SENTENCES = (
    "Every AI workload leans on three resources at once: compute (the arithmetic), bandwidth (moving bytes "
    "through memory, links and the network) and memory (holding the weights, activations and caches).",
    "They are coupled: recomputation spends compute to save memory, compression spends compute to save "
    "bandwidth, offloading spends bandwidth to save memory, so easing one pressure raises another.",
    "Trinity Desktop computes the three pressures of your model on your hardware from published formulas, "
    "places the workload in the triangle and shows which resource binds.",
)
SEEN_KEY = "welcome/seen"


class TriangleGlyph(QtWidgets.QWidget):
    """The triangle: one corner per resource, in the resource's colour, with its name."""

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 (Qt name)
        return QtCore.QSize(230, 190)

    def paintEvent(self, _event) -> None:  # noqa: N802 (Qt name)
        painter = QtGui.QPainter(self)
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        w, h = self.width(), self.height()
        metrics = painter.fontMetrics()
        top, left, right = QtCore.QPointF(w / 2, 36), QtCore.QPointF(40, h - 34), QtCore.QPointF(w - 40, h - 34)
        text = self.palette().color(QtGui.QPalette.ColorRole.WindowText)
        painter.setPen(QtGui.QPen(text, 2))
        painter.drawPolygon(QtGui.QPolygonF([top, left, right]))
        for corner, name, below in ((top, "compute", False), (left, "bandwidth", True), (right, "memory", True)):
            painter.setPen(QtCore.Qt.PenStyle.NoPen)
            painter.setBrush(QtGui.QColor(RESOURCE_COLORS[name]))
            painter.drawEllipse(corner, 9, 9)
            label = RESOURCE_LABELS[name]
            painter.setPen(text)
            x = corner.x() - metrics.horizontalAdvance(label) / 2
            y = corner.y() + 26 if below else corner.y() - 14
            painter.drawText(QtCore.QPointF(max(2.0, min(x, w - 2 - metrics.horizontalAdvance(label))), y), label)
        painter.end()


def deck_cards() -> list[tuple[str, int, object]]:
    """(title, slide count, path) of each example deck, read from the files (no scenario is evaluated)."""
    cards = []
    for path in example_decks():
        with open(path, encoding="utf-8") as f:
            deck = json.load(f).get("deck") or {}
        cards.append((deck.get("title") or path.stem.replace("_", " ").capitalize(), len(deck.get("slides", [])), path))
    return cards


class WelcomePage(QtWidgets.QFrame):
    deckRequested = QtCore.Signal(object)   # the deck file's path
    tourRequested = QtCore.Signal()
    closeRequested = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("WelcomePage")
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setAccessibleName("Welcome")
        title = QtWidgets.QLabel("The AI Trinity: compute, bandwidth, memory")
        font = title.font()
        font.setPointSize(font.pointSize() + 6)
        font.setBold(True)
        title.setFont(font)
        title.setWordWrap(True)
        about = QtWidgets.QLabel(" ".join(SENTENCES))
        about.setWordWrap(True)
        about.setAccessibleName("What the AI Trinity is")
        intro = QtWidgets.QHBoxLayout()
        intro.addWidget(about, 1)
        intro.addWidget(TriangleGlyph())

        cards = QtWidgets.QGridLayout()
        self.card_buttons: list[QtWidgets.QPushButton] = []
        for i, (deck_title, count, path) in enumerate(deck_cards()):
            button = QtWidgets.QPushButton(f"{deck_title}\n{count} slides")
            button.setToolTip(f"Open the example talk “{deck_title}” ({count} slides); F5 presents it")
            button.setAccessibleName(f"Open the example deck {deck_title}")
            button.setMinimumHeight(2 * button.fontMetrics().lineSpacing() + 18)
            button.clicked.connect(lambda _on=False, p=path: self.deckRequested.emit(p))
            cards.addWidget(button, i // 2, i % 2)
            self.card_buttons.append(button)

        self.tour_button = QtWidgets.QPushButton("Take the 60-second tour")
        self.tour_button.setToolTip("The Scenario form, the triangle, the roofline and the planner, in turn")
        self.tour_button.setDefault(True)
        self.tour_button.clicked.connect(self.tourRequested)
        close = QtWidgets.QPushButton("Start exploring")
        close.setToolTip("Close this page (Help ▸ Welcome shows it again)")
        close.clicked.connect(self.closeRequested)
        actions = QtWidgets.QHBoxLayout()
        actions.addWidget(self.tour_button)
        actions.addStretch(1)
        actions.addWidget(close)

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(24, 18, 24, 18)
        layout.addWidget(title)
        layout.addLayout(intro)
        layout.addWidget(QtWidgets.QLabel("Example talks (one click opens each):"))
        layout.addLayout(cards)
        layout.addStretch(1)
        layout.addLayout(actions)


class Welcome(QtCore.QObject):
    """Shows the welcome page over the window's centre docks and keeps it there across resizes."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.page: WelcomePage | None = None
        self._wanted = False   # shown, or to be shown with the window
        self.tour = Tour(window)
        if os.environ.get("TRINITY_FIRST_RUN") == "1":
            self.show()

    def offer(self) -> None:
        """Show the page on a first run (nothing in the settings says it was closed before)."""
        settings = self.window.settings
        if settings is not None and not settings.value(SEEN_KEY, False, type=bool):
            self.show()

    def show(self) -> None:
        if self.page is None:
            self.page = WelcomePage(self.window)
            self.page.deckRequested.connect(self._open_deck)
            self.page.tourRequested.connect(self._start_tour)
            self.page.closeRequested.connect(self.close)
            self.window.installEventFilter(self)
        self._wanted = True
        self._place()
        self.page.show()
        self.page.raise_()

    def is_shown(self) -> bool:
        return self.page is not None and self.page.isVisible()

    def close(self) -> None:
        self._wanted = False
        if self.page is not None:
            self.page.hide()
        if self.window.settings is not None:
            self.window.settings.setValue(SEEN_KEY, True)

    def _open_deck(self, path) -> None:
        self.close()
        self.window.workspace.open_path(path)

    def _start_tour(self) -> None:
        self.close()
        self.tour.start()

    def _place(self) -> None:
        """Over the centre docks (right of the Scenario form), inset a little."""
        win = self.window
        centre = [d.geometry() for n, d in win.docks.items()   # a dock behind a tab is moved off the window
                  if n not in win.EDITING_DOCKS and d.isVisible() and win.rect().contains(d.geometry())]
        area = centre[0] if centre else win.rect()
        for rect in centre[1:]:
            area = area.united(rect)
        self.page.setGeometry(area.adjusted(24, 24, -24, -24))

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        kinds = (QtCore.QEvent.Type.Resize, QtCore.QEvent.Type.LayoutRequest, QtCore.QEvent.Type.Show)
        if event.type() in kinds and self._wanted:
            QtCore.QTimer.singleShot(0, self._place)
        return False
