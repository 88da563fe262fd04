"""The first-run page: what the AI Trinity is, three first steps, the example decks one click away, the tour.

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
    "The AI Trinity (arXiv 2601.11577) treats compute, bandwidth (to memory, between chips and to storage) and "
    "memory capacity as one coupled design space: every AI workload needs all three, and the one nearest its "
    "limit sets the pace.",
    "Easing one raises another: recomputation spends compute to save memory, compression spends compute to "
    "save bandwidth, offloading spends bandwidth to save memory.",
    "Trinity Desktop computes the three pressures of your model on your hardware from published formulas.",
)
FIRST_STEPS = (   # (key, the action, what it shows)
    ("tour", "Take the 60-second tour", "the Scenario form, the triangle, the roofline and the planner, in turn."),
    ("explore", "Edit the scenario", "pick a model and a GPU in the Scenario form: every panel and the status "
                                     "bar follow."),
    ("deck", "Open an example talk", "one click on a card below; F5 presents it, Esc leaves."),
)
SEEN_KEY = "welcome/seen"
MIN_POINTS, MAX_POINTS = 11, 22   # body text: the window's own size on a laptop, up to projector size
TITLE_SCALE = 1.6


class TriangleGlyph(QtWidgets.QWidget):
    """The triangle: one corner per resource, in the resource's colour, with its name (sized by the font)."""

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 (Qt name)
        line = self.fontMetrics().lineSpacing()
        return QtCore.QSize(12 * line, 10 * line)

    def minimumSizeHint(self) -> QtCore.QSize:  # noqa: N802 (Qt name)
        return self.sizeHint()

    def paintEvent(self, _event) -> None:  # noqa: N802 (Qt name)
        painter = QtGui.QPainter(self)
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        w, h = self.width(), self.height()
        metrics = painter.fontMetrics()
        line = metrics.lineSpacing()
        dot = line * 0.45
        inset = max(metrics.horizontalAdvance("Bandwidth") / 2 + 2, 2 * dot)
        top, left, right = (QtCore.QPointF(w / 2, 1.8 * line), QtCore.QPointF(inset, h - 1.8 * line),
                            QtCore.QPointF(w - inset, h - 1.8 * line))
        text = self.palette().color(QtGui.QPalette.ColorRole.WindowText)
        painter.setPen(QtGui.QPen(text, max(2.0, line / 10)))
        painter.drawPolygon(QtGui.QPolygonF([top, left, right]))
        for corner, name, below in ((top, "compute", False), (left, "bandwidth", True), (right, "memory", True)):
            painter.setPen(QtCore.Qt.PenStyle.NoPen)
            painter.setBrush(QtGui.QColor(RESOURCE_COLORS[name]))
            painter.drawEllipse(corner, dot, dot)
            label = RESOURCE_LABELS[name]
            painter.setPen(text)
            x = corner.x() - metrics.horizontalAdvance(label) / 2
            y = corner.y() + dot + metrics.ascent() + 2 if below else corner.y() - dot - metrics.descent() - 2
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


def _label(text: str, name: str = "") -> QtWidgets.QLabel:
    label = QtWidgets.QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
    if name:
        label.setAccessibleName(name)
    return label


