"""The roofline under MoE serving with EP (#23, model/views/roofline_moe.py): DeepSeek-V3's decode unit (EP320,
DP-attention 80 with TP4, 56 sequences per GPU: batch 17,920, DeepSeek-V3 §3.4.2) places its expert GEMMs at
the tokens each expert copy sees, not at the whole batch; numbers by hand."""

from __future__ import annotations

import math

import pytest

from trinity_desktop.model import Scenario
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.views.roofline import roofline
from trinity_desktop.model.views.roofline_moe import tokens_per_expert

DS, H800 = model_presets()["deepseek-v3"], hardware_presets()["h800-sxm"]
EXPERT = 3 * 7168 * 2048  # one routed expert of DeepSeek-V3 in one layer: gate, up, down (h 7168, width 2048)


@pytest.fixture(scope="module")
def ep320():
    sc = Scenario(hardware=H800, model=DS, kind="decode", gpus=320, gpus_per_node=8, inference_ep=320,
                  attention_dp=80, batch=320 * 56, prompt_len=2048, gen_len=512, weight_dtype="fp8",
                  moe_fp8_dispatch=True)
    return sc, {p.name: p for p in roofline(sc).points}


def test_tokens_per_expert_by_hand(ep320):
    """17,920 sequences x top-8 / (320 GPUs x 1 copy each) = 448 tokens per expert copy."""
    sc, _ = ep320
    assert tokens_per_expert(sc) == pytest.approx(17_920 * 8 / 320)


def test_expert_gemms_by_hand(ep320):
    """58 MoE layers: FLOPs 2 x 448 x 44.04M each; bytes 44.04M FP8 weights + 448 x (2 x 7168 + 3 x 2048) BF16
    activations each. Intensity 2,289 GFLOP / 3.62 GB = 632 FLOP/B: just right of the H800's FP8 ridge
    (1,979 TFLOP/s / 3.35 TB/s = 591), where the whole batch of 17,920 had put it at ~50,000."""
    _, pts = ep320
    p = pts["decode expert GEMMs (per expert)"]
    assert p.flops == pytest.approx(2 * 448 * EXPERT * 58)
    assert p.bytes == pytest.approx(58 * (EXPERT * 1 + 448 * (2 * 7168 + 3 * 2048) * 2))
    assert p.intensity == pytest.approx(632.5, abs=0.5)
    assert 500 < p.intensity < 800  # near the ridge, not at the whole batch
    assert "decode GEMMs (weights)" not in pts


def test_dense_gemms_and_kv_reads_per_gpu(ep320):
    """Dense GEMMs: the attention group's 224 sequences against FP8 weights over TP4: intensity near 2 x 224 / 1 B
    (less: the head and embeddings are read too) - HBM-bound. The FLOPs of all 320 GPUs add up to the whole
    batch's GEMM FLOPs, 2 x 17,920 x active parameters (less the input embedding: a lookup)."""
    sc, pts = ep320
    dense, expert = pts["decode dense GEMMs (weights)"], pts["decode expert GEMMs (per expert)"]
    assert dense.resource == "bandwidth" and 300 < dense.intensity < 2 * 224
    whole = 2 * 17_920 * (DS.params_active() - DS.vocab * DS.hidden)  # the output head computes, the lookup not
    assert 320 * (dense.flops + expert.flops) == pytest.approx(whole, rel=0.01)
    kv = pts["decode KV-cache reads"]
    assert kv.resource == "bandwidth" and kv.intensity < 100  # MLA reads, attention group's own sequences


def test_sparse_batch_reads_only_touched_experts():
    """At 16 sequences on EP 320 each copy sees m = 0.4 tokens: its weights are read with probability 1 − e^-0.4."""
    sc = Scenario(hardware=H800, model=DS, kind="decode", gpus=320, gpus_per_node=8, inference_ep=320,
                  attention_dp=80, batch=16, prompt_len=2048, gen_len=512, weight_dtype="fp8")
    p = {q.name: q for q in roofline(sc).points}["decode expert GEMMs (per expert)"]
    m = 16 * 8 / 320
    assert p.bytes == pytest.approx(58 * (EXPERT * (1 - math.exp(-m)) + m * (2 * 7168 + 3 * 2048) * 2))


def test_without_ep_the_points_are_the_plain_decode_ones():
    sc = Scenario(hardware=H800, model=DS, kind="decode", gpus=16, gpus_per_node=8, batch=64, weight_dtype="fp8")
    names = [p.name for p in roofline(sc).points]
    assert names[:2] == ["decode GEMMs (weights)", "decode KV-cache reads"]
