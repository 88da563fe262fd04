"""The roofline's GEMM points are the step's GEMMs: one point per `kernel_efficiency.layer_gemms` shape (the shapes
and counts `train_compute` and `prefill_gemm_rate` time), so per layer their FLOPs sum to the step's."""

from __future__ import annotations

import pytest

from trinity_desktop.model import Scenario
from trinity_desktop.model.formulas.kernel_efficiency import layer_gemms
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.views import roofline as rl

MODELS, HW = presets.model_presets(), presets.hardware_presets()["h100-sxm"]


def _gemm_points(sc: Scenario):
    return {p.name: p for p in rl.roofline(sc).points if p.role == "gemm"}


@pytest.mark.parametrize(("model", "layout"), [
    ("llama-3-8b", dict(gpus=8, tp=2)),
    ("mixtral-8x7b", dict(gpus=32, tp=2, ep=4, zero=2)),
    ("deepseek-v3", dict(gpus=64, tp=2, ep=8)),
])
def test_training_gemm_points_sum_to_the_steps_layer_gemms(model, layout):
    sc = Scenario(hardware=HW, model=MODELS[model], seq_len=4096, micro_batch=1, global_batch=64, **layout)
    tokens = sc.micro_batch * sc.seq_len / sc.cp
    gemms = layer_gemms(sc.model, tokens, float(sc.tp), float(sc.ep))
    points = _gemm_points(sc)
    assert len(points) == len(gemms)
    # forward + dgrad + wgrad: 3 x the forward FLOPs of each shape
    assert sum(p.flops for p in points.values()) == pytest.approx(3.0 * sum(float(g.flops) for g in gemms), rel=1e-12)


def test_dense_qkv_point_by_hand():
    """Llama-3-8B, TP 2, 4,096 tokens: Q/K/V width (32·128 + 2·8·128)/2 = 3,072, K = 4,096; 3 passes of 2MNK."""
    sc = Scenario(hardware=HW, model=MODELS["llama-3-8b"], gpus=8, tp=2, seq_len=4096, micro_batch=1, global_batch=64)
    assert _gemm_points(sc)["QKV GEMM"].flops == pytest.approx(3 * 2 * 4096 * 3072 * 4096, rel=1e-12)


def test_mixtral_routed_experts_point_by_hand():
    """Mixtral-8x7B, TP 2, EP 4, 4,096 tokens: 8/4 = 2 local experts, each on 4,096·2·4/8 = 4,096 tokens, up+gate
    N = 2·14,336/2, K = 4,096: 3 passes · 2 · 4,096 · 14,336 · 4,096 · 2 = 2.886e12 FLOPs (the roofline drew one
    expert at 1,024 tokens before, 8x fewer)."""
    sc = Scenario(hardware=HW, model=MODELS["mixtral-8x7b"], gpus=32, tp=2, ep=4, zero=2, seq_len=4096,
                  micro_batch=1, global_batch=64)
    p = _gemm_points(sc)["MLP up+gate GEMM (routed experts)"]
    assert p.flops == pytest.approx(3 * 2 * 4096 * 14336 * 4096 * 2, rel=1e-12)
    assert p.flops == pytest.approx(2886218022912.0, rel=1e-12)


def test_deepseek_v3_draws_its_dense_layers_and_shared_expert():
    """DeepSeek-V3: 3 of 61 layers dense (MLP 18,432), 58 MoE with one shared expert (2,048) and 256 routed, top 8.
    The shared expert's up+gate at TP 1 and 4,096 tokens: 2 · 4,096 · 2·2,048 · 7,168 · 58/61 per layer, forward."""
    sc = Scenario(hardware=HW, model=MODELS["deepseek-v3"], kind="prefill", gpus=8, batch=4, prompt_len=1024)
    tp = float(sc.inference_tp)
    points = _gemm_points(sc)
    assert {"MLP up+gate GEMM (dense layers)", "MLP down GEMM (routed experts)",
            "MLP up+gate GEMM (shared experts)"} <= set(points)
    assert points["MLP up+gate GEMM (shared experts)"].flops == pytest.approx(
        2 * 4096 * 2 * 2048 / tp * 7168 * 58 / 61, rel=1e-12)
    assert sum(p.flops for p in points.values()) == pytest.approx(
        sum(float(g.flops) for g in layer_gemms(sc.model, 4096.0, tp)), rel=1e-12)
