"""The Layout planner's capacity mode (#23, ui/planner_panel_capacity.py): a request rate and p95 targets in the
scenario, the question box on "Capacity", and the dock shows the capacity planner's fewest GPUs, its options as
dots (rate per replica across, GPUs up) and a title stating the finding; a click loads one replica."""

from __future__ import annotations

import math

import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate
from trinity_desktop.model.search.capacity_planner import CapacityPlan, plan_capacity
from trinity_desktop.ui.planner_panel import PlannerPanel
from trinity_desktop.ui.planner_panel_capacity import NO_RATE, capacity_edit
from trinity_desktop.ui.plot_widgets import title_text

SERVE = default_scenario().replace(kind="decode", gpus=8, prompt_len=1024, gen_len=256, request_rate=4.0,
                                   ttft_slo_s=2.0, tpot_slo_s=0.05)


def _capacity_panel(shown_panel, qtbot, sc):
    """A panel switched to capacity before its first scenario: one search, the capacity one (if a rate is set)."""
    p = shown_panel(PlannerPanel, None, size=(1000, 650))
    p.mode_combo.setCurrentIndex(p.mode_combo.findData("capacity"))
    p.update_results(evaluate(sc))
    if sc.request_rate > 0:
        qtbot.waitUntil(lambda: isinstance(p.plan, CapacityPlan) and not p.cancel_button.isEnabled(), timeout=60000)
    assert p.mode_combo.isVisibleTo(p) and not p.x_combo.isVisibleTo(p)  # serving: the question, not map axes
    return p


def test_capacity_mode_shows_the_fewest_gpus_and_loads_a_replica(shown_panel, qtbot):
    p, sc = _capacity_panel(shown_panel, qtbot, SERVE), SERVE
    ref = plan_capacity(sc.model, sc.hardware, 4.0, 1024, 256, ttft_slo_s=2.0, tpot_slo_s=0.05, max_replica_gpus=8,
                        chunk_tokens=sc.prefill_chunk_tokens, gpus_per_node=sc.gpus_per_node,
                        efficiency=sc.efficiency, kv_policy=sc.kv_policy, kv_window=sc.kv_window,
                        kv_sinks=sc.kv_sinks)
    plan = p.plan
    assert plan.gpus == ref.gpus and plan.layout == ref.layout
    xs, ys = p.scatter.getData()
    assert list(ys) == pytest.approx([math.log10(o.gpus) for o in ref.options])  # log axis: GPUs span decades
    assert list(xs) == pytest.approx([o.max_rate_per_replica for o in ref.options])
    assert list(p.best_ring.getData()[1]) == pytest.approx([math.log10(ref.gpus)]) and min(ys) == ys[0]
    lay = ref.layout
    assert title_text(p.front_plot).startswith(f"{ref.gpus} GPUs serve 4 req/s within p95 TTFT 2 s and TPOT 50 ms: "
                                               f"TP{lay['tp']} PP{lay['pp']} × {lay['replicas']} replica")
    assert "meet the targets" in p.status.text() and "nan" not in p.status.text().lower()
    assert p.current.getData()[0].size == 0 and not p.map_plot.isVisible()
    # hover and click: one replica of the layout, loaded without a new search (the budget stays)
    x, y = p._view_xy()[0]
    assert "GPUs for 4 req/s" in p.hover_text_at(float(x), float(y))
    with qtbot.waitSignal(p.editRequested) as sig:
        p.click_point(0)
    assert sig.args[0] == capacity_edit(p.plan.options[0])
    assert sig.args[0]["gpus"] == p.plan.layout["tp"] * p.plan.layout["pp"]
    generation = p._generation
    p.update_results(evaluate(SERVE.replace(**sig.args[0])))
    assert p._generation == generation


def test_without_a_rate_the_mode_asks_for_one(shown_panel, qtbot):
    p = _capacity_panel(shown_panel, qtbot, SERVE.replace(request_rate=0.0))
    assert p.plan is None and p.status.text() == NO_RATE
    assert title_text(p.front_plot) == "Set a request rate to find the fewest GPUs"
    p.mode_combo.setCurrentIndex(p.mode_combo.findData("layouts"))
    qtbot.waitUntil(lambda: p.plan is not None and not p.cancel_button.isEnabled(), timeout=60000)
    assert not isinstance(p.plan, CapacityPlan) and "serves the most" in title_text(p.front_plot)
