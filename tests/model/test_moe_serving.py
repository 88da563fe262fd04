"""MoE serving with expert parallelism (#23, model/formulas/moe_serving.py): a hand-derived DeepSeek-V3 case,
DeepSeek-V3's published deployment units (§3.4) and online-service throughput, DeepEP's measured low-latency
all-to-all, invariants and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trinity_desktop.__main__ import main
from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.moe_serving import direct_pass, experts_per_gpu
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.inputs.serving_rules import serving_layout_problem, serving_rules_hold
from trinity_desktop.model.step.evaluation import evaluate_grid
from trinity_desktop.model.views.moe_serving_summary import moe_serving
from trinity_desktop.model.views.phases import infer_phase_of
from trinity_desktop.model.views.request_stages import request_stages

MODELS, HARDWARE = model_presets(), hardware_presets()
DS = MODELS["deepseek-v3"]
H200, H800 = HARDWARE["h200-sxm"], HARDWARE["h800-sxm"]
EXPERT = 3 * 7168 * 2048  # one routed expert of DeepSeek-V3: gate, up and down, h 7168, width 2048 (§4.2)


def _decode(hw=H200, **kw) -> Scenario:
    base = dict(hardware=hw, model=DS, kind="decode", gpus_per_node=8, weight_dtype="fp8", moe_fp8_dispatch=True)
    return Scenario(**{**base, **kw})


@pytest.fixture(scope="module")
def ep16():
    """DeepSeek-V3 on 16 H200s, EP16 with DP-attention 16 (attention TP1), 256 sequences, FP8."""
    sc = _decode(gpus=16, inference_ep=16, attention_dp=16, batch=256)
    return sc, evaluate(sc)


def test_expert_and_dense_bytes_per_gpu_by_hand(ep16):
    """58 MoE layers x 256/16 = 16 experts x 44.0M params x 1 B (FP8) on each GPU; the rest of the 671B is whole
    on every GPU (attention TP1)."""
    sc, r = ep16
    m = moe_serving(sc)
    assert m.experts_per_gpu == 16 and m.attention_tp == 1
    assert m.expert_weights_per_gpu_bytes == pytest.approx(58 * 16 * EXPERT)  # 40.87 GB
    assert m.dense_weights_per_gpu_bytes == pytest.approx(DS.params_total() - 58 * 256 * EXPERT)  # 17.12 GB
    assert r.memory["weights"] == pytest.approx(58 * 16 * EXPERT + DS.params_total() - 58 * 256 * EXPERT)


def test_all_to_all_per_decode_step_by_hand(ep16):
    """16 tokens per GPU (256 / 16), 8 copies each, 15/16 of them to other GPUs, straight over IB (two nodes):
    FP8 dispatch 16·7168·8·15/16 = 860,160 B and BF16 combine twice that, per MoE layer, 58 layers; one alpha +
    bytes / (50 GB/s x 0.8) per pass."""
    sc, r = ep16
    per_layer = 16 * 7168 * 8 * 15 / 16 * (1 + 2)
    m = moe_serving(sc)
    assert m.all_to_all_scale_out_bytes_per_decode_step == pytest.approx(58 * per_layer)  # 149.7 MB
    assert m.all_to_all_scale_up_bytes_per_decode_step == 0.0
    bw = H200.scaleout_bw * sc.efficiency.network
    assert m.all_to_all_per_decode_step_s == pytest.approx(58 * (2 * H200.scaleout_latency_s + per_layer / bw))
    assert r.time["ep_comm"] == pytest.approx(m.all_to_all_per_decode_step_s)


def test_decode_flops_and_weights_are_spread_evenly():
    """EP8 (attention TP8) holds the same bytes per GPU as TP8 (256 experts divide by 8) and every GPU does the same
    FLOPs either way: EP moves where the work is, not how much."""
    tp, ep = (evaluate(_decode(gpus=8, batch=64, **kw)) for kw in ({}, {"inference_ep": 8}))
    assert ep.memory["weights"] == pytest.approx(tp.memory["weights"])
    assert ep.flops == pytest.approx(tp.flops)
    assert "ep_comm" in ep.time and "ep_comm" not in tp.time


def test_deepseek_v3_deployment_units():
    """DeepSeek-V3 §3.4.1: prefill unit 4 nodes / 32 GPUs, attention TP4 + SP with DP8, MoE EP32, 8 + 1 redundant
    experts per GPU; §3.4.2: decode unit 40 nodes / 320 GPUs, attention TP4 with DP80, EP320, one expert per GPU
    (the 64 GPUs beyond 256 hold redundant and shared experts). 320 does not divide the 128 heads; TP4 does."""
    prefill = Scenario(hardware=H800, model=DS, kind="prefill", gpus=32, gpus_per_node=8, inference_ep=32,
                       attention_dp=8, redundant_experts=1, weight_dtype="fp8")
    decode = _decode(H800, gpus=320, inference_ep=320, attention_dp=80, batch=320 * 32)
    assert prefill.inference_tp == 4 and decode.inference_tp == 4
    assert experts_per_gpu(256, 32, 1) == 9 and experts_per_gpu(256, 320, 0) == 1
    assert moe_serving(decode).expert_weights_per_gpu_bytes == pytest.approx(58 * EXPERT)
    assert evaluate(decode).fits


def test_heads_rule_only_where_tp_splits_heads():
    """72 GPUs: refused as TP72 (72 does not divide 128 heads), served with DP-attention 72 and EP72."""
    with pytest.raises(ValidationError) as e:
        _decode(gpus=72)
    assert e.value.field == "gpus"
    sc = _decode(gpus=72, inference_ep=72, attention_dp=72, batch=512)
    assert sc.inference_tp == 1 and moe_serving(sc).experts_per_gpu == 4  # ceil(256 / 72)
    with pytest.raises(ValidationError) as e:
        _decode(gpus=16, inference_ep=8)
    assert e.value.field == "inference_ep"
    with pytest.raises(ValidationError) as e:
        _decode(gpus=16, attention_dp=16)
    assert e.value.field == "attention_dp"
    with pytest.raises(ValidationError) as e:
        _decode(gpus=48, inference_ep=48, attention_dp=4)  # attention TP 12 does not divide 128 heads
    assert e.value.field == "attention_dp" and "now 12" in e.value.allowed


# DeepEP README (deepseek-ai/DeepEP, "Low-latency kernels with pure RDMA"): H800 + CX7 400 Gb/s IB, 128 tokens,
# hidden 7168, top-8, FP8 dispatch and BF16 combine; (EP, dispatch us, combine us).
DEEPEP_LOW_LATENCY = ((16, 173, 329), (32, 182, 350), (64, 186, 353), (128, 192, 369), (256, 194, 360))


@pytest.mark.parametrize(("ep", "dispatch_us", "combine_us"), DEEPEP_LOW_LATENCY)
def test_decode_pass_against_deepep(ep, dispatch_us, combine_us):
    link = (H800.scaleout_bw * 0.8, H800.scaleout_latency_s)
    dispatch, _ = direct_pass(128, 7168, 8, 1.0, ep, link)
    combine, _ = direct_pass(128, 7168, 8, 2.0, ep, link)
    assert dispatch * 1e6 == pytest.approx(dispatch_us, rel=0.08)
    assert combine * 1e6 == pytest.approx(combine_us, rel=0.08)


def test_online_service_throughput_per_gpu():
    """DeepSeek's online service (Day-6 inference-system overview): 14.8k output tokens/s per H800 node in decode
    (1,850 per GPU) at 20-22 tokens/s per user, 73.7k input tokens/s per node in prefill (9,213 per GPU, cache hits
    included, 56.3% of input tokens hit the cache). The model, without the two-micro-batch overlap that hides the
    all-to-all there, must land below and within a factor 2: decode at the largest batch with TPOT <= 50 ms
    (56 sequences per GPU), prefill at 16 prompts of 4k per 32-GPU unit with node-limited routing (M = 4)."""
    decode = evaluate(_decode(H800, gpus=320, inference_ep=320, attention_dp=80, batch=320 * 56, prompt_len=2048,
                              gen_len=512))
    assert decode.infer["time_per_output_token_s"] <= 0.050
    per_gpu = decode.infer["tokens_per_s"] / 320
    assert 0.5 * 1850 <= per_gpu <= 1850
    prefill = Scenario(hardware=H800, model=DS, kind="prefill", gpus=32, gpus_per_node=8, inference_ep=32,
                       attention_dp=8, redundant_experts=1, weight_dtype="fp8", moe_fp8_dispatch=True,
                       moe_node_limit=4, batch=16, prompt_len=4096, gen_len=1, prefix_hit_fraction=0.563)
    per_gpu = 16 * 4096 / evaluate(prefill).infer["prefill_s"] / 32
    assert 0.5 * 73_700 / 8 <= per_gpu <= 73_700 / 8


def test_flow_draws_the_all_to_all(ep16):
    """The request's bars: each prefill and decode bar ends with its EP all-to-all, and the request ends where it
    did."""
    sc, r = ep16
    stages = request_stages(sc, r)
    ep = [s for s in stages if s.role in ("prefill_ep", "decode_ep")]
    assert len(ep) == 1 + sum(s.role == "decode" for s in stages)
    assert stages[-1].end_s == pytest.approx(r.infer["request_s"])
    assert [infer_phase_of(s) for s in ep[:2]] == [("prefill",), ("decode",)]
    assert sum(s.bytes_by_link["scale-out"] for s in ep) == pytest.approx(
        sum(s.bytes_by_link["scale-out"] for s in stages))


def test_grid_matches_scalar_evaluate():
    """The planner's grid (ep, attention_dp, redundant_experts axes) gives `evaluate`'s numbers."""
    sc = _decode(gpus=16, batch=64)
    out = evaluate_grid(sc, tp=np.array([16, 1]), attention_dp=np.array([1, 16]), ep=np.array([1, 16]))
    for i, kw in enumerate(({}, {"inference_ep": 16, "attention_dp": 16})):
        r = evaluate(sc.replace(**kw))
        assert out.time_per_output_token_s[i] == pytest.approx(r.infer["time_per_output_token_s"])
        assert out.memory_total[i] == pytest.approx(r.memory_total)
    assert out.valid.all()


@settings(max_examples=60, deadline=None)
@given(st.booleans(), st.integers(1, 64), st.integers(1, 4), st.integers(1, 64), st.integers(1, 64),
       st.integers(0, 3))
def test_grid_rules_agree_with_scenario_rules(moe, gpus, pp, ep, dp, redundant):
    """The broadcast rules the planner masks with refuse exactly what `Scenario` refuses (for whole stages)."""
    if gpus % pp:
        return
    scalar = serving_layout_problem(moe, "m", gpus, pp, ep, dp, redundant) is None
    assert bool(serving_rules_hold(moe, gpus // pp, ep, dp, redundant)) == scalar


def test_cli_ep_and_attention_dp(capsys):
    argv = ["calc", "infer", "--model", "deepseek-v3", "--hardware", "h200-sxm", "--gpus", "16", "--ep", "16",
            "--attention-dp", "16", "--json"]
    assert main(argv) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["tp"] == 1 and rep["moe_serving"]["ep"] == 16 and rep["moe_serving"]["experts_per_gpu"] == 16
    assert main(argv[:-1] + ["--attention-dp", "3"]) == 2
    assert "--attention-dp 3 is not allowed" in capsys.readouterr().err


def test_serving_planner_searches_ep_and_dp_attention():
    """DeepSeek-V3 on 72 H200s (no TP layout spans all 72: 72 does not divide 128 heads): the planner searches
    DP-attention and EP beside TP x PP, its best layout uses EP, and `evaluate` of that layout's replica gives the
    planner's numbers. The search rate is printed (layouts per second, the #23 target is >= 10^6)."""
    from trinity_desktop.model.search.serving_planner import plan_serving, scenario_for, serving_space

    space = serving_space(DS, H200, 72, max_batch=512)
    assert space.expert_parallel == (False, True) and 72 in space.attention_dp
    plan = plan_serving(DS, H200, 72, 2048, 512, tpot_slo=0.05, space=space, gpus_per_node=8)
    print(f"\nserving planner: {plan.configurations_evaluated / plan.search_seconds:,.0f} layouts/s "
          f"({plan.configurations_evaluated:,} in {plan.search_seconds:.3f} s)")
    best = plan.best.layout
    assert best["ep"] > 1 and plan.configurations_evaluated == space.size
    r = evaluate(scenario_for(DS, H200, 2048, 512, best, gpus_per_node=8))
    assert r.infer["time_per_output_token_s"] == pytest.approx(plan.best.tpot_s)
    assert plan.best.tpot_s <= 0.05
