"""The planner never asks for more width than a 1366 x 768 half-column: its map axes, progress and Cancel sit on
one line at 723 px and wrap below that (issue #21: a fixed row made its minimum 723 px, and bringing it to the
front squeezed the Scenario form to 187 px, cutting every value)."""

from __future__ import annotations

from PySide6 import QtWidgets

from trinity_desktop.ui.planner_panel import PlannerPanel


def test_the_planner_controls_wrap(qtbot):
    panel = PlannerPanel()
    qtbot.addWidget(panel)
    panel.resize(723, 560)
    panel.show()
    QtWidgets.QApplication.processEvents()
    assert panel.minimumSizeHint().width() <= 300
    row = {w.geometry().top() for w in (panel.x_combo.parentWidget(), panel.progress, panel.cancel_button)}
    assert max(row) - min(row) < 12, "one line at 723 px"
    assert panel.x_combo.currentText() == "PP" and panel.x_combo.findText("Offload") >= 0   # short, whole
    panel.resize(420, 560)
    QtWidgets.QApplication.processEvents()
    assert panel.cancel_button.geometry().right() <= panel.width()
    assert panel.graphics.geometry().top() > panel.cancel_button.geometry().top()


def test_a_slide_shows_no_map_controls(qtbot):
    from trinity_desktop.slide_controls import HiddenControls

    panel = PlannerPanel()
    qtbot.addWidget(panel)
    panel.resize(723, 560)
    panel.show()
    hidden = HiddenControls()
    hidden.hide_in([panel])
    row = (panel.x_combo.parentWidget(), panel.y_combo.parentWidget(), panel.progress, panel.cancel_button)
    assert not any(w.isVisible() for w in row)   # no lone "×" or "100%" on a slide
    hidden.restore()
    assert all(w.isVisible() for w in row)


def test_the_charts_sit_side_by_side_when_their_area_is_wider_than_tall(qtbot):
    """On a 1366 slide the planner had a 670 × 410 chart area, stacked: front and map 90 px tall each. They now
    sit side by side there, and stay stacked in the 517 × 703 dock of the 1366 layout."""
    panel = PlannerPanel()
    qtbot.addWidget(panel)
    panel.show()
    for size, wide in (((670, 540), True), ((517, 703), False), ((1300, 500), True)):
        panel.resize(*size)
        QtWidgets.QApplication.processEvents()
        front, map_ = panel.front_plot.sceneBoundingRect(), panel.map_plot.sceneBoundingRect()
        assert (map_.left() >= front.right() - 1) == wide, size
        assert (map_.top() >= front.bottom() - 1) == (not wide), size
