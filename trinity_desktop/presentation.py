"""Presentation mode: a deck on a projector, driven by a clicker.

F5 starts, Esc leaves, F11 toggles full screen. PageDown / Right / Space go forward, PageUp / Left back
(the keys presenter clickers send). The presentation style enlarges fonts and zooms every plot (text and
pens grow together), shows the slide's title and caption, and changed values glide for ~300 ms.

A slide shows exactly its own state: `reset_transient_state` clears what editing or another slide left
behind (technique ticks on the triangle, the flow's stepping position, added outcome variants, keyboard
focus rings, the linked focus) before the slide's scenario and focus are applied. While presenting, docks
carry a plain title (no float or close buttons) and no tab bar is shown (slides never tab their panels);
leaving restores the editing layout, fonts, title bars, menu and status bar. `render_slides` draws every
slide as presented (title, caption, panels) for `--present-to` and the deck export.
"""

from __future__ import annotations

import time

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.captions import slide_caption
from trinity_desktop.slide_controls import HiddenControls
from trinity_desktop.transitions import DURATION_MS, CurveTween, interpolate
from trinity_desktop.ui.flow_timeline import prefetch
from trinity_desktop.ui.panel_problem import update_or_explain
from trinity_desktop.ui.panel_protocol import StageView
from trinity_desktop.ui.presentation_protocol import AddedVariantsView, IdleWaiter, PathView, StepPlayer

PRESENTATION_FONT_PT = 14     # widget text in presentation mode (panel controls: readable, and they fit)
TITLE_PT, CAPTION_PT = 28, 20  # the slide's title and caption
COUNTER_PT = 14               # the slide number ("3 / 8"): read, not announced
PLOT_ZOOM = 1.5               # plots drawn at up to 1.5x: fonts, markers and pens grow together
PREFETCH_AFTER_MS = 1000      # the deck's flow timelines are laid out ahead from a second after the start
MIN_LOGICAL_SIZE = (600, 330)  # ... but never laid out smaller than this, so labels keep their room
NEXT_KEYS = ("PgDown", "Right", "Space", "Down")
PREVIOUS_KEYS = ("PgUp", "Left", "Up", "Backspace")


def zoom_for(width: float, height: float) -> float:
    """Presentation zoom of a plot this size: PLOT_ZOOM where there is room, less (down to 1) where the
    zoomed layout would be smaller than MIN_LOGICAL_SIZE."""
    room = min(width / MIN_LOGICAL_SIZE[0], height / MIN_LOGICAL_SIZE[1])
    return float(min(PLOT_ZOOM, max(1.0, room)))


class _PlotZoom(QtCore.QObject):
    """Keeps a pyqtgraph view zoomed across resizes (its scene is laid out at size / zoom, then scaled). The
    zoom is the slide's one factor (`Presenter.shared_zoom`), so every panel of a slide has one text scale."""

    def __init__(self, view: pg.GraphicsView, factor):
        super().__init__(view)
        self.view = view
        self.factor = factor   # () -> the slide's zoom
        self._applied: QtCore.QRectF | None = None   # the scene rect set last (None: the view's own range)
        self._pending = False
        view.installEventFilter(self)
        self.apply()

    def apply(self) -> None:
        """Lay the scene out at size / zoom; a rect already set is not set again (each setting relays out
        every plot item of the view)."""
        self._pending = False
        size = self.view.size()
        factor = self.factor()
        rect = QtCore.QRectF(0, 0, size.width() / factor, size.height() / factor)
        if rect != self._applied:
            self._applied = rect
            pg.GraphicsView.setRange(self.view, rect, padding=0, disableAutoPixel=True)  # not PlotWidget's own

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QtCore.QEvent.Type.Resize and not self._pending:  # a burst of resizes: one apply
            self._pending = True
            QtCore.QTimer.singleShot(0, self.apply)
        return False

    @classmethod
    def on(cls, view: pg.GraphicsView, factor) -> _PlotZoom:
        """The view's zoom, made on its first slide and kept (a child of the view) for the next ones."""
        zoom = view.findChild(cls)
        if zoom is None:
            return cls(view, factor)
        zoom.factor = factor
        view.installEventFilter(zoom)
        zoom.apply()
        return zoom

    def remove(self) -> None:
        self.view.removeEventFilter(self)
        self._applied = None
        self.view.autoPixelRange = True
        pg.GraphicsView.setRange(self.view, QtCore.QRectF(0, 0, self.view.width(), self.view.height()),
                                 padding=0, disableAutoPixel=False)


