"""The roofline and breakdown panels follow the step-through flow's highlighted stage (issue #6).

Real Results from `evaluate` and real stages from `model.stages.stages`; the expected numbers are the operating
points of `model.roofline`, the stages' own FLOPs / bytes, and hand-derived closed forms.
"""

import math
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from trinity_desktop.defaults import default_scenario  # noqa: E402
from trinity_desktop.model import Scenario, evaluate  # noqa: E402
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.views.roofline import (  # noqa: E402
    STAGE_POINT,
    roofline,  # noqa: E402
    stage_operating_point,
)
from trinity_desktop.model.views.stages import stages  # noqa: E402
from trinity_desktop.ui.breakdown_panel import BreakdownPanel, time_segments_for_stage  # noqa: E402
from trinity_desktop.ui.flow_panel import FlowPanel  # noqa: E402
from trinity_desktop.ui.roofline_panel import RooflinePanel  # noqa: E402

HW = presets.hardware_presets()
MODELS = presets.model_presets()


@pytest.fixture(scope="module")
def train():
    sc = default_scenario()
    r = evaluate(sc)
    return r, stages(sc, r)


@pytest.fixture(scope="module")
def decode():
    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1, batch=16)
    r = evaluate(sc)
    return r, stages(sc, r)


@pytest.fixture
def roof(qtbot):
    p = RooflinePanel()
    qtbot.addWidget(p)
    p.set_hardware_choices(HW)
    p.resize(1000, 650)
    p.show()
    return p


@pytest.fixture
def breakdown(qtbot):
    p = BreakdownPanel()
    qtbot.addWidget(p)
    p.resize(1000, 650)
    p.show()
    return p


def _find(items, predicate):
    return next(st for st in items if predicate(st))


def _show(panels, stage):
    for p in panels:
        p.show_stage(stage.name, stage.as_dict())


def test_forward_stage_is_drawn_as_one_kernel(roof, breakdown, train):
    r, items = train
    roof.update_results(r)
    breakdown.update_results(r)
    st = _find(items, lambda s: s.name == "forward mb 3" and s.lane == "stage 0")
    _show((roof, breakdown), st)
    name, x, y = roof.highlighted_stage()
    assert name == "forward mb 3"
    assert roof.highlighted_point_name() == STAGE_POINT
    assert x == pytest.approx(st.flops / st.bytes_by_link["hbm"], rel=1e-12)
    assert y == pytest.approx(st.flops / st.duration_s, rel=1e-12)
    # A forward block runs at the compute efficiency below the BF16 peak, to the right of the ridge.
    hw = r.scenario.hardware
    assert y < hw.peak("bf16") and x > hw.ridge_point("bf16")
    # The ring is drawn where the accessor says, in data units (log axes transform PlotDataItems).
    rx, ry = roof.stage_layer.ring.getOriginalDataset()
    assert (float(rx[0]), float(ry[0])) == pytest.approx((x, y))
    assert roof.stage_layer.ring.isVisible() and roof.stage_layer.marker.isVisible()
    # The layer's GEMMs and the selected attention are circled as the kernels the stage is made of.
    assert set(roof.related_point_names()) == {"QKV GEMM", "out-projection GEMM", "MLP up+gate GEMM",
                                               "MLP down GEMM", "attention (FlashAttention)"}
    assert roof.stage_label_text().startswith("stage: forward mb 3\n")
    # The label sits inside the view, in log10 coordinates.
    (vx0, vx1), (vy0, vy1) = roof.plot.getViewBox().viewRange()
    pos = roof.stage_layer.text.pos()
    assert vx0 <= pos.x() <= vx1 and vy0 <= pos.y() <= vy1
    hover = roof.hover_text_for(STAGE_POINT)
    assert "forward mb 3 (stage 0)" in hover and "3,560 FLOP/B" in hover
    # Memory: live HBM of that moment. At forward 3 on stage 0 of p = 2, 1F1B holds p micro-batches'
    # activations: the step's peak, which is what the memory bar shows.
    live = breakdown.live_memory_marker()
    assert live == pytest.approx(st.live_memory_by_tier["hbm"] / 1e9)
    mem = breakdown.memory_values()
    assert live == pytest.approx(sum(mem.values()), rel=1e-9)
    assert breakdown.highlighted_time_segments() == ["compute"]
    lx, ly = breakdown.live_line.getData()
    assert list(ly) == pytest.approx([live, live])
    assert "live at this stage:\n" in breakdown.live_text.toPlainText()
    assert "forward mb 3 (stage 0)" in breakdown.stage_text()
    assert breakdown.hover_text_at("memory", 0.0, live).startswith("Live at forward mb 3")
    # At forward 0 only one micro-batch is in flight: the peak less half the activations.
    first = _find(items, lambda s: s.name == "forward mb 0" and s.lane == "stage 0")
    breakdown.show_stage(first.name, first.as_dict())
    assert breakdown.live_memory_marker() == pytest.approx(sum(mem.values()) - mem["activations"] / 2, rel=1e-9)


