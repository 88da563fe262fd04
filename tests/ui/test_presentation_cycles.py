"""Starting and stopping presentation mode again and again keeps nothing (issue 16, item 20).

The reliability pass saw each start/stop keep about 5 tab-bar wrappers and 36 KB. Two kinds of objects piled up:
- the app's own: a plain title label per dock and a zoom filter per plot, made anew at every start and
  handed to deleteLater at every stop; now made once and kept for the next presentation;
- Qt's own (empty tab bars and geometry animations of QMainWindow's layout): Qt hands them to deleteLater too,
  so they are gone once the event loop runs, as it does in the app; a script that only calls processEvents()
  never returns to an event loop and sees them pile up.
"""

from __future__ import annotations

from collections import Counter

import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtWidgets

from trinity_desktop.defaults import default_scenario
from trinity_desktop.main_window import MainWindow
from trinity_desktop.presentation import _PlotZoom
from trinity_desktop.store import ScenarioStore


@pytest.fixture
def window(qtbot):
    win = MainWindow(ScenarioStore(default_scenario()), None)
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    qtbot.waitExposed(win)
    win.talk.add_slide()
    win.store.edit(kind="decode", gpus=8, batch=8)
    win.talk.add_slide()
    yield win
    win.talk.presenter.stop()


def _cycle(win, settle) -> None:
    win.talk.present(0)
    settle()
    win.talk.presenter.next()
    settle()
    win.talk.presenter.stop()
    settle()


def _own_objects(win) -> Counter:
    """Title labels per dock, and zoom filters per plot view (panels are built lazily, so views come later)."""
    views = win.findChildren(pg.GraphicsView)
    return Counter({"title labels per dock": len(win.findChildren(QtWidgets.QLabel, "slide_panel_title"))
                    / len(win.docks),
                    "most zooms on one plot view": max(len(view.findChildren(_PlotZoom)) for view in views)})


def test_the_apps_own_objects_are_made_once_even_without_an_event_loop(window):
    """Failed before: +1 title label per dock and +1 zoom per plot at every start (deleteLater never ran)."""
    app = QtWidgets.QApplication.instance()

    def settle():
        for _ in range(3):
            app.processEvents()

    _cycle(window, settle)
    assert _own_objects(window) == {"title labels per dock": 1, "most zooms on one plot view": 1}
    for _ in range(4):
        _cycle(window, settle)
    assert _own_objects(window) == {"title labels per dock": 1, "most zooms on one plot view": 1}


def test_start_stop_cycles_in_the_event_loop_keep_no_objects(window, qtbot):
    def settle():
        qtbot.wait(30)  # a real event loop: deferred deletions run, as in the app

    for _ in range(2):  # warm-up: lazily built panels, caches
        _cycle(window, settle)
    before = (len(window.findChildren(QtCore.QObject)), len(window.findChildren(QtWidgets.QTabBar)))
    for _ in range(6):
        _cycle(window, settle)
    after = (len(window.findChildren(QtCore.QObject)), len(window.findChildren(QtWidgets.QTabBar)))
    assert after == before, f"(QObjects, tab bars) before {before}, after 6 more cycles {after}"


def test_title_labels_are_plain_text_and_hidden_after_stop(window, qtbot):
    _cycle(window, lambda: qtbot.wait(30))
    window.talk.present(0)
    qtbot.wait(30)
    labels = window.findChildren(QtWidgets.QLabel, "slide_panel_title")
    assert {label.text() for label in labels} >= {window.docks["roofline"].windowTitle()}
    assert all(label.textFormat() == QtCore.Qt.TextFormat.PlainText for label in labels)
    window.talk.presenter.stop()
    qtbot.wait(30)
    assert not any(label.isVisible() for label in labels)
    assert all(dock.titleBarWidget() is None for dock in window.docks.values())
