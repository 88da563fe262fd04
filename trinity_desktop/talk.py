"""The talk deck: the Slides dock, adding slides from the current state, and presentation mode."""

from __future__ import annotations

import base64

from PySide6 import QtCore, QtGui

from trinity_desktop.deck import MAX_SLIDE_PANELS, Deck, Slide
from trinity_desktop.presentation import Presenter, follow_sweep, open_flow_at, reset_transient_state
from trinity_desktop.welcome import deck_cards


class TalkController(QtCore.QObject):
    deckChanged = QtCore.Signal(object)  # the Deck (or None)

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.deck: Deck | None = None
        self.presenter = Presenter(window)

    @property
    def panel(self):
        """The Slides panel: the window builds it when its dock is first shown (or at this first use)."""
        return self.window.panels["deck"]

    def attach(self, panel) -> None:
        """Connect the Slides panel once it is built (the main window calls this)."""
        panel.addRequested.connect(self.add_slide)
        panel.updateRequested.connect(self.update_slide)
        panel.removeRequested.connect(lambda i: self.set_deck(self.deck.remove_slide(i), max(i - 1, 0)))
        panel.moveRequested.connect(lambda i, j: self.set_deck(self.deck.move_slide(i, j), j))
        panel.titleEdited.connect(lambda i, text: self.set_deck(self.deck.with_title(i, text), i))
        panel.captionEdited.connect(lambda i, text: self.set_deck(self.deck.with_caption(i, text), i))
        panel.slideActivated.connect(self.show_slide)
        panel.presentRequested.connect(self.present)
        panel.exampleRequested.connect(lambda path: self.window.workspace.open_path(path))
        panel.set_examples([(title, path) for title, _count, path in deck_cards()])
        self.presenter.slideChanged.connect(panel.list.setCurrentRow)
        if self.deck is not None:
            panel.show_deck(self.deck, -1)

    def actions(self) -> list[QtGui.QAction]:
        win = self.window
        add = QtGui.QAction("Add &slide from current state", win, shortcut=QtGui.QKeySequence("Ctrl+M"))
        add.setToolTip("Append the current scenario, visible panels and layout as a slide")
        add.triggered.connect(self.add_slide)
        present = QtGui.QAction("&Present deck", win, shortcut=QtGui.QKeySequence("F5"))
        present.setToolTip("Present the deck from the selected slide; Esc leaves")
        present.triggered.connect(lambda: self.present(max(self.panel.list.currentRow(), 0)))
        full = QtGui.QAction("&Full screen", win, shortcut=QtGui.QKeySequence("F11"))
        full.setToolTip("Toggle full screen")
        full.triggered.connect(self.presenter.toggle_full_screen)
        return [add, present, full]

    def set_deck(self, deck: Deck | None, current: int = -1) -> None:
        self.deck = deck
        self.panel.show_deck(deck, current)
        self.deckChanged.emit(deck)

    def current_slide(self) -> Slide:
        """A slide capturing what is on screen now: scenario, visible docks, layout, focus."""
        win = self.window
        docks = tuple(d.objectName() for name, d in win.docks.items()
                      if d.isVisible() and name not in win.EDITING_DOCKS)[:MAX_SLIDE_PANELS]   # what a slide lays out
        layout = base64.b64encode(bytes(win.saveState(win.layout_version))).decode("ascii")
        sc = win.store.scenario
        title = f"{sc.model.name} on {sc.gpus} × {sc.hardware.name}"
        return Slide(title=title, caption="", scenario=sc, docks=docks, layout=layout, focus=win.store.focus,
                     flow_phase=self._flow_phase(docks))

    def _flow_phase(self, docks: tuple[str, ...]) -> str:
        """The flow phase highlighted now, when the flow is on the slide and a phase other than the first is."""
        if "dock_flow" not in docks or not self.window.panels.is_built("flow"):
            return ""
        flow = self.window.panels["flow"]
        phase = flow.current_phase()
        return phase.name if phase is not None and flow.current_index() > 0 else ""

    def add_slide(self) -> None:
        deck = self.deck or Deck(title="Untitled talk")
        row = self.panel.list.currentRow()
        index = row + 1 if 0 <= row < len(deck.slides) else None
        deck = deck.add_slide(self.current_slide(), index)
        self.set_deck(deck, len(deck.slides) - 1 if index is None else index)

    def update_slide(self, i: int) -> None:
        old = self.deck.slides[i]
        new = self.current_slide().replace(title=old.title, caption=old.caption)
        self.set_deck(self.deck.replace_slide(i, new), i)

    def show_slide(self, i: int) -> None:
        """Show slide i for editing: its layout, scenario and focus, and nothing left from before."""
        slide = self.deck.slides[i]
        reset_transient_state(self.window)
        self.window.show_slide_layout(slide)
        self.window.store.set_scenario(slide.scenario, f"Show slide {i + 1}")
        self.window.store.set_focus(*slide.focus)
        open_flow_at(self.window, slide)
        follow_sweep(self.window, slide)

    def present(self, index: int = 0) -> bool:
        if self.deck is None or not self.deck.slides:
            self.window.statusBar().showMessage("No slides yet: add one with Ctrl+M", 6000)
            return False
        return self.presenter.start(self.deck, min(max(index, 0), len(self.deck.slides) - 1))
