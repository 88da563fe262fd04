"""The planner's map after a theme change (issue #21): its tick text, axis titles and colour bar take the new
theme's colour (a search had left them at the light theme's #222222 on a dark plot), and its best cell is ringed."""

from __future__ import annotations

import numpy as np

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate
from trinity_desktop.ui import theme
from trinity_desktop.ui.planner_map import best_cell
from trinity_desktop.ui.planner_panel import PlannerPanel


def test_map_follows_the_theme_and_rings_its_best_cell(shown_panel, qtbot):
    panel = shown_panel(PlannerPanel, evaluate(default_scenario()), size=(723, 600))
    qtbot.waitUntil(lambda: panel.plan is not None and not panel.cancel_button.isEnabled(), timeout=60000)
    cell = best_cell(panel.plan)
    t = np.asarray(panel.plan.map_time, float)
    assert cell is not None and t[cell] == np.nanmin(np.where(np.isfinite(t), t, np.nan))
    xs, ys = panel.marks.outer.getData()
    assert cell[0] < min(xs) < max(xs) < cell[0] + 1 and cell[1] < min(ys) < max(ys) < cell[1] + 1
    try:
        theme.apply_theme("dark")
        panel.marks.restyle()
        ink = theme.plot_text_color()
        for axis in (panel.map_plot.getAxis("left"), panel.map_plot.getAxis("bottom"), panel.colorbar.axis):
            assert axis.textPen().color().name() == ink.lower()
    finally:
        theme.apply_theme("light")


def test_a_theme_change_with_a_serving_plan_draws_no_map(shown_panel, qtbot):
    """A serving plan has no layout map: a theme change once raised AttributeError (no map_time) from changeEvent."""
    panel = shown_panel(PlannerPanel, evaluate(default_scenario().replace(kind="decode", gpus=8)), size=(723, 600))
    qtbot.waitUntil(lambda: panel.plan is not None and not panel.cancel_button.isEnabled(), timeout=60000)
    assert getattr(panel.plan, "map_time", None) is None and not panel.map_plot.isVisible()
    try:
        theme.apply_theme("dark")   # the theme change reaches the panel's changeEvent: nothing may raise
        qtbot.wait(50)
        assert panel.status.text()
    finally:
        theme.apply_theme("light")
