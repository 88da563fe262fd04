"""What holds a panel in its dock, and the dock groups' tab bars.

Chart panels fill a `DockHolder` and shrink with it; forms and lists scroll in a `DockScroll`. A dock's tab
shows its short name (`docks.DockSpec.tab_title`) whole: tab bars never elide, they scroll when a group holds
more tabs than its width, and each tab's tooltip is the panel's full title. Qt sometimes leaves stale tab
bars painted after the layout is built (splitDockWidget/tabifyDockWidget, Qt 6.11, offscreen and X11);
`tidy_tab_bars` hides them.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from trinity_desktop.ui.whole_tabs import use_whole_tabs


class DockScroll(QtWidgets.QScrollArea):
    """A panel in a frameless scroll area: a narrow dock scrolls instead of widening the window. The left
    column asks for at most `width_hint` pixels and the plots for a generous size, so the default layout
    gives the plots the room."""

    PLOT_HINT = QtCore.QSize(620, 460)

    def __init__(self, panel: QtWidgets.QWidget | None, width_hint: int | None = None):
        super().__init__()
        self._width_hint = width_hint
        if panel is not None:  # otherwise the panel is set when its dock is first shown (LazyPanels)
            self.setWidget(panel)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)

    def set_panel(self, panel: QtWidgets.QWidget) -> None:
        self.setWidget(panel)

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802 (Qt name)
        hint = super().sizeHint()
        if self._width_hint is not None:
            hint.setWidth(min(hint.width(), self._width_hint))
            return hint
        return hint.expandedTo(self.PLOT_HINT)


class DockHolder(QtWidgets.QWidget):
    """A chart dock's content: the panel fills it and shrinks with it (no scroll area); empty until the
    panel is built."""

    def __init__(self):
        super().__init__()
        self._layout = QtWidgets.QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    def set_panel(self, panel: QtWidgets.QWidget) -> None:
        self._layout.addWidget(panel)


def whole_tabs(bar: QtWidgets.QTabBar, full_titles: dict[str, str]) -> None:
    """Tabs with their whole names (scroll buttons when they do not fit; a tab shown in part is not drawn)
    and the full title as tooltip."""
    use_whole_tabs(bar)
    if bar.elideMode() != QtCore.Qt.TextElideMode.ElideNone:
        bar.setElideMode(QtCore.Qt.TextElideMode.ElideNone)
    if not bar.usesScrollButtons():
        bar.setUsesScrollButtons(True)
    for i in range(bar.count()):
        full = full_titles.get(bar.tabText(i))
        if full and bar.tabToolTip(i) != full:
            bar.setTabToolTip(i, full)


def tidy_tab_bars(window) -> None:
    """Every dock tab bar of `window` reads whole; a bar that is not live (right under its current dock), and
    whose tabs a live bar also shows or that names a hidden dock, is hidden."""
    bars = [b for b in window.findChildren(QtWidgets.QTabBar) if b.parent() is window and b.isVisible()]
    by_title = {d.windowTitle(): d for d in window.docks.values()}
    full_titles = {title: dock.property("fullTitle") or title for title, dock in by_title.items()}

    def tabs(bar):
        return {bar.tabText(i) for i in range(bar.count())}

    def live(bar):
        dock = by_title.get(bar.tabText(bar.currentIndex()))
        return (dock is not None and dock.isVisible() and abs(bar.geometry().top() - dock.geometry().bottom()) <= 8
                and abs(bar.geometry().left() - dock.geometry().left()) <= 8)

    def names_a_hidden_dock(bar):  # Qt drops the tab of a hidden dock from a live bar
        return any(by_title[t].isHidden() for t in tabs(bar) if t in by_title)

    live_bars = [b for b in bars if live(b)]
    for bar in bars:
        whole_tabs(bar, full_titles)
        if bar not in live_bars and (names_a_hidden_dock(bar) or any(tabs(bar) <= tabs(o) for o in live_bars)):
            bar.hide()
