"""Pipeline-parallel inference (model/step/inference.py): tp x pp GPUs, L/pp layers per stage, decode micro-batches
circulating through the stages (TPOT = pp x slot), prefill stage by stage plus pp - 1 sends."""

from __future__ import annotations

import numpy as np
import pytest

from trinity_desktop.model import ValidationError, evaluate, evaluate_grid
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.inputs.scenario import Scenario

MODELS, HW = model_presets(), hardware_presets()
H100 = HW["h100-sxm"]
ETA = 0.8  # default network efficiency


def _sc(gpus=8, pp=1, batch=8, model="llama-3-70b", **kw) -> Scenario:
    return Scenario(hardware=H100, model=MODELS[model], kind="decode", gpus=gpus, pp=pp, batch=batch, **kw)


def test_pp1_reproduces_the_tensor_parallel_numbers_bit_for_bit():
    """Values recorded from the tensor-parallel-only core (same inputs, exact floats), re-recorded when decode
    gained its fixed cost per layer and step and its KV-read efficiency (model/formulas/decode_costs.py) and
    when the prefill GEMMs moved to the kernel curves (kernel_efficiency.py), and when TP all-reduces gained
    the measured per-call NCCL latency (comms.tp_allreduce_time), and when routed experts became grouped GEMMs
    with their token permute (DeepSeek-V3 prefill 3.26 -> 4.09 s, kernel_efficiency.GROUPED_GEMM_SHARE), and when
    the prefill's LM head ran on the last prompt token only, its GEMM rate weighing the L layers against the one
    head (Llama-3-70B 1.343 -> 1.332 s; DeepSeek-V3 4.09 -> 4.26 s: its grouped expert GEMMs, formerly one layer
    averaged with an every-token head, now weigh as its 61 layers do), and when H100 TP all-reduces gained their measured size excess
    (allreduce_latency.hopper_size_excess: Llama-3-70B TPOT 14.57 -> 15.21 ms)."""
    r = evaluate(_sc(batch=16)).infer
    assert r["time_per_output_token_s"] == 0.015214089788293052
    assert r["prefill_s"] == 1.3330155496094207
    assert evaluate(_sc(batch=16)).memory_total == 27316148224.0
    d = evaluate(_sc(batch=64, model="deepseek-v3"))
    assert d.infer["time_per_output_token_s"] == 0.06696410287453354
    assert d.infer["prefill_s"] == 4.261308038931572
    assert d.memory_total == 187269965568.0
    assert d.bytes_by_link["scale-up"] == 195887104.0


def test_weights_and_kv_per_gpu_halve_with_two_stages():
    one, two = evaluate(_sc(gpus=4, pp=1)), evaluate(_sc(gpus=8, pp=2))
    assert two.memory["weights"] == pytest.approx(one.memory["weights"] / 2, rel=1e-15)
    assert two.memory["kv_cache"] == pytest.approx(one.memory["kv_cache"] / 2, rel=1e-15)
    # the whole model's figures do not depend on the layout
    assert two.infer["weights_bytes"] == one.infer["weights_bytes"]
    assert two.infer["kv_bytes"] == one.infer["kv_bytes"]


def test_decode_tpot_is_pp_slots_each_with_one_send():
    """Hand-derived: Llama-3-70B, TP4 x PP2 on one 8-GPU node, batch 8 -> 2 micro-batches of 4. A slot is one
    stage (40 layers) for 4 sequences; its send is 4 x 8192 x 2 bytes over NVLink, alpha + S / (B eta)."""
    sc = _sc(gpus=8, pp=2, batch=8)
    r = evaluate(sc)
    arch = sc.model
    send = H100.scaleup_latency_s + 4 * arch.hidden * 2.0 / (H100.scaleup_bw * ETA)
    assert r.time["pp_comm"] == pytest.approx(2 * send, rel=1e-12)
    slot = (r.time["gemms"] + r.time["attention_kv_reads"] + r.time["tp_comm"]
            + r.time["fixed"]) / 2 + send
    assert r.infer["time_per_output_token_s"] == pytest.approx(2 * slot, rel=1e-12)
    assert r.infer["tokens_per_s"] == pytest.approx(8 / (2 * slot), rel=1e-12)
    # the GEMM slot: one stage's weights (1/8 of the streamed bf16 weights per GPU) re-read for the micro-batch,
    # bandwidth-bound at 4 sequences: bytes / (HBM bw x 0.8)
    streamed = (arch.params_total() - arch.lookup_params()) * 2.0 / 8
    assert r.time["gemms"] == pytest.approx(2 * streamed / (H100.hbm_bw * 0.8), rel=1e-12)
    # PP sends on NVLink: every GPU but the last stage's sends its micro-batches on (mean over stages: 1/2)
    tp_bytes = 2 * (40 * 2 * 2 * 3 / 4 * 4 * arch.hidden * 2.0)
    assert r.bytes_by_link["scale-up"] == pytest.approx(tp_bytes + 2 * 0.5 * 4 * arch.hidden * 2.0, rel=1e-12)
    assert r.bytes_by_link["scale-out"] == 0.0


