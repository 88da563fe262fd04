"""Talk decks and presentation mode: slides from the current state, reordering, F5 / PageDown / Esc."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.main_window import MainWindow
from trinity_desktop.presentation import PLOT_ZOOM, PRESENTATION_FONT_PT, zoom_for
from trinity_desktop.store import ScenarioStore
from trinity_desktop.transitions import interpolate


@pytest.fixture
def window(qtbot):
    win = MainWindow(ScenarioStore(default_scenario()), None)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.talk.presenter.stop()


def make_deck(win):
    win.talk.add_slide()                       # slide 1: the default training scenario
    win.store.edit(zero=3)
    win.docks["heatmap"].hide()
    win.talk.add_slide()                       # slide 2: ZeRO-3, heatmap hidden
    win.panels["deck"].list.setCurrentRow(1)
    win.store.edit(kind="decode", gpus=8, batch=8)
    win.talk.add_slide()                       # slide 3: decode
    return win.talk.deck


def test_add_reorder_and_caption_slides(window):
    deck = make_deck(window)
    assert len(deck.slides) == 3
    assert [s.scenario.zero for s in deck.slides[:2]] == [1, 3]
    assert deck.slides[2].scenario.kind == "decode"
    assert "dock_heatmap" not in deck.slides[1].docks and "dock_heatmap" in deck.slides[0].docks
    panel = window.panels["deck"]
    panel.moveRequested.emit(2, 0)
    assert window.talk.deck.slides[0].scenario.kind == "decode"
    panel.captionEdited.emit(0, "Decode streams the weights")
    assert window.talk.deck.slides[0].caption == "Decode streams the weights"
    assert panel.slide_titles() == [s.title for s in window.talk.deck.slides]


def test_f5_presents_pagedown_advances_esc_leaves(window, qtbot):
    make_deck(window)
    window.panels["deck"].list.setCurrentRow(0)
    QTest.keyClick(window, QtCore.Qt.Key.Key_F5)
    presenter = window.talk.presenter
    assert presenter.active and presenter.index == 0
    assert not window.menuBar().isVisible()
    assert window.store.scenario.zero == 1
    assert QtWidgets.QApplication.instance().font().pointSize() >= PRESENTATION_FONT_PT
    assert presenter.title_label.text() == window.talk.deck.slides[0].title
    QTest.keyClick(window, QtCore.Qt.Key.Key_PageDown)
    assert presenter.index == 1 and window.store.scenario.zero == 3
    assert not window.docks["heatmap"].isVisible()  # the slide's dock set
    QTest.keyClick(window, QtCore.Qt.Key.Key_Space)
    assert presenter.index == 2 and window.store.scenario.kind == "decode"
    QTest.keyClick(window, QtCore.Qt.Key.Key_PageUp)
    assert presenter.index == 1
    qtbot.wait(400)  # let the transition finish: the panels end on the slide's own numbers
    expected = {k: v / 1e9 for k, v in window.store.results.memory.items()}
    assert window.breakdown.memory_values() == pytest.approx(expected)
    QTest.keyClick(window, QtCore.Qt.Key.Key_Escape)
    assert not presenter.active
    assert window.menuBar().isVisible()
    assert QtWidgets.QApplication.instance().font().pointSize() < PRESENTATION_FONT_PT


def test_presentation_zooms_plots(window):
    import pyqtgraph as pg

    make_deck(window)
    view = window.breakdown.findChildren(pg.GraphicsView)[0]
    window.talk.present(0)
    for _ in range(3):
        QtWidgets.QApplication.processEvents()
    zoom = zoom_for(view.width(), view.height())
    assert 1.0 <= zoom <= PLOT_ZOOM
    assert zoom_for(1800, 900) == PLOT_ZOOM and zoom_for(500, 300) == 1.0
    assert view.range.width() == pytest.approx(view.width() / zoom, rel=0.02)
    window.talk.presenter.stop()
    assert view.range.width() == pytest.approx(view.width(), rel=0.02)


def test_present_without_slides_says_so(window):
    assert window.talk.present() is False
    assert "Ctrl+M" in window.statusBar().currentMessage()


def test_transition_interpolates_shared_numbers():
    from trinity_desktop.model import evaluate

    a = evaluate(default_scenario())
    b = evaluate(default_scenario().replace(zero=3))
    mid = interpolate(a, b, 0.5)
    assert mid.memory["weights"] == pytest.approx((a.memory["weights"] + b.memory["weights"]) / 2)
    assert interpolate(a, b, 1.0) is b
    decode = evaluate(default_scenario().replace(kind="decode", gpus=8))
    assert interpolate(a, decode, 0.5) is decode  # nothing to glide between


def test_shortcut_overlay_lists_every_shortcut(window):
    QTest.keyClick(window, QtCore.Qt.Key.Key_F1)
    overlay = window.shortcuts_overlay
    assert overlay is not None and overlay.isVisible()
    keys = {k for k, _ in overlay.rows()}
    for needed in ("F5", "F11", "Ctrl+Z", "Ctrl+M", "F1"):
        assert any(needed in k for k in keys), needed
    assert any("Page Down" in k for k in keys)


def test_theme_switch_recolours_plots(window):
    import pyqtgraph as pg

    window.set_theme("dark")
    view = window.breakdown.findChildren(pg.GraphicsView)[0]
    assert view.backgroundBrush().color().name().lower() == "#1e1e1e"
    assert QtWidgets.QApplication.instance().palette().color(QtGui.QPalette.ColorRole.Window).name() == "#2b2b2b"
    window.set_theme("light")
    assert view.backgroundBrush().color().name().lower() == "#ffffff"


def test_curves_glide_between_slides(window, qtbot):
    """A curve computed from the scenario (the roofline's decode trace) moves point by point over ~300 ms."""
    from trinity_desktop.transitions import CurveTween

    window.store.edit(kind="decode", gpus=8, batch=8)
    window.arrange(["roofline"])
    window.talk.add_slide()
    window.store.edit(hardware=window.hardware["h200-sxm"])
    window.talk.add_slide()
    window.store.undo_stack.undo()
    tween = CurveTween(window)
    window.store.edit(hardware=window.hardware["h200-sxm"])
    assert tween.capture_after() > 0  # some roofline curves changed shape-preserving
    item, (x0, y0), (x1, y1) = tween.pairs[0]
    tween.apply(0.5)
    xs, ys = item.getOriginalDataset()
    assert ys == pytest.approx((y0 + y1) / 2)
    tween.apply(1.0)
    assert item.getOriginalDataset()[1] == pytest.approx(y1)
    window.talk.present(0)
    QTest.keyClick(window, QtCore.Qt.Key.Key_PageDown)
    assert window.talk.presenter._curves is not None  # gliding
    qtbot.waitUntil(lambda: window.talk.presenter._curves is None, timeout=5000)
