"""Overlap of communication with compute (model/formulas/overlap.py): exposed = max(0, comm - hideable), for the DP
gradient buckets, ZeRO-3 prefetch, TP comm overlap and DualPipe's EP + PP overlap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trinity_desktop.model import Scenario, evaluate, evaluate_grid
from trinity_desktop.model.formulas.overlap import (
    COMM_SM_SHARE,
    DDP_BUCKET_BYTES,
    bucketed_grad_exposed,
    dualpipe_compute,
    dualpipe_exposed,
    exposed_after,
    tp_exposed,
)
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.step.layout import train_inputs
from trinity_desktop.model.step.training import training_step

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HW = presets.hardware_presets()
MODELS = presets.model_presets()
seconds = st.floats(0.0, 1e3, allow_nan=False)


@SETTINGS
@given(seconds, st.floats(-1e3, 1e3, allow_nan=False))
def test_exposed_is_between_zero_and_the_communication(comm, hideable):
    e = exposed_after(comm, hideable)
    assert 0.0 <= e <= comm
    assert e == pytest.approx(max(0.0, comm - max(0.0, hideable)))


@SETTINGS
@given(seconds, seconds, st.floats(1.0, 1e12), st.booleans(), st.booleans())
def test_every_overlap_keeps_exposed_within_the_total(comm, compute, wire_bytes, on, sp):
    exposed, hidden = bucketed_grad_exposed(comm, compute, wire_bytes)
    assert 0.0 <= exposed <= comm * (1 + 1e-12) and hidden >= 0.0
    assert exposed == pytest.approx(comm - hidden)
    last_bucket = comm * min(1.0, DDP_BUCKET_BYTES / wire_bytes)
    assert exposed >= last_bucket - 1e-12 * comm  # the last bucket waits for the end of the backward
    assert 0.0 <= tp_exposed(comm, compute, on, sp) <= comm
    assert 0.0 <= dualpipe_exposed(comm, compute, on, True) <= comm
    if not (on and sp):
        assert tp_exposed(comm, compute, on, sp) == comm  # off, or no sequence parallelism: nothing hides


def test_dualpipe_holds_twenty_of_132_sms():
    # DeepSeek-V3 §3.5.1: "we allocate 20 out of the 132 SMs available in the H800 GPU" for communication
    assert COMM_SM_SHARE == pytest.approx(20 / 132)
    assert dualpipe_compute(1.0, True, True) == pytest.approx(132 / 112)
    assert dualpipe_compute(1.0, False, True) == 1.0 and dualpipe_compute(1.0, True, False) == 1.0


def test_defaults_keep_every_transfer_on_the_critical_path():
    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["mixtral-8x7b"], gpus=64, tp=4, pp=2, ep=8,
                  micro_batch=1, global_batch=256, seq_len=4096)
    assert not (sc.tp_comm_overlap or sc.ep_comm_overlap or sc.moe_fp8_dispatch) and sc.moe_node_limit == 0
    s = training_step(sc.model, sc.hardware, train_inputs(sc))
    p = s.pieces
    assert p.tp_exposed_mb_s == p.tp_mb_s and p.ep_exposed_mb_s == p.ep_mb_s and p.pp_exposed_mb_s == p.pp_mb_s
    for name, term in s.comm.terms().items():
        if name != "dp_grad":  # the gradient sync overlaps the backward in buckets by default
            assert term.exposed == pytest.approx(term.total), name


def test_tp_overlap_hides_tp_behind_the_gemms():
    base = Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-70b"], gpus=64, tp=8, pp=4,
                    micro_batch=1, global_batch=128, seq_len=4096, sequence_parallel=True)
    off, on = evaluate(base), evaluate(base.replace(tp_comm_overlap=True))
    assert on.time_total < off.time_total
    s = training_step(base.model, base.hardware, train_inputs(base.replace(tp_comm_overlap=True)))
    assert float(s.comm.tp.exposed) == 0.0 < float(s.comm.tp.total)  # TP < compute on NVLink: fully hidden
    no_sp = base.replace(tp_comm_overlap=True, sequence_parallel=False)
    assert evaluate(no_sp).time_total == pytest.approx(evaluate(no_sp.replace(tp_comm_overlap=False)).time_total)


def test_bucketed_grad_sync_leaves_the_last_bucket_exposed():
    # one node: the sync runs on NVLink and the backward is long enough to hide all but the last bucket
    sc = Scenario(hardware=HW["a100-80gb-sxm"], model=MODELS["llama-2-7b"], gpus=8, tp=1, pp=1, zero=1,
                  micro_batch=2, global_batch=512, seq_len=4096)
    s = training_step(sc.model, sc.hardware, train_inputs(sc))
    g = s.comm.dp_grad
    grad_bytes = float(s.pieces.dense_grad_bytes)
    assert float(g.exposed) == pytest.approx(float(g.total) * DDP_BUCKET_BYTES / grad_bytes, rel=1e-9)


@SETTINGS
@given(st.sampled_from(["mixtral-8x7b", "deepseek-v3", "llama-3-8b"]), st.sampled_from([1, 2, 4]),
       st.sampled_from([1, 2, 4, 8]), st.booleans(), st.booleans(), st.booleans(), st.sampled_from([0, 1, 2, 4]),
       st.integers(0, 3), st.sampled_from(["h800-sxm", "a100-80gb-sxm", "mi300x", "tpu-v5e"]),
       st.sampled_from([1, 4, 8]))
def test_step_overlap_invariants(model, tp, pp, tp_ov, ep_ov, fp8, limit, zero, hw, gpus_per_node):
    arch = MODELS[model]
    ep = 8 if arch.is_moe else 1
    sc = Scenario(hardware=HW[hw], model=arch, gpus=tp * pp * 16, gpus_per_node=gpus_per_node, tp=tp, pp=pp, ep=ep,
                  zero=zero, micro_batch=1, global_batch=64, seq_len=2048, precision="bf16",
                  tp_comm_overlap=tp_ov, ep_comm_overlap=ep_ov, moe_fp8_dispatch=fp8, moe_node_limit=limit)
    s = training_step(sc.model, sc.hardware, train_inputs(sc))
    for name, term in s.comm.terms().items():
        total, exposed = float(term.total), float(term.exposed)
        assert math.isfinite(total) and math.isfinite(exposed), name
        assert 0.0 <= exposed <= total * (1 + 1e-12) + 1e-15, name
    r = evaluate(sc)
    assert 0.0 <= r.train["communication_overlapped"] <= r.train["communication_total"] * (1 + 1e-12)
    assert r.time["communication_exposed"] == pytest.approx(
        r.train["communication_total"] - r.train["communication_overlapped"], rel=1e-9, abs=1e-12)


def test_grid_varies_the_overlap_options():
    sc = Scenario(hardware=HW["h800-sxm"], model=MODELS["deepseek-v3"], gpus=2048, gpus_per_node=8, pp=16, ep=64,
                  zero=1, micro_batch=1, global_batch=15360, seq_len=4096, precision="fp8")
    out = evaluate_grid(sc, ep_overlap=np.array([False, True]), moe_node_limit=np.array([[0], [4]]))
    t = out.time_total
    assert t.shape == (2, 2)
    assert t[1, 1] < t[0, 0]  # DualPipe + node-limited routing beat neither on DeepSeek-V3's layout
    for lim, ov in ((0, False), (4, True)):
        one = evaluate(sc.replace(moe_node_limit=lim, ep_comm_overlap=ov)).time_total
        assert t[[0, 4].index(lim), int(ov)] == pytest.approx(one, rel=1e-12)


ONE_GPU_LANES = ("stage 0", "DP network", "host link", "host CPU")


@pytest.mark.parametrize("changes", [dict(), dict(ep_comm_overlap=True, moe_fp8_dispatch=True, moe_node_limit=4),
                                     dict(ep_comm_overlap=True, virtual_stages=2)])
def test_flow_draws_only_the_exposed_communication(changes):
    from trinity_desktop.model.views.stages import stages

    sc = Scenario(hardware=HW["h800-sxm"], model=MODELS["mixtral-8x7b"], gpus=128, gpus_per_node=4, tp=1, pp=4,
                  ep=8, zero=1, micro_batch=1, global_batch=256, seq_len=4096, **changes)
    r = evaluate(sc)
    items = stages(sc, r)
    assert max(s.end_s for s in items) == pytest.approx(r.time_total, rel=1e-6)
    for link in ("scale-up", "scale-out", "hbm", "host"):  # hidden traffic still counts on its link
        drawn = sum(s.bytes_by_link[link] for s in items if s.lane in ONE_GPU_LANES and s.kind != "io")
        assert drawn == pytest.approx(r.bytes_by_link[link], rel=1e-9, abs=1e-3)
    hidden = [s for s in items if s.lane == "stage 0" and "hidden" in s.name]
    assert bool(hidden) == bool(changes.get("ep_comm_overlap"))