class WelcomePage(QtWidgets.QFrame):
    """What the AI Trinity is, three first steps, and one card per example deck; `fit` sizes the text to the
    page, from MIN_POINTS on a laptop to MAX_POINTS on a projector, as large as fits whole."""

    deckRequested = QtCore.Signal(object)   # the deck file's path
    tourRequested = QtCore.Signal()
    exploreRequested = QtCore.Signal()
    closeRequested = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("WelcomePage")
        self.setAutoFillBackground(True)
        self.setAccessibleName("Welcome")
        self.points = 0
        self.title = _label("The AI Trinity: compute, bandwidth and memory")
        self.about = _label(" ".join(SENTENCES), "What the AI Trinity is")
        intro = QtWidgets.QHBoxLayout()
        intro.addWidget(self.about, 1)
        intro.addWidget(TriangleGlyph(), 0, QtCore.Qt.AlignmentFlag.AlignTop)

        self.headings = [_label("Where to start")]
        steps = QtWidgets.QGridLayout()
        steps.setColumnStretch(2, 1)
        self.step_buttons: dict[str, QtWidgets.QPushButton] = {}
        for row, (key, action, rest) in enumerate(FIRST_STEPS):
            steps.addWidget(QtWidgets.QLabel(f"{row + 1}."), row, 0, QtCore.Qt.AlignmentFlag.AlignTop)
            if key == "deck":
                head = _label(action)
                self.headings.append(head)
            else:
                head = QtWidgets.QPushButton(action)
                head.setToolTip(f"{action}: {rest}")
                self.step_buttons[key] = head
            steps.addWidget(head, row, 1, QtCore.Qt.AlignmentFlag.AlignTop)
            steps.addWidget(_label(rest), row, 2, QtCore.Qt.AlignmentFlag.AlignVCenter)
        self.tour_button = self.step_buttons["tour"]
        self.tour_button.setDefault(True)
        self.tour_button.clicked.connect(self.tourRequested)
        self.step_buttons["explore"].setToolTip("Close this page and go to the Scenario form "
                                                "(Help ▸ Welcome shows the page again)")
        self.step_buttons["explore"].clicked.connect(self.exploreRequested)

        self.cards = QtWidgets.QGridLayout()
        self.card_buttons: list[QtWidgets.QPushButton] = []
        for i, (deck_title, count, path) in enumerate(deck_cards()):
            button = QtWidgets.QPushButton(f"{deck_title}\n{count} slides")
            button.setToolTip(f"Open the example talk “{deck_title}” ({count} slides); F5 presents it")
            button.setAccessibleName(f"Open the example deck {deck_title}")
            button.clicked.connect(lambda _on=False, p=path: self.deckRequested.emit(p))
            self.cards.addWidget(button, i // 3, i % 3)
            self.card_buttons.append(button)
        close = QtWidgets.QPushButton("Close")
        close.setToolTip("Close this page (Help ▸ Welcome shows it again)")
        close.clicked.connect(self.closeRequested)

        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addLayout(intro)
        layout.addWidget(self.headings[0])
        layout.addLayout(steps)
        layout.addSpacing(4)
        layout.addLayout(self.cards)
        layout.addStretch(1)
        layout.addWidget(close, 0, QtCore.Qt.AlignmentFlag.AlignRight)
        self.fit(MIN_POINTS)

    def text(self) -> str:
        """Every word the page shows, in reading order."""
        return "\n".join(w.text() for w in self.findChildren(QtWidgets.QWidget)
                         if isinstance(w, (QtWidgets.QLabel, QtWidgets.QPushButton)))

    def _set_points(self, points: int) -> None:
        if points == self.points:
            return
        self.points = points
        font = QtGui.QFont(self.font())
        font.setPointSize(points)
        self.setFont(font)
        bold = QtGui.QFont(font)
        bold.setBold(True)
        for heading in self.headings:
            heading.setFont(bold)
        big = QtGui.QFont(bold)
        big.setPointSize(round(points * TITLE_SCALE))
        self.title.setFont(big)
        line = QtGui.QFontMetrics(font).lineSpacing()
        margin = 2 * line
        self.layout().setContentsMargins(margin, line, margin, line)
        self.layout().setSpacing(line // 2)
        for button in self.card_buttons:
            button.setMinimumHeight(2 * line + line // 2)

    def fit(self, size: QtCore.QSize | int) -> int:
        """The largest body size (points) at which the page's text fits `size` whole (a point size: just that
        one); returns the size used."""
        if isinstance(size, int):
            self._set_points(size)
            return size
        layout = self.layout()

        def fits(points: int) -> bool:
            self._set_points(points)
            layout.invalidate()
            layout.activate()
            need = layout.totalHeightForWidth(size.width()) if layout.hasHeightForWidth() else -1
            need = need if need > 0 else layout.totalMinimumSize().height()
            return need <= size.height() and layout.totalMinimumSize().width() <= size.width()

        low, high = MIN_POINTS, MAX_POINTS   # the room needed grows with the size: a binary search
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if fits(mid) else (low, mid - 1)
        self._set_points(low)
        return self.points

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt name)
        """A frame in the theme's highlight colour: the page stands out from the docks in every theme."""
        super().paintEvent(event)
        painter = QtGui.QPainter(self)
        painter.setPen(QtGui.QPen(self.palette().color(QtGui.QPalette.ColorRole.Highlight), 2))
        painter.drawRect(QtCore.QRectF(self.rect()).adjusted(1, 1, -1, -1))
        painter.end()


class Welcome(QtCore.QObject):
    """Shows the welcome page over the window's centre docks and keeps it there across resizes."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.page: WelcomePage | None = None
        self._wanted = False   # shown, or to be shown with the window
        self._fitted = QtCore.QSize()   # the page size its text was last fitted to
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
            self.page.exploreRequested.connect(self._explore)
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

    def _explore(self) -> None:
        """Close the page and put the keyboard in the Scenario form's model box."""
        self.close()
        dock = self.window.docks.get("controls")
        if dock is not None:
            dock.show()
            dock.raise_()
        combo = getattr(self.window.panels["controls"], "model_combo", None) if dock is not None else None
        if combo is not None:
            combo.setFocus(QtCore.Qt.FocusReason.OtherFocusReason)

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
        rect = area.adjusted(24, 24, -24, -24)
        if rect.size() != self._fitted:   # trying sizes posts layout requests: fit once per size, or it loops
            self._fitted = rect.size()
            self.page.fit(rect.size())
        self.page.setGeometry(rect)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        kinds = (QtCore.QEvent.Type.Resize, QtCore.QEvent.Type.LayoutRequest, QtCore.QEvent.Type.Show)
        if event.type() in kinds and self._wanted:
            QtCore.QTimer.singleShot(0, self._place)
        return False