class Presenter(QtCore.QObject):
    slideChanged = QtCore.Signal(int)
    activeChanged = QtCore.Signal(bool)

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.deck = None
        self.index = -1
        self.active = False
        self._zooms: list[_PlotZoom] = []
        self._saved: dict = {}
        self._banner = self._make_banner()
        self._shortcuts = []
        for keys, slot in ((NEXT_KEYS, self.next), (PREVIOUS_KEYS, self.previous), (("Esc",), self.stop)):
            for key in keys:
                shortcut = QtGui.QShortcut(QtGui.QKeySequence(key), window)
                shortcut.setContext(QtCore.Qt.ShortcutContext.ApplicationShortcut)
                shortcut.setEnabled(False)
                shortcut.activated.connect(slot)
                self._shortcuts.append(shortcut)
        self._animation = QtCore.QVariantAnimation(self, startValue=0.0, endValue=1.0, duration=DURATION_MS)
        self._animation.valueChanged.connect(self._frame)
        self._animation.finished.connect(lambda: self._frame(1.0))
        self._glide = None
        self._curves: CurveTween | None = None
        self._title_bars: list[QtWidgets.QDockWidget] = []
        self._controls = HiddenControls()

    def _make_banner(self) -> QtWidgets.QToolBar:
        bar = QtWidgets.QToolBar("Slide", self.window)
        bar.setObjectName("presentation_banner")
        bar.setMovable(False)
        box = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(box)
        layout.setContentsMargins(16, 8, 16, 8)
        self.title_label = QtWidgets.QLabel()
        self.title_label.setWordWrap(True)   # a long title wraps onto a second line, never cut or elided
        self.title_label.setAccessibleName("Slide title")
        self.caption_label = QtWidgets.QLabel()
        self.caption_label.setWordWrap(True)
        self.caption_label.setAccessibleName("Slide caption")
        self.counter_label = QtWidgets.QLabel()
        for label in (self.title_label, self.caption_label):
            label.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # slide text is shown as typed, never as HTML
        self.counter_label.setAccessibleName("Slide number")
        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.title_label, 1)
        top.addWidget(self.counter_label, 0, QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignTop)
        layout.addLayout(top)
        layout.addWidget(self.caption_label)
        box.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Maximum)
        layout.setSpacing(4)
        self.caption_label.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding,
                                         QtWidgets.QSizePolicy.Policy.Preferred)
        bar.addWidget(box)
        self._banner_box = box
        bar.hide()
        return bar

    def fit_banner(self) -> None:
        """The banner takes the height its own slide's title and caption need at the window's width (a toolbar
        otherwise keeps the height of the first slide it showed, cutting a longer caption or wasting room)."""
        box = self._banner_box
        width = max(self.window.width() - 8, 200)
        height = box.layout().totalHeightForWidth(width)
        if height > 0 and box.height() != height:
            box.setFixedHeight(height)
            self._banner.layout().invalidate()   # the tool bar (and its dock area) shrink with it, not only grow
            self._banner.setFixedHeight(self._banner.sizeHint().height())

    # --- mode ----------------------------------------------------------------------------------
    def start(self, deck, index: int = 0) -> bool:
        if deck is None or not deck.slides:
            return False
        self.deck = deck
        if not self.active:
            self.active = True
            win = self.window
            app = QtWidgets.QApplication.instance()
            self._saved = {"font": app.font(), "state": win.saveState(), "menu": win.menuBar().isVisible(),
                           "status": win.statusBar().isVisible()}
            font = QtGui.QFont(app.font())
            font.setPointSize(PRESENTATION_FONT_PT)
            app.setFont(font)
            self.title_label.setStyleSheet(f"font-size: {TITLE_PT}pt; font-weight: bold;")
            self.caption_label.setStyleSheet(f"font-size: {CAPTION_PT}pt;")
            self.counter_label.setStyleSheet(f"font-size: {COUNTER_PT}pt;")
            fit_to_screen(win)
            win.addToolBar(QtCore.Qt.ToolBarArea.TopToolBarArea, self._banner)
            self._banner.show()
            win.menuBar().hide()
            win.statusBar().hide()
            self._plain_title_bars()
            for shortcut in self._shortcuts:
                shortcut.setEnabled(True)
            self._zoom_views()
            self.activeChanged.emit(True)
        self.go(index, animate=False)
        QtCore.QTimer.singleShot(0, self._rezoom)  # after the slide's docks have their sizes
        flows = [s.scenario for s in deck.slides if "dock_flow" in s.docks]   # long timelines, laid out ahead
        QtCore.QTimer.singleShot(PREFETCH_AFTER_MS, lambda: prefetch(flows))   # ... once this slide has painted
        return True

    def _zoom_views(self) -> None:
        """Zoom every plot view, those of panels built since the last slide too."""
        zoomed = {id(z.view) for z in self._zooms}
        self._zooms += [_PlotZoom.on(view, self.shared_zoom) for view in self.window.findChildren(pg.GraphicsView)
                        if id(view) not in zoomed]

    def shared_zoom(self) -> float:
        """The slide's one zoom: the smallest that every visible plot of the slide can take (zoom_for)."""
        sizes = [z.view.size() for z in self._zooms if z.view.isVisible()]
        return min((zoom_for(s.width(), s.height()) for s in sizes), default=PLOT_ZOOM)

    def _rezoom(self) -> None:
        self._zoom_views()
        self.fit_banner()
        if self.active:
            fit_to_screen(self.window)   # a slide's layout may have grown the window (a long caption at first)
        for zoom in self._zooms:
            zoom.apply()

    def stop(self) -> None:
        if not self.active:
            return
        self.active = False
        self._animation.stop()
        win = self.window
        for shortcut in self._shortcuts:
            shortcut.setEnabled(False)
        for zoom in self._zooms:
            zoom.remove()
        self._zooms = []
        self._controls.restore()
        QtWidgets.QApplication.instance().setFont(self._saved["font"])
        self._banner.hide()
        win.removeToolBar(self._banner)
        for dock in self._title_bars:
            dock.setTitleBarWidget(None)  # hidden and kept (a child of the dock) for the next presentation
        self._title_bars = []
        win.menuBar().setVisible(self._saved["menu"])
        win.statusBar().setVisible(self._saved["status"])
        win.restoreState(self._saved["state"])
        if win.isFullScreen():
            win.showNormal()
        QtCore.QTimer.singleShot(0, win.hide_stale_tab_bars)
        self.activeChanged.emit(False)

    def _plain_title_bars(self) -> None:
        """Each dock's title as a plain label: no float or close buttons on a slide."""
        for dock in self.window.docks.values():
            label = dock.findChild(QtWidgets.QLabel, "slide_panel_title",
                                   QtCore.Qt.FindChildOption.FindDirectChildrenOnly)
            if label is None:  # made on the first presentation, kept for the next ones
                label = QtWidgets.QLabel(dock)
                label.setObjectName("slide_panel_title")
                label.setContentsMargins(6, 2, 6, 2)
                label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
            title = dock.property("fullTitle") or dock.windowTitle()
            label.setText(title)
            label.setAccessibleName(f"{title} (panel title)")
            dock.setTitleBarWidget(label)
            self._title_bars.append(dock)

    def hide_tab_bars(self) -> None:
        """Slides lay their panels out side by side, never tabbed: any tab bar Qt still shows is stale."""
        if not self.active:
            return
        for bar in self.window.findChildren(QtWidgets.QTabBar):
            if bar.parent() is self.window:
                bar.hide()

    def toggle_full_screen(self) -> None:
        win = self.window
        win.showNormal() if win.isFullScreen() else win.showFullScreen()

    # --- slides --------------------------------------------------------------------------------
    def next(self) -> None:
        if self.active and self.index + 1 < len(self.deck.slides):
            self.go(self.index + 1)

    def previous(self) -> None:
        if self.active and self.index > 0:
            self.go(self.index - 1)

    def go(self, index: int, animate: bool = True) -> None:
        slide = self.deck.slides[index]
        self.index = index
        win = self.window
        self.title_label.setText(slide.title)
        self.counter_label.setText(f"{index + 1} / {len(self.deck.slides)}")
        reset_transient_state(win)
        win.show_slide_layout(slide)
        QtCore.QTimer.singleShot(0, self._rezoom)
        QtCore.QTimer.singleShot(0, self.hide_tab_bars)
        before = win.store.results
        self._animation.stop()
        curves = CurveTween(win) if animate else None
        win.store.set_scenario(slide.scenario, f"Slide {index + 1}")
        target = win.store.results
        self.caption_label.setText(slide_caption(self.deck, index, target))   # the numbers of this slide
        self.fit_banner()
        if animate and target.scenario != before.scenario:
            self._glide = (before, target)
            self._frame(0.0)  # show the old values before the first repaint, then glide to the new ones
            curves.capture_after()
            self._curves = curves
            curves.apply(0.0)
            self._animation.start()
        win.store.set_focus(*slide.focus)
        open_flow_at(win, slide)
        follow_sweep(win, slide)
        self._controls.hide_in(win.slide_panels())   # panels built for this slide too
        self.slideChanged.emit(index)

    def _frame(self, t) -> None:
        if self._glide is None or not self.active:
            return
        before, target = self._glide
        frame = interpolate(before, target, float(t))
        for panel in self.window.result_panels():
            if panel.isVisible():  # only what the audience sees is redrawn frame by frame
                update_or_explain(panel, frame)
        if self._curves is not None:
            self._curves.apply(float(t))
        if float(t) >= 1.0:
            self._glide = None
            self._curves = None



