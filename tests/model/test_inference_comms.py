"""Inference TP all-reduces (model/formulas/comms.py `tp_allreduce_time`): a small NCCL all-reduce costs its
measured latency, not the ring's 2(n-1) alphas alone (Triton-distributed issue #57: 19.19 us at 128 B on 8 H100)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.formulas import comms
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets

HW, MODELS = hardware_presets(), model_presets()
NVLINK_BW = 300e9


def test_eight_ranks_and_a_tiny_buffer_take_the_measured_latency():
    """Triton-distributed #57, NCCL all-reduce on 8 H100 in one node: 128 B in 19.19 us."""
    t = comms.tp_allreduce_time(8, 128.0, NVLINK_BW, 1e-6)
    assert t == pytest.approx(19.19e-6, rel=1e-3)
    # the ring's own part is 2 x 7 x 1 us = 14 us: the call adds the 5.19 us it leaves unexplained
    assert comms.allreduce_call_overhead(1e-6) == pytest.approx(5.19e-6, rel=1e-9)


def test_one_rank_sends_nothing_and_pays_nothing():
    assert comms.tp_allreduce_time(1, 1e6, NVLINK_BW, 1e-6) == 0.0


def test_scale_out_alpha_already_exceeds_the_measured_latency():
    """An 8 us InfiniBand alpha makes the ring's 2 x 7 alphas 112 us > 19.19 us: no extra call cost."""
    assert comms.allreduce_call_overhead(8e-6) == 0.0
    assert comms.tp_allreduce_time(8, 128.0, 25e9, 8e-6) == pytest.approx(
        comms.allreduce_time(8, 128.0, 25e9, 8e-6), rel=1e-12)


def test_call_overhead_broadcasts_and_never_goes_negative():
    alpha = np.array([0.0, 1e-6, 19.19e-6 / 14.0, 5e-6])
    got = comms.allreduce_call_overhead(alpha)
    assert got == pytest.approx([19.19e-6, 5.19e-6, 0.0, 0.0], abs=1e-15)
    assert np.all(got >= 0.0)


def test_small_buffers_cost_the_same_at_tp8_whatever_alpha_below_the_measured_one():
    """Invariant at the measurement's own size: at TP 8 a decode all-reduce costs 19.19 us plus bytes, so a GPT-20B
    decode step on 8 A100 does not depend on how the assumed alpha splits that latency (1 us or 1.37 us)."""
    ft_20b = replace(MODELS["gpt3-175b"], layers=44, hidden=6144, heads=48, kv_heads=48, head_dim=128,
                     ffn_hidden=24576, vocab=51200, name="GPT-20B (FasterTransformer)")
    a100 = HW["a100-80gb-sxm"]
    runs = [evaluate(Scenario(hardware=replace(a100, scaleup_latency_s=alpha), model=ft_20b, kind="decode", gpus=8,
                              batch=1, prompt_len=200, gen_len=200, weight_dtype="fp16", kv_dtype="fp16"))
            for alpha in (1e-6, 19.19e-6 / 14.0)]
    t = [r.infer["time_per_output_token_s"] for r in runs]
    assert t[0] == pytest.approx(t[1], rel=1e-9)


def test_the_latency_cites_its_measurement():
    from trinity_desktop.model.inputs.presets import references
    assert comms.NCCL_SMALL_ALLREDUCE_SOURCE in references()
