"""Panels built on first show: start-up builds only the docks in front, and a panel built late (its dock first
shown after edits) shows the same data as one built at start-up and kept up to date."""

from __future__ import annotations

import pytest
from PySide6 import QtWidgets

from trinity_desktop.defaults import default_scenario
from trinity_desktop.docks import DOCKS
from trinity_desktop.main_window import MainWindow
from trinity_desktop.store import ScenarioStore
from trinity_desktop.ui import export
from trinity_desktop.workspace import panel_plots

FRONT = {"controls", "triangle", "breakdown", "heatmap", "roofline"}  # first dock of each group
BEHIND_TABS = [s.name for s in DOCKS if s.name not in FRONT and s.name != "deck"]


def _window(qtbot):
    win = MainWindow(ScenarioStore(default_scenario()), None)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win


def _data(panel) -> list[list[dict]]:
    return [export.plot_rows(plot) for plot in panel_plots(panel)]


def test_start_up_builds_only_the_docks_in_front(qtbot):
    win = _window(qtbot)
    assert set(win.panels.built()) == FRONT
    assert len(win.panels) == len(DOCKS)  # every dock is registered, and built on demand
    win.docks["deck"].raise_()
    QtWidgets.QApplication.processEvents()
    assert win.panels.is_built("deck")
    win.talk.add_slide()  # the Slides panel built late is wired to the talk controller
    assert win.panels["deck"].list.count() == 1


@pytest.mark.parametrize("name", ["tradeoff", "flow", "residency", "outcomes"])
def test_a_panel_built_late_shows_the_same_data_as_one_built_at_start(qtbot, name):
    early, late = _window(qtbot), _window(qtbot)
    early.refresh_all()  # every panel built and drawn at start-up, then kept up to date by edits
    assert set(early.panels.built()) == {s.name for s in DOCKS} - {"deck"}
    for win in (early, late):
        win.store.edit(zero=3)
        win.store.edit(seq_len=4096, micro_batch=2)
    assert not late.panels.is_built(name)
    late.docks[name].raise_()  # first shown now: built, then drawn with the current results
    early.docks[name].raise_()
    QtWidgets.QApplication.processEvents()
    assert late.panels.is_built(name) and name not in late._stale
    rows = _data(late.panels[name])
    assert rows == _data(early.panels[name]) and any(rows)