def reset_transient_state(window) -> None:
    """Clear what editing or an earlier slide left on screen that is not part of a slide: technique ticks on
    the triangle, the flow's stepping position and playback, variants added to the outcomes, the keyboard
    focus (its focus ring) and the linked focus. Panels offer these by method (ui/presentation_protocol.py); a
    panel without one is left."""
    focused = QtWidgets.QApplication.focusWidget()
    if focused is not None:
        focused.clearFocus()
    for panel in window.panels.built().values():  # a panel not built yet holds no such state
        if isinstance(panel, PathView):
            panel.show_path(())
        if isinstance(panel, AddedVariantsView):
            panel.clear_added()
        if isinstance(panel, StepPlayer):
            panel.timer.stop()
            panel.set_detailed(False)
            panel.zoom_check.setChecked(False)  # a slide shows the whole step, not the first phase zoomed
            panel.select(0)
    for panel in window.panels.built().values():  # ... and no panel follows a flow stage (as at start-up)
        if isinstance(panel, StageView):
            panel.show_stage("", {})
    window.store.set_focus("", "")


def fit_to_screen(window) -> None:
    """A window larger than its screen is sized back to the screen's free area (a slide laid out past the
    screen's edge is not what the audience sees)."""
    screen = window.screen()
    if screen is None:
        return
    room, frame = screen.availableGeometry(), window.frameGeometry()
    if room.contains(frame):
        return
    extra_w, extra_h = frame.width() - window.width(), frame.height() - window.height()
    window.resize(min(window.width(), room.width() - extra_w), min(window.height(), room.height() - extra_h))
    window.move(max(room.x(), min(frame.x(), room.right() - window.frameGeometry().width() + 1)),
                max(room.y(), min(frame.y(), room.bottom() - window.frameGeometry().height() + 1)))


