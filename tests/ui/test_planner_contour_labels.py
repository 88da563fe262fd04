"""The map's contour labels lie wholly inside the map and clear of each other and of the titles, however short
the map (issue #21: on the planner deck at 1366 x 768 the top contour's label stuck out over the map's title and
two labels overlapped)."""

from __future__ import annotations

import numpy as np
from PySide6 import QtWidgets

from trinity_desktop import session_file
from trinity_desktop.audit_text import scene_report
from trinity_desktop.deck import example_decks
from trinity_desktop.model import evaluate
from trinity_desktop.ui.planner_panel import PlannerPanel
from trinity_desktop.ui.planner_search import label_spots


def test_label_spots_keep_labels_inside_and_apart():
    line = np.array([[1.0, 6.9], [2.0, 5.0], [3.0, 2.0]])
    spots = label_spots([line, line, line], [(1.0, 1.0), (1.0, 1.0), (1.0, 9.0)], (8, 7))
    assert spots[0] == (2.0, 5.0)   # the highest point leaves no room above it (6.9 + 1 > 7)
    assert spots[1] == (3.0, 2.0)   # the next highest is taken by the first label
    assert spots[2] is None         # taller than the map: left unlabelled


def test_contour_labels_fit_a_short_map(shown_panel, qtbot):
    path = next(p for p in example_decks() if "planner" in p.name)
    _, deck = session_file.load(path)
    panel = shown_panel(PlannerPanel, evaluate(deck.slides[0].scenario), size=(723, 500))
    qtbot.waitUntil(lambda: panel.plan is not None and not panel.cancel_button.isEnabled(), timeout=60000)
    for _ in range(10):
        QtWidgets.QApplication.processEvents()
    overlaps, clipped, shortened = scene_report(panel.graphics)
    assert (overlaps, clipped, shortened) == ([], [], [])
    shown = [label for label in panel.contour_labels if label.isVisible()]
    assert shown, "at least one contour keeps its label"
    nx, ny = panel.plan.map_time.shape
    for label in shown:
        x, y = label.pos().x(), label.pos().y()
        assert 0 <= x <= nx and 0 <= y <= ny