def test_tp_all_reduce_stage_highlights_the_tp_point(roof, breakdown, train):
    r, items = train
    roof.update_results(r)
    breakdown.update_results(r)
    st = _find(items, lambda s: s.kind == "communication" and "TP all-reduce" in s.name and s.lane == "stage 1")
    _show((roof, breakdown), st)
    name, x, y = roof.highlighted_stage()
    point = roofline(r.scenario).point("TP all-reduce")
    assert name == st.name and roof.highlighted_point_name() == "TP all-reduce"
    assert (x, y) == pytest.approx((point.intensity, point.attainable_flops_per_s))
    # Ring all-reduce: (n-1)/n adds per element over 2(n-1)/n bus bytes per byte → 1 / (2 · 2 B) in BF16.
    assert x == pytest.approx(0.25, rel=1e-12)
    assert not roof.stage_layer.marker.isVisible() and roof.related_point_names() == ()
    assert breakdown.live_memory_marker() == pytest.approx(st.live_memory_by_tier["hbm"] / 1e9)
    assert breakdown.highlighted_time_segments() == ["communication_exposed"]


def test_optimizer_stage(roof, breakdown, train):
    r, items = train
    roof.update_results(r)
    breakdown.update_results(r)
    st = _find(items, lambda s: s.name == "optimizer step")
    _show((roof, breakdown), st)
    name, x, y = roof.highlighted_stage()
    assert name == "optimizer step" and roof.highlighted_point_name() == "optimizer step"
    assert x == pytest.approx(roofline(r.scenario).point("optimizer step").intensity)
    # AdamW, BF16 mixed precision: 10 FLOPs per parameter over 2·(4 + 8) + 2 + 2 = 28 bytes streamed.
    assert x == pytest.approx(10.0 / 28.0, rel=1e-12)
    # After the pipeline only the model states, NCCL's buffers and the runtime are live.
    live = breakdown.live_memory_marker()
    assert live == pytest.approx(st.live_memory_by_tier["hbm"] / 1e9)
    mem = breakdown.memory_values()
    assert live == pytest.approx(mem["weights"] + mem["gradients"] + mem["optimizer"] + mem["network_buffers"]
                                 + mem["runtime"], rel=1e-9)
    assert breakdown.highlighted_time_segments() == ["optimizer"]