def test_small_batch_decode_is_not_faster_with_a_pipeline():
    """Memory-bound decode at batch 1: TP4 x PP2 reads a stage's weights in each of two slots, W/8 each, so
    TPOT ~ W/4 per HBM; TP8 reads W/8 once. PP buys capacity, not latency."""
    for batch in (1, 2):
        tp8 = evaluate(_sc(gpus=8, pp=1, batch=batch)).infer["time_per_output_token_s"]
        tp4pp2 = evaluate(_sc(gpus=8, pp=2, batch=batch)).infer["time_per_output_token_s"]
        assert tp4pp2 >= tp8
        # within 3%: at batch 2 TP4 all-reduces 32 KB, the pipeline's one-sequence micro-batches 16 KB, across
        # NCCL's measured step from 20.71 to 22.65 us (Triton-distributed #57, allreduce_latency.py)
        assert tp4pp2 == pytest.approx(evaluate(_sc(gpus=4, pp=1, batch=batch)).infer["time_per_output_token_s"],
                                       rel=0.03)


def test_batch_below_pp_leaves_idle_slots():
    """b = 1 < pp = 4: one micro-batch of one sequence; the token still takes 4 slots, and each GPU is busy in
    one of them, so its HBM bytes per step are one slot's."""
    r = evaluate(_sc(gpus=8, pp=4, batch=1))
    r2 = evaluate(_sc(gpus=8, pp=4, batch=2))
    assert r.infer["tokens_per_s"] == pytest.approx(1 / r.infer["time_per_output_token_s"], rel=1e-15)
    assert r2.bytes_by_link["hbm"] == pytest.approx(2 * r.bytes_by_link["hbm"], rel=0.01)  # 2 busy slots vs 1
    assert r2.infer["time_per_output_token_s"] == pytest.approx(r.infer["time_per_output_token_s"], rel=0.01)


def test_prefill_is_the_stages_in_turn_plus_the_sends():
    sc1, sc2 = _sc(gpus=4, pp=1, batch=2, prompt_len=4096), _sc(gpus=8, pp=2, batch=2, prompt_len=4096)
    p1, p2 = evaluate(sc1).infer["prefill_s"], evaluate(sc2).infer["prefill_s"]
    send = H100.scaleup_latency_s + 2 * 4096 * sc1.model.hidden * 2.0 / (H100.scaleup_bw * ETA)
    assert p2 == pytest.approx(p1 + send, rel=1e-12)
    assert evaluate(sc2.replace(kind="prefill")).time["pp_comm"] == pytest.approx(send, rel=1e-12)


def test_a_pipeline_across_nodes_sends_over_scale_out():
    r = evaluate(_sc(gpus=16, pp=2, batch=8, gpus_per_node=8))  # TP8 per node, the stage boundary between nodes
    assert r.bytes_by_link["scale-out"] == pytest.approx(2 * 0.5 * 4 * 8192 * 2.0, rel=1e-12)
    assert r.time["pp_comm"] == pytest.approx(
        2 * (H100.scaleout_latency_s + 4 * 8192 * 2.0 / (H100.scaleout_bw * ETA)), rel=1e-12)


def test_pipeline_fits_a_model_that_one_node_cannot_hold():
    """Llama-3.1-405B in bf16 (~810 GB) does not fit TP8 on 8 x 80 GB; TP8 x PP2 on 16 GPUs holds it."""
    assert not evaluate(_sc(gpus=8, model="llama-3.1-405b", batch=1)).fits
    assert evaluate(_sc(gpus=16, pp=2, model="llama-3.1-405b", batch=1)).fits


def test_grid_over_pp_equals_scalar_evaluate():
    base = _sc(gpus=8, pp=1, batch=1)
    tp, pp, b = np.array([8, 4, 2, 1])[:, None], np.array([1, 2, 4, 8])[:, None], np.array([1, 3, 64])[None, :]
    out = evaluate_grid(base, tp=tp, pp=pp, batch=b)
    for i in range(4):
        for j in range(3):
            r = evaluate(base.replace(gpus=8, pp=int(pp[i, 0]), batch=int(b[0, j])))
            assert out.time_per_output_token_s[i, j] == pytest.approx(r.infer["time_per_output_token_s"], rel=1e-12)
            assert out.memory_total[i, j] == pytest.approx(r.memory_total, rel=1e-12)
    assert not evaluate_grid(base, pp=np.array([3])).valid.any()  # 80 layers: PP3 is no layout


@pytest.mark.parametrize(("changes", "field"), [(dict(gpus=6, pp=3), "pp"), (dict(gpus=6, pp=2), "gpus"),
                                                (dict(gpus=4, pp=8), "gpus")])
def test_bad_pipeline_layouts_name_the_field(changes, field):
    with pytest.raises(ValidationError) as err:
        _sc(**changes)
    assert err.value.field == field and "\n" not in str(err.value)
