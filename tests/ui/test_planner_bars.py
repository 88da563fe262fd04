"""The planner's Pareto error bars (ui/pareto_bars.py): p05-p95 of each layout's time, computed on the worker
thread after the search, bracketing the dots, hidden with the bands toggle."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate
from trinity_desktop.model.search.uncertainty import FRONT_SAMPLES, propagate, time_bands
from trinity_desktop.ui import pareto_bars
from trinity_desktop.ui.planner_panel import PlannerPanel


def _bands_on(sc):
    return propagate(sc, samples=16, sensitivity=False)  # any bands: the toggle is on


def _ready(qtbot, panel):
    qtbot.waitUntil(lambda: panel.plan is not None and not panel.cancel_button.isEnabled()
                    and panel.bars.computed(panel._xy), timeout=120_000)


@pytest.fixture
def threads(monkeypatch):
    """Record the thread each error-bar computation runs on."""
    seen = []

    def recorded(*args, **kw):
        seen.append(threading.current_thread() is threading.main_thread())
        return time_bands(*args, **kw)

    monkeypatch.setattr(pareto_bars, "time_bands", recorded)
    return seen


def test_training_bars_bracket_each_dot_and_come_off_the_gui_thread(shown_panel, qtbot, threads):
    sc = default_scenario()
    panel = shown_panel(PlannerPanel, evaluate(sc), size=(1300, 650))
    panel.set_bands(_bands_on(sc))
    _ready(qtbot, panel)
    assert threads and not any(threads)  # on the planner's worker, never on the GUI thread
    front = panel._points
    ref = time_bands([c.scenario for c in front], samples=FRONT_SAMPLES)
    item = panel.bars.item
    assert item.isVisible()
    o = item.opts
    xs, ys = panel._view_xy()[:, 0], panel._view_xy()[:, 1]
    np.testing.assert_allclose(o["x"], xs)
    lo, hi = o["y"] - o["height"] / 2, o["y"] + o["height"] / 2  # log10 seconds (the step-time axis is log)
    np.testing.assert_allclose(10 ** lo, [b.p05 for b in ref], rtol=1e-9)
    np.testing.assert_allclose(10 ** hi, [b.p95 for b in ref], rtol=1e-9)
    for c, b in zip(front, ref, strict=True):
        assert b.p05 <= c.time_per_step_s <= b.p95  # each dot inside its own bar (likely values, here true)
    assert np.all(lo <= ys) and np.all(ys <= hi)
    (_, _), (y0, y1) = panel.front_plot.getViewBox().viewRange()
    assert y0 <= lo.min() and hi.max() <= y1  # no bar is cut by the view
    i = len(front) // 2
    text = panel.hover_text_at(xs[i], ys[i])
    assert "step time p05–p95" in text and "nan" not in text.lower()


def test_bars_hide_with_the_toggle_without_moving_the_view(shown_panel, qtbot):
    sc = default_scenario()
    panel = shown_panel(PlannerPanel, evaluate(sc), size=(1300, 650))
    panel.set_bands(_bands_on(sc))
    _ready(qtbot, panel)
    view = panel.front_plot.getViewBox().viewRange()
    panel.set_bands(None)
    assert not panel.bars.item.isVisible()
    x, y = panel._view_xy()[0]
    assert "p05" not in panel.hover_text_at(x, y)
    assert panel.front_plot.getViewBox().viewRange() == view
    panel.set_bands(_bands_on(sc))
    assert panel.bars.item.isVisible()


def test_serving_bars_are_horizontal_on_the_time_per_token(shown_panel, qtbot):
    sc = default_scenario().replace(kind="decode", gpus=8, batch=8)
    panel = shown_panel(PlannerPanel, evaluate(sc), size=(1300, 650))
    panel.set_bands(_bands_on(sc))
    _ready(qtbot, panel)
    o = panel.bars.item.opts
    assert o["height"] is None and o["width"] is not None
    lo, hi = (o["x"] - o["width"] / 2) / 1e3, (o["x"] + o["width"] / 2) / 1e3
    tpot = np.array([c.tpot_s for c in panel._points])
    assert np.all(lo <= tpot) and np.all(tpot <= hi) and np.all(hi > lo)
    np.testing.assert_allclose(o["y"], [c.tokens_per_s_per_gpu for c in panel._points])


def test_a_new_search_makes_the_bars_stale(shown_panel, qtbot):
    sc = default_scenario()
    panel = shown_panel(PlannerPanel, evaluate(sc), size=(1300, 650))
    panel.set_bands(_bands_on(sc))
    _ready(qtbot, panel)
    first = panel.bars.bands
    panel.update_results(evaluate(sc.replace(global_batch=sc.global_batch * 2)))  # the job changed
    _ready(qtbot, panel)
    assert panel.bars.bands is not first and len(panel.bars.bands) == len(panel._points)
    assert all(math.isfinite(b.p95) for b in panel.bars.bands)


def test_bars_follow_the_theme(shown_panel, qtbot):
    from trinity_desktop.ui import theme

    sc = default_scenario()
    panel = shown_panel(PlannerPanel, evaluate(sc), size=(1300, 650))
    panel.set_bands(_bands_on(sc))
    _ready(qtbot, panel)

    def pen():
        return panel.bars.item.opts["pen"].color().name()

    assert pen() == theme.THEMES["light"]["plot_fg"].lower()
    try:
        theme.apply_theme("dark", panel)
        assert pen() == theme.THEMES["dark"]["plot_fg"].lower()
    finally:
        theme.apply_theme("light", panel)
    assert pen() == theme.THEMES["light"]["plot_fg"].lower()