def test_decode_step_on_the_decode_points(roof, breakdown, decode):
    r, items = decode
    roof.update_results(r)
    breakdown.update_results(r)
    st = _find(items, lambda s: s.name.startswith("decode step"))
    _show((roof, breakdown), st)
    name, x, y = roof.highlighted_stage()
    assert name == st.name and roof.highlighted_point_name() == STAGE_POINT
    assert x == pytest.approx(st.flops / st.bytes_by_link["hbm"], rel=1e-12)
    assert roof.related_point_names() == ("decode GEMMs (weights)", "decode KV-cache reads")
    # A decode step is its weight GEMMs plus its KV reads: its intensity lies between theirs (the stage is
    # timed at its own context, a little below the points' mean context, hence the margin).
    rf = roofline(r.scenario)
    kv, gemm = rf.point("decode KV-cache reads").intensity, rf.point("decode GEMMs (weights)").intensity
    assert 0.95 * kv < x < 1.05 * gemm
    # Memory-bound in HBM: below the HBM roof, above a tenth of it.
    assert 0.1 * x * r.scenario.hardware.hbm_bw < y <= x * r.scenario.hardware.hbm_bw
    assert breakdown.live_memory_marker() == pytest.approx(st.live_memory_by_tier["hbm"] / 1e9)
    drawn = [n for n, v in breakdown.time_values().items() if v > 0]
    assert breakdown.highlighted_time_segments() == drawn        # a decode step is the whole per-token bar
    assert "whole bar" in breakdown.stage_text()


def test_idle_stage_has_no_point_but_keeps_memory(roof, breakdown, train):
    r, items = train
    roof.update_results(r)
    breakdown.update_results(r)
    st = _find(items, lambda s: s.name.startswith("bubble"))
    _show((roof, breakdown), st)
    assert roof.highlighted_stage() is None
    assert not roof.stage_layer.ring.isVisible()
    assert roof.stage_label_text().startswith("stage: bubble") and "no point" in roof.stage_label_text()
    assert breakdown.live_memory_marker() == pytest.approx(st.live_memory_by_tier["hbm"] / 1e9)
    assert breakdown.highlighted_time_segments() == ["pipeline_bubble"]


def test_clear_and_update_afterwards(roof, breakdown, train, decode):
    r, items = train
    roof.update_results(r)
    breakdown.update_results(r)
    points_before = roof.point_items()
    _show((roof, breakdown), _find(items, lambda s: s.name == "optimizer step"))
    for p in (roof, breakdown):
        p.show_stage("", {})
    assert roof.highlighted_stage() is None and roof.stage_label_text() == ""
    assert not any(i.isVisible() for i in (roof.stage_layer.ring, roof.stage_layer.halo, roof.stage_layer.marker,
                                            roof.stage_layer.related, roof.stage_layer.text, roof.stage_layer.leader))
    assert breakdown.live_memory_marker() is None and breakdown.highlighted_time_segments() == []
    assert not breakdown.live_line.isVisible() and not breakdown.time_outline.isVisible()
    assert breakdown.stage_text() == "" and not breakdown.stage_label.isVisible()
    assert roof.point_items() == points_before
    # update_results afterwards: still nothing highlighted, the panels draw the new scenario.
    rd, _ = decode
    roof.update_results(rd)
    breakdown.update_results(rd)
    assert roof.highlighted_stage() is None and breakdown.live_memory_marker() is None
    assert set(roof.point_items()) == {p.name for p in roofline(rd.scenario).points}
    assert sum(breakdown.memory_values().values()) == pytest.approx(sum(rd.memory.values()) / 1e9)
    breakdown.update_results(r)
    assert breakdown.time_values() == pytest.approx(dict(r.time))


def test_update_results_refreshes_or_drops_the_stage(roof, breakdown, train, decode):
    r, items = train
    roof.update_results(r)
    breakdown.update_results(r)
    st = _find(items, lambda s: s.name == "forward mb 3" and s.lane == "stage 0")
    _show((roof, breakdown), st)
    # Full recompute: the same stage, new numbers (the panels re-read it; the flow does not re-emit).
    sc = r.scenario.replace(recompute="full")
    r2 = evaluate(sc)
    new = _find(stages(sc, r2), lambda s: s.name == "forward mb 3" and s.lane == "stage 0")
    assert new.live_memory_by_tier["hbm"] < st.live_memory_by_tier["hbm"]     # fewer activations kept
    roof.update_results(r2)
    breakdown.update_results(r2)
    _, x, y = roof.highlighted_stage()
    assert x == pytest.approx(new.flops / new.bytes_by_link["hbm"])
    assert y == pytest.approx(new.flops / new.duration_s)
    assert breakdown.live_memory_marker() == pytest.approx(new.live_memory_by_tier["hbm"] / 1e9)
    # A decode request has no "forward mb 3": the highlight is dropped rather than left stale.
    rd, _ = decode
    roof.update_results(rd)
    breakdown.update_results(rd)
    assert roof.highlighted_stage() is None and breakdown.live_memory_marker() is None


