"""The planner dock: the search runs in a worker thread, the Pareto dots and the map show the planner's numbers,
clicking a dot loads its layout (one undoable edit in the main window), Cancel and stale searches."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.search.planner import plan_training
from trinity_desktop.ui import theme
from trinity_desktop.ui.planner_panel import PlannerPanel, edit_for, hatch_segments
from trinity_desktop.ui.plot_widgets import title_text
from trinity_desktop.ui.units import fmt_seconds


def _done(qtbot, panel):
    qtbot.waitUntil(lambda: panel.plan is not None and not panel.cancel_button.isEnabled(), timeout=60000)
    return panel.plan


@pytest.fixture
def panel(shown_panel, qtbot):
    p = shown_panel(PlannerPanel, evaluate(default_scenario()), size=(1300, 650))
    _done(qtbot, p)
    return p


def test_front_and_map_are_the_planners(panel):
    sc = default_scenario()
    plan = panel.plan
    ref = plan_training(sc.model, sc.hardware, sc.gpus, sc.global_batch, sc.seq_len, map_axes=("pp", "tp"))
    assert [c.layout for c in plan.pareto] == [c.layout for c in ref.pareto]
    xs, ys = panel.scatter.getData()
    assert list(xs) == pytest.approx([c.memory_per_gpu_bytes / 1e9 for c in ref.pareto])
    assert list(ys) == pytest.approx([math.log10(c.time_per_step_s) for c in ref.pareto])  # log axis
    colours = [b.color().name() for b in panel.scatter.data["brush"]]
    assert colours == [theme.RESOURCE_COLORS[c.results.bottleneck].lower() for c in ref.pareto]
    np.testing.assert_array_equal(plan.map_time, ref.map_time)
    # hatched cells are exactly those where nothing fits
    hx, _ = panel.hatch.getData()
    assert len(hx) == 6 * int(np.count_nonzero(~np.isfinite(ref.map_time)))
    assert "feasible" in panel.status.text() and "nan" not in panel.status.text().lower()
    # the titles state the findings: the fastest layout of how many fit, the map's best cell
    best, j = ref.best, ref.as_json()
    assert title_text(panel.front_plot).endswith(f"is fastest: {fmt_seconds(best.time_per_step_s)} per step "
                                                 f"({j['feasible']:,} of {j['configurations_evaluated']:,} layouts fit)")
    t = np.where(np.isfinite(ref.map_time), ref.map_time, np.inf)
    i, k = np.unravel_index(int(np.argmin(t)), t.shape)
    assert title_text(panel.map_plot).startswith(f"Best at PP {ref.map_values[0][i]}, TP {ref.map_values[1][k]}: "
                                                 f"{fmt_seconds(float(t[i, k]))} per step")


def test_hover_shows_the_layout_and_click_requests_it(panel, qtbot):
    best = panel.plan.best
    i = panel._points.index(best)
    x, y = panel._view_xy()[i]
    text = panel.hover_text_at(x, y)
    assert f"TP{best.layout['tp']} PP{best.layout['pp']}" in text and "click to load" in text
    assert panel.hover_text_at(x + 1e6, y) == ""
    with qtbot.waitSignal(panel.editRequested) as sig:
        panel.click_point(i)
    assert sig.args[0] == edit_for(best.layout)
    loaded = evaluate(default_scenario().replace(**sig.args[0]))
    assert (loaded.time_total, loaded.memory_total) == (best.time_per_step_s, best.memory_per_gpu_bytes)
    assert "best step time" in panel.map_text_at(0.5, 0.5) or "fits" in panel.map_text_at(0.5, 0.5)


def test_layout_edit_moves_the_diamond_without_a_new_search(panel):
    generation = panel._generation
    sc = default_scenario().replace(zero=3)
    panel.update_results(evaluate(sc))
    assert panel._generation == generation
    r = evaluate(sc)
    assert list(panel.current.getData()[0]) == pytest.approx([r.memory_total / 1e9])


def test_a_new_job_cancels_the_stale_search(shown_panel, qtbot):
    p = shown_panel(PlannerPanel)
    base = default_scenario()
    p.update_results(evaluate(base.replace(global_batch=512)))
    p.update_results(evaluate(base))  # before the first finished: the first is cancelled and ignored
    plan = _done(qtbot, p)
    p.wait_idle()
    assert plan.configurations_evaluated > 0
    ref = plan_training(base.model, base.hardware, base.gpus, base.global_batch, base.seq_len)
    assert plan.best.layout == ref.best.layout
    assert p.progress.value() == 1000


def test_cancel_stops_the_search(shown_panel, qtbot):
    p = shown_panel(PlannerPanel)
    big = default_scenario().replace(model=presets.model_presets()["llama-3.1-405b"], gpus=16384, tp=8, pp=16,
                                     global_batch=2048, recompute="full")
    p.update_results(evaluate(big))
    p.cancel()
    plan = _done(qtbot, p)
    assert plan.cancelled and "Stopped after" in p.status.text()


def test_map_axes_and_inference(shown_panel, qtbot):
    p = shown_panel(PlannerPanel, evaluate(default_scenario()))
    _done(qtbot, p)
    p.x_combo.setCurrentIndex(p.x_combo.findData("micro_batch"))
    p.y_combo.setCurrentIndex(p.y_combo.findData("zero"))
    qtbot.waitUntil(lambda: p.plan.map_axes == ("micro_batch", "zero"), timeout=60000)
    assert p.plan.map_time.shape == (len(p.plan.map_values[0]), 4)
    p.plan = None
    p.update_results(evaluate(default_scenario().replace(kind="decode", gpus=8)))
    plan = _done(qtbot, p)
    assert not p.map_plot.isVisible() and plan.best is not None
    best = plan.best.layout
    assert edit_for(best) == {"gpus": best["tp"] * best["pp"], "pp": best["pp"], "batch": best["batch"],
                              "weight_dtype": best["weight_dtype"], "kv_dtype": best["kv_dtype"],
                              "kv_offload_fraction": best["kv_offload"], "attention_dp": 1, "inference_ep": 1}
    # loading a serving dot sets the scenario's GPUs to its replica's TP x PP; the budget of the search stays 8
    small = next(i for i, c in enumerate(p._points) if c.layout["tp"] * c.layout["pp"] < 8)
    generation = p._generation
    with qtbot.waitSignal(p.editRequested) as sig:
        p.click_point(small)
    p.update_results(evaluate(default_scenario().replace(kind="decode", **sig.args[0])))
    assert p._generation == generation


def test_controls_are_accessible(panel):
    for w in (panel.x_combo, panel.y_combo, panel.progress, panel.cancel_button, panel.status, panel.legend):
        assert w.accessibleName() and w.toolTip()


def test_hatch_segments_stay_in_their_cell():
    xs, ys = hatch_segments([(2, 3)])
    assert len(xs) == 6 and xs.min() >= 2 and xs.max() <= 3 and ys.min() >= 3 and ys.max() <= 4
