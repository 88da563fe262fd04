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