def open_flow_at(window, slide) -> None:
    """Highlight the flow phase the slide names, zoomed to it (e.g. "forward", where the pipeline bubble shows);
    when it names none (or one this scenario does not have), the longest phase, on the whole step, so the slide
    opens on where the step's time goes (a pipeline's bubble is in its forward and backward phases), not on the
    first phase's data load; the other panels keep the whole step (they follow a phase the slide names)."""
    if "dock_flow" not in slide.docks:
        return
    flow = window.panels["flow"]   # built now if it never was
    if flow.step_count() == 0:     # not drawn yet (its dock was just shown)
        update_or_explain(flow, window.store.results)
    names = flow.phase_names()
    if slide.flow_phase in names:
        flow.zoom_check.setChecked(True)
        flow.select(names.index(slide.flow_phase))
    elif names:
        flow.select(longest_phase(flow))
        for panel in window.panels.built().values():   # the flow's highlight only: no other panel follows it
            if isinstance(panel, StageView):
                panel.show_stage("", {})


def longest_phase(flow) -> int:
    """Index of the flow's longest phase (the first of equals)."""
    durations = [flow.current_phase_of(name).duration_s for name in flow.phase_names()]
    return max(range(len(durations)), key=lambda i: (durations[i], -i))


def follow_sweep(window, slide) -> None:
    """The roofline's decode sweep at the slide's own batch (it otherwise keeps the first scenario's)."""
    if "dock_roofline" in slide.docks and slide.scenario.kind == "decode" and window.panels.is_built("roofline"):
        window.panels["roofline"].set_sweep("batch", float(slide.scenario.batch))


def settle(seconds: float) -> None:
    """Process events for `seconds` (the slide transition, then the zoom settles)."""
    app = QtWidgets.QApplication.instance()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        app.processEvents()
        QtCore.QThread.msleep(20)


def settle_background_work(window) -> None:
    """Let panels that compute in a worker thread (the planner's search) finish and draw before a grab."""
    waiting = [p for p in window.panels.built().values() if isinstance(p, IdleWaiter)]
    for _ in range(2 if waiting else 0):   # twice: drawing a plan can start more work (the planner's error bars)
        for panel in waiting:
            panel.wait_idle()
        for _ in range(5):
            QtWidgets.QApplication.processEvents()


def render_slides(window, scale: int = 1, settle_s: float = 0.6):
    """Present the window's deck and yield (index, QImage) for every slide as the audience sees it: the
    banner with title, caption and number, and the slide's panels; no menus, status bar, dock buttons or tab
    bars. Leaves presentation mode (and the editing layout) at the end."""
    from trinity_desktop.ui.export import render_widget

    presenter = window.talk.presenter
    deck = window.talk.deck
    if deck is None or not deck.slides:
        raise ValueError("the deck has no slides")
    was_active = presenter.active
    try:
        for i in range(len(deck.slides)):
            if i == 0:
                presenter.start(deck, 0)
            else:
                presenter.go(i, animate=False)
            settle(settle_s)
            settle_background_work(window)
            presenter.hide_tab_bars()
            QtWidgets.QApplication.processEvents()
            yield i, render_widget(window, scale)
    finally:
        if not was_active:
            presenter.stop()
