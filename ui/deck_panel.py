"""The Slides dock: the talk deck as a list; add a slide from the current state, reorder, retitle, caption.

The panel only shows a deck and reports what the user asked for; the app edits the deck.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from trinity_desktop.ui.wrap_layout import WrapLayout

EMPTY_TEXT = ("No deck yet. Add a slide from what is on screen (Ctrl+M), or open an example talk: the button "
              "below, or File ▸ Open example deck.")


class DeckPanel(QtWidgets.QWidget):
    addRequested = QtCore.Signal()             # a slide from the current state, after the selected one
    updateRequested = QtCore.Signal(int)       # replace slide i with the current state
    removeRequested = QtCore.Signal(int)
    moveRequested = QtCore.Signal(int, int)    # from, to
    slideActivated = QtCore.Signal(int)        # show slide i
    titleEdited = QtCore.Signal(int, str)
    captionEdited = QtCore.Signal(int, str)
    presentRequested = QtCore.Signal(int)      # start presenting at slide i
    exampleRequested = QtCore.Signal(object)   # open the example deck at this path

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self._updating = False
        self.deck_title = QtWidgets.QLabel(EMPTY_TEXT)
        self.deck_title.setWordWrap(True)
        self.deck_title.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # the deck's title as typed, never as HTML
        self.deck_title.setStyleSheet("font-weight: bold;")
        self.examples_button = QtWidgets.QPushButton("Open an example talk")
        self.examples_button.setToolTip("Open one of the example talks shipped with the app (F5 presents it)")
        self.examples_button.setAccessibleName("Open an example talk")
        self.examples_menu = QtWidgets.QMenu(self.examples_button)
        self.examples_button.setMenu(self.examples_menu)
        self.examples_button.setVisible(False)
        self.list = QtWidgets.QListWidget()
        self.list.setAccessibleName("Slides")
        self.list.setToolTip("Slides of the talk deck; double-click to show a slide")
        self.list.setDragDropMode(QtWidgets.QAbstractItemView.DragDropMode.InternalMove)
        self.list.model().rowsMoved.connect(self._rows_moved)
        self.list.currentRowChanged.connect(self._row_changed)
        self.list.itemDoubleClicked.connect(lambda item: self.slideActivated.emit(self.list.row(item)))

        buttons = WrapLayout(spacing=6)   # wraps in a narrow dock rather than widening it
        self.buttons = {}
        for key, text, tip in (("add", "Add", "Add a slide from the current scenario and layout (Ctrl+M)"),
                               ("update", "Update", "Replace the selected slide with the current state"),
                               ("remove", "Remove", "Remove the selected slide"),
                               ("up", "↑", "Move the selected slide up"),
                               ("down", "↓", "Move the selected slide down"),
                               ("present", "Present", "Present from the selected slide (F5)")):
            button = QtWidgets.QPushButton(text)
            button.setToolTip(tip)
            button.setAccessibleName(tip.split(" (")[0])
            buttons.addWidget(button)
            self.buttons[key] = button
        self.buttons["add"].clicked.connect(self.addRequested)
        self.buttons["update"].clicked.connect(lambda: self._with_row(self.updateRequested.emit))
        self.buttons["remove"].clicked.connect(lambda: self._with_row(self.removeRequested.emit))
        self.buttons["up"].clicked.connect(lambda: self._with_row(lambda i: self._move(i, i - 1)))
        self.buttons["down"].clicked.connect(lambda: self._with_row(lambda i: self._move(i, i + 1)))
        self.buttons["present"].clicked.connect(lambda: self.presentRequested.emit(max(self.list.currentRow(), 0)))

        self.title_edit = QtWidgets.QLineEdit()
        self.title_edit.setPlaceholderText("Slide title")
        self.title_edit.setToolTip("Title shown above the slide in presentation mode")
        self.title_edit.setAccessibleName("Slide title")
        self.title_edit.editingFinished.connect(
            lambda: self._with_row(lambda i: self.titleEdited.emit(i, self.title_edit.text())))
        self.caption_edit = QtWidgets.QPlainTextEdit()
        self.caption_edit.setPlaceholderText("Caption: what the audience should see on this slide")
        self.caption_edit.setToolTip("Caption shown under the title in presentation mode. Names in braces are "
                                     "filled with the slide's numbers: {memory}, {step_time}, {binding}, "
                                     "{compute_pressure}, {kv_cache}, {token_time}, {prev_step_time} ...")
        self.caption_edit.setAccessibleName("Slide caption")
        self.caption_edit.setMaximumHeight(90)
        self._caption_timer = QtCore.QTimer(self, singleShot=True, interval=600)
        self._caption_timer.timeout.connect(
            lambda: self._with_row(lambda i: self.captionEdited.emit(i, self.caption_edit.toPlainText())))
        self.caption_edit.textChanged.connect(lambda: None if self._updating else self._caption_timer.start())

        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(self.deck_title)
        layout.addWidget(self.examples_button, 0, QtCore.Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.title_edit)
        layout.addWidget(self.caption_edit)
        self._slides = ()

    def set_examples(self, examples) -> None:
        """The example talks the empty state offers: (title, path) pairs, in menu order."""
        self.examples_menu.clear()
        for title, path in examples:
            self.examples_menu.addAction(title, lambda p=path: self.exampleRequested.emit(p))
        self.examples_button.setVisible(not self._slides and bool(examples))

    def _with_row(self, fn) -> None:
        row = self.list.currentRow()
        if 0 <= row < self.list.count():
            fn(row)

    def _move(self, i: int, j: int) -> None:
        if 0 <= j < self.list.count():
            self.moveRequested.emit(i, j)

    def _rows_moved(self, _parent, start, _end, _dest, row) -> None:
        if not self._updating:
            self.moveRequested.emit(start, row - 1 if row > start else row)

    def _row_changed(self, row: int) -> None:
        self._updating = True
        try:
            slide = self._slides[row] if 0 <= row < len(self._slides) else None
            self.title_edit.setText(slide.title if slide else "")
            self.caption_edit.setPlainText(slide.caption if slide else "")
        finally:
            self._updating = False

    def show_deck(self, deck, current: int = -1) -> None:
        """Show `deck` (a trinity_desktop deck value, or None) and select slide `current`."""
        self._updating = True
        try:
            self._slides = deck.slides if deck is not None else ()
            self.deck_title.setText(deck.title if deck is not None else EMPTY_TEXT)
            self.list.clear()
            for i, slide in enumerate(self._slides):
                item = QtWidgets.QListWidgetItem(f"{i + 1}. {slide.title or '(untitled)'}")
                item.setToolTip(slide.caption)
                self.list.addItem(item)
            for key in ("update", "remove", "up", "down", "present"):
                self.buttons[key].setEnabled(bool(self._slides))
            self.examples_button.setVisible(not self._slides and not self.examples_menu.isEmpty())
        finally:
            self._updating = False
        row = current if 0 <= current < len(self._slides) else (0 if self._slides else -1)
        self.list.setCurrentRow(row)
        self._row_changed(row)

    def slide_titles(self) -> list[str]:
        return [slide.title for slide in self._slides]