def test_panels_follow_the_flow_signal(qtbot, roof, breakdown, train):
    r, _ = train
    flow = FlowPanel()
    qtbot.addWidget(flow)
    flow.set_detailed(True)
    for p in (flow, roof, breakdown):
        p.update_results(r)
        if p is not flow:
            flow.stageFocused.connect(p.show_stage)
    flow.select(0)
    for _ in range(6):
        flow.step(1)
        st = flow.current_stage()
        assert breakdown.live_memory_marker() == pytest.approx(st.live_memory_by_tier["hbm"] / 1e9)
        hl = roof.highlighted_stage()
        if st.kind == "idle" or st.kind == "io":
            assert hl is None
        else:
            assert hl[0] == st.name and math.isfinite(hl[1]) and hl[1] > 0 and hl[2] > 0


# (stage name, its role id, its kind, the point expected): matching is by the ids, the names say what they are
@pytest.mark.parametrize("name, role, kind, expected", [
    ("recompute (selective: attention core) mb 2", "recompute_attention", "compute", "attention (FlashAttention)"),
    ("recompute (full layer forward) mb 2", "recompute_layer", "compute", "QKV GEMM"),
    ("ZeRO-3 all-gather (fwd, prefetched) mb 0", "zero3_gather_fwd", "communication",
     "DP gradient reduce-scatter (ZeRO-3)"),
    ("DP gradient all-reduce bucket 1/4", "dp_grad_sync", "communication", "DP gradient reduce-scatter (ZeRO-3)"),
    ("comm PP send (fwd) mb 0", "forward_comm", "communication", ""),
    ("optimizer step on the host CPU (ZeRO-Offload)", "optimizer_host", "compute", ""),
    ("gradients to host (ZeRO-Offload)", "grads_to_host", "memory-transfer", ""),
    ("data load (token ids, prefetched)", "data_load", "io", ""),
])
def test_stage_mapping_rules(name, role, kind, expected):
    points = {"QKV GEMM": "gemm", "out-projection GEMM": "gemm", "MLP up+gate GEMM": "gemm", "MLP down GEMM": "gemm",
              "attention (FlashAttention)": "attention", "attention (standard) — comparison": "attention_comparison",
              "optimizer step": "optimizer", "TP all-reduce": "tp_allreduce",
              "DP gradient reduce-scatter (ZeRO-3)": "dp_grad_sync"}
    primary, related, note = stage_operating_point({"kind": kind, "flops": 1e12, "role": role}, points)
    assert primary == expected
    assert (note == "") == bool(expected)
    assert "attention (standard) — comparison" not in related


def test_time_segment_rules():
    present = ["compute", "communication_exposed", "pipeline_bubble", "optimizer", "offload_transfer"]
    # the stages "waiting (exposed DP/offload)", "DGC top-k gradient selection", "data load (token ids,
    # prefetched)" and "prefill (4 prompt tokens x 1)", by their role ids
    assert time_segments_for_stage({"kind": "idle", "role": "waiting"}, "train", present) == [
        "communication_exposed", "offload_transfer"]
    assert time_segments_for_stage({"kind": "memory-transfer", "role": "grad_compress"}, "train",
                                   present) == []          # not drawn when its time is 0
    assert time_segments_for_stage({"kind": "io", "role": "data_load"}, "train", present) == []
    assert time_segments_for_stage({"kind": "compute", "role": "prefill"}, "decode", ["a"]) == []
    assert time_segments_for_stage({"kind": "compute", "role": "prefill"}, "prefill", ["a"]) == ["a"]
