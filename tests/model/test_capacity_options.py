"""The capacity planner's options (#23): every replica layout meeting the targets, with the GPUs it needs for the
rate, ceil(R / r_max) x TP x PP, fewest first; the plan's layout is the first."""

from __future__ import annotations

import math

from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.search.capacity_planner import plan_capacity
from trinity_desktop.model.search.hooks import SearchHooks


def test_options_are_ranked_by_gpus_and_hand_derived():
    model, hw = model_presets()["llama-3-8b"], hardware_presets()["h100-sxm"]
    plan = plan_capacity(model, hw, 30.0, 1024, 256, ttft_slo_s=1.0, tpot_slo_s=0.03, max_replica_gpus=2,
                         gpus_per_node=8)
    assert plan.options and plan.options[0].layout == plan.layout and plan.options[0].gpus == plan.gpus
    assert len(plan.options) == plan.layouts_meeting_targets
    for o in plan.options:
        lay = o.layout
        assert lay["replicas"] == math.ceil(30.0 / o.max_rate_per_replica - 1e-12)
        assert o.gpus == lay["replicas"] * lay["tp"] * lay["pp"]
    assert [o.gpus for o in plan.options] == sorted(o.gpus for o in plan.options)
    # hand check of one option: r_max per replica x replicas covers the rate, one replica fewer does not
    o = plan.options[0]
    assert o.layout["replicas"] * o.max_rate_per_replica >= 30.0 > (o.layout["replicas"] - 1) * o.max_rate_per_replica


def test_cancel_stops_before_any_format():
    model, hw = model_presets()["llama-3-8b"], hardware_presets()["h100-sxm"]
    plan = plan_capacity(model, hw, 1.0, 512, 128, max_replica_gpus=2, hooks=SearchHooks(cancelled=lambda: True))
    assert plan.cancelled and plan.gpus is None
